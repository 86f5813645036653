"""WM-R1's ablations where WM-R1 learns: every arm trained inside the settings world's learned world model.

The set-up is :func:`wmkit.wm_r1.ladder.run_learned_world_model`'s (the status-bar settings world,
the edit world model of :mod:`wmkit.wm_r1.learned`, a 2-epoch SFT start), where WM-R1 trained only
inside the learned model raises real success over its start. Each arm below starts from the same SFT
policy, runs the same number of GRPO updates on the same tasks inside the same world model, and is
judged in the real simulator on the same unseen tasks:

* ``wm_r1``: WM-R1 as the paper trains it (imagined ``call_wm`` turns answered by the world model;
  reward α·R_succ + β·R_L + γ·R_WM);
* ``no_imagine``: no world model while reasoning. As in the authors' ablation script
  (``run_ablation_wm_no_think.slurm``: ``env.n_wm_max=0`` and the call term off, γ = 0), a
  ``call_wm`` turn is a failed step, in training and in the evaluation. Its start is WM-R1's, or with
  `no_imagine_start` a start of its own from the same reference episodes without their imagined turns
  (the authors' ablation prompts a model that was never taught to call; a start taught to call would
  meet a failed step wherever it calls);
* ``no_length``: WM-R1 without the length term (β = 0);
* ``best_of_k``: no training; the start policy with inference-time simulation: at each step it samples
  K actions, imagines each with the same world model and commits the one whose imagined screen the
  judge likes best (:class:`wmkit.wm_r1.agent.AgentConfig` ``best_of_k``).

Calls per episode over training are read from the ``wm_r1`` arm's rollouts: the mean over the first
quarter of its GRPO steps and over the last quarter (every episode of those steps, sampled at the
rung's temperature), and the evaluation's own calls (greedy and sampled).

:func:`run_learned_ablations` is one seed; :func:`run_wm_r1_learned_ablations` the benchmark's entry.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from wmkit.core.models import parameter_change
from wmkit.profiles import Profile
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.runs import bench_work_dir, default_runs_root
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import learned
from wmkit.wm_r1.config import WMR1Sizes, wm_r1_sizes
from wmkit.wm_r1.evaluation import (
    greedy_and_sampled,
    evaluate,
    instruction_blind_success,
    world_model_fidelity,
)
from wmkit.wm_r1.ladder import (
    build_ladder_start,
    ladder_eval_tasks,
    ladder_world,
    learned_world_sizes,
    on_ladder_phone,
    rung_config,
)
from wmkit.wm_r1.method import train_wm_r1
from wmkit.wm_r1.oracle import NoisyOracle
from wmkit.wm_r1.tasks import grpo_pool

TRAINED_ARMS = ("wm_r1", "no_imagine", "no_length")
"""The arms that train (GRPO inside the learned world model, from the same start)."""
ABLATION_ARMS = TRAINED_ARMS + ("best_of_k",)
"""Every arm of :func:`run_learned_ablations`."""


def arm_overrides(arm: str, sizes: WMR1Sizes) -> dict[str, Any]:
    """The `WMR1Config` fields an arm changes from WM-R1's rung (:func:`wmkit.wm_r1.ladder.rung_config`)."""
    if arm == "wm_r1":
        return {}
    if arm == "no_imagine":
        return {"imagine": False, "reward": WMR1RewardConfig(gamma=0.0, max_steps=sizes.max_steps)}
    if arm == "no_length":
        return {"reward": WMR1RewardConfig(beta=0.0, max_steps=sizes.max_steps)}
    raise ValueError(f"unknown trained arm {arm!r}: choose from {', '.join(TRAINED_ARMS)}")


def quarter_means(history: Sequence[dict], key: str) -> list[float]:
    """[mean of `key` over the first quarter of the steps, over the last quarter] (at least one step each)."""
    quarter = max(1, len(history) // 4)

    def mean(rows):
        rows = [r[key] for r in rows]
        return sum(rows) / len(rows) if rows else float("nan")
    return [mean(history[:quarter]), mean(history[-quarter:])]


def run_learned_ablations(profile: Profile, seed: int = 0, sizes: WMR1Sizes | None = None,
                          out_dir: str | Path | None = None, arms: Sequence[str] = ABLATION_ARMS,
                          log=print, progress: bool = False, no_imagine_start: bool = False) -> dict:
    """One seed of every arm in `arms` (:data:`ABLATION_ARMS`), in the learned settings world.

    Returns a JSON-able dict: ``start`` (greedy and sampled simulator success, steps, calls and
    failed steps per episode, per template), ``arms`` {arm: the same, plus for a trained arm its
    training history, ``wm_calls_first_last_quarter``, ``judged_success_first_last_quarter``,
    ``signal_groups`` and ``param_change`` from the start}, ``learned_world_model`` (its judging of
    the start's sampled episodes), ``world_model_training``, ``instruction_blind`` and ``timings``;
    with `no_imagine_start`, ``no_imagine_start`` (that start's greedy and sampled success, its
    ``param_difference`` from WM-R1's start)."""
    from transformers import set_seed as seed_everything  # here: transformers takes seconds to import

    sizes = learned_world_sizes(sizes or wm_r1_sizes(profile))
    unknown = [a for a in arms if a not in ABLATION_ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {unknown}: choose from {', '.join(ABLATION_ARMS)}")
    out_dir = Path(out_dir or default_runs_root() / profile.name / "wm_r1_learned_ablations")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    wm, wm_tokenizer, info = learned.train_edit_world_model(sizes.learned, seed, ladder_world(sizes),
                                                            out_dir / f"world_model_seed{seed}", progress=progress)
    source = learned.edit_world_model_source(wm, wm_tokenizer, sizes.wm_max_new_tokens)
    timings["world_model"] = time.perf_counter() - t
    log(f"seed {seed} world model: {info['steps']} steps, {info['seconds']:.0f} s")

    seed_everything(seed)
    t = time.perf_counter()
    model, tokenizer, _ = build_ladder_start(profile, seed, sizes)
    timings["sft"] = time.perf_counter() - t
    rl_tasks = on_ladder_phone(grpo_pool(sizes, seed, ladder_world(sizes)), sizes)
    eval_tasks = ladder_eval_tasks(sizes)
    fidelity_tasks = eval_tasks[:sizes.ladder.fidelity_episodes]

    t = time.perf_counter()
    results: dict[str, Any] = {"seed": seed, "profile": profile.name, "arms": {},
                               "start": greedy_and_sampled(model, tokenizer, eval_tasks, sizes, seed)}
    probe = evaluate(model, tokenizer, fidelity_tasks, NoisyOracle(0.0), sizes.max_steps, greedy=False,
                     max_turn_tokens=sizes.max_turn_tokens, seed=seed, screen_view=sizes.screen_view)["episodes"]
    sampler = ag.Policy(model, tokenizer, max_turn_tokens=sizes.max_turn_tokens, temperature=1.0)
    results["learned_world_model"] = world_model_fidelity(source, sampler, fidelity_tasks, probe, sizes.max_steps,
                                                          seed, sizes.screen_view)
    timings["start_eval"] = time.perf_counter() - t
    log(f"seed {seed} start: greedy {results['start']['greedy']['success']:.3f} "
        f"(calls {results['start']['greedy']['wm_calls']:.2f}), sampled {results['start']['sampled']['success']:.3f} "
        f"(calls {results['start']['sampled']['wm_calls']:.2f})")

    starts = {arm: model for arm in TRAINED_ARMS}
    if no_imagine_start and "no_imagine" in arms:
        t = time.perf_counter()
        seed_everything(seed)
        other, other_tokenizer, _ = build_ladder_start(profile, seed, replace(sizes, imagine_rate=0.0))
        if other_tokenizer.get_vocab() != tokenizer.get_vocab():
            raise RuntimeError("the start without imagined turns got another tokenizer: the arms would not compare")
        starts["no_imagine"] = other
        results["no_imagine_start"] = {**greedy_and_sampled(other, tokenizer, eval_tasks, sizes, seed, imagine=False),
                                       "param_difference": parameter_change(model, other)}
        timings["no_imagine_start"] = time.perf_counter() - t
    for arm in [a for a in TRAINED_ARMS if a in arms]:
        t = time.perf_counter()
        config = rung_config(sizes, out_dir / f"{arm}_seed{seed}", seed, **arm_overrides(arm, sizes))
        trained = train_wm_r1(config, copy.deepcopy(starts[arm]), tokenizer, rl_tasks, source)
        history = trained.history
        entry = greedy_and_sampled(trained.model, tokenizer, eval_tasks, sizes, seed, imagine=config.imagine)
        entry.update({
            "param_change": parameter_change(starts[arm], trained.model),
            "wm_calls_first_last_quarter": quarter_means(history, "wm_calls"),
            "judged_success_first_last_quarter": quarter_means(history, "success"),
            "invalid_first_last_quarter": quarter_means(history, "invalid"),
            "signal_groups": sum(h["signal_groups"] for h in history) / max(1, len(history)),
            "history": [{k: h[k] for k in ("step", "success", "steps", "wm_calls", "invalid", "signal_groups")}
                        for h in history],
            "train_seconds": round(trained.seconds, 1), "seconds": round(time.perf_counter() - t, 1)})
        results["arms"][arm] = entry
        timings[arm] = time.perf_counter() - t
        log(f"seed {seed} {arm}: greedy {entry['greedy']['success']:.3f} sampled {entry['sampled']['success']:.3f}; "
            f"calls in training {entry['wm_calls_first_last_quarter'][0]:.2f} -> "
            f"{entry['wm_calls_first_last_quarter'][1]:.2f} ({timings[arm]:.0f} s)")
    if "best_of_k" in arms:
        t = time.perf_counter()
        r = evaluate(model, tokenizer, eval_tasks, source.detached(), sizes.max_steps, greedy=False,
                     best_of_k=sizes.best_of_k, max_turn_tokens=sizes.max_turn_tokens,
                     max_completion_tokens=sizes.grpo.max_completion_length, seed=seed, screen_view=sizes.screen_view)
        results["arms"]["best_of_k"] = {"k": sizes.best_of_k,
                                        **{k: r[k] for k in ("success", "steps", "wm_calls", "invalid")},
                                        "seconds": round(time.perf_counter() - t, 1)}
        timings["best_of_k"] = time.perf_counter() - t
        log(f"seed {seed} best-of-{sizes.best_of_k}: {r['success']:.3f}")
    results["world_model_training"] = info
    results["instruction_blind"] = instruction_blind_success(eval_tasks)
    results["timings"] = {k: round(v, 1) for k, v in timings.items()}
    return results


def run_wm_r1_learned_ablations(profile: Profile, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's WM-R1 ablations inside the settings world's learned world model:
    :func:`run_learned_ablations` for this seed, its own start and world model, every arm."""
    return run_learned_ablations(profile, seed, sizes=sizes,
                                 out_dir=bench_work_dir(runs_root, "wm_r1_learned_ablations", seed),
                                 log=lambda line: None)


__all__ = ["ABLATION_ARMS", "TRAINED_ARMS", "arm_overrides", "quarter_means", "run_learned_ablations",
           "run_wm_r1_learned_ablations"]
