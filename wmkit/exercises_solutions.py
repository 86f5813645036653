"""Instructor solutions to the notebooks' exercises: one ``answer_<name>`` per checker ``check_<name>``
of :mod:`wmkit.exercises`. For instructors only — a notebook never imports this module.

Each ``answer_<name>`` takes the same inputs as its checker, without ``answer`` (with the same
defaults), and returns what a correct student gives, so that::

    from wmkit import exercises, exercises_solutions as solutions
    exercises.check_changed_share(solutions.answer_changed_share(splits["train"], "phone"),
                                  splits["train"], "phone")          # prints "correct: ..."

Answers that depend on a run (a split, an evaluation, a GRPO record, a sweep, a throughput table)
are computed from those inputs the way the exercise asks a student to: by hand, in plain Python or
numpy, from the formula the notebook states — not by calling the function the checker compares
with, so the two are independent. Where the exercise is "apply the kit's rule" (a verdict), the rule
is the kit's, :func:`wmkit.stats.verdict`. Each docstring says why the answer is what it is.

:func:`solutions` maps every checker name to its answer function; tests/test_exercises_solutions.py
feeds each answer to its checker, and fails when a checker has no answer here.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from wmkit import exercises
from wmkit.envs import phone
from wmkit.envs.base import Transition
from wmkit.exercises import strong_distortion_differences
from wmkit.stats import verdict

# ---------------------------------------------------------------- notebook 01


def answer_no_change_on_changed() -> float:
    """0: on a changed transition the true next state differs from the current one, so copying the
    current state is never an exact match (it is always right on unchanged ones)."""
    return 0.0


def answer_changed_share(train: Sequence[Transition], env: str) -> float:
    """Changed transitions of `env` over all transitions of `env` in the training split."""
    items = [t for t in train if t.env == env]
    return sum(1 for t in items if t.changed) / len(items)


def answer_applied_screen(before: str, diff: str) -> str:
    """The screen after the diff. By hand: delete the removed lines, replace the updated ones, add
    the new ones, header first, elements in id order — which is what ``phone.apply_diff`` does (the
    exercise asks the student to compare with it)."""
    return phone.apply_diff(before, diff) or ""


def answer_changed_hits(evaluation: Mapping[str, Any], env: str = "phone") -> int:
    """Exact-match accuracy of the greedy model on changed transitions times their number."""
    greedy = evaluation[env]["model_greedy"]
    return round(greedy["changed"] * greedy["n_changed"])


# ---------------------------------------------------------------- notebook 02


def answer_group_advantage(rewards: Sequence[float], index: int = 0) -> float:
    """(r_i − mean) / (sample std + 1e-4), the std with n − 1 as TRL's torch.std. For [1, 0, 0, 1]:
    0.5 / 0.577 = 0.866."""
    r = [float(x) for x in rewards]
    mean = sum(r) / len(r)
    sample_std = math.sqrt(sum((x - mean) ** 2 for x in r) / (len(r) - 1))
    return (r[index] - mean) / (sample_std + 1e-4)


def answer_max_unchanged_task_reward() -> float:
    """0.09·item accuracy + 0.01·score accuracy + 0.2 for an all-correct state, each at its best;
    the changed-properties term is left out when nothing changes: 0.09 + 0.01 + 0.2 = 0.3."""
    return 0.09 * 1.0 + 0.01 * 1.0 + 0.2 * 1.0


def answer_group_spread(p: float, group_size: int) -> float:
    """A binary reward gives a group a gradient only when it is mixed: 1 − p^G − (1 − p)^G."""
    return 1 - p ** group_size - (1 - p) ** group_size


def answer_group_size_for_signal(shares: Sequence[float], target: float = 0.5, largest: int = 64) -> int | str:
    """Raise G from 2 until the *average over transitions* of 1 − p^G − (1 − p)^G reaches `target`;
    "none" when no G ≤ `largest` does (transitions never sampled right add 0 at every G, so they cap
    the share). Averaging p first gives a G that is too small."""
    for g in range(2, largest + 1):
        share = sum(1 - p ** g - (1 - p) ** g for p in shares) / len(shares)
        if share >= target:
            return g
    return "none"


def answer_which_reward_rose(result: Mapping[str, Any]) -> str:
    """Read the mean gains over seeds of *your* run: a gain above 0 counts as rising. Nothing is
    typical here: in the kit's own runs with this reward (the ablation table of
    ``research/NOTEBOOK_02_MEASUREMENTS.md``) both rose; partial credit can also rise alone, since more
    properties right is not the whole state right."""
    sampled = result["gain"]["sampled"]["mean"] > 0
    reward = result["gain"]["reward"]["mean"] > 0
    if sampled and reward:
        return "both"
    if sampled:
        return "sampled exact"
    return "task reward" if reward else "neither"


def answer_token_weight_ratio(lengths: Sequence[int] = (10, 30), loss_type: str = "grpo") -> float:
    """'grpo' averages each completion over its own length, so a token weighs 1/|o_i|: the short
    completion's tokens weigh |long|/|short| times more (3 for 10 and 30 tokens). 'dapo' and
    'dr_grpo' use one normaliser for the whole batch: every token weighs the same (ratio 1)."""
    return max(lengths) / min(lengths) if loss_type == "grpo" else 1.0


def answer_failed_step_difference(acting: Mapping[str, Any] | None) -> float:
    """Each model's failed steps over all its steps, sampled at T = 1 (``invalid`` / ``steps``: both
    per-episode means in ``acting``, so their ratio is the share): RWML's minus the warm-up's. Sampled, because a warm-up that
    learned its actions from expert episodes writes a valid action greedily (its greedy share is 0
    or close to it, and so is RWML's), so only the sampled agents leave RWML a share to lower."""
    sampled = {arm: acting[arm]["sampled"] for arm in ("rwml", "warm")}
    return sampled["rwml"]["invalid"] / sampled["rwml"]["steps"] - sampled["warm"]["invalid"] / sampled["warm"]["steps"]


# ---------------------------------------------------------------- notebooks 02, 03, 04, 06: GRPO by hand


def _advantages(rewards: Sequence[float], scale_rewards: str) -> np.ndarray:
    r = np.asarray(rewards, dtype=float)
    centred = r - r.mean()
    return centred if scale_rewards == "none" else centred / (r.std(ddof=1) + 1e-4)


def answer_grpo_advantages_by_hand(record: Mapping[str, Any]) -> list[float]:
    """Centre the rewards on the group mean; with ``scale_rewards="group"`` divide by the sample
    std (ddof=1, as TRL) plus 1e-4; with "none" (WM-R1) stop at the centred rewards."""
    return [float(a) for a in _advantages(record["rewards"], record.get("scale_rewards", "group"))]


def answer_grpo_clipped_loss_by_hand(record: Mapping[str, Any]) -> float:
    """The second pass: ρ = exp(new − old) per token, per-token loss −min(ρ·A, clip(ρ, 1 ± ε)·A),
    then the record's aggregation over the tokens the mask keeps — 'dapo'/'bnpo': sum / number of
    tokens; 'grpo': each completion's mean, then the mean over completions; 'dr_grpo':
    sum / (G · max_completion_length)."""
    p = record["passes"][1]
    epsilon = float(record.get("epsilon", 0.2))
    old, new, mask = (np.asarray(p[key], dtype=float) for key in ("old_logps", "new_logps", "mask"))
    a = _advantages(p["rewards"], record.get("scale_rewards", "group"))[:, None]
    ratio = np.exp(new - old)
    per_token = -np.minimum(ratio * a, np.clip(ratio, 1 - epsilon, 1 + epsilon) * a) * mask
    loss_type = record.get("loss_type", "dapo")
    if loss_type == "grpo":
        return float((per_token.sum(1) / np.maximum(mask.sum(1), 1.0)).mean())
    if loss_type == "dr_grpo":
        return float(per_token.sum() / (mask.shape[0] * record["max_completion_length"]))
    return float(per_token.sum() / max(mask.sum(), 1.0))  # dapo, bnpo


# ---------------------------------------------------------------- notebook 03


def _budget_shape(flags: Sequence[bool], values: Sequence[float], cap: float) -> list[float]:
    """WM-R1's budget shape for lengths or calls: p = share of successes, ref = successes' mean
    (none: the group's max), budget = p·ref + (1 − p)·cap (0 → 1), λ = (value − budget)/budget;
    success max(−0.5λ + 0.5, 0.1), failure min(0.9λ − 0.1, −0.1)."""
    wins = [v for v, ok in zip(values, flags) if ok]
    p = len(wins) / len(values)
    ref = sum(wins) / len(wins) if wins else max(values)
    budget = p * ref + (1 - p) * cap or 1.0
    out = []
    for ok, v in zip(flags, values):
        lam = (v - budget) / budget
        out.append(max(-0.5 * lam + 0.5, 0.1) if ok else min(0.9 * lam - 0.1, -0.1))
    return out


def answer_group_rewards(successes: Sequence[float], lengths: Sequence[float], calls: Sequence[float],
                         max_steps: int) -> list[float]:
    """R = R_succ + 0.5·R_L + 0.1·R_WM per rollout: R_L with the length budget (cap `max_steps`),
    R_WM with the call budget (cap n_max = 5)."""
    flags = [bool(s) and float(s) > 0.5 for s in successes]
    r_length = _budget_shape(flags, [float(v) for v in lengths], max_steps)
    r_calls = _budget_shape(flags, [float(v) for v in calls], 5)
    return [float(ok) + 0.5 * r_l + 0.1 * r_wm for ok, r_l, r_wm in zip(flags, r_length, r_calls)]


def answer_call_term(successes: Sequence[float], calls: Sequence[float], n_max: int = 5) -> list[float]:
    """R_WM alone. With no success p = 0, so the budget is n_max (not the group's most calls):
    for calls 2 and 4, λ = −0.6 and −0.2, R_WM = −0.64 and −0.28. −0.28 > −0.64: the rollout with
    *more* calls gets the larger reward, so GRPO pushes calls up (:func:`answer_call_direction`)."""
    flags = [bool(s) and float(s) > 0.5 for s in successes]
    return _budget_shape(flags, [float(v) for v in calls], n_max)


def answer_call_direction(successes: Sequence[float], calls: Sequence[float], n_max: int = 5) -> str:
    """Compare R_WM of the rollout with the most calls and of the one with the fewest: GRPO raises the
    one with the larger reward. All-fail, calls 2 and 4: −0.28 > −0.64, so "more" (a failure that
    imagines more is penalised less; among successes the sign turns, as notebook 03's table shows)."""
    r = answer_call_term(successes, calls, n_max)
    most = max(range(len(calls)), key=lambda i: calls[i])
    fewest = min(range(len(calls)), key=lambda i: calls[i])
    gap = r[most] - r[fewest]
    return "more" if gap > 1e-12 else "fewer" if gap < -1e-12 else "neither"


def answer_turn_kind(text: str) -> str:
    """An ``Action:`` line wins; ``call_wm(...)`` with a valid action and no Action: line is an
    imagined turn ("imagine"); anything else is "invalid". The notebook's text is imagined."""
    from wmkit.wm_r1 import agent  # here: it imports torch (2 s), this module does not

    return agent.parse_turn(text).kind


def answer_no_signal() -> bool:
    """False: equal lengths and equal calls give equal rewards, so every advantage is 0."""
    return False


def answer_break_even_latency(throughput: Sequence[Mapping[str, Any]]) -> float:
    """Per agent step the world model costs seconds/agent_steps; the simulator costs its own compute
    (its seconds without the latency it was run with) plus L·batched_step_calls/agent_steps. Equal
    when L = (wm − sim) · agent_steps / batched_step_calls (negative: the world model is faster
    even on an instant device)."""
    rows = {row["transitions"]: row for row in throughput}
    sim, wm = rows["simulator"], rows["world_model"]
    wm_per_step = wm["seconds"] / wm["agent_steps"]
    sim_per_step = (sim["seconds"] - sim["device_latency_s"] * sim["batched_step_calls"]) / sim["agent_steps"]
    return (wm_per_step - sim_per_step) * sim["agent_steps"] / sim["batched_step_calls"]


# ---------------------------------------------------------------- notebook 03: the ablations where WM-R1 learns


def answer_imagined_calls_measure(result: Mapping[str, Any] | None) -> float:
    """WM-R1's sampled (T = 1) success minus the no-imagine arm's, on the same tasks of the same seed.
    Sampled, because the start's most likely turn is an action, never a call: a greedy agent makes no
    call when it is judged, so only a sampled agent uses the world model while it acts."""
    arms = result["arms"]
    return arms["wm_r1"]["sampled"]["success"] - arms["no_imagine"]["sampled"]["success"]


# ---------------------------------------------------------------- notebook 04


def answer_affine() -> float:
    """1 (the advantages are unchanged): the +1 moves the mean by 1 and the ×5 scales the centred
    reward and the std by 5 alike; standardizing removes both."""
    return 1.0


def answer_fused_variance(v_e: float, v_wm: float) -> float:
    """Precisions add: 1 / (1/V_E + 1/V_WM); for 0.02 and 0.06, 0.015."""
    return 1 / (1 / v_e + 1 / v_wm)


def answer_rollout_weight(n_anchor: int, n_wm: int, v_e: float, v_wm: float) -> float:
    """A group mean of n rollouts has variance σ²/n, so per rollout σ²_E = n_E·V_E and
    σ²_WM = n_WM·V_WM, and the weight is their ratio w = (n_WM·V_WM)/(n_E·V_E); 14 for the
    notebook's numbers."""
    return (n_wm * v_wm) / (n_anchor * v_e)


def answer_strong_distortion(sizes: Any, seeds: Sequence[int] = (0, 1, 2, 3, 4),
                             differences: Sequence[float] | None = None) -> str:
    """Run both arms per seed with f(r) = r³ (or take the per-seed `differences`, debias only − no
    correction) and apply the kit's rule: claim "higher than 0"."""
    if differences is None:
        differences = strong_distortion_differences(sizes, seeds)
    return verdict(list(differences), "higher", 0.0).verdict


def answer_sweep_crossing(arms: Mapping[str, Any], fractions: Sequence[float]) -> float | str:
    """The smallest fraction of the sweep where WMRL's mean final gap is below anchors-only's."""
    for f in sorted(fractions):
        if arms[f"WMRL @{f:g}"]["final_gap"]["mean"] < arms[f"anchors only @{f:g}"]["final_gap"]["mean"]:
            return f
    return "none"


# ---------------------------------------------------------------- notebook 05


def answer_interval(values: Sequence[float]) -> tuple[float, float]:
    """mean ± t(0.975, n − 1)·s/√n with the sample std s; for 0.10, 0.30, 0.20:
    0.2 ± 4.303·0.1/√3 = (−0.048, 0.448)."""
    from scipy import stats

    n = len(values)
    mean, s = statistics.fmean(values), statistics.stdev(values)
    half = float(stats.t.ppf(0.975, n - 1)) * s / math.sqrt(n)
    return mean - half, mean + half


def answer_verdict(values: Sequence[float], direction: str = "higher", threshold: float = 0.0) -> str:
    """The kit's rule: interval wholly on the paper's side — reproduced; across the line —
    inconclusive; wholly on the other side — contradicted; no interval — not measured."""
    return verdict(values, direction, threshold).verdict


def answer_seeds_needed(mean: float, std: float, threshold: float = 0.0) -> int | str:
    """Try n = 2, 3, ...: the first n with t(0.975, n − 1)·s/√n < |mean − line|; "none" when the mean
    sits on the line (no n does). For mean 0.1, std 0.1: 7."""
    from scipy import stats

    gap = abs(mean - threshold)
    for n in range(2, 10_001):
        if float(stats.t.ppf(0.975, n - 1)) * std / math.sqrt(n) < gap:
            return n
    return "none"


def answer_missing_record() -> str:
    """"not measured": without its record the row has no number at all."""
    return "not measured"


# ---------------------------------------------------------------- notebook 06


def answer_red_pixel_l1() -> float:
    """One value of 48 (16 pixels × 3 channels) differs by the full range 1: 1/48."""
    return 1 / (4 * 4 * 3)


def answer_completion_budget(grid_cells: int = 8) -> int:
    """One code per grid cell plus the end-of-frame token: 8·8 + 1 = 65."""
    return grid_cells * grid_cells + 1


def answer_zero_signal_share(zero_std_share: Sequence[float]) -> float:
    """The mean of the run's logged ``frac_reward_zero_std`` over its steps."""
    values = [float(v) for v in zero_std_share]
    return sum(values) / len(values)


# ---------------------------------------------------------------- concept questions


def answer_concept(question: str) -> str:
    """The letter of the right choice of :data:`wmkit.exercises.CONCEPTS` [`question`]. Why that one
    and not the others: ``tutorials/course.md`` (model answers) and each wrong choice's diagnosis."""
    return exercises.CONCEPTS[question].answer


# ---------------------------------------------------------------- open questions: model answers

OPEN_ANSWERS: dict[str, str] = {
    "01.4": "The count of changed phone transitions predicted exactly grows with model size, data and steps, "
            "but stays small: exact match needs every line of the next screen. The phone is the harder "
            "environment: a screen hides what lies below it and what another app will show, so the next "
            "screen is not a function of the screen the model sees (some changed transitions are ambiguous "
            "even in the data). The text game's state lists every object, so its next state is determined "
            "by what the model reads; its difficulty is copying names, uuids and contents exactly.",
    "02.3": "P(signal) = 1 − p^G − (1 − p)^G is symmetric under p ↔ 1 − p and largest at p = 1/2: near p = 1 "
            "almost every group is all right, as uninformative as all wrong. At p = 0.6 the smallest G with "
            "P > 1/2 is 3 (G = 2: 0.48; G = 3: 0.72).",
    "02.4": "f(p) = 1 − p^G − (1 − p)^G is concave (f'' = −G(G − 1)(p^(G−2) + (1 − p)^(G−2)) < 0), so the "
            "mean of f over transitions is at most f of the mean p (Jensen): averaging first overstates the "
            "share of groups with signal and gives too small a G. Transitions never sampled right add 0 at "
            "every G, which caps the share below 1 whatever G.",
    "02.5": "Yes: the task-specific reward pays per part (items, score, the share of changing properties "
            "right), so RL can raise the share of properties right while the whole state, names and uuids "
            "included, stays wrong; exact match rises only when a prediction gets every field.",
    "02.6": "With 'grpo' a token of completion i weighs 1/|o_i|: 1/10 against 1/30, three times more for the "
            "short one. With 'dapo' every token weighs 1/Σ|o_i|: ratio 1. Under 'grpo' each token of the "
            "long wrong completion carries a third of the short one's weight, so long wrong answers are "
            "penalised more lightly (Dr. GRPO's length bias).",
    "02.7": "On the first pass ρ = 1, so each token's loss is −A_i; 'dapo' averages over all tokens, "
            "−Σ_i |o_i|·A_i / Σ_i |o_i|, a length-weighted mean of advantages that sum to 0 only unweighted: "
            "not 0 when completions differ in length. 'grpo' averages each completion first (−A_i) and then "
            "over completions: −mean(A_i) = 0.",
    "02.8": "A greedy agent takes the most probable turn at every step; a warm-up that learned its actions from "
            "expert episodes then writes a valid action at (nearly) every step, so its greedy share of failed "
            "steps sits at or next to 0 (section 9's table prints it), and so does RWML's: there is nothing for "
            "RWML to lower, and the difference is 0 whatever RWML did. Sampled at T = 1 the agent sometimes writes "
            "an action that fails; that share measures how much probability the policy puts on invalid actions, "
            "which RWML can change. (An untrained smoke-size agent fails greedily too: read a cpu run.)",
    "03.6": "Read section 7's ladder over seeds: WM-R1 stops beating its start where the gain's interval "
            "reaches 0, at the measured error of that rung. Notebook 01's world model is exact on a small "
            "share of transitions (section 9 prints it), so its error lies to the right of the rungs, where "
            "the ladder predicts no gain: the wm_r1 arms trained inside it do not move.",
    "03.7": "WM-R1's reward mixes success with small length and call terms (weights 0.5 and 0.1). In a group "
            "where every rollout fails, only those small terms differ; dividing by the group's std would "
            "blow them up to advantages as large as a success's, and the tie-breakers would drive training. "
            "Centred rewards keep their size (the official code's scale_rewards='none').",
    "03.8": "A test written before it runs: fresh seeds, the prediction (a judge with lower precision on the "
            "start's episodes leaves a larger gap WM-R1 − GRPO on the simulator), the measure and rule (per "
            "seed the gap and the precision; the kit's verdict on the paired differences). How good a judge "
            "must be: precision = s·a / (s·a + (1 − s)(1 − b)) with s the start's real success, so at a low "
            "s the share of failures judged right, b, must be very close to 1 for most rewarded episodes to "
            "be real successes.",
    "03.9": "The greedy difference WM-R1 − without call_wm: a greedy agent makes no call when it is judged, "
            "so both greedy agents act without imagining, and their difference measures what the two "
            "trainings did to the policy (one trained with answered calls and the call term, one where a call "
            "is a failed step), not what imagining does while acting. The sampled difference has both.",
    "04.4": "With f(r) = r³ the bottom half of the real range maps to a sliver of scores near 0, where the "
            "noise ξ is as large as the differences: check 2's picture shows the isotonic map can recover "
            "E[r | x] only where x moves with r beyond the noise. A monotone map cannot separate configs the "
            "noise mixes, so debiasing gains little there; whatever the verdict over the five seeds, its "
            "interval is wide for that reason.",
    "04.5": "World-model groups pay off where the anchors alone give a noisy gradient (few anchor groups per "
            "step: the sweep's left end) and where the world model ranks configs well (a small non-affine "
            "error). With many anchors, or a world model whose errors are tied to configs, anchors only does "
            "as well or better: its gradient is real.",
    "04.6": "TRL divides by the sample std (n − 1), WMRL's official code by the population std (n): the "
            "advantages differ by the factor sqrt((G − 1)/G) = sqrt(3/4) for G = 4, TRL's being the smaller. "
            "A constant factor rescales the gradient like a learning rate (and Adam almost removes it).",
    "06.3": "With more samples per group, a group is less often all equal, so zero_std_share tends to fall "
            "where samples vary; steps the model already predicts the same way in every sample (an unchanged "
            "step copied right) stay without signal at any G. Whether the copy rate on changed steps falls "
            "depends on whether the new signal is on changed steps: read both in the rerun.",
    "06.4": "With the garbage in the group its reward dominates the std, so the right and the repeated frame "
            "get nearly the same advantage (both above the mean) and the garbage a large negative one. In a "
            "group of only those two, their difference is divided by their own tiny std: advantages near ±0.71 (1/√2), "
            "as large as any. Std scaling inflates small differences when they are alone, and one bad sample "
            "drowns them when it is in the group.",
    "05.4": "A reproduction table must not show a number without the record that made it: a row whose record "
            "is gone has nothing to recompute from and nothing to check, so 'not measured' is the only honest "
            "verdict.",
}
"""Model answers of the exercises' open questions, by "<notebook>.<exercise>" (:func:`open_answer`)."""


def open_answer(key: str) -> str:
    """The model answer of an open question, e.g. ``open_answer("02.3")``; raises KeyError with the keys."""
    if key not in OPEN_ANSWERS:
        raise KeyError(f"no open question {key!r}; there are {', '.join(OPEN_ANSWERS)}")
    return OPEN_ANSWERS[key]


# ---------------------------------------------------------------- the index

_ANSWER_OF = {  # checker name -> answer function, where the two names differ beyond the prefix
    "check_affine_answer": answer_affine,
    "check_strong_distortion_answer": answer_strong_distortion,
    "check_interval_answer": answer_interval,
    "check_verdict_answer": answer_verdict,
    "check_missing_record_verdict": answer_missing_record,
}


def solutions() -> dict[str, Callable[..., Any]]:
    """Every checker name of :mod:`wmkit.exercises` -> its answer function here (KeyError-free only
    when each checker has one: the test checks that)."""
    found = {}
    for name in dir(exercises):
        if name.startswith("check_"):
            answer = _ANSWER_OF.get(name) or globals().get("answer_" + name[len("check_"):])
            if answer is not None:
                found[name] = answer
    return found
