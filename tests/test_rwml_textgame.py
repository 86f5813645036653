"""RWML on the kit's own text game: τ's choice, the first-step reward share, the experiment's shape."""
import json

import numpy as np
import pytest

from wmkit.envs.base import Transition
from wmkit.rewards.embedding import Embedder, EmbeddingReward, choose_threshold
from wmkit.rwml import method as rm
from wmkit.rwml.config import RWML


def test_tau_is_the_best_balanced_accuracy_cut_between_matching_and_other_pairs():
    # matching pairs at 0.95, 0.90, 0.70; other pairs at 0.92, 0.60, 0.50, 0.40.
    sims = [0.95, 0.90, 0.70, 0.92, 0.60, 0.50, 0.40]
    matching = [True, True, True, False, False, False, False]
    # By hand: τ=0.70 keeps every matching pair (TPR 1) and lets one other through (TNR 3/4):
    # BA 0.875. τ=0.90: TPR 2/3, TNR 3/4 -> 0.708; τ=0.95: 1/3, 1 -> 0.667; τ=0.60: 1, 1/2 -> 0.75.
    choice = choose_threshold(sims, matching)
    assert choice.tau == pytest.approx(0.70)
    assert choice.balanced_accuracy == pytest.approx(0.875)
    assert (choice.n_exact, choice.n_inexact, choice.fallback) == (3, 4, False)
    assert choice.auc == pytest.approx(10 / 12)  # 0.95 beats all 4 others, 0.90 and 0.70 beat 3 each
    # one class missing: the default, flagged
    assert choose_threshold([0.1, 0.2], [False, False]).fallback


def test_first_step_reward_share_and_the_informative_band():
    log = [{"loss": 0.1}, {"reward": 0.25, "step": 1}, {"reward": 0.5, "step": 2}]
    assert rm.first_step_reward_share(log) == 0.25
    assert rm.first_step_reward_share([{"loss": 0.0}]) is None
    assert rm.reward_is_informative(0.25)
    assert rm.reward_is_informative(0.1) and rm.reward_is_informative(0.9)
    assert not rm.reward_is_informative(0.0) and not rm.reward_is_informative(1.0)
    assert not rm.reward_is_informative(None)


def _textgame_transition():
    from wmkit.envs import textgame

    env = textgame.TextGameEnv(difficulty="tiny")
    env.reset(seed=1)
    before = textgame.state_text(env)
    env.step(env.reference_solution()[0])
    after = textgame.state_text(env)
    return Transition("textgame", "e", 0, before, "x", "x", after, textgame.compute_diff(before, after), True)


def test_matching_means_the_same_next_state_and_the_reward_reads_the_diff():
    t = _textgame_transition()
    reordered = json.dumps(dict(reversed(list(json.loads(t.diff).items()))))  # same effect, other text
    assert reordered != t.diff and rm.matches(t, reordered) and rm.matches(t, t.diff)
    assert not rm.matches(t, t.diff.replace("true", "false", 1)) and not rm.matches(t, "garbage")

    vectors = {t.diff: [1.0, 0.0], "near": [0.8, 0.6], "far": [0.0, 1.0]}
    embedder = Embedder(encode_fn=lambda texts: np.array([vectors.get(x, [0.6, 0.8]) for x in texts]))
    reward = EmbeddingReward(embedder, tau=0.75, target="diff")
    # as TRL calls it (dataset columns as keyword arguments) and as the filter calls it
    assert reward(["near", "far", ""], next_state=["s"] * 3, diff=[t.diff] * 3) == [1.0, 0.0, 0.0]
    assert reward(["near", "far"], next_state=[t.diff] * 2) == [1.0, 0.0]


def test_rl_did_not_move_is_the_forgetting_precondition():
    from wmkit.rwml.experiment import rl_did_not_move

    assert rl_did_not_move({0: {"moved": True}, 1: {"moved": True}}) is None
    assert "seed(s) [1]" in rl_did_not_move({0: {"moved": True}, 1: {"moved": False}})


def test_the_textgame_experiment_runs_at_smoke_size_and_is_well_formed(tiny_lm, small_splits, tmp_path):
    from dataclasses import replace

    from wmkit.rwml import experiment as rx

    model, tokenizer, _ = tiny_lm
    sizes = replace(RWML["smoke"].textgame, episodes=12, max_new_tokens=8,
                    grpo=replace(RWML["smoke"].textgame.grpo, max_completion_length=8))
    embedder = Embedder(encode_fn=lambda texts: np.array([[1.0, len(x) % 7 + 0.1] for x in texts]))
    forgetting = {"phone": [t for t in small_splits["test"] if t.env == "phone"][:2]}
    lines = []
    out = rx.rwml_textgame_seeds(model, tokenizer, sizes, tmp_path, forgetting, seeds=2, embedder=embedder,
                                 progress=lines.append)
    assert set(out["per_seed"]) == {0, 1} and lines
    for seed, r in out["per_seed"].items():
        # the base model is the same in every seed: measured in the first only
        assert set(r["quality"]) == {"warm", "rwml", "sft"} | ({"base"} if seed == 0 else set())
        for q in r["quality"].values():
            assert set(q["greedy"]) == {"exact", "embedding_reward", "cosine", "rouge_l", "changed", "unchanged"}
            assert set(q["greedy"]["changed"]) == {"exact", "embedding_reward", "cosine", "rouge_l"}
            assert "sampled" in q
        assert -1.0 <= r["threshold"]["tau"] <= 1.0 and isinstance(r["threshold"]["fallback"], bool)
        share = r["first_step_reward_share"]
        assert share is None or 0.0 <= share <= 1.0
        assert isinstance(r["moved"], bool) and r["param_change"] >= 0.0
        assert set(r["forgetting"]["rwml"]) == {"phone"}
        assert r["n"]["warm"] >= 1 and r["seconds"]["total"] > 0
    summary = out["summary"]
    assert summary["comparisons"]["sampled"]["changed"]["embedding_reward"]["rwml_minus_warm"]["verdict"] in (
        "reproduced", "inconclusive", "contradicted", "not measured")
    if not all(summary["moved"]):
        assert summary["forgets_less"]["verdict"] == "not measured"
        assert "did not move" in summary["forgets_less"]["reason"]
    json.dumps(__import__("wmkit.runs", fromlist=["jsonable"]).jsonable(out))  # JSON-able
    # the benchmark's claims read their fields from a seed's record
    from wmkit.bench import claims as bench_claims

    for claim in bench_claims.CLAIMS:
        if claim.experiment == "rwml_textgame":
            for path in ((claim.value,) if isinstance(claim.value, str) else claim.value) + (claim.minus,):
                assert bench_claims.get_path(out["per_seed"][1], path) is not None, (claim.id, path)
