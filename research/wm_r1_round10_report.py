"""Tables of the tenth WM-R1 round (research/WM_R1_LADDER.md section 17) from the probe's rows: every
control by tag (round 3's print_control), then the planned test's fidelity claim (greedy success at
p = 0 − at p = 0.6, the same seed's two rungs) with its 95% t-interval and the verdict rule.

    python research/wm_r1_round10_report.py [results.jsonl]   (default research/regime_results/wm_r1_round10.jsonl)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "research"))
from wm_r1_round3_report import control_runs, print_control, print_starts

from wmkit import stats

TEST = "settings_test_p{}"
"""The planned test's tags, one per oracle error rate p."""


def rung_difference(runs: dict[str, list[dict]], high: str, low: str, mode: str = "greedy") -> None:
    """After-GRPO success of rung `high` − rung `low`, paired by seed, with the verdict rule."""
    by_seed = {p: {r["seed"]: r[mode][1] for r in runs.get(TEST.format(p), [])} for p in (high, low)}
    seeds = sorted(set(by_seed[high]) & set(by_seed[low]))
    if not seeds:
        return
    judged = stats.verdict([by_seed[high][s] - by_seed[low][s] for s in seeds])
    print(f"  {mode}: p = {high} − p = {low} (seeds {seeds}): {stats.describe(judged.summary)} -> {judged.text}")


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "research" / "regime_results" / "wm_r1_round10.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    print_starts(rows)
    runs = control_runs(rows)
    for tag, tag_runs in runs.items():
        print_control(tag, tag_runs)
    print("\nfidelity matters (planned test, settings world):")
    for mode in ("greedy", "sampled"):
        rung_difference(runs, "0", "0.6", mode)
        rung_difference(runs, "0", "0.3", mode)
        rung_difference(runs, "0.3", "0.6", mode)
