"""The fidelity ladder: WM-R1 inside a world model whose error rate is a knob.

Every rung trains from the same SFT start inside a :class:`~wmkit.wm_r1.oracle.NoisyOracle` at error
rate p and is evaluated in the real simulator (:func:`run_fidelity_ladder`). Also here: the ladder's
world and tasks, its small-world variant, WM-R1 inside the settings world's learned world model
(:func:`run_learned_world_model`), the benchmark's entry points for the three, and
:func:`summarize_ladder` over seeds.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from wmkit import stats
from wmkit.envs import phone
from wmkit.profiles import Profile
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.runs import bench_work_dir, default_runs_root
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import learned
from wmkit.wm_r1.config import WMR1Sizes, wm_r1_sizes
from wmkit.wm_r1.evaluation import (
    evaluate,
    greedy_and_sampled,
    instruction_blind_success,
    reference_in_world_model,
    trained_policy_judging,
    world_model_fidelity,
)
from wmkit.wm_r1.experiment import build_policy, train_policy_sft
from wmkit.wm_r1.method import WMR1Config, train_wm_r1
from wmkit.wm_r1.oracle import NoisyOracle
from wmkit.wm_r1.tasks import (
    SFT_TASK_SEED,
    TRAIN_EVAL_SEED,
    grpo_pool,
    sft_examples,
    task_templates,
    template_balanced_tasks,
)


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
    return on_ladder_phone(phone.sample_tasks(sizes.ladder.eval_tasks, TRAIN_EVAL_SEED, ladder_world(sizes)), sizes)


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


def build_ladder_start(profile: Profile, seed: int = 0, sizes: WMR1Sizes | None = None,
                       progress: bool = False, model_name: str | None = None):
    """(model, tokenizer, sft_tasks): the fidelity ladder's SFT start for `seed` -- a from-scratch
    policy trained on ``ladder.sft_tasks`` reference episodes drawn the templates in turn
    (:func:`template_balanced_tasks`, weighted by ``ladder.sft_template_weights``;
    :func:`unique_tasks`' skew made the start's success depend on the seed), for
    ``ladder.sft_epochs`` epochs. `model_name`: as in
    :func:`build_policy` (None: the from-scratch policy)."""
    from transformers import set_seed as seed_everything  # here: transformers takes seconds to import

    sizes = sizes or wm_r1_sizes(profile)
    if sizes.ladder is None:
        raise ValueError(f"profile {profile.name!r} has no WM-R1 ladder sizes (WMR1Sizes.ladder)")
    seed_everything(seed)
    train_templates, _ = task_templates(sizes.max_ref_len)
    sft_tasks = on_ladder_phone(template_balanced_tasks(sizes.ladder.sft_tasks, SFT_TASK_SEED + seed, train_templates,
                                                        dict(sizes.ladder.sft_template_weights)), sizes)
    model, tokenizer = build_policy(sizes, sft_tasks, seed, model_name)
    examples = sft_examples(tokenizer, sft_tasks, sizes.imagine_rate, seed, sizes.grpo.max_completion_length + 200,
                            sizes.thought_index, sizes.screen_view)
    train_policy_sft(model, tokenizer, examples, sizes.ladder.sft_epochs, sizes.sft_learning_rate,
                     sizes.sft_batch_size, seed, progress=progress)
    return model, tokenizer, sft_tasks


def rung_config(sizes: WMR1Sizes, output_dir: str | Path, seed: int, **overrides: Any) -> WMR1Config:
    """The GRPO run of one rung of ``sizes.ladder`` (its ``grpo``: steps, group, prompts per step, step
    size and temperature; the episode sizes and text budget of `sizes`; WM-R1's composite reward), trained inside whatever
    source it is given; `overrides` replace fields (e.g. ``imagine=False``, another ``reward``)."""
    config = WMR1Config.of(sizes.ladder.grpo, output_dir=str(output_dir), transitions="world_model",
                           reward=WMR1RewardConfig(max_steps=sizes.max_steps), max_episode_steps=sizes.max_steps,
                           max_turn_tokens=sizes.max_turn_tokens, max_completion_length=sizes.grpo.max_completion_length,
                           lora=sizes.lora, lora_r=sizes.lora_r, lora_alpha=sizes.lora_alpha, seed=seed,
                           show_progress=False, screen_view=sizes.screen_view)
    return replace(config, **overrides)


def run_fidelity_ladder(profile: Profile, seed: int = 0, sizes: WMR1Sizes | None = None,
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
    from transformers import set_seed as seed_everything  # here: transformers takes seconds to import

    sizes = sizes or wm_r1_sizes(profile)
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
        model, tokenizer = copy.deepcopy(start[0]), start[1]
    timings["sft"] = time.perf_counter() - t
    t = time.perf_counter()
    results: dict[str, Any] = {"seed": seed, "profile": profile.name, "ladder": asdict(ladder),
                               "start": greedy_and_sampled(model, tokenizer, eval_tasks, sizes, seed), "rungs": {}}
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
        config = rung_config(sizes, Path(out_dir or default_runs_root() / profile.name / "wm_r1_ladder")
                             / f"{name}_seed{seed}", seed)
        trained = train_wm_r1(config, copy.deepcopy(model), tokenizer, rl_tasks, source)
        history = trained.history
        quarter = max(1, len(history) // 4)
        rung = {"p": p, "fidelity": fidelity,
                **greedy_and_sampled(trained.model, tokenizer, eval_tasks, sizes, seed),
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


def run_wm_r1_ladder(profile: Profile, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's fidelity ladder: :func:`run_fidelity_ladder` for this seed at the profile's
    notebook 03 sizes (its own SFT start; every rung; the oracle only, no learned world model)."""
    return run_fidelity_ladder(profile, seed, sizes=sizes, out_dir=bench_work_dir(runs_root, "wm_r1_ladder", seed),
                               log=lambda line: None)


def run_wm_r1_small_world(profile: Profile, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's ladder in the small world (``sizes.small_world``: the settings templates, a
    2-epoch start at cpu): :func:`run_fidelity_ladder` for this seed, its own SFT start, every rung."""
    small = small_world_sizes(sizes)
    results = run_fidelity_ladder(profile, seed, sizes=small,
                                  out_dir=bench_work_dir(runs_root, "wm_r1_small_world", seed), log=lambda line: None)
    results["instruction_blind"] = instruction_blind_success(ladder_eval_tasks(small))
    return results


def learned_world_sizes(sizes: WMR1Sizes) -> WMR1Sizes:
    """`sizes` with the ladder replaced by ``sizes.learned_world`` (the settings world on the
    status-bar phone, the simulator rung only), for :func:`run_wm_r1_learned`."""
    if sizes.learned_world is None or sizes.learned is None:
        raise ValueError("these WM-R1 sizes have no learned world model (WMR1Sizes.learned_world / learned is None)")
    return replace(sizes, ladder=sizes.learned_world)


def run_learned_world_model(profile: Profile, seed: int = 0, sizes: WMR1Sizes | None = None,
                            out_dir: str | Path | None = None, log=print, progress: bool = False) -> dict:
    """WM-R1 inside a learned world model of the settings world, beside GRPO on the simulator from
    the same start (``sizes.learned_world``, ``sizes.learned``): the edit world model of
    :mod:`wmkit.wm_r1.learned` for this seed (trained, or loaded from `out_dir`), its judging of the
    start's own sampled episodes and of the reference solutions, then :func:`run_fidelity_ladder`
    with the rungs p = 0 (the simulator) and ``"learned"`` (no simulator step in training)."""
    sizes = learned_world_sizes(sizes or wm_r1_sizes(profile))
    out_dir = Path(out_dir or default_runs_root() / profile.name / "wm_r1_learned")
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


def run_wm_r1_learned(profile: Profile, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
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
