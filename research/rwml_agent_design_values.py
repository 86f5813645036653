"""The exploration values of RWML's agent claims in `rwml_agent`, for their designs.

Reads research/explore_rwml_agent.py's results through each claim's own `claim_value`, and writes
`regime_results/design_seeds_rwml_agent.json` (claim -> seed -> value), which
research/confirmatory_design.py and tests/test_design.py read back for the declared sd:

* `rwml.invalid_actions` (RWML model − warm-up, sampled failed-step share) from the profile's regime
  without policy RL (tag `main_no_policy_rl`, seeds 101 and 102);
* `rwml.mid_training` (greedy success after policy RL, from the RWML model − from the warm-up) from
  the profile's regime with policy RL from both models (tag `main`, seeds 103 and 104;
  research/RWML_AGENT.md, section 5). A seed of `main` whose run was cut (seed 100) wrote no JSON.

    PYTHONPATH=$PWD python research/rwml_agent_design_values.py

It reads files only; it runs nothing.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, claim_value

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "regime_results" / "rwml_agent"
SOURCES = {"rwml.invalid_actions": "main_no_policy_rl", "rwml.mid_training": "main"}
"""claim -> the tag (results folder of explore_rwml_agent.py) whose seeds give its exploration values."""
OUT = HERE / "regime_results" / "design_seeds_rwml_agent.json"


def main() -> None:
    claims = {c.id: c for c in CLAIMS}
    out = {}
    for claim_id, tag in SOURCES.items():
        rows = [json.loads(p.read_text()) for p in sorted((RESULTS / tag).glob("seed*.json"))]
        values = {str(r["seed"]): claim_value(claims[claim_id], r) for r in rows}
        out[claim_id] = values
        sd = statistics.stdev(values.values()) if len(values) > 1 else float("nan")
        print(f"{claim_id} ({tag}): " + ", ".join(f"seed {s} {v:+.4f}" for s, v in values.items()) + f", sd {sd:.4f}")
    source = "research/rwml_agent_design_values.py from regime_results/rwml_agent/" + " and ".join(
        f"{tag} ({claim_id})" for claim_id, tag in SOURCES.items())
    OUT.write_text(json.dumps({"source": source, "values": out}, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
