"""WM-R1's configs (notebook 03, ``wmkit run wm-r1``, ``wmkit train wm-r1``, the benchmark's ``wm_r1*``
experiments) and their values per profile.

:class:`WMR1Sizes` sizes the comparison of arms and holds the fidelity ladders (:class:`WMR1LadderSizes`)
and the learned world model (:class:`WMR1LearnedSizes`). GRPO knobs: one `wmkit.core.grpo.GRPOArgs` per
experiment (``grpo``; WM-R1 keeps raw centred rewards, ``scale_rewards="none"``). Plain data: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from wmkit.core.grpo import GRPOArgs
from wmkit.profiles import Profile, TinyModelConfig

WM_R1_ARMS = ("sft", "wm_r1", "grpo_real", "best_of_k", "wm_r1_no_imagine", "wm_r1_no_length")
"""WM-R1's comparison arms (``wmkit.wm_r1.experiment.ARMS``)."""

SETTINGS_WORLD = ("setting_on", "setting_off", "setting_flip", "setting_match")
"""The four single-setting templates: the Settings screen lists its toggles in a fixed order, so the
right tap is the same in every task world, unlike a contact or note list."""


@dataclass(frozen=True)
class WMR1LadderSizes:
    """The WM-R1 fidelity ladder (``ladder.run_fidelity_ladder``): WM-R1 trained inside a noisy
    oracle (the simulator with screens corrupted and success flipped at rate p) for several p, each
    from the same SFT start, evaluated greedy and sampled in the real simulator."""

    error_rates: tuple[float, ...]
    """The oracle error rates p of the ladder (0 = the simulator itself: the positive control)."""
    sft_epochs: float
    """SFT epochs of the ladder's start (its other SFT sizes are the section's)."""
    sft_tasks: int
    """Reference episodes of the ladder's start, the templates in turn
    (``tasks.template_balanced_tasks``)."""
    grpo: GRPOArgs
    """GRPO of each rung: G rollouts per task, ``prompts_per_step`` tasks per step, ``temperature``
    of the training rollouts (and of GRPO's log-probabilities)."""
    eval_tasks: int
    """Unseen tasks of the training templates, evaluated greedy and sampled (T=1) in the simulator."""
    fidelity_episodes: int
    """Sampled episodes of the start policy on which each world model's error is measured."""
    grpo_pool: str = "balanced"
    """GRPO's tasks: 'balanced' (``tasks.balanced_tasks``: ``WMR1Sizes.train_tasks`` rows, one
    task per prompt, so a prompt's world repeats) or 'fresh' (``tasks.fresh_tasks``: a distinct
    world for every rollout group, max_steps × prompts_per_step of them)."""
    notebook_error_rates: tuple[float, ...] = ()
    """The rungs notebook 03 trains itself for its one seed (empty: all of ``error_rates``); the
    benchmark's ``wm_r1_ladder`` runs every rung over seeds, and the notebook reads it when present."""
    notebook_eval_tasks: int = 0
    """Evaluation tasks of notebook 03's own run of this ladder (0: ``eval_tasks``); the benchmark
    always evaluates on ``eval_tasks``. Fewer tasks keep the notebook within its time budget at the
    price of a wider binomial error on the one seed it shows."""
    sft_template_weights: tuple[tuple[str, float], ...] = ()
    """(template, weight) pairs for the start's reference episodes: a template weighted w is drawn
    w times as often as an unnamed one (weight 1), at the same ``sft_tasks`` in all
    (``tasks.template_balanced_tasks``); empty: every template its equal share."""
    templates: tuple[str, ...] = ()
    """The world GRPO trains in and the evaluation measures: only these training templates (empty:
    every training template). The SFT start still learns from every training template."""
    status_bar: bool = False
    """Every task of the ladder (SFT, GRPO, evaluation) on a phone whose screens show a status bar
    of the toggles' values (``phone.with_status_bar``): values that no screen before Settings shows
    are then on every screen, so a world model that sees only the screen can predict Settings."""


@dataclass(frozen=True)
class WMR1LearnedSizes:
    """The settings world's learned world model (``wmkit.wm_r1.learned``): a from-scratch model
    trained on structured edits (``wmkit.envs.phone_edit``) of status-bar phone transitions."""

    model: TinyModelConfig
    """Shape of the world model."""
    episodes: int
    """Episodes of ``phone.collect_transitions`` (the reference plan with random detours)."""
    reference_neighbourhood: int
    """Tasks whose reference paths add every action from every state (``phone.reference_neighbourhood``)."""
    epochs: float
    """Epochs of its SFT."""
    batch_size: int
    learning_rate: float
    max_length: int = 512
    """Longest training example, in tokens."""


@dataclass(frozen=True)
class WMR1Sizes:
    """Sizes of notebook 03 (WM-R1) for one profile."""

    policy: TinyModelConfig
    """Shape of the from-scratch policy."""
    max_ref_len: int
    """Templates whose reference solution (finished() included) has at most this many actions."""
    max_steps: int
    """Real steps per episode."""
    sft_tasks: int
    """Reference trajectories for the SFT warm start."""
    sft_epochs: float
    sft_learning_rate: float
    sft_batch_size: int
    imagine_rate: float
    """Share of SFT steps preceded by an imagined call_wm turn."""
    grpo: GRPOArgs
    """GRPO of every trained arm (``max_completion_length``: the episode text budget after the prompt,
    agent and environment tokens, in training and evaluation alike)."""
    train_tasks: int
    """Distinct training tasks (prompts) GRPO draws from."""
    eval_heldout: int
    """Held-out-template tasks evaluated in the simulator (>= 300 for figures)."""
    eval_train: int
    """Unseen tasks of the training templates evaluated in the simulator."""
    baselines: tuple[str, ...]
    """Which comparison arms run (see WM_R1_ARMS)."""
    best_of_k: int = 4
    throughput_tasks: int = 32
    lora: bool = False
    """Train LoRA adapters instead of all weights (always for a pretrained MODEL)."""
    lora_r: int = 8
    """Rank of the policy's LoRA adapters (put on in the SFT warm start; GRPO trains the same ones)."""
    lora_alpha: int = 16
    """Their scale numerator (scale = alpha / r)."""
    wm_max_new_tokens: int = 160
    max_turn_tokens: int = 24
    tokenizer_split: str = "bpe"
    """How the from-scratch policy's tokenizer cuts text before BPE (``models.train_tokenizer``):
    'bpe' (a leading space glued to the word) or 'words' (a name is one and the same token in the
    instruction and on the screen)."""
    thought_index: bool = False
    """The reference thought of a tap names the element's index as well as its label
    (`find "Nora" at [3].` instead of `find "Nora".`), so the SFT start learns the tap as a copy
    from its own thought (``agent.describe_action``)."""
    screen_view: str = "env"
    """How screens are written into the policy's text (``agent.SCREEN_VIEWS``): 'env' (the phone's
    own lines, `[3] item "Nora"`), 'index_after_label' (`item "Nora" [3]`; with `thought_index`
    the thought then reads `find "Nora" [3].`) or 'index_in_label' (`item "Nora 3"`, the index
    right after the label's own last token; thought `find "Nora 3".`). Only the agent's text
    changes: the phone, the world models and the rewards keep the phone's format, and actions keep
    its indices."""
    sampled_eval: bool = True
    """Also evaluate WM-R1 and SFT with sampling at T=1."""
    diagnostic_episodes: int = 64
    """WM rollouts replayed in the simulator to measure imagined-vs-real success agreement."""
    ladder: WMR1LadderSizes | None = None
    """The fidelity ladder's sizes (None: the profile has no ladder)."""
    small_world: WMR1LadderSizes | None = None
    """The same ladder where its mechanism can act: a smaller world (``templates``: the four
    single-setting templates, whose right actions are the same in every task world) and a weaker
    start (fewer SFT epochs, so greedy success is low while some of 8 samples succeed). None: the
    profile has none."""
    learned_world: WMR1LadderSizes | None = None
    """The small world on the status-bar phone, with the simulator rung only (p = 0, the control):
    the ladder that WM-R1 inside the learned world model (``learned``) is compared with. None: the
    profile has none."""
    learned: WMR1LearnedSizes | None = None
    """The learned world model WM-R1 trains inside in ``learned_world`` (None: none)."""


def wm_r1_sizes(profile: Profile) -> WMR1Sizes:
    """Notebook 03's sizes at `profile` (the ladders' experiments run at these)."""
    return WM_R1[profile.name]


def bench_wm_r1_sizes(profile: Profile) -> WMR1Sizes:
    """The sizes the benchmark's ``wm_r1`` runs at: notebook 03's with every arm, smaller at smoke."""
    return BENCH_WM_R1[profile.name]


# ============================================================================ values (not in record keys)

# The fidelity ladder. cpu values: rollouts at T = 0.6, lr 1e-4 with 4 prompts per step, a start of
# 2400 reference episodes drawn template by template, 15 epochs (the only start tried that copies the
# instruction's name into the list step's thought), a balanced task pool. At this size GRPO on the
# simulator did not raise success on the full phone. Why: see research/README.md, 'WM-R1 ladder',
# sections 3-11.
LADDER = {
    "smoke": WMR1LadderSizes(
        error_rates=(0.0, 0.6), sft_epochs=1.0, sft_tasks=40,
        grpo=GRPOArgs(max_steps=1, num_generations=2, prompts_per_step=2, learning_rate=1e-4, temperature=0.6,
                      scale_rewards="none", max_completion_length=1400),
        eval_tasks=2, fidelity_episodes=2, notebook_error_rates=(0.0, 0.6)),
    "cpu": WMR1LadderSizes(
        error_rates=(0.0, 0.1, 0.3, 0.6), sft_epochs=15.0, sft_tasks=2400,
        grpo=GRPOArgs(max_steps=60, num_generations=8, prompts_per_step=4, learning_rate=1e-4, temperature=0.6,
                      scale_rewards="none", max_completion_length=1400),
        eval_tasks=1000, fidelity_episodes=100, notebook_error_rates=(0.0, 0.6), notebook_eval_tasks=400),
    "gpu": WMR1LadderSizes(
        error_rates=(0.0, 0.1, 0.3, 0.6), sft_epochs=3.0, sft_tasks=4000,
        grpo=GRPOArgs(max_steps=200, num_generations=8, prompts_per_step=16, learning_rate=1e-4, temperature=0.6,
                      scale_rewards="none", max_completion_length=3000),
        eval_tasks=600, fidelity_episodes=300),
}
"""The fidelity ladder per profile."""

# Where the ladder's mechanism acts at cpu size: the settings world, from a start stopped after 2 SFT
# epochs. Why: see research/README.md, 'WM-R1 ladder', sections 17-18.
SMALL_WORLD = {
    "smoke": replace(LADDER["smoke"], templates=SETTINGS_WORLD, grpo_pool="fresh"),
    "cpu": replace(LADDER["cpu"], error_rates=(0.0, 0.3, 0.6), sft_epochs=2.0, eval_tasks=400,
                   grpo_pool="fresh", templates=SETTINGS_WORLD),
    "gpu": replace(LADDER["gpu"], error_rates=(0.0, 0.3, 0.6), grpo_pool="fresh",
                   templates=SETTINGS_WORLD),  # not measured
}
"""The ladder in the settings world per profile."""

# WM-R1 inside a learned world model of the settings world: the small world on the status-bar phone
# (a 2-epoch start, GRPO as above) and, beside it, GRPO on the simulator from the same start. The
# world model is notebook 01's cpu shape trained on structured edits of 600 collection episodes plus
# the reference neighbourhood of 60 tasks, 12 epochs. Why: see research/README.md, 'WM-R1 ladder',
# sections 19-20.
LEARNED_WORLD = {
    "smoke": replace(SMALL_WORLD["smoke"], error_rates=(0.0,), status_bar=True),
    "cpu": replace(SMALL_WORLD["cpu"], error_rates=(0.0,), fidelity_episodes=200, status_bar=True),
    "gpu": replace(SMALL_WORLD["gpu"], error_rates=(0.0,), status_bar=True),  # not measured
}
"""The small world on the status-bar phone, simulator rung only, per profile."""

LEARNED = {
    "smoke": WMR1LearnedSizes(
        model=TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=1024),
        episodes=12, reference_neighbourhood=2, epochs=1.0, batch_size=8, learning_rate=2e-3),
    "cpu": WMR1LearnedSizes(
        model=TinyModelConfig(hidden_size=96, num_layers=3, num_heads=4, intermediate_size=192, vocab_size=1024),
        episodes=600, reference_neighbourhood=60, epochs=12.0, batch_size=8, learning_rate=2e-3),
    "gpu": WMR1LearnedSizes(  # not measured
        model=TinyModelConfig(hidden_size=384, num_layers=8, num_heads=6, intermediate_size=1152, vocab_size=4096),
        episodes=3000, reference_neighbourhood=60, epochs=4.0, batch_size=32, learning_rate=1e-3, max_length=768),
}
"""The settings world's learned world model per profile."""

WM_R1 = {
    "smoke": WMR1Sizes(
        policy=TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=768,
                               max_positions=2048),
        max_ref_len=4, max_steps=4, sft_tasks=40, sft_epochs=1.0, sft_learning_rate=3e-3,
        sft_batch_size=8, imagine_rate=0.3,
        grpo=GRPOArgs(max_steps=2, num_generations=2, prompts_per_step=2, learning_rate=1e-4, scale_rewards="none",
                      max_completion_length=1400),
        train_tasks=8, eval_heldout=8, eval_train=4, baselines=WM_R1_ARMS, best_of_k=2, throughput_tasks=4,
        lora=True, wm_max_new_tokens=96, sampled_eval=False, diagnostic_episodes=4,
        ladder=LADDER["smoke"], small_world=SMALL_WORLD["smoke"],
        learned_world=LEARNED_WORLD["smoke"], learned=LEARNED["smoke"],
    ),
    # 2 CPU cores, every arm. The SFT warm start is long on purpose: RL from a policy that never
    # succeeds has nothing to reinforce, and the policy succeeds only after many epochs.
    "cpu": WMR1Sizes(
        policy=TinyModelConfig(hidden_size=64, num_layers=3, num_heads=2, intermediate_size=192, vocab_size=1024,
                               max_positions=2048),
        max_ref_len=4, max_steps=6, sft_tasks=400, sft_epochs=30.0, sft_learning_rate=3e-3,
        sft_batch_size=8, imagine_rate=0.3,
        grpo=GRPOArgs(max_steps=20, num_generations=8, prompts_per_step=2, learning_rate=1e-4, scale_rewards="none",
                      max_completion_length=1400),
        train_tasks=300, eval_heldout=300, eval_train=60,
        baselines=WM_R1_ARMS, best_of_k=4, throughput_tasks=8,
        wm_max_new_tokens=160, sampled_eval=False, diagnostic_episodes=24, ladder=LADDER["cpu"],
        small_world=SMALL_WORLD["cpu"], learned_world=LEARNED_WORLD["cpu"],
        learned=LEARNED["cpu"],
    ),
    "gpu": WMR1Sizes(
        policy=TinyModelConfig(hidden_size=256, num_layers=6, num_heads=8, intermediate_size=768, vocab_size=2048,
                               max_positions=4096),
        max_ref_len=9, max_steps=12, sft_tasks=4000, sft_epochs=3.0, sft_learning_rate=1e-3,
        sft_batch_size=32, imagine_rate=0.3,
        grpo=GRPOArgs(max_steps=200, num_generations=8, prompts_per_step=16, learning_rate=1e-4,
                      scale_rewards="none", max_completion_length=3000),
        train_tasks=2000, eval_heldout=600, eval_train=300, baselines=WM_R1_ARMS, best_of_k=4,
        throughput_tasks=128, wm_max_new_tokens=200, max_turn_tokens=32,
        ladder=LADDER["gpu"], small_world=SMALL_WORLD["gpu"],
        learned_world=LEARNED_WORLD["gpu"], learned=LEARNED["gpu"],
    ),
}
"""Notebook 03's sizes per profile."""

BENCH_WM_R1 = {
    # smoke: one GRPO step of every arm on a handful of tasks
    "smoke": replace(WM_R1["smoke"], sft_tasks=12, grpo=replace(WM_R1["smoke"].grpo, max_steps=1, prompts_per_step=1,
                                                                max_completion_length=600),
                     train_tasks=4, eval_heldout=2, eval_train=2, best_of_k=2, throughput_tasks=2,
                     diagnostic_episodes=1, wm_max_new_tokens=48),
    "cpu": WM_R1["cpu"],
    "gpu": WM_R1["gpu"],
}
"""The benchmark's ``wm_r1`` sizes per profile (every arm: ``baselines`` is WM_R1_ARMS)."""

# ============================================================================ end of values
