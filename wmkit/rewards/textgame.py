"""RLVR-World's text-game rewards: is the predicted next state right, and how right?

The world model reads a state (objects with properties, plus a score) and an
action, and answers with a *diff*::

    ... reasoning ... The final answer is: {"modified": [...], "removed": [...], "score": {...}}

The reward applies the predicted diff to the current state and compares the result
with the real next state, object by object, on each object's properties and on its
``contains`` list (order ignored), and on the score fields:

- **binary**: 1.0 when every check passes, else 0.0.
- **task-specific**: a dense version that puts most weight on what matters, the
  properties the action *changes*::

      0.09 · item_accuracy + 0.01 · score_accuracy + 0.2 · [all correct]
           + changed_accuracy            (left out when no changed property is checked)

  so it ranges over 0..1.3 (0..0.3 without the last term). Without the last term a
  model that copies the current state would collect almost all of the reward on
  every transition: most properties never change.

Any parse failure, and a diff without ``modified`` or ``removed``, gives 0.0; no
input makes these functions raise.

Which code this follows
-----------------------
By default both rewards equal ``compute_score`` in
``lang_wm/verl/verl/utils/reward_score/text_game.py`` of the public repository
``thuml/RLVR-World`` (with ``text_game_reward_type`` "binary" or
"task_specific"). In detail:

- **Answer**: the text after the last occurrence of the first of these markers
  that occurs, tried in this order and in this exact case: "The final answer
  is:", "the final answer is:", "The final state is:", "the final state is:",
  "The final game state is:", "the final game state is:"; failing that, the last fenced block tagged ``json`` if it holds
  at least 10 characters; else the whole text. ``True``, ``False`` and ``None`` are
  then replaced by ``true``, ``false`` and ``null`` *everywhere in that text,
  string values included*, and the first JSON object in it is parsed leniently:
  single quotes and trailing commas are accepted, and output cut off by the length
  limit is closed as the official code's ``json_repair`` closes it (an open string
  or list is closed; an object cut inside its first key becomes a one-item list,
  ``{"score": {"ga`` -> ``{"score": ["ga"]}``, so that score is not recognised; a
  dangling key gets ``""``; a later unfinished member is dropped). The official
  code uses the ``json_repair`` and ``dirtyjson`` packages (versions not pinned);
  here :func:`wmkit.rewards.lenient_json.parse_json_lenient` (standard library only) does
  that job. Not reproduced: when the answer text holds *several* JSON values,
  recent ``json_repair`` versions return them as a list (reward 0) or keep the
  last of several same-shaped objects; here the first object is used.
- **Applying the diff** to the current state: an entry of ``modified`` replaces the
  current object with the same uuid; an entry whose uuid is not in the current
  state is dropped (so a created object is always "missing"); entries without a
  uuid are skipped; a uuid in ``removed`` (a list) deletes the object, and so does
  a ``removed`` equal to the uuid; when an object is both modified and removed it
  is removed. Objects the diff leaves out stay as they are. The score: a non-empty
  ``score`` replaces it (a dict without a "score" field is then not recognised as
  the score), an empty or non-sized one keeps the current score, and a diff
  **without** a ``score`` key leaves the prediction with no score at all, so every
  score field counts as wrong.
- **item_accuracy** = correct checks / all checks, over the *gold* objects: one
  check per gold property and one for ``contains`` (a missing object is a single
  failed check). The object's ``name`` is never checked. What the prediction has
  in addition is ignored: an extra property, or an object that should have been
  removed.
- **Equality** is Python's ``==``: ``1`` equals ``true``, ``0`` equals ``false``,
  ``1.0`` equals ``1``; lists compare in order, except ``contains``, which is
  compared after ``sorted`` (a list that cannot be sorted, e.g. mixing numbers
  and strings, makes the whole reward 0).
- **score_accuracy**: fraction of the gold score fields (score, gameOver,
  gameWon) the predicted score has, with an equal value.
- **changed_accuracy**: over the objects present in the current state, the gold
  state and the prediction, the properties (and ``contains``) whose value differs
  between current and gold state, or that appear or vanish: the fraction the
  prediction got right. Removed and created objects, and changed objects that the
  prediction dropped, are not counted; when nothing is counted the term is left
  out (so a transition whose only change is a removal, or a prediction that drops
  the changed object, has no changed term).

Official behaviours reproduced although they look unintended (each has a test):

- The literal replacement also rewrites string values, so a prediction writing
  the string "None" or "True" correctly is scored against "null" / "true".
- A prediction that gives an object a property that neither the current nor the
  gold state has gets binary reward as usual, but task-specific reward **0**: the
  official lookup of that property's "changed" status fails (KeyError) and the
  outer ``except`` returns 0.
- If the prediction's objects cannot be compared with the gold state for the
  changed term (e.g. a predicted object without properties), that term is left
  out rather than counted as wrong.
- Empty gold objects or an empty gold score make the reward 0 (a division by zero
  there); neither occurs in real data.

The kit's game writes objects flat (``{"name", "uuid", <properties>,
"contains"}``) under ``"objects"``, with the score under ``"score"``; states in the
official layout (``{"game_state": [{"uuid", "name", "properties", "contains"},
..., {score}]}``) are accepted too. In the flat layout every field other than
``uuid``, ``name`` and ``contains`` is a property.

The strict option
-----------------
``strict=True`` asks "is the predicted state *exactly* the next state?", which the
official reward does not: with it, every field is checked (``name`` too), each
extra property, extra score field and object that should not be there is one more
failed check, a modified object with a new uuid is added (so created objects can
be predicted, its ``contains`` counting as a changed field), values compare by
JSON type (``true`` is not ``1``; ``1.0`` still equals ``1``), and an invented
property is an item error instead of a task-specific 0. Comparing the two on the
same predictions shows how much the official binary reward forgives (undeleted
objects, invented properties, renamed objects, 1 for true), which matters when
"binary = 1" is read as "exact next state".
"""
from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wmkit.rewards import extract_completion_text
from wmkit.rewards.lenient_json import parse_json_lenient

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

# The answer markers, in the order the official code tries them (exact case).
_ANSWER_MARKERS = (
    "The final answer is:",
    "the final answer is:",
    "The final state is:",
    "the final state is:",
    "The final game state is:",
    "the final game state is:",
)
_JSON_FENCE = re.compile(r"```json\s*(.*?)\s*```", re.DOTALL)
_MIN_FENCED_ANSWER = 10  # a shorter last json block is not taken: the whole text is parsed instead
_IDENTITY_FIELDS = ("uuid", "name", "contains")  # in the flat layout, everything else is a property


# --------------------------------------------------------------------------- extraction
def extract_answer(completion: Any) -> str:
    """The text a completion's answer is parsed from (the official choice; see the module doc).

    After the answer marker this is everything that follows (the first JSON object
    in it is what gets parsed); else the last json-tagged fenced block of at least
    10 characters; else the whole text. Chat-format completions (a list of
    messages) are accepted; anything that is not text gives "".
    """
    text = extract_completion_text(completion)
    for marker in _ANSWER_MARKERS:
        if marker in text:
            return text.rsplit(marker, 1)[1].strip()
    blocks = _JSON_FENCE.findall(text)
    if blocks and len(blocks[-1]) >= _MIN_FENCED_ANSWER:
        return blocks[-1]
    return text


# Output cut off by the length limit right after an object's first key ({"ga or {"gameOver"),
# or right after a key's colon: json_repair, which the official code uses, reads the first
# as a one-item list ["ga"] and gives the second the value "" (parse_json_lenient would
# drop the member, or write null).
_CUT_IN_FIRST_KEY = re.compile(r'\{\s*"((?:[^"\\]|\\.)*)"?\s*$')
_CUT_AFTER_COLON = re.compile(r'"\s*:\s*$')


def _close_cut_tail(answer: str) -> str:
    match = _CUT_IN_FIRST_KEY.search(answer)
    if match:
        key = match.group(1)
        return answer[:match.start()] + (f'["{key}"]' if key else "{}")
    if _CUT_AFTER_COLON.search(answer):
        return answer + '""'
    return answer


def _parse_diff(answer: str) -> Any:
    # As the official code: Python literals are replaced everywhere, string values included.
    answer = answer.replace("True", "true").replace("False", "false").replace("None", "null")
    return parse_json_lenient(_close_cut_tail(answer))


# --------------------------------------------------------------------------- state layout
def _split_object(obj: Any) -> Any:
    """A flat kit object as an official one: identity fields kept, the rest under "properties"."""
    if not isinstance(obj, dict):
        return obj
    out = {key: obj[key] for key in _IDENTITY_FIELDS if key in obj}
    out["properties"] = {key: value for key, value in obj.items() if key not in _IDENTITY_FIELDS}
    return out


def _game_state(state: Any) -> tuple[list[Any], bool]:
    """(official ``game_state`` list: objects then the score, is the input flat?)."""
    if isinstance(state, dict) and isinstance(state.get("game_state"), list):
        return list(state["game_state"]), False
    if isinstance(state, dict) and isinstance(state.get("objects"), list):
        return [_split_object(obj) for obj in state["objects"]] + [state.get("score", {})], True
    raise ValueError("not a text-game state")


def _objects_and_score(game_state: list[Any]) -> tuple[dict[Any, Any], Any]:
    """Objects by uuid (entries with a "uuid") and the score entry (one with a "score")."""
    objects: dict[Any, Any] = {}
    score: Any = {}
    for entry in game_state:
        if "uuid" in entry:
            objects[entry["uuid"]] = entry
        elif "score" in entry:
            score = entry
    return objects, score


def _modified_by_uuid(entries: Any) -> dict[Any, Any]:
    """The ``modified`` entries by uuid; entries without a usable uuid are skipped, and a
    ``modified`` that is not iterable modifies nothing (official rules)."""
    by_uuid: dict[Any, Any] = {}
    try:
        entries = list(entries)
    except TypeError:
        return by_uuid
    for entry in entries:
        with contextlib.suppress(Exception):
            by_uuid[entry["uuid"]] = entry
    return by_uuid


def _is_removed(uuid: Any, removed: Any) -> bool:
    """uuid in removed, or removed is the uuid; False when the test raises (e.g. a number)."""
    try:
        return uuid in removed or uuid == removed
    except Exception:  # noqa: BLE001 -- as the official try: such a "removed" removes nothing
        return False


def _apply(current: list[Any], diff: dict[str, Any], keep_new: bool = False) -> list[Any]:
    """The predicted ``game_state``: the diff applied to the current one (official rules).

    ``keep_new`` (the strict variant) also adds modified objects whose uuid is new;
    the official code drops them.
    """
    modified = _modified_by_uuid(diff["modified"])
    predicted: list[Any] = []
    for obj in current[:-1]:
        uuid = obj["uuid"]
        if not _is_removed(uuid, diff["removed"]):
            predicted.append(modified.get(uuid, obj))
    if keep_new:
        known = {obj["uuid"] for obj in current[:-1]}
        predicted.extend(entry for uuid, entry in modified.items() if uuid not in known)
    if "score" in diff:
        try:
            predicted.append(diff["score"] if len(diff["score"]) > 0 else current[-1])
        except Exception:  # noqa: BLE001 -- a number or null: the current score is kept
            predicted.append(current[-1])
    return predicted


# --------------------------------------------------------------------------- comparison
def _python_equal(a: Any, b: Any) -> bool:
    return a == b


def _json_equal(a: Any, b: Any) -> bool:
    """Equality by JSON type: booleans are not numbers, 1 == 1.0, lists in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _same_contents(a: Any, b: Any) -> bool:
    return sorted(a) == sorted(b)  # raises on unsortable lists, as the official comparison does


def _field_changes(before: list[Any], after: list[Any], equal: Callable[[Any, Any], bool]
                   ) -> tuple[list[Any], list[Any], list[tuple[Any, str, bool]]]:
    """(removed uuids, added uuids, [(uuid, field, unchanged?)]) from one game_state to another.

    Fields are the properties of either side (one missing on a side is changed)
    and ``contains``, for each object present on both sides.
    """
    before_objects, _ = _objects_and_score(before)
    after_objects, _ = _objects_and_score(after)
    removed = [uuid for uuid in before_objects if uuid not in after_objects]
    added = [uuid for uuid in after_objects if uuid not in before_objects]
    fields: list[tuple[Any, str, bool]] = []
    for uuid, old in before_objects.items():
        if uuid not in after_objects:
            continue
        new = after_objects[uuid]
        old_props, new_props = old["properties"], new["properties"]
        for key in old_props:
            fields.append((uuid, key, key in new_props and equal(old_props[key], new_props[key])))
        fields.extend((uuid, key, False) for key in new_props if key not in old_props)
        fields.append((uuid, "contains", _same_contents(old.get("contains", []), new.get("contains", []))))
    return removed, added, fields


@dataclass(frozen=True)
class TextGameRewardParts:
    """The pieces both rewards are made of, for one prediction."""

    item_accuracy: float
    """Correct checks / all checks: per gold object one check per property and one for
    ``contains`` (a missing object is one failed check)."""
    score_accuracy: float
    """Fraction of the gold score fields (score, gameOver, gameWon) predicted right."""
    all_correct: bool
    """item_accuracy and score_accuracy both 1."""
    changed_accuracy: float | None
    """Fraction of the changed properties checked that the prediction got right; None
    when none is checked (the term is then left out)."""
    n_changed: int
    """How many changed properties were checked (the denominator of changed_accuracy)."""
    task_specific_fails: bool = False
    """The official task-specific reward fails here and pays 0 (in practice: the
    prediction gives an object a property that neither the current nor the gold state
    has, a KeyError in the official code)."""

    @property
    def binary(self) -> float:
        return 1.0 if self.all_correct else 0.0

    @property
    def task_specific(self) -> float:
        if self.task_specific_fails:
            return 0.0
        reward = 0.09 * self.item_accuracy + 0.01 * self.score_accuracy + 0.2 * float(self.all_correct)
        return reward + (self.changed_accuracy if self.changed_accuracy is not None else 0.0)


def _changed_checks(current: list[Any], predicted: list[Any], gold: list[Any],
                    equal: Callable[[Any, Any], bool]) -> tuple[list[bool], bool]:
    """([right? for each changed field checked], does the prediction invent a property?).

    The invented property is what makes the official task-specific reward fail
    (KeyError); the strict variant (``equal`` is `_json_equal`) skips it instead, as
    its item accuracy already counts it.
    """
    gold_objects, _ = _objects_and_score(gold)
    current_objects, _ = _objects_and_score(current)
    removed, added, gold_fields = _field_changes(current, gold, equal)
    # Which gold fields change: True changed, False unchanged, None for the fields of
    # removed and created objects (never checked: those objects are not compared).
    changed: dict[Any, dict[str, bool | None]] = {}
    for uuid in added:
        changed[uuid] = {"contains": True, **dict.fromkeys(gold_objects[uuid]["properties"])}
    for uuid in removed:
        changed[uuid] = {"contains": True, **dict.fromkeys(current_objects[uuid]["properties"])}
    for uuid, key, unchanged in gold_fields:
        changed.setdefault(uuid, {})[key] = not unchanged
    try:
        _, _, predicted_fields = _field_changes(gold, predicted, equal)
    except Exception:  # noqa: BLE001 -- official: the comparison fails and the term is left out
        return [], False
    record: list[bool] = []
    for uuid, key, right in predicted_fields:
        if key not in changed[uuid]:  # a property neither state has
            if equal is _json_equal:
                continue
            return [], True
        if changed[uuid][key] is True:
            record.append(right)
    return record, False


def _compare(current: list[Any], predicted: list[Any], gold: list[Any], strict: bool) -> TextGameRewardParts:
    equal = _json_equal if strict else _python_equal
    gold_objects, gold_score = _objects_and_score(gold)
    predicted_objects, predicted_score = _objects_and_score(predicted)

    correct = errors = 0
    for uuid, gold_obj in gold_objects.items():
        if uuid not in predicted_objects:
            errors += 1  # one failed check for the whole object
            continue
        pred_obj = predicted_objects[uuid]
        if "properties" not in pred_obj:
            errors += 1
        else:
            gold_props, pred_props = gold_obj["properties"], pred_obj["properties"]
            for key in gold_props:
                if key in pred_props and equal(gold_props[key], pred_props[key]):
                    correct += 1
                else:
                    errors += 1
            if strict:
                errors += sum(1 for key in pred_props if key not in gold_props)
        if "contains" not in pred_obj:
            errors += 1
        elif _same_contents(gold_obj["contains"], pred_obj["contains"]):
            correct += 1
        else:
            errors += 1
        if strict and "name" in gold_obj:
            if "name" in pred_obj and equal(gold_obj["name"], pred_obj["name"]):
                correct += 1
            else:
                errors += 1
    if strict:
        errors += sum(1 for uuid in predicted_objects if uuid not in gold_objects)

    score_right = score_wrong = 0
    for key in gold_score:
        if key in predicted_score and equal(gold_score[key], predicted_score[key]):
            score_right += 1
        else:
            score_wrong += 1
    if strict and isinstance(predicted_score, dict):
        score_wrong += sum(1 for key in predicted_score if key not in gold_score)

    # A zero denominator (no gold objects or no gold score) raises, as in the official code.
    item_accuracy = correct / (correct + errors)
    score_accuracy = score_right / (score_right + score_wrong)
    all_correct = item_accuracy == 1 and score_accuracy == 1

    try:
        record, invented = _changed_checks(current, predicted, gold, equal)
    except Exception:  # noqa: BLE001 -- official: a failure after the binary verdict pays 0
        record, invented = [], True
    changed_accuracy = sum(record) / len(record) if record else None
    return TextGameRewardParts(item_accuracy, score_accuracy, all_correct, changed_accuracy, len(record),
                               task_specific_fails=invented)


def reward_parts(completion: Any, state_text: str, gold_next_state_text: str, *,
                 strict: bool = False) -> TextGameRewardParts | None:
    """Parse a completion, apply its diff to `state_text`, and compare with the gold next state.

    None when the official reward is 0 for a format reason: no parsable JSON object,
    no ``modified`` or ``removed`` key, a prediction or state the comparison cannot
    read. ``strict`` selects the exact-state variant (module doc). Never raises.
    """
    try:
        diff = _parse_diff(extract_answer(completion))
        if not isinstance(diff, dict) or "modified" not in diff or "removed" not in diff:
            return None
        current, flat = _game_state(json.loads(state_text))
        gold, _ = _game_state(json.loads(gold_next_state_text))
        if flat and isinstance(diff["modified"], list):
            diff = dict(diff, modified=[_split_object(entry) for entry in diff["modified"]])
        return _compare(current, _apply(current, diff, keep_new=strict), gold, strict)
    except Exception:  # noqa: BLE001 -- model output is untrusted: any failure is a zero reward
        return None


# --------------------------------------------------------------------------- rewards
def textgame_binary_reward(completion: Any, state_text: str, gold_next_state_text: str, *,
                           strict: bool = False) -> float:
    """1.0 when every check of the predicted next state passes (official rules), else 0.0."""
    parts = reward_parts(completion, state_text, gold_next_state_text, strict=strict)
    return parts.binary if parts is not None else 0.0


def textgame_task_specific_reward(completion: Any, state_text: str, gold_next_state_text: str, *,
                                  strict: bool = False) -> float:
    """0.09·item_acc + 0.01·score_acc + 0.2·[all correct] + changed_acc (if any checked); 0..1.3."""
    parts = reward_parts(completion, state_text, gold_next_state_text, strict=strict)
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


def flip_untouched_property(diff: str, state: str) -> str | None:
    """A teaching example of a near-miss answer (notebook 02): the right `diff` with one boolean
    property that the action did *not* change flipped. It is looked for first in the objects the
    diff modifies (a property listed there with its current value), then in the objects of `state`
    the diff leaves alone (that object is added to ``modified`` with the property flipped), so the
    answer always states something false about the next state. None when `state` has no boolean
    property the action left alone (or a text does not parse)."""
    try:
        gold, objects = json.loads(diff), json.loads(state)["objects"]
    except (TypeError, ValueError, KeyError):
        return None
    current = {o.get("uuid"): o for o in objects if isinstance(o, dict)}
    wrong = copy.deepcopy(gold)
    modified = wrong.get("modified") if isinstance(wrong, dict) else None
    if not isinstance(modified, list):
        return None
    for obj in modified:
        before = current.get(obj.get("uuid"), {}) if isinstance(obj, dict) else {}
        key = next((k for k, v in obj.items() if isinstance(v, bool) and before.get(k) is v), None) \
            if isinstance(obj, dict) else None
        if key:
            obj[key] = not obj[key]
            return json.dumps(wrong)
    touched = {o.get("uuid") for o in modified if isinstance(o, dict)} | set(
        wrong.get("removed") or [])
    for uuid, obj in current.items():
        key = next((k for k, v in obj.items() if isinstance(v, bool)), None)
        if uuid not in touched and key:
            modified.append({**copy.deepcopy(obj), key: not obj[key]})
            return json.dumps(wrong)
    return None
