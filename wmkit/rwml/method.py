"""RWML's pieces (Yu et al., 2026): next-observation data, the hard-sample filter, quality measures.

RWML trains a world model with self-supervised RL: the reward of a predicted next observation
is 1 when its sentence embedding is close enough to the real one's (cosine ≥ τ, see
:mod:`wmkit.rewards.embedding`), else 0. Before RL a warm-up predictor (SFT on ~10% of the
data) answers every remaining transition; those it already gets right are "too easy" and are
dropped (kept only with a small probability) — :func:`hard_sample_filter`. The GRPO step itself
is RLVR-World's (:func:`wmkit.rlvr_world.method.train_rlvr` with the embedding reward).
No public code of RWML was found; the kit follows the paper's description.
"""
from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from wmkit.core.worldmodel import generate, is_exact, prompt_text, split_by_episode
from wmkit.envs.base import Transition
from wmkit.profiles import RLVRSizes
from wmkit.rewards.text_similarity import repeated_ngram_share, rouge_l_f1


def twx_splits(sizes: RLVRSizes, seed: int = 0) -> dict[str, list[Transition]]:
    """TextWorldExpress transitions (short next observations only), split by episode."""
    from wmkit.envs import twx

    transitions = [t for t in twx.collect_transitions(sizes.twx_episodes, seed=seed)
                   if len(t.next_state) <= sizes.twx_max_chars]
    return split_by_episode(transitions)


def _prompts(tokenizer, transitions: Sequence[Transition]) -> list[str]:
    return [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]


def _mean(values) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def twx_quality(model, tokenizer, transitions: Sequence[Transition], embedding_reward, max_new_tokens: int) -> dict:
    """Greedy next-observation quality: exact match, embedding reward (cos ≥ τ), mean cosine, ROUGE-L."""
    predictions = [p[0] for p in generate(model, tokenizer, _prompts(tokenizer, transitions), max_new_tokens)]
    truths = [t.next_state for t in transitions]
    sims = embedding_reward.similarities(predictions, truths)
    return {
        "exact": _mean(float(p.strip() == t) for p, t in zip(predictions, truths)),
        "embedding_reward": _mean(float(s >= embedding_reward.tau) for s in sims),
        "cosine": _mean(float(s) for s in sims),
        "rouge_l": _mean(rouge_l_f1(p, t) for p, t in zip(predictions, truths)),
        "repetition": _mean(repeated_ngram_share(p) for p in predictions),
        "n": len(transitions),
        "examples": [{"action": t.action, "truth": t.next_state, "predicted": p}
                     for t, p in list(zip(transitions, predictions))[:3]],
    }


def kit_accuracy(model, tokenizer, transitions: Sequence[Transition], max_new_tokens: int) -> float:
    """Greedy exact accuracy on the kit's own environments (the forgetting check)."""
    predictions = generate(model, tokenizer, _prompts(tokenizer, transitions), max_new_tokens)
    return _mean(float(is_exact(t.env, t.state, p[0], t.next_state)) for t, p in zip(transitions, predictions))


def hard_sample_filter(predictor, tokenizer, transitions: Sequence[Transition], embedding_reward,
                       keep_probability: float, max_new_tokens: int, seed: int = 0) -> tuple[list[Transition], dict]:
    """RWML's filter: the warm-up predictor answers each transition; those it already gets right
    (embedding reward 1) are too easy and survive only with `keep_probability`."""
    predictions = [p[0] for p in generate(predictor, tokenizer, _prompts(tokenizer, transitions), max_new_tokens)]
    easy = embedding_reward(predictions, next_state=[t.next_state for t in transitions])
    rng = random.Random(seed)
    kept = [t for t, e in zip(transitions, easy) if not e or rng.random() < keep_probability]
    return kept, {"n_scored": len(transitions), "easy_share": _mean(easy),
                  "n_kept": len(kept)}
