"""Checkers for the notebooks' exercises: each prints a verdict and returns True/False/None.

None means "not answered yet" (the answer is still None), so executing a notebook top to
bottom never fails on an exercise a reader has not done.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wmkit.envs.base import Transition
from wmkit.stats import summarize, verdict
from wmkit.wm_r1 import agent as ag
from wmkit.wmrl.experiment import CONTROLLED_WM, WMRLSizes, run_arms
from wmkit.wmrl.method import (
    fuse_estimates,
    select_anchor_groups,
)
from wmkit.wmrl.problems import ControlledBandit, HandmadeWorldModel


def check_group_rewards(answer, successes, lengths, calls, max_steps: int) -> bool | None:
    """Exercise: the composite rewards of one group, computed by hand."""
    from wmkit.rewards.wm_r1 import composite_rewards

    if answer is None:
        print("not answered yet")
        return None
    truth = composite_rewards(successes, lengths, calls, max_steps=max_steps)
    ok = len(answer) == len(truth) and all(abs(float(a) - t) < 1e-3 for a, t in zip(answer, truth))
    return _verdict(ok, "p, L_ref and the budget first; then λ = (len − budget)/budget per rollout, "
                             "the same for the calls with n_max = 5; R = R_succ + 0.5·R_L + 0.1·R_WM.")


def check_turn_kind(answer, text: str) -> bool | None:
    """Exercise: what kind of turn a text is ('action', 'imagine' or 'invalid')."""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(answer == ag.parse_turn(text).kind,
                         "an Action: line wins; call_wm(...) without one is imagined; anything else fails.")


def check_no_signal(answer) -> bool | None:
    """Exercise: does a group in which every rollout failed with the same length teach GRPO anything?"""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(answer is False, "equal rewards in a group give zero advantages.")


def check_affine_answer(answer: Any) -> bool | None:
    """Exercise 1: how much do a group's GRPO advantages change if every reward becomes 5·r + 1?"""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(abs(float(answer)) < 1e-3, "standardization subtracts the mean and divides by the std.")


def check_fused_variance(answer: Any, v_e: float, v_wm: float) -> bool | None:
    """Exercise 2: the variance of the inverse-variance fusion of two estimates."""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(abs(float(answer) - fuse_estimates(0.0, v_e, 0.0, v_wm)[1]) < 1e-6,
                    "precisions add: 1/V = 1/V_E + 1/V_WM.")


def check_anchor_count(answer: Any, n_groups: int, fraction: float) -> bool | None:
    """Exercise 3: how many anchor groups does a step of ``n_groups`` get at ``fraction``?"""
    if answer is None:
        print("not answered yet")
        return None
    truth = int(select_anchor_groups(n_groups, fraction, rng=0).sum())
    return _verdict(int(answer) == truth, "max(1, round(fraction·n)) with Python's round (halves go to even).")


def check_strong_distortion_answer(answer: Any, sizes: WMRLSizes, seed: int = 0) -> bool | None:
    """Exercise 4: with f(r) = r³, does 'debias only' end closer to J* than 'no correction'? (True/False)

    Runs both arms on the controlled problem (a few seconds) to check.
    """
    if answer is None:
        print("not answered yet")
        return None
    env = ControlledBandit(seed=seed)
    wm = HandmadeWorldModel(env, seed=seed, **{**CONTROLLED_WM, "exponent": 3.0})
    logs = run_arms(env, {"handmade": wm}, sizes.bandit,
                    {"none": {"arm": "wmrl", "debias": False, "denoise": False},
                     "debias": {"arm": "wmrl", "debias": True, "denoise": False}}, seed)
    truth = logs["debias"].final_value > logs["none"].final_value
    print(f"final J: debias only {logs['debias'].final_value:.4f}, no correction {logs['none'].final_value:.4f}")
    return _verdict(bool(answer) == truth, "look at how much of the range [0, 1] r³ gives to r < 0.5, "
                    "and how large the noise is there.")


def check_interval_answer(answer: Any, values: Sequence[float]) -> bool | None:
    """Exercise: the 95% t-interval of `values`, as (low, high)."""
    if answer is None:
        print("not answered yet")
        return None
    s = summarize(values)
    try:
        low, high = (float(a) for a in answer)
    except (TypeError, ValueError):
        return _verdict(False, "give two numbers: (low, high)")
    return _verdict(abs(low - s["ci_low"]) < 5e-3 and abs(high - s["ci_high"]) < 5e-3,
                "mean ± t·s/√n with the sample std s (divide by n − 1) and t(0.975, n − 1 dof).")


def check_verdict_answer(answer: Any, values: Sequence[float], direction: str = "higher",
                         threshold: float = 0.0) -> bool | None:
    """Exercise: the verdict of a claim whose per-seed values are `values`."""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(answer == verdict(values, direction, threshold).verdict,
                "where is the 95% interval: wholly on the paper's side, across the line, wholly on the "
                "other side — or is there no interval at all?")


def _verdict(ok: bool, hint: str) -> bool:
    print("correct" if ok else f"not yet: {hint}")
    return ok


def check_no_change_on_changed(answer) -> bool | None:
    """Exercise: the exact-match accuracy of 'predict no change' on changed transitions."""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(abs(float(answer) - 0.0) < 1e-9,
                    "on a changed transition the true next state differs from the current one.")


def check_changed_share(answer, train: Sequence[Transition], env: str) -> bool | None:
    """Exercise: the share of changed transitions of `env` in the training split."""
    if answer is None:
        print("not answered yet")
        return None
    items = [t for t in train if t.env == env]
    truth = sum(t.changed for t in items) / len(items)
    return _verdict(abs(float(answer) - truth) < 1e-3, "count t.changed over the env's training transitions.")


def check_applied_screen(answer, before: str, diff: str) -> bool | None:
    """Exercise: apply a screen diff by hand (write the next screen as text)."""
    from wmkit.envs import phone

    if answer is None:
        print("not answered yet")
        return None
    truth = phone.apply_diff(before, diff)
    return _verdict(isinstance(answer, str) and answer.strip() == (truth or "").strip(),
                    "remove deleted lines, replace updated ones, add new ones, keep the header first "
                    "and elements in id order.")


def check_group_advantage(answer, rewards: Sequence[float], index: int = 0) -> bool | None:
    """Exercise (notebook 02): TRL's group-relative advantage of completion `index` (unbiased std)."""
    import statistics

    if answer is None:
        print("not answered yet")
        return None
    truth = (rewards[index] - statistics.fmean(rewards)) / (statistics.stdev(rewards) + 1e-4)
    return _verdict(abs(float(answer) - truth) < 1e-2,
                    "subtract the group mean, divide by the sample standard deviation (n - 1).")


def check_max_unchanged_task_reward(answer) -> bool | None:
    """Exercise (notebook 02): the largest task-specific reward on an unchanged transition."""
    if answer is None:
        print("not answered yet")
        return None
    return _verdict(abs(float(answer) - 0.3) < 1e-9,
                    "0.09 + 0.01 + 0.2: the changed-properties term is left out when nothing changes.")


def check_group_spread(answer, p: float, group_size: int) -> bool | None:
    """Exercise (notebook 02): the chance that a group of `group_size` samples, each right with
    probability `p`, holds both a right and a wrong one (so a binary reward gives it a gradient)."""
    if answer is None:
        print("not answered yet")
        return None
    from wmkit.rlvr_world.regime import group_signal_probability

    truth = group_signal_probability(p, group_size)
    return _verdict(abs(float(answer) - truth) < 1e-3,
                    "a group teaches nothing when all G are right (p^G) or all are wrong ((1-p)^G).")
