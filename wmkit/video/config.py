"""RLVR-World's video world model's config (notebook 06, ``wmkit run rlvr-video``, the benchmark's
``rlvr_video``) and its values per profile. GRPO knobs: one `wmkit.core.grpo.GRPOArgs` (``grpo``).
Plain data: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from wmkit.core.grpo import GRPOArgs
from wmkit.profiles import Profile, TinyModelConfig


@dataclass(frozen=True)
class VideoSizes:
    """Sizes of notebook 06: RLVR-World's video world model on MiniGrid frames (`wmkit.video`)."""

    train_episodes: int
    """MiniGrid DoorKey-6x6 episodes rendered for training (the data are the same for every seed)."""
    val_episodes: int
    """Held-out episodes for choosing settings (never the test episodes)."""
    test_episodes: int
    """Held-out episodes every reported number is measured on."""
    steps: int
    """Actions per episode (frames = steps + 1)."""
    model: TinyModelConfig
    """The causal LM over frame codes (built from scratch)."""
    mle_epochs: float
    """Passes of MLE (teacher forcing) over the training transitions."""
    mle_learning_rate: float
    """Peak AdamW lr of MLE (warm-up then cosine)."""
    mle_batch_size: int
    """Transitions per MLE step."""
    grpo: GRPOArgs
    """GRPO of every RL copy (every parameter of the tiny model): G frames sampled per prompt
    (``max_completion_length``: a frame's codes and its end token, checked against the data)."""
    eval_transitions: int
    """Held-out one-step transitions measured (the first ones of the test episodes)."""
    eval_samples: int
    """Samples per prompt at T=1 for the sampled one-step metrics."""
    rollout_episodes: int
    """Test episodes rolled out for the multi-step curve."""
    horizon: int
    """Frames predicted per rollout (each fed back as context)."""
    seeds: int
    """Seeds of the notebook's MLE-vs-RLVR comparison (each trains its own MLE model and RL copy)."""
    tile_size: int = 8
    """Pixels per MiniGrid cell (6x6 cells: 48x48 frames)."""
    patch: int = 8
    """Tokenizer patch side in pixels (= tile_size: one code per grid cell)."""
    codebook_size: int = 32
    """Most codes the tokenizer may use (it uses fewer when the frames hold fewer distinct patches)."""
    context_frames: int = 1
    """Frames (each with the action after it) in the prompt; MiniGrid's full view is Markov, so 1 suffices."""
    rl_unchanged_ratio: float = 0.25
    """Unchanged transitions GRPO sees per changed one (RLVR-World: all changed plus a sample)."""
    reward: str = "l1_agent_present"
    """GRPO reward on the decoded frame (`wmkit.video.model.REWARD_NAMES`): l1, l1_ssim, the kit's agent
    terms l1_agent, l1_agent_cell and l1_agent_present (the default: −(L1 + 1/36 when the true frame
    shows the agent and the prediction does not), chosen on validation; −L1 alone erases the agent), or
    l1_lpips (needs the lpips package and its weights)."""
    contrast_reward: str | None = None
    """A second reward for one more GRPO copy of the same MLE model, on the changed-transitions arm,
    shown beside the default's arms (e.g. -L1 alone, to show the reward hacking the default prevents);
    None: no contrast arm."""
    data_seed: int = 0
    """Seed of the rendered trajectories."""
    parallel_runs: int = 1
    """Seeds at a time, each in its own process with an equal share of the cores (`wmkit.core.parallel`)."""


def video_sizes(profile: Profile) -> VideoSizes:
    """Notebook 06's sizes at `profile` (the benchmark's ``rlvr_video`` and ``wmkit run rlvr-video`` too)."""
    return VIDEO[profile.name]


# ============================================================================ values (not in record keys)

MODEL = TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=64,
                        max_positions=128)

VIDEO = {
    "smoke": VideoSizes(
        train_episodes=16, val_episodes=2, test_episodes=4, steps=6, model=MODEL, mle_epochs=1.0,
        mle_learning_rate=3e-3, mle_batch_size=16,
        grpo=GRPOArgs(max_steps=2, num_generations=2, prompts_per_step=2, learning_rate=1e-4,
                      max_completion_length=37),
        eval_transitions=8, eval_samples=2, rollout_episodes=2, horizon=3, seeds=2,
        reward="l1_agent_present", contrast_reward="l1"),
    "cpu": VideoSizes(
        # MLE epochs, reward and GRPO lr chosen on validation episodes by rules fixed before (research/README.md,
        # 'Video settings', 'Video MLE epochs'); -L1 alone, which erased the agent, is trained beside the
        # chosen reward on the changed arm as the reward-hacking contrast.
        train_episodes=200, val_episodes=20, test_episodes=40, steps=12, model=MODEL, mle_epochs=12.0,
        mle_learning_rate=3e-3, mle_batch_size=16,
        grpo=GRPOArgs(max_steps=300, num_generations=8, prompts_per_step=4, learning_rate=3e-4,
                      max_completion_length=37),
        eval_transitions=200, eval_samples=2, rollout_episodes=20, horizon=8, seeds=3,
        parallel_runs=2, reward="l1_agent_present", contrast_reward="l1"),
    "gpu": VideoSizes(
        train_episodes=2000, val_episodes=100, test_episodes=200, steps=16,
        model=TinyModelConfig(hidden_size=256, num_layers=6, num_heads=8, intermediate_size=768, vocab_size=64,
                              max_positions=256),
        mle_epochs=3.0, mle_learning_rate=1e-3, mle_batch_size=32,
        grpo=GRPOArgs(max_steps=400, num_generations=8, prompts_per_step=16, learning_rate=3e-5,
                      max_completion_length=37),
        eval_transitions=1000, eval_samples=4, rollout_episodes=100,
        horizon=12, seeds=3, reward="l1_agent_present", contrast_reward="l1"),
}
"""Notebook 06's sizes per profile."""

# ============================================================================ end of values
