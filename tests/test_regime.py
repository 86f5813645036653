"""Notebook 02's regime study: pass@k, the group-spread formula, difficulty levels through the
world-model build, and the per-level measurement on a tiny model."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from wmkit import exercises
from wmkit.core import build
from wmkit.core.worldmodel import collect_transitions
from wmkit.profiles import check_sizes, get_profile
from wmkit.rlvr_world import regime
from wmkit.core.world_model_rl import pass_at_k
from wmkit.rlvr_world.config import RLVR, bench_rlvr_sizes


def with_grpo(sizes, **knobs):
    """`sizes` with some of its GRPO knobs replaced."""
    return replace(sizes, grpo=replace(sizes.grpo, **knobs))


def test_pass_at_k_hand_computed():
    # 4 samples, 1 right: k = 1 -> 1/4; k = 2 -> 1 - C(3,2)/C(4,2) = 1 - 3/6.
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    # 4 samples, 2 right, k = 2: 1 - C(2,2)/C(4,2) = 5/6.
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)
    assert pass_at_k(8, 0, 8) == 0.0
    assert pass_at_k(8, 1, 8) == 1.0  # every sample drawn: the right one is among them
    for n, c, k in ((16, 3, 5), (10, 4, 7)):
        assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 1)
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 0)


def test_group_spread_exercise_checks_the_formula():
    # p = 0.1, G = 8: 1 - 0.1^8 - 0.9^8 = 0.56953...
    assert exercises.check_group_spread(0.5695, p=0.1, group_size=8) is True
    assert exercises.check_group_spread(0.43, p=0.1, group_size=8) is False  # 0.9^8: the all-wrong share itself
    assert exercises.check_group_spread(None, p=0.1, group_size=8) is None


def test_group_signal_unbiased_hand_computed():
    # 1 right of 16, G = 8: every group of 8 without the right sample is all wrong, C(15, 8)/C(16, 8) = 1/2
    # of them, none is all right: 0.5. The plug-in p = 1/16 gives 1 − (1/16)^8 − (15/16)^8 = 0.403.
    assert regime.group_signal_unbiased(1, 16, 8) == pytest.approx(0.5)
    assert regime.group_signal_probability(1 / 16, 8) == pytest.approx(0.4033, abs=1e-4)
    # 2 right of 4, G = 2: of the 6 pairs, 4 hold one right and one wrong -> 2/3 (plug-in: 1/2)
    assert regime.group_signal_unbiased(2, 4, 2) == pytest.approx(2 / 3)
    assert regime.group_signal_unbiased(0, 16, 8) == 0.0 and regime.group_signal_unbiased(16, 16, 8) == 0.0
    with pytest.raises(ValueError):
        regime.group_signal_unbiased(1, 4, 5)  # no group of 5 from 4 samples


def test_group_signal_unbiased_is_unbiased():
    """Its mean over k ~ Binomial(n, p) is the true chance 1 − p^G − (1 − p)^G (exactly, by enumeration);
    the plug-in's mean is below it."""
    n, g = 16, 8
    for p in (0.02, 1 / 16, 0.3, 0.9):
        weights = [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]
        unbiased = sum(w * regime.group_signal_unbiased(k, n, g) for k, w in enumerate(weights))
        plug_in = sum(w * regime.group_signal_probability(k / n, g) for k, w in enumerate(weights))
        assert unbiased == pytest.approx(regime.group_signal_probability(p, g), abs=1e-12)
        assert plug_in < unbiased


def test_difficulty_reaches_the_text_game_only():
    small = collect_transitions(("textgame", "phone"), 2, seed=0, difficulty="tiny")
    full = collect_transitions(("textgame", "phone"), 2, seed=0)
    game_small = [t for t in small if t.env == "textgame"]
    game_full = [t for t in full if t.env == "textgame"]
    assert all('"lamp"' in t.state for t in game_small)
    assert [t.state for t in game_small] != [t.state for t in game_full]
    assert [t.state for t in small if t.env == "phone"] == [t.state for t in full if t.env == "phone"]


@pytest.fixture(scope="module")
def tiny_level(tmp_path_factory):
    """A 'tiny'-level world model at the smallest sizes (a few seconds)."""
    profile = get_profile("smoke", episodes=8, epochs=0.2)
    root = tmp_path_factory.mktemp("runs")
    return profile, root, regime.level_world_model(profile, "tiny", root)


def test_level_world_model_is_built_once_and_knows_its_level(tiny_level):
    profile, root, run = tiny_level
    assert run.info["difficulty"] == "tiny" and run.info["envs"] == ["textgame"]
    again = regime.level_world_model(profile, "tiny", root)
    assert again.sft is None  # loaded, not trained again
    assert [t.state for t in again.splits["test"]] == [t.state for t in run.splits["test"]]
    # The same folder asked for as another level: a clear refusal, not a silently wrong model.
    with pytest.raises(ValueError, match="difficulty tiny"):
        build.ensure_world_model(profile, root / regime.LEVELS_FOLDER / "tiny" / "world_model", envs=("textgame",))
    with pytest.raises(ValueError, match="difficulty must be one of"):
        build.build_world_model(profile, root / "other", envs=("textgame",), difficulty="huge")


def test_measure_level_rows_and_summaries_agree(tiny_level):
    profile, _, run = tiny_level
    sizes = replace(RLVR[profile.name].regime, eval_samples=4, max_new_tokens=8)
    transitions = [t for t in run.splits["train"] if t.env == "textgame"][:6]
    measured = regime.measure_level(run.model, run.tokenizer, transitions, sizes)
    rows = measured["rows"]
    assert len(rows) == len(transitions)
    assert all(0 <= r["right"] <= r["n"] == 4 for r in rows)
    for part in ("changed", "unchanged"):
        if part not in measured:
            continue
        summary = measured[part]
        assert len(summary["pass_at"]) == 4
        # unbiased pass@1 is the mean share of right samples; pass@k never falls with k
        assert summary["pass_at"][0] == pytest.approx(summary["sampled"])
        assert all(a <= b + 1e-12 for a, b in zip(summary["pass_at"], summary["pass_at"][1:]))


def test_level_experiment_trains_and_reports_per_seed_gains(tiny_level):
    profile, root, run = tiny_level
    sizes = with_grpo(replace(RLVR[profile.name].regime, eval_changed=2, eval_unchanged=1, eval_samples=2, max_new_tokens=8),
                      max_steps=1, max_completion_length=8)
    result = regime.level_experiment(profile, "tiny", [0, 1], root, sizes, progress=lambda line: None)
    assert [r["seed"] for r in result["runs"]] == [0, 1]
    assert all(r["steps"] == 1 for r in result["runs"])
    for key in regime.GAIN_KEYS:
        assert result["gain"][key]["of"] == 2
    # The gain is after − before of the same transitions.
    first = result["runs"][0]
    assert first["gain"]["sampled"] == pytest.approx(first["after"]["changed"]["sampled"]
                                                      - result["before"]["changed"]["sampled"])
    # A second call with other settings does not resume the first one's checkpoints.
    other = regime.level_experiment(profile, "tiny", [0], root, replace(sizes, reward="task_specific"),
                                    progress=lambda line: None, before=result["before"])
    assert other["before"] is result["before"]
    folders = sorted(p.name for p in (root / "02_regime" / "tiny").iterdir())
    assert any(name.startswith(f"rl_{sizes.reward}_") for name in folders)
    assert any(name.startswith("rl_task_specific") for name in folders)


def test_generation_budget_is_the_longest_true_diff_plus_a_margin(tiny_level):
    profile, _, run = tiny_level
    longest = max(len(run.tokenizer(t.diff)["input_ids"]) for split in run.splits.values() for t in split
                  if t.env == "textgame")
    wide = with_grpo(replace(RLVR[profile.name].regime, max_new_tokens=10_000), max_completion_length=10_000)
    fitted = regime.fit_generation_lengths(wide, run)
    assert fitted.grpo.max_completion_length == fitted.max_new_tokens == longest + regime.GENERATION_MARGIN
    # never longer than asked for
    narrow = with_grpo(replace(wide, max_new_tokens=6), max_completion_length=5)
    assert regime.fit_generation_lengths(narrow, run).grpo.max_completion_length == 5
    assert regime.fit_generation_lengths(narrow, run).max_new_tokens == 6


def test_run_jobs_keeps_job_order_and_shares_the_cores():
    import torch

    from wmkit.core.parallel import run_jobs, spread_workers, threads_per_worker

    jobs = [(dict, {"job": i}) for i in range(3)]
    seen = []
    assert run_jobs(jobs, workers=1, on_done=lambda i, r: seen.append(i)) == [{"job": i} for i in range(3)]
    assert seen == [0, 1, 2]
    # In worker processes: results in job order, each worker limited to its share of the cores.
    assert run_jobs([(torch.get_num_threads, {})] * 2, workers=2) == [threads_per_worker(2)] * 2
    # one job more than workers: all at once, each with the threads of the workers asked for
    assert spread_workers(3, 2) == 3 and spread_workers(6, 2) == 2 and spread_workers(1, 2) == 1
    # and as quiet as the notebook's kernel: a worker's stderr lands in the notebook. One pool of three
    # different jobs checks the order, the threads and the quiet at once (each pool spawns processes
    # that import torch: seconds each).
    from transformers.utils.logging import is_progress_bar_enabled

    mixed = [(dict, {"job": 0}), (torch.get_num_threads, {}), (is_progress_bar_enabled, {})]
    assert run_jobs(mixed, workers=2) == [{"job": 0}, threads_per_worker(2), False]
    with pytest.raises(ValueError, match="workers"):
        run_jobs(jobs, workers=0)


def test_level_experiments_share_one_pool_and_one_mle_measurement(tiny_level):
    profile, root, _ = tiny_level
    sizes = with_grpo(replace(RLVR[profile.name].regime, eval_changed=2, eval_unchanged=1, eval_samples=2, max_new_tokens=8),
                      max_steps=1, max_completion_length=8)
    lines = []
    exact, lenient = regime.level_experiments(
        profile, root, [{"level": "tiny", "seeds": [0], "sizes": sizes},
                        {"level": "tiny", "seeds": [0], "sizes": replace(sizes, reward="binary")}],
        progress=lines.append, workers=2)
    # one MLE measurement for both (same level and evaluation sizes), one RL run each, in spec order
    assert lenient["before"] is exact["before"]
    assert sum(line.startswith("[tiny] MLE") for line in lines) == 1
    assert exact["sizes"]["reward"] == "exact" and lenient["sizes"]["reward"] == "binary"
    assert [len(r["runs"]) for r in (exact, lenient)] == [1, 1]
    assert [r["runs"][0]["steps"] for r in (exact, lenient)] == [1, 1]


def test_exact_reward_checks_what_the_binary_check_leaves_out():
    from wmkit.envs import textgame
    from wmkit.core.world_model_rl import binary_reward, exact_reward

    t = next(t for t in textgame.collect_transitions(3, seed=0, difficulty="tiny") if t.changed and "drawer" in t.diff)
    renamed = t.diff.replace('"name": "drawer"', '"name": "lamp"')  # right properties, wrong name
    assert renamed != t.diff
    columns = {"env": ["textgame"] * 3, "state": [t.state] * 3, "next_state": [t.next_state] * 3}
    completions = [t.diff, renamed, "not json"]
    assert exact_reward(completions, **columns) == [1.0, 0.0, 0.0]
    assert binary_reward(completions, **columns) == [1.0, 1.0, 0.0]  # RLVR-World's check: names unchecked


def test_regime_specs_give_contrast_levels_their_budget_and_measure_the_working_level_there():
    sizes = with_grpo(replace(RLVR["cpu"].regime, levels=("tiny", "small", "full"), contrast_steps=60), max_steps=120)
    working, small, full = regime.regime_specs(sizes)
    assert working["level"] == "tiny" and working["sizes"].grpo.max_steps == 120 and working["measure_at"] == [60]
    assert [s["sizes"].grpo.max_steps for s in (small, full)] == [60, 60]
    assert len(working["seeds"]) == sizes.seeds and len(small["seeds"]) == sizes.other_level_seeds
    # without a contrast budget every level gets the same steps and nothing extra is measured
    same = regime.regime_specs(replace(sizes, contrast_steps=None))
    assert [s["sizes"].grpo.max_steps for s in same] == [120] * 3 and same[0]["measure_at"] == []
    with pytest.raises(ValueError, match="contrast_steps must be above 0"):
        check_sizes(replace(sizes, contrast_steps=0))


def test_a_run_is_also_measured_at_an_earlier_step_from_its_checkpoint(tiny_level, monkeypatch):
    profile, root, run = tiny_level
    sizes = with_grpo(replace(RLVR[profile.name].regime, eval_changed=2, eval_unchanged=1, eval_samples=2, max_new_tokens=8),
                      max_steps=2, max_completion_length=8, learning_rate=0.05, num_generations=4)

    # A model this small never predicts a next state right, so every reward would be 0 and no step
    # would update; a reward on the completion's length has spread in every group.
    def length_reward(completions, **kwargs):
        return [float(len(str(c))) for c in completions]

    monkeypatch.setattr(regime.rl, "reward_functions", lambda *args, **kwargs: [length_reward])
    result = regime.level_experiments(profile, root, [{"level": "tiny", "seeds": [0], "sizes": sizes,
                                                       "measure_at": [1]}], progress=lambda line: None,
                                      workers=1)[0]
    seed_run = result["runs"][0]
    assert set(seed_run["after_at"]) == {"1"} and set(result["gain_at"]) == {"1"}
    # the step-1 gain is that checkpoint's measurement minus the MLE model's, on the same transitions
    step1 = regime.gain_at_budget(result, 1)
    assert step1["gain"]["sampled"]["values"] == [pytest.approx(seed_run["after_at"]["1"]["changed"]["sampled"]
                                                                - result["before"]["changed"]["sampled"])]
    assert regime.gain_at_budget(result, 2)["gain"] is result["gain"]
    with pytest.raises(KeyError, match="not measured after 3 steps"):
        regime.gain_at_budget(result, 3)
    # the checkpoint is the model after one step: neither the start nor the end
    folder = root / "02_regime" / "tiny" / regime.rl_folder_name(sizes, 0)
    start = dict(run.model.named_parameters())
    after_one = dict(regime.checkpoint_model(run, folder, 1).named_parameters())
    after_two = dict(regime.checkpoint_model(run, folder, 2).named_parameters())
    assert any(not torch.equal(p, start[name]) for name, p in after_one.items()), "step 1 did not update"
    assert any(not torch.equal(p, after_one[name]) for name, p in after_two.items()), "step 2 did not update"
    with pytest.raises(FileNotFoundError, match="no checkpoint of step 5"):
        regime.checkpoint_model(run, folder, 5)


def test_settings_are_chosen_on_validation_and_the_kl_term_reaches_trl(tiny_level, monkeypatch):
    profile, root, run = tiny_level
    sizes = replace(RLVR[profile.name].regime, eval_changed=2, eval_unchanged=1)
    # "val" measures transitions of the validation episodes, "test" those of the test episodes
    _, on_val = regime._level_data(run, sizes, "val")
    _, on_test = regime._level_data(run, sizes, "test")
    assert on_val and {id(t) for t in on_val} <= {id(t) for t in run.splits["val"]}
    assert on_test and {id(t) for t in on_test} <= {id(t) for t in run.splits["test"]}
    with pytest.raises(ValueError, match="split must be 'val' or 'test'"):
        regime._level_data(run, sizes, "train")
    # beta reaches the GRPO config and names the run's folder (a KL run never resumes a KL-free one)
    seen = {}

    def fake_train(model, tokenizer, transitions, config):
        seen["beta"] = config.beta
        raise RuntimeError("stop here")

    monkeypatch.setattr(regime.rl, "train_rlvr", fake_train)
    with pytest.raises(RuntimeError, match="stop here"):
        regime.rl_run(run, run.splits["train"], with_grpo(sizes, beta=0.04), root / "kl", seed=0)
    assert seen["beta"] == 0.04
    assert "_beta0.04_" in regime.rl_folder_name(with_grpo(sizes, beta=0.04), 0)
    assert "beta" not in regime.rl_folder_name(with_grpo(sizes, beta=0.0), 0)
    with pytest.raises(ValueError, match="grpo.beta must not be negative"):
        check_sizes(with_grpo(sizes, beta=-0.1))


def test_ablation_arms_change_one_setting_each_and_share_the_recipe_run():
    sizes = RLVR["cpu"].regime
    specs = regime.ablation_specs(sizes, seed=2)
    assert set(specs) == {"reward_exact", "reward_binary", "reward_task_specific", "reward_continuous", "group_4"}
    for name, spec in specs.items():
        arm = spec["sizes"]
        assert spec["level"] == sizes.levels[0] and spec["seeds"] == [2]
        changed = {f for f, a, b in (("reward", arm.reward, sizes.reward),
                                     ("num_generations", arm.grpo.num_generations, sizes.grpo.num_generations)) if a != b}
        assert with_grpo(replace(arm, reward=sizes.reward), num_generations=sizes.grpo.num_generations) == sizes
        assert changed == ({"num_generations"} if name == "group_4" else set() if name == "reward_exact" else {"reward"})
    # the recipe's arm is the regime study's run: the same folder, so it is trained once
    assert regime.rl_folder_name(specs["reward_exact"]["sizes"], 2) == regime.rl_folder_name(sizes, 2)


def test_gains_take_the_seed_as_the_unit_and_never_pool_transitions_across_seeds():
    from wmkit.rlvr_world.regime import _gains

    def measured(rights):  # changed transitions with `right` exact samples of 4
        sampled = sum(rights) / (4 * len(rights))
        return {"changed": {"sampled": sampled, "reward": 0.0, "greedy": 0.0}, "unchanged": {"sampled": 0.0},
                "rows": [{"changed": True, "right": r, "n": 4} for r in rights]}

    before = measured([0, 0, 0])
    seeds = [measured([1, 2, 0]), measured([3, 2, 1])]
    gains = _gains(before, seeds)
    per_transition = gains["gain_per_transition"]
    assert per_transition["n"] == 3  # three transitions, not 3 × 2 pooled values
    assert per_transition["values"] == pytest.approx([0.5, 0.5, 0.125])  # each averaged over the seeds first
    assert gains["gain"]["sampled"]["values"] == pytest.approx([0.25, 0.5])  # one mean per seed


def test_each_benchmark_seed_starts_from_its_own_mle_model(monkeypatch, tmp_path):
    """The benchmark's RLVR seeds each build their own MLE world model (its own initialisation and data
    split), beside the notebooks' seed-0 model, so a seed's spread holds the MLE model's variance too."""
    built = []
    monkeypatch.setattr(regime, "ensure_world_model", lambda profile, folder, seed=0, **kw: built.append((folder, seed)))
    monkeypatch.setattr(build, "ensure_world_model", lambda profile, folder, seed=0, **kw: built.append((folder, seed)))
    profile = get_profile("smoke")
    regime.level_world_model(profile, "tiny", tmp_path)
    regime.level_world_model(profile, "tiny", tmp_path, seed=7)
    build.series_world_model(profile, tmp_path, 7)
    assert built == [(tmp_path / "levels" / "tiny" / "world_model", 0),
                     (tmp_path / "levels" / "tiny" / "world_model_seed7", 7),
                     (tmp_path / "01_build_world_model" / "world_model_seed7", 7)]
    specs = regime.ablation_specs(bench_rlvr_sizes(profile).regime, 7, world_model_seed=7)
    assert {spec["world_model_seed"] for spec in specs.values()} == {7}
