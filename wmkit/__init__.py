"""wmkit: world models and RL for LLM agents, as notebooks a student can run.

The library holds the logic; the notebooks in ``notebooks/`` tell the story.
"""
from wmkit.quiet import drop_dependency_messages as _drop_dependency_messages

__version__ = "0.1.0"

# Before anything imports bitsandbytes (transformers and peft can, at import time): the messages
# `wmkit.quiet` names are logged while it is imported. Cheap: installs logging filters, imports nothing.
_drop_dependency_messages()
