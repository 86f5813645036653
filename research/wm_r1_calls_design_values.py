"""The exploration values of `wm_r1.calls_fall` in `wm_r1_calls`, for its design.

Reads research/explore_wm_r1_ablations.py's results at imagine_rate 1.0 (tag `imagine1`, seeds 100 and
101, the `wm_r1` arm only: the set-up `wmkit.wm_r1.calls` runs) through the claim's own `claim_value`
(calls per episode in the first quarter of WM-R1's GRPO steps − in the last quarter), and its
preconditions on each seed. Writes `regime_results/design_seeds_wm_r1_calls.json` (claim -> seed ->
value), which research/confirmatory_design.py and tests/test_design.py read back for the declared sd.

    PYTHONPATH=$PWD python research/wm_r1_calls_design_values.py

It reads files only; it runs nothing.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, claim_value, precondition_failure

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "regime_results" / "wm_r1_ablations" / "imagine1"
OUT = HERE / "regime_results" / "design_seeds_wm_r1_calls.json"
CLAIM = "wm_r1.calls_fall"


def main() -> None:
    claim = {c.id: c for c in CLAIMS}[CLAIM]
    results = {int(p.stem.removeprefix("seed")): json.loads(p.read_text()) for p in sorted(RESULTS.glob("seed*.json"))}
    values = {str(seed): claim_value(claim, result) for seed, result in results.items()}
    for seed, result in results.items():
        print(f"seed {seed}: imagine_rate {result['imagine_rate']}, first − last quarter {values[str(seed)]:+.4f}, "
              f"precondition: {precondition_failure(claim, {seed: result}) or 'holds'}")
    print(f"{CLAIM}: sd {statistics.stdev(values.values()):.4f} over seeds {sorted(results)}")
    OUT.write_text(json.dumps({"source": "research/wm_r1_calls_design_values.py from regime_results/"
                                         "wm_r1_ablations/imagine1 (explore_wm_r1_ablations.py --imagine-rate 1.0 "
                                         "--arms wm_r1)",
                               "values": {CLAIM: values}}, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
