"""Does the agent of `wm_r1_learned` make imagined calls at all? Read from the shipped records only.

For every shipped cpu record of `wm_r1_learned`: the start's and the trained arms' imagined calls per
episode in the evaluation (greedy and sampled at T = 1, 400 unseen settings tasks), and in training
(mean over the first and the last quarter of the GRPO steps, rollouts at the ladder's temperature).

    PYTHONPATH=$PWD python research/wm_r1_calls_in_records.py
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

RECORDS = Path(__file__).resolve().parents[1] / "executed" / "cpu" / "bench" / "records" / "wm_r1_learned"


def main() -> None:
    rows = sorted((json.loads(p.read_text())["result"] for p in RECORDS.glob("seed*.json")), key=lambda r: r["seed"])
    print(f"{len(rows)} records, seeds {[r['seed'] for r in rows]}")
    print("seed | start greedy / sampled | WM-R1 (learned) greedy / sampled | training first -> last quarter "
          "(learned; simulator)")
    drops = []
    for r in rows:
        learned, sim = r["rungs"]["learned"], r["rungs"]["0"]
        q = learned["wm_calls_first_last_quarter"]
        drops.append(q[0] - q[1])
        print(f"{r['seed']:4d} | {r['start']['greedy']['wm_calls']:.2f} / {r['start']['sampled']['wm_calls']:.2f} | "
              f"{learned['greedy']['wm_calls']:.2f} / {learned['sampled']['wm_calls']:.2f} | "
              f"{q[0]:.3f} -> {q[1]:.3f}; {sim['wm_calls_first_last_quarter'][0]:.3f} -> "
              f"{sim['wm_calls_first_last_quarter'][1]:.3f}")
    greedy = [r["rungs"]["learned"]["greedy"]["wm_calls"] for r in rows] + [r["start"]["greedy"]["wm_calls"]
                                                                             for r in rows]
    print(f"greedy calls per episode, start and WM-R1, all seeds: max {max(greedy):.3f}")
    print(f"WM-R1 in training, first - last quarter: mean {statistics.fmean(drops):+.4f}, "
          f"sd {statistics.stdev(drops):.4f}, n {len(drops)}")


if __name__ == "__main__":
    main()
