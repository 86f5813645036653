"""Where RLVR can act: the same GRPO recipe on text-game worlds of several sizes (notebook 02).

RL with a verifiable reward can only reinforce predictions the model already samples: a group
whose G predictions are all wrong (or all right) has zero reward spread, hence zero advantage
and no gradient. So the gain RLVR can give depends on where the MLE model starts. This module
measures that:

1. :func:`level_world_model` — the MLE world model of one difficulty level (a smaller world of
   the kit's text game, `wmkit.envs.textgame.DIFFICULTIES`; "full" is notebook 01's model);
2. :func:`measure_level` — greedy exact, sampled exact (pass@1), unbiased pass@k for
   k = 1..n and the task-specific reward, per held-out transition and summarised;
3. :func:`level_experiment` — MLE, then one RL run per seed from that same MLE model, each
   measured on the same held-out transitions, with per-seed gains;
4. :func:`regime_experiment` — every level of the profile's ``rlvr.regime`` section, the
   working level (first) with ``seeds`` RL seeds, the others with ``other_level_seeds`` (of
   ``contrast_steps`` steps; the working level is also measured at that step, `gain_at_budget`);
5. :func:`sanity_run` — RL on a handful of training transitions until it predicts them
   exactly: the pipeline can move the model at all.

Sizes: RLVR-World's ``regime`` (`wmkit.rlvr_world.config.RegimeSizes`). Independent runs
(the levels' MLE models, RL seeds, the levels' RL runs) go to ``parallel_runs`` worker
processes (`wmkit.core.parallel`).
"""
from __future__ import annotations

import copy
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from wmkit.core import world_model_rl as rl
from wmkit.core.build import WorldModelRun, ensure_world_model, series_world_model
from wmkit.core.models import merge_adapters
from wmkit.core.parallel import run_jobs
from wmkit.core.worldmodel import generate, is_exact, prompt_text
from wmkit.envs.base import Transition
from wmkit.profiles import Profile
from wmkit.rewards.textgame import textgame_binary_reward, textgame_task_specific_reward
from wmkit.rlvr_world.config import RegimeSizes, rlvr_sizes
from wmkit.rlvr_world.experiment import eval_set, uses_lora
from wmkit.stats import differences, summarize

LEVELS_FOLDER = "levels"
"""Subfolder of a profile's runs folder holding the MLE world model of each smaller level."""


def group_signal_probability(p, group_size: int):
    """Chance that a group of `group_size` samples, each right with probability `p`, holds both a
    right and a wrong one, 1 − p^G − (1 − p)^G: only then does a 0/1 reward give GRPO a non-zero
    advantage. Works on floats and numpy arrays alike."""
    return 1 - p ** group_size - (1 - p) ** group_size


def group_signal_unbiased(right: int, samples: int, group_size: int) -> float:
    """Unbiased estimate of :func:`group_signal_probability` for a transition sampled `samples` times
    with `right` of them right: 1 − C(n − k, G)/C(n, G) − C(k, G)/C(n, G), the share of the C(n, G)
    groups of G of those samples (drawn without replacement) that hold a right and a wrong one.

    Plugging the share k/n into 1 − p^G − (1 − p)^G instead is biased low (1 right of 16, G = 8:
    0.40 against 0.50), because p^G is convex. Needs G ≤ n (no group of G can be drawn from fewer)."""
    k, n, g = int(right), int(samples), int(group_size)
    if not 0 <= k <= n or not 1 <= g <= n:
        raise ValueError(f"needs 0 ≤ right ≤ samples and 1 ≤ group_size ≤ samples, not right={right}, "
                         f"samples={samples}, group_size={group_size}")
    total = math.comb(n, g)
    return 1 - math.comb(n - k, g) / total - math.comb(k, g) / total


def changed_success_counts(measured: dict) -> list[tuple[int, int]]:
    """Per changed transition of a :func:`measure_level` result: (samples right, samples drawn)."""
    return [(int(r["right"]), int(r["n"])) for r in measured["rows"] if r["changed"]]


def changed_success_shares(measured: dict) -> list[float]:
    """Per changed transition of a :func:`measure_level` result: the share of its samples that were exact."""
    return [r["right"] / r["n"] for r in measured["rows"] if r["changed"]]


def level_world_model(profile: Profile, level: str, runs_root: str | Path,
                      show_progress: bool = False, seed: int = 0) -> WorldModelRun:
    """The MLE world model of text-game level `level`: "full" is notebook 01's model (both
    environments); any other level gets a text-game-only model of the same shape and training,
    built once under ``runs_root/levels/<level>/world_model`` and loaded after that. Another `seed`
    is another MLE model (its own initialisation and data split), in ``world_model_seed<seed>``."""
    if level == "full":
        return series_world_model(profile, runs_root, seed)
    folder = "world_model" if seed == 0 else f"world_model_seed{seed}"
    return ensure_world_model(profile, Path(runs_root) / LEVELS_FOLDER / level / folder, seed=seed,
                              envs=("textgame",), difficulty=level, show_progress=show_progress)


def build_level_models(profile: Profile, runs_root: str | Path, levels: Sequence[str] | None = None,
                       workers: int | None = None) -> dict[str, dict]:
    """Train (or find) the MLE world model of every level in `levels` (default: the profile's
    regime levels), ``parallel_runs`` at a time; returns each model's info (steps, seconds)."""
    sizes = _regime_sizes(profile)
    levels = list(levels or sizes.levels)
    jobs = [(_level_model_info, {"profile": profile, "level": level, "runs_root": str(runs_root)})
            for level in levels]
    infos = run_jobs(jobs, workers or sizes.parallel_runs)
    return dict(zip(levels, infos))


def _level_model_info(profile: Profile, level: str, runs_root: str) -> dict:
    return dict(level_world_model(profile, level, runs_root).info)


GENERATION_MARGIN = 8
"""Tokens allowed beyond the longest true diff (end-of-turn tokens, a stray space)."""


def fit_generation_lengths(sizes: RegimeSizes, run: WorldModelRun) -> RegimeSizes:
    """`sizes` with the RL and evaluation generation budgets cut to the longest true diff of this
    level's text-game transitions (every split) plus `GENERATION_MARGIN` tokens.

    A batch generates until its last sequence stops, so one sample that never ends makes every
    step pay for the whole budget. A longer prediction could still be exact in principle (a diff may
    list objects it leaves unchanged), but the models do not write those (research/README.md, 'RLVR
    regime'). The cut changes the random stream of later samples, so sampled figures differ from an
    uncut run by sampling noise."""
    longest = max(len(run.tokenizer(t.diff)["input_ids"]) for split in run.splits.values()
                  for t in split if t.env == "textgame")
    budget = longest + GENERATION_MARGIN
    return replace(sizes, grpo=replace(sizes.grpo, max_completion_length=min(sizes.grpo.max_completion_length, budget)),
                   max_new_tokens=min(sizes.max_new_tokens, budget))


def _regime_sizes(profile: Profile) -> RegimeSizes:
    if rlvr_sizes(profile).regime is None:
        raise ValueError(f"profile {profile.name} has no rlvr.regime section")
    return rlvr_sizes(profile).regime


def _level_data(run: WorldModelRun, sizes: RegimeSizes, split: str = "test") -> tuple[list[Transition], list[Transition]]:
    """The level's text-game training transitions and its fixed held-out evaluation set, drawn
    from `split` ("test": what the notebook reports; "val": where its settings are chosen)."""
    if split not in ("val", "test"):
        raise ValueError(f"split must be 'val' or 'test', got {split!r}")
    held_out = [t for t in run.splits[split] if t.env == "textgame"]
    train = [t for t in run.splits["train"] if t.env == "textgame"]
    return train, eval_set(held_out, "textgame", sizes.eval_changed, sizes.eval_unchanged, 0)


def measure_level(model, tokenizer, transitions: Sequence[Transition], sizes: RegimeSizes, seed: int = 0) -> dict:
    """Greedy and sampled predictions of `model` on `transitions`, per transition and summarised.

    Per transition ("rows"): changed, greedy exact (0/1), right samples c of n = ``eval_samples``
    (T = 1), the sampled and greedy task-specific reward, and the same counts under RLVR-World's
    binary check, and the texts (action, gold diff, greedy prediction). Summaries ("changed", "unchanged"): greedy, sampled (mean c/n: sampled pass@1),
    pass_at (unbiased pass@k, k = 1..n), reward (mean task-specific reward of the samples),
    greedy_reward, sampled_binary and greedy_binary (the binary check instead of exact match)."""
    start = time.perf_counter()
    prompts = [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]
    greedy = [g[0] for g in generate(model, tokenizer, prompts, sizes.max_new_tokens)]
    # About 128 sequences per generate call: in a bigger batch one long-running sample keeps every
    # finished one computing to the end.
    samples = generate(model, tokenizer, prompts, sizes.max_new_tokens, do_sample=True,
                       num_samples=sizes.eval_samples, seed=seed, batch_size=max(1, 128 // sizes.eval_samples))
    rows = []
    for t, g, preds in zip(transitions, greedy, samples):
        rows.append({
            "changed": t.changed,
            "greedy": float(is_exact(t.env, t.state, g, t.next_state)),
            "right": sum(is_exact(t.env, t.state, p, t.next_state) for p in preds), "n": len(preds),
            # RLVR-World's binary check (lenient: names and additions unchecked), to compare with exact
            "right_binary": sum(textgame_binary_reward(p, t.state, t.next_state) for p in preds),
            "greedy_binary": textgame_binary_reward(g, t.state, t.next_state),
            "reward": statistics.fmean(textgame_task_specific_reward(p, t.state, t.next_state) for p in preds),
            "greedy_reward": textgame_task_specific_reward(g, t.state, t.next_state),
            "action": t.action, "gold": t.diff, "greedy_text": g,
        })
    out: dict = {"rows": rows, "seconds": round(time.perf_counter() - start, 1)}
    for part, keep in (("changed", True), ("unchanged", False)):
        sel = [r for r in rows if r["changed"] == keep]
        if not sel:
            continue
        n = sizes.eval_samples
        out[part] = {
            "n": len(sel),
            "greedy": statistics.fmean(r["greedy"] for r in sel),
            "sampled": statistics.fmean(r["right"] / r["n"] for r in sel),
            "pass_at": [statistics.fmean(rl.pass_at_k(n, r["right"], k) for r in sel) for k in range(1, n + 1)],
            "reward": statistics.fmean(r["reward"] for r in sel),
            "greedy_reward": statistics.fmean(r["greedy_reward"] for r in sel),
            "sampled_binary": statistics.fmean(r["right_binary"] / r["n"] for r in sel),
            "greedy_binary": statistics.fmean(r["greedy_binary"] for r in sel),
        }
    return out


GAIN_KEYS = ("sampled", "reward", "greedy", "unchanged_sampled")
"""RL − MLE gains reported per seed: on changed transitions sampled exact, task-specific reward of
the samples and greedy exact; on unchanged ones sampled exact."""


def _gain_figure(measured: dict, key: str) -> float | None:
    if key == "unchanged_sampled":
        return measured["unchanged"]["sampled"] if "unchanged" in measured else None
    return measured["changed"][key]


def rl_run(run: WorldModelRun, train: Sequence[Transition], sizes: RegimeSizes, out_dir: str | Path, seed: int,
           steps: int | None = None, show_progress: bool = False, keep_steps: Sequence[int] = ()) -> rl.RLVRResult:
    """One GRPO run of the regime recipe from `run`'s MLE model (resumes from its checkpoints).
    `keep_steps`: steps whose checkpoint must exist afterwards (`checkpoint_model` loads them)."""
    steps = steps or sizes.grpo.max_steps
    save_steps = math.gcd(max(10, steps // 4), *[s for s in keep_steps if 0 < s < steps])
    config = rl.RLVRConfig.of(sizes.grpo, max_steps=steps, output_dir=str(out_dir), reward=sizes.reward, seed=seed,
                              save_steps=save_steps, show_progress=show_progress, lora=uses_lora(run.info))
    return rl.train_rlvr(run.model, run.tokenizer, rl.rl_transitions(train, seed=seed), config)


def checkpoint_model(run: WorldModelRun, out_dir: str | Path, step: int):
    """The policy of the RL run in `out_dir` (an `rl_run` folder) as it was after `step` steps: the
    checkpoint's full weights, or `run`'s model plus the checkpoint's LoRA adapters, merged."""
    from transformers import AutoModelForCausalLM  # here: transformers takes seconds to import

    folder = Path(out_dir) / "checkpoints" / f"checkpoint-{step}"
    if not folder.is_dir():
        raise FileNotFoundError(f"no checkpoint of step {step} in {folder.parent} (rl_run's keep_steps keeps one)")
    if (folder / "adapter_config.json").exists():
        model = merge_adapters(copy.deepcopy(run.model), folder)
    else:
        model = AutoModelForCausalLM.from_pretrained(folder)
    return model.eval()


def rl_folder_name(sizes: RegimeSizes, seed: int) -> str:
    """The RL run's folder: it names the settings, so a run resumes only its own checkpoints."""
    grpo = sizes.grpo
    kl = f"_beta{grpo.beta:g}" if grpo.beta else ""
    return (f"rl_{sizes.reward}_lr{grpo.learning_rate:g}{kl}_G{grpo.num_generations}_steps{grpo.max_steps}"
            f"_len{grpo.max_completion_length}_seed{seed}")


def _seed_run(profile: Profile, level: str, seed: int, runs_root: str, sizes: RegimeSizes, work_dir: str,
              show_progress: bool = False, measure_at: Sequence[int] = (), split: str = "test",
              world_model_seed: int = 0) -> dict:
    """One RL seed at one level, then its measurement (a worker job: loads the model from disk);
    also the measurement after each earlier step in `measure_at` ("after_at", from checkpoints)."""
    run = level_world_model(profile, level, runs_root, seed=world_model_seed)
    train, evaluation = _level_data(run, sizes, split)
    out_dir = Path(work_dir) / rl_folder_name(sizes, seed)
    earlier = sorted({s for s in measure_at if 0 < s < sizes.grpo.max_steps})
    result = rl_run(run, train, sizes, out_dir, seed, show_progress=show_progress, keep_steps=earlier)
    after = measure_level(result.model, run.tokenizer, evaluation, sizes)
    after_at = {str(s): measure_level(checkpoint_model(run, out_dir, s), run.tokenizer, evaluation, sizes)
                for s in earlier}
    return {"seed": seed, "steps": result.steps, "seconds": round(result.seconds, 1),
            "reward_curve": result.curve("reward"), "zero_std_share": result.curve("frac_reward_zero_std"),
            "after": after, "after_at": after_at}


def level_experiments(profile: Profile, runs_root: str | Path, specs: Sequence[dict],
                      progress: Callable[[str], None] = print, workers: int | None = None,
                      show_progress: bool = False) -> list[dict]:
    """Several :func:`level_experiment` calls whose RL runs share one pool of `workers` processes
    (default: the sizes' ``parallel_runs``), so that no core idles while another seed or level runs.

    Each spec holds ``level`` and ``seeds``, optionally ``sizes`` (default: the profile's
    ``rlvr.regime``), ``work_dir`` and ``before`` (as :func:`level_experiment`), and ``measure_at``:
    earlier steps at which every run is measured too (from its checkpoint; the result's
    ``gain_at`` holds those gains, as ``gain`` and ``gain_per_transition`` do), ``split``:
    the held-out split measured ("test", default; "val" to choose settings), and ``world_model_seed``:
    which MLE model the RL starts from (:func:`level_world_model`; default 0, the notebooks' one;
    another seed's runs go to ``world_model_seed<seed>`` under the work folder). Specs at the same
    level, MLE model, split and evaluation sizes share one measurement of the MLE model. Returns one
    result per spec, in order; each result's ``seconds`` is the wall time of this whole call (the
    specs' runs share the pool, so no per-spec time exists)."""
    start = time.perf_counter()
    prepared = []
    measured: dict[tuple, dict] = {}
    for spec in specs:
        level, world_model_seed = spec["level"], spec.get("world_model_seed", 0)
        run = level_world_model(profile, level, runs_root, show_progress=show_progress, seed=world_model_seed)
        sizes = fit_generation_lengths(spec.get("sizes") or _regime_sizes(profile), run)
        split = spec.get("split", "test")
        train, evaluation = _level_data(run, sizes, split)
        key = (level, world_model_seed, split, sizes.eval_changed, sizes.eval_unchanged, sizes.eval_samples,
               sizes.max_new_tokens)
        before = spec.get("before") or measured.get(key)
        if before is None:
            before = measure_level(run.model, run.tokenizer, evaluation, sizes)
            progress(f"[{level}] MLE: greedy {before['changed']['greedy']:.3f}, sampled "
                     f"{before['changed']['sampled']:.3f}, pass@{sizes.eval_samples} "
                     f"{before['changed']['pass_at'][-1]:.3f} on {before['changed']['n']} changed {split} "
                     f"transitions ({before['seconds']:.0f} s)")
        measured[key] = before
        work = Path(spec.get("work_dir") or Path(runs_root) / "02_regime" / level)
        if world_model_seed:
            work = work / f"world_model_seed{world_model_seed}"
        prepared.append({"level": level, "seeds": list(spec["seeds"]), "sizes": sizes, "run_info": dict(run.info),
                         "world_model_seed": world_model_seed,
                         "n_train": len(train), "before": before, "work": work, "split": split,
                         "measure_at": list(spec.get("measure_at") or ())})

    jobs, owners = [], []
    for i, p in enumerate(prepared):
        for seed in p["seeds"]:
            jobs.append((_seed_run, {"profile": profile, "level": p["level"], "seed": seed,
                                     "runs_root": str(runs_root), "sizes": p["sizes"], "work_dir": str(p["work"]),
                                     "show_progress": show_progress, "measure_at": p["measure_at"],
                                     "split": p["split"], "world_model_seed": p["world_model_seed"]}))
            owners.append(i)

    def report(index: int, seed_result: dict) -> None:
        p = prepared[owners[index]]
        seed_result["gain"] = {key: differences([_gain_figure(seed_result["after"], key)],
                                                [_gain_figure(p["before"], key)])[0] for key in GAIN_KEYS}
        g = seed_result["gain"]
        progress(f"[{p['level']}, {p['sizes'].reward}, {p['sizes'].grpo.max_steps} steps] RL seed {seed_result['seed']}: sampled "
                 f"{seed_result['after']['changed']['sampled']:.3f} ({g['sampled']:+.3f}), task reward "
                 f"{g['reward']:+.3f}, greedy {g['greedy']:+.3f} ({seed_result['seconds']:.0f} s)")

    seed_results = run_jobs(jobs, workers or prepared[0]["sizes"].parallel_runs, on_done=report)
    results = []
    for i, p in enumerate(prepared):
        runs = [r for r, owner in zip(seed_results, owners) if owner == i]
        result = {"level": p["level"], "split": p["split"], "seeds": p["seeds"], "sizes": asdict(p["sizes"]),
                  "world_model": p["run_info"], "n_train": p["n_train"], "before": p["before"], "runs": runs,
                  **_gains(p["before"], [r["after"] for r in runs]),
                  "gain_at": {step: _gains(p["before"], [r["after_at"][step] for r in runs])
                              for step in (runs[0]["after_at"] if runs else {})},
                  "seconds": round(time.perf_counter() - start, 1)}
        results.append(result)
    return results


def _gains(before: dict, afters: Sequence[dict]) -> dict:
    """RL − MLE of one level over its RL seeds: per key of `GAIN_KEYS` over seeds ("gain": each
    seed's mean over transitions, then the interval over seeds — the seed is the unit of a claim),
    and the sampled gain per held-out changed transition, averaged over the seeds first
    ("gain_per_transition": n = transitions, never transitions × seeds, whose values from one
    transition are not independent; its interval is over transitions only, an interval also for
    one seed, and says nothing about how another RL seed would do)."""
    start_shares = changed_success_shares(before)
    per_seed = [[a - b for a, b in zip(changed_success_shares(after), start_shares)] for after in afters]
    per_transition = [statistics.fmean(gains) for gains in zip(*per_seed)]
    return {"gain": {key: summarize([differences([_gain_figure(after, key)], [_gain_figure(before, key)])[0]
                                     for after in afters]) for key in GAIN_KEYS},
            "gain_per_transition": summarize(per_transition)}


def regime_specs(sizes: RegimeSizes) -> list[dict]:
    """The RL runs of the regime study, as `level_experiments` specs: the working level (first of
    ``levels``) with ``seeds`` seeds, also measured after ``contrast_steps``; every other level with
    ``other_level_seeds`` seeds of ``contrast_steps`` steps (levels with 0 seeds: measured, no RL)."""
    contrast = sizes.level_steps(working=False)
    working = {"level": sizes.levels[0], "seeds": list(range(sizes.seeds)), "sizes": sizes,
               "measure_at": [contrast] if contrast < sizes.grpo.max_steps else []}
    return [working] + [{"level": level, "seeds": list(range(sizes.other_level_seeds)),
                         "sizes": replace(sizes, grpo=replace(sizes.grpo, max_steps=contrast))}
                        for level in sizes.levels[1:]]


def gain_at_budget(result: dict, steps: int) -> dict:
    """A `level_experiments` result's gains after `steps` RL steps: its final ones when its runs
    had that many, else those measured at that step's checkpoint (``gain_at``)."""
    if result["sizes"]["grpo"]["max_steps"] == steps:
        return {"gain": result["gain"], "gain_per_transition": result["gain_per_transition"]}
    if str(steps) not in result.get("gain_at", {}):
        raise KeyError(f"level {result['level']} was not measured after {steps} steps")
    return result["gain_at"][str(steps)]


def level_experiment(profile: Profile, level: str, seeds: Sequence[int], runs_root: str | Path,
                     sizes: RegimeSizes | None = None, progress: Callable[[str], None] = print,
                     show_progress: bool = False, work_dir: str | Path | None = None,
                     before: dict | None = None, workers: int | None = None, world_model_seed: int = 0) -> dict:
    """MLE vs MLE + RLVR at one level: the MLE model measured once, then one RL run per seed
    from it, each measured on the same held-out (test) transitions. Gains are per seed.
    RL checkpoints go to `work_dir` (default runs_root/02_regime/<level>), one folder per settings
    and seed (:func:`rl_folder_name`). `before`: the MLE model's measurement from an earlier call
    at the same level and sizes (it is then not measured again). Generation budgets are cut to
    the level's longest diff (:func:`fit_generation_lengths`); seeds run `workers` at a time."""
    spec = {"level": level, "seeds": seeds, "sizes": sizes, "work_dir": work_dir, "before": before,
            "world_model_seed": world_model_seed}
    return level_experiments(profile, runs_root, [spec], progress, workers, show_progress)[0]


def regime_experiment(profile: Profile, runs_root: str | Path, progress: Callable[[str], None] = print,
                      show_progress: bool = False) -> dict:
    """Every level of the profile's ``rlvr.regime`` section (`regime_specs`): the first with ``seeds``
    RL seeds, the others with ``other_level_seeds`` of ``contrast_steps`` steps (0 seeds: the MLE
    model is measured, RL not run)."""
    sizes = _regime_sizes(profile)
    build_level_models(profile, runs_root)
    results = level_experiments(profile, runs_root, regime_specs(sizes), progress, show_progress=show_progress)
    return {"profile": profile.name, "working_level": sizes.levels[0],
            "levels": {r["level"]: r for r in results}}


def sanity_run(profile: Profile, runs_root: str | Path, level: str | None = None, seed: int = 0,
               show_progress: bool = False) -> dict:
    """RL on ``sanity_transitions`` changed training transitions (the same few every step) for
    ``sanity_steps`` steps: sampled exact on exactly those transitions before and after. A pipeline
    that cannot raise it has a bug (a reward that never pays, a learning rate of zero, frozen weights).
    The few are chosen among transitions the MLE model sometimes predicts exactly, where a binary
    reward has something to reinforce."""
    sizes = _regime_sizes(profile)
    level = level or sizes.levels[0]
    run = level_world_model(profile, level, runs_root, show_progress=show_progress)
    sizes = fit_generation_lengths(sizes, run)
    changed = [t for t in run.splits["train"] if t.env == "textgame" and t.changed]
    candidates = random.Random(seed).sample(changed, min(8 * sizes.sanity_transitions, len(changed)))
    scored = measure_level(run.model, run.tokenizer, candidates, sizes, seed)["rows"]
    # Transitions the model sometimes gets right: a binary reward then has spread within the group
    # (all-wrong groups give no gradient, see the module docstring); then the rest, to fill up.
    order = sorted(range(len(candidates)), key=lambda i: not 0 < scored[i]["right"] < scored[i]["n"])
    chosen = [candidates[i] for i in order[:sizes.sanity_transitions]]
    before = measure_level(run.model, run.tokenizer, chosen, sizes, seed)
    # The dataset is the same few transitions repeated, so every step sees them.
    repeated = chosen * max(1, sizes.sanity_steps * sizes.grpo.prompts_per_step // max(1, len(chosen)))
    # No KL term: the sanity run must be free to move the model onto its few transitions.
    config = rl.RLVRConfig.of(
        sizes.grpo, output_dir=str(Path(runs_root) / "02_regime" / "sanity"), reward=sizes.reward, beta=0.0,
        max_steps=sizes.sanity_steps, unchanged_ratio=0.0, seed=seed, save_steps=10**9, resume=False,
        show_progress=show_progress, lora=uses_lora(run.info))
    result = rl.train_rlvr(run.model, run.tokenizer, repeated, config)
    after = measure_level(result.model, run.tokenizer, chosen, sizes, seed)
    return {"level": level, "n": len(chosen), "steps": result.steps, "seconds": round(result.seconds, 1),
            "before": before["changed"], "after": after["changed"], "reward_curve": result.curve("reward"),
            "transitions": [{"action": t.action, "diff": t.diff} for t in chosen]}


def run_rlvr_regime(profile: Profile, seed: int, runs_root: str | Path, sizes) -> dict:
    """The benchmark's one-seed run of the working level (the first of ``sizes.regime.levels``):
    MLE vs MLE + RLVR from that level's MLE model of seed `seed` (each seed its own MLE model, so the
    spread over seeds holds the MLE model's as well as RL's), RL seed `seed`.

    The RL run lives where notebook 02 keeps its runs (``runs_root/02_regime/<level>``, one folder
    per settings and seed, :func:`rl_folder_name`), not in a benchmark folder: the notebook's
    working level runs the same recipe with seeds 0..seeds-1, so a benchmark after the notebook
    measures the notebook's finished runs instead of training them again (and a notebook after
    the benchmark resumes the benchmark's). Settings that differ get their own folders."""
    regime = sizes.regime
    if regime is None:
        raise ValueError("this profile's rlvr sizes have no regime section")
    result = level_experiment(profile, regime.levels[0], [seed], runs_root, regime, progress=lambda line: None,
                              world_model_seed=seed)
    for measured in [result["before"]] + [r["after"] for r in result["runs"]]:
        measured.pop("rows")  # per-transition rows: the notebook's, too long for the benchmark's records
    return result


ABLATION_REWARDS = ("binary", "task_specific", "continuous")
"""RLVR-World's reward types compared at the working level besides the recipe's own ("exact"):
its binary check, its task-specific partial credit, and ROUGE-L ("continuous")."""

ABLATION_GROUP_SIZE = 4
"""The smaller group compared with the recipe's ``num_generations`` at the working level."""


def ablation_specs(sizes: RegimeSizes, seed: int, world_model_seed: int = 0) -> dict[str, dict]:
    """The reward-type and group-size arms at the working level, as `level_experiments` specs keyed
    by arm name: ``reward_<name>`` for the recipe's reward and each of `ABLATION_REWARDS`, and
    ``group_<G>`` for `ABLATION_GROUP_SIZE` with the recipe's reward. Only the named setting differs
    from the recipe; the recipe's own arm is the same run as the regime study's (same folder)."""
    level = sizes.levels[0]
    arms = {f"reward_{r}": replace(sizes, reward=r) for r in dict.fromkeys((sizes.reward, *ABLATION_REWARDS))}
    if ABLATION_GROUP_SIZE != sizes.grpo.num_generations:
        arms[f"group_{ABLATION_GROUP_SIZE}"] = replace(sizes, grpo=replace(sizes.grpo, num_generations=ABLATION_GROUP_SIZE))
    return {name: {"level": level, "seeds": [seed], "sizes": arm, "world_model_seed": world_model_seed}
            for name, arm in arms.items()}


def run_rlvr_regime_ablations(profile: Profile, seed: int, runs_root: str | Path, sizes) -> dict:
    """The benchmark's one-seed run of RLVR-World's reward-type and group-size ablations where RL
    acts (the working level, `ablation_specs`), each arm from the same MLE model (the seed's own, as
    in :func:`run_rlvr_regime`) and measured on the same test transitions. Returns ``before`` (the MLE model), and per arm its ``after``
    measurement and settings. Run folders are the regime study's (:func:`run_rlvr_regime`)."""
    regime = sizes.regime
    if regime is None:
        raise ValueError("this profile's rlvr sizes have no regime section")
    specs = ablation_specs(regime, seed, world_model_seed=seed)
    results = level_experiments(profile, runs_root, list(specs.values()), progress=lambda line: None, workers=1)
    arms = {}
    for name, result in zip(specs, results):
        run = result["runs"][0]
        run["after"].pop("rows", None)  # per-transition rows: too long for the benchmark's records
        arms[name] = {"reward": result["sizes"]["reward"], "num_generations": result["sizes"]["grpo"]["num_generations"],
                      "after": run["after"], "seconds": run["seconds"],
                      "zero_std_share": statistics.fmean(run["zero_std_share"]) if run["zero_std_share"] else None}
    before = dict(results[0]["before"])
    before.pop("rows", None)
    return {"level": regime.levels[0], "before": before, "arms": arms,
            "recipe": {"reward": regime.reward, "num_generations": regime.grpo.num_generations}}
