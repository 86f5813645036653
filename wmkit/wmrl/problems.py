"""The problems WMRL is tried on, and their world models.

* :class:`ControlledBandit` — a policy-gradient problem with a known optimum and noisy
  outcomes, whose world model follows the paper's error model ``r̂ = r + b + ξ`` exactly.
* :class:`ResearchTasks` — research tasks (scikit-learn datasets) executed for real.
* :class:`HandmadeWorldModel` and :class:`LearnedWorldModel` — the two world models of the
  research tasks; :func:`measure_world_model` reports their bias and noise.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from wmkit.envs.research import (
    PREDICTION_WORK,
    CostLedger,
    Head,
    ResearchEnv,
    Space,
    config_features,
    dataset_meta_features,
)


@dataclass
class ControlledBandit:
    """A policy-gradient problem with a known optimum and noisy outcomes (check 4).

    Configs are ``n_fields`` fields × ``n_options`` options. Each config has a true mean
    ``μ(c) ∈ [0.3, 0.7]`` (a random additive utility per option, seeded) and a
    *two-point* outcome ``r = μ(c) ± σ(c)``, each sign with probability ½, decided by
    the rollout's outcome seed — experiments are noisy. ``σ(c) = outcome_noise``, plus
    ``risk`` for the options of the first field ranked 2nd and 3rd by utility: *risky*
    methods, nearly as good on average but with more spread. The objective is
    ``J(π) = E_π[μ(c)]``; its optimum ``J* = max μ`` is known. A real execution costs
    ``execution_cost`` units.

    Why the risky options: a world model that distorts scores by a convex ``f`` prefers
    high-variance configs (``E f(r) > f(E r)``), a bias that moves the optimum and that a
    monotone recalibration can undo — the setting of Theorem 4. Why the outcome noise:
    the theorems' variance terms only matter when gradients are noisy.
    """

    seed: int = 0
    """Seed of the instance (utilities)."""
    n_fields: int = 3
    """Config fields."""
    n_options: int = 8
    """Options per field."""
    outcome_noise: float = 0.2
    """Half-spread σ of every config's outcome."""
    risk: float = 0.15
    """Extra half-spread of the risky options."""
    execution_cost: float = 1.0
    """Charged per real execution (the unit of compute of this problem)."""

    def __post_init__(self) -> None:
        rng = np.random.default_rng([self.seed, 404])
        self.tasks = ("bandit",)
        self.space = Space(tuple(Head(f"f{i}", f"f{i}", tuple(range(self.n_options))) for i in range(self.n_fields)))
        self.configs = self.space.enumerate()
        self._array = np.asarray(self.configs)
        utilities = rng.normal(size=(self.n_fields, self.n_options))
        raw = utilities[np.arange(self.n_fields), self._array].sum(axis=1)
        self.mean = 0.3 + 0.4 * (raw - raw.min()) / (raw.max() - raw.min())
        ranks = np.argsort(-utilities[0])
        spread_by_option = np.full(self.n_options, self.outcome_noise)
        spread_by_option[ranks[1:3]] += self.risk
        self.spread = np.minimum(spread_by_option[self._array[:, 0]], np.minimum(self.mean, 1 - self.mean))

    def config_indices(self, choices: np.ndarray) -> np.ndarray:
        """Row of each config in :attr:`configs` (the space is a full product: mixed radix)."""
        strides = self.n_options ** np.arange(self.n_fields - 1, -1, -1)
        return np.asarray(choices) @ strides

    def outcomes(self, task: str, choices: np.ndarray, outcome_seeds: np.ndarray) -> np.ndarray:
        """The real outcome of each rollout (what execution would return)."""
        idx = self.config_indices(choices)
        sign = np.where(np.asarray(outcome_seeds) % 2 == 0, 1.0, -1.0)
        return self.mean[idx] + sign * self.spread[idx]

    def real_grades(self, task: str, choices: np.ndarray, outcome_seeds: np.ndarray, ledger: CostLedger) -> list[float]:
        values = self.outcomes(task, choices, outcome_seeds)
        for _ in values:
            ledger.charge_execution(self.execution_cost)
        return [float(v) for v in values]

    def true_values(self, task: str) -> np.ndarray:
        """Expected real reward of every config (index = :attr:`configs`)."""
        return self.mean

    @property
    def optimum(self) -> float:
        return float(self.mean.max())


class ResearchTasks:
    """:class:`~wmkit.envs.research.ResearchEnv` seen through the loop's interface."""

    def __init__(self, env: ResearchEnv):
        self.env = env
        self.tasks = env.tasks
        self.space = env.space
        self.configs = env.configs
        self._index = {c: i for i, c in enumerate(self.configs)}
        self._tables: dict[str, np.ndarray] = {}

    def config_indices(self, choices: np.ndarray) -> np.ndarray:
        """Row of each config in :attr:`configs`."""
        return np.array([self._index[tuple(int(k) for k in c)] for c in choices], dtype=int)

    def true_values(self, task: str) -> np.ndarray:
        if task not in self._tables:
            self._tables[task] = self.env.grade_table(task)
        return self._tables[task]

    def outcomes(self, task: str, choices: np.ndarray, outcome_seeds: np.ndarray) -> np.ndarray:
        """Real grades looked up without charging (only the hand-made world model peeks)."""
        return self.true_values(task)[self.config_indices(choices)]

    def real_grades(self, task: str, choices: np.ndarray, outcome_seeds: np.ndarray, ledger: CostLedger) -> list[float]:
        return self.env.real_grades(task, [tuple(int(k) for k in c) for c in choices], outcome_seeds, ledger)

    @property
    def optimum(self) -> float:
        return float(np.mean([self.true_values(t).max() for t in self.tasks]))


@dataclass
class HandmadeWorldModel:
    """The paper's error model with a dial for each part: ``r̂ = clip(f(r) + e_c + ξ, 0, 1)``.

    ``f(r) = r ** exponent`` is a monotone, non-affine distortion (1 = none), ``e_c`` a
    config-specific error (fixed per task and config, std ``config_error``) and ``ξ``
    fresh Gaussian noise (std ``noise``) drawn on every query. With probability
    ``abstain`` a query returns None (an unparseable world-model answer): ungraded.

    It is a *stand-in*: to construct its error it peeks at the real outcome ``r`` of the
    rollout, which a real world model could not do. That peek is not charged; each
    prediction is charged ``cost_per_query`` (set it to a real world model's measured
    cost). Reduces to the truth with exponent 1 and all other dials 0.
    """

    env: Any
    """The environment whose outcomes it distorts (ControlledBandit or ResearchTasks)."""
    exponent: float = 2.0
    """f(r) = r**exponent: >1 convex (risk-seeking), <1 concave (over-optimistic)."""
    config_error: float = 0.05
    """Std of the config-specific error e_c (a bias no monotone map can remove)."""
    noise: float = 0.05
    """Std of the fresh noise ξ."""
    abstain: float = 0.0
    """Probability that a query returns None."""
    cost_per_query: float = 0.01
    """Charged per prediction (seconds, or execution units for the controlled problem)."""
    work_per_query: float = PREDICTION_WORK
    """Work units charged per prediction (a real execution is 1)."""
    seed: int = 0
    """Seed of the config-specific errors."""

    def __post_init__(self) -> None:
        self._errors = {task: np.random.default_rng([self.seed, 7, i]).normal(size=len(self.env.configs))
                        for i, task in enumerate(self.env.tasks)}

    def distort(self, r: np.ndarray) -> np.ndarray:
        return np.clip(r, 0.0, 1.0) ** self.exponent

    def predict(self, task: str, choices: np.ndarray, outcome_seeds: np.ndarray, rng: np.random.Generator,
                ledger: CostLedger) -> list[float | None]:
        r = self.env.outcomes(task, choices, outcome_seeds)
        idx = self.env.config_indices(choices)
        predicted = np.clip(self.distort(r) + self.config_error * self._errors[task][idx]
                            + self.noise * rng.standard_normal(len(r)), 0.0, 1.0)
        abstained = rng.random(len(r)) < self.abstain
        ledger.charge_prediction(self.cost_per_query * len(r), len(r), self.work_per_query)
        return [None if a else float(p) for p, a in zip(predicted, abstained)]

    def expected(self, task: str, outcome_values: list[np.ndarray] | None = None) -> np.ndarray:
        """E[r̂] of every config (clipping included), over the outcome distribution and ξ.

        For the controlled bandit the outcome is μ ± σ with equal odds; for research tasks
        it is the grade itself. Exact: E[clip(X, 0, 1)] for Gaussian X in closed form.
        """
        if isinstance(self.env, ControlledBandit):
            outcomes = [self.env.mean + self.env.spread, self.env.mean - self.env.spread]
        else:
            outcomes = [self.env.true_values(task)]
        e = self.config_error * self._errors[task]
        return np.mean([_expected_clip(self.distort(r) + e, self.noise) for r in outcomes], axis=0)


def _expected_clip(mean: np.ndarray, std: float) -> np.ndarray:
    """E[clip(X, 0, 1)] for X ~ N(mean, std²)."""
    mean = np.asarray(mean, dtype=float)
    if std <= 0:
        return np.clip(mean, 0.0, 1.0)

    def partial_expectation(a: np.ndarray) -> np.ndarray:  # E[max(X − a, 0)]
        z = (mean - a) / std
        cdf = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
        pdf = np.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)
        return (mean - a) * cdf + std * pdf

    return partial_expectation(np.zeros_like(mean)) - partial_expectation(np.ones_like(mean))


class LearnedWorldModel:
    """A cheap learned world model: a random forest from (config, dataset) to grade.

    One forest per task, trained *leave-one-dataset-out* on the graded executions of the
    other datasets (every config of the space run on each of them), so it has never
    seen a result on the dataset it predicts for. Inputs: the config's one-hot fields and
    :func:`~wmkit.envs.research.dataset_meta_features`. A query is answered by the mean of
    ``trees_per_query`` trees drawn at random — sampling, like an LM world model at T=1,
    which gives fresh noise per query (``trees_per_query = n_trees`` is deterministic).

    Its build cost — the CPU seconds of every execution it learns from (each counted
    once) plus the fits — is measured into :attr:`build_s`; each prediction is charged
    its measured CPU time. In work units (:class:`~wmkit.envs.research.CostLedger`) the
    build is :attr:`build_work`, the number of executions it learned from (the fits, about
    1% of the build's CPU seconds, are not counted there), and a query
    :data:`~wmkit.envs.research.PREDICTION_WORK`.
    """

    def __init__(self, tasks: ResearchTasks, train_datasets: tuple[str, ...], n_trees: int = 48,
                 trees_per_query: int = 4, min_samples_leaf: int = 2, seed: int = 0):
        from sklearn.ensemble import RandomForestRegressor

        self.env = tasks
        self.trees_per_query = trees_per_query
        configs = np.asarray(tasks.configs)
        self._features = config_features(tasks.space, tasks.configs)
        self._meta = {d: dataset_meta_features(d) for d in set(train_datasets) | set(tasks.tasks)}
        self.forests: dict[str, Any] = {}
        self.train_datasets = {}
        executions_s = 0.0
        executions = 0
        tables = {}
        for dataset in train_datasets:  # executions it learns from: charged once each
            tables[dataset] = tasks.env.grade_table(dataset)
            executions_s += sum(r.cpu_s for r in tasks.env.results(dataset))
            executions += len(configs)
        fit_s = 0.0
        for task in tasks.tasks:
            sources = [d for d in train_datasets if d != task]
            X = np.vstack([self._inputs(d, np.arange(len(configs))) for d in sources])
            y = np.concatenate([tables[d] for d in sources])
            start = time.process_time()
            forest = RandomForestRegressor(n_estimators=n_trees, min_samples_leaf=min_samples_leaf,
                                           random_state=seed, n_jobs=1).fit(X, y)
            fit_s += time.process_time() - start
            self.forests[task] = forest
            self.train_datasets[task] = sources
        self.build_s = executions_s + fit_s
        self.build_work = float(executions)
        """Work units of the build: one per execution it learned from."""
        self.build_detail = {"executions_s": executions_s, "fit_s": fit_s, "executions": executions}

    def _inputs(self, dataset: str, config_indices: np.ndarray) -> np.ndarray:
        meta = np.broadcast_to(self._meta[dataset], (len(config_indices), len(self._meta[dataset])))
        return np.hstack([self._features[config_indices], meta]).astype(np.float32)

    def predict(self, task: str, choices: np.ndarray, outcome_seeds: np.ndarray, rng: np.random.Generator,
                ledger: CostLedger) -> list[float | None]:
        start = time.process_time()
        idx = self.env.config_indices(choices)
        X = self._inputs(task, idx)
        trees = self.forests[task].estimators_
        per_tree = np.stack([tree.predict(X, check_input=False) for tree in trees])  # (n_trees, n)
        picks = np.argsort(rng.random((len(trees), len(idx))), axis=0)[: self.trees_per_query]
        predicted = np.take_along_axis(per_tree, picks, axis=0).mean(axis=0)
        ledger.charge_prediction(time.process_time() - start, len(idx))
        return [float(p) for p in predicted]

    def expected(self, task: str) -> np.ndarray:
        """E[r̂] of every config: the mean over all trees."""
        return self.forests[task].predict(self._inputs(task, np.arange(len(self.env.configs))))


def measure_world_model(world_model: Any, env: Any, task: str, repeats: int = 8, seed: int = 0) -> dict[str, Any]:
    """Bias and noise of a world model on every config of a task, against the real grades.

    Queries every config ``repeats`` times (outcome seeds drawn at random). Returns the
    real value ``r`` and mean prediction ``m`` per config, and: ``bias`` = mean(m − r);
    ``error_std`` = std(m − r) (systematic, per config); ``nonaffine_std`` = std of the
    residual of m after the best affine fit on r (what per-group standardization cannot
    cancel); ``noise_std`` = sqrt(mean per-config variance over repeats) (fresh noise);
    ``spearman`` = rank correlation of m and r; ``floor_gap`` = max r − r(argmax m), the
    real value lost by trusting the world model's favourite; and the measured CPU per
    query.
    """
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    configs = np.asarray(env.configs)
    real = np.asarray(env.true_values(task), dtype=float)
    ledger = CostLedger()
    samples = []
    for _ in range(repeats):
        seeds = rng.integers(0, 2**31, len(configs))
        predicted = world_model.predict(task, configs, seeds, rng, ledger)
        samples.append([np.nan if p is None else p for p in predicted])
    samples = np.asarray(samples)
    mean = np.nanmean(samples, axis=0)
    slope, intercept = np.polyfit(real, mean, 1)
    residual = mean - (slope * real + intercept)
    return {
        "task": task,
        "real": real,
        "predicted_mean": mean,
        "bias": float(np.mean(mean - real)),
        "error_std": float(np.std(mean - real)),
        "affine_fit": (float(slope), float(intercept)),
        "nonaffine_std": float(residual.std()),
        "noise_std": float(np.sqrt(np.nanmean(np.nanvar(samples, axis=0)))),
        "spearman": float(spearmanr(mean, real).statistic),
        "floor_gap": float(real.max() - real[int(np.argmax(mean))]),
        "cost_per_query": ledger.prediction_s / max(1, ledger.predictions),
    }
