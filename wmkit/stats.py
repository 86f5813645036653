"""stats: one summary over seeds and one verdict rule, used by every notebook and the benchmark.

* :func:`summarize` — mean, sample std (n − 1, as TRL's ``torch.std``), n and a 95% t-interval
  over seeds. It is the kit's only mean ± std: every table and JSON summary uses its dict.
* :func:`verdict` — the reproduction verdict of one claim from its per-seed values (or their
  summary). Four outcomes a reader can tell apart:

  ============== ==============================================================================
  reproduced     the whole 95% interval lies on the paper's side of the threshold
  inconclusive   the interval covers the threshold (touching it counts as covering)
  contradicted   the whole interval lies on the other side
  not measured   no values; fewer than two (one seed has no interval); a zero-width interval
                 (every seed gave the same value: that is not evidence); or a precondition
                 failed (the caller says which, e.g. "RL did not change the model")
  ============== ==============================================================================

  A paired claim (RL after − before in each seed, arm A − arm B in each seed) is judged with the
  same rule on the per-seed differences (:func:`differences`).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

VERDICTS = ("reproduced", "inconclusive", "contradicted", "not measured")

ZERO_WIDTH = 1e-12
"""A sample std at most this (relative to max(1, |mean|)) is a zero-width interval: identical seeds
whose paired differences differ only by floating-point rounding (0.82 − 0.80 vs 0.83 − 0.81)."""


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student-t quantile, e.g. t(0.95, 2) = 4.3027 (the exercises' checkers use it)."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, dof))


def summarize(values: Sequence[float | None], confidence: float = 0.95,
              bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """Mean, sample std, and a `confidence` t-interval over seeds of the values that are not None (or NaN).

    Keys: n (values kept), of (values given), values (kept), mean, std, ci_low, ci_high, confidence.
    No value: mean and std are None. One value: std 0.0 and no interval (None): one seed says
    nothing about the spread.

    `bounds`: the range the quantity cannot leave, e.g. (0, 1) for a rate (a share of steps, a
    success rate): the t-interval is clipped to it (the stated rule; a mean over few seeds of a
    rate near 0 or 1 otherwise gets an interval past the bound, "0.74 [0.14, 1.34]"), and the
    summary keeps ``bounds``, so :func:`describe` says so. Clipping never moves an interval across
    a threshold inside the bounds, so verdicts are unchanged.
    """
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    out: dict[str, Any] = {"n": len(kept), "of": len(values), "values": kept, "mean": None, "std": None,
                           "ci_low": None, "ci_high": None, "confidence": confidence}
    if not kept:
        return out
    out["mean"] = statistics.fmean(kept)
    if len(kept) > 1:
        from scipy import stats

        out["std"] = statistics.stdev(kept)
        if out["std"] > 0:
            low, high = stats.t.interval(confidence, len(kept) - 1, loc=out["mean"],
                                         scale=out["std"] / math.sqrt(len(kept)))
            out["ci_low"], out["ci_high"] = float(low), float(high)
        else:  # identical seeds: scipy gives NaN for scale 0; the interval is the point (zero width)
            out["ci_low"] = out["ci_high"] = out["mean"]
    else:
        out["std"] = 0.0
    if bounds is not None:
        low, high = bounds
        out["bounds"] = [low, high]
        if out["ci_low"] is not None:
            out["ci_low"], out["ci_high"] = max(low, out["ci_low"]), min(high, out["ci_high"])
    return out


def differences(after: Sequence[float | None], before: Sequence[float | None] | float) -> list[float | None]:
    """Per-seed paired differences ``after[i] − before[i]`` (None where either is missing); a single
    number `before` is subtracted from every seed (e.g. RL seeds that all start from one model)."""
    if isinstance(before, (int, float)):
        before = [before] * len(after)
    if len(after) != len(before):
        raise ValueError(f"paired values need as many seeds on both sides ({len(after)} vs {len(before)})")
    return [None if a is None or b is None else float(a) - float(b) for a, b in zip(after, before)]


def describe(summary: Mapping[str, Any], digits: int = 3) -> str:
    """'+0.002 ± 0.006 [-0.014, +0.018] (n=3)', '+0.300 (n=1)', '+0.1 … (n=2/3)', or '—' (no value).

    A summary with non-negative ``bounds`` (a rate, see :func:`summarize`) is written without signs,
    since it is not a difference, and says its interval is clipped: '0.740 ± 0.240 [0.140, 1.000]
    (n=3; interval clipped to [0, 1])'."""
    if not summary.get("n"):
        return "—"
    bounds = summary.get("bounds")
    sign = "" if bounds is not None and bounds[0] >= 0 else "+"
    text = f"{summary['mean']:{sign}.{digits}f}"
    if summary["n"] > 1:
        text += (f" ± {summary['std']:.{digits}f} [{summary['ci_low']:{sign}.{digits}f}, "
                 f"{summary['ci_high']:{sign}.{digits}f}]")
    text += f" (n={summary['n']}" + (f"/{summary['of']}" if summary["n"] != summary["of"] else "")
    if bounds is not None and summary["n"] > 1:
        text += f"; interval clipped to [{bounds[0]:g}, {bounds[1]:g}]"
    return text + ")"


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict (one of :data:`VERDICTS`), why, and the summary it was computed from."""

    verdict: str
    reason: str
    summary: dict[str, Any] = field(default_factory=dict)
    direction: str = "higher"
    threshold: float = 0.0

    def __str__(self) -> str:
        return self.verdict

    @property
    def text(self) -> str:
        """'inconclusive: the 95% interval [-0.014, +0.018] covers 0 — +0.002 ± 0.006 … (n=3)'."""
        return f"{self.verdict}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict(values: Sequence[float | None] | Mapping[str, Any], direction: str = "higher", threshold: float = 0.0,
            *, not_measured: str | None = None, confidence: float = 0.95) -> Verdict:
    """The reproduction verdict of one claim from its per-seed values (or a :func:`summarize` dict).

    The claim says the values lie above (`direction` "higher") or below ("lower") `threshold`
    (0 for a difference, 1 for a ratio). `not_measured`: the reason a precondition of the claim
    failed (None: every precondition holds); the verdict is then "not measured" whatever the values.
    """
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', not {direction!r}")
    summary = dict(values) if isinstance(values, Mapping) else summarize(values, confidence)
    made = {"summary": summary, "direction": direction, "threshold": threshold}
    if not_measured:
        return Verdict("not measured", not_measured, **made)
    n = summary.get("n") or 0
    if n == 0:
        return Verdict("not measured", "no value", **made)
    if n == 1 or summary.get("ci_low") is None:
        return Verdict("not measured", f"one seed ({summary['mean']:+.3f}) has no interval: run more seeds", **made)
    low, high = summary["ci_low"], summary["ci_high"]
    if summary["std"] <= ZERO_WIDTH * max(1.0, abs(summary["mean"])) or low == high:
        return Verdict("not measured", f"all {n} seeds gave {summary['mean']:+.3f}: a zero-width interval is "
                       "not evidence", **made)
    interval = f"the {summary.get('confidence', confidence):.0%} interval [{low:+.3f}, {high:+.3f}]"
    # A claim "at least 0" sets a threshold a hair below 0 (-1e-9), so that 0 itself counts; the
    # reason names the line the reader knows.
    line = f"{round(threshold, 6) + 0.0:g}"
    paper_side = "above" if direction == "higher" else "below"
    other_side = "below" if direction == "higher" else "above"
    sign = 1.0 if direction == "higher" else -1.0
    near, far = (low, high) if direction == "higher" else (high, low)
    if sign * (near - threshold) > 0:
        return Verdict("reproduced", f"{interval} lies {paper_side} {line}, the paper's side", **made)
    if sign * (far - threshold) < 0:
        return Verdict("contradicted", f"{interval} lies {other_side} {line}; the paper's side is "
                       f"{paper_side}", **made)
    return Verdict("inconclusive", f"{interval} covers {line}", **made)


def all_of(verdicts: Sequence[Verdict]) -> tuple[str, str]:
    """(verdict, reason) of a claim that is the conjunction of several (e.g. an order of four means,
    judged step by step): contradicted if any part is, reproduced if every part is, not measured if
    a part is not measured, else inconclusive."""
    names = [v.verdict for v in verdicts]
    for outcome, test in (("contradicted", any), ("reproduced", all), ("not measured", any)):
        if names and test(n == outcome for n in names):
            return outcome, "; ".join(v.reason for v in verdicts if v.verdict == outcome)
    if not names:
        return "not measured", "no part measured"
    return "inconclusive", "; ".join(v.reason for v in verdicts if v.verdict == "inconclusive")
