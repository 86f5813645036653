"""Lenient JSON for model output: :func:`parse_json_lenient` parses the object a model meant, forgiving
the usual mistakes (code fences, single quotes, Python literals, unquoted keys, trailing commas,
truncated text); standard library only, and never raises on untrusted text.

Kept hand-written rather than the `json_repair` package the RLVR-World reward code calls, which is
not safe on untrusted text (why: research/README.md, 'json_repair'). Known gap where json_repair
does better: a diff missing one quote (``{"modified": [], removed": []}``) loses its later keys here.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

_FENCE_START = re.compile(r"^\s*```[A-Za-z0-9_+-]*[ \t]*\n?")
REPAIR_MAX_CHARS = 4096
"""`parse_json_lenient` repairs at most this many characters from the first ``{`` (well-formed JSON of
any length parses whole): the repair is a Python loop over characters, and model answers are far shorter
(text-game diffs run to a few hundred characters)."""
REPAIR_BUDGET_CHARS = 16384
"""Characters `parse_json_lenient` repairs in all its cut-back retries together (a retry re-reads the
text; this bounds a call to tens of milliseconds)."""


def _strip_fence_end(text: str) -> str:
    """`text` without a closing code fence (and the blanks before it). String scanning: the regex form
    ``\\n?[ \\t]*```\\s*$`` rescanned a run of blanks from each of its positions (quadratic)."""
    body = text.rstrip()
    if not body.endswith("```"):
        return text
    body = body[:-3].rstrip(" \t")
    return body.removesuffix("\n")
_VALID_ESCAPES = set('"\\/bfnrt')
_HEX = set("0123456789abcdefABCDEF")


def _read_string(text: str, start: int) -> tuple[str, int, bool]:
    """Read a quoted string starting at `start` (either quote); return it as a JSON string.

    Single-quoted strings become double-quoted (inner double quotes escaped), invalid
    escapes get their backslash escaped. Returns (json_string, next_index, closed).
    """
    quote = text[start]
    out = ['"']
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 >= n:
                break
            nxt = text[i + 1]
            if nxt == "'" and quote == "'":
                out.append("'")
            elif nxt in _VALID_ESCAPES:
                out.append("\\" + nxt)
            elif nxt == "u" and len(text[i + 2:i + 6]) == 4 and all(c in _HEX for c in text[i + 2:i + 6]):
                out.append(text[i:i + 6])
                i += 6
                continue
            else:  # an invalid escape such as \q: keep the backslash as a literal character
                out.append("\\\\" + nxt)
            i += 2
            continue
        if ch == quote:
            out.append('"')
            return "".join(out), i + 1, True
        if ch == '"':  # only reachable inside a single-quoted string
            out.append('\\"')
        else:
            out.append(ch)
        i += 1
    out.append('"')
    return "".join(out), n, False


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _json_number(token: str) -> str:
    """A JSON spelling of a number token ("+1" -> "1", ".5" -> "0.5", "007" -> "7")."""
    token = token.lstrip("+")
    if re.fullmatch(r"-?\d+", token) and len(token) <= 4000:  # int() refuses 4300+ digits
        return str(int(token))
    value = float(token)
    return repr(value) if math.isfinite(value) else "null"


def _drop_trailing_comma(out: list[str]) -> None:
    while out and out[-1].isspace():
        out.pop()
    if out and out[-1] == ",":
        out.pop()


def _repair_json(text: str) -> str:
    """One pass over JSON-ish text that fixes what small models typically get wrong.

    Handles single-quoted strings, Python True/False/None, unquoted keys and words,
    trailing commas, mismatched closing brackets, text after the value, and
    truncation (open strings and brackets are closed, a dangling key gets null).
    """
    out: list[str] = []
    stack: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            string, i, closed = _read_string(text, i)
            out.append(string)
            if not closed:
                break
            continue
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
            out.append(ch)
        elif ch in "}]":
            if not stack:
                break
            _drop_trailing_comma(out)
            out.append(stack.pop())
            if not stack:
                break  # the value is complete; ignore whatever text follows
        elif ch in "+-.0123456789" and _NUMBER.match(text, i):
            token = _NUMBER.match(text, i).group(0)
            out.append(_json_number(token))
            i += len(token)
            continue
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            literal = {"true": "true", "false": "false", "null": "null", "none": "null"}.get(word.lower())
            out.append(literal if literal else json.dumps(word))
            i = j
            continue
        else:
            out.append(ch)
        i += 1
    if stack:  # truncated: finish the value
        _drop_trailing_comma(out)
        if out and out[-1] == ":":
            out.append("null")
        out.extend(reversed(stack))
    return "".join(out)


def _loads_dict(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def parse_json_lenient(text: Any) -> dict[str, Any] | None:
    """Parse a JSON object out of model output, forgiving common mistakes; never raises.

    Strips code fences and text around the object; accepts single quotes, Python
    literals (True/False/None), unquoted keys, trailing commas, and truncated output
    (missing closing quotes and brackets; an unfinished last item is dropped).
    Returns the dict, or None when no JSON object can be recovered. Repairs read at most
    `REPAIR_MAX_CHARS` characters from the first ``{`` (`REPAIR_BUDGET_CHARS` over all retries).
    """
    try:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", errors="replace")
        if not isinstance(text, str):
            return None
        candidate = _strip_fence_end(_FENCE_START.sub("", text.strip()))
        parsed = _loads_dict(candidate)
        if parsed is not None:
            return parsed
        start = candidate.find("{")
        if start < 0:
            return None
        candidate = candidate[start:start + REPAIR_MAX_CHARS]
        # An unfinished last item ("...", "b") makes the closed text invalid: cut back
        # to the previous comma and try again, a bounded number of times.
        budget = REPAIR_BUDGET_CHARS
        for _ in range(30):
            budget -= len(candidate)
            if budget < 0:
                return None
            parsed = _loads_dict(_repair_json(candidate))
            if parsed is not None:
                return parsed
            cut = max(candidate.rfind(","), candidate.rfind("{", 1), candidate.rfind("[", 1))
            if cut <= 0:
                return None
            candidate = candidate[:cut]
        return None
    except Exception:  # noqa: BLE001 -- untrusted text: never raise
        return None


# --------------------------------------------------------------------------- data collection
