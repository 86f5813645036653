"""RLVR-World's experiments on the kit's world model (shown in notebook 02).

Every experiment starts from notebook 01's MLE world model and trains it further with GRPO
(`wmkit.core.world_model_rl.train_rlvr`), then measures the same thing before and after:

1. :func:`reward_arm` on the text game: MLE vs MLE+RLVR, greedy and sampled, changed and
   unchanged transitions (also the arms of the reward-type and group-size ablations).
2. the same on the phone with the screen-diff F1 reward.
3. :func:`best_of_k` — the test-time alternative: sample k predictions from the base model
   and keep any exact one.

:func:`run_rlvr_mle_vs_rl`, :func:`run_rlvr_ablations` and :func:`run_rlvr_phone` are the
benchmark's one-seed runs. RWML's experiment, which reuses this GRPO step with an embedding
reward, is in :mod:`wmkit.rwml.experiment`.

The sizes are RLVR-World's (`wmkit.rlvr_world.config`). Command line (several seeds,
for the mean ± std the notebook and the benchmark report)::

    python -m wmkit run rlvr-world --profile cpu --seeds 3
    python -m wmkit run rlvr-world --profile cpu --sweep      # learning rates on validation
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from wmkit.core import world_model_rl as rl
from wmkit.core.build import series_world_model
from wmkit.core.world_model_rl import eval_set, uses_lora
from wmkit.envs.base import Transition
from wmkit.profiles import Profile
from wmkit.rlvr_world.config import RLVRSizes, rlvr_sizes
from wmkit.runs import bench_work_dir
from wmkit.stats import summarize


def measure(model, tokenizer, transitions: Sequence[Transition], sizes: RLVRSizes, seed: int = 0) -> dict:
    """Greedy and sampled accuracy: exact match on changed / unchanged transitions and partial credit."""
    result = rl.evaluate_predictions(model, tokenizer, transitions, sizes.max_new_tokens,
                                     num_samples=sizes.eval_samples, seed=seed)
    return {name: summary.to_dict() for name, summary in result.items()}


def arm_config(sizes: RLVRSizes, out_dir: str | Path, *, lora: bool, reward: str = "task_specific",
               num_generations: int | None = None, steps: int | None = None, seed: int = 0,
               learning_rate: float | None = None, trl_args: dict | None = None, **run) -> rl.RLVRConfig:
    """The `RLVRConfig` of one RLVR-World arm at `sizes`: the one place notebook 02, ``wmkit train rlvr``
    and the benchmark turn RLVR-World's sizes into a GRPO run (`num_generations`, `steps` and
    `learning_rate` replace the knobs of ``sizes.grpo`` for an ablation arm; `lora`: `uses_lora` of the
    world model)."""
    grpo = replace(sizes.grpo, max_steps=steps or sizes.grpo.max_steps,
                   num_generations=num_generations or sizes.grpo.num_generations,
                   learning_rate=learning_rate or sizes.grpo.learning_rate)
    return rl.RLVRConfig.of(grpo, output_dir=str(out_dir), reward=reward, seed=seed,
                            save_steps=max(5, grpo.max_steps // 2), lora=lora, trl_args=dict(trl_args or {}), **run)


def reward_arm(base_model, tokenizer, train: Sequence[Transition], evaluation: Sequence[Transition],
               sizes: RLVRSizes, out_dir: str | Path, reward: str = "task_specific",
               num_generations: int | None = None, steps: int | None = None, seed: int = 0,
               learning_rate: float | None = None, show_progress: bool = True, **config_overrides) -> dict:
    """Train one RLVR arm from `base_model` (config: :func:`arm_config`) and measure it; returns the
    figures and the model."""
    config = arm_config(sizes, out_dir, reward=reward, num_generations=num_generations, steps=steps, seed=seed,
                        learning_rate=learning_rate, show_progress=show_progress, **config_overrides)
    result = rl.train_rlvr(base_model, tokenizer, rl.rl_transitions(train, seed=seed), config)
    return {
        "reward": reward, "num_generations": config.num_generations, "steps": result.steps,
        "learning_rate": config.learning_rate, "seconds": round(result.seconds, 1),
        "reward_curve": result.curve("reward"), "reward_std_curve": result.curve("reward_std"),
        "zero_std_share": result.curve("frac_reward_zero_std"),
        "after": measure(result.model, tokenizer, evaluation, sizes, seed), "model": result.model,
    }


def best_of_k(model, tokenizer, transitions: Sequence[Transition], sizes: RLVRSizes, seed: int = 0) -> list[float]:
    """Best-of-k exact accuracy (a perfect verifier picks any right sample), k = 1..best_of_k."""
    return rl.best_of_k_curve(model, tokenizer, transitions, sizes.best_of_k, sizes.max_new_tokens, seed=seed)


def strip_models(results: dict) -> dict:
    """A copy without model objects (for results.json)."""
    return {k: strip_models(v) if isinstance(v, dict) else v for k, v in results.items() if k != "model"}


def seeds_experiment(profile: Profile, seeds: Sequence[int], runs_root: Path, sizes: RLVRSizes | None = None,
                     out_dir: Path | None = None, world_model_seed: int = 0) -> dict:
    """MLE vs MLE+RLVR (task-specific reward) on the text game's test transitions, one RL run per seed
    from the same MLE model: notebook 01's (seed 0; rebuilding it per seed costs more than the whole
    notebook), or with `world_model_seed` another seed's (its own model, data split, evaluation
    transitions and evaluation samples: the benchmark runs one seed so, so that its spread over seeds
    holds the MLE model's and the baseline's evaluation noise too). Checkpoints go to `out_dir`
    (default runs_root/02_rlvr_seeds)."""
    sizes = sizes or rlvr_sizes(profile)
    run = series_world_model(profile, runs_root, world_model_seed)
    evaluation = eval_set(run.splits["test"], "textgame", sizes.eval_changed, sizes.eval_unchanged, world_model_seed)
    train = [t for t in run.splits["train"] if t.env == "textgame"]
    before = measure(run.model, run.tokenizer, evaluation, sizes, world_model_seed)
    per_seed = []
    for seed in seeds:
        arm = reward_arm(run.model, run.tokenizer, train, evaluation, sizes,
                         Path(out_dir or runs_root / "02_rlvr_seeds") / f"seed{seed}", seed=seed, show_progress=False,
                         lora=uses_lora(run.info), resume=False)
        per_seed.append(strip_models(arm))
        print(f"seed {seed}: greedy changed {arm['after']['greedy']['changed']:.3f}, "
              f"sampled changed {arm['after']['sampled']['changed']:.3f}", flush=True)
    return {"profile": profile.name, "seeds": list(seeds), "sizes": asdict(sizes), "before": before,
            "runs": per_seed, "table": seeds_table(before, per_seed)}


def seeds_table(before: dict, runs: Sequence[dict]) -> dict:
    """Per decoding and part: the MLE model's accuracy and the RL runs' after it, over seeds."""
    table = {}
    for mode in ("greedy", "sampled"):
        for part in ("changed", "unchanged", "partial_changed"):
            table[f"{mode}_{part}"] = {"before": before[mode][part],
                                       "after": summarize([a["after"][mode][part] for a in runs])}
    return table



def sweep_experiment(profile: Profile, runs_root: Path, sizes: RLVRSizes | None = None, seed: int = 0,
                     lora: bool | None = None) -> dict:
    """Learning-rate sweep on the *validation* split (the test split is never used to choose)."""
    sizes = sizes or rlvr_sizes(profile)
    run = series_world_model(profile, runs_root)
    evaluation = eval_set(run.splits["val"], "textgame", sizes.eval_changed, sizes.eval_unchanged, seed)
    train = [t for t in run.splits["train"] if t.env == "textgame"]
    lora = uses_lora(run.info) if lora is None else lora
    out = {"before": measure(run.model, run.tokenizer, evaluation, sizes, seed), "arms": {}, "lora": lora}
    for lr in sizes.lr_sweep:
        arm = reward_arm(run.model, run.tokenizer, train, evaluation, sizes, runs_root / "02_rlvr_sweep" / f"lr{lr:g}",
                         seed=seed, learning_rate=lr, show_progress=False, lora=lora, resume=False)
        out["arms"][f"{lr:g}"] = strip_models(arm)
        a = arm["after"]
        print(f"lr {lr:g}: greedy changed {a['greedy']['changed']:.3f} partial {a['greedy']['partial_changed']:.3f}"
              f" | sampled changed {a['sampled']['changed']:.3f} partial {a['sampled']['partial_changed']:.3f}",
              flush=True)
    return out


def run_rlvr_seed(profile: Profile, seed: int, runs_root: Path, sizes: RLVRSizes) -> dict:
    """``python -m wmkit run rlvr-world``, one seed: :func:`seeds_experiment` for this RL seed
    (checkpoints in runs_root/02_rlvr_seeds/seed<N>)."""
    return seeds_experiment(profile, [seed], Path(runs_root), sizes)


def combine_rlvr_seeds(profile: Profile, records: dict[int, dict], sizes: RLVRSizes) -> dict:
    """The seeds' records of :func:`run_rlvr_seed` as one :func:`seeds_experiment` over all of them:
    the MLE model's `before` is measured at seed 0 whatever the RL seed, so every record has the same."""
    runs = [r["runs"][0] for r in records.values()]
    before = next(iter(records.values()))["before"]
    return {"profile": profile.name, "seeds": list(records), "sizes": asdict(sizes), "before": before,
            "runs": runs, "table": seeds_table(before, runs)}


def run_rlvr_sweep(profile: Profile, seed: int, runs_root: Path, sizes: RLVRSizes, lora: bool = False) -> dict:
    """``python -m wmkit run rlvr-world --sweep [--lora]``: :func:`sweep_experiment` (validation split)."""
    return sweep_experiment(profile, Path(runs_root), sizes, seed=seed, lora=True if lora else None)


def sweep_file(lora: bool = False) -> str:
    return "rlvr_lr_sweep_lora.json" if lora else "rlvr_lr_sweep.json"


def check_options(sweep: bool = False, lora: bool = False, steps: int | None = None, **_) -> None:
    """``--lora`` is an option of the sweep."""
    if lora and not sweep:
        raise ValueError("--lora goes with --sweep")


def run_rlvr_mle_vs_rl(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """RLVR-World, MLE vs MLE+RLVR: :func:`wmkit.rlvr_world.experiment.seeds_experiment` for this one seed,
    from this seed's own MLE model."""
    return seeds_experiment(profile, [seed], Path(runs_root), sizes,
                            out_dir=bench_work_dir(runs_root, "rlvr_mle_vs_rl", seed), world_model_seed=seed)


def run_rlvr_ablations(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """RLVR-World's reward-type and group-size arms and the best-of-k limitation (notebook 02,
    experiments 2, 4 and 6) for one RL seed, from that seed's MLE model (notebook 01's recipe)."""
    wm = series_world_model(profile, runs_root, seed)
    evaluation = eval_set(wm.splits["test"], "textgame", sizes.eval_changed, sizes.eval_unchanged, seed)
    train = [t for t in wm.splits["train"] if t.env == "textgame"]
    work, lora = bench_work_dir(runs_root, "rlvr_ablations", seed), uses_lora(wm.info)
    common = {"seed": seed, "show_progress": False, "lora": lora, "resume": False}
    rewards, models = {}, {}
    for reward in sizes.rewards:
        arm = reward_arm(wm.model, wm.tokenizer, train, evaluation, sizes, work / f"reward_{reward}", reward,
                            **common)
        models[reward] = arm["model"]
        rewards[reward] = strip_models(arm)
    groups = {}
    for g in sizes.group_sizes:
        if g == sizes.grpo.num_generations and "task_specific" in rewards:
            groups[str(g)] = rewards["task_specific"]  # the same arm: no second run
            continue
        arm = reward_arm(wm.model, wm.tokenizer, train, evaluation, sizes, work / f"group_{g}", "task_specific",
                            num_generations=g, **common)
        groups[str(g)] = strip_models(arm)
    changed = [t for t in evaluation if t.changed]
    rl_model = models.get("task_specific", next(iter(models.values())))
    bok_mle = best_of_k(wm.model, wm.tokenizer, changed, sizes, seed)
    bok_rl = best_of_k(rl_model, wm.tokenizer, changed, sizes, seed)
    small, large = str(min(sizes.group_sizes)), str(max(sizes.group_sizes))
    return {"before": measure(wm.model, wm.tokenizer, evaluation, sizes, seed), "rewards": rewards,
            "group_sizes": {"all": groups, "small": {"G": int(small), **groups[small]},
                            "large": {"G": int(large), **groups[large]}},
            "best_of_k": {"mle": bok_mle, "rlvr": bok_rl, "mle_at_k_max": bok_mle[-1], "rlvr_at_1": bok_rl[0]},
            "n_eval": len(evaluation), "n_eval_changed": len(changed)}


def run_rlvr_phone(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """RLVR-World on screens: the phone's screen-diff F1 before and after RLVR (notebook 02, experiment 3),
    from this seed's own MLE model (notebook 01's recipe)."""
    wm = series_world_model(profile, runs_root, seed)
    evaluation = eval_set(wm.splits["test"], "phone", sizes.eval_changed, sizes.eval_unchanged, seed)
    train = [t for t in wm.splits["train"] if t.env == "phone"]
    before = measure(wm.model, wm.tokenizer, evaluation, sizes, seed)
    arm = reward_arm(wm.model, wm.tokenizer, train, evaluation, sizes, bench_work_dir(runs_root, "rlvr_phone", seed),
                        "task_specific", steps=sizes.phone_steps, seed=seed, show_progress=False,
                        lora=uses_lora(wm.info), resume=False)
    return {"before": before, "arm": strip_models(arm)}
