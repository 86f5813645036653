"""WMRL's configs (notebook 04, ``wmkit run wmrl``, the benchmark's ``wmrl_*`` experiments) and their
values per profile: :class:`WMRLConfig` (one GRPO run of the kit's numpy policy gradient, one arm) and
:class:`WMRLSizes` (the notebook's checks). Plain data: no numpy.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from wmkit.profiles import Profile


@dataclass
class WMRLConfig:
    """Hyperparameters of one WMRL GRPO run (one arm); seeding happens first, in
    :func:`wmkit.wmrl.method.run_grpo`. Not TRL's GRPO: the kit's numpy policy gradient, so its own knobs."""

    arm: str = "wmrl"
    """real | wm | wmrl | anchors_only (see the module docstring of wmkit.wmrl.method)."""
    steps: int = 40
    """Policy-gradient steps."""
    groups_per_step: int = 8
    """Groups (prompts) per step; each group samples ``group_size`` configs for one task."""
    group_size: int = 8
    """Rollouts per group (GRPO's G)."""
    learning_rate: float = 2.0
    """Step size γ of plain gradient ascent on the logits (advantages are standardized)."""
    anchor_fraction: float = 0.1
    """Share of groups graded for real in wmrl and anchors_only (at least one per step)."""
    debias: bool = True
    """wmrl: map world-model scores through the online isotonic map."""
    denoise: bool = True
    """wmrl: up-weight anchor-group advantages by the inverse-variance weight w."""
    debias_min_pairs: int = 200
    """Anchor pairs before the first isotonic fit (official: 200; scale with the run)."""
    debias_refit_every: int = 64
    """New anchor pairs between refits (official: 64)."""
    debias_buffer: int = 5000
    """Most recent anchor pairs kept (official: 5000)."""
    debias_bins: int = 10
    """Bins of the isotonic fit over [0, 1] (official: 10)."""
    debias_method: str = "binned"
    """"binned" (the official binned PAV) or "sklearn" (exact isotonic regression, no bins)."""
    weight_half_life: float = 64
    """Half-life of the s² EMA, in anchor groups (official: 64)."""
    weight_calibrate_after: int = 32
    """Anchor groups before the weight's constant c is fixed (official: 32)."""
    weight_max: float = 4.0
    """Upper clip of the anchor weight (official: 4)."""
    seed: int = 0
    """Seeds sampling, anchor choice and world-model noise."""


@dataclass(frozen=True)
class WMRLSizes:
    """Notebook 04 (WMRL) sizes for one profile."""

    mc_groups: int
    """Monte-Carlo groups of check 1."""
    mc_repeats: int
    """Repetitions per point of checks 2 and 3."""
    bandit: WMRLConfig
    """Loop settings of the controlled problem (check 4)."""
    bandit_seeds: int
    """Seeds of check 4 (instances and runs)."""
    anchor_sweep: tuple[float, ...]
    """Anchor fractions swept in check 4."""
    research: WMRLConfig
    """Loop settings of the research-task run (check 5)."""
    research_tasks: tuple[str, ...]
    """Datasets the research policy trains on."""
    research_seeds: int
    """Seeds of check 5 inside the notebook."""
    pool_size: int
    """Reference-pool configs per dataset."""
    cpu_limit_s: float
    """CPU-time limit of one research-task execution, in CPU seconds (not wall time: grades must not
    depend on the machine's load)."""
    learning_rates: tuple[float, ...] = (2.0,)
    """Step sizes of the research-task learning-rate sweep."""
    target_fraction: float = 0.8
    """Research run: compute-to-target uses target = J0 + target_fraction·(J* − J0)."""
    bandit_target_fraction: float = 0.9
    """The same for the controlled problem (its optimum is known exactly, so the bar is higher)."""
    fusion_repeats: int = 4000
    """Monte-Carlo repetitions per point of check 3."""


def wmrl_sizes(profile: Profile) -> WMRLSizes:
    """Notebook 04's sizes at `profile` (``wmkit run wmrl``'s too)."""
    return WMRL[profile.name]


def bench_wmrl_sizes(profile: Profile) -> WMRLSizes:
    """The sizes the benchmark's ``wmrl_*`` experiments run at: notebook 04's, smaller at smoke."""
    return BENCH_WMRL[profile.name]


# ============================================================================ values (not in record keys)

# The research run's isotonic minimum and refit interval are scaled down from the official
# 200/64 so that debiasing switches on within a run of this size (a cpu run sees 8 anchor pairs
# per step).

BANDIT = WMRLConfig(steps=150, groups_per_step=16, group_size=8, learning_rate=1.0,
                          debias_min_pairs=64, debias_refit_every=32, weight_half_life=16, weight_calibrate_after=8)
RESEARCH = WMRLConfig(steps=40, groups_per_step=8, group_size=8, learning_rate=2.0,
                            debias_min_pairs=24, debias_refit_every=16, weight_half_life=8, weight_calibrate_after=4)

WMRL = {
    "smoke": WMRLSizes(
        mc_groups=3000, mc_repeats=60, fusion_repeats=2000,
        bandit=replace(BANDIT, steps=40), bandit_seeds=1, anchor_sweep=(0.05, 0.2, 0.5),
        research=replace(RESEARCH, steps=8, groups_per_step=4, debias_min_pairs=8, debias_refit_every=8,
                         weight_calibrate_after=2, weight_half_life=4),
        research_tasks=("wine", "breast_cancer"), research_seeds=1, pool_size=16, cpu_limit_s=2.0,
        learning_rates=(1.0, 4.0),
    ),
    "cpu": WMRLSizes(
        mc_groups=20000, mc_repeats=300, fusion_repeats=10000,
        bandit=BANDIT, bandit_seeds=10, anchor_sweep=(0.05, 0.1, 0.2, 0.3, 0.5),
        research=RESEARCH, research_tasks=("digits", "breast_cancer", "wine"), research_seeds=5,
        pool_size=32, cpu_limit_s=10.0, learning_rates=(1.0, 2.0, 4.0, 8.0),
    ),
    "gpu": WMRLSizes(
        mc_groups=50000, mc_repeats=1000, fusion_repeats=40000,
        bandit=replace(BANDIT, steps=300), bandit_seeds=20, anchor_sweep=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
        research=replace(RESEARCH, steps=80), research_tasks=("digits", "breast_cancer", "wine"),
        research_seeds=10, pool_size=32, cpu_limit_s=10.0, learning_rates=(0.5, 1.0, 2.0, 4.0, 8.0),
    ),
}
"""Notebook 04's sizes per profile."""

BENCH_WMRL = {
    # smoke: the controlled problem (about 1 s) at the cpu profile's length, so WMRL can reach its
    # compute target; the research tasks are real executions: one dataset, a small pool.
    "smoke": replace(WMRL["smoke"], bandit=WMRL["cpu"].bandit, anchor_sweep=(), research_tasks=("wine",), pool_size=8),
    "cpu": WMRL["cpu"],
    "gpu": WMRL["gpu"],
}
"""The benchmark's WMRL sizes per profile."""

# ============================================================================ end of values
