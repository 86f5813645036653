"""Continuous text rewards for the reward ablation: ROUGE-L F1 and a repetition penalty.

RLVR-World's binary and task-specific rewards need a structured answer (a JSON diff, a
screen diff). A *continuous metric* reward only compares texts, so it works on any
target, free-text observations included:

    ROUGE-L F1 = 2·P·R / (P + R),  P = LCS / |prediction|,  R = LCS / |gold|

over whitespace tokens, where LCS is the length of the longest common subsequence.
RWML's embedding reward is described in one summary as "embeddings plus ROUGE"; the
kit offers ROUGE-L as that variant.

RLVR-World reports that RL against a verifiable reward cut repetition in generated
outputs (48.6% -> 9.9% on video). The *repetition* variant subtracts a penalty
proportional to the share of repeated n-grams in the prediction, so a model cannot
farm partial overlap by looping:

    r_rep = r - λ · repeated_ngram_share(prediction)

Garbage in gives 0 (or the penalty), never an exception.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wmkit.rewards import extract_completion_text


def _tokens(text: Any) -> list[str]:
    return text.split() if isinstance(text, str) else []


ROUGE_MAX_TOKENS = 4096
"""ROUGE-L compares at most the first this-many tokens of each text (LCS is quadratic: a 1 MB
completion took seconds). Tokens past the cap still count in the lengths, so a longer text's
score is a lower bound of its full ROUGE-L: padding a completion can never raise it."""


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Bit-parallel (Hyyrö 2004): one pass over `a` with |b|-bit integers, O(|a|·|b|/64) word
    operations, still quadratic; `rouge_l_f1` caps the tokens it compares (`ROUGE_MAX_TOKENS`)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for j, y in enumerate(b):
        masks[y] = masks.get(y, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def rouge_l_f1(prediction: Any, gold: Any) -> float:
    """ROUGE-L F1 over whitespace tokens; 0.0 when either text is empty or not a string.
    Only the first `ROUGE_MAX_TOKENS` tokens of each text are compared (all count in P and R).

    Not `rouge_score`: its default tokenizer (lowercase, letters and digits only) scores the kit's JSON
    and screen texts differently, and with a whitespace tokenizer, which gives these values
    (tests/test_rewards_text.py), its pure-Python LCS is far slower than this bit-parallel one inside
    the RL reward loop."""
    pred, ref = _tokens(prediction), _tokens(gold)
    lcs = lcs_length(pred[:ROUGE_MAX_TOKENS], ref[:ROUGE_MAX_TOKENS])
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)


def repeated_ngram_share(text: Any, n: int = 3) -> float:
    """Share of the text's n-grams that repeat an earlier n-gram (0 for texts shorter than n)."""
    tokens = _tokens(text)
    grams = [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def rouge_reward_fn(completions: Sequence[Any], diff: Sequence[str], **kwargs: Any) -> list[float]:
    """TRL reward function: ROUGE-L F1 of each completion against the gold target (`diff` column)."""
    if len(completions) != len(diff):
        raise ValueError(f"{len(completions)} completions but {len(diff)} gold targets")
    return [rouge_l_f1(extract_completion_text(c), g) for c, g in zip(completions, diff)]


def with_repetition_penalty(reward_fn, weight: float = 0.5, n: int = 3):
    """Wrap a TRL reward function: r - weight · repeated_ngram_share(completion)."""
    if weight < 0:
        raise ValueError(f"repetition penalty weight must be >= 0, not {weight}")

    def penalized(completions: Sequence[Any], **kwargs: Any) -> list[float]:
        base = reward_fn(completions, **kwargs)
        return [r - weight * repeated_ngram_share(extract_completion_text(c), n)
                for r, c in zip(base, completions)]

    penalized.__name__ = f"{getattr(reward_fn, '__name__', 'reward')}_minus_repetition"
    return penalized
