"""Notebook figures that are easy to draw misleadingly, as functions that tests can hold.

Matplotlib is imported inside each function, so ``import wmkit`` stays light.
"""
from __future__ import annotations

import itertools
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
    ablation (one panel each, paired per seed against "no correction"). Colour says the arm (real execution, anchors only, WMRL and its
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
    # The left panel's y-axis holds every curve and every reference level (a level on the edge reads as none).
    levels = [target, optimum, *predicted_wm_level.values(), *(arms[f"pure WM ({w})"]["final"]["mean"] for w in world_models)]
    curves = [v for name in ("real", "anchors only", *(f"WMRL ({w})" for w in world_models))
              for v in mean_curve(arms[name], "values")]
    ax.set_ylim(*padded_limits([*levels, *curves], 0.05))
    # The ablation is judged per seed on paired differences (the arms of a seed share its tasks and
    # start), so each panel draws every arm's final score minus the same seed's "no correction":
    # seeds as dots, the mean with its 95% t-interval. Unpaired mean ± std bars hid a paired effect.
    from wmkit import stats  # here: stats imports scipy

    for ax, w in zip(axes[1:], world_models):
        line, marker = styles[w]
        names = [(c, f"{c} ({w})" if c != "both" else f"WMRL ({w})") for c in ablation]
        names += [("real", "real"), ("anchors only", "anchors only"), ("pure WM", f"pure WM ({w})")]
        base = arms[f"no correction ({w})"]["final"]["values"]
        for i, (label, name) in enumerate(names):
            diffs = stats.differences(arms[name]["final"]["values"], base)
            color = ARM_COLORS[_arm_kind(name)]
            seeds = [d for d in diffs if d is not None]
            ax.plot([i] * len(seeds), seeds, ".", color=color, alpha=0.4, ms=5)
            interval_points(ax, [i + 0.15], [stats.summarize(diffs)], fmt=marker, color=color, mfc="none")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(names)), [label for label, _ in names], fontsize=7, rotation=30, ha="right")
        ax.set(ylabel="final real score − no correction's, same seed",
               title=f"ablation, {w} world model: paired per seed\n(dots: seeds; marker: mean, 95% t-interval)")
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


def bounded_limits(values: Sequence[float], low: float = 0.0, high: float = 1.0, pad_fraction: float = 0.08,
                   min_pad: float = 0.02, from_low: bool = False) -> tuple[float, float]:
    """:func:`padded_limits` of `values` for a quantity that cannot leave [`low`, `high`] (a share, a
    success rate): the axis follows the data and stops at the bounds. `from_low`: start at `low`
    (bars, which are drawn from it)."""
    lo, hi = padded_limits(values, pad_fraction, min_pad)
    return (low if from_low else max(low, lo)), min(high, hi)


def proportion_interval(share: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a share of `n` binary outcomes (never leaves [0, 1], sensible at 0 and 1)."""
    from scipy import stats  # here: as matplotlib, kept out of `import wmkit`

    if n <= 0:
        return 0.0, 1.0
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def rollout_exactness(axes, evaluation: dict, envs: Sequence[str] = ("textgame", "phone"),
                      methods: Sequence[tuple[str, str, int]] = (("model", "o-", 8), ("no_change", "s--", 6),
                                                                  ("most_frequent", "^:", 5))) -> None:
    """Notebook 01's k-step rollouts: per environment (one panel each) the share of windows still exact
    after k steps, per method, with its 95% Wilson interval over the panel's windows as a band (a
    rise of one window of twenty is inside it). The y-axis follows the data, within [0, 1]."""
    tops = []
    for ax, env in zip(axes, envs):
        curves = evaluation[env]["rollout"]
        n = int(curves["n_windows"])
        for i, (name, style, size) in enumerate(methods):
            ys = [float(y) for y in curves[name]]
            ks = list(range(1, len(ys) + 1))
            band = [proportion_interval(y, n) for y in ys]
            ax.plot(ks, ys, style, ms=size, color=f"C{i}", label=name)
            ax.fill_between(ks, [b[0] for b in band], [b[1] for b in band], color=f"C{i}", alpha=0.12, lw=0)
            tops += [b[1] for b in band]
        ax.set(title=f"{env} ({n} windows; bands: 95% interval)", xlabel="rollout horizon k",
               ylabel="exact state after k steps")
        ax.set_xticks(range(1, len(curves["model"]) + 1))
    for ax in axes:
        ax.set_ylim(*bounded_limits(tops, from_low=True))


def share_histogram(ax, shares: dict[str, Sequence[float]], samples: int) -> None:
    """Side-by-side bars (one colour per entry of `shares`, never overlapping) of per-transition shares
    of right samples out of `samples`: the first bin holds p̂ = 0 alone ("never right"), apart from
    1/`samples`; the others split (0, 1] into quarters."""
    edges = [0.0, 0.25, 0.5, 0.75, 1.0]
    labels = ["0\n(never)", "(0, 1/4]", "(1/4, 1/2]", "(1/2, 3/4]", "(3/4, 1]"]
    width = 0.8 / max(1, len(shares))
    for i, (name, values) in enumerate(shares.items()):
        values = [float(v) for v in values]
        counts = [sum(v == 0 for v in values)] + [sum(lo < v <= hi for v in values)
                                                   for lo, hi in itertools.pairwise(edges)]
        ax.bar([j + (i - (len(shares) - 1) / 2) * width for j in range(len(counts))], counts, width=width,
               color=f"C{i}", label=f"{name} ({len(values)})")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set(xlabel=f"share of a transition's {samples} samples that are exact (MLE)")


def seed_curves(ax, x: Sequence[float], per_seed: Sequence[Sequence[float]], style: str, label: str,
                color: str | None = None) -> None:
    """The mean over seeds (thick, with `style`) and each seed (thin): a spread that splits into two
    groups of seeds (a bimodal share) shows as two groups of lines, where mean ± std would span the axis."""
    import numpy as np

    curves = np.asarray(per_seed, dtype=float)
    line = ax.plot(x, curves.mean(0), style, label=label, ms=4, **({"color": color} if color else {}))[0]
    for curve in curves:
        ax.plot(x, curve, "-", color=line.get_color(), lw=0.7, alpha=0.35)


def interval_points(ax, x: Sequence[float], summaries: Sequence[dict], fmt: str = "o", label: str | None = None,
                    **kwargs):
    """Means with their 95% t-intervals (``stats.summarize`` dicts; clipped to their ``bounds`` there) as
    error bars; a point without an interval (one seed) is drawn alone. Returns the errorbar handle."""
    means = [s["mean"] if s.get("mean") is not None else math.nan for s in summaries]
    low = [m - s["ci_low"] if s.get("ci_low") is not None else 0.0 for m, s in zip(means, summaries)]
    high = [s["ci_high"] - m if s.get("ci_high") is not None else 0.0 for m, s in zip(means, summaries)]
    return ax.errorbar(list(x), means, yerr=[low, high], fmt=fmt, capsize=3, label=label, **kwargs)


def geometric_ratio(ratios: Sequence[float | None]) -> dict:
    """Summary of per-seed ratios on the log scale: the geometric mean exp(mean log r), the 95%
    interval exp(t-interval of log r), and how many seeds have a ratio (the rest never reached the
    target: censored). Keys: mean, ci_low, ci_high (None without two seeds), n, of."""
    from wmkit import stats

    logs = [math.log(r) for r in ratios if r is not None and r > 0]
    s = stats.summarize(logs)
    out = {"n": len(logs), "of": len(ratios), "mean": None, "ci_low": None, "ci_high": None}
    if s["mean"] is not None:
        out["mean"] = math.exp(s["mean"])
        if s["ci_low"] is not None:
            out["ci_low"], out["ci_high"] = math.exp(s["ci_low"]), math.exp(s["ci_high"])
    return out


def geometric_of(summary: dict) -> dict:
    """:func:`geometric_ratio` of a ``stats.summarize`` dict of per-seed ratios (its ``values`` are the
    seeds that had one, ``n`` of ``of``), e.g. ``wmrl.ratio_summary``'s."""
    return geometric_ratio(list(summary["values"]) + [None] * (summary["of"] - summary["n"]))


def ratio_cell(ratio: dict, digits: int = 2) -> str:
    """A table cell for :func:`geometric_ratio`: '2.97×' or '2.97× (2/3)' where some seeds never reached."""
    if ratio["mean"] is None:
        return f"— (0/{ratio['of']})"
    return f"{ratio['mean']:.{digits}f}×" + (f" ({ratio['n']}/{ratio['of']})" if ratio["n"] != ratio["of"] else "")


def ratio_text(ratio: dict, digits: int = 2) -> str:
    """'2.97× (geometric mean; 95% interval 1.90×–4.64× on the log scale; 9 of 10 seeds reached the target)'."""
    if ratio["mean"] is None:
        return f"no ratio (0 of {ratio['of']} seeds reached the target in both arms)"
    interval = (f"; 95% interval {ratio['ci_low']:.{digits}f}×–{ratio['ci_high']:.{digits}f}× on the log scale"
                if ratio["ci_low"] is not None else "")
    return (f"{ratio['mean']:.{digits}f}× (geometric mean{interval}; {ratio['n']} of {ratio['of']} seeds reached "
            "the target in both arms)")


def ratio_vs_target(ax, curves: dict[str, dict[float, dict]], styles: dict[str, tuple[str, str, str]]) -> None:
    """Compute-to-target ratios against the target level q: per curve (label -> {q: a summary whose
    ``values`` are the per-seed ratios of the seeds where both arms reached the level, n of `of`}) the
    geometric mean on a log axis; a hollow marker where some seeds never reached the level (censored:
    left out of the mean), with "n/of" beside it, and an "×" at the top with "0/of" where none did.
    `styles`: label -> (colour, line style, marker)."""
    for label, by_level in curves.items():
        color, line, marker = styles[label]
        levels = sorted(by_level)
        geo = [geometric_of(by_level[q]) for q in levels]
        ys = [g["mean"] if g["mean"] is not None else math.nan for g in geo]
        ax.plot(levels, ys, linestyle=line, color=color, label=label)
        for q, y, g in zip(levels, ys, geo):
            if not math.isfinite(y):  # no seed reached the level in both arms: an "×" at the top, "0/N"
                ax.plot([q], [0.97], "x", color=color, transform=ax.get_xaxis_transform(), clip_on=False)
                ax.annotate(f"0/{g['of']}", (q, 0.97), xycoords=ax.get_xaxis_transform(), textcoords="offset points",
                            xytext=(4, -10), fontsize=7, color=color)
                continue
            censored = g["n"] < g["of"]
            ax.plot([q], [y], marker, color=color, mfc="none" if censored else color, ms=6)
            if censored and math.isfinite(y):
                ax.annotate(f"{g['n']}/{g['of']}", (q, y), textcoords="offset points", xytext=(4, -10), fontsize=7,
                            color=color)
    ax.axhline(1, color="gray", lw=0.8)
    ax.set_yscale("log")
