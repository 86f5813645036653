"""The claims' confirmatory plan: each voting claim's seeds, each experiment's confirmatory seeds and
their cost, and the checks that keep those seeds unseen (:mod:`wmkit.design` defines a design).

* :func:`claim_plans` / :func:`experiment_plans`: per voting claim its :class:`~wmkit.design.ClaimPlan`,
  per experiment the seeds it runs (the most any of its voting claims needs, from its block) and the
  estimated worker time;
* :func:`declared_seeds`: the seeds ``make bench`` runs per experiment: the confirmatory seeds at the
  design's profile (:data:`DESIGN_PROFILE`), seeds 0..N-1 at the others (a pipeline check, no design);
* :func:`seed_mentions`: the seeds a text names (``seed=3``, ``--seeds 100-119``, ``"seed": 7``), for
  the test that no study, notebook or exploratory record has touched a confirmatory seed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wmkit.bench.claims import CLAIMS, DEFAULT_BENCH_SEEDS, EXPERIMENTS, Claim
from wmkit.design import (
    CONFIRMATORY_BLOCKS,
    EXPERIMENT_SECONDS,
    ClaimPlan,
    plan_claim,
)

DESIGN_PROFILE = "cpu"
"""The profile the confirmatory design is for: the one whose records and report the kit ships."""


def votes(claim: Claim) -> bool:
    """Whether `claim` has a verdict of its own in the headline: a group's primary measure."""
    return claim.measures is None and claim.experiment is not None


def claim_plans(claims: Sequence[Claim] = CLAIMS) -> dict[str, ClaimPlan]:
    """claim id -> its plan, for every voting claim with a declared (not pending) design."""
    out = {}
    for claim in claims:
        if votes(claim) and claim.design is not None and not claim.design.pending:
            seconds = EXPERIMENT_SECONDS.get(claim.experiment)
            if seconds is None:
                raise ValueError(f"{claim.id}: no seconds per seed declared for {claim.experiment} "
                                 "(wmkit.design.EXPERIMENT_SECONDS)")
            out[claim.id] = plan_claim(claim.design, seconds.seconds)
    return out


@dataclass(frozen=True)
class ExperimentPlan:
    """An experiment's confirmatory seeds and their estimated cost."""

    experiment: str
    seeds: list[int]
    claims: list[str]
    """The voting claims that need these seeds (the experiment runs the most any of them needs)."""
    seconds_per_seed: float | None

    @property
    def worker_seconds(self) -> float:
        return len(self.seeds) * (self.seconds_per_seed or 0.0)


def experiment_plans(claims: Sequence[Claim] = CLAIMS, experiments: Iterable[str] | None = None,
                     blocks: dict[str, int] | None = None) -> dict[str, ExperimentPlan]:
    """experiment -> its :class:`ExperimentPlan`, for every experiment of `experiments` (default the
    benchmark's), its seeds from its block (`blocks`, default :data:`~wmkit.design.CONFIRMATORY_BLOCKS`);
    no seeds where no voting claim with a declared design reads it."""
    plans = claim_plans(claims)
    blocks = CONFIRMATORY_BLOCKS if blocks is None else blocks
    out = {}
    for name in EXPERIMENTS if experiments is None else experiments:
        mine = [c.id for c in claims if c.experiment == name and c.id in plans]
        n = max((plans[c].seeds for c in mine), default=0)
        first = blocks.get(name)
        if n and first is None:
            raise ValueError(f"{name} has voting claims but no block in CONFIRMATORY_BLOCKS")
        seconds = EXPERIMENT_SECONDS.get(name)
        out[name] = ExperimentPlan(name, list(range(first, first + n)) if n else [], mine,
                                   seconds.seconds if seconds else None)
    return out


def confirmatory_seeds(claims: Sequence[Claim] = CLAIMS) -> dict[str, list[int]]:
    """experiment -> its confirmatory seeds (empty where none)."""
    return {name: plan.seeds for name, plan in experiment_plans(claims).items()}


def declared_seeds(profile: str, experiment: str) -> list[int]:
    """The seeds ``python -m wmkit bench`` (no ``--seeds``) runs for `experiment` at `profile`: its
    confirmatory seeds at :data:`DESIGN_PROFILE`, else seeds 0..N-1 (:data:`DEFAULT_BENCH_SEEDS`)."""
    if profile == DESIGN_PROFILE:
        plan = experiment_plans().get(experiment)
        return plan.seeds if plan is not None else []
    return list(range(DEFAULT_BENCH_SEEDS.get(profile, 3)))


def is_confirmatory(experiment: str, seed: int, plans: dict[str, ExperimentPlan] | None = None) -> bool:
    plans = experiment_plans() if plans is None else plans
    return experiment in plans and seed in plans[experiment].seeds


# ---------------------------------------------------------------------------- seeds named in a text
_ITEM = r"\d+(?:\s*(?:-|–|\.\.)\s*\d+)?"
_END = r"(?=\s*(?:,|\band\b|[\]);.:]|$))"  # a listed seed is followed by the list's punctuation, not a word
_AFTER_WORD = re.compile(r"\bseeds?\b[\"']?\s*(?:[:=]\s*)?[\[(]?\s*(" + _ITEM + r"(?:\s*(?:,|\band\b)\s*" + _ITEM
                         + _END + r")*)", re.I | re.M)
_FILE_NAME = re.compile(r"\bseed(\d+)_")
_RANGE_CALL = re.compile(r"range\(\s*(\d+)\s*,\s*(\d+)\s*\)")


def _items(text: str) -> set[int]:
    found: set[int] = set()
    for item in re.split(r"\s*(?:,|\band\b)\s*", text.strip()):
        low, _, high = re.sub(r"\s*(?:–|\.\.)\s*", "-", item).partition("-")
        low = int(low)
        high = int(high) if high.strip() else low
        found.update(range(low, high + 1) if low <= high <= low + 10_000 else [low])
    return found


def seed_mentions(text: str) -> set[int]:
    """Every seed `text` names in the forms a script, a log or a record uses: ``seed=3``, ``seed: 7``,
    ``"seed": 12``, ``"seeds": [0, 1, 2]``, ``--seeds 100-119``, ``seeds 3-17``, ``seeds 0, 2 and 5``,
    ``seed1003_<key>.json`` and, near the word seed, ``range(100, 120)`` (its stop excluded). A range
    names every seed in it. Numbers elsewhere (steps, sizes, dates) are not seeds."""
    found: set[int] = set()
    for match in _AFTER_WORD.finditer(text):
        found |= _items(match.group(1))
    found.update(int(m.group(1)) for m in _FILE_NAME.finditer(text))
    for match in _RANGE_CALL.finditer(text):
        low, high = int(match.group(1)), int(match.group(2))
        if "seed" in text[max(0, match.start() - 80):match.end() + 80].lower() and low < high <= low + 10_000:
            found.update(range(low, high))
    return found


def confirmatory_collisions(mentioned: Iterable[int], plans: dict[str, ExperimentPlan] | None = None) -> list[int]:
    """The seeds of `mentioned` that are some experiment's confirmatory seed (sorted)."""
    plans = experiment_plans() if plans is None else plans
    reserved = {s for p in plans.values() for s in p.seeds}
    return sorted(set(mentioned) & reserved)

