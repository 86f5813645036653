"""How WM-R1's policies and world models are measured.

A policy: success in the real simulator (greedy, sampled, per template, pass@k), and the
instruction-blind baseline it must beat. A world model: its next-screen error on the agent's real
transitions, how its success judgments agree with the simulator's, the imagined success of the
reference solutions, and agent steps per second with it versus the simulator.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch

from wmkit.envs import phone
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1.config import WMR1Sizes
from wmkit.wm_r1.method import make_source
from wmkit.wm_r1.oracle import NoisyOracle


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
        for screen, action, next_screen, _ in ag.replayed_steps(ep):
            pairs.append((screen, action))
            truth.append(next_screen)
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
    source = make_source("world_model", world_model, 0.0)
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


def evaluation_se(p1: float, p2: float, n_eval: int) -> float:
    """Binomial standard error of the difference of two success rates, each measured on `n_eval`
    evaluation tasks (each variance floored at 1e-4). It is the *evaluation* noise of one trained
    agent, not the spread over training seeds, so it is reported beside a one-seed result and never
    makes a verdict (see :func:`wmkit.stats.verdict`: one seed is "not measured")."""
    return math.sqrt(max(p1 * (1 - p1), 1e-4) / n_eval + max(p2 * (1 - p2), 1e-4) / n_eval)


def world_model_fidelity(world_model: ag.WorldModelSource, policy: ag.Policy, tasks: Sequence[phone.PhoneTask],
                         episodes: Sequence[ag.Episode], max_steps: int, seed: int = 0,
                         screen_view: str = "env") -> dict:
    """The two error measures of a world model, as one row: next-screen exactness on the real
    transitions of `episodes` (:func:`world_model_error`) and how often its success judgment of
    episodes played inside it matches the simulator's (:func:`judge_agreement`), also per class
    (real successes judged successes, real failures judged failures).

    A :class:`~wmkit.wm_r1.oracle.NoisyOracle` needs the replayed episodes registered (``prime``)
    before it can answer stateless (screen, action) pairs; a learned model only sees the screen."""
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
    out = {}
    for name, greedy in (("greedy", True), ("sampled", False)):
        policy = ag.Policy(model, tokenizer, max_turn_tokens=sizes.max_turn_tokens, greedy=greedy, temperature=1.0)
        out[name] = judging_by_class(judge_agreement(None, None, tasks, world_model.detached(), sizes.max_steps,
                                                     seed=seed, policy=policy, screen_view=sizes.screen_view))
    real = evaluate(model, tokenizer, tasks, NoisyOracle(0.0), sizes.max_steps, greedy=False,
                    max_turn_tokens=sizes.max_turn_tokens, max_completion_tokens=sizes.grpo.max_completion_length,
                    seed=seed, screen_view=sizes.screen_view)["episodes"]
    error = world_model_error(world_model.detached(), real, limit=10_000)
    out["sampled"].update(exact=error["exact"], changed_exact=error["changed_exact"], transitions=error["n"])
    return out


def greedy_and_sampled(model, tokenizer, tasks, sizes: WMR1Sizes, seed: int, imagine: bool = True) -> dict:
    """Success in the real simulator, greedy and sampled at T=1 (RL can sharpen sampling without
    moving greedy decoding, so both are reported). Imagined calls are answered by the exact
    oracle for every policy, so all arms meet the same evaluation (greedy policies rarely call);
    with `imagine` False they are failed steps, as for a policy trained without them."""
    out = {}
    for name, greedy in (("greedy", True), ("sampled", False)):
        r = evaluate(model, tokenizer, tasks, NoisyOracle(0.0), sizes.max_steps, greedy=greedy, imagine=imagine,
                     max_turn_tokens=sizes.max_turn_tokens, max_completion_tokens=sizes.grpo.max_completion_length,
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


BLIND_SWITCHES = range(1, 8)
"""The element numbers an instruction-blind policy may tap on the Settings screen: its five switches,
then Display and Back (which never solve a settings task; kept so a wrong-element tap is scored too)."""


def fixed_sequence_success(tasks: Sequence[phone.PhoneTask], switch: int) -> float:
    """Simulator success of open Settings, tap(`switch`), finish, played on every task whatever it asks."""
    wins = 0
    for task in tasks:
        env = phone.PhoneEnv()
        env.reset(task=task)
        for action in ("open_app(settings)", f"tap({switch})", "finished()"):
            if env.step(action).done:
                break
        wins += env.is_success()
    return wins / len(tasks)


def instruction_blind_success(tasks: Sequence[phone.PhoneTask], switches: Sequence[int] = BLIND_SWITCHES) -> dict:
    """The best policy that never reads the instruction, in the settings world: open Settings, tap
    one fixed element, finish, on every task (simulator success). A fixed switch is the right tap on
    some share of each template's tasks, so such a policy scores above zero; an agent that ends at
    or below it has not shown that it reads the instruction, and one whose per-template figures
    equal one sequence's has learned that sequence. Returns ``{"switch": best k, "success": its
    success, "per_switch": {k: success}}`` (ties: the lowest k)."""
    if not tasks:
        raise ValueError("instruction_blind_success needs at least one task")
    per_switch = {k: fixed_sequence_success(tasks, k) for k in switches}
    best = max(per_switch, key=lambda k: (per_switch[k], -k))
    return {"switch": best, "success": per_switch[best], "per_switch": per_switch}
