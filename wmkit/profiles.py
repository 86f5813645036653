"""Named run sizes: ``smoke`` (CI), ``cpu`` (a laptop, about an hour for the series), ``gpu``.

``auto`` picks ``gpu`` when CUDA is present, else ``cpu``. Every notebook reads its sizes from
here, so one word in the `parameters` cell scales the whole series.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from wmkit.core.models import TinyModelConfig

PROFILE_NAMES = ("smoke", "cpu", "gpu")


@dataclass(frozen=True)
class WorldModelProfile:
    """Sizes for notebook 01: data, the from-scratch world model, its SFT and its evaluation."""

    episodes: int
    """Episodes collected per environment (split 80/10/10 by episode)."""
    model: TinyModelConfig
    """Shape of the tiny from-scratch decoder (used when MODEL is None or 'tiny')."""
    epochs: float
    """Passes over the training transitions."""
    learning_rate: float
    """Peak AdamW learning rate (cosine decay after a short warm-up)."""
    batch_size: int
    """Transitions per optimizer step."""
    max_length: int
    """Token limit of prompt + target; longer transitions are dropped from training (counted)."""
    eval_transitions: int
    """Test transitions evaluated per environment."""
    eval_samples: int
    """Samples per prompt at T=1 for sampled pass@1."""
    max_new_tokens: int
    """Fixed generation budget for every prediction (the evaluation protocol)."""
    rollout_starts: int
    """Test episodes used for the k-step rollout curve, per environment."""
    rollout_k: int = 5
    """Longest rollout horizon k measured."""


@dataclass(frozen=True)
class Profile:
    """A named run size."""

    name: str
    """smoke, cpu or gpu."""
    description: str
    """One line for the reader."""
    world_model: WorldModelProfile
    """Notebook 01 sizes."""
    default_model: str = "tiny"
    """Model used when a notebook's MODEL parameter is None."""
    extra: dict = field(default_factory=dict)
    """Room for later notebooks' sizes."""


PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        description="proves every code path runs; numbers mean nothing",
        world_model=WorldModelProfile(
            episodes=60,
            model=TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128,
                                  vocab_size=1024),
            epochs=1.0, learning_rate=2e-3, batch_size=16, max_length=512,
            eval_transitions=24, eval_samples=2, max_new_tokens=96, rollout_starts=4,
        ),
    ),
    "cpu": Profile(
        name="cpu",
        description="a laptop's 2 cores: small real effects in minutes",
        world_model=WorldModelProfile(
            episodes=300,
            # Small and many steps beats big and few steps at this compute: what the model
            # must learn first is to look objects up in the state (an induction-like skill),
            # which comes with optimizer steps, so the batch is small.
            model=TinyModelConfig(hidden_size=96, num_layers=3, num_heads=4, intermediate_size=192,
                                  vocab_size=1024),
            epochs=3.0, learning_rate=2e-3, batch_size=4, max_length=512,
            eval_transitions=100, eval_samples=2, max_new_tokens=160, rollout_starts=24,
        ),
    ),
    "gpu": Profile(
        name="gpu",
        description="one CUDA GPU (Colab T4 .. H200): larger model, more data",
        world_model=WorldModelProfile(
            episodes=3000,
            model=TinyModelConfig(hidden_size=384, num_layers=8, num_heads=6, intermediate_size=1152,
                                  vocab_size=4096),
            epochs=4.0, learning_rate=1e-3, batch_size=32, max_length=768,
            eval_transitions=500, eval_samples=8, max_new_tokens=200, rollout_starts=100,
        ),
    ),
}


def resolve_profile_name(name: str = "auto") -> str:
    """'auto' -> 'gpu' with CUDA else 'cpu'; other names are checked and returned."""
    if not isinstance(name, str):
        raise TypeError(f"PROFILE must be a string, not {type(name).__name__}")
    name = name.strip().lower()
    if name == "auto":
        return "gpu" if torch.cuda.is_available() else "cpu"
    if name not in PROFILES:
        raise ValueError(f"Unknown profile {name!r}: choose one of auto, {', '.join(PROFILE_NAMES)}")
    return name


def get_profile(name: str = "auto", **world_model_overrides) -> Profile:
    """The profile called `name` ('auto' resolved), optionally with world-model fields overridden."""
    profile = PROFILES[resolve_profile_name(name)]
    if world_model_overrides:
        valid = set(WorldModelProfile.__dataclass_fields__)
        unknown = set(world_model_overrides) - valid
        if unknown:
            raise ValueError(f"Unknown world-model setting(s) {sorted(unknown)}; valid: {sorted(valid)}")
        profile = replace(profile, world_model=replace(profile.world_model, **world_model_overrides))
    return profile
