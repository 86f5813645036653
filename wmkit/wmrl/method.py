"""WMRL: anchored world-model rewards, online isotonic debiasing, inverse-variance denoising.

WMRL grades most rollouts with a cheap world model instead of running them, and
models the world model's grade as ``r̂ = r + b + ξ``: the real reward, a systematic
bias ``b`` and noise ``ξ``. Three pieces correct it, in this order each step:

1. **Anchors** (:func:`select_anchor_groups`): about 10% of the groups (at least
   one per step) are graded by *both* the world model and real execution. They
   are the only ground truth in the loop, and the only thing that costs real
   compute.
2. **Online debiasing** (:class:`OnlineDebiaser`): a monotone map ``f`` from
   world-model score to real score, fitted by isotonic regression on the anchor
   pairs, removes the systematic part ``b``; every world-model score goes through
   ``f`` before advantages are formed. The map must be *non-affine* to do
   anything: GRPO standardizes rewards within a group, which cancels any affine
   map ``a·r + c`` (``a > 0``). It is monotone so that it never reorders the
   candidates the world model ranked right.
3. **Inverse-variance denoising** (:class:`AnchorWeighter`): what remains is noise,
   which cannot be subtracted, only averaged down. The anchor groups give a clean
   but scarce gradient estimate (variance ``V_E`` of its mean), the world-model groups a
   plentiful noisy one (``V_WM``); the minimum-variance combination weights each by the
   inverse of its variance (:func:`fuse_estimates`). The code sums over rollouts instead,
   so the weight it needs is per rollout: ``σ²_WM/σ²_E``, the ratio of one rollout's
   variances (:func:`rollout_weight`), not ``V_WM/V_E``. In practice that is an up-weight
   ``w = clip(1 + c·s², 1, w_max)`` on the advantages of anchor rollouts, where ``s²``
   measures how much the calibrated world model still disagrees with the truth.

Finally :func:`grpo_advantages` standardizes each group over its graded rollouts
and multiplies anchor groups by ``w``.

The loop that uses them, :func:`run_grpo`, is one readable path for every arm. Per step
it samples groups of configs from :class:`FactorisedSoftmaxPolicy` (one softmax per config
field), grades them, turns grades into advantages and takes one policy-gradient step. The
arm decides who grades what:

============== ================================================================
``real``        every group executed for real (real-execution GRPO)
``wm``          every group graded by the world model only (pure WM)
``wmrl``        anchor groups (``anchor_fraction``, at least one per step) graded by
                both; the others by the WM, debiased (isotonic) and/or denoised
                (anchor up-weight) as ``debias`` / ``denoise`` say
``anchors_only`` only the anchor groups, executed, no world model (the control)
============== ================================================================

Where this follows the authors' code
------------------------------------
Public repository ``xiyuanyang45/WMRL``: ``wmrl/anchor.py`` (anchor count
``max(min_per_step, round(fraction·n))``, Python's ``round``, so halves go to the
even neighbour), ``wmrl/debias.py`` (equal-width bins over [0, 1]; the knot of a
bin is the *mean world-model score* of its pairs, not the bin centre; PAV weighted
by bin counts; the map between knots is linear interpolation and flat beyond the
outer knots; fewer than two populated bins means "stay at identity"; the refit
counter only resets on a successful fit), ``wmrl/denoise.py`` (population variance
``var(s)`` with a 1e-9 floor; EMA factor ``1 − 0.5**(1/half_life)``, the first
observation initialising it; ``c = (2 − 1) / EMA`` fixed once after the warm-up,
and only if the EMA is positive), ``wmrl/advantage.py`` (population std, ``eps``
added to the std, groups with fewer than two graded rollouts skipped whole) and
``wmrl/loop.py`` (anchor pairs are pushed into the debiaser *before* the group's
disagreement is measured, so ``s²`` is measured on the calibrated residual).
The paper states the fusion of two gradient estimates; the code applies it as the
anchor up-weight, and so does the kit.
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from wmkit.envs.research import (
    CostLedger,
    Space,
)
from wmkit.wmrl.config import WMRLConfig

__all__ = [
    "AnchorWeighter",
    "IsotonicMap",
    "OnlineDebiaser",
    "RefitEvent",
    "advantages_to_trl_rewards",
    "binned_isotonic_fit",
    "centered_residual",
    "fuse_estimates",
    "grpo_advantages",
    "residual_variance_ratio",
    "select_anchor_groups",
]

ARMS = ("real", "wm", "wmrl", "anchors_only")
"""The arms of run_grpo: who grades which groups (see WMRLConfig.arm)."""


def select_anchor_groups(
    n_groups: int, fraction: float = 0.1, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Boolean mask over a step's groups: True for the groups graded by real execution.

    Exactly ``min(n_groups, max(1, round(fraction · n_groups)))`` groups are chosen
    uniformly at random without replacement (Python's ``round``: 2.5 → 2, 1.5 → 2).
    ``rng`` is a numpy Generator, a seed, or None for a fresh one.
    """
    if n_groups < 0:
        raise ValueError(f"n_groups must be >= 0, got {n_groups}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    mask = np.zeros(n_groups, dtype=bool)
    if n_groups == 0:
        return mask
    n_anchor = min(n_groups, max(1, round(fraction * n_groups)))
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    mask[generator.choice(n_groups, size=n_anchor, replace=False)] = True
    return mask


@dataclass(frozen=True)
class IsotonicMap:
    """A fitted monotone map: linear between knots, flat beyond the outer ones."""

    knots_x: np.ndarray
    """Increasing world-model scores (one per populated bin: the mean score in it)."""
    knots_y: np.ndarray
    """Non-decreasing calibrated scores at those knots (PAV-pooled mean real scores)."""

    def __call__(self, scores: Any) -> np.ndarray:
        return np.interp(np.asarray(scores, dtype=float), self.knots_x, self.knots_y)


def _pool_adjacent_violators(values: Sequence[float], weights: Sequence[float]) -> np.ndarray:
    """Weighted least-squares non-decreasing fit of ``values`` (one output per input).

    A stack of blocks: each new value starts a block; while the last block's mean is
    below the one before it, the two merge into their weighted mean.
    """
    block_means: list[float] = []
    block_weights: list[float] = []
    block_sizes: list[int] = []
    for value, weight in zip(values, weights):
        block_means.append(float(value))
        block_weights.append(float(weight))
        block_sizes.append(1)
        while len(block_means) > 1 and block_means[-2] > block_means[-1]:
            mean_right, weight_right, size_right = block_means.pop(), block_weights.pop(), block_sizes.pop()
            mean_left, weight_left, size_left = block_means.pop(), block_weights.pop(), block_sizes.pop()
            merged_weight = weight_left + weight_right
            block_means.append((mean_left * weight_left + mean_right * weight_right) / merged_weight)
            block_weights.append(merged_weight)
            block_sizes.append(size_left + size_right)
    return np.repeat(block_means, block_sizes)


def binned_isotonic_fit(x: Any, y: Any, n_bins: int = 10) -> IsotonicMap | None:
    """Fit a monotone map from world-model scores ``x`` to real scores ``y``.

    Cuts [0, 1] into ``n_bins`` equal bins (scores outside are put in the end bins),
    takes the mean ``x`` and mean ``y`` of every populated bin, then pools adjacent
    violators (weighted by how many pairs each bin holds) so that the bin means of
    ``y`` never decrease. Returns the map through those knots, or ``None`` when
    fewer than two bins are populated: too little spread to fit anything, so the
    caller should keep the identity (as the official code does).

    Binning makes the fit cheap and stable on a few hundred pairs; its price is a
    small residual bias within each bin (the map is linear between bin means).
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x has {x.size} scores but y has {y.size}")
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    if x.size < 2:
        return None
    inner_edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    bin_index = np.clip(np.digitize(x, inner_edges), 0, n_bins - 1)
    counts = np.bincount(bin_index, minlength=n_bins)
    populated = np.flatnonzero(counts)
    if populated.size < 2:
        return None
    x_means = np.bincount(bin_index, weights=x, minlength=n_bins)[populated] / counts[populated]
    y_means = np.bincount(bin_index, weights=y, minlength=n_bins)[populated] / counts[populated]
    return IsotonicMap(knots_x=x_means, knots_y=_pool_adjacent_violators(y_means, counts[populated]))


class _SklearnIsotonicMap:
    """scikit-learn's exact isotonic regression on all pairs, behind the same call.

    Not the debiaser WMRL runs (that is `binned_isotonic_fit`, the authors' estimator, whose
    pooling step equals sklearn's `IsotonicRegression` on the bin means weighted by the bin
    counts: tests/test_debias.py): kept as the unbinned reference that notebook 04's check 2
    measures the binning's residual bias against."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        from sklearn.isotonic import IsotonicRegression

        self.model = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(x, y)

    def __call__(self, scores: Any) -> np.ndarray:
        scores = np.asarray(scores, dtype=float)
        return self.model.predict(scores.ravel()).reshape(scores.shape)


def centered_residual(predicted: Any, real: Any) -> float:
    """Mean of ``((p − p̄) − (s − s̄))²``: disagreement that survives centering.

    GRPO only sees differences within a group, so a constant offset between the
    world model and the truth is harmless and is not counted.
    """
    predicted = np.asarray(predicted, dtype=float)
    real = np.asarray(real, dtype=float)
    return float((((predicted - predicted.mean()) - (real - real.mean())) ** 2).mean())


@dataclass(frozen=True)
class RefitEvent:
    """One refit of :class:`OnlineDebiaser`, for logging."""

    refit: int
    """1 for the first fit, 2 for the second, ..."""
    n_pairs_seen: int
    """Anchor pairs added since the debiaser was created, when this fit happened."""
    n_pairs_used: int
    """Pairs in the buffer the map was fitted on (at most ``buffer_size``)."""
    residual_before: float
    """:func:`centered_residual` of the raw world-model scores on the buffer."""
    residual_after: float
    """The same after the new map: what debiasing could not remove (bins, noise)."""


@dataclass
class OnlineDebiaser:
    """Keeps the anchor pairs and a monotone world-model → real-score map up to date.

    Call :meth:`add_pairs` with each anchor group's (world-model score, real score)
    pairs, and call the object on world-model scores to calibrate them. It is the
    identity until ``min_pairs`` pairs have arrived, so a run that never sees ground
    truth trains on raw world-model scores rather than on something undefined; then
    it refits each time ``refit_every`` new pairs have arrived, on the last
    ``buffer_size`` pairs (FIFO), so the map follows the world model's drift as the
    policy moves.
    """

    min_pairs: int = 200
    """Pairs needed before the first fit; the map is the identity until then."""
    refit_every: int = 64
    """New pairs between two refits."""
    buffer_size: int = 5000
    """Most recent pairs kept for fitting; older ones are dropped first."""
    n_bins: int = 10
    """Equal-width bins over [0, 1] for ``method="binned"``."""
    method: str = "binned"
    """``"binned"`` (the official binned PAV) or ``"sklearn"`` (exact isotonic regression on all pairs)."""

    refits: int = field(default=0, init=False)
    """How many fits have succeeded so far."""
    history: list[RefitEvent] = field(default_factory=list, init=False, repr=False)
    """One :class:`RefitEvent` per successful fit, oldest first."""
    n_pairs_seen: int = field(default=0, init=False)
    """Pairs added since creation (including those the buffer has dropped)."""
    mapping: Any = field(default=None, init=False, repr=False)
    """The current map (callable), or None while it is the identity."""

    def __post_init__(self) -> None:
        if self.method not in ("binned", "sklearn"):
            raise ValueError(f'method must be "binned" or "sklearn", got {self.method!r}')
        if self.refit_every < 1:
            raise ValueError(f"refit_every must be >= 1, got {self.refit_every}")
        if self.buffer_size < max(self.min_pairs, 2):
            raise ValueError(
                f"buffer_size ({self.buffer_size}) must be at least min_pairs ({self.min_pairs}) and 2, "
                "or the map could never be fitted"
            )
        self._buffer: deque[tuple[float, float]] = deque(maxlen=self.buffer_size)
        self._new_since_fit = 0

    @property
    def n_pairs(self) -> int:
        """Pairs currently in the buffer."""
        return len(self._buffer)

    @property
    def pairs(self) -> np.ndarray:
        """The anchor pairs in the buffer, one (world-model score, real score) row each (a copy)."""
        return np.asarray(self._buffer, dtype=float).reshape(-1, 2)

    @property
    def fitted(self) -> bool:
        """False while the map is still the identity."""
        return self.mapping is not None

    def add_pairs(self, wm_scores: Sequence[float | None], real_scores: Sequence[float | None]) -> int:
        """Record anchor pairs; refit whenever enough new ones have arrived. Returns refits done.

        Pairs are taken one at a time, as the official code does, so a large batch
        may trigger more than one refit. A pair with a missing (None) or non-finite
        score on either side is skipped: an ungraded rollout is excluded, never
        scored 0.
        """
        if len(wm_scores) != len(real_scores):
            raise ValueError(f"{len(wm_scores)} world-model scores but {len(real_scores)} real scores")
        refits_before = self.refits
        for wm_score, real_score in zip(wm_scores, real_scores):
            if not (_is_finite_number(wm_score) and _is_finite_number(real_score)):
                continue
            self._buffer.append((float(wm_score), float(real_score)))
            self.n_pairs_seen += 1
            self._new_since_fit += 1
            if len(self._buffer) >= self.min_pairs and self._new_since_fit >= self.refit_every:
                self.refit()
        return self.refits - refits_before

    def refit(self) -> bool:
        """Fit the map on the buffer now. Returns False (map unchanged) if it cannot be fitted."""
        if len(self._buffer) < 2:
            return False
        pairs = np.asarray(self._buffer, dtype=float)
        wm, real = pairs[:, 0], pairs[:, 1]
        if self.method == "binned":
            mapping = binned_isotonic_fit(wm, real, self.n_bins)
        elif np.ptp(wm) > 0:
            mapping = _SklearnIsotonicMap(wm, real)
        else:
            mapping = None
        if mapping is None:
            return False
        self.mapping = mapping
        self._new_since_fit = 0
        self.refits += 1
        self.history.append(
            RefitEvent(
                refit=self.refits,
                n_pairs_seen=self.n_pairs_seen,
                n_pairs_used=len(wm),
                residual_before=centered_residual(wm, real),
                residual_after=centered_residual(mapping(wm), real),
            )
        )
        return True

    def __call__(self, wm_scores: Any) -> np.ndarray:
        """Calibrated scores (a float array of the same shape); identity until fitted."""
        scores = np.asarray(wm_scores, dtype=float)
        return scores.copy() if self.mapping is None else np.asarray(self.mapping(scores), dtype=float)


def _is_finite_number(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def residual_variance_ratio(calibrated_wm: Any, real: Any) -> float | None:
    """How much one anchor group's calibrated world-model scores still disagree with the truth.

    ``s² = mean(((d − d̄) − (s − s̄))²) / var(s)`` for calibrated world-model scores
    ``d`` and real scores ``s`` of the same rollouts (population variance). Centered,
    because GRPO only sees differences within a group; divided by ``var(s)`` so that
    easy and hard groups are comparable. ``None`` when ``var(s) < 1e-9``: a group
    whose real scores are all equal carries no ranking information and must be
    skipped, not counted as 0.
    """
    d = np.asarray(calibrated_wm, dtype=float).ravel()
    s = np.asarray(real, dtype=float).ravel()
    if d.shape != s.shape:
        raise ValueError(f"{d.size} calibrated scores but {s.size} real scores")
    if s.size == 0:
        return None
    real_variance = float(s.var())
    if real_variance < 1e-9:
        return None
    return centered_residual(d, s) / real_variance


@dataclass
class AnchorWeighter:
    """The up-weight ``w`` on anchor-group advantages, driven by measured disagreement.

    Writing one world-model rollout's variance as ``σ²_WM = (1 + c·s²)·σ²_E``, with ``σ²_E``
    one real rollout's, the inverse-variance weight of each anchor rollout relative to a
    world-model rollout is ``σ²_WM/σ²_E = 1 + c·s²`` (:func:`rollout_weight`). These are
    per-rollout variances — ``s²`` is a per-rollout mean squared residual — and per rollout
    is how the weight is applied (to every advantage of an anchor group); the variances of
    the two group means, ``V_E = σ²_E/n_E`` and ``V_WM = σ²_WM/n_WM``, have the ratio
    ``(n_E/n_WM)·σ²_WM/σ²_E`` instead.
    ``s²`` is an EMA of :func:`residual_variance_ratio` over anchor groups; ``c`` is
    fixed once, after ``calibrate_after`` groups, so that ``w`` equals
    ``target_weight`` (2) at that moment: afterwards ``w`` follows how the
    disagreement *moves*, without anyone having to know its absolute scale. Before
    that ``w`` is exactly 1.
    """

    half_life: float = 64
    """Anchor groups after which an observation's weight in the EMA has halved."""
    calibrate_after: int = 32
    """Anchor groups (with a defined s²) observed before ``c`` is fixed."""
    w_max: float = 4.0
    """Upper clip of the weight (its lower clip is 1)."""
    target_weight: float = 2.0
    """The weight at the moment ``c`` is fixed."""

    ema: float | None = field(default=None, init=False)
    """Smoothed s², or None before the first observation."""
    n_observed: int = field(default=0, init=False)
    """Groups folded into the EMA (skipped groups not counted)."""
    c: float | None = field(default=None, init=False)
    """The scale constant, None until fixed."""

    def __post_init__(self) -> None:
        if self.half_life <= 0:
            raise ValueError(f"half_life must be positive, got {self.half_life}")
        if self.w_max < 1:
            raise ValueError(f"w_max must be >= 1, got {self.w_max}")

    @property
    def smoothing(self) -> float:
        """EMA factor: ``ema ← (1 − a)·ema + a·s²`` with ``a = 1 − 0.5**(1/half_life)``."""
        return 1.0 - 0.5 ** (1.0 / max(1.0, self.half_life))

    @property
    def weight(self) -> float:
        """``clip(1 + c·ema, 1, w_max)``; exactly 1.0 until ``c`` is fixed."""
        if self.c is None or self.ema is None:
            return 1.0
        return float(min(self.w_max, max(1.0, 1.0 + self.c * self.ema)))

    def observe(self, s2: float | None) -> float:
        """Fold one anchor group's s² into the EMA (None is skipped); return the weight."""
        if s2 is None:
            return self.weight
        if self.ema is None:
            self.ema = float(s2)
        else:
            self.ema = (1.0 - self.smoothing) * self.ema + self.smoothing * float(s2)
        self.n_observed += 1
        if self.c is None and self.n_observed >= self.calibrate_after and self.ema > 1e-12:
            self.c = (self.target_weight - 1.0) / self.ema
        return self.weight

    def observe_group(self, calibrated_wm: Any, real: Any) -> float:
        """:meth:`observe` the :func:`residual_variance_ratio` of one anchor group."""
        return self.observe(residual_variance_ratio(calibrated_wm, real))


def rollout_weight(rollout_var_e: float, rollout_var_wm: float) -> float:
    """The inverse-variance weight of one anchor rollout relative to one world-model rollout.

    ``w = σ²_WM/σ²_E``, the ratio of the *per-rollout* variances (one real grade's,
    one world-model grade's). With it, the per-rollout sum the code forms,
    ``(w·Σ_anchor x + Σ_wm y) / (w·n_E + n_WM)``, is exactly :func:`fuse_estimates` of the
    two group means, whose variances are ``V_E = σ²_E/n_E`` and ``V_WM = σ²_WM/n_WM``:
    ``w = (n_WM/n_E)·V_WM/V_E``, not ``V_WM/V_E``. Variances must be positive and finite.
    """
    if not (0 < rollout_var_e < math.inf and 0 < rollout_var_wm < math.inf):
        raise ValueError(f"per-rollout variances must be positive and finite, got {rollout_var_e}, {rollout_var_wm}")
    return float(rollout_var_wm / rollout_var_e)


def fuse_estimates(g_e: Any, v_e: Any, g_wm: Any, v_wm: Any) -> tuple[Any, Any]:
    """Minimum-variance unbiased combination of two unbiased estimates of the same quantity.

    ``g = (g_E/V_E + g_WM/V_WM) / (1/V_E + 1/V_WM)`` with variance
    ``v = 1 / (1/V_E + 1/V_WM) = V_WM / (1 + V_WM/V_E)``, below both ``V_E`` and
    ``V_WM``. ``V_E`` and ``V_WM`` are the variances of the two *estimates* (here, group
    means); as a weight per rollout this is :func:`rollout_weight`. Works on numbers or
    numpy arrays; an infinite variance ignores that estimate. Variances must be positive.
    """
    v_e_arr, v_wm_arr = np.asarray(v_e, dtype=float), np.asarray(v_wm, dtype=float)
    if np.any(v_e_arr <= 0) or np.any(v_wm_arr <= 0):
        raise ValueError("variances must be positive")
    precision = 1.0 / v_e_arr + 1.0 / v_wm_arr
    if np.any(precision == 0):
        raise ValueError("at least one of the two variances must be finite")
    fused = (np.asarray(g_e, dtype=float) / v_e_arr + np.asarray(g_wm, dtype=float) / v_wm_arr) / precision
    variance = 1.0 / precision
    if fused.ndim == 0 and variance.ndim == 0:
        return float(fused), float(variance)
    return fused, variance


def grpo_advantages(
    group_rewards: Sequence[Sequence[float | None]],
    anchor_mask: Sequence[bool],
    weight: float = 1.0,
    eps: float = 1e-4,
    min_graded: int = 2,
) -> list[list[float | None]]:
    """GRPO advantages per group, over graded rollouts only, anchor groups up-weighted.

    For each group: ``(r − mean) / (std + eps)`` over the rollouts whose reward is
    not None (population std), times ``weight`` when the group is an anchor group.
    An ungraded rollout (None) keeps None: it is excluded, never scored 0, because a
    0 would claim the attempt was bad, which a missing grade does not say. A group
    with fewer than ``min_graded`` graded rollouts is all None (one grade has
    nothing to be compared with), as in the official code.

    Why this runs in a reward post-processor with TRL's ``scale_rewards="none"``:
    TRL forms advantages itself from whatever the reward functions return. With
    ``scale_rewards="group"`` (its default) it divides each group by its own std,
    so multiplying a whole group's rewards by ``w`` does nothing:
    ``(w·r − w·r̄) / (w·σ) = (r − r̄) / σ``. The anchor weight must therefore be
    applied *after* standardization, here, and the results handed to TRL as the
    rewards with ``scale_rewards="none"``; TRL then only subtracts the group mean,
    which is already 0. See :func:`advantages_to_trl_rewards` for the last step.
    """
    if len(group_rewards) != len(anchor_mask):
        raise ValueError(f"{len(group_rewards)} groups but an anchor mask of {len(anchor_mask)}")
    if not math.isfinite(weight) or weight <= 0:
        raise ValueError(f"weight must be a positive number, got {weight}")
    advantages: list[list[float | None]] = []
    for rewards, is_anchor in zip(group_rewards, anchor_mask):
        graded_index = [i for i, r in enumerate(rewards) if r is not None]
        out: list[float | None] = [None] * len(rewards)
        if len(graded_index) >= min_graded:
            graded = np.asarray([rewards[i] for i in graded_index], dtype=float)
            standardized = (graded - graded.mean()) / (graded.std() + eps)
            if is_anchor:
                standardized = standardized * weight
            for i, value in zip(graded_index, standardized):
                out[i] = float(value)
        advantages.append(out)
    return advantages


def advantages_to_trl_rewards(advantages: Sequence[Sequence[float | None]]) -> list[float]:
    """Flatten per-group advantages into the per-completion list a TRL reward function returns.

    None (ungraded) becomes 0.0. That is *not* scoring the rollout 0: these numbers
    are advantages, and with ``scale_rewards="none"`` TRL subtracts the group mean,
    which stays 0 because the graded advantages already sum to 0 — so an ungraded
    rollout gets advantage 0, i.e. no push either way, and its siblings' advantages
    are unchanged. Groups must be in TRL's order (``num_generations`` consecutive
    completions per prompt).
    """
    return [0.0 if a is None else float(a) for group in advantages for a in group]


class FactorisedSoftmaxPolicy:
    """The agent: one softmax per config field, conditioned on the task.

    The logits of field ``h`` for task ``t`` are ``shared[h] + per_task[h][t]``, so what
    works on every dataset is learnt once and dataset quirks on top. A config's
    probability is the product over its *active* fields (the kNN field only counts
    when the model is kNN). The policy gradient of ``log π(config)`` with respect to a
    field's logits is ``onehot(choice) − softmax`` — that is all :meth:`gradient` computes;
    :meth:`apply` adds it to the logits.
    """

    def __init__(self, space: Space, tasks: tuple[str, ...] | list[str]):
        self.space = space
        self.tasks = list(tasks)
        self.shared = [np.zeros(len(h.options)) for h in space.heads]
        self.per_task = [np.zeros((len(self.tasks), len(h.options))) for h in space.heads]
        names = space.names
        self._parent = [names.index(h.active_when[0]) if h.active_when else -1 for h in space.heads]
        self._parent_option = [space.heads[p].options.index(h.active_when[1]) if p >= 0 else -1
                               for h, p in zip(space.heads, self._parent)]

    def probs(self, task: int, head: int) -> np.ndarray:
        logits = self.shared[head] + self.per_task[head][task]
        e = np.exp(logits - logits.max())
        return e / e.sum()

    def active_mask(self, choices: np.ndarray, head: int) -> np.ndarray:
        parent = self._parent[head]
        if parent < 0:
            return np.ones(len(choices), dtype=bool)
        return choices[:, parent] == self._parent_option[head]

    def sample(self, task: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` configs as an ``(n, n_heads)`` int array of option indices, -1 where inactive."""
        choices = np.full((n, len(self.space.heads)), -1, dtype=int)
        for head in range(len(self.space.heads)):
            active = self.active_mask(choices, head)
            if active.any():
                cdf = np.cumsum(self.probs(task, head))
                draws = np.searchsorted(cdf, rng.random(int(active.sum())) * cdf[-1], side="right")
                choices[active, head] = np.minimum(draws, len(cdf) - 1)
        return choices

    def gradient(self, task: int, choices: np.ndarray, advantages: np.ndarray) -> list[np.ndarray]:
        """Σ_i A_i ∇ log π(config_i) with respect to each field's logits (one task's rollouts)."""
        grads = []
        for head in range(len(self.space.heads)):
            active = self.active_mask(choices, head)
            a = advantages[active]
            p = self.probs(task, head)
            g = np.bincount(choices[active, head], weights=a, minlength=len(p)) - a.sum() * p
            grads.append(g)
        return grads

    def apply(self, gradients: dict[int, list[np.ndarray]], step_size: float) -> None:
        """One gradient-ascent step on the logits from per-task gradients (all computed first,
        with the policy that sampled the rollouts). The shared logits get the sum over tasks."""
        for task, grads in gradients.items():
            for head, g in enumerate(grads):
                self.shared[head] += step_size * g
                self.per_task[head][task] += step_size * g

    def config_probabilities(self, task: int, configs: np.ndarray) -> np.ndarray:
        """Probability of each config of an ``(n, n_heads)`` array (e.g. the whole space)."""
        log_p = np.zeros(len(configs))
        for head in range(len(self.space.heads)):
            active = configs[:, head] >= 0
            log_p[active] += np.log(self.probs(task, head)[configs[active, head]])
        return np.exp(log_p)

    def greedy(self, task: int) -> tuple[int, ...]:
        """The most likely option of every active field."""
        choice = np.full((1, len(self.space.heads)), -1, dtype=int)
        for head in range(len(self.space.heads)):
            if self.active_mask(choice, head)[0]:
                choice[0, head] = int(np.argmax(self.probs(task, head)))
        return tuple(choice[0])


@dataclass
class RunLog:
    """What one run did, step by step."""

    config: WMRLConfig
    values: list[float] = field(default_factory=list)
    """Expected real value J(π) of the policy (mean over tasks) before step 0, 1, ..., T."""
    task_values: list[list[float]] = field(default_factory=list)
    """The same per task."""
    compute: list[dict[str, float]] = field(default_factory=list)
    """Ledger snapshot at each evaluation (what had been charged before it)."""
    weights: list[float] = field(default_factory=list)
    """Anchor weight w used at each step."""
    refits: list[dict[str, Any]] = field(default_factory=list)
    """One entry per isotonic refit: step, pairs seen, residual before and after."""
    ungraded: int = 0
    """Rollouts the world model did not grade (None), excluded from the update."""
    final_policy: Any = None
    """The trained policy."""
    debiaser: Any = None
    """The OnlineDebiaser at the end of the run (its map and anchor pairs), for inspection."""

    @property
    def final_value(self) -> float:
        """Mean J over the last 10% of evaluations (at least one): a single point is noisy,
        because the policy keeps moving under a constant step size."""
        tail = max(1, len(self.values) // 10)
        return float(np.mean(self.values[-tail:]))


def evaluate_policy(policy: FactorisedSoftmaxPolicy, env: Any) -> list[float]:
    """Exact expected real value of the policy on every task: Σ_c π(c)·value(c)."""
    configs = np.asarray(env.configs)
    return [float(policy.config_probabilities(t, configs) @ env.true_values(task))
            for t, task in enumerate(env.tasks)]


def run_grpo(env: Any, world_model: Any, config: WMRLConfig, build_cost: float = 0.0,
             log_refits: Callable[[str], None] | None = None, build_work: float = 0.0) -> RunLog:
    """Train a policy with GRPO for one arm. Returns the :class:`RunLog`.

    What it reduces to, per step: sample ``groups_per_step`` tasks round-robin and
    ``group_size`` configs each; grade (see the arm table in the module docstring);
    advantages ``(r − mean)/(std + eps)`` per group over graded rollouts, anchor groups
    times ``w``; ``θ += γ · Σ A·∇log π / (rollouts in the batch)``. World-model arms start
    with ``build_cost`` CPU seconds and ``build_work`` work units charged. ``log_refits`` (e.g. ``print``) receives one line per
    isotonic refit.
    """
    if config.arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {config.arm!r}")
    rng = np.random.default_rng(config.seed)
    policy = FactorisedSoftmaxPolicy(env.space, env.tasks)
    ledger = CostLedger()
    uses_wm = config.arm in ("wm", "wmrl")
    if uses_wm:
        ledger.charge_build(build_cost, build_work)
    debiaser = OnlineDebiaser(min_pairs=config.debias_min_pairs, refit_every=config.debias_refit_every,
                              buffer_size=max(config.debias_buffer, config.debias_min_pairs, 2),
                              n_bins=config.debias_bins, method=config.debias_method)
    weighter = AnchorWeighter(half_life=config.weight_half_life, calibrate_after=config.weight_calibrate_after,
                              w_max=config.weight_max)
    log = RunLog(config=config)

    def record() -> None:
        values = evaluate_policy(policy, env)
        log.task_values.append(values)
        log.values.append(float(np.mean(values)))
        log.compute.append(ledger.snapshot())

    def calibrate(scores: list[float | None]) -> list[float | None]:
        if not (config.debias and debiaser.fitted):
            return scores
        graded = [i for i, s in enumerate(scores) if s is not None]
        out: list[float | None] = list(scores)
        for i, value in zip(graded, debiaser([scores[i] for i in graded])):
            out[i] = float(value)
        return out

    record()
    n_tasks = len(env.tasks)
    for step in range(config.steps):
        task_ids = [(step * config.groups_per_step + j) % n_tasks for j in range(config.groups_per_step)]
        if config.arm == "real":
            anchor = np.ones(len(task_ids), dtype=bool)
        elif config.arm == "wm":
            anchor = np.zeros(len(task_ids), dtype=bool)
        else:
            anchor = select_anchor_groups(len(task_ids), config.anchor_fraction, rng)
        if config.arm == "anchors_only":  # the control: the anchor groups alone, nothing else
            task_ids = [t for t, a in zip(task_ids, anchor) if a]
            anchor = np.ones(len(task_ids), dtype=bool)
        groups: list[np.ndarray] = [np.empty(0)] * len(task_ids)
        for t in sorted(set(task_ids)):  # one sampling call per task, split into groups
            members = [g for g, task_id in enumerate(task_ids) if task_id == t]
            drawn = policy.sample(t, len(members) * config.group_size, rng)
            for i, g in enumerate(members):
                groups[g] = drawn[i * config.group_size:(i + 1) * config.group_size]
        seeds = [rng.integers(0, 2**31, config.group_size) for _ in task_ids]
        rewards: list[list[float | None]] = [[] for _ in task_ids]
        # Anchor groups first: their pairs update the debiaser before world-model groups are calibrated.
        for g in np.flatnonzero(anchor):
            task = env.tasks[task_ids[g]]
            real = env.real_grades(task, groups[g], seeds[g], ledger)
            rewards[g] = list(real)
            if config.arm == "wmrl":
                predicted = world_model.predict(task, groups[g], seeds[g], rng, ledger)
                refits_before = debiaser.refits
                if config.debias:  # arms without debiasing never fit (nor log) a map
                    debiaser.add_pairs(predicted, real)
                for event in debiaser.history[refits_before:]:
                    entry = {"step": step, **asdict(event)}
                    log.refits.append(entry)
                    if log_refits is not None:
                        log_refits(f"  step {step}: isotonic refit #{event.refit} on {event.n_pairs_used} pairs "
                                   f"(centered residual {event.residual_before:.4f} -> {event.residual_after:.4f})")
                if config.denoise:
                    pairs = [(c, r) for c, r in zip(calibrate(predicted), real) if c is not None]
                    if len(pairs) >= 2:
                        weighter.observe_group([c for c, _ in pairs], [r for _, r in pairs])
        for g in np.flatnonzero(~anchor):
            predicted = world_model.predict(env.tasks[task_ids[g]], groups[g], seeds[g], rng, ledger)
            log.ungraded += sum(p is None for p in predicted)
            rewards[g] = calibrate(predicted)
        weight = weighter.weight if (config.arm == "wmrl" and config.denoise) else 1.0
        log.weights.append(weight)
        advantages = grpo_advantages(rewards, anchor, weight=weight)
        n_rollouts = sum(len(r) for r in rewards)
        gradients: dict[int, list[np.ndarray]] = {}
        for t in sorted(set(task_ids)):
            members = [g for g, task_id in enumerate(task_ids) if task_id == t]
            # Ungraded rollouts (None) are excluded: no gradient, rather than a score of 0.
            graded = [(groups[g][i], a) for g in members for i, a in enumerate(advantages[g]) if a is not None]
            if graded:
                choices = np.array([c for c, _ in graded])
                gradients[t] = policy.gradient(t, choices, np.array([a for _, a in graded], dtype=float))
        policy.apply(gradients, config.learning_rate / n_rollouts)
        record()
    log.final_policy = policy
    log.debiaser = debiaser
    return log


COMPUTE_MEASURES = ("work", "cpu_s")
"""What compute-to-target counts: ``work`` (execution units, the same in every same-seed run)
or ``cpu_s`` (measured CPU seconds, which move by a few percent between runs)."""


def compute_to_target(log: RunLog, target: float, include_build: bool = True, measure: str = "work") -> float | None:
    """Compute charged before the policy's expected real value first reached ``target``; None if never.

    ``measure`` is ``"work"`` (execution units) or ``"cpu_s"`` (measured CPU seconds)."""
    if measure not in COMPUTE_MEASURES:
        raise ValueError(f"measure must be one of {COMPUTE_MEASURES}, got {measure!r}")
    total, build = ("work", "build_work") if measure == "work" else ("total_s", "build_s")
    for value, spent in zip(log.values, log.compute):
        if value >= target:
            return spent[total] if include_build else spent[total] - spent[build]
    return None
