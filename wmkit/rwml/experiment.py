"""RWML on TextWorldExpress, one seed: warm-up, τ, hard-sample filter, embedding-reward GRPO, SFT control.

:func:`rwml_experiment` runs the recipe step by step from a world model and measures every
model it made (held-out next-observation quality and forgetting on the kit's own
environments); :func:`run_rwml` is the benchmark's one-seed run, which also trains a policy
from the base and from the RWML model (:mod:`wmkit.rwml.policy`).

Sizes: the profile's ``rwml`` section (`wmkit.profiles`). Over seeds::

    python -m wmkit run rwml --profile cpu --seeds 3
"""
from __future__ import annotations

import copy
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from wmkit.core.build import series_world_model
from wmkit.core.worldmodel import generate
from wmkit.envs.base import Transition
from wmkit.profiles import Profile, RLVRSizes, RWMLSizes
from wmkit.rlvr_world import method as rl
from wmkit.runs import bench_work_dir
from wmkit.rwml.method import _prompts, hard_sample_filter, kit_accuracy, twx_quality, twx_splits


def rwml_experiment(base_model, tokenizer, sizes: RLVRSizes, out_dir: str | Path,
                    forgetting: dict[str, Sequence[Transition]], seed: int = 0, embedder=None,
                    progress: Callable[[str], None] = print, show_progress: bool = True, lora: bool = False,
                    return_models: bool = False) -> dict:
    """RWML on TextWorldExpress, step by step (see notebook 02, experiment 5).

    With `return_models` the result also holds "models": {"warm", "rwml", "sft"} (the trained
    models, e.g. to start policy RL from the RWML model: `wmkit.rwml_policy`); the figures are
    the same either way."""
    from wmkit.core.sft import SFTConfig, train_sft
    from wmkit.rewards.embedding import Embedder, EmbeddingReward, choose_threshold

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
    rwml_param_change = parameter_change(warm, rwml.model)
    progress(f"RWML moved the warm-up model's parameters by {rwml_param_change} (relative L2)")

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
        "rwml_param_change": rwml_param_change,
        "quality": quality, "forgetting": forgetting_scores, "seconds": round(time.perf_counter() - start, 1),
    }
    if return_models:
        result["models"] = {"warm": warm, "rwml": rwml.model, "sft": sft}
    return result


def parameter_change(before, after) -> float | None:
    """Relative L2 change ‖θ_after − θ_before‖ / ‖θ_before‖ over the parameters both models name
    (0.0: RL left the model exactly where it was; None: no parameter in common to compare)."""
    import torch

    after_params = dict(after.named_parameters())
    num = den = 0.0
    matched = 0
    with torch.no_grad():
        for name, p in before.named_parameters():
            q = after_params.get(name)
            if q is None or q.shape != p.shape:
                continue
            matched += 1
            p32 = p.detach().float().cpu()
            num += float((q.detach().float().cpu() - p32).pow(2).sum())
            den += float(p32.pow(2).sum())
    if not matched:
        return None
    return math.sqrt(num / den) if den else math.sqrt(num)


_embedder = None


def _shared_embedder():
    """One MiniLM embedder for every seed of a run (embeddings are deterministic; loading it costs seconds)."""
    global _embedder
    if _embedder is None:
        from wmkit.rewards.embedding import Embedder

        _embedder = Embedder()
    return _embedder


def run_rwml(profile: str | Profile, seed: int, runs_root: Path, sizes: RWMLSizes,
             work_dir: str | Path | None = None) -> dict:
    """RWML on TextWorldExpress: :func:`wmkit.rwml.experiment.rwml_experiment` for this seed, then
    :func:`wmkit.rwml.policy.policy_rl_experiment`: the same policy RL from notebook 01's world model
    and from the RWML model it produced (under "policy"). Checkpoints go to `work_dir` (default:
    the benchmark's work folder)."""
    from wmkit.rlvr_world import experiment as rx
    from wmkit.rwml import policy as rwml_policy

    wm = series_world_model(profile, runs_root)
    wm_sizes, lora = sizes.world_model, rx.uses_lora(wm.info)
    forgetting = {env: rx.eval_set(wm.splits["test"], env, wm_sizes.forgetting_eval // 2,
                                   wm_sizes.forgetting_eval - wm_sizes.forgetting_eval // 2, 0)
                  for env in ("textgame", "phone")}
    work = Path(work_dir) if work_dir else bench_work_dir(runs_root, "rwml", seed)
    result = rwml_experiment(wm.model, wm.tokenizer, wm_sizes, work, forgetting, seed=seed,
                                embedder=_shared_embedder(), progress=lambda line: None, show_progress=False,
                                lora=lora, return_models=True)
    models = result.pop("models")
    result["forgetting_mean"] = {name: statistics.fmean(scores.values())
                                 for name, scores in result["forgetting"].items()}
    result["policy"] = rwml_policy.policy_rl_experiment(wm.model, models["rwml"], wm.tokenizer, sizes.policy,
                                                        work / "policy", seed=seed, lora=lora,
                                                        progress=lambda line: None)
    return result


def run_seeds(profile: Profile, seeds: int = 3, out: str | Path | None = None,
              runs_dir: str | Path | None = None) -> Path:
    """``python -m wmkit run rwml``: :func:`run_rwml` at the profile's ``rwml`` sizes for seeds
    0..seeds-1, from notebook 01's world model in `runs_dir` (default runs/<profile>), as JSON in
    runs_dir/rwml_seeds.json unless `out` names the file (checkpoints: runs_dir/rwml_seeds/seed<N>)."""
    import json

    from wmkit.runs import default_runs_root, jsonable

    if seeds < 1:
        raise ValueError("--seeds must be at least 1")
    runs_root = Path(runs_dir) if runs_dir else default_runs_root() / profile.name
    runs_root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    per_seed = {}
    for seed in range(seeds):
        per_seed[str(seed)] = run_rwml(profile, seed, runs_root, profile.rwml,
                                       work_dir=runs_root / "rwml_seeds" / f"seed{seed}")
        print(f"seed {seed}: done ({time.perf_counter() - start:.0f} s)", flush=True)
    result = {"profile": profile.name, "seeds": list(range(seeds)), "sizes": asdict(profile.rwml),
              "per_seed": per_seed, "seconds": round(time.perf_counter() - start, 1)}
    path = Path(out) if out else runs_root / "rwml_seeds.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(result), indent=1))
    print(f"wrote {path} ({result['seconds']:.0f} s)")
    return path
