"""Notebook 05's benchmark: every claim of the four papers, measured by the kit over seeds.

Three parts:

* **Registry.** :data:`EXPERIMENTS` names the kit's experiments, each a lazy ``"module:function"``
  that runs *one seed* through the library calls the notebooks make (notebook 01's world model,
  :mod:`wmkit.rlvr_experiments`, :mod:`wmkit.wm_r1`, :mod:`wmkit.wmrl`) and returns JSON.
  :data:`CLAIMS` lists the papers' claims: the claim, the paper's figure (DESIGN.md §6), the
  experiment that measures it, the fields of its result that make the kit's number (a per-seed
  value, optionally minus another field: a paired difference), and the direction that counts as
  reproduced. A claim the kit cannot measure yet says so, with the reason, and never carries a
  number.
* **Runner.** :func:`run_bench` runs each (experiment, seed) once and caches it as a JSON record
  under ``runs/<profile>/bench/<experiment>/``, keyed by the library's version (the git tree
  of ``wmkit/``: commits to docs and notebooks keep the records) and a hash of the experiment's
  config (sizes, seed, profile). A record is written atomically when its run has finished, so
  an interrupted benchmark rerun with the same command redoes only what is missing.
* **Report.** :func:`build_report` reads the records *from disk* (a row exists only where its
  records do), computes mean ± std and a 95% t-interval over seeds, a verdict, and writes
  ``runs/<profile>/bench.json``, ``runs/<profile>/report.md`` and one figure per paper.

Command line::

    python -m wmkit bench --profile smoke --seeds 2          # ~2 minutes on 2 CPU cores (world model present)
    python -m wmkit bench --profile cpu --seeds 3 --only WM-R1
    python -m wmkit bench --profile cpu --seeds 3 --report-only

The kit's models are tiny, so it reproduces *directions and mechanisms*, not the papers'
absolute numbers: the report shows both side by side, with the verdict computed from the runs.
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime as dt
import hashlib
import importlib
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wmkit.serialize import jsonable

REPO = Path(__file__).resolve().parent.parent
PAPERS = ("RLVR-World", "RWML", "WM-R1", "WMRL")
VERDICTS = ("reproduced", "same direction, not significant", "not reproduced", "not measured")
RECORD_VERSION = 1
"""Bumped when a record's layout changes (part of the config hash)."""


# ============================================================================ statistics


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student-t quantile, e.g. t(0.95, 2) = 4.3027."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, dof))


def summarize(values: Sequence[float | None], confidence: float = 0.95) -> dict[str, Any]:
    """Mean, sample std, and a `confidence` t-interval over seeds of the values that are not None.

    With one value the interval is unknown (None): one seed says nothing about the spread.
    """
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    out: dict[str, Any] = {"n": len(kept), "of": len(values), "values": kept, "mean": None, "std": None,
                           "ci_low": None, "ci_high": None, "confidence": confidence}
    if not kept:
        return out
    out["mean"] = statistics.fmean(kept)
    if len(kept) > 1:
        out["std"] = statistics.stdev(kept)
        half = t_quantile(confidence, len(kept) - 1) * out["std"] / math.sqrt(len(kept))
        out["ci_low"], out["ci_high"] = out["mean"] - half, out["mean"] + half
    else:
        out["std"] = 0.0
    return out


def verdict(summary: dict[str, Any], direction: str = "higher", threshold: float = 0.0) -> str:
    """The reproduction verdict of one claim from its per-seed summary.

    * "not measured": no value;
    * "not reproduced": the mean is on the wrong side of `threshold` (or on it);
    * "reproduced": the whole 95% interval is on the paper's side (needs ≥ 2 seeds);
    * "same direction, not significant": the mean is, the interval is not (or one seed).
    """
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', not {direction!r}")
    if not summary.get("n"):
        return "not measured"
    sign = 1.0 if direction == "higher" else -1.0
    if sign * (summary["mean"] - threshold) <= 0:
        return "not reproduced"
    bound = summary["ci_low"] if direction == "higher" else summary["ci_high"]
    if bound is not None and sign * (bound - threshold) > 0:
        return "reproduced"
    return "same direction, not significant"


# ============================================================================ registry


@dataclass(frozen=True)
class Experiment:
    """One kit experiment the benchmark runs once per seed."""

    name: str
    paper: str
    run: str | Callable
    """``run(profile, seed, runs_root, sizes) -> dict`` (JSON-able), or ``"module:function"``."""
    sizes: str | Callable
    """``sizes(profile) -> dataclass`` (hashed into the record key), or ``"module:function"``."""
    description: str


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how the kit measures it."""

    id: str
    paper: str
    text: str
    paper_figure: str
    """The paper's number (DESIGN.md §6) or '—' where it gives none."""
    experiment: str | None = None
    """Name in :data:`EXPERIMENTS`; None when the kit cannot measure the claim yet."""
    value: str | tuple[str, ...] | None = None
    """Field path(s) of the experiment's result ('/'-separated, list indices allowed; several: their mean)."""
    minus: str | tuple[str, ...] | None = None
    """Field path(s) subtracted from `value` in the same seed's result (a paired difference)."""
    direction: str = "higher"
    """The kit's value must be above ('higher') or below ('lower') `threshold` to reproduce the claim."""
    threshold: float = 0.0
    kit_label: str = ""
    """What the kit's number is, in words (units included)."""
    not_measured: str = ""
    """Why the kit cannot measure the claim (with `experiment` None)."""


def _resolve(target: str | Any) -> Any:
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def get_path(result: Any, path: str) -> Any:
    """``get_path(r, "arms/wm_r1/heldout/success")``; list indices may be negative. None if missing."""
    node = result
    for part in path.split("/"):
        if isinstance(node, dict):
            if part not in node:
                return None
            node = node[part]
        elif isinstance(node, list):
            try:
                node = node[int(part)]
            except (ValueError, IndexError):
                return None
        else:
            return None
    return node


def _field_value(result: dict, paths: str | tuple[str, ...]) -> float | None:
    paths = (paths,) if isinstance(paths, str) else paths
    values = [get_path(result, p) for p in paths]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v) for v in values):
        return None
    return float(sum(values) / len(values))


def claim_value(claim: Claim, result: dict) -> float | None:
    """The kit's number for `claim` in one seed's result (None where a field is missing or NaN)."""
    value = _field_value(result, claim.value)
    if value is None or claim.minus is None:
        return value
    minus = _field_value(result, claim.minus)
    return None if minus is None else value - minus


# --------------------------------------------------------------------------- sizes per profile

def _rlvr_sizes(profile: str):
    from wmkit import rlvr_experiments as rx

    sizes = rx.sizes_for(profile)
    if profile == "smoke":  # ~2 minutes for the whole benchmark: one step, a handful of transitions
        sizes = replace(sizes, steps=1, phone_steps=1, twx_steps=1, eval_changed=2, eval_unchanged=1,
                        eval_samples=2, max_new_tokens=32, max_completion_length=16, best_of_k=2,
                        twx_episodes=24, twx_eval=2, forgetting_eval=2)
    return sizes


@dataclass(frozen=True)
class RWMLBenchSizes:
    """Sizes of the benchmark's RWML experiment: world-model RL, then policy RL on top."""

    world_model: Any
    """`wmkit.rlvr_experiments.RLVRSizes` of the RWML world-model run (notebook 02's experiment 5)."""
    policy: Any
    """`wmkit.rwml_policy.PolicySizes` of the policy RL from the base and from the RWML model."""


def _rwml_sizes(profile: str) -> RWMLBenchSizes:
    from wmkit import rwml_policy

    return RWMLBenchSizes(world_model=_rlvr_sizes(profile), policy=rwml_policy.sizes_for(profile))


def _wm_r1_sizes(profile: str):
    from wmkit import wm_r1

    sizes = wm_r1.sizes_for(profile)
    if profile == "smoke":
        sizes = replace(sizes, sft_tasks=12, grpo_steps=1, group_size=2, prompts_per_step=1, train_tasks=4,
                        eval_heldout=2, eval_train=2, best_of_k=2, throughput_tasks=2, diagnostic_episodes=1,
                        wm_max_new_tokens=48, max_completion_tokens=600)
    # Every comparison arm, also where the notebook's profile runs fewer (the cpu notebook leaves
    # the two ablations to the command line).
    return replace(sizes, baselines=wm_r1.ARMS)


def _wmrl_sizes(profile: str):
    from wmkit import wmrl

    sizes = wmrl.sizes_for(profile)
    if profile == "smoke":
        # The controlled problem costs ~1 s: run it at the cpu profile's length so WMRL can reach the
        # compute target; the research tasks are real executions: one dataset, a small pool.
        sizes = replace(sizes, bandit=wmrl.sizes_for("cpu").bandit, anchor_sweep=(), research_tasks=("wine",),
                        pool_size=8)
    return sizes


# --------------------------------------------------------------------------- experiments (one seed each)

def _world_model(profile: str, runs_root: Path):
    """Notebook 01's world model of this profile (seed 0), built there when missing."""
    from wmkit.pipeline import ensure_world_model

    return ensure_world_model(profile, Path(runs_root) / "01_build_world_model" / "world_model", seed=0)


def _work_dir(runs_root: Path, experiment: str, seed: int) -> Path:
    return Path(runs_root) / "bench" / "work" / experiment / f"seed{seed}"


def run_rlvr_mle_vs_rl(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """RLVR-World, MLE vs MLE+RLVR: :func:`wmkit.rlvr_experiments.seeds_experiment` for this one seed."""
    from wmkit import rlvr_experiments as rx

    return rx.seeds_experiment(profile, [seed], Path(runs_root), sizes,
                               out_dir=_work_dir(runs_root, "rlvr_mle_vs_rl", seed))


def run_rlvr_ablations(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """RLVR-World's reward-type and group-size arms and the best-of-k limitation (notebook 02,
    experiments 2, 4 and 6) for one RL seed, from notebook 01's world model."""
    from wmkit import rlvr_experiments as rx

    wm = _world_model(profile, runs_root)
    evaluation = rx.eval_set(wm.splits["test"], "textgame", sizes.eval_changed, sizes.eval_unchanged, 0)
    train = [t for t in wm.splits["train"] if t.env == "textgame"]
    work, lora = _work_dir(runs_root, "rlvr_ablations", seed), rx.uses_lora(wm.info)
    common = {"seed": seed, "show_progress": False, "lora": lora, "resume": False}
    rewards, models = {}, {}
    for reward in sizes.rewards:
        arm = rx.reward_arm(wm.model, wm.tokenizer, train, evaluation, sizes, work / f"reward_{reward}", reward,
                            **common)
        models[reward] = arm["model"]
        rewards[reward] = rx.strip_models(arm)
    groups = {}
    for g in sizes.group_sizes:
        if g == sizes.num_generations and "task_specific" in rewards:
            groups[str(g)] = rewards["task_specific"]  # the same arm: no second run
            continue
        arm = rx.reward_arm(wm.model, wm.tokenizer, train, evaluation, sizes, work / f"group_{g}", "task_specific",
                            num_generations=g, **common)
        groups[str(g)] = rx.strip_models(arm)
    changed = [t for t in evaluation if t.changed]
    rl_model = models.get("task_specific", next(iter(models.values())))
    bok_mle = rx.best_of_k(wm.model, wm.tokenizer, changed, sizes, seed)
    bok_rl = rx.best_of_k(rl_model, wm.tokenizer, changed, sizes, seed)
    small, large = str(min(sizes.group_sizes)), str(max(sizes.group_sizes))
    return {"before": rx.measure(wm.model, wm.tokenizer, evaluation, sizes, 0), "rewards": rewards,
            "group_sizes": {"all": groups, "small": {"G": int(small), **groups[small]},
                            "large": {"G": int(large), **groups[large]}},
            "best_of_k": {"mle": bok_mle, "rlvr": bok_rl, "mle_at_k_max": bok_mle[-1], "rlvr_at_1": bok_rl[0]},
            "n_eval": len(evaluation), "n_eval_changed": len(changed)}


def run_rlvr_phone(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """RLVR-World on screens: the phone's screen-diff F1 before and after RLVR (notebook 02, experiment 3)."""
    from wmkit import rlvr_experiments as rx

    wm = _world_model(profile, runs_root)
    evaluation = rx.eval_set(wm.splits["test"], "phone", sizes.eval_changed, sizes.eval_unchanged, 0)
    train = [t for t in wm.splits["train"] if t.env == "phone"]
    before = rx.measure(wm.model, wm.tokenizer, evaluation, sizes, 0)
    arm = rx.reward_arm(wm.model, wm.tokenizer, train, evaluation, sizes, _work_dir(runs_root, "rlvr_phone", seed),
                        "task_specific", steps=sizes.phone_steps, seed=seed, show_progress=False,
                        lora=rx.uses_lora(wm.info), resume=False)
    return {"before": before, "arm": rx.strip_models(arm)}


_embedder = None


def _shared_embedder():
    """One MiniLM embedder for every seed of a run (embeddings are deterministic; loading it costs seconds)."""
    global _embedder
    if _embedder is None:
        from wmkit.rewards.embedding import Embedder

        _embedder = Embedder()
    return _embedder


def run_rwml(profile: str, seed: int, runs_root: Path, sizes: RWMLBenchSizes) -> dict:
    """RWML on TextWorldExpress: :func:`wmkit.rlvr_experiments.rwml_experiment` for this seed, then
    :func:`wmkit.rwml_policy.policy_rl_experiment`: the same policy RL from notebook 01's world model
    and from the RWML model it produced (under "policy")."""
    from wmkit import rlvr_experiments as rx
    from wmkit import rwml_policy

    wm = _world_model(profile, runs_root)
    wm_sizes, lora = sizes.world_model, rx.uses_lora(wm.info)
    forgetting = {env: rx.eval_set(wm.splits["test"], env, wm_sizes.forgetting_eval // 2,
                                   wm_sizes.forgetting_eval - wm_sizes.forgetting_eval // 2, 0)
                  for env in ("textgame", "phone")}
    work = _work_dir(runs_root, "rwml", seed)
    result = rx.rwml_experiment(wm.model, wm.tokenizer, wm_sizes, work, forgetting, seed=seed,
                                embedder=_shared_embedder(), progress=lambda line: None, show_progress=False,
                                lora=lora, return_models=True)
    models = result.pop("models")
    result["forgetting_mean"] = {name: statistics.fmean(scores.values())
                                 for name, scores in result["forgetting"].items()}
    result["policy"] = rwml_policy.policy_rl_experiment(wm.model, models["rwml"], wm.tokenizer, sizes.policy,
                                                        work / "policy", seed=seed, lora=lora,
                                                        progress=lambda line: None)
    return result


@contextlib.contextmanager
def _sizes_registered(module, key: str, sizes) -> Iterator[str]:
    """Make `sizes` available to `module.sizes_for(key)` for the duration (its run function takes a
    profile name, not sizes)."""
    had, old = key in module.SIZES, module.SIZES.get(key)
    module.SIZES[key] = sizes
    try:
        yield key
    finally:
        if had:
            module.SIZES[key] = old
        else:
            del module.SIZES[key]


def run_wm_r1(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """WM-R1: :func:`wmkit.wm_r1.run_experiment` for this seed, every arm, at the benchmark's sizes."""
    from wmkit import wm_r1

    world_model, wm_info = wm_r1.load_world_model_source(profile, runs_root, 0, sizes.wm_max_new_tokens)
    with _sizes_registered(wm_r1, f"{profile}-bench", sizes) as key:
        result = wm_r1.run_experiment(key, seed, runs_dir=runs_root, out_dir=_work_dir(runs_root, "wm_r1", seed),
                                      arms=sizes.baselines, world_model=world_model, progress=False,
                                      log=lambda line: None)
    result = wm_r1.public(result)
    result["profile"], result["world_model"] = profile, wm_info
    history = result["training"].get("wm_r1", {}).get("history", [])
    result["wm_calls_first"] = history[0]["wm_calls"] if history else None
    result["wm_calls_last"] = history[-1]["wm_calls"] if history else None
    return result


def _without_curves(result: dict) -> dict:
    """A WMRL result without its per-step curves (the record keeps the summaries)."""
    curves = ("values", "total_compute", "execution_compute", "executions")
    return {**result, "arms": {name: {k: v for k, v in arm.items() if k not in curves}
                               for name, arm in result["arms"].items()}}


def censored_ratio(arms: dict, numerator: str, denominator: str) -> dict:
    """Compute to the target, ``numerator`` / ``denominator`` arm, of a one-seed WMRL result.

    A run that never reached the target counts as infinitely expensive, as in
    :func:`wmkit.wmrl.first_wins`: when only the denominator missed, the ratio is 0 (the claim
    "the denominator is cheaper" fails in that seed); when only the numerator missed, the
    numerator is charged its whole compute, a lower bound of the true ratio (so the value never
    overstates the claim); None when neither reached it.
    """
    a, b = arms[numerator]["compute_to_target"][0], arms[denominator]["compute_to_target"][0]
    out = {"numerator_reached": a is not None, "denominator_reached": b is not None,
           "numerator_compute": a, "denominator_compute": b}
    if b is None:
        return {**out, "ratio": 0.0 if a is not None else None}
    if a is None:
        return {**out, "ratio": arms[numerator]["total_cost"][0] / b if b > 0 else None, "lower_bound": True}
    return {**out, "ratio": a / b if b > 0 else None}


def run_wmrl_controlled(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """WMRL check 4: :func:`wmkit.wmrl.controlled_experiment` (known optimum, the paper's error model)."""
    from wmkit import wmrl

    result = _without_curves(wmrl.controlled_experiment(sizes, seeds=[seed]))
    result["compute_ratio"] = {"real_over_wmrl": censored_ratio(result["arms"], "real", "WMRL")}
    return result


_research_setups: dict[str, dict] = {}


def _shared_research_setup(sizes) -> dict:
    """WMRL's research setup, built once per process and sizes. It does not depend on the seed
    (notebook 04 runs all its seeds on one setup too): executions are deterministic and cached,
    and a cached execution is charged its measured CPU seconds again, so sharing it changes no
    figure; it saves rebuilding the grade tables and the learned world model for every seed."""
    key = repr(sizes)
    if key not in _research_setups:
        from wmkit import wmrl

        setup = wmrl.research_setup(sizes)
        atexit.register(setup["env"].close)
        _research_setups[key] = setup
    return _research_setups[key]


def run_wmrl_research(profile: str, seed: int, runs_root: Path, sizes) -> dict:
    """WMRL check 5: research tasks executed for real, with the learned and the hand-made world model."""
    from wmkit import wmrl

    setup = _shared_research_setup(sizes)
    result = wmrl.research_experiment(sizes, setup, seeds=[seed])
    out = _without_curves(result)
    out["build_costs"] = setup["build_costs"]
    out["compute_ratio"] = {w: {"real_over_wmrl": censored_ratio(out["arms"], "real", f"WMRL ({w})")}
                            for w in setup["world_models"]}
    return out


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("rlvr_mle_vs_rl", "RLVR-World", "wmkit.bench:run_rlvr_mle_vs_rl", "wmkit.bench:_rlvr_sizes",
               "text game: notebook 01's MLE world model vs MLE + GRPO (task-specific reward)"),
    Experiment("rlvr_ablations", "RLVR-World", "wmkit.bench:run_rlvr_ablations", "wmkit.bench:_rlvr_sizes",
               "text game: reward types, group sizes, best-of-k of the MLE model"),
    Experiment("rlvr_phone", "RLVR-World", "wmkit.bench:run_rlvr_phone", "wmkit.bench:_rlvr_sizes",
               "phone screens: screen-diff F1 before and after RLVR"),
    Experiment("rwml", "RWML", "wmkit.bench:run_rwml", "wmkit.bench:_rwml_sizes",
               "TextWorldExpress: embedding-reward RL vs SFT, forgetting on the kit's environments; "
               "policy RL (Simon Says) from the base vs the RWML model"),
    Experiment("wm_r1", "WM-R1", "wmkit.bench:run_wm_r1", "wmkit.bench:_wm_r1_sizes",
               "phone agent trained inside the world model vs its baselines and ablations, judged in the simulator"),
    Experiment("wmrl_controlled", "WMRL", "wmkit.bench:run_wmrl_controlled", "wmkit.bench:_wmrl_sizes",
               "controlled problem with a known optimum and the paper's error model"),
    Experiment("wmrl_research", "WMRL", "wmkit.bench:run_wmrl_research", "wmkit.bench:_wmrl_sizes",
               "research tasks executed for real (scikit-learn), learned world model"),
)}


def _rl(mode: str, part: str) -> tuple[str, str]:
    return f"runs/0/after/{mode}/{part}", f"before/{mode}/{part}"


CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- RLVR-World
    Claim("rlvr.changed", "RLVR-World", "RLVR raises accuracy on changed transitions (sampled, T=1)",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("sampled", "changed"),
          kit_label="Δ exact accuracy, changed (sampled)"),
    Claim("rlvr.unchanged", "RLVR-World", "RLVR raises accuracy on unchanged transitions (sampled, T=1)",
          "1.5B: +44.8 points on unchanged", "rlvr_mle_vs_rl", *_rl("sampled", "unchanged"),
          kit_label="Δ exact accuracy, unchanged (sampled)"),
    Claim("rlvr.changed_greedy", "RLVR-World", "RLVR raises greedy accuracy on changed transitions",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("greedy", "changed"),
          kit_label="Δ exact accuracy, changed (greedy)"),
    Claim("rlvr.partial", "RLVR-World", "RLVR raises the task-specific reward on changed transitions",
          "text game: +30.7% accuracy", "rlvr_mle_vs_rl", *_rl("greedy", "partial_changed"),
          kit_label="Δ task-specific reward, changed (greedy, 0..1.3)"),
    Claim("rlvr.web_f1", "RLVR-World", "RLVR raises screen-diff F1 (web pages in the paper, phone screens here)",
          "web page: +15.1% F1", "rlvr_phone", "arm/after/greedy/partial_changed", "before/greedy/partial_changed",
          kit_label="Δ screen-diff F1, changed (greedy)"),
    Claim("rlvr.reward_type", "RLVR-World", "a task-specific reward beats the binary exact-match reward",
          "— (reward ablation; no headline number)", "rlvr_ablations",
          "rewards/task_specific/after/greedy/partial_changed", "rewards/binary/after/greedy/partial_changed",
          kit_label="task-specific − binary arm, task-specific reward on changed"),
    Claim("rlvr.group_size", "RLVR-World", "larger GRPO groups end higher",
          "— (group-size ablation; paper runs use G=5)", "rlvr_ablations",
          "group_sizes/large/after/greedy/partial_changed", "group_sizes/small/after/greedy/partial_changed",
          kit_label="largest − smallest G, task-specific reward on changed"),
    Claim("rlvr.best_of_k", "RLVR-World", "limitation: the MLE model sampled k times (perfect verifier) "
          "catches up with RLVR's single answer", "— (stated limitation)", "rlvr_ablations",
          "best_of_k/mle_at_k_max", "best_of_k/rlvr_at_1", direction="higher", threshold=-1e-9,
          kit_label="MLE best-of-k_max − RLVR pass@1, changed (≥ 0: caught up)"),
    Claim("rlvr.repetition", "RLVR-World", "RLVR reduces repetition in generated predictions",
          "repetition 48.6% → 9.9%", not_measured="the kit's text-game evaluation has no repetitive "
          "free-text output to measure (predictions are short JSON diffs); RWML's TWX table reports "
          "repetition descriptively"),
    Claim("rlvr.video", "RLVR-World", "RLVR improves video world models (LPIPS)", "video LPIPS +9.2% relative",
          not_measured="the kit has no video environment or video world model"),
    # ---------------------------------------------------------------- RWML
    Claim("rwml.vs_sft", "RWML", "embedding-reward RL beats SFT on next observations (held-out TextWorldExpress)",
          "— (paper: RWML > SFT world-model training)", "rwml",
          "quality/RWML (embedding RL)/embedding_reward", "quality/SFT on next observations/embedding_reward",
          kit_label="RWML − SFT, embedding reward (cos ≥ τ) on held-out games"),
    Claim("rwml.vs_base", "RWML", "world-model RL without task reward improves on its starting model",
          "+19.6 ALFWorld, +7.9 τ²-Bench (agent success; the kit measures prediction)", "rwml",
          "quality/RWML (embedding RL)/embedding_reward", "quality/warm-up (10% SFT)/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward"),
    Claim("rwml.forgetting", "RWML", "RL forgets less than SFT (accuracy kept on tasks it did not train on)",
          "— (paper: RL forgets less than SFT)", "rwml",
          "forgetting_mean/RWML (embedding RL)", "forgetting_mean/SFT on next observations",
          kit_label="RWML − SFT, exact accuracy on the kit's text game and phone"),
    Claim("rwml.mid_training", "RWML", "world-model mid-training, then policy RL, beats policy RL alone",
          "+6.9 ALFWorld, +5.7 τ²-Bench", "rwml",
          "policy/arms/rwml/after/success", "policy/arms/base/after/success",
          kit_label="Δ success, held-out Simon Says games (policy RL from RWML − from base; one-step RL "
                    "after the same BC warm-up)"),
    Claim("rwml.invalid_actions", "RWML", "RWML lowers the share of invalid actions", "59.3% → 39.5%", "rwml",
          "policy/arms/rwml/after/invalid_share", "policy/arms/base/after/invalid_share", direction="lower",
          kit_label="Δ share of invalid actions, held-out Simon Says games (from RWML − from base, after "
                    "policy RL)"),
    # ---------------------------------------------------------------- WM-R1
    Claim("wm_r1.vs_zero_shot", "WM-R1", "the agent trained only inside the world model beats its zero-shot "
          "start in the real environment (held-out task templates)", "3B: 29.5 vs 18.6", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/sft/heldout/success",
          kit_label="Δ simulator success, held-out templates (WM-R1 − SFT start)"),
    Claim("wm_r1.vs_zero_shot_train", "WM-R1", "the same on unseen tasks of the training templates",
          "3B: 29.5 vs 18.6", "wm_r1", "arms/wm_r1/train_templates/success", "arms/sft/train_templates/success",
          kit_label="Δ simulator success, train templates (WM-R1 − SFT start)"),
    Claim("wm_r1.vs_real_grpo", "WM-R1", "WM-R1 beats GRPO with real-environment transitions",
          "7B AndroidWorld 39.8 vs UI-R1 30.8 (+9.0)", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/grpo_real/heldout/success",
          kit_label="Δ simulator success, held-out (WM-R1 − GRPO in the simulator)"),
    Claim("wm_r1.vs_simulation", "WM-R1", "WM-R1 beats inference-time simulation (best-of-K with the world model)",
          "— (baseline comparison)", "wm_r1", "arms/wm_r1/heldout/success", "arms/best_of_k/heldout/success",
          kit_label="Δ simulator success, held-out (WM-R1 − best-of-K)"),
    Claim("wm_r1.imagined_calls", "WM-R1", "ablation: imagined world-model calls while reasoning help",
          "no CoT −5.2 (nearest paper ablation)", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/wm_r1_no_imagine/heldout/success",
          kit_label="Δ simulator success, held-out (with − without call_wm)"),
    Claim("wm_r1.length_reward", "WM-R1", "ablation: the length reward helps", "length reward +3.3", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/wm_r1_no_length/heldout/success",
          kit_label="Δ simulator success, held-out (with − without R_L)"),
    Claim("wm_r1.calls_fall", "WM-R1", "world-model calls per trajectory fall during training",
          "~4 → ~2.5 → ~1.8", "wm_r1", "wm_calls_first", "wm_calls_last",
          kit_label="calls/episode, first − last GRPO step (> 0: fell)"),
    # ---------------------------------------------------------------- WMRL
    Claim("wmrl.error_floor", "WMRL", "pure world-model RL plateaus at an error floor above real-execution RL",
          "Theorem 3 (permanent floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/real/final_gap/mean",
          kit_label="final gap to J*, pure WM − real (controlled problem)"),
    Claim("wmrl.closes_gap", "WMRL", "anchored RL ends closer to the optimum than pure world-model RL",
          "Theorem 4 (contracting floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, pure WM − WMRL (controlled problem)"),
    Claim("wmrl.compute_controlled", "WMRL", "WMRL reaches real-execution quality with less compute",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_controlled", "compute_ratio/real_over_wmrl/ratio",
          direction="higher", threshold=1.0,
          kit_label="compute to target, real / WMRL (controlled; > 1: WMRL cheaper; WMRL never "
                    "reaching it counts as 0)"),
    Claim("wmrl.compute_research", "WMRL", "the same on research tasks executed for real",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_research",
          "compute_ratio/learned/real_over_wmrl/ratio", direction="higher", threshold=1.0,
          kit_label="compute to target, real / WMRL (learned WM, build cost counted; WMRL never "
                    "reaching it counts as 0)"),
    Claim("wmrl.final_score", "WMRL", "WMRL's final score is at least real-execution GRPO's",
          "16.4 vs 15.2 (MLE-Dojo)", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/real/final/mean",
          direction="higher", threshold=-1e-9, kit_label="final expected grade, WMRL − real (learned WM)"),
    Claim("wmrl.ablation_both", "WMRL", "ablation: both corrections beat no correction", "16.4 vs 13.5",
          "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, both − none (learned WM)"),
    Claim("wmrl.ablation_debias", "WMRL", "ablation: debiasing alone helps", "15.7 vs 13.5", "wmrl_research",
          "arms/debias only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, debias only − none (learned WM)"),
    Claim("wmrl.ablation_denoise", "WMRL", "ablation: denoising alone helps", "14.9 vs 13.5", "wmrl_research",
          "arms/denoise only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, denoise only − none (learned WM)"),
    Claim("wmrl.ablation_controlled", "WMRL", "ablation on the controlled problem: both corrections beat none",
          "16.4 vs 13.5", "wmrl_controlled", "arms/no correction/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, none − both (controlled)"),
    Claim("wmrl.vs_anchors_only", "WMRL", "(kit's control) the world-model groups help beyond the anchors alone",
          "not reported", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/anchors only/final/mean",
          kit_label="final grade, WMRL − anchors-only (learned WM)"),
)


def _check_registry() -> None:
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids)), "claim ids must be unique"
    for c in CLAIMS:
        assert c.paper in PAPERS, c.id
        assert (c.experiment is None) == bool(c.not_measured), c.id
        assert c.experiment is None or (c.experiment in EXPERIMENTS and c.value), c.id


_check_registry()


# ============================================================================ records


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          timeout=30).stdout


def head_commit(repo: Path = REPO) -> str:
    """The checkout's HEAD commit (kept in records and reports as provenance), "nogit" outside one."""
    try:
        return _git(repo, "rev-parse", "HEAD").strip()
    except (OSError, subprocess.SubprocessError):
        return "nogit"


def code_version(repo: Path = REPO) -> tuple[str, bool]:
    """(code version, dirty): what records are keyed by. The git tree hash of the library
    (``wmkit/`` at HEAD), plus ``+<hash>`` of its uncommitted changes (untracked files included)
    when there are any, so that a record made by edited code is never taken for one made by the
    commit. Only the library runs the experiments, so a commit that changes the README, the notebooks
    or the tests keeps every cached record valid. ("nogit", False) outside a checkout."""
    try:
        tree = _git(repo, "rev-parse", "HEAD:wmkit").strip()
        diff = _git(repo, "diff", "HEAD", "--", "wmkit")
        untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "--", "wmkit").split()
    except (OSError, subprocess.SubprocessError):
        return "nogit", False
    if not diff and not untracked:
        return tree, False
    digest = hashlib.sha256(diff.encode())
    for name in sorted(untracked):
        digest.update(name.encode() + (repo / name).read_bytes())
    return f"{tree}+{digest.hexdigest()[:8]}", True


def experiment_config(experiment: Experiment, profile: str, seed: int) -> dict:
    sizes = _resolve(experiment.sizes)(profile)
    return {"experiment": experiment.name, "profile": profile, "seed": seed, "record_version": RECORD_VERSION,
            "sizes": jsonable(dataclasses.asdict(sizes) if dataclasses.is_dataclass(sizes) else sizes)}


def config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def short_version(version: str) -> str:
    """'916d171bdf4b' or '916d171bdf4b+f43efa63' (12 hex digits of the hash, the local-change hash)."""
    return version[:12] + (f"+{version.split('+', 1)[1]}" if "+" in version else "")


def record_path(bench_dir: Path, experiment: str, seed: int, code: str, chash: str) -> Path:
    return Path(bench_dir) / experiment / f"seed{seed}_{short_version(code)}_{chash[:12]}.json"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)  # a run killed before this line leaves no record


def machine() -> dict:
    import torch

    versions = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("transformers", "trl", "peft", "numpy", "sklearn", "textworld_express", "sentence_transformers"):
        try:
            versions[name] = importlib.import_module(name).__version__
        except Exception:  # noqa: BLE001
            versions[name] = None
    cuda = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "cuda": cuda,
            "versions": versions}


def select_experiments(only: Sequence[str] | None, experiments: dict[str, Experiment] | None = None) -> list[str]:
    """Experiment names for `--only` (paper names or experiment names, case-insensitive); all when empty."""
    experiments = EXPERIMENTS if experiments is None else experiments
    if not only:
        return list(experiments)
    chosen = []
    for word in only:
        hits = [n for n, e in experiments.items() if word.lower() in (n.lower(), e.paper.lower())]
        if not hits:
            choices = sorted({e.paper for e in experiments.values()} | set(experiments))
            raise ValueError(f"--only {word!r} names no paper or experiment; choose from {', '.join(choices)}")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def bench_command(profile: str, seeds: int, only: Sequence[str] | None = None, threads: int | None = None) -> str:
    parts = ["python", "-m", "wmkit", "bench", "--profile", profile, "--seeds", str(seeds)]
    if only:
        parts += ["--only", *only]
    if threads:
        parts += ["--threads", str(threads)]
    return shlex.join(parts)


def run_one(experiment: Experiment, profile: str, seed: int, runs_root: Path, code: str, command: str,
            log: Callable[[str], None] = print, commit: str | None = None) -> tuple[Path, bool]:
    """Run (experiment, seed) unless its record exists; returns (record path, whether it ran).
    `commit` is the HEAD the run started at (read now when not given), kept as provenance."""
    commit = head_commit() if commit is None else commit
    config = experiment_config(experiment, profile, seed)
    chash = config_hash(config)
    path = record_path(Path(runs_root) / "bench", experiment.name, seed, code, chash)
    if path.exists():
        log(f"{experiment.name} seed {seed}: cached ({path.name})")
        return path, False
    log(f"{experiment.name} seed {seed}: running")
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    sizes = _resolve(experiment.sizes)(profile)
    result = _resolve(experiment.run)(profile, seed, Path(runs_root), sizes)
    seconds = time.perf_counter() - t0
    record = {"experiment": experiment.name, "paper": experiment.paper, "profile": profile, "seed": seed,
              "code": code, "commit": commit, "dirty": "+" in code, "config_hash": chash, "config": config,
              "command": command,
              "started": started.isoformat(timespec="seconds"), "wall_seconds": round(seconds, 2),
              "result": jsonable(result)}
    _write_atomic(path, json.dumps(record, indent=1, sort_keys=True))
    log(f"{experiment.name} seed {seed}: done in {seconds:.1f} s -> {path.name}")
    return path, True


def load_records(runs_root: Path, profile: str, seeds: Sequence[int], code: str,
                 experiments: dict[str, Experiment] | None = None) -> dict[str, dict[int, dict]]:
    """{experiment: {seed: record}} of the records on disk for this code version and the current configs."""
    experiments = EXPERIMENTS if experiments is None else experiments
    out: dict[str, dict[int, dict]] = {}
    for name, experiment in experiments.items():
        for seed in seeds:
            chash = config_hash(experiment_config(experiment, profile, seed))
            path = record_path(Path(runs_root) / "bench", name, seed, code, chash)
            if path.exists():
                record = json.loads(path.read_text())
                record["_path"] = str(path)
                out.setdefault(name, {})[seed] = record
    return out


# ============================================================================ report


def claim_row(claim: Claim, records: dict[int, dict], profile: str, n_seeds: int,
              experiments: dict[str, Experiment] | None = None) -> dict:
    """One table row: computed only from `records` (seed -> record) of the claim's experiment."""
    experiments = EXPERIMENTS if experiments is None else experiments
    row = {"id": claim.id, "paper": claim.paper, "claim": claim.text, "paper_figure": claim.paper_figure,
           "experiment": claim.experiment, "kit_label": claim.kit_label, "direction": claim.direction,
           "threshold": claim.threshold, "fields": {"value": claim.value, "minus": claim.minus}}
    if claim.experiment is None:
        return {**row, "verdict": "not measured", "reason": claim.not_measured, "records": [], "seeds": [],
                "kit": summarize([]), "command": None}
    paper = experiments[claim.experiment].paper
    row["command"] = bench_command(profile, n_seeds, [claim.experiment])
    if not records:
        return {**row, "verdict": "not measured", "reason": "no run record (run the command)", "records": [],
                "seeds": [], "kit": summarize([])}
    seeds = sorted(records)
    values = [claim_value(claim, records[s]["result"]) for s in seeds]
    stats = summarize(values)
    row.update({"seeds": seeds, "records": [records[s]["_path"] for s in seeds], "kit": stats,
                "verdict": verdict(stats, claim.direction, claim.threshold), "paper_of_experiment": paper,
                "record_seconds": [records[s]["wall_seconds"] for s in seeds]})
    if not stats["n"]:
        row["reason"] = "the fields are missing or undefined in every record (e.g. target never reached)"
    elif stats["n"] < len(seeds):
        row["reason"] = f"defined in {stats['n']} of {len(seeds)} seeds"
    return row


def build_report(runs_root: Path, profile: str, seeds: Sequence[int], code: str | None = None,
                 claims: Sequence[Claim] = CLAIMS, experiments: dict[str, Experiment] | None = None,
                 command: str = "", wall_seconds: float | None = None, plots: bool = True) -> dict:
    """Read the records from disk, compute every row, write bench.json, report.md and the figures."""
    experiments = EXPERIMENTS if experiments is None else experiments
    runs_root = Path(runs_root)
    if code is None:
        code, _ = code_version()
    records = load_records(runs_root, profile, seeds, code, experiments)
    rows = [claim_row(c, records.get(c.experiment, {}) if c.experiment else {}, profile, len(seeds), experiments)
            for c in claims]
    report = {
        "profile": profile, "seeds": list(seeds), "code": code, "commit": head_commit(), "dirty": "+" in code,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "command": command,
        "wall_seconds": wall_seconds, "machine": machine(), "rows": rows,
        "experiments": {name: {"paper": e.paper, "description": e.description,
                               "seeds": sorted(records.get(name, {})),
                               "wall_seconds": {str(s): r["wall_seconds"] for s, r in records.get(name, {}).items()}}
                        for name, e in experiments.items()},
        "counts": {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS},
    }
    report["figures"] = plot_report(report, runs_root / "bench" / "figures") if plots else []
    _write_atomic(runs_root / "bench.json", json.dumps(jsonable(report), indent=1))
    _write_atomic(runs_root / "report.md", report_markdown(report, runs_root))
    return report


def check_report(report: dict) -> dict:
    """A loaded bench.json with every row whose run records are gone turned into "not measured"
    (a number is shown only while the record that made it exists)."""
    for row in report["rows"]:
        missing = [p for p in row.get("records", []) if not Path(p).exists()]
        if missing and row["verdict"] != "not measured":
            row.update({"verdict": "not measured", "kit": summarize([]),
                        "reason": f"run record missing: {Path(missing[0]).name}"})
    report["counts"] = {v: sum(r["verdict"] == v for r in report["rows"]) for v in VERDICTS}
    return report


def load_report(path: Path) -> dict:
    report = json.loads(Path(path).read_text())
    report.setdefault("code", report["commit"])  # written before records were keyed by wmkit/'s tree
    return check_report(report)


def fmt_kit(stats: dict, digits: int = 3) -> str:
    if not stats.get("n"):
        return "—"
    text = f"{stats['mean']:+.{digits}f}"
    if stats["n"] > 1:
        text += f" ± {stats['std']:.{digits}f} [{stats['ci_low']:+.{digits}f}, {stats['ci_high']:+.{digits}f}]"
    text += f" (n={stats['n']}" + (f"/{stats['of']})" if stats["n"] != stats["of"] else ")")
    return text


def report_markdown(report: dict, runs_root: Path | None = None) -> str:
    m = report["machine"]
    v = m["versions"]
    lines = [
        f"# wmkit benchmark — profile `{report['profile']}`, seeds {report['seeds']}", "",
        f"* created {report['created']} at commit `{report['commit'][:12]}`; records of library version "
        f"`{short_version(report['code'])}` (git tree of wmkit/"
        + (", + its uncommitted changes, hashed after the +)" if "+" in report["code"] else ")"),
        f"* command: `{report['command']}`" if report.get("command") else "* command: (report only)",
        f"* wall time of this invocation: {report['wall_seconds']:.0f} s" if report.get("wall_seconds") is not None
        else "* wall time: see per-experiment times below",
        (f"* machine: {m['platform']}, {m['cpu_count']} CPUs, torch threads {m['torch_threads']}, "
         f"GPU {m['cuda'] or 'none'}"),
        "* versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
        "* verdicts: " + ", ".join(f"{k} {n}" for k, n in report["counts"].items()), "",
        ("Kit number: mean over seeds ± sample std [95% t-interval] of the per-seed value in the second "
        "column (a paired difference where it says Δ / −). *reproduced*: the interval lies on the paper's "
        "side; *same direction, not significant*: the mean does, the interval (or a single seed) does not; "
        "*not reproduced*: the mean is on the other side; *not measured*: no run record, or the kit "
        "cannot run that experiment yet (reason given). The kit's models are tiny: directions, not the "
        "papers' magnitudes."), "",
        "| paper | claim | paper figure | kit measures | kit (mean ± std [95% CI]) | verdict | command |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        verdict_text = row["verdict"] + (f" — {row['reason']}" if row.get("reason") else "")
        side = ">" if row["direction"] == "higher" else "<"
        label = row["kit_label"] + (f" ({side} {row['threshold']:g})" if row["threshold"] not in (0, -1e-9) else "")
        cmd = f"`{row['command']}`" if row.get("command") else "—"
        cells = [row["paper"], row["claim"], row["paper_figure"], label or "—", fmt_kit(row["kit"]), verdict_text, cmd]
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    lines += ["", "## Experiments", "", "| experiment | paper | what | seeds | wall s per seed |", "|---|---|---|---|---|"]
    for name, e in report["experiments"].items():
        secs = ", ".join(f"{s}: {t:.0f}" for s, t in e["wall_seconds"].items()) or "—"
        lines.append(f"| `{name}` | {e['paper']} | {e['description']} | {e['seeds'] or '—'} | {secs} |")
    if report.get("figures"):
        lines += ["", "## Figures", ""]
        for fig in report["figures"]:
            rel = os.path.relpath(fig, runs_root) if runs_root else fig
            lines.append(f"![{Path(fig).stem}]({rel})")
    return "\n".join(lines) + "\n"


def plot_report(report: dict, out_dir: Path) -> list[str]:
    """One figure per paper: each measured claim's per-seed values, mean and 95% interval, and the
    line it must clear."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    colors = {"reproduced": "tab:green", "same direction, not significant": "tab:olive",
              "not reproduced": "tab:red", "not measured": "tab:gray"}
    paths = []
    for paper in PAPERS:
        rows = [r for r in report["rows"] if r["paper"] == paper]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.2))
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            stats, color = row["kit"], colors[row["verdict"]]
            if stats.get("n"):
                ax.scatter(stats["values"], [y] * len(stats["values"]), s=14, color=color, alpha=0.6, zorder=3)
                if stats["ci_low"] is not None:
                    ax.plot([stats["ci_low"], stats["ci_high"]], [y, y], color=color, lw=2)
                ax.plot([stats["mean"]], [y], "D", color=color, ms=6, zorder=4)
            else:
                ax.text(0, y, "not measured", color=color, va="center", fontsize=8)
            ax.plot([row["threshold"]] * 2, [y - 0.35, y + 0.35], color="black", lw=0.8)
        ax.set_yticks(range(len(rows)), [r["id"] for r in reversed(rows)], fontsize=8)
        ax.set_xlabel("kit value: seeds (dots), mean (diamond), 95% interval (bar); line to clear (tick)", fontsize=8)
        ax.set_title(f"{paper} — profile {report['profile']}, seeds {report['seeds']}", fontsize=10)
        fig.tight_layout()
        path = out_dir / f"{paper.lower().replace('-', '_')}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(str(path))
    return paths


# ============================================================================ runner


@dataclass
class BenchResult:
    report: dict
    ran: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    seconds: float = 0.0


def run_bench(profile: str = "smoke", seeds: int = 1, only: Sequence[str] | None = None,
              runs_root: Path | None = None, threads: int | None = None, report_only: bool = False,
              experiments: dict[str, Experiment] | None = None, claims: Sequence[Claim] = CLAIMS,
              log: Callable[[str], None] = print) -> BenchResult:
    """Run every selected (experiment, seed) that has no record yet, then rebuild the report from
    all records of this library version (also those of experiments not selected this time)."""
    from wmkit.nb import default_runs_root
    from wmkit.profiles import resolve_profile_name

    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"--seeds must be a positive integer, not {seeds!r}")
    if threads is not None and threads < 1:
        raise ValueError(f"--threads must be at least 1, not {threads}")
    profile = resolve_profile_name(profile)
    experiments = EXPERIMENTS if experiments is None else experiments
    names = select_experiments(only, experiments)
    runs_root = Path(runs_root) if runs_root else default_runs_root() / profile
    runs_root.mkdir(parents=True, exist_ok=True)
    if threads:
        import torch

        torch.set_num_threads(threads)
    command = bench_command(profile, seeds, only, threads) + (" --report-only" if report_only else "")
    code, _ = code_version()
    commit = head_commit()
    start = time.perf_counter()
    out = BenchResult(report={})
    if not report_only:
        for name in names:
            for seed in range(seeds):
                _, ran = run_one(experiments[name], profile, seed, runs_root, code, command, log, commit)
                (out.ran if ran else out.cached).append(f"{name}/seed{seed}")
    out.seconds = time.perf_counter() - start
    out.report = build_report(runs_root, profile, list(range(seeds)), code, claims, experiments, command,
                              out.seconds)
    log(f"bench: {len(out.ran)} run, {len(out.cached)} cached, {out.seconds:.0f} s; "
        f"{runs_root / 'bench.json'}, {runs_root / 'report.md'}")
    return out


def add_bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="notebook 05: measure the papers' claims over seeds, cached and resumable")
    p.add_argument("--profile", default="auto")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1")
    p.add_argument("--only", nargs="*", help="papers (RLVR-World, RWML, WM-R1, WMRL) or experiment names")
    p.add_argument("--runs-dir", default=None, help="default runs/<profile>")
    p.add_argument("--threads", type=int, default=None, help="torch threads (1 on a small shared CPU)")
    p.add_argument("--report-only", action="store_true", help="rebuild the report from the records on disk")


def bench_main(args) -> int:
    result = run_bench(args.profile, args.seeds, args.only, Path(args.runs_dir) if args.runs_dir else None,
                       args.threads, args.report_only)
    for row in result.report["rows"]:
        print(f"{row['paper']:10s} {row['id']:26s} {fmt_kit(row['kit']):40s} {row['verdict']}")
    return 0


# ============================================================================ exercise checkers


def _say(ok: bool, hint: str) -> bool:
    print("correct" if ok else f"not yet: {hint}")
    return ok


def check_interval_answer(answer: Any, values: Sequence[float]) -> bool | None:
    """Exercise: the 95% t-interval of `values`, as (low, high)."""
    if answer is None:
        print("not answered yet")
        return None
    s = summarize(values)
    try:
        low, high = (float(a) for a in answer)
    except (TypeError, ValueError):
        return _say(False, "give two numbers: (low, high)")
    return _say(abs(low - s["ci_low"]) < 5e-3 and abs(high - s["ci_high"]) < 5e-3,
                "mean ± t·s/√n with the sample std s (divide by n − 1) and t(0.975, n − 1 dof).")


def check_verdict_answer(answer: Any, values: Sequence[float], direction: str = "higher",
                         threshold: float = 0.0) -> bool | None:
    """Exercise: the verdict of a claim whose per-seed values are `values`."""
    if answer is None:
        print("not answered yet")
        return None
    return _say(answer == verdict(summarize(values), direction, threshold),
                "is the mean on the paper's side? Is the whole interval?")
