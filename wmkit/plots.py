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
    ys = [0.0] + [y for g in groups for p in g.points for y in p[1:4]]
    xlim, ylim = padded_limits(xs, 0.12), padded_limits(ys)
    for ax, group in zip(axes, groups):
        for x, mean, low, high, label in group.points:
            if not (math.isfinite(x) and math.isfinite(mean)):
                continue
            ax.errorbar([x], [mean], yerr=[[mean - low], [high - mean]], marker=group.marker, capsize=3,
                        color=group.color, ls="none")
            if label:
                ax.annotate(label, (x, mean), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set(xlim=xlim, ylim=ylim, xlabel=xlabel, ylabel=ylabel,
               title=f"{group.title}\n{group.seeds} seed{'s' if group.seeds != 1 else ''}, each its own start")
        ax.title.set_fontsize(9)
