"""Tables of the eleventh WM-R1 round's benchmark test (research/WM_R1_LADDER.md section 18.1): the
settings world's records (`wm_r1_small_world`) of one library version, per seed; the planned test
on the new seeds 4-7 (greedy success at p = 0 − the same seed's start, 95% t-interval, the verdict
rule); the same over all seeds, sampled, and the fidelity claim beside it; and whether seeds 0-3
repeat the previous version's records.

    python research/wm_r1_round11_report.py [VERSION [PREVIOUS]]   (12 hex digits; default: the library
    version of this checkout, and ebf74c6ffa49, the tenth round's records)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wmkit import stats
from wmkit.bench import runner as bench
from wmkit.bench.claims import CLAIMS

CLAIM = {c.id: c for c in CLAIMS}

RECORDS = REPO / "runs" / "cpu" / "bench" / "wm_r1_small_world"
TEST_SEEDS = (4, 5, 6, 7)
"""The seeds of the planned test (never run before this round)."""


def records_of(version: str) -> dict[int, dict]:
    """seed -> record made by library `version` (the newest file per seed; any config, so that an
    earlier version's records, whose sizes had fewer fields, are found too)."""
    out = {}
    for path in sorted(RECORDS.glob(f"seed*_{version}_*.json"), key=lambda p: p.stat().st_mtime):
        record = json.loads(path.read_text())
        out[record["seed"]] = {**record, "_path": str(path)}
    return dict(sorted(out.items()))


def success(result: dict, key: str, mode: str) -> float:
    return result["start"][mode]["success"] if key == "start" else result["rungs"][key][mode]["success"]


def claim(records: dict[int, dict], seeds, claim_id: str) -> str:
    """The benchmark's claim `claim_id` (bench.claim_row, as notebook 05's table computes it) on the
    records of `seeds` only."""
    chosen = {s: records[s] for s in seeds if s in records}
    if not chosen:
        return "no records"
    row = bench.claim_row(CLAIM[claim_id], chosen, "cpu", len(chosen))
    return f"seeds {row['seeds']}: {stats.describe(row['kit'])} -> {row['verdict']}: {row['verdict_reason']}"


if __name__ == "__main__":
    version = (sys.argv[1] if len(sys.argv) > 1
               else bench.short_version(bench.experiment_key(bench.EXPERIMENTS["wm_r1_small_world"]).key))
    previous = sys.argv[2] if len(sys.argv) > 2 else "ebf74c6ffa49"
    records = records_of(version)
    per_seed = {seed: record["result"] for seed, record in records.items()}
    print(f"records of library version {version}: seeds {list(per_seed)}")
    rungs = list(next(iter(per_seed.values()))["rungs"]) if per_seed else []
    print(f"{'seed':>4s}  {'start':>13s}  " + "  ".join(f"{'p = ' + k:>13s}" for k in rungs) + "   (greedy / sampled)")
    for seed, result in per_seed.items():
        cells = [f"{success(result, k, 'greedy'):.3f} / {success(result, k, 'sampled'):.3f}" for k in ["start", *rungs]]
        print(f"{seed:4d}  " + "  ".join(f"{c:>13s}" for c in cells))
    print("\nTHE TEST (planned in 18.1): greedy, p = 0 − start, new seeds",
          claim(records, TEST_SEEDS, "wm_r1.small_world_control"))
    print("beside it, not tested:")
    for label, seeds, claim_id in (
            ("greedy, p = 0 − start, all seeds", list(records), "wm_r1.small_world_control"),
            ("sampled, p = 0 − start, new seeds", TEST_SEEDS, "wm_r1.small_world_control_sampled"),
            ("sampled, p = 0 − start, all seeds", list(records), "wm_r1.small_world_control_sampled"),
            ("fidelity, greedy, p = 0 − p = 0.6, new seeds", TEST_SEEDS, "wm_r1.small_world_fidelity"),
            ("fidelity, greedy, p = 0 − p = 0.6, all seeds", list(records), "wm_r1.small_world_fidelity")):
        print(f"  {label}: {claim(records, seeds, claim_id)}")
    earlier = {seed: record["result"] for seed, record in records_of(previous).items()}
    same = [s for s in earlier if s in per_seed
            and all(success(earlier[s], k, m) == success(per_seed[s], k, m)
                    for k in ["start", *rungs] for m in ("greedy", "sampled"))]
    print(f"\nseeds whose every success rate equals version {previous}'s record: {same} of {sorted(set(earlier) & set(per_seed))}")
