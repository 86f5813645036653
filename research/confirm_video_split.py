"""The planned confirmation of the changed arm's split (research/VIDEO_STUDIES.md): four claims
of the benchmark's `rlvr_video` experiment judged on fresh seeds only.

    PYTHONPATH=$PWD python -m wmkit bench --profile cpu --seeds 8 --only rlvr_video --workers 1 --threads 1
    PYTHONPATH=$PWD python research/confirm_video_split.py

    PYTHONPATH=$PWD python -m wmkit bench --profile cpu --seeds 18 --only rlvr_video --workers 1 --threads 1
    PYTHONPATH=$PWD python research/confirm_video_split.py --regimes

Seeds 0-2 suggested the pattern (sharper on the steps whose picture changes, blurrier on the others);
seeds 3-7 test it. The rows are computed by the benchmark's own code (`claim_row`: the claim's field,
the 95% t-interval, the verdict rule, the agent-kept precondition) from the benchmark's records (by
default the newest of each seed, whatever library version made it; each row names its records in
the JSON); seeds 0-7 together are printed apart, for reference, never as the test. Writes the rows
to research/regime_results/video_confirm_<profile>.json.

That test failed, and the seeds showed why (an MLE model that copies the last frame gives RL
something to fix, one that already moves the agent does not). ``--regimes`` is the second planned
test: fresh seeds 8-17 split by their MLE model's copy rate before RL (`COPYING_THRESHOLD`), the
same claims plus the price on unchanged steps judged in the copying regime, the moving seeds shown
as the contrast. Writes research/regime_results/video_regimes_<profile>.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from wmkit.bench.claims import CLAIMS, Claim
from wmkit.bench.runner import ANY_VERSION, claim_row, fmt_kit, load_records
from wmkit.runs import REPO, default_runs_root, jsonable
from wmkit.video.experiment import COPYING_THRESHOLD, start_regime

PLANNED_CLAIMS = ("rlvr.video_changed_steps", "rlvr.video_exact_changed", "rlvr.repetition_changed",
                  "rlvr.video_unchanged_l1")
"""The four claims fixed before seeds 3-7 ran, in the plan's order."""
FRESH_SEEDS = (3, 4, 5, 6, 7)
"""The test: seeds the hypothesis was not formed on."""
ALL_SEEDS = tuple(range(8))
REGIME_SEEDS = tuple(range(8, 18))
"""The second test's fresh seeds."""
MIN_REGIME_SEEDS = 3
"""Fewer seeds than this in a regime: no interval worth judging, the rows say "not measured"."""
UNCHANGED_L1_CLAIM = Claim("rlvr.video_unchanged_l1", "RLVR-World", "the price: the same RL blurs the frames that do "
                           "not change", "— (the kit's check)", "rlvr_video",
                           "relative_l1_gain/changed/one_step_unchanged", direction="lower",
                           kit_label="relative L1 gain of RLVR over MLE, greedy one-step predictions on the held-out "
                                     "steps whose picture does not change (below 0: RL made them worse); RL on changed "
                                     "+ 25% unchanged")
"""The first test's form of the price, as planned; undefined in a seed whose MLE model is exact on every
unchanged step, so the benchmark's `rlvr.video_unchanged_cost` (and the second test) count exact
unchanged steps instead."""
REGIME_CLAIMS = ("rlvr.repetition_changed", "rlvr.video_exact_changed", "rlvr.video_changed_steps",
                 "rlvr.video_unchanged_cost")
"""Claimed in the copying regime."""


def video_records(seeds, runs_root: Path, profile: str, code: str) -> dict[int, dict]:
    records = load_records(runs_root, profile, seeds, code, None).get("rlvr_video", {})
    missing = sorted(set(seeds) - set(records))
    if missing:
        raise SystemExit(f"no rlvr_video record ({code}) for seed(s) {missing}: run the bench "
                         "command in this file's docstring first")
    return records


def rows_for(seeds, runs_root: Path, profile: str, code: str) -> list[dict]:
    records = video_records(seeds, runs_root, profile, code)
    claims = {c.id: c for c in (*CLAIMS, UNCHANGED_L1_CLAIM)}
    return [claim_row(claims[cid], records, profile, len(seeds)) for cid in PLANNED_CLAIMS]


def split_by_regime(records: dict[int, dict]) -> dict[str, dict[int, dict]]:
    """{"copying": {seed: record}, "moving": {...}} by the MLE model's copy rate, measured before RL
    (`wmkit.video.experiment.start_regime`)."""
    regimes = {"copying": {}, "moving": {}}
    for seed, record in sorted(records.items()):
        regime = start_regime(record["result"])
        if regime is not None:
            regimes[regime][seed] = record
    return regimes


def regime_rows(records: dict[int, dict], profile: str) -> list[dict]:
    """The copying regime's claims on `records` (one regime's seeds); "not measured" below MIN_REGIME_SEEDS."""
    claims = {c.id: c for c in CLAIMS}
    rows = [claim_row(claims[cid], records, profile, len(records)) for cid in REGIME_CLAIMS]
    if len(records) < MIN_REGIME_SEEDS:
        for row in rows:
            row["verdict"] = "not measured"
            row["reason"] = f"{len(records)} seed(s) in this regime, fewer than {MIN_REGIME_SEEDS}"
    return rows


def markdown(rows: list[dict], seeds) -> str:
    lines = [f"seeds {list(seeds)}", "", "| claim | kit measures | per seed | mean ± std [95% CI] | verdict |",
             "|---|---|---|---|---|"]
    from wmkit.bench.claims import claim_value

    claims = {c.id: c for c in (*CLAIMS, UNCHANGED_L1_CLAIM)}
    for row in rows:
        per_seed = []
        for path in row["records"]:
            value = claim_value(claims[row["id"]], json.loads(Path(path).read_text())["result"])
            per_seed.append("—" if value is None else f"{value:+.3f}")
        verdict = row["verdict"] + (f" ({row['reason']})" if row.get("reason") else "")
        lines.append(f"| `{row['id']}` | {row['kit_label']} | {' / '.join(per_seed)} | {fmt_kit(row['kit'])} | "
                     f"{verdict} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--regimes", action="store_true", help="the second test: seeds 8-17 split by regime")
    parser.add_argument("--code", default=ANY_VERSION,
                        help="library version of the records (default: the newest record of each seed, any version)")
    parser.add_argument("--out", default=None, help="default research/regime_results/video_{confirm,regimes}_<profile>.json")
    args = parser.parse_args(argv)
    runs_root = default_runs_root() / args.profile
    code = args.code
    if args.regimes:
        regimes = split_by_regime(video_records(REGIME_SEEDS, runs_root, args.profile, code))
        report = {"profile": args.profile, "code": code, "seeds": REGIME_SEEDS, "threshold": COPYING_THRESHOLD,
                  "regimes": {}}
        for name, records in regimes.items():
            rows = regime_rows(records, args.profile)
            report["regimes"][name] = {"seeds": sorted(records), "rows": rows}
            note = " (the claims)" if name == "copying" else " (the contrast: no direction claimed)"
            print(f"## {name} regime{note}\n\n" + markdown(rows, sorted(records)) + "\n")
        out = Path(args.out) if args.out else REPO / "research" / "regime_results" / f"video_regimes_{args.profile}.json"
        out.write_text(json.dumps(jsonable(report), indent=1))
        print(f"wrote {out}")
        return 0
    fresh = rows_for(FRESH_SEEDS, runs_root, args.profile, code)
    together = rows_for(ALL_SEEDS, runs_root, args.profile, code)
    print("## The test: fresh seeds\n\n" + markdown(fresh, FRESH_SEEDS))
    print("\n## For reference only: seeds 0-7 together\n\n" + markdown(together, ALL_SEEDS))
    out = Path(args.out) if args.out else REPO / "research" / "regime_results" / f"video_confirm_{args.profile}.json"
    out.write_text(json.dumps(jsonable({"profile": args.profile, "code": code, "planned_claims": PLANNED_CLAIMS,
                                        "fresh_seeds": FRESH_SEEDS, "fresh": fresh, "all_seeds": together}),
                              indent=1))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
