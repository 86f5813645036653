"""The exploration values of RWML's agent claims in `rwml_agent`, for their designs.

Reads research/explore_rwml_agent.py's results through each claim's own `claim_value` (and, for the
mid-training claim, its own precondition), and writes `regime_results/design_seeds_rwml_agent.json`
(claim -> seed -> value), which research/confirmatory_design.py and tests/test_design.py read back
for a declared sd:

* `rwml.invalid_actions` (RWML model − warm-up, sampled failed-step share) from the profile's regime
  without policy RL (tag `main_no_policy_rl`, seeds 101 and 102);
* `rwml.mid_training` (greedy success after policy RL from the RWML model − after the same policy RL
  from the warm-up) from the profile's regime with policy RL (tag `main`, seeds 103 and 104). Their
  records' arm "policy RL from the RWML model" measured the RWML model itself (research/RWML_AGENT.md,
  section 5), which the claim's precondition rejects; the values written are the corrected ones, with
  that arm taken from research/rwml_agent_policy_rl_fresh.py (tag `main_policy_rl_fresh`: policy RL
  from the saved RWML model loaded fresh, the same settings; its warm arm reproduces the records' warm
  arm bitwise). Both are printed.

    PYTHONPATH=$PWD python research/rwml_agent_design_values.py

It reads files only; it runs nothing.
"""
from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, claim_value, precondition_failure

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "regime_results" / "rwml_agent"
SOURCES = {"rwml.invalid_actions": "main_no_policy_rl", "rwml.mid_training": "main"}
"""claim -> the tag (results folder of explore_rwml_agent.py) whose seeds give its exploration values."""
FRESH = "main_policy_rl_fresh"
"""The tag of rwml_agent_policy_rl_fresh.py's runs: policy RL from the saved RWML model, loaded fresh."""
OUT = HERE / "regime_results" / "design_seeds_rwml_agent.json"


def corrected(result: dict) -> dict | None:
    """`result` with its arm "policy RL from the RWML model" replaced by the fresh run's (None when that
    run, or the check that the fresh warm arm reproduces the recorded one, is missing)."""
    seed = result["seed"]
    paths = {start: RESULTS / FRESH / f"seed{seed}_{start}.json" for start in ("rwml", "warm")}
    if not all(p.exists() for p in paths.values()):
        return None
    fresh = {start: json.loads(p.read_text()) for start, p in paths.items()}
    check = fresh["warm"]
    if check["acting"] != {m: result["acting"]["warm_policy_rl"][m] for m in check["acting"]} or (
            check["reference_nll"] != result["reference_nll"]["warm_policy_rl"]):
        raise SystemExit(f"seed {seed}: the fresh warm arm does not reproduce the recorded one")
    out = copy.deepcopy(result)
    out["acting"]["rwml_policy_rl"] = fresh["rwml"]["acting"]
    out["reference_nll"]["rwml_policy_rl"] = fresh["rwml"]["reference_nll"]
    return out


def show(claim_id: str, label: str, values: dict[str, float]) -> None:
    sd = statistics.stdev(values.values()) if len(values) > 1 else float("nan")
    print(f"{claim_id} {label}: " + ", ".join(f"seed {s} {v:+.4f}" for s, v in values.items()) + f", sd {sd:.4f}")


def main() -> None:
    claims = {c.id: c for c in CLAIMS}
    out = {}
    for claim_id, tag in SOURCES.items():
        claim = claims[claim_id]
        rows = [json.loads(p.read_text()) for p in sorted((RESULTS / tag).glob("seed*.json"))]
        if claim_id == "rwml.mid_training":
            recorded = {str(r["seed"]): claim_value(claim, r) for r in rows}
            show(claim_id, f"({tag}, as recorded)", recorded)
            print("  precondition on the records:", precondition_failure(claim, {r["seed"]: r for r in rows}) or "holds")
            rows = [c for c in (corrected(r) for r in rows) if c is not None]
            print("  precondition, corrected:", precondition_failure(claim, {r["seed"]: r for r in rows}) or "holds")
            tag = f"{tag}, policy RL from the RWML model from {FRESH}"
        values = {str(r["seed"]): claim_value(claim, r) for r in rows}
        out[claim_id] = values
        show(claim_id, f"({tag})", values)
    source = ("research/rwml_agent_design_values.py from regime_results/rwml_agent/: main_no_policy_rl "
              f"(rwml.invalid_actions); main with its arm 'policy RL from the RWML model' from {FRESH} "
              "(rwml.mid_training)")
    OUT.write_text(json.dumps({"source": source, "values": out}, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
