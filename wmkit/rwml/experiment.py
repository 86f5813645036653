"""RWML, one seed: warm-up, τ, hard-sample filter, embedding-reward GRPO, SFT control.

Two regimes:

* :func:`rwml_textgame_experiment` (over seeds: :func:`rwml_textgame_seeds`) on the kit's own text
  game, "tiny" world: the regime where the reward is informative at cpu size (τ chosen on pairs of
  both classes, 10-90% of the first GRPO step's samples rewarded) and RL measurably moves the model;
  :func:`run_rwml_textgame` is the benchmark's one-seed run.
* :func:`rwml_experiment` on TextWorldExpress, the third-party game and the contrast: at cpu size the
  10% warm-up predictor never writes a matching next observation (executed cpu notebook 02: 0 of 87
  pairs, mean cosine 0.10, ROUGE-L 0.00), so τ falls back to 0.9, every sample's reward is 0, and
  GRPO leaves the model exactly where it was (parameter change 0.0). :func:`run_rwml` is the
  benchmark's one-seed run, which also trains a policy from the base and from the RWML model
  (:mod:`wmkit.rwml.policy`).

Sizes: the profile's ``rwml`` section (`wmkit.profiles`). Over seeds::

    python -m wmkit run rwml --profile cpu --seeds 3
"""
from __future__ import annotations

import copy
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import torch

from wmkit.core import world_model_rl as rl
from wmkit.core.build import series_world_model
from wmkit.core.models import parameter_change
from wmkit.core.parallel import run_jobs
from wmkit.core.sft import SFTConfig, train_sft
from wmkit.core.worldmodel import generate
from wmkit.envs.base import Transition
from wmkit.profiles import Profile
from wmkit.rewards.embedding import Embedder, EmbeddingReward, choose_threshold
from wmkit.rlvr_world.config import RLVRSizes
from wmkit.runs import bench_work_dir
from wmkit.rwml import policy as rwml_policy
from wmkit.rwml.config import RWMLSizes, RWMLTextGameSizes
from wmkit.rwml.method import (
    first_step_reward_share,
    hard_sample_filter,
    kit_accuracy,
    prediction_prompts,
    prediction_quality,
    reward_is_informative,
    textgame_splits,
    threshold_pairs,
    twx_quality,
    twx_splits,
)
from wmkit.stats import differences, summarize, verdict


def rwml_experiment(base_model, tokenizer, sizes: RLVRSizes, out_dir: str | Path,
                    forgetting: dict[str, Sequence[Transition]], seed: int = 0, embedder=None,
                    progress: Callable[[str], None] = print, show_progress: bool = True, lora: bool = False,
                    return_models: bool = False) -> dict:
    """RWML on TextWorldExpress, step by step (see notebook 02, experiment 5).

    With `return_models` the result also holds "models": {"warm", "rwml", "sft"} (the trained
    models, e.g. to start policy RL from the RWML model: `wmkit.rwml.policy`); the figures are
    the same either way."""
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
        output_dir=str(out_dir / "warm"), epochs=sizes.twx_warm_epochs, learning_rate=sizes.twx_sft_learning_rate,
        batch_size=sizes.twx_sft_batch_size,
        seed=seed, resume=False, show_progress=show_progress))

    # 2. τ on held-out (prediction, truth) pairs: the warm model's samples on the validation split.
    embedder = embedder or Embedder()
    val = (splits["val"] or splits["test"] or rest)[:sizes.twx_eval]
    length = sizes.grpo.max_completion_length
    samples = generate(warm, tokenizer, prediction_prompts(tokenizer, val), length, do_sample=True, num_samples=2,
                       seed=seed)
    pairs = [(p, t.next_state) for t, ps in zip(val, samples) for p in ps]
    # Add the warm model's greedy answers too: exact matches are rare in samples of a weak model.
    greedy = [g[0] for g in generate(warm, tokenizer, prediction_prompts(tokenizer, val), length)]
    pairs += [(g, t.next_state) for t, g in zip(val, greedy)]
    sims = embedder.cosine([p for p, _ in pairs], [t for _, t in pairs])
    exact = [p.strip() == t for p, t in pairs]
    choice = choose_threshold(sims, exact)
    reward = EmbeddingReward(embedder, choice.tau)
    progress(f"tau = {choice.tau:.3f} (balanced accuracy {choice.balanced_accuracy:.3f}, AUC {choice.auc:.3f}, "
             f"{choice.n_exact} exact / {choice.n_inexact} inexact pairs{', default' if choice.fallback else ''})")

    # 3. hard-sample filtering of the remaining 90%.
    kept, filter_stats = hard_sample_filter(warm, tokenizer, rest, reward, sizes.easy_keep_probability,
                                            sizes.grpo.max_completion_length, seed)
    progress(f"hard-sample filter: {filter_stats['easy_share']:.0%} of {len(rest)} were easy; kept {len(kept)}")

    # 4. RWML: GRPO on the embedding reward, from the warm model.
    config = rl.RLVRConfig.of(sizes.grpo, max_steps=sizes.twx_steps, output_dir=str(out_dir / "rwml"), reward="embedding",
                              unchanged_ratio=0.0, seed=seed, save_steps=max(5, sizes.twx_steps // 2),
                              show_progress=show_progress, lora=lora)
    rwml = rl.train_rlvr(warm, tokenizer, kept, config, embedding_reward=reward)
    rwml_param_change = parameter_change(warm, rwml.model)
    progress(f"RWML moved the warm-up model's parameters by {rwml_param_change} (relative L2)")

    # 5. the SFT baseline: the same warm model, SFT on the same kept transitions' next observations.
    sft = copy.deepcopy(warm)
    train_sft(sft, tokenizer, kept, splits["val"][:32], SFTConfig(
        output_dir=str(out_dir / "sft"), epochs=sizes.twx_sft_epochs, learning_rate=sizes.twx_sft_learning_rate,
        batch_size=sizes.twx_sft_batch_size,
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
        "rwml_param_change": rwml_param_change,
        "quality": quality, "forgetting": forgetting_scores, "seconds": round(time.perf_counter() - start, 1),
    }
    if return_models:
        result["models"] = {"warm": warm, "rwml": rwml.model, "sft": sft}
    return result


MOVED_MIN_PARAMETER_CHANGE = 1e-6
"""Relative L2 parameter change below which RL counts as not having moved the model (GRPO with an
all-0 or all-1 reward gives exactly 0.0: every advantage is zero)."""

WARM, RWML, SFT = "warm", "rwml", "sft"
"""Keys of the models measured by :func:`rwml_textgame_experiment`: the warm-up predictor, RWML from
it, and SFT from it on the same filtered transitions."""


def rwml_textgame_experiment(base_model, tokenizer, sizes: RWMLTextGameSizes, out_dir: str | Path,
                             forgetting: dict[str, Sequence[Transition]] | None = None, seed: int = 0,
                             embedder=None, progress: Callable[[str], None] = print, show_progress: bool = False,
                             lora: bool = False, splits: dict[str, list[Transition]] | None = None,
                             measure_base: bool = True) -> dict:
    """RWML on the kit's own text game (a `sizes.difficulty` world), one seed, JSON-able result.

    The recipe, as the paper describes it, from `base_model` (notebook 01's world model; left untouched):

    1. **warm-up predictor**: SFT on `sizes.warm_fraction` (~10%) of the training transitions
       (which ones: this seed's shuffle);
    2. **τ**: the warm-up predictor answers `sizes.tau_transitions` validation transitions (greedy
       and `sizes.tau_samples` samples at T=1); τ is the threshold of cos(E(prediction), E(true
       diff)) with the best balanced accuracy between *matching* pairs (the prediction gives
       exactly the true next state once parsed: :func:`wmkit.rwml.method.matches`) and the rest
       (`wmkit.rewards.embedding.choose_threshold`); with one class missing it falls back to 0.9
       and says so (``threshold.fallback``);
    3. **hard-sample filter**: the warm-up predictor answers `sizes.rl_pool` of the other ~90%
       (`sizes.filter_samples` samples at T=1 each); those where every sample has reward 1 already
       are kept only with `sizes.easy_keep_probability` (see `hard_sample_filter` for why samples,
       not the greedy answer);
    4. **RWML**: GRPO (`wmkit.core.world_model_rl.train_rlvr`, reward="embedding") from the warm-up
       predictor on the kept transitions, r = 1[cos(E(ŝ'), E(s')) ≥ τ] against the true diff;
    5. **SFT baseline**: SFT from the warm-up predictor on the same kept transitions.

    Every model (base, warm, rwml, sft) is measured on held-out test transitions
    (:func:`wmkit.rwml.method.prediction_quality`: exact, embedding reward rate, cosine, ROUGE-L;
    greedy and sampled) and, with `forgetting` ({env: transitions}), by greedy exact accuracy there.

    Returns {"n", "threshold" (τ, balanced accuracy, AUC, class counts, fallback),
    "first_step_reward_share" (share of the first GRPO step's samples with reward 1),
    "reward_informative" (that share within [0.1, 0.9]), "filter", "rwml_curve",
    "param_change" (relative L2, RWML vs warm; "sft_param_change" likewise), "prediction_change"
    (share of held-out greedy predictions RWML changed), "moved" (RL measurably changed the model:
    both above zero), "quality" {model: ...}, "forgetting" {model: {env: acc}}, "forgetting_mean",
    "seconds" (per stage and "total")}. `splits` reuses collected data (else collected here, data
    seed 0, so every seed sees the same held-out transitions). `measure_base=False` leaves the base
    model out of "quality" and "forgetting" (it is the same in every seed: measure it once)."""
    out_dir = Path(out_dir)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    start = clock

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = round(now - clock, 1)
        clock = now

    splits = splits or textgame_splits(sizes.difficulty, sizes.episodes)
    train = list(splits["train"])
    random.Random(seed).shuffle(train)
    n_warm = max(1, round(sizes.warm_fraction * len(train)))
    warm_data, rest = train[:n_warm], train[n_warm:][:sizes.rl_pool]
    val = (splits["val"] or splits["test"])[:sizes.tau_transitions]
    test = (splits["test"] or splits["val"])[:sizes.eval_transitions]
    lap("data")

    def sft(model, data, epochs, name):
        trained = copy.deepcopy(model)
        train_sft(trained, tokenizer, data, splits["val"][:16], SFTConfig(
            output_dir=str(out_dir / name), epochs=epochs, learning_rate=sizes.warm_learning_rate,
            batch_size=sizes.warm_batch_size,
            seed=seed, resume=False, show_progress=show_progress))
        return trained

    # 1. the warm-up predictor
    torch.manual_seed(seed)
    warm = sft(base_model, warm_data, sizes.warm_epochs, "warm")
    lap("warm_up")

    # 2. τ on held-out pairs of the warm-up predictor
    embedder = embedder or shared_embedder()
    pairs = threshold_pairs(warm, tokenizer, val, embedder, sizes.tau_samples, sizes.grpo.max_completion_length, seed)
    choice = choose_threshold(pairs["similarities"], pairs["matching"])
    reward = EmbeddingReward(embedder, choice.tau, target="diff")
    progress(f"seed {seed}: tau = {choice.tau:.4f} (balanced accuracy {choice.balanced_accuracy:.3f}, "
             f"{choice.n_exact} matching / {choice.n_inexact} other pairs"
             f"{', DEFAULT: one class missing' if choice.fallback else ''})")
    lap("tau")

    # 3. hard-sample filter
    kept, filter_stats = hard_sample_filter(warm, tokenizer, rest, reward, sizes.easy_keep_probability,
                                            sizes.grpo.max_completion_length, seed, samples=sizes.filter_samples)
    lap("filter")

    # 4. RWML
    config = rl.RLVRConfig.of(sizes.grpo, output_dir=str(out_dir / "rwml"), reward="embedding",
                              unchanged_ratio=0.0, seed=seed, save_steps=sizes.grpo.max_steps + 1, resume=False,
                              show_progress=show_progress, lora=lora)
    rwml = rl.train_rlvr(warm, tokenizer, kept, config, embedding_reward=reward)
    share = first_step_reward_share(rwml.log_history)
    lap("rwml")

    # 5. SFT baseline on the same kept transitions
    sft_model = sft(warm, kept, sizes.sft_epochs, "sft")
    lap("sft")

    models = {"base": base_model} if measure_base else {}
    models.update({WARM: warm, RWML: rwml.model, SFT: sft_model})
    quality = {name: prediction_quality(model, tokenizer, test, reward, sizes.max_new_tokens, sizes.eval_samples,
                                        seed) for name, model in models.items()}
    predictions = {name: q.pop("predictions") for name, q in quality.items()}
    changed = _mean_or_none([float(a != b) for a, b in zip(predictions[WARM], predictions[RWML])])
    forgetting_scores = {name: {env: kit_accuracy(model, tokenizer, items, sizes.max_new_tokens)
                                for env, items in (forgetting or {}).items()} for name, model in models.items()}
    lap("evaluation")
    param_change = parameter_change(warm, rwml.model)
    moved = bool(param_change is not None and param_change > MOVED_MIN_PARAMETER_CHANGE and changed)
    seconds["total"] = round(time.perf_counter() - start, 1)
    progress(f"seed {seed}: first-step reward-1 share {share}, kept {len(kept)}, RWML param change "
             f"{param_change:.2e}, greedy predictions changed {changed:.2f}; {seconds['total']:.0f} s")
    return {
        "seed": seed, "difficulty": sizes.difficulty,
        "n": {"train": len(train), "warm": n_warm, "pool": len(rest), "kept": len(kept),
              "tau_pairs": len(pairs["matching"]), "test": len(test)},
        "threshold": asdict(choice),
        "tau_pairs": {"similarities": pairs["similarities"], "matching": pairs["matching"]},
        "first_step_reward_share": share, "reward_informative": reward_is_informative(share),
        "filter": filter_stats, "rwml_curve": rwml.curve("reward"),
        "param_change": param_change, "sft_param_change": parameter_change(warm, sft_model),
        "prediction_change": changed, "moved": moved,
        "quality": quality, "forgetting": forgetting_scores,
        "forgetting_mean": {name: _mean_or_none(list(v.values())) for name, v in forgetting_scores.items()},
        "seconds": seconds,
    }


QUALITY_METRICS = ("embedding_reward", "rouge_l", "exact")
"""Held-out next-state measures compared between models (see `prediction_quality`)."""

SUBSETS = ("all", "changed", "unchanged")
"""Held-out transitions each measure is reported on (changed: the action changed the state)."""


def rl_did_not_move(per_seed: dict) -> str | None:
    """Precondition of "RL forgets less than SFT": RL measurably changed the model in every seed
    (``moved``: parameters and held-out predictions). None when it holds, else the reason."""
    frozen = [s for s, r in sorted(per_seed.items()) if not r.get("moved")]
    if frozen:
        return (f"RL did not move the model in seed(s) {frozen} (parameter change / held-out predictions "
                "unchanged), so it cannot have forgotten anything")
    return None


def summarize_rwml_seeds(per_seed: dict) -> dict:
    """Summary over seeds of :func:`rwml_textgame_experiment` results (seed -> result), with
    `wmkit.stats`: per decoding ("greedy", "sampled"), subset (:data:`SUBSETS`) and measure
    (:data:`QUALITY_METRICS`) the paired differences RWML −
    warm-up and RWML − SFT (summary and verdict, "higher" reproduces); "forgets_less": RWML − SFT
    in mean accuracy on the forgetting sets (higher: RL kept more), "not measured" unless RL moved
    the model in every seed; plus summaries of τ, the first-step reward-1 share, the parameter and
    prediction change and the seconds per seed."""
    seeds = sorted(per_seed)
    results = [per_seed[s] for s in seeds]

    def col(path: Callable[[dict], float | None]) -> list[float | None]:
        out = []
        for r in results:
            try:
                out.append(path(r))
            except (KeyError, TypeError):
                out.append(None)
        return out

    def measure(r, name, mode, subset, metric):
        q = r["quality"][name][mode]
        return q[metric] if subset == "all" else q[subset][metric]

    comparisons: dict = {}
    for mode in ("greedy", "sampled"):
        for subset in SUBSETS:
            for metric in QUALITY_METRICS:
                values = {name: col(lambda r, n=name, m=mode, s=subset, k=metric: measure(r, n, m, s, k))
                          for name in (WARM, RWML, SFT)}
                entry = comparisons.setdefault(mode, {}).setdefault(subset, {}).setdefault(metric, {})
                for label, other in (("rwml_minus_warm", WARM), ("rwml_minus_sft", SFT)):
                    diff = differences(values[RWML], values[other])
                    v = verdict(diff)
                    entry[label] = {"summary": summarize(diff), "verdict": v.verdict, "reason": v.reason}
                entry["means"] = {name: summarize(vals) for name, vals in values.items()}
    kept = differences(col(lambda r: r["forgetting_mean"][RWML]), col(lambda r: r["forgetting_mean"][SFT]))
    forgets = verdict(kept, not_measured=rl_did_not_move(per_seed))
    return {
        "seeds": seeds, "comparisons": comparisons,
        "forgets_less": {"summary": summarize(kept), "verdict": forgets.verdict, "reason": forgets.reason,
                         "drop": {name: summarize(differences(col(lambda r: r["forgetting_mean"][WARM]),
                                                              col(lambda r, n=name: r["forgetting_mean"][n])))
                                  for name in (RWML, SFT)}},
        "tau": summarize(col(lambda r: r["threshold"]["tau"])),
        "tau_fallback": [bool(r["threshold"]["fallback"]) for r in results],
        "first_step_reward_share": summarize(col(lambda r: r["first_step_reward_share"])),
        "reward_informative": [bool(r["reward_informative"]) for r in results],
        "param_change": summarize(col(lambda r: r["param_change"])),
        "prediction_change": summarize(col(lambda r: r["prediction_change"])),
        "moved": [bool(r["moved"]) for r in results],
        "seconds_per_seed": summarize(col(lambda r: r["seconds"]["total"])),
    }


def rwml_textgame_seeds(base_model, tokenizer, sizes: RWMLTextGameSizes, out_dir: str | Path,
                        forgetting: dict[str, Sequence[Transition]] | None = None, seeds: int | Sequence[int] = 3,
                        embedder=None, progress: Callable[[str], None] = print, lora: bool = False) -> dict:
    """:func:`rwml_textgame_experiment` for each seed (0..seeds-1, or the seeds given; the data is
    collected once; the base model is measured in the first seed only), then :func:`summarize_rwml_seeds`.
    Returns {"sizes", "per_seed" {seed: result},
    "summary", "seconds"} (JSON-able). Notebook 02 calls this in one line."""
    start = time.perf_counter()
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    splits = textgame_splits(sizes.difficulty, sizes.episodes)
    # Seeds are independent: `sizes.parallel_runs` worker processes run them side by side, each
    # loading the default embedder itself (so only when none is given) and printing its own progress.
    parallel = sizes.parallel_runs > 1 and len(seed_list) > 1 and embedder is None
    jobs = [(rwml_textgame_experiment,
             {"base_model": base_model, "tokenizer": tokenizer, "sizes": sizes, "out_dir": Path(out_dir) / f"seed{s}",
              "forgetting": forgetting, "seed": s, "embedder": embedder, "progress": print if parallel else progress,
              "lora": lora, "splits": splits, "measure_base": i == 0})
            for i, s in enumerate(seed_list)]
    per_seed = dict(zip(seed_list, run_jobs(jobs, sizes.parallel_runs if parallel else 1)))
    return {"sizes": asdict(sizes), "per_seed": per_seed, "summary": summarize_rwml_seeds(per_seed),
            "seconds": round(time.perf_counter() - start, 1)}


def _mean_or_none(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


_embedder = None


def shared_embedder():
    """One MiniLM embedder for every seed of a run (embeddings are deterministic; loading it costs seconds)."""
    global _embedder
    if _embedder is None:
        _embedder = Embedder()
    return _embedder


def run_rwml(profile: Profile, seed: int, runs_root: Path, sizes: RWMLSizes,
             work_dir: str | Path | None = None) -> dict:
    """RWML on TextWorldExpress: :func:`wmkit.rwml.experiment.rwml_experiment` for this seed, then
    :func:`wmkit.rwml.policy.policy_rl_experiment`: the same policy RL from notebook 01's world model
    and from the RWML model it produced (under "policy"). Checkpoints go to `work_dir` (default:
    the benchmark's work folder)."""
    wm = series_world_model(profile, runs_root)
    wm_sizes, lora = sizes.world_model, rl.uses_lora(wm.info)
    forgetting = {env: rl.eval_set(wm.splits["test"], env, wm_sizes.forgetting_eval // 2,
                                   wm_sizes.forgetting_eval - wm_sizes.forgetting_eval // 2, 0)
                  for env in ("textgame", "phone")}
    work = Path(work_dir) if work_dir else bench_work_dir(runs_root, "rwml", seed)
    result = rwml_experiment(wm.model, wm.tokenizer, wm_sizes, work, forgetting, seed=seed,
                                embedder=shared_embedder(), progress=lambda line: None, show_progress=False,
                                lora=lora, return_models=True)
    models = result.pop("models")
    result["forgetting_mean"] = {name: statistics.fmean(scores.values())
                                 for name, scores in result["forgetting"].items()}
    result["policy"] = rwml_policy.policy_rl_experiment(wm.model, models["rwml"], wm.tokenizer, sizes.policy,
                                                        work / "policy", seed=seed, lora=lora,
                                                        progress=lambda line: None)
    return result


def forgetting_sets(wm_splits: dict[str, list[Transition]], n: int) -> dict[str, list[Transition]]:
    """The forgetting check's transitions: `n` test transitions (half changed) of the full text
    game and of the phone, from notebook 01's splits (RWML trains on neither)."""

    return {env: rl.eval_set(wm_splits["test"], env, n // 2, n - n // 2, 0) for env in ("textgame", "phone")}


def run_rwml_textgame(profile: Profile, seed: int, runs_root: Path, sizes: RWMLTextGameSizes) -> dict:
    """The benchmark's one-seed RWML run on the kit's text game: :func:`rwml_textgame_experiment`
    from notebook 01's world model, forgetting measured on its full text game and phone."""

    wm = series_world_model(profile, runs_root)
    return rwml_textgame_experiment(wm.model, wm.tokenizer, sizes, bench_work_dir(runs_root, "rwml_textgame", seed),
                                    forgetting_sets(wm.splits, sizes.forgetting_eval), seed=seed,
                                    embedder=shared_embedder(), progress=lambda line: None,
                                    lora=rl.uses_lora(wm.info))


def run_rwml_seed(profile: Profile, seed: int, runs_root: Path, sizes: RWMLSizes) -> dict:
    """``python -m wmkit run rwml``, one seed: :func:`run_rwml` from notebook 01's world model in
    `runs_root`, checkpoints in runs_root/rwml_seeds/seed<N>."""
    return run_rwml(profile, seed, Path(runs_root), sizes, work_dir=Path(runs_root) / "rwml_seeds" / f"seed{seed}")
