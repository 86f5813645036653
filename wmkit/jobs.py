"""Training jobs on the command line, one code path from a notebook to N GPUs.

    python -m wmkit train --list
    python -m wmkit train world-model --profile smoke world_model.epochs=0.5 seed=1
    python -m wmkit train world-model --profile gpu --config my.yaml --dry-run
    python -m wmkit train world-model --profile smoke --import my_envs.py envs=sokoban5
    accelerate launch -m wmkit train world-model --profile gpu            # DDP, FSDP ... unchanged
    python -m wmkit train world-model --profile gpu --accelerate-config multi_gpu_ddp

A *job* is an entry of role ``"train"`` in the kit's one registry (:data:`wmkit.experiments.REGISTRY`,
beside the experiments): a config dataclass (the one the notebook uses, or a small wrapper holding
it), a run function taking that config, and one line of description, as lazy ``"module:attribute"``
strings, so ``--list`` and ``--help`` import neither torch nor trl. Registering one is one call::

    register_job("my-job", "my_module:MyConfig", "my_module:run", "what it trains, in one line")

or a decorator on the run function (``@job("name", ConfigClass, "description")``). A ``key=value`` the
config does not know that names a field of the trainer's arguments (a config class's ``trainer_args``:
``trl.GRPOConfig``, ``transformers.TrainingArguments``) goes to its ``trl_args``, passed to the trainer.

A config is built in three layers, later ones winning: the profile's defaults (a config
class may define ``from_profile(profile_name)``; else ``profile`` is set when it is a field),
then a YAML file (``--config``), then ``key=value`` overrides on the command line. Keys are
field names, dotted for nested dataclasses (``world_model.model.hidden_size=32``); a leaf
name alone works when only one field has it (``hidden_size=32``). An unknown key or a value
of the wrong type is one clear line (exit status 2), before anything heavy is imported.

Distribution is accelerate's and TRL's: the run functions call `transformers.Trainer` /
`trl.GRPOTrainer`, which read the process group that ``accelerate launch`` (or torchrun) set
up. Configs for the standard engines ship in ``wmkit/configs/accelerate``;
:func:`launch_command` prints the command line, :func:`notebook_launch` runs a function on
every visible GPU from a notebook (``accelerate.notebook_launcher``) or in-process otherwise.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shlex
import subprocess
import sys
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from wmkit.entries import Experiment, resolve
from wmkit.envs import ENVIRONMENTS, import_modules, registered_name
from wmkit.experiments import register, run_over_seeds, train_entries
from wmkit.profiles import check_seed, check_sizes, get_profile, resolve_profile_name
from wmkit.rlvr_world.config import rlvr_sizes
from wmkit.runs import default_runs_root, jsonable

ACCELERATE_CONFIG_DIR = Path(__file__).resolve().parent / "configs" / "accelerate"


# ============================================================================ jobs in the registry


def register_job(name: str, config: str | type, run: str | Callable, description: str,
                 distributed: bool = True) -> Experiment:
    """Add (or replace) a training job in the kit's one registry (:data:`wmkit.experiments.REGISTRY`,
    role ``"train"``); strings ``"module:attribute"`` are imported when first used."""
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"job name must be one word, not {name!r}")
    return register(Experiment(f"train_{name}", "", run, None, description.strip().splitlines()[0], role="train",
                               command=name, config=config, distributed=distributed))


def job(name: str, config: str | type, description: str, distributed: bool = True):
    """Decorator form of :func:`register_job` for a run function."""
    def wrap(function: Callable) -> Callable:
        register_job(name, config, function, description, distributed)
        return function
    return wrap


def get_job(name: str) -> Experiment:
    jobs = train_entries()
    if name not in jobs:
        raise ValueError(f"unknown job {name!r}; jobs: {', '.join(sorted(jobs))} (see: wmkit train --list)")
    return jobs[name]


def config_class(entry: Experiment) -> type:
    """The job's config dataclass (imported now)."""
    cls = resolve(entry.config)
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"job {entry.command!r}: config {cls!r} is not a dataclass")
    return cls


def list_jobs() -> str:
    jobs = train_entries()
    width = max(map(len, jobs), default=0)
    return "\n".join(f"{name:{width}s}  {jobs[name].description}" for name in sorted(jobs))


# ============================================================================ configs


def _type_name(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "")


def _field_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 -- names only known to the defining module's TYPE_CHECKING
        return {f.name: Any for f in dataclasses.fields(cls)}


def _coerce(value: Any, hint: Any, key: str, current: Any = None) -> Any:
    """`value` (already parsed from YAML) as type `hint`, or ValueError naming the key."""
    def bad() -> ValueError:
        return ValueError(f"{key}: expected {_type_name(hint)}, got {value!r}")

    if dataclasses.is_dataclass(current) and not isinstance(current, type):
        if dataclasses.is_dataclass(value):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"{key}: expected a mapping of {type(current).__name__} fields, got {value!r}")
        for sub, sub_value in value.items():
            current = set_value(current, sub, sub_value, prefix=f"{key}.")
        return current
    if hint is Any or hint is None:
        return value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if type(None) in options:
                return None
            raise bad()
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(value, option, key)
            except ValueError:
                continue
        raise bad()
    if origin is typing.Literal:
        if value in typing.get_args(hint):
            return value
        raise ValueError(f"{key}: expected one of {', '.join(map(repr, typing.get_args(hint)))}, got {value!r}")
    if origin in (tuple, list, Sequence):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise bad()
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        item = args[0] if len(args) == 1 or (args and Ellipsis in typing.get_args(hint)) else Any
        items = [_coerce(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise bad()
        return dict(value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise bad()
    if hint in (int, float):  # a number, or its text: "1_000", or 5e-4 (no dot), which PyYAML reads as text
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
                hint is int and isinstance(value, float)):
            raise bad()
        try:
            return hint(value)
        except ValueError:
            raise bad() from None
    if hint is str:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)  # a YAML number where a name is wanted, e.g. model=7 -> "7"
        raise bad()
    if isinstance(hint, type):
        if isinstance(value, hint):
            return value
        raise bad()
    return value


def _leaf_paths(config: Any, prefix: str = "") -> list[str]:
    paths = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            paths += _leaf_paths(value, f"{prefix}{f.name}.")
        else:
            paths.append(prefix + f.name)
    return paths


def _expand_key(config: Any, key: str, prefix: str = "") -> str:
    names = {f.name for f in dataclasses.fields(config)}
    if key.split(".")[0] in names:
        return key
    matches = [p for p in _leaf_paths(config) if p == key or p.endswith("." + key)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise ValueError(f"ambiguous key {prefix + key!r}: say which of {', '.join(prefix + m for m in matches)}")
    raise ValueError(f"unknown key {prefix + key!r}; valid keys: "
                     f"{', '.join(prefix + p for p in _leaf_paths(config))}")


def set_value(config: Any, key: str, value: Any, prefix: str = "") -> Any:
    """A copy of dataclass `config` with the (dotted) `key` set to `value`, type-checked."""
    key = _expand_key(config, key, prefix)
    head, _, rest = key.partition(".")
    current = getattr(config, head)
    if rest and isinstance(current, dict):  # a mapping field (trl_args): its keys are free
        new = {**current, rest: value}
    elif rest:
        if not (dataclasses.is_dataclass(current) and not isinstance(current, type)):
            raise ValueError(f"unknown key {prefix + key!r}: {prefix + head} is not a section")
        new = set_value(current, rest, value, prefix=f"{prefix}{head}.")
    else:
        new = _coerce(value, _field_hints(type(config)).get(head, Any), prefix + head, current)
    return dataclasses.replace(config, **{head: new})


def parse_override(text: str) -> tuple[str, Any]:
    """``"key=value"`` -> (key, value parsed as YAML: 3 -> int, 0.5 -> float, true -> bool, [a, b] -> list)."""
    import yaml

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"override {text!r} is not key=value")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    # Keep text that YAML would turn into something odd (dates, ...) as the user wrote it.
    if not isinstance(value, (str, int, float, bool, list, dict, type(None))):
        value = raw
    return key.strip(), value


def default_config(job_or_name: Experiment | str, profile: str = "auto") -> Any:
    """The job's config at the profile's defaults."""
    entry = get_job(job_or_name) if isinstance(job_or_name, str) else job_or_name
    cls = config_class(entry)
    if hasattr(cls, "from_profile"):
        return cls.from_profile(profile)
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(profile=profile) if "profile" in names else cls()
    except TypeError as err:
        raise ValueError(f"job {entry.command!r}: config {cls.__name__} needs a from_profile(profile) "
                         f"classmethod or defaults for every field ({err})") from err


def load_yaml(path: str | Path, what: str = "config file") -> dict:
    """The mapping a YAML file holds (an empty file is ``{}``).

    Every way the file can be wrong (missing, a folder, unreadable, not UTF-8, not YAML, not a
    mapping) is one ValueError of one line naming the file, and for bad YAML the line and column
    where the parser stopped, so the command line prints it as ``wmkit: error: ...``.
    """
    import yaml

    path = Path(path)
    name = f"{what} {str(path)!r}"
    if not path.exists():
        raise ValueError(f"{name} not found")
    if not path.is_file():
        raise ValueError(f"{name} is not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{name} is not UTF-8 text (byte {err.object[err.start]:#04x} at position {err.start})") from None
    except OSError as err:
        raise ValueError(f"{name} cannot be read: {err.strerror or err}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(f"{name} is not valid YAML: {_yaml_error_line(err)}") from None
    except RecursionError:
        raise ValueError(f"{name} is not valid YAML: nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(  # noqa: TRY004 - the file holds a wrong value; ValueError is the CLI's one-line error
            f"{name} must hold a mapping of keys to values, not a {type(data).__name__}")
    return data


def _yaml_error_line(err: Exception) -> str:
    """A YAML error as one line: where it stopped (1-based line and column), then what it expected."""
    import yaml

    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        parts = [f"line {mark.line + 1}, column {mark.column + 1}"] if mark is not None else []
        parts.append(err.problem or err.context or type(err).__name__)
        if err.context and err.problem and err.context_mark is not None:
            parts[-1] += f" ({err.context} at line {err.context_mark.line + 1}, column {err.context_mark.column + 1})"
        return ": ".join(parts)
    if isinstance(err, yaml.reader.ReaderError):  # a control character: the reader knows no line, only a position
        return f"character {err.position}: {err.reason} (#x{err.character:04x})"
    return " ".join(str(err).split())


def build_config(job_or_name: Experiment | str, profile: str | None = None, config_file: str | Path | None = None,
                 overrides: Sequence[str] = ()) -> Any:
    """Profile defaults, then the YAML file, then ``key=value`` overrides (later wins).

    The profile is ``profile`` (``--profile``) when given, else a ``profile=`` override, else
    the YAML file's ``profile`` key, else "auto".
    """
    entry = get_job(job_or_name) if isinstance(job_or_name, str) else job_or_name
    from_file = load_yaml(config_file) if config_file else {}
    parsed = [parse_override(o) for o in overrides]
    given = dict(parsed).get("profile")
    if profile and given is not None and str(given).strip().lower() != profile.strip().lower():
        raise ValueError(f"profile={given} contradicts --profile {profile}; give the profile once")
    name = profile or given or from_file.get("profile") or "auto"
    if not isinstance(name, str):
        raise TypeError(f"profile: expected a name, got {name!r}")
    config = default_config(entry, name)  # the profile picks the defaults; it is not set again below
    for key, value in list(from_file.items()) + parsed:
        if key != "profile":
            config = set_or_pass_through(config, key, value)
    validate_config(config)
    return config


def set_or_pass_through(config: Any, key: str, value: Any) -> Any:
    """`set_value`, except that a key the config does not know goes into its ``trl_args`` when it names a
    field of the trainer's arguments (the config class's ``trainer_args``: ``"grpo"``, ``"sft"``)."""
    try:
        return set_value(config, key, value)
    except ValueError as err:
        trainer = getattr(type(config), "trainer_args", None)
        if trainer is None or not str(err).startswith("unknown key") or "." in key:
            raise
        from wmkit.core.grpo import TRAINER_ARGS, trainer_fields  # here: it imports TRL (seconds), only now

        if key not in trainer_fields(trainer):
            raise ValueError(f"{err}; nor is it a field of {TRAINER_ARGS[trainer].partition(':')[2]} "
                             "to pass through to the trainer") from None
        return dataclasses.replace(config, trl_args={**config.trl_args, key: value})


def validate_config(config: Any, prefix: str = "") -> None:
    """Check a built config before anything runs: every seed in 0 .. 2**32 - 1, every profile size
    section (``world_model`` ...) by `wmkit.profiles.check_sizes` and every environment name of an
    ``envs`` field registered; one ValueError naming the key."""
    for f in dataclasses.fields(config):
        value, key = getattr(config, f.name), prefix + f.name
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            if type(value).__module__ in ("wmkit.profiles", "wmkit.core.grpo") or type(value).__module__.endswith(".config"):
                check_sizes(value, key + ".")
            else:
                validate_config(value, key + ".")
        elif f.name.endswith("seed") and value is not None:
            check_seed(value, key)
        elif f.name == "envs" and value is not None:
            registered_envs(value, key)
        elif f.name == "trl_args" and value:
            from wmkit.core.grpo import check_trl_args  # here: it imports TRL (seconds), only when given

            check_trl_args(value, getattr(type(config), "trainer_args", "grpo"))


def registered_envs(names: Sequence[str], key: str = "envs", imported: bool = False) -> list[str]:
    """`names` as the environments are registered (`wmkit.envs.registered_name`); a ValueError names the
    unknown ones and says how to register one from the command line (``--import``)."""
    names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise ValueError(f"{key}: name at least one environment; registered: {', '.join(ENVIRONMENTS)}")
    unknown = [n for n in names if registered_name(n) is None]
    if unknown:
        raise ValueError(f"{key} {' '.join(map(str, unknown))}: not registered; registered: "
                         f"{', '.join(ENVIRONMENTS)}" + ("" if imported else
                         " (register yours in a module and name it with --import MODULE_OR_PATH)"))
    return [registered_name(n) for n in names]


def config_to_dict(config: Any) -> dict:
    def plain(value):
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value
    return {k: plain(v) for k, v in dataclasses.asdict(config).items()}


def config_to_yaml(config: Any) -> str:
    import yaml

    return yaml.safe_dump(config_to_dict(config), sort_keys=False)


# ============================================================================ running


def process_rank() -> tuple[int, int]:
    """(rank, world size) as the launcher set them (accelerate launch, torchrun); (0, 1) alone."""
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    return process_rank()[0] == 0


def run_job(job_or_name: Experiment | str, config: Any) -> Any:
    """Run a job with a built config; the result comes back on every rank that ran it."""
    entry = get_job(job_or_name) if isinstance(job_or_name, str) else job_or_name
    rank, world = process_rank()
    if not entry.distributed and world > 1:
        if rank != 0:
            return None
        print(f"wmkit: job {entry.command!r} runs on one process; ranks 1..{world - 1} are idle", file=sys.stderr)
        # Rank 0 goes on alone: a Trainer inside must not wait for the others to join a process group.
        for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
                     "ROLE_WORLD_SIZE"):
            os.environ.pop(name, None)
    return resolve(entry.run)(config)


# ============================================================================ accelerate


def accelerate_configs() -> dict[str, Path]:
    """Name -> file of the accelerate configs shipped in wmkit/configs/accelerate."""
    return {p.stem: p for p in sorted(ACCELERATE_CONFIG_DIR.glob("*.yaml"))}


def accelerate_config_path(name: str | Path) -> Path:
    """The shipped config called `name` (e.g. "fsdp"), or `name` itself when it is a file."""
    configs = accelerate_configs()
    if str(name) in configs:
        return configs[str(name)]
    if Path(name).is_file():
        return Path(name)
    raise ValueError(f"unknown accelerate config {str(name)!r}; shipped: {', '.join(configs)} (or a file path)")


def launch_command(job_name: str, job_args: Sequence[str] = (), accelerate_config: str | Path = "multi_gpu_ddp",
                   num_processes: int | None = None, python: str | None = None) -> list[str]:
    """The ``accelerate launch --config_file ... -m wmkit train <job> ...`` command, as a list.

    `num_processes` None keeps the config's own count, except for the multi-GPU engines,
    where it becomes the number of visible CUDA devices when there are any.
    """
    path = accelerate_config_path(accelerate_config)
    if num_processes is None and _config_kind(path) in ("MULTI_GPU", "FSDP", "DEEPSPEED"):
        count = _cuda_device_count()
        num_processes = count if count > 0 else None
    command = [python or sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(path)]
    if num_processes is not None:
        command += ["--num_processes", str(int(num_processes))]
    return command + ["-m", "wmkit", "train", job_name, *job_args]


def format_command(command: Sequence[str]) -> str:
    """A command list as one shell line (the interpreter shown as ``accelerate launch``)."""
    parts = list(command)
    if parts[1:3] == ["-m", "accelerate.commands.launch"]:
        parts = ["accelerate", "launch", *parts[3:]]
    return shlex.join(parts)


def _config_kind(path: Path) -> str:
    data = load_yaml(path, "accelerate config")
    return str(data.get("distributed_type", "NO"))


def _cuda_device_count() -> int:
    """Visible CUDA devices, without initialising CUDA in this process (fork stays possible)."""
    try:
        import torch  # here: --list and --help must not import torch (about 1.5 s)

        return torch.cuda.device_count()
    except Exception:  # noqa: BLE001
        return 0


def notebook_launch(function: Callable, *args, num_processes: int | None = None, force: bool = False,
                    mixed_precision: str = "no", use_port: str = "29500") -> Any:
    """Run ``function(*args)`` on every visible GPU from a notebook, or in this process.

    More than one CUDA device visible (or `num_processes` > 1 with `force`): hand it to
    ``accelerate.notebook_launcher``, which forks one process per device and sets up the
    process group, so a Trainer inside `function` runs DDP; nothing is returned then (results
    must be saved to disk by `function`). Otherwise `function(*args)` runs here and its
    result is returned. Nothing in the notebook may touch CUDA before this call (the fork
    needs an uninitialised CUDA); build models inside `function`. `force` exists so the
    multi-process path can be exercised on CPUs (gloo) too.
    """
    count = num_processes if num_processes is not None else _cuda_device_count()
    if count > 1 and (force or _cuda_device_count() > 1):
        from accelerate import notebook_launcher

        notebook_launcher(function, args, num_processes=count, mixed_precision=mixed_precision, use_port=use_port)
        return None
    return function(*args)


# ============================================================================ command line


def _train_parser_class():
    class TrainParser(argparse.ArgumentParser):
        """Lets options and key=value overrides come in any order (intermixed parsing)."""

        _inside = False

        def parse_known_args(self, args=None, namespace=None):
            if self._inside:  # parse_known_intermixed_args calls back in here
                return super().parse_known_args(args, namespace)
            self._inside = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._inside = False

    return TrainParser


def add_train_parser(subparsers) -> None:
    """The ``train`` sub-command of ``python -m wmkit``."""
    default_class, subparsers._parser_class = subparsers._parser_class, _train_parser_class()
    try:
        p = subparsers.add_parser(
            "train", help="run a training job (also under accelerate launch)",
            description="Run a training job: profile defaults < --config YAML < key=value overrides.",
            epilog="Jobs: see --list. Under several processes: accelerate launch -m wmkit train <job> ...",
            formatter_class=argparse.RawDescriptionHelpFormatter)
    finally:
        subparsers._parser_class = default_class
    p.add_argument("job", nargs="?", help="job name (see --list)")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. seed=1 epochs=0.5")
    p.add_argument("--list", action="store_true", help="list the jobs and exit")
    p.add_argument("--profile", default=None, help="smoke | cpu | gpu | auto (default: the YAML's, else auto)")
    p.add_argument("--config", default=None, help="YAML file of config keys")
    p.add_argument("--dry-run", action="store_true", help="print the resolved config (YAML) and exit")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE_OR_PATH",
                   help="import a module first (a module name, found from the current folder or the Python "
                        "path, or a .py file): one that registers your environment, so envs= can name it "
                        "(tutorials/bring_your_own_env.md); repeat for several")
    p.add_argument("--accelerate-config", default=None, metavar="NAME",
                   help=f"relaunch under accelerate with a shipped config ({', '.join(accelerate_configs())}) "
                        "or a config file")
    p.add_argument("--num-processes", type=int, default=None, help="with --accelerate-config: processes")
    p.add_argument("--print-launch", action="store_true",
                   help="with --accelerate-config: print the launch command instead of running it")


def train_main(args) -> int:
    """Run ``wmkit train`` from parsed arguments; ValueError/TypeError become exit status 2 upstream."""
    if args.list:
        print(list_jobs())
        return 0
    if not args.job:
        raise ValueError("name a job (see: wmkit train --list)")
    entry = get_job(args.job)
    imports = getattr(args, "imports", [])
    if imports:
        import_modules(imports)  # a module that registers an environment, before envs= is checked
    config = build_config(entry, args.profile, args.config, args.overrides)  # check before any launch
    if args.accelerate_config:
        job_args = list(args.overrides) + (["--import", *imports] if imports else [])
        for flag, value in (("--profile", args.profile), ("--config", args.config)):
            if value:
                job_args += [flag, value]
        command = launch_command(entry.command, job_args, args.accelerate_config, args.num_processes)
        if args.print_launch or args.dry_run:
            print(format_command(command))
            if args.dry_run:
                print(config_to_yaml(config), end="")
            return 0
        if process_rank()[1] > 1:
            raise ValueError("--accelerate-config given inside a launched process; drop it under accelerate launch")

        print(f"wmkit: {format_command(command)}", file=sys.stderr, flush=True)
        return subprocess.call(command)
    if args.dry_run:
        print(config_to_yaml(config), end="")
        return 0
    result = run_job(entry, config)
    if is_main_process() and result is not None:
        print(json.dumps(jsonable(result), indent=1))
    close_process_group()
    return 0


def close_process_group() -> None:
    """Under `accelerate launch`, leave the process group before exit: a rank that exits with the
    gloo group still open can abort in teardown ("terminate called without an active exception")."""
    if "torch" not in sys.modules:
        return
    import torch.distributed as dist  # here: only once torch is loaded (the line above); --help must not

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


# ============================================================================ the jobs


@dataclass
class WorldModelJob:
    """Notebook 01's training: data, tokenizer, from-scratch (or LoRA) model, completion-only SFT.

    ``world_model`` is the profile's `WorldModelProfile` (the sizes notebook 01 reads), so
    ``world_model.epochs=0.5`` or ``hidden_size=32`` change exactly what the notebook would.
    """

    profile: str = "auto"
    """smoke | cpu | gpu | auto."""
    seed: int = 0
    """Seeds data, tokenizer corpus order, weight init and data order."""
    model: str | None = None
    """None or "tiny": from scratch; "smollm2", a folder or a hub id: LoRA on that model."""
    envs: tuple[str, ...] = ("textgame", "phone")
    """Environments the transitions come from."""
    out: str | None = None
    """Output folder (default runs/<profile>/01_build_world_model/world_model); checkpoints resume."""
    evaluate: bool = False
    """Also run notebook 01's evaluation protocol on the main process after training."""
    world_model: Any = None
    """The profile's WorldModelProfile (filled by from_profile)."""
    trl_args: dict = dataclasses.field(default_factory=dict)
    """Any other ``transformers.TrainingArguments`` field, passed to the Trainer as it is (``key=value``
    on the command line, e.g. ``report_to=tensorboard``)."""

    trainer_args: ClassVar[str] = "sft"
    """Unknown ``key=value`` overrides that name a ``TrainingArguments`` field go to ``trl_args``."""

    @classmethod
    def from_profile(cls, profile: str = "auto") -> WorldModelJob:
        resolved = get_profile(profile)
        return cls(profile=resolved.name, world_model=resolved.world_model)


def rank_fingerprints(model, tokenizer=None) -> list[str | None]:
    """A short hash of the parameters (and the tokenizer's vocabulary) from every rank.

    After data-parallel training all entries must be equal; a differing tokenizer hash means
    the ranks built different vocabularies and trained on different token ids. Sharded
    parameters (FSDP2 DTensors) differ by design: None is returned for them.
    """
    import torch  # here, and torch.distributed below: --help and --list must not import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        if type(tensor).__name__ == "DTensor":
            digest = None
            break
        digest.update(name.encode())
        digest.update(tensor.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    if digest is not None and tokenizer is not None:
        digest.update(json.dumps(tokenizer.get_vocab(), sort_keys=True).encode())
    mine = digest.hexdigest()[:16] if digest is not None else None
    import torch.distributed as dist  # here: see `import torch` above

    if not (dist.is_available() and dist.is_initialized()):
        return [mine]
    every: list = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    return every


def run_world_model(config: WorldModelJob) -> dict:
    """Train (and optionally evaluate) notebook 01's world model with `wmkit.core.build.build_world_model`.

    ``world_model.batch_size`` is the *global* batch: under N processes `train_sft` gives each
    1/N of it, so N devices take the notebook's steps on the notebook's batches. Raise it
    (and the learning rate) to use more devices for bigger batches. Every rank builds the same data and tokenizer
    (deterministic in the seed); the Trainer inside `train_sft` runs DDP (or FSDP / DeepSpeed
    as the accelerate config says). The result says whether all ranks ended identical.
    """
    from wmkit.core.build import build_world_model, evaluate_world_model  # here: wmkit.core imports torch

    processes = process_rank()[1]
    if config.world_model.batch_size % processes:
        raise ValueError(f"world_model.batch_size {config.world_model.batch_size} is the global batch and must "
                         f"divide by the {processes} processes; use a multiple of {processes}")
    profile = replace(get_profile(config.profile), world_model=config.world_model)
    out = Path(config.out) if config.out else default_runs_root() / profile.name / "01_build_world_model" / "world_model"
    run = build_world_model(profile, out, seed=config.seed, envs=config.envs, model=config.model,
                            show_progress=is_main_process(), trl_args=config.trl_args)
    fingerprints = rank_fingerprints(run.model, run.tokenizer)
    history = run.sft.log_history if run.sft else []
    losses = [e["loss"] for e in history if "loss" in e]
    result = {"job": "world-model", "folder": str(run.folder), "processes": processes,
              "global_batch": config.world_model.batch_size,
              "per_device_batch": config.world_model.batch_size // processes, **run.info,
              "train_seconds": round(run.sft.seconds, 2) if run.sft else None,
              # (None after a resume: the step count then includes steps this call did not take)
              "train_samples_per_second": round(run.sft.steps * config.world_model.batch_size / run.sft.seconds, 2)
              if run.sft and run.sft.seconds and not run.sft.extra.get("resumed_from") else None,
              "train_losses": losses, "eval_losses": [e["eval_loss"] for e in history if "eval_loss" in e],
              "rank_fingerprints": fingerprints,
              "ranks_agree": None if None in fingerprints else len(set(fingerprints)) == 1}
    if config.evaluate and is_main_process():
        result["evaluation"] = evaluate_world_model(run.model, run.tokenizer, run.splits, profile, seed=config.seed,
                                                    envs=config.envs)
    return result


@dataclass
class WMRLJob:
    """Notebook 04's WMRL experiments over seeds (``python -m wmkit run wmrl``); numpy, one process."""

    profile: str = "cpu"
    """smoke | cpu | gpu (sizes: the profile's ``wmrl`` section)."""
    seeds: int = 3
    """Seeds of checks 4 and 5."""
    check: str = "all"
    """4 (controlled problem), 5 (research tasks) or all."""
    out: str | None = None
    """JSON file (default runs/<profile>/wmrl_seeds.json)."""

    @classmethod
    def from_profile(cls, profile: str = "auto") -> WMRLJob:
        return cls(profile=resolve_profile_name(profile))


def run_wmrl(config: WMRLJob) -> dict:
    """`python -m wmkit run wmrl` (:func:`wmkit.experiments.run_over_seeds`) with these settings; returns
    where the JSON report went."""
    if config.check not in ("4", "5", "all"):
        raise ValueError(f"check must be 4, 5 or all, not {config.check!r}")
    profile = get_profile(config.profile)  # one clear line for an unknown profile
    out = config.out or str(default_runs_root() / profile.name / "wmrl_seeds.json")
    run_over_seeds("wmrl", profile, config.seeds, out, check=config.check)
    return {"job": "wmrl", "status": 0, "report": out}


@dataclass
class RLVRJob:
    """Notebook 02's training: GRPO with a verifiable reward on notebook 01's world model, at RLVR-World's
    sizes (``rlvr``: `wmkit.rlvr_world.config.rlvr_sizes`; the run's `RLVRConfig` is made from them by the
    same call notebook 02 and the benchmark make, `wmkit.rlvr_world.experiment.arm_config`).
    ``rlvr.grpo.prompts_per_step`` is the global count: under N processes each takes 1/N, so a step sees the notebook's batch."""

    profile: str = "auto"
    """smoke | cpu | gpu | auto."""
    seed: int = 0
    """Seed of the RL data sample and of GRPO's sampling (the world model's own seed is the one it was built with)."""
    envs: tuple[str, ...] = ("textgame",)
    """Environments whose training transitions RL sees."""
    world_model: str | None = None
    """Folder of notebook 01's world model (default runs/<profile>/01_build_world_model/world_model;
    built there when missing, one process only)."""
    out: str | None = None
    """Output folder (default runs/<profile>/02_rlvr_world_model/rlvr_job): checkpoints, final/."""
    lora: bool | None = None
    """None: as notebook 02 decides from the world model (every parameter of the from-scratch model,
    LoRA adapters on a pretrained one, `wmkit.rlvr_world.experiment.uses_lora`); True / False forces it."""
    rlvr: Any = None
    """RLVR-World's sizes (notebook 02's at the profile, filled by from_profile)."""
    trl_args: dict = dataclasses.field(default_factory=dict)
    """Any other ``trl.GRPOConfig`` field, passed to TRL as it is: on the command line as ``key=value``
    (``report_to=tensorboard``, ``push_to_hub=true hub_model_id=me/wm``) or ``trl_args.key=value``."""

    trainer_args: ClassVar[str] = "grpo"
    """Unknown ``key=value`` overrides that name a ``trl.GRPOConfig`` field go to ``trl_args``."""

    @classmethod
    def from_profile(cls, profile: str = "auto") -> RLVRJob:
        """Notebook 02's sizes at the profile, without the regime study's (the job trains the text-game arm;
        so ``max_steps=3`` on the command line names one field)."""
        resolved = get_profile(profile)
        return cls(profile=resolved.name, rlvr=dataclasses.replace(rlvr_sizes(resolved), regime=None))


def run_rlvr(config: RLVRJob) -> dict:
    """`wmkit.core.world_model_rl.train_rlvr` on notebook 01's world model; the merged model goes to out/final."""
    # Here, not at the top: wmkit.core imports torch, and --help and --list must not (about 1.5 s).
    from wmkit.core import models
    from wmkit.core import world_model_rl as rl
    from wmkit.core.build import FINAL, ensure_world_model
    from wmkit.rlvr_world.experiment import arm_config, uses_lora

    profile = get_profile(config.profile)  # one clear line for an unknown profile
    processes = process_rank()[1]
    grpo = config.rlvr.grpo
    if grpo.prompts_per_step % processes:
        raise ValueError(f"rlvr.grpo.prompts_per_step {grpo.prompts_per_step} is the global count and must "
                         f"divide by the {processes} processes")
    wm_dir = Path(config.world_model) if config.world_model else (
        default_runs_root() / config.profile / "01_build_world_model" / "world_model")
    if processes > 1 and not (wm_dir / FINAL / "wmkit_info.json").exists():
        raise ValueError(f"no world model in {wm_dir / FINAL}; build it first: wmkit train world-model "
                         f"--profile {config.profile} out={wm_dir}")
    run = ensure_world_model(profile, wm_dir, seed=0)
    train = [t for t in run.splits["train"] if t.env in config.envs]
    out = Path(config.out) if config.out else default_runs_root() / config.profile / "02_rlvr_world_model" / "rlvr_job"
    sizes = dataclasses.replace(config.rlvr, grpo=dataclasses.replace(grpo, prompts_per_step=grpo.prompts_per_step // processes))
    rl_config = arm_config(sizes, out, seed=config.seed, lora=uses_lora(run.info) if config.lora is None else config.lora,
                           trl_args=config.trl_args, show_progress=is_main_process())
    data = rl.rl_transitions(train, rl_config.unchanged_ratio, config.seed)
    result = rl.train_rlvr(run.model, run.tokenizer, data, rl_config)
    fingerprints = rank_fingerprints(result.model)
    if is_main_process():
        models.save_model(result.model, run.tokenizer, out / FINAL)
    rewards = result.curve("reward")
    return {"job": "rlvr", "folder": str(out / FINAL), "processes": processes, "world_model": str(wm_dir),
            "lora": rl_config.lora, "n_train": result.n_train, "steps": result.steps,
            "seconds": round(result.seconds, 2), "rewards": rewards, "rank_fingerprints": fingerprints,
            "ranks_agree": None if None in fingerprints else len(set(fingerprints)) == 1}


@dataclass
class WMR1Job:
    """Notebook 03's experiment for one seed (`wmkit.wm_r1.experiment.run_experiment`): SFT warm start, then
    every arm's GRPO (in the world model or the simulator) and its evaluation in the simulator."""

    profile: str = "cpu"
    """smoke | cpu | gpu (sizes: the profile's ``wm_r1`` section)."""
    seed: int = 0
    """Seed of tasks, warm start and rollouts."""
    arms: tuple[str, ...] | None = None
    """Arms to run (default: the profile's)."""
    model: str | None = None
    """Policy model (default: the profile's from-scratch policy)."""
    out: str | None = None
    """Output folder (default runs/<profile>/03_wm_r1_gui_agent/seed<seed>)."""
    trl_args: dict = dataclasses.field(default_factory=dict)
    """Any other ``trl.GRPOConfig`` field for every arm's GRPO, passed to TRL as it is (``key=value``)."""

    trainer_args: ClassVar[str] = "grpo"
    """Unknown ``key=value`` overrides that name a ``trl.GRPOConfig`` field go to ``trl_args``."""

    @classmethod
    def from_profile(cls, profile: str = "auto") -> WMR1Job:
        return cls(profile=resolve_profile_name(profile))


def run_wm_r1(config: WMR1Job) -> dict:
    """`wmkit.wm_r1.experiment.run_experiment` with these settings; returns its public results."""
    from wmkit.wm_r1 import experiment as wm_r1  # here: it imports torch (not for --help, --list)

    profile = get_profile(config.profile)  # one clear line for an unknown profile
    result = wm_r1.run_experiment(profile, config.seed, out_dir=config.out, model_name=config.model,
                                  arms=config.arms, progress=is_main_process(), trl_args=config.trl_args)
    return {"job": "wm-r1", **wm_r1.public(result)}


register_job("world-model", "wmkit.jobs:WorldModelJob", "wmkit.jobs:run_world_model",
             "notebook 01: collect transitions, train the world model by completion-only SFT (DDP/FSDP-ready)")
register_job("wmrl", "wmkit.jobs:WMRLJob", "wmkit.jobs:run_wmrl",
             "notebook 04: WMRL anchored-debiasing experiments over seeds (numpy; one process)",
             distributed=False)
register_job("rlvr", "wmkit.jobs:RLVRJob", "wmkit.jobs:run_rlvr",
             "notebook 02: GRPO with a verifiable reward on notebook 01's world model (wmkit.rlvr_world, DDP-ready)")
register_job("wm-r1", "wmkit.jobs:WMR1Job", "wmkit.jobs:run_wm_r1",
             "notebook 03: WM-R1 GUI agent, SFT warm start + GRPO arms + simulator evaluation (one process)",
             distributed=False)
