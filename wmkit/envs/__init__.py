"""Ground-truth environments: the kit's text game and phone simulator, and TextWorldExpress.

Each environment is one registered `wmkit.envs.base.Environment`: its name, the module with its
world-model helpers (state_text, compute_diff, apply_diff, is_no_change, action_type,
collect_transitions), the system prompt of its world-model prompts, its partial-credit metric,
the task reward RLVR trains on and its reference solution. `get_environment(name)` returns it,
`get_env_module(name)` its module, and `register_environment` adds one (see
tutorials/bring_your_own_env.md).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType

from wmkit.envs import phone, twx
from wmkit.envs.base import MODULE_HELPERS, Environment, Transition

ENVIRONMENTS: dict[str, Environment] = {}
"""The registry, name -> Environment, in registration order. Add to it with `register_environment`."""


def register_environment(env: Environment, replace: bool = False) -> Environment:
    """Add `env` to the registry after checking it declares everything the kit needs: a system
    prompt, a partial-credit metric (name and function) and a module with the world-model helpers.
    A ValueError names whatever is missing. `replace=True` lets a name already registered be
    declared again (the kit's own environments cannot be replaced)."""
    if not isinstance(env, Environment):
        raise TypeError(f"register_environment takes a wmkit.envs.base.Environment, not {type(env).__name__}")
    if not isinstance(env.name, str) or not env.name.strip():
        raise ValueError(f"An environment needs a name (a non-empty string), not {env.name!r}")
    if env.name in ENVIRONMENTS and (not replace or env.name in KIT_ENVIRONMENTS):
        raise ValueError(f"Environment {env.name!r} is already registered"
                         + ("" if env.name in KIT_ENVIRONMENTS else "; pass replace=True to declare it again"))
    missing = []
    if not isinstance(env.system_prompt, str) or not env.system_prompt.strip():
        missing.append("system_prompt (the system line of its world-model prompts)")
    if not isinstance(env.metric_name, str) or not env.metric_name.strip():
        missing.append("metric_name (the name evaluation reports its partial credit under)")
    if not callable(env.metric):
        missing.append("metric (partial credit: a function (transition, prediction) -> float)")
    for optional in ("task_reward", "binary_reward", "reference_solution"):
        if getattr(env, optional) is not None and not callable(getattr(env, optional)):
            missing.append(f"{optional} as a function (or None), not {type(getattr(env, optional)).__name__}")
    try:
        module = env.helpers()
    except ImportError as error:
        missing.append(f"an importable module ({env.module!r}: {error})")
    else:
        lacking = [h for h in MODULE_HELPERS if not callable(getattr(module, h, None))]
        if lacking:
            missing.append(f"the world-model helpers {', '.join(lacking)} in module {module.__name__}")
    if missing:
        raise ValueError(f"Environment {env.name!r} cannot be registered: it lacks " + "; ".join(missing))
    ENVIRONMENTS[env.name] = env
    return env


def unregister_environment(name: str) -> None:
    """Remove an environment registered by `register_environment` (not one of the kit's own)."""
    if name in KIT_ENVIRONMENTS:
        raise ValueError(f"{name!r} is one of the kit's own environments and stays registered")
    get_environment(name)
    del ENVIRONMENTS[name]


def get_environment(name: str) -> Environment:
    """The registered environment `name`; a ValueError naming the registered ones otherwise."""
    if not isinstance(name, str) or name not in ENVIRONMENTS:
        raise ValueError(f"Unknown environment {name!r}: choose one of {', '.join(ENVIRONMENTS)} "
                         "(add one with wmkit.envs.register_environment)")
    return ENVIRONMENTS[name]


def get_env_module(name: str) -> ModuleType:
    """The module implementing environment `name`; a clear error for unknown names."""
    return get_environment(name).helpers()


class _SystemPrompts(Mapping):
    """Read-only view name -> system prompt of the registered environments."""

    def __getitem__(self, name: str) -> str:
        if name not in ENVIRONMENTS:
            raise KeyError(name)
        return ENVIRONMENTS[name].system_prompt

    def __iter__(self) -> Iterator[str]:
        return iter(list(ENVIRONMENTS))

    def __len__(self) -> int:
        return len(ENVIRONMENTS)

    def __repr__(self) -> str:
        return repr(dict(self))


SYSTEM_PROMPTS: Mapping[str, str] = _SystemPrompts()
"""name -> system prompt of every registered environment (a live, read-only view of the registry)."""


def tokenizer_prompts(envs: Iterable[str]) -> list[str]:
    """The system prompts a from-scratch tokenizer of a model for `envs` is trained on: the kit's
    own environments' (always, in the kit's order), then those of other registered environments
    among `envs`, in order of appearance. Registering an environment therefore changes no other
    environment's tokenizer: the kit's recorded figures reproduce in a fork that adds one."""
    others = [get_environment(e).system_prompt for e in dict.fromkeys(envs) if e not in KIT_ENVIRONMENTS]
    return [ENVIRONMENTS[e].system_prompt for e in KIT_ENVIRONMENTS] + others


# --------------------------------------------------------------------------- the kit's own
# Metric adapters import their reward on first use: wmkit.rewards.textgame imports
# wmkit.envs.textgame, which would be a circular import here; the screen and ROUGE-L rewards stay off
# `python -m wmkit --help`'s path, which imports this package (3 ms).

def _textgame_task_specific(t: Transition, prediction: str) -> float:
    """RLVR-World's task-specific reward (0..1.3): items, score, all-correct bonus, changed properties."""
    from wmkit.rewards.textgame import textgame_task_specific_reward

    return textgame_task_specific_reward(prediction, t.state, t.next_state)


def _textgame_binary(t: Transition, prediction: str) -> float:
    """RLVR-World's official binary check (properties, `contains`, score; not names)."""
    from wmkit.rewards.textgame import textgame_binary_reward

    return textgame_binary_reward(prediction, t.state, t.next_state)


def _textgame_reference(env) -> list[str]:
    return env.reference_solution()


def _screen_f1(t: Transition, prediction: str) -> float:
    """RLVR-World's screen-diff F1 (sections as sets of lines, micro-averaged)."""
    from wmkit.rewards.screen import screen_diff_f1

    return screen_diff_f1(prediction, t.diff)


def _phone_reference(task) -> list[str]:
    return phone.reference_solution(task)


def _rouge_l(t: Transition, prediction: str) -> float:
    """ROUGE-L F1 against the next observation (free text has no structure to score part by part;
    the diff of TextWorldExpress *is* the next observation)."""
    from wmkit.rewards.text_similarity import rouge_l_f1

    return rouge_l_f1(prediction, t.next_state)


def _twx_reference() -> list[str]:
    """The gold actions of the game last reset."""
    return twx.gold_actions()


KIT_ENVIRONMENTS = ("textgame", "phone", "twx")
"""The kit's own environments, registered on import, in this order."""

# Short on purpose: every prompt token costs a tiny model compute on every example.
register_environment(Environment(
    name="textgame", module="wmkit.envs.textgame",
    system_prompt="Predict the text game's state change as JSON.",
    metric_name="task_specific", metric=_textgame_task_specific, binary_reward=_textgame_binary,
    reference_solution=_textgame_reference))
register_environment(Environment(
    name="phone", module="wmkit.envs.phone",
    system_prompt="Predict the phone screen's change.",
    metric_name="f1", metric=_screen_f1, reference_solution=_phone_reference))
register_environment(Environment(
    name="twx", module="wmkit.envs.twx",  # TextWorldExpress (third-party, needs Java 17)
    system_prompt="Predict the text game's next observation.",
    metric_name="rouge_l", metric=_rouge_l, reference_solution=_twx_reference))
