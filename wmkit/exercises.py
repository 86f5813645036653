"""Checkers for the notebooks' exercises: each prints a verdict and returns True/False/None.

None means "not answered yet" (the answer is still None), so executing a notebook top to
bottom never fails on an exercise a reader has not done.
"""
from __future__ import annotations

from collections.abc import Sequence

from wmkit.envs.base import Transition


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
