"""Every experiment of the kit, in one registry: name -> :class:`Experiment`.

Each paper package says what it can run in its own ``registry.py`` (``wmkit/rlvr_world/registry.py``,
``wmkit/rwml/registry.py``, ``wmkit/wm_r1/registry.py``, ``wmkit/wmrl/registry.py``,
``wmkit/video/registry.py``); :data:`REGISTRY` gathers them. An entry's ``run_one_seed(profile, seed,
runs_root, sizes) -> record`` lives in the paper's ``experiment.py`` (WM-R1's fidelity ladders in its
``ladder.py``; the algorithm box is its ``method.py``). Two ways run an entry:

* ``python -m wmkit bench``: every entry of role ``"bench"`` (:data:`wmkit.bench.claims.EXPERIMENTS`),
  once per seed, one record each;
* ``python -m wmkit run <name>``: an entry of role ``"run"`` (the paper's own multi-seed command,
  :func:`run_over_seeds`); its extra command-line options are its :attr:`Experiment.options`.

This module and the ``registry.py`` files import nothing heavy: ``python -m wmkit --help`` reads
them, and torch alone costs seconds. So an entry names a function in a module that imports torch
as a ``"module:function"`` string, resolved when the experiment runs (:func:`resolve`).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wmkit.profiles import check_profile

if TYPE_CHECKING:
    from wmkit.profiles import Profile

ROLES = ("bench", "run", "variant")
"""An entry's :attr:`Experiment.role`: run by the benchmark, by ``python -m wmkit run <name>``, or
reached from a ``run`` entry by one of its options (``rlvr-world --sweep``)."""


@dataclass(frozen=True)
class Option:
    """An extra command-line option of a ``run`` entry: ``python -m wmkit run <paper> --flag``."""

    flag: str
    """e.g. ``"--steps"``; its keyword is the flag without dashes, ``-`` -> ``_`` (``runs_dir``)."""
    help: str
    to: str = "run"
    """Where its value goes: ``"run"``, a keyword of ``run_one_seed`` and ``combine``; ``"sizes"``, the
    field of the sizes section it replaces (``--steps 3``: ``replace(sizes, steps=3)``); ``"seeds"``,
    a keyword of :func:`run_over_seeds` itself (``runs_dir``, ``first_seed``, ``vllm``);
    ``"variant"``, a switch that runs the entry named by :attr:`variant` instead."""
    type: type | None = None
    """None: a switch (``store_true``); else the value's type (``int``, ``str``)."""
    nargs: str | None = None
    default: Any = None
    variant: str | None = None

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
    """One experiment of the kit: one seed in, one JSON-able record out."""

    name: str
    paper: str
    run_one_seed: str | Callable
    """``run_one_seed(profile, seed, runs_root, sizes, **options) -> dict`` (JSON-able; `profile` the
    resolved `wmkit.profiles.Profile`), or ``"module:function"`` naming it (a module that imports
    torch: see the module docstring)."""
    sizes: str | Callable
    """The section of `wmkit.profiles.Profile` it runs at, e.g. ``"bench.rlvr"`` (hashed into the
    record key); or ``sizes(profile) -> dataclass`` (a `wmkit.profiles.Profile` in), or
    ``"module:function"`` naming one."""
    description: str
    requires: str | Callable | None = None
    """``requires() -> str | None``, or ``"module:function"`` naming one: why the experiment cannot run
    on this machine (one sentence, e.g. no Java 17 for TextWorldExpress), or None when it can. The
    runner then skips it and its rows say "not measured" with that reason, instead of failing."""
    data: tuple[str, ...] = ()
    """Files the experiment reads (paths relative to the repository, e.g. ``"data/phone_train.jsonl"``):
    their bytes are part of its record key (:mod:`wmkit.bench.source_key`). None of the kit's
    experiments reads one today."""
    reads: tuple[str, ...] = ()
    """Parts of the profile other than :attr:`sizes` whose values its results depend on, e.g.
    ``"world_model"`` (it builds or loads notebook 01's world model) or ``"default_model"``: their
    values go into each record's config beside the sizes. The benchmark checks while a seed runs that
    nothing else of the profile is read (:func:`wmkit.bench.runner.run_one`), because the record key
    holds the source of ``wmkit/profiles.py`` without its table of values
    (:mod:`wmkit.bench.source_key`): a value is keyed only through the config."""
    role: str = "bench"
    """One of :data:`ROLES`."""
    command: str | None = None
    """Role ``"run"``: the name ``python -m wmkit run <command>`` knows it by (``"rlvr-world"``)."""
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
    """``prepare(profile, runs_root, sizes)`` (`profile` the resolved Profile), or ``"module:function"``
    naming it: builds what every seed of the experiment loads from ``runs_root`` (notebook 01's world
    model), once, before the benchmark runs its seeds side by side; without it two workers would build
    it at once in the same folder. Called once per benchmark run and function (in the main process).
    None: the seeds share nothing on disk."""

    @property
    def run(self) -> str | Callable:
        """``run_one_seed`` under the name the benchmark's runner and source keys read."""
        return self.run_one_seed


def resolve(target: str | Any) -> Any:
    """A ``"module:function"`` string -> the function (imported now); anything else as it is."""
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _gather() -> dict[str, Experiment]:
    # Here, not at the top: each registry.py imports this module (Experiment, Option), a cycle.
    from wmkit.rlvr_world.registry import EXPERIMENTS as rlvr_world
    from wmkit.rwml.registry import EXPERIMENTS as rwml
    from wmkit.video.registry import EXPERIMENTS as video
    from wmkit.wm_r1.registry import EXPERIMENTS as wm_r1
    from wmkit.wmrl.registry import EXPERIMENTS as wmrl

    registry: dict[str, Experiment] = {}
    for entry in (*rlvr_world, *video, *rwml, *wm_r1, *wmrl):
        if entry.name in registry:
            raise ValueError(f"two experiments named {entry.name!r}")
        if entry.role not in ROLES:
            raise ValueError(f"{entry.name}: role {entry.role!r} is not one of {ROLES}")
        registry[entry.name] = entry
    return registry


@functools.cache
def _registry() -> tuple[dict[str, Experiment], dict[str, str]]:
    registry = _gather()
    return registry, {e.command or n: n for n, e in registry.items() if e.role == "run"}


def __getattr__(name: str):
    # REGISTRY and COMMANDS are gathered on first use: a paper's registry.py imports this module, so
    # gathering them at import would import a half-made registry.py.
    if name == "REGISTRY":
        return _registry()[0]
    if name == "COMMANDS":
        return _registry()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


REGISTRY: dict[str, Experiment]
"""Every experiment, by name: the benchmark's (role ``"bench"``) and the command line's."""
COMMANDS: dict[str, str]
"""``python -m wmkit run <command>`` -> the entry's name: rlvr-world, rlvr-video, rwml, wm-r1, wmrl."""


def get(name: str | Experiment) -> Experiment:
    """An entry by its command (``"rlvr-world"``) or its name (``"rlvr_seeds"``); a ValueError that
    lists the commands when there is none."""
    if isinstance(name, Experiment):
        return name
    registry, commands = _registry()
    if name in commands:
        return registry[commands[name]]
    if name in registry:
        return registry[name]
    raise ValueError(f"unknown paper {name!r}: choose one of {', '.join(commands)}")


def notebook_01_world_model(profile: Profile, runs_root, sizes) -> None:
    """An :attr:`Experiment.prepare`: notebook 01's world model under `runs_root`, built when missing
    (the RLVR-World, RWML and WM-R1 experiments start from it or judge with it)."""
    from wmkit.core.build import series_world_model  # here: wmkit.core imports torch (not for --help)

    series_world_model(profile, runs_root)


def _sizes(entry: Experiment, profile: Profile) -> Any:
    if isinstance(entry.sizes, str) and ":" not in entry.sizes:
        return profile.section(entry.sizes)
    return resolve(entry.sizes)(profile)


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def default_combine(profile: Profile, records: Mapping[int, dict], sizes) -> dict:
    from wmkit.runs import jsonable  # here: wmkit.runs imports numpy (0.2 s); this module, nothing heavy

    return {"profile": profile.name, "seeds": list(records), "sizes": jsonable(dataclasses.asdict(sizes)),
            "per_seed": {str(s): r for s, r in records.items()}}


def single_record(profile: Profile, records: Mapping[int, dict], sizes, **options) -> dict:
    """A ``combine`` for an entry that runs one seed: that seed's record is the JSON."""
    return dict(next(iter(records.values())))


def run_over_seeds(experiment: str | Experiment, profile: Profile, seeds: int = 3, out: str | Path | None = None, *,
                   first_seed: int = 0, runs_dir: str | Path | None = None, vllm: bool = False,
                   **options) -> Path:
    """``python -m wmkit run <paper>``: `experiment`'s ``run_one_seed`` for seeds first_seed ..
    first_seed + seeds - 1 at the profile's sizes, combined into one JSON, written to `out`
    (default ``runs/<profile>/<out_name>``, or under `runs_dir`).

    Resumable: each finished seed's record is kept in ``<out stem>_records/seed<N>.json`` beside the
    JSON (and a JSON that holds them under ``per_seed``, as wm-r1's and rwml's do, counts too), so the
    same command after an interruption runs only the missing seeds. The records are those of the
    options they ran with: change the options, change `out`.

    `profile` is the resolved `wmkit.profiles.Profile` (the command line resolves ``--profile`` once:
    ``wmkit.__main__.run_paper``); every seed gets it as it is, in this process or a worker's.

    `options`: the entry's :attr:`Experiment.options` by keyword (``check="5"``, ``steps=3``); one
    it does not declare is a ValueError. `vllm`: generate GRPO rollouts with vLLM (one line, exit 2,
    where vLLM or CUDA is missing)."""
    from wmkit.runs import default_runs_root, jsonable  # here: numpy (0.2 s), see default_combine

    check_profile(profile)
    entry = get(experiment)
    given = {"first_seed": first_seed or None, "runs_dir": runs_dir, "vllm": vllm or None, **options}
    declared = {o.dest: o for o in entry.options}
    stray = [k for k, v in given.items() if v not in (None, False) and k not in declared]
    if stray:
        raise ValueError(f"{', '.join('--' + k.replace('_', '-') for k in stray)} not an option of "
                         f"{entry.command or entry.name}")
    if seeds < 1:
        raise ValueError("--seeds must be at least 1")
    variant = next((o.variant for o in entry.options if o.to == "variant" and given.get(o.dest)), None)
    options = {k: v for k, v in options.items() if v not in (None, False)}  # False: a switch not given
    run_options = {k: v for k, v in options.items() if declared[k].to == "run"}
    sizes_options = {k: v for k, v in options.items() if declared[k].to == "sizes"}
    if entry.check is not None:
        resolve(entry.check)(**options)
    if any(v is not None and v < 1 for v in sizes_options.values() if isinstance(v, int)):
        raise ValueError(f"{', '.join('--' + k for k in sizes_options)} must be at least 1")
    if vllm:
        from wmkit.core.grpo import request_vllm  # here: wmkit.core imports torch (not for --help)

        request_vllm()
    if variant:
        entry = _registry()[0][variant]
    sizes = _sizes(entry, profile)
    if sizes_options:
        sizes = dataclasses.replace(sizes, **sizes_options)
    runs_root = Path(runs_dir) if runs_dir else default_runs_root() / profile.name
    runs_root.mkdir(parents=True, exist_ok=True)
    name = resolve(entry.out_name) if isinstance(entry.out_name, str) and ":" in entry.out_name else entry.out_name
    name = name(**run_options) if callable(name) else name
    out = Path(out) if out else runs_root / (name or f"{entry.name}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = out.parent / f"{out.stem}_records"
    wanted = list(entry.seeds) if entry.seeds is not None else list(range(first_seed, first_seed + seeds))

    # Every finished seed is kept, those of an earlier command with other seeds too (wm-r1 --first-seed 3
    # after seeds 0..2: the JSON holds 0..4).
    records: dict[int, dict] = {}
    earlier = _read(out) if out.exists() else None
    if isinstance(earlier, dict) and isinstance(earlier.get("per_seed"), dict):
        records.update({int(s): r for s, r in earlier["per_seed"].items() if s.isdigit()})
    for path in sorted(kept.glob("seed*.json")) if kept.is_dir() else ():
        record = _read(path)
        if path.stem[4:].isdigit() and record is not None:
            records[int(path.stem[4:])] = record
    for seed in wanted:
        if seed in records:
            print(f"seed {seed}: already done (kept: {kept})", flush=True)
    combine = resolve(entry.combine) if entry.combine else lambda p, r, s, **_: default_combine(p, r, s)
    run_one_seed = resolve(entry.run_one_seed)
    start = time.perf_counter()

    def write() -> None:
        ordered = {s: records[s] for s in sorted(records)}
        result = combine(profile, ordered, sizes, **run_options)
        if entry.timing_key:
            result[entry.timing_key] = round(time.perf_counter() - start, 1)
        out.write_text(json.dumps(jsonable(result), indent=1))

    def keep(seed: int, record: dict) -> None:
        kept.mkdir(parents=True, exist_ok=True)
        records[seed] = json.loads(json.dumps(jsonable(record)))  # as read back on resume
        (kept / f"seed{seed}.json").write_text(json.dumps(records[seed], indent=1))

    pending = [s for s in wanted if s not in records]
    workers = getattr(sizes, entry.workers) if entry.workers else 1
    # The resolved profile goes to every seed, worker processes included (a frozen dataclass: it pickles).
    jobs = [(run_one_seed, {"profile": profile, "seed": s, "runs_root": runs_root, "sizes": sizes, **run_options})
            for s in pending]

    def done(index: int, record: dict) -> None:
        keep(pending[index], record)
        print(f"seed {pending[index]}: done ({time.perf_counter() - start:.0f} s)", flush=True)
        write()

    if jobs:
        from wmkit.core.parallel import run_jobs  # here: it loads multiprocessing (15 ms), --help does not

        run_jobs(jobs, workers=workers, on_done=done)
    write()
    print(f"wrote {out} ({time.perf_counter() - start:.0f} s)")
    return out
