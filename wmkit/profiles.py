"""The profiles: named run sizes ``smoke`` (CI), ``cpu`` (a laptop, about an hour for the series)
and ``gpu``, and what every part of the kit shares at a profile.

A `Profile` holds the shared parts: notebook 01's world model (``world_model``, which the later
experiments start from or judge with), the model a notebook uses when MODEL is None
(``default_model``) and the shipped ``data/`` copy (``data``). Each paper's own sizes are in its
package's ``config.py`` (``wmkit.rlvr_world.config.rlvr_sizes(profile)`` ...), one table per paper.

``auto`` picks ``cpu``, and ``gpu`` only on a GPU of a kind the ``gpu`` profile has been timed on
(:data:`GPU_PROFILE_MEASURED_ON`; none yet), with a printed line saying how to opt in. Plain data:
this module imports no torch (``auto`` asks torch for CUDA only when resolved), so ``--help``, job
listings and size look-ups stay fast; `TinyModelConfig` is defined here for that reason.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace

PROFILE_NAMES = ("smoke", "cpu", "gpu")

NOTEBOOK_TIME_TARGETS_MINUTES = {
    "smoke": {"01": 3, "02": 3, "03": 4, "04": 2, "05": 2, "06": 3},
    "cpu": {"01": 10, "02": 15, "03": 20, "04": 10, "05": 5, "06": 10},
}
"""Each notebook's time budget on 2 CPU cores (the design's targets); `make reproduce` shows it
before a first run has been timed on this machine. gpu has none: it has never been measured."""


# ============================================================================ shapes


@dataclass
class TinyModelConfig:
    """Shape of a from-scratch Llama decoder."""

    hidden_size: int = 128
    """Width of the residual stream."""
    num_layers: int = 4
    """Number of decoder blocks."""
    num_heads: int = 4
    """Attention heads (key/value heads are the same number: plain multi-head attention)."""
    intermediate_size: int = 384
    """Width of the MLP inside each block."""
    vocab_size: int = 2048
    """Target size of the byte-level BPE vocabulary trained on the kit's text."""
    max_positions: int = 1024
    """Longest sequence the rotary embedding is set up for."""


# ============================================================================ sections


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
class DataSizes:
    """The shipped data/ copy: the same transitions as the smoke profile's notebook 01 data."""

    episodes: int
    """Episodes per environment."""
    seed: int = 0
    """Seed of the collection."""


@dataclass(frozen=True)
class Profile:
    """A named run size: what every part of the kit shares at it (each paper's sizes: its ``config.py``)."""

    name: str
    """smoke, cpu or gpu."""
    description: str
    """One line for the reader."""
    world_model: WorldModelProfile
    """Notebook 01 sizes (the world model the later experiments start from or judge with)."""
    data: DataSizes
    """The shipped data/ copy."""
    default_model: str = "tiny"
    """Model used when a notebook's MODEL parameter is None: "tiny" (built from scratch) for smoke
    and cpu; "pretrained" for gpu, i.e. `wmkit.core.models.GPU_HUB_MODEL`, or the offline
    SmolLM2-135M-Instruct where the hub cannot be reached (`models.resolve_model_name`), trained with
    LoRA adapters: on 16-bit weights for notebook 01's world model, on NF4 weights with CUDA (QLoRA)
    for notebook 02's RL and notebook 03's policy."""

    def section(self, path: str):
        """A part by name, e.g. ``"world_model"`` or ``"default_model"``."""
        if not hasattr(self, path):
            raise ValueError(f"profile {self.name!r} has no part {path!r}")
        return getattr(self, path)


SECTIONS = ("world_model", "data")
"""Every Profile has each of these."""


# ============================================================================ values (not in record keys): the table

# ---------------------------------------------------------------- notebook 01: the world model

_WORLD_MODEL = {
    "smoke": WorldModelProfile(
        episodes=60,
        model=TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=1024),
        epochs=1.0, learning_rate=2e-3, batch_size=16, max_length=512,
        eval_transitions=24, eval_samples=2, max_new_tokens=96, rollout_starts=4,
    ),
    "cpu": WorldModelProfile(
        episodes=300,
        # Small and many steps beats big and few steps at this compute: what the model
        # must learn first is to look objects up in the state (an induction-like skill),
        # which comes with optimizer steps, so the batch is small.
        model=TinyModelConfig(hidden_size=96, num_layers=3, num_heads=4, intermediate_size=192, vocab_size=1024),
        epochs=3.0, learning_rate=2e-3, batch_size=4, max_length=512,
        eval_transitions=100, eval_samples=2, max_new_tokens=160, rollout_starts=24,
    ),
    "gpu": WorldModelProfile(
        episodes=3000,
        model=TinyModelConfig(hidden_size=384, num_layers=8, num_heads=6, intermediate_size=1152, vocab_size=4096),
        epochs=4.0, learning_rate=1e-3, batch_size=32, max_length=768,
        eval_transitions=500, eval_samples=8, max_new_tokens=200, rollout_starts=100,
    ),
}

# ---------------------------------------------------------------- data/

_DATA = DataSizes(episodes=60, seed=0)  # the smoke profile's notebook 01 data, whatever the profile

_DEFAULT_MODEL = {"smoke": "tiny", "cpu": "tiny", "gpu": "pretrained"}
"""The model of each profile when MODEL is None (see `Profile.default_model`)."""

_DESCRIPTIONS = {
    "smoke": "proves every code path runs; numbers mean nothing",
    "cpu": "a laptop's 2 cores: small real effects in minutes",
    "gpu": "one CUDA GPU (Colab T4 .. H200): a pretrained model with QLoRA, more data",
}

PROFILES: dict[str, Profile] = {
    name: Profile(name=name, description=_DESCRIPTIONS[name], default_model=_DEFAULT_MODEL[name],
                  world_model=_WORLD_MODEL[name], data=_DATA)
    for name in PROFILE_NAMES
}


# ============================================================================ end of values


# ============================================================================ look-ups


GPU_PROFILE_MEASURED_ON: tuple[str, ...] = ()
"""GPU names (as ``torch.cuda.get_device_name`` spells them, matched as substrings) on which the
``gpu`` profile's notebooks have been run and timed. Empty: the profile has never run on a GPU, so
``auto`` does not send anyone to it (hours of cells on a free Colab T4); ``PROFILE="gpu"`` opts in."""

_AUTO_NOTE_SHOWN: set[str] = set()


def resolve_profile_name(name: str = "auto") -> str:
    """'auto' -> 'gpu' on a GPU listed in :data:`GPU_PROFILE_MEASURED_ON`, else 'cpu' (on a GPU
    with one printed line saying how to choose 'gpu'); other names are checked and returned."""
    if not isinstance(name, str):
        raise TypeError(f"PROFILE must be a string, not {type(name).__name__}")
    name = name.strip().lower()
    if name == "auto":
        import torch  # only here: looking sizes up needs no torch

        if not torch.cuda.is_available():
            return "cpu"
        gpu = torch.cuda.get_device_name(0)
        if any(kind in gpu for kind in GPU_PROFILE_MEASURED_ON):
            return "gpu"
        if gpu not in _AUTO_NOTE_SHOWN:  # once per process: every notebook cell resolves it again
            _AUTO_NOTE_SHOWN.add(gpu)
            print(f"note: PROFILE='auto' runs the cpu profile on this {gpu}: the gpu profile has not been "
                  "timed on any GPU yet (its sizes may take hours here); PROFILE='gpu' opts into it.")
        return "cpu"
    if name not in PROFILES:
        raise ValueError(f"Unknown profile {name!r}: choose one of auto, {', '.join(PROFILE_NAMES)}")
    return name


def get_profile(name: str | Profile = "auto", **world_model_overrides) -> Profile:
    """The profile called `name` ('auto' resolved; a Profile is returned as it is), optionally
    with world-model fields overridden."""
    profile = name if isinstance(name, Profile) else PROFILES[resolve_profile_name(name)]
    if world_model_overrides:
        valid = set(WorldModelProfile.__dataclass_fields__)
        unknown = set(world_model_overrides) - valid
        if unknown:
            raise ValueError(f"Unknown world-model setting(s) {sorted(unknown)}; valid: {sorted(valid)}")
        profile = replace(profile, world_model=replace(profile.world_model, **world_model_overrides))
        check_sizes(profile.world_model, "world_model.")
    return profile


# ============================================================================ validation

def check_profile(profile: object) -> Profile:
    """`profile` itself when it is a resolved :class:`Profile`; else a TypeError in one line. The kit
    resolves a profile's name once, at the entry (command line, notebook), and passes the Profile down."""
    if not isinstance(profile, Profile):
        raise TypeError(f"profile must be a wmkit.profiles.Profile, not {type(profile).__name__} {profile!r}: "
                        f"resolve the name once, with wmkit.profiles.get_profile({profile!r})")
    return profile


SEED_MAX = 2**32 - 1
"""NumPy's seeds are 0 .. 2**32 - 1; every seed of the kit is checked against that range up front."""

POSITIVE_SIZES = frozenset({
    "episodes", "epochs", "batch_size", "max_length", "eval_transitions", "eval_samples", "max_new_tokens",
    "rollout_starts", "rollout_k", "learning_rate", "steps", "num_generations", "prompts_per_step",
    "max_completion_length", "hidden_size", "num_layers", "num_heads", "intermediate_size", "vocab_size",
    "max_positions", "groups_per_step", "group_size", "seeds", "sanity_transitions", "sanity_steps",
    "contrast_steps", "max_steps",
})
"""Size fields that must be above zero; every other number in a section must be finite and at least zero."""


def check_seed(seed, name: str = "seed") -> int:
    """`seed` if it is an int in 0 .. 2**32 - 1, else one clear TypeError / ValueError naming `name`."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"{name} must be an int, not {seed!r}")
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"{name} must be between 0 and 2**32 - 1, not {seed}")
    return seed


def check_sizes(section, prefix: str = "") -> None:
    """Check every number of a size section (recursively): finite, not negative, above zero for
    the `POSITIVE_SIZES`, seeds in range. One ValueError naming the dotted key of the first bad one."""
    for f in dataclasses.fields(section):
        value, key = getattr(section, f.name), prefix + f.name
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            check_sizes(value, key + ".")
        elif f.name.endswith("seed"):
            check_seed(value, key)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ValueError(f"{key} must be a finite number, not {value}")
            if f.name in POSITIVE_SIZES and value <= 0:
                raise ValueError(f"{key} must be above 0, not {value}")
            if value < 0:
                raise ValueError(f"{key} must not be negative, not {value}")
