"""Tables of the eleventh WM-R1 round's benchmark test (tools/WM_R1_LADDER.md section 18.1): the
settings world's records (`wm_r1_small_world`) of one library version, per seed; the planned test
on the new seeds 4-7 (greedy success at p = 0 − the same seed's start, 95% t-interval, the verdict
rule); the same over all seeds, sampled, and the fidelity claim beside it; and whether seeds 0-3
repeat the previous version's records.

    python tools/wm_r1_round11_report.py [VERSION [PREVIOUS]]   (12 hex digits; default: the library
    version of this checkout, and ebf74c6ffa49, the tenth round's records)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wmkit import stats
from wmkit.bench import runner as bench

RECORDS = REPO / "runs" / "cpu" / "bench" / "wm_r1_small_world"
TEST_SEEDS = (4, 5, 6, 7)
"""The seeds of the planned test (never run before this round)."""


def records_of(version: str) -> dict[int, dict]:
    """seed -> result of the records made by library `version` (the newest file per seed)."""
    out = {}
    for path in sorted(RECORDS.glob(f"seed*_{version}_*.json"), key=lambda p: p.stat().st_mtime):
        record = json.loads(path.read_text())
        out[record["seed"]] = record["result"]
    return dict(sorted(out.items()))


def success(result: dict, key: str, mode: str) -> float:
    return result["start"][mode]["success"] if key == "start" else result["rungs"][key][mode]["success"]


def claim(per_seed: dict[int, dict], seeds, after: str, before: str, mode: str) -> str:
    seeds = [s for s in seeds if s in per_seed]
    if not seeds:
        return "no records"
    judged = stats.verdict([success(per_seed[s], after, mode) - success(per_seed[s], before, mode) for s in seeds])
    return f"seeds {seeds}: {stats.describe(judged.summary)} -> {judged.text}"


if __name__ == "__main__":
    version = sys.argv[1] if len(sys.argv) > 1 else bench.short_version(bench.code_version()[0])
    previous = sys.argv[2] if len(sys.argv) > 2 else "ebf74c6ffa49"
    per_seed = records_of(version)
    print(f"records of library version {version}: seeds {list(per_seed)}")
    rungs = list(next(iter(per_seed.values()))["rungs"]) if per_seed else []
    print(f"{'seed':>4s}  {'start':>13s}  " + "  ".join(f"{'p = ' + k:>13s}" for k in rungs) + "   (greedy / sampled)")
    for seed, result in per_seed.items():
        cells = [f"{success(result, k, 'greedy'):.3f} / {success(result, k, 'sampled'):.3f}" for k in ["start", *rungs]]
        print(f"{seed:4d}  " + "  ".join(f"{c:>13s}" for c in cells))
    print("\nTHE TEST (planned in 18.1): greedy, p = 0 − start, new seeds", claim(per_seed, TEST_SEEDS, "0", "start", "greedy"))
    print("beside it, not tested:")
    for label, seeds, after, before, mode in (
            ("greedy, p = 0 − start, all seeds", list(per_seed), "0", "start", "greedy"),
            ("sampled, p = 0 − start, new seeds", TEST_SEEDS, "0", "start", "sampled"),
            ("sampled, p = 0 − start, all seeds", list(per_seed), "0", "start", "sampled"),
            ("fidelity, greedy, p = 0 − p = 0.6, new seeds", TEST_SEEDS, "0", "0.6", "greedy"),
            ("fidelity, greedy, p = 0 − p = 0.6, all seeds", list(per_seed), "0", "0.6", "greedy")):
        print(f"  {label}: {claim(per_seed, seeds, after, before, mode)}")
    earlier = records_of(previous)
    same = [s for s in earlier if s in per_seed
            and all(success(earlier[s], k, m) == success(per_seed[s], k, m)
                    for k in ["start", *rungs] for m in ("greedy", "sampled"))]
    print(f"\nseeds whose every success rate equals version {previous}'s record: {same} of {sorted(set(earlier) & set(per_seed))}")
