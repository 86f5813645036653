"""RLVR-World's text-game rewards on hand-computed cases, plus fuzzing."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wmkit.envs.textgame import collect_transitions, compute_diff
from wmkit.rewards.textgame import (
    MAX_TASK_SPECIFIC_REWARD,
    binary_reward_fn,
    extract_answer,
    reward_parts,
    task_specific_reward_fn,
    textgame_binary_reward,
    textgame_task_specific_reward,
)

SCORE0 = {"gameOver": False, "gameWon": False, "score": 0}
# A fridge holding a carrot; the action is "take carrot".
CURRENT = {"objects": [{"contains": ["knife"], "name": "agent", "uuid": 0},
                       {"contains": ["carrot"], "isOpen": True, "name": "fridge", "uuid": 1},
                       {"contains": [], "isCooked": False, "isCut": False, "name": "carrot", "uuid": 2},
                       {"contains": [], "name": "knife", "uuid": 3}],
           "score": SCORE0}
AGENT_AFTER = {"contains": ["carrot", "knife"], "name": "agent", "uuid": 0}
FRIDGE_AFTER = {"contains": [], "isOpen": True, "name": "fridge", "uuid": 1}
GOLD = {"objects": [AGENT_AFTER, FRIDGE_AFTER] + CURRENT["objects"][2:], "score": SCORE0}
STATE, NEXT = json.dumps(CURRENT, sort_keys=True), json.dumps(GOLD, sort_keys=True)
# Fields of the gold state (uuid excluded): agent 2, fridge 3, carrot 4, knife 2 -> 11.
# Fields the action changes: agent.contains, fridge.contains -> 2.
N_FIELDS = 11


def answer(modified, removed=(), score=SCORE0, prefix="Reasoning... The final answer is: "):
    return prefix + json.dumps({"modified": list(modified), "removed": list(removed), "score": score})


def both(completion, state=STATE, gold=NEXT):
    return textgame_binary_reward(completion, state, gold), textgame_task_specific_reward(completion, state, gold)


def test_perfect_prediction():
    assert both(answer([AGENT_AFTER, FRIDGE_AFTER])) == (1.0, pytest.approx(1.3))


def test_canonical_diff_is_perfect():
    assert both(compute_diff(STATE, NEXT)) == (1.0, pytest.approx(1.3))


def test_contains_order_is_ignored():
    agent = dict(AGENT_AFTER, contains=["knife", "carrot"])
    assert both(answer([agent, FRIDGE_AFTER])) == (1.0, pytest.approx(1.3))


def test_one_wrong_property():
    # The fridge is predicted closed: 10 of 11 fields right, both changed fields right.
    fridge = dict(FRIDGE_AFTER, isOpen=False)
    binary, task = both(answer([AGENT_AFTER, fridge]))
    assert binary == 0.0
    assert task == pytest.approx(0.09 * 10 / N_FIELDS + 0.01 + 1.0)


def test_one_changed_field_missed():
    # Only the fridge is updated: agent.contains stays stale -> 10/11 fields, 1/2 changes.
    binary, task = both(answer([FRIDGE_AFTER]))
    assert binary == 0.0
    assert task == pytest.approx(0.09 * 10 / N_FIELDS + 0.01 + 0.5)


def test_wrong_score():
    binary, task = both(answer([AGENT_AFTER, FRIDGE_AFTER], score={"gameOver": False, "gameWon": False, "score": 1}))
    assert binary == 0.0
    assert task == pytest.approx(0.09 + 0.01 * 2 / 3 + 1.0)


def test_missing_score_keeps_the_current_one():
    completion = "The final answer is: " + json.dumps({"modified": [AGENT_AFTER, FRIDGE_AFTER], "removed": []})
    assert both(completion) == (1.0, pytest.approx(1.3))


def test_extra_property_and_extra_object_are_errors():
    knife = {"contains": [], "isSharp": True, "name": "knife", "uuid": 3}
    binary, task = both(answer([AGENT_AFTER, FRIDGE_AFTER, knife]))
    assert binary == 0.0 and task == pytest.approx(0.09 * N_FIELDS / (N_FIELDS + 1) + 0.01 + 1.0)
    ghost = {"contains": [], "name": "ghost", "uuid": 9}
    assert both(answer([AGENT_AFTER, FRIDGE_AFTER, ghost]))[0] == 0.0


def test_removing_a_changed_object():
    # Predicting the fridge vanished: one missing object (1 error out of 2+1+4+2 checks),
    # and its changed contains counts as wrong.
    binary, task = both(answer([AGENT_AFTER], removed=[1]))
    assert binary == 0.0
    assert task == pytest.approx(0.09 * 8 / 9 + 0.01 + 0.5)


def test_unchanged_transition():
    # "look": nothing changes. The changed-fields term is left out, so at most 0.3.
    assert both(answer([]), STATE, STATE) == (1.0, pytest.approx(0.3))
    parts = reward_parts(answer([]), STATE, STATE)
    assert parts.changed_accuracy is None and parts.n_changed == 0
    # Inventing a change on an unchanged transition: 1 of the 11 field checks is wrong.
    closed = {"contains": ["carrot"], "isOpen": False, "name": "fridge", "uuid": 1}
    assert both(answer([closed]), STATE, STATE) == (0.0, pytest.approx(0.09 * 10 / 11 + 0.01))


def test_removal_transition():
    # "eat carrot" from the agent's hands: carrot removed, agent changes, score changes.
    current = {"objects": [{"contains": ["carrot"], "name": "agent", "uuid": 0},
                           {"contains": [], "isCooked": True, "isCut": True, "name": "carrot", "uuid": 2}],
               "score": {"gameOver": False, "gameWon": False, "score": 2}}
    gold = {"objects": [{"contains": [], "name": "agent", "uuid": 0}],
            "score": {"gameOver": True, "gameWon": True, "score": 3}}
    state, nxt = json.dumps(current, sort_keys=True), json.dumps(gold, sort_keys=True)
    right = answer([{"contains": [], "name": "agent", "uuid": 0}], removed=[2], score=gold["score"])
    assert both(right, state, nxt) == (1.0, pytest.approx(1.3))
    not_removed = answer([{"contains": [], "name": "agent", "uuid": 0}], removed=[], score=gold["score"])
    # Agent fields 2/2 right + 1 extra object -> item 2/3; changes: agent.contains right,
    # the removal missed -> 1/2.
    assert both(not_removed, state, nxt) == (0.0, pytest.approx(0.09 * 2 / 3 + 0.01 + 0.5))
    assert reward_parts(right, state, nxt).n_changed == 2


def test_missing_keys_give_zero():
    for completion in ['The final answer is: {"modified": []}', 'The final answer is: {"removed": []}',
                       'The final answer is: {"score": {"score": 0}}']:
        assert both(completion) == (0.0, 0.0)


@pytest.mark.parametrize("garbage", ["", "I think the fridge stays open.", "The final answer is: nothing",
                                     "{{{{", "```json\n```", '{"modified": 3, "removed": []}', "null", None, 42,
                                     [{"role": "assistant"}], {"content": 5}])
def test_garbage_gives_zero(garbage):
    assert both(garbage) == (0.0, 0.0)


def test_bad_state_texts_give_zero():
    good = answer([AGENT_AFTER, FRIDGE_AFTER])
    assert both(good, "not json", NEXT) == (0.0, 0.0)
    assert both(good, STATE, "{") == (0.0, 0.0)


def test_answer_after_the_final_answer_marker_wins():
    decoy = json.dumps({"modified": [], "removed": [], "score": SCORE0})
    completion = (f"Maybe {decoy}? No. ```json\n{decoy}\n```\nThe final answer is: "
                  + json.dumps({"modified": [AGENT_AFTER, FRIDGE_AFTER], "removed": [], "score": SCORE0})
                  + "\nThat is all.")
    assert both(completion)[0] == 1.0
    assert both(completion.replace("The final answer is:", "the final game state is:"))[0] == 1.0


def test_last_json_block_is_used_without_marker():
    wrong = json.dumps({"modified": [], "removed": [], "score": SCORE0})
    right = json.dumps({"modified": [AGENT_AFTER, FRIDGE_AFTER], "removed": [], "score": SCORE0})
    assert both(f"First guess:\n```json\n{wrong}\n```\nBetter:\n```json\n{right}\n```")[0] == 1.0
    assert both(f"first {wrong} then {right} done")[0] == 1.0


def test_extract_answer():
    assert extract_answer('x The final answer is: {"a": 1} trailing {"b": 2}') == '{"a": 1}'
    assert extract_answer('```json\n{"a": 1}\n```\ntext\n```\n{"b": 2}\n```') == '{"b": 2}'
    assert extract_answer('it\'s {"a": {"b": "}"}} and {"c": 3}') == '{"c": 3}'
    assert extract_answer('cut off: ```json\n{"a": [1, 2') == '{"a": [1, 2'
    assert extract_answer("no json at all") is None and extract_answer(None) is None
    assert extract_answer([{"role": "assistant", "content": 'The final answer is: {"a": 1}'}]) == '{"a": 1}'


def test_lenient_model_output_still_scores():
    sloppy = ("The final answer is: ```json\n{'modified': [{'contains': ['knife', 'carrot'], 'name': 'agent', "
              "'uuid': 0}, {'contains': [], 'isOpen': True, 'name': 'fridge', 'uuid': 1},], 'removed': [], "
              "'score': {'gameOver': False, 'gameWon': False, 'score': 0}}\n```")
    assert both(sloppy) == (1.0, pytest.approx(1.3))
    truncated = answer([AGENT_AFTER, FRIDGE_AFTER])[:-12]  # score cut off mid-way
    assert both(truncated)[0] == 0.0 and 1.0 < both(truncated)[1] < 1.3


def test_booleans_are_not_numbers():
    fridge = dict(FRIDGE_AFTER, isOpen=1)
    assert both(answer([AGENT_AFTER, fridge]))[0] == 0.0


def test_trl_wrappers_take_lists_and_chat_completions():
    perfect = answer([AGENT_AFTER, FRIDGE_AFTER])
    completions = [perfect, [{"role": "assistant", "content": perfect}], "garbage"]
    kwargs = {"state": [STATE] * 3, "next_state": [NEXT] * 3, "prompts": ["p"] * 3, "completion_ids": [[1]] * 3}
    assert binary_reward_fn(completions, **kwargs) == [1.0, 1.0, 0.0]
    assert task_specific_reward_fn(completions=completions, **kwargs) == [pytest.approx(1.3)] * 2 + [0.0]
    with pytest.raises(ValueError, match="next_state"):
        binary_reward_fn(completions, state=[STATE] * 3, next_state=[NEXT])


def test_gold_diffs_of_collected_transitions_score_perfectly():
    for t in collect_transitions(15, seed=4):
        assert textgame_binary_reward(f"The final answer is: {t.diff}", t.state, t.next_state) == 1.0
        expected = 1.3 if t.changed else 0.3
        assert textgame_task_specific_reward(t.diff, t.state, t.next_state) == pytest.approx(expected)


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["uuid", "name", "contains", "isOpen", "modified", "removed", "score", "gameWon"]),
        inner, max_size=4),
    max_leaves=15)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), _values.map(json.dumps),
                 st.builds(lambda m, r, s: answer(m, r, s), st.lists(_values, max_size=3),
                           st.lists(st.integers(0, 4), max_size=2), _values)))
def test_fuzzed_completions_give_a_reward_in_range(completion):
    binary, task = both(completion)
    assert binary in (0.0, 1.0)
    assert isinstance(task, float) and 0.0 <= task <= MAX_TASK_SPECIFIC_REWARD + 1e-9
