"""Every experiment of the kit, in one registry: name -> :class:`~wmkit.entries.Experiment`.

Each paper package says what it can run in its own ``registry.py`` and what it claims in its
``claims.py``; :data:`PAPER_PACKAGES` lists the packages and :data:`REGISTRY` gathers their entries.
An entry's ``run_one_seed(profile, seed, runs_root, sizes) -> record`` lives in the paper's
``experiment.py`` (WM-R1's fidelity ladders in its ``ladder.py``; the algorithm box is its ``method.py``).
Two ways run an entry:

* ``python -m wmkit bench``: every entry of role ``"bench"`` (:data:`wmkit.bench.claims.EXPERIMENTS`),
  once per seed, one record each;
* ``python -m wmkit run <name>``: an entry of role ``"run"`` (the paper's own multi-seed command,
  :func:`run_over_seeds`); its extra command-line options are its ``options``.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wmkit.entries import ROLES, Experiment, Option, resolve
from wmkit.profiles import check_profile

if TYPE_CHECKING:
    from wmkit.profiles import Profile

__all__ = ["COMMANDS", "PAPER_PACKAGES", "REGISTRY", "Experiment", "Option", "get", "register", "resolve",
           "run_over_seeds", "train_entries"]

PAPER_PACKAGES = ("wmkit.rlvr_world", "wmkit.video", "wmkit.rwml", "wmkit.wm_r1", "wmkit.wmrl")
"""The paper packages, each with a ``registry.py`` (its entries) and a ``claims.py`` (its claims): adding
a paper is its package plus its name here. The order is the report's."""


def _gather() -> dict[str, Experiment]:
    registry: dict[str, Experiment] = {}
    for package in PAPER_PACKAGES:
        for entry in importlib.import_module(f"{package}.registry").EXPERIMENTS:
            if entry.name in registry:
                raise ValueError(f"two experiments named {entry.name!r}")
            if entry.role not in ROLES:
                raise ValueError(f"{entry.name}: role {entry.role!r} is not one of {ROLES}")
            registry[entry.name] = entry
    return registry


REGISTRY: dict[str, Experiment] = _gather()
"""Every runnable entry, by name: the benchmark's experiments (role ``"bench"``), the command line's
(``"run"``, ``"variant"``) and the training jobs (``"train"``; :mod:`wmkit.jobs` adds the kit's own)."""
COMMANDS: dict[str, str] = {e.command or n: n for n, e in REGISTRY.items() if e.role == "run"}
"""``python -m wmkit run <command>`` -> the entry's name: rlvr-world, rlvr-video, rwml, wm-r1, wmrl."""


def register(entry: Experiment, replace: bool = True) -> Experiment:
    """Add `entry` to :data:`REGISTRY` (a user's job or experiment; `replace`: an entry of that name may
    be replaced). A ``"run"`` entry's command becomes a ``python -m wmkit run`` command."""
    if entry.role not in ROLES:
        raise ValueError(f"{entry.name}: role {entry.role!r} is not one of {ROLES}")
    if not replace and entry.name in REGISTRY:
        raise ValueError(f"two experiments named {entry.name!r}")
    REGISTRY[entry.name] = entry
    if entry.role == "run":
        COMMANDS[entry.command or entry.name] = entry.name
    return entry


def train_entries() -> dict[str, Experiment]:
    """``python -m wmkit train <command>`` -> its entry (role ``"train"``)."""
    return {e.command or n: e for n, e in REGISTRY.items() if e.role == "train"}


def get(name: str | Experiment) -> Experiment:
    """An entry by its command (``"rlvr-world"``) or its name (``"rlvr_seeds"``); a ValueError that
    lists the commands when there is none."""
    if isinstance(name, Experiment):
        return name
    if name in COMMANDS:
        return REGISTRY[COMMANDS[name]]
    if name in REGISTRY:
        return REGISTRY[name]
    raise ValueError(f"unknown paper {name!r}: choose one of {', '.join(COMMANDS)}")


def _sizes(entry: Experiment, profile: Profile) -> Any:
    return resolve(entry.sizes)(profile)


def replace_field(config: Any, path: str, value: Any) -> Any:
    """A copy of dataclass `config` with the dotted field `path` (``"grpo.max_steps"``) set to `value`."""
    head, _, rest = path.partition(".")
    new = replace_field(getattr(config, head), rest, value) if rest else value
    return dataclasses.replace(config, **{head: new})


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def default_combine(profile: Profile, records: Mapping[int, dict], sizes) -> dict:
    from wmkit.runs import jsonable  # here: wmkit.runs imports numpy (0.2 s); this module, nothing heavy

    return {"profile": profile.name, "seeds": list(records), "sizes": jsonable(dataclasses.asdict(sizes)),
            "per_seed": {str(s): r for s, r in records.items()}}


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
        entry = REGISTRY[variant]
    sizes = _sizes(entry, profile)
    for key, value in sizes_options.items():
        sizes = replace_field(sizes, declared[key].field or key, value)
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
