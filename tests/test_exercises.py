"""The exercise checkers: a right answer passes, each named typical mistake gets its diagnosis,
and text, None and wrong types get a message instead of an exception."""
import math

import pytest

from wmkit import exercises
from wmkit.envs import phone
from wmkit.envs.base import Transition

BAD_INPUTS = ("about 0.9", [1, 2, 3], {"a": 1}, float("nan"), object())


def _transition(env: str, changed: bool) -> Transition:
    return Transition(env=env, episode="e", step=0, state="s", action="a", action_type="a", next_state="s",
                      diff="", changed=changed)


TRAIN = [_transition("phone", True)] * 3 + [_transition("phone", False)] + [_transition("textgame", False)] * 4

SCREEN_BEFORE = 'app: Home | screen: home\n[1] app "Settings"\n[2] app "Contacts"'
SCREEN_AFTER = 'app: Contacts | screen: contacts\n[1] button "Add contact"\n[2] item "Bob"'
SCREEN_DIFF = phone.compute_diff(SCREEN_BEFORE, SCREEN_AFTER)

EVALUATION = {"phone": {"model_greedy": {"changed": 0.25, "n_changed": 8, "overall": 0.5, "n": 10}}}

THROUGHPUT = [
    {"transitions": "simulator", "device_latency_s": 0.0, "agent_steps": 100, "seconds": 1.0, "batched_step_calls": 10},
    {"transitions": "world_model", "device_latency_s": 0.0, "agent_steps": 100, "seconds": 5.0, "batched_step_calls": 10},
]  # per agent step: WM 0.05 s, simulator 0.01 s + L/10 -> L = 0.4 s per batched device step

SWEEP = {f"{arm} @{f:g}": {"final_gap": {"mean": gap}}
         for arm, gaps in (("WMRL", (0.05, 0.02, 0.01)), ("anchors only", (0.08, 0.03, 0.02)))
         for f, gap in zip((0.1, 0.2, 0.4), gaps)}  # WMRL below anchors-only at every fraction -> 0.1


def _grpo_record() -> dict:
    """A record shaped like wmkit.core.grpo_step.record_grpo_step's (made up, so the checker tests
    need no TRL run): 4 completions of 3, 1, 2 and 3 tokens, the second pass after a step."""
    from wmkit.core.grpo_step import advantages_by_hand, clipped_loss_by_hand

    rows = [0.0, 1.0, 0.0, 0.5]  # the pass's row order (TRL shuffles the generation batch)
    mask = [[1, 1, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1]]
    old = [[-1.0, -2.0, -1.5], [-0.5, 0, 0], [-1.2, -0.8, 0], [-2.0, -1.0, -0.7]]
    step = [[0.4, -0.1, 0.05], [0.3, 0, 0], [-0.4, 0.1, 0], [0.02, -0.3, 0.25]]
    new = [[o + d for o, d in zip(orow, drow)] for orow, drow in zip(old, step)]
    a = advantages_by_hand(rows)
    passes = [{"rewards": rows, "advantages": list(a), "old_logps": old, "new_logps": logps, "mask": mask,
               "loss": clipped_loss_by_hand(old, logps, mask, a, 0.2, "dapo")} for logps in (old, new)]
    rewards = [1.0, 0.0, 0.5, 0.0]
    return {"rewards": rewards, "advantages": list(advantages_by_hand(rewards)), "loss_type": "dapo",
            "scale_rewards": "group", "epsilon": 0.2, "max_completion_length": 3, "passes": passes}


GRPO_RECORD = _grpo_record()


class _Sizes:  # check_strong_distortion_answer with precomputed differences never reads the sizes
    pass


# (checker, right answer, [(typical mistake, words its diagnosis must contain)])
CASES = {
    "no_change_on_changed": (lambda a: exercises.check_no_change_on_changed(a), 0.0,
                             [(1.0, "unchanged"), (0.4, "overall")]),
    "changed_share": (lambda a: exercises.check_changed_share(a, TRAIN, "phone"), 0.75,
                      [(0.25, "unchanged"), (0.375, "every environment"), (75, "percentage")]),
    "applied_screen": (lambda a: exercises.check_applied_screen(a, SCREEN_BEFORE, SCREEN_DIFF), SCREEN_AFTER,
                       [(SCREEN_BEFORE, "before"), (SCREEN_DIFF, "diff itself"),
                        ("\n".join(reversed(SCREEN_AFTER.split("\n"))), "order")]),
    "changed_hits": (lambda a: exercises.check_changed_hits(a, EVALUATION), 2,
                     [(5, "unchanged ones too"), (8, "how many changed transitions there are")]),
    "group_advantage": (lambda a: exercises.check_group_advantage(a, [1, 0, 0, 1], 0), 0.866,
                        [(1.0, "population std"), (0.5, "centred reward")]),
    "max_unchanged_task_reward": (exercises.check_max_unchanged_task_reward, 0.3,
                                  [(1.3, "*all* transitions"), (0.2, "one term alone")]),
    # shares 0, 0.2, 0.3, 0.5: mean signal share 0.31 at G = 2, 0.465 at G = 3, 0.554 at G = 4 (by
    # hand); the mean p = 0.25 alone would already reach one half at G = 3 (0.5625)
    "group_size_for_signal": (lambda a: exercises.check_group_size_for_signal(a, [0.0, 0.2, 0.3, 0.5]), 4,
                              [(3, "average")]),
    "which_reward_rose": (lambda a: exercises.check_which_reward_rose(
        a, {"gain": {"sampled": {"mean": -0.01}, "reward": {"mean": 0.03}}}), "Task reward",
        [("both", "partial credit")]),
    "token_weight_ratio": (lambda a: exercises.check_token_weight_ratio(a, (10, 30), "grpo"), 3.0,
                           [(1 / 3, "inverted"), (1.0, "dapo")]),
    "group_spread": (lambda a: exercises.check_group_spread(a, 0.5, 4), 1 - 2 * 0.5**4,
                     [(0.5**4, "all are wrong"), (1 - 0.5**4, "all-right")]),
    "group_rewards": (lambda a: exercises.check_group_rewards(a, [1, 0, 1], [4, 7, 6], [2, 0, 1], 7), None,
                      []),  # filled below from the reward code
    "turn_kind": (lambda a: exercises.check_turn_kind(a, "Thought: maybe call_wm(action='tap(2)') first"), "imagine",
                  [("action", "not an Action: line"), ("invalid", "not a failure")]),
    "no_signal": (exercises.check_no_signal, False, [(True, "every advantage")]),
    # all fail, n_max 5: budget 5, λ = -0.6, -0.2 -> min(0.9λ - 0.1, -0.1) = -0.64, -0.28
    "call_term": (lambda a: exercises.check_call_term(a, [0, 0], [2, 4], 5), [-0.64, -0.28],
                  [([0.8, 0.6], "these rollouts failed"), ([-0.55, -0.1], "budget is n_max")]),
    # -0.28 > -0.64: the rollout with more calls gets the larger reward, so GRPO pushes calls up
    "call_direction": (lambda a: exercises.check_call_direction(a, [0, 0], [2, 4], 5), "more",
                       [("fewer", "even when both are negative"), ("neither", "differ")]),
    "break_even_latency": (lambda a: exercises.check_break_even_latency(a, THROUGHPUT), 0.4,
                           [(0.04, "per agent step"), (5.0, "ratio")]),
    "affine": (exercises.check_affine_answer, 1, [(5, "std by 5"), (0, "factor of 0"), (0.2, "centred reward")]),
    "fused_variance": (lambda a: exercises.check_fused_variance(a, 0.02, 0.06), 0.015,
                       [(1 / 0.02 + 1 / 0.06, "precision"), (0.04, "average of the two variances"),
                        (0.08, "variances add"), (0.02, "better estimate used alone"), (0.06, "noisier")]),
    "rollout_weight": (lambda a: exercises.check_rollout_weight(a, 8, 56, 0.01, 0.02), 14.0,
                       [(2.0, "group means' variances"), (2 / 7, "rollout counts are upside down")]),
    "strong_distortion": (lambda a: exercises.check_strong_distortion_answer(
        a, _Sizes(), differences=[-0.01, -0.02, 0.005, -0.015, -0.03]), "inconclusive",
        [("reproduced", "interval over seeds covers 0")]),
    "sweep_crossing": (lambda a: exercises.check_sweep_crossing(a, SWEEP, (0.1, 0.2, 0.4)), 0.1,
                       [(0.4, "largest"), (0.3, "not one of the sweep")]),
    "interval": (lambda a: exercises.check_interval_answer(a, [0.10, 0.30, 0.20]), (-0.0484, 0.4484),
                 [((0.4484, -0.0484), "wrong order"), ((0.2 - 0.2029, 0.2 + 0.2029), "population std"),
                  ((0.2 - 0.1132, 0.2 + 0.1132), "z = 1.96"), ((0.2 - 0.4303, 0.2 + 0.4303), "√n")]),
    "verdict": (lambda a: exercises.check_verdict_answer(a, [0.10, 0.30, 0.20]), "inconclusive",
                [("reproduced", "crosses the line"), ("contradicted", "whole interval")]),
    "seeds_needed": (lambda a: exercises.check_seeds_needed(a, 0.1, 0.1), None, []),  # filled below
    "grpo_advantages_by_hand": (lambda a: exercises.check_grpo_advantages_by_hand(a, GRPO_RECORD), None, []),
    "grpo_clipped_loss_by_hand": (lambda a: exercises.check_grpo_clipped_loss_by_hand(a, GRPO_RECORD), None, []),
    "missing_record": (exercises.check_missing_record_verdict, "not measured",
                       [("inconclusive", "no number"), ("reproduced", "record")]),
    # one of 48 values (16 pixels x 3 channels) off by the full range
    "red_pixel_l1": (exercises.check_red_pixel_l1, 1 / 48,
                     [(1 / 16, "one channel of three"), (255 / 48, "scaled"), (1 / 3, "every pixel")]),
    "completion_budget": (lambda a: exercises.check_completion_budget(a, 8), 65,
                          [(64, "able to stop"), (4096, "per *cell*")]),
    "zero_signal_share": (lambda a: exercises.check_zero_signal_share(a, [0.0, 0.5, 0.25]), 0.25,
                          [(0.75, "*with* a signal")]),
}


def _fill_computed_cases():
    from wmkit.rewards.wm_r1 import composite_rewards

    check, _, _ = CASES["group_rewards"]
    args = ([1, 0, 1], [4, 7, 6], [2, 0, 1])
    CASES["group_rewards"] = (check, composite_rewards(*args, max_steps=7),
                              [(composite_rewards(*args, max_steps=7, beta=1.0, gamma=1.0), "weights are missing"),
                               (composite_rewards(*args, max_steps=7, gamma=0.0), "R_WM is missing")])
    check, _, _ = CASES["seeds_needed"]
    truth = exercises.seeds_needed(0.1, 0.1)
    with_z = exercises.seeds_needed(0.1, 0.1, quantile=lambda n: 1.96)
    assert with_z < truth - 1  # the two diagnoses are told apart
    CASES["seeds_needed"] = (check, truth, [(with_z, "z = 1.96"), (truth - 1, "one short")])

    import numpy as np

    from wmkit.core.grpo_step import advantages_by_hand, clipped_loss_by_hand

    r = np.array(GRPO_RECORD["rewards"])
    check, _, _ = CASES["grpo_advantages_by_hand"]
    CASES["grpo_advantages_by_hand"] = (check, advantages_by_hand(r), [
        (list((r - r.mean()) / (r.std() + 1e-4)), "population std"), (list(r - r.mean()), "centred rewards"),
        (list(-advantages_by_hand(r)), "the sign")])
    first, second = GRPO_RECORD["passes"]
    rows = np.array(second["rewards"])
    a = advantages_by_hand(rows)
    a_population = (rows - rows.mean()) / (rows.std() + 1e-4)

    def loss(advantages=a, **kwargs):
        args = {"loss_type": "dapo", "epsilon": 0.2, "max_completion_length": 3, **kwargs}
        return clipped_loss_by_hand(second["old_logps"], second["new_logps"], second["mask"], advantages, **args)

    check, _, _ = CASES["grpo_clipped_loss_by_hand"]
    CASES["grpo_clipped_loss_by_hand"] = (check, second["loss"], [
        (loss(clip=False), "no clipping"), (-second["loss"], "the sign"), (loss(a_population), "population std"),
        (loss(loss_type="grpo"), "'grpo' aggregation"), (loss(loss_type="dr_grpo"), "'dr_grpo' aggregation"),
        (first["loss"], "first pass"), (loss(pessimistic=False), "max instead of min")])


_fill_computed_cases()


# ---------------------------------------------------------------- notebook 03: the ablations where WM-R1 learns
# One seed of wm_r1_learned_ablations, shaped like its result (made up): sampled 0.30 vs 0.26 gives the
# claim's +0.04; the greedy difference (+0.08), WM-R1 vs its start (+0.15) and vs best-of-K (-0.18) differ.
ABLATION = {"start": {"greedy": {"success": 0.10}, "sampled": {"success": 0.15}},
            "arms": {"wm_r1": {"greedy": {"success": 0.60}, "sampled": {"success": 0.30}},
                     "no_imagine": {"greedy": {"success": 0.52}, "sampled": {"success": 0.26}},
                     "no_length": {"greedy": {"success": 0.51}, "sampled": {"success": 0.27}},
                     "best_of_k": {"k": 4, "success": 0.48}}}
CASES["imagined_calls_measure"] = (lambda a: exercises.check_imagined_calls_measure(a, ABLATION), 0.04,
                                   [(0.08, "greedy difference"), (-0.04, "the sign"), (0.15, "its start"),
                                    (-0.18, "best-of-K"), (4.0, "percentage")])


def test_imagined_calls_measure_is_the_claims_value_and_waits_for_a_result(capsys):
    from wmkit.bench.claims import CLAIMS, claim_value

    claim = next(c for c in CLAIMS if c.id == "wm_r1.imagined_calls")
    assert exercises.check_imagined_calls_measure(claim_value(claim, ABLATION), ABLATION) is True
    assert exercises.check_imagined_calls_measure(0.04, None) is None  # no run and no record: not the answer's fault
    assert "RUN_ABLATIONS" in capsys.readouterr().out
    assert exercises.check_imagined_calls_measure(0.04, {"arms": {}}) is None
    assert "cannot check" in capsys.readouterr().out


@pytest.mark.parametrize("name", CASES)
def test_right_answer_passes(name, capsys):
    check, right, _ = CASES[name]
    assert check(right) is True, capsys.readouterr().out
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("name", CASES)
def test_none_is_not_answered(name, capsys):
    check, _, _ = CASES[name]
    assert check(None) is None
    assert "not answered yet" in capsys.readouterr().out


@pytest.mark.parametrize("name, mistake, words", [(name, m, w) for name, (_, _, ms) in CASES.items() for m, w in ms])
def test_each_typical_mistake_is_named(name, mistake, words, capsys):
    check = CASES[name][0]
    assert check(mistake) is False
    out = capsys.readouterr().out
    assert "expected" in out and "given" in out, out
    assert "typical mistake" in out and words in out, out


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("bad", BAD_INPUTS, ids=["text", "list", "dict", "nan", "object"])
def test_bad_input_gets_a_message_not_an_exception(name, bad, capsys):
    check, right, _ = CASES[name]
    if isinstance(right, (list, tuple)) and isinstance(bad, list) and len(bad) == len(right):
        bad = ["a"] * len(right)  # a list of the right length but not numbers
    assert check(bad) is False
    out = capsys.readouterr().out
    assert out.strip(), "a checker must say something"


def test_words_accept_case_and_separator_variants(capsys):
    assert exercises.check_verdict_answer("Inconclusive", [0.10, 0.30, 0.20]) is True
    assert exercises.check_missing_record_verdict("Not_Measured") is True
    assert exercises.check_turn_kind(" Imagined ", "Thought: maybe call_wm(action='tap(2)') first") is True
    assert exercises.check_no_signal("false") is True
    assert exercises.check_affine_answer("1") is True
    assert exercises.check_call_direction(" Up ", [0, 0], [2, 4]) is True


def test_group_size_answer_none_when_never_sampled_transitions_cap_the_share(capsys):
    # two of three transitions never sampled right: at most a third of the groups ever get signal
    assert exercises.check_group_size_for_signal("None", [0.0, 0.0, 0.4]) is True
    assert exercises.check_group_size_for_signal(8, [0.0, 0.0, 0.4]) is False


def test_wrong_types_never_pass(capsys):
    assert exercises.check_seeds_needed(2.5, 0.1, 0.1) is False  # not a whole number, never rounded
    assert exercises.check_changed_hits(2.4, EVALUATION) is False
    assert exercises.check_affine_answer(True) is False  # True == 1, but it is not a number
    assert exercises.check_no_signal(0) is False
    assert "cannot check" in capsys.readouterr().out


def test_break_even_latency_without_simulator_steps_is_not_judged(capsys):
    idle = [dict(row, batched_step_calls=0) for row in THROUGHPUT]
    assert exercises.check_break_even_latency(0.4, idle) is None
    assert "never stepped" in capsys.readouterr().out


def test_seeds_needed_hand_case():
    # mean 0.1, s 0.1: n = 7 gives t(0.975, 6)·0.1/√7 = 2.447·0.0378 = 0.0925 < 0.1; n = 6 gives 0.105
    assert exercises.seeds_needed(0.1, 0.1) == 7
    assert math.isclose(exercises.seeds_needed(0.1, 0.1, quantile=lambda n: 1.96), 4)


def test_grpo_checkers_say_so_when_the_record_is_not_one(capsys):
    for record in (None, {}, {"rewards": [1, 0]}, "record"):
        assert exercises.check_grpo_advantages_by_hand([0.7, -0.7], record) is False
        assert exercises.check_grpo_clipped_loss_by_hand(0.1, record) is False
        assert capsys.readouterr().out.count("record_grpo_step") == 2


def test_group_size_for_signal_without_usable_shares_says_so(capsys):
    for shares in ([], "0.2, 0.5", [0.2, "x"], [1.5], None):
        assert exercises.check_group_size_for_signal(4, shares) is None
        assert "cannot check" in capsys.readouterr().out


def test_which_reward_rose_without_a_result_is_not_called_unanswered(capsys):
    assert exercises.check_which_reward_rose("both", None) is None
    out = capsys.readouterr().out
    assert "not answered yet" not in out and "EXERCISE_5_RESULT" in out


def test_verdict_answer_leaves_out_seeds_without_a_value(capsys):
    # paired() gives None for a seed missing on either side; the rule judges the other seeds
    assert exercises.check_verdict_answer("inconclusive", [0.10, None, 0.30, 0.20]) is True
    assert exercises.check_verdict_answer("not measured", [None, None]) is True
    assert exercises.check_verdict_answer("reproduced", [None, 0.3]) is False


def test_strong_distortion_does_not_print_the_verdict_before_judging(capsys):
    differences = [-0.01, -0.02, 0.005, -0.015, -0.03]  # inconclusive by the kit's rule
    assert exercises.check_strong_distortion_answer("contradicted", _Sizes(), differences=differences) is False
    out = capsys.readouterr().out
    assert "inconclusive" not in out and "covers" not in out, out
    assert exercises.check_strong_distortion_answer("inconclusive", _Sizes(), differences=differences) is True
    assert "covers 0" in capsys.readouterr().out  # the reason comes after a right answer


def test_seeds_needed_accepts_none_when_the_mean_is_on_the_line(capsys):
    assert exercises.seeds_needed(0.2, 0.1, threshold=0.2) is None
    assert exercises.check_seeds_needed("none", 0.2, 0.1, threshold=0.2) is True
    assert exercises.check_seeds_needed(7, 0.2, 0.1, threshold=0.2) is False
    assert "sits on the line" in capsys.readouterr().out
    assert exercises.check_seeds_needed("none", 0.1, 0.1) is False  # here 7 seeds do


def test_group_spread_of_notebook_02_rejects_its_named_mistakes(capsys):
    """The parameters notebook 02 poses exercise 3 with must tell the right answer from the named
    mistakes (at p = 0.05, G = 8 'at least one right' was within 4e-11 of the answer)."""
    import re
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / "notebooks" / "02_rlvr_world_model.py").read_text()
    match = re.search(r"check_group_spread\(ANSWER_3, p=([\d.]+), group_size=(\d+)\)", source)
    assert match, "notebook 02 no longer poses exercise 3 with check_group_spread"
    p, g = float(match.group(1)), int(match.group(2))
    assert exercises.check_group_spread(1 - p**g - (1 - p) ** g, p, g) is True
    for mistake, words in ((1 - (1 - p) ** g, "all-right"), ((1 - p) ** g, "all are wrong")):
        assert exercises.check_group_spread(mistake, p, g) is False
        assert words in capsys.readouterr().out


def test_zero_signal_share_takes_the_curve_as_a_numpy_array(capsys):
    import numpy as np

    assert exercises.check_zero_signal_share(0.5, np.array([0.75, 0.25])) is True  # `not array` raised
    assert exercises.check_zero_signal_share(0.5, np.array([])) is None


def test_applied_screen_never_prints_a_line_of_the_answer(capsys):
    """It printed the first missing line on each try: a student got the screen one line per try."""
    partial = SCREEN_AFTER.split("\n")[0]
    assert exercises.check_applied_screen(partial, SCREEN_BEFORE, SCREEN_DIFF) is False
    out = capsys.readouterr().out
    assert not [line for line in SCREEN_AFTER.split("\n")[1:] if line in out], out
    assert "missing" in out  # the count stays


def test_fused_variance_tells_the_anchors_alone_from_the_plain_average(capsys):
    """With V_WM = 3·V_E, (V_E + V_WM)/4 = V_E: "just use the anchors" was called "the plain average"."""
    assert exercises.check_fused_variance(0.02, 0.02, 0.06) is False
    out = capsys.readouterr().out
    assert "used alone" in out and "plain average" not in out


def test_an_answer_rounded_to_three_decimals_passes_everywhere(capsys):
    assert exercises.check_red_pixel_l1(0.021) is True  # 1/48 rounded; rejected at a 1e-4 tolerance before
    assert exercises.check_red_pixel_l1(0.02) is False
    assert exercises.check_group_spread(0.845, 0.6, 4) is True
    assert exercises.check_token_weight_ratio(0.333, (30, 10), "grpo") is False
    assert "inverted" in capsys.readouterr().out


def test_failed_step_difference_reads_the_sampled_agents(capsys):
    """Notebook 02, exercise 8: RWML's sampled failed-step share minus the warm-up's; the greedy
    agents' difference (0 where greedy agents never fail) is named as the mistake it is."""
    def arm(sampled_success, sampled_failed):
        return {"greedy": {"success": 0.5, "invalid_share": 0.0},
                "sampled": {"success": sampled_success, "invalid_share": sampled_failed}}

    acting = {"warm": arm(0.3, 0.2), "rwml": arm(0.2, 0.15)}
    assert exercises.check_failed_step_difference(-0.05, acting) is True
    for wrong, words in ((0.0, "greedy agents"), (0.05, "sign is inverted"), (-0.1, "difference of success"),
                         (0.15, "share alone")):
        assert exercises.check_failed_step_difference(wrong, acting) is False
        assert words in capsys.readouterr().out
    assert exercises.check_failed_step_difference(-0.05, None) is None
    assert "RUN_RWML_AGENT" in capsys.readouterr().out
    nan = {name: {"greedy": {"success": 0.0, "invalid_share": float("nan")},
                  "sampled": {"success": 0.0, "invalid_share": float("nan")}} for name in ("warm", "rwml")}
    assert exercises.check_failed_step_difference(0.0, nan) is None  # no step taken: nothing to check
    assert "no step" in capsys.readouterr().out
