"""RWML policy loop on TextWorldExpress: the action reward on hand-checked cases, exact state
restore by replay, training that moves a tiny model, and well-formed evaluation figures."""
import json
import math
from dataclasses import replace

import pytest
import torch

pytest.importorskip("wmkit.envs.twx")
pytest.importorskip("textworld_express")

from wmkit.envs import twx
from wmkit.profiles import get_profile
from wmkit.core import world_model_rl as rl
from wmkit.rwml import policy as rp
from wmkit.rwml.config import RWML

TINY = replace(RWML["smoke"].policy, games=("simonsays", "sorting"), bc_episodes=2, rl_episodes=2,
               eval_episodes=2, max_episode_steps=2,
               grpo=replace(RWML["smoke"].policy.grpo, max_completion_length=6, max_steps=1))


@pytest.fixture(scope="module")
def simon_start():
    """Simon says, train seed 1, at reset: 'Simon says, eat banana' (gold: eat banana)."""
    observation, infos = rp.restore("simonsays", 1, "train", [])
    gold = twx.gold_actions()
    return observation, infos, gold


def test_action_reward_by_hand(simon_start):
    observation, infos, gold = simon_start
    assert observation == "Simon says, 'eat banana'." and gold[0] == "eat banana"
    valid = [a for a in infos["validActions"] if a != "eat banana"]
    assert "touch pineapple" in valid and "eat apple" not in infos["validActions"]

    def judge(completion, gold_action="eat banana", prefix=()):
        return rp.judge_action("simonsays", 1, "train", list(prefix), gold_action, completion)

    assert judge("eat banana") == {"action": "eat banana", "valid": True, "helpful": True, "reward": 1.0}
    # normalisation: case, spacing, a final full stop and a second line do not matter
    assert judge("  Eat   Banana.\nthen something")["reward"] == 1.0
    # a valid action Simon did not say: valid, unhelpful (TWX ends the game with "Incorrect!")
    assert judge("touch pineapple") == {"action": "touch pineapple", "valid": True, "helpful": False, "reward": 0.0}
    # not in the valid-action list: 0 and invalid
    assert judge("eat apple") == {"action": "eat apple", "valid": False, "helpful": False, "reward": 0.0}
    # a non-gold action that raises the score still pays (Simon's action scores 0.2 here)
    assert judge("eat banana", gold_action="look around")["reward"] == 1.0
    # one step later (after the gold action), the next instruction is the gold
    assert judge(gold[1], gold_action=gold[1], prefix=gold[:1])["reward"] == 1.0
    assert judge("eat banana", gold_action=gold[1], prefix=gold[:1])["reward"] == 0.0
    # garbage never raises
    for garbage in ["", "   ", "\x00{{[", "é" * 300, None, 42, [{"role": "assistant", "content": "eat banana"}]]:
        result = judge(garbage)
        assert result["reward"] in (0.0, 1.0) and isinstance(result["action"], str)
    assert judge([{"role": "assistant", "content": "eat banana"}])["reward"] == 1.0  # conversational completion


def test_trl_reward_function_counts_invalid_actions():
    states = rp.collect_states(2, seed=0, games=["simonsays"], random_action_rate=0.0, max_steps=3)
    rows = [{k: v for k, v in row.items() if k != "prompt"}
            for row in rp.prompt_rows(_FakeTokenizer(), states[:2], 100)]
    columns = {k: [r[k] for r in rows] for k in rows[0]}
    reward = rp.ActionReward()
    assert reward.__name__ == "twx_action_reward" and math.isnan(reward.invalid_share)
    out = reward([states[0].gold_action, "dance wildly"], **columns)
    assert out == [1.0, 0.0] and (reward.n_judged, reward.n_invalid) == (2, 1)
    assert reward.invalid_share == 0.5


class _FakeTokenizer:
    """Just enough tokenizer for prompt_rows: a chat template that joins the messages."""

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        return "\n".join(m["content"] for m in messages) + "\n>"


def test_restore_by_replay_is_deterministic():
    states = rp.collect_states(4, seed=3, games=twx.DEFAULT_GAMES[:2], random_action_rate=0.5, max_steps=6)
    assert states == rp.collect_states(4, seed=3, games=twx.DEFAULT_GAMES[:2], random_action_rate=0.5, max_steps=6)
    assert any(s.prefix for s in states) and {s.game for s in states} == set(twx.DEFAULT_GAMES[:2])
    # detours happened: some recorded prefix action is not a gold action of its episode
    for s in states:
        observation, infos = rp.restore(s.game, s.game_seed, s.fold, s.prefix)
        assert observation == s.observation and tuple(infos["validActions"]) == s.valid_actions
        assert s.gold_action in s.valid_actions
    # restoring does not depend on what the shared environment did before
    twx.reset("arithmetic", 99, "test")
    twx.step("look around")
    last = states[-1]
    assert rp.restore(last.game, last.game_seed, last.fold, last.prefix)[0] == last.observation
    # episode ranges are disjoint and deterministic: first_episode shifts the game seeds
    later = rp.collect_states(2, seed=3, games=twx.DEFAULT_GAMES[:2], first_episode=4)
    assert {s.game_seed for s in later}.isdisjoint({s.game_seed for s in states})


def test_prompt_is_short_and_keeps_the_observation_tail():
    long_observation = "You are in the kitchen. " * 30 + "There is also a box, that is empty."
    text = rp.context_text("Your task is to sort objects by quantity.  First, place ...", "take 3l of oak",
                           long_observation, 80)
    assert text.splitlines()[0] == "Task: Your task is to sort objects by quantity."
    assert text.endswith("There is also a box, that is empty.") and len(text) < 200
    assert "Last action: none" in rp.context_text("t.", "", "o", 10)


def test_behaviour_cloning_trains_a_copy(tiny_lm):
    """BC builds (prompt, gold action) examples and trains a copy through core.sft's one loop."""
    model, tok, _ = tiny_lm
    states = rp.collect_states(1, seed=0, games=["simonsays"], max_steps=3)
    [example, *_] = rp.bc_examples(tok, states, TINY.max_observation_chars)
    target = [i for i in example["labels"] if i != -100]
    assert tok.decode(target[:-1]) == states[0].gold_action and target[-1] == tok.eos_token_id
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    warm = rp.behaviour_cloning(model, tok, states, TINY, seed=0)
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())  # the input is untouched
    assert any(not torch.equal(p, before[n]) for n, p in warm.named_parameters())
    assert not warm.training


@pytest.mark.slow
def test_grpo_on_policy_prompt_rows_moves_the_model(tiny_lm, tmp_path):
    """train_rlvr's prompt_rows path (the policy's dataset): a reward that varies within groups moves
    the weights, and the input model stays as it was."""
    model, tok, _ = tiny_lm
    states = rp.collect_states(2, seed=0, games=["simonsays"], max_steps=3)
    rows = rp.prompt_rows(tok, states, 120)
    assert all(r["prompt"].startswith("<|im_start|>") and json.loads(r["prefix"]) is not None for r in rows)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    config = rl.RLVRConfig(output_dir=str(tmp_path), num_generations=4, prompts_per_step=2, max_steps=2,
                           learning_rate=1e-2, max_completion_length=8, show_progress=False, lora=False,
                           resume=False, save_steps=10)

    def share_of_e(completions, **kwargs):
        return [c.count("e") / max(1, len(c)) for c in completions]

    result = rl.train_rlvr(model, tok, [], config, reward_funcs=[share_of_e], prompt_rows=rows)
    assert result.steps == 2 and result.n_train == len(rows)
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    after = dict(result.model.named_parameters())
    assert any(not torch.equal(after[n], before[n]) for n in before)
    with pytest.raises(ValueError, match="no transitions"):
        rl.train_rlvr(model, tok, [], config, reward_funcs=[share_of_e], prompt_rows=[])


@pytest.mark.slow
def test_policy_recipe_trains_a_tiny_model_and_evaluates(tiny_lm, tmp_path):
    model, tok, _ = tiny_lm
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    states = rp.collect_states(TINY.bc_episodes, 0, TINY.games, max_steps=TINY.max_collect_steps)
    warm = rp.behaviour_cloning(model, tok, states, TINY, seed=0)
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())  # a copy was trained
    assert any(not torch.equal(p, before[n]) for n, p in warm.named_parameters())
    result, reward = rp.train_policy(warm, tok, states, TINY, tmp_path / "rl", seed=0)
    # every sampled action went through the real environment
    assert result.steps == TINY.grpo.max_steps
    assert reward.n_judged == TINY.grpo.max_steps * TINY.grpo.prompts_per_step * TINY.grpo.num_generations
    assert all(0.0 <= r <= 1.0 for r in result.curve("reward"))

    figures = rp.evaluate_policy(result.model, tok, TINY)
    assert figures["n_episodes"] == TINY.eval_episodes
    assert 1 <= figures["mean_steps"] <= TINY.max_episode_steps
    assert figures["n_actions"] == round(figures["mean_steps"] * TINY.eval_episodes)
    for key in ("success", "invalid_share"):
        assert 0.0 <= figures[key] <= 1.0
    assert -1.0 <= figures["score"] <= 1.0 and set(figures["per_game"]) == set(TINY.games)
    assert figures == rp.evaluate_policy(result.model, tok, TINY)  # greedy and replayed: repeatable


def test_evaluation_counts_gold_play_as_success_and_garbage_as_invalid(monkeypatch):
    """The episode loop scored with scripted 'models': one replays the gold path, one writes nonsense."""
    from wmkit.core import worldmodel

    sizes = replace(TINY, games=("simonsays",), eval_episodes=2, max_episode_steps=8)
    gold = {}
    for seed in range(2):
        twx.reset("simonsays", seed, "test")
        gold[seed] = twx.gold_actions()

    def gold_player(model, tokenizer, prompts, max_new_tokens, **kw):
        # every episode here is simon says; the observation names Simon's action
        return [[p.split("Simon says, '")[-1].split("'")[0]] for p in prompts]

    monkeypatch.setattr(worldmodel, "generate", gold_player)
    figures = rp.evaluate_policy(None, _FakeTokenizer(), sizes)
    assert figures["success"] == 1.0 and figures["score"] == 1.0 and figures["invalid_share"] == 0.0
    assert figures["n_actions"] == sum(len(g) for g in gold.values())

    monkeypatch.setattr(worldmodel, "generate", lambda m, t, prompts, n, **kw: [["{}"] for _ in prompts])
    figures = rp.evaluate_policy(None, _FakeTokenizer(), sizes)
    assert figures["success"] == 0.0 and figures["invalid_share"] == 1.0
    assert figures["n_actions"] == 2 * sizes.max_episode_steps  # invalid actions use steps until the cap


def test_sizes_per_profile():
    for name in ("smoke", "cpu", "gpu"):
        sizes = RWML[name].policy
        assert sizes.grpo.max_steps >= 1 and sizes.grpo.num_generations >= 2 and set(sizes.games) <= set(twx.GAMES)
    with pytest.raises(ValueError, match="Unknown profile"):
        get_profile("huge")
