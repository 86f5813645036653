"""The papers' claims, gathered from each paper's ``claims.py``, and how a claim's number is read.

:data:`CLAIMS` holds every claim of the packages in :data:`wmkit.experiments.PAPER_PACKAGES`, in that
order (each with the paper's figure, the experiment and result fields that give the kit's per-seed
value, the direction that counts as reproduced, its kind and group: :class:`wmkit.entries.Claim`);
:data:`EXPERIMENTS` the benchmark's experiments. :func:`claim_value` reads a claim's number from one
seed's record; a claim's confirmatory test is its ``design`` (:mod:`wmkit.design`).
"""
from __future__ import annotations

import importlib
import math

from wmkit.design import check_blocks
from wmkit.entries import (
    CLAIM_KINDS,
    KIT_CONTROL,
    LIMITATION,
    PAPER_CLAIM,
    Claim,
    Experiment,
    get_path,
    resolve,
)
from wmkit.experiments import PAPER_PACKAGES, REGISTRY

__all__ = ["CLAIMS", "CLAIM_KINDS", "DEFAULT_BENCH_SEEDS", "EXPERIMENTS", "KIT_CONTROL", "LIMITATION", "PAPER_CLAIM",
           "PAPERS", "Claim", "Experiment", "check_claims", "claim_value", "get_path", "precondition_failure"]

PAPERS = tuple(dict.fromkeys(importlib.import_module(f"{package}.registry").PAPER for package in PAPER_PACKAGES))
"""The papers, each once, in the order of :data:`wmkit.experiments.PAPER_PACKAGES` (each package's
``registry.PAPER``; the video package is RLVR-World's): a fifth paper's package adds its own."""

_CLAIM_MODULES = [importlib.import_module(f"{package}.claims") for package in PAPER_PACKAGES]

CLAIMS: tuple[Claim, ...] = tuple(c for module in _CLAIM_MODULES for c in module.CLAIMS)
"""Every claim, from each paper's ``claims.py``, in the order of :data:`wmkit.experiments.PAPER_PACKAGES`."""

PAPER_SCALE_NOTES = {m.CLAIMS[0].paper: m.SCALE_NOTE for m in _CLAIM_MODULES if hasattr(m, "SCALE_NOTE")}
"""Per paper, in words and without numbers (the numbers are the report's): why the kit, at its scale,
reproduces some of the paper's claims and not others (each paper's ``SCALE_NOTE``). Read by
:func:`wmkit.bench.cards.result_card`."""

EXPERIMENT_SCALE_NOTES = {k: v for m in _CLAIM_MODULES for k, v in getattr(m, "EXPERIMENT_SCALE_NOTES", {}).items()}
"""The same, for a card whose claims all come from one experiment that measures a paper's claims in
another medium than the paper's other experiments (RLVR-World's video world model)."""

KIT_SCALE_NOTE = ("the kit reproduces directions and mechanisms with tiny models on a few CPU cores; the "
                  "papers' magnitudes need their scale")
"""The same, for a card of several papers."""


def _field_value(result: dict, paths: str | tuple[str, ...]) -> float | None:
    paths = (paths,) if isinstance(paths, str) else paths
    values = [get_path(result, p) for p in paths]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v) for v in values):
        return None
    return float(sum(values) / len(values))


def claim_value(claim: Claim, result: dict) -> float | None:
    """The kit's number for `claim` in one seed's result (None where a field is missing or NaN)."""
    if claim.derive is not None:
        value = resolve(claim.derive)(result)
        return None if value is None or math.isnan(value) else float(value)
    value = _field_value(result, claim.value)
    if value is None or claim.minus is None:
        return value
    minus = _field_value(result, claim.minus)
    return None if minus is None else value - minus


def precondition_failure(claim: Claim, results: dict[int, dict]) -> str | None:
    """None when `claim` has no precondition or it holds in `results` (seed -> result); else the reason."""
    return None if claim.precondition is None else resolve(claim.precondition)(results)


EXPERIMENTS: dict[str, Experiment] = {name: e for name, e in REGISTRY.items() if e.role == "bench"}
"""The benchmark's experiments: the entries of role "bench" of :data:`wmkit.experiments.REGISTRY`."""

DEFAULT_BENCH_SEEDS = {"smoke": 2, "cpu": 3, "gpu": 3}
"""Seeds 0..N-1 of every experiment of a profile's benchmark where the profile has no confirmatory
design (:data:`wmkit.bench.confirmatory.DESIGN_PROFILE` has one): a 95% t-interval needs at least two."""


def check_groups(claims) -> None:
    """Each claim has a known kind; a sub-row names a primary in `claims` that is itself no sub-row,
    of the same paper and kind."""
    by_id = {c.id: c for c in claims}
    for c in claims:
        assert c.kind in CLAIM_KINDS, f"{c.id}: kind {c.kind!r} is none of {CLAIM_KINDS}"
        if c.measures is not None:
            primary = by_id.get(c.measures)
            assert primary is not None and primary.measures is None, f"{c.id}: measures {c.measures!r}, no primary"
            assert (primary.paper, primary.kind) == (c.paper, c.kind), f"{c.id}: another paper or kind than {primary.id}"


def check_claims() -> None:
    """Ids unique, each claim of a known paper with a measuring experiment (or a reason), groups well
    formed, the confirmatory seed blocks apart (`wmkit.design.check_blocks`)."""
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids)), "claim ids must be unique"
    for c in CLAIMS:
        assert c.paper in PAPERS, c.id
        assert (c.experiment is None) == bool(c.not_measured), c.id
        assert c.experiment is None or (c.experiment in EXPERIMENTS and c.value), c.id
    check_groups(CLAIMS)
    check_blocks()
