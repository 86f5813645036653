"""The noisy-oracle world model (wmkit.wm_r1.oracle): p = 0 is the simulator, p > 0 is seeded noise."""
from __future__ import annotations

import random

import pytest
import torch
from test_agent import ScriptedPolicy  # the agent tests' scripted policy and character tokenizer

from wmkit.envs import phone
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import experiment as wm_r1
from wmkit.wm_r1 import ladder as wm_ladder
from wmkit.wm_r1 import tasks as wm_tasks
from wmkit.wm_r1.oracle import NoisyOracle, corrupt_screen
from wmkit.wm_r1.config import WM_R1


def _tasks(n=12, seed=0):
    tasks, seen = [], set()
    for task in phone.sample_tasks(4 * n, seed):
        if task.instruction not in seen and len(tasks) < n:
            seen.add(task.instruction)
            tasks.append(task)
    return tasks


def _scripts(tasks, seed=0, imagine=True):
    """Per task: the reference with a few random valid actions and imagined calls mixed in,
    and for every other task a finished() halfway (some episodes fail)."""
    rng = random.Random(seed)
    scripts = {}
    for k, task in enumerate(tasks):
        env = phone.PhoneEnv(max_steps=10_000)
        env.reset(task=task)
        turns = []
        for action in phone.reference_solution(task):
            if action == "finished()" and k % 2:
                break
            if imagine and rng.random() < 0.3:
                turns.append(ag.format_turn("x.", imagine=action))
            if rng.random() < 0.2:
                detour = rng.choice([a for a in env.valid_actions() if a != "finished()"])
                turns.append(ag.format_turn("d.", action=detour))
                turns.append(ag.format_turn("b.", action="back()"))
            turns.append(ag.format_turn("go.", action=action))
        turns.append(ag.format_turn("end.", action="finished()"))
        scripts[task.instruction] = turns
    return scripts


def _play(source, tasks, scripts, imaginer):
    policy = ScriptedPolicy(scripts)
    episodes = ag.run_episodes(policy, tasks, source, imaginer=imaginer, config=ag.AgentConfig(max_steps=30))
    return [(policy.tokenizer.decode(e.completion_ids), e.success, e.steps, e.wm_calls) for e in episodes], episodes


def test_p_zero_is_exactly_the_simulator():
    tasks = _tasks()
    scripts = _scripts(tasks)
    oracle = NoisyOracle(p=0.0)
    imagined_by_oracle, _ = _play(oracle.episode_source(), tasks, scripts, imaginer=oracle)
    # the reference: the simulator, its imagined calls answered by the true next screen
    truth_imaginer = NoisyOracle(p=0.0)
    real, _ = _play(ag.SimulatorSource(), tasks, scripts, imaginer=truth_imaginer)
    assert imagined_by_oracle == real
    assert {s for _, s, _, _ in real} == {True, False}  # both outcomes are covered
    assert sum(w for *_, w in real) > 0 and oracle.corrupted == 0 and oracle.flipped == 0


def test_corruption_is_seeded_deterministic_and_at_rate_p():
    tasks = _tasks(24, seed=1)
    scripts = _scripts(tasks, seed=1)
    runs = []
    for _ in range(2):
        oracle = NoisyOracle(p=0.3, seed=7)
        source = oracle.episode_source()
        runs.append((_play(source, tasks, scripts, imaginer=oracle)[0], source.corrupted, source.transitions))
    assert runs[0] == runs[1]
    other = NoisyOracle(p=0.3, seed=8)
    assert _play(other.episode_source(), tasks, scripts, imaginer=other)[0] != runs[0][0]
    _, corrupted, transitions = runs[0]
    assert transitions > 100 and 0.18 < corrupted / transitions < 0.42


def test_flip_and_corrupt_everything_at_p_one():
    tasks = _tasks()
    scripts = _scripts(tasks, imagine=False)
    real, _ = _play(ag.SimulatorSource(), tasks, scripts, imaginer=None)
    oracle = NoisyOracle(p=1.0)
    source = oracle.episode_source()
    noisy, _ = _play(source, tasks, scripts, imaginer=oracle)
    assert [s for _, s, _, _ in noisy] == [not s for _, s, _, _ in real]
    assert source.corrupted == source.transitions > 0
    assert NoisyOracle(p=1.0, flip_success=False).episode_source().flip_success is False


@pytest.mark.parametrize("kind", ["element", "value"])
def test_corrupt_screen_changes_one_line(kind):
    task = _tasks(1)[0]
    env = phone.PhoneEnv()
    screens = [env.reset(task=task)]
    for action in phone.reference_solution(task)[:-1]:
        screens.append(env.step(action).observation)
    for k, screen in enumerate(screens):
        bad = corrupt_screen(screen, kind, ("t", k))
        assert bad != screen and bad == corrupt_screen(screen, kind, ("t", k))
        changed = [a for a, b in zip(screen.split("\n"), bad.split("\n")) if a != b]
        assert len(changed) == 1 and len(bad.split("\n")) == len(screen.split("\n"))


def test_world_model_error_of_the_oracle_through_the_kits_measure():
    tasks = _tasks()
    _, episodes = _play(ag.SimulatorSource(), tasks, _scripts(tasks), imaginer=NoisyOracle(0.0))
    exact = NoisyOracle(p=0.0)
    assert exact.prime(episodes) > 0
    result = wm_eval.world_model_error(exact, episodes)
    assert result["exact"] == 1.0 and exact.unresolved == 0
    noisy = NoisyOracle(p=0.5, seed=3)
    noisy.prime(episodes)
    assert 0.25 < wm_eval.world_model_error(noisy, episodes)["exact"] < 0.75


def test_unprimed_predict_is_unresolved_and_screens_alone_are_refused():
    oracle = NoisyOracle(p=0.0)
    screen = ag.initial_screen(_tasks(1)[0])
    assert oracle.predict([(screen, "tap(1)")]) == [screen] and oracle.unresolved == 1
    with pytest.raises(TypeError):
        oracle.predictor([(screen, "tap(1)")])
    with pytest.raises(ValueError):
        NoisyOracle(p=1.5)


def test_wm_r1_in_the_exact_oracle_is_grpo_on_the_simulator(tmp_path):
    import copy
    from dataclasses import replace

    from wmkit.core.models import TinyModelConfig
    from wmkit.wm_r1 import method

    sizes = replace(WM_R1["smoke"], policy=TinyModelConfig(
        hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, vocab_size=512, max_positions=2048))
    train, _ = wm_tasks.task_templates(3)
    tasks = wm_tasks.unique_tasks(8, 0, train)
    model, tokenizer = wm_r1.build_policy(sizes, tasks, seed=0)
    runs = {}
    for transitions in ("world_model", "simulator"):
        config = method.WMR1Config(output_dir=str(tmp_path / transitions), transitions=transitions, max_steps=2,
                                   num_generations=2, prompts_per_step=2, max_episode_steps=2, max_turn_tokens=8,
                                   show_progress=False)
        result = method.train_wm_r1(config, copy.deepcopy(model), tokenizer, tasks, NoisyOracle(0.0))
        runs[transitions] = ([{k: v for k, v in h.items() if k != "seconds"} for h in result.history],
                             [row.get("loss") for row in result.log_history], result.simulator_steps)
    assert runs["world_model"][:2] == runs["simulator"][:2]
    assert runs["world_model"][2] == 0  # the oracle is a world model: no simulator steps counted


# --------------------------------------------------------------------------- the fidelity ladder


def test_fidelity_of_the_oracle_is_perfect_at_zero_and_falls_with_p():
    """world_model_fidelity on the oracle: p = 0 is exact and agrees on every judgment; at p = 1
    every shown screen is corrupted and every judgment flipped (agreement 0)."""
    tasks = _tasks(8)
    policy = ScriptedPolicy(_scripts(tasks, imagine=False))
    episodes = ag.run_episodes(policy, tasks, ag.SimulatorSource(), config=ag.AgentConfig(max_steps=10))
    # judge_agreement plays the same scripted policy inside the oracle
    exact = wm_eval.world_model_fidelity(NoisyOracle(0.0), policy, tasks, episodes, 10)
    assert exact["exact"] == 1.0 and exact["agreement"] == 1.0 and exact["transitions"] > 0
    assert exact["false_positive"] == exact["false_negative"] == 0.0
    assert 0 < exact["real_success"] < 1  # both classes are present
    assert exact["success_judged_on_real_successes"] == exact["failure_judged_on_real_failures"] == 1.0
    wrong = wm_eval.world_model_fidelity(NoisyOracle(1.0), policy, tasks, episodes, 10)
    assert wrong["exact"] == 0.0 and wrong["agreement"] == 0.0
    assert wrong["success_judged_on_real_successes"] == wrong["failure_judged_on_real_failures"] == 0.0


def test_ladder_runs_every_rung_inside_the_oracle_only(tmp_path):
    from dataclasses import replace

    from wmkit.core.models import TinyModelConfig
    from wmkit.profiles import get_profile

    sizes = WM_R1["smoke"]
    sizes = replace(sizes, policy=TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                                                  vocab_size=512, max_positions=2048),
                    max_ref_len=3, max_steps=2, max_turn_tokens=8, lora=False, grpo=replace(sizes.grpo, max_completion_length=200),
                    ladder=replace(sizes.ladder, eval_tasks=2, fidelity_episodes=2,
                                   grpo=replace(sizes.ladder.grpo, max_steps=1, max_completion_length=200)))
    train, _ = wm_tasks.task_templates(3)
    start = wm_r1.build_policy(sizes, wm_tasks.unique_tasks(8, 0, train), seed=0)  # untrained: skip the SFT
    before = [p.detach().clone() for p in start[0].parameters()]
    run = wm_ladder.run_fidelity_ladder(get_profile("smoke"), 0, sizes=sizes, start=start, out_dir=tmp_path, log=lambda line: None)
    assert all(torch.equal(a, b) for a, b in zip(before, start[0].parameters()))  # the start is copied
    assert set(run["rungs"]) == {f"{p:g}" for p in sizes.ladder.error_rates} == {"0", "0.6"}
    exact_rung = run["rungs"]["0"]
    assert exact_rung["fidelity"]["agreement"] == 1.0
    assert exact_rung["fidelity"]["transitions"] == 0 or exact_rung["fidelity"]["exact"] == 1.0
    assert exact_rung["imagined_calls_corrupted"] == 0
    assert all(r["simulator_steps"] == 0 for r in run["rungs"].values())  # trained inside the oracle only
    for mode in ("greedy", "sampled"):
        assert 0.0 <= run["start"][mode]["success"] <= 1.0


def test_small_world_ladder_trains_and_evaluates_in_its_templates_only(tmp_path):
    from dataclasses import replace

    from wmkit.core.models import TinyModelConfig
    from wmkit.profiles import get_profile
    from wmkit.wm_r1.config import SETTINGS_WORLD

    sizes = wm_ladder.small_world_sizes(WM_R1["smoke"])
    assert sizes.ladder.templates == SETTINGS_WORLD and sizes.ladder.grpo_pool == "fresh"
    sizes = replace(sizes, policy=TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                                                  vocab_size=512, max_positions=2048),
                    max_steps=2, max_turn_tokens=8, lora=False, grpo=replace(sizes.grpo, max_completion_length=200),
                    ladder=replace(sizes.ladder, eval_tasks=6, fidelity_episodes=2,
                                   grpo=replace(sizes.ladder.grpo, max_steps=1, max_completion_length=200)))
    assert wm_ladder.ladder_world(sizes) == list(SETTINGS_WORLD)
    assert {t.template for t in wm_tasks.grpo_pool(sizes, 0, wm_ladder.ladder_world(sizes))} <= set(SETTINGS_WORLD)
    train, _ = wm_tasks.task_templates(sizes.max_ref_len)
    start = wm_r1.build_policy(sizes, wm_tasks.unique_tasks(8, 0, train), seed=0)  # untrained: skip the SFT
    run = wm_ladder.run_fidelity_ladder(get_profile("smoke"), 0, sizes=sizes, start=start, out_dir=tmp_path, log=lambda line: None)
    assert set(run["rungs"]) == {"0", "0.6"}
    for result in (run["start"], *run["rungs"].values()):
        assert set(result["greedy"]["per_template"]) <= set(SETTINGS_WORLD)  # evaluated in the settings world only


def test_ladder_world_is_every_training_template_unless_named_and_refuses_others():
    from dataclasses import replace


    sizes = WM_R1["cpu"]
    train, held = wm_tasks.task_templates(sizes.max_ref_len)
    assert wm_ladder.ladder_world(sizes) == train  # the cpu ladder: the whole phone
    bad = replace(sizes, ladder=replace(sizes.ladder, templates=("setting_on", held[0])))
    with pytest.raises(ValueError, match="not training templates"):
        wm_ladder.ladder_world(bad)
    with pytest.raises(ValueError, match="no small_world ladder"):
        wm_ladder.small_world_sizes(replace(sizes, small_world=None))


def _ladder_run(seed, start, after, exact):
    rung = {"p": 0.3, "greedy": {"success": after}, "sampled": {"success": after / 2}, "train_seconds": 1.0,
            "fidelity": {"exact": exact, "agreement": 0.7, "success_judged_on_real_successes": 0.5,
                         "failure_judged_on_real_failures": 0.8}}
    return {"seed": seed, "start": {"greedy": {"success": start}, "sampled": {"success": start / 2}},
            "rungs": {"0.3": rung}}


def test_summarize_ladder_by_hand():
    runs = [_ladder_run(0, 0.40, 0.50, 0.7), _ladder_run(1, 0.30, 0.42, 0.72), _ladder_run(2, 0.35, 0.49, 0.68)]
    summary = wm_ladder.summarize_ladder(runs)
    row = summary["rungs"]["0.3"]
    # greedy gains 0.10, 0.12, 0.14: mean 0.12, std 0.02, t(0.95, 2) = 4.3027 -> ± 0.0497
    assert row["greedy_gain"]["mean"] == pytest.approx(0.12)
    assert row["greedy_gain"]["std"] == pytest.approx(0.02)
    assert row["greedy_gain"]["ci_low"] == pytest.approx(0.12 - 4.3027 * 0.02 / 3 ** 0.5, abs=1e-4)
    assert row["greedy_verdict"] == "reproduced"
    assert row["sampled_gain"]["mean"] == pytest.approx(0.06)
    assert row["exact"]["mean"] == pytest.approx(0.70) and summary["seeds"] == [0, 1, 2]
    assert summary["start"]["greedy"]["mean"] == pytest.approx(0.35)
    assert wm_ladder.summarize_ladder([]) == {}


def test_replayed_steps_skip_what_the_agent_loop_skips_and_keep_the_simulator_before_each_action():
    task = _tasks(1)[0]
    first, second = phone.reference_solution(task)[:2]
    episode = ag.Episode(task=task, prompt="", prompt_ids=[], actions=[first, "not an action", "finished()", second])
    steps = list(ag.replayed_steps(episode, keep_states=True))
    env = phone.PhoneEnv(max_steps=10_000)
    start = env.reset(task=task)
    after_first = env.step(first).observation
    after_second = env.step(second).observation
    assert [(s, a, n) for s, a, n, _ in steps] == [(start, first, after_first), (after_first, second, after_second)]
    assert [before.step(a).observation for _, a, _, before in steps] == [after_first, after_second]
    assert all(before is None for *_, before in ag.replayed_steps(episode))
