"""The exploration values of WM-R1's ablation claims in `wm_r1_learned_ablations`, for their designs.

Reads research/explore_wm_r1_ablations.py's results (tag `base`): seed 100's file through the claims'
own `claim_value`, and seed 102's printed progress lines (its run was stopped by a machine outage after
its three trained arms, before it wrote its file; `regime_results/wm_r1_ablations/base/
seed102_interrupted.txt`, success to three decimals; its best-of-4, run afterwards from the same world
model and seeded start, printed in `base_best_of_k/seed102_printed.txt`). Writes
`regime_results/design_seeds_wm_r1_learned_ablations.json` (claim -> seed -> value), which
research/confirmatory_design.py and tests/test_design.py read back for each declared sd:
`wm_r1.imagined_calls` and `wm_r1.length_reward` (sampled success of WM-R1 − its ablation) and
`wm_r1.vs_simulation` (WM-R1's greedy success − best-of-4's).

    PYTHONPATH=$PWD python research/wm_r1_ablations_design_values.py

It reads files only; it runs nothing.
"""
from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, claim_value

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "regime_results" / "wm_r1_ablations" / "base"
OUT = HERE / "regime_results" / "design_seeds_wm_r1_learned_ablations.json"
ABLATION = {"wm_r1.imagined_calls": "no_imagine", "wm_r1.length_reward": "no_length"}
"""claim -> the arm WM-R1 is compared with (sampled success, WM-R1 − that arm)."""


def printed_sampled_success(path: Path) -> dict[str, float]:
    """arm -> sampled success from lines like 'seed 102 wm_r1: greedy 0.228 sampled 0.133; ...'."""
    found = re.findall(r"^seed \d+ (\w+): greedy [\d.]+.*?sampled ([\d.]+)", path.read_text(), re.M)
    return {arm: float(value) for arm, value in found}


def printed_greedy_success(path: Path) -> dict[str, float]:
    """arm -> greedy success from the same printed lines."""
    found = re.findall(r"^seed \d+ (\w+): greedy ([\d.]+)", path.read_text(), re.M)
    return {arm: float(value) for arm, value in found}


def main() -> None:
    claims = {c.id: c for c in CLAIMS}
    values: dict[str, dict[str, float]] = {claim_id: {} for claim_id in ABLATION}
    seed100 = json.loads((RESULTS / "seed100.json").read_text())
    seed102 = printed_sampled_success(RESULTS / "seed102_interrupted.txt")
    for claim_id, arm in ABLATION.items():
        values[claim_id]["100"] = claim_value(claims[claim_id], seed100)
        values[claim_id]["102"] = round(seed102["wm_r1"] - seed102[arm], 6)
    # vs_simulation: WM-R1 greedy − best-of-4; seed 102's best-of-4 ran afterwards from the same world model
    # and seeded start (tag base_best_of_k), and printed its line only
    best_of_k_102 = float(re.search(r"^seed 102 best-of-4: ([\d.]+)",
                                    (RESULTS.parent / "base_best_of_k" / "seed102_printed.txt").read_text(), re.M).group(1))
    values["wm_r1.vs_simulation"] = {
        "100": claim_value(claims["wm_r1.vs_simulation"], seed100),
        "102": round(printed_greedy_success(RESULTS / "seed102_interrupted.txt")["wm_r1"] - best_of_k_102, 6)}
    for claim_id in values:
        print(f"{claim_id}: seed 100 {values[claim_id]['100']:+.4f}, seed 102 {values[claim_id]['102']:+.4f}, "
              f"sd {statistics.stdev(values[claim_id].values()):.4f}")
    OUT.write_text(json.dumps({"source": "research/wm_r1_ablations_design_values.py from regime_results/"
                                         "wm_r1_ablations/base and base_best_of_k (seed 100's file, seed 102's printed lines)",
                               "values": values}, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
