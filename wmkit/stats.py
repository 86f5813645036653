"""stats."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any


def mean_std(values: Sequence[float]) -> dict:
    values = [float(v) for v in values]
    return {"mean": statistics.fmean(values) if values else float("nan"),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0, "n": len(values), "values": values}


def delta_verdict(before: Sequence[float], after: Sequence[float], k: float = 2.0) -> str:
    """'improved' / 'worse' when the mean paired change is beyond k standard errors, else 'no clear change'."""
    diffs = [a - b for a, b in zip(after, before)]
    if not diffs:
        return "not measured"
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("inf")
    if len(diffs) > 1 and mean > k * se and mean > 0:
        return "improved"
    if len(diffs) > 1 and mean < -k * se and mean < 0:
        return "worse"
    return "no clear change" if len(diffs) > 1 else ("higher" if mean > 0 else "lower" if mean < 0 else "equal")


VERDICTS = ("reproduced", "same direction, not significant", "not reproduced", "not measured")


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student-t quantile, e.g. t(0.95, 2) = 4.3027."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, dof))


def summarize(values: Sequence[float | None], confidence: float = 0.95) -> dict[str, Any]:
    """Mean, sample std, and a `confidence` t-interval over seeds of the values that are not None.

    With one value the interval is unknown (None): one seed says nothing about the spread.
    """
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    out: dict[str, Any] = {"n": len(kept), "of": len(values), "values": kept, "mean": None, "std": None,
                           "ci_low": None, "ci_high": None, "confidence": confidence}
    if not kept:
        return out
    out["mean"] = statistics.fmean(kept)
    if len(kept) > 1:
        out["std"] = statistics.stdev(kept)
        half = t_quantile(confidence, len(kept) - 1) * out["std"] / math.sqrt(len(kept))
        out["ci_low"], out["ci_high"] = out["mean"] - half, out["mean"] + half
    else:
        out["std"] = 0.0
    return out


def verdict(summary: dict[str, Any], direction: str = "higher", threshold: float = 0.0) -> str:
    """The reproduction verdict of one claim from its per-seed summary.

    * "not measured": no value;
    * "not reproduced": the mean is on the wrong side of `threshold` (or on it);
    * "reproduced": the whole 95% interval is on the paper's side (needs ≥ 2 seeds);
    * "same direction, not significant": the mean is, the interval is not (or one seed).
    """
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', not {direction!r}")
    if not summary.get("n"):
        return "not measured"
    sign = 1.0 if direction == "higher" else -1.0
    if sign * (summary["mean"] - threshold) <= 0:
        return "not reproduced"
    bound = summary["ci_low"] if direction == "higher" else summary["ci_high"]
    if bound is not None and sign * (bound - threshold) > 0:
        return "reproduced"
    return "same direction, not significant"
