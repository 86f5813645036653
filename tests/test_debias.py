"""WMRL anchors, online isotonic debiasing, inverse-variance denoising, advantages."""

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from wmkit.wmrl.method import (
    AnchorWeighter,
    OnlineDebiaser,
    advantages_to_trl_rewards,
    binned_isotonic_fit,
    fuse_estimates,
    grpo_advantages,
    residual_variance_ratio,
    rollout_weight,
    select_anchor_groups,
)

# ---------------------------------------------------------------------- anchors


@pytest.mark.parametrize(
    "n_groups, expected",
    [(1, 1), (3, 1), (10, 1), (15, 2), (25, 2), (35, 4), (100, 10)],  # round(): 1.5 -> 2, 2.5 -> 2, 3.5 -> 4
)
def test_anchor_count(n_groups, expected):
    mask = select_anchor_groups(n_groups, fraction=0.1, rng=0)
    assert mask.dtype == bool and mask.shape == (n_groups,)
    assert mask.sum() == expected


def test_anchor_selection_edge_cases_and_seeding():
    assert select_anchor_groups(0).shape == (0,)
    assert select_anchor_groups(4, fraction=1.0, rng=1).all()
    assert select_anchor_groups(8, fraction=0.0, rng=1).sum() == 1  # at least one per step
    np.testing.assert_array_equal(select_anchor_groups(50, rng=7), select_anchor_groups(50, rng=7))
    with pytest.raises(ValueError):
        select_anchor_groups(10, fraction=1.5)


# ------------------------------------------------------------ isotonic debiasing


def test_binned_pav_hand_example_with_a_violation():
    # 4 bins over [0, 1]; bin means of y: 0.2 (1 pair), 0.6 (1 pair), 0.4 (3 pairs), 0.9 (1 pair).
    # Bins 2 and 3 violate monotonicity and pool to (0.6*1 + 0.4*3) / 4 = 0.45.
    x = [0.10, 0.30, 0.55, 0.60, 0.65, 0.90]
    y = [0.20, 0.60, 0.30, 0.40, 0.50, 0.90]
    fitted = binned_isotonic_fit(x, y, n_bins=4)
    np.testing.assert_allclose(fitted.knots_x, [0.10, 0.30, 0.60, 0.90])
    np.testing.assert_allclose(fitted.knots_y, [0.20, 0.45, 0.45, 0.90])
    # linear between knots, flat beyond the outer ones
    np.testing.assert_allclose(fitted([0.0, 0.2, 0.45, 0.75, 1.0]), [0.20, 0.325, 0.45, 0.675, 0.90])


def test_binned_pav_equals_sklearn_isotonic_on_bin_means_weighted_by_counts():
    """The pooling step of the authors' binned estimator is weighted isotonic regression of the bin
    means: sklearn's IsotonicRegression(sample_weight=counts) gives the same knots, on many draws
    with violations, empty bins and scores outside [0, 1]."""
    rng = np.random.default_rng(1)
    for trial in range(200):
        n, bins = int(rng.integers(2, 80)), int(rng.integers(2, 15))
        x = rng.uniform(-0.1, 1.1, n)
        y = np.clip(x + rng.normal(0, 0.4, n), 0, 1)  # noisy: adjacent bins often violate
        fitted = binned_isotonic_fit(x, y, n_bins=bins)
        if fitted is None:
            continue
        index = np.clip(np.digitize(x, np.linspace(0, 1, bins + 1)[1:-1]), 0, bins - 1)
        counts = np.bincount(index, minlength=bins)
        populated = np.flatnonzero(counts)
        y_means = np.bincount(index, weights=y, minlength=bins)[populated] / counts[populated]
        reference = IsotonicRegression().fit(np.arange(populated.size), y_means, sample_weight=counts[populated])
        np.testing.assert_allclose(fitted.knots_y, reference.predict(np.arange(populated.size)), atol=1e-12,
                                   err_msg=f"trial {trial}")


def test_binned_fit_needs_two_populated_bins():
    assert binned_isotonic_fit([0.51, 0.52, 0.55], [0.1, 0.2, 0.3], n_bins=10) is None
    assert binned_isotonic_fit([0.5], [0.5]) is None
    with pytest.raises(ValueError):
        binned_isotonic_fit([0.1, 0.2], [0.1])


def test_binned_pav_agrees_with_sklearn_within_binning_error():
    rng = np.random.default_rng(0)
    real = rng.uniform(0.0, 1.0, 5000)
    wm = np.clip(np.sqrt(real) + rng.normal(0.0, 0.02, real.size), 0.0, 1.0)  # smooth monotone distortion
    binned = binned_isotonic_fit(wm, real, n_bins=10)
    exact = IsotonicRegression(out_of_bounds="clip").fit(wm, real)
    gap = np.abs(binned(wm) - exact.predict(wm))
    # the true map is x**2; within one bin of width 0.1 it rises by at most 1 - 0.9**2 = 0.19
    edges = np.linspace(0.0, 1.0, 11)
    binning_error = np.max(np.diff(edges**2))
    assert gap.max() <= binning_error
    assert gap.mean() < 0.02
    assert np.all(np.diff(binned.knots_y) >= 0)


def test_online_debiaser_identity_before_min_pairs_then_refits():
    debiaser = OnlineDebiaser(min_pairs=10, refit_every=4)
    x = np.linspace(0.05, 0.95, 30)
    y = x**2
    assert debiaser.add_pairs(x[:9], y[:9]) == 0
    assert not debiaser.fitted and debiaser.refits == 0
    np.testing.assert_array_equal(debiaser([0.3, 0.7]), [0.3, 0.7])  # identity
    assert debiaser.add_pairs(x[9:10], y[9:10]) == 1  # 10th pair: first fit
    assert debiaser.add_pairs(x[10:13], y[10:13]) == 0  # 3 new pairs < refit_every
    assert debiaser.add_pairs(x[13:14], y[13:14]) == 1  # 4th new pair
    assert debiaser.add_pairs(x[14:23], y[14:23]) == 2  # one batch, two refits (at 18 and 22)
    assert debiaser.refits == 4
    assert [event.n_pairs_seen for event in debiaser.history] == [10, 14, 18, 22]
    assert all(event.residual_after <= event.residual_before for event in debiaser.history)
    assert debiaser(0.5) == pytest.approx(0.25, abs=0.02)


def test_online_debiaser_skips_ungraded_pairs():
    debiaser = OnlineDebiaser(min_pairs=2, refit_every=2)
    debiaser.add_pairs([0.1, None, 0.9, float("nan")], [0.0, 0.5, 1.0, 0.3])
    assert debiaser.n_pairs == 2 and debiaser.n_pairs_seen == 2 and debiaser.refits == 1
    np.testing.assert_array_equal(debiaser.pairs, [[0.1, 0.0], [0.9, 1.0]])
    with pytest.raises(ValueError):
        debiaser.add_pairs([0.1], [0.1, 0.2])


def test_online_debiaser_fifo_buffer_is_bounded():
    debiaser = OnlineDebiaser(min_pairs=20, refit_every=20, buffer_size=20)
    x = np.linspace(0.0, 1.0, 20)
    debiaser.add_pairs(x, np.zeros_like(x))  # old behaviour: everything is worth 0
    debiaser.add_pairs(x, np.zeros_like(x))
    debiaser.add_pairs(x, x)  # new behaviour: the world model is right
    assert debiaser.n_pairs == 20 and debiaser.n_pairs_seen == 60 and debiaser.refits == 3
    np.testing.assert_array_equal(debiaser.pairs, np.stack([x, x], axis=1))  # the newest 20 only
    # only the 20 newest pairs are left, so the map is the identity on them
    np.testing.assert_allclose(debiaser([0.2, 0.5, 0.8]), [0.2, 0.5, 0.8], atol=1e-12)


def test_online_debiaser_sklearn_method():
    debiaser = OnlineDebiaser(min_pairs=50, refit_every=50, method="sklearn")
    rng = np.random.default_rng(1)
    x = rng.uniform(0.0, 1.0, 50)
    debiaser.add_pairs(x, x**2)
    assert debiaser.refits == 1
    assert debiaser(0.5) == pytest.approx(0.25, abs=0.05)
    with pytest.raises(ValueError):
        OnlineDebiaser(method="linear")
    with pytest.raises(ValueError):
        OnlineDebiaser(min_pairs=200, buffer_size=100)


# ---------------------------------------------------- inverse-variance denoising


def test_residual_variance_ratio_hand_case():
    # d - mean = [-0.3, 0, 0.3], s - mean = [-0.5, 0, 0.5]; residuals [0.2, 0, -0.2]
    # mean squared residual = 0.08 / 3; var(s) = 0.5 / 3; ratio = 0.16
    assert residual_variance_ratio([0.2, 0.5, 0.8], [0.0, 0.5, 1.0]) == pytest.approx(0.16)
    # a constant offset is invisible to GRPO and is not counted
    assert residual_variance_ratio([0.5, 1.0, 1.5], [0.0, 0.5, 1.0]) == pytest.approx(0.0)


def test_residual_variance_ratio_is_none_without_real_variance():
    assert residual_variance_ratio([0.1, 0.9, 0.5], [1.0, 1.0, 1.0]) is None
    assert residual_variance_ratio([], []) is None


def test_anchor_weight_is_one_before_calibration_and_two_at_it():
    weighter = AnchorWeighter(half_life=1, calibrate_after=3, w_max=4.0)  # EMA factor 0.5
    assert weighter.observe(0.4) == 1.0  # ema 0.4
    assert weighter.observe(None) == 1.0  # skipped, not counted
    assert weighter.n_observed == 1
    assert weighter.observe(0.2) == 1.0  # ema 0.3
    assert weighter.observe(0.1) == pytest.approx(2.0)  # ema 0.2, 3rd group: c = 1 / 0.2 = 5
    assert weighter.c == pytest.approx(5.0)
    assert weighter.observe(0.6) == pytest.approx(3.0)  # ema 0.4 -> 1 + 5 * 0.4
    assert weighter.observe(1.0) == 4.0  # ema 0.7 -> 4.5, clipped to w_max
    for _ in range(60):
        weighter.observe(0.0)
    assert 1.0 <= weighter.weight < 1.001


def test_anchor_weight_defaults():
    weighter = AnchorWeighter()
    for _ in range(31):
        assert weighter.observe_group([0.1, 0.6, 0.8], [0.0, 0.5, 1.0]) == 1.0
        assert weighter.observe_group([0.3, 0.6], [1.0, 1.0]) == 1.0  # var(s) = 0: skipped
    assert weighter.n_observed == 31
    assert weighter.observe_group([0.1, 0.6, 0.8], [0.0, 0.5, 1.0]) == pytest.approx(2.0)


def test_fuse_estimates_formula():
    g, v = fuse_estimates(1.0, 1.0, 3.0, 3.0)
    assert g == pytest.approx((1 / 1 + 3 / 3) / (1 / 1 + 1 / 3))  # 1.5
    assert g == pytest.approx(1.5)
    assert v == pytest.approx(0.75)
    assert v == pytest.approx(3.0 / (1 + 3.0 / 1.0))  # V_WM / (1 + V_WM / V_E)
    assert v < min(1.0, 3.0)
    g_arr, v_arr = fuse_estimates(np.array([1.0, 2.0]), 1.0, np.array([3.0, 2.0]), np.inf)
    np.testing.assert_allclose(g_arr, [1.0, 2.0])
    np.testing.assert_allclose(v_arr, [1.0, 1.0])
    with pytest.raises(ValueError):
        fuse_estimates(1.0, 0.0, 1.0, 1.0)


# -------------------------------------------------------------------- advantages


def test_advantages_with_an_ungraded_rollout_and_an_anchor_group():
    groups = [[1.0, None, 0.0, 0.5], [1.0, 0.0], [0.7, None], [0.2, 0.2, 0.2]]
    advantages = grpo_advantages(groups, anchor_mask=[False, True, False, False], weight=2.0, eps=1e-4)
    std = np.sqrt(((1 - 0.5) ** 2 + (0 - 0.5) ** 2 + 0) / 3)  # 0.4082
    assert advantages[0][1] is None
    assert advantages[0][0] == pytest.approx(0.5 / (std + 1e-4))
    assert advantages[0][2] == pytest.approx(-0.5 / (std + 1e-4))
    assert advantages[0][3] == pytest.approx(0.0)
    assert advantages[1] == pytest.approx([2.0 * 0.5 / (0.5 + 1e-4), -2.0 * 0.5 / (0.5 + 1e-4)])
    assert advantages[2] == [None, None]  # one grade has nothing to compare with
    assert advantages[3] == pytest.approx([0.0, 0.0, 0.0])
    assert advantages_to_trl_rewards(advantages)[:4] == pytest.approx(
        [advantages[0][0], 0.0, advantages[0][2], 0.0]
    )
    with pytest.raises(ValueError):
        grpo_advantages(groups, anchor_mask=[True])


def test_affine_recalibration_cancels_but_a_nonaffine_monotone_one_does_not():
    rewards = np.array([0.1, 0.4, 0.9, 0.6])
    base = grpo_advantages([rewards.tolist()], [False], eps=1e-12)[0]
    affine = grpo_advantages([(3.0 * rewards + 2.0).tolist()], [False], eps=1e-12)[0]
    squared = grpo_advantages([(rewards**2).tolist()], [False], eps=1e-12)[0]
    assert affine == pytest.approx(base, abs=1e-9)
    assert not np.allclose(squared, base, atol=1e-3)
    assert np.argsort(squared).tolist() == np.argsort(base).tolist()  # monotone: same order


def test_rollout_weight_makes_the_per_rollout_sum_the_fused_estimator_hand_case():
    # 2 anchor rollouts of variance 1, 4 world-model rollouts of variance 3 (per rollout).
    # Group means: V_E = 1/2, V_WM = 3/4; fused variance = 1/(2 + 4/3) = 0.3.
    assert fuse_estimates(0.0, 0.5, 0.0, 0.75)[1] == pytest.approx(0.3)
    # Per rollout the weight is sigma2_WM / sigma2_E = 3; the sum (3*(x1+x2) + y1+..+y4) / (3*2 + 4)
    # has variance (9*2*1 + 4*3) / 10**2 = 0.3: the fused estimator.
    w = rollout_weight(1.0, 3.0)
    assert w == pytest.approx(3.0)
    assert (w**2 * 2 * 1.0 + 4 * 3.0) / (w * 2 + 4) ** 2 == pytest.approx(0.3)
    # and sample by sample it is the fused combination of the two means
    x, y = np.array([0.2, 0.6]), np.array([0.1, 0.9, 0.4, 0.5])
    assert (w * x.sum() + y.sum()) / (w * 2 + 4) == pytest.approx(fuse_estimates(x.mean(), 0.5, y.mean(), 0.75)[0])
    # The group-mean ratio V_WM/V_E = 1.5 used per rollout gives (2.25*2 + 12) / 7**2 = 0.3367 > 0.3.
    wrong = 0.75 / 0.5
    assert (wrong**2 * 2 * 1.0 + 4 * 3.0) / (wrong * 2 + 4) ** 2 == pytest.approx(16.5 / 49)
    with pytest.raises(ValueError):
        rollout_weight(0.0, 1.0)


def test_anchor_weight_survives_only_without_group_std_scaling():
    """Why the weight is applied to advantages and TRL runs with scale_rewards="none"."""
    rewards = [0.0, 1.0, 0.5, 1.0]
    weighted = grpo_advantages([rewards], [True], weight=3.0)[0]
    unweighted = grpo_advantages([rewards], [True], weight=1.0)[0]

    def trl_advantages(values, scale_by_group_std):
        values = np.asarray(values)
        centered = values - values.mean()
        return centered / (values.std() + 1e-4) if scale_by_group_std else centered

    # scale_rewards="group": the weight cancels
    np.testing.assert_allclose(trl_advantages(weighted, True), trl_advantages(unweighted, True), rtol=1e-3)
    # scale_rewards="none": TRL only re-centres (mean already 0), the weight stays
    np.testing.assert_allclose(trl_advantages(weighted, False), np.asarray(weighted), atol=1e-12)
    np.testing.assert_allclose(np.asarray(weighted), 3.0 * np.asarray(unweighted))
