"""Notebook figures that are easy to draw misleadingly, as functions that tests can hold.

Matplotlib is imported inside each function, so ``import wmkit`` stays light.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


def padded_limits(values: Sequence[float], pad_fraction: float = 0.08, min_pad: float = 0.02) -> tuple[float, float]:
    """(low, high) around the finite `values`: `pad_fraction` of their range on each side, at least
    `min_pad` (identical values would otherwise give an axis of width 0)."""
    xs = [float(x) for x in values if x is not None and math.isfinite(x)] or [0.0]
    low, high = min(xs), max(xs)
    pad = max(min_pad, pad_fraction * (high - low))
    return low - pad, high + pad


@dataclass
class GainGroup:
    """Points of one experiment on a gain-against-error panel: its own start and its own seeds."""

    title: str
    """What was trained from which start, e.g. "oracle rungs, plain phone"; the seed count is added."""
    seeds: int
    points: list[tuple[float, float, float, float, str]] = field(default_factory=list)
    """(world-model error, mean gain, interval low, interval high, point label) per point."""
    marker: str = "o"
    color: str = "C0"


def gain_against_error(axes, groups: Sequence[GainGroup], xlabel: str, ylabel: str) -> None:
    """One panel per group on `axes` (as many): each group's points with their intervals against the
    measured error. The panels share x- and y-limits fitted to all the points (and 0 gain), so their
    positions can be compared, but no line or legend joins groups that come from different starts
    and seeds: each panel's title names its group and seed count."""
    if len(axes) != len(groups):
        raise ValueError(f"{len(groups)} groups need as many axes, not {len(axes)}")
    xs = [p[0] for g in groups for p in g.points]
    ys = [0.0] + [y for g in groups for p in g.points for y in p[1:4] if y is not None]
    xlim, ylim = padded_limits(xs, 0.12), padded_limits(ys)
    for ax, group in zip(axes, groups):
        for x, mean, low, high, label in group.points:
            # a point without a measured error or gain (one seed: no interval; smoke: no error) is left out
            if not all(v is not None and math.isfinite(v) for v in (x, mean, low, high)):
                continue
            ax.errorbar([x], [mean], yerr=[[mean - low], [high - mean]], marker=group.marker, capsize=3,
                        color=group.color, ls="none")
            if label:
                ax.annotate(label, (x, mean), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set(xlim=xlim, ylim=ylim, xlabel=xlabel, ylabel=ylabel,
               title=f"{group.title}\n{group.seeds} seed{'s' if group.seeds != 1 else ''}, each its own start")
        ax.title.set_fontsize(9)


ARM_COLORS = {"real": "black", "anchors only": "tab:green", "WMRL": "tab:blue", "pure WM": "tab:red"}
"""Check 5's arms by colour (notebook 04): the ablations of WMRL take WMRL's colour."""
WORLD_MODEL_STYLES = (("--", "o"), (":", "s"))
"""(line style, marker) of the first and second world model in check 5's figure; solid: no world model."""


def _arm_kind(name: str) -> str:
    for kind in ("real", "anchors only", "pure WM"):
        if name == kind or name.startswith(kind + " ("):
            return kind
    return "WMRL"


def check5_figure(arms: dict, world_models: Sequence[str], ablation: Sequence[str], target: float,
                  optimum: float, predicted_wm_level: dict[str, float]):
    """Notebook 04's check 5: real score against charged compute (left) and each world model's
    ablation (one panel each). Colour says the arm (real execution, anchors only, WMRL and its
    ablations, pure WM), line style and marker the world model, so the legend has six entries; the
    reference levels (target, J*, pure WM predicted) are named beside their lines instead.

    `arms`: name -> arm of ``research_experiment`` ("real", "anchors only", "pure WM (w)", "WMRL (w)",
    "<ablation> (w)"); curves "total_compute" and "values" per seed, "total_cost" per seed, "final"
    a summary. Returns the figure."""
    # Here, not at the top, as the module docstring says: matplotlib takes 0.5 s to import.
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.lines import Line2D

    def mean_curve(arm, key):
        return np.mean(np.array(arm[key], dtype=float), axis=0)

    def label_line(ax, y, text, color):
        ax.annotate(text, (1.0, y), xycoords=("axes fraction", "data"), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=7, color=color)

    styles = dict(zip(world_models, WORLD_MODEL_STYLES))
    fig, axes = plt.subplots(1, 1 + len(world_models), figsize=(7 + 5.5 * len(world_models), 5),
                             gridspec_kw={"width_ratios": [1.4] + [1] * len(world_models)})
    ax = axes[0]
    ax.plot(mean_curve(arms["real"], "total_compute") + 1, mean_curve(arms["real"], "values"), color="black")
    ax.plot(mean_curve(arms["anchors only"], "total_compute") + 1, mean_curve(arms["anchors only"], "values"),
            color=ARM_COLORS["anchors only"])
    for w in world_models:
        line, marker = styles[w]
        ax.plot(mean_curve(arms[f"WMRL ({w})"], "total_compute") + 1, mean_curve(arms[f"WMRL ({w})"], "values"),
                color=ARM_COLORS["WMRL"], ls=line)
        # pure WM's compute barely moves after the build (a vertical line): show where it ends
        pure = arms[f"pure WM ({w})"]
        ax.plot([np.mean(pure["total_cost"]) + 1], [pure["final"]["mean"]], marker, color=ARM_COLORS["pure WM"],
                mfc="none", ms=8)
        ax.axhline(predicted_wm_level[w], color=ARM_COLORS["pure WM"], ls=line, lw=0.8, alpha=0.6)
        label_line(ax, predicted_wm_level[w], f"pure WM predicted, {w}", ARM_COLORS["pure WM"])
    ax.axhline(target, color="gray", ls="-.", lw=0.8)
    label_line(ax, target, "target", "gray")
    ax.axhline(optimum, color="black", lw=0.5)
    label_line(ax, optimum, "J*", "black")
    ax.set(xscale="log", xlabel="charged compute + 1, work units (executions; mean over seeds)",
           ylabel="expected real grade J", title="Check 5: real score vs compute\n(pure WM: a marker where it ends)")
    # Points with error bars on a zoomed axis (bars would draw lengths that mean nothing there).
    for ax, w in zip(axes[1:], world_models):
        line, marker = styles[w]
        names = [f"{c} ({w})" if c != "both" else f"WMRL ({w})" for c in ablation]
        values = [arms[n]["final"] for n in names]
        ax.errorbar(range(len(names)), [v["mean"] for v in values], yerr=[v["std"] for v in values], fmt=marker,
                    capsize=4, color=ARM_COLORS["WMRL"])
        for name, ls, text in (("real", "-", "real"), ("anchors only", "-", "anchors only"),
                               (f"pure WM ({w})", line, "pure WM")):
            ax.axhline(arms[name]["final"]["mean"], color=ARM_COLORS[_arm_kind(name)], ls=ls, lw=0.8)
            label_line(ax, arms[name]["final"]["mean"], text, ARM_COLORS[_arm_kind(name)])
        ax.axhline(predicted_wm_level[w], color=ARM_COLORS["pure WM"], ls=line, lw=0.5, alpha=0.6)
        label_line(ax, predicted_wm_level[w], "pure WM predicted", ARM_COLORS["pure WM"])
        ax.set_xticks(range(len(names)), list(ablation), fontsize=8)
        ax.set(ylabel="final real score, mean ± std over seeds (zoomed)",
               title=f"ablation, {w} world model\n(lines: the other arms' final scores)")
        ax.title.set_fontsize(10)
    handles = [Line2D([], [], color=ARM_COLORS["real"], label="real-execution GRPO"),
               Line2D([], [], color=ARM_COLORS["anchors only"], label="anchors only"),
               Line2D([], [], color=ARM_COLORS["WMRL"], label="WMRL and its ablations"),
               Line2D([], [], color=ARM_COLORS["pure WM"], label="pure WM")]
    handles += [Line2D([], [], color="gray", ls=line, marker=marker, mfc="none", label=f"{w} world model")
                for w, (line, marker) in styles.items()]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1), w_pad=4)
    return fig
