"""stats: one summary over seeds and one verdict rule, used by every notebook and the benchmark.

* :func:`summarize` — mean, sample std (n − 1, as TRL's ``torch.std``), n and a 95% t-interval
  over seeds. It is the kit's only mean ± std: every table and JSON summary uses its dict.
* :func:`verdict` — the reproduction verdict of one claim from its per-seed values (or their
  summary). Five outcomes a reader can tell apart, checked in this order:

  =============================== ===============================================================
  not measured                    no values; fewer than two (one seed has no interval); a
                                  zero-width interval (every seed gave the same value: that is
                                  not evidence); or a precondition failed (the caller says which,
                                  e.g. "the method did not act: RL did not change the model")
  reproduced                      the whole 95% interval lies on the paper's side of the line
  contradicted                    the whole interval lies on the other side
  smaller than the paper's effect the interval covers the line but lies wholly on the line's side
                                  of the paper's effect (converted to the kit's units), clear of it:
                                  whatever the kit measured is smaller than what the paper reports
  inconclusive                    the interval covers the line and reaches the paper's effect (or
                                  the claim has no paper effect in the kit's units)
  =============================== ===============================================================

  Touching a bound counts as covering it, as everywhere in the rule. An interval wholly on the
  paper's side that stops short of the paper's effect is *reproduced*: the kit's claims are
  directions (tiny models; the paper's effect in the kit's units is a conversion across scales), so
  the paper's size qualifies a verdict (the reason says "smaller than the paper's +0.096") but never
  overrides a direction the interval establishes. *Smaller* separates a tight interval around the
  line that rules the paper's size out from a wide one that cannot say ("inconclusive").

  A paired claim (RL after − before in each seed, arm A − arm B in each seed) is judged with the
  same rule on the per-seed differences (:func:`differences`).
* :func:`paired_t_power` and :func:`seeds_for_power` — the prospective power of that rule's 95% paired
  t-interval at an effect of interest, and the seeds it needs (the benchmark's seed counts).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

SMALLER = "smaller than the paper's effect"
"""The verdict of an interval that covers the line and excludes the paper's effect on the line's side."""

VERDICTS = ("reproduced", SMALLER, "inconclusive", "contradicted", "not measured")

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
    paper_effect: float | None = None

    def __str__(self) -> str:
        return self.verdict

    @property
    def text(self) -> str:
        """'inconclusive: the 95% interval [-0.014, +0.018] covers 0 — +0.002 ± 0.006 … (n=3)'."""
        return f"{self.verdict}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict(values: Sequence[float | None] | Mapping[str, Any], direction: str = "higher", threshold: float = 0.0,
            *, not_measured: str | None = None, confidence: float = 0.95,
            paper_effect: float | None = None) -> Verdict:
    """The reproduction verdict of one claim from its per-seed values (or a :func:`summarize` dict).

    The claim says the values lie above (`direction` "higher") or below ("lower") `threshold`
    (0 for a difference, 1 for a ratio). `not_measured`: the reason a precondition of the claim
    failed (None: every precondition holds); the verdict is then "not measured" whatever the values.
    `paper_effect`: the paper's effect in the kit's units (on the paper's side of `threshold`), or
    None where the paper gives none that converts; with it an interval that covers the line can read
    :data:`SMALLER` (see the module's table).
    """
    if direction not in ("higher", "lower"):
        raise ValueError(f"direction must be 'higher' or 'lower', not {direction!r}")
    sign = 1.0 if direction == "higher" else -1.0
    if paper_effect is not None and not sign * (paper_effect - threshold) > 0:
        raise ValueError(f"paper_effect {paper_effect:+g} must lie on the paper's side of the line {threshold:g} "
                         f"(direction {direction!r})")
    summary = dict(values) if isinstance(values, Mapping) else summarize(values, confidence)
    made = {"summary": summary, "direction": direction, "threshold": threshold, "paper_effect": paper_effect}
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
    near, far = (low, high) if direction == "higher" else (high, low)
    short_of_paper = paper_effect is not None and sign * (far - paper_effect) < 0
    paper = "" if paper_effect is None else f"the paper's {paper_effect:+.3f}"
    if sign * (near - threshold) > 0:
        size = f"; smaller than {paper} (the direction reproduces, not the size)" if short_of_paper else ""
        return Verdict("reproduced", f"{interval} lies {paper_side} {line}, the paper's side{size}", **made)
    if sign * (far - threshold) < 0:
        return Verdict("contradicted", f"{interval} lies {other_side} {line}; the paper's side is "
                       f"{paper_side}", **made)
    if short_of_paper:
        return Verdict(SMALLER, f"{interval} covers {line} and lies {other_side} {paper}: the paper's effect is "
                       "ruled out, a smaller one is not", **made)
    reaches = f" and reaches {paper}" if paper else ""
    return Verdict("inconclusive", f"{interval} covers {line}{reaches}", **made)


def paired_t_power(effect: float, sd: float, n: int, confidence: float = 0.95) -> float:
    """The probability that a two-sided `confidence` paired t-interval over `n` seeds excludes 0 when
    the per-seed differences are normal with mean `effect` and standard deviation `sd` (the
    non-central t: P(|T| > t_crit), T ~ t(n − 1, effect·√n / sd)). E.g. effect/sd = 0.5 at n = 34:
    0.808; 1.0 at n = 10: 0.803 (the textbook values for a paired t-test)."""
    from scipy import stats

    if n < 2:
        return 0.0
    if sd <= 0:
        raise ValueError(f"sd must be positive, not {sd!r}")
    dof = n - 1
    critical = stats.t.ppf(0.5 + confidence / 2, dof)
    shift = abs(effect) * math.sqrt(n) / sd
    return float(stats.nct.sf(critical, dof, shift) + stats.nct.cdf(-critical, dof, shift))


def seeds_for_power(effect: float, sd: float, power: float = 0.8, confidence: float = 0.95,
                    minimum: int = 3, maximum: int = 10_000) -> int:
    """The fewest seeds (at least `minimum`) at which :func:`paired_t_power` reaches `power`: the
    prospective seed count of a claim whose smallest effect of interest is `effect` and whose
    per-seed spread (from exploration seeds) is `sd`. ValueError past `maximum`."""
    if effect == 0:
        raise ValueError("the effect of interest must not be 0")
    n = max(2, minimum)
    while paired_t_power(effect, sd, n, confidence) < power:
        n += 1
        if n > maximum:
            raise ValueError(f"more than {maximum} seeds for effect {effect:g} at sd {sd:g}")
    return n


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
