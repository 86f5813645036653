"""WM-R1 (notebook 03): a phone agent trained with GRPO entirely inside a learned world model.

One readable path:

1. **Tasks.** Phone tasks split by template (``phone.split_templates``): held-out tasks have goal
   structures the agent never trained on. The profile keeps templates whose shortest solution
   fits its step budget (``max_ref_len``).
2. **Policy.** A tiny from-scratch Llama with a byte-level BPE tokenizer trained on the agent's
   text, warm-started by SFT on reference trajectories (the paper starts from an
   instruction-tuned VLM; a from-scratch model needs the format and the apps taught first). The
   SFT data put an imagined ``call_wm(...)`` turn before a share of the steps, so the agent starts
   out calling the world model. A hub / offline pretrained model gets LoRA (QLoRA on CUDA).
3. **GRPO** through TRL's ``GRPOTrainer`` with a ``rollout_func`` that plays whole episodes
   (:func:`wmkit.wm_r1.agent.run_episodes`) against a transition source and returns an ``env_mask`` that
   keeps screens out of the loss. WM-R1's source is the world model: every next screen is a
   prediction, success is judged on the predicted final screen, the simulator is never stepped.
   Reward: the composite of :mod:`wmkit.rewards.wm_r1` (α·R_succ + β·R_L + γ·R_WM) per group.
4. **Evaluation** in the real simulator, greedy (and sampled at T=1), on held-out templates and on
   unseen tasks of the training templates, against baselines: the SFT policy (zero-shot), GRPO
   with real-simulator transitions, inference-time simulation (best-of-K with the world model),
   WM-R1 without imagined calls, WM-R1 without the length term.

:func:`train_wm_r1` runs one training job from a :class:`WMR1Config`; :func:`run_experiment` runs
the whole comparison for a profile and seed at the profile's ``wm_r1`` sizes (`wmkit.profiles`);
``python -m wmkit run wm-r1 --profile cpu --seeds 3`` repeats it over seeds and writes JSON.
"""
from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from wmkit import stats
from wmkit.core import models
from wmkit.envs import phone
from wmkit.profiles import WM_R1_ARMS, Profile, WMR1Sizes, get_profile
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.runs import REPO, bench_work_dir
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1.method import WMR1Config, _make_source, train_wm_r1

PAPER = {
    "wm_r1_7b_androidworld": 39.8, "ui_r1_7b_androidworld": 30.8, "gain_7b": 9.0,
    "wm_r1_3b_androidworld": 29.5, "baseline_3b": 18.6, "no_cot": -5.2, "length_reward": 3.3,
    "wm_calls_per_trajectory": (4.0, 2.5, 1.8), "hours_15_episodes_h200": 11.2,
}


"""Headline numbers of Han & Qian (2026), shown beside the kit's."""


ARMS = WM_R1_ARMS
"""The comparison arms (defined with the size table, whose ``baselines`` name them)."""


def task_templates(max_ref_len: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """(train, held-out) templates whose reference solutions have at most `max_ref_len` actions;
    the split is ``phone.split_templates(seed)`` (by template: held-out tasks are unseen tasks)."""
    train, held = phone.split_templates(seed)

    def short(t: str) -> bool:
        return max(len(phone.reference_solution(phone.make_task(t, s))) for s in range(3)) <= max_ref_len
    return [t for t in train if short(t)], [t for t in held if short(t)]


def unique_tasks(n: int, seed: int, templates: Sequence[str]) -> list[phone.PhoneTask]:
    """`n` tasks whose prompts (instruction + first screen) are all different, so a prompt
    names its task (TRL's rollout_func only receives prompt strings)."""
    rng = random.Random(seed)
    out, seen = [], set()
    for _ in range(50 * n):
        if len(out) >= n:
            break
        task = phone.make_task(rng.choice(list(templates)), rng.randrange(2**31))
        key = ag.prompt_text(task, ag.initial_screen(task))
        if key not in seen and len(phone.reference_solution(task)) <= 99:
            seen.add(key)
            out.append(task)
    return out


def balanced_tasks(n: int, seed: int, templates: Sequence[str]) -> list[phone.PhoneTask]:
    """`n` tasks, the templates in turn (as many of each, ±1), for GRPO's task pool.

    :func:`unique_tasks` needs distinct prompts, and templates differ wildly in how many they have
    (an instruction on the home screen is the whole prompt: "Open the Display settings" has one,
    an alarm swap hundreds), so its pool is dominated by a few templates (cpu, 300 tasks: 86
    alarm_swap, 1 airplane_on) while the evaluation draws templates uniformly. Here each
    template gets its share; a prompt drawn again reuses its first task (a prompt must name one
    task), so the list repeats tasks of templates with few prompts."""
    rng = random.Random(seed)
    order = list(templates)
    rng.shuffle(order)
    first: dict[str, phone.PhoneTask] = {}
    out = []
    for k in range(n):
        task = phone.make_task(order[k % len(order)], rng.randrange(2**31))
        out.append(first.setdefault(ag.prompt_text(task, ag.initial_screen(task)), task))
    rng.shuffle(out)
    return out


def _seeded_template_order(n: int, seed: int, templates: Sequence[str]) -> tuple[random.Random, list[str]]:
    """The checks and the seeded template order that `template_balanced_tasks` and `fresh_tasks`
    share: their random stream (templates shuffled, then one draw per task) must stay the same."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not templates:
        raise ValueError("templates is empty")
    rng = random.Random(seed)
    order = list(templates)
    rng.shuffle(order)
    return rng, order


def template_weights(weights: Mapping[str, float] | None, templates: Sequence[str]) -> dict[str, float]:
    """Every template's draw weight: `weights`' value where it names the template, 1 elsewhere.
    A clear ValueError for a name that is not one of `templates` or a weight that is not a finite
    number above 0."""
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(templates))
    if unknown:
        raise ValueError(f"template weights name templates not drawn from: {unknown}; templates: {sorted(templates)}")
    for name, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
            raise ValueError(f"the weight of template {name!r} must be a finite number above 0, not {weight!r}")
    return {t: float(weights.get(t, 1.0)) for t in templates}


def _weighted_turns(order: Sequence[str], weights: Mapping[str, float], n: int) -> list[str]:
    """`n` templates taken in turn, each as often as its weight says (smooth weighted round robin:
    every turn each template earns its weight in credit, the one with the most credit -- the
    first in `order` on a tie -- is taken and pays the total weight). Every prefix then holds each
    template within about one draw of its share, spread out rather than in blocks, and with equal
    weights the turns are exactly `order` over and over (the unweighted draw's stream)."""
    share = [weights[t] for t in order]
    total = sum(share)
    credit = [0.0] * len(order)
    turns = []
    for _ in range(n):
        for i, w in enumerate(share):
            credit[i] += w
        pick = max(range(len(order)), key=credit.__getitem__)  # max() keeps the first on a tie
        credit[pick] -= total
        turns.append(order[pick])
    return turns


def template_balanced_tasks(n: int, seed: int, templates: Sequence[str],
                            weights: Mapping[str, float] | None = None) -> list[phone.PhoneTask]:
    """`n` freshly drawn tasks, the templates in turn (as many of each, ±1): the SFT start's
    reference data. :func:`unique_tasks` skews towards templates with many distinct instructions
    (cpu, a pool of 300: 86 alarm_swap, 1 airplane_on) while the evaluation draws templates
    uniformly; SFT needs no distinct prompts, so every task here is a new draw (a template with one
    instruction repeats it, on new worlds).

    `weights` ({template: weight}, unnamed templates 1; ``WMR1LadderSizes.sft_template_weights``)
    draws a template that many times as often, e.g. 4 on the list templates gives the list lookup
    more practice at the same number of episodes. None or all-equal weights give exactly the
    unweighted tasks."""
    rng, order = _seeded_template_order(n, seed, templates)
    turns = _weighted_turns(order, template_weights(weights, templates), n)
    out = [phone.make_task(template, rng.randrange(2**31)) for template in turns]
    rng.shuffle(out)
    return out


def fresh_tasks(n: int, seed: int, templates: Sequence[str]) -> list[phone.PhoneTask]:
    """`n` distinct task worlds, the templates in turn (as many of each, ±1): a GRPO pool in which
    no rollout group replays a world. :func:`wmkit.wm_r1.method.train_wm_r1` gives each group the
    next task of its prompt, so with at least steps × prompts_per_step of these every group plays
    a world of its own. :func:`balanced_tasks` keeps one task per prompt instead (a 300-row pool of
    10 templates held 152 distinct worlds), and a policy trained on it can learn those worlds
    rather than the templates. Distinct: no two tasks share (instruction, initial world)."""
    rng, order = _seeded_template_order(n, seed, templates)
    out, seen = [], set()
    for k in range(n):
        template = order[k % len(order)]
        for _ in range(1000):
            task = phone.make_task(template, rng.randrange(2**31))
            key = (task.instruction, json.dumps(task.initial, sort_keys=True))
            if key not in seen:
                break
        else:
            raise ValueError(f"template {template!r} has too few distinct worlds for {n} fresh tasks")
        seen.add(key)
        out.append(task)
    rng.shuffle(out)
    return out


def reference_episode(task: phone.PhoneTask, imagine_rate: float, rng: random.Random,
                      thought_index: bool = False, screen_view: str = "env") -> list[tuple[str, bool]]:
    """A reference trajectory as (text, written by the agent?) pieces, prompt first. A share
    `imagine_rate` of the steps first imagine their action with call_wm (the imagined screen is
    the true next screen here). `thought_index`: tap thoughts name the index too
    (:func:`wmkit.wm_r1.agent.describe_action`); `screen_view`: the agent's view of the screens
    (:func:`wmkit.wm_r1.agent.agent_screen`), which an indexed thought follows."""
    env = phone.PhoneEnv()
    screen = env.reset(task=task)
    pieces = [(ag.prompt_text(task, screen, screen_view), False)]
    for action in phone.reference_solution(task):
        thought = ag.describe_action(screen, action, thought_index, screen_view)
        nxt = env.clone().step(action).observation
        if action != "finished()" and rng.random() < imagine_rate:
            pieces.append((ag.format_turn(f"check {action}.", imagine=action), True))
            pieces.append((ag.observation_text(nxt, imagined=True, view=screen_view), False))
        pieces.append((ag.format_turn(thought, action=action), True))
        result = env.step(action)
        if not result.done:
            pieces.append((ag.observation_text(result.observation, view=screen_view), False))
        screen = result.observation
    return pieces


def tokenizer_corpus(tasks: Sequence[phone.PhoneTask], thought_index: bool = False,
                     screen_view: str = "env") -> list[str]:
    rng = random.Random(0)
    texts = [ag.IMAGINED_NOTE, "Thought: Action: call_wm(action='') Screen: Imagined: Task:"]
    for task in tasks:
        texts += [text for text, _ in reference_episode(task, 0.5, rng, thought_index, screen_view)]
    return texts


def sft_examples(tokenizer, tasks: Sequence[phone.PhoneTask], imagine_rate: float, seed: int,
                 max_length: int, thought_index: bool = False, screen_view: str = "env") -> list[dict]:
    """input_ids / labels (-100 on everything the agent did not write) per reference episode
    (:func:`reference_episode`: `thought_index`, `screen_view`)."""
    rng = random.Random(seed)
    eos = tokenizer.eos_token_id
    examples = []
    for task in tasks:
        ids, labels = [], []
        for text, from_agent in reference_episode(task, imagine_rate, rng, thought_index, screen_view):
            piece = tokenizer(text, add_special_tokens=False)["input_ids"]
            if from_agent:
                piece = piece + [eos]
            ids += piece
            labels += piece if from_agent else [-100] * len(piece)
        if len(ids) <= max_length:
            examples.append({"input_ids": ids, "labels": labels})
    return examples


def train_policy_sft(model, tokenizer, examples: list[dict], epochs: float, learning_rate: float,
                     batch_size: int, seed: int, progress: bool = True) -> list[float]:
    """The policy warm start: :func:`wmkit.core.sft.train_completion_only` with its defaults (AdamW
    weight decay 0.01, warm-up + cosine, clipping at 1.0, length-grouped batches); returns the
    loss per step."""
    from wmkit.core.sft import CompletionOnlyConfig, train_completion_only

    config = CompletionOnlyConfig(epochs=epochs, learning_rate=learning_rate, batch_size=batch_size, seed=seed,
                                  batching="length_grouped", weight_decay=0.01, schedule="warmup_cosine",
                                  max_grad_norm=1.0, show_progress=progress, progress_desc="policy SFT")
    return train_completion_only(model, tokenizer, examples, config)


def build_policy(sizes: WMR1Sizes, train_tasks: Sequence[phone.PhoneTask], seed: int, model_name: str | None = None,
                 quantization: str = "auto"):
    """(model, tokenizer): a tiny from-scratch Llama with a tokenizer trained on the agent's
    text, or a pretrained model (its own tokenizer) with LoRA adapters on its attention and MLP
    projections -- on NF4 4-bit weights with CUDA (QLoRA; `quantization`, see
    `models.resolve_quantization`) -- that the SFT warm start and then GRPO train."""
    if model_name in (None, "tiny"):
        tokenizer = models.train_tokenizer(tokenizer_corpus(list(train_tasks)[:200], sizes.thought_index,
                                                            sizes.screen_view),
                                           sizes.policy.vocab_size,
                                           split=sizes.tokenizer_split)
        model = models.build_tiny_model(tokenizer, sizes.policy, seed=seed)
        return model, tokenizer
    quant = models.resolve_quantization(quantization)
    model, tokenizer = models.load_model(model_name, quantization=quant)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # The adapters go on now, not at GRPO: the SFT warm start cannot train 4-bit weights either.
    model = models.add_lora(model, r=8, alpha=16, quantized=quant == "nf4",
                            gradient_checkpointing=torch.cuda.is_available())
    return model, tokenizer


def evaluate(model, tokenizer, tasks: Sequence[phone.PhoneTask], world_model: ag.WorldModelSource | None,
             max_steps: int, greedy: bool = True, imagine: bool = True, best_of_k: int = 0,
             max_turn_tokens: int = 24, max_completion_tokens: int = 1400, seed: int = 0,
             progress: bool = False, screen_view: str = "env") -> dict:
    """Success in the real simulator (judge_success on the real final state), with the episodes.
    `screen_view`: the agent's view of the screens (the one its policy was trained with)."""
    torch.manual_seed(seed)
    policy = ag.Policy(model, tokenizer, max_turn_tokens=max_turn_tokens, greedy=greedy, temperature=1.0)
    source = ag.SimulatorSource()
    config = ag.AgentConfig(max_steps=max_steps, imagine=imagine, best_of_k=best_of_k,
                            max_completion_tokens=max_completion_tokens, screen_view=screen_view)
    episodes = ag.run_episodes(policy, tasks, source, imaginer=world_model if imagine or best_of_k else None,
                               config=config, progress=progress)
    out = ag.summarize_episodes(episodes)
    out["episodes"] = episodes
    return out


def world_model_error(world_model: ag.WorldModelSource, episodes: Sequence[ag.Episode],
                      limit: int = 200) -> dict:
    """The world model's exact next-screen accuracy on the transitions the agent really made
    (replayed in the simulator) — its error where it matters for this agent."""
    pairs, truth = [], []
    for ep in episodes:
        env = phone.PhoneEnv(max_steps=10_000)
        screen = env.reset(task=ep.task)
        for action in ep.actions:
            if phone.parse_action(action) in (None, ("finished",)):
                continue
            nxt = env.step(action).observation
            pairs.append((screen, action))
            truth.append(nxt)
            screen = nxt
    pairs, truth = pairs[:limit], truth[:limit]
    if not pairs:
        return {"n": 0, "exact": float("nan"), "changed_exact": float("nan")}
    predicted = world_model.predict(pairs)
    exact = [p == t for p, t in zip(predicted, truth)]
    changed = [e for e, (s, _), t in zip(exact, pairs, truth) if s != t]
    return {"n": len(pairs), "exact": sum(exact) / len(exact),
            "changed_exact": sum(changed) / len(changed) if changed else float("nan"), "n_changed": len(changed)}


def replayed_success(episode: ag.Episode) -> bool:
    """Whether `episode`'s actions, replayed in the real simulator from its task's start, reach the
    goal (the actions that do not parse, and finished(), are skipped as the agent loop skips them):
    the truth an episode played inside a world model is judged against."""
    env = phone.PhoneEnv(max_steps=10_000)
    env.reset(task=episode.task)
    for action in episode.actions:
        if phone.parse_action(action) not in (None, ("finished",)):
            env.step(action)
    return env.is_success()


def judge_agreement(model, tokenizer, tasks: Sequence[phone.PhoneTask], world_model: ag.WorldModelSource,
                    max_steps: int, seed: int = 0, max_turn_tokens: int = 24, policy: ag.Policy | None = None,
                    screen_view: str = "env") -> dict:
    """Play episodes inside the world model, replay their actions in the simulator and compare
    the imagined success with the real one (a diagnostic, outside training). `policy` replaces the
    sampling policy built from (model, tokenizer) (a scripted one in tests); `screen_view`: the
    agent's view of the (predicted) screens."""
    torch.manual_seed(seed)
    policy = policy or ag.Policy(model, tokenizer, max_turn_tokens=max_turn_tokens, temperature=1.0)
    source = _make_source("world_model", world_model, 0.0)
    episodes = ag.run_episodes(policy, tasks, source, imaginer=world_model,
                               config=ag.AgentConfig(max_steps=max_steps, screen_view=screen_view))
    imagined = [ep.success for ep in episodes]
    real = [replayed_success(ep) for ep in episodes]
    n = max(1, len(episodes))
    tp = sum(i and r for i, r in zip(imagined, real))
    return {"n": len(episodes), "agreement": sum(i == r for i, r in zip(imagined, real)) / n,
            "imagined_success": sum(imagined) / n, "real_success": sum(real) / n,
            "false_positive": sum(i and not r for i, r in zip(imagined, real)) / n,
            "false_negative": sum(r and not i for i, r in zip(imagined, real)) / n, "true_positive": tp / n}


def reference_in_world_model(tasks: Sequence[phone.PhoneTask], world_model: ag.WorldModelSource) -> dict:
    """Play each task's *reference* solution inside the world model and judge the predicted final
    screen: the imagined success of a perfect agent, an upper bound on what WM-R1 can be rewarded
    for (and, per step, the world model's exact accuracy along the shortest path)."""
    plans = [[a for a in phone.reference_solution(t) if a != "finished()"] for t in tasks]
    source = ag.WorldModelSource(world_model.predictor, judge=world_model.judge, cache=world_model.cache)
    source.begin(tasks)
    sims = [phone.PhoneEnv(max_steps=10_000) for _ in tasks]
    for env, task in zip(sims, tasks):
        env.reset(task=task)
    exact, n = 0, 0
    for k in range(max((len(p) for p in plans), default=0)):
        idx = [i for i, p in enumerate(plans) if k < len(p)]
        predicted = source.step(idx, [plans[i][k] for i in idx])
        for i, screen in zip(idx, predicted):
            real = sims[i].step(plans[i][k]).observation
            exact += screen == real
            n += 1
    judged = [source.success(i) for i in range(len(tasks))]
    return {"n": len(tasks), "imagined_success_of_reference": sum(judged) / max(1, len(tasks)),
            "exact_along_reference": exact / max(1, n), "n_transitions": n}


def throughput(model, tokenizer, tasks: Sequence[phone.PhoneTask], world_model: ag.WorldModelSource,
               max_steps: int, device_latency: float = 0.0, max_turn_tokens: int = 24,
               screen_view: str = "env") -> list[dict]:
    """Agent steps per second with world-model vs simulator transitions (same policy, tasks,
    batching). The world model starts each measurement with an empty cache."""
    rows = []
    for kind in ("simulator", "world_model"):
        torch.manual_seed(0)
        policy = ag.Policy(model, tokenizer, max_turn_tokens=max_turn_tokens, temperature=1.0)
        if kind == "simulator":
            source = ag.SimulatorSource(device_latency=device_latency)
            imaginer = ag.WorldModelSource(world_model.predictor, world_model.judge)
        else:
            source = ag.WorldModelSource(world_model.predictor, world_model.judge)
            imaginer = source
        start = time.perf_counter()
        episodes = ag.run_episodes(policy, tasks, source, imaginer=imaginer,
                                   config=ag.AgentConfig(max_steps=max_steps, screen_view=screen_view))
        seconds = time.perf_counter() - start
        steps = sum(e.steps for e in episodes)
        rows.append({"transitions": kind, "device_latency_s": device_latency if kind == "simulator" else 0.0,
                     "episodes": len(episodes), "agent_steps": steps, "seconds": round(seconds, 2),
                     "environment_seconds": round(source.seconds, 2), "batched_step_calls": source.step_calls,
                     "steps_per_second": steps / seconds if seconds else float("nan")})
    return rows


def load_world_model_source(profile: str | Profile, runs_dir: str | Path, seed: int = 0,
                            max_new_tokens: int = 160) -> tuple[ag.WorldModelSource, dict]:
    """Notebook 01's world model (built at the profile's size when missing) as a transition source."""
    from wmkit.core.build import series_world_model

    run = series_world_model(profile, runs_dir, seed=seed)
    run.model.eval()
    predictor = ag.world_model_predictor(run.model, run.tokenizer, max_new_tokens)
    return ag.WorldModelSource(predictor), {**run.info, "folder": str(run.folder)}


def _clone(model):
    import copy

    return copy.deepcopy(model)


def run_experiment(profile: str | Profile = "cpu", seed: int = 0, runs_dir: str | Path | None = None,
                   out_dir: str | Path | None = None, model_name: str | None = None,
                   arms: Sequence[str] | None = None, device_latency: float = 0.0,
                   world_model: ag.WorldModelSource | None = None, progress: bool = True,
                   log=print, sizes: WMR1Sizes | None = None) -> dict:
    """SFT warm start, then every arm's training and evaluation in the simulator, for one seed.
    `sizes` overrides the profile's sizes (the profile still names the world model to load)."""
    from transformers import set_seed

    profile = get_profile(profile)
    sizes = sizes or profile.wm_r1
    # None: the profile's policy (tiny for smoke/cpu; gpu: a pretrained model with QLoRA, SmolLM2 offline)
    model_name = models.resolve_model_name(model_name, profile.default_model)
    models.check_model(model_name)
    runs_dir = Path(runs_dir) if runs_dir else REPO / "runs" / profile.name
    out_dir = Path(out_dir) if out_dir else runs_dir / "03_wm_r1_gui_agent" / f"seed{seed}"
    out_dir.mkdir(parents=True, exist_ok=True)
    arms = tuple(arms or sizes.baselines)
    set_seed(seed)
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    wm_info: dict = {}
    if world_model is None:
        world_model, wm_info = load_world_model_source(profile, runs_dir, 0, sizes.wm_max_new_tokens)
    timings["world_model_load"] = time.perf_counter() - t_start

    train_templates, held_templates = task_templates(sizes.max_ref_len)
    sft_tasks = unique_tasks(sizes.sft_tasks, 10_000 + seed, train_templates)
    rl_tasks = unique_tasks(sizes.train_tasks, 20_000 + seed, train_templates)
    # Evaluation tasks need not have distinct prompts (the same instruction on another world is
    # another task); they come from their own seeds, the same for every training seed.
    eval_held = phone.sample_tasks(sizes.eval_heldout, 30_000, held_templates)
    eval_train = phone.sample_tasks(sizes.eval_train, 40_000, train_templates)

    t = time.perf_counter()
    base_model, tokenizer = build_policy(sizes, sft_tasks, seed, model_name)
    max_len = sizes.max_completion_tokens + 200
    examples = sft_examples(tokenizer, sft_tasks, sizes.imagine_rate, seed, max_len, sizes.thought_index,
                            sizes.screen_view)
    sft_loss = train_policy_sft(base_model, tokenizer, examples, sizes.sft_epochs, sizes.sft_learning_rate,
                                sizes.sft_batch_size, seed, progress)
    no_imag_model = None
    if "wm_r1_no_imagine" in arms:
        no_imag_model = _clone(base_model)  # the same start; its call_wm turns simply fail
    timings["sft"] = time.perf_counter() - t
    log(f"SFT: {len(examples)} reference episodes, {len(sft_loss)} steps, loss {sft_loss[0]:.2f} -> "
        f"{sft_loss[-1]:.2f} ({timings['sft']:.0f} s)")

    common = {"max_steps": sizes.max_steps, "max_turn_tokens": sizes.max_turn_tokens,
                  "max_completion_tokens": sizes.max_completion_tokens}
    grpo_common = dict(steps=sizes.grpo_steps, group_size=sizes.group_size, prompts_per_step=sizes.prompts_per_step,
                       learning_rate=sizes.learning_rate, lora=sizes.lora or model_name not in (None, "tiny"),
                       seed=seed, progress=progress, screen_view=sizes.screen_view, **common)
    arm_configs = {
        "wm_r1": WMR1Config(output_dir=str(out_dir / "wm_r1"), transitions="world_model", **grpo_common),
        "grpo_real": WMR1Config(output_dir=str(out_dir / "grpo_real"), transitions="simulator",
                                device_latency=device_latency, **grpo_common),
        "wm_r1_no_imagine": WMR1Config(output_dir=str(out_dir / "no_imagine"), transitions="world_model",
                                       imagine=False, **grpo_common),
        "wm_r1_no_length": WMR1Config(output_dir=str(out_dir / "no_length"), transitions="world_model",
                                      reward=WMR1RewardConfig(beta=0.0, max_steps=sizes.max_steps),
                                      **grpo_common),
    }
    for name in ("wm_r1", "grpo_real", "wm_r1_no_imagine"):
        arm_configs[name] = replace(arm_configs[name], reward=WMR1RewardConfig(max_steps=sizes.max_steps))

    results: dict[str, Any] = {"arms": {}, "training": {}}
    eval_kw = {"max_turn_tokens": sizes.max_turn_tokens, "max_completion_tokens": sizes.max_completion_tokens,
                   "seed": seed, "screen_view": sizes.screen_view}

    def evaluate_arm(name, model, imagine=True, best_of_k=0, sampled=False):
        t0 = time.perf_counter()
        entry = {}
        for split, tasks in (("heldout", eval_held), ("train_templates", eval_train)):
            r = evaluate(model, tokenizer, tasks, world_model, sizes.max_steps, greedy=True, imagine=imagine,
                         best_of_k=best_of_k, progress=progress, **eval_kw)
            entry[split] = {k: v for k, v in r.items() if k != "episodes"}
            if split == "heldout":
                entry["_episodes"] = r["episodes"]
            if sampled:
                r = evaluate(model, tokenizer, tasks, world_model, sizes.max_steps, greedy=False, imagine=imagine,
                             progress=progress, **eval_kw)
                entry[split + "_sampled"] = {k: v for k, v in r.items() if k != "episodes"}
        entry["eval_seconds"] = round(time.perf_counter() - t0, 1)
        log(f"{name:18s} held-out success {entry['heldout']['success']:.3f} | train-template tasks "
            f"{entry['train_templates']['success']:.3f} | wm calls/episode {entry['heldout']['wm_calls']:.2f}")
        return entry

    if "sft" in arms:
        results["arms"]["sft"] = evaluate_arm("sft", base_model, sampled=sizes.sampled_eval)
    if "best_of_k" in arms:
        results["arms"]["best_of_k"] = evaluate_arm(f"best_of_{sizes.best_of_k}", base_model,
                                                    best_of_k=sizes.best_of_k)
    trained_models = {}
    for name in ("wm_r1", "grpo_real", "wm_r1_no_imagine", "wm_r1_no_length"):
        if name not in arms:
            continue
        t = time.perf_counter()
        start_model = no_imag_model if name == "wm_r1_no_imagine" else _clone(base_model)
        res = train_wm_r1(arm_configs[name], start_model, tokenizer, rl_tasks, world_model)
        timings[f"train_{name}"] = time.perf_counter() - t
        trained_models[name] = res.model
        results["training"][name] = {
            "history": res.history, "simulator_steps": res.simulator_steps,
            "world_model_queries": res.world_model_queries, "world_model_predictions": res.world_model_predictions,
            "log": [{k: v for k, v in row.items() if k in ("step", "loss", "reward", "reward_std", "entropy",
                                                          "grad_norm", "learning_rate", "frac_reward_zero_std")}
                    for row in res.log_history if "loss" in row or "entropy" in row],
            "seconds": round(res.seconds, 1)}
        log(f"trained {name}: {sizes.grpo_steps} GRPO steps in {res.seconds:.0f} s, simulator steps "
            f"{res.simulator_steps}, imagined success {res.history[0]['success']:.2f} -> "
            f"{res.history[-1]['success']:.2f}, wm calls/episode {res.history[0]['wm_calls']:.2f} -> "
            f"{res.history[-1]['wm_calls']:.2f}")
        results["arms"][name] = evaluate_arm(name, res.model, imagine=name != "wm_r1_no_imagine",
                                             sampled=sizes.sampled_eval and name == "wm_r1")
    timings["total"] = time.perf_counter() - t_start

    # Diagnostics: the world model's error where this agent goes, and its success judgments.
    diag_model = trained_models.get("wm_r1", base_model)
    visited = results["arms"].get("wm_r1", results["arms"].get("sft", {})).get("_episodes", [])
    results["world_model_error"] = world_model_error(world_model, visited)
    results["judge_agreement"] = {
        "train_templates": judge_agreement(diag_model, tokenizer, rl_tasks[:sizes.diagnostic_episodes],
                                           world_model, sizes.max_steps, seed, sizes.max_turn_tokens,
                                           screen_view=sizes.screen_view)}
    results["reference_in_world_model"] = reference_in_world_model(eval_train[:sizes.diagnostic_episodes],
                                                                   world_model)
    for entry in results["arms"].values():
        entry.pop("_episodes", None)
    results.update({
        "profile": profile.name, "seed": seed, "sizes": asdict(sizes), "world_model": wm_info,
        "policy_parameters": models.count_parameters(base_model),
        "tasks": {"train_templates": train_templates, "heldout_templates": held_templates,
                  "n_sft": len(sft_tasks), "n_rl": len(rl_tasks), "n_eval_heldout": len(eval_held),
                  "n_eval_train_templates": len(eval_train)},
        "sft_loss": sft_loss, "timings": {k: round(v, 1) for k, v in timings.items()},
    })
    results["_models"] = {"sft": base_model, **trained_models}
    results["_tokenizer"] = tokenizer
    return results


def public(results: dict) -> dict:
    """The JSON-ready part of run_experiment's result (no models)."""
    return {k: v for k, v in results.items() if not k.startswith("_")}


def evaluation_se(p1: float, p2: float, n_eval: int) -> float:
    """Binomial standard error of the difference of two success rates, each measured on `n_eval`
    evaluation tasks (each variance floored at 1e-4). It is the *evaluation* noise of one trained
    agent, not the spread over training seeds, so it is reported beside a one-seed result and never
    makes a verdict (see :func:`wmkit.stats.verdict`: one seed is "not measured")."""
    return math.sqrt(max(p1 * (1 - p1), 1e-4) / n_eval + max(p2 * (1 - p2), 1e-4) / n_eval)


def run_wm_r1_seed(profile: str | Profile, seed: int, runs_root: Path, sizes: WMR1Sizes,
                   arms: Sequence[str] | None = None, threads: int | None = 2) -> dict:
    """``python -m wmkit run wm-r1``, one seed: :func:`run_experiment` with every arm (or `arms`),
    trained inside the simulator-backed oracle, on `threads` torch threads."""
    if threads:
        torch.set_num_threads(threads)
    return public(run_experiment(profile, seed, arms=arms, progress=False, sizes=sizes))


def combine_wm_r1_seeds(profile: Profile, records: dict[int, dict], sizes: WMR1Sizes, **options) -> dict:
    """The seeds' records and :func:`summarize_seeds` over them."""
    per_seed = {str(s): r for s, r in records.items()}
    return {"profile": profile.name, "seeds": list(records), "per_seed": per_seed, "summary": summarize_seeds(per_seed)}


def check_options(arms: Sequence[str] | None = None, **_) -> None:
    unknown = [a for a in arms or () if a not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {', '.join(unknown)}: choose from {', '.join(ARMS)}")


def summarize_seeds(per_seed: dict[str, dict]) -> dict:
    """:func:`wmkit.stats.summarize` over seeds of each arm's held-out and train-template success,
    and the verdict of "WM-R1 beats this arm": :func:`wmkit.stats.verdict` on the per-seed paired
    differences WM-R1 − arm (the arms of one seed share its SFT start and evaluation tasks)."""
    arms = sorted({a for r in per_seed.values() for a in r["arms"]})
    summary: dict[str, Any] = {}
    for arm in arms:
        row = {}
        for split in ("heldout", "train_templates"):
            row[split] = stats.summarize([r["arms"][arm][split]["success"] for r in per_seed.values()
                                          if arm in r["arms"]])
        summary[arm] = row
    if "wm_r1" in summary:
        for arm in arms:
            if arm == "wm_r1":
                continue
            for split in ("heldout", "train_templates"):
                pairs = [(r["arms"]["wm_r1"][split]["success"], r["arms"][arm][split]["success"])
                         for r in per_seed.values() if "wm_r1" in r["arms"] and arm in r["arms"]]
                judged = stats.verdict(stats.differences([a for a, _ in pairs], [b for _, b in pairs]))
                summary[arm][f"verdict_wm_r1_vs_this_{split}"] = judged.verdict
                summary[arm][f"verdict_reason_wm_r1_vs_this_{split}"] = judged.reason
                summary[arm][f"wm_r1_minus_this_{split}"] = judged.summary
    return summary


def _jsonable(obj):
    from wmkit.runs import jsonable

    return jsonable(obj)


def run_wm_r1(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """WM-R1: :func:`wmkit.wm_r1.experiment.run_experiment` for this seed, every arm, at the benchmark's sizes."""
    world_model, wm_info = load_world_model_source(profile, runs_root, 0, sizes.wm_max_new_tokens)
    result = run_experiment(profile, seed, runs_dir=runs_root, out_dir=bench_work_dir(runs_root, "wm_r1", seed),
                            arms=sizes.baselines, world_model=world_model, progress=False, log=lambda line: None,
                            sizes=sizes)
    result = public(result)
    result["profile"], result["world_model"] = profile, wm_info
    history = result["training"].get("wm_r1", {}).get("history", [])
    result["wm_calls_first"] = history[0]["wm_calls"] if history else None
    result["wm_calls_last"] = history[-1]["wm_calls"] if history else None
    return result


# ---------------------------------------------------------------------------------------------------
# The fidelity ladder: WM-R1 inside a world model whose error rate is a knob.


def world_model_fidelity(world_model: ag.WorldModelSource, policy: ag.Policy, tasks: Sequence[phone.PhoneTask],
                         episodes: Sequence[ag.Episode], max_steps: int, seed: int = 0,
                         screen_view: str = "env") -> dict:
    """The two error measures of a world model, as one row: next-screen exactness on the real
    transitions of `episodes` (:func:`world_model_error`) and how often its success judgment of
    episodes played inside it matches the simulator's (:func:`judge_agreement`), also per class
    (real successes judged successes, real failures judged failures).

    A :class:`~wmkit.wm_r1.oracle.NoisyOracle` needs the replayed episodes registered (``prime``)
    before it can answer stateless (screen, action) pairs; a learned model only sees the screen."""
    from wmkit.wm_r1.oracle import NoisyOracle

    if isinstance(world_model, NoisyOracle):
        world_model.prime(episodes)
    error = world_model_error(world_model, episodes, limit=10_000)
    if isinstance(world_model, NoisyOracle):  # judge with a fresh oracle: the same draws, clean counters
        world_model = NoisyOracle(world_model.p, world_model.seed, world_model.flip_success, world_model.corruptions)
    judge = judge_agreement(None, None, tasks, world_model, max_steps, seed=seed, policy=policy,
                            screen_view=screen_view)
    return {"exact": error["exact"], "changed_exact": error["changed_exact"], "transitions": error["n"],
            **judging_by_class(judge)}


def judging_by_class(judge: dict) -> dict:
    """`judge` (:func:`judge_agreement`'s shares of all episodes) with the rates per class: real
    successes judged a success, real failures judged a failure, and precision, the share of the
    episodes judged a success that really succeeded (TP / (TP + FP)); NaN where a class is empty."""
    real, tp, fp = judge["real_success"], judge["true_positive"], judge["false_positive"]
    return {**judge, "success_judged_on_real_successes": tp / real if real else float("nan"),
            "failure_judged_on_real_failures": (1 - real - fp) / (1 - real) if real < 1 else float("nan"),
            "precision": tp / (tp + fp) if tp + fp else float("nan")}


def trained_policy_judging(world_model: ag.WorldModelSource, model, tokenizer, tasks: Sequence[phone.PhoneTask],
                           sizes: WMR1Sizes, seed: int = 0) -> dict:
    """A learned world model's judging of a *trained* policy's episodes, greedy and sampled at T = 1
    (:func:`judge_agreement` per class), and its exactness on that policy's real sampled transitions.
    The fidelity measured on the start's episodes says how the model judges what training begins
    with; GRPO moves the policy to where the model may err, and this measures it there: a model the
    policy exploits judges its episodes successes that fail in the simulator. Measured through a
    copy of the model's prediction cache (``detached``), so nothing after it changes."""
    from wmkit.wm_r1.oracle import NoisyOracle

    out = {}
    for name, greedy in (("greedy", True), ("sampled", False)):
        policy = ag.Policy(model, tokenizer, max_turn_tokens=sizes.max_turn_tokens, greedy=greedy, temperature=1.0)
        out[name] = judging_by_class(judge_agreement(None, None, tasks, world_model.detached(), sizes.max_steps,
                                                     seed=seed, policy=policy, screen_view=sizes.screen_view))
    real = evaluate(model, tokenizer, tasks, NoisyOracle(0.0), sizes.max_steps, greedy=False,
                    max_turn_tokens=sizes.max_turn_tokens, max_completion_tokens=sizes.max_completion_tokens,
                    seed=seed, screen_view=sizes.screen_view)["episodes"]
    error = world_model_error(world_model.detached(), real, limit=10_000)
    out["sampled"].update(exact=error["exact"], changed_exact=error["changed_exact"], transitions=error["n"])
    return out


def _greedy_and_sampled(model, tokenizer, tasks, sizes: WMR1Sizes, seed: int) -> dict:
    """Success in the real simulator, greedy and sampled at T=1 (RL can sharpen sampling without
    moving greedy decoding, so both are reported). Imagined calls are answered by the exact
    oracle for every policy, so all arms meet the same evaluation (greedy policies rarely call)."""
    from wmkit.wm_r1.oracle import NoisyOracle

    out = {}
    for name, greedy in (("greedy", True), ("sampled", False)):
        r = evaluate(model, tokenizer, tasks, NoisyOracle(0.0), sizes.max_steps, greedy=greedy,
                     max_turn_tokens=sizes.max_turn_tokens, max_completion_tokens=sizes.max_completion_tokens,
                     seed=seed, screen_view=sizes.screen_view)
        out[name] = {k: r[k] for k in ("success", "steps", "wm_calls", "invalid")}
        out[name]["per_template"] = success_per_template(r["episodes"])
    return out


def success_per_template(episodes: Sequence[ag.Episode]) -> dict[str, dict]:
    """Success rate and number of episodes per task template."""
    by: dict[str, list[bool]] = {}
    for ep in episodes:
        by.setdefault(ep.task.template, []).append(bool(ep.success))
    return {t: {"n": len(v), "success": sum(v) / len(v)} for t, v in sorted(by.items())}


def room_for_rl(model, tokenizer, tasks: Sequence[phone.PhoneTask], sizes: WMR1Sizes, k: int = 8,
                seed: int = 0) -> dict[str, dict]:
    """Per template: greedy success, sampled success (T = 1) and pass@k (a task counts when any of
    `k` samples succeeds), in the real simulator. RL has room where pass@k is well above greedy:
    it can only reinforce what the policy sometimes does. Imagined calls are answered by the exact
    oracle, as in the ladder's evaluation."""
    from wmkit.wm_r1.oracle import NoisyOracle

    def play(chosen, greedy):
        return evaluate(model, tokenizer, chosen, NoisyOracle(0.0), sizes.max_steps, greedy=greedy,
                        max_turn_tokens=sizes.max_turn_tokens, seed=seed, screen_view=sizes.screen_view)["episodes"]

    greedy = play(tasks, True)
    sampled = play([t for t in tasks for _ in range(k)], False)
    out = {}
    for template in dict.fromkeys(t.template for t in tasks):
        idx = [i for i, t in enumerate(tasks) if t.template == template]
        samples = [[sampled[i * k + j].success for j in range(k)] for i in idx]
        out[template] = {"tasks": len(idx), "greedy": sum(greedy[i].success for i in idx) / len(idx),
                         "sampled": sum(map(sum, samples)) / (k * len(idx)),
                         f"pass@{k}": sum(any(s) for s in samples) / len(idx)}
    return out


def grpo_pool(sizes: WMR1Sizes, seed: int, templates: Sequence[str]) -> list[phone.PhoneTask]:
    """The fidelity ladder's GRPO tasks for `seed`, as ``sizes.ladder.grpo_pool`` says (see
    :class:`wmkit.profiles.WMR1LadderSizes`)."""
    ladder = sizes.ladder
    if ladder.grpo_pool == "fresh":
        return fresh_tasks(ladder.grpo_steps * ladder.prompts_per_step, 20_000 + seed, templates)
    if ladder.grpo_pool == "balanced":
        return balanced_tasks(sizes.train_tasks, 20_000 + seed, templates)
    raise ValueError(f"Unknown grpo_pool {ladder.grpo_pool!r}: choose 'balanced' or 'fresh'")


def ladder_world(sizes: WMR1Sizes) -> list[str]:
    """The templates the ladder's GRPO trains on and its evaluation draws from: ``ladder.templates``
    (a smaller world), or every training template when that is empty."""
    train_templates, _ = task_templates(sizes.max_ref_len)
    chosen = list(sizes.ladder.templates)
    if not chosen:
        return train_templates
    unknown = [t for t in chosen if t not in train_templates]
    if unknown:
        raise ValueError(f"ladder templates {unknown} are not training templates "
                         f"(max_ref_len {sizes.max_ref_len}): choose from {train_templates}")
    return chosen


def on_ladder_phone(tasks: Sequence[phone.PhoneTask], sizes: WMR1Sizes) -> list[phone.PhoneTask]:
    """`tasks` on the phone of the ladder's world: with a status bar where ``ladder.status_bar``."""
    if sizes.ladder.status_bar:
        return [phone.with_status_bar(t) for t in tasks]
    return list(tasks)


def ladder_eval_tasks(sizes: WMR1Sizes) -> list[phone.PhoneTask]:
    """The ladder's evaluation tasks: ``ladder.eval_tasks`` unseen tasks of its world, the same for
    every seed and rung (their own seed, as in :func:`run_experiment`); the first
    ``ladder.fidelity_episodes`` of them are where each world model's error is measured."""
    return on_ladder_phone(phone.sample_tasks(sizes.ladder.eval_tasks, 40_000, ladder_world(sizes)), sizes)


def small_world_sizes(sizes: WMR1Sizes) -> WMR1Sizes:
    """`sizes` with the ladder replaced by ``sizes.small_world`` (the settings world and a weaker
    start), for :func:`build_ladder_start` and :func:`run_fidelity_ladder`."""
    if sizes.small_world is None:
        raise ValueError("these WM-R1 sizes have no small_world ladder (WMR1Sizes.small_world is None)")
    return replace(sizes, ladder=sizes.small_world)


def notebook_ladder(sizes: WMR1Sizes) -> WMR1Sizes:
    """`sizes` with the ladder notebook 03 runs for its one seed: the rungs
    ``ladder.notebook_error_rates`` and ``ladder.notebook_eval_tasks`` evaluation tasks, where set
    (the benchmark runs the full ladder)."""
    ladder = sizes.ladder
    if ladder is None:
        raise ValueError("these WM-R1 sizes have no ladder (WMR1Sizes.ladder is None)")
    return replace(sizes, ladder=replace(ladder, error_rates=ladder.notebook_error_rates or ladder.error_rates,
                                         eval_tasks=ladder.notebook_eval_tasks or ladder.eval_tasks))


def build_ladder_start(profile: str | Profile = "cpu", seed: int = 0, sizes: WMR1Sizes | None = None,
                       progress: bool = False, model_name: str | None = None):
    """(model, tokenizer, sft_tasks): the fidelity ladder's SFT start for `seed` -- a from-scratch
    policy trained on ``ladder.sft_tasks`` reference episodes drawn the templates in turn
    (:func:`template_balanced_tasks`, weighted by ``ladder.sft_template_weights``;
    :func:`unique_tasks`' skew made the start's success depend on the seed), for
    ``ladder.sft_epochs`` epochs. `model_name`: as in
    :func:`build_policy` (None: the from-scratch policy)."""
    from transformers import set_seed as seed_everything

    profile = get_profile(profile)
    sizes = sizes or profile.wm_r1
    if sizes.ladder is None:
        raise ValueError(f"profile {profile.name!r} has no WM-R1 ladder sizes (WMR1Sizes.ladder)")
    seed_everything(seed)
    train_templates, _ = task_templates(sizes.max_ref_len)
    sft_tasks = on_ladder_phone(template_balanced_tasks(sizes.ladder.sft_tasks, 10_000 + seed, train_templates,
                                                        dict(sizes.ladder.sft_template_weights)), sizes)
    model, tokenizer = build_policy(sizes, sft_tasks, seed, model_name)
    examples = sft_examples(tokenizer, sft_tasks, sizes.imagine_rate, seed, sizes.max_completion_tokens + 200,
                            sizes.thought_index, sizes.screen_view)
    train_policy_sft(model, tokenizer, examples, sizes.ladder.sft_epochs, sizes.sft_learning_rate,
                     sizes.sft_batch_size, seed, progress=progress)
    return model, tokenizer, sft_tasks


def run_fidelity_ladder(profile: str | Profile = "cpu", seed: int = 0, sizes: WMR1Sizes | None = None,
                        start: tuple[Any, Any] | None = None, out_dir: str | Path | None = None,
                        learned_world_model: ag.WorldModelSource | None = None, train_in_learned: bool = False,
                        log=print) -> dict:
    """WM-R1 trained inside a :class:`~wmkit.wm_r1.oracle.NoisyOracle` at each error rate p of the
    profile's ladder, every rung from the same SFT start, evaluated in the real simulator on unseen
    tasks of the training templates, greedy and sampled at T=1.

    p = 0 is the positive control: the oracle is then the simulator (WM-R1 = GRPO on the real
    simulator, transition for transition). Each rung also measures its oracle's error with the
    kit's measures (:func:`world_model_fidelity`) on the start policy's sampled episodes, so success
    can be plotted against measured error; `learned_world_model` (e.g. notebook 01's, from
    :func:`load_world_model_source`) is measured the same way to place it on that axis, and with
    `train_in_learned` WM-R1 also trains inside it, from the same start: the rung ``"learned"``,
    which also records the model's judging of the *trained* policy (:func:`trained_policy_judging`).
    `start` = (model, tokenizer) skips the SFT (the model is copied, never changed).
    """
    from transformers import set_seed as seed_everything

    from wmkit.wm_r1.oracle import NoisyOracle

    profile = get_profile(profile)
    sizes = sizes or profile.wm_r1
    ladder = sizes.ladder
    if ladder is None:
        raise ValueError(f"profile {profile.name!r} has no WM-R1 ladder sizes (WMR1Sizes.ladder)")
    seed_everything(seed)
    timings: dict[str, float] = {}
    rl_tasks = on_ladder_phone(grpo_pool(sizes, seed, ladder_world(sizes)), sizes)
    eval_tasks = ladder_eval_tasks(sizes)
    fidelity_tasks = eval_tasks[:ladder.fidelity_episodes]

    t = time.perf_counter()
    if start is None:
        model, tokenizer, _ = build_ladder_start(profile, seed, sizes)
    else:
        model, tokenizer = _clone(start[0]), start[1]
    timings["sft"] = time.perf_counter() - t
    t = time.perf_counter()
    results: dict[str, Any] = {"seed": seed, "profile": profile.name, "ladder": asdict(ladder),
                               "start": _greedy_and_sampled(model, tokenizer, eval_tasks, sizes, seed), "rungs": {}}
    # the start policy's own sampled episodes: where each world model's error is measured
    probe = evaluate(model, tokenizer, fidelity_tasks, NoisyOracle(0.0), sizes.max_steps, greedy=False,
                     max_turn_tokens=sizes.max_turn_tokens, seed=seed, screen_view=sizes.screen_view)["episodes"]
    timings["start_eval"] = time.perf_counter() - t
    log(f"seed {seed} start: greedy {results['start']['greedy']['success']:.3f}, "
        f"sampled {results['start']['sampled']['success']:.3f}")
    sampler = ag.Policy(model, tokenizer, max_turn_tokens=sizes.max_turn_tokens, temperature=1.0)
    if learned_world_model is not None:
        t = time.perf_counter()
        results["learned_world_model"] = world_model_fidelity(
            learned_world_model, sampler, fidelity_tasks, probe, sizes.max_steps, seed, sizes.screen_view)
        timings["learned_world_model_fidelity"] = time.perf_counter() - t

    def train_rung(name: str, source: ag.WorldModelSource, fidelity: dict, p: float | None, started: float) -> dict:
        """WM-R1 from the start inside `source`, evaluated in the simulator (`started`: when this
        rung's work began, its fidelity measurement included)."""
        config = WMR1Config(output_dir=str(Path(out_dir or REPO / "runs" / profile.name / "wm_r1_ladder")
                                           / f"{name}_seed{seed}"),
                            transitions="world_model", reward=WMR1RewardConfig(max_steps=sizes.max_steps),
                            steps=ladder.grpo_steps, group_size=ladder.group_size,
                            prompts_per_step=ladder.prompts_per_step, learning_rate=ladder.learning_rate,
                            temperature=ladder.temperature, max_steps=sizes.max_steps,
                            max_turn_tokens=sizes.max_turn_tokens, max_completion_tokens=sizes.max_completion_tokens,
                            lora=sizes.lora, seed=seed, progress=False, screen_view=sizes.screen_view)
        trained = train_wm_r1(config, _clone(model), tokenizer, rl_tasks, source)
        history = trained.history
        quarter = max(1, len(history) // 4)
        rung = {"p": p, "fidelity": fidelity,
                **_greedy_and_sampled(trained.model, tokenizer, eval_tasks, sizes, seed),
                "judged_success_first_quarter": _mean(h["success"] for h in history[:quarter]),
                "judged_success_last_quarter": _mean(h["success"] for h in history[-quarter:]),
                "signal_groups": _mean(h["signal_groups"] for h in history),
                "all_fail_groups": _mean(h["all_fail_groups"] for h in history),
                "all_success_groups": _mean(h["all_success_groups"] for h in history),
                "wm_calls_first_last_quarter": [_mean(h["wm_calls"] for h in history[:quarter]),
                                                _mean(h["wm_calls"] for h in history[-quarter:])],
                "history": [{k: h[k] for k in ("step", "success", "steps", "wm_calls", "signal_groups",
                                               "all_fail_groups", "all_success_groups")}
                            for h in history],
                # only the imagined call_wm screens: episode transitions and judgments run in per-batch
                # copies (oracle.episode_source()) whose counters are their own
                "imagined_calls_corrupted": getattr(source, "corrupted", None),
                "simulator_steps": trained.simulator_steps, "train_seconds": trained.seconds,
                "groups_played": trained.groups_played, "distinct_worlds": trained.distinct_worlds}
        if source is learned_world_model:  # where the policy may have learned the model's errors
            rung["trained_policy_judging"] = trained_policy_judging(source, trained.model, tokenizer, fidelity_tasks,
                                                                    sizes, seed)
        rung["seconds"] = time.perf_counter() - started
        log(f"seed {seed} {name}: exact {fidelity['exact']:.2f} judge {fidelity['agreement']:.2f} -> "
            f"greedy {rung['greedy']['success']:.3f} sampled {rung['sampled']['success']:.3f} "
            f"({rung['seconds']:.0f} s)")
        return rung

    for p in ladder.error_rates:
        t = time.perf_counter()
        fidelity = world_model_fidelity(NoisyOracle(p, seed=seed), sampler, fidelity_tasks, probe,
                                        sizes.max_steps, seed, sizes.screen_view)
        results["rungs"][f"{p:g}"] = train_rung(f"p{p:g}", NoisyOracle(p, seed=seed), fidelity, p, t)
    if train_in_learned:
        if learned_world_model is None:
            raise ValueError("train_in_learned needs a learned_world_model")
        results["rungs"]["learned"] = train_rung("learned", learned_world_model, results["learned_world_model"], None,
                                               time.perf_counter())
    results["timings"] = timings
    return results


def run_wm_r1_ladder(profile: str, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's fidelity ladder: :func:`run_fidelity_ladder` for this seed at the profile's
    notebook 03 sizes (its own SFT start; every rung; the oracle only, no learned world model)."""
    return run_fidelity_ladder(profile, seed, sizes=sizes, out_dir=bench_work_dir(runs_root, "wm_r1_ladder", seed),
                               log=lambda line: None)


def run_wm_r1_small_world(profile: str, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's ladder in the small world (``sizes.small_world``: the settings templates, a
    2-epoch start at cpu): :func:`run_fidelity_ladder` for this seed, its own SFT start, every rung."""
    small = small_world_sizes(sizes)
    results = run_fidelity_ladder(profile, seed, sizes=small,
                                  out_dir=bench_work_dir(runs_root, "wm_r1_small_world", seed), log=lambda line: None)
    results["instruction_blind"] = instruction_blind_success(ladder_eval_tasks(small))
    return results


BLIND_SWITCHES = range(1, 8)
"""The element numbers an instruction-blind policy may tap on the Settings screen: its five switches,
then Display and Back (which never solve a settings task; kept so a wrong-element tap is scored too)."""


def instruction_blind_success(tasks: Sequence[phone.PhoneTask], switches: Sequence[int] = BLIND_SWITCHES) -> dict:
    """The best policy that never reads the instruction, in the settings world: open Settings, tap
    one fixed element, finish, on every task (simulator success). A fixed switch is the right tap on
    some share of each template's tasks, so such a policy scores above zero; an agent that ends at
    or below it has not shown that it reads the instruction, and one whose per-template figures
    equal one sequence's has learned that sequence. Returns ``{"switch": best k, "success": its
    success, "per_switch": {k: success}}`` (ties: the lowest k)."""
    if not tasks:
        raise ValueError("instruction_blind_success needs at least one task")
    per_switch = {}
    for k in switches:
        wins = 0
        for task in tasks:
            env = phone.PhoneEnv()
            env.reset(task=task)
            for action in ("open_app(settings)", f"tap({k})", "finished()"):
                if env.step(action).done:
                    break
            wins += env.is_success()
        per_switch[k] = wins / len(tasks)
    best = max(per_switch, key=lambda k: (per_switch[k], -k))
    return {"switch": best, "success": per_switch[best], "per_switch": per_switch}


def learned_world_sizes(sizes: WMR1Sizes) -> WMR1Sizes:
    """`sizes` with the ladder replaced by ``sizes.learned_world`` (the settings world on the
    status-bar phone, the simulator rung only), for :func:`run_wm_r1_learned`."""
    if sizes.learned_world is None or sizes.learned is None:
        raise ValueError("these WM-R1 sizes have no learned world model (WMR1Sizes.learned_world / learned is None)")
    return replace(sizes, ladder=sizes.learned_world)


def run_learned_world_model(profile: str | Profile = "cpu", seed: int = 0, sizes: WMR1Sizes | None = None,
                            out_dir: str | Path | None = None, log=print, progress: bool = False) -> dict:
    """WM-R1 inside a learned world model of the settings world, beside GRPO on the simulator from
    the same start (``sizes.learned_world``, ``sizes.learned``): the edit world model of
    :mod:`wmkit.wm_r1.learned` for this seed (trained, or loaded from `out_dir`), its judging of the
    start's own sampled episodes and of the reference solutions, then :func:`run_fidelity_ladder`
    with the rungs p = 0 (the simulator) and ``"learned"`` (no simulator step in training)."""
    from wmkit.wm_r1 import learned

    profile = get_profile(profile)
    sizes = learned_world_sizes(sizes or profile.wm_r1)
    out_dir = Path(out_dir or REPO / "runs" / profile.name / "wm_r1_learned")
    model, tokenizer, info = learned.train_edit_world_model(sizes.learned, seed, ladder_world(sizes),
                                                            out_dir / f"world_model_seed{seed}", progress=progress)
    source = learned.edit_world_model_source(model, tokenizer, sizes.wm_max_new_tokens)
    log(f"seed {seed} world model: {info['steps']} steps, {info['seconds']:.0f} s")
    results = run_fidelity_ladder(profile, seed, sizes=sizes, out_dir=out_dir, learned_world_model=source,
                                  train_in_learned=True, log=log)
    results["learned_world_model"]["reference"] = reference_in_world_model(
        ladder_eval_tasks(sizes)[:sizes.ladder.fidelity_episodes], source)
    results["world_model_training"] = info
    results["instruction_blind"] = instruction_blind_success(ladder_eval_tasks(sizes))
    return results


def run_wm_r1_learned(profile: str, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's WM-R1 inside the settings world's learned world model:
    :func:`run_learned_world_model` for this seed, its own start and world model."""
    return run_learned_world_model(profile, seed, sizes=sizes, out_dir=bench_work_dir(runs_root, "wm_r1_learned", seed),
                                   log=lambda line: None)


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def summarize_ladder(per_seed: Sequence[dict]) -> dict:
    """Over seeds, per rung: success (greedy, sampled), its gain over the same seed's start with a
    95% t-interval and verdict, and the oracle's measured error (exact, judge agreement)."""
    if not per_seed:
        return {}
    out: dict[str, Any] = {"seeds": [r["seed"] for r in per_seed], "start": {}, "rungs": {}}
    for mode in ("greedy", "sampled"):
        out["start"][mode] = stats.summarize([r["start"][mode]["success"] for r in per_seed])
    for key in per_seed[0]["rungs"]:
        runs = [r for r in per_seed if key in r["rungs"]]
        row: dict[str, Any] = {"p": runs[0]["rungs"][key]["p"]}
        for mode in ("greedy", "sampled"):
            after = [r["rungs"][key][mode]["success"] for r in runs]
            before = [r["start"][mode]["success"] for r in runs]
            gain = stats.verdict(stats.differences(after, before))
            row[mode] = stats.summarize(after)
            row[f"{mode}_gain"] = gain.summary
            row[f"{mode}_verdict"] = gain.verdict
        for measure in ("exact", "agreement", "success_judged_on_real_successes", "failure_judged_on_real_failures"):
            row[measure] = stats.summarize([r["rungs"][key]["fidelity"][measure] for r in runs])
        row["train_seconds"] = stats.summarize([r["rungs"][key]["train_seconds"] for r in runs])
        out["rungs"][key] = row
    learned = [r["learned_world_model"] for r in per_seed if "learned_world_model" in r]
    if learned:
        out["learned_world_model"] = {m: stats.summarize([x[m] for x in learned])
                                      for m in ("exact", "agreement", "success_judged_on_real_successes",
                                                "failure_judged_on_real_failures")}
    return out
