"""A structured-edit target for a phone world model on a status-bar phone (``phone.with_status_bar``).

The kit's world model writes the screen diff (New / Deleted / Updated items, ``phone.compute_diff``).
On a phone with a status bar that diff asks it to rewrite values it was shown: a toggle flip
rewrites the bar's values, and opening Settings writes switch values that the bar already shows.
A cpu-sized model does not learn to copy them: trained on the diff of the settings world, it
predicts the bar after a flip no better than guessing the most frequent value (why: see
research/README.md, 'WM-R1 ladder', section 19). The edit keeps the diff's sections but lets a line
point at what it would copy:

    [1] switch "Wi-Fi" from-bar        (New items) a switch whose value is the one the status bar shows
    [4]                                (Deleted items) the element [4] of the screen shown
    [2] flipped                        (Updated items) the switch [2] of the screen shown, flipped

and it leaves out the status line whenever the switch lines determine it. The model still decides
what every action does (which screen opens, which item changes, what is deleted); only the copying
is done by :func:`decode_edit`, which turns an edit back into the standard diff, like the copy
pointer of a pointer-generator network. :func:`encode_edit` is its inverse on the simulator's
diffs: applying the decoded edit gives the simulator's next screen on every transition where it
returns an edit (it returns None elsewhere, and the caller keeps the plain diff).
"""
from __future__ import annotations

import json
import re

from wmkit.envs import phone

FLIPPED = "flipped"
FROM_BAR = "from-bar"
MARKER = "edit_format.json"
"""Written into a saved world-model folder trained on edits: its predictions must go through decode_edit."""

_BAR_ENTRY = re.compile(r'("(?:[^"\\]|\\.)*") (on|off)')
_BY_ID = re.compile(r"^\[([0-9]+)\]$")
_FLIP_BY_ID = re.compile(r"^\[([0-9]+)\] " + FLIPPED + "$")


def _bar(screen: str) -> dict[str, str]:
    """label -> 'on' / 'off' of the screen's status bar (empty without one)."""
    for line in screen.split("\n"):
        if line.startswith(phone.STATUS_PREFIX):  # may be a model's line (rollouts feed predicted screens back)
            bar = {}
            for label, value in _BAR_ENTRY.findall(line):
                try:
                    bar[json.loads(label)] = value
                except ValueError:
                    continue
            return bar
    return {}


def _bar_line(bar: dict[str, str]) -> str:
    return phone.STATUS_PREFIX + ", ".join(f"{json.dumps(k, ensure_ascii=False)} {v}" for k, v in bar.items())


def _elements_by_id(shown: dict[str, str]) -> dict[str, str]:
    """id -> element line of a screen's items (phone._screen_items)."""
    return {m[1]: line for line in shown.values() if (m := phone._ELEMENT_RE.match(line))}


def _switch(line: str):
    """(id, quoted label, label, value text) of a switch line, else None."""
    m = phone._ELEMENT_RE.match(line)
    if not m or m[2] != "switch":
        return None
    try:
        label = json.loads(m[3])
    except ValueError:
        return None
    return m[1], m[3], label, m[4].strip()


def _join(new, deleted, updated) -> str:
    out = []
    for name, lines in zip(phone.SECTION_NAMES, (new, deleted, updated)):
        out.append(name)
        out.extend(lines or ["None"])
    return "\n".join(out)


def decode_edit(before: str, edit: str) -> str:
    """The standard diff that `edit` stands for on screen `before` (an edit that does not parse
    comes back as it is, so apply_diff rejects it as it would any unparseable diff)."""
    parsed = phone._parse_diff(edit)
    if parsed is None:
        return edit
    bar, shown = _bar(before), phone._screen_items(before)
    by_id = _elements_by_id(shown)
    new, deleted, updated = ([*lines] for lines in parsed)
    deleted = [by_id.get(m[1], line) if (m := _BY_ID.match(line)) else line for line in deleted]
    for k, line in enumerate(updated):
        m = _FLIP_BY_ID.match(line)
        switch = _switch(by_id.get(m[1], "")) if m else None
        if switch is not None and switch[3] in ("on", "off"):
            updated[k] = f"[{switch[0]}] switch {switch[1]} {'off' if switch[3] == 'on' else 'on'}"
    for lines in (new, updated):
        for k, line in enumerate(lines):
            switch = _switch(line)
            if switch is None or switch[3] not in (FLIPPED, FROM_BAR):
                continue
            ident, quoted, label, ref = switch
            if ref == FROM_BAR:
                value = bar.get(label)
            else:
                current = _switch(shown.get(f"[{ident}] switch {quoted}", "")) or (None, None, None, bar.get(label))
                value = {"on": "off", "off": "on"}.get(current[3])
            if value is not None:
                lines[k] = f"[{ident}] switch {quoted} {value}"
    if bar and not any(line.startswith(phone.STATUS_PREFIX) for line in updated):
        after = dict(bar)
        for line in new + updated:
            switch = _switch(line)
            if switch is not None and switch[2] in after and switch[3] in ("on", "off"):
                after[switch[2]] = switch[3]
        if after != bar:
            updated.insert(0, _bar_line(after))
    return _join(new, deleted, updated)


def encode_edit(before: str, diff: str) -> str | None:
    """The edit for the simulator's `diff` from `before`, or None where decoding it would not give
    the same next screen (the caller keeps the plain diff there)."""
    parsed = phone._parse_diff(diff)
    if parsed is None:
        return None
    bar, shown = _bar(before), phone._screen_items(before)
    new, deleted, updated = ([*lines] for lines in parsed)
    for k, line in enumerate(new):
        switch = _switch(line)
        if switch is not None and bar.get(switch[2]) == switch[3]:
            new[k] = f"[{switch[0]}] switch {switch[1]} {FROM_BAR}"
    for k, line in enumerate(updated):
        switch = _switch(line)
        old = _switch(shown.get(f"[{switch[0]}] switch {switch[1]}", "")) if switch else None
        if switch is not None and old is not None and {old[3], switch[3]} == {"on", "off"}:
            updated[k] = f"[{switch[0]}] {FLIPPED}"
    by_id = _elements_by_id(shown)
    deleted = [f"[{m[1]}]" if (m := phone._ELEMENT_RE.match(line)) and by_id.get(m[1]) == line else line
               for line in deleted]
    target = phone.apply_diff(before, diff)
    without_bar = [line for line in updated if not line.startswith(phone.STATUS_PREFIX)]
    for candidate in (_join(new, deleted, without_bar), _join(new, deleted, updated)):
        if phone.apply_diff(before, decode_edit(before, candidate)) == target:
            return candidate
    return None
