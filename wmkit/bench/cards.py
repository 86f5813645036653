"""The result card at the top of each notebook: what of a paper reproduces, what does not, and why.

Everything on a card is read from a benchmark report (by default the published one,
``executed/cpu/bench.json``, found as notebook 05 finds it: :func:`~wmkit.bench.runner.shipped_report`);
the only prose is the per-paper note of :data:`~wmkit.bench.claims.PAPER_SCALE_NOTES`, which holds no
numbers.
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wmkit.bench.claims import EXPERIMENT_SCALE_NOTES, KIT_SCALE_NOTE, PAPER_CLAIM, PAPER_SCALE_NOTES
from wmkit.bench.runner import (
    ANY_VERSION,
    CONFIRMATORY_PENDING,
    NULL_REPRODUCED_RATE,
    UNITS,
    VERDICT_COLORS,
    claim_unit,
    forest_limits,
    group_rows,
    load_report,
    plotted_row,
    shipped_report,
)
from wmkit.stats import SMALLER, describe


@dataclass
class ResultCard:
    """Three lines (reproduces / does not reproduce / why), or one line when there is no report; the
    paper-claim rows they count (one per group, as the report votes) and where the report came from."""

    lines: list[str]
    rows: list[dict] = field(default_factory=list)
    footer: str = ""
    title: str = ""

    def __str__(self) -> str:
        return "\n".join([*self.lines, self.footer] if self.footer else self.lines)

    def figure(self):
        """The counted claims' kit means with their 95% intervals, coloured by verdict, each beside the
        line it must clear; one small panel per unit (:func:`~wmkit.bench.runner.claim_unit`), its
        x-limits fitted to that panel's numbers. None when there are no rows."""
        if not self.rows:
            return None
        import matplotlib.pyplot as plt  # here: --help imports this module (via wmkit.bench), not matplotlib

        panels = [([r for r in self.rows if claim_unit(r) == unit], unit) for unit in UNITS]
        panels = [(rows, unit) for rows, unit in panels if rows]
        heights = [0.28 * len(rows) + 0.8 for rows, _ in panels]
        fig, axes = plt.subplots(len(panels), 1, figsize=(7, sum(heights) + 0.9), squeeze=False,
                                 gridspec_kw={"height_ratios": heights})
        for ax, (rows, unit) in zip(axes[:, 0], panels):
            drawn = [plotted_row(r, unit) for r in rows]
            low, high = forest_limits([x for _, mean, lo, hi, line in drawn for x in (mean, lo, hi, line)],
                                      log=unit == "log_ratio")
            for i, (row, (_, mean, ci_low, ci_high, line)) in enumerate(zip(rows, drawn)):
                y = len(rows) - 1 - i
                color = VERDICT_COLORS[row["verdict"]]
                ax.plot([line] * 2, [y - 0.4, y + 0.4], color="black", lw=0.8)
                if mean is None:  # at the panel's left edge, where no number of this row can be
                    ax.text(0.01, y, "not measured", color=color, va="center", fontsize=7,
                            transform=ax.get_yaxis_transform())
                    continue
                if ci_low is not None:
                    ax.plot([ci_low, ci_high], [y, y], color=color, lw=2)
                ax.plot([mean], [y], "D", color=color, ms=4)
            if unit == "log_ratio":
                from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter  # here: as above

                ax.set_xscale("log")
                ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                ax.xaxis.set_major_formatter(ScalarFormatter())  # 2, not 2×10⁰
                ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlim(low, high)
            ax.set_ylim(-0.6, len(rows) - 0.4)
            ax.set_yticks(range(len(rows)), [r["id"] for r in reversed(rows)], fontsize=7)
            ax.tick_params(axis="x", labelsize=7)
            ax.set_xlabel(UNITS[unit], fontsize=7)
        axes[0, 0].set_title(f"{self.title}: kit mean (diamond), 95% interval (bar), line to clear (black)",
                             fontsize=8)
        shown = sorted({r["verdict"] for r in self.rows}, key=list(VERDICT_COLORS).index)
        axes[-1, 0].legend(handles=[plt.Line2D([], [], color=VERDICT_COLORS[v], marker="D", lw=2, label=v)
                                    for v in shown], loc="upper center", bbox_to_anchor=(0.5, -0.9 / heights[-1]),
                           ncol=len(shown), fontsize=7, frameon=False)
        fig.tight_layout()
        return fig

    def show(self) -> None:
        """Print the lines and the footer, and show the figure (in a notebook)."""
        print(self)
        if self.figure() is not None:
            import matplotlib.pyplot as plt  # here: --help imports this module, not matplotlib

            plt.show()


def _names(ids: list[str]) -> str:
    return ", ".join(ids)


def result_card(papers: str | Iterable[str], report: dict | str | Path | None = None,
                experiments: Iterable[str] | None = None, exclude_experiments: Iterable[str] = (),
                profile: str = "cpu") -> ResultCard:
    """The result card of `papers` (one name of :data:`~wmkit.bench.claims.PAPERS` or several), from
    `report` (a loaded report, a bench.json path, or None: the published report of `profile`). Only
    rows of `experiments` (all when None) and not of `exclude_experiments` are read.

    It counts the paper claims as the report does: one verdict per group of measures, the primary's; a
    measure whose primary is not among the rows read counts as a claim of its own
    (:func:`~wmkit.bench.runner.group_rows`). Never raises for a missing or unreadable report: the
    card is then one line saying so."""
    papers = (papers,) if isinstance(papers, str) else tuple(papers)
    where = "the report given"
    if not isinstance(report, dict):
        try:
            path, where = (Path(report), str(report)) if report is not None else shipped_report(profile)
            if path is None:
                return ResultCard([f"No result card: no published benchmark report to read ({where})."])
            report = load_report(path)
        except (OSError, ValueError, KeyError) as err:
            return ResultCard([f"No result card: the benchmark report could not be read ({type(err).__name__}: {err})."])
    wanted = set(experiments) if experiments is not None else None
    excluded = set(exclude_experiments)

    def counted(section_rows: list[dict]) -> list[dict]:
        selected = copy.deepcopy([r for r in section_rows if r["paper"] in papers
                                  and (wanted is None or r.get("experiment") in wanted)
                                  and r.get("experiment") not in excluded])
        group_rows(selected)
        return [r for r in selected if r.get("kind", PAPER_CLAIM) == PAPER_CLAIM and not r.get("measures")]

    rows = counted(report["rows"])
    by_verdict = {v: [r["id"] for r in rows if r["verdict"] == v] for v in VERDICT_COLORS}
    named = " and ".join(papers) if len(papers) <= 2 else f"the {len(papers)} papers"
    if len(papers) <= 2:
        notes = [PAPER_SCALE_NOTES[p] for p in papers if p in PAPER_SCALE_NOTES]
        measured_in = {r.get("experiment") for r in rows}
        if len(measured_in) == 1 and measured_in <= set(EXPERIMENT_SCALE_NOTES):
            notes = [EXPERIMENT_SCALE_NOTES[measured_in.pop()]]
    else:
        notes = [KIT_SCALE_NOTE]
    scale = "; ".join(notes)[:1].upper() + "; ".join(notes)[1:] + "." if notes else ""
    pending = [r for r in rows if r["verdict"] == "not measured"
               and str(r.get("reason", "")).startswith((CONFIRMATORY_PENDING, "awaiting its confirmatory design"))]
    if rows and len(pending) == len(rows):
        explored = counted((report.get("exploratory") or {}).get("rows", []))
        tally = ", ".join(f"{v} {sum(r['verdict'] == v for r in explored)}" for v in VERDICT_COLORS)
        lines = [f"Reproduces: no confirmatory evidence yet for {named}: its {len(rows)} paper claims read "
                 "\"not measured\" until the confirmatory run (make bench) is made at this library version.",
                 "Does not reproduce: nothing judged yet.",
                 "Why: " + " ".join(w for w in (scale, (f"Exploratory records, shown in notebook 05 and not counted: "
                                                         f"{tally}." if explored else "")) if w)]
    elif not rows:
        lines = [f"Reproduces: no paper claim of {named} is in this report.",
                 "Does not reproduce: nothing to judge.",
                 "Why: the report has no row for these claims."]
    else:
        reproduced = by_verdict["reproduced"]
        lines = [f"Reproduces: {len(reproduced)} of {len(rows)} paper claims of {named}"
                 + (f": {_names(reproduced)}." if reproduced else ".")]
        failed = [f"{v} {len(by_verdict[v])}" + (f" ({_names(by_verdict[v])})" if by_verdict[v] else "")
                  for v in ("contradicted", SMALLER, "inconclusive", "not measured")
                  if by_verdict[v] or v in ("contradicted", "inconclusive")]
        lines.append("Does not reproduce: " + "; ".join(failed) + ".")
        why = [scale]
        if by_verdict[SMALLER]:
            why.append("Smaller than the paper's effect: each interval covers the line and rules out the paper's "
                       "effect in the kit's units.")
        if by_verdict["inconclusive"]:
            why.append("Inconclusive: each 95% interval over its seeds covers the line it must clear.")
        detail = len(papers) <= 2  # one reason per claim fits a card of one or two papers
        for v, key in (("contradicted", "verdict_reason"), ("not measured", "reason")):
            if by_verdict[v]:
                why.append(f"{v.capitalize()}: " + ("; ".join(f"{r['id']}, {r.get(key) or r.get('verdict_reason')}"
                                                              for r in rows if r["verdict"] == v)
                                                    if detail else _names(by_verdict[v])) + ".")
        if not detail:
            judged = len(rows) - len(by_verdict["not measured"])
            why.append(f"With no effect at all, about {NULL_REPRODUCED_RATE * judged:.2f} of the {judged} judged "
                       f"claims would read \"reproduced\" by chance; {len(reproduced)} do.")
        lines.append("Why: " + " ".join(w for w in why if w))
    machine = report.get("machine") or {}
    seeds = sorted({len(r.get("seeds") or []) for r in rows} - {0})  # a claim still to be run has none
    seed_text = ((f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}") + " seeds per claim" if seeds
                 else "no claim has a seed recorded yet")
    code = report.get("code", "?")
    code = "each experiment's newest records, of any library version" if code == ANY_VERSION else f"code version {code}"
    if report.get("exploratory") is not None:
        code = "confirmatory records at this library version (the exploratory ones are not counted)"
    if rows and len(pending) == len(rows):
        rows = []  # nothing to draw: every counted claim is still to be run
    footer = (f"Read from the benchmark report {where}: {code}, commit "
              f"{str(report.get('commit', '?'))[:12]}, created {report.get('created', '?')}, CPU "
              f"{machine.get('cpu_model', 'not recorded')} ({machine.get('cpu_count', '?')} cores), "
              f"{seed_text}.")
    return ResultCard(lines, rows, footer, title=named if len(papers) <= 2 else "all papers")


@dataclass
class BesideRecords:
    """A notebook's own run beside the published records, claim by claim (:func:`beside_the_records`):
    the card's verdict, then the run's value per seed beside the record of that seed. The run never
    gets a verdict of its own: one claim, one verdict, the report's."""

    lines: list[str]
    rows: list[dict] = field(default_factory=list)
    """Per claim: id, label, card (verdict, kit summary, seeds, profile), yours {seed: value}, records {seed: value}
    and which section each record is of (confirmatory or exploratory)."""

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def show(self) -> None:
        print(self)


@functools.lru_cache(maxsize=4)
def _published(profile: str) -> tuple[dict | None, str]:
    """(the published report of `profile`, loaded and checked once per process; where it came from)."""
    path, where = shipped_report(profile)
    return (load_report(path) if path is not None else None), where


def _span(seeds: list[int]) -> str:
    return f"seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}" if seeds else "no seeds yet"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def beside_the_records(results_by_seed: dict[int, dict], claim_ids: Iterable[str], run_profile: str,
                       report: dict | str | Path | None = None, profile: str = "cpu") -> BesideRecords:
    """For each claim of `claim_ids`: the report's verdict and interval (its card), then "your run
    (<run_profile>), seed S: <value>" for each seed of `results_by_seed` (seed -> a one-seed result
    shaped like the claim's experiment result, e.g. a notebook's own run), beside "the record of seed
    S" where the report ships one. Values are the claim's own measure (:func:`claims.claim_value`),
    so a run at the report's profile and seed on the same CPU kind gives the record's number. Never
    raises for a missing report: the lines say so and the run's values are still shown."""
    import json

    from wmkit.bench.claims import CLAIMS, claim_value

    by_id = {c.id: c for c in CLAIMS}
    sections: list[tuple[str, dict[str, dict]]] = []  # (section, claim id -> row): the counted rows first
    where = "the report given"
    if not isinstance(report, dict):
        try:
            report, where = (load_report(Path(report)), str(report)) if report is not None else _published(profile)
        except (OSError, ValueError, KeyError) as err:
            where, report = f"unreadable ({type(err).__name__}: {err})", None
    if report is not None:
        sections.append(("", {r["id"]: r for r in report["rows"]}))
        if report.get("exploratory"):
            sections.append(("exploratory ", {r["id"]: r for r in report["exploratory"]["rows"]}))
    lines, out = [], []
    for claim_id in claim_ids:
        claim = by_id.get(claim_id)
        if claim is None:
            raise ValueError(f"no claim {claim_id!r} in wmkit.bench.claims.CLAIMS")
        lines.append(f"{claim_id}: {claim.kit_label or claim.text} (paper: {claim.paper_figure})")
        card = None
        records: dict[int, float | None] = {}
        record_kind: dict[int, str] = {}
        row = sections[0][1].get(claim_id) if sections else None
        if row is None:
            lines.append(f"  card: no row for this claim in the published report ({where})")
        else:
            card = {"verdict": row["verdict"], "kit": row.get("kit"), "seeds": row.get("seeds") or [], "profile": profile}
            lines.append(f"  card ({profile}, {_span(card['seeds'])}): {row['verdict']}, {describe(row.get('kit') or {})}"
                         + (f" — {row.get('reason')}" if row["verdict"] == "not measured" and row.get("reason") else ""))
        for kind, rows in sections:
            shown = rows.get(claim_id)
            if shown is None:
                continue
            if kind:  # records shown but not counted: their numbers, never their verdict
                lines.append(f"  {kind}records, not counted ({_span(shown.get('seeds') or [])}): "
                             f"{describe(shown.get('kit') or {})}")
            for seed, record_path in zip(shown.get("seeds") or [], shown.get("records") or []):
                if seed in results_by_seed and seed not in records:
                    try:
                        records[seed] = claim_value(claim, json.loads(Path(record_path).read_text())["result"])
                    except (OSError, ValueError, KeyError):
                        records[seed] = None
                    record_kind[seed] = kind
        yours = {}
        for seed, result in results_by_seed.items():
            try:
                yours[seed] = claim_value(claim, result)
            except (KeyError, TypeError, ValueError, ZeroDivisionError):  # a run of another shape
                yours[seed] = None
            beside = (f" | the {record_kind[seed]}record of seed {seed} ({profile}): {_signed(records[seed])}"
                      if seed in records else f" | no {profile} record of seed {seed}")
            lines.append(f"  your run ({run_profile}), seed {seed}: {_signed(yours[seed])}{beside}")
        out.append({"id": claim_id, "label": claim.kit_label, "card": card, "yours": yours, "records": records,
                    "record_sections": {seed: kind.strip() or "counted" for seed, kind in record_kind.items()}})
    return BesideRecords(lines, out)
