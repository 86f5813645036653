"""RWML's pieces (Yu et al., 2026): next-observation data, the hard-sample filter, quality measures.

RWML trains a world model with self-supervised RL: the reward of a predicted next observation
is 1 when its sentence embedding is close enough to the real one's (cosine ≥ τ, see
:mod:`wmkit.rewards.embedding`), else 0. Before RL a warm-up predictor (SFT on ~10% of the
data) answers every remaining transition; those it already gets right are "too easy" and are
dropped (kept only with a small probability) — :func:`hard_sample_filter`. The GRPO step itself
is RLVR-World's (:func:`wmkit.core.world_model_rl.train_rlvr` with the embedding reward).
No public code of RWML was found; the kit follows the paper's description.
"""
from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from wmkit.core.worldmodel import generate, is_exact, prompt_text, split_by_episode
from wmkit.envs import textgame, twx
from wmkit.envs.base import Transition
from wmkit.rewards.text_similarity import repeated_ngram_share, rouge_l_f1
from wmkit.rlvr_world.config import RLVRSizes


def twx_splits(sizes: RLVRSizes, seed: int = 0) -> dict[str, list[Transition]]:
    """TextWorldExpress transitions (short next observations only), split by episode."""
    transitions = [t for t in twx.collect_transitions(sizes.twx_episodes, seed=seed)
                   if len(t.next_state) <= sizes.twx_max_chars]
    return split_by_episode(transitions)


def prediction_prompts(tokenizer, transitions: Sequence[Transition]) -> list[str]:
    return [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]


def _mean(values) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def twx_quality(model, tokenizer, transitions: Sequence[Transition], embedding_reward, max_new_tokens: int) -> dict:
    """Greedy next-observation quality: exact match, embedding reward (cos ≥ τ), mean cosine, ROUGE-L."""
    prompts = prediction_prompts(tokenizer, transitions)
    predictions = [p[0] for p in generate(model, tokenizer, prompts, max_new_tokens)]
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
    predictions = generate(model, tokenizer, prediction_prompts(tokenizer, transitions), max_new_tokens)
    return _mean(float(is_exact(t.env, t.state, p[0], t.next_state)) for t, p in zip(transitions, predictions))


def hard_sample_filter(predictor, tokenizer, transitions: Sequence[Transition], embedding_reward,
                       keep_probability: float, max_new_tokens: int, seed: int = 0,
                       samples: int = 0) -> tuple[list[Transition], dict]:
    """RWML's filter: the warm-up predictor answers each transition; those it already gets right
    (embedding reward 1) are too easy and survive only with `keep_probability`.

    `samples=0`: "right" is the greedy answer's reward. `samples=k`: the transition is easy only
    when all k answers sampled at T=1 (as GRPO samples) get reward 1, i.e. when its GRPO group
    would have zero variance and teach nothing, which is what the filter is for. A small model's
    greedy answer is often right where most of its samples are wrong, and dropping those leaves RL a
    data set skewed towards the rare hard cases (research/README.md, 'RWML regime')."""
    target = getattr(embedding_reward, "target", "next_state")  # the column the reward compares with
    truths = [getattr(t, target) for t in transitions]
    return filter_prompts(predictor, tokenizer, transitions, prediction_prompts(tokenizer, transitions), truths,
                          embedding_reward, keep_probability, max_new_tokens, seed, samples)


def filter_prompts(predictor, tokenizer, items: Sequence, prompts: Sequence[str], truths: Sequence[str],
                   embedding_reward, keep_probability: float, max_new_tokens: int, seed: int = 0,
                   samples: int = 0) -> tuple[list, dict]:
    """:func:`hard_sample_filter` on prompts already written (any format): `items[i]` is kept unless
    the predictor's answer(s) to `prompts[i]` all get reward 1 against `truths[i]`, and then only with
    `keep_probability`. Returns (kept items, {"n_scored", "easy_share", "n_kept"})."""
    if samples:
        sampled = generate(predictor, tokenizer, prompts, max_new_tokens, do_sample=True, num_samples=samples,
                           seed=seed)
        rewards = embedding_reward([p for ps in sampled for p in ps],
                                   next_state=[x for x in truths for _ in range(samples)])
        easy = [float(all(rewards[i * samples:(i + 1) * samples])) for i in range(len(prompts))]
    else:
        predictions = [p[0] for p in generate(predictor, tokenizer, prompts, max_new_tokens)]
        easy = embedding_reward(predictions, next_state=truths)
    rng = random.Random(seed)
    kept = [t for t, e in zip(items, easy) if not e or rng.random() < keep_probability]
    return kept, {"n_scored": len(prompts), "easy_share": _mean(easy), "n_kept": len(kept)}


# --------------------------------------------------------------------------- the kit's own text game
#
# RWML's reward compares the predicted next state with the real one in embedding space. On the
# kit's text game the world model writes the *change* (a JSON diff, `Transition.diff`), so the
# reward compares the predicted diff with the true diff (`EmbeddingReward(..., target="diff")`).
# τ is chosen as the paper describes: the threshold that best separates predictions that describe
# the same next state from those that do not (balanced accuracy). "Describes the same next state"
# is decidable here, unlike on TextWorldExpress: the predicted diff, applied to the state, gives
# exactly the true next state (`wmkit.core.worldmodel.is_exact`). A differently worded diff with
# the same effect (keys or list items in another order) therefore counts as matching, a diff
# that differs in one value does not, however close its text is.


def textgame_splits(difficulty: str, episodes: int, seed: int = 0) -> dict[str, list[Transition]]:
    """Text-game transitions of one `wmkit.envs.textgame.DIFFICULTIES` level, split by episode."""
    return split_by_episode(textgame.collect_transitions(episodes, seed=seed, difficulty=difficulty))


def matches(t: Transition, prediction: str) -> bool:
    """The matching class of τ's choice: `prediction` describes the same next state as `t`
    (text game: the parsed diff gives exactly the next state; elsewhere: the same text)."""
    if t.env == "twx":
        return prediction.strip() == t.next_state
    return is_exact(t.env, t.state, prediction, t.next_state)


def threshold_pairs(model, tokenizer, transitions: Sequence[Transition], embedder, samples: int,
                    max_new_tokens: int, seed: int = 0) -> dict:
    """(prediction, truth) pairs for τ: each transition's greedy answer and `samples` answers at
    T=1 from `model`, with cos(E(prediction), E(diff)) and whether the prediction matches
    (:func:`matches`). Returns {"similarities", "matching", "predictions"} (lists, pair order)."""
    prompts = prediction_prompts(tokenizer, transitions)
    greedy = generate(model, tokenizer, prompts, max_new_tokens)
    sampled = (generate(model, tokenizer, prompts, max_new_tokens, do_sample=True, num_samples=samples, seed=seed)
               if samples else [[] for _ in transitions])
    pairs = [(t, p) for t, g, s in zip(transitions, greedy, sampled) for p in g + s]
    sims = embedder.cosine([p for _, p in pairs], [t.diff for t, _ in pairs])
    return {"similarities": [float(x) for x in sims], "matching": [matches(t, p) for t, p in pairs],
            "predictions": [p for _, p in pairs]}


def first_step_reward_share(log_history: Sequence[dict], key: str = "reward") -> float | None:
    """Share of the first GRPO step's samples that got reward 1 (the logged mean reward of the
    first step: the embedding reward is 0 or 1, so its mean is that share); None if not logged."""
    for row in log_history:
        if key in row:
            return float(row[key])
    return None


def reward_is_informative(share: float | None, low: float = 0.1, high: float = 0.9) -> bool:
    """True when `low` ≤ share ≤ `high`: enough samples on both sides for GRPO's group-relative
    advantages to be non-zero (all 0 or all 1: every advantage is 0 and RL does nothing)."""
    return share is not None and low <= share <= high


def prediction_quality(model, tokenizer, transitions: Sequence[Transition], embedding_reward,
                       max_new_tokens: int, samples: int = 0, seed: int = 0) -> dict:
    """Next-state quality on `transitions`, greedy and (with `samples`) sampled at T=1, each as
    {"exact" (:func:`matches`), "embedding_reward" (cos(E(prediction), E(diff)) ≥ τ), "cosine",
    "rouge_l" (against the diff)} over all transitions, and the same under "changed" and "unchanged"
    (transitions that change the state / do not: the kit's protocol reports both, since "predict no
    change" is right on every unchanged one); plus "predictions" (greedy, for the change check) and
    "examples"."""
    prompts = prediction_prompts(tokenizer, transitions)
    out: dict = {"n": len(transitions)}
    greedy = [p[0] for p in generate(model, tokenizer, prompts, max_new_tokens)]
    modes = {"greedy": [[p] for p in greedy]}
    if samples:
        modes["sampled"] = generate(model, tokenizer, prompts, max_new_tokens, do_sample=True,
                                    num_samples=samples, seed=seed)
    for mode, predictions in modes.items():
        flat = [(t, p) for t, ps in zip(transitions, predictions) for p in ps]
        sims = embedding_reward.similarities([p for _, p in flat], [t.diff for t, _ in flat])
        scores = [{"exact": float(matches(t, p)), "embedding_reward": float(s >= embedding_reward.tau),
                   "cosine": float(s), "rouge_l": rouge_l_f1(p, t.diff)} for (t, p), s in zip(flat, sims)]

        def mean_of(rows):
            rows = list(rows)
            return {k: _mean(r[k] for r in rows) for k in ("exact", "embedding_reward", "cosine", "rouge_l")}

        out[mode] = mean_of(scores)
        out[mode]["changed"] = mean_of(r for r, (t, _) in zip(scores, flat) if t.changed)
        out[mode]["unchanged"] = mean_of(r for r, (t, _) in zip(scores, flat) if not t.changed)
    out["predictions"] = greedy
    out["examples"] = [{"action": t.action, "truth": t.diff, "predicted": p}
                       for t, p in list(zip(transitions, greedy))[:3]]
    return out
