"""Tables of the thirteenth WM-R1 round (research/WM_R1_LADDER.md section 20): the planned test of
WM-R1 inside the expanded edit world model (`sbedx60`) on seeds 4-9, beside GRPO on the simulator
from the same 2-epoch bar-phone starts, and the world model's judging per seed.

    python research/wm_r1_round13_report.py [ROWS]   (default: research/regime_results/wm_r1_round13.jsonl,
    else runs/control/results.jsonl; the last row of each kind and seed counts)
    ROUND13_SEEDS=2,3 python research/wm_r1_round13_report.py research/regime_results/wm_r1_round12.jsonl
        (the same tables for section 19.4's exploratory seeds, which chose this world model)
"""
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "research"))

from wm_r1_round12_report import arms_table, claim, judging_table, rows_of

TEST_SEEDS = tuple(int(s) for s in os.environ.get("ROUND13_SEEDS", "4,5,6,7,8,9").split(","))
"""The seeds of the planned test (20.1; none had been run in any round), unless ROUND13_SEEDS names others."""
TARGET = 0.90
"""The issue's judging target, per class and for the reference solutions."""


if __name__ == "__main__":
    default = REPO / "research" / "regime_results" / "wm_r1_round13.jsonl"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else (default if default.exists() else
                                                          REPO / "runs" / "control" / "results.jsonl")
    rows = rows_of(path, "sbedx60", "sbq2_editwmx60")
    seeds = [s for s in TEST_SEEDS if any((kind, s) in rows for kind in ("learned", "simulator", "judging"))]
    print(f"rows from {path.relative_to(REPO) if path.is_relative_to(REPO) else path}; seeds run: {seeds}")
    gain = arms_table(rows, seeds, "WM-R1 inside the learned model")
    judging_table(rows, seeds, TARGET)
    print("\nTHE TEST (planned in 20.1):", claim("greedy, WM-R1 inside the learned model − start", gain["learned"], seeds))
    print("beside it, not tested:")
    for label, key in (("sampled, WM-R1 (learned) − start", "learned_sampled"),
                       ("greedy, GRPO on the simulator − start (the control)", "simulator"),
                       ("greedy, WM-R1 (learned) − GRPO on the simulator, same updates", "learned_minus_simulator")):
        print("  " + claim(label, gain[key], seeds))
