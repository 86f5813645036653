"""RWML with one model that predicts and acts (wmkit.rwml.agent): the two prediction formats, the
prompts as the policy reads them, the per-block parameter change and one tiny seed."""
import hashlib
from dataclasses import replace

import numpy as np
import pytest

from wmkit.core import models
from wmkit.core.models import TinyModelConfig
from wmkit.envs import phone
from wmkit.profiles import get_profile
from wmkit.rewards.embedding import Embedder
from wmkit.rwml import agent as ra
from wmkit.rwml.config import bench_rwml_agent_sizes
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1.config import SETTINGS_WORLD
from wmkit.wm_r1.tasks import tokenizer_corpus

TINY = TinyModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64, vocab_size=512,
                       max_positions=2048)


def _episode(seed=3):
    rows = [t for t in phone.collect_transitions(4, seed, list(SETTINGS_WORLD), status_bar=True)]
    episode = rows[0].episode
    return [t for t in rows if t.episode == episode], rows


def test_the_screen_context_asks_for_the_change_or_the_next_screen_of_one_screen_and_action():
    steps, _ = _episode()
    t = next(s for s in steps if s.changed)
    (text, turn_end), = ra.prediction_pieces(t, [], "screen", "screen")
    assert text == f"Screen:\n{t.state}\nAction: {t.action}\nNext screen:\n" and not turn_end
    assert ra.prediction_pieces(t, [], "screen", "diff")[0][0].endswith("\nChange:\n")
    assert ra.prediction_target(t, "screen") == t.next_state and ra.prediction_target(t, "diff") == t.diff
    # matching: the same next screen, however a diff lists its lines
    assert ra.matches(t, t.diff, "diff") and ra.matches(t, t.next_state + "\n", "screen")
    assert not ra.matches(t, "New items:\nNone", "diff") and not ra.matches(t, t.state, "screen")
    assert not ra.matches(t, "garbage", "diff")
    with pytest.raises(ValueError, match="prediction context"):
        ra.prediction_pieces(t, [], "diff")
    with pytest.raises(ValueError, match="prediction target"):
        ra.prediction_target(t, "edit")


def test_the_episode_format_asks_where_the_agent_reads_an_imagined_screen():
    steps, _ = _episode()
    assert len(steps) >= 2
    t, history = steps[1], steps[:1]
    pieces = ra.prediction_pieces(t, history, "episode", "screen")
    first = history[0]
    assert pieces[0] == (f"Task: {t.task}\nScreen:\n{first.state}\n", False)  # the agent's own prompt
    assert pieces[1][1] and pieces[1][0].endswith(f"Action: {first.action}")  # its earlier turn
    assert pieces[2] == (ag.observation_text(first.next_state), False)  # the screen it then saw
    # then it imagines this step's action and the screen comes next, as in the agent's episodes
    assert pieces[-2] == (ag.format_turn(f"check {t.action}.", imagine=t.action), True)
    assert pieces[-1] == (f"\nImagined: {ag.IMAGINED_NOTE}\n", False)
    assert ag.parse_turn(pieces[-2][0]).kind == "imagine"


def test_prediction_prompts_tokenize_as_the_agent_writes_them_and_long_ones_are_left_out():
    _, rows = _episode()
    tasks = [phone.with_status_bar(t) for t in phone.sample_tasks(20, 1, list(SETTINGS_WORLD))]
    tokenizer = models.train_tokenizer(tokenizer_corpus(tasks), 512)
    for context in ra.PREDICTION_CONTEXTS:
        data = ra.PredictionData(tokenizer, rows, rows, context, "screen")
        assert len(data) == sum(ra.is_target(t) for t in rows) > 0
        for text, ids in zip(data.prompts, data.prompt_ids):  # the text TRL tokenizes = the ids the agent sees
            assert tokenizer(text, add_special_tokens=False)["input_ids"] == ids
        examples = data.sft_examples(tokenizer, max_length=10_000)
        first = examples[0]
        n_prompt = len(data.prompt_ids[0])
        assert first["labels"][:n_prompt] == [-100] * n_prompt and first["labels"][-1] == tokenizer.eos_token_id
        assert data.rows([0]) == [{"prompt": data.prompts[0], "next_state": data.targets[0]}]
    episode = ra.PredictionData(tokenizer, rows, rows, "episode", "diff")
    cap = sorted(len(ids) for ids in episode.prompt_ids)[len(episode) // 2]
    short = ra.PredictionData(tokenizer, rows, rows, "episode", "diff", max_prompt_tokens=cap)
    assert 0 < len(short) < len(episode) and max(len(ids) for ids in short.prompt_ids) <= cap
    invalid = replace(rows[0], action="not an action")
    assert not ra.is_target(invalid) and len(ra.PredictionData(tokenizer, [invalid], rows, "screen", "diff")) == 0


def test_parameter_change_by_block_names_the_block_that_moved():
    import torch

    tokenizer = models.train_tokenizer(["a b c d e f"] * 10, 300)
    before = models.build_tiny_model(tokenizer, TINY, seed=0)
    after = models.build_tiny_model(tokenizer, TINY, seed=0)
    with torch.no_grad():
        after.model.layers[1].mlp.down_proj.weight.add_(0.5)
    blocks = ra.parameter_change_by_block(before, after)
    assert blocks["model.layers.1"] > 0
    assert all(v == 0.0 for k, v in blocks.items() if k != "model.layers.1")
    assert {"embed_tokens", "model.layers.0", "model.norm"} <= set(blocks)


def _bag_of_characters(texts):
    """A deterministic stand-in for MiniLM: identical texts embed identically, others differ."""
    out = []
    for text in texts:
        digest = hashlib.sha256(text.encode()).digest()
        out.append(np.frombuffer(digest, dtype=np.uint8)[:16].astype(float) + 1.0)
    return np.array(out)


@pytest.mark.slow
def test_one_tiny_seed_of_rwml_then_policy_rl(tmp_path, monkeypatch):
    base = bench_rwml_agent_sizes(get_profile("smoke"))
    world = base.world
    world = replace(world, policy=TINY, max_steps=2, max_turn_tokens=8, grpo=replace(world.grpo, max_completion_length=300),
                    lora=False, ladder=replace(world.ladder, grpo=replace(world.ladder.grpo, max_steps=1), eval_tasks=3,
                                               sft_tasks=8))
    sizes = replace(base, world=world, episodes=8, rl_pool=4, grpo=replace(base.grpo, max_completion_length=16),
                    eval_transitions=3)
    sizes = replace(sizes, prediction_repeats=2, grpo=replace(sizes.grpo, temperature=0.7))
    result = ra.run_rwml_agent_seed(sizes, 100, tmp_path, embedder=Embedder(encode_fn=_bag_of_characters),
                                    progress=lambda line: None, acting_only_control=True)
    assert set(result["acting"]) == {"warm", "rwml", "warm_policy_rl", "rwml_policy_rl"}
    for arm in result["acting"].values():
        for mode in ("greedy", "sampled"):
            r = arm[mode]
            assert 0 <= r["success"] <= 1 and r["invalid_share"] == pytest.approx(r["invalid"] / r["steps"])
    assert result["n"]["acting_examples"] > 0 and result["n"]["predicting_examples"] > 0
    assert isinstance(result["moved"], bool) and result["param_change"] >= 0
    assert set(result["prediction"]) == {"warm", "rwml"} and "predictions" not in result["prediction"]["warm"]
    assert set(result["policy_rl"]) == {"warm", "rwml"} and result["seconds"]["total"] > 0
    assert set(result["reference_nll"]) == {"warm", "rwml", "warm_policy_rl", "rwml_policy_rl"}
    assert 0 <= result["acting_change"] <= 1 and "greedy_actions" not in result["acting"]["warm"]
    control = result["acting_only"]  # the warm-up without its prediction examples, beside it
    assert 0 <= control["acting"]["greedy"]["success"] <= 1 and control["reference_nll"] > 0
    # the warm-up is saved with its settings: a second run of the seed loads it instead of training
    def no_training(*args, **kwargs):
        raise AssertionError("the saved warm-up was trained again")

    monkeypatch.setattr("wmkit.wm_r1.experiment.train_policy_sft", no_training)
    again = ra.run_rwml_agent_seed(sizes, 100, tmp_path, embedder=Embedder(encode_fn=_bag_of_characters),
                                   progress=lambda line: None, policy_rl=False)
    assert again["reference_nll"]["warm"] == result["reference_nll"]["warm"] and "policy_rl" not in again
    with pytest.raises(ValueError, match="prediction_context"):
        ra.run_rwml_agent_seed(replace(sizes, prediction_context="diff"), 100, tmp_path)
    with pytest.raises(ValueError, match="policy_reward"):
        ra.run_rwml_agent_seed(replace(sizes, policy_reward="score"), 100, tmp_path)


def test_reference_nll_is_the_mean_loss_of_the_experts_turns():
    import torch

    from wmkit.wm_r1.tasks import sft_examples

    world = bench_rwml_agent_sizes(get_profile("smoke")).world
    tasks = phone.sample_tasks(3, 2, list(SETTINGS_WORLD))
    tokenizer = models.train_tokenizer(tokenizer_corpus(tasks), 512)
    model = models.build_tiny_model(tokenizer, TINY, seed=0)
    examples = sft_examples(tokenizer, tasks, 0.0, 0, 2048)
    # by hand: summed token losses of every example (the model's own shifted loss) over their agent tokens
    total = count = 0
    with torch.no_grad():
        for e in examples:
            ids, labels = torch.tensor([e["input_ids"]]), torch.tensor([e["labels"]])
            n = int((labels[:, 1:] != -100).sum())
            total += float(model(input_ids=ids, labels=labels).loss) * n
            count += n
    assert ra.reference_nll(model, tokenizer, tasks, world, batch_size=2) == pytest.approx(total / count, rel=1e-4)


def test_greedy_actions_changed_counts_tasks_whose_actions_differ():
    a = {"greedy_actions": [["tap(1)", "finished()"], ["tap(2)"], ["back()"]]}
    b = {"greedy_actions": [["tap(1)", "finished()"], ["tap(3)"], ["back()", "tap(1)"]]}
    assert ra.greedy_actions_changed(a, b) == pytest.approx(2 / 3)


def test_a_saved_warm_up_is_reused_only_for_the_same_settings(tmp_path):
    import torch

    tokenizer = models.train_tokenizer(["a b c d e f"] * 10, 300)
    model = models.build_tiny_model(tokenizer, TINY, seed=0)
    key = {"seed": 100, "episodes": 8, "prediction_context": "screen"}
    assert ra.load_warm_up(tmp_path / "warm", key) is None  # nothing saved yet
    ra.save_warm_up(model, tokenizer, tmp_path / "warm", key, TINY)
    loaded = ra.load_warm_up(tmp_path / "warm", dict(key))
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), loaded.parameters()))
    assert ra.load_warm_up(tmp_path / "warm", {**key, "episodes": 9}) is None


def _arm(greedy_success, sampled_success, greedy_failed, sampled_failed):
    return {"greedy": {"success": greedy_success, "invalid_share": greedy_failed},
            "sampled": {"success": sampled_success, "invalid_share": sampled_failed}}


def test_acting_over_seeds_collects_each_model_in_the_figures_order():
    """Notebook 02's figure of the agent: per model, one value per seed of each measure; a seed run
    without policy RL counts for the two models it has."""
    full = {"seed": 7, "acting": {"rwml_policy_rl": _arm(0.6, 0.3, 0.0, 0.1), "warm": _arm(0.4, 0.2, 0.0, 0.25),
                                  "rwml": _arm(0.35, 0.15, 0.01, 0.2), "warm_policy_rl": _arm(0.5, 0.25, 0.0, 0.15)}}
    no_policy_rl = {"seed": 8, "acting": {"warm": _arm(0.45, 0.21, 0.0, 0.16), "rwml": _arm(0.43, 0.18, 0.0, 0.15)}}
    from wmkit.rwml import readout

    out = readout.acting_over_seeds([full, no_policy_rl])
    assert list(out) == list(readout.ARMS) == ["warm", "rwml", "warm_policy_rl", "rwml_policy_rl"]
    assert out["warm"]["seeds"] == [7, 8] and out["warm_policy_rl"]["seeds"] == [7]
    assert out["warm"]["greedy_success"] == [0.4, 0.45] and out["warm"]["sampled_success"] == [0.2, 0.21]
    assert out["rwml"]["greedy_invalid_share"] == [0.01, 0.0] and out["rwml"]["sampled_invalid_share"] == [0.2, 0.15]
    assert set(out["rwml_policy_rl"]) == {"seeds", *readout.MEASURES}
    assert readout.acting_over_seeds([]) == {} and list(readout.acting_over_seeds([no_policy_rl])) == ["warm", "rwml"]


def test_policy_outcome_of_the_textworldexpress_experiment():
    """Notebook 02 prints why the `rwml` policy experiment could not show RWML's agent gains: the best
    success of any arm at any stage, the invalid share after policy RL, RWML's parameter change."""
    from wmkit.rwml.readout import policy_outcome

    def stage(success, invalid_share):
        return {"success": success, "invalid_share": invalid_share}

    result = {"rwml_param_change": 0.0, "threshold": {"tau": 0.9, "fallback": True}, "policy": {"arms": {
        "base": {"warm": stage(0.0, 0.97), "start": stage(0.1, 1.0), "after": stage(0.0, 0.94)},
        "rwml": {"warm": stage(0.0, 1.0), "start": stage(0.0, 1.0), "after": stage(0.05, 1.0)}}}}
    out = policy_outcome(result)
    assert out == {"best_success": 0.1, "invalid_share_after": {"base": 0.94, "rwml": 1.0}, "rwml_param_change": 0.0,
                   "tau_fallback": True}
    assert policy_outcome({**result, "threshold": None})["tau_fallback"] is None
