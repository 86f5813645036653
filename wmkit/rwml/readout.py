"""What notebook 02 reads off RWML's agent experiments, from one-seed results or benchmark records.

Nothing here trains or measures: it collects numbers that :func:`wmkit.rwml.agent.run_rwml_agent_seed`
(the benchmark's ``rwml_agent``) and :func:`wmkit.rwml.experiment.run_rwml` (``rwml``) recorded. No
experiment's run imports this module, so changing it changes no record's key.
"""
from __future__ import annotations

from collections.abc import Sequence

ARMS = {"warm": "warm-up", "rwml": "warm-up + RWML", "warm_policy_rl": "policy RL",
        "rwml_policy_rl": "RWML + policy RL"}
"""The agent's four models (the ``acting`` keys of :func:`wmkit.rwml.agent.run_rwml_agent_seed`), in
the order a figure shows them, with their names there: the warm-up, the warm-up after RWML, and
policy RL from each of the two."""

MEASURES = ("greedy_success", "sampled_success", "greedy_invalid_share", "sampled_invalid_share")
"""The per-model measures :func:`acting_over_seeds` collects: held-out success and the share of
failed (invalid) steps, greedy and sampled at T = 1."""


def acting_over_seeds(results: Sequence[dict]) -> dict[str, dict[str, list]]:
    """model (:data:`ARMS`) -> {"seeds": [...], <measure of :data:`MEASURES`>: [one value per seed]}
    over `results` (one-seed results of :func:`wmkit.rwml.agent.run_rwml_agent_seed`, e.g. benchmark
    records' results). A seed that lacks a model (a run without policy RL) is left out of that model
    only; a model no seed has is left out."""
    out: dict[str, dict[str, list]] = {}
    for result in results:
        acting = result.get("acting") or {}
        for arm in ARMS:
            if arm not in acting:
                continue
            entry = out.setdefault(arm, {"seeds": [], **{m: [] for m in MEASURES}})
            entry["seeds"].append(result.get("seed"))
            for measure in MEASURES:
                mode, key = measure.split("_", 1)
                entry[measure].append(acting[arm][mode][key])
    return {arm: out[arm] for arm in ARMS if arm in out}


POLICY_STAGES = ("warm", "start", "after")
"""The stages at which :func:`wmkit.rwml.policy.policy_rl_experiment` measures each arm's policy:
after the behaviour-cloning warm-up, at the start of policy RL, after policy RL."""


def policy_outcome(result: dict) -> dict:
    """What the policy part of one :func:`wmkit.rwml.experiment.run_rwml` result (TextWorldExpress)
    did: the highest held-out success of any arm at any stage (:data:`POLICY_STAGES`), the share of
    invalid actions of each arm after policy RL, RWML's relative parameter change (0: RWML never
    moved the model its arm's policy RL starts from) and whether τ fell back to its default (no
    warm-up prediction matched, so every sample's reward was 0)."""
    arms = result["policy"]["arms"]
    return {"best_success": max(arms[arm][stage]["success"] for arm in arms for stage in POLICY_STAGES
                                if stage in arms[arm]),
            "invalid_share_after": {arm: arms[arm]["after"]["invalid_share"] for arm in arms},
            "rwml_param_change": result.get("rwml_param_change"),
            "tau_fallback": (result.get("threshold") or {}).get("fallback")}
