"""``make bench-verify``: check the shipped confirmatory evidence on this machine in under an hour.

For each experiment whose confirmatory records at this library version ship with the kit, rerun its
cheapest confirmatory seed (the shortest shipped wall time) and compare the result with the shipped
record: on the same CPU kind (model and torch kernel set, :func:`wmkit.bench.runner.cpu_kind`) the
two must be bit-identical, timings aside (:func:`wmkit.bench.rekey.result_differences`, the comparison
``make bench-rekey`` carries records by); on another kind a seed's floats differ, so each claim's
difference is printed beside that claim's spread over its confirmatory seeds, the scale on which a
verdict moves. The plan packs the reruns onto the workers (longest first) and leaves out the longest
experiments until the estimate fits the budget (45 minutes by default), naming each one left out
and the command that verifies it.

    python -m wmkit bench --verify [--workers 2] [--budget-minutes 45] [--only ...] [--plan]
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wmkit.bench.claims import CLAIMS, EXPERIMENTS, Claim, Experiment, claim_value
from wmkit.bench.confirmatory import experiment_plans
from wmkit.bench.executor import LocalProcesses
from wmkit.bench.rekey import result_differences
from wmkit.bench.runner import (
    BenchPlan,
    cpu_kind,
    current_record_path,
    duration,
    experiment_key,
    head_commit,
    published_dir,
    run_planned,
    select_experiments,
)
from wmkit.profiles import resolve_profile_name
from wmkit.runs import cpu_model, default_runs_root


@dataclass
class VerifyPlan:
    """Which confirmatory seed of each experiment is rerun, its estimated seconds, what is left out."""

    profile: str
    workers: int
    budget_seconds: float
    chosen: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    """experiment -> why it is not verified by this plan."""
    shipped: dict[str, Path] = field(default_factory=dict)
    """experiment -> the shipped record of its chosen seed."""

    def makespan(self, names: Sequence[str] | None = None) -> float:
        """Estimated wall seconds of the reruns of `names` (default: the chosen) on the workers,
        longest first onto the least-loaded worker."""
        loads = [0.0] * max(1, self.workers)
        for name in sorted(self.chosen if names is None else names, key=lambda n: -self.seconds[n]):
            loads[loads.index(min(loads))] += self.seconds[name]
        return max(loads)

    def lines(self) -> list[str]:
        out = [f"bench-verify plan, profile {self.profile}: {len(self.chosen)} experiment(s), one confirmatory seed "
               f"each, about {duration(self.makespan())} on {self.workers} worker(s) (budget "
               f"{duration(self.budget_seconds)}; estimates are the shipped records' wall times)"]
        for name, seed in sorted(self.chosen.items(), key=lambda kv: -self.seconds[kv[0]]):
            out.append(f"  {name:24s} seed {seed:5d}  ~{duration(self.seconds[name])}")
        for name, why in self.left_out.items():
            out.append(f"  {name:24s} not verified: {why}")
        return out


def plan_verify(profile: str, workers: int = 2, budget_minutes: float = 45.0, only: Sequence[str] | None = None,
                records_dir: Path | None = None, experiments: dict[str, Experiment] | None = None,
                confirmatory: dict[str, list[int]] | None = None) -> VerifyPlan:
    """The :class:`VerifyPlan`: per experiment (of `only`, default all) the confirmatory seed whose
    shipped record at this version has the shortest wall time; then the longest experiments left
    out until the estimated makespan on `workers` fits `budget_minutes`."""
    experiments = EXPERIMENTS if experiments is None else experiments
    records_dir = published_dir(profile) / "bench" / "records" if records_dir is None else Path(records_dir)
    if confirmatory is None:
        confirmatory = {n: p.seeds for n, p in experiment_plans().items()}
    plan = VerifyPlan(profile, workers, budget_minutes * 60)
    for name in only or list(experiments):
        seeds = confirmatory.get(name, [])
        if not seeds:
            plan.left_out[name] = "no confirmatory seeds (no claim that votes reads it)"
            continue
        key = experiment_key(experiments[name]).key
        found = {}
        for seed in seeds:
            path = current_record_path(records_dir, experiments[name], profile, seed, key)
            if path.exists():
                found[seed] = (json.loads(path.read_text())["wall_seconds"], path)
        if not found:
            plan.left_out[name] = "no confirmatory record of this version ships with the kit (confirmatory run pending)"
            continue
        seed = min(found, key=lambda s: (found[s][0], s))
        plan.chosen[name], plan.seconds[name], plan.shipped[name] = seed, float(found[seed][0]), found[seed][1]
    while plan.chosen and plan.makespan() > plan.budget_seconds:
        longest = max(plan.chosen, key=lambda n: plan.seconds[n])
        plan.left_out[longest] = (f"~{duration(plan.seconds[longest])} does not fit the budget with the others: "
                                  f"python -m wmkit bench --verify --only {longest} --budget-minutes "
                                  f"{int(plan.seconds[longest] / 60) + 5}")
        del plan.chosen[longest]
    return plan


def claim_spread(claim: Claim, records_dir: Path, profile: str, experiment: Experiment, seeds: Sequence[int]) -> float | None:
    """The sd of `claim`'s value over the shipped records of its confirmatory `seeds` at this version."""
    key = experiment_key(experiment).key
    values = []
    for seed in seeds:
        path = current_record_path(records_dir, experiment, profile, seed, key)
        if path.exists():
            value = claim_value(claim, json.loads(path.read_text())["result"])
            if value is not None:
                values.append(value)
    return statistics.stdev(values) if len(values) > 1 else None


def verify(profile: str = "cpu", workers: int = 2, budget_minutes: float = 45.0, only: Sequence[str] | None = None,
           runs_root: Path | None = None, plan_only: bool = False, log: Callable[[str], None] = print,
           records_dir: Path | None = None, experiments: dict[str, Experiment] | None = None,
           claims: Sequence[Claim] = CLAIMS, confirmatory: dict[str, list[int]] | None = None) -> dict:
    """Run :func:`plan_verify`'s reruns into ``<runs_root>/verify`` (default ``runs/<profile>/verify``)
    and compare each with its shipped record. Returns {experiment: {"seed", "same_cpu", "identical",
    "differences", "claims": {id: (rerun − shipped, confirmatory sd)}}}; ``ok`` is False when a rerun
    on the same CPU kind differs from its record."""
    experiments = EXPERIMENTS if experiments is None else experiments
    records_dir = published_dir(profile) / "bench" / "records" if records_dir is None else Path(records_dir)
    if confirmatory is None:
        confirmatory = {n: p.seeds for n, p in experiment_plans().items()}
    plan = plan_verify(profile, workers, budget_minutes, only, records_dir, experiments, confirmatory)
    for line in plan.lines():
        log(line)
    if plan_only or not plan.chosen:
        if not plan.chosen:
            log("bench-verify: nothing to verify")
        return {"ok": True, "plan": plan, "experiments": {}}
    root = (default_runs_root() / profile if runs_root is None else Path(runs_root)) / "verify"
    bench_plan = BenchPlan(profile, workers, {n: [s] for n, s in plan.chosen.items()},
                           {n: [s] for n, s in plan.chosen.items()}, dict(plan.seconds))
    run_planned(bench_plan, experiments, root, "python -m wmkit bench --verify", head_commit(),
                 LocalProcesses(workers), log)
    here = cpu_kind(cpu_model())
    out, ok = {}, True
    for name, seed in plan.chosen.items():
        shipped = json.loads(plan.shipped[name].read_text())
        rerun_path = current_record_path(root / "bench", experiments[name], profile, seed)
        rerun = json.loads(rerun_path.read_text())
        n, examples = result_differences(shipped, rerun)
        same_cpu = cpu_kind(shipped.get("cpu")) == here
        entry = {"seed": seed, "same_cpu": same_cpu, "shipped_cpu": cpu_kind(shipped.get("cpu")), "this_cpu": here,
                 "identical": n == 0, "differences": n, "examples": examples, "claims": {},
                 "seconds": rerun.get("wall_seconds")}
        for claim in claims:
            if claim.experiment != name:
                continue
            old, new = claim_value(claim, shipped["result"]), claim_value(claim, rerun["result"])
            spread = claim_spread(claim, records_dir, profile, experiments[name], confirmatory.get(name, []))
            entry["claims"][claim.id] = (None if old is None or new is None else new - old, spread)
        if n == 0:
            log(f"{name} seed {seed}: identical to its shipped record (timings aside) — {here}")
        elif same_cpu:
            ok = False
            log(f"{name} seed {seed}: DIFFERS from its shipped record on the same CPU kind ({here}): {n} field(s), "
                + "; ".join(examples))
        else:
            log(f"{name} seed {seed}: {n} field(s) differ; the record was made on {entry['shipped_cpu']}, this is "
                f"{here} (a seed's floats differ between CPU kinds). Per claim, rerun − record beside the sd over "
                "its confirmatory seeds:")
            for claim_id, (delta, spread) in entry["claims"].items():
                log(f"    {claim_id:36s} {'—' if delta is None else f'{delta:+.4f}'}   sd "
                    f"{'—' if spread is None else f'{spread:.4f}'}")
        out[name] = entry
    log("bench-verify: " + ("every rerun on this CPU kind is bit-identical to its record" if ok else
                            "a rerun on the same CPU kind differs from its record (see above)"))
    return {"ok": ok, "plan": plan, "experiments": out}


def verify_main(args) -> int:
    """``python -m wmkit bench --verify`` (:func:`verify`): 0 when every rerun seed equals its record."""
    if args.budget_minutes <= 0:
        raise ValueError(f"--budget-minutes must be positive, not {args.budget_minutes}")
    outcome = verify(resolve_profile_name(args.profile), args.workers, args.budget_minutes,
                     select_experiments(args.only) if args.only else None,
                     Path(args.runs_dir) if args.runs_dir else None, plan_only=args.plan)
    return 0 if outcome["ok"] else 1
