"""RWML as the paper states it: one model that predicts and acts, in the phone's settings world.

RWML's headline is about agents: the policy model itself is trained to predict the next state of its
environment (self-supervised RL with the embedding reward, no task reward), and its *task success*
rises; policy RL started from that model beats the same policy RL from the model without it, with
fewer invalid actions. Here, one seed of that, at the kit's size:

    tasks   = WM-R1's settings world (four templates: turn a setting on / off, flip it, match
              another; the profile's world is WM-R1's small world, without the status bar), where a
              tiny policy's success lies between 0 and its ceiling
    model   = a from-scratch policy (WM-R1's shape and tokenizer)
    warm-up = SFT on both formats at once:
                acting:     reference episodes (instruction + screens -> "Thought: ... Action: ...")
                predicting: ``warm_fraction`` of the training transitions (state + action -> next screen)
    tau     = the kit's rule (``wmkit.rewards.embedding.choose_threshold``) on the warm-up's
              predictions of validation transitions: matching = exactly the next screen
    filter  = RWML's hard-sample filter on ``rl_pool`` more transitions (all samples right: too easy)
    RWML    = GRPO on next-screen prediction, r = 1[cos(E(ŝ'), E(s')) ≥ τ]; no task reward
    policy RL (from the warm-up, and from the RWML model) = GRPO on whole episodes in the simulator,
              reward = task success, the same tasks and number of updates
    measure = greedy and sampled (T = 1) success on unseen tasks in the simulator, the share of failed
              (invalid) steps, next-screen accuracy on held-out transitions, which parameters moved

A prediction is asked in one of two contexts (:data:`PREDICTION_CONTEXTS`): ``"screen"`` writes the
screen and the action and asks for the next screen; ``"episode"`` writes the agent's own episode so
far (its instruction, the screens it saw, its turns) and then an imagined call of the action, so the
next screen is predicted exactly where the agent reads screens while it acts
(:func:`wmkit.wm_r1.agent.observation_text`); it writes one of two targets
(:data:`PREDICTION_TARGETS`): the change (``"diff"``, as the kit's world models write it) or the whole
next screen (``"screen"``). Why these choices: research/README.md, 'RWML agent'.

Departures from the paper (tiny models, 2 cores): a from-scratch policy needs the acting format taught
first (the paper starts from instruction-tuned LLMs), so both arms share an SFT warm-up of acting and
predicting; the environment is the kit's phone, not ALFWorld or τ²-Bench.
"""
from __future__ import annotations

import copy
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wmkit.core import models
from wmkit.core.models import parameter_change
from wmkit.core.worldmodel import generate, split_by_episode
from wmkit.envs import phone
from wmkit.envs.base import Transition
from wmkit.profiles import Profile
from wmkit.rewards.embedding import EmbeddingReward, choose_threshold
from wmkit.runs import bench_work_dir
from wmkit.rwml.config import RWMLAgentSizes

PREDICTION_CONTEXTS = ("screen", "episode")
"""What a prediction is given (:func:`prediction_pieces`): one screen and the action, or the agent's
own episode so far and an imagined call of the action."""
PREDICTION_TARGETS = ("diff", "screen")
"""What a prediction writes (:func:`prediction_target`): the change (``phone.compute_diff``, as the
kit's world models write it) or the whole next screen."""

PREDICTION_DATA_SEED = 90_000
"""Seed of the next-screen collection: the same transitions for every training seed (each seed shuffles
which of them the warm-up sees), apart from the task streams of ``wmkit.wm_r1.tasks`` and
``wmkit.wm_r1.learned``."""


def check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    """`value` if it is one of `choices`, else a ValueError that names them."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}: choose one of {', '.join(map(repr, choices))}")
    return value


def prediction_transitions(sizes: RWMLAgentSizes, templates: Sequence[str]) -> dict[str, list[Transition]]:
    """Next-screen transitions of the agent's world (its templates; the status-bar phone where its
    ladder has one), split by episode (the collection policy: the reference plan with random detours
    and a few invalid actions)."""
    return split_by_episode(phone.collect_transitions(sizes.episodes, PREDICTION_DATA_SEED, templates,
                                                      status_bar=sizes.world.ladder.status_bar))


def is_target(t: Transition) -> bool:
    """Whether `t` is asked as a prediction: its action is a phone action (an agent's imagined call of
    an action that does not parse is a failed step, never a prediction)."""
    return phone.parse_action(t.action) is not None


def _histories(transitions: Sequence[Transition]) -> dict[tuple[str, int], list[Transition]]:
    """(episode, step) -> the episode's earlier transitions, in order."""
    by_episode: dict[str, list[Transition]] = {}
    for t in transitions:
        by_episode.setdefault(t.episode, []).append(t)
    out = {}
    for episode, rows in by_episode.items():
        rows.sort(key=lambda r: r.step)
        for i, t in enumerate(rows):
            out[(episode, t.step)] = rows[:i]
    return out


def prediction_pieces(t: Transition, history: Sequence[Transition], context: str, target: str = "screen",
                      screen_view: str = "env") -> list[tuple[str, bool]]:
    """The prompt of one prediction as (text, ends an agent turn?) pieces; an agent turn is followed by
    the end-of-sequence token, as in the agent's own episodes (:func:`wmkit.wm_r1.tasks.sft_examples`).
    `context` (:data:`PREDICTION_CONTEXTS`) says what it is given, `target` what it writes."""
    from wmkit.wm_r1 import agent as ag

    check_choice("prediction target", target, PREDICTION_TARGETS)
    if check_choice("prediction context", context, PREDICTION_CONTEXTS) == "screen":
        ask = "Next screen:" if target == "screen" else "Change:"
        return [(f"Screen:\n{ag.agent_screen(t.state, screen_view)}\nAction: {t.action}\n{ask}\n", False)]
    first = history[0].state if history else t.state
    pieces = [(f"Task: {t.task}\nScreen:\n{ag.agent_screen(first, screen_view)}\n", False)]
    for h in history:
        action = h.action if phone.parse_action(h.action) else h.action or "<invalid>"
        pieces.append((ag.format_turn(ag.describe_action(h.state, h.action, screen_view=screen_view), action=action),
                       True))
        pieces.append((ag.observation_text(h.next_state, view=screen_view), False))
    pieces.append((ag.format_turn(f"check {t.action}.", imagine=t.action), True))
    pieces.append((f"\nImagined: {ag.IMAGINED_NOTE}\n", False))
    return pieces


def prediction_target(t: Transition, target: str = "screen", screen_view: str = "env") -> str:
    """The text a prediction must write: the next screen as the agent sees screens, or the diff."""
    from wmkit.wm_r1 import agent as ag

    if check_choice("prediction target", target, PREDICTION_TARGETS) == "diff":
        return t.diff
    return ag.agent_screen(t.next_state, screen_view)


def matches(t: Transition, prediction: str, target: str = "screen", screen_view: str = "env") -> bool:
    """The matching class of τ's choice: `prediction` gives exactly the next screen (a diff: once
    applied to the screen; a screen: the same text)."""
    if target == "diff":
        try:
            return phone.apply_diff(t.state, prediction) == t.next_state
        except Exception:  # noqa: BLE001 -- model text: anything that does not apply does not match
            return False
    return prediction.strip() == prediction_target(t, "screen", screen_view).strip()


class PredictionData:
    """Prompts (text), prompt token ids and targets of the next-screen predictions of `transitions`."""

    def __init__(self, tokenizer, transitions: Sequence[Transition], all_transitions: Sequence[Transition],
                 context: str, target: str = "screen", screen_view: str = "env", max_prompt_tokens: int | None = None):
        """`max_prompt_tokens`: leave out a prediction whose prompt is longer (a long episode's history)."""
        histories = _histories(all_transitions)
        eos_text, eos = tokenizer.eos_token, tokenizer.eos_token_id
        self.transitions, self.prompts, self.prompt_ids, self.targets = [], [], [], []
        for t in transitions:
            if not is_target(t):
                continue
            pieces = prediction_pieces(t, histories.get((t.episode, t.step), []), context, target, screen_view)
            ids = []
            for text, turn_end in pieces:
                ids += tokenizer(text, add_special_tokens=False)["input_ids"] + ([eos] if turn_end else [])
            if max_prompt_tokens is not None and len(ids) > max_prompt_tokens:
                continue
            self.transitions.append(t)
            self.prompts.append("".join(text + (eos_text if turn_end else "") for text, turn_end in pieces))
            self.prompt_ids.append(ids)
            self.targets.append(prediction_target(t, target, screen_view))
        self.target, self.screen_view = target, screen_view

    def __len__(self) -> int:
        return len(self.transitions)

    def sft_examples(self, tokenizer, max_length: int) -> list[dict]:
        """input_ids / labels (-100 on the prompt) of each prediction, the target ending in end-of-sequence."""
        out = []
        for ids, target in zip(self.prompt_ids, self.targets):
            answer = tokenizer(target, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            if len(ids) + len(answer) <= max_length:
                out.append({"input_ids": ids + answer, "labels": [-100] * len(ids) + answer})
        return out

    def rows(self, indices: Sequence[int] | None = None) -> list[dict]:
        """GRPO dataset rows: the prompt and the true next screen (the embedding reward's column)."""
        indices = range(len(self)) if indices is None else indices
        return [{"prompt": self.prompts[i], "next_state": self.targets[i]} for i in indices]


def _mean(values) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def prediction_quality(model, tokenizer, data: PredictionData, reward: EmbeddingReward, max_new_tokens: int,
                       seed: int = 0) -> dict:
    """Next-screen accuracy on `data`: exact and embedding reward rate, greedy and one sample at T = 1,
    all transitions and the changed ones (where the action changed the screen); plus the greedy
    predictions (to count how many a training step changed)."""
    out: dict[str, Any] = {"n": len(data)}
    greedy = [p[0] for p in generate(model, tokenizer, data.prompts, max_new_tokens)]
    sampled = [p[0] for p in generate(model, tokenizer, data.prompts, max_new_tokens, do_sample=True, seed=seed)]
    for mode, predictions in (("greedy", greedy), ("sampled", sampled)):
        sims = reward.similarities(predictions, data.targets)
        rows = [{"exact": float(matches(t, p, data.target, data.screen_view)), "embedding_reward": float(s >= reward.tau),
                 "changed": t.changed} for p, y, s, t in zip(predictions, data.targets, sims, data.transitions)]
        out[mode] = {k: _mean(r[k] for r in rows) for k in ("exact", "embedding_reward")}
        out[mode]["changed"] = {k: _mean(r[k] for r in rows if r["changed"]) for k in ("exact", "embedding_reward")}
    out["predictions"] = greedy
    return out


def parameter_change_by_block(before, after) -> dict[str, float | None]:
    """Relative L2 change per block of a Llama model: embeddings, each decoder layer, final norm, output head."""
    names = [n for n, _ in before.named_parameters()]
    blocks: dict[str, list[str]] = {}
    for name in names:
        parts = name.split(".")
        if "layers" in parts:
            key = ".".join(parts[:parts.index("layers") + 2])
        elif "embed_tokens" in parts:
            key = "embed_tokens"
        elif "lm_head" in parts:
            key = "lm_head"
        else:
            key = ".".join(parts[:-1]) or name
        blocks.setdefault(key, []).append(name)
    return {key: parameter_change(before, after, prefixes=members) for key, members in blocks.items()}


def acting(model, tokenizer, tasks, world, seed: int) -> dict:
    """Greedy and sampled (T = 1) simulator success on `tasks`, per episode steps, imagined calls and
    failed steps, the share of failed steps among all steps (``invalid_share``), per template, and
    the greedy episodes' actions (``greedy_actions``, one list per task, to compare two policies)."""
    from wmkit.wm_r1.evaluation import evaluate, success_per_template
    from wmkit.wm_r1.oracle import NoisyOracle

    out: dict[str, Any] = {}
    for mode, greedy in (("greedy", True), ("sampled", False)):
        r = evaluate(model, tokenizer, tasks, NoisyOracle(0.0), world.max_steps, greedy=greedy,
                     max_turn_tokens=world.max_turn_tokens, max_completion_tokens=world.grpo.max_completion_length,
                     seed=seed, screen_view=world.screen_view)
        out[mode] = {k: r[k] for k in ("success", "steps", "wm_calls", "invalid")}
        out[mode]["invalid_share"] = r["invalid"] / r["steps"] if r["steps"] else float("nan")
        out[mode]["per_template"] = success_per_template(r["episodes"])
        if greedy:
            out["greedy_actions"] = [list(e.actions) for e in r["episodes"]]
    return out


def reference_nll(model, tokenizer, tasks, world, seed: int = 0, batch_size: int = 16) -> float:
    """Mean negative log-likelihood per agent token of the reference episodes of `tasks` (no imagined
    calls), teacher-forced: how much probability the policy gives the expert's turns. A finer measure
    of whether training moved the policy towards or away from acting right than success."""
    import torch

    from wmkit.wm_r1.tasks import sft_examples

    examples = sft_examples(tokenizer, tasks, 0.0, seed, world.policy.max_positions, world.thought_index,
                            world.screen_view)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    try:
        with torch.no_grad():
            for start in range(0, len(examples), batch_size):
                batch = examples[start:start + batch_size]
                width = max(len(e["input_ids"]) for e in batch)
                ids = torch.tensor([e["input_ids"] + [tokenizer.pad_token_id] * (width - len(e["input_ids"]))
                                    for e in batch], device=device)
                labels = torch.tensor([e["labels"] + [-100] * (width - len(e["labels"])) for e in batch],
                                      device=device)
                mask = (torch.arange(width, device=device)[None, :]
                        < torch.tensor([len(e["input_ids"]) for e in batch], device=device)[:, None]).long()
                logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
                target = labels[:, 1:]
                losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                                           target.reshape(-1), ignore_index=-100, reduction="sum")
                total += float(losses)
                count += int((target != -100).sum())
    finally:
        if was_training:
            model.train()
    return total / count if count else float("nan")


def greedy_actions_changed(a: dict, b: dict) -> float:
    """Share of tasks whose greedy episode took other actions under policy `b` than under `a`
    (:func:`acting` results of the same tasks)."""
    pairs = list(zip(a["greedy_actions"], b["greedy_actions"]))
    return _mean(float(x != y) for x, y in pairs)


WARM_UP_KEY = "wmkit_warm_up.json"
"""Beside a saved warm-up: the settings it was trained with (a model is reused only for the same ones)."""


def save_warm_up(model, tokenizer, folder: Path, key: dict, tiny_config) -> None:
    """Save the warm-up model with its settings (the key file last: its presence marks a finished save)."""
    import json

    models.save_model(model, tokenizer, folder, tiny_config=tiny_config)
    (folder / WARM_UP_KEY).write_text(json.dumps(key, sort_keys=True, default=str))


def load_warm_up(folder: Path, key: dict):
    """The warm-up model saved in `folder` with exactly these settings, or None."""
    import json

    path = folder / WARM_UP_KEY
    if not path.exists() or json.loads(path.read_text()) != json.loads(json.dumps(key, sort_keys=True, default=str)):
        return None
    model, _ = models.load_model(str(folder))
    return model


def run_rwml_agent_seed(sizes: RWMLAgentSizes, seed: int, out_dir: str | Path, embedder=None,
                        progress: Callable[[str], None] = print, policy_rl: bool = True,
                        warm_dir: str | Path | None = None, acting_only_control: bool | None = None) -> dict:
    """One seed of the comparison (see the module docstring). Returns a JSON-able dict:
    "n" (data counts), "threshold" (τ and its pairs' counts), "filter", "rwml_curve",
    "first_step_reward_share", "param_change" (RWML vs warm-up, whole model) and
    "param_change_by_block", "prediction_change" (share of held-out greedy predictions RWML changed),
    "moved", "acting_change" (share of evaluation tasks whose greedy actions RWML changed),
    "reference_nll" (per model: :func:`reference_nll` on the first ``fidelity_episodes`` evaluation
    tasks), "prediction" {warm, rwml: :func:`prediction_quality` without the predictions},
    "acting" {warm, rwml, warm_policy_rl, rwml_policy_rl: :func:`acting` without the actions},
    "policy_rl" (per arm: parameter change, success over training), "policy_rl_acting_change",
    "instruction_blind", "seconds" (per stage). The warm-up is saved in `warm_dir` (default
    out_dir/warm) and loaded from there by a run with the same warm-up settings. With
    `acting_only_control` (None: ``sizes.acting_only_control``) the same warm-up without its prediction examples is trained beside it and
    measured ("acting_only": :func:`acting` and "reference_nll"): does predicting in the warm-up
    change acting?"""
    from transformers import set_seed as seed_everything  # here: transformers takes seconds to import

    from wmkit.core import world_model_rl as rl
    from wmkit.rewards.wm_r1 import WMR1RewardConfig
    from wmkit.rwml.experiment import shared_embedder
    from wmkit.rwml.method import filter_prompts, first_step_reward_share
    from wmkit.wm_r1.evaluation import instruction_blind_success
    from wmkit.wm_r1.experiment import build_policy, train_policy_sft
    from wmkit.wm_r1.ladder import ladder_eval_tasks, ladder_world, on_ladder_phone, rung_config
    from wmkit.wm_r1.method import train_wm_r1
    from wmkit.wm_r1.oracle import NoisyOracle
    from wmkit.wm_r1.tasks import SFT_TASK_SEED, grpo_pool, sft_examples, template_balanced_tasks

    if acting_only_control is None:
        acting_only_control = sizes.acting_only_control
    check_choice("prediction_context", sizes.prediction_context, PREDICTION_CONTEXTS)
    check_choice("prediction_target", sizes.prediction_target, PREDICTION_TARGETS)
    if sizes.policy_reward not in ("success", "composite"):
        raise ValueError(f"policy_reward must be 'success' or 'composite', not {sizes.policy_reward!r}")
    world = sizes.world
    if world.ladder is None:
        raise ValueError("RWMLAgentSizes.world needs its ladder (the settings world's learned_world sizes)")
    out_dir = Path(out_dir)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    start = clock

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = round(now - clock, 1)
        clock = now

    seed_everything(seed)
    templates = ladder_world(world)
    sft_tasks = on_ladder_phone(template_balanced_tasks(world.ladder.sft_tasks, SFT_TASK_SEED + seed, templates),
                                world)
    model, tokenizer = build_policy(world, sft_tasks, seed)
    max_length = world.grpo.max_completion_length + 200  # the longest SFT example, as WM-R1's start
    splits = prediction_transitions(sizes, templates)
    everything = [t for rows in splits.values() for t in rows]
    train = list(splits["train"])
    random.Random(seed).shuffle(train)
    n_warm = max(1, round(sizes.warm_fraction * len(train)))
    context, target, view = sizes.prediction_context, sizes.prediction_target, world.screen_view
    # A prompt and its answer fit the policy's context (an episode's history can be long).
    cap = world.policy.max_positions - sizes.grpo.max_completion_length - 8

    def data(rows):
        return PredictionData(tokenizer, rows, everything, context, target, view, max_prompt_tokens=cap)

    warm_data = data(train[:n_warm])
    pool = data(train[n_warm:][:sizes.rl_pool])
    val = data((splits["val"] or splits["test"])[:sizes.tau_transitions])
    test = data((splits["test"] or splits["val"])[:sizes.eval_transitions])
    lap("data")

    # 1. the warm-up: one model, both formats in one SFT (saved in warm_dir: a rerun of this seed with
    # the same warm-up settings loads it instead of training it again)
    warm_dir = Path(warm_dir) if warm_dir else out_dir / "warm"
    acting_examples = sft_examples(tokenizer, sft_tasks, world.imagine_rate, seed, max_length, world.thought_index,
                                   view)
    predicting_examples = warm_data.sft_examples(tokenizer, max_length)
    warm_key = {"seed": seed, "world": asdict(world), "episodes": sizes.episodes, "warm_fraction": sizes.warm_fraction,
                "prediction_context": context, "prediction_target": target,
                "prediction_repeats": sizes.prediction_repeats}
    if acting_only_control:
        acting_only = copy.deepcopy(model)  # the same initialisation, before the warm-up trains `model`
    warm = load_warm_up(warm_dir, warm_key)
    if warm is None:
        train_policy_sft(model, tokenizer, acting_examples + predicting_examples * sizes.prediction_repeats,
                         world.ladder.sft_epochs, world.sft_learning_rate, world.sft_batch_size, seed, progress=False)
        warm = model
        save_warm_up(warm, tokenizer, warm_dir, warm_key, world.policy)
    lap("warm_up")

    # 2. τ on the warm-up's predictions of validation transitions
    embedder = embedder or shared_embedder()
    greedy = generate(warm, tokenizer, val.prompts, sizes.grpo.max_completion_length)
    samples = (generate(warm, tokenizer, val.prompts, sizes.grpo.max_completion_length, do_sample=True,
                        num_samples=sizes.tau_samples, seed=seed) if sizes.tau_samples else [[] for _ in greedy])
    pairs = [(p, y) for g, s, y in zip(greedy, samples, val.targets) for p in g + s]
    similarities = [float(x) for x in embedder.cosine([p for p, _ in pairs], [y for _, y in pairs])]
    matching = [matches(t, p, target, view) for t, g, s in zip(val.transitions, greedy, samples) for p in g + s]
    choice = choose_threshold(similarities, matching)
    reward = EmbeddingReward(embedder, choice.tau)
    progress(f"seed {seed}: tau = {choice.tau:.4f} ({choice.n_exact} matching / {choice.n_inexact} other pairs"
             f"{', DEFAULT: one class missing' if choice.fallback else ''})")
    lap("tau")

    # 3. the hard-sample filter
    kept, filter_stats = filter_prompts(warm, tokenizer, list(range(len(pool))), pool.prompts, pool.targets, reward,
                                        sizes.easy_keep_probability, sizes.grpo.max_completion_length, seed,
                                        samples=sizes.filter_samples)
    lap("filter")

    # 4. RWML: GRPO on next-screen prediction with the embedding reward, no task reward
    rows = pool.rows(kept) or pool.rows()
    config = rl.RLVRConfig.of(sizes.grpo, output_dir=str(out_dir / "rwml"), reward="embedding", unchanged_ratio=0.0,
                              seed=seed, save_steps=sizes.grpo.max_steps + 1, resume=False, show_progress=False,
                              lora=False)
    padding = tokenizer.padding_side
    trained = rl.train_rlvr(warm, tokenizer, [], config, reward_funcs=[reward], prompt_rows=rows)
    tokenizer.padding_side = padding
    rwml = trained.model
    share = first_step_reward_share(trained.log_history)
    lap("rwml")

    # 5. measurements: predictions, acting
    prediction = {name: prediction_quality(m, tokenizer, test, reward, sizes.grpo.max_completion_length, seed)
                  for name, m in (("warm", warm), ("rwml", rwml))}
    changed = _mean(float(a != b) for a, b in zip(prediction["warm"].pop("predictions"),
                                                   prediction["rwml"].pop("predictions")))
    eval_tasks = ladder_eval_tasks(world)
    acting_results = {"warm": acting(warm, tokenizer, eval_tasks, world, seed),
                      "rwml": acting(rwml, tokenizer, eval_tasks, world, seed)}
    nll_tasks = eval_tasks[:world.ladder.fidelity_episodes]
    nll = {"warm": reference_nll(warm, tokenizer, nll_tasks, world, seed),
           "rwml": reference_nll(rwml, tokenizer, nll_tasks, world, seed)}
    lap("evaluation")
    change = parameter_change(warm, rwml)
    result: dict[str, Any] = {
        "seed": seed, "prediction_context": context, "prediction_target": target,
        "n": {"train": len(train), "warm": len(warm_data), "pool": len(pool), "kept": len(kept), "val": len(val),
              "test": len(test), "acting_examples": len(acting_examples),
              "predicting_examples": len(predicting_examples)},
        "threshold": asdict(choice), "filter": filter_stats, "rwml_curve": trained.curve("reward"),
        "first_step_reward_share": share, "param_change": change,
        "param_change_by_block": parameter_change_by_block(warm, rwml),
        "prediction_change": changed, "moved": bool(change is not None and change > 0 and changed > 0),
        "acting_change": greedy_actions_changed(acting_results["warm"], acting_results["rwml"]),
        "reference_nll": nll, "prediction": prediction, "acting": acting_results}
    progress(f"seed {seed}: warm-up greedy success {acting_results['warm']['greedy']['success']:.3f} -> RWML "
             f"{acting_results['rwml']['greedy']['success']:.3f}; next screen exact (greedy) "
             f"{prediction['warm']['greedy']['exact']:.2f} -> {prediction['rwml']['greedy']['exact']:.2f}; "
             f"param change {change:.2e}")

    # 6. policy RL from each start: the same GRPO in the simulator, the same tasks and updates
    if policy_rl:
        rl_tasks = on_ladder_phone(grpo_pool(world, seed, templates), world)
        policy_reward = (WMR1RewardConfig(beta=0.0, gamma=0.0, max_steps=world.max_steps)
                         if sizes.policy_reward == "success" else WMR1RewardConfig(max_steps=world.max_steps))
        result["policy_rl"] = {}
        for name, start_model in (("warm", warm), ("rwml", rwml)):
            rung = rung_config(world, out_dir / f"policy_rl_{name}", seed, reward=policy_reward)
            run = train_wm_r1(rung, copy.deepcopy(start_model), tokenizer, rl_tasks, NoisyOracle(0.0, seed=seed))
            acting_results[f"{name}_policy_rl"] = acting(run.model, tokenizer, eval_tasks, world, seed)
            nll[f"{name}_policy_rl"] = reference_nll(run.model, tokenizer, nll_tasks, world, seed)
            quarter = max(1, len(run.history) // 4)
            result["policy_rl"][name] = {
                "param_change": parameter_change(start_model, run.model),
                "success_first_last_quarter": [_mean(h["success"] for h in run.history[:quarter]),
                                               _mean(h["success"] for h in run.history[-quarter:])],
                "train_seconds": round(run.seconds, 1)}
            progress(f"seed {seed}: policy RL from {name}: greedy success "
                     f"{acting_results[f'{name}_policy_rl']['greedy']['success']:.3f}")
        lap("policy_rl")
    if acting_only_control:
        train_policy_sft(acting_only, tokenizer, acting_examples, world.ladder.sft_epochs, world.sft_learning_rate,
                         world.sft_batch_size, seed, progress=False)
        result["acting_only"] = {"acting": acting(acting_only, tokenizer, eval_tasks, world, seed),
                                 "reference_nll": reference_nll(acting_only, tokenizer, nll_tasks, world, seed)}
        result["acting_only"]["acting"].pop("greedy_actions")
        lap("acting_only_control")
    if "rwml_policy_rl" in acting_results:
        result["policy_rl_acting_change"] = greedy_actions_changed(acting_results["warm_policy_rl"],
                                                                   acting_results["rwml_policy_rl"])
    for entry in acting_results.values():
        entry.pop("greedy_actions", None)
    result["instruction_blind"] = instruction_blind_success(eval_tasks)
    seconds["total"] = round(time.perf_counter() - start, 1)
    result["seconds"] = seconds
    return result


def run_rwml_agent(profile: Profile, seed: int, runs_root: Path, sizes: RWMLAgentSizes) -> dict:
    """The benchmark's one-seed run of :func:`run_rwml_agent_seed` (checkpoints in its work folder)."""
    return run_rwml_agent_seed(sizes, seed, bench_work_dir(runs_root, "rwml_agent", seed), progress=lambda line: None)
