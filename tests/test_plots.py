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
    return {"final": {"mean": final, "std": 0.01}, "total_cost": [cost] * seeds,
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
