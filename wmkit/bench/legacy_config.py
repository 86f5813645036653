"""A record config as records made before the papers' configs moved into their packages wrote it.

Until then every GRPO knob had its own name in each sizes section (``steps``, ``grpo_steps``,
``rl_steps``; ``group_size``; ``rl_learning_rate``; ``max_action_tokens`` ...) and the regime study read
notebook 02's whole ``rlvr`` section besides its sizes. The values are the same; only their names and
nesting moved (the records' own seeds rerun bit-identical at ``smoke``). :func:`legacy_config` writes
today's config in the old shape, so :func:`wmkit.bench.runner.config_hashes` finds those records under
today's config (and ``bench-rekey`` carries them) until the confirmatory run makes new ones.
"""
from __future__ import annotations

import dataclasses

from wmkit.entries import resolve
from wmkit.profiles import get_profile
from wmkit.runs import jsonable

OLD_KNOB_NAMES = {
    # a section, known by a field only it has: {GRPOArgs knob: its old name} of the knobs it held
    "twx_episodes": {"max_steps": "steps", "num_generations": "num_generations", "prompts_per_step": "prompts_per_step",
                     "learning_rate": "learning_rate", "max_completion_length": "max_completion_length"},
    "sanity_steps": {"max_steps": "steps", "num_generations": "num_generations", "prompts_per_step": "prompts_per_step",
                     "learning_rate": "learning_rate", "beta": "beta", "max_completion_length": "max_completion_length"},
    "games": {"max_steps": "rl_steps", "num_generations": "num_generations", "prompts_per_step": "prompts_per_step",
              "learning_rate": "learning_rate", "max_completion_length": "max_action_tokens"},
    "difficulty": {"max_steps": "steps", "num_generations": "num_generations", "prompts_per_step": "prompts_per_step",
                   "learning_rate": "learning_rate", "max_completion_length": "max_completion_length"},
    "max_ref_len": {"max_steps": "grpo_steps", "num_generations": "group_size", "prompts_per_step": "prompts_per_step",
                    "learning_rate": "learning_rate", "max_completion_length": "max_completion_tokens"},
    "error_rates": {"max_steps": "grpo_steps", "num_generations": "group_size", "prompts_per_step": "prompts_per_step",
                    "learning_rate": "learning_rate", "temperature": "temperature"},
    "train_episodes": {"max_steps": "rl_steps", "num_generations": "num_generations",
                       "prompts_per_step": "prompts_per_step", "learning_rate": "rl_learning_rate"},
    "prediction_context": {"max_steps": "steps", "num_generations": "num_generations",
                           "prompts_per_step": "prompts_per_step", "learning_rate": "learning_rate",
                           "max_completion_length": "max_completion_length", "temperature": "temperature"},
}

OLD_READS = {"rlvr_regime": {"rlvr": "wmkit.rlvr_world.config:rlvr_sizes"}}
"""Experiment -> profile parts its old records also read: part -> the function giving today's values."""


def old_shape(value):
    """`value` (a config, a record's result, any JSON value) with every sizes section it holds written
    as before: a section's ``grpo`` knobs under their old names beside its other fields. A value
    already in the old shape comes back equal; a ``grpo`` in a section no marker knows is kept."""
    if isinstance(value, list):
        return [old_shape(v) for v in value]
    if not isinstance(value, dict):
        return value
    names = next((n for marker, n in OLD_KNOB_NAMES.items() if marker in value), None)
    if names is None or not isinstance(value.get("grpo"), dict):
        return {k: old_shape(v) for k, v in value.items()}
    old = {k: old_shape(v) for k, v in value.items() if k != "grpo"}
    old.update({name: value["grpo"][knob] for knob, name in names.items()})
    return old


def legacy_config(config: dict) -> dict:
    """`config` (:func:`wmkit.bench.runner.experiment_config`) in the shape records of the old layout hold."""
    old = old_shape(config)
    extra = OLD_READS.get(config.get("experiment"), {})
    if extra:
        profile = get_profile(config["profile"])
        old["reads"] = {**old.get("reads", {}),
                        **{part: old_shape(jsonable(dataclasses.asdict(resolve(function)(profile))))
                           for part, function in extra.items()}}
    return old
