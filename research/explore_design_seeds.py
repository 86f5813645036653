"""Exploration seeds for the confirmatory design: run benchmark experiments on seeds of the
exploration block (100-199) and write each claim's per-seed value, so that a claim's seed count can
come from a spread measured on seeds that will never judge it.

    PYTHONPATH=$PWD OMP_NUM_THREADS=1 nice -n 10 python research/explore_design_seeds.py \
        wmrl_controlled wmrl_research --seeds 100-119 [--workers 1]

Records go to runs/design_exploration/<profile>/bench (not shipped: exploration); the claims' values,
the records' wall times and CPU to research/regime_results/design_seeds_<experiment>.json. Seeds
outside 100-199 are refused: seeds from 1000 on are the confirmatory run's. With --values-only it
runs nothing and rewrites the values from the records already there, whatever library version made
them (a claim's definition changed, not the runs).
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, EXPERIMENTS, claim_value
from wmkit.bench.executor import LocalProcesses
from wmkit.bench.runner import ANY_VERSION, head_commit, load_records, plan_bench, run_planned
from wmkit.runs import REPO, cpu_model

EXPLORATION = range(100, 200)
OUT = Path(__file__).resolve().parent / "regime_results"


def seed_list(text: str) -> list[int]:
    """'100-119' or '100,101,105'."""
    seeds = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds += list(range(int(low), int(high or low) + 1))
    bad = [s for s in seeds if s not in EXPLORATION]
    if bad:
        raise SystemExit(f"seeds {bad} are outside the exploration block 100-199")
    return seeds


def claim_values(name: str, records: dict[int, dict]) -> dict[str, dict]:
    """claim id -> {seed: value} of every claim measured by experiment `name`."""
    out = {}
    for claim in CLAIMS:
        if claim.experiment == name:
            out[claim.id] = {s: claim_value(claim, r["result"]) for s, r in sorted(records.items())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="+")
    parser.add_argument("--seeds", required=True, type=seed_list)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--values-only", action="store_true", help="run nothing; recompute the values")
    args = parser.parse_args()
    runs_root = REPO / "runs" / "design_exploration" / args.profile
    wanted = {name: list(args.seeds) for name in args.experiments}
    if not args.values_only:
        plan = plan_bench(args.profile, wanted, runs_root, args.workers, shipped_dir=False)
        print("\n".join(plan.lines()))
        run_planned(plan, EXPERIMENTS, runs_root, "research/explore_design_seeds.py", head_commit(),
                     LocalProcesses(args.workers), print)
    records = load_records(runs_root, args.profile, wanted, ANY_VERSION if args.values_only else None)
    OUT.mkdir(exist_ok=True)
    for name in args.experiments:
        mine = records.get(name, {})
        values = claim_values(name, mine)
        out = {"experiment": name, "profile": args.profile, "seeds": sorted(mine), "cpu": cpu_model(),
               "wall_seconds": {s: r["wall_seconds"] for s, r in sorted(mine.items())},
               "codes": sorted({r["code"] for r in mine.values()}), "values": values}
        path = OUT / f"design_seeds_{name}.json"
        path.write_text(json.dumps(out, indent=1, sort_keys=True))
        print(f"{name}: {len(mine)} seeds -> {path}")
        for claim_id, per_seed in values.items():
            kept = [v for v in per_seed.values() if v is not None]
            if len(kept) > 1:
                print(f"  {claim_id:36s} mean {statistics.fmean(kept):+.4f}  sd {statistics.stdev(kept):.4f}  "
                      f"n {len(kept)}")


if __name__ == "__main__":
    main()
