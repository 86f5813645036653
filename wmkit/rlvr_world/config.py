"""RLVR-World's configs (notebook 02, ``wmkit train rlvr``, the benchmark's ``rlvr_*`` experiments) and
their values per profile.

:class:`RLVRSizes` sizes notebook 02's RL on notebook 01's world model (its ``twx_*`` fields size the
RWML experiment on TextWorldExpress that notebook 02 runs too); :class:`RegimeSizes` the regime study
(RLVR on text-game worlds of several sizes). Their GRPO knobs are one `wmkit.core.grpo.GRPOArgs` each
(``grpo``): change G for an experiment in its ``grpo`` line below. Plain data: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from wmkit.core.grpo import GRPOArgs
from wmkit.profiles import Profile


@dataclass(frozen=True)
class RegimeSizes:
    """Notebook 02's regime study: RLVR on text-game worlds of several sizes, each from its own MLE
    world model, to show where RL has something to sharpen (`wmkit.rlvr_world.regime.regime_experiment`)."""

    levels: tuple[str, ...]
    """Text-game difficulty levels (`wmkit.envs.textgame.DIFFICULTIES`), the working one first;
    "full" is notebook 01's world and model, the others get a text-game-only MLE model of the
    world_model section's shape and training."""
    seeds: int
    """RL seeds at the first (working) level, all from the same MLE model."""
    other_level_seeds: int
    """RL seeds at every other level (the contrast: 1 shows the point, more give it an interval)."""
    grpo: GRPOArgs
    """GRPO of every RL run (every parameter of the tiny model; lr chosen on the validation split of the
    working level; ``beta``: KL toward the MLE model, 0 being RLVR-World's setting)."""
    reward: str
    """RL reward ("exact": every field of the next state checked; RLVR-World's "binary" check leaves
    names and added objects unchecked, and RL learns to exploit that, see notebook 02)."""
    eval_changed: int
    """Changed held-out (test) transitions measured per level."""
    eval_unchanged: int
    """Unchanged held-out transitions measured per level."""
    eval_samples: int
    """Samples per prompt at T=1: sampled pass@1 and the pass@k curve, k = 1..eval_samples."""
    max_new_tokens: int
    """Generation budget at evaluation."""
    sanity_transitions: int
    """Transitions of the sanity run (RL on a handful until they are predicted exactly)."""
    sanity_steps: int
    """GRPO steps of the sanity run."""
    parallel_runs: int = 1
    """Independent runs (levels' MLE models, RL seeds and levels) at a time, each in its own process
    with an equal share of the cores (`wmkit.core.parallel`); 1: one after another, in this process."""
    contrast_steps: int | None = None
    """GRPO steps at every level but the working one (None: ``grpo.max_steps``). The working level's runs
    are also measured at this step (their checkpoint), so the regime curve compares levels at one budget."""

    def level_steps(self, working: bool) -> int:
        """GRPO steps of an RL run at the working level (`working`) or at a contrast level."""
        return self.grpo.max_steps if working or self.contrast_steps is None else self.contrast_steps


@dataclass(frozen=True)
class RLVRSizes:
    """Sizes of notebook 02 (RLVR-World, and its RWML experiment's ``twx_*``) for one profile."""

    grpo: GRPOArgs
    """GRPO of the text-game arms (RLVR-World used G = 5; lr chosen by ``wmkit run rlvr-world --sweep``
    on the validation split)."""
    eval_changed: int
    """Changed test transitions per evaluation."""
    eval_unchanged: int
    """Unchanged test transitions per evaluation."""
    eval_samples: int
    """Samples per prompt for sampled (T=1) accuracy."""
    max_new_tokens: int
    """Generation budget at evaluation."""
    rewards: tuple[str, ...]
    """Arms of the reward ablation (text game)."""
    group_sizes: tuple[int, ...]
    """Arms of the group-size ablation (same prompts per step, so larger G costs more)."""
    phone_steps: int
    """GRPO steps of the phone (screen-diff F1) arm."""
    best_of_k: int
    """Largest k of the best-of-k curve."""
    twx_episodes: int
    """TextWorldExpress episodes collected (split 80/10/10 by episode)."""
    twx_warm_fraction: float
    """Share of the TWX training data given to the warm-up predictor (RWML: ~10%)."""
    twx_warm_epochs: float
    """SFT epochs of the warm-up predictor on that share."""
    twx_steps: int
    """GRPO steps of the RWML arm."""
    twx_sft_epochs: float
    """SFT epochs of the SFT baseline on the filtered data."""
    twx_sft_learning_rate: float
    """AdamW learning rate of both TWX SFT runs (the warm-up predictor and the SFT baseline)."""
    twx_sft_batch_size: int
    """Their batch size (transitions)."""
    twx_max_chars: int
    """TWX transitions whose next observation is longer are left out (tiny models, short budgets)."""
    twx_eval: int
    """TWX test transitions evaluated."""
    easy_keep_probability: float
    """Chance an easy transition (warm predictor already right) survives the hard-sample filter."""
    forgetting_eval: int
    """Transitions per kit environment in the forgetting check."""
    regime: RegimeSizes | None = None
    """The regime study (None: not run at this profile)."""
    lr_sweep: tuple[float, ...] = (3e-5, 1e-4, 3e-4)
    """Learning rates tried by ``--sweep`` (on the validation split, never the test split)."""


def rlvr_sizes(profile: Profile) -> RLVRSizes:
    """Notebook 02's sizes at `profile` (``wmkit train rlvr``'s and ``wmkit run rlvr-world``'s too)."""
    return RLVR[profile.name]


def bench_rlvr_sizes(profile: Profile) -> RLVRSizes:
    """The sizes the benchmark's ``rlvr_*`` experiments run at: notebook 02's, smaller at smoke."""
    return BENCH_RLVR[profile.name]


# ============================================================================ values (not in record keys)

RLVR = {
    "smoke": RLVRSizes(
        grpo=GRPOArgs(max_steps=2, num_generations=2, prompts_per_step=2, learning_rate=1e-4, max_completion_length=24),
        eval_changed=4, eval_unchanged=2, eval_samples=2, max_new_tokens=32,
        rewards=("binary", "task_specific"), group_sizes=(2, 4), phone_steps=2, best_of_k=2,
        twx_episodes=24, twx_warm_fraction=0.3, twx_warm_epochs=1.0, twx_steps=2, twx_sft_epochs=1.0,
        twx_sft_learning_rate=1e-3, twx_sft_batch_size=8,
        twx_max_chars=100, twx_eval=4, easy_keep_probability=0.1, forgetting_eval=4,
        regime=RegimeSizes(levels=("tiny", "full"), seeds=2, other_level_seeds=1, reward="exact",
                           grpo=GRPOArgs(max_steps=2, num_generations=2, prompts_per_step=2, learning_rate=5e-4,
                                         beta=0.04, max_completion_length=24),
                           eval_changed=4, eval_unchanged=2, eval_samples=2, max_new_tokens=32,
                           sanity_transitions=2, sanity_steps=2)),
    "cpu": RLVRSizes(
        grpo=GRPOArgs(max_steps=30, num_generations=8, prompts_per_step=4, learning_rate=1e-4,
                      max_completion_length=128),
        eval_changed=60, eval_unchanged=30, eval_samples=2, max_new_tokens=160,
        # Sized for notebook 02's time budget; the repetition-penalty arm runs in the gpu profile.
        rewards=("binary", "task_specific", "continuous"), group_sizes=(4, 8),
        phone_steps=12, best_of_k=8,
        twx_episodes=60, twx_warm_fraction=0.1, twx_warm_epochs=4.0, twx_steps=16, twx_sft_epochs=2.0,
        twx_sft_learning_rate=1e-3, twx_sft_batch_size=8,
        twx_max_chars=160, twx_eval=30, easy_keep_probability=0.1, forgetting_eval=20,
        # Exact reward, 120 steps, lr 5e-4 with a KL term (beta 0.04): chosen on the validation split
        # by a rule fixed before the runs; without the KL term some seeds collapse. Why: see
        # research/README.md, 'RLVR recipe'.
        regime=RegimeSizes(levels=("tiny", "small", "full"), seeds=3, other_level_seeds=1, reward="exact",
                           grpo=GRPOArgs(max_steps=120, num_generations=8, prompts_per_step=4, learning_rate=5e-4,
                                         beta=0.04, max_completion_length=96),
                           eval_changed=60, eval_unchanged=10, eval_samples=16,
                           max_new_tokens=128, sanity_transitions=4, sanity_steps=30,
                           # 2 cores: two tiny-model runs side by side take about the time of one
                           parallel_runs=2,
                           # Half the working level's steps at the contrast levels, where most groups carried
                           # no signal (research/README.md, 'RLVR regime'): notebook 02 stays near its budget.
                           contrast_steps=60)),
    "gpu": RLVRSizes(
        grpo=GRPOArgs(max_steps=300, num_generations=8, prompts_per_step=16, learning_rate=1e-4,
                      max_completion_length=200),
        eval_changed=300, eval_unchanged=150, eval_samples=4, max_new_tokens=200,
        rewards=("binary", "task_specific", "continuous", "continuous_rep"), group_sizes=(2, 4, 8, 16),
        phone_steps=300, best_of_k=32,
        twx_episodes=1500, twx_warm_fraction=0.1, twx_warm_epochs=4.0, twx_steps=300, twx_sft_epochs=2.0,
        twx_sft_learning_rate=1e-3, twx_sft_batch_size=8,
        twx_max_chars=400, twx_eval=300, easy_keep_probability=0.1, forgetting_eval=200,
        regime=RegimeSizes(levels=("tiny", "small", "medium", "full"), seeds=3, other_level_seeds=3, reward="exact",
                           grpo=GRPOArgs(max_steps=300, num_generations=8, prompts_per_step=16, learning_rate=5e-4,
                                         beta=0.04, max_completion_length=200),
                           eval_changed=300, eval_unchanged=50, eval_samples=16,
                           max_new_tokens=200, sanity_transitions=8, sanity_steps=50)),
}
"""Notebook 02's sizes per profile."""

BENCH_RLVR = {
    # smoke: one step on a handful of transitions (the whole benchmark in minutes)
    "smoke": replace(
        RLVR["smoke"], grpo=replace(RLVR["smoke"].grpo, max_steps=1, max_completion_length=16), phone_steps=1,
        twx_steps=1, eval_changed=2, eval_unchanged=1, eval_samples=2, max_new_tokens=32, best_of_k=2,
        twx_episodes=24, twx_eval=2, forgetting_eval=2),
    "cpu": RLVR["cpu"],
    "gpu": RLVR["gpu"],
}
"""The benchmark's sizes per profile: notebook 02's, smaller at smoke."""

# ============================================================================ end of values
