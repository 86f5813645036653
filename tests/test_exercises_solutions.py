"""The instructor solutions: every checker of wmkit.exercises has an answer function with the same
inputs, and accepts its answer on small synthetic inputs shaped like the notebooks' (the notebooks'
own fixed inputs where they pose fixed numbers)."""
import inspect

import pytest

from wmkit import exercises
from wmkit import exercises_solutions as solutions
from wmkit.core.grpo_step import LOSS_TYPES, clipped_loss_by_hand
from wmkit.envs import phone
from wmkit.envs.base import Transition

CHECKERS = sorted(name for name in dir(exercises) if name.startswith("check_"))
ANSWERS = solutions.solutions()


def _transition(env: str, changed: bool) -> Transition:
    return Transition(env=env, episode="e", step=0, state="s", action="a", action_type="a", next_state="s",
                      diff="", changed=changed)


TRAIN = [_transition("phone", True)] * 3 + [_transition("phone", False)] * 2 + [_transition("textgame", True)] * 4
SCREEN_BEFORE = 'app: Home | screen: home\n[1] app "Settings"\n[2] app "Contacts"'
SCREEN_AFTER = 'app: Contacts | screen: contacts\n[1] button "Add contact"\n[2] item "Bob"\n[3] item "Eve"'
EVALUATION = {"phone": {"model_greedy": {"changed": 3 / 7, "n_changed": 7, "overall": 0.6, "n": 10}},
              "textgame": {"model_greedy": {"changed": 0.5, "n_changed": 4, "overall": 0.75, "n": 8}}}


def _throughput(wm_seconds: float, latency: float) -> list[dict]:
    return [{"transitions": "simulator", "device_latency_s": latency, "agent_steps": 120, "seconds": 2.0 + 30 * latency,
             "batched_step_calls": 30},
            {"transitions": "world_model", "device_latency_s": 0.0, "agent_steps": 120, "seconds": wm_seconds,
             "batched_step_calls": 30}]


def _sweep(wmrl_gaps, anchors_gaps, fractions=(0.1, 0.2, 0.4)) -> dict:
    return {f"{arm} @{f:g}": {"final_gap": {"mean": gap}}
            for arm, gaps in (("WMRL", wmrl_gaps), ("anchors only", anchors_gaps)) for f, gap in zip(fractions, gaps)}


def _grpo_record(rewards, loss_type="dapo", scale_rewards="group", shuffle=(2, 0, 3, 1)) -> dict:
    """Shaped like grpo_step.record_grpo_step's result (made up: no TRL run); the 'TRL' losses are
    the kit's clipped_loss_by_hand, which tests/test_grpo_step.py checks against TRL itself."""
    from wmkit.core.grpo_step import advantages_by_hand

    rows = [rewards[i] for i in shuffle]  # the pass's row order (TRL shuffles the generation batch)
    mask = [[1, 1, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1]]
    old = [[-1.0, -2.0, -1.5], [-0.5, 0, 0], [-1.2, -0.8, 0], [-2.0, -1.0, -0.7]]
    step = [[0.4, -0.1, 0.05], [0.3, 0, 0], [-0.4, 0.1, 0], [0.02, -0.3, 0.25]]
    new = [[o + d for o, d in zip(orow, drow)] for orow, drow in zip(old, step)]
    a = advantages_by_hand(rows, scale_rewards)
    passes = [{"rewards": rows, "advantages": list(a), "old_logps": old, "new_logps": logps, "mask": mask,
               "loss": clipped_loss_by_hand(old, logps, mask, a, 0.2, loss_type, 3)} for logps in (old, new)]
    return {"rewards": list(rewards), "advantages": list(advantages_by_hand(rewards, scale_rewards)),
            "loss_type": loss_type, "scale_rewards": scale_rewards, "epsilon": 0.2, "max_completion_length": 3,
            "passes": passes}


GRPO_RECORDS = [_grpo_record([1.0, 0.0, 0.5, 0.0], loss_type) for loss_type in LOSS_TYPES] + [
    _grpo_record([1.0, 0.0, 0.5, 0.0], "dapo", "none"),  # WM-R1: centred rewards
    _grpo_record([0.991, 0.988, 0.74, 0.99], "dapo")]  # notebook 06's kind: pixel rewards


def _acting(greedy: dict, sampled: dict) -> dict:
    """An agent's `acting` (wmkit.rwml.agent.run_rwml_agent_seed) from (success, failed steps, steps) per arm."""
    def mode(success, invalid, steps):
        return {"success": success, "invalid": invalid, "steps": steps, "invalid_share": invalid / steps}

    return {arm: {"greedy": mode(*greedy[arm]), "sampled": mode(*sampled[arm])} for arm in ("warm", "rwml")}


ACTING = [_acting({"warm": (0.46, 0, 1000), "rwml": (0.43, 0, 1000)},  # the cpu kind: greedy agents never fail
                  {"warm": (0.21, 187, 1100), "rwml": (0.18, 150, 1250)}),
          _acting({"warm": (0.0, 40, 100), "rwml": (0.0, 30, 100)},  # an untrained (smoke) agent fails greedy too
                  {"warm": (0.0, 60, 100), "rwml": (0.0, 55, 100)})]


class _Sizes:  # with precomputed differences check_strong_distortion_answer never reads the sizes
    pass


# checker name -> list of (positional inputs, keyword inputs) after `answer`; the notebooks' fixed inputs first
INPUTS = {
    "check_no_change_on_changed": [((), {})],
    "check_changed_share": [((TRAIN, "phone"), {}), ((TRAIN, "textgame"), {})],
    "check_applied_screen": [((SCREEN_BEFORE, phone.compute_diff(SCREEN_BEFORE, SCREEN_AFTER)), {}),
                             ((SCREEN_AFTER, phone.compute_diff(SCREEN_AFTER, SCREEN_BEFORE)), {})],
    "check_changed_hits": [((EVALUATION, "phone"), {}), ((EVALUATION, "textgame"), {})],
    "check_group_advantage": [(([1, 0, 0, 1],), {"index": 0}), (([1, 0, 0, 0.5, 1],), {"index": 3})],
    "check_max_unchanged_task_reward": [((), {})],
    "check_group_spread": [((), {"p": 0.6, "group_size": 4}), ((), {"p": 0.05, "group_size": 8})],
    "check_group_size_for_signal": [(([0.0, 0.2, 0.3, 0.5],), {}), (([0.0, 0.0, 0.4],), {}),  # 4; "none"
                                    (([0.9, 0.95, 0.6],), {"target": 0.3})],
    "check_which_reward_rose": [(({"gain": {"sampled": {"mean": s}, "reward": {"mean": r}}},), {})
                                for s, r in ((-0.01, 0.03), (0.02, 0.03), (0.02, -0.1), (0.0, 0.0))],
    "check_token_weight_ratio": [((), {"lengths": (10, 30), "loss_type": "grpo"}),
                                 ((), {"lengths": (12, 4), "loss_type": "grpo"}),
                                 ((), {"lengths": (10, 30), "loss_type": "dapo"})],
    "check_grpo_advantages_by_hand": [((record,), {}) for record in GRPO_RECORDS],
    "check_failed_step_difference": [((acting,), {}) for acting in ACTING],
    "check_grpo_clipped_loss_by_hand": [((record,), {}) for record in GRPO_RECORDS],
    "check_group_rewards": [(([1, 0, 1], [4, 7, 6], [2, 0, 1]), {"max_steps": 7}),
                            (([0, 0, 0], [7, 7, 3], [0, 5, 1]), {"max_steps": 7})],
    "check_call_term": [(([0, 0], [2, 4]), {"n_max": 5}), (([1, 0, 1], [1, 0, 3]), {"n_max": 5})],
    "check_call_direction": [(([0, 0], [2, 4]), {"n_max": 5}), (([1, 1, 0], [1, 3, 0]), {"n_max": 5}),
                             (([0, 0], [3, 3]), {})],
    "check_turn_kind": [(("Thought: maybe call_wm(action='tap(2)') first",), {}),
                        (("Thought: go\nAction: tap(2)",), {}), (("no idea",), {})],
    "check_no_signal": [((), {})],
    "check_break_even_latency": [((_throughput(5.0, 0.0),), {}), ((_throughput(1.0, 0.05),), {})],  # > 0; < 0
    "check_affine_answer": [((), {})],
    "check_fused_variance": [((0.02, 0.06), {})],
    "check_rollout_weight": [((), {"n_anchor": 8, "n_wm": 56, "v_e": 0.01, "v_wm": 0.02})],
    "check_strong_distortion_answer": [((_Sizes(),), {"differences": d}) for d in (
        [-0.01, -0.02, 0.005, -0.015, -0.03], [0.01, 0.02, 0.015, 0.012, 0.03], [-0.01, -0.02, -0.015, -0.012, -0.03])],
    "check_sweep_crossing": [((_sweep((0.05, 0.02, 0.01), (0.04, 0.03, 0.02)), (0.1, 0.2, 0.4)), {}),  # 0.2
                             ((_sweep((0.05, 0.04, 0.03), (0.04, 0.03, 0.02)), (0.1, 0.2, 0.4)), {})],  # none
    "check_interval_answer": [(([0.10, 0.30, 0.20],), {}), (([0.3, -0.1, 0.05, 0.12, 0.2],), {})],
    "check_verdict_answer": [(([0.10, 0.30, 0.20],), {}), (([0.10, 0.12, 0.11],), {}),
                             (([0.10, 0.12, 0.11],), {"direction": "lower"}), (([0.2],), {}),
                             (([0.5, 0.6, 0.55],), {"direction": "lower", "threshold": 1.0})],
    "check_seeds_needed": [((0.1, 0.1), {}), ((0.2, 0.1), {"threshold": 0.2}), ((-0.03, 0.08, 0.0), {})],
    "check_missing_record_verdict": [((), {})],
    "check_red_pixel_l1": [((), {})],
    "check_completion_budget": [((), {"grid_cells": 8}), ((), {"grid_cells": 5})],
    "check_zero_signal_share": [(([0.0, 0.5, 0.25],), {}), (([0.75, 0.5],), {})],
    "check_concept": [((question,), {}) for question in exercises.CONCEPTS],
}


# ---------------------------------------------------------------- notebook 03: the ablations where WM-R1 learns
def _ablation(wm_r1, no_imagine):
    """One seed of wm_r1_learned_ablations (made up): (greedy, sampled) success of two arms."""
    other = {"greedy": {"success": 0.5}, "sampled": {"success": 0.2}}
    return {"start": other, "arms": {"wm_r1": {"greedy": {"success": wm_r1[0]}, "sampled": {"success": wm_r1[1]}},
                                     "no_imagine": {"greedy": {"success": no_imagine[0]},
                                                    "sampled": {"success": no_imagine[1]}},
                                     "no_length": other, "best_of_k": {"k": 4, "success": 0.45}}}


INPUTS["check_imagined_calls_measure"] = [((_ablation((0.6, 0.3), (0.52, 0.26)),), {}),
                                          ((_ablation((0.2, 0.13), (0.41, 0.125)),), {})]


def test_every_checker_has_an_answer():
    missing = [name for name in CHECKERS if name not in ANSWERS]
    assert not missing, f"checkers without an answer in wmkit/exercises_solutions.py: {missing}"
    assert len(CHECKERS) >= 29


def test_every_checker_has_inputs_here():
    missing = [name for name in CHECKERS if name not in INPUTS]
    assert not missing, f"checkers without test inputs in {__file__}: {missing}"


@pytest.mark.parametrize("name", CHECKERS)
def test_answer_takes_the_checkers_inputs(name):
    """Same parameter names, order and defaults as the checker, less `answer`."""
    checker = list(inspect.signature(getattr(exercises, name)).parameters.values())
    answer = list(inspect.signature(ANSWERS[name]).parameters.values())
    assert checker[0].name == "answer"
    assert [(p.name, p.default) for p in answer] == [(p.name, p.default) for p in checker[1:]]


@pytest.mark.parametrize("name, case", [(name, i) for name in sorted(INPUTS) for i in range(len(INPUTS[name]))])
def test_checker_accepts_the_answer(name, case, capsys):
    args, kwargs = INPUTS[name][case]
    answer = ANSWERS[name](*args, **kwargs)
    assert getattr(exercises, name)(answer, *args, **kwargs) is True, capsys.readouterr().out
    assert "correct" in capsys.readouterr().out


def test_answers_of_the_notebooks_fixed_questions():
    """Spot values the exercises' texts and tests/test_exercises.py work out by hand."""
    assert solutions.answer_group_advantage([1, 0, 0, 1], 0) == pytest.approx(0.866, abs=1e-3)
    assert solutions.answer_max_unchanged_task_reward() == pytest.approx(0.3)
    assert solutions.answer_call_term([0, 0], [2, 4], 5) == pytest.approx([-0.64, -0.28])
    assert solutions.answer_call_direction([0, 0], [2, 4], 5) == "more"  # −0.28 > −0.64: calls pushed up
    assert solutions.answer_call_direction([1, 1], [1, 3], 5) == "fewer"  # all succeed
    assert solutions.answer_affine() == 1.0
    assert solutions.answer_rollout_weight(8, 56, 0.01, 0.02) == pytest.approx(14.0)
    assert solutions.answer_fused_variance(0.02, 0.06) == pytest.approx(0.015)
    assert solutions.answer_interval([0.10, 0.30, 0.20]) == pytest.approx((-0.0484, 0.4484), abs=1e-4)
    assert solutions.answer_seeds_needed(0.1, 0.1) == 7
    assert solutions.answer_completion_budget(8) == 65
    assert solutions.answer_turn_kind("Thought: maybe call_wm(action='tap(2)') first") == "imagine"


# ------------------------------------------------------------------ the sweep: every checker, right, wrong, bad

# checker -> plausible wrong answers to its first input case of INPUTS (the typical mistakes a class makes,
# and near misses); each must fail without the checker printing the right answer
WRONG = {
    "check_no_change_on_changed": [1.0, 0.5, 0.3],
    "check_changed_share": [0.4, 7 / 9, 60, 0.5, 1.0],  # unchanged share, every environment's, a percentage
    "check_applied_screen": [SCREEN_BEFORE, phone.compute_diff(SCREEN_BEFORE, SCREEN_AFTER),
                             "\n".join(reversed(SCREEN_AFTER.split("\n"))), SCREEN_AFTER.split("\n")[0]],
    "check_changed_hits": [6, 7, 10, 2],
    "check_group_advantage": [1.0, 0.5, -0.866, 0.0],
    "check_max_unchanged_task_reward": [1.3, 0.2, 1.0, 0.1],
    "check_group_spread": [0.4 ** 4, 1 - 0.4 ** 4, 0.6, 0.5],
    "check_group_size_for_signal": [3, 5, 2, 64, "none"],
    "check_which_reward_rose": ["both", "sampled exact", "neither"],
    "check_token_weight_ratio": [1 / 3, 1.0, 2.0, 20],
    "check_grpo_advantages_by_hand": [[1.0, -1.0, 0.5, -0.5], [0.5, -0.5, 0.0, -0.5], [0, 0, 0, 0]],
    # the greedy difference, the sign inverted, the success difference, RWML's share alone, the warm-up's
    "check_failed_step_difference": [0.0, 187 / 1100 - 150 / 1250, 0.18 - 0.21, 0.12,
                                     187 / 1100],
    "check_grpo_clipped_loss_by_hand": [0.0, 1.0, -0.25, 0.123],
    "check_group_rewards": [[1.0, 0.0, 1.0], [1.5, -0.5, 1.2], [0.9, -0.3, 0.8]],
    "check_call_term": [[0.8, 0.6], [-0.55, -0.1], [-0.64, -0.64], [-0.28, -0.64]],
    "check_call_direction": ["fewer", "neither"],
    "check_turn_kind": ["action", "invalid"],
    "check_no_signal": [True, "yes"],
    "check_break_even_latency": [0.04, 2.5, 0.0, -0.4],
    "check_affine_answer": [5, 0, 0.2, 6],
    "check_fused_variance": [0.02, 0.06, 0.04, 0.08, 1 / 0.02 + 1 / 0.06],
    "check_rollout_weight": [2.0, 0.5, 2 / 7, 7.0, 1.0],
    "check_strong_distortion_answer": ["reproduced", "contradicted", "not measured"],
    "check_sweep_crossing": [0.4, 0.1, 0.3, "none"],
    "check_interval_answer": [(0.4484, -0.0484), (0.2 - 0.2029, 0.2 + 0.2029), (0.2 - 0.1132, 0.2 + 0.1132),
                              (0.2 - 0.4303, 0.2 + 0.4303), (0.0, 0.4)],
    "check_verdict_answer": ["reproduced", "contradicted", "not measured"],
    "check_seeds_needed": [4, 6, 3, "none", 100],
    "check_missing_record_verdict": ["inconclusive", "reproduced", "contradicted"],
    "check_red_pixel_l1": [1 / 16, 255 / 48, 1 / 3, 0.02, 1.0],
    "check_completion_budget": [64, 4096, 36, 37, 66],
    "check_zero_signal_share": [0.75, 0.5, 0.0, 1.0],
    "check_concept": ["a", "b", "c", "d"],  # the right letter of each question is skipped there
}
# notebook 03's ablations: the greedy difference, the sign, WM-R1 vs its start, vs best-of-K, a percentage, nothing
WRONG["check_imagined_calls_measure"] = [0.08, -0.04, 0.1, -0.15, 4.0, 0.0]

BAD_ANSWERS = ("", "nonsense", [], {}, float("nan"), 1e308, 10 ** 400, float("-inf"), object(), b"0.5", 1j,
               [None, None], ("0.1",), {"a": 1})
"""What a student may type: text, empty containers, non-numbers, a number beyond float's range, wrong types."""

BAD_STATE = (None, [], {}, "nonsense", 0, float("nan"))
"""What a notebook may pass for a checker's inputs when its cells ran out of order or found nothing."""


def _truth_strings(truth) -> list[str]:
    """Ways the right answer could appear in a message (numbers: only those distinctive enough to search)."""
    if isinstance(truth, str):
        return [truth.lower()] if len(truth) > 3 else []
    if isinstance(truth, (list, tuple)):
        return [s for t in truth for s in _truth_strings(t)]
    value = float(truth)
    if value == int(value) and abs(value) < 10:  # 0, 1, 7: in every message as a count or a range
        return []
    return sorted({f"{value:.3f}", f"{value:.4f}", f"{value:g}", repr(value)} - {"0.000", "-0.000"})


def _reveals(out: str, truth) -> list[str]:
    import re

    text = out.lower()
    found = []
    for s in _truth_strings(truth):
        pattern = (r"\b" + re.escape(s) + r"\b") if s[0].isalpha() else (r"(?<![\d.])" + re.escape(s) + r"(?!\d)")
        if re.search(pattern, text):
            found.append(s)
    return found


def test_the_sweep_lists_every_checker():
    assert sorted(WRONG) == CHECKERS, "give each checker its plausible wrong answers here"


def _same(a, b) -> bool:
    """The wrong answer is this case's right one (skipped there): equal words, or numbers within rounding."""
    if isinstance(a, str) or isinstance(b, str):
        return str(a).strip().lower() == str(b).strip().lower()
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    return isinstance(a, (int, float)) and not isinstance(a, bool) and abs(float(a) - float(b)) <= 5e-4


@pytest.mark.parametrize("name, case", [(name, i) for name in CHECKERS for i in range(len(INPUTS[name]))])
def test_sweep_wrong_answers_fail_without_the_answer(name, case, capsys):
    """Every listed wrong answer (that is not this case's right one) fails with "not yet: expected ...";
    no line prints the right answer: a number anywhere (beyond the inputs and the answer given), a
    word in the diagnosis lines (the "expected" line may list every option)."""
    args, kwargs = INPUTS[name][case]
    truth = ANSWERS[name](*args, **kwargs)
    for wrong in WRONG[name]:
        if _same(wrong, truth):
            continue
        assert getattr(exercises, name)(wrong, *args, **kwargs) is False, f"{name} accepted {wrong!r}"
        out = capsys.readouterr().out
        if case and out.startswith("cannot check"):  # listed for the first case: another group size here
            continue
        assert "not yet: expected" in out, out
        # printing the inputs (the sweep's fractions, a group's rewards) or the answer given is not revealing
        shown = set(_truth_strings(wrong)) | {s for s in _truth_strings(truth) if s in repr((args, kwargs)).lower()}
        searched = out.replace(repr(wrong), "")
        if isinstance(truth, str):
            searched = "\n".join(line for line in searched.splitlines() if not line.startswith("not yet: expected"))
        revealed = [s for s in _reveals(searched, truth) if s not in shown]
        assert not revealed, f"{name} printed the right answer ({revealed}) for {wrong!r}:\n{out}"


def test_reveal_detector_finds_a_printed_answer():
    assert _reveals("typical mistake — the answer is 0.866", 0.8660254) == ["0.866"]
    assert _reveals("expected G = none", "none") == ["none"]
    assert not _reveals("expected a whole number G ≤ 64", 0.8660254)
    assert not _reveals("1.0866", 0.866)  # part of another number


def test_group_size_expected_line_is_the_same_whatever_the_truth(capsys):
    """It printed "expected G = none" exactly when the answer was "none"."""
    exercises.check_group_size_for_signal(3, [0.0, 0.0, 0.4])  # the right answer: "none"
    none_case = capsys.readouterr().out.splitlines()[0]
    exercises.check_group_size_for_signal(3, [0.0, 0.2, 0.3, 0.5])  # the right answer: 4
    number_case = capsys.readouterr().out.splitlines()[0]
    assert none_case == number_case


@pytest.mark.parametrize("name", CHECKERS)
def test_sweep_bad_answers_get_a_message_never_an_exception(name, capsys):
    args, kwargs = INPUTS[name][0]
    assert getattr(exercises, name)(None, *args, **kwargs) is None
    assert "not answered yet" in capsys.readouterr().out
    for bad in BAD_ANSWERS:
        assert getattr(exercises, name)(bad, *args, **kwargs) in (False, None), f"{name} accepted {bad!r}"
        assert capsys.readouterr().out.strip(), f"{name} said nothing for {bad!r}"


@pytest.mark.parametrize("name", [n for n in CHECKERS if INPUTS[n][0][0] or INPUTS[n][0][1]])
def test_sweep_impossible_notebook_state_never_raises(name, capsys):
    """Each input the checker reads from the notebook, replaced in turn by each of BAD_STATE, with the
    right answer of the good inputs: a message and False/None, never an exception."""
    args, kwargs = INPUTS[name][0]
    right = ANSWERS[name](*args, **kwargs)
    for i in range(len(args)):
        for bad in BAD_STATE:
            changed = list(args)
            changed[i] = bad
            assert getattr(exercises, name)(right, *changed, **kwargs) in (True, False, None)
            assert capsys.readouterr().out.strip()
    for key in kwargs:
        for bad in BAD_STATE:
            assert getattr(exercises, name)(right, *args, **{**kwargs, key: bad}) in (True, False, None)
            assert capsys.readouterr().out.strip()


def test_the_five_impossible_states_the_lecturer_found(capsys):
    cases = [(exercises.check_changed_share, (0.5, [], "phone")),
             (exercises.check_interval_answer, ((0.1, 0.3), [0.2])),
             (exercises.check_zero_signal_share, (0.5, None)),
             (exercises.check_sweep_crossing, (0.1, {}, (0.1, 0.2))),
             (exercises.check_break_even_latency, (0.4, []))]
    for checker, args in cases:
        assert checker(*args) is None
        assert "cannot check" in capsys.readouterr().out


def test_sweep_counts(capsys):
    """The sweep's size, printed (pytest -s): checkers, right answers, wrong answers, bad inputs."""
    rights = sum(len(INPUTS[n]) for n in CHECKERS)
    wrongs = sum(len(WRONG[n]) for n in CHECKERS)
    bad = len(CHECKERS) * (len(BAD_ANSWERS) + 1)
    state = sum(len(BAD_STATE) * (len(INPUTS[n][0][0]) + len(INPUTS[n][0][1])) for n in CHECKERS)
    with capsys.disabled():
        print(f"\nchecker sweep: {len(CHECKERS)} checkers, {rights} right answers, {wrongs} wrong answers, "
              f"{bad} bad answers, {state} impossible notebook states")
    assert wrongs >= 2 * len(CHECKERS) and rights >= len(CHECKERS)


def test_concept_diagnoses_never_name_the_right_choice(capsys):
    for question, concept in exercises.CONCEPTS.items():
        assert concept.answer in concept.choices and set(concept.why_not) == set(concept.choices) - {concept.answer}
        for letter in concept.why_not:
            assert exercises.check_concept(f"({letter.upper()})", question) is False
            out = capsys.readouterr().out
            assert concept.choices[concept.answer] not in out and f"({concept.answer})" not in out, (question, out)
        assert exercises.check_concept(concept.answer, question) is True
        capsys.readouterr()


def test_each_notebook_asks_its_concept_questions_as_the_registry_words_them():
    """Each question id a notebook checks is asked in the markdown cell just before, word for word,
    with every choice; every notebook asks three to five."""
    import re
    from pathlib import Path

    jupytext = pytest.importorskip("jupytext")
    asked = []
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("0[1-6]_*.py")):
        cells = jupytext.read(path, fmt="py:percent").cells
        ids = []
        for i, cell in enumerate(cells):
            for question in re.findall(r'check_concept\(CONCEPT_\d+, "([\w.]+)"\)', cell.source):
                concept = exercises.CONCEPTS[question]
                text = " ".join(cells[i - 1].source.replace("#", " ").split())
                assert cells[i - 1].cell_type == "markdown" and concept.question in text, (path.name, question)
                assert all(f"({k}) {v}" in text for k, v in concept.choices.items()), (path.name, question)
                ids.append(question)
        assert 3 <= len(ids) <= 5, f"{path.name} asks {len(ids)} concept questions"
        asked += ids
    assert sorted(asked) == sorted(exercises.CONCEPTS), "a question no notebook asks, or one asked twice"


def test_every_open_answer_is_of_an_exercise_that_exists():
    """OPEN_ANSWERS keys name "<notebook>.<exercise number>" of a notebook's exercises."""
    import re
    from pathlib import Path

    for key in solutions.OPEN_ANSWERS:
        number, exercise = key.split(".")
        source = next((Path(__file__).resolve().parents[1] / "notebooks").glob(f"{number}_*.py")).read_text()
        exercises_text = source[source.index("## Exercises"):]
        assert re.search(rf"^# {exercise}\. ", exercises_text, re.MULTILINE), key
        assert len(solutions.open_answer(key).split()) >= 15
    with pytest.raises(KeyError, match="there are"):
        solutions.open_answer("09.1")
