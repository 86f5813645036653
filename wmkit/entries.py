"""What a paper package registers: its runnable entries (:class:`Experiment`, :class:`Option`) and its
claims (:class:`Claim`), plus :func:`resolve`, the kit's one ``"module:function"`` loader.

Each paper lists its entries in its ``registry.py`` and its claims in its ``claims.py``;
:mod:`wmkit.experiments` gathers the entries and :mod:`wmkit.bench.claims` the claims, from the
packages named in :data:`wmkit.experiments.PAPER_PACKAGES`. This module imports nothing heavy:
``python -m wmkit --help`` reads the registries, and torch alone costs seconds, so an entry names a
function in a module that imports torch as a ``"module:function"`` string, resolved when it runs.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ROLES = ("bench", "run", "variant", "train")
"""An entry's :attr:`Experiment.role`: run by the benchmark, by ``python -m wmkit run <name>``, reached
from a ``run`` entry by one of its options (``rlvr-world --sweep``), or a training job of
``python -m wmkit train <name>`` (one config object, ``key=value`` overrides, multi-process launches)."""


def resolve(target: str | Any) -> Any:
    """A ``"module:function"`` string -> the function (imported now); anything else as it is. A target
    that cannot be loaded is a ValueError naming it."""
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot load {target!r}: {err}") from err


def get_path(result: Any, path: str) -> Any:
    """``get_path(r, "arms/wm_r1/heldout/success")``: a field of a record's result by its '/'-separated
    path; list indices may be negative. None if missing."""
    node = result
    for part in path.split("/"):
        if isinstance(node, dict):
            if part not in node:
                return None
            node = node[part]
        elif isinstance(node, list):
            try:
                node = node[int(part)]
            except (ValueError, IndexError):
                return None
        else:
            return None
    return node


@dataclass(frozen=True)
class Option:
    """An extra command-line option of a ``run`` entry: ``python -m wmkit run <paper> --flag``."""

    flag: str
    """e.g. ``"--steps"``; its keyword is the flag without dashes, ``-`` -> ``_`` (``runs_dir``)."""
    help: str
    to: str = "run"
    """Where its value goes: ``"run"``, a keyword of ``run_one_seed`` and ``combine``; ``"sizes"``, the
    field of the config it replaces (:attr:`field`: ``--steps 3`` sets ``grpo.max_steps``); ``"seeds"``,
    a keyword of :func:`wmkit.experiments.run_over_seeds` itself (``runs_dir``, ``first_seed``, ``vllm``);
    ``"variant"``, a switch that runs the entry named by :attr:`variant` instead."""
    type: type | None = None
    """None: a switch (``store_true``); else the value's type (``int``, ``str``)."""
    nargs: str | None = None
    default: Any = None
    variant: str | None = None
    field: str | None = None
    """``to="sizes"``: the dotted field of the config it sets (None: the keyword itself)."""

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def add_to(self, parser) -> None:
        """Add it to an argparse parser or group."""
        if self.type is None:
            parser.add_argument(self.flag, action="store_true", help=self.help)
        else:
            parser.add_argument(self.flag, type=self.type, nargs=self.nargs, default=self.default, help=self.help)


@dataclass(frozen=True)
class Experiment:
    """One runnable entry of the kit: an experiment (one seed in, one JSON-able record out) or a
    training job (role ``"train"``: its config object in, a JSON-able result out)."""

    name: str
    paper: str
    run_one_seed: str | Callable
    """``run_one_seed(profile, seed, runs_root, sizes, **options) -> dict`` (JSON-able; `profile` the
    resolved `wmkit.profiles.Profile`), or ``"module:function"`` naming it. Role ``"train"``:
    ``run(config) -> dict``, the config an instance of :attr:`config`."""
    sizes: str | Callable | None
    """``sizes(profile) -> dataclass``, or ``"module:function"`` naming one: the config it runs at, from its
    paper's ``config.py`` (e.g. ``"wmkit.rlvr_world.config:bench_rlvr_sizes"``); its values are each
    record's config."""
    description: str
    requires: str | Callable | None = None
    """``requires() -> str | None`` (or ``"module:function"``): why the experiment cannot run on this
    machine (one sentence, e.g. no Java 17 for TextWorldExpress), or None when it can. The benchmark
    then skips it and its rows say "not measured" with that reason."""
    data: tuple[str, ...] = ()
    """Files the experiment reads (paths relative to the repository): their bytes are part of its
    record key (:mod:`wmkit.bench.source_key`)."""
    reads: tuple[str, ...] = ()
    """Parts of the profile other than :attr:`sizes` whose values its results depend on (``"world_model"``,
    ``"default_model"``): their values go into each record's config beside the sizes, and the benchmark
    checks while a seed runs that nothing else of the profile is read (:func:`wmkit.bench.runner.run_one`)."""
    role: str = "bench"
    """One of :data:`ROLES`."""
    command: str | None = None
    """Roles ``"run"`` and ``"train"``: the name ``python -m wmkit run|train <command>`` knows it by."""
    config: str | type | None = None
    """Role ``"train"``: the job's config dataclass (or ``"module:Class"``); its ``from_profile(name)``
    gives the profile's defaults (else ``profile`` is set when it is a field)."""
    distributed: bool = True
    """Role ``"train"``: False runs it on one process only; under a multi-process launcher rank 0 runs it
    and the other ranks exit at once (a numpy job gains nothing from DDP)."""
    # The rest: what `python -m wmkit run <name>` needs (role "run" and "variant").
    combine: str | Callable | None = None
    """``combine(profile, records, sizes, **options) -> dict``: the command's JSON from the records of
    the finished seeds (seed -> record, in seed order); None: ``{"profile", "seeds", "sizes", "per_seed"}``."""
    out_name: str | Callable | None = None
    """File name of the JSON under ``runs/<profile>/``, or ``out_name(**options)`` (or ``"module:function"``
    naming it); None: ``<name>.json``."""
    options: tuple[Option, ...] = ()
    check: str | Callable | None = None
    """``check(**options)``: raises ValueError on a bad option value before anything runs."""
    seeds: tuple[int, ...] | None = None
    """Runs exactly these seeds whatever ``--seeds`` says (a sweep chooses settings at seed 0)."""
    workers: str | None = None
    """Field of the sizes giving how many seeds run at once (processes); None: one after another."""
    timing_key: str | None = "seconds"
    """Key of the command's JSON that gets this invocation's wall seconds; None: none."""
    prepare: str | Callable | None = None
    """``prepare(profile, runs_root, sizes)`` (or ``"module:function"``): builds what every seed loads from
    ``runs_root`` (notebook 01's world model), once, before the benchmark runs its seeds side by side.
    None: the seeds share nothing on disk."""

    @property
    def run(self) -> str | Callable:
        """``run_one_seed`` under the name the benchmark's runner and source keys read."""
        return self.run_one_seed


def single_record(profile, records: Mapping[int, dict], sizes, **options) -> dict:
    """A :attr:`Experiment.combine` for an entry that runs one seed: that seed's record is the JSON."""
    return dict(next(iter(records.values())))


PAPER_CLAIM, LIMITATION, KIT_CONTROL = "paper claim", "paper limitation", "kit control"
CLAIM_KINDS = (PAPER_CLAIM, LIMITATION, KIT_CONTROL)
"""A claim's kind (:attr:`Claim.kind`); the report counts paper claims apart from the other two."""


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how the kit measures it (listed in its paper's ``claims.py``)."""

    id: str
    paper: str
    text: str
    paper_figure: str
    """The paper's headline number or '—' where it gives none."""
    experiment: str | None = None
    """The benchmark experiment that measures it; None when the kit cannot measure the claim yet."""
    value: str | tuple[str, ...] | None = None
    """Field path(s) of the experiment's result ('/'-separated, list indices allowed; several: their mean)."""
    minus: str | tuple[str, ...] | None = None
    """Field path(s) subtracted from `value` in the same seed's result (a paired difference)."""
    direction: str = "higher"
    """The kit's value must be above ('higher') or below ('lower') `threshold` to reproduce the claim."""
    threshold: float = 0.0
    kit_label: str = ""
    """What the kit's number is, in words (units included)."""
    not_measured: str = ""
    """Why the kit cannot measure the claim (with `experiment` None)."""
    derive: str | Callable | None = None
    """``derive(result) -> float | None`` (or ``"module:function"``): the kit's number computed from
    one seed's result instead of read from `value` (which then names the raw field it comes from),
    e.g. the log of a censored compute ratio."""
    precondition: str | Callable | None = None
    """``precondition(results) -> str | None`` (or ``"module:function"``): what must hold in the
    per-seed results (seed -> result) for the claim's number to be evidence at all; it returns
    None when it holds, else the reason, and the verdict is then "not measured" (the number is kept)."""
    kind: str = PAPER_CLAIM
    """:data:`PAPER_CLAIM` (the paper states it, with a figure or a stated direction), :data:`LIMITATION`
    (the paper states it as a limitation of its method) or :data:`KIT_CONTROL` (the kit's own positive
    control or sanity check: no paper figure)."""
    measures: str | None = None
    """The id of the claim this one measures another way (another decoding, world, metric or regime):
    a sub-row of that claim's group, with its own number and verdict but no vote. None for the primary
    measure of a group and for a claim alone. The primary is chosen by design, before any result: the
    measure in the regime built for the claim's mechanism, sampled where the paper samples, on the
    paper's own metric (see research/README.md)."""
    design: Any = None
    """The claim's confirmatory test (a `wmkit.design.Design`), declared before its confirmatory run:
    every claim that votes has one; a sub-row has none (it is judged on its primary's seeds)."""
