"""Screen-diff F1 reward (RLVR-World web/GUI reward)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmkit.rewards import extract_completion_text, screen
from wmkit.rewards.screen import parse_screen_diff, screen_diff_counts, screen_diff_f1, screen_f1_reward_fn

GOLD = """New items:
[5] button "Save"
Deleted items:
None
Updated items:
app: Clock | screen: new alarm
"""


def test_parse_phone_diff():
    assert parse_screen_diff(GOLD) == {
        "new": {'[5] button "Save"'},
        "deleted": {"None"},
        "updated": {"app: Clock | screen: new alarm"},
    }


def test_parse_strips_dedups_and_ignores_preamble_and_header_tail():
    text = (
        "Let me think about the screen.\n"
        "New items: (ignored, as in the official parser)\n"
        "   [1] text 'a'   \n\n"
        "[1] text 'a'\n"
        "Updated items:\n"
        "[2] b\n"
    )
    assert parse_screen_diff(text) == {"new": {"[1] text 'a'"}, "deleted": set(), "updated": {"[2] b"}}


def test_parse_returns_none_without_header_and_on_garbage():
    assert parse_screen_diff("") is None
    assert parse_screen_diff("no sections here\n[1] button") is None
    assert parse_screen_diff(None) is None
    assert parse_screen_diff(12) is None
    assert parse_screen_diff(["New items:"]) is None


def test_exact_prediction_scores_one():
    assert screen_diff_f1(GOLD, GOLD) == 1.0


def test_unchanged_screen_predicted_unchanged_scores_one():
    unchanged = "New items:\nNone\nDeleted items:\nNone\nUpdated items:\nNone\n"
    assert screen_diff_f1(unchanged, unchanged) == 1.0


def test_micro_averaged_f1_hand_computed():
    prediction = (
        'New items:\n[5] button "Save"\n[6] button "Cancel"\n'
        "Deleted items:\nNone\n"
        "Updated items:\napp: Clock | screen: alarms\n"
    )
    # matches: new 1, deleted 1, updated 0 -> 2; predicted 4; gold 3
    assert screen_diff_counts(prediction, GOLD) == (2, 4, 3)
    precision, recall = 2 / 4, 2 / 3
    assert screen_diff_f1(prediction, GOLD) == pytest.approx(2 * precision * recall / (precision + recall))
    assert screen_diff_f1(prediction, GOLD) == pytest.approx(4 / 7)


def test_line_in_wrong_section_does_not_match():
    prediction = 'New items:\nNone\nDeleted items:\n[5] button "Save"\nUpdated items:\napp: Clock | screen: new alarm\n'
    assert screen_diff_counts(prediction, GOLD) == (1, 3, 3)


def test_empty_or_unparseable_sides_give_zero():
    assert screen_diff_f1("", GOLD) == 0.0
    assert screen_diff_f1("I don't know", GOLD) == 0.0
    assert screen_diff_f1(GOLD, "") == 0.0
    assert screen_diff_f1(GOLD, None) == 0.0
    assert screen_diff_f1("New items:\nDeleted items:\nUpdated items:\n", GOLD) == 0.0


def test_padding_with_extra_lines_costs_precision():
    padded = GOLD + "".join(f"[{i}] text 'noise'\n" for i in range(100, 106))
    assert screen_diff_f1(padded, GOLD) < 1.0
    assert screen_diff_counts(padded, GOLD) == (3, 9, 3)


def test_lines_split_at_newline_only():
    # Official parser: log.split("\n"), so "\r", "\f" and U+2028 stay inside one item.
    gold = "New items:\n[7] text 'a\rb'\nDeleted items:\nNone\nUpdated items:\nNone\n"
    assert parse_screen_diff(gold)["new"] == {"[7] text 'a\rb'"}
    # Same characters in the prediction: 3 items, 3 matches -> F1 1.0 (splitlines gave 4 items).
    assert screen_diff_counts(gold, gold) == (3, 3, 3)
    # A prediction that writes the two halves on separate lines matches neither:
    # new {"[7] text 'a", "b'"} vs {"[7] text 'a\rb'"}: matches 2 (the Nones), predicted 4, gold 3.
    split = "New items:\n[7] text 'a\nb'\nDeleted items:\nNone\nUpdated items:\nNone\n"
    assert screen_diff_counts(split, gold) == (2, 4, 3)
    assert screen_diff_f1(split, gold) == pytest.approx(2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3))  # 4/7
    # U+2028 and a form feed inside a line: still one item (stripped only at its ends).
    odd = "Updated items:\n[1] a\u2028b\x0cc \r\n"
    assert parse_screen_diff(odd)["updated"] == {"[1] a\u2028b\x0cc"}


def test_extract_completion_text():
    assert extract_completion_text("plain") == "plain"
    assert extract_completion_text([{"role": "assistant", "content": "hi"}]) == "hi"
    assert (
        extract_completion_text(
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
            ]
        )
        == "a"
    )
    assert extract_completion_text(None) == ""
    assert extract_completion_text([{"role": "assistant", "content": None}]) == ""
    assert screen.extract_completion_text is extract_completion_text


def test_reward_fn_strings_and_chat():
    completions = [GOLD, [{"role": "assistant", "content": GOLD}], "garbage", [{"role": "assistant"}]]
    rewards = screen_f1_reward_fn(completions, diff=[GOLD] * 4, prompts=["p"] * 4, other_column=[1, 2, 3, 4])
    assert rewards == [1.0, 1.0, 0.0, 0.0]


def test_reward_fn_rejects_mismatched_columns():
    with pytest.raises(ValueError):
        screen_f1_reward_fn([GOLD], diff=[GOLD, GOLD])


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_never_raises_and_stays_in_unit_interval(prediction, gold):
    value = screen_diff_f1(prediction, gold)
    assert 0.0 <= value <= 1.0


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(["New items:", "Deleted items:", "Updated items:", "None", "[1] a", "[2] b", ""])
    )
)
def test_self_match_is_one_when_anything_parsed(lines):
    text = "\n".join(lines)
    matches, n_predicted, _ = screen_diff_counts(text, text)
    assert screen_diff_f1(text, text) == (1.0 if n_predicted else 0.0)
    assert matches == n_predicted
