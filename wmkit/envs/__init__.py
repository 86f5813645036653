"""Ground-truth environments: the kit's text game and phone simulator, and TextWorldExpress.

`get_env_module(name)` returns the module of an environment; each module offers the
world-model helpers described in `wmkit.envs.base` (state_text, compute_diff, apply_diff,
is_no_change, action_type, collect_transitions).
"""
from __future__ import annotations

import importlib
from types import ModuleType

ENVIRONMENTS = {
    "textgame": "wmkit.envs.textgame",
    "phone": "wmkit.envs.phone",
    "twx": "wmkit.envs.twx",  # TextWorldExpress (third-party, needs Java 17)
}


def get_env_module(name: str) -> ModuleType:
    """The module implementing environment `name`; a clear error for unknown names."""
    if not isinstance(name, str) or name not in ENVIRONMENTS:
        raise ValueError(f"Unknown environment {name!r}: choose one of {', '.join(ENVIRONMENTS)}")
    return importlib.import_module(ENVIRONMENTS[name])
