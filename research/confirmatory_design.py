"""How each claim's confirmatory seed count follows from its exploration records.

For every claim that votes, from its declared design (`wmkit.bench.claims`, `Design`): its per-seed
values on the exploration seeds it names (the shipped records, or a values file of
research/explore_design_seeds.py), their mean and sd, the sd at its 80% upper confidence limit, the
seeds for 80% power at the SESOI (two-sided 95% paired t), the seeds its budget buys at its
experiment's seconds per seed, and the seeds it gets; then per experiment how many confirmatory seeds
it runs (the most any of its claims gets) and their worker time, and the total on 2 workers. It
prints counts, never the confirmatory seeds themselves: no study names one (tests/test_design.py). It checks that each declared sd is the one its source gives
(to 3 significant digits) and prints a line for each that is not.

    PYTHONPATH=$PWD python research/confirmatory_design.py [--workers 2]

It reads records and values files only; it runs nothing.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from wmkit.bench.claims import CLAIMS, Claim, claim_value
from wmkit.bench.confirmatory import claim_plans, experiment_plans, seed_mentions, votes
from wmkit.bench.runner import duration
from wmkit.design import EXPERIMENT_SECONDS

REPO = Path(__file__).resolve().parent.parent


def exploration_values(claim: Claim) -> dict[int, float | None]:
    """seed -> `claim`'s value on the exploration seeds its design names (`Design.sd_source`): from the
    shipped records (per seed the newest record of the claim's experiment, any version) or from a
    values file of explore_design_seeds.py (a path under research/)."""
    path_text, _, seeds_text = claim.design.sd_source.partition(" ")
    seeds = sorted(seed_mentions(seeds_text))
    if path_text.endswith(".json"):
        values = json.loads((REPO / "research" / path_text).read_text())["values"][claim.id]
        return {s: values.get(str(s)) for s in seeds}
    out: dict[int, float | None] = {}
    for seed in seeds:
        paths = sorted((REPO / path_text / claim.experiment).glob(f"seed{seed}_*.json"))
        records = [json.loads(p.read_text()) for p in paths]
        if records:
            out[seed] = claim_value(claim, max(records, key=lambda r: r.get("started", ""))["result"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    plans = claim_plans()
    mismatched = []
    print("| claim | exploration | mean | sd | planning sd | SESOI | seeds for 80% power | in budget | seeds | power |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for claim in CLAIMS:
        if not votes(claim) or claim.design is None:
            continue
        if claim.design.pending:
            print(f"| {claim.id} | pending: {claim.design.pending} | | | | | | | | |")
            continue
        values = [v for v in exploration_values(claim).values() if v is not None]
        mean, sd = statistics.fmean(values), statistics.stdev(values)
        if f"{sd:.3g}" != f"{claim.design.sd:.3g}" or len(values) != claim.design.sd_seeds:
            mismatched.append(f"{claim.id}: declared sd {claim.design.sd:.3g} (n={claim.design.sd_seeds}), "
                              f"its source gives {sd:.3g} (n={len(values)})")
        plan = plans[claim.id]
        print(f"| {claim.id} | {claim.design.sd_source} | {mean:+.4f} | {sd:.4f} | {plan.sd_planning:.4f} | "
              f"{claim.design.sesoi:.3g} | {plan.seeds_for_power} | {plan.seeds_in_budget} "
              f"({claim.design.budget_hours:g} h) | {plan.seeds} | {plan.power:.2f} |")
    print()
    print("| experiment | seeds | seconds per seed | worker time |")
    print("|---|---|---|---|")
    total = 0.0
    for name, plan in experiment_plans().items():
        if plan.seeds:
            total += plan.worker_seconds
            print(f"| {name} | {len(plan.seeds)} | "
                  f"{EXPERIMENT_SECONDS[name].seconds:.0f} | {duration(plan.worker_seconds)} |")
    print(f"\ntotal: {duration(total)} of worker time, at least {duration(total / args.workers)} on "
          f"{args.workers} workers")
    for line in mismatched:
        print("MISMATCH", line)


if __name__ == "__main__":
    main()
