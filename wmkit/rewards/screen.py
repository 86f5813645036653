r"""RLVR-World's web-page / GUI reward: F1 between predicted and real screen diffs.

A world model of a web page or a phone screen does not write the whole next
screen; it writes what changed, in three sections, one accessibility-tree item per
line::

    New items:
    [5] button "Save"
    Deleted items:
    None
    Updated items:
    app: Clock | screen: new alarm

The reward compares the predicted diff with the real one section by section. Each
section is a *set* of stripped lines; a line counts as a match only when it is
exactly equal to a line in the same section of the gold diff. Matches, predicted
lines and gold lines are summed over the three sections (micro-averaging, so a
section with many items weighs more than one with a single item), and

    precision = matches / predicted lines,  recall = matches / gold lines,
    reward    = F1 = 2·P·R / (P + R)        (0 when P + R = 0).

F1 and not recall alone: recall would pay a model for listing every item on the
screen as "updated"; precision makes padding cost something.

Where this follows the authors' code
------------------------------------
By default this equals ``compute_score`` in
``lang_wm/verl/verl/utils/reward_score/web_agent.py`` of the public repository
``thuml/RLVR-World`` (the reward of its web-page world model):

- The text is split into lines at ``"\n"`` only, as the official parser does,
  and each line is stripped. ``str.splitlines`` would also break at ``\r``, form
  feeds, ``\x1c``-``\x1e``, ``\x85`` and U+2028/U+2029, so an item holding one
  of those would become two items (or lose a part); here, as there, it stays one
  item.
- A header is recognised when a stripped line *starts with* ``New items:``,
  ``Deleted items:`` or ``Updated items:``; anything after the colon on that line
  is ignored, and lines before the first header are ignored (so reasoning text
  before the diff costs nothing). A header seen twice switches back to its
  section.
- An unchanged section holds the literal line ``None``, and it is kept as an
  ordinary item: ``{"None"}``. Predicting "nothing new" correctly is therefore a
  match worth as much as any other line, and an unchanged transition predicted as
  unchanged scores 1.0.
- The official matching is a Hungarian assignment on exact equality (strictness
  ``p=0``); on sets that is exactly the size of the intersection, which is what is
  used here (no SciPy needed).
- Empty prediction or empty gold: precision or recall is 0, so the reward is 0.
- The official parser returns empty sections when no header is present; here
  :func:`parse_screen_diff` returns ``None`` instead, so callers can tell
  "unparseable" from "parsed, all empty". The reward is the same (0.0) either way.
  Non-string input gives 0.0 here (the official code would raise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wmkit.rewards import extract_completion_text

__all__ = [
    "SECTION_HEADERS",
    "extract_completion_text",
    "parse_screen_diff",
    "screen_diff_counts",
    "screen_diff_f1",
    "screen_f1_reward_fn",
]

SECTION_HEADERS: dict[str, str] = {
    "new": "New items:",
    "deleted": "Deleted items:",
    "updated": "Updated items:",
}
"""Section key -> the header line that opens it, in the order the diff writes them."""


def parse_screen_diff(text: Any) -> dict[str, set[str]] | None:
    """Split a screen diff into its three sections, each a set of item lines.

    Returns ``{"new": set, "deleted": set, "updated": set}`` holding the stripped,
    non-empty lines under each header (``{"None"}`` for a section that says
    ``None``), or ``None`` when the text has no section header at all or is not a
    string. Never raises.
    """
    if not isinstance(text, str):
        return None
    sections: dict[str, set[str]] = {key: set() for key in SECTION_HEADERS}
    current: str | None = None
    saw_header = False
    for raw_line in text.split("\n"):  # "\n" only, as the official parser (not splitlines)
        line = raw_line.strip()
        if not line:
            continue
        header_key = _header_key(line)
        if header_key is not None:
            current = header_key
            saw_header = True
        elif current is not None:
            sections[current].add(line)
    return sections if saw_header else None


def _header_key(line: str) -> str | None:
    for key, header in SECTION_HEADERS.items():
        if line.startswith(header):
            return key
    return None


def screen_diff_counts(prediction: Any, gold: Any) -> tuple[int, int, int]:
    """``(matches, predicted lines, gold lines)`` summed over the three sections.

    An unparseable prediction counts as zero predicted lines, an unparseable gold
    as zero gold lines.
    """
    predicted_sections = parse_screen_diff(prediction) or {}
    gold_sections = parse_screen_diff(gold) or {}
    matches = n_predicted = n_gold = 0
    for key in SECTION_HEADERS:
        predicted_items = predicted_sections.get(key, set())
        gold_items = gold_sections.get(key, set())
        matches += len(predicted_items & gold_items)
        n_predicted += len(predicted_items)
        n_gold += len(gold_items)
    return matches, n_predicted, n_gold


def screen_diff_f1(prediction: Any, gold: Any) -> float:
    """Micro-averaged F1 of exact line matches between a predicted and a gold diff.

    0.0 when either side is empty or unparseable (no precision, or no recall, can
    be computed). Never raises.
    """
    matches, n_predicted, n_gold = screen_diff_counts(prediction, gold)
    if matches == 0:  # also covers n_predicted == 0 or n_gold == 0
        return 0.0
    precision = matches / n_predicted
    recall = matches / n_gold
    return 2.0 * precision * recall / (precision + recall)


def screen_f1_reward_fn(completions: Sequence[Any], diff: Sequence[Any], **kwargs: Any) -> list[float]:
    """TRL reward function: screen-diff F1 of each completion against its gold diff.

    ``completions`` are strings or chat message lists (see
    :func:`extract_completion_text`); ``diff`` is the dataset column holding the gold
    diff of each row, which TRL passes by name. Other dataset columns arrive in
    ``kwargs`` and are ignored.
    """
    if len(completions) != len(diff):
        raise ValueError(f"screen_f1_reward_fn got {len(completions)} completions but {len(diff)} gold diffs")
    return [
        screen_diff_f1(extract_completion_text(completion), gold)
        for completion, gold in zip(completions, diff)
    ]
