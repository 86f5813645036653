"""Where the cpu benchmark's time goes, from the shipped records' own timings.

For each experiment of the published table: the seeds it is judged on, the worker time of the
newest record of each seed (its `wall_seconds`), and, for the WM-R1 experiments, the phases their
results time (world-model training, each GRPO run, and the rest: the SFT start and the
evaluations). wm_r1's notebook-01 world model is built once for all its seeds, outside their wall
times, and counted once. Then the whole table's time on N workers (the sum over workers when the
runs pack perfectly, a lower bound) against a budget.

Last, a planning figure, not a re-analysis: for each claim row that votes and that its seeds
decided (reproduced or contradicted in the published report), the fewest seeds n at which the
95% t-interval's expected half-width, t(n-1) * sd / sqrt(n) with the observed sd, stays clear of
the line by the observed mean; per experiment the largest such n (at least 3), and what the table
would cost at those seeds. Choosing seeds from the effects they measured is post hoc: a table
that adopted these counts would have to declare them before a fresh run.

    PYTHONPATH=$PWD python research/bench_cost.py [--workers 2] [--budget-hours 2]

It reads only `executed/cpu/bench/records/`; it runs nothing.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from wmkit.bench.runner import cpu_kind
from wmkit.stats import t_quantile

RECORDS = Path(__file__).resolve().parent.parent / "executed" / "cpu" / "bench" / "records"
REPORT = RECORDS.parent.parent / "bench.json"
FLOOR_SEEDS = 3


def newest_records(records_dir: Path = RECORDS) -> dict[str, dict[int, dict]]:
    """experiment -> seed -> the record of that seed that started last (any library version)."""
    out: dict[str, dict[int, dict]] = defaultdict(dict)
    for path in sorted(records_dir.glob("*/*.json")):
        record = json.loads(path.read_text())
        seeds = out[record["experiment"]]
        if record["seed"] not in seeds or record["started"] > seeds[record["seed"]]["started"]:
            seeds[record["seed"]] = record
    return dict(out)


def wm_r1_phases(result: dict) -> dict[str, float]:
    """Seconds per phase of one WM-R1 record (the fields its result times); 'rest' is left for the caller."""
    phases = {}
    if "world_model_training" in result:
        phases["learned world model SFT"] = result["world_model_training"].get("seconds", 0.0)
    for rung, row in (result.get("rungs") or {}).items():
        phases[f"rung {rung}: GRPO"] = row.get("train_seconds", 0.0)
        phases[f"rung {rung}: evaluation"] = row.get("seconds", 0.0) - row.get("train_seconds", 0.0)
    for arm, row in (result.get("training") or {}).items():
        phases[f"{arm}: GRPO"] = row.get("seconds", 0.0)
    for arm, row in (result.get("arms") or {}).items():
        if isinstance(row, dict) and "eval_seconds" in row:
            phases[f"{arm}: evaluation"] = row["eval_seconds"]
    return phases


def shared_phases(result: dict) -> dict[str, float]:
    """Seconds of what a WM-R1 record's seeds share, built once before they run (the experiment's
    prepare step) and so outside each seed's `wall_seconds`: wm_r1's notebook-01 world model."""
    if isinstance(result.get("world_model"), dict):
        return {"notebook 01 world model (built once, shared by the seeds)": result["world_model"].get("seconds", 0.0)}
    return {}


def shared_seconds(seeds: dict[int, dict]) -> float:
    """What an experiment's seeds share, built once (:func:`shared_phases` of its newest record)."""
    newest = max(seeds.values(), key=lambda r: r["started"])
    return sum(shared_phases(newest["result"]).values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget-hours", type=float, default=2.0)
    args = parser.parse_args()
    records = newest_records()
    total = 0.0
    print(f"{'experiment':24s} {'seeds':>5s} {'worker min':>10s} {'min/seed':>9s}  CPU(s)")
    for name in sorted(records, key=lambda n: -sum(r["wall_seconds"] for r in records[n].values())):
        seeds = records[name]
        seconds = sum(r["wall_seconds"] for r in seeds.values()) + shared_seconds(seeds)
        total += seconds
        cpus = sorted({cpu_kind(r.get("cpu")) for r in seeds.values()})
        print(f"{name:24s} {len(seeds):5d} {seconds / 60:10.1f} {seconds / 60 / len(seeds):9.1f}  {', '.join(cpus)}")
    print(f"{'all':24s} {'':5s} {total / 60:10.1f}   = {total / 3600:.1f} worker-hours; on {args.workers} workers "
          f"at least {total / 3600 / args.workers:.1f} h against a budget of {args.budget_hours:g} h "
          f"({total / 3600 / args.workers / args.budget_hours:.1f}x)")
    for name in ("wm_r1_learned", "wm_r1_ladder", "wm_r1_small_world", "wm_r1"):
        if name not in records:
            continue
        sums: dict[str, float] = defaultdict(float)
        wall = 0.0
        for record in records[name].values():
            wall += record["wall_seconds"]
            phases = wm_r1_phases(record["result"])
            for phase, seconds in phases.items():
                sums[phase] += seconds
            sums["rest: SFT start, judging, other evaluation"] += record["wall_seconds"] - sum(phases.values())
        print(f"\n{name}: {len(records[name])} seeds, {wall / len(records[name]) / 60:.1f} min per seed")
        for phase, seconds in sorted(sums.items(), key=lambda kv: -kv[1]):
            print(f"  {phase:46s} {seconds / len(records[name]) / 60:6.1f} min/seed  {seconds / wall:6.1%}")
        newest = max(records[name].values(), key=lambda r: r["started"])
        for phase, seconds in shared_phases(newest["result"]).items():
            print(f"  {phase}: {seconds / 60:.1f} min once")
    seeds_needed_section(records, args.workers, args.budget_hours)


def seeds_needed(mean: float, sd: float, line: float = 0.0, most: int = 200) -> int | None:
    """Fewest seeds n >= 2 with t(n-1) * sd / sqrt(n) < |mean - line|; None past `most`."""
    gap = abs(mean - line)
    for n in range(2, most + 1):
        if t_quantile(0.95, n - 1) * sd / n ** 0.5 < gap:
            return n
    return None


def seeds_needed_section(records: dict[str, dict[int, dict]], workers: int, budget_hours: float) -> None:
    rows = json.loads(REPORT.read_text())["rows"]
    needed: dict[str, list[int]] = defaultdict(list)
    print("\nseeds the observed effects need (voting rows its seeds decided; post hoc, for planning only)")
    print(f"  {'claim':36s} {'kind':14s} {'verdict':12s} {'n':>3s} {'mean':>7s} {'sd':>6s} {'needs':>5s}")
    for row in rows:
        kit = row["kit"]
        if row["measures"] or row["verdict"] not in ("reproduced", "contradicted"):
            continue
        n = seeds_needed(kit["mean"], kit["std"], row["threshold"] or 0.0)
        needed[row["experiment"]].append(n)
        print(f"  {row['id']:36s} {row['kind']:14s} {row['verdict']:12s} {kit['n']:3d} {kit['mean']:+7.3f} "
              f"{kit['std']:6.3f} {n if n else '>200':>5}")
    total = 0.0
    print(f"\n  {'experiment':24s} {'declared':>8s} {'needs':>5s} {'worker min':>10s}  (at its records' min/seed)")
    for name, seeds in sorted(records.items()):
        per_seed = sum(r["wall_seconds"] for r in seeds.values()) / len(seeds)
        n = max([FLOOR_SEEDS] + [k for k in needed.get(name, []) if k])
        seconds = n * per_seed + shared_seconds(seeds)
        total += seconds
        print(f"  {name:24s} {len(seeds):8d} {n:5d} {seconds / 60:10.1f}")
    print(f"  {'all':24s} {'':8s} {'':5s} {total / 60:10.1f}   on {workers} workers at least "
          f"{total / 3600 / workers:.1f} h against {budget_hours:g} h ({total / 3600 / workers / budget_hours:.1f}x)")


if __name__ == "__main__":
    main()
