"""WM-R1's ablations inside the learned settings world (wmkit.wm_r1.ablations): what each arm changes,
the first/last-quarter means, and one tiny seed of every arm."""
from dataclasses import replace

import pytest

from wmkit.core.models import TinyModelConfig
from wmkit.profiles import get_profile
from wmkit.wm_r1.config import SETTINGS_WORLD, wm_r1_sizes
from wmkit.wm_r1 import ablations

TINY = TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, vocab_size=512,
                       max_positions=2048)


def test_each_arm_changes_one_thing_of_wm_r1s_run():
    sizes = wm_r1_sizes(get_profile("cpu"))
    assert ablations.arm_overrides("wm_r1", sizes) == {}
    no_imagine = ablations.arm_overrides("no_imagine", sizes)
    # the authors' no-thinking ablation: no call reaches the world model, the call term off
    assert no_imagine["imagine"] is False and no_imagine["reward"].gamma == 0.0
    assert no_imagine["reward"].beta == 0.5 and no_imagine["reward"].max_steps == sizes.max_steps
    no_length = ablations.arm_overrides("no_length", sizes)["reward"]
    assert (no_length.alpha, no_length.beta, no_length.gamma) == (1.0, 0.0, 0.1)
    with pytest.raises(ValueError, match="unknown trained arm"):
        ablations.arm_overrides("best_of_k", sizes)


def test_quarter_means_of_a_history():
    history = [{"wm_calls": c} for c in (4, 4, 3, 3, 2, 2, 1, 1)]  # quarters of 2 steps
    assert ablations.quarter_means(history, "wm_calls") == [4.0, 1.0]
    assert ablations.quarter_means([{"x": 2.0}], "x") == [2.0, 2.0]  # one step: both ends are it


@pytest.mark.slow
def test_every_arm_runs_from_one_start_inside_one_learned_world_model(tmp_path):
    sizes = wm_r1_sizes(get_profile("smoke"))
    sizes = replace(sizes, policy=TINY, max_steps=2, max_turn_tokens=8, grpo=replace(sizes.grpo, max_completion_length=600),
                    lora=False, best_of_k=2,
                    learned=replace(sizes.learned, model=TINY, episodes=4, reference_neighbourhood=1),
                    learned_world=replace(sizes.learned_world, grpo=replace(sizes.learned_world.grpo, max_steps=2),
                                          eval_tasks=4, fidelity_episodes=2, sft_tasks=8))
    run = ablations.run_learned_ablations(get_profile("smoke"), 100, sizes=sizes, out_dir=tmp_path,
                                          log=lambda line: None, no_imagine_start=True)
    assert set(run["arms"]) == set(ablations.ABLATION_ARMS)
    for arm in ablations.TRAINED_ARMS:
        entry = run["arms"][arm]
        assert len(entry["history"]) == 2  # the same number of updates for every arm
        assert len(entry["wm_calls_first_last_quarter"]) == 2 and entry["param_change"] >= 0
        assert set(entry["greedy"]["per_template"]) <= set(SETTINGS_WORLD)
    # without imagination no call reaches the world model, in training and in the evaluation
    assert all(h["wm_calls"] == 0 for h in run["arms"]["no_imagine"]["history"])
    assert run["arms"]["no_imagine"]["greedy"]["wm_calls"] == run["arms"]["no_imagine"]["sampled"]["wm_calls"] == 0
    # its own start, the same SFT without imagined turns (episodes up to 800 tokens keep the imagined ones):
    # another model from the same initialisation
    assert run["no_imagine_start"]["param_difference"] > 0
    best = run["arms"]["best_of_k"]
    assert best["k"] == 2 and 0 <= best["success"] <= 1
    assert run["world_model_training"]["steps"] > 0 and set(run["timings"]) >= {"world_model", "sft", "wm_r1"}
    with pytest.raises(ValueError, match="unknown arm"):
        ablations.run_learned_ablations(get_profile("smoke"), 100, sizes=sizes, out_dir=tmp_path, arms=("nope",))
