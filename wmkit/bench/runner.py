"""Notebook 05's benchmark: every claim of the four papers, measured by the kit over seeds.

Three parts:

* **What runs.** :data:`EXPERIMENTS` are the entries of role "bench" of the kit's one registry
  (:data:`wmkit.experiments.REGISTRY`, each paper's ``registry.py``): one seed in, one JSON record out,
  at the config its paper's ``config.py`` gives the profile. :data:`CLAIMS` are the papers' claims
  (each paper's ``claims.py``): the paper's figure, the experiment that measures it, the fields of its
  result that make the kit's per-seed number (optionally minus another field: a paired difference),
  and the direction that counts as reproduced; a claim the kit cannot measure says why.
* **Runner.** :func:`run_bench` runs each (experiment, seed) once and caches it as a JSON record
  under ``runs/<profile>/bench/<experiment>/``, keyed by the experiment's source key
  (:mod:`wmkit.bench.source_key`: the code, as syntax trees, of the ``wmkit`` modules the experiment
  can import, the data it reads, the record format; an edit elsewhere in the kit, or a docstring,
  comment or formatting edit anywhere, keeps its records) and a hash of its config (sizes, seed,
  profile). The record keeps the git commit it was made at as provenance, the (module, hash) pairs
  of its key, and its torch threads and package versions. ``bench-rekey``
  (:mod:`wmkit.bench.rekey`) carries records to a new key where the evidence shows the code's
  results unchanged. A record is written atomically when its run has finished, so
  an interrupted benchmark rerun with the same command redoes only what is missing. Records of the
  first rule, keyed by the git tree of all of ``wmkit/``, keep their names and are read by
  ``--any-version`` and by :func:`seeds_or_this_run`.
* **Report.** :func:`build_report` reads the records *from disk* (a row exists only where its
  records do), computes mean ± std and a 95% t-interval over seeds, a verdict, a headline that
  counts one verdict per paper claim (a group's primary measure; :func:`headline`) apart from the
  paper's limitations and the kit's controls, with the number of false "reproduced" expected by
  chance, and writes
  ``runs/<profile>/bench.json``, ``runs/<profile>/report.md`` and one figure per paper.

Command line::

    python -m wmkit bench --profile cpu --plan               # what would run, and its estimated time
    python -m wmkit bench --profile cpu --workers 2 --ship   # the whole table (make bench): declared seeds
    python -m wmkit bench --profile cpu --only WM-R1         # one paper's experiments, their declared seeds
    python -m wmkit bench --profile smoke --seeds 2          # seeds 0-1 of every experiment
    python -m wmkit bench --profile cpu --report-only --any-version   # newest records of any version

The kit's models are tiny, so it reproduces *directions and mechanisms*, not the papers'
absolute numbers: the report shows both side by side, with the verdict computed from the runs.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wmkit.bench.claims import (
    CLAIM_KINDS,
    CLAIMS,
    EXPERIMENTS,
    PAPER_CLAIM,
    PAPERS,
    Claim,
    Experiment,
    check_claims,
    claim_value,
    precondition_failure,
)
from wmkit.bench.confirmatory import DESIGN_PROFILE, claim_plans, declared_seeds, experiment_plans, votes
from wmkit.design import EXPERIMENT_SECONDS, precondition_text
from wmkit.bench.executor import EXECUTORS, LocalProcesses, SubmititExecutor, make_executor
from wmkit.bench.legacy_config import legacy_config
from wmkit.bench.source_key import (
    KEY_FORMAT,
    SourceKey,
    is_source_key,
    key_format,
    module_differences,
    module_file,
    recording_value_reads,
    run_module,
    source_key,
)
from wmkit.entries import resolve
from wmkit.profiles import Profile, get_profile, resolve_profile_name
from wmkit.runs import REPO, checkout, cpu_model, default_runs_root, jsonable, needs_checkout
from wmkit.stats import SMALLER, VERDICTS, describe, summarize, verdict

RECORD_VERSION = 1


"""Bumped when a record's layout changes (part of the config hash)."""


check_claims()

VERDICT_COLORS = {"reproduced": "tab:green", SMALLER: "tab:purple", "inconclusive": "tab:olive",
                  "contradicted": "tab:red",
                  "not measured": "tab:gray"}
"""One colour per verdict (report figures and notebook 05)."""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          timeout=30).stdout


def head_commit(repo: Path = REPO) -> str:
    """The checkout's HEAD commit (kept in records and reports as provenance), "nogit" outside one."""
    try:
        return _git(repo, "rev-parse", "HEAD").strip()
    except (OSError, subprocess.SubprocessError):
        return "nogit"


def code_version(repo: Path = REPO) -> tuple[str, bool]:
    """(code version, dirty): what records were keyed by before :func:`experiment_key` (the first
    rule; kept to name the old records and the library's state). The git tree hash of the library
    (``wmkit/`` at HEAD), plus ``+<hash>`` of its uncommitted changes (untracked files included)
    when there are any, so that a record made by edited code is never taken for one made by the
    commit. Only the library runs the experiments, so a commit that changes the README, the notebooks
    or the tests keeps every cached record valid. ("nogit", False) outside a checkout."""
    try:
        tree = _git(repo, "rev-parse", "HEAD:wmkit").strip()
        diff = _git(repo, "diff", "HEAD", "--", "wmkit")
        untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "--", "wmkit").split()
    except (OSError, subprocess.SubprocessError):
        return "nogit", False
    if not diff and not untracked:
        return tree, False
    digest = hashlib.sha256(diff.encode())
    for name in sorted(untracked):
        digest.update(name.encode() + (repo / name).read_bytes())
    return f"{tree}+{digest.hexdigest()[:8]}", True


def experiment_key(experiment: Experiment) -> SourceKey:
    """What `experiment`'s records are keyed by: the source of the ``wmkit`` modules its ``run`` can
    import and of the data files it reads (:func:`wmkit.bench.source_key.source_key`). Needs no git."""
    return source_key(run_module(experiment.run), experiment.data)


def closure_dirty(key: SourceKey, repo: Path = REPO) -> bool | None:
    """Whether the checkout has uncommitted changes in the files of `key` (provenance: the commit
    alone does not give the record's code then); None outside a git checkout."""
    files = [str(p.relative_to(repo)) for p in (module_file(m, repo) for m in key.module_names())
             if p is not None and p.is_relative_to(repo)] + [rel for rel, _ in key.data]
    if not files:
        return None
    try:
        return bool(_git(repo, "status", "--porcelain", "--", *files).strip())
    except (OSError, subprocess.SubprocessError):
        return None


def experiment_sizes(experiment: Experiment, profile: Profile):
    """The sizes `experiment` runs at in `profile` (resolved): what its sizes function returns."""
    return resolve(experiment.sizes)(profile)


def _plain(value):
    return jsonable(dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value)


def experiment_config(experiment: Experiment, profile: str, seed: int) -> dict:
    """What a record of (experiment, profile name, seed) is keyed by (:func:`config_hash`): its sizes
    and the values of the other profile parts it reads (:attr:`Experiment.reads`)."""
    resolved = get_profile(profile)
    config = {"experiment": experiment.name, "profile": profile, "seed": seed, "record_version": RECORD_VERSION,
              "sizes": _plain(experiment_sizes(experiment, resolved))}
    if experiment.reads:
        config["reads"] = {part: _plain(resolved.section(part)) for part in sorted(experiment.reads)}
    return config


PROFILE_PARTS = frozenset(f.name for f in dataclasses.fields(Profile)) - {"name", "description"}
"""The parts of a profile whose values can change a result (the name is in every config already)."""

_parts_read: set[str] | None = None


class _ReadRecordingProfile(Profile):
    """A Profile that notes, while :func:`run_one` runs a seed, which of its parts the run reads
    (module level so that it pickles; a subprocess records nothing)."""

    def __getattribute__(self, name):
        if _parts_read is not None and name in PROFILE_PARTS:
            _parts_read.add(name)
        return super().__getattribute__(name)


def keyed_parts(experiment: Experiment) -> set[str]:
    """The profile parts a record of `experiment` holds the values of besides its sizes: its reads."""
    return set(experiment.reads)


def _call_recording_reads(function: Callable, profile: Profile, *args) -> tuple[object, set[str]]:
    """(``function(profile, *args)``, the parts of the profile it read)."""
    global _parts_read
    recording = _ReadRecordingProfile(**{f.name: getattr(profile, f.name) for f in dataclasses.fields(profile)})
    _parts_read = set()
    try:
        result = function(recording, *args)
    finally:
        read, _parts_read = _parts_read, None
    return result, read


def check_parts_read(experiment: Experiment, read: set[str], what: str = "run") -> None:
    """A ValueError when `experiment`'s `what` (its run, or the prepare its seeds share) read a profile
    part that its records are not keyed by (:func:`keyed_parts`): such a record would be keyed without
    the values it used."""
    unkeyed = sorted(read - keyed_parts(experiment))
    if unkeyed:
        raise ValueError(f"{experiment.name}'s {what} read the profile's {', '.join(unkeyed)}, which its records "
                         f"are not keyed by: add {tuple(unkeyed)} to its Experiment(reads=...) in its paper's "
                         "registry.py")


def check_values_read(experiment: Experiment, reads: list, config: dict, what: str = "run") -> None:
    """A ValueError when `experiment`'s `what` read an entry of a table of values (a paper's
    ``config.py``; :func:`wmkit.bench.source_key.recording_value_reads`) that is not in its record's
    `config` (its sizes, or a profile part it reads): such a record would be keyed without the values
    it used, and an edit of that entry would leave it standing. A profile (``PROFILES``) is checked part
    by part instead (:func:`check_parts_read`)."""
    keyed = list(_subtrees(json.loads(json.dumps(jsonable(config), sort_keys=True, default=str))))
    unkeyed = sorted({f"{table}[{key!r}]" for table, key, value in reads if not isinstance(value, Profile)
                      and json.loads(json.dumps(jsonable(_plain(value)), sort_keys=True, default=str)) not in keyed})
    if unkeyed:
        raise ValueError(f"{experiment.name}'s {what} read {', '.join(unkeyed)}, which its record's config does not "
                         "hold (its sizes function gives another entry): read the sizes it is given, or make its "
                         "sizes function return what it reads")


def _subtrees(value):
    yield value
    for inner in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        yield from _subtrees(inner)


def config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


ADDED_SIZE_FIELDS = {
    "lora_r": 8, "lora_alpha": 16,  # WMR1Sizes: literals in build_policy and train_wm_r1
    "twx_sft_learning_rate": 1e-3, "twx_sft_batch_size": 8,  # RLVRSizes: literals of RWML's two TWX SFT runs
    "warm_batch_size": 8,  # RWMLTextGameSizes: the literal of RWML's text-game SFT runs
}
"""Size fields that moved from literals in the code into the profiles after records had been made, each
with the literal the code used. A record made before a field existed has no such key in its config;
where today's value still equals that literal it ran the same configuration, so it counts as today's
(:func:`config_hashes`). Once today's value differs, it is a new configuration and older records
no longer match. Add a field here only with the literal its code held."""


def _without_added_fields(value):
    """`value` (a config or part of one) without the :data:`ADDED_SIZE_FIELDS` that hold their literal."""
    if isinstance(value, dict):
        return {k: _without_added_fields(v) for k, v in value.items()
                if not (k in ADDED_SIZE_FIELDS and v == ADDED_SIZE_FIELDS[k])}
    if isinstance(value, list):
        return [_without_added_fields(v) for v in value]
    return value


def config_hashes(config: dict) -> list[str]:
    """The hashes a record of `config` may carry: today's (:func:`config_hash`), then, where `config`
    holds :data:`ADDED_SIZE_FIELDS` at their literal values, the hash of the same config as it was
    written before those fields existed; the hashes of the config without its ``"reads"`` (records of
    key format 2 and before, whose key held all of ``profiles.py``'s values instead); and each of these
    for the config as it was written before the papers' configs moved (:func:`legacy_config`)."""
    hashes = []
    for shape in (config, legacy_config(config)):
        without_reads = {k: v for k, v in shape.items() if k != "reads"}
        for candidate in (shape, _without_added_fields(shape), without_reads, _without_added_fields(without_reads)):
            if config_hash(candidate) not in hashes:
                hashes.append(config_hash(candidate))
    return hashes


def short_version(version: str) -> str:
    """'src3-916d171bdf4b' (a source key: its prefix and 12 hex digits), or for a record of the first
    rule '916d171bdf4b' / '916d171bdf4b+f43efa63' (12 hex digits of the tree hash, the local-change hash)."""
    if is_source_key(version):
        prefix, _, digits = version.partition("-")
        return f"{prefix}-{digits[:12]}"
    return version[:12] + (f"+{version.split('+', 1)[1]}" if "+" in version else "")


def record_path(bench_dir: Path, experiment: str, seed: int, code: str, chash: str) -> Path:
    return Path(bench_dir) / experiment / f"seed{seed}_{short_version(code)}_{chash[:12]}.json"


def current_record_path(bench_dir: Path, experiment: Experiment, profile: str, seed: int,
                        key: str | None = None) -> Path:
    """Where (experiment, seed)'s record of today's config and `key` (default: the experiment's key
    at this checkout) is, or would be, under `bench_dir`."""
    key = experiment_key(experiment).key if key is None else key
    return record_path(bench_dir, experiment.name, seed, key,
                       config_hash(experiment_config(experiment, profile, seed)))


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)  # a run killed before this line leaves no record


def package_versions() -> dict[str, str | None]:
    """The versions of Python and of the packages a run's floats depend on (None: not installed)."""
    import torch  # here: `python -m wmkit --help` imports this module and must not import torch (1.5 s)

    versions = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("transformers", "trl", "peft", "numpy", "sklearn", "textworld_express", "sentence_transformers"):
        try:
            versions[name] = importlib.import_module(name).__version__
        except Exception:  # noqa: BLE001
            versions[name] = None
    return versions


def machine() -> dict:
    import torch  # here: `python -m wmkit --help` imports this module and must not import torch (1.5 s)

    cuda = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            **cpu_model(), "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "cuda": cuda,
            "versions": package_versions()}


def select_experiments(only: Sequence[str] | None, experiments: dict[str, Experiment] | None = None) -> list[str]:
    """Experiment names for `--only` (paper names or experiment names, case-insensitive); all when empty."""
    experiments = EXPERIMENTS if experiments is None else experiments
    if not only:
        return list(experiments)
    chosen = []
    for word in only:
        hits = [n for n, e in experiments.items() if word.lower() in (n.lower(), e.paper.lower())]
        if not hits:
            choices = sorted({e.paper for e in experiments.values()} | set(experiments))
            raise ValueError(f"--only {word!r} names no paper or experiment; choose from {', '.join(choices)}")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def bench_command(profile: str, seeds: int | None, only: Sequence[str] | None = None, threads: int | None = None,
                  workers: int = 1) -> str:
    """The command line of a benchmark run; `seeds` None: each experiment's declared seeds (no ``--seeds``)."""
    parts = ["python", "-m", "wmkit", "bench", "--profile", profile]
    if seeds is not None:
        parts += ["--seeds", str(seeds)]
    if only:
        parts += ["--only", *only]
    if threads:
        parts += ["--threads", str(threads)]
    if workers > 1:
        parts += ["--workers", str(workers)]
    return shlex.join(parts)


def unavailable_reason(experiment: Experiment) -> str | None:
    """Why `experiment` cannot run on this machine (its ``requires`` check), or None. Never raises:
    a check that fails is itself the reason."""
    if experiment.requires is None:
        return None
    try:
        reason = resolve(experiment.requires)()
    except Exception as exc:  # a broken check must not take the benchmark down with it
        return f"its requirement check failed ({type(exc).__name__}: {exc})"
    return str(reason) if reason else None


def run_one(experiment: Experiment, profile: str, seed: int, runs_root: Path, code: str | SourceKey | None,
            command: str, log: Callable[[str], None] = print, commit: str | None = None,
            dirty: bool | None = None) -> tuple[Path, bool]:
    """Run (experiment, seed) unless its record exists; returns (record path, whether it ran).
    `code`: the experiment's key (:func:`experiment_key` when None; a plain string keys a record
    without module hashes). `commit` is the HEAD the run started at (read now when not given) and
    `dirty` whether the key's files had uncommitted changes then, both kept as provenance."""
    commit = head_commit() if commit is None else commit
    key = experiment_key(experiment) if code is None else code
    code = key.key if isinstance(key, SourceKey) else key
    if dirty is None:
        dirty = closure_dirty(key) if isinstance(key, SourceKey) else "+" in code
    config = experiment_config(experiment, profile, seed)
    chash = config_hash(config)
    path = record_path(Path(runs_root) / "bench", experiment.name, seed, code, chash)
    if path.exists():
        log(f"{experiment.name} seed {seed}: cached ({path.name})")
        return path, False
    log(f"{experiment.name} seed {seed}: running")
    resolved = get_profile(profile)  # here, in the process that runs it: workers are given the name
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    sizes = experiment_sizes(experiment, resolved)
    import torch  # here: --help imports this module and must not import torch

    threads = torch.get_num_threads()  # a seed's last digits can depend on it (wmkit.core.parallel)
    with recording_value_reads() as values_read:
        result, read = _call_recording_reads(resolve(experiment.run), resolved, seed, Path(runs_root), sizes)
    check_parts_read(experiment, read)
    check_values_read(experiment, values_read, config)
    seconds = time.perf_counter() - t0
    record = {"experiment": experiment.name, "paper": experiment.paper, "profile": profile, "seed": seed,
              "code": code, "commit": commit, "dirty": dirty, "config_hash": chash, "config": config,
              "command": command, "cpu": cpu_model(),
              "started": started.isoformat(timespec="seconds"), "wall_seconds": round(seconds, 2),
              "torch_threads": threads, "versions": package_versions(), "result": jsonable(result)}
    if isinstance(key, SourceKey):
        record.update({"key_format": key_format(code),
                       "modules": [list(p) for p in key.modules], "data": [list(p) for p in key.data]})
    write_atomic(path, json.dumps(record, indent=1, sort_keys=True))
    log(f"{experiment.name} seed {seed}: done in {seconds:.1f} s -> {path.name}")
    return path, True


ANY_VERSION = "any"
"""`code` for a report across library versions: per (experiment, seed), the newest record made with
today's config, whatever version of ``wmkit/`` made it (each experiment lists its versions)."""

CURRENT = "source"
"""`code` of a report of each experiment's records of this checkout's source key (the default)."""


def this_kit_label(records: Sequence[dict], key: SourceKey) -> str:
    """'this kit: the same', 'this kit: differs in modules X, Y' or, for records that do not store
    their module hashes (keyed by the git tree of ``wmkit/``), 'this kit: src3-... (the records'
    modules are unknown)': how records made by another key relate to this checkout's `key`."""
    if records and all(r.get("code") == key.key for r in records):
        return "this kit: the same"
    differ: set[str] = set()
    for record in records:
        diff = module_differences(record, key)
        if diff is None:
            older = key_format(record.get("code", ""))
            if older and older > 1 and record.get("modules"):
                return (f"this kit: {short_version(key.key)} (the records are of key format {older}, whose module "
                        f"hashes cannot be compared with format {KEY_FORMAT}'s: `make bench-rekey` carries them)")
            return (f"this kit: {short_version(key.key)} (the records, keyed by the git tree of wmkit/, "
                    "do not say which modules they ran)")
        differ.update(diff)
    return "this kit: differs in modules " + ", ".join(sorted(differ)) if differ else "this kit: the same"


def _newest_record_path(bench_dir: Path, experiment: str, seed: int, chash: str | Sequence[str]) -> Path | None:
    """The record of (experiment, seed, config) that started last, of any library version. `chash`: the
    config's hash, or the hashes it may carry (:func:`config_hashes`)."""
    hashes = [chash] if isinstance(chash, str) else list(chash)
    paths = sorted(p for h in hashes for p in (bench_dir / experiment).glob(f"seed{seed}_*_{h[:12]}.json"))
    if not paths:
        return None
    return max(paths, key=lambda p: (json.loads(p.read_text()).get("started", ""), p.stat().st_mtime_ns))


SeedsArg = Sequence[int] | dict[str, Sequence[int]]
"""Seeds of a report: the same for every experiment, or experiment -> its seeds (:func:`recorded_seeds`)."""


def seeds_of(seeds: SeedsArg, experiment: str) -> list[int]:
    """`experiment`'s seeds in a :data:`SeedsArg` (none when a dict does not name it)."""
    return list(seeds.get(experiment, ()) if isinstance(seeds, dict) else seeds)


def recorded_seeds(records_dir: Path, profile: str,
                   experiments: dict[str, Experiment] | None = None) -> dict[str, list[int]]:
    """experiment -> every seed with at least one record in `records_dir` made with today's config of
    `profile` (any key): what a report of all the shipped evidence reads (:func:`publish_report`)."""
    experiments = EXPERIMENTS if experiments is None else experiments
    out = {}
    for name, experiment in experiments.items():
        found = set()
        for path in (Path(records_dir) / name).glob("seed*_*.json"):
            head = path.name.split("_", 1)[0].removeprefix("seed")
            if head.isdigit():
                found.add(int(head))
        out[name] = [s for s in sorted(found) if _newest_record_path(
            Path(records_dir), name, s, config_hashes(experiment_config(experiment, profile, s))) is not None]
    return out


def load_records(runs_root: Path, profile: str, seeds: SeedsArg, code: str | dict | None = None,
                 experiments: dict[str, Experiment] | None = None,
                 records_dir: Path | None = None) -> dict[str, dict[int, dict]]:
    """{experiment: {seed: record}} of the records on disk with the current configs and, per
    experiment, `code`: None or :data:`CURRENT` for its key at this checkout (:func:`experiment_key`),
    a dict for experiment -> key, :data:`ANY_VERSION` for the newest record of any key, or one
    key string for all (a tree hash of the first rule, say). `seeds`: a list for every experiment or
    a dict experiment -> seeds; `records_dir`: where the records are (default ``<runs_root>/bench``)."""
    experiments = EXPERIMENTS if experiments is None else experiments
    bench_dir = Path(records_dir) if records_dir is not None else Path(runs_root) / "bench"
    out: dict[str, dict[int, dict]] = {}
    for name, experiment in experiments.items():
        if code in (None, CURRENT):
            this = experiment_key(experiment).key
        elif isinstance(code, dict):
            this = code.get(name)
            if this is None:
                continue
        else:
            this = code
        for seed in seeds_of(seeds, name):
            config = experiment_config(experiment, profile, seed)
            if this == ANY_VERSION:
                path = _newest_record_path(bench_dir, name, seed, config_hashes(config))
            else:
                path = record_path(bench_dir, name, seed, this, config_hash(config))
            if path is not None and path.exists():
                record = json.loads(path.read_text())
                record["_path"] = str(path)
                out.setdefault(name, {})[seed] = record
    return out


RECORDS_ENV = "WMKIT_RECORDS"
"""Set to ``none`` to make :func:`seeds_or_this_run` ignore every benchmark record (this machine's
and the shipped ones), as in a fresh clone of a kit that ships none: the tests run the notebooks so."""


def shipped_records_dir(profile: str) -> Path:
    """The records shipped with the kit: ``executed/<profile>/bench/records/<experiment>/`` (:func:`published_dir`)."""
    return published_dir(profile) / "bench" / "records"


def seeds_or_this_run(runs_root: Path, profile: str, experiment: str, this_run: dict | None,
                      seeds: Sequence[int] | None = None,
                      experiments: dict[str, Experiment] | None = None,
                      shipped_dir: Path | None = None, minimum: int = 2) -> tuple[list[dict], str]:
    """(per-seed results, where they come from) for a notebook section that shows `experiment` over seeds.

    `seeds` None (the default) asks, at the design profile, for the experiment's confirmatory seeds
    (:func:`declared_seeds`) and, where fewer than `minimum` of those have records, for every other
    recorded seed (exploration records), labelled so; at another profile, for every seed declared or
    recorded. In order, the first that holds at least `minimum` of the seeds asked for (an
    interval needs two; a notebook that shows one seed's record in place of training it asks for one):
    1. this machine's benchmark records of the experiment's key at this checkout (``runs/<profile>/bench``);
    2. the records shipped with the kit (``executed/<profile>/bench/records``): per seed the newest
       one made with today's configuration, whatever key made it (the source names the keys and,
       by :func:`this_kit_label`, whether this checkout's differs and in which modules);
    3. ``[this_run]``, the one seed the notebook ran itself, when it ran one;
    4. ``[]``: not measured (the caller prints the command that measures it).
    The source string says which records were found and why the others were not used; it never
    drops to one seed silently. ``WMKIT_RECORDS=none`` skips 1 and 2."""
    experiments = EXPERIMENTS if experiments is None else experiments
    if experiment not in experiments:
        raise ValueError(f"unknown experiment {experiment!r}: choose one of {', '.join(experiments)}")
    if minimum < 1:
        raise ValueError(f"minimum must be at least 1, got {minimum}")
    shipped_dir = shipped_records_dir(profile) if shipped_dir is None else Path(shipped_dir)
    one = {experiment: experiments[experiment]}
    if seeds is not None:
        blocks = [("", list(seeds))]
    else:  # (label after the seeds, seeds): a confirmatory block first, then every other recorded seed
        declared = declared_seeds(profile, experiment)
        recorded = sorted({s for d in (Path(runs_root) / "bench", shipped_dir)
                           for s in recorded_seeds(d, profile, one)[experiment]})
        if profile == DESIGN_PROFILE and declared:
            blocks = [(" (its confirmatory seeds)", declared),
                      (f" (exploration records: its confirmatory seeds, {_seed_list(dict.fromkeys(declared))}, "
                       f"have fewer than {minimum} record(s))", [s for s in recorded if s not in declared])]
        else:
            blocks = [("", sorted({*declared, *recorded}))]
        blocks = [block for block in blocks if block[1]]
    notes = [] if blocks else ["no seeds declared or recorded"]
    if os.environ.get(RECORDS_ENV, "").lower() != "none":
        key = experiment_key(experiments[experiment])
        code = key.key
        for which, wanted in blocks:
            local = load_records(runs_root, profile, wanted, code, one).get(experiment, {})
            if len(local) >= minimum:
                return ([local[s]["result"] for s in sorted(local)],
                        f"benchmark records of this library version ({short_version(code)}), seeds "
                        f"{_seed_list(local)}{which}")
            notes.append(f"{len(local)} record(s) of this library version in {Path(runs_root) / 'bench'}")
            # per seed the newest shipped record with today's configuration, whatever key made it
            shipped = load_records(runs_root, profile, wanted, ANY_VERSION, one,
                                   records_dir=shipped_dir).get(experiment, {})
            if len(shipped) >= minimum:
                versions = sorted({short_version(r["code"]) for r in shipped.values()})
                label = (f"records shipped with the kit, seeds {_seed_list(shipped)}{which}, library version(s) "
                         f"{', '.join(versions)} ({this_kit_label(list(shipped.values()), key)})")
                return [shipped[s]["result"] for s in sorted(shipped)], label
            notes.append(f"{len(shipped)} shipped record(s) with this configuration in {shipped_dir}")
    else:
        notes.append(f"{RECORDS_ENV}=none: records ignored")
    if this_run is not None:
        return [this_run], f"this notebook, seed {this_run.get('seed')} ({'; '.join(notes)})"
    return [], f"not measured ({'; '.join(notes)}; and not run here)"


PUBLISHED_PROFILE = "cpu"
"""The profile whose benchmark records and report the kit ships (``executed/cpu``)."""


def seeds_here_or_published(runs_dir: Path, profile: str, experiment: str, this_run: dict | None,
                            seeds: Sequence[int] | None = None, published: str = PUBLISHED_PROFILE,
                            published_shipped_dir: Path | None = None, **kwargs) -> tuple[list[dict], str, str]:
    """(per-seed results, where they come from, the profile they were made at) for a notebook's
    "over seeds" section run at `profile`, whose own runs live in `runs_dir` (``runs/<profile>``).

    :func:`seeds_or_this_run` at `profile`, except that where this profile has fewer than two seeds'
    records and `published` is another profile, the `published` profile's records (this machine's
    ``runs/<published>/bench``, else those shipped with the kit) are shown in place of the one seed
    the notebook ran: a quick `smoke` pass then shows the kit's multi-seed evidence, labelled as
    the other profile's, instead of a single seed with no interval. The caller must not mix them
    with numbers of its own run (the third value says which profile they are). `kwargs` go to
    :func:`seeds_or_this_run`; `published_shipped_dir` is the `published` profile's ``shipped_dir``."""
    found, source = seeds_or_this_run(runs_dir, profile, experiment, this_run, seeds, **kwargs)
    found_records = bool(found) and found[0] is not this_run
    if found_records or published == profile:
        return found, source, profile
    other, other_source = seeds_or_this_run(Path(runs_dir).parent / published, published, experiment, None, seeds,
                                            **{**kwargs, "shipped_dir": published_shipped_dir})
    if other:
        return other, (f"the {published} profile's {other_source}; this {profile} run's own seed is in the "
                       "sections above"), published
    return found, source, profile


def _seed_list(records: dict[int, dict]) -> str:
    """'0-18' for a run of consecutive seeds, else '0, 2, 5'."""
    seeds = sorted(records)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def paper_effect(claim: Claim) -> float | None:
    """The paper's effect in the kit's units that `claim`'s verdict weighs (its design's), or None."""
    return claim.design.paper_effect if claim.design is not None and not claim.design.pending else None


def claim_row(claim: Claim, records: dict[int, dict], profile: str, n_seeds: int,
              experiments: dict[str, Experiment] | None = None, unavailable: str | None = None) -> dict:
    """One table row: computed only from `records` (seed -> record) of the claim's experiment.
    `unavailable`: why that experiment cannot run on this machine (the reason of a row without records)."""
    experiments = EXPERIMENTS if experiments is None else experiments
    row = {"id": claim.id, "paper": claim.paper, "claim": claim.text, "paper_figure": claim.paper_figure,
           "kind": claim.kind, "measures": claim.measures,
           "experiment": claim.experiment, "kit_label": claim.kit_label, "direction": claim.direction,
           "threshold": claim.threshold, "paper_effect": paper_effect(claim),
           "fields": {"value": claim.value, "minus": claim.minus}}
    if claim.experiment is None:
        return {**row, "verdict": "not measured", "reason": claim.not_measured, "records": [], "seeds": [],
                "kit": summarize([]), "command": None}
    paper = experiments[claim.experiment].paper
    declared = profile != DESIGN_PROFILE and list(range(n_seeds)) == declared_seeds(profile, claim.experiment)
    row["command"] = bench_command(profile, None if declared else n_seeds, [claim.experiment])
    if not records:
        reason = f"not run on this machine: {unavailable}" if unavailable else "not run yet: no record of its experiment (run the command)"
        return {**row, "verdict": "not measured", "reason": reason, "records": [], "seeds": [], "kit": summarize([])}
    seeds = sorted(records)
    values = [claim_value(claim, records[s]["result"]) for s in seeds]
    judged = verdict(values, claim.direction, claim.threshold, paper_effect=row["paper_effect"],
                     not_measured=precondition_failure(claim, {s: records[s]["result"] for s in seeds}))
    stats = judged.summary
    row.update({"seeds": seeds, "records": [records[s]["_path"] for s in seeds], "kit": stats,
                "verdict": judged.verdict, "verdict_reason": judged.reason, "paper_of_experiment": paper,
                "record_seconds": [records[s]["wall_seconds"] for s in seeds]})
    if not stats["n"]:
        row["reason"] = "the fields are missing or undefined in every record (e.g. target never reached)"
    elif judged.verdict == "not measured":
        row["reason"] = judged.reason
    if 0 < stats["n"] < len(seeds):
        row["reason"] = "; ".join(filter(None, [row.get("reason"), f"defined in {stats['n']} of {len(seeds)} seeds"]))
    return row


CONFIRMATORY_PENDING = "confirmatory run pending"
"""The reason of a confirmatory row whose declared seeds have no record at this version yet."""


def confirmatory_row(claim: Claim, records: dict[int, dict], seeds: Sequence[int], profile: str,
                     experiments: dict[str, Experiment] | None = None, unavailable: str | None = None) -> dict:
    """A claim's row on its experiment's confirmatory `seeds` (:func:`wmkit.bench.confirmatory.experiment_plans`):
    judged only when every one of them has its record at this version (`records`, seed -> record);
    else "not measured" saying why (its design is pending, the experiment runs no confirmatory seeds,
    or the confirmatory run is pending, with how many of its seeds are recorded)."""
    seeds = list(seeds)
    row = claim_row(claim, {s: records[s] for s in seeds if s in records}, profile, len(seeds), experiments,
                    unavailable)
    row.update({"confirmatory_seeds": seeds, "design": design_summary(claim)})
    if claim.experiment is None:
        return row
    row["command"] = bench_command(profile, None, [claim.experiment])
    why = None
    if claim.design is not None and claim.design.pending:
        why = f"awaiting its confirmatory design ({claim.design.pending})"
    elif votes(claim) and claim.design is None:
        why = "awaiting its confirmatory design (none declared yet)"
    elif not seeds:
        why = "its experiment runs no confirmatory seeds (no claim that votes reads it)"
    elif len([s for s in seeds if s in records]) < len(seeds):
        done = len([s for s in seeds if s in records])
        why = (f"{CONFIRMATORY_PENDING}" + (f" ({done} of {len(seeds)} seeds recorded at this version)" if done else
                                             f" (seeds {_seed_list(dict.fromkeys(seeds))}, none recorded at this version)"))
        if unavailable:
            why += f"; not run on this machine: {unavailable}"
    if why:
        row.update({"verdict": "not measured", "reason": why, "verdict_reason": why})
    return row


def design_summary(claim: Claim) -> dict | None:
    """What a row shows of its claim's design: the paper's effect and its conversion, the SESOI, the
    exploration sd and its source, the precondition in words (None for a sub-row)."""
    if claim.design is None:
        return None
    d = claim.design
    return {"pending": d.pending or None, "paper_effect": d.paper_effect, "conversion": d.conversion,
            "sesoi": d.sesoi, "sd": d.sd, "sd_seeds": d.sd_seeds, "sd_source": d.sd_source,
            "budget_hours": d.budget_hours, "precondition": precondition_text(claim.precondition)}


NULL_REPRODUCED_RATE = 0.025
"""The chance that a claim with no effect at all comes out "reproduced": the verdict checks one
direction with a two-sided 95% t-interval, so the interval lies wholly on the paper's side with
probability 0.025 under the null (at a true effect exactly on the line)."""


def group_rows(rows: list[dict]) -> None:
    """Give each row its group's verdict (``group_verdict``): a claim's own verdict, or, for a
    sub-row (``measures`` names another claim: the same paper claim measured another way), the
    verdict of the group's primary measure. The primary's verdict is the group's; a sub-row keeps its
    own number and verdict, shown under the primary, and does not vote. A sub-row whose primary is
    not among `rows` counts as a claim of its own."""
    by_id = {r["id"]: r for r in rows}
    for row in rows:
        primary = by_id.get(row.get("measures") or "")
        if primary is None:
            row["measures"] = None
        row["group_verdict"] = (primary or row)["verdict"]


CONFIRMATORY, EXPLORATORY = "confirmatory", "exploratory"
"""A report's two sections: the records on each claim's declared confirmatory seeds at this version
(counted), and every other record (shown, not counted)."""


def headline(rows: list[dict], section: str | None = None) -> dict:
    """The headline of a table of rows: one verdict per group (its primary's; :func:`group_rows`),
    counted per kind, paper claims apart from the paper's limitations and the kit's controls.

    `section` :data:`CONFIRMATORY`: the counts, led by a plain statement when no confirmatory record
    exists yet, and the multiplicity of the confirmatory family stated once: the paper claims with a
    declared design, each tested once, would read "reproduced" by chance with probability
    :data:`NULL_REPRODUCED_RATE` each if none had any effect (the expected number, and the chance of
    at least one). :data:`EXPLORATORY`: the counts, marked as not counted and carrying no error rate
    (the designs were chosen on these seeds). None (a report without a confirmatory design, e.g. at
    `smoke`): the counts, marked exploratory, with the same chance figure over the judged claims."""
    primaries = [r for r in rows if not r.get("measures")]
    counts = {kind: {v: sum(r.get("kind", PAPER_CLAIM) == kind and r["verdict"] == v for r in primaries)
                     for v in VERDICTS} for kind in CLAIM_KINDS}
    sub_rows = {kind: sum(r.get("kind", PAPER_CLAIM) == kind for r in rows if r.get("measures")) for kind in CLAIM_KINDS}
    claims = sum(counts[PAPER_CLAIM].values())
    judged = claims - counts[PAPER_CLAIM]["not measured"]
    tested = sum(1 for r in primaries if r.get("kind", PAPER_CLAIM) == PAPER_CLAIM
                 and (r.get("design") or {}).get("sesoi") is not None and not (r.get("design") or {}).get("pending"))
    family = tested if section == CONFIRMATORY else judged
    expected = NULL_REPRODUCED_RATE * family
    any_chance = 1 - (1 - NULL_REPRODUCED_RATE) ** family
    prefix = "Exploratory, not counted: " if section == EXPLORATORY else ""

    def line(kind: str, plural: str) -> str:
        n = sum(counts[kind].values())
        subs = (f"; {sub_rows[kind]} more row(s) measure them other ways and do not vote" if sub_rows[kind] else "")
        return (f"{prefix}{n} {plural} (one verdict each{subs}): "
                + ", ".join(f"{v} {counts[kind][v]}" for v in VERDICTS))

    by_id = {r["id"]: r for r in rows}
    disagree = sorted({r["measures"] for r in rows if r.get("measures") and r["verdict"] != "not measured"
                       and r["verdict"] != by_id[r["measures"]]["verdict"]})
    text = []
    evidence = [r for r in rows if r.get("seeds")]
    if section == CONFIRMATORY and not evidence:
        text.append("No confirmatory evidence exists yet: no claim has a record on its declared confirmatory "
                    "seeds at this library version, so every claim reads \"not measured: "
                    f"{CONFIRMATORY_PENDING}\" (the run: make bench). The exploratory section below shows the "
                    "records the designs were chosen on; they are not counted.")
    text += [line(PAPER_CLAIM, "paper claims"), line(CLAIM_KINDS[1], "paper limitations, counted apart"),
             line(CLAIM_KINDS[2], "kit controls (no paper figure), counted apart")]
    if section == CONFIRMATORY:
        text.append(f"Multiplicity: {tested} paper claims are tested, each once, on seeds declared before their "
                    f"run. If none had any effect, each would still read \"reproduced\" with probability about "
                    f"{NULL_REPRODUCED_RATE:g} (one direction of a two-sided 95% interval): about {expected:.2f} "
                    f"false \"reproduced\" expected, and a {any_chance:.0%} chance of at least one; no correction "
                    f"is applied. Found: {counts[PAPER_CLAIM]['reproduced']} reproduced of {judged} judged.")
    elif section == EXPLORATORY:
        text.append("Exploratory: regimes, measures and seed counts were chosen on these seeds, so these verdicts "
                    "carry no error rate and are not counted.")
    else:
        text.append("No confirmatory section (seeds given on the command line, or a profile without a "
                    "confirmatory design): every verdict here is exploratory. "
                    f"If none of the {judged} judged paper claims had any effect, each would still come out "
                    f"\"reproduced\" with probability about {NULL_REPRODUCED_RATE:g} (one direction checked with a "
                    f"two-sided 95% interval): about {expected:.2f} false \"reproduced\" expected "
                    f"({NULL_REPRODUCED_RATE:g} x {judged}), against {counts[PAPER_CLAIM]['reproduced']} found.")
    if disagree:
        text.append(f"{prefix}{len(disagree)} group(s) where another measure's verdict differs from the primary's "
                    f"(the table shows both): {', '.join(disagree)}.")
    return {"section": section, "counts": counts, "sub_rows": sub_rows, "paper_claims": claims,
            "paper_claims_judged": judged, "paper_claims_tested": tested, "null_reproduced_rate": NULL_REPRODUCED_RATE,
            "expected_false_reproduced": expected, "chance_of_any_false_reproduced": any_chance,
            "groups_that_disagree": disagree, "text": text}


def _n_seeds(seeds: SeedsArg, experiment: str | None) -> int:
    """N of the ``--seeds N`` that makes `experiment`'s seeds (seeds 0..N-1)."""
    if not isinstance(seeds, dict):
        return len(seeds)
    mine = seeds_of(seeds, experiment) if experiment else []
    return max(mine) + 1 if mine else 3


def seeds_label(report: dict) -> str:
    """'seeds [0, 1, 2]', or for a report whose experiments have seeds of their own (the published one)
    'seeds per experiment (3-19)'."""
    per = report.get("seeds_per_experiment")
    if not per:
        return f"seeds {report['seeds']}"
    counts = sorted({len(v) for v in per.values() if v})
    span = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else (str(counts[0]) if counts else "0")
    return f"seeds per experiment ({span} each)"


def portable_paths(report: dict, folder: Path) -> dict:
    """A copy of `report` whose record and figure paths under `folder` (bench.json's) are relative to it,
    so that the file reads the same in any clone, and without git (:func:`load_report` resolves them)."""
    folder = Path(folder).resolve()

    def rel(p: str) -> str:
        path = Path(p).resolve()
        return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(p)

    out = json.loads(json.dumps(jsonable(report)))
    for row in out["rows"] + (out.get("exploratory") or {}).get("rows", []):
        row["records"] = [rel(p) for p in row.get("records", [])]
    out["figures"] = [rel(p) for p in out.get("figures", [])]
    out["paths"] = "relative to this file's folder"
    return out


def _experiments_info(records: dict[str, dict[int, dict]], keys: dict[str, SourceKey],
                      experiments: dict[str, Experiment]) -> dict:
    """Per experiment: its records' seeds, keys, CPUs and wall times, and how this checkout relates to them."""
    return {name: {"paper": e.paper, "description": e.description,
                   "seeds": sorted(records.get(name, {})),
                   "codes": sorted({r["code"] for r in records.get(name, {}).values()}),
                   "key": keys[name].key, "key_modules": len(keys[name].modules),
                   "this_kit": (this_kit_label(list(records[name].values()), keys[name])
                                if records.get(name) else None),
                   # a seed's floats depend on the CPU kind; older records did not keep it
                   "cpus": sorted({cpu_kind(r.get("cpu")) for r in records.get(name, {}).values()}),
                   "wall_seconds": {str(s): r["wall_seconds"] for s, r in sorted(records.get(name, {}).items())}}
            for name, e in experiments.items()}


def build_report(runs_root: Path, profile: str, seeds: SeedsArg, code: str | None = None,
                 claims: Sequence[Claim] = CLAIMS, experiments: dict[str, Experiment] | None = None,
                 command: str = "", wall_seconds: float | None = None, plots: bool = True,
                 unavailable: dict[str, str] | None = None, records_dir: Path | None = None,
                 report_name: str = "report.md", confirmatory: dict[str, list[int]] | None = None) -> dict:
    """Read the records from disk, compute every row, write ``<runs_root>/bench.json``,
    ``<runs_root>/<report_name>`` and the figures (``<runs_root>/bench/figures``).
    `code`: which records (:func:`load_records`; None: each experiment's key at this checkout).
    `seeds`: a list for every experiment, or experiment -> its seeds (:func:`recorded_seeds`).
    `records_dir`: where the records are (default ``<runs_root>/bench``).
    `unavailable`: experiment -> why it cannot run here (rows without records give that reason).

    `confirmatory`: experiment -> its declared confirmatory seeds
    (:func:`wmkit.bench.confirmatory.confirmatory_seeds`). Then the report has two sections: ``rows``
    and ``headline`` are the confirmatory ones (each claim judged on its experiment's confirmatory
    seeds, from their records at this checkout's keys, :func:`confirmatory_row`), and
    ``exploratory`` holds the rows of every other seed of `seeds` (records of `code`), shown but not
    counted. None: one table of `seeds`, which the headline calls exploratory (no design).
    bench.json names its records and figures relative to its own folder (:func:`portable_paths`);
    the returned dict keeps the paths as found."""
    experiments = EXPERIMENTS if experiments is None else experiments
    unavailable = unavailable or {}
    runs_root = Path(runs_root)
    code = CURRENT if code is None else code
    keys = {name: experiment_key(e) for name, e in experiments.items()}
    this_version = {n: k.key for n, k in keys.items()}
    if confirmatory is not None:
        seeds = {n: [s for s in seeds_of(seeds, n) if s not in confirmatory.get(n, [])] for n in experiments}
    records = load_records(runs_root, profile, seeds, this_version if code == CURRENT else code, experiments,
                           records_dir)
    rows = [claim_row(c, records.get(c.experiment, {}) if c.experiment else {}, profile,
                      _n_seeds(seeds, c.experiment), experiments,
                      unavailable.get(c.experiment) if c.experiment else None)
            for c in claims]
    group_rows(rows)
    per_experiment = {n: seeds_of(seeds, n) for n in experiments} if isinstance(seeds, dict) else None
    all_seeds = sorted({s for v in per_experiment.values() for s in v}) if per_experiment else list(seeds)
    report = {
        "profile": profile, "seeds": all_seeds, "seeds_per_experiment": per_experiment,
        "code": code, "commit": head_commit(),
        "dirty": any(r.get("dirty") is True or "+" in r["code"] for recs in records.values() for r in recs.values())
        or (code not in (ANY_VERSION, CURRENT) and "+" in code),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "command": command,
        "wall_seconds": wall_seconds, "machine": machine(), "rows": rows,
        "experiments": _experiments_info(records, keys, experiments),
        "counts": {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS},
        "headline": headline(rows),
        "unavailable": dict(unavailable),
    }
    if confirmatory is not None:
        found = load_records(runs_root, profile, confirmatory, this_version, experiments, records_dir)
        confirmed = [confirmatory_row(c, found.get(c.experiment, {}) if c.experiment else {},
                                      confirmatory.get(c.experiment, []) if c.experiment else [], profile,
                                      experiments, unavailable.get(c.experiment) if c.experiment else None)
                     for c in claims]
        group_rows(confirmed)
        exploratory = {key: report[key] for key in ("rows", "seeds", "seeds_per_experiment", "code", "experiments",
                                                    "counts")}
        exploratory["headline"] = headline(rows, EXPLORATORY)
        report.update({
            "rows": confirmed, "headline": headline(confirmed, CONFIRMATORY),
            "counts": {v: sum(r["verdict"] == v for r in confirmed) for v in VERDICTS},
            "confirmatory": {"seeds_per_experiment": {n: list(v) for n, v in confirmatory.items()},
                             "experiments": _experiments_info(found, keys, experiments),
                             "plan": design_plan(claims, experiments, confirmatory)},
            "exploratory": exploratory,
            "dirty": report["dirty"] or any(r.get("dirty") is True for recs in found.values() for r in recs.values()),
        })
    report["figures"] = plot_report(report, runs_root / "bench" / "figures") if plots else []
    write_atomic(runs_root / "bench.json", json.dumps(portable_paths(report, runs_root), indent=1))
    write_atomic(runs_root / report_name, report_markdown(report, runs_root))
    return report


def design_plan(claims: Sequence[Claim] = CLAIMS, experiments: dict[str, Experiment] | None = None,
                confirmatory: dict[str, list[int]] | None = None) -> dict:
    """The confirmatory plan as the report shows it: per voting claim its design and seeds, per
    experiment its confirmatory seeds (`confirmatory`, default the declared ones) and estimated worker
    time (:func:`wmkit.bench.confirmatory.experiment_plans`)."""
    experiments = EXPERIMENTS if experiments is None else experiments
    plans = claim_plans(claims)
    if confirmatory is None:
        confirmatory = {n: p.seeds for n, p in experiment_plans(claims, experiments).items()}
    claim_rows = []
    for claim in claims:
        if not votes(claim) or claim.experiment not in experiments:
            continue
        entry = {"id": claim.id, "paper": claim.paper, "kind": claim.kind, "experiment": claim.experiment,
                 "measure": claim.kit_label, "design": design_summary(claim)}
        plan = plans.get(claim.id)
        if plan is not None:
            entry.update({"sd_planning": plan.sd_planning, "seeds_for_power": plan.seeds_for_power,
                          "seeds_in_budget": plan.seeds_in_budget, "seeds": plan.seeds, "power": plan.power,
                          "capped": plan.capped, "confirmatory_seeds": list(confirmatory.get(claim.experiment, []))})
        claim_rows.append(entry)
    timing = {n: (EXPERIMENT_SECONDS[n].seconds if n in EXPERIMENT_SECONDS else None) for n in experiments}
    return {"claims": claim_rows,
            "experiments": {n: {"seeds": list(confirmatory.get(n, [])), "seconds_per_seed": timing[n],
                                "seconds_source": EXPERIMENT_SECONDS[n].source if n in EXPERIMENT_SECONDS else None,
                                "worker_seconds": len(confirmatory.get(n, [])) * (timing[n] or 0.0)}
                            for n in experiments}}


def _check_rows(rows: list[dict], claims: dict[str, Claim], base: Path | None) -> None:
    """:func:`check_report` on one section's rows, in place."""
    if base is not None:
        for row in rows:
            row["records"] = [str(base / p) if not Path(p).is_absolute() else p for p in row.get("records", [])]
    for row in rows:
        missing = [p for p in row.get("records", []) if not Path(p).exists()]
        if missing and row["verdict"] != "not measured":
            row.update({"verdict": "not measured", "kit": summarize([]),
                        "reason": f"run record missing: {Path(missing[0]).name}"})
        elif row.get("records") and row.get("kit", {}).get("n"):
            claim = claims.get(row["id"])
            failed = None
            if claim is not None and claim.precondition is not None:
                failed = precondition_failure(claim, {s: json.loads(Path(p).read_text())["result"]
                                                      for s, p in zip(row["seeds"], row["records"])})
            if row.get("confirmatory_seeds") and len(row.get("seeds", [])) < len(row["confirmatory_seeds"]):
                continue  # an incomplete confirmatory run stays "not measured" whatever its numbers
            judged = verdict(row["kit"], row["direction"], row["threshold"], not_measured=failed,
                             paper_effect=row.get("paper_effect"))
            row.update({"verdict": judged.verdict, "verdict_reason": judged.reason})
            if judged.verdict == "not measured":
                row["reason"] = judged.reason
    for row in rows:  # a report written before claims had kinds: today's kinds and groups
        claim = claims.get(row["id"])
        if "kind" not in row:
            row["kind"] = claim.kind if claim is not None else PAPER_CLAIM
            row["measures"] = claim.measures if claim is not None else None
    group_rows(rows)


def check_report(report: dict, base: Path | None = None, experiments: dict[str, Experiment] | None = None) -> dict:
    """A loaded bench.json with every row whose run records are gone turned into "not measured"
    (a number is shown only while the record that made it exists), and every other row with a
    number judged again by :func:`wmkit.stats.verdict` (a report written under an older rule gets
    today's labels; the claim's precondition is checked on the records), in both sections
    (confirmatory ``rows`` and ``exploratory``). Relative record and figure paths are read from
    `base` (bench.json's folder) and come back absolute. Each experiment's "this kit: ..." label is
    computed again against this checkout's source (:func:`this_kit_label`): it says how the records
    relate to the code that reads them, not to the code that published them."""
    experiments = EXPERIMENTS if experiments is None else experiments
    claims = {c.id: c for c in CLAIMS}
    base = Path(base) if base is not None else None
    if base is not None:
        report["figures"] = [str(base / p) if not Path(p).is_absolute() else p for p in report.get("figures", [])]
    sections = [(report, report.get("experiments", {}))]
    if report.get("exploratory"):
        sections.append((report["exploratory"], report["exploratory"].get("experiments", {})))
    for section, entries in sections:
        _check_rows(section["rows"], claims, base)
        for name, entry in entries.items():
            paths = sorted({p for row in section["rows"] if row.get("experiment") == name
                            for p in row.get("records", []) if Path(p).exists()})
            if paths and name in experiments:
                entry["this_kit"] = this_kit_label([json.loads(Path(p).read_text()) for p in paths],
                                                   experiment_key(experiments[name]))
        section["counts"] = {v: sum(r["verdict"] == v for r in section["rows"]) for v in VERDICTS}
    split = report.get("exploratory") is not None
    report["headline"] = headline(report["rows"], CONFIRMATORY if split else None)
    if split:
        report["exploratory"]["headline"] = headline(report["exploratory"]["rows"], EXPLORATORY)
    return report


def load_report(path: Path, experiments: dict[str, Experiment] | None = None) -> dict:
    """A bench.json, its paths resolved from its folder and its rows checked (:func:`check_report`)."""
    report = json.loads(Path(path).read_text())
    report.setdefault("code", report["commit"])  # written before records were keyed by wmkit/'s tree
    return check_report(report, Path(path).resolve().parent, experiments)


def fmt_kit(stats: dict, digits: int = 3) -> str:
    """A row's kit number: :func:`wmkit.stats.describe`."""
    return describe(stats, digits)


def report_markdown(report: dict, runs_root: Path | None = None) -> str:
    m = report["machine"]
    v = m["versions"]
    any_version = report["code"] == ANY_VERSION
    if any_version:
        provenance = (f"* created {report['created']} at commit `{report['commit'][:12]}` from the newest record of "
                      "each experiment and seed, whatever library version made it (`--any-version`): each "
                      "experiment's version, and whether this kit's source differs from it, is in the "
                      "Experiments table; a row is as current as its records")
    elif report["code"] == CURRENT:
        provenance = (f"* created {report['created']} at commit `{report['commit'][:12]}`; each experiment's "
                      "records of its source key at this checkout (the source of the wmkit modules it can "
                      "import; keys in the Experiments table)"
                      + (", some made by uncommitted code" if report.get("dirty") else ""))
    else:
        provenance = (f"* created {report['created']} at commit `{report['commit'][:12]}`; records of library version "
                      f"`{short_version(report['code'])}` "
                      + ("(source key)" if is_source_key(report["code"]) else "(git tree of wmkit/"
                         + (", + its uncommitted changes, hashed after the +)" if "+" in report["code"] else ")")))
    if any_version and report.get("experiments"):
        stale = {n: e for n, e in report["experiments"].items() if e.get("codes") and e.get("this_kit") != "this kit: the same"}
        provenance += (f"\n* at this library version: {len(report['experiments']) - len(stale)} of "
                       f"{len(report['experiments'])} experiments (every record made by this checkout's source)"
                       + ("; made by an older source: " + "; ".join(
                           f"`{n}` ({', '.join(short_version(c) for c in e['codes'])})" for n, e in stale.items())
                          if stale else ""))
    split = report.get("exploratory") is not None
    explained = [
        ("Kit number: mean over seeds ± sample std [95% t-interval] of the per-seed value in the kit-measures "
         "column (a paired difference where it says Δ / −). *reproduced*: the interval lies on the paper's "
         "side of the line; *contradicted*: it lies on the other side; *smaller than the paper's effect*: it "
         "covers the line but lies on the line's side of the paper's effect in the kit's units, clear of it "
         "(the paper's size is ruled out, a smaller effect is not); *inconclusive*: it covers the line and "
         "reaches the paper's effect (or the claim has none in the kit's units); *not measured* (reason "
         "given): the experiment not run yet, the confirmatory run not made, one seed, every seed gave the same value (a "
         "zero-width interval is not evidence), or the method did not act (its precondition failed). An "
         "interval on the paper's side short of its effect is reproduced, and its reason says so: the kit's "
         "claims are directions, its models tiny."), "",
        ("Kind: *paper claim* (the paper states it), *paper limitation* (the paper states it as a limit "
         "of its method), *kit control* (the kit's own check; no paper figure). A row marked ↳ measures "
         "the claim above it another way: its verdict is shown but the claim's verdict is the first "
         "row's (the primary measure, chosen by design: each claim's `measures`)."), ""]
    machine_lines = [
        f"* command: `{report['command']}`" if report.get("command") else "* command: (report only)",
        f"* wall time of this invocation: {report['wall_seconds']:.0f} s" if report.get("wall_seconds") is not None
        else "* wall time: see per-experiment times below",
        (f"* {'report built on (the records ran on the CPUs named in the Experiments tables)' if any_version or split else 'machine'}: "
         f"{m['platform']}, {m.get('cpu_model') or m['processor']}"
         + (f" (torch CPU kernels: {m['torch_cpu_capability']})" if m.get("torch_cpu_capability") else "")
         + f", {m['cpu_count']} CPUs, torch threads {m['torch_threads']}, GPU {m['cuda'] or 'none'}"),
        "* versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val)]
    if not split:
        lines = [f"# wmkit benchmark — profile `{report['profile']}`, {seeds_label(report)}", "", provenance,
                 *machine_lines,
                 *[f"* {t}" for t in (report.get("headline") or headline(report["rows"]))["text"]],
                 "* every row, sub-rows included (not a count of claims): "
                 + ", ".join(f"{k} {n}" for k, n in report["counts"].items()), "", *explained,
                 *_rows_table(report["rows"]), *_experiments_table(report["experiments"], "## Experiments")]
    else:
        confirmed = report["confirmatory"]
        exploratory = report["exploratory"]
        lines = [f"# wmkit benchmark — profile `{report['profile']}`", "",
                 "## Confirmatory evidence (counted)", "",
                 f"* created {report['created']} at commit `{report['commit'][:12]}`; each claim judged on its "
                 "experiment's declared confirmatory seeds, from their records at this checkout's source keys "
                 "(the design is below; `wmkit.design`)", *machine_lines,
                 *[f"* {t}" for t in report["headline"]["text"]],
                 "* every row, sub-rows included (not a count of claims): "
                 + ", ".join(f"{k} {n}" for k, n in report["counts"].items()), "", *explained,
                 *_rows_table(report["rows"], confirmatory=True), "",
                 *_design_tables(confirmed.get("plan") or {}),
                 *_experiments_table(confirmed["experiments"], "### Confirmatory records", only_recorded=True),
                 "", "## Exploratory (not counted)", "",
                 "Every other record shipped with the kit: the seeds the regimes, measures and seed counts were "
                 "chosen on. Shown for what they teach; the headline above does not count them.", "",
                 provenance,
                 *[f"* {t}" for t in exploratory["headline"]["text"]], "",
                 *_rows_table(exploratory["rows"]),
                 *_experiments_table(exploratory["experiments"], "### Exploratory records")]
    if report.get("figures"):
        lines += ["", "## Figures", ""]
        for fig in report["figures"]:
            rel = os.path.relpath(fig, runs_root) if runs_root else fig
            lines.append(f"![{Path(fig).stem}]({rel})")
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    return str(value).replace("|", "/").replace("\n", " ")


def _rows_table(rows: list[dict], confirmatory: bool = False) -> list[str]:
    """The markdown table of one section's rows, each primary followed by its sub-rows."""
    lines = ["| paper | kind | claim | paper figure | paper's effect (kit units) | kit measures | "
             "kit (mean ± std [95% CI]) | verdict | " + ("confirmatory seeds | " if confirmatory else "") + "command |",
             "|---|---|---|---|---|---|---|---|" + ("---|" if confirmatory else "") + "---|"]
    subs = {r["id"]: [s for s in rows if s.get("measures") == r["id"]] for r in rows}
    ordered = [x for r in rows if not r.get("measures") for x in (r, *subs[r["id"]])]
    ordered += [r for r in rows if r not in ordered]
    for row in ordered:
        verdict_text = row["verdict"] + (f" — {row['reason']}" if row.get("reason") else "")
        if row.get("measures"):
            verdict_text = f"(sub-row, no vote) {verdict_text}"
        elif subs.get(row["id"]):
            verdict_text = f"**{row['verdict']}** (the claim's verdict)" + (f" — {row['reason']}" if row.get("reason") else "")
        side = ">" if row["direction"] == "higher" else "<"
        label = row["kit_label"] + (f" ({side} {row['threshold']:g})" if row["threshold"] not in (0, -1e-9) else "")
        cmd = f"`{row['command']}`" if row.get("command") else "—"
        claim_text = ("↳ " if row.get("measures") else "") + row["claim"]
        effect = "—" if row.get("paper_effect") is None else f"{row['paper_effect']:+.3g}"
        cells = [row["paper"], row.get("kind", PAPER_CLAIM), claim_text, row["paper_figure"], effect, label or "—",
                 fmt_kit(row["kit"]), verdict_text]
        if confirmatory:
            cells.append(_seed_list(dict.fromkeys(row.get("confirmatory_seeds") or [])) or "—")
        cells.append(cmd)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _design_tables(plan: dict) -> list[str]:
    """The confirmatory design as declared (:func:`design_plan`): per voting claim, per experiment."""
    if not plan:
        return []
    lines = ["### Confirmatory design (declared before the run)", "",
             "Per claim that votes: its primary measure; the precondition that the method acted (else "
             "\"not measured: the method did not act\"); the paper's effect in the kit's units; the smallest "
             "effect of interest (SESOI); the sd of its per-seed value on exploration seeds and the 80% upper "
             "confidence limit the power computation uses; the seeds for 80% power at the SESOI (two-sided 95% "
             "paired t) and the seeds its budget buys; the power at the seeds it gets. An experiment runs the "
             "most seeds any of its claims needs, and every claim of it is judged on all of them.", "",
             "| claim | kind | measure | precondition (the method acted) | paper's effect → kit units | SESOI | "
             "exploration sd (n; source) | planning sd | seeds: power / budget / run | power at SESOI | "
             "confirmatory seeds |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for entry in plan.get("claims", []):
        design = entry.get("design") or {}
        if not design or design.get("pending"):
            why = design.get("pending") if design else "no design declared"
            lines.append("| " + " | ".join(_cell(c) for c in (entry["id"], entry["kind"], entry["measure"],
                                                                design.get("precondition", "—") if design else "—",
                                                                f"pending: {why}", "—", "—", "—", "—", "—", "—")) + " |")
            continue
        effect = design["conversion"]  # it states the number where there is one (tests/test_design.py)
        lines.append("| " + " | ".join(_cell(c) for c in (
            entry["id"], entry["kind"], entry["measure"], design["precondition"], effect, f"{design['sesoi']:.3g}",
            f"{design['sd']:.3g} (n={design['sd_seeds']}; {design['sd_source']})", f"{entry['sd_planning']:.3g}",
            f"{entry['seeds_for_power']} / {entry['seeds_in_budget']} ({design['budget_hours']:g} h) / "
            f"{entry['seeds']}" + (" (capped by the budget)" if entry["capped"] else ""),
            f"{entry['power']:.2f}", _seed_list(dict.fromkeys(entry["confirmatory_seeds"])) or "—")) + " |")
    experiments = plan.get("experiments", {})
    total = sum(e["worker_seconds"] for e in experiments.values())
    lines += ["", "| experiment | confirmatory seeds | seconds per seed (one worker) | worker time | "
              "on 2 workers |", "|---|---|---|---|---|"]
    for name, e in experiments.items():
        if not e["seeds"]:
            continue
        per_seed = "—" if e["seconds_per_seed"] is None else f"{e['seconds_per_seed']:.0f} ({e.get('seconds_source')})"
        lines.append(f"| `{name}` | {_seed_list(dict.fromkeys(e['seeds']))} ({len(e['seeds'])}) | "
                     f"{per_seed} | {duration(e['worker_seconds'])} | {duration(e['worker_seconds'] / 2)} |")
    lines += [f"| all | {sum(len(e['seeds']) for e in experiments.values())} runs | | {duration(total)} | "
              f"at least {duration(total / 2)} |", ""]
    return lines


def _experiments_table(entries: dict, title: str, only_recorded: bool = False) -> list[str]:
    lines = ["", title, "", "| experiment | paper | what | seeds | wall s per seed | library version | "
             "this kit | CPU |", "|---|---|---|---|---|---|---|---|"]
    shown = 0
    for name, e in entries.items():
        if only_recorded and not e.get("seeds"):
            continue
        shown += 1
        secs = ", ".join(f"{s}: {t:.0f}" for s, t in e["wall_seconds"].items()) or "—"
        codes = ", ".join(f"`{short_version(c)}`" for c in e.get("codes", [])) or "—"
        cpus = ", ".join(e.get("cpus", [])) or "—"
        relation = e.get("this_kit") or ""
        if relation and not all(is_source_key(c) for c in e.get("codes", [])):
            relation = "which modules differ is unknown (records keyed by the git tree of wmkit/)"
        here = (f"`{short_version(e['key'])}` ({e['key_modules']} modules)" if e.get("key") else "—") + (
            f"; {relation.removeprefix('this kit: ')}" if relation else "")
        lines.append(f"| `{name}` | {e['paper']} | {e['description']} | {e['seeds'] or '—'} | {secs} | {codes} | "
                     f"{here} | {cpus} |")
    if not shown:
        lines = ["", title, "", "None yet."]
    return lines


UNITS = {
    "rate": "difference in a rate or share (0..1)",
    "reward": "difference in the task-specific reward (0..1.3)",
    "relative": "relative change of L1, (L1_MLE − L1_RLVR) / L1_MLE",
    "calls": "difference in world-model calls per episode",
    "grade": "difference in expected grade (0..1)",
    "log_ratio": "compute ratio (×, log scale; the mean of the logs drawn as its ratio)",
    "other": "difference, units as in the table",
}
"""The units a claim's kit number can be in (:func:`claim_unit`); the report figures give each its own axis."""


def claim_unit(row: dict) -> str:
    """The key in :data:`UNITS` of a report row (or a :class:`Claim`), read from its kit label: rows
    with different units never share an axis. A compute ratio is judged as its log (line at 0) and
    drawn as the ratio on a log axis (line at 1×)."""
    label = (row["kit_label"] if isinstance(row, dict) else row.kit_label).lower()
    if label.startswith("log of") and "ratio" in label or "real / wmrl" in label:
        return "log_ratio"
    if label.startswith("relative"):
        return "relative"
    if "calls/episode" in label or "calls per" in label:
        return "calls"
    if "grade" in label or "gap to j*" in label:
        return "grade"
    if "task-specific reward" in label:
        return "reward"
    if any(word in label for word in ("accuracy", "success", "share", "f1", "reward rate", "embedding reward", "exact",
                                      "pass@", "best-of-k", "copy rate")):
        return "rate"
    return "other"


def forest_limits(values: Sequence[float], log: bool = False) -> tuple[float, float]:
    """x-limits around `values` (the data, intervals and the lines to clear): 8% of their range on each
    side, at least 0.05 (identical values, all 0 at smoke, would otherwise give an axis a billionth wide);
    with `log`, the same in log10 space, at least a factor 10^0.1."""
    xs = [float(x) for x in values if x is not None and math.isfinite(x) and (not log or x > 0)]
    if log:
        xs = [math.log10(x) for x in xs] or [0.0]
        low, high = min(xs), max(xs)
        pad = max(0.1, 0.08 * (high - low))
        return 10 ** (low - pad), 10 ** (high + pad)
    xs = xs or [0.0]
    low, high = min(xs), max(xs)
    pad = max(0.05, 0.08 * (high - low))
    return low - pad, high + pad


def plotted_row(row: dict, unit: str) -> tuple[list[float], float | None, float | None, float | None, float]:
    """(per-seed values, mean, ci low, ci high, line to clear) of a row as drawn: a log ratio as the ratio."""
    kit = row["kit"]
    keys = (kit.get("mean"), kit.get("ci_low"), kit.get("ci_high"))
    if unit != "log_ratio":
        return list(kit.get("values") or []), *keys, row["threshold"]
    return ([math.exp(v) for v in kit.get("values") or []], *(None if v is None else math.exp(v) for v in keys),
            math.exp(row["threshold"]))


def forest_figure(rows: Sequence[dict], title: str):
    """One paper's claims (report rows): each claim's per-seed values, mean and 95% interval, the line it
    must clear and, shaded, the side of that line that reproduces it; points coloured by verdict.

    Rows are labelled with the claim in words, not its id, and grouped by unit (:func:`claim_unit`),
    one panel per unit (top to bottom in the order of :data:`UNITS`) with its own x-axis fitted to its
    rows' data: on a shared axis a ratio's range would flatten a difference to a point, and rows in
    different units cannot be read against each other. Compute ratios are drawn as ratios on a log
    axis (line at 1×). Returns the figure; each axis is labelled with its unit (:data:`UNITS`)."""
    # Here, not at the top: `python -m wmkit --help` imports this module, not matplotlib (0.5 s).
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    colors = VERDICT_COLORS
    legend = [Line2D([], [], color=colors[v], marker="D", lw=2, label=v) for v in VERDICT_COLORS]
    legend.append(Line2D([], [], color="black", lw=0.8, label="line to clear"))
    legend.append(Patch(color="tab:blue", alpha=0.15, label="side that reproduces the claim"))
    panels = [([r for r in rows if claim_unit(r) == unit], unit) for unit in UNITS]
    panels = [(rs, unit) for rs, unit in panels if rs]
    heights = [0.7 * len(rs) + 1.0 for rs, _ in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, sum(heights) + 1.1), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (panel_rows, unit) in zip(axes[:, 0], panels):
        log = unit == "log_ratio"
        drawn = [plotted_row(r, unit) for r in panel_rows]
        low, high = forest_limits([x for values, mean, lo, hi, line in drawn for x in (*values, lo, hi, line)], log)
        for i, (row, (values, mean, ci_low, ci_high, line)) in enumerate(zip(panel_rows, drawn)):
            y = len(panel_rows) - 1 - i
            color = colors[row["verdict"]]
            # the side that reproduces the claim, in this row only
            side = (line, high) if row["direction"] == "higher" else (low, line)
            ax.fill_betweenx([y - 0.45, y + 0.45], *side, color="tab:blue", alpha=0.15, lw=0, zorder=1)
            if row["kit"].get("n"):
                ax.scatter(values, [y] * len(values), s=16, color=color, alpha=0.6, zorder=3)
                if ci_low is not None:
                    ax.plot([ci_low, ci_high], [y, y], color=color, lw=2, zorder=3)
                ax.plot([mean], [y], "D", color=color, ms=6, zorder=4)
            else:  # at the panel's left edge, where no data of this row can be
                ax.text(0.01, y, "not measured", color=color, va="center", fontsize=9,
                        transform=ax.get_yaxis_transform())
            ax.plot([line] * 2, [y - 0.45, y + 0.45], color="black", lw=0.8, zorder=2)
        if log:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_major_formatter(ScalarFormatter())  # 2, not 2×10⁰
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(low, high)
        labels = [textwrap.fill(r["claim"], 48) for r in reversed(panel_rows)]
        ax.set_yticks(range(len(panel_rows)), labels, fontsize=9)
        ax.set_ylim(-0.6, len(panel_rows) - 0.4)
        ax.tick_params(axis="x", labelsize=9)
        ax.set_xlabel(UNITS[unit], fontsize=9)
    axes[0, 0].set_title(textwrap.fill(title, 64) + "\nper seed (dots), mean (diamond), 95% interval (bar); each "
                         "panel one unit",
                         fontsize=10)
    fig.legend(handles=legend, loc="lower center", ncol=4, fontsize=8, frameon=False)  # two rows: 7 entries
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def plot_report(report: dict, out_dir: Path) -> list[str]:
    """One figure per paper (:func:`forest_figure`), saved in `out_dir`; returns their paths. A report
    with a confirmatory design gets one per paper with a confirmatory number (``<paper>.png``) and one
    per paper of its exploratory section (``exploratory_<paper>.png``); a paper with no number in a
    section gets no figure there (an empty plot says nothing)."""
    import matplotlib  # here: --help must not import it, and "Agg" is chosen before pyplot is imported

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # here: after matplotlib.use (see above)

    out_dir.mkdir(parents=True, exist_ok=True)
    split = report.get("exploratory") is not None
    sections = [("", report["rows"], "confirmatory seeds" if split else seeds_label(report))]
    if split:
        sections.append(("exploratory_", report["exploratory"]["rows"],
                         f"exploratory, not counted: {seeds_label(report['exploratory'])}"))
    paths = []
    for prefix, section_rows, label in sections:
        for paper in PAPERS:
            rows = [r for r in section_rows if r["paper"] == paper]
            if not rows or (split and not any(r["kit"].get("n") for r in rows)):
                continue
            fig = forest_figure(rows, f"{paper} — profile {report['profile']}, {label}")
            path = out_dir / f"{prefix}{paper.lower().replace('-', '_')}.png"
            fig.savefig(path, dpi=100)
            plt.close(fig)
            paths.append(str(path))
    return paths


@dataclass
class BenchResult:
    report: dict
    ran: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Experiment -> why it could not run on this machine (its rows say "not measured" with that reason)."""
    seconds: float = 0.0


def bench_seeds(profile: str, seeds: int | None, names: Sequence[str]) -> dict[str, list[int]]:
    """experiment -> the seeds a benchmark runs: 0..`seeds`-1 for every experiment, or with `seeds`
    None each experiment's declared seeds (:func:`wmkit.bench.confirmatory.declared_seeds`)."""
    if seeds is None:
        return {name: declared_seeds(profile, name) for name in names}
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"--seeds must be a positive integer, not {seeds!r}")
    return {name: list(range(seeds)) for name in names}


def cpu_kind(cpu: dict | None) -> str:
    """A record's CPU kind, as a report lists it: the model and torch's kernel set, e.g. "AMD EPYC
    (AVX512)". The kernel set is part of the kind: one model name runs AVX2 kernels on one machine
    and AVX512 on another, and a seed's floats (and its time) differ between the two. Older records
    kept only the model, or nothing ("not recorded")."""
    cpu = cpu or {}
    model = cpu.get("cpu_model") or "not recorded"
    return f"{model} ({cpu['torch_cpu_capability']})" if cpu.get("torch_cpu_capability") else model


def seconds_per_seed(experiments: Sequence[str], folders: Sequence[Path],
                     cpu: dict | None = None) -> dict[str, float | None]:
    """experiment -> median wall seconds of one seed over its records in `folders` (any version, any
    config: an estimate for the ETA and the plan), None where there is no record. With `cpu` (as
    :func:`wmkit.runs.cpu_model` gives it), the records made on that CPU kind (:func:`cpu_kind`) where
    an experiment has any, else those of the same CPU model: a seed's time differs between CPU kinds by a factor of two or more."""
    out: dict[str, float | None] = {}
    for name in experiments:
        times: list[tuple[float, str, str | None]] = []
        for folder in folders:
            for path in (Path(folder) / name).glob("seed*_*.json"):
                try:
                    record = json.loads(path.read_text())
                    times.append((float(record["wall_seconds"]), cpu_kind(record.get("cpu")),
                                  (record.get("cpu") or {}).get("cpu_model")))
                except (OSError, ValueError, KeyError, TypeError, AttributeError):
                    continue
        kind, model = (cpu_kind(cpu), cpu.get("cpu_model")) if cpu is not None else (None, None)
        chosen = ([t for t, k, _ in times if k == kind] or [t for t, _, m in times if m == model]
                  or [t for t, _, _ in times])
        out[name] = statistics.median(chosen) if chosen else None
    return out


def duration(seconds: float) -> str:
    """'1 h 05 min', '12 min', '40 s'."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


@dataclass
class BenchPlan:
    """What a benchmark invocation will run: per experiment its seeds, the seeds without a record at
    this version, and the estimated seconds of one seed (:func:`seconds_per_seed`)."""

    profile: str
    workers: int
    seeds: dict[str, list[int]]
    to_run: dict[str, list[int]]
    seconds: dict[str, float | None]
    skipped: dict[str, str] = field(default_factory=dict)
    shipped: dict[str, list[int]] = field(default_factory=dict)
    """experiment -> seeds with no record under the runs folder whose record at this version ships with
    the kit (``executed/<profile>/bench/records``): copied in, not rerun."""

    def estimate(self, jobs: Sequence[tuple[str, int]] | None = None) -> float:
        """Estimated worker-seconds of `jobs` (default: every run to do); an experiment without a
        record counts as the median of the others."""
        known = [v for v in self.seconds.values() if v]
        fallback = sorted(known)[len(known) // 2] if known else 60.0
        jobs = [(n, s) for n, seeds in self.to_run.items() for s in seeds] if jobs is None else jobs
        return sum(self.seconds.get(n) or fallback for n, _ in jobs)

    def lines(self) -> list[str]:
        total = sum(len(v) for v in self.seeds.values())
        todo = sum(len(v) for v in self.to_run.values())
        shipped = sum(len(v) for v in self.shipped.values())
        out = [f"bench plan, profile {self.profile}: {todo} of {total} (experiment, seed) runs to do, "
               f"{total - todo} recorded at this library version"
               + (f" ({shipped} of them shipped with the kit)" if shipped else "")]
        for name, seeds in self.seeds.items():
            each = self.seconds.get(name)
            note = f"~{duration(each)} per seed" if each else "no timing on record"
            why = f"; not on this machine: {self.skipped[name]}" if name in self.skipped else ""
            out.append(f"  {name:24s} seeds {_seed_list(seeds):8s} to run {len(self.to_run[name]):2d}  {note}{why}")
        work = self.estimate()
        source = ("each experiment's declared seconds per confirmatory seed, wmkit.design.EXPERIMENT_SECONDS"
                  if self.profile == DESIGN_PROFILE else "medians of the records' own wall times, those made on "
                  "this machine's CPU model where an experiment has any")
        out.append(f"about {duration(work)} of work: about {duration(work / self.workers)} with "
                   f"{self.workers} worker(s) ({source}; other CPUs can be twice as fast or slow)")
        return out


def plan_bench(profile: str, seeds: dict[str, list[int]], runs_root: Path, workers: int,
               experiments: dict[str, Experiment] | None = None, shipped_dir: Path | None = None) -> BenchPlan:
    """The :class:`BenchPlan` of running `seeds` (experiment -> seeds) under `runs_root`.

    A seed with no record under `runs_root` whose record at this version is in `shipped_dir` (default
    ``executed/<profile>/bench/records``; ``False``: look nowhere) is not run: the same code made it,
    so a fresh clone's ``make bench`` runs only what the shipped table lacks."""
    experiments = EXPERIMENTS if experiments is None else experiments
    if shipped_dir is None:
        shipped_dir = shipped_records_dir(profile)
    to_run: dict[str, list[int]] = {}
    shipped: dict[str, list[int]] = {}
    skipped: dict[str, str] = {}
    for name, wanted in seeds.items():
        reason = unavailable_reason(experiments[name])
        key = experiment_key(experiments[name]).key
        missing = [s for s in wanted
                   if not current_record_path(runs_root / "bench", experiments[name], profile, s, key).exists()]
        if shipped_dir:
            shipped[name] = [s for s in missing if current_record_path(
                Path(shipped_dir), experiments[name], profile, s, key).exists()]
            missing = [s for s in missing if s not in shipped[name]]
        if reason and missing:  # a record made where it could run still counts
            skipped[name] = reason
            missing = []
        to_run[name] = missing
    timing_dirs = [runs_root / "bench", shipped_records_dir(profile)]
    seconds = seconds_per_seed(list(seeds), timing_dirs, cpu_model())
    if profile == DESIGN_PROFILE:  # a confirmatory seed's declared cost (an RLVR seed now builds its MLE model)
        seconds.update({n: EXPERIMENT_SECONDS[n].seconds for n in seconds if n in EXPERIMENT_SECONDS})
    return BenchPlan(profile, workers, seeds, to_run, seconds, skipped, {n: v for n, v in shipped.items() if v})


def copy_shipped_records(plan: BenchPlan, runs_root: Path, shipped_dir: Path,
                         experiments: dict[str, Experiment]) -> list[Path]:
    """Copy the shipped records `plan` reuses (:attr:`BenchPlan.shipped`) into ``<runs_root>/bench``,
    where the report reads its records; returns the copies."""
    copied = []
    for name, seeds in plan.shipped.items():
        key = experiment_key(experiments[name]).key
        for seed in seeds:
            source = current_record_path(Path(shipped_dir), experiments[name], plan.profile, seed, key)
            target = Path(runs_root) / "bench" / name / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied.append(target)
    return copied


def run_bench(profile: str = "smoke", seeds: int | None = None, only: Sequence[str] | None = None,
              runs_root: Path | None = None, threads: int | None = None, report_only: bool = False,
              experiments: dict[str, Experiment] | None = None, claims: Sequence[Claim] = CLAIMS,
              log: Callable[[str], None] = print, workers: int = 1, any_version: bool = False,
              plan_only: bool = False, shipped_dir: Path | bool | None = None,
              executor: LocalProcesses | SubmititExecutor | None = None) -> BenchResult:
    """Run every selected (experiment, seed) that has no record yet, then rebuild the report from
    all records of this library version (also those of experiments not selected this time).

    `seeds`: None runs each experiment's declared seeds (:func:`wmkit.bench.confirmatory.declared_seeds`:
    the one benchmark definition); N runs seeds 0..N-1 of every selected experiment.

    `any_version` (with `report_only` only): the report takes, per experiment and seed, the newest
    record made with today's config by any library version, and names each experiment's versions.
    For a benchmark too long to rerun whole after every library change; what it gains in coverage
    it loses in currency, and the report says so.

    `workers` > 1 runs the (experiment, seed) runs side by side in that many processes, longest first,
    each with an equal share of the cores (`wmkit.core.parallel.run_jobs`; one torch thread each on 2
    cores): the records are the same as one at a time, up to the last digits a thread count can
    change. One progress line per finished run gives the time left, from the records' own timings.
    `plan_only`: print what would run and how long it should take (:class:`BenchPlan`), run nothing.

    `executor` (`wmkit.bench.executor`): where the runs execute; None is ``LocalProcesses(workers)``,
    the processes above. A `SubmititExecutor` submits every run (and what its seeds share, first) as a
    SLURM job (or a submitit local job) and waits for them here; the records are the same.

    `shipped_dir`: where the kit's shipped records are (default ``executed/<profile>/bench/records``);
    a seed whose record at this version is there is copied into the runs folder instead of rerun.
    ``False``: rerun every seed here, shipped or not (``--rerun-shipped``)."""
    if threads is not None and threads < 1:
        raise ValueError(f"--threads must be at least 1, not {threads}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers must be a positive integer, not {workers!r}")
    executor = LocalProcesses(workers) if executor is None else executor
    if any_version and not report_only:
        raise ValueError("--any-version only builds a report (--report-only): new runs are always "
                         "recorded under this checkout's library version")
    profile = resolve_profile_name(profile)
    experiments = EXPERIMENTS if experiments is None else experiments
    names = select_experiments(only, experiments)
    wanted = bench_seeds(profile, seeds, names)
    runs_root = Path(runs_root) if runs_root else default_runs_root() / profile
    runs_root.mkdir(parents=True, exist_ok=True)
    if threads:
        import torch  # here: --help imports this module and must not import torch

        torch.set_num_threads(threads)
    command = (bench_command(profile, seeds, only, threads, workers) + (" --report-only" if report_only else "")
               + (" --any-version" if any_version else "")
               + ("" if executor.name == "local" else f" --executor {executor.name}"))
    commit = head_commit()
    start = time.perf_counter()
    out = BenchResult(report={})
    if not report_only:
        if shipped_dir is None:
            shipped_dir = shipped_records_dir(profile)
        plan = plan_bench(profile, wanted, runs_root, workers, experiments, shipped_dir)
        for line in plan.lines():
            log(line)
        if plan_only:
            return out
        if plan.shipped:
            copied = copy_shipped_records(plan, runs_root, shipped_dir, experiments)
            log(f"bench: {len(copied)} record(s) at this version copied from {shipped_dir} (not rerun; "
                "--rerun-shipped reruns them)")
        out.skipped.update(plan.skipped)
        for name in wanted:
            done = set(wanted[name]) - set(plan.to_run[name])
            out.cached += [f"{name}/seed{s}" for s in sorted(done) if name not in plan.skipped]
        out.ran += run_planned(plan, experiments, runs_root, command, commit, executor, log)
    out.seconds = time.perf_counter() - start
    report_seeds = wanted if seeds is None else list(range(seeds))
    confirmatory = None
    if seeds is None and profile == DESIGN_PROFILE:  # make bench: the declared confirmatory seeds
        confirmatory = {name: wanted.get(name) or declared_seeds(profile, name) for name in experiments}
        local = recorded_seeds(runs_root / "bench", profile, experiments)
        report_seeds = {name: sorted(set(local.get(name, [])) - set(confirmatory[name])) for name in experiments}
    out.report = build_report(runs_root, profile, report_seeds, ANY_VERSION if any_version else CURRENT,
                              claims, experiments, command,
                              out.seconds, unavailable=out.skipped, confirmatory=confirmatory)
    log(f"bench: {len(out.ran)} run, {len(out.cached)} cached, {out.seconds:.0f} s; "
        f"{runs_root / 'bench.json'}, {runs_root / 'report.md'}")
    return out


def prepare_shared(prepare: str, profile: Profile, runs_root: Path, sizes) -> tuple[set[str], list]:
    """Build what an experiment's seeds share (its `prepare` function); returns the profile parts it read
    and the entries of tables of values it read (:func:`check_values_read`)."""
    with recording_value_reads() as values_read:
        read = _call_recording_reads(resolve(prepare), profile, runs_root, sizes)[1]
    return read, values_read


def run_planned(plan: BenchPlan, experiments: dict[str, Experiment], runs_root: Path, command: str,
                 commit: str, executor: LocalProcesses | SubmititExecutor,
                 log: Callable[[str], None]) -> list[str]:
    """Run every (experiment, seed) of `plan.to_run` through `executor`, longest first; returns
    'experiment/seedN' of each. Each run writes its record when it ends, so an interrupted benchmark
    redoes only what is missing."""
    order = sorted(((n, s) for n, seeds in plan.to_run.items() for s in seeds),
                   key=lambda job: (-(plan.seconds.get(job[0]) or 0), job[0], job[1]))
    if not order:
        return []
    profile = get_profile(plan.profile)  # for what the seeds share; each run resolves the name itself
    if executor.name != "local":
        log(f"bench: {len(order)} run(s) through {executor.describe()}")
    preparing = {}  # what the seeds share, built once before they run (a job of its own on a cluster)
    for name in dict.fromkeys(n for n, _ in order):
        prepare = experiments[name].prepare
        if prepare is not None and prepare not in preparing:
            log(f"{name}: preparing what its seeds share ({prepare})")
            preparing[prepare] = {"prepare": prepare, "profile": profile, "runs_root": runs_root,
                                  "sizes": experiment_sizes(experiments[name], profile)}
    # here, one after another, as ever, on this machine; on a cluster, jobs too (the seeds wait for them)
    where = LocalProcesses(1) if executor.name == "local" else executor
    for prepare, (read, values_read) in zip(preparing, where.run([(prepare_shared, kwargs)
                                                                  for kwargs in preparing.values()])):
        for sharing in {n for n, _ in order if experiments[n].prepare == prepare}:
            check_parts_read(experiments[sharing], read, f"prepare ({prepare})")
            check_values_read(experiments[sharing], values_read,
                              experiment_config(experiments[sharing], plan.profile, 0), f"prepare ({prepare})")
    keys = {n: experiment_key(experiments[n]) for n in {n for n, _ in order}}
    dirty = {n: closure_dirty(k) for n, k in keys.items()}
    here = executor.in_this_process or len(order) == 1 and executor.name == "local"
    jobs = [(run_one, {"experiment": experiments[n], "profile": plan.profile, "seed": s, "runs_root": runs_root,
                       "code": keys[n], "command": command, "commit": commit, "dirty": dirty[n],
                       **({"log": log} if here else {})})  # a log function does not cross processes
            for n, s in order]
    workers = getattr(executor, "workers", len(order))
    left = list(order)
    started = time.perf_counter()

    def progress(index: int, _result) -> None:
        left.remove(order[index])
        remaining = plan.estimate(left) / min(workers, max(1, len(left)))
        log(f"bench: {len(order) - len(left)}/{len(order)} runs done ({order[index][0]} seed {order[index][1]}), "
            f"{duration(time.perf_counter() - started)} so far, about {duration(remaining)} left")

    executor.run(jobs, on_done=progress)
    return [f"{n}/seed{s}" for n, s in order]


PUBLISHED_REPORT = "benchmark_report.md"
"""The published report's name in ``executed/<profile>/`` (beside its bench.json)."""


PACKAGED_EVIDENCE = Path(__file__).resolve().parent.parent / "executed"
"""Where a kit installed from a wheel carries ``executed/<profile>/`` (report, bench.json, figures,
records) as package data (pyproject.toml maps the checkout's ``executed/`` to ``wmkit/executed``)."""


def published_dir(profile: str, repo: Path | None = None) -> Path:
    """``executed/<profile>``: the published report, its bench.json, figures (``bench/figures``) and
    records (``bench/records``). The one place that says where they are: under `repo` when given, else
    under the checkout, else (an installed kit, as in Colab) the copy inside the package
    (:data:`PACKAGED_EVIDENCE`): a clone, a wheel and Colab read the same files, offline."""
    repo = checkout() if repo is None else Path(repo)
    return (repo / "executed" if repo is not None else PACKAGED_EVIDENCE) / profile


def publish_command(profile: str) -> str:
    return shlex.join(["python", "-m", "wmkit", "bench", "--profile", profile, "--publish"])


def publish_report(profile: str = PUBLISHED_PROFILE, repo: Path | None = None,
                   experiments: dict[str, Experiment] | None = None, claims: Sequence[Claim] = CLAIMS,
                   log: Callable[[str], None] = print, confirmatory: dict[str, list[int]] | None = None) -> dict:
    """The one published report, built from the shipped records and running nothing.

    Reads ``executed/<profile>/bench/records`` (per experiment, every seed with a record made with
    today's config; per seed the newest record, whatever key made it: :data:`ANY_VERSION`, so a seed
    run again on another CPU counts once, by its newest run) and writes exactly
    ``executed/<profile>/benchmark_report.md``, ``executed/<profile>/bench.json`` (paths relative to
    its folder) and one figure per paper in ``executed/<profile>/bench/figures/`` (the figures there
    before are removed). Each row's command runs that experiment's recorded seeds (``--seeds N``).

    At :data:`~wmkit.bench.confirmatory.DESIGN_PROFILE` the report is split (:func:`build_report`):
    the headline counts the records on each experiment's confirmatory seeds at this checkout's keys
    (`confirmatory`, default :func:`~wmkit.bench.confirmatory.confirmatory_seeds`), and every other
    shipped record is the exploratory section."""
    if confirmatory is None and profile == DESIGN_PROFILE and experiments is None:
        confirmatory = {n: p.seeds for n, p in experiment_plans(claims).items()}
    out = published_dir(profile, repo if repo is not None else needs_checkout("publishing the report"))
    records_dir = out / "bench" / "records"
    if not records_dir.is_dir():
        raise ValueError(f"no shipped records to publish: {records_dir} does not exist")
    seeds = recorded_seeds(records_dir, profile, experiments)
    figures = out / "bench" / "figures"
    for old in figures.glob("*.png") if figures.is_dir() else ():
        old.unlink()
    report = build_report(out, profile, seeds, ANY_VERSION, claims, experiments, publish_command(profile),
                          None, records_dir=records_dir, report_name=PUBLISHED_REPORT, confirmatory=confirmatory)
    log(f"published: {out / PUBLISHED_REPORT}, {out / 'bench.json'}, {len(report['figures'])} figure(s) in {figures}")
    return report


def ship_records(profile: str, runs_root: Path, seeds: dict[str, list[int]], repo: Path | None = None,
                 experiments: dict[str, Experiment] | None = None, log: Callable[[str], None] = print) -> list[Path]:
    """Copy the records of `seeds` (experiment -> seeds) made at this checkout's keys from
    ``<runs_root>/bench`` into ``executed/<profile>/bench/records``, and remove every other record of
    those (experiment, seed) pairs there (other versions and configs: superseded; git history keeps
    them). A seed without a record at this version keeps its old records. Returns the copied paths."""
    experiments = EXPERIMENTS if experiments is None else experiments
    target = published_dir(profile, repo if repo is not None else needs_checkout("shipping records")) / "bench" / "records"
    copied, missing = [], []
    for name, wanted in seeds.items():
        key = experiment_key(experiments[name]).key
        for seed in wanted:
            source = current_record_path(Path(runs_root) / "bench", experiments[name], profile, seed, key)
            if not source.exists():
                missing.append(f"{name}/seed{seed}")
                continue
            folder = target / name
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob(f"seed{seed}_*.json"):
                if old.name != source.name:
                    old.unlink()
            shutil.copyfile(source, folder / source.name)
            copied.append(folder / source.name)
    log(f"shipped {len(copied)} record(s) into {target}"
        + (f"; {len(missing)} seed(s) have no record at this version and keep their old ones: "
           + ", ".join(missing) if missing else ""))
    return copied


def shipped_report(profile: str = PUBLISHED_PROFILE, repo: Path | None = None) -> tuple[Path | None, str]:
    """(path of the published ``executed/<profile>/bench.json``, where it came from), for notebook 05
    and the result cards: :func:`published_dir`'s, in a clone (with or without git) and in an
    installed kit alike (package data; its paths are relative to its folder, so :func:`load_report`
    checks every number against its record there too). (None, why) when it is not there."""
    local = published_dir(profile, repo) / "bench.json"
    if local.exists():
        return local, f"shipped with the kit: {local}"
    return None, f"no {local}: this kit ships no published {profile} report"


def report_coverage(report: dict, profile: str, experiments: dict[str, Experiment] | None = None,
                    claims: Sequence[Claim] = CLAIMS) -> str | None:
    """None when a (saved, unchecked) bench.json covers every claim at this library version: a row for
    each claim, and for each experiment a claim reads, records of exactly its declared seeds
    (:func:`~wmkit.bench.confirmatory.declared_seeds`) made by this checkout's source key; else
    what it lacks, in one phrase ("3 of 14 experiments have their declared seeds at this version")."""
    experiments = EXPERIMENTS if experiments is None else experiments
    ids = {r["id"] for r in report.get("rows", [])}
    missing = [c.id for c in claims if c.id not in ids]
    if missing:
        return f"no row for {len(missing)} of {len(claims)} claims"
    entries = (report.get("confirmatory") or report).get("experiments", {})
    needed = sorted({c.experiment for c in claims if c.experiment in experiments})
    covered = []
    for name in needed:
        entry = entries.get(name) or {}
        declared = declared_seeds(profile, name)
        if (declared and sorted(entry.get("seeds") or []) == declared
                and entry.get("codes") == [experiment_key(experiments[name]).key]):
            covered.append(name)
        elif not declared:
            covered.append(name)  # an experiment with no declared seeds needs none
    if len(covered) < len(needed):
        return f"{len(covered)} of {len(needed)} experiments have their declared seeds recorded at this version"
    return None


def report_for_notebook(runs_dir: Path, profile: str, experiments: dict[str, Experiment] | None = None,
                        shipped: Callable[[], tuple[Path | None, str]] | None = None,
                        claims: Sequence[Claim] = CLAIMS) -> tuple[Path | None, str]:
    """(the bench.json notebook 05 reads, one line saying which and why).

    The local ``<runs_dir>/bench.json`` only when it covers every claim at this library version
    (:func:`report_coverage`, at the report's own profile); otherwise the report shipped with the kit
    (`shipped`, default :func:`shipped_report`), and the line names the local report it found and
    skipped, and why: a ``bench --only ...`` run, or records of another version, must not stand in for
    the whole table."""
    local = Path(runs_dir) / "bench.json"
    shipped = shipped or (lambda: shipped_report(PUBLISHED_PROFILE))
    skipped = ""
    if local.exists():
        try:
            report = json.loads(local.read_text())
            lacks = report_coverage(report, report.get("profile", profile), experiments, claims)
        except (OSError, ValueError, KeyError) as err:
            lacks = f"unreadable ({type(err).__name__}: {err})"
            report = {}
        if lacks is None:
            return local, f"your benchmark report {local}: it covers every claim at this library version"
        made_by = report.get("command") or "an unknown command"
        skipped = (f"found {local} (made by `{made_by}`; {lacks}): skipped, since it does not cover every claim "
                   "at this library version; ")
    path, where = shipped()
    if path is None:
        return None, f"{skipped}no published report either: {where}"
    return path, f"{skipped}the published {PUBLISHED_PROFILE} report — {where}"


PROFILE_HELP = "smoke | cpu | gpu | auto (default: cpu, on a GPU too)"
"""The help of every `--profile` option whose default is auto (`wmkit bench`, `reproduce`, `run`, `world-model`)."""


def add_bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="notebook 05: measure the papers' claims over seeds, cached and resumable")
    p.add_argument("--profile", default="auto", help=PROFILE_HELP)
    p.add_argument("--seeds", type=int, default=None,
                   help="seeds 0..N-1 of every experiment (default: each experiment's declared seeds: at cpu its "
                        "confirmatory seeds, wmkit.bench.confirmatory; elsewhere 0..N-1)")
    p.add_argument("--only", nargs="*", help="papers (RLVR-World, RWML, WM-R1, WMRL) or experiment names")
    p.add_argument("--runs-dir", default=None, help="default runs/<profile>")
    p.add_argument("--threads", type=int, default=None, help="torch threads (1 on a small shared CPU)")
    p.add_argument("--workers", type=int, default=1,
                   help="seeds of an experiment side by side in this many processes (2 on 2 cores)")
    p.add_argument("--executor", default="local", choices=EXECUTORS,
                   help="where the runs execute: local (default: --workers processes here), slurm (one SLURM "
                        "job per run through submitit: pip install 'wmkit[cluster]'), or submitit-local (the "
                        "same jobs as local processes, to try it without a cluster)")
    p.add_argument("--executor-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a submitit parameter for every job, e.g. slurm_partition=cpu timeout_min=240 mem_gb=8 "
                        "slurm_account=... (repeat the option; default cpus_per_task: --threads, else 1)")
    p.add_argument("--executor-folder", default=None,
                   help="where submitit writes each job's files and logs (default runs/submitit)")
    p.add_argument("--report-only", action="store_true", help="rebuild the report from the records on disk")
    p.add_argument("--any-version", action="store_true",
                   help="with --report-only: the newest record of each experiment and seed, whatever library "
                        "version made it (each experiment's version is listed in the report)")
    p.add_argument("--plan", action="store_true",
                   help="print what would run and its estimated time (from the records' timings); run nothing")
    p.add_argument("--rerun-shipped", action="store_true",
                   help="rerun the seeds whose records at this version ship with the kit "
                        "(default: copy those records into the runs folder)")
    p.add_argument("--ship", action="store_true",
                   help="after the runs, copy this version's records of the declared seeds into "
                        "executed/<profile>/bench/records (replacing other versions' records of those seeds) "
                        "and publish the report from them (make bench)")
    p.add_argument("--verify", action="store_true",
                   help="rerun the cheapest confirmatory seed of each experiment whose confirmatory records ship "
                        "with the kit and compare it with its record (make bench-verify; with --plan: the plan only)")
    p.add_argument("--budget-minutes", type=float, default=45.0,
                   help="with --verify: leave out the longest experiments until the estimate fits (default 45)")
    p.add_argument("--publish", action="store_true",
                   help="run nothing: build the one published report from the shipped records "
                        "(executed/<profile>/bench/records, every recorded seed, any version) into "
                        "executed/<profile>/benchmark_report.md, bench.json and bench/figures")


def bench_main(args) -> int:
    """``python -m wmkit bench`` (its ``--verify`` is :func:`wmkit.bench.verify.verify_main`)."""
    if getattr(args, "publish", False):
        report = publish_report(resolve_profile_name(args.profile))
        print("\n".join(report["headline"]["text"]))
        return 0
    if args.ship and (args.seeds is not None or args.report_only or args.any_version):
        raise ValueError("--ship publishes the declared seeds of this version: no --seeds, --report-only "
                         "or --any-version with it")
    executor = make_executor(getattr(args, "executor", "local"), args.workers, args.threads,
                             getattr(args, "executor_folder", None), getattr(args, "executor_option", []))
    result = run_bench(args.profile, args.seeds, args.only, Path(args.runs_dir) if args.runs_dir else None,
                       args.threads, args.report_only, workers=args.workers, any_version=args.any_version,
                       plan_only=args.plan, shipped_dir=False if args.rerun_shipped else None, executor=executor)
    if args.plan:
        return 0
    if args.ship:
        profile = resolve_profile_name(args.profile)
        runs_root = Path(args.runs_dir) if args.runs_dir else default_runs_root() / profile
        ship_records(profile, runs_root, bench_seeds(profile, None, select_experiments(args.only)))
        report = publish_report(profile)
        print("\n".join(report["headline"]["text"]))
        return 0
    for row in result.report["rows"]:
        print(f"{row['paper']:10s} {row['id']:26s} {fmt_kit(row['kit']):40s} {row['verdict']}")
    return 0
