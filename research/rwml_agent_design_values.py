"""The exploration values of RWML's agent claim in `rwml_agent`, for its design.

Reads research/explore_rwml_agent.py's results of the profile's regime without policy RL (tag
`main_no_policy_rl`, seeds 101 and 102) through the claim's own `claim_value`, and writes
`regime_results/design_seeds_rwml_agent.json` (claim -> seed -> value), which
research/confirmatory_design.py and tests/test_design.py read back for the declared sd. Only
`rwml.invalid_actions` (RWML model − warm-up, sampled failed-step share): `rwml.mid_training` needs
policy RL from both models, which no exploration seed completed (research/RWML_AGENT.md).

    PYTHONPATH=$PWD python research/rwml_agent_design_values.py

It reads files only; it runs nothing.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, claim_value

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "regime_results" / "rwml_agent" / "main_no_policy_rl"
OUT = HERE / "regime_results" / "design_seeds_rwml_agent.json"


def main() -> None:
    claim = next(c for c in CLAIMS if c.id == "rwml.invalid_actions")
    values = {str(json.loads(p.read_text())["seed"]): claim_value(claim, json.loads(p.read_text()))
              for p in sorted(RESULTS.glob("seed*.json"))}
    print(f"{claim.id}: " + ", ".join(f"seed {s} {v:+.4f}" for s, v in values.items())
          + f", sd {statistics.stdev(values.values()):.4f}")
    OUT.write_text(json.dumps({"source": "research/rwml_agent_design_values.py from regime_results/rwml_agent/"
                                         "main_no_policy_rl", "values": {claim.id: values}}, indent=1, sort_keys=True)
                   + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
