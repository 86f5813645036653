"""``python -m wmkit bench-rekey``: carry benchmark records to their experiment's new key, on evidence.

A record is keyed by the code its experiment can run (:mod:`wmkit.bench.source_key`), so a change
to that code leaves the experiment without records at its new key. A record of an older key is
carried to the new one (rewritten under the new key with a note of how, its old key kept in the
note) only on one of two kinds of evidence, tried in this order for each experiment:

1. **From the source** (no run). The record stores the commit that made it and the hashes of its
   modules. Where the files of that commit hash to those pairs under the record's own key format
   (so they are the code that made it, :func:`static_check`), and the same files, hashed by
   today's rule, give the experiment's key at this checkout, today's code is that code up to what
   the key leaves out (docstrings, comments, formatting, tables of values). This carries records
   across a change of the key's rule (key format 3 to 4) and across an edit undone. A record of an
   older key format whose code is not today's is still rewritten in today's format, under its own
   code's key read from the same files (so its modules compare with today's), and goes on to 2.
2. **By a rerun.** One seed of the old key is run with today's code on this machine, and its
   result is compared bit for bit with that seed's record of the old key, the fields of
   :data:`EXCLUDED_KEYS` aside (measured time and where the run wrote its files). A seed's floats
   repeat exactly on one kind of CPU and differ between kinds (:func:`wmkit.bench.runner.cpu_kind`),
   so the record compared with must be of this machine's CPU kind; where the old key has none,
   the reference is made here first: the record's commit is checked out in a temporary
   ``git worktree`` and that commit's code runs the seed (``--plan`` and the output say so).
   Identical: every seed's record of the old key is carried, with the seed, CPU kind and commit
   that verified it. Different: the experiment's behaviour changed; the first differing fields are
   named and nothing is carried (``make bench`` then reruns its seeds).

Both runs of a comparison start from empty runs folders under ``runs/<profile>/rekey/``, one per
version of the library code (what the seeds share, e.g. notebook 01's world model, is built there
by that code, never taken from another version's files), with ``--threads`` torch threads (1, as
the benchmark runs, by default). Each finished run is kept there, so an interrupted rekey
resumes. Carried records replace their old files, in the runs folder and in the shipped
``executed/<profile>/bench/records``; when shipped records were carried, the published report
is rebuilt from them (runs nothing).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wmkit.bench.claims import Experiment
from wmkit.bench.legacy_config import old_shape
from wmkit.bench.runner import (
    EXPERIMENTS,
    closure_dirty,
    code_version,
    config_hashes,
    cpu_kind,
    duration,
    experiment_config,
    experiment_key,
    experiment_sizes,
    head_commit,
    publish_report,
    published_dir,
    record_path,
    run_one,
    seconds_per_seed,
    select_experiments,
    short_version,
    write_atomic,
)
from wmkit.bench.source_key import KEY_FORMAT, SourceKey, key_format, key_of, module_hash
from wmkit.entries import resolve
from wmkit.profiles import get_profile, resolve_profile_name
from wmkit.runs import REPO, cpu_model, default_runs_root

EXCLUDED_KEYS = ("seconds", "timings", "build_costs", "folder")
"""Keys of a result left out of the comparison, with everything under them: measured time
(``seconds``, the ``timings`` of a run, WMRL's ``build_costs`` in CPU seconds) and ``folder``
(where the run wrote its world model: another runs folder here). Any key ending in ``_seconds``
or ``_s`` is left out too (``train_seconds``, ``eval_seconds``, ``cpu_s``, ``total_cost_cpu_s``:
seconds, measured). Outside ``result`` the comparison reads nothing: the record's metadata
(``wall_seconds``, ``started``, ``command``, ``commit``, ``dirty``, ``cpu``, ``torch_threads``,
``versions``, ``code``, ``key_format``, ``modules``, ``data``) describes the run, and its config
is the same by construction (both records are found by today's config)."""


def excluded(key: str) -> bool:
    """Whether a result's `key` is left out of a rerun's comparison (:data:`EXCLUDED_KEYS`)."""
    return key in EXCLUDED_KEYS or key.endswith(("_seconds", "_s"))


def _leaves(value, path: str = "") -> dict[str, str]:
    """{path: JSON text} of every leaf of `value` outside the excluded keys (JSON text, so that NaN
    equals NaN and 1 differs from 1.0)."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            if not excluded(str(key)):
                out.update(_leaves(inner, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list):
        out = {f"{path}[]": f"length {len(value)}"}
        for i, inner in enumerate(value):
            out.update(_leaves(inner, f"{path}[{i}]"))
        return out
    return {path: json.dumps(value, sort_keys=True)}


def result_differences(old: dict, new: dict, limit: int = 5) -> tuple[int, list[str]]:
    """(how many fields differ, the first `limit` as 'path: old -> new') between two records' results,
    :data:`EXCLUDED_KEYS` aside. Both are compared with the sizes they embed in one shape
    (:func:`wmkit.bench.legacy_config.old_shape`): the papers' GRPO knobs were renamed, not changed."""
    a, b = _leaves(old_shape(old.get("result"))), _leaves(old_shape(new.get("result")))
    differ = [p for p in sorted(a.keys() | b.keys()) if a.get(p) != b.get(p)]
    return len(differ), [f"{p}: {a.get(p, '(absent)')} -> {b.get(p, '(absent)')}" for p in differ[:limit]]


# ---------------------------------------------------------------------------- old records

@dataclass
class OldRecord:
    """A record of an experiment, made with today's config, filed under another key."""

    path: Path
    record: dict

    @property
    def code(self) -> str:
        return self.record["code"]

    @property
    def seed(self) -> int:
        return int(self.record["seed"])

    @property
    def cpu(self) -> str:
        return cpu_kind(self.record.get("cpu"))


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def old_records(experiment: Experiment, profile: str, key: str, folders: Sequence[Path]) -> dict[str, list[OldRecord]]:
    """old key -> the records in `folders` of `experiment` made with today's config of `profile`
    (any of :func:`wmkit.bench.runner.config_hashes`) under that key, for seeds with no record at
    `key` in the same folder. Records whose carry was interrupted after the new file was written are
    finished here (their old file removed)."""
    out: dict[str, list[OldRecord]] = {}
    for folder in folders:
        for path in sorted((Path(folder) / experiment.name).glob("seed*_*.json")):
            record = _read(path)
            if not record or record.get("code") in (None, key) or record.get("profile") != profile:
                continue
            seed = record.get("seed")
            if not isinstance(seed, int) or record.get("config_hash") not in config_hashes(
                    experiment_config(experiment, profile, seed)):
                continue
            carried = record_path(folder, experiment.name, seed, key, record["config_hash"])
            if carried.exists():
                done = _read(carried) or {}
                if any(step.get("from_code") == record["code"] for step in done.get("carried", [])):
                    path.unlink()  # the carry was written, the old file not yet removed
                continue
            out.setdefault(record["code"], []).append(OldRecord(path, record))
    return out


# ---------------------------------------------------------------------------- 1. from the source

def _module_paths(module: str) -> list[str]:
    base = "/".join(module.split("."))
    return [f"{base}.py", f"{base}/__init__.py"]


def git_files(repo: Path, commit: str, paths: Sequence[str]) -> dict[str, bytes | None]:
    """{path: bytes at `commit`, None where the commit has no such file}, read in one ``git cat-file``."""
    request = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=request, capture_output=True,
                         check=True, timeout=120).stdout
    files: dict[str, bytes | None] = {}
    at = 0
    for path in paths:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if header[-1] == b"missing" or header[1] != b"blob":
            files[path] = None
            continue
        size = int(header[2])
        files[path] = out[at:at + size]
        at += size + 1
    return files


def commit_exists(repo: Path, commit: str) -> bool:
    try:
        return subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=repo, capture_output=True,
                              timeout=30, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def source_key_of(record: dict, repo: Path = REPO) -> tuple[SourceKey | None, str | None]:
    """(the record's own code keyed by today's rule, None), read from the files of the commit that
    made it after checking that they hash to its stored pairs under its own key format; or
    (None, why not) when they cannot be read or do not."""
    old_format = record.get("key_format") or key_format(record.get("code", ""))
    pairs = [tuple(p) for p in record.get("modules") or []]
    data = tuple(tuple(p) for p in record.get("data") or [])
    commit, _ = made_by(record)
    if not pairs or old_format is None or old_format < 2:
        return None, "the record stores no module hashes (keyed by the git tree of wmkit/)"
    if commit is None:
        return None, "made (or verified by a rerun) with uncommitted changes in its modules: no commit holds its code"
    if key_of(pairs, data, old_format) != record["code"]:
        return None, "its stored module hashes do not give its key"
    if not commit_exists(repo, commit):
        return None, f"commit {commit[:12]} is not in this checkout's history"
    files = git_files(repo, commit, [p for m, _ in pairs for p in _module_paths(m)])
    new_pairs = []
    for module, stored in pairs:
        source = next((files[p] for p in _module_paths(module) if files.get(p) is not None), None)
        if source is None:
            return None, f"commit {commit[:12]} has no file for {module}"
        try:
            if module_hash(module, source, old_format) != stored:
                return None, f"{module} at commit {commit[:12]} does not hash to the record's pair"
            new_pairs.append((module, module_hash(module, source)))
        except ValueError as err:
            return None, str(err)
    return SourceKey(key_of(new_pairs, data), tuple(new_pairs), data), None


def static_check(record: dict, key: SourceKey, repo: Path = REPO) -> str | None:
    """None when `record` is provably made by the code of `key` (see the module docstring, 1), else
    why not, in words."""
    own, reason = source_key_of(record, repo)
    return reason if own is None else same_code(own, key, made_by(record)[0])


def same_code(own: SourceKey, key: SourceKey, commit: str) -> str | None:
    """None when a record's `own` key (:func:`source_key_of`) is today's `key`, else what differs."""
    if own.module_names() != key.module_names():
        return f"today's import closure differs ({len(own.modules)} modules then, {len(key.modules)} now)"
    if own.data != key.data:
        return "its data files differ from today's"
    changed = [m for (m, h), (_, now) in zip(own.modules, key.modules) if h != now]
    if changed:
        return f"code changed since commit {commit[:12]} in {', '.join(changed)}"
    return None if own.key == key.key else "the commit's code does not give today's key"


def made_by(record: dict) -> tuple[str | None, set[str]]:
    """(the commit whose code is the code of the record's key, None when no commit holds it; the keys
    that commit's own runner may give it). A record made at a clean commit: that commit, and the
    record's key and the keys it was carried from by the source (the same code under older rules).
    A record carried by a rerun: the commit that verified it (its code is the new key's)."""
    steps = record.get("carried", [])
    last_rerun = max((i for i, step in enumerate(steps) if step.get("how") == "rerun"), default=None)
    if last_rerun is None:
        commit = record.get("commit") if record.get("dirty") is False else None
        later = steps
    else:
        verified = steps[last_rerun].get("verified_by", {})
        commit = verified.get("commit") if verified.get("dirty") is False else None
        later = steps[last_rerun + 1:]
    return commit, {record.get("code"), *(step.get("from_code") for step in later)}


# ---------------------------------------------------------------------------- carrying

def carry(old: OldRecord, key: SourceKey, how: dict, log: Callable[[str], None]) -> Path:
    """Write `old`'s record under `key` beside it, with a note of how it was carried (`how`, plus its
    old key and module hashes), and remove the old file. Returns the new path."""
    record = {k: v for k, v in old.record.items() if not k.startswith("_")}
    step = {"from_code": record["code"], "from_key_format": record.get("key_format") or key_format(record["code"]),
            "from_modules": record.get("modules", []), "from_data": record.get("data", []),
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **how}
    record.update({"code": key.key, "key_format": KEY_FORMAT, "modules": [list(p) for p in key.modules],
                   "data": [list(p) for p in key.data], "carried": [*record.get("carried", []), step]})
    path = record_path(old.path.parent.parent, record["experiment"], old.seed, key.key, record["config_hash"])
    write_atomic(path, json.dumps(record, indent=1, sort_keys=True))
    if path != old.path:
        old.path.unlink()
    log(f"  carried {old.path.parent.name}/{old.path.name} -> {path.name}")
    return path


# ---------------------------------------------------------------------------- 2. by a rerun

def _code_label(version: str) -> str:
    """A folder name for one version of the library code: its git tree hash (12 digits, plus the
    hash of uncommitted changes)."""
    tree, _, local = version.partition("+")
    return tree[:12] + (f"+{local}" if local else "")


def rekey_root(runs_root: Path, version: str) -> Path:
    """``<runs_root>/rekey/<code version>``: the runs folder of one version of the library code."""
    return Path(runs_root) / "rekey" / _code_label(version)


def _set_threads(threads: int) -> int:
    import torch  # here: --help imports this module and must not import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    return before


def run_here(experiment: Experiment, profile: str, seed: int, runs_root: Path, key: SourceKey, threads: int,
             log: Callable[[str], None]) -> dict:
    """Run (experiment, seed) with this checkout's code under `runs_root` (what its seeds share
    built there first), with `threads` torch threads; the record (cached when it exists), its path
    under ``_path``."""
    before = _set_threads(threads)
    try:
        if experiment.prepare is not None:
            resolved = get_profile(profile)
            resolve(experiment.prepare)(resolved, Path(runs_root), experiment_sizes(experiment, resolved))
        path, _ = run_one(experiment, profile, seed, runs_root, key, f"python -m wmkit bench-rekey --profile {profile}",
                          log=log, dirty=closure_dirty(key))
    finally:
        _set_threads(before)
    return {**json.loads(Path(path).read_text()), "_path": str(path)}


REFERENCE_SCRIPT = r"""
import json, sys
from pathlib import Path
args = json.loads(sys.argv[1])
import torch
torch.set_num_threads(args["threads"])
from wmkit.bench import runner
from wmkit.profiles import get_profile
experiment = runner.EXPERIMENTS[args["experiment"]]
runs_root = Path(args["runs_root"])
if experiment.prepare is not None:
    resolve = getattr(runner, "resolve", None) or runner._resolve  # the name the commit's runner has
    profile = get_profile(args["profile"])
    resolve(experiment.prepare)(profile, runs_root, runner.experiment_sizes(experiment, profile))
path, _ = runner.run_one(experiment, args["profile"], args["seed"], runs_root, None, args["command"])
print("RECORD " + str(path), flush=True)
"""
"""Run in a worktree of an older commit: that commit's runner makes the seed's record (its
``EXPERIMENTS``, ``run_one`` and ``experiment_sizes``, as every commit since key format 2 has them)."""


def run_at_commit(repo: Path, commit: str, experiment: str, profile: str, seed: int, runs_root: Path, threads: int,
                  log: Callable[[str], None]) -> dict:
    """Run (experiment, seed) with the code of `commit`, checked out in a temporary git worktree
    (removed after), its record written under `runs_root`; the record."""
    folder = Path(tempfile.mkdtemp(prefix="wmkit-rekey-"))
    worktree = folder / "checkout"
    subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True, timeout=60, check=False)
    made = subprocess.run(["git", "worktree", "add", "--detach", str(worktree), commit], cwd=repo,
                          capture_output=True, text=True, timeout=300, check=False)
    if made.returncode:
        shutil.rmtree(folder, ignore_errors=True)
        raise RekeyError(f"git worktree add {commit[:12]} failed: {made.stderr.strip()}")
    try:
        env = {**os.environ, "PYTHONPATH": str(worktree), "OMP_NUM_THREADS": str(threads)}
        args = json.dumps({"experiment": experiment, "profile": profile, "seed": seed, "runs_root": str(runs_root),
                           "threads": threads, "command": f"python -m wmkit bench-rekey (reference at {commit[:12]})"})
        process = subprocess.Popen([sys.executable, "-c", REFERENCE_SCRIPT, args], cwd=worktree, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        path, tail = None, []
        for line in process.stdout:
            line = line.rstrip()
            if line.startswith("RECORD "):
                path = Path(line[len("RECORD "):])
            elif line:
                tail = [*tail[-19:], line]
                log(f"    [{commit[:12]}] {line}")
        if process.wait() or path is None:
            raise RekeyError(f"the reference run of {experiment} seed {seed} at commit {commit[:12]} failed:\n"
                               + "\n".join(tail))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=repo, capture_output=True,
                       timeout=120, check=False)
        shutil.rmtree(folder, ignore_errors=True)
    return json.loads(path.read_text())


def _tree_of(repo: Path, commit: str) -> str:
    """The git tree of ``wmkit/`` at `commit` (how :func:`rekey_root` names that code's runs folder)."""
    return subprocess.run(["git", "rev-parse", f"{commit}:wmkit"], cwd=repo, capture_output=True, text=True,
                          check=True, timeout=30).stdout.strip()


# ---------------------------------------------------------------------------- the plan and the command

@dataclass
class Step:
    """What bench-rekey does for one old key of one experiment."""

    experiment: str
    old_code: str
    records: list[OldRecord]
    static: list[OldRecord] = field(default_factory=list)
    """The records carried from the source (module docstring, 1)."""
    rewrite: list[tuple[OldRecord, SourceKey]] = field(default_factory=list)
    """Records of an older key format not made by today's code, with their own code's key in today's
    format (read from their commit): rewritten under it first, then verified by the rerun like the rest."""
    why_not_static: str | None = None
    seed: int | None = None
    """The seed rerun (2), None when nothing is left to rerun or it cannot be."""
    compare_with: OldRecord | None = None
    """The record of this CPU kind the rerun is compared with; None: a reference is made at `commit`."""
    commit: str | None = None
    blocked: str | None = None
    """Why the rest cannot be verified by a rerun here."""

    @property
    def rest(self) -> list[OldRecord]:
        return [r for r in self.records if r not in self.static]


class RekeyError(ValueError):
    """A step of bench-rekey that could not be done (a worktree, a reference run): one clear message."""


@dataclass
class RekeyResult:
    steps: list[Step]
    verdicts: dict[str, str] = field(default_factory=dict)
    """experiment -> 'carried from source', 'verified (...)', 'changed: ...', 'cannot verify: ...'."""
    carried: list[Path] = field(default_factory=list)
    rewritten: list[Path] = field(default_factory=list)
    """Records rewritten in today's key format under their own code's key (not carried to today's)."""
    seconds: float = 0.0


def plan_rekey(profile: str, names: Sequence[str], folders: Sequence[Path], repo: Path = REPO,
               experiments: dict[str, Experiment] | None = None) -> list[Step]:
    """The steps that carry each experiment's records of older keys (:class:`Step`), running nothing."""
    experiments = EXPERIMENTS if experiments is None else experiments
    here = cpu_kind(cpu_model())
    steps = []
    read: dict[tuple, tuple] = {}  # one reading per (old key, commit, dirty): the same files
    for name in names:
        key = experiment_key(experiments[name])
        for old_code, records in old_records(experiments[name], profile, key.key, folders).items():
            step = Step(name, old_code, sorted(records, key=lambda r: (r.seed, str(r.path))))
            reasons = {}
            for record in step.records:
                once = (old_code, record.record.get("commit"), record.record.get("dirty"))
                if once not in read:
                    read[once] = source_key_of(record.record, repo)
                own, reason = read[once]
                reason = reason if own is None else same_code(own, key, made_by(record.record)[0])
                if reason is None:
                    step.static.append(record)
                    continue
                reasons.setdefault(reason, record)
                if own is not None and own.key != old_code and (key_format(old_code) or 0) < KEY_FORMAT:
                    step.rewrite.append((record, own))
            step.why_not_static = next(iter(reasons), None)
            rest = step.rest
            if rest:
                same_kind = [r for r in rest if r.cpu == here]
                if same_kind:
                    step.compare_with = min(same_kind, key=lambda r: r.seed)
                    step.seed = step.compare_with.seed
                else:
                    clean = [r for r in rest if made_by(r.record)[0] and commit_exists(repo, made_by(r.record)[0])]
                    if clean:
                        chosen = min(clean, key=lambda r: r.seed)
                        step.seed, step.commit = chosen.seed, made_by(chosen.record)[0]
                    else:
                        step.blocked = (f"no record of this CPU kind ({here}), and no record's commit can make the "
                                        "reference here (made with uncommitted changes, or a commit not in this "
                                        "checkout's history)")
            steps.append(step)
    return steps


def plan_lines(steps: Sequence[Step], profile: str, seconds: dict[str, float | None]) -> list[str]:
    """What bench-rekey would do, per old key, and the estimated time of its runs."""
    here = cpu_kind(cpu_model())
    runs = sum((1 if s.compare_with is not None else 2) for s in steps if s.seed is not None)
    work = sum((seconds.get(s.experiment) or 0) * (1 if s.compare_with is not None else 2)
               for s in steps if s.seed is not None)
    unknown = sorted({s.experiment for s in steps if s.seed is not None and not seconds.get(s.experiment)})
    out = [(f"bench-rekey plan, profile {profile}, this CPU kind {here}: "
            f"{sum(len(s.static) for s in steps)} record(s) to carry from the source, "
            f"{sum(len(s.rest) for s in steps if s.seed is not None)} to verify by {runs} run(s)")]
    for s in steps:
        head = f"  {s.experiment:24s} from {short_version(s.old_code)}:"
        if s.static:
            out.append(f"{head} {len(s.static)} record(s) carried from the source (no run)")
        if s.rewrite:
            out.append(f"{head} {len(s.rewrite)} record(s) rewritten in key format {KEY_FORMAT} under their own code's "
                       f"key {short_version(s.rewrite[0][1].key)} (from the source; not today's code)")
        if s.rest:
            if s.seed is None:
                out.append(f"{head} {len(s.rest)} record(s) cannot be verified here: {s.blocked}"
                           + (f" (not from the source: {s.why_not_static})" if s.why_not_static else ""))
                continue
            each = seconds.get(s.experiment)
            cost = f"~{duration(each)} per run" if each else "no timing on record"
            how = (f"compared with its record made on this CPU kind ({s.compare_with.path.name})"
                   if s.compare_with is not None else
                   f"no record of this CPU kind: the reference is made here first by commit {s.commit[:12]}'s code in "
                   "a temporary git worktree (2 runs)")
            out.append(f"{head} {len(s.rest)} record(s) to verify: seed {s.seed} rerun, {how}; {cost}"
                       + (f" (not from the source: {s.why_not_static})" if s.why_not_static else ""))
    if not steps:
        out.append("  nothing to carry: every record with today's config is at its experiment's key")
    out.append(f"about {duration(work)} of runs" + (f" plus {', '.join(unknown)} (no timing on record)" if unknown
                                                     else "")
               + ", plus building what an experiment's seeds share (notebook 01's world model) once per code version")
    return out


def rekey(profile: str = "cpu", only: Sequence[str] | None = None, runs_root: Path | None = None,
          shipped_dir: Path | bool | None = None, plan_only: bool = False, run: bool = True, threads: int = 1,
          repo: Path = REPO, experiments: dict[str, Experiment] | None = None, publish: bool | None = None,
          log: Callable[[str], None] = print) -> RekeyResult:
    """Carry the records of older keys of the selected experiments to today's keys (module docstring).

    `runs_root`: default ``runs/<profile>``; its ``bench`` folder and `shipped_dir` (default
    ``executed/<profile>/bench/records``; False: none) are where records are read and carried.
    `run`: False carries only what the source proves. `publish`: rebuild the published report when
    shipped records were carried (default: when `shipped_dir` is the published one)."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"--threads must be a positive integer, not {threads!r}")
    profile = resolve_profile_name(profile)
    experiments = EXPERIMENTS if experiments is None else experiments
    names = select_experiments(only, experiments)
    runs_root = Path(runs_root) if runs_root else default_runs_root() / profile
    published = published_dir(profile, repo) / "bench" / "records"
    shipped = published if shipped_dir is None else (None if shipped_dir is False else Path(shipped_dir))
    folders = [f for f in (shipped, runs_root / "bench") if f is not None and f.is_dir()]
    start = time.perf_counter()
    steps = plan_rekey(profile, names, folders, repo, experiments)
    seconds = seconds_per_seed(names, [runs_root / "bench", published], cpu_model())
    for line in plan_lines(steps, profile, seconds):
        log(line)
    out = RekeyResult(steps)
    if plan_only:
        return out
    here = cpu_kind(cpu_model())
    to_verify = [s for s in steps if s.seed is not None] if run else []

    def runs_of(s: Step) -> float:  # estimated seconds of a step's runs (a reference doubles them)
        return (seconds.get(s.experiment) or 0) * (1 if s.compare_with is not None else 2)

    for step in steps:
        key = experiment_key(experiments[step.experiment])
        if step.static:
            log(f"{step.experiment}: {len(step.static)} record(s) of {short_version(step.old_code)} carried from the "
                "source")
            for old in step.static:
                made = made_by(old.record)[0]
                how = {"how": "source", "verified_by": {
                    "commit": made,
                    "evidence": f"the files of commit {made[:12]} hash to the record's module pairs "
                                f"(key format {old.record.get('key_format')}) and, under key format {KEY_FORMAT}, to "
                                "this key: the same code up to docstrings, comments, formatting and tables of values"}}
                out.carried.append(carry(old, key, how, log))
            out.verdicts[step.experiment] = "carried from the source"
        if step.rewrite:
            log(f"{step.experiment}: {len(step.rewrite)} record(s) of {short_version(step.old_code)} rewritten in key "
                f"format {KEY_FORMAT} under their own code's key {short_version(step.rewrite[0][1].key)}")
            for old, own in step.rewrite:
                made = made_by(old.record)[0]
                how = {"how": "key format", "verified_by": {
                    "commit": made,
                    "evidence": f"the files of commit {made[:12]} hash to the record's module pairs "
                                f"(key format {old.record.get('key_format')}); this key is the same files' under key "
                                f"format {KEY_FORMAT} (the record's own code, not this checkout's)"}}
                path = carry(old, own, how, log)
                out.rewritten.append(path)
                new = OldRecord(path, json.loads(path.read_text()))
                step.records = [new if r is old else r for r in step.records]
                if step.compare_with is old:
                    step.compare_with = new
            out.verdicts[step.experiment] = (f"rewritten in key format {KEY_FORMAT}, "
                                             f"{len(step.rewrite)} record(s) left to verify by a rerun")
        if not step.rest:
            continue
        if step.seed is None:
            out.verdicts[step.experiment] = f"cannot verify here: {step.blocked}"
            log(f"{step.experiment}: {out.verdicts[step.experiment]}")
            continue
        if not run:
            out.verdicts[step.experiment] = f"not verified (--no-run): seed {step.seed} would be rerun"
            continue
        done = to_verify.index(step)
        log(f"bench-rekey: verifying {done + 1}/{len(to_verify)} ({step.experiment}), "
            f"{duration(time.perf_counter() - start)} so far, about {duration(sum(map(runs_of, to_verify[done:])))} "
            "of runs left (the records' own times)")
        out.verdicts[step.experiment] = verify_and_carry(step, experiments[step.experiment], key, profile, runs_root,
                                                         threads, repo, here, out, log)
    if publish is None:
        publish = shipped == published
    if publish and any(p.is_relative_to(published) for p in out.carried + out.rewritten):
        publish_report(profile, repo, log=log)
    out.seconds = time.perf_counter() - start
    log(f"bench-rekey: {len(out.carried)} record(s) carried to today's keys"
        + (f", {len(out.rewritten)} rewritten in key format {KEY_FORMAT} under their own code's keys"
           if out.rewritten else "") + f", in {duration(out.seconds)}")
    for name, verdict in out.verdicts.items():
        log(f"  {name:24s} {verdict}")
    return out


def verify_and_carry(step: Step, experiment: Experiment, key: SourceKey, profile: str, runs_root: Path, threads: int,
                     repo: Path, here: str, out: RekeyResult, log: Callable[[str], None]) -> str:
    """Rerun `step`'s seed with today's code, compare it with the old key's record of this CPU kind
    or with a reference made here at the record's commit, and carry `step`'s records when identical.
    Returns the verdict line."""
    seed = step.seed
    if step.compare_with is not None:
        reference = step.compare_with.record
        source = f"its record of CPU kind {here} ({step.compare_with.path.name})"
    else:
        ref_root = rekey_root(runs_root, _tree_of(repo, step.commit))
        log(f"{step.experiment} seed {seed}: no record of this CPU kind ({here}); making the reference here with "
            f"commit {step.commit[:12]}'s code in a temporary git worktree (runs in {ref_root})")
        reference = run_at_commit(repo, step.commit, step.experiment, profile, seed, ref_root, threads, log)
        known = {code for r in step.rest if made_by(r.record)[0] == step.commit for code in made_by(r.record)[1]}
        if reference.get("code") not in known:  # the commit's runner keys by its own rule (maybe an older format)
            return (f"cannot verify: commit {step.commit[:12]}'s code keys {step.experiment} as "
                    f"{short_version(reference.get('code', '?'))}, not {short_version(step.old_code)}")
        source = f"a reference made here by commit {step.commit[:12]}'s code in a temporary git worktree"
    version, _ = code_version(repo)
    log(f"{step.experiment} seed {seed}: rerun with this checkout's code (runs in {rekey_root(runs_root, version)})")
    rerun = run_here(experiment, profile, seed, rekey_root(runs_root, version), key, threads, log)
    n, first = result_differences(reference, rerun)
    if n:
        log(f"{step.experiment}: CHANGED: seed {seed} differs from {source} in {n} field(s): " + "; ".join(first))
        return f"changed: {n} field(s) differ, first {first[0]}"
    commit = head_commit(repo)
    dirty = closure_dirty(key, repo)
    how = {"how": "rerun", "verified_by": {
        "seed": seed, "cpu": here, "commit": commit, "dirty": dirty, "torch_threads": threads,
        "compared_with": source, "rerun": Path(rerun["_path"]).name,
        "evidence": f"seed {seed} rerun with this key's code gives a result identical to {source}, "
                    "measured time aside (wmkit.bench.rekey.EXCLUDED_KEYS)"}}
    how["verified_by"] = {k: v for k, v in how["verified_by"].items() if v is not None}
    log(f"{step.experiment}: verified: seed {seed} identical to {source}; carrying {len(step.rest)} record(s)"
        + (" (the key's files have uncommitted changes: the carry names the commit they sit on)" if dirty else ""))
    for old in step.rest:
        out.carried.append(carry(old, key, how, log))
    return f"verified by seed {seed} on {here} at commit {commit[:12]}: {len(step.rest)} record(s) carried"


def add_rekey_parser(sub) -> None:
    p = sub.add_parser("bench-rekey", help="carry benchmark records to their experiment's new key: from the source "
                                          "where it proves the code unchanged, else by rerunning one seed bit for bit")
    p.add_argument("--profile", default="cpu", help="whose records (default cpu: the profile the kit ships)")
    p.add_argument("--only", nargs="*", help="papers (RLVR-World, RWML, WM-R1, WMRL) or experiment names")
    p.add_argument("--plan", action="store_true", help="say what it would carry and run, and the estimated time")
    p.add_argument("--no-run", action="store_true", help="carry only what the source proves; run nothing")
    p.add_argument("--threads", type=int, default=1, help="torch threads of each run (the benchmark's 1)")
    p.add_argument("--runs-dir", default=None, help="default runs/<profile>")


def rekey_main(args) -> int:
    result = rekey(args.profile, args.only, Path(args.runs_dir) if args.runs_dir else None, plan_only=args.plan,
                   run=not args.no_run, threads=args.threads)
    del result  # its verdicts are printed; a changed experiment is news, not a failure of the command
    return 0
