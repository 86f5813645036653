"""What every ground-truth environment of the kit offers.

An environment is deterministic given a seed, exposes its full state (for checking)
and an observation (what an agent or a world model sees), lists valid actions and
knows a reference solution of its task. Invalid actions never raise: they return a
clear observation and leave the state unchanged.

World models learn from *transitions*: (state text, action) -> next state text, with
the prediction target written as a *diff* in the environment's own format. Each
environment module therefore also provides

    state_text(env) -> str                       text a world model conditions on
    compute_diff(before: str, after: str) -> str canonical target text
    apply_diff(before: str, diff: str) -> str | None   None when the diff does not parse
    is_no_change(diff: str) -> bool
    action_type(action: str) -> str              e.g. "take", "tap", "open_app"
    collect_transitions(n_episodes, seed) -> list[Transition]

Model output is untrusted text: apply_diff never raises, whatever it is given.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepResult:
    """What `Environment.step` returns."""

    observation: str
    """Text the agent sees after the action (for an invalid action: why it failed)."""
    reward: float
    """Task reward of this step (the score increase for the text game, 1.0 on success for the phone)."""
    done: bool
    """True once the episode is over (goal reached, game lost, or `finished()` on the phone)."""
    info: dict[str, Any] = field(default_factory=dict)
    """At least {"valid": bool}; environments may add more."""


@dataclass(frozen=True)
class Transition:
    """One (s, a, s') sample for world-model training, with its diff target."""

    env: str
    """Environment name ("textgame", "phone", ...)."""
    episode: str
    """Episode id; splits are made by episode so no episode straddles train and test."""
    step: int
    """Index of the action within its episode (0-based)."""
    state: str
    """State text before the action (what the world model is given)."""
    action: str
    """The action, as an agent would write it."""
    action_type: str
    """Coarse kind of action, used by the most-frequent-diff baseline."""
    next_state: str
    """State text after the action."""
    diff: str
    """Canonical diff from `state` to `next_state` (the world model's target)."""
    changed: bool
    """False when the action changed nothing (invalid action, look, ...)."""
    task: str = ""
    """Instruction or task id of the episode (empty when there is none)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
