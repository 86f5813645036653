"""Policy RL on TextWorldExpress: does RWML's world-model training help an agent learn to act?

RWML's second claim is about agents, not predictions: take a model, train it as a world model
(RWML), *then* train it as a policy with task-success RL, and it ends better than the same policy
RL from the untouched model (paper: +6.9 on ALFWorld, +5.7 on τ²-Bench), and it makes fewer
invalid actions (59.3% → 39.5%). This module is that comparison on TextWorldExpress, at the
kit's size. Stripped to what it computes, per starting model (base world model / RWML model):

    states  = TWX states visited along gold paths with random detours (train fold),
              each kept as (game, seed, action prefix, gold next action)
    policy  = copy(start); behaviour-clone it on the gold next action of a few states
              (the same small warm-up for both starts; see "departures" below)
    for step in range(rl_steps):                              # GRPO, via wmkit.core.world_model_rl.train_rlvr
        pick prompts_per_step states; sample G actions a_1..G ~ π(· | prompt(state))
        r_i = 1 if a_i is the gold next action or raises the score   (executed in a real TWX
              env restored to that state by replaying the prefix from reset, same seed)
              0 if a_i is valid but unhelpful,   0 (counted invalid) if a_i is not a valid action
        A_i = (r_i − mean r) / std r; policy-gradient step on A_i
    evaluate: greedy episodes of held-out games with a step cap: success rate, mean final
              score, share of invalid actions (train-fold objects on unseen game seeds; also
              TWX's test fold, whose objects and verbs no training state contains)

The prompt is short on purpose (tiny models, ~160-400 characters of context): the first
sentence of the task description, the last action, and the tail of the current observation.
The game is Simon Says in every profile: with only the last observation in the prompt it is the
one game of RWML's TWX data whose observation names what to do next (in Sorting and
Arithmetic the room, and so the objects left, disappear from view after the first "take").

Departures from the paper, all forced by tiny models and a 2-core CPU:

* **One-step, not multi-turn RL.** The paper runs multi-turn GRPO on whole ALFWorld / τ²
  episodes with the task's success as reward. Here each RL sample is *one* decision in a state
  of a gold path, rewarded by whether that action is the gold one (or raises the game's score).
  That is dense and verifiable, and costs one replay per sample; whole-episode credit
  assignment is not exercised. Evaluation does play whole episodes.
* **A behaviour-cloning warm-up for both starts.** The paper's starting policies are instruct
  LLMs that already act (41% valid actions). A tiny from-scratch model never writes a valid
  action, so every GRPO group would score 0 and carry no gradient. Both arms therefore get the
  *same* small SFT on gold actions first (`bc_episodes`), as RWML's own warm-up gets 10% of its
  data; "mid-training" is then "RWML before this recipe" vs "nothing before it".
* **Valid actions are not shown** in the prompt (they would double its length); a completion
  is judged against TWX's list of valid actions after light normalisation (first line, lower
  case, single spaces, no final full stop). An invalid action changes nothing in TWX; the
  agent then sees the state's observation again with its action marked invalid (TWX's own
  reply, "Unknown action", would hide the instruction from a policy without history).
"""
from __future__ import annotations

import copy
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from wmkit.envs import twx
from wmkit.rewards import extract_completion_text
from wmkit.rwml.config import PolicySizes

SYSTEM_PROMPT = "Choose the next action in the text game."


HELDOUT_SEED = 1_000_000


"""First game seed of evaluation episodes on the train fold: the collectors use seed × 10,000 +
episode, far below it, so no evaluated game was seen in training (here or by RWML)."""


@dataclass(frozen=True)
class PolicyState:
    """A TWX state an agent decides in, kept so that it can be restored exactly."""

    game: str
    fold: str
    game_seed: int
    prefix: tuple[str, ...]
    """Actions taken from reset to reach this state (replayed to restore it)."""
    observation: str
    task: str
    last_action: str
    """The action that led here ('' at the start)."""
    gold_action: str
    """The next action of the gold path this state lies on."""
    valid_actions: tuple[str, ...]


def short_task(description: str) -> str:
    """The first sentence of a TWX task description ("Your task is to sort objects by quantity.")."""
    first = re.split(r"(?<=\.)\s", description.strip(), maxsplit=1)[0]
    return first.strip()


def context_text(task: str, last_action: str, observation: str, max_observation_chars: int) -> str:
    """What the policy sees: task, last action and the tail of the observation."""
    observation = " ".join(observation.split())
    if len(observation) > max_observation_chars:
        observation = "..." + observation[-max_observation_chars:]
    return f"Task: {short_task(task)}\nLast action: {last_action or 'none'}\nObservation: {observation}"


def prompt_text(tokenizer, context: str) -> str:
    """The chat prompt of one decision, ending where the action starts."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": context}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def normalize_action(text: Any) -> str:
    """A completion as a TWX command: first line, lower case, single spaces, no final full stop."""
    text = extract_completion_text(text) if not isinstance(text, str) else text
    lines = text.strip().splitlines()
    return " ".join(lines[0].lower().split()).rstrip(".").strip() if lines else ""


def restore(game: str, game_seed: int, fold: str, prefix: Sequence[str]) -> tuple[str, dict]:
    """Reset `game` with its seed and replay `prefix`: TWX is deterministic, so this is the state."""
    observation, infos = twx.reset(game, game_seed, fold)
    for action in prefix:
        observation, _, _, infos = twx.step(action)
    return observation, infos


def collect_states(n_episodes: int, seed: int, games: Sequence[str], fold: str = "train",
                   random_action_rate: float = twx.RANDOM_ACTION_RATE, max_steps: int = twx.MAX_STEPS,
                   first_episode: int = 0) -> list[PolicyState]:
    """States along gold paths with random valid detours, as `twx.collect_transitions` visits them
    (episodes `first_episode` .. `first_episode + n_episodes - 1` of that seed). Deterministic.

    An episode stops where its next gold action is no longer valid (a detour took an object out of
    order, say): from there the gold path is no answer key."""
    rng = random.Random(f"{seed}-{first_episode}")
    states: list[PolicyState] = []
    for episode_index in range(first_episode, first_episode + n_episodes):
        game = games[episode_index % len(games)]
        game_seed = seed * 10_000 + episode_index
        observation, infos = twx.reset(game, game_seed, fold)
        task, gold, prefix, last, done = infos.get("taskDescription", ""), twx.gold_actions(), [], "", False
        while gold and not done and len(prefix) < max_steps:
            if gold[0] not in infos.get("validActions", []):
                break  # a detour used up a later gold step (took an object early): the gold path no longer applies
            states.append(PolicyState(game, fold, game_seed, tuple(prefix), observation, task, last, gold[0],
                                      tuple(infos.get("validActions", []))))
            if rng.random() < random_action_rate:
                choices = sorted(set(infos.get("validActions", [])) - {gold[0]})
                action = rng.choice(choices) if choices else gold.pop(0)
            else:
                action = gold.pop(0)
            observation, _, done, infos = twx.step(action)
            prefix.append(action)
            last = action
    return states


def judge_action(game: str, game_seed: int, fold: str, prefix: Sequence[str], gold_action: str,
                 completion: Any) -> dict:
    """Execute `completion` in the restored state: {"action", "valid", "helpful", "reward"}.

    helpful = the gold next action, or any action that raises the score. Never raises on
    model text (TWX answers unknown commands with a message)."""
    action = normalize_action(completion)
    _, infos = restore(game, game_seed, fold, prefix)
    valid = action in {a.lower() for a in infos.get("validActions", [])}
    helpful = False
    if valid:
        score_before = infos.get("score", 0.0)
        _, _, _, after = twx.step(action)
        helpful = action == gold_action.lower() or after.get("score", 0.0) > score_before
    return {"action": action, "valid": valid, "helpful": helpful, "reward": float(valid and helpful)}


class ActionReward:
    """TRL reward function: 1 for a gold / score-raising action, 0 otherwise; counts invalid ones.

    Reads the dataset columns game, game_seed, fold, prefix (JSON list) and gold_action."""

    def __init__(self):
        self.__name__ = "twx_action_reward"  # TRL names reward columns after this
        self.n_judged = 0
        self.n_invalid = 0

    def __call__(self, completions: Sequence[Any], game: Sequence[str], game_seed: Sequence[int],
                 fold: Sequence[str], prefix: Sequence[str], gold_action: Sequence[str], **kwargs: Any) -> list[float]:
        rewards = []
        for c, g, s, f, p, gold in zip(completions, game, game_seed, fold, prefix, gold_action):
            judged = judge_action(g, int(s), f, json.loads(p), gold, c)
            self.n_judged += 1
            self.n_invalid += not judged["valid"]
            rewards.append(judged["reward"])
        return rewards

    @property
    def invalid_share(self) -> float:
        return self.n_invalid / self.n_judged if self.n_judged else float("nan")


def prompt_rows(tokenizer, states: Sequence[PolicyState], max_observation_chars: int) -> list[dict]:
    """GRPO dataset rows: the prompt plus the columns ActionReward reads."""
    return [{"prompt": prompt_text(tokenizer, context_text(s.task, s.last_action, s.observation,
                                                           max_observation_chars)),
             "game": s.game, "game_seed": s.game_seed, "fold": s.fold, "prefix": json.dumps(list(s.prefix)),
             "gold_action": s.gold_action} for s in states]


def bc_examples(tokenizer, states: Sequence[PolicyState], max_observation_chars: int) -> list[dict]:
    """input_ids / labels per state: the policy prompt (label -100), then the gold action and end-of-turn."""
    examples = []
    for s in states:
        prompt_ids = tokenizer(prompt_text(tokenizer, context_text(s.task, s.last_action, s.observation,
                                                                   max_observation_chars)),
                               add_special_tokens=False)["input_ids"]
        target = tokenizer(s.gold_action, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        examples.append({"input_ids": prompt_ids + target, "labels": [-100] * len(prompt_ids) + target})
    return examples


def behaviour_cloning(model, tokenizer, states: Sequence[PolicyState], sizes: PolicySizes, seed: int = 0,
                      batch_size: int = 16):
    """A copy of `model` fine-tuned on (prompt, gold next action) by
    :func:`wmkit.core.sft.train_completion_only`: constant rate, no weight decay, no clipping,
    full batches from a reshuffled stream."""
    # Here, not at the top, as the other wmkit.core imports of this module: they import torch (2 s),
    # which the policy's environment side (states, rewards, prompts) does not need.
    from wmkit.core.sft import CompletionOnlyConfig, train_completion_only

    policy = copy.deepcopy(model)
    examples = bc_examples(tokenizer, states, sizes.max_observation_chars)
    if not examples:
        return policy
    config = CompletionOnlyConfig(epochs=sizes.bc_epochs, learning_rate=sizes.bc_learning_rate,
                                  batch_size=batch_size, seed=seed, batching="shuffled_stream", weight_decay=0.0,
                                  schedule="constant", max_grad_norm=None, show_progress=False)
    train_completion_only(policy, tokenizer, examples, config)
    return policy


def train_policy(model, tokenizer, states: Sequence[PolicyState], sizes: PolicySizes, out_dir: str | Path,
                 seed: int = 0, lora: bool = False, show_progress: bool = False):
    """GRPO on the action reward from `model` (left untouched); returns (RLVRResult, ActionReward)."""
    from wmkit.core import world_model_rl as rl  # here: it imports torch (see behaviour_cloning)

    reward = ActionReward()
    config = rl.RLVRConfig.of(sizes.grpo, output_dir=str(out_dir), seed=seed, save_steps=max(5, sizes.grpo.max_steps),
                              show_progress=show_progress, lora=lora, resume=False)
    rows = prompt_rows(tokenizer, states, sizes.max_observation_chars)
    result = rl.train_rlvr(model, tokenizer, [], config, reward_funcs=[reward], prompt_rows=rows)
    return result, reward


def _mean(values) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def evaluate_policy(model, tokenizer, sizes: PolicySizes, fold: str = "train", first_seed: int = HELDOUT_SEED,
                    n_examples: int = 3) -> dict:
    """Greedy episodes on `fold` (game seeds first_seed.., round-robin over the games), all in
    lockstep: one batched generation per step, each episode restored by replay before it acts.
    After an invalid action the prompt shows the unchanged state's observation again, with the
    action marked invalid (see the module doc)."""
    from wmkit.core.worldmodel import generate  # here: it imports torch (see behaviour_cloning)

    episodes = []
    for i in range(sizes.eval_episodes):
        game = sizes.games[i % len(sizes.games)]
        observation, infos = twx.reset(game, first_seed + i, fold)
        episodes.append({"game": game, "seed": first_seed + i, "actions": [], "last_action": "",
                         "observation": observation, "task": infos.get("taskDescription", ""), "infos": infos,
                         "done": False, "invalid": 0})
    for _ in range(sizes.max_episode_steps):
        active = [e for e in episodes if not e["done"]]
        if not active:
            break
        prompts = [prompt_text(tokenizer, context_text(e["task"], e["last_action"], e["observation"],
                                                       sizes.max_observation_chars)) for e in active]
        completions = generate(model, tokenizer, prompts, sizes.grpo.max_completion_length)
        for e, completion in zip(active, completions):
            action = normalize_action(completion[0])
            _, infos = restore(e["game"], e["seed"], fold, e["actions"])
            valid = action in {a.lower() for a in infos.get("validActions", [])}
            observation, _, e["done"], e["infos"] = twx.step(action)
            e["actions"].append(action)
            e["invalid"] += not valid
            if valid:
                e["observation"], e["last_action"] = observation, action
            else:  # nothing changed: same observation, the failed attempt named in the last-action line
                e["last_action"] = f"{action[:40]} (not a valid action)"
    n_actions = sum(len(e["actions"]) for e in episodes)
    return {
        "success": _mean(float(bool(e["infos"].get("tasksuccess"))) for e in episodes),
        "score": _mean(float(e["infos"].get("score", 0.0)) for e in episodes),
        "invalid_share": sum(e["invalid"] for e in episodes) / n_actions if n_actions else float("nan"),
        "mean_steps": _mean(len(e["actions"]) for e in episodes),
        "n_episodes": len(episodes), "n_actions": n_actions,
        "per_game": {g: {"success": _mean(float(bool(e["infos"].get("tasksuccess"))) for e in episodes
                                          if e["game"] == g),
                         "invalid_share": (sum(e["invalid"] for e in episodes if e["game"] == g)
                                           / max(1, sum(len(e["actions"]) for e in episodes if e["game"] == g)))}
                     for g in sizes.games},
        "examples": [{"game": e["game"], "actions": e["actions"][:4]} for e in episodes[:n_examples]],
    }


def policy_rl_experiment(base_model, rwml_model, tokenizer, sizes: PolicySizes, out_dir: str | Path,
                         seed: int = 0, lora: bool = False, show_progress: bool = False,
                         progress: Callable[[str], None] = print) -> dict:
    """The same recipe (behaviour-cloning warm-up, then GRPO on the action reward) from the base
    world model and from the RWML model. Each arm is evaluated on held-out games (train-fold objects,
    unseen seeds) at the start, after the warm-up and after RL, and after RL also on TWX's test fold
    (unseen objects). Returns JSON-able figures (no models)."""
    start = time.perf_counter()
    out_dir = Path(out_dir)
    bc_states = collect_states(sizes.bc_episodes, seed, sizes.games, "train", sizes.random_action_rate,
                               sizes.max_collect_steps)
    rl_states = collect_states(sizes.rl_episodes, seed, sizes.games, "train", sizes.random_action_rate,
                               sizes.max_collect_steps, first_episode=sizes.bc_episodes)
    progress(f"policy states: {len(bc_states)} for the warm-up, {len(rl_states)} for GRPO")
    arms = {}
    for name, model in (("base", base_model), ("rwml", rwml_model)):
        arm_start = time.perf_counter()
        warm = behaviour_cloning(model, tokenizer, bc_states, sizes, seed)
        result, reward = train_policy(warm, tokenizer, rl_states, sizes, out_dir / name, seed, lora, show_progress)
        arms[name] = {
            "start": evaluate_policy(model, tokenizer, sizes), "warm": evaluate_policy(warm, tokenizer, sizes),
            "after": evaluate_policy(result.model, tokenizer, sizes),
            "after_test_fold": evaluate_policy(result.model, tokenizer, sizes, fold="test", first_seed=0),
            "reward_curve": result.curve("reward"), "rl_invalid_share": reward.invalid_share,
            "rl_steps": result.steps, "seconds": round(time.perf_counter() - arm_start, 1)}
        a = arms[name]
        progress(f"{name}: success {a['start']['success']:.2f} → {a['warm']['success']:.2f} (warm-up) → "
                 f"{a['after']['success']:.2f} (RL); invalid {a['start']['invalid_share']:.2f} → "
                 f"{a['warm']['invalid_share']:.2f} → {a['after']['invalid_share']:.2f}")
    return {"sizes": asdict(sizes), "n_states": {"bc": len(bc_states), "rl": len(rl_states)}, "arms": arms,
            "seconds": round(time.perf_counter() - start, 1)}
