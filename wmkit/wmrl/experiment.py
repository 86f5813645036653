"""WMRL's experiments (Yang et al., 2026): theory checks 1-3, the controlled problem (4), research tasks (5).

The algorithm (policy, the GRPO loop of every arm, debiasing, denoising) is in
:mod:`wmkit.wmrl.method`; the problems and their world models in :mod:`wmkit.wmrl.problems`.
Here:

* ``check_*`` — Monte-Carlo checks of the theory (checks 1-3).
* :func:`controlled_experiment`, :func:`research_experiment` — checks 4 and 5, every arm
  (``real``, ``wm``, ``wmrl``, ``anchors_only``) over seeds, with compute to a target.
* :func:`run_wmrl_controlled`, :func:`run_wmrl_research` — the benchmark's one-seed runs.
* The sizes: the profile's ``wmrl`` section (`wmkit.profiles`).

Command line: ``python -m wmkit run wmrl --profile cpu --seeds 3`` runs checks 4 and 5 over seeds.
"""
from __future__ import annotations

import atexit
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from wmkit import stats
from wmkit.envs.research import (
    ResearchEnv,
)
from wmkit.profiles import Profile
from wmkit.stats import summarize
from wmkit.wmrl.config import WMRLSizes
from wmkit.wmrl.method import (
    RunLog,
    WMRLConfig,
    binned_isotonic_fit,
    compute_to_target,
    fuse_estimates,
    grpo_advantages,
    rollout_weight,
    run_grpo,
)
from wmkit.wmrl.problems import (
    ControlledBandit,
    HandmadeWorldModel,
    LearnedWorldModel,
    ResearchTasks,
    measure_world_model,
)

ABLATION = {"no correction": (False, False), "denoise only": (False, True), "debias only": (True, False),
            "both": (True, True)}


"""The paper's four-way ablation: name -> (debias, denoise)."""


PAPER = {
    "compute_ratio": "3.1-3.4× less training compute than real-execution GRPO (4B: 883 vs 286 GPU-h)",
    "final_score": "16.4 (WMRL) vs 15.2 (real-execution GRPO) on MLE-Dojo",
    "ablation": {"no correction": 13.5, "denoise only": 14.9, "debias only": 15.7, "both": 16.4},
}


"""Headline numbers of the WMRL paper (Yang et al., 2026), shown beside the kit's."""


def fmt(summary: dict[str, Any], digits: int = 3) -> str:
    """'0.912 ± 0.010 (2/3)' for a :func:`wmkit.stats.summarize` dict (n/of only when some are missing)."""
    if summary["mean"] is None:
        return f"not reached (0/{summary['of']})"
    text = f"{summary['mean']:.{digits}f} ± {summary['std']:.{digits}f}"
    return text + (f" ({summary['n']}/{summary['of']})" if summary["n"] != summary["of"] else "")


def _agree(measured: Any, predicted: Any, se: Any, k: float) -> bool:
    """|measured − predicted| ≤ k·SE for every component (a tiny absolute floor for SE = 0)."""
    measured, predicted, se = (np.asarray(a, dtype=float) for a in (measured, predicted, se))
    return bool(np.all(np.abs(measured - predicted) <= k * se + 1e-12))


def check_affine_invariance(n_groups: int = 20000, group_size: int = 8, scale: float = 3.0, shift: float = -0.5,
                            power: float = 3.0, k: float = 4.0, seed: int = 0) -> dict[str, Any]:
    """Check 1: an affine reward map leaves the GRPO gradient unchanged; a non-affine one does not.

    A 5-armed bandit with Beta-distributed rewards and a fixed softmax policy π. The
    per-group GRPO gradient estimate is ``(1/G) Σ_i A_i (e_{a_i} − π)`` with advantages
    from :func:`wmkit.wmrl.method.grpo_advantages`. Three *independent* Monte-Carlo estimates
    of its expectation: with rewards r, with ``scale·r + shift`` and with ``r**power``.
    Theory: the affine one equals the first (per-group standardization cancels it). The
    same assertion, ``|difference| ≤ k·SE`` on every component, is applied to a
    deliberately wrong formula (``g_affine = scale·g``: what you would expect *without*
    standardization), which it must reject, and to the non-affine map, which theory
    says changes the gradient.
    """
    rng = np.random.default_rng(seed)
    logits = np.array([0.5, 0.0, -0.3, 0.2, -0.5])
    pi = np.exp(logits) / np.exp(logits).sum()
    alpha = np.array([2.0, 5.0, 3.0, 4.0, 1.5])
    beta = np.array([5.0, 2.0, 3.0, 4.0, 1.5])

    def estimate(transform: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        arms = rng.choice(len(pi), size=(n_groups, group_size), p=pi)
        rewards = transform(rng.beta(alpha[arms], beta[arms]))
        adv = np.asarray(grpo_advantages(rewards.tolist(), [False] * n_groups), dtype=float)
        per_group = (adv[..., None] * (np.eye(len(pi))[arms] - pi)).mean(axis=1)
        return per_group.mean(axis=0), per_group.std(axis=0, ddof=1) / math.sqrt(n_groups)

    g_raw, se_raw = estimate(lambda r: r)
    g_affine, se_affine = estimate(lambda r: scale * r + shift)
    g_power, se_power = estimate(lambda r: r**power)
    se_diff = np.sqrt(se_raw**2 + se_affine**2)
    se_wrong = np.sqrt(se_affine**2 + (scale * se_raw) ** 2)
    se_power_diff = np.sqrt(se_raw**2 + se_power**2)
    return {
        "k": k, "scale": scale, "shift": shift, "power": power, "n_groups": n_groups,
        "g_raw": g_raw, "se_raw": se_raw, "g_affine": g_affine, "se_affine": se_affine,
        "g_nonaffine": g_power, "se_nonaffine": se_power,
        "z_affine": (g_affine - g_raw) / se_diff,
        "passes": _agree(g_affine, g_raw, se_diff, k),
        "control_formula": f"g_affine = {scale:g}·g",
        "z_control": (g_affine - scale * g_raw) / se_wrong,
        "control_passes": _agree(g_affine, scale * g_raw, se_wrong, k),
        "z_nonaffine": (g_power - g_raw) / se_power_diff,
        "nonaffine_changed": not _agree(g_power, g_raw, se_power_diff, k),
    }


def _bin_index(x: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin of each score, as :func:`wmkit.wmrl.method.binned_isotonic_fit` assigns it."""
    inner_edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    return np.clip(np.digitize(x, inner_edges), 0, n_bins - 1)


def check_isotonic_recovery(pair_counts: tuple[int, ...] = (200, 400, 800, 1600, 3200), repeats: int = 300,
                            n_bins: int = 10, power: float = 2.0, noise: float = 0.05, k: float = 4.0,
                            seed: int = 0) -> dict[str, Any]:
    """Check 2: online isotonic debiasing recovers a known monotone distortion as anchor pairs accumulate.

    Real scores ``r ~ U(0, 1)``; the world model reports ``x = r**power + N(0, noise²)``.
    The best possible calibration is ``m(x) = E[r | x]`` (computed numerically). Binned
    PAV estimates, per bin j, the mean real score ``y_j`` of the pairs in it; with n pairs
    its error is a sample mean's: ``E(ŷ_j − y_j)² = V_j·E[1/N_j]``, ``N_j ~ Bin(n, p_j)``,
    so the predicted knot error is ``Σ_j p_j V_j E[1/N_j; N_j ≥ 1]`` (PAV pooling, rare at
    these sizes, can only lower it). The assertion ``|measured − predicted| ≤ k·SE`` at
    every n; the control is the formula that forgets each knot sees only its own bin's
    pairs, ``Σ_j p_j V_j / n``. Also returned: the error of the whole map against m(x)
    (binned and scikit-learn's exact isotonic regression), the binning bias left with
    infinite data, and the largest gap between the two fits on the same pairs.
    """
    from scipy.stats import binom
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(seed)

    def sample(n: int) -> tuple[np.ndarray, np.ndarray]:
        r = rng.random(n)
        return r**power + noise * rng.standard_normal(n), r

    x_pop, r_pop = sample(2_000_000)
    bins = _bin_index(x_pop, n_bins)
    counts = np.bincount(bins, minlength=n_bins)
    p = counts / counts.sum()
    y_star = np.bincount(bins, weights=r_pop, minlength=n_bins) / np.maximum(counts, 1)
    v = np.bincount(bins, weights=r_pop**2, minlength=n_bins) / np.maximum(counts, 1) - y_star**2
    x_bar = np.bincount(bins, weights=x_pop, minlength=n_bins) / np.maximum(counts, 1)

    r_grid = np.linspace(0.0, 1.0, 4001)

    def truth(x: np.ndarray) -> np.ndarray:  # E[r | x] by numerical integration over r ~ U(0, 1)
        w = np.exp(-0.5 * ((np.asarray(x)[:, None] - r_grid[None, :] ** power) / noise) ** 2)
        return (w * r_grid).sum(axis=1) / w.sum(axis=1)

    x_test, _ = sample(4000)
    m_test = truth(x_test)
    infinite_binned = np.interp(x_test, x_bar[counts > 0], y_star[counts > 0])
    binning_rmse = float(np.sqrt(np.mean((infinite_binned - m_test) ** 2)))

    predicted, wrong, measured, se, rmse_binned, rmse_sklearn = [], [], [], [], [], []
    for n in pair_counts:
        k_values = np.arange(1, n + 1)
        inverse_count = np.array([(binom.pmf(k_values, n, pj) / k_values).sum() for pj in p])
        predicted.append(float((p * v * inverse_count).sum()))
        wrong.append(float((p * v).sum() / n))
        knot_errors, map_binned, map_exact = [], [], []
        for _ in range(repeats):
            x, r = sample(n)
            fit = binned_isotonic_fit(x, r, n_bins)
            j = _bin_index(fit.knots_x, n_bins)
            knot_errors.append(float((p[j] * (fit.knots_y - y_star[j]) ** 2).sum()))
            map_binned.append(np.sqrt(np.mean((fit(x_test) - m_test) ** 2)))
            exact = IsotonicRegression(out_of_bounds="clip").fit(x, r)
            map_exact.append(np.sqrt(np.mean((exact.predict(x_test) - m_test) ** 2)))
        measured.append(float(np.mean(knot_errors)))
        se.append(float(np.std(knot_errors, ddof=1) / math.sqrt(repeats)))
        rmse_binned.append(float(np.mean(map_binned)))
        rmse_sklearn.append(float(np.mean(map_exact)))
    # The two fits on the same (largest) set of pairs, and what binning alone can cost there.
    x, r = sample(pair_counts[-1])
    grid = np.linspace(x.min(), x.max(), 400)
    max_difference = float(np.max(np.abs(binned_isotonic_fit(x, r, n_bins)(grid)
                                         - IsotonicRegression(out_of_bounds="clip").fit(x, r).predict(grid))))
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    m_edges = truth(edges)
    binning_bound = float(np.max(np.diff(m_edges)))
    return {
        "k": k, "pair_counts": list(pair_counts), "repeats": repeats, "n_bins": n_bins, "power": power,
        "noise": noise, "measured": measured, "se": se, "predicted": predicted, "control_predicted": wrong,
        "passes": _agree(measured, predicted, se, k), "control_passes": _agree(measured, wrong, se, k),
        "control_formula": "Σ_j p_j V_j / n",
        "map_rmse_binned": rmse_binned, "map_rmse_sklearn": rmse_sklearn,
        "binning_rmse": binning_rmse, "max_binned_vs_sklearn": max_difference,
        "binning_error_bound": binning_bound,
        "curve_x": grid, "curve_truth": truth(grid), "example_pairs": (x[:400], r[:400]),
    }


def check_fusion_variance(ratios: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0), repeats: int = 4000,
                          n_real: int = 8, n_wm: int = 56, k: float = 4.0, seed: int = 0) -> dict[str, Any]:
    """Check 3: inverse-variance fusion, done the way the code does it — as a weight per anchor rollout.

    ``g_E`` is the mean of ``n_real`` real rewards ``r ~ U(0, 1)`` (per-rollout variance
    ``σ²_E = 1/12``, so the group mean has ``V_E = σ²_E/n_real``); ``g_WM`` the mean of
    ``n_wm`` world-model rewards ``r + ξ``, with the noise ``ξ`` set so that ``V_WM/V_E``
    takes each value of ``ratios``. Both are unbiased.

    The code does not fuse two means; it sums over rollouts, each anchor rollout
    weighted by ``w``: ``(w·Σ_anchor x + Σ_wm y) / (w·n_real + n_wm)``. That equals the
    fused estimator :func:`wmkit.wmrl.method.fuse_estimates` exactly when ``w`` is the
    *per-rollout* variance ratio ``σ²_WM/σ²_E = (n_wm/n_real)·V_WM/V_E``
    (:func:`wmkit.wmrl.method.rollout_weight`). Measured: the Monte-Carlo variance of that
    per-rollout sum (its SE from the sample's fourth moment), predicted ``(1/V_E + 1/V_WM)⁻¹``.
    The control uses the ratio of the *group-mean* variances, ``w = V_WM/V_E``, per rollout:
    its variance is ``(w²·n_real·σ²_E + n_wm·σ²_WM)/(w·n_real + n_wm)²``, larger, and the same
    test must reject it against the fused formula.
    """
    rng = np.random.default_rng(seed)
    var_r = 1.0 / 12.0
    v_e = var_r / n_real
    measured, se, theory, bias_z = [], [], [], []
    weights, wrong_weights, wrong_measured, wrong_se, wrong_theory = [], [], [], [], []
    max_fused_gap = 0.0
    for ratio in ratios:
        v_wm = ratio * v_e
        noise_var = v_wm * n_wm - var_r
        if noise_var < 0:
            raise ValueError(f"ratio {ratio} is below the smallest reachable {var_r / n_wm / v_e:.3f}")
        real = rng.random((repeats, n_real))
        predicted = rng.random((repeats, n_wm)) + math.sqrt(noise_var) * rng.standard_normal((repeats, n_wm))
        rollout_var_e, rollout_var_wm = var_r, var_r + noise_var

        w_right = rollout_weight(rollout_var_e, rollout_var_wm)
        w_wrong = v_wm / v_e  # the group-mean variance ratio, applied to every anchor rollout
        summed = _per_rollout_sum(w_right, real, predicted)
        fused, v_theory = fuse_estimates(real.mean(axis=1), v_e, predicted.mean(axis=1), v_wm)
        max_fused_gap = max(max_fused_gap, float(np.max(np.abs(summed - fused))))
        variance, variance_se = _variance_and_se(summed)
        measured.append(variance)
        se.append(variance_se)
        theory.append(float(v_theory))
        bias_z.append(float((summed.mean() - 0.5) / math.sqrt(variance / repeats)))
        wrong_variance, wrong_variance_se = _variance_and_se(_per_rollout_sum(w_wrong, real, predicted))
        wrong_measured.append(wrong_variance)
        wrong_se.append(wrong_variance_se)
        wrong_theory.append((w_wrong**2 * n_real * rollout_var_e + n_wm * rollout_var_wm) / (w_wrong * n_real + n_wm) ** 2)
        weights.append(w_right)
        wrong_weights.append(w_wrong)
    return {
        "k": k, "ratios": list(ratios), "n_real": n_real, "n_wm": n_wm, "v_e": v_e,
        "measured": measured, "se": se, "predicted": theory,
        "passes": _agree(measured, theory, se, k),
        "rollout_weight": weights,  # w = σ²_WM/σ²_E per anchor rollout: makes the sum the fused estimator
        "per_rollout_sum_is_fused": max_fused_gap < 1e-9, "max_gap_sum_vs_fused": max_fused_gap,
        "control_weight": wrong_weights, "control_formula": "w = V_WM/V_E on each anchor rollout",
        "control_measured": wrong_measured, "control_se": wrong_se, "control_theory": wrong_theory,
        "control_passes": _agree(wrong_measured, theory, wrong_se, k),
        "control_matches_its_own_formula": _agree(wrong_measured, wrong_theory, wrong_se, k),
        "mean_z": bias_z, "unbiased": bool(np.all(np.abs(bias_z) <= k)),
    }


def _per_rollout_sum(w: float, anchors: np.ndarray, world_model: np.ndarray) -> np.ndarray:
    """``(w·Σ anchors + Σ world_model) / (w·n_anchors + n_world_model)`` per row: the code's sum over
    rollouts with every anchor rollout weighted by ``w``."""
    return (w * anchors.sum(axis=1) + world_model.sum(axis=1)) / (w * anchors.shape[1] + world_model.shape[1])


def _variance_and_se(samples: np.ndarray) -> tuple[float, float]:
    """Sample variance (n − 1) and its standard error from the sample's fourth central moment."""
    centred = samples - samples.mean()
    variance = float(np.mean(centred**2) * len(samples) / (len(samples) - 1))
    return variance, float(math.sqrt(max(np.mean(centred**4) - variance**2, 0.0) / len(samples)))


def run_arms(env: Any, world_models: dict[str, Any], base: WMRLConfig, specs: dict[str, dict[str, Any]],
             seed: int, build_costs: dict[str, float] | None = None,
             log_refits: Callable[[str], None] | None = None,
             build_work: dict[str, float] | None = None) -> dict[str, RunLog]:
    """Run several arms on one environment and seed. ``specs``: name → config overrides,
    with an optional ``"world_model"`` key naming which of ``world_models`` it uses.
    ``build_costs`` / ``build_work``: each world model's build in CPU seconds / work units."""
    logs = {}
    for name, overrides in specs.items():
        overrides = dict(overrides)
        wm_name = overrides.pop("world_model", next(iter(world_models)))
        config = replace(base, seed=seed, **overrides)
        if log_refits is not None and config.arm == "wmrl":
            log_refits(f"{name} (seed {seed}):")
        logs[name] = run_grpo(env, world_models[wm_name], config,
                              build_cost=(build_costs or {}).get(wm_name, 0.0), log_refits=log_refits,
                              build_work=(build_work or {}).get(wm_name, 0.0))
    return logs


def _summarize(logs_by_seed: list[dict[str, RunLog]], optimum: list[float], targets: list[float],
               include_build: bool = True) -> dict[str, Any]:
    """Per arm: curves, final value and gap to the optimum, compute and executions to target.

    Compute (``total_compute``, ``compute_to_target``, ``total_cost``) is in work units, the
    same in every same-seed run; the ``..._cpu_s`` keys hold the measured CPU seconds."""
    out: dict[str, Any] = {}
    for name in logs_by_seed[0]:
        logs = [by_arm[name] for by_arm in logs_by_seed]
        out[name] = {
            "values": [log.values for log in logs],
            "total_compute": [[c["work"] for c in log.compute] for log in logs],
            "total_compute_cpu_s": [[c["total_s"] for c in log.compute] for log in logs],
            "execution_compute": [[c["execution_s"] for c in log.compute] for log in logs],
            "executions": [[c["executions"] for c in log.compute] for log in logs],
            "final": summarize([log.final_value for log in logs]),
            "final_gap": summarize([opt - log.final_value for opt, log in zip(optimum, logs)]),
            "compute_to_target": [compute_to_target(log, t, include_build) for log, t in zip(logs, targets)],
            "compute_to_target_no_build": [compute_to_target(log, t, False) for log, t in zip(logs, targets)],
            "compute_to_target_cpu_s": [compute_to_target(log, t, include_build, "cpu_s")
                                        for log, t in zip(logs, targets)],
            "executions_to_target": [next((c["executions"] for v, c in zip(log.values, log.compute) if v >= t), None)
                                     for log, t in zip(logs, targets)],
            "refits": [len(log.refits) for log in logs],
            "final_weight": [log.weights[-1] if log.weights else 1.0 for log in logs],
            "total_executions": [log.compute[-1]["executions"] for log in logs],
            "total_cost": [log.compute[-1]["work"] for log in logs],
            "total_cost_cpu_s": [log.compute[-1]["total_s"] for log in logs],
        }
    return out


def ratio_summary(numerator: list[float | None], denominator: list[float | None]) -> dict[str, Any]:
    """mean ± std of numerator/denominator over the seeds where both reached the target."""
    ratios = [a / b if (a is not None and b is not None and b > 0) else None for a, b in zip(numerator, denominator)]
    return summarize(ratios)


CONTROLLED_WM = {"exponent": 2.0, "config_error": 0.02, "noise": 0.05, "cost_per_query": 0.01, "work_per_query": 0.01}


"""The controlled problem's world model: convex distortion f(r) = r², a small config-specific
error, fresh noise; a query costs 1/100 of an execution."""


def controlled_experiment(sizes: WMRLSizes, seeds: list[int] | None = None, wm_dials: dict[str, float] | None = None,
                          learning_rates: tuple[float, ...] = (), progress: Callable[[str], None] | None = None
                          ) -> dict[str, Any]:
    """Check 4 on :class:`ControlledBandit`: arms, the four-way ablation, the anchor sweep.

    For every seed (a new instance and new runs): real-execution GRPO, pure WM, WMRL,
    anchors-only, the ablation, WMRL and anchors-only at every anchor fraction of
    ``sizes.anchor_sweep``, and optionally real / WMRL / anchors-only at other learning
    rates. Predictions beside the measurements: ``J*`` and the pure-WM floor
    ``J* − μ(argmax_c E[r̂_c])`` (where GRPO on world-model scores settles).
    """
    seeds = list(range(sizes.bandit_seeds)) if seeds is None else list(seeds)
    dials = {**CONTROLLED_WM, **(wm_dials or {})}
    base = sizes.bandit
    specs: dict[str, dict[str, Any]] = {
        "real": {"arm": "real"}, "pure WM": {"arm": "wm"}, "WMRL": {"arm": "wmrl"},
        "anchors only": {"arm": "anchors_only"},
        "no correction": {"arm": "wmrl", "debias": False, "denoise": False},
        "denoise only": {"arm": "wmrl", "debias": False, "denoise": True},
        "debias only": {"arm": "wmrl", "debias": True, "denoise": False},
    }
    for fraction in sizes.anchor_sweep:
        specs[f"WMRL @{fraction:g}"] = {"arm": "wmrl", "anchor_fraction": fraction}
        specs[f"anchors only @{fraction:g}"] = {"arm": "anchors_only", "anchor_fraction": fraction}
    for lr in learning_rates:
        for arm, label in (("real", "real"), ("wmrl", "WMRL"), ("anchors_only", "anchors only")):
            specs[f"{label} lr={lr:g}"] = {"arm": arm, "learning_rate": lr}
    logs_by_seed, optimum, initial, targets, floors = [], [], [], [], []
    for seed in seeds:
        env = ControlledBandit(seed=seed)
        wm = HandmadeWorldModel(env, seed=seed, **dials)
        logs = run_arms(env, {"handmade": wm}, base, specs, seed)
        logs_by_seed.append(logs)
        optimum.append(env.optimum)
        initial.append(logs["real"].values[0])
        targets.append(initial[-1] + sizes.bandit_target_fraction * (env.optimum - initial[-1]))
        floors.append(env.optimum - float(env.mean[int(np.argmax(wm.expected("bandit")))]))
        if progress:
            progress(f"controlled problem: seed {seed} done ({len(specs)} runs)")
    arms = _summarize(logs_by_seed, optimum, targets)
    return {
        "seeds": seeds, "wm_dials": dials, "config": asdict(base), "optimum": optimum, "initial": initial,
        "targets": targets, "predicted_wm_floor": floors, "predicted_wm_floor_summary": summarize(floors),
        "arms": arms,
        "ratio_real_over_wmrl": ratio_summary(arms["real"]["compute_to_target"], arms["WMRL"]["compute_to_target"]),
        "ratio_anchors_over_wmrl": ratio_summary(arms["anchors only"]["compute_to_target"],
                                                 arms["WMRL"]["compute_to_target"]),
        "refit_example": [r for r in logs_by_seed[0]["WMRL"].refits[:3]],
    }


def research_setup(sizes: WMRLSizes, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The research environment, its evaluation tables and both world models, built and measured.

    The learned world model for each task is trained on every *other* dataset the kit
    uses (the tasks and iris); its build cost counts those executions once each plus
    the fits (CPU seconds; in work units, the executions). The hand-made one is charged the
    learned one's measured per-query CPU cost and the same work per query.
    """
    env = ResearchEnv(tasks=sizes.research_tasks, pool_size=sizes.pool_size, seed=0, cpu_limit_s=sizes.cpu_limit_s)
    tasks = ResearchTasks(env)
    start = time.perf_counter()
    for task in tasks.tasks:
        tasks.true_values(task)
        if progress:
            progress(f"research tasks: {task} graded for every config ({time.perf_counter() - start:.0f} s)")
    train = tuple(dict.fromkeys(sizes.research_tasks + ("iris",)))
    learned = LearnedWorldModel(tasks, train, seed=0)
    if progress:
        progress(f"learned world model built ({time.perf_counter() - start:.0f} s)")
    learned_stats = {t: measure_world_model(learned, tasks, t) for t in tasks.tasks}
    cost_per_query = float(np.mean([s["cost_per_query"] for s in learned_stats.values()]))
    handmade = HandmadeWorldModel(tasks, exponent=2.0, config_error=0.1, noise=0.1, cost_per_query=cost_per_query)
    handmade_stats = {t: measure_world_model(handmade, tasks, t) for t in tasks.tasks}
    return {"env": env, "tasks": tasks, "world_models": {"learned": learned, "handmade": handmade},
            "stats": {"learned": learned_stats, "handmade": handmade_stats},
            "build_costs": {"learned": learned.build_s, "handmade": 0.0},
            "build_work": {"learned": learned.build_work, "handmade": 0.0}, "wm_train_datasets": train}


def research_experiment(sizes: WMRLSizes, setup: dict[str, Any], seeds: list[int] | None = None,
                        progress: Callable[[str], None] | None = None,
                        log_refits: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Check 5: the arms on research tasks with real, sandboxed execution, over seeds.

    Arms: real-execution GRPO, anchors-only, and for each world model (learned,
    hand-made) pure WM, WMRL and the three other cells of the ablation. Compute is
    counted in work units (1 per execution, :data:`~wmkit.envs.research.PREDICTION_WORK` per
    prediction, the learned world model's build executions), which two same-seed runs agree
    on exactly; the measured CPU seconds (executions, predictions, build) are kept beside them
    (``ratios_cpu_s``). The target for compute-to-target is ``J0 + q·(J* − J0)``.
    """
    seeds = list(range(sizes.research_seeds)) if seeds is None else list(seeds)
    tasks = setup["tasks"]
    specs: dict[str, dict[str, Any]] = {"real": {"arm": "real"}, "anchors only": {"arm": "anchors_only"}}
    for wm_name in setup["world_models"]:
        specs[f"pure WM ({wm_name})"] = {"arm": "wm", "world_model": wm_name}
        specs[f"WMRL ({wm_name})"] = {"arm": "wmrl", "world_model": wm_name}
        for cell, (debias, denoise) in ABLATION.items():
            if cell != "both":
                specs[f"{cell} ({wm_name})"] = {"arm": "wmrl", "debias": debias, "denoise": denoise,
                                                "world_model": wm_name}
    logs_by_seed = []
    for seed in seeds:
        logs_by_seed.append(run_arms(tasks, setup["world_models"], sizes.research, specs, seed,
                                     build_costs=setup["build_costs"], log_refits=log_refits,
                                     build_work=setup.get("build_work")))
        if progress:
            progress(f"research tasks: seed {seed} done ({len(specs)} runs)")
    optimum = tasks.optimum
    initial = logs_by_seed[0]["real"].values[0]
    target = initial + sizes.target_fraction * (optimum - initial)
    arms = _summarize(logs_by_seed, [optimum] * len(seeds), [target] * len(seeds))
    result = {"seeds": seeds, "config": asdict(sizes.research), "optimum": optimum, "initial": initial,
              "target": target, "arms": arms, **_research_ratios(arms, setup["world_models"]),
              "refit_example": logs_by_seed[0][f"WMRL ({next(iter(setup['world_models']))})"].refits[:3]}
    return result


def _research_ratios(arms: dict[str, Any], world_models) -> dict[str, dict]:
    """Check 5's compute ratios to the target, per world model (work units, without the build, CPU s)."""
    result: dict[str, dict] = {"ratios": {}, "ratios_no_build": {}, "ratios_cpu_s": {}}
    for wm_name in world_models:
        wmrl = arms[f"WMRL ({wm_name})"]
        result["ratios"][wm_name] = {
            "real_over_wmrl": ratio_summary(arms["real"]["compute_to_target"], wmrl["compute_to_target"]),
            "anchors_over_wmrl": ratio_summary(arms["anchors only"]["compute_to_target"], wmrl["compute_to_target"]),
        }
        result["ratios_no_build"][wm_name] = {
            "real_over_wmrl": ratio_summary(arms["real"]["compute_to_target_no_build"],
                                            wmrl["compute_to_target_no_build"]),
        }
        result["ratios_cpu_s"][wm_name] = {
            "real_over_wmrl": ratio_summary(arms["real"]["compute_to_target_cpu_s"], wmrl["compute_to_target_cpu_s"]),
            "anchors_over_wmrl": ratio_summary(arms["anchors only"]["compute_to_target_cpu_s"],
                                               wmrl["compute_to_target_cpu_s"]),
        }
    return result


def ratio_at_levels(arms: dict[str, Any], numerator: str, denominator: str, initial: list[float] | float,
                    optimum: list[float] | float, fractions: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)
                    ) -> dict[float, dict[str, Any]]:
    """Compute-to-target ratio ``numerator/denominator`` for several target levels
    ``J0 + q·(J* − J0)``: how much the headline ratio depends on where the bar is set."""
    n_seeds = len(arms[numerator]["values"])
    initial = [initial] * n_seeds if np.isscalar(initial) else list(initial)
    optimum = [optimum] * n_seeds if np.isscalar(optimum) else list(optimum)

    def reach(arm: dict[str, Any], seed: int, level: float) -> float | None:
        return next((c for v, c in zip(arm["values"][seed], arm["total_compute"][seed]) if v >= level), None)

    out = {}
    for q in fractions:
        levels = [j0 + q * (opt - j0) for j0, opt in zip(initial, optimum)]
        out[q] = ratio_summary([reach(arms[numerator], s, lv) for s, lv in enumerate(levels)],
                               [reach(arms[denominator], s, lv) for s, lv in enumerate(levels)])
    return out


def learning_rate_sweep(sizes: WMRLSizes, setup: dict[str, Any], learning_rates: tuple[float, ...],
                        seeds: list[int], progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Real-execution GRPO, anchors-only and WMRL (both world models) at several step sizes.

    The compute-to-target ratio is not a property of the method alone: a step size that
    suits one arm may waste or destabilize another. Returns, per learning rate, each
    arm's final value and compute to target, and the ratios.
    """
    tasks = setup["tasks"]
    specs = {"real": {"arm": "real"}, "anchors only": {"arm": "anchors_only"},
             **{f"WMRL ({w})": {"arm": "wmrl", "world_model": w} for w in setup["world_models"]}}
    out: dict[str, Any] = {"learning_rates": list(learning_rates), "by_lr": {}}
    for lr in learning_rates:
        logs_by_seed = [run_arms(tasks, setup["world_models"], replace(sizes.research, learning_rate=lr), specs,
                                 seed, build_costs=setup["build_costs"], build_work=setup.get("build_work"))
                        for seed in seeds]
        initial = logs_by_seed[0]["real"].values[0]
        target = initial + sizes.target_fraction * (tasks.optimum - initial)
        arms = _summarize(logs_by_seed, [tasks.optimum] * len(seeds), [target] * len(seeds))
        out["by_lr"][lr] = {
            "final": {name: arm["final"] for name, arm in arms.items()},
            "compute_to_target": {name: summarize(arm["compute_to_target"]) for name, arm in arms.items()},
            "ratio_real_over_wmrl": {w: ratio_summary(arms["real"]["compute_to_target"],
                                                      arms[f"WMRL ({w})"]["compute_to_target"])
                                     for w in setup["world_models"]},
            "ratio_anchors_over_wmrl": {w: ratio_summary(arms["anchors only"]["compute_to_target"],
                                                         arms[f"WMRL ({w})"]["compute_to_target"])
                                        for w in setup["world_models"]},
        }
        if progress:
            progress(f"learning rate {lr:g} done")
    return out


def first_wins(candidate: list[float | None], other: list[float | None]) -> int:
    """Seeds where ``candidate`` reached the target with less compute than ``other``
    (never reaching counts as infinite compute; neither reaching is no win)."""
    inf = float("inf")
    return sum((c if c is not None else inf) < (o if o is not None else inf) for c, o in zip(candidate, other))


def final_differences(a: dict[str, Any], b: dict[str, Any], key: str = "final") -> list[float | None]:
    """Per-seed paired differences a − b of two arms' `key` (their summaries keep the seeds' values in order)."""
    return stats.differences(a[key]["values"], b[key]["values"])


def _row(claim: str, paper: str, kit: str, judged: stats.Verdict | tuple[str, str]) -> dict[str, str]:
    verdict, reason = (judged.verdict, judged.reason) if isinstance(judged, stats.Verdict) else judged
    return {"claim": claim, "paper": paper, "kit": kit, "verdict": verdict, "reason": reason}


def _ablation_order(finals: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """The ablation's order no correction < denoise < debias < both, judged step by step on the
    per-seed differences (each step with :func:`wmkit.stats.verdict`, then :func:`wmkit.stats.all_of`)."""
    pairs = list(itertools.pairwise(ABLATION))
    steps = [stats.verdict(final_differences(finals[hi], finals[lo])) for lo, hi in pairs]
    verdict, reason = stats.all_of(steps)
    return verdict, " | ".join(f"{hi} − {lo}: {v.verdict}" for (lo, hi), v in zip(pairs, steps)) + f" ({reason})"


def claim_table(research: dict[str, Any], wm_name: str = "learned") -> list[dict[str, str]]:
    """The reproduction table: each paper claim, the paper's number, the kit's, and its verdict by
    :func:`wmkit.stats.verdict` over seeds (with the reason)."""
    arms = research["arms"]
    wmrl_name = f"WMRL ({wm_name})"
    real, wmrl, anchors = arms["real"], arms[wmrl_name], arms["anchors only"]
    n = len(real["compute_to_target"])
    rows = []
    ratio = research["ratios"][wm_name]["real_over_wmrl"]
    wins = first_wins(wmrl["compute_to_target"], real["compute_to_target"])
    rows.append(_row("less training compute than real-execution GRPO", PAPER["compute_ratio"],
                     f"real/WMRL compute (work units: 1 per execution) to reach J ≥ {research['target']:.3f}: "
                     f"{fmt(ratio, 2)}× (seeds where both reached it"
                     + (f"; in measured CPU s {fmt(research['ratios_cpu_s'][wm_name]['real_over_wmrl'], 2)}×"
                        if wm_name in research.get("ratios_cpu_s", {}) else "")
                     + f"); WMRL there first in {wins}/{n} seeds; judged on the log of the censored ratio per seed (> 0)",
                     stats.verdict(log_censored_ratios(arms, "real", wmrl_name), "higher", 0.0)))
    final_vs_real = stats.verdict(final_differences(wmrl, real), "higher", -1e-9)
    rows.append(_row("WMRL's final score ≥ real-execution GRPO's", PAPER["final_score"],
                     f"{fmt(wmrl['final'])} vs {fmt(real['final'])} (WMRL − real per seed: "
                     f"{stats.describe(final_vs_real.summary)})", final_vs_real))
    ablation = {cell: arms[f"{cell} ({wm_name})" if cell != "both" else wmrl_name] for cell in ABLATION}
    order = sorted(ablation, key=lambda c: ablation[c]["final"]["mean"])
    rows.append(_row("ablation: no correction < denoise < debias < both",
                     " → ".join(f"{v}" for v in PAPER["ablation"].values()),
                     " → ".join(f"{ablation[c]['final']['mean']:.3f}" for c in ABLATION)
                     + f" (kit's order of means: {' < '.join(order)})", _ablation_order(ablation)))
    both_vs_none = stats.verdict(final_differences(ablation["both"], ablation["no correction"]))
    rows.append(_row("ablation: both corrections beat no correction",
                     f"{PAPER['ablation']['both']} vs {PAPER['ablation']['no correction']}",
                     f"both − none per seed: {stats.describe(both_vs_none.summary)}", both_vs_none))
    anchor_wins = first_wins(wmrl["compute_to_target"], anchors["compute_to_target"])
    rows.append(_row("(kit's control) WMRL reaches the target with less compute than the anchors alone",
                     "not reported",
                     f"anchors-only/WMRL compute to target {fmt(research['ratios'][wm_name]['anchors_over_wmrl'], 2)}×, "
                     f"WMRL there first in {anchor_wins}/{n} seeds; judged on the log of the censored ratio per seed (> 0)",
                     stats.verdict(log_censored_ratios(arms, "anchors only", wmrl_name), "higher", 0.0)))
    final_vs_anchors = stats.verdict(final_differences(wmrl, anchors))
    rows.append(_row("(kit's control) WMRL ends higher than the anchors alone", "not reported",
                     f"final {fmt(wmrl['final'])} vs anchors-only {fmt(anchors['final'])} (WMRL − anchors-only per "
                     f"seed: {stats.describe(final_vs_anchors.summary)})", final_vs_anchors))
    return rows


def research_findings(research: dict[str, Any], setup: dict[str, Any], wm_name: str = "learned") -> list[str]:
    """Computed sentences on *why* the research-task verdicts came out as they did."""
    arms = research["arms"]
    lines = []
    real_ctt = summarize(arms["real"]["compute_to_target"])
    anchors_ctt = summarize(arms["anchors only"]["compute_to_target"])
    if real_ctt["mean"] and anchors_ctt["mean"]:
        lines.append(
            f"Batch size: real-execution GRPO on the anchor groups alone reached the target with "
            f"{real_ctt['mean'] / anchors_ctt['mean']:.1f}× less compute than on all groups "
            f"({anchors_ctt['mean']:.0f} vs {real_ctt['mean']:.0f} executions' worth of work). With a constant step size and gradients "
            "averaged over the batch, progress per step barely depends on the batch when gradient noise is small "
            "(deterministic executions, a small config space), so most executions of real GRPO buy noise reduction "
            "it does not need — and a ratio against it mostly measures 1/anchor-fraction.")
    build = setup.get("build_work", {}).get(wm_name, 0.0)
    wmrl_arm = arms[f"WMRL ({wm_name})"]
    wmrl_ctt = summarize(wmrl_arm["compute_to_target"])
    if wmrl_ctt["mean"]:
        predictions_work = np.mean(wmrl_arm["total_cost"]) - build - np.mean(wmrl_arm["total_executions"])
        lines.append(f"World-model cost: building the {wm_name} world model took {build:.0f} executions "
                     f"({setup['build_costs'].get(wm_name, 0.0):.1f} CPU s measured here), "
                     f"{100 * build / wmrl_ctt['mean']:.0f}% of WMRL's compute to the target "
                     f"({wmrl_ctt['mean']:.0f} work units); its predictions cost {predictions_work:.1f} work units per run.")
    wm_stats = setup["stats"][wm_name]
    lines.append(
        f"World-model quality: rank correlation with the real grades {np.mean([s['spearman'] for s in wm_stats.values()]):.2f} "
        f"(mean over tasks); trusting its favourite config loses {np.mean([s['floor_gap'] for s in wm_stats.values()]):.3f} "
        f"grade on average; the part of its error an affine map cannot explain has std "
        f"{np.mean([s['nonaffine_std'] for s in wm_stats.values()]):.3f}, of which fresh noise is "
        f"{np.mean([s['noise_std'] for s in wm_stats.values()]):.3f}: most of it is tied to configs, which no monotone "
        "map of the score can remove — only the anchors counteract it.")
    debias = arms[f"debias only ({wm_name})"]["final"]["mean"]
    none = arms[f"no correction ({wm_name})"]["final"]["mean"]
    lines.append(f"Debiasing alone moved the final score from {none:.3f} (no correction) to {debias:.3f}: "
                 + ("it helped." if debias > none else "it did not help; see the flattened map below."))
    return lines


def controlled_verdicts(controlled: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Check 4's claims, each judged by :func:`wmkit.stats.verdict` over seeds: claim -> {verdict, reason}.

    Final gaps are compared as per-seed paired differences (the arms of one seed share its
    instance); compute as the log of the per-seed censored ratio (> 0: WMRL cheaper; never reaching
    the target counts as at best 1×, see :func:`log_censored_ratio`)."""
    arms = controlled["arms"]

    def entry(judged) -> dict[str, str]:
        verdict, reason = (judged.verdict, judged.reason) if isinstance(judged, stats.Verdict) else judged
        return {"verdict": verdict, "reason": reason}

    cells = {c: arms["WMRL" if c == "both" else c] for c in ABLATION}
    return {
        "pure WM floors above real (final gap)":
            entry(stats.verdict(final_differences(arms["pure WM"], arms["real"], "final_gap"))),
        "WMRL ends closer to J* than pure WM":
            entry(stats.verdict(final_differences(arms["pure WM"], arms["WMRL"], "final_gap"))),
        "WMRL reaches the target with less compute than real":
            entry(stats.verdict(log_censored_ratios(arms, "real", "WMRL"), "higher", 0.0)),
        "WMRL reaches the target with less compute than anchors-only":
            entry(stats.verdict(log_censored_ratios(arms, "anchors only", "WMRL"), "higher", 0.0)),
        "WMRL ends closer to J* than anchors-only":
            entry(stats.verdict(final_differences(arms["anchors only"], arms["WMRL"], "final_gap"))),
        "ablation order: none < denoise < debias < both": entry(_ablation_order(cells)),
    }


def check_options(check: str = "all", **_) -> None:
    if check not in ("4", "5", "all"):
        raise ValueError(f"--check must be 4, 5 or all, not {check!r}")


def run_wmrl_seed(profile: Profile, seed: int, runs_root: Path, sizes: WMRLSizes, check: str = "all") -> dict:
    """``python -m wmkit run wmrl``, one seed: check 4 (:func:`controlled_experiment`) and check 5
    (:func:`research_experiment` on the research setup, built once per process), or `check` "4" / "5",
    without their per-step curves."""
    record: dict[str, Any] = {}
    if check in ("4", "all"):
        record["controlled"] = _brief(controlled_experiment(sizes, seeds=[seed]))
    if check in ("5", "all"):
        record["research"] = _brief(research_experiment(sizes, _shared_research_setup(sizes), seeds=[seed]))
    return record


def combine_wmrl_seeds(profile: Profile, records: dict[int, dict], sizes: WMRLSizes, check: str = "all") -> dict:
    """The seeds' records as one :func:`controlled_experiment` / :func:`research_experiment` over all of
    them (each seed's runs are its own; the summaries over seeds are taken again), and the claim table."""
    report: dict[str, Any] = {"profile": profile.name, "seeds": len(records)}
    parts = [r for r in records.values()]
    if "controlled" in parts[0]:
        runs = [r["controlled"] for r in parts]
        c = {"seeds": [s for r in runs for s in r["seeds"]], "wm_dials": runs[0]["wm_dials"],
             "config": runs[0]["config"]}
        for key in ("optimum", "initial", "targets", "predicted_wm_floor"):
            c[key] = [v for r in runs for v in r[key]]
        c["predicted_wm_floor_summary"] = summarize(c["predicted_wm_floor"])
        c["arms"] = arms = _merge_arms([r["arms"] for r in runs])
        c["ratio_real_over_wmrl"] = ratio_summary(arms["real"]["compute_to_target"], arms["WMRL"]["compute_to_target"])
        c["ratio_anchors_over_wmrl"] = ratio_summary(arms["anchors only"]["compute_to_target"],
                                                     arms["WMRL"]["compute_to_target"])
        c["refit_example"] = runs[0]["refit_example"]
        report["controlled"] = c
    if "research" in parts[0]:
        runs = [r["research"] for r in parts]
        first = runs[0]
        result = {"seeds": [s for r in runs for s in r["seeds"]], "config": first["config"],
                  "optimum": first["optimum"], "initial": first["initial"], "target": first["target"],
                  "arms": _merge_arms([r["arms"] for r in runs])}
        result.update(_research_ratios(result["arms"], first["ratios"]))
        result["refit_example"] = first["refit_example"]
        report["research"] = result
        report["verdicts"] = {wm: claim_table(result, wm) for wm in first["ratios"]}
    return report


def _merge_arms(per_seed: list[dict[str, dict]]) -> dict[str, dict]:
    """Arms of one-seed results (:func:`_summarize`) as those of one result over the seeds: per-seed
    lists joined, summaries taken again over the joined values."""
    arms = {}
    for name in per_seed[0]:
        arm = {}
        for key, value in per_seed[0][name].items():
            if isinstance(value, dict) and "values" in value:
                arm[key] = summarize([v for r in per_seed for v in r[name][key]["values"]])
            else:
                arm[key] = [v for r in per_seed for v in r[name][key]]
        arms[name] = arm
    return arms


def seed_result(result: dict[str, Any], index: int) -> dict[str, Any]:
    """Seed number `index` of a result over several seeds (:func:`controlled_experiment`,
    :func:`research_experiment`) as a one-seed result, the shape of a benchmark record's (the inverse of
    :func:`_merge_arms`): per-seed lists cut to that seed, summaries taken again over its value."""
    arms = {}
    for name, arm in result["arms"].items():
        arms[name] = {key: summarize([value["values"][index]]) if isinstance(value, dict) and "values" in value
                      else [value[index]] for key, value in arm.items()}
    return {**result, "arms": arms, "seeds": [result["seeds"][index]]}


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    """A result without its per-step curves (for the command line's JSON)."""
    arms = {name: {k: v for k, v in arm.items() if k not in ("values", "total_compute", "total_compute_cpu_s",
                                                              "execution_compute", "executions")}
            for name, arm in result["arms"].items()}
    return {**{k: v for k, v in result.items() if k != "arms"}, "arms": arms}


def _without_curves(result: dict) -> dict:
    """A WMRL result without its per-step curves (the record keeps the summaries)."""
    curves = ("values", "total_compute", "total_compute_cpu_s", "execution_compute", "executions")
    return {**result, "arms": {name: {k: v for k, v in arm.items() if k not in curves}
                               for name, arm in result["arms"].items()}}


def censored_ratio(arms: dict, numerator: str, denominator: str, seed: int = 0) -> dict:
    """Compute to the target, ``numerator`` / ``denominator`` arm, of seed number `seed` (the index
    in the arms' per-seed lists; a benchmark record holds one seed).

    A run that never reached the target counts as infinitely expensive, as in
    :func:`wmkit.wmrl.experiment.first_wins`: when only the denominator missed, the ratio is 0 (the claim
    "the denominator is cheaper" fails in that seed); when only the numerator missed, the
    numerator is charged its whole compute, a lower bound of the true ratio (so the value never
    overstates the claim); None when neither reached it.
    """
    a, b = arms[numerator]["compute_to_target"][seed], arms[denominator]["compute_to_target"][seed]
    out = {"numerator_reached": a is not None, "denominator_reached": b is not None,
           "numerator_compute": a, "denominator_compute": b}
    if b is None:
        return {**out, "ratio": 0.0 if a is not None else None}
    if a is None:
        return {**out, "ratio": arms[numerator]["total_cost"][seed] / b if b > 0 else None, "lower_bound": True}
    return {**out, "ratio": a / b if b > 0 else None}


def log_censored_ratio(arms: dict, numerator: str, denominator: str, seed: int = 0) -> float | None:
    """log of :func:`censored_ratio`: compute ratios are judged on the log scale, where 1× is 0 and
    2× and 0.5× lie at the same distance from it (a t-interval of raw ratios can reach below 0, which
    no ratio can).

    Where only the denominator missed the target (ratio 0, log −∞), its compute to the target
    exceeds its whole compute, so the true ratio is below numerator compute / denominator total
    compute; the value is the log of that bound, capped at 0 (1×): finite, and never on the claim's
    side. None where :func:`censored_ratio` gives None."""
    out = censored_ratio(arms, numerator, denominator, seed)
    ratio = out["ratio"]
    if ratio is None:
        return None
    if ratio > 0:
        return math.log(ratio)
    total = arms[denominator]["total_cost"][seed]
    a = out["numerator_compute"]
    return min(0.0, math.log(a / total)) if a and total and a > 0 and total > 0 else 0.0


def log_censored_ratios(arms: dict, numerator: str, denominator: str) -> list[float | None]:
    """:func:`log_censored_ratio` of every seed (the per-seed values a compute claim is judged on, > 0)."""
    return [log_censored_ratio(arms, numerator, denominator, seed)
            for seed in range(len(arms[denominator]["compute_to_target"]))]


def log_ratio_against_both(arms: dict, wmrl: str) -> float | None:
    """The smaller of log(real / `wmrl`) and log(anchors only / `wmrl`) compute to target
    (:func:`log_censored_ratio`): above 0 only where WMRL reaches the target with less compute than
    real execution *and* than the anchors-only control, which executes the same 10% of groups with
    no world model; a ratio over real execution alone would credit the world model with what
    executing fewer groups saves. None where either ratio is undefined."""
    parts = [log_censored_ratio(arms, baseline, wmrl) for baseline in ("real", "anchors only")]
    return None if any(p is None for p in parts) else min(parts)


def record_log_ratio_controlled(result: dict) -> float | None:
    """A benchmark claim's value: :func:`log_ratio_against_both` of WMRL in one wmrl_controlled record."""
    return log_ratio_against_both(result["arms"], "WMRL")


def record_log_ratio_research(result: dict) -> float | None:
    """A benchmark claim's value: :func:`log_ratio_against_both` of WMRL (learned) in one wmrl_research record."""
    return log_ratio_against_both(result["arms"], "WMRL (learned)")


def run_wmrl_controlled(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """WMRL check 4: :func:`wmkit.wmrl.experiment.controlled_experiment` (known optimum, the paper's error model)."""
    result = _without_curves(controlled_experiment(sizes, seeds=[seed]))
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
        setup = research_setup(sizes)
        atexit.register(setup["env"].close)
        _research_setups[key] = setup
    return _research_setups[key]


def run_wmrl_research(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """WMRL check 5: research tasks executed for real, with the learned and the hand-made world model."""
    setup = _shared_research_setup(sizes)
    result = research_experiment(sizes, setup, seeds=[seed])
    out = _without_curves(result)
    out["build_costs"] = setup["build_costs"]
    out["build_work"] = setup["build_work"]
    out["compute_ratio"] = {w: {"real_over_wmrl": censored_ratio(out["arms"], "real", f"WMRL ({w})")}
                            for w in setup["world_models"]}
    return out
