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

What the rest of the kit needs of an environment beyond that module -- its name, the system
prompt of its world-model prompts, its partial-credit metric, the task reward RLVR trains on,
its reference solution -- is declared once in an `Environment` record and registered with
`wmkit.envs.register_environment`.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any

MODULE_HELPERS = ("state_text", "compute_diff", "apply_diff", "is_no_change", "action_type",
                  "collect_transitions")
"""Module-level functions every environment module offers (see this module's docstring)."""


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


Metric = Callable[[Transition, str], float]
"""Scores a prediction (the world model's text) of a transition's diff: metric(transition, prediction)."""


@dataclass(frozen=True)
class Environment:
    """Everything the kit needs of one environment, declared in one place.

    Register it with `wmkit.envs.register_environment`; `wmkit.envs.get_environment(name)`
    returns it. `system_prompt`, `metric_name` and `metric` are required: registering without
    them is a ValueError naming what is missing. The world-model helpers stay module-level
    functions of `module` (see this module's docstring); `collect_transitions`, `apply_diff`, ...
    below call through to them.
    """

    name: str
    """What `Transition.env` holds and what `envs=(...)` arguments name."""
    module: str | ModuleType
    """The module with the world-model helpers (or its dotted import path)."""
    system_prompt: str = ""
    """System line of the world model's prompt q(s, a): what to predict (short: every prompt
    token costs a tiny model compute on every example)."""
    metric_name: str = ""
    """Name of the partial-credit metric, as evaluation summaries report it ("f1", ...)."""
    metric: Metric | None = None
    """Partial credit of a prediction, metric(transition, prediction) -> float: what `summarize`
    reports beside exact match, where exact match gives 0."""
    task_reward: Metric | None = None
    """RLVR-World's task-specific reward, task_reward(transition, prediction); None: `metric`."""
    binary_reward: Metric | None = None
    """RLVR's binary reward when the environment has its own check; None: 1.0 iff applying the
    prediction gives exactly the next state."""
    reference_solution: Callable[..., list[str]] | None = None
    """The environment's own way to a reference action sequence, if it has one (its argument is
    the environment's: the text game's env, a phone task, ...). Declared, not called by the kit."""
    judge: Callable[[str], tuple[float, bool]] | None = None
    """Reward and done of a state text by the environment's own rules, judge(state) -> (reward,
    done): what an agent playing inside the world model is paid on the *predicted* state
    (`wmkit.core.world_model_env.WorldModelEnv`). None: the world model cannot stand in for the
    environment as an agent's environment."""

    def helpers(self) -> ModuleType:
        """The module with the world-model helpers (imported on first use)."""
        return importlib.import_module(self.module) if isinstance(self.module, str) else self.module

    def collect_transitions(self, n_episodes: int, seed: int, **kwargs: Any) -> list[Transition]:
        return self.helpers().collect_transitions(n_episodes, seed=seed, **kwargs)

    def compute_diff(self, before: str, after: str) -> str:
        return self.helpers().compute_diff(before, after)

    def apply_diff(self, before: str, diff: str) -> str | None:
        return self.helpers().apply_diff(before, diff)

    def action_type(self, action: str) -> str:
        return self.helpers().action_type(action)

    def partial_credit(self, t: Transition, prediction: str) -> float:
        return float(self.metric(t, prediction))

    def reward(self, t: Transition, prediction: str) -> float:
        """The task-specific reward RLVR trains on (`task_reward`, else `metric`)."""
        return float((self.task_reward or self.metric)(t, prediction))


def scoring_transition(env: str, state: str, next_state: str, diff: str, changed: bool | None = None) -> Transition:
    """A Transition holding what a reward sees (state, next state, diff), for a metric called
    outside a dataset of transitions (RL reward columns). `changed` None: state != next_state."""
    return Transition(env=env, episode="", step=0, state=state, action="", action_type="",
                      next_state=next_state, diff=diff,
                      changed=state != next_state if changed is None else bool(changed))
