"""The README's results, written from data: ``python -m wmkit readme`` (``make readme``).

Two blocks of README.md are generated, each between marker comments, and nothing else is touched:

* ``<!-- generated:results -->`` … ``<!-- /generated:results -->``: the published benchmark's
  headline (``executed/cpu/bench.json``, made by ``python -m wmkit bench --profile cpu --publish``),
  one table of the paper claims (each group's primary row: its sub-rows measure the same claim
  another way and are counted, not listed), a shorter one of the paper's limitations and the kit's
  controls, and the report's date and commit with a link to ``executed/cpu/benchmark_report.md``;
* ``<!-- generated:notebook-times -->`` … ``<!-- /generated:notebook-times -->``: each executed
  notebook's wall time at cpu (``executed/cpu/NN_*.ipynb``, papermill's ``duration``) against its
  target (:data:`wmkit.profiles.NOTEBOOK_TIME_TARGETS_MINUTES`).

``python -m wmkit readme --check`` writes nothing and exits 1 when a block differs from what the
data gives (a number edited by hand, or a report published without ``make readme``).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from wmkit.bench.claims import CLAIM_KINDS, PAPER_CLAIM
from wmkit.profiles import NOTEBOOK_TIME_TARGETS_MINUTES
from wmkit.runs import REPO, needs_checkout

BLOCKS = ("results", "notebook-times")
"""The generated blocks' names, in the marker comments ``<!-- generated:NAME -->`` … ``<!-- /generated:NAME -->``."""

PROFILE = "cpu"
"""The profile whose published report and executed notebooks the README shows."""


def markers(name: str) -> tuple[str, str]:
    return f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"


def _cell(text) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def kit_cell(kit: dict) -> str:
    """'+0.101 [-0.299, +0.501], n=3': the mean and 95% interval over seeds (a number with no interval
    says so), or '—'."""
    if not kit.get("n") or kit.get("mean") is None:
        return "—"
    if kit.get("ci_low") is None:
        return f"{kit['mean']:+.3f} (no interval), n={kit['n']}"
    return f"{kit['mean']:+.3f} [{kit['ci_low']:+.3f}, {kit['ci_high']:+.3f}], n={kit['n']}"


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def verdict_cell(row: dict, subs: int) -> str:
    verdict = f"**{row['verdict']}**" if row["verdict"] == "reproduced" else row["verdict"]
    if row["verdict"] == "not measured" and row.get("reason"):
        verdict += f" ({_short(row['reason'], 70)})"
    if subs:
        verdict += f"; {subs} other measure(s) in the report"
    return verdict


def provenance_line(report: dict) -> str:
    """Which library versions made the records, and whether this checkout's code is theirs: a table whose
    records were made by older code must say so beside its numbers, not only in the full report."""
    experiments = [e for e in report["experiments"].values() if e.get("codes")]
    versions = sorted({c for e in experiments for c in e["codes"]})
    same = sum(1 for e in experiments if (e.get("this_kit") or "").endswith("the same"))
    return (f"records made by {len(versions)} library version(s) over {len(experiments)} experiments; "
            f"this checkout's code is the code that made them for {same} of the {len(experiments)} "
            "(the report's Experiments table names each version and, for records that store their modules, "
            "which modules differ)")


def confirmatory_line(report: dict) -> str:
    """How many experiments of the confirmatory plan have their confirmatory records at this version."""
    planned = {n: e for n, e in (report["confirmatory"].get("plan") or {}).get("experiments", {}).items() if e["seeds"]}
    recorded = report["confirmatory"].get("experiments", {})
    done = [n for n, e in planned.items() if sorted((recorded.get(n) or {}).get("seeds") or []) == sorted(e["seeds"])]
    runs = sum(len(e["seeds"]) for e in planned.values())
    return (f"confirmatory records at this library version: {len(done)} of the {len(planned)} experiments of the "
            f"confirmatory run ({runs} (experiment, seed) runs declared; the design and its seeds are in the report)")


def exploratory_line(report: dict) -> str:
    """The exploratory section's paper-claim counts in one line, marked as not counted."""
    counts = report["exploratory"]["headline"]["counts"][PAPER_CLAIM]
    return ("exploratory records (the seeds the designs were chosen on; shown in the report, not counted): paper "
            "claims " + ", ".join(f"{v} {n}" for v, n in counts.items()))


def results_block(report: dict, report_link: str = f"executed/{PROFILE}/benchmark_report.md") -> str:
    """The results block's body: headline lines, the paper claims' table, the limitations and controls'
    table, and where it comes from. `report`: a bench.json as saved (its primary rows, verdicts as stored);
    a report with a confirmatory section shows that section's rows and one line of exploratory counts."""
    rows = report["rows"]
    primaries = [r for r in rows if not r.get("measures")]
    subs = {r["id"]: sum(s.get("measures") == r["id"] for s in rows) for r in primaries}
    split = report.get("exploratory") is not None
    lines = [f"The kit's benchmark at the `{report['profile']}` profile, each claim over "
             + ("its experiment's declared confirmatory seeds" if split else "its experiment's recorded seeds")
             + " (mean, 95% t-interval, number of seeds):", ""]
    lines += [f"* {t}" for t in report["headline"]["text"]]
    lines += [f"* {confirmatory_line(report)}", f"* {exploratory_line(report)}"] if split else [
        f"* {provenance_line(report)}"]
    lines += ["", "| paper | claim | paper's figure | kit (mean [95% CI], n seeds) | verdict |", "|---|---|---|---|---|"]
    for row in primaries:
        if row.get("kind", PAPER_CLAIM) == PAPER_CLAIM:
            lines.append("| " + " | ".join(_cell(c) for c in (row["paper"], row["claim"], row["paper_figure"],
                                                                kit_cell(row["kit"]), verdict_cell(row, subs[row["id"]])))
                         + " |")
    lines += ["", "Counted apart: the papers' stated limitations and the kit's own controls.", "",
              "| paper | kind | claim | kit (mean [95% CI], n seeds) | verdict |", "|---|---|---|---|---|"]
    for kind in CLAIM_KINDS[1:]:
        for row in primaries:
            if row.get("kind") == kind:
                lines.append("| " + " | ".join(_cell(c) for c in (row["paper"], kind, row["claim"], kit_cell(row["kit"]),
                                                                    verdict_cell(row, subs[row["id"]]))) + " |")
    lines += ["", f"Generated by `python -m wmkit readme` from `executed/{report['profile']}/bench.json`, created "
              f"{report['created'][:10]} at commit `{report['commit'][:12]}` by `{report.get('command') or 'report only'}`; "
              f"every row, its sub-rows, records, keys and CPUs: [`{report_link}`]({report_link})."]
    return "\n".join(lines)


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def notebook_times_block(executed_dir: Path | None = None, profile: str = PROFILE) -> str:
    """The notebook-times block's body: one row per executed notebook ``NN_*.ipynb`` with papermill's
    wall time and date, against the profile's target, and the CPU that ran it where the copy records it
    (``metadata.wmkit_published``, written by tools/publish_executed.py; older copies: "not recorded")."""
    executed_dir = Path(executed_dir) if executed_dir is not None else REPO / "executed" / profile
    targets = NOTEBOOK_TIME_TARGETS_MINUTES.get(profile, {})
    lines = [f"Wall time of each executed notebook at the `{profile}` profile (`executed/{profile}/NN_*.ipynb`, "
             "as papermill recorded it), against the kit's target on 2 CPU cores:", "",
             "| notebook | wall time | target | within target | executed | CPU |", "|---|---|---|---|---|---|"]
    for path in sorted(executed_dir.glob("[0-9][0-9]_*.ipynb")):
        metadata = json.loads(path.read_text()).get("metadata", {})
        papermill = metadata.get("papermill", {})
        cpu = (metadata.get("wmkit_published") or {}).get("cpu_model") or "not recorded"
        seconds = papermill.get("duration")
        target = targets.get(path.name[:2])
        link = f"[`{path.name}`](executed/{profile}/{path.name})"
        if seconds is None:
            lines.append(f"| {link} | not recorded | {f'{target} min' if target else '—'} | — | — | {cpu} |")
            continue
        within = "—" if target is None else ("yes" if seconds <= 60 * target else "no")
        lines.append(f"| {link} | {_minutes(seconds)} | {f'{target} min' if target else '—'} | {within} | "
                     f"{(papermill.get('end_time') or papermill.get('start_time') or '—')[:10]} | {cpu} |")
    return "\n".join(lines)


def generated_blocks(repo: Path = REPO, profile: str = PROFILE) -> dict[str, str]:
    """name -> the body each block should have, from the data in `repo`."""
    report = json.loads((Path(repo) / "executed" / profile / "bench.json").read_text())
    return {"results": results_block(report), "notebook-times": notebook_times_block(Path(repo) / "executed" / profile)}


def render(text: str, blocks: dict[str, str]) -> str:
    """`text` with each block's body between its markers replaced by `blocks[name]`. Raises
    ValueError when a block's markers are missing, doubled or out of order."""
    for name, body in blocks.items():
        start, end = markers(name)
        if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
            raise ValueError(f"README: the markers {start} … {end} must each appear once, in that order")
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
        text = pattern.sub(lambda _: f"{start}\n{body}\n{end}", text)
    return text


def update_readme(path: Path | None = None, check: bool = False, repo: Path = REPO) -> bool:
    """Rewrite README.md's generated blocks; with `check`, write nothing. Returns whether it was
    already up to date."""
    path = Path(path) if path is not None else Path(repo) / "README.md"
    text = path.read_text()
    new = render(text, generated_blocks(repo))
    if new != text and not check:
        path.write_text(new)
    return new == text


def add_readme_parser(sub) -> None:
    p = sub.add_parser("readme", help="rewrite README.md's generated blocks (results, notebook times) from "
                                      "executed/cpu/bench.json and the executed notebooks")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block is out of date")


def readme_main(args) -> int:
    current = update_readme(check=args.check, repo=needs_checkout("wmkit readme"))
    if args.check:
        print("README.md: generated blocks up to date" if current else
              "README.md: generated blocks differ from the data (run: python -m wmkit readme)")
        return 0 if current else 1
    print("README.md: generated blocks " + ("already up to date" if current else "rewritten"))
    return 0
