"""WM-R1's phone tasks and the SFT data made from them.

The (train, held-out) template split (:func:`task_templates`), task lists drawn from templates for
the SFT start, GRPO's pool and the evaluation, reference episodes, and the tokenizer corpus and SFT
examples built from them.
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence

from wmkit.envs import phone
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1.config import WMR1Sizes

# Seed streams of the phone's task worlds: each use draws its worlds from its own stream, so the SFT
# start, GRPO and the evaluation never share a world. Training streams add the run's seed; the
# evaluation streams do not (every seed is judged on the same worlds).
SFT_TASK_SEED = 10_000
"""The SFT warm start's tasks of seed s: seed SFT_TASK_SEED + s."""
GRPO_TASK_SEED = 20_000
"""GRPO's tasks of seed s: seed GRPO_TASK_SEED + s."""
HELDOUT_EVAL_SEED = 30_000
"""The evaluation's tasks of held-out templates (the same for every seed)."""
TRAIN_EVAL_SEED = 40_000
"""The evaluation's unseen tasks of the training templates (the same for every seed)."""


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


def grpo_pool(sizes: WMR1Sizes, seed: int, templates: Sequence[str]) -> list[phone.PhoneTask]:
    """The fidelity ladder's GRPO tasks for `seed`, as ``sizes.ladder.grpo_pool`` says (see
    :class:`wmkit.wm_r1.config.WMR1LadderSizes`)."""
    ladder = sizes.ladder
    if ladder.grpo_pool == "fresh":
        return fresh_tasks(ladder.grpo.max_steps * ladder.grpo.prompts_per_step, GRPO_TASK_SEED + seed, templates)
    if ladder.grpo_pool == "balanced":
        return balanced_tasks(sizes.train_tasks, GRPO_TASK_SEED + seed, templates)
    raise ValueError(f"Unknown grpo_pool {ladder.grpo_pool!r}: choose 'balanced' or 'fresh'")
