"""The planned confirmation of the changed arm's split (tutorials/video_world_models.md): four claims
of the benchmark's `rlvr_video` experiment judged on fresh seeds only.

    PYTHONPATH=$PWD python -m wmkit bench --profile cpu --seeds 8 --only rlvr_video --workers 1 --threads 1
    PYTHONPATH=$PWD python tools/confirm_video_split.py

Seeds 0-2 suggested the pattern (sharper on the steps whose picture changes, blurrier on the others);
seeds 3-7 test it. The rows are computed by the benchmark's own code (`claim_row`: the claim's field,
the 95% t-interval, the verdict rule, the agent-kept precondition) from the records of the current
library version; seeds 0-7 together are printed apart, for reference, never as the test. Writes the
rows to tools/regime_results/video_confirm_<profile>.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from wmkit.bench.claims import CLAIMS
from wmkit.bench.runner import claim_row, code_version, fmt_kit, load_records
from wmkit.runs import REPO, default_runs_root, jsonable

PLANNED_CLAIMS = ("rlvr.video_changed_steps", "rlvr.video_exact_changed", "rlvr.repetition_changed",
                  "rlvr.video_unchanged_cost")
"""The four claims fixed before seeds 3-7 ran, in the plan's order."""
FRESH_SEEDS = (3, 4, 5, 6, 7)
"""The test: seeds the hypothesis was not formed on."""
ALL_SEEDS = tuple(range(8))


def rows_for(seeds, runs_root: Path, profile: str, code: str) -> list[dict]:
    records = load_records(runs_root, profile, seeds, code, None).get("rlvr_video", {})
    missing = sorted(set(seeds) - set(records))
    if missing:
        raise SystemExit(f"no rlvr_video record of library version {code} for seed(s) {missing}: run the bench "
                         "command in this file's docstring first")
    claims = {c.id: c for c in CLAIMS}
    return [claim_row(claims[cid], records, profile, len(seeds)) for cid in PLANNED_CLAIMS]


def markdown(rows: list[dict], seeds) -> str:
    lines = [f"seeds {list(seeds)}", "", "| claim | kit measures | per seed | mean ± std [95% CI] | verdict |",
             "|---|---|---|---|---|"]
    from wmkit.bench.claims import claim_value

    claims = {c.id: c for c in CLAIMS}
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
    parser.add_argument("--out", default=None, help="default tools/regime_results/video_confirm_<profile>.json")
    args = parser.parse_args(argv)
    runs_root = default_runs_root() / args.profile
    code, dirty = code_version()
    if dirty:
        raise SystemExit("the library has uncommitted changes: commit first, so the records name a commit")
    fresh = rows_for(FRESH_SEEDS, runs_root, args.profile, code)
    together = rows_for(ALL_SEEDS, runs_root, args.profile, code)
    print("## The test: fresh seeds\n\n" + markdown(fresh, FRESH_SEEDS))
    print("\n## For reference only: seeds 0-7 together\n\n" + markdown(together, ALL_SEEDS))
    out = Path(args.out) if args.out else REPO / "tools" / "regime_results" / f"video_confirm_{args.profile}.json"
    out.write_text(json.dumps(jsonable({"profile": args.profile, "code": code, "planned_claims": PLANNED_CLAIMS,
                                        "fresh_seeds": FRESH_SEEDS, "fresh": fresh, "all_seeds": together}),
                              indent=1))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
