"""RLVR-World's text-game rewards: is the predicted next state right, and how right?

The world model reads a state (JSON objects with properties and a score) and an
action, and answers with a *diff*::

    ... reasoning ... The final answer is: {"modified": [...], "removed": [...], "score": {...}}

The reward applies the predicted diff to the current state and compares the result
with the real next state, object by object (every property; ``contains`` as a
multiset, its order carries no meaning) and on the three score fields:

- **binary**: 1.0 when everything matches, else 0.0.
- **task-specific**: a dense version that still puts most weight on what matters,
  the properties the action *changes*::

      0.09 · item_accuracy + 0.01 · score_accuracy + 0.2 · [all correct]
           + changed_accuracy            (left out when the action changed nothing)

  so it ranges over 0..1.3 (0..0.3 on unchanged transitions). Without the last term
  a model that copies the current state would collect almost all of the reward on
  every transition: most properties never change.

Any parse failure, and a diff without ``modified`` or ``removed``, gives 0.0; no
input makes these functions raise.

Where this follows the authors' code
------------------------------------
Read from RLVR-World's ``lang_wm/verl/verl/utils/reward_score/text_game.py``
(``compute_score``, which builds on ``scripts/evaluate.py`` of
cognitiveailab/GPT-simulator, the ByteSized32 state-prediction benchmark); a copy
of that file is in the public code index, while the stored snapshot of
``thuml/RLVR-World`` holds only the project page.

- **Answer extraction**: the text after the *last* "The final answer is:" (the
  code also accepts "the final answer is:", "The final state is:" and "The final
  game state is:"; so do we), else the last fenced json block, else the whole text.
  Here the fallback is the last ``{...}`` block, and any fence counts, tagged json
  or not.
- **Parsing**: the code replaces True/False/None everywhere (inside strings too)
  and runs ``json_repair`` + ``dirtyjson``; here `parse_json_lenient` (standard
  library) does the same job, and only outside strings.
- **item_accuracy is per field, not per object**: the code counts, over the gold
  objects, one check per property plus one for ``contains`` (a missing object is a
  single error) and divides correct checks by all checks. We do the same. The code
  ignores anything the prediction has *in addition* (an extra property, an object
  that should have been removed); here each extra property and each extra object
  is one more error, so that "binary = 1" means the predicted state *is* the next
  state. (In the code an extra property also makes the task-specific reward crash
  to 0 through a KeyError, so it was never rewarded there either.)
- **score_accuracy**: fraction of the gold score fields (score, gameOver, gameWon)
  predicted equal, as in the code.
- **changed_accuracy**: the code lists, for every object in both the current and the
  gold state, the fields whose value differs, and checks the prediction on those;
  we do the same. Three differences: an object the prediction dropped counts as
  wrong on its changed fields (the code silently skips it), and a *created* object
  counts with all its fields (the code counts only its ``contains``; the kit's game
  creates no objects, so this never arises there); and a *removed* object counts as
  one change, right when the prediction removes it too: the code prepares an entry
  for removed objects but its comparison loop never reaches them, so a transition
  whose only change is a removal (eating an apple lying in the room) got no
  changed-fields term at all, at most 0.3 for a perfect answer. Here every changed
  transition has the term and every unchanged one lacks it.
- **Applying the diff** (`wmkit.envs.textgame.apply_diff`): as the code's
  ``recover_game_state_from_partial``, except that modified objects with a new uuid
  are added (the code drops them).
- Values compare by JSON type: ``true`` is not ``1`` (in the code's Python ``==``
  it is), ``1.0`` equals ``1``.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wmkit.envs.textgame import apply_diff, parse_json_lenient
from wmkit.rewards import extract_completion_text

__all__ = [
    "TextGameRewardParts",
    "binary_reward_fn",
    "extract_answer",
    "extract_completion_text",
    "reward_parts",
    "task_specific_reward_fn",
    "textgame_binary_reward",
    "textgame_task_specific_reward",
]

MAX_TASK_SPECIFIC_REWARD = 1.3

# "The final answer is:" and the variants the authors' code accepts.
_ANSWER_MARKER = re.compile(r"the final (?:answer|state|game state) is\s*:", re.IGNORECASE)
_FENCED_BLOCK = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)


# --------------------------------------------------------------------------- extraction
def _json_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every top-level {...} block; a block cut off at the end runs to len(text).

    Quotes are tracked only inside braces, so apostrophes in prose do no harm.
    """
    spans: list[tuple[int, int]] = []
    depth, start, quote, i = 0, 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
        elif ch in "\"'" and depth > 0:
            quote = ch
        i += 1
    if depth > 0:
        spans.append((start, len(text)))
    return spans


def extract_answer(completion: Any) -> str | None:
    """The answer JSON text in a completion, or None when there is none.

    Priority (after RLVR-World): the JSON after the last "The final answer is:"
    (case-insensitive; "The final state is:" and "The final game state is:" too);
    else the last fenced code block that holds a ``{``; else the last top-level
    ``{...}`` block. A block cut off by the length limit runs to the end of the text,
    so that `parse_json_lenient` can still close it. Chat-format completions (a list
    of messages) are accepted.
    """
    try:
        text = extract_completion_text(completion)
        markers = list(_ANSWER_MARKER.finditer(text))
        if markers:
            after = text[markers[-1].end():]
            spans = _json_spans(after)
            return after[spans[0][0]:spans[0][1]] if spans else None
        blocks = [b for b in _FENCED_BLOCK.findall(text) if "{" in b]
        if text.count("```") % 2 == 1:  # an opened fence that the length limit cut off
            tail = text[text.rfind("```"):]
            if "{" in tail:
                blocks.append(tail[tail.find("{"):])
        if blocks:
            return blocks[-1].strip()
        spans = _json_spans(text)
        return text[spans[-1][0]:spans[-1][1]] if spans else None
    except Exception:  # noqa: BLE001 -- untrusted text: never raise
        return None


# --------------------------------------------------------------------------- comparison
def _same_value(a: Any, b: Any) -> bool:
    """Equality by JSON type: booleans are not numbers, 1 == 1.0, lists in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _multiset(items: list[Any]) -> Counter[str]:
    return Counter(json.dumps(i, sort_keys=True) for i in items)


def _same_field(key: str, a: Any, b: Any) -> bool:
    if key == "contains" and isinstance(a, list) and isinstance(b, list):
        # Order carries no meaning: compare as multisets of canonical JSON texts.
        return _multiset(a) == _multiset(b)
    return _same_value(a, b)


def _objects(state: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {obj["uuid"]: obj for obj in state.get("objects", []) if isinstance(obj, dict) and "uuid" in obj}


@dataclass(frozen=True)
class TextGameRewardParts:
    """The pieces both rewards are made of, for one prediction."""

    item_accuracy: float
    """Correct checks / all checks: one check per field of each gold object (a missing
    object is one error), plus one error per extra field or extra object."""
    score_accuracy: float
    """Fraction of the gold score fields (score, gameOver, gameWon) predicted right."""
    all_correct: bool
    """Every object field and every score field right, nothing extra."""
    changed_accuracy: float | None
    """Fraction of the changes the prediction got right (each changed field of an
    object, each removed object); None when the action changed nothing."""
    n_changed: int
    """How many changes the action makes (the denominator of changed_accuracy)."""

    @property
    def binary(self) -> float:
        return 1.0 if self.all_correct else 0.0

    @property
    def task_specific(self) -> float:
        reward = 0.09 * self.item_accuracy + 0.01 * self.score_accuracy + 0.2 * float(self.all_correct)
        return reward + (self.changed_accuracy if self.changed_accuracy is not None else 0.0)


def _compare(current: dict[str, Any], predicted: dict[str, Any], gold: dict[str, Any]) -> TextGameRewardParts:
    current_objects, predicted_objects, gold_objects = _objects(current), _objects(predicted), _objects(gold)

    correct = errors = 0
    for uuid, gold_obj in gold_objects.items():
        pred_obj = predicted_objects.get(uuid)
        if pred_obj is None:
            errors += 1
            continue
        for key, gold_value in gold_obj.items():
            if key == "uuid":
                continue
            if key in pred_obj and _same_field(key, gold_value, pred_obj[key]):
                correct += 1
            else:
                errors += 1
        errors += sum(1 for key in pred_obj if key not in gold_obj)  # invented properties
    errors += sum(1 for uuid in predicted_objects if uuid not in gold_objects)  # objects that should be gone
    item_accuracy = correct / (correct + errors) if correct + errors else 1.0

    gold_score = gold.get("score") if isinstance(gold.get("score"), dict) else {}
    pred_score = predicted.get("score") if isinstance(predicted.get("score"), dict) else {}
    score_right = sum(1 for k, v in gold_score.items() if k in pred_score and _same_value(v, pred_score[k]))
    score_accuracy = score_right / len(gold_score) if gold_score else 1.0

    # The fields this action changes: differing values, keys that appear or vanish, and
    # every field of a created object (uuid is identity, not a field).
    changed_right = changed_total = 0
    for uuid, gold_obj in gold_objects.items():
        cur_obj = current_objects.get(uuid, {})
        pred_obj = predicted_objects.get(uuid)
        for key in (set(gold_obj) | set(cur_obj)) - {"uuid"}:
            in_gold, in_cur = key in gold_obj, key in cur_obj
            if in_gold and in_cur and _same_field(key, gold_obj[key], cur_obj[key]):
                continue  # unchanged field
            changed_total += 1
            if pred_obj is None:
                continue  # the prediction lost the object: wrong on all its changes
            if in_gold:
                changed_right += key in pred_obj and _same_field(key, gold_obj[key], pred_obj[key])
            else:
                changed_right += key not in pred_obj  # the property was removed
    for uuid in current_objects:
        if uuid not in gold_objects:  # a removed object is one change: right when removed too
            changed_total += 1
            changed_right += uuid not in predicted_objects
    changed_accuracy = changed_right / changed_total if changed_total else None

    all_correct = errors == 0 and score_right == len(gold_score)
    return TextGameRewardParts(item_accuracy, score_accuracy, all_correct, changed_accuracy, changed_total)


def reward_parts(completion: Any, state_text: str, gold_next_state_text: str) -> TextGameRewardParts | None:
    """Parse a completion, apply its diff to `state_text`, and compare with the gold next state.

    None when the completion has no usable diff (no JSON, no ``modified`` or
    ``removed`` key, a diff `apply_diff` rejects) or a state text does not parse.
    Never raises.
    """
    try:
        answer = extract_answer(completion)
        diff = parse_json_lenient(answer) if answer is not None else None
        if diff is None or "modified" not in diff or "removed" not in diff:
            return None
        predicted_text = apply_diff(state_text, json.dumps(diff))
        if predicted_text is None:
            return None
        current, gold = json.loads(state_text), json.loads(gold_next_state_text)
        if not isinstance(current, dict) or not isinstance(gold, dict):
            return None
        return _compare(current, json.loads(predicted_text), gold)
    except Exception:  # noqa: BLE001 -- model output is untrusted: any failure is a zero reward
        return None


# --------------------------------------------------------------------------- rewards
def textgame_binary_reward(completion: Any, state_text: str, gold_next_state_text: str) -> float:
    """1.0 when the predicted diff turns `state_text` into exactly the gold next state, else 0.0."""
    parts = reward_parts(completion, state_text, gold_next_state_text)
    return parts.binary if parts is not None else 0.0


def textgame_task_specific_reward(completion: Any, state_text: str, gold_next_state_text: str) -> float:
    """0.09·item_acc + 0.01·score_acc + 0.2·[all correct] + changed_acc (if any change); 0..1.3."""
    parts = reward_parts(completion, state_text, gold_next_state_text)
    return parts.task_specific if parts is not None else 0.0


def _broadcast(name: str, values: Any, n: int) -> list[Any]:
    if isinstance(values, str) or values is None:
        return [values] * n
    values = list(values)
    if len(values) != n:
        raise ValueError(f"{n} completions but {len(values)} values of {name!r}")
    return values


def binary_reward_fn(completions: Sequence[Any], state: Sequence[str], next_state: Sequence[str],
                     **kwargs: Any) -> list[float]:
    """TRL reward function: the binary reward of each completion.

    TRL passes the dataset columns as keyword lists, so the dataset needs ``state``
    and ``next_state`` columns; other keywords (prompts, completion_ids, ...) are
    ignored. Completions may be strings or chat message lists.
    """
    states, next_states = _broadcast("state", state, len(completions)), _broadcast("next_state", next_state, len(completions))
    return [textgame_binary_reward(c, s, g) for c, s, g in zip(completions, states, next_states)]


def task_specific_reward_fn(completions: Sequence[Any], state: Sequence[str], next_state: Sequence[str],
                            **kwargs: Any) -> list[float]:
    """TRL reward function: the task-specific reward (0..1.3) of each completion."""
    states, next_states = _broadcast("state", state, len(completions)), _broadcast("next_state", next_state, len(completions))
    return [textgame_task_specific_reward(c, s, g) for c, s, g in zip(completions, states, next_states)]
