"""Verifiable rewards: RLVR-World text-game rewards (`textgame`), screen-diff F1 (`screen`), WM-R1 composite reward (`wm_r1`).

Each reward lives in its own module; this file only holds what they all share, so
importing one reward never drags in the others.
"""

from __future__ import annotations

from typing import Any

__all__ = ["extract_completion_text"]


def extract_completion_text(completion: Any) -> str:
    """The text of one completion as TRL hands it to a reward function.

    TRL passes a plain string for standard (non-chat) datasets and a list of
    messages, e.g. ``[{"role": "assistant", "content": "..."}]``, for
    conversational ones. For a message list the contents of the assistant messages
    are joined with newlines (all messages when none is marked assistant); a content
    that is a list of parts (``[{"type": "text", "text": ...}]``) contributes its
    text parts. Anything else gives ``""``: model output is untrusted, so this never
    raises.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return _content_text(completion.get("content"))
    if not isinstance(completion, (list, tuple)):
        return ""
    messages = [m for m in completion if isinstance(m, dict)]
    assistant = [m for m in messages if m.get("role") == "assistant"]
    chosen = assistant if assistant else messages
    return "\n".join(_content_text(m.get("content")) for m in chosen)


def _content_text(content: Any) -> str:
    """Text of one message content: a string, or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "".join(texts)
    return ""
