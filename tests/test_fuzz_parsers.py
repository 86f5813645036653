"""Fuzz every parser and reward that reads model output: no exception on any input, and linear time.

Model output is untrusted input. Two properties, for each function in TARGETS:

* no input raises (hypothesis, derandomized so CI is reproducible): lone surrogates, NUL bytes,
  huge digit strings, deep nesting, unbalanced quotes and brackets, fragments of each format;
* each of a set of adversarial 64 KB inputs finishes in under BUDGET_S (best of 3 runs, for a
  loaded machine): the inputs that made backtracking regexes, int() and ROUGE-L's LCS blow up.

Nothing here executes what a model writes; the parsers only read it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wmkit.envs import phone, research, textgame, twx
from wmkit.rewards import extract_completion_text, screen, text_similarity
from wmkit.rewards import textgame as textgame_rewards
from wmkit.rewards.embedding import Embedder, EmbeddingReward
from wmkit.rlvr_world import method as rlvr
from wmkit.rwml.policy import normalize_action
from wmkit.wm_r1 import agent

BUDGET_S = 0.050
DATA = Path(__file__).resolve().parents[1] / "data"


def _first(name: str) -> dict:
    with open(DATA / name) as f:
        return json.loads(f.readline())


PHONE = _first("phone_train.jsonl")
TEXTGAME = _first("textgame_train.jsonl")
TASK = phone.make_task(phone.TASK_TEMPLATES[0], 0)


def _tokenizer_like(texts: list[str]) -> np.ndarray:
    """A stand-in embedder that, like a real tokenizer, refuses text that is not valid UTF-8."""
    out = []
    for text in texts:
        data = text.encode("utf-8")  # raises on a lone surrogate, as the tokenizer did
        out.append([len(data) % 7 + 1.0, sum(data[:64]) % 11 + 1.0, 1.0])
    return np.asarray(out, dtype=np.float32)


_EMBEDDING = EmbeddingReward(Embedder(encode_fn=_tokenizer_like, cache_size=64), tau=0.5)
_REPETITION = text_similarity.with_repetition_penalty(text_similarity.rouge_reward_fn)


def _world_model_predict(text: str):
    source = agent.WorldModelSource(lambda pairs: [text] * len(pairs), judge=lambda task, s: False)
    return source.predict([(PHONE["state"], "tap(1)")])


def _judge(text: str):
    return phone.judge_screen(TASK, text)


TARGETS = {
    # environments: actions and predicted diffs
    "phone.parse_action": phone.parse_action,
    "phone.action_type": phone.action_type,
    "phone.apply_diff": lambda t: phone.apply_diff(PHONE["state"], t),
    "phone.is_no_change": phone.is_no_change,
    "phone.compute_diff": lambda t: phone.compute_diff(PHONE["state"], t),
    "phone.judge_screen": _judge,
    "textgame.parse_action": textgame.parse_action,
    "textgame.action_type": textgame.action_type,
    "textgame.parse_json_lenient": textgame.parse_json_lenient,
    "textgame.apply_diff": lambda t: textgame.apply_diff(TEXTGAME["state"], t),
    "textgame.is_no_change": textgame.is_no_change,
    "twx.apply_diff": lambda t: twx.apply_diff("You are in the kitchen.", t),
    "twx.action_type": twx.action_type,
    "research.parse_experiment": research.parse_experiment,
    # agents
    "wm_r1.parse_turn": agent.parse_turn,
    "wm_r1.WorldModelSource.predict": _world_model_predict,
    "rwml.normalize_action": normalize_action,
    "rwml.normalize_action(chat)": lambda t: normalize_action([{"role": "assistant", "content": t}]),
    # rewards
    "extract_completion_text(chat)": lambda t: extract_completion_text([{"role": "assistant", "content": t}]),
    "screen.parse_screen_diff": screen.parse_screen_diff,
    "screen.screen_f1_reward_fn": lambda t: screen.screen_f1_reward_fn([t], [PHONE["diff"]]),
    "textgame.extract_answer": textgame_rewards.extract_answer,
    "textgame.binary_reward_fn": lambda t: textgame_rewards.binary_reward_fn(
        [t], [TEXTGAME["state"]], [TEXTGAME["next_state"]]),
    "textgame.task_specific_reward_fn": lambda t: textgame_rewards.task_specific_reward_fn(
        [t], [TEXTGAME["state"]], [TEXTGAME["next_state"]]),
    "text_similarity.rouge_reward_fn": lambda t: text_similarity.rouge_reward_fn([t], [PHONE["diff"]]),
    "text_similarity.rouge_l_f1(t, t)": lambda t: text_similarity.rouge_l_f1(t, t),
    "text_similarity.repetition_penalty": lambda t: _REPETITION([t], diff=[PHONE["diff"]]),
    "embedding.EmbeddingReward": lambda t: _EMBEDDING([t, "ok"], ["a room", "a room"]),
    "rlvr.binary_reward": lambda t: rlvr.binary_reward(
        [t, t, t], ["phone", "textgame", "twx"], [PHONE["state"], TEXTGAME["state"], "room"],
        [PHONE["next_state"], TEXTGAME["next_state"], "room"]),
    "rlvr.task_specific_reward": lambda t: rlvr.task_specific_reward(
        [t, t, t], ["phone", "textgame", "twx"], [PHONE["state"], TEXTGAME["state"], "room"],
        [PHONE["next_state"], TEXTGAME["next_state"], "room"], [PHONE["diff"], TEXTGAME["diff"], "room"]),
}

# ------------------------------------------------------------------ no exception on any input

_FRAGMENTS = [
    "{", "}", "[", "]", "(", ")", '"', "'", "`", "```", "```json\n", ",", ":", "\\", "\\u12", "\n", " ", "\t",
    "\x00", "\ud800", "\udfff", "\U0001f600", "9" * 50, "-1e999", "NaN", "None", "True", "null", "tap(", "type(",
    "scroll(", "open_app(", "finished()", "Action:", "Thought:", "call_wm(", "call_wm(action='", "New items:",
    "Deleted items:", "Updated items:", "None", "[1] button ", "[99999999999999999999] text ", 'app: x | screen: y',
    '"modified": [', '"removed": [', '"score": {', '"uuid": ', "The final answer is:", "take ", " from ",
    " with ", "put ", " in ", "turn on ", '"model": "mlp"', PHONE["diff"][:60], TEXTGAME["diff"][:60],
]
_ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
MODEL_OUTPUT = st.one_of(
    st.text(_ANY_CHAR, max_size=200),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(_ANY_CHAR, max_size=4)), max_size=40).map("".join),
    st.sampled_from([PHONE["diff"], TEXTGAME["diff"], PHONE["action"], TEXTGAME["action"]]).flatmap(
        lambda s: st.integers(0, len(s)).map(lambda k: s[:k])),  # truncated real answers
)


@pytest.mark.parametrize("name", sorted(TARGETS))
@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=MODEL_OUTPUT)
def test_never_raises(name, text):
    TARGETS[name](text)


# ------------------------------------------------------------------ adversarial inputs: linear time

SIZE = 64 * 1024
ADVERSARIAL = {
    "spaces": "tap()" + " " * SIZE + "x",
    "blanks between": "a" + " " * SIZE + "b",
    "action line": "Action: tap()" + " " * SIZE + "x",
    "huge id": 'New items:\n[' + "9" * SIZE + '] button "a"\nDeleted items:\nNone\nUpdated items:\nNone',
    "digits": "{" + "9" * SIZE,
    "deep [": "[" * SIZE,
    "deep {": "{" * SIZE,
    "object of lists": '{"a":' + "[" * SIZE,
    "commas": '{"a": [' + "1," * (SIZE // 2),
    "open quote": '{"' + "a" * SIZE,
    "backslashes": "{'" + "\\" * SIZE,
    "surrogates": "a\ud800b" * (SIZE // 3),
    "nul": "\x00" * SIZE,
    "unclosed calls": "call_wm('" * (SIZE // 9),
    "unclosed fences": "```json" * (SIZE // 7),
    "screen lines": ("[1] button " + '"x" ' * 20 + "\n") * (SIZE // 92),
    "take from": "take " + " from" * (SIZE // 5),
    "words": " ".join(f"w{i % 97}" for i in range(SIZE // 4)),
    "one word": "a " * (SIZE // 2),
}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_adversarial_64k_fast(name):
    fn = TARGETS[name]
    slow = {}
    for label, text in ADVERSARIAL.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            fn(text)
            best = min(best, time.perf_counter() - start)
            if best < BUDGET_S:
                break
        if best >= BUDGET_S:
            slow[label] = round(best, 3)
    assert not slow, f"{name} took over {BUDGET_S * 1000:.0f} ms (best of 3) on: {slow}"
