"""WM-R1's composite reward for a group of agent rollouts.

    R = α·R_succ + β·R_L + γ·R_WM          (α = 1.0, β = 0.5, γ = 0.1)

- ``R_succ`` is 1 when the rollout reached the task goal, else 0.
- ``R_L`` rewards short successes and penalises failures, measured against a
  *budget* that the group itself sets (a DAST-style length budget):

      p      = share of successful rollouts in the group
      L_ref  = mean length of the successful rollouts (if none: the group's longest)
      budget = p·L_ref + (1 − p)·max_steps          (a budget of 0 is replaced by 1)
      λ      = (length − budget) / budget
      success: R_L = max(−0.5·λ + 0.5,  0.1)
      failure: R_L = min( 0.9·λ − 0.1, −0.1)

  When most rollouts succeed the budget shrinks toward their mean length, so a
  success only scores well by being at least as short as its successful siblings;
  when none succeed the budget is ``max_steps`` and failures are not pushed to
  stop early. Lengths count real steps, never imagined (world-model) turns.
- ``R_WM`` has the same shape on the number of imagined ``call_wm(...)`` turns,
  with ``N_ref`` = mean calls of the successful rollouts (if none: the group's
  maximum) and ``n_max`` (5) in place of ``max_steps``. It is what makes the
  number of world-model calls fall during training.

There is no format term: an unparseable turn is simply a failed action.

Where this follows the authors' code
------------------------------------
Public repository ``genalyu/WM-R1``. The trainer (``verl/trainer/ray_trainer.py``) groups
rollouts by task id, calls ``compute_group_stats`` for ``p``, ``L_ref`` and ``N_WM_ref``, then
``compute_wm_r1_reward(..., p, L_ref, n_wm, n_wm_max, N_WM_ref)`` per rollout; both live in
``verl/utils/reward_score/wm_r1.py`` (snapshot e64b260). The main launch script sets
``reward.alpha=1.0 reward.beta=0.5 reward.gamma=0.1`` and ``env.n_wm_max=5``; the code's own
default is ``gamma = 0`` (``verl/trainer/config.py``), which the no-thinking ablation
(``examples/run_ablation_wm_no_think.slurm``: ``env.n_wm_max=0``, no ``reward.gamma``) runs with.
The group statistics, the length shape, the ``max``/``min`` clips and the "budget 0 → 1" rule
are as in the code, and so is the gate on the call term: ``R_WM`` is only computed when
``gamma > 0`` (otherwise it is 0, whatever ``n_max`` is), and ``n_max = 0`` with ``gamma > 0``
is not an error (the budget is ``p·N_ref``, 0 → 1). Success is ``eval_result > 0.5`` there; here any truthy value or number
above 0.5 counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "WMR1RewardConfig",
    "composite_rewards",
    "group_budget",
    "group_has_signal",
    "length_rewards",
    "wm_call_rewards",
]


@dataclass(frozen=True)
class WMR1RewardConfig:
    """Hyperparameters of the WM-R1 composite reward (defaults: the official runs)."""

    alpha: float = 1.0
    """Weight of the task-success term R_succ."""
    beta: float = 0.5
    """Weight of the length term R_L."""
    gamma: float = 0.1
    """Weight of the world-model-call term R_WM."""
    max_steps: int = 20
    """Step limit of an episode; the length budget of a group in which nothing succeeded."""
    n_max: int = 5
    """Most imagined world-model calls allowed per step; the call budget of a group in which nothing succeeded."""
    min_group_std: float = 0.01
    """Groups whose composite rewards have a smaller standard deviation carry no learning signal."""

    def rewards(
        self, successes: Sequence[float], lengths: Sequence[float], n_calls: Sequence[float]
    ) -> list[float]:
        """:func:`composite_rewards` of one group with these hyperparameters."""
        return composite_rewards(
            successes,
            lengths,
            n_calls,
            max_steps=self.max_steps,
            alpha=self.alpha,
            beta=self.beta,
            gamma=self.gamma,
            n_max=self.n_max,
        )

    def has_signal(self, rewards: Sequence[float]) -> bool:
        """:func:`group_has_signal` with this config's threshold."""
        return group_has_signal(rewards, self.min_group_std)


def _check_group(
    successes: Sequence[float], values: Sequence[float], what: str
) -> tuple[list[bool], list[float]]:
    """Validate one group's success flags and per-rollout counts; return them as bools / floats."""
    if len(successes) != len(values):
        raise ValueError(
            f"successes has {len(successes)} entries but {what} has {len(values)}; "
            "give one of each per rollout of the group"
        )
    flags = [bool(s) and float(s) > 0.5 for s in successes]
    numbers = [float(v) for v in values]
    for i, v in enumerate(numbers):
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"{what}[{i}] = {values[i]!r}: must be a finite number >= 0")
    return flags, numbers


def group_budget(successes: Sequence[float], values: Sequence[float], cap: float) -> float:
    """The group's budget ``p·ref + (1 − p)·cap`` for lengths or call counts.

    ``p`` is the share of successful rollouts, ``ref`` the mean value over the
    successful rollouts (the group's maximum when none succeeded). A budget of 0
    is replaced by 1 so that λ stays finite.
    """
    flags, numbers = _check_group(successes, values, "values")
    if not numbers:
        raise ValueError("a group needs at least one rollout")
    successful = [v for v, ok in zip(numbers, flags) if ok]
    p = len(successful) / len(numbers)
    reference = sum(successful) / len(successful) if successful else max(numbers)
    budget = p * reference + (1.0 - p) * float(cap)
    return budget if budget != 0 else 1.0


def _shaped_rewards(flags: list[bool], numbers: list[float], budget: float) -> list[float]:
    """The WM-R1 budget shape: short successes score up to 1, failures at most −0.1."""
    rewards = []
    for ok, value in zip(flags, numbers):
        overshoot = (value - budget) / budget  # λ
        if ok:
            rewards.append(max(-0.5 * overshoot + 0.5, 0.1))
        else:
            rewards.append(min(0.9 * overshoot - 0.1, -0.1))
    return rewards


def length_rewards(successes: Sequence[float], lengths: Sequence[float], max_steps: int) -> list[float]:
    """R_L of each rollout of one group (lengths in real environment steps)."""
    if max_steps <= 0:
        raise ValueError(f"max_steps must be positive, got {max_steps}")
    flags, numbers = _check_group(successes, lengths, "lengths")
    if not numbers:
        return []
    return _shaped_rewards(flags, numbers, group_budget(flags, numbers, max_steps))


def wm_call_rewards(successes: Sequence[float], n_calls: Sequence[float], n_max: int = 5) -> list[float]:
    """R_WM of each rollout of one group (``n_calls`` = imagined world-model turns).

    ``n_max = 0`` (no imagined calls allowed) is accepted as the authors' code accepts it: the
    budget is then ``p·N_ref`` (0 → 1)."""
    if n_max < 0:
        raise ValueError(f"n_max must be >= 0, got {n_max}")
    flags, numbers = _check_group(successes, n_calls, "n_calls")
    if not numbers:
        return []
    return _shaped_rewards(flags, numbers, group_budget(flags, numbers, n_max))


def composite_rewards(
    successes: Sequence[float],
    lengths: Sequence[float],
    n_calls: Sequence[float],
    max_steps: int = 20,
    alpha: float = 1.0,
    beta: float = 0.5,
    gamma: float = 0.1,
    n_max: int = 5,
) -> list[float]:
    """``α·R_succ + β·R_L + γ·R_WM`` for each rollout of one group (one task).

    As in the authors' code, the call term is skipped (R_WM = 0, ``n_calls`` and ``n_max`` are not
    looked at) unless ``gamma > 0``: their no-thinking ablation runs with ``n_wm_max = 0`` and
    ``gamma = 0``."""
    if len(lengths) != len(n_calls):
        raise ValueError(f"lengths has {len(lengths)} entries but n_calls has {len(n_calls)}")
    flags, _ = _check_group(successes, lengths, "lengths")
    r_length = length_rewards(successes, lengths, max_steps)
    r_calls = wm_call_rewards(successes, n_calls, n_max) if gamma > 0 else [0.0] * len(flags)
    return [
        alpha * (1.0 if ok else 0.0) + beta * r_l + gamma * r_wm
        for ok, r_l, r_wm in zip(flags, r_length, r_calls)
    ]


def group_has_signal(rewards: Sequence[float], min_std: float = 0.01) -> bool:
    """True when the group's rewards vary enough to give GRPO a gradient.

    Uses the sample standard deviation (n − 1 in the denominator), as the official
    trainer does (``torch.Tensor.std()`` in ``verl/trainer/ray_trainer.py``); a group
    of fewer than two rollouts has no signal.
    """
    values = [float(r) for r in rewards]
    if len(values) < 2:
        return False
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return math.sqrt(variance) >= min_std
