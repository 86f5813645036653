"""wmkit.plots: the notebook figures that tests can hold (panels, limits from the data, legends)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from wmkit import plots


def test_padded_limits_come_from_the_data():
    assert plots.padded_limits([0.0, 1.0]) == pytest.approx((-0.08, 1.08))
    assert plots.padded_limits([0.3, 0.3]) == pytest.approx((0.28, 0.32))  # no zero-width axis
    assert plots.padded_limits([float("nan"), 2.0, None]) == pytest.approx((1.98, 2.02))


def test_gain_against_error_keeps_groups_from_different_starts_apart():
    oracle = plots.GainGroup("oracle, plain phone", 8, [(0.0, 0.2, 0.1, 0.3, "p=0"), (0.3, 0.1, 0.0, 0.2, "p=0.3")])
    learned = plots.GainGroup("learned, status-bar phone", 19, [(0.18, 0.14, 0.07, 0.21, "learned")], marker="s")
    fig, axes = plt.subplots(1, 2)
    plots.gain_against_error(axes, [oracle, learned], "error", "gain")
    # one panel per group, its seed count in its title, no line joining points, no shared legend
    assert "8 seeds" in axes[0].get_title() and "19 seeds" in axes[1].get_title()
    assert "oracle" in axes[0].get_title() and "learned" in axes[1].get_title()
    assert all(ax.get_legend() is None for ax in axes)
    assert all(len(line.get_xdata()) == 1 for ax in axes for line in ax.lines if line.get_marker() not in ("", "None"))
    # shared limits, from the data (not the 0..1 of an error rate), with 0 gain in view
    assert axes[0].get_xlim() == axes[1].get_xlim() and axes[0].get_ylim() == axes[1].get_ylim()
    low, high = axes[0].get_xlim()
    assert -0.1 < low < 0.0 and 0.3 < high < 0.4
    ylow, yhigh = axes[0].get_ylim()
    assert ylow < 0.0 and 0.3 < yhigh < 0.4
    with pytest.raises(ValueError):
        plots.gain_against_error(axes[:1], [oracle, learned], "error", "gain")
    plt.close(fig)


def _arm(final, cost, seeds=3, steps=5):
    return {"final": {"mean": final, "std": 0.01, "values": [final] * seeds}, "total_cost": [cost] * seeds,
            "total_compute": [[cost * i / (steps - 1) for i in range(steps)]] * seeds,
            "values": [[0.6 + (final - 0.6) * i / (steps - 1) for i in range(steps)]] * seeds}


def test_check5_figure_has_a_legend_of_six_entries_whatever_the_arms():
    world_models = ["learned", "handmade"]
    ablation = ["no correction", "denoise only", "debias only", "both"]
    arms = {"real": _arm(0.97, 2000), "anchors only": _arm(0.96, 300)}
    for w in world_models:
        arms[f"pure WM ({w})"] = _arm(0.93, 5)
        arms[f"WMRL ({w})"] = _arm(0.955, 600)
        for c in ablation[:-1]:
            arms[f"{c} ({w})"] = _arm(0.94, 600)
    fig = plots.check5_figure(arms, world_models, ablation, 0.91, 0.99, {"learned": 0.94, "handmade": 0.96})
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(labels) <= 6 and {"learned world model", "handmade world model"} <= set(labels)
    assert len(fig.axes) == 1 + len(world_models)
    # each world model's arms share its line style in the compute panel
    styles = {line.get_linestyle() for line in fig.axes[0].lines if line.get_color() == plots.ARM_COLORS["WMRL"]}
    assert styles == {"--", ":"}
    plt.close(fig)


def test_gain_against_error_leaves_out_points_without_a_measured_error_or_interval():
    """At smoke a rung's error can be None and one seed gives no interval: such points are left out
    (notebook 03 crashed on math.isfinite(None)); the panels are still drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wmkit import plots

    fig, axes = plt.subplots(1, 2)
    groups = [plots.GainGroup("a", 1, [(None, 0.1, None, None, "p=0"), (0.2, 0.1, 0.0, 0.2, "p=0.3")]),
              plots.GainGroup("b", 1, [(0.5, None, None, None, "learned")])]
    plots.gain_against_error(axes, groups, "x", "y")
    assert len(axes[0].lines) + len(axes[0].containers) >= 1 and not axes[1].containers
    plt.close(fig)


def test_bounded_limits_follow_the_data_inside_the_bounds():
    assert plots.bounded_limits([0.02, 0.10], from_low=True) == pytest.approx((0.0, 0.12))  # not 0..1
    assert plots.bounded_limits([0.9, 1.0]) == pytest.approx((0.88, 1.0))  # never past the bound
    assert plots.bounded_limits([0.5, 1.25], 0, 1.3)[1] == pytest.approx(1.3)


def test_proportion_interval_hand_case_and_bounds():
    # Wilson, 0 of 20, 95%: upper = z²/(n + z²) = 3.8415/23.8415 = 0.1611
    low, high = plots.proportion_interval(0.0, 20)
    assert low == 0.0 and high == pytest.approx(0.1611, abs=1e-4)
    low, high = plots.proportion_interval(1.0, 24)
    assert high == 1.0 and 0.8 < low < 0.9
    # one window of 24 more is inside the interval of the other
    low, high = plots.proportion_interval(1 / 24, 24)
    assert low < 2 / 24 < high


def test_rollout_exactness_draws_intervals_and_fits_the_axis_to_the_data():
    evaluation = {env: {"rollout": {"n_windows": 24, "model": [0.25, 0.0, 0.04, 0.0, 0.0],
                                    "no_change": [0.5, 0.21, 0.08, 0.08, 0.04], "most_frequent": [0.1] * 5}}
                  for env in ("textgame", "phone")}
    fig, axes = plt.subplots(1, 2)
    plots.rollout_exactness(axes, evaluation)
    assert all(len(ax.collections) == 3 for ax in axes)  # one band per method
    low, high = axes[0].get_ylim()
    assert low == 0.0 and 0.5 < high < 0.9  # the data's range, not 0..1
    plt.close(fig)


def test_share_histogram_keeps_never_right_apart_and_bars_side_by_side():
    fig, ax = plt.subplots()
    plots.share_histogram(ax, {"tiny": [0.0, 0.0, 1 / 16, 0.5, 1.0], "full": [0.0, 1 / 16]}, 16)
    bars = [(p.get_x(), p.get_x() + p.get_width(), p.get_height()) for p in ax.patches]
    assert [h for _, _, h in bars[:5]] == [2, 1, 1, 0, 1]  # p̂ = 0 alone, 1/16 in the next bin
    assert [h for _, _, h in bars[5:7]] == [1, 1]
    spans = sorted((a, b) for a, b, _ in bars)
    assert all(b1 <= a2 + 1e-9 for (_, b1), (a2, _) in zip(spans, spans[1:]))  # no bar overlaps another
    plt.close(fig)


def test_seed_curves_draws_each_seed_and_the_mean():
    fig, ax = plt.subplots()
    plots.seed_curves(ax, [1, 2, 3], [[0, 0, 0], [1, 1, 1], [0, 1, 1]], "k-o", "MLE")
    assert len(ax.lines) == 4 and ax.lines[0].get_label() == "MLE"
    assert list(ax.lines[0].get_ydata()) == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    plt.close(fig)


def test_geometric_ratio_is_the_mean_on_the_log_scale_and_counts_censored_seeds():
    g = plots.geometric_ratio([2.0, 8.0, None])
    assert g["mean"] == pytest.approx(4.0) and (g["n"], g["of"]) == (2, 3)
    assert g["ci_low"] < 4.0 < g["ci_high"]
    assert "geometric mean" in plots.ratio_text(g) and "2 of 3 seeds" in plots.ratio_text(g)
    assert plots.ratio_cell(g) == "4.00× (2/3)"
    summary = {"values": [2.0, 8.0], "n": 2, "of": 3}
    assert plots.geometric_of(summary)["mean"] == pytest.approx(4.0)


def test_ratio_vs_target_marks_censored_levels_hollow():
    fig, ax = plt.subplots()
    curves = {"real / WMRL": {0.5: {"values": [2.0, 2.0], "n": 2, "of": 2}, 0.9: {"values": [4.0], "n": 1, "of": 2}}}
    plots.ratio_vs_target(ax, curves, {"real / WMRL": ("k", "-", "o")})
    markers = [line for line in ax.lines if line.get_marker() == "o"]
    assert [m.get_markerfacecolor() for m in markers] == ["k", "none"]
    assert any("1/2" == t.get_text() for t in ax.texts) and ax.get_yscale() == "log"
    plt.close(fig)


def test_check5_ablation_panels_are_paired_differences():
    world_models, ablation = ["learned"], ["no correction", "denoise only", "debias only", "both"]
    arms = {"real": _arm(0.97, 2000), "anchors only": _arm(0.96, 300), "pure WM (learned)": _arm(0.93, 5),
            "WMRL (learned)": _arm(0.955, 600)}
    for c in ablation[:-1]:
        arms[f"{c} (learned)"] = _arm(0.94, 600)
    for name, shift in (("WMRL (learned)", 0.01), ("debias only (learned)", 0.004)):  # seeds differ, pairs agree
        arms[name]["final"] = {"mean": 0.94 + shift, "std": 0.02, "values": [0.92 + shift, 0.94 + shift, 0.96 + shift]}
    arms["no correction (learned)"]["final"] = {"mean": 0.94, "std": 0.02, "values": [0.92, 0.94, 0.96]}
    fig = plots.check5_figure(arms, world_models, ablation, 0.91, 0.99, {"learned": 0.85})
    panel = fig.axes[1]
    both = [c for c in panel.containers][3]  # errorbar containers in arm order: none, denoise, debias, both
    y = both.lines[0].get_ydata()[0]
    assert y == pytest.approx(0.01)  # the paired difference, not the unpaired level 0.95
    low, high = fig.axes[0].get_ylim()
    assert low < 0.85 < high  # the predicted level is inside the axis, not on its edge
    plt.close(fig)
