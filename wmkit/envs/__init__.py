"""Ground-truth environments: the kit's text game and phone simulator, and TextWorldExpress.

Each environment is one registered `wmkit.envs.base.Environment`: its name, the module with its
world-model helpers (compute_diff, apply_diff, action_type, collect_transitions), the system
prompt of its world-model prompts, its partial-credit metric, the task reward RLVR trains on, its
reference solution and its judge. `get_environment(name)` returns it, `get_env_module(name)` its
module, `register_environment` adds one and `import_modules` imports a module that does (``wmkit
world-model --import``, ``wmkit train --import``; see tutorials/bring_your_own_env.md).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace as replace_fields
from pathlib import Path
from types import ModuleType

from wmkit.envs import phone, twx
from wmkit.envs.base import (
    KIT_ENVIRONMENTS,
    MODULE_HELPERS,
    Environment,
    EnvironmentFunctionWarning,  # noqa: F401 (re-exported)
    Transition,
    env_key,
    failed_calls,  # noqa: F401 (re-exported)
    reset_failed_calls,  # noqa: F401 (re-exported)
)

ENVIRONMENTS: dict[str, Environment] = {}
"""The registry, name -> Environment, in registration order. Add to it with `register_environment`."""

FUNCTIONS = {  # field -> (what it is, how many positional arguments the kit passes it)
    "metric": ("a function (transition, prediction) -> float", 2),
    "task_reward": ("a function (transition, prediction) -> float", 2),
    "binary_reward": ("a function (transition, prediction) -> float", 2),
    "judge": ("a function state -> (reward, done)", 1),
    "reference_solution": ("a function", None),  # its argument is the environment's own: not checked
}
"""The callables an Environment declares, and how the kit calls them."""


def _not_callable_as(function, what: str, arguments: int | None) -> str | None:
    """Why `function` cannot be called as the kit calls it (None: it can, or Python cannot tell)."""
    if not callable(function):
        return f"{what}, not {type(function).__name__} {function!r}"[:200]
    if arguments is None:
        return None
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature: called as they are
        return None
    try:
        signature.bind(*range(arguments))
    except TypeError:
        return f"{what}; {getattr(function, '__name__', repr(function))}{signature} cannot take {arguments} argument(s)"
    return None


def registered_name(name: str) -> str | None:
    """The name environment `name` is registered under (names compare without case and surrounding
    whitespace: `wmkit.envs.base.env_key`), or None when no environment has it."""
    if not isinstance(name, str):
        return None
    if name in ENVIRONMENTS:
        return name
    key = env_key(name)
    return next((n for n in ENVIRONMENTS if env_key(n) == key), None)


def register_environment(env: Environment, replace: bool = False) -> Environment:
    """Add `env` to the registry after checking it declares everything the kit needs: a system
    prompt, a partial-credit metric (name and function), a module with the world-model helpers, and
    every function it declares callable as the kit calls it. A ValueError names whatever is missing.

    Names compare without case and surrounding whitespace ("Sokoban5" and "sokoban5 " are one
    environment); the registered name is the one given, stripped. `replace=True` lets a name you
    registered be declared again; the kit's own environments (`KIT_ENVIRONMENTS`) are never
    replaced, not even with replace=True."""
    if not isinstance(env, Environment):
        raise TypeError(f"register_environment takes a wmkit.envs.base.Environment, not {type(env).__name__}")
    if not isinstance(env.name, str) or not env.name.strip():
        raise ValueError(f"An environment needs a name (a non-empty string), not {env.name!r}")
    kit = next((k for k in KIT_ENVIRONMENTS if env_key(k) == env_key(env.name)), None)
    if kit is not None and kit in ENVIRONMENTS:
        raise ValueError(f"{env.name!r} is the name of the kit's own environment {kit!r}: the kit's environments "
                         f"({', '.join(KIT_ENVIRONMENTS)}) are registered on import and are never replaced, not "
                         "even with replace=True (which declares again an environment you registered); choose "
                         "another name for yours (names compare without case and surrounding spaces)")
    return _register(env, replace)


def _register(env: Environment, replace: bool) -> Environment:
    name = env.name.strip()
    if name != env.name:
        env = replace_fields(env, name=name)
    existing = registered_name(name)
    if existing is not None and not replace:
        same = "" if existing == name else f" as {existing!r} (names compare without case and surrounding spaces)"
        raise ValueError(f"Environment {name!r} is already registered{same}; pass replace=True to declare it again")
    missing = []
    if not isinstance(env.system_prompt, str) or not env.system_prompt.strip():
        missing.append("system_prompt (the system line of its world-model prompts)")
    if not isinstance(env.metric_name, str) or not env.metric_name.strip():
        missing.append("metric_name (the name evaluation reports its partial credit under)")
    if env.metric is None:
        missing.append("metric (partial credit: a function (transition, prediction) -> float)")
    for field, (what, arguments) in FUNCTIONS.items():
        function = getattr(env, field)
        problem = None if function is None else _not_callable_as(function, what, arguments)
        if problem:
            missing.append(f"{field} as {problem}" + ("" if field == "metric" else " (or None)"))
    try:
        module = env.helpers()
    except ImportError as error:
        missing.append(f"an importable module ({env.module!r}: {error})")
    else:
        lacking = [h for h in MODULE_HELPERS if not callable(getattr(module, h, None))]
        if lacking:
            missing.append(f"the world-model helpers {', '.join(lacking)} in module {module.__name__}")
    if missing:
        raise ValueError(f"Environment {name!r} cannot be registered: it lacks " + "; ".join(missing))
    if existing is not None and existing != name:
        del ENVIRONMENTS[existing]
    ENVIRONMENTS[name] = env
    return env


def unregister_environment(name: str) -> None:
    """Remove an environment registered by `register_environment` (not one of the kit's own)."""
    registered = get_environment(name).name
    if registered in KIT_ENVIRONMENTS:
        raise ValueError(f"{registered!r} is one of the kit's own environments and stays registered")
    del ENVIRONMENTS[registered]


def get_environment(name: str) -> Environment:
    """The registered environment `name` (case and surrounding whitespace aside); a ValueError naming
    the registered ones otherwise."""
    registered = registered_name(name)
    if registered is None:
        raise ValueError(f"Unknown environment {name!r}: choose one of {', '.join(ENVIRONMENTS)} "
                         "(add one with wmkit.envs.register_environment)")
    return ENVIRONMENTS[registered]


def get_env_module(name: str) -> ModuleType:
    """The module implementing environment `name`; a clear error for unknown names."""
    return get_environment(name).helpers()


def import_modules(modules: Sequence[str], option: str = "--import") -> list[ModuleType]:
    """Import each of `modules` for what it registers (an environment, say): a dotted module name,
    found from the current folder first, then the Python path, or the path of a ``.py`` file (its
    folder goes first on the path, so it can import its neighbours). A ValueError says what failed."""
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    imported = []
    for given in modules:
        path = Path(given).expanduser()
        try:
            if given.endswith(".py") or path.is_file():
                if not path.is_file():
                    raise ValueError(f"{option} {given}: no such file")
                folder = str(path.resolve().parent)
                if folder not in sys.path:
                    sys.path.insert(0, folder)
                spec = importlib.util.spec_from_file_location(path.stem, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[path.stem] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(path.stem, None)
                    raise
            else:
                module = importlib.import_module(given)
        except ImportError as err:
            raise ValueError(f"{option} {given}: cannot import it ({err}); run from the folder that holds "
                             f"{given.split('.')[0]}.py, give the file's path, or add its folder to "
                             "PYTHONPATH") from None
        imported.append(module)
    return imported


class _SystemPrompts(Mapping):
    """Read-only view name -> system prompt of the registered environments."""

    def __getitem__(self, name: str) -> str:
        registered = registered_name(name)
        if registered is None:
            raise KeyError(name)
        return ENVIRONMENTS[registered].system_prompt

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
    others = [ENVIRONMENTS[e].system_prompt for e in dict.fromkeys(get_environment(e).name for e in envs)
              if e not in KIT_ENVIRONMENTS]
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


# Short on purpose: every prompt token costs a tiny model compute on every example.
_register(Environment(
    name="textgame", module="wmkit.envs.textgame",
    system_prompt="Predict the text game's state change as JSON.",
    metric_name="task_specific", metric=_textgame_task_specific, binary_reward=_textgame_binary,
    reference_solution=_textgame_reference), replace=False)
_register(Environment(
    name="phone", module="wmkit.envs.phone",
    system_prompt="Predict the phone screen's change.",
    metric_name="f1", metric=_screen_f1, reference_solution=_phone_reference), replace=False)
_register(Environment(
    name="twx", module="wmkit.envs.twx",  # TextWorldExpress (third-party, needs Java 17)
    system_prompt="Predict the text game's next observation.",
    metric_name="rouge_l", metric=_rouge_l, reference_solution=_twx_reference), replace=False)
