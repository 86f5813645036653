"""What every ground-truth environment of the kit offers.

An environment is deterministic given a seed, exposes its full state (for checking)
and an observation (what an agent or a world model sees), lists valid actions and
knows a reference solution of its task. Invalid actions never raise: they return a
clear observation and leave the state unchanged.

World models learn from *transitions*: (state text, action) -> next state text, with
the prediction target written as a *diff* in the environment's own format. Each
environment module therefore also provides

    compute_diff(before: str, after: str) -> str canonical target text
    apply_diff(before: str, diff: str) -> str | None   None when the diff does not parse
    action_type(action: str) -> str              e.g. "take", "tap", "open_app"
    collect_transitions(n_episodes, seed) -> list[Transition]

and, by convention (the kit's own modules have them; the kit does not call them):

    state_text(env) -> str                       text a world model conditions on
    is_no_change(diff: str) -> bool

Model output is untrusted text: apply_diff never raises, whatever it is given. The kit's own
metrics and rewards never raise either (tested on junk); a metric, reward or judge of an
environment registered by a user that raises on model text counts as a failed prediction
(0, with one `EnvironmentFunctionWarning` per function): see `Environment.score`.

What the rest of the kit needs of an environment beyond that module -- its name, the system
prompt of its world-model prompts, its partial-credit metric, the task reward RLVR trains on,
its reference solution -- is declared once in an `Environment` record and registered with
`wmkit.envs.register_environment`.
"""
from __future__ import annotations

import dataclasses
import importlib
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any

MODULE_HELPERS = ("compute_diff", "apply_diff", "action_type", "collect_transitions")
"""Module-level functions every environment module offers (see this module's docstring)."""

KIT_ENVIRONMENTS = ("textgame", "phone", "twx")
"""The kit's own environments, registered on import (`wmkit.envs`), in this order."""


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
        """The module's transitions, checked to carry this environment's name (`checked_transitions`)."""
        return checked_transitions(self.name, self.helpers().collect_transitions(n_episodes, seed=seed, **kwargs))

    def compute_diff(self, before: str, after: str) -> str:
        return self.helpers().compute_diff(before, after)

    def apply_diff(self, before: str, diff: str) -> str | None:
        return self.helpers().apply_diff(before, diff)

    def action_type(self, action: str) -> str:
        return self.helpers().action_type(action)

    def partial_credit(self, t: Transition, prediction: str) -> float:
        """`metric` on a prediction (0 where a user's metric fails: `guarded`)."""
        return self.guarded("metric", self.metric, _number, 0.0, prediction, t, prediction)

    def reward(self, t: Transition, prediction: str) -> float:
        """The task-specific reward RLVR trains on (`task_reward`, else `metric`; 0 where it fails)."""
        if self.task_reward is None:
            return self.partial_credit(t, prediction)
        return self.guarded("task_reward", self.task_reward, _number, 0.0, prediction, t, prediction)

    def binary(self, t: Transition, prediction: str) -> float | None:
        """The environment's own binary check of a prediction (0 where it fails); None: it has none."""
        if self.binary_reward is None:
            return None
        return self.guarded("binary_reward", self.binary_reward, _number, 0.0, prediction, t, prediction)

    def judge_state(self, state: str) -> tuple[float, bool]:
        """`judge` on a (predicted) state: (reward, done); (0, not done) where a user's judge fails."""
        if self.judge is None:
            raise ValueError(f"environment {self.name!r} declares no judge")
        return self.guarded("judge", self.judge, _reward_and_done, (0.0, False), state, state)

    def guarded(self, role: str, function: Callable, convert: Callable, failed: Any, shown: Any, *args: Any) -> Any:
        """`convert(function(*args))`, or `failed` when an environment registered by a user raises there.

        Model text is untrusted: a user's metric, reward or judge that raises on it (malformed JSON
        sampled at a high temperature, say), or returns no number, must not end an evaluation or an
        RLVR run. Such a call counts as a failed prediction (`failed`: 0), the first failure of each
        function is one `EnvironmentFunctionWarning` naming the function and showing `shown` (its
        input, truncated), and `failed_calls()` counts them all. The kit's own environments are
        called as they are: their rewards never raise on any text (tests/test_fuzz_parsers.py), so
        an exception there is a bug to see."""
        if self.name in KIT_ENVIRONMENTS:
            return convert(function(*args))
        try:
            return convert(function(*args))
        except Exception as error:  # noqa: BLE001 -- a user's function on untrusted text: see above
            _report_failure(self.name, role, function, error, shown)
            return failed


def _number(value: Any) -> float:
    """`value` as a float: a number (bool, numpy and one-element torch values included), not a string."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
        raise TypeError(f"returned {value!r}, not a number")
    return float(value)


def _reward_and_done(value: Any) -> tuple[float, bool]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"returned {value!r}, not a pair (reward, done)")
    return _number(value[0]), bool(value[1])


class EnvironmentFunctionWarning(UserWarning):
    """A metric, reward or judge of an environment registered by a user raised on model text (or
    returned no number); that call counted as a failed prediction. To debug the function, make the
    warning an error: ``warnings.simplefilter("error", EnvironmentFunctionWarning)``."""


_FAILED_CALLS: Counter = Counter()
SHOWN_INPUT_CHARACTERS = 80
"""How much of a failing call's input its warning shows."""


def function_name(function: Callable) -> str:
    """`module.qualname` of a function (its repr for other callables)."""
    qualname = getattr(function, "__qualname__", None)
    if qualname is None:
        return repr(function)
    module = getattr(function, "__module__", None)
    return f"{module}.{qualname}" if module else qualname


def _report_failure(env: str, role: str, function: Callable, error: Exception, shown: Any) -> None:
    key = f"{env}: {role} {function_name(function)}"
    _FAILED_CALLS[key] += 1
    if _FAILED_CALLS[key] > 1:
        return
    text = repr(shown)
    if len(text) > SHOWN_INPUT_CHARACTERS:
        text = f"{text[:SHOWN_INPUT_CHARACTERS]}... ({len(str(shown))} characters)"
    what = "state" if role == "judge" else "prediction"
    message = (f"environment {env!r}: {role} {function_name(function)} raised {type(error).__name__}: {error} "
               f"on the {what} {text}; counted as a failed prediction "
               f"({'reward 0, not done' if role == 'judge' else 'score 0'}). Warned once per function; "
               "wmkit.envs.failed_calls() counts every failure")
    # Shown at the user's function (its file and first line), not at the kit's call of it.
    code = getattr(function, "__code__", None)
    if code is None:
        warnings.warn(message, EnvironmentFunctionWarning, stacklevel=3)
    else:
        warnings.warn_explicit(message, EnvironmentFunctionWarning, code.co_filename, code.co_firstlineno,
                               module=getattr(function, "__module__", None) or "", registry={})


def failed_calls() -> dict[str, int]:
    """How often each user function failed since the process started (or `reset_failed_calls`):
    {"<env>: <role> <function>": count}. Each failed call counted as a failed prediction."""
    return dict(_FAILED_CALLS)


def reset_failed_calls() -> None:
    """Forget the failures counted so far: the next failure of each function warns again."""
    _FAILED_CALLS.clear()


# --------------------------------------------------------------------------- names

def env_key(name: str) -> str:
    """How environment names compare: without case and surrounding whitespace, so "Sokoban5" and
    "sokoban5 " are one environment (known by the spelling it was registered with, stripped)."""
    return name.strip().casefold()


def checked_transitions(name: str, transitions: Any) -> list[Transition]:
    """`transitions` as collected for the environment registered as `name`, each checked to be a
    `Transition` whose `env` is that name (a spelling that differs only in case or surrounding
    whitespace is rewritten to it). The kit looks each transition's environment up by `env`, so
    another name would fail later, far from its cause: a ValueError here names both."""
    out = []
    for t in transitions:
        if not isinstance(t, Transition):
            raise TypeError(f"environment {name!r}: collect_transitions returned a {type(t).__name__}, not a "
                            "wmkit.envs.base.Transition")
        if t.env != name:
            if not isinstance(t.env, str) or env_key(t.env) != env_key(name):
                raise ValueError(f"environment {name!r}: its collect_transitions wrote Transition.env={t.env!r}, "
                                 f"not the name it is registered under ({name!r}). The kit finds a transition's "
                                 f"environment by Transition.env: register it as {t.env!r}, or write "
                                 f"env={name!r} in its transitions")
            t = dataclasses.replace(t, env=name)
        out.append(t)
    return out


def scoring_transition(env: str, state: str, next_state: str, diff: str, changed: bool | None = None,
                       **fields: Any) -> Transition:
    """A Transition holding what a reward sees, for a metric called outside a list of transitions
    (the columns of an RL batch). `changed` None: state != next_state. `fields`: any other
    Transition field the batch carries (action, action_type, episode, step, task); absent: empty."""
    known = {f.name for f in dataclasses.fields(Transition)}
    return Transition(**{"episode": "", "step": 0, "action": "", "action_type": "",
                         **{k: v for k, v in fields.items() if k in known and v is not None},
                         "env": env, "state": state, "next_state": next_state, "diff": diff,
                         "changed": state != next_state if changed is None else bool(changed)})
