"""WM-R1: rewards on hand-computed groups, SFT data, GRPO inside a world model without the simulator."""
from __future__ import annotations

import math
import re
import random

import pytest
import torch

from wmkit.core.models import TinyModelConfig
from wmkit.envs import phone
from wmkit.profiles import get_profile
from wmkit.rewards.wm_r1 import WMR1RewardConfig, composite_rewards, group_has_signal
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import experiment as wm_r1
from wmkit.wm_r1 import ladder as wm_ladder
from wmkit.wm_r1 import method as wm_r1_method
from wmkit.wm_r1 import tasks as wm_tasks
from wmkit.wm_r1.config import WM_R1

# --------------------------------------------------------------------------- rewards, by hand


def test_all_succeed_group():
    # p = 1, L_ref = mean(2, 4) = 3 = budget; λ = -1/3, +1/3 -> R_L = max(-0.5λ+0.5, 0.1) = 2/3, 1/3.
    # Calls 0, 2: N_ref = 1 = budget; λ = -1, +1 -> R_WM = 1.0, 0.1 (clipped).
    r = composite_rewards([1, 1], [2, 4], [0, 2], max_steps=10)
    assert r == pytest.approx([1 + 0.5 * (2 / 3) + 0.1 * 1.0, 1 + 0.5 * (1 / 3) + 0.1 * 0.1])


def test_none_succeed_group():
    # p = 0: length budget = max_steps = 10; λ = -0.7, 0 -> R_L = min(0.9λ-0.1, -0.1) = -0.73, -0.1.
    # Calls budget = n_max = 5; calls 0, 5: λ = -1, 0 -> R_WM = -1.0, -0.1.
    r = composite_rewards([0, 0], [3, 10], [0, 5], max_steps=10)
    assert r == pytest.approx([0.5 * -0.73 + 0.1 * -1.0, 0.5 * -0.1 + 0.1 * -0.1])


def test_mixed_group():
    # p = 1/2, L_ref = 4: budget = 0.5·4 + 0.5·8 = 6; success len 4: λ = -1/3 -> R_L = 2/3;
    # failure len 8: λ = 1/3 -> R_L = 0.9/3 - 0.1 = 0.2 -> min(0.2, -0.1) = -0.1.
    # Calls 1 (success), 3 (failure): N_ref = 1, budget = 0.5 + 2.5 = 3; λ = -2/3, 0 -> R_WM = 5/6, -0.1.
    r = composite_rewards([1, 0], [4, 8], [1, 3], max_steps=8)
    assert r == pytest.approx([1 + 0.5 * (2 / 3) + 0.1 * (5 / 6), 0.5 * -0.1 + 0.1 * -0.1])


def test_golden_case_length_term():
    cfg = WMR1RewardConfig(alpha=0.0, beta=1.0, gamma=0.0, max_steps=20)
    assert cfg.rewards([1, 1, 0], [3, 5, 20], [0, 0, 0]) == pytest.approx([0.839, 0.732, -0.1], abs=1e-3)


def test_all_fail_groups_carry_no_signal():
    # Equal failures: every term is the same constant, so GRPO gets no gradient from the group.
    assert not group_has_signal(composite_rewards([0] * 4, [7] * 4, [0] * 4, max_steps=7))
    assert group_has_signal(composite_rewards([0, 0, 0, 1], [7, 7, 7, 3], [0] * 4, max_steps=7))


# --------------------------------------------------------------------------- tasks and SFT data


def test_template_split_is_disjoint_and_short():
    train, held = wm_tasks.task_templates(4)
    assert train and held and not set(train) & set(held)
    for t in train + held:
        assert len(phone.reference_solution(phone.make_task(t, 0))) <= 4


def test_unique_tasks_have_distinct_prompts():
    train, _ = wm_tasks.task_templates(4)
    tasks = wm_tasks.unique_tasks(20, 0, train)
    prompts = {ag.prompt_text(t, ag.initial_screen(t)) for t in tasks}
    assert len(prompts) == len(tasks) > 5


def test_reference_episode_plays_the_reference_with_imagined_calls():
    task = phone.make_task("setting_on", 3)
    pieces = wm_tasks.reference_episode(task, imagine_rate=1.0, rng=random.Random(0))
    agent_turns = [ag.parse_turn(text) for text, mine in pieces if mine]
    real = [t.action for t in agent_turns if t.kind == "action"]
    assert real == phone.reference_solution(task)
    assert sum(t.kind == "imagine" for t in agent_turns) == len(real) - 1  # not before finished()
    assert not pieces[-1][1] is False  # ends on the agent's finished() turn


@pytest.fixture(scope="module")
def tiny_policy():
    sizes = WM_R1["smoke"]
    sizes = wm_r1.replace(sizes, policy=TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2,
                                                        intermediate_size=64, vocab_size=512, max_positions=2048))
    train, _ = wm_tasks.task_templates(3)
    tasks = wm_tasks.unique_tasks(12, 0, train)
    model, tokenizer = wm_r1.build_policy(sizes, tasks, seed=0)
    return model, tokenizer, tasks


def test_policy_tokenizer_split_words_keeps_a_contact_name_one_token_in_instruction_and_screen():
    # sizes.tokenizer_split reaches the policy's tokenizer: with "words" the name in "Open Nora's
    # contact page" and the name on the contacts list are the same single token.
    sizes = wm_r1.replace(WM_R1["smoke"], tokenizer_split="words",
                          policy=TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
                                                 vocab_size=512, max_positions=2048))
    train, _ = wm_tasks.task_templates(4)
    tasks = [phone.make_task("open_contact", k) for k in range(20)] + wm_tasks.unique_tasks(20, 0, train)
    _, tokenizer = wm_r1.build_policy(sizes, tasks, seed=0)
    checked = 0
    for task in tasks[:20]:
        env = phone.PhoneEnv()
        env.reset(task=task)
        contacts = env.step(phone.reference_solution(task)[0]).observation
        name = next(n for n in phone.NAMES if n in task.instruction)
        if f'"{name}"' not in contacts:
            continue  # on the second page: the reference scrolls first
        [name_id] = tokenizer(name, add_special_tokens=False)["input_ids"]
        encode = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
        assert name_id in encode(ag.prompt_text(task, ag.initial_screen(task)))
        assert name_id in encode(ag.observation_text(contacts))
        checked += 1
    assert checked >= 10


def test_sft_labels_cover_only_agent_text(tiny_policy):
    _, tokenizer, tasks = tiny_policy
    [example] = wm_tasks.sft_examples(tokenizer, tasks[:1], 0.0, 0, 4096)
    agent_ids = [i for i, label in zip(example["input_ids"], example["labels"]) if label != -100]
    text = tokenizer.decode(agent_ids)
    assert "Screen:" not in text and "Task:" not in text and text.count("Action:") >= 2


def test_sft_lowers_the_loss(tiny_policy):
    model, tokenizer, tasks = tiny_policy
    examples = wm_tasks.sft_examples(tokenizer, tasks, 0.3, 0, 4096)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    losses = wm_r1.train_policy_sft(model, tokenizer, examples, epochs=3, learning_rate=3e-3, batch_size=4,
                                    seed=0, progress=False)
    assert losses[-1] < losses[0]
    assert len(losses) == 9  # ceil(12 examples / 4) x 3 epochs
    assert any(not torch.equal(p, before[n]) for n, p in model.named_parameters())


def test_another_seed_never_resumes_a_wm_r1_checkpoint(tiny_policy, tmp_path):
    """A second seed into the same output folder used to load the first seed's last checkpoint and
    train nothing; now it is refused in one line (wmkit.runs.checkpoint_to_resume), before any training."""
    import copy

    model, tokenizer, tasks = tiny_policy
    wm = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs],
                             judge=lambda task, screen: random.random() < 0.5)
    config = wm_r1_method.WMR1Config(output_dir=str(tmp_path), max_steps=1, num_generations=2, prompts_per_step=2,
                                     max_episode_steps=1, max_turn_tokens=4, show_progress=False, save_steps=1)
    wm_r1_method.train_wm_r1(config, copy.deepcopy(model), tokenizer, tasks, wm)
    assert (tmp_path / "checkpoint-1").is_dir()
    from dataclasses import replace

    other = replace(config, seed=1)
    with pytest.raises(ValueError, match=r"checkpoints of another run \(settings.seed 0.*not of this one "
                                         r"\(settings.seed 1") as error:
        wm_r1_method.train_wm_r1(other, copy.deepcopy(model), tokenizer, tasks, wm)
    assert str(tmp_path) in str(error.value) and "\n" not in str(error.value)


# --------------------------------------------------------------------------- GRPO without the simulator


@pytest.mark.parametrize("lora", [False, True])
def test_wm_r1_training_never_steps_the_simulator(tiny_policy, tmp_path, monkeypatch, lora):
    model, tokenizer, tasks = tiny_policy
    if lora:  # adapters go on through models.add_lora, and only they train
        import copy

        model = copy.deepcopy(model)

    def raising_step(self, action):
        raise AssertionError("the simulator was stepped during WM-R1 training")
    monkeypatch.setattr(phone.PhoneEnv, "step", raising_step)
    wm = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs],
                             judge=lambda task, screen: random.random() < 0.5)  # noisy judge: some signal
    config = wm_r1_method.WMR1Config(output_dir=str(tmp_path), max_steps=2, num_generations=2, prompts_per_step=2,
                                     max_episode_steps=2, max_turn_tokens=8, show_progress=False, lora=lora)
    result = wm_r1_method.train_wm_r1(config, model, tokenizer, tasks, wm)
    assert result.simulator_steps == 0
    assert len(result.history) == 2 and all(h["n"] == 4 for h in result.history)
    assert any("loss" in row for row in result.log_history)
    assert result.world_model_queries >= 0


def _per_seed(wm_r1_values, other_values):
    return {str(i): {"arms": {"wm_r1": {"heldout": {"success": a}, "train_templates": {"success": a}},
                              "sft": {"heldout": {"success": b}, "train_templates": {"success": b}}}}
            for i, (a, b) in enumerate(zip(wm_r1_values, other_values))}


@pytest.mark.parametrize("ours, theirs, expected", [
    ([0.5, 0.52, 0.51], [0.3, 0.31, 0.29], "reproduced"),  # paired differences 0.20, 0.21, 0.22
    ([0.3, 0.31, 0.29], [0.5, 0.52, 0.51], "contradicted"),  # -0.20, -0.21, -0.22 (was "not reproduced (worse)")
    ([0.3, 0.4, 0.35], [0.36, 0.3, 0.4], "inconclusive"),  # -0.06, +0.10, -0.05 (was "within noise")
    ([0.5], [0.3], "not measured"),  # one seed: no interval (the binomial check is reported, not judged)
    ([0.5, 0.5], [0.3, 0.3], "not measured"),  # identical seeds
])
def test_verdicts_over_seeds(ours, theirs, expected):
    summary = wm_r1.summarize_seeds(_per_seed(ours, theirs))
    assert summary["sft"]["verdict_wm_r1_vs_this_heldout"] == expected
    assert summary["sft"]["verdict_reason_wm_r1_vs_this_heldout"]
    assert summary["wm_r1"]["heldout"]["mean"] == pytest.approx(sum(ours) / len(ours))
    assert summary["sft"]["wm_r1_minus_this_heldout"]["n"] == len(ours)


def test_evaluation_se_is_binomial():
    # 0.5 and 0.3 over 100 tasks: sqrt(0.25/100 + 0.21/100) = 0.06782
    assert wm_eval.evaluation_se(0.5, 0.3, 100) == pytest.approx(0.0678233, abs=1e-6)
    assert wm_eval.evaluation_se(0.0, 0.0, 100) == pytest.approx(math.sqrt(2e-6))


def test_sizes_exist_for_every_profile():
    for name in ("smoke", "cpu", "gpu"):
        sizes = WM_R1[name]
        assert set(sizes.baselines) <= set(wm_r1.ARMS)
    assert WM_R1["gpu"].eval_heldout >= 300
    with pytest.raises(ValueError):
        get_profile("huge")


def test_balanced_tasks_give_every_template_its_share_and_one_task_per_prompt():
    train, _ = wm_tasks.task_templates(4)
    tasks = wm_tasks.balanced_tasks(5 * len(train) + 2, 0, train)
    counts = {t: sum(task.template == t for task in tasks) for t in train}
    assert set(counts.values()) <= {5, 6} and sum(counts.values()) == 5 * len(train) + 2
    by_prompt = {}
    for task in tasks:  # a prompt names one task (TRL's rollout_func only sees prompts)
        prompt = ag.prompt_text(task, ag.initial_screen(task))
        assert by_prompt.setdefault(prompt, task) is task
    # unique_tasks, by contrast, is dominated by the templates with many distinct prompts
    unique = wm_tasks.unique_tasks(5 * len(train), 0, train)
    # (a template whose instruction never varies, like open_display_settings, has one prompt)
    assert min(sum(t.template == x for t in unique) for x in train) <= 1 < min(counts.values())
    assert wm_tasks.balanced_tasks(len(tasks), 0, train) == tasks  # seeded


def test_template_balanced_tasks_give_every_template_its_share_with_fresh_draws():
    train, _ = wm_tasks.task_templates(4)
    tasks = wm_tasks.template_balanced_tasks(3 * len(train) + 1, 7, train)
    counts = {t: sum(task.template == t for task in tasks) for t in train}
    assert set(counts.values()) <= {3, 4} and sum(counts.values()) == 3 * len(train) + 1
    # fresh draws, not one task per prompt: a template is drawn on new worlds every time
    assert len({(t.template, t.seed) for t in tasks}) == len(tasks)
    assert wm_tasks.template_balanced_tasks(len(tasks), 7, train) == tasks  # seeded
    assert wm_tasks.template_balanced_tasks(0, 7, train) == []
    with pytest.raises(ValueError, match="templates is empty"):
        wm_tasks.template_balanced_tasks(3, 0, [])
    with pytest.raises(ValueError, match="n must be >= 0"):
        wm_tasks.template_balanced_tasks(-1, 0, train)


LIST_LOOKUP = ("open_contact", "open_note", "delete_contact", "open_chat")


def test_template_weights_draw_each_template_its_weighted_share():
    train, _ = wm_tasks.task_templates(4)
    weights = {t: 4.0 for t in LIST_LOOKUP}
    n = 330  # 17 templates of weight 1 and 4 of weight 4: 33 shares of 10 tasks
    tasks = wm_tasks.template_balanced_tasks(n, 3, train, weights)
    counts = {t: sum(task.template == t for task in tasks) for t in train}
    assert counts == {t: 40 if t in LIST_LOOKUP else 10 for t in train}
    # not in whole shares: each template within one draw of n * weight / total weight
    tasks = wm_tasks.template_balanced_tasks(100, 3, train, weights)
    for t in train:
        assert abs(sum(task.template == t for task in tasks) - 100 * (4 if t in LIST_LOOKUP else 1) / 33) < 1
    # spread over the list, not in blocks: the first third already holds about a third of each
    turns = wm_tasks._weighted_turns(["a", "b", "c"], {"a": 4.0, "b": 1.0, "c": 1.0}, 12)
    assert turns[:6].count("a") == 4 and turns[:6].count("b") == turns[:6].count("c") == 1
    assert turns.count("a") == 8 and turns.count("b") == turns.count("c") == 2
    assert len({(t.template, t.seed) for t in tasks}) == len(tasks)  # still fresh draws
    assert wm_tasks.template_balanced_tasks(100, 3, train, weights) == tasks  # seeded


def test_equal_template_weights_leave_the_unweighted_draw_unchanged():
    # The unweighted draw, written out: the templates shuffled, then in turn, one seed draw each;
    # the cpu ladder's checkpoints were built from exactly this stream.
    train, _ = wm_tasks.task_templates(4)
    n, seed = 50, 10_000
    rng = random.Random(seed)
    order = list(train)
    rng.shuffle(order)
    expected = [phone.make_task(order[k % len(order)], rng.randrange(2**31)) for k in range(n)]
    rng.shuffle(expected)
    assert wm_tasks.template_balanced_tasks(n, seed, train) == expected
    assert wm_tasks.template_balanced_tasks(n, seed, train, {}) == expected
    assert wm_tasks.template_balanced_tasks(n, seed, train, {t: 2.5 for t in train}) == expected


@pytest.mark.parametrize("weights, message", [
    ({"open_contacts": 4.0}, "not drawn from: \\['open_contacts'\\]"),
    ({"open_contact": 0.0}, "'open_contact' must be a finite number above 0, not 0.0"),
    ({"open_contact": -1}, "above 0"),
    ({"open_contact": float("nan")}, "above 0"),
    ({"open_contact": float("inf")}, "above 0"),
    ({"open_contact": "4"}, "above 0"),
    ({"open_contact": True}, "above 0"),
])
def test_bad_template_weights_are_clear_errors(weights, message):
    train, _ = wm_tasks.task_templates(4)
    with pytest.raises(ValueError, match=message):
        wm_tasks.template_balanced_tasks(10, 0, train, weights)


def test_the_ladder_start_draws_its_reference_episodes_with_the_ladder_weights():
    from dataclasses import replace

    sizes = WM_R1["smoke"]
    weighted = replace(sizes, ladder=replace(sizes.ladder, sft_tasks=33, sft_epochs=0.25,
                                             sft_template_weights=tuple((t, 4.0) for t in LIST_LOOKUP)))
    train, _ = wm_tasks.task_templates(weighted.max_ref_len)
    _, _, sft_tasks = wm_ladder.build_ladder_start(get_profile("smoke"), 0, sizes=weighted)
    assert sft_tasks == wm_tasks.template_balanced_tasks(33, 10_000, train, {t: 4.0 for t in LIST_LOOKUP})
    assert sum(t.template in LIST_LOOKUP for t in sft_tasks) == 16
    assert WM_R1["cpu"].ladder.sft_template_weights == ()  # the default: equal shares


def test_fresh_tasks_are_distinct_worlds_template_by_template():
    train, _ = wm_tasks.task_templates(4)
    tasks = wm_tasks.fresh_tasks(4 * len(train) + 3, 5, train)
    counts = {t: sum(task.template == t for task in tasks) for t in train}
    assert set(counts.values()) <= {4, 5} and sum(counts.values()) == 4 * len(train) + 3
    import json

    worlds = {(t.instruction, json.dumps(t.initial, sort_keys=True)) for t in tasks}
    assert len(worlds) == len(tasks)  # no two tasks share instruction and world
    # several worlds share a prompt (a one-instruction template has one prompt on the home screen)
    prompts = [ag.prompt_text(t, ag.initial_screen(t)) for t in tasks]
    assert len(set(prompts)) < len(prompts)
    assert wm_tasks.fresh_tasks(len(tasks), 5, train) == tasks  # seeded
    with pytest.raises(ValueError, match="templates is empty"):
        wm_tasks.fresh_tasks(3, 0, [])
    with pytest.raises(ValueError, match="n must be >= 0"):
        wm_tasks.fresh_tasks(-1, 0, train)


def test_every_rollout_group_plays_the_next_world_of_its_prompt(tiny_policy, tmp_path):
    """TRL hands the rollout only prompts; tasks that share a prompt (one instruction, different
    worlds) are played one per group, in turn, so a fresh pool never repeats a world."""
    model, tokenizer, _ = tiny_policy
    import copy

    # four worlds of one single-instruction template: one prompt, four tasks
    template = "open_display_settings"
    tasks = [phone.make_task(template, s) for s in range(4)]
    assert len({ag.prompt_text(t, ag.initial_screen(t)) for t in tasks}) == 1
    played = []

    def judge(task, screen):
        played.append(task.seed)
        return random.random() < 0.5
    wm = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs], judge=judge)
    config = wm_r1_method.WMR1Config(output_dir=str(tmp_path), max_steps=2, num_generations=2, prompts_per_step=2,
                                     max_episode_steps=1, max_turn_tokens=8, show_progress=False)
    result = wm_r1_method.train_wm_r1(config, copy.deepcopy(model), tokenizer, tasks, wm)
    assert result.groups_played == 4 and result.distinct_worlds == 4
    assert sorted(set(played)) == [0, 1, 2, 3] and all(played.count(s) == 2 for s in range(4))  # G = 2 each
    # a pool that repeats one task (balanced_tasks' way) plays that world in every group; a judge that
    # never sees success makes every group an all-fail group (where the call term pays for more calls)
    never = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs],
                                judge=lambda task, screen: False)
    result = wm_r1_method.train_wm_r1(config, copy.deepcopy(model), tokenizer, [tasks[0]] * 4, never)
    assert result.groups_played == 4 and result.distinct_worlds == 1
    assert all(h["all_fail_groups"] == 1.0 and h["all_success_groups"] == 0.0 for h in result.history)


def test_ladder_grpo_pool_follows_the_sizes():
    from dataclasses import replace

    sizes = WM_R1["cpu"]
    train, _ = wm_tasks.task_templates(sizes.max_ref_len)
    assert wm_tasks.grpo_pool(sizes, 0, train) == wm_tasks.balanced_tasks(sizes.train_tasks, 20_000, train)  # the cpu default
    fresh = replace(sizes, ladder=replace(sizes.ladder, grpo_pool="fresh",
                                          grpo=replace(sizes.ladder.grpo, max_steps=5, prompts_per_step=4)))
    tasks = wm_tasks.grpo_pool(fresh, 1, train)
    assert len(tasks) == 20 and len({(t.template, t.seed) for t in tasks}) == 20  # one world per rollout group
    with pytest.raises(ValueError, match="Unknown grpo_pool 'mixed'"):
        wm_tasks.grpo_pool(replace(sizes, ladder=replace(sizes.ladder, grpo_pool="mixed")), 0, train)


def test_notebook_ladder_runs_the_notebooks_rungs_on_its_evaluation_tasks():
    from dataclasses import replace

    sizes = WM_R1["cpu"]
    mine = wm_ladder.notebook_ladder(sizes).ladder
    assert mine.error_rates == (0.0, 0.6) and mine.eval_tasks == 400 and sizes.ladder.eval_tasks == 1000
    assert replace(mine, error_rates=sizes.ladder.error_rates, eval_tasks=1000) == sizes.ladder  # nothing else
    unset = replace(sizes, ladder=replace(sizes.ladder, notebook_error_rates=(), notebook_eval_tasks=0))
    assert wm_ladder.notebook_ladder(unset).ladder == unset.ladder  # unset: the benchmark's ladder
    with pytest.raises(ValueError, match="no ladder"):
        wm_ladder.notebook_ladder(replace(sizes, ladder=None))


def test_room_for_rl_counts_greedy_sampled_and_pass_at_k_per_template(monkeypatch):
    tasks = [phone.make_task("setting_on", 1), phone.make_task("setting_off", 2), phone.make_task("setting_on", 3)]
    # scripted outcomes, by hand: greedy succeeds on the first task only; of k = 2 samples each,
    # task 1 succeeds once, task 2 never, task 3 twice
    outcomes = {True: [True, False, False], False: [True, False, False, False, True, True]}

    def scripted(model, tokenizer, chosen, world_model, max_steps, greedy=True, **kw):
        assert len(chosen) == len(outcomes[greedy])
        return {"episodes": [ag.Episode(task=t, prompt="", prompt_ids=[], success=s)
                             for t, s in zip(chosen, outcomes[greedy])]}

    monkeypatch.setattr(wm_eval, "evaluate", scripted)
    rows = wm_eval.room_for_rl(None, None, tasks, WM_R1["smoke"], k=2)
    assert rows == {"setting_on": {"tasks": 2, "greedy": 0.5, "sampled": 0.75, "pass@2": 1.0},
                    "setting_off": {"tasks": 1, "greedy": 0.0, "sampled": 0.0, "pass@2": 0.0}}


def test_reference_episode_with_thought_index_names_the_tapped_items_index_on_each_screen():
    task = phone.make_task("open_contact", 5)
    pieces = wm_tasks.reference_episode(task, imagine_rate=0.0, rng=random.Random(0), thought_index=True)
    plain = wm_tasks.reference_episode(task, imagine_rate=0.0, rng=random.Random(0))
    screen = pieces[0][0].split("Screen:\n", 1)[1]
    taps = 0
    for (text, mine), (plain_text, _) in zip(pieces, plain):
        if not mine:
            screen = text.split("Screen:\n", 1)[1]
            assert text == plain_text  # only the agent's thoughts change
            continue
        turn = ag.parse_turn(text)
        if turn.action.startswith("tap("):
            index = turn.action[4:-1]
            name = re.search(r'"(.*?)"', next(l for l in screen.split("\n") if l.startswith(f"[{index}] ")))[1]
            assert turn.thought == f'find "{name}" at [{index}].'
            assert ag.parse_turn(plain_text).thought == f'find "{name}".'
            taps += 1
    assert taps == 2  # the Contacts app on the home screen, then the named contact
    assert [ag.parse_turn(t).action for t, m in pieces if m] == phone.reference_solution(task)


def test_thought_index_setting_reaches_the_sft_examples():
    sizes = wm_r1.replace(WM_R1["smoke"], thought_index=True,
                          policy=TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
                                                 vocab_size=512, max_positions=2048))
    tasks = [phone.make_task("open_contact", k) for k in range(6)]
    _, tokenizer = wm_r1.build_policy(sizes, tasks, seed=0)
    examples = wm_tasks.sft_examples(tokenizer, tasks[:2], 0.0, 0, 4096, thought_index=True)
    text = tokenizer.decode(examples[0]["input_ids"])
    assert re.search(r'find "\w+" at \[\d+\]\. Action: tap\(\d+\)', text)


# --------------------------------------------------------------------------- the agent's view of a screen


# Per view: the indexed thought's form (name, index) and how that pair is written on a screen line.
VIEW_THOUGHTS = {"index_after_label": (r'find "(.*?)" \[(\d+)\]\.', '"{name}" [{index}]'),
                 "index_in_label": (r'find "(.*) (\d+)"\.', '"{name} {index}"')}


@pytest.mark.parametrize("view", sorted(VIEW_THOUGHTS))
def test_reference_episode_in_an_indexed_view_reads_each_index_off_its_screen(view):
    thought_form, on_screen = VIEW_THOUGHTS[view]
    task = phone.make_task("open_contact", 5)
    pieces = wm_tasks.reference_episode(task, imagine_rate=1.0, rng=random.Random(0), thought_index=True,
                                        screen_view=view)
    plain = wm_tasks.reference_episode(task, imagine_rate=1.0, rng=random.Random(0))
    assert [ag.parse_turn(t).action for t, m in pieces if m] == [ag.parse_turn(t).action for t, m in plain if m]
    taps = 0
    for (text, mine), (plain_text, _) in zip(pieces, plain):
        if not mine:  # every screen the agent sees -- prompt, real, imagined -- is the view of the plain one
            assert text == ag.agent_screen(plain_text, view) != plain_text
            if "Imagined:" not in text:
                shown = text  # the current real screen, which the next real action's thought reads
            continue
        turn = ag.parse_turn(text)
        if turn.kind == "action" and turn.action.startswith("tap("):
            index = turn.action[4:-1]
            name = re.fullmatch(thought_form, turn.thought)
            assert name and name[2] == index
            # the thought's name-and-index pair is written on the screen the agent sees, verbatim
            assert on_screen.format(name=name[1], index=index) in shown
            taps += 1
    assert taps == 2


def test_screen_view_reaches_the_tokenizer_and_the_sft_examples():
    sizes = wm_r1.replace(WM_R1["smoke"], thought_index=True, screen_view="index_after_label",
                          policy=TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
                                                 vocab_size=512, max_positions=2048))
    tasks = [phone.make_task("open_contact", k) for k in range(6)]
    _, tokenizer = wm_r1.build_policy(sizes, tasks, seed=0)
    examples = wm_tasks.sft_examples(tokenizer, tasks[:2], 0.5, 0, 4096, thought_index=True,
                                     screen_view="index_after_label")
    text = tokenizer.decode(examples[0]["input_ids"])
    match = re.search(r'find "(\w+)" \[(\d+)\]\. Action: tap\((\d+)\)', text)
    assert match and match[2] == match[3]
    assert f' "{match[1]}" [{match[2]}]\n' in text  # the same tokens on the screen the thought reads
    assert not re.search(r"^\[\d+\] ", text, re.MULTILINE)  # no line in the phone's own format
    with pytest.raises(ValueError, match="Unknown screen_view"):
        wm_r1.build_policy(wm_r1.replace(sizes, screen_view="sideways"), tasks, seed=0)


def test_index_in_label_puts_the_labels_own_token_before_the_index():
    # The point of the view: in the tokenizer the policy trains, the token right before each list
    # item's index is the label's own last token (different on every line), the index is one token,
    # and the thought writes the same two tokens as the screen line.
    sizes = wm_r1.replace(WM_R1["smoke"], thought_index=True, screen_view="index_in_label",
                          policy=TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
                                                 vocab_size=512, max_positions=2048))
    tasks = [phone.make_task(t, k) for t in ("open_contact", "open_note", "open_chat") for k in range(8)]
    _, tokenizer = wm_r1.build_policy(sizes, tasks, seed=0)
    checked = 0
    for task in tasks[::4]:
        env = phone.PhoneEnv()
        env.reset(task=task)
        reference = phone.reference_solution(task)
        screen = env.step(reference[0]).observation
        if not reference[1].startswith("tap("):
            continue
        befores = {}
        for line in ag.agent_screen(screen, "index_in_label").split("\n")[1:]:
            m = re.fullmatch(r'item "(.*) (\d+)"(.*)', line)
            if not m:
                continue
            pair = tokenizer.convert_ids_to_tokens(tokenizer(line, add_special_tokens=False)["input_ids"])
            at = pair.index(f"Ġ{m[2]}")
            befores[m[2]] = pair[at - 1]
            assert tokenizer.convert_tokens_to_string([pair[at - 1]]).strip() and not pair[at - 1].startswith("Ġ\"")
        assert len(set(befores.values())) == len(befores)  # unique per line
        index = reference[1][4:-1]
        thought = tokenizer.convert_ids_to_tokens(tokenizer(ag.format_turn(
            ag.describe_action(screen, reference[1], True, "index_in_label"), action=reference[1]),
            add_special_tokens=False)["input_ids"])
        at = thought.index(f"Ġ{index}")
        assert thought[at - 1] == befores[index]
        checked += 1
    assert checked >= 4


def test_tiny_policy_plays_and_trains_with_the_view(tiny_policy, tmp_path, monkeypatch):
    model, tokenizer, tasks = tiny_policy
    import copy

    result = wm_eval.evaluate(model, tokenizer, tasks[:4], None, max_steps=2, greedy=False, imagine=False,
                              max_turn_tokens=8, screen_view="index_after_label")
    assert result["n"] == 4
    for ep in result["episodes"]:
        assert re.search(r'app "\w+" \[1\]', ep.prompt) and "[1] app" not in ep.prompt
    played = []  # (prompt the agent saw, first screen the source holds) of every GRPO rollout
    run_episodes = ag.run_episodes

    def recording(policy, batch, source, **kwargs):
        episodes = run_episodes(policy, batch, source, **kwargs)
        played.extend((ep.prompt, screen) for ep, screen in zip(episodes, [ag.initial_screen(t) for t in batch]))
        return episodes
    monkeypatch.setattr(ag, "run_episodes", recording)
    wm = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs],
                             judge=lambda task, screen: random.random() < 0.5)
    config = wm_r1_method.WMR1Config(output_dir=str(tmp_path), max_steps=1, num_generations=2, prompts_per_step=2,
                                     max_episode_steps=2, max_turn_tokens=8, show_progress=False,
                                     screen_view="index_after_label")
    trained = wm_r1_method.train_wm_r1(config, copy.deepcopy(model), tokenizer, tasks, wm)
    assert len(trained.history) == 1 and trained.history[0]["n"] == 4 and len(played) == 4
    for prompt, screen in played:  # GRPO's rollouts show the view of the phone's screen
        assert prompt.endswith(ag.agent_screen(screen, "index_after_label") + "\n") and "[1] app" not in prompt
    with pytest.raises(ValueError, match="Unknown screen_view"):
        wm_r1_method.train_wm_r1(wm_r1_method.WMR1Config(output_dir=str(tmp_path), screen_view="nope", max_steps=1),
                                 model, tokenizer, tasks, wm)
