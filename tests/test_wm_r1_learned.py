"""The settings world's learned world model (wmkit.wm_r1.learned): its training data, a tiny model
trained and reloaded, its predictions decoded, and WM-R1 trained inside it beside the simulator."""
import math
from dataclasses import replace

import pytest

from wmkit.core.models import TinyModelConfig
from wmkit.envs import phone, phone_edit
from wmkit.profiles import get_profile
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import ladder as wm_ladder
from wmkit.wm_r1 import learned
from wmkit.wm_r1.config import SETTINGS_WORLD, WM_R1

TINY = TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, vocab_size=512,
                       max_positions=2048)


def test_reference_neighbourhood_tries_every_action_at_every_reference_state():
    transitions = phone.reference_neighbourhood(3, seed=5, templates=["setting_on"], status_bar=True)
    tasks = phone.sample_tasks(3, 5, ["setting_on"])
    for k, task in enumerate(tasks):
        path = [a for a in phone.reference_solution(task) if a != "finished()"]
        mine = [t for t in transitions if t.episode == f"expand-5-{k}"]
        assert sorted({t.step for t in mine}) == list(range(len(path) + 1))
        env = phone.PhoneEnv(max_steps=100)
        env.reset(task=phone.with_status_bar(task))
        for step, reference in enumerate(path + [None]):
            here = [t for t in mine if t.step == step]
            assert {t.state for t in here} == {env.observation()}
            valid = env.valid_actions()
            assert [t.action for t in here][:len(valid)] == valid and len(here) == len(valid) + 2
            assert all(phone.apply_diff(t.state, t.diff) == t.next_state for t in here)
            if reference is not None:
                env.step(reference)
    assert transitions == phone.reference_neighbourhood(3, seed=5, templates=["setting_on"], status_bar=True)


def test_edit_transitions_decode_to_the_simulators_next_screens():
    sizes = replace(WM_R1["smoke"].learned, episodes=8, reference_neighbourhood=2)
    data, kept_plain = learned.edit_transitions(sizes, 0, SETTINGS_WORLD)
    rows = [t for split in data.values() for t in split]
    assert kept_plain == 0 and len(rows) > 40
    assert any("from-bar" in t.diff for t in rows) and any("flipped" in t.diff for t in rows)
    for t in rows:
        assert phone.apply_diff(t.state, phone_edit.decode_edit(t.state, t.diff)) == t.next_state


def test_an_edit_world_model_trains_reloads_and_predicts_screens(tmp_path):
    sizes = replace(WM_R1["smoke"].learned, model=TINY, episodes=4, reference_neighbourhood=1,
                    epochs=1.0)
    model, tokenizer, info = learned.train_edit_world_model(sizes, 0, SETTINGS_WORLD, tmp_path / "wm")
    assert info["steps"] > 0 and info["kept_plain"] == 0 and info["transitions"]["train"] > 0
    assert (tmp_path / "wm" / phone_edit.MARKER).exists()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    _, _, again = learned.train_edit_world_model(sizes, 0, SETTINGS_WORLD, tmp_path / "wm")  # loaded, not retrained
    assert again == info
    source = learned.edit_world_model_source(model, tokenizer, max_new_tokens=16)
    task = phone.with_status_bar(phone.sample_tasks(1, 3, ["setting_on"])[0])
    env = phone.PhoneEnv(max_steps=10)
    screen = env.reset(task=task)
    predicted = source.predict([(screen, "open_app(settings)"), (screen, "tap(1)")])
    assert len(predicted) == 2 and all(isinstance(p, str) and p for p in predicted)  # a screen, never a raise
    assert all(torch_equal(p, before[n]) for n, p in model.named_parameters())  # predicting does not train


def torch_equal(a, b):
    import torch

    return torch.equal(a.detach(), b)


def test_wm_r1_trains_inside_the_learned_world_model_beside_the_simulator(tmp_path):
    sizes = WM_R1["smoke"]
    sizes = replace(sizes, policy=TINY, max_steps=2, max_turn_tokens=8, lora=False,
                    grpo=replace(sizes.grpo, max_completion_length=200),
                    learned=replace(sizes.learned, model=TINY, episodes=4, reference_neighbourhood=1),
                    learned_world=replace(sizes.learned_world, eval_tasks=4, fidelity_episodes=2, sft_tasks=8,
                                          grpo=replace(sizes.learned_world.grpo, max_steps=1, max_completion_length=200)))
    run = wm_ladder.run_learned_world_model(get_profile("smoke"), 0, sizes=sizes, out_dir=tmp_path, log=lambda line: None)
    assert set(run["rungs"]) == {"0", "learned"}
    assert run["rungs"]["learned"]["simulator_steps"] == 0  # trained inside the learned model only
    assert run["rungs"]["learned"]["fidelity"] is run["learned_world_model"]
    assert run["learned_world_model"]["reference"]["n"] == 2
    assert run["world_model_training"]["steps"] > 0
    judged = run["rungs"]["learned"]["trained_policy_judging"]  # the trained policy, judged inside the model
    assert set(judged) == {"greedy", "sampled"} and judged["greedy"]["n"] == judged["sampled"]["n"] == 2
    exact = judged["sampled"]["exact"]  # a tiny random policy may make no valid step: then NaN
    assert (judged["sampled"]["transitions"] == 0 and math.isnan(exact)) or 0 <= exact <= 1
    assert "trained_policy_judging" not in run["rungs"]["0"]
    blind = run["instruction_blind"]
    assert blind["success"] == max(blind["per_switch"].values()) == blind["per_switch"][blind["switch"]]
    for result in (run["start"], *run["rungs"].values()):
        assert set(result["greedy"]["per_template"]) <= set(SETTINGS_WORLD)
    # every task of this ladder is on the status-bar phone
    assert all(t.initial.get("status_bar") for t in wm_ladder.ladder_eval_tasks(wm_ladder.learned_world_sizes(sizes)))


def test_instruction_blind_success_is_the_share_of_tasks_whose_reference_taps_that_switch():
    """A single-switch task is solved by open Settings, tap(j), finish; a fixed tap(k) solves
    exactly the tasks whose j is k (tapping another switch changes the wrong setting)."""
    tasks = [t for t in phone.sample_tasks(60, 3, ["setting_on", "setting_off"])
             if len(phone.reference_solution(t)) == 3]
    taps = [phone.parse_action(phone.reference_solution(t)[1]) for t in tasks]
    assert len(tasks) >= 20 and all(a[0] == "tap" for a in taps)
    blind = wm_eval.instruction_blind_success(tasks, switches=range(1, 8))
    for k in range(1, 8):
        assert blind["per_switch"][k] == pytest.approx(sum(a[1] == k for a in taps) / len(tasks))
    assert blind["success"] == max(blind["per_switch"].values())
    assert blind["switch"] == min(k for k, v in blind["per_switch"].items() if v == blind["success"])
    with pytest.raises(ValueError, match="at least one task"):
        wm_eval.instruction_blind_success([])


def test_replayed_success_replays_the_real_actions_only():
    task = phone.sample_tasks(1, 3, ["setting_on"])[0]
    path = phone.reference_solution(task)
    right = ag.Episode(task=task, prompt="", prompt_ids=[], actions=[path[0], "not an action", *path[1:]])
    wrong = ag.Episode(task=task, prompt="", prompt_ids=[], actions=path[:1] + ["finished()"])
    assert wm_eval.replayed_success(right) and not wm_eval.replayed_success(wrong)


def test_judging_by_class_by_hand():
    # 100 episodes: 20 real successes of which 15 judged so, 80 real failures of which 10 judged successes
    judge = {"real_success": 0.20, "true_positive": 0.15, "false_positive": 0.10}
    out = wm_eval.judging_by_class(judge)
    assert out["success_judged_on_real_successes"] == pytest.approx(0.75)
    assert out["failure_judged_on_real_failures"] == pytest.approx(70 / 80)
    assert out["precision"] == pytest.approx(0.6)
    empty = wm_eval.judging_by_class({"real_success": 0.0, "true_positive": 0.0, "false_positive": 0.0})
    assert math.isnan(empty["success_judged_on_real_successes"]) and math.isnan(empty["precision"])


def test_learned_world_sizes_refuses_a_profile_without_one():
    sizes = WM_R1["cpu"]
    assert wm_ladder.learned_world_sizes(sizes).ladder.status_bar
    with pytest.raises(ValueError, match="no learned world model"):
        wm_ladder.learned_world_sizes(replace(sizes, learned=None))
