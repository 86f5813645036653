"""Notebook 02's experiments: RLVR-World and RWML on the kit's world model.

Every experiment starts from notebook 01's MLE world model and trains it further with GRPO
(`wmkit.rl.train_rlvr`), then measures the same thing before and after:

1. :func:`reward_arm` on the text game: MLE vs MLE+RLVR, greedy and sampled, changed and
   unchanged transitions (also the arms of the reward-type and group-size ablations).
2. the same on the phone with the screen-diff F1 reward.
3. :func:`rwml_experiment` on TextWorldExpress: RWML's embedding reward with the threshold
   chosen on held-out pairs and hard-sample filtering, against SFT on the same next
   observations, plus a forgetting check on the kit's own environments.
4. :func:`best_of_k` — the test-time alternative: sample k predictions from the base model
   and keep any exact one.

:data:`SIZES` holds the profile sizes. Command line (several seeds, for the mean ± std the
notebook and the benchmark report)::

    python -m wmkit.rlvr_experiments --profile cpu --seeds 3
    python -m wmkit.rlvr_experiments --profile cpu --sweep      # learning rates on validation
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from wmkit import rl
from wmkit.envs.base import Transition
from wmkit.rewards.text_similarity import repeated_ngram_share, rouge_l_f1
from wmkit.serialize import jsonable
from wmkit.worldmodel import generate, is_exact, prompt_text, split_by_episode


@dataclass(frozen=True)
class RLVRSizes:
    """Sizes of notebook 02 for one profile."""

    steps: int
    """GRPO optimizer steps per text-game arm."""
    num_generations: int
    """Default group size G (RLVR-World used 5)."""
    prompts_per_step: int
    """Transitions per step (batch = prompts_per_step × G completions)."""
    learning_rate: float
    """LoRA learning rate, chosen by `--sweep` on the validation split (see the module doc)."""
    max_completion_length: int
    """Longest sampled prediction during RL (tokens)."""
    eval_changed: int
    """Changed test transitions per evaluation."""
    eval_unchanged: int
    """Unchanged test transitions per evaluation."""
    eval_samples: int
    """Samples per prompt for sampled (T=1) accuracy."""
    max_new_tokens: int
    """Generation budget at evaluation."""
    rewards: tuple[str, ...]
    """Arms of the reward ablation (text game)."""
    group_sizes: tuple[int, ...]
    """Arms of the group-size ablation (same prompts per step, so larger G costs more)."""
    phone_steps: int
    """GRPO steps of the phone (screen-diff F1) arm."""
    best_of_k: int
    """Largest k of the best-of-k curve."""
    twx_episodes: int
    """TextWorldExpress episodes collected (split 80/10/10 by episode)."""
    twx_warm_fraction: float
    """Share of the TWX training data given to the warm-up predictor (RWML: ~10%)."""
    twx_warm_epochs: float
    """SFT epochs of the warm-up predictor on that share."""
    twx_steps: int
    """GRPO steps of the RWML arm."""
    twx_sft_epochs: float
    """SFT epochs of the SFT baseline on the filtered data."""
    twx_max_chars: int
    """TWX transitions whose next observation is longer are left out (tiny models, short budgets)."""
    twx_eval: int
    """TWX test transitions evaluated."""
    easy_keep_probability: float
    """Chance an easy transition (warm predictor already right) survives the hard-sample filter."""
    forgetting_eval: int
    """Transitions per kit environment in the forgetting check."""
    lr_sweep: tuple[float, ...] = (3e-5, 1e-4, 3e-4)
    """Learning rates tried by `--sweep` (on the validation split, never the test split)."""


SIZES: dict[str, RLVRSizes] = {
    "smoke": RLVRSizes(
        steps=2, num_generations=2, prompts_per_step=2, learning_rate=1e-4, max_completion_length=24,
        eval_changed=4, eval_unchanged=2, eval_samples=2, max_new_tokens=32,
        rewards=("binary", "task_specific"), group_sizes=(2, 4), phone_steps=2, best_of_k=2,
        twx_episodes=24, twx_warm_fraction=0.3, twx_warm_epochs=1.0, twx_steps=2, twx_sft_epochs=1.0,
        twx_max_chars=100, twx_eval=4, easy_keep_probability=0.1, forgetting_eval=4),
    "cpu": RLVRSizes(
        steps=30, num_generations=8, prompts_per_step=4, learning_rate=1e-4, max_completion_length=128,
        eval_changed=60, eval_unchanged=30, eval_samples=2, max_new_tokens=160,
        # Sized for notebook 02 in <= 15 min on 2 CPU cores: each text-game arm costs ~90 s, a phone
        # step ~10 s (long screens), RWML's generations (filter, evaluation) ~4 min at these sizes;
        # the repetition-penalty arm runs in the gpu profile.
        rewards=("binary", "task_specific", "continuous"), group_sizes=(4, 8),
        phone_steps=12, best_of_k=8,
        twx_episodes=60, twx_warm_fraction=0.1, twx_warm_epochs=4.0, twx_steps=16, twx_sft_epochs=2.0,
        twx_max_chars=160, twx_eval=30, easy_keep_probability=0.1, forgetting_eval=20),
    "gpu": RLVRSizes(
        steps=300, num_generations=8, prompts_per_step=16, learning_rate=1e-4, max_completion_length=200,
        eval_changed=300, eval_unchanged=150, eval_samples=4, max_new_tokens=200,
        rewards=("binary", "task_specific", "continuous", "continuous_rep"), group_sizes=(2, 4, 8, 16),
        phone_steps=300, best_of_k=32,
        twx_episodes=1500, twx_warm_fraction=0.1, twx_warm_epochs=4.0, twx_steps=300, twx_sft_epochs=2.0,
        twx_max_chars=400, twx_eval=300, easy_keep_probability=0.1, forgetting_eval=200),
}


def sizes_for(profile_name: str) -> RLVRSizes:
    if profile_name not in SIZES:
        raise ValueError(f"Unknown profile {profile_name!r}: choose one of {', '.join(SIZES)}")
    return SIZES[profile_name]


# --------------------------------------------------------------------------- evaluation

def eval_set(transitions: Sequence[Transition], env: str, n_changed: int, n_unchanged: int,
             seed: int = 0) -> list[Transition]:
    """A fixed random choice of changed and unchanged transitions of `env` (changed first)."""
    rng = random.Random(seed)
    changed = [t for t in transitions if t.env == env and t.changed]
    unchanged = [t for t in transitions if t.env == env and not t.changed]
    rng.shuffle(changed)
    rng.shuffle(unchanged)
    return changed[:n_changed] + unchanged[:n_unchanged]


def measure(model, tokenizer, transitions: Sequence[Transition], sizes: RLVRSizes, seed: int = 0) -> dict:
    """Greedy and sampled accuracy: exact match on changed / unchanged transitions and partial credit."""
    result = rl.evaluate_predictions(model, tokenizer, transitions, sizes.max_new_tokens,
                                     num_samples=sizes.eval_samples, seed=seed)
    return {name: summary.to_dict() for name, summary in result.items()}


def reward_arm(base_model, tokenizer, train: Sequence[Transition], evaluation: Sequence[Transition],
               sizes: RLVRSizes, out_dir: str | Path, reward: str = "task_specific",
               num_generations: int | None = None, steps: int | None = None, seed: int = 0,
               learning_rate: float | None = None, show_progress: bool = True, **config_overrides) -> dict:
    """Train one RLVR arm from `base_model` and measure it; returns the figures and the model."""
    config = rl.RLVRConfig(
        output_dir=str(out_dir), reward=reward, num_generations=num_generations or sizes.num_generations,
        prompts_per_step=sizes.prompts_per_step, learning_rate=learning_rate or sizes.learning_rate,
        max_completion_length=sizes.max_completion_length, max_steps=steps or sizes.steps, seed=seed,
        save_steps=max(5, (steps or sizes.steps) // 2), show_progress=show_progress, **config_overrides)
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


# --------------------------------------------------------------------------- RWML on TextWorldExpress

def twx_splits(sizes: RLVRSizes, seed: int = 0) -> dict[str, list[Transition]]:
    """TextWorldExpress transitions (short next observations only), split by episode."""
    from wmkit.envs import twx

    transitions = [t for t in twx.collect_transitions(sizes.twx_episodes, seed=seed)
                   if len(t.next_state) <= sizes.twx_max_chars]
    return split_by_episode(transitions)


def _prompts(tokenizer, transitions: Sequence[Transition]) -> list[str]:
    return [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]


def _mean(values) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def twx_quality(model, tokenizer, transitions: Sequence[Transition], embedding_reward, max_new_tokens: int) -> dict:
    """Greedy next-observation quality: exact match, embedding reward (cos ≥ τ), mean cosine, ROUGE-L."""
    predictions = [p[0] for p in generate(model, tokenizer, _prompts(tokenizer, transitions), max_new_tokens)]
    truths = [t.next_state for t in transitions]
    sims = embedding_reward.similarities(predictions, truths)
    return {
        "exact": _mean(float(p.strip() == t) for p, t in zip(predictions, truths)),
        "embedding_reward": _mean(float(s >= embedding_reward.tau) for s in sims),
        "cosine": _mean(float(s) for s in sims),
        "rouge_l": _mean(rouge_l_f1(p, t) for p, t in zip(predictions, truths)),
        "repetition": _mean(repeated_ngram_share(p) for p in predictions),
        "n": len(transitions),
        "examples": [{"action": t.action, "truth": t.next_state, "predicted": p}
                     for t, p in list(zip(transitions, predictions))[:3]],
    }


def kit_accuracy(model, tokenizer, transitions: Sequence[Transition], max_new_tokens: int) -> float:
    """Greedy exact accuracy on the kit's own environments (the forgetting check)."""
    predictions = generate(model, tokenizer, _prompts(tokenizer, transitions), max_new_tokens)
    return _mean(float(is_exact(t.env, t.state, p[0], t.next_state)) for t, p in zip(transitions, predictions))


def hard_sample_filter(predictor, tokenizer, transitions: Sequence[Transition], embedding_reward,
                       keep_probability: float, max_new_tokens: int, seed: int = 0) -> tuple[list[Transition], dict]:
    """RWML's filter: the warm-up predictor answers each transition; those it already gets right
    (embedding reward 1) are too easy and survive only with `keep_probability`."""
    predictions = [p[0] for p in generate(predictor, tokenizer, _prompts(tokenizer, transitions), max_new_tokens)]
    easy = embedding_reward(predictions, next_state=[t.next_state for t in transitions])
    rng = random.Random(seed)
    kept = [t for t, e in zip(transitions, easy) if not e or rng.random() < keep_probability]
    return kept, {"n_scored": len(transitions), "easy_share": _mean(easy),
                  "n_kept": len(kept)}


def rwml_experiment(base_model, tokenizer, sizes: RLVRSizes, out_dir: str | Path,
                    forgetting: dict[str, Sequence[Transition]], seed: int = 0, embedder=None,
                    progress: Callable[[str], None] = print, show_progress: bool = True, lora: bool = False,
                    return_models: bool = False) -> dict:
    """RWML on TextWorldExpress, step by step (see notebook 02, experiment 5).

    With `return_models` the result also holds "models": {"warm", "rwml", "sft"} (the trained
    models, e.g. to start policy RL from the RWML model: `wmkit.rwml_policy`); the figures are
    the same either way."""
    from wmkit.rewards.embedding import Embedder, EmbeddingReward, choose_threshold
    from wmkit.train import SFTConfig, train_sft

    out_dir = Path(out_dir)
    start = time.perf_counter()
    splits = twx_splits(sizes, seed)
    train = list(splits["train"])
    random.Random(seed).shuffle(train)
    n_warm = max(1, round(sizes.twx_warm_fraction * len(train)))
    warm_data, rest = train[:n_warm], train[n_warm:]
    progress(f"TWX transitions: {len(train)} train ({n_warm} for the warm-up predictor), "
             f"{len(splits['val'])} val, {len(splits['test'])} test")

    # 1. the warm-up predictor: the base world model after SFT on ~10% of the TWX data.
    warm = copy.deepcopy(base_model)
    train_sft(warm, tokenizer, warm_data, splits["val"][:32], SFTConfig(
        output_dir=str(out_dir / "warm"), epochs=sizes.twx_warm_epochs, learning_rate=1e-3, batch_size=8,
        seed=seed, resume=False, show_progress=show_progress))

    # 2. τ on held-out (prediction, truth) pairs: the warm model's samples on the validation split.
    embedder = embedder or Embedder()
    val = (splits["val"] or splits["test"] or rest)[:sizes.twx_eval]
    samples = generate(warm, tokenizer, _prompts(tokenizer, val), sizes.max_completion_length, do_sample=True,
                       num_samples=2, seed=seed)
    pairs = [(p, t.next_state) for t, ps in zip(val, samples) for p in ps]
    # Add the warm model's greedy answers too: exact matches are rare in samples of a weak model.
    greedy = [g[0] for g in generate(warm, tokenizer, _prompts(tokenizer, val), sizes.max_completion_length)]
    pairs += [(g, t.next_state) for t, g in zip(val, greedy)]
    sims = embedder.cosine([p for p, _ in pairs], [t for _, t in pairs])
    exact = [p.strip() == t for p, t in pairs]
    choice = choose_threshold(sims, exact)
    reward = EmbeddingReward(embedder, choice.tau)
    progress(f"tau = {choice.tau:.3f} (balanced accuracy {choice.balanced_accuracy:.3f}, AUC {choice.auc:.3f}, "
             f"{choice.n_exact} exact / {choice.n_inexact} inexact pairs{', default' if choice.fallback else ''})")

    # 3. hard-sample filtering of the remaining 90%.
    kept, filter_stats = hard_sample_filter(warm, tokenizer, rest, reward, sizes.easy_keep_probability,
                                            sizes.max_completion_length, seed)
    progress(f"hard-sample filter: {filter_stats['easy_share']:.0%} of {len(rest)} were easy; kept {len(kept)}")

    # 4. RWML: GRPO on the embedding reward, from the warm model.
    config = rl.RLVRConfig(output_dir=str(out_dir / "rwml"), reward="embedding", num_generations=sizes.num_generations,
                           prompts_per_step=sizes.prompts_per_step, learning_rate=sizes.learning_rate,
                           max_completion_length=sizes.max_completion_length, max_steps=sizes.twx_steps,
                           unchanged_ratio=0.0, seed=seed, save_steps=max(5, sizes.twx_steps // 2),
                           show_progress=show_progress, lora=lora)
    rwml = rl.train_rlvr(warm, tokenizer, kept, config, embedding_reward=reward)

    # 5. the SFT baseline: the same warm model, SFT on the same kept transitions' next observations.
    sft = copy.deepcopy(warm)
    train_sft(sft, tokenizer, kept, splits["val"][:32], SFTConfig(
        output_dir=str(out_dir / "sft"), epochs=sizes.twx_sft_epochs, learning_rate=1e-3, batch_size=8,
        seed=seed, resume=False, show_progress=show_progress))

    test = (splits["test"] or splits["val"])[:sizes.twx_eval]  # tiny profiles may leave a split empty
    models = {"MLE world model (no TWX)": base_model, "warm-up (10% SFT)": warm,
              "RWML (embedding RL)": rwml.model, "SFT on next observations": sft}
    quality, forgetting_scores = {}, {}
    for name, model in models.items():
        quality[name] = twx_quality(model, tokenizer, test, reward, sizes.max_new_tokens)
        forgetting_scores[name] = {env: kit_accuracy(model, tokenizer, items, sizes.max_new_tokens)
                                   for env, items in forgetting.items()}
    result = {
        "n": {"train": len(train), "warm": n_warm, "kept": len(kept), "test": len(test)},
        "threshold": asdict(choice), "similarities": [float(s) for s in sims], "exact": exact,
        "filter": filter_stats, "rwml_curve": rwml.curve("reward"), "rwml_seconds": round(rwml.seconds, 1),
        "quality": quality, "forgetting": forgetting_scores, "seconds": round(time.perf_counter() - start, 1),
    }
    if return_models:
        result["models"] = {"warm": warm, "rwml": rwml.model, "sft": sft}
    return result


# --------------------------------------------------------------------------- statistics and verdicts

def mean_std(values: Sequence[float]) -> dict:
    values = [float(v) for v in values]
    return {"mean": statistics.fmean(values) if values else float("nan"),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0, "n": len(values), "values": values}


def delta_verdict(before: Sequence[float], after: Sequence[float], k: float = 2.0) -> str:
    """'improved' / 'worse' when the mean paired change is beyond k standard errors, else 'no clear change'."""
    diffs = [a - b for a, b in zip(after, before)]
    if not diffs:
        return "not measured"
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("inf")
    if len(diffs) > 1 and mean > k * se and mean > 0:
        return "improved"
    if len(diffs) > 1 and mean < -k * se and mean < 0:
        return "worse"
    return "no clear change" if len(diffs) > 1 else ("higher" if mean > 0 else "lower" if mean < 0 else "equal")


# --------------------------------------------------------------------------- command line

def _world_model(profile: str, runs_root: Path, seed: int):
    from wmkit.pipeline import ensure_world_model

    return ensure_world_model(profile, runs_root / "01_build_world_model" / "world_model", seed=seed)


def seeds_experiment(profile: str, seeds: Sequence[int], runs_root: Path, sizes: RLVRSizes | None = None,
                     out_dir: Path | None = None) -> dict:
    """MLE vs MLE+RLVR (task-specific reward) on the text game's test transitions, one RL run per seed
    from the same MLE model (the world model's own seed stays 0: rebuilding it per seed costs more
    than the whole notebook). Checkpoints go to `out_dir` (default runs_root/02_rlvr_seeds)."""
    sizes = sizes or sizes_for(profile)
    run = _world_model(profile, runs_root, 0)
    evaluation = eval_set(run.splits["test"], "textgame", sizes.eval_changed, sizes.eval_unchanged, 0)
    train = [t for t in run.splits["train"] if t.env == "textgame"]
    before = measure(run.model, run.tokenizer, evaluation, sizes, 0)
    per_seed = []
    for seed in seeds:
        arm = reward_arm(run.model, run.tokenizer, train, evaluation, sizes,
                         Path(out_dir or runs_root / "02_rlvr_seeds") / f"seed{seed}", seed=seed, show_progress=False,
                         lora=uses_lora(run.info), resume=False)
        per_seed.append(strip_models(arm))
        print(f"seed {seed}: greedy changed {arm['after']['greedy']['changed']:.3f}, "
              f"sampled changed {arm['after']['sampled']['changed']:.3f}", flush=True)
    table = {}
    for mode in ("greedy", "sampled"):
        for part in ("changed", "unchanged", "partial_changed"):
            table[f"{mode}_{part}"] = {"before": before[mode][part],
                                       "after": mean_std([a["after"][mode][part] for a in per_seed])}
    return {"profile": profile, "seeds": list(seeds), "sizes": asdict(sizes), "before": before,
            "runs": per_seed, "table": table}


def uses_lora(info: dict) -> bool:
    """Pretrained models get LoRA; the from-scratch one trains every parameter (see notebook 02)."""
    return info.get("model", "tiny") != "tiny"


def sweep_experiment(profile: str, runs_root: Path, sizes: RLVRSizes | None = None, seed: int = 0,
                     lora: bool | None = None) -> dict:
    """Learning-rate sweep on the *validation* split (the test split is never used to choose)."""
    sizes = sizes or sizes_for(profile)
    run = _world_model(profile, runs_root, 0)
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


def main(argv: list[str] | None = None) -> int:
    from wmkit.nb import default_runs_root
    from wmkit.profiles import resolve_profile_name

    parser = argparse.ArgumentParser(prog="python -m wmkit.rlvr_experiments", description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="auto")
    parser.add_argument("--seeds", type=int, default=3, help="RL seeds 0..N-1 (MLE vs RLVR)")
    parser.add_argument("--sweep", action="store_true", help="learning-rate sweep on validation instead")
    parser.add_argument("--steps", type=int, default=None, help="override GRPO steps")
    parser.add_argument("--lora", action="store_true", help="sweep: LoRA adapters even on the from-scratch model")
    parser.add_argument("--runs-dir", default=None, help="default: runs/<profile>")
    args = parser.parse_args(argv)
    try:
        profile = resolve_profile_name(args.profile)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.seeds < 1 or (args.steps is not None and args.steps < 1):
        print("error: --seeds and --steps must be at least 1", file=sys.stderr)
        return 2
    sizes = sizes_for(profile)
    if args.steps:
        sizes = replace(sizes, steps=args.steps)
    runs_root = Path(args.runs_dir) if args.runs_dir else default_runs_root() / profile
    runs_root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if args.sweep:
        result = sweep_experiment(profile, runs_root, sizes, lora=True if args.lora else None)
        name = "rlvr_lr_sweep_lora.json" if args.lora else "rlvr_lr_sweep.json"
    else:
        result, name = seeds_experiment(profile, list(range(args.seeds)), runs_root, sizes), "rlvr_seeds.json"
    result["seconds"] = round(time.perf_counter() - start, 1)
    path = runs_root / name
    path.write_text(json.dumps(jsonable(result), indent=1))
    print(f"wrote {path} ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
