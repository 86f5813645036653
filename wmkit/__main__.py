"""Command line: the same library calls the notebooks make.

    python -m wmkit reproduce --profile smoke     run every notebook with papermill
    python -m wmkit run <paper> --profile cpu     one paper's experiment over seeds, as JSON
                                                  (<paper>: rlvr-world, rwml, wm-r1, wmrl, rlvr-video)
    python -m wmkit data [--out data]             regenerate the shipped datasets
    python -m wmkit world-model --profile cpu     build notebook 01's world model
    python -m wmkit train --list                  training jobs (also: accelerate launch -m wmkit train ...)
    python -m wmkit bench --profile cpu           the papers' claims over each experiment's declared seeds
                                                  (notebook 05's table), resumable
    python -m wmkit bench --profile cpu --publish the published report from the shipped records (runs nothing)
    python -m wmkit bench-rekey --profile cpu     carry records to their experiments' new keys, on evidence
    python -m wmkit readme [--check]              README.md's generated blocks (results, notebook times)
    python -m wmkit gpu-check [--cpu-dry-run]     GRPO speed and memory on one GPU (offline, minutes), as JSON
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import signal
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from wmkit import __version__, experiments
from wmkit.bench.readme import add_readme_parser, readme_main
from wmkit.bench.rekey import add_rekey_parser, rekey_main
from wmkit.bench.runner import PROFILE_HELP, add_bench_parser, bench_main
from wmkit.bench.verify import verify_main
from wmkit.envs import import_modules
from wmkit.experiments import COMMANDS, REGISTRY
from wmkit.jobs import add_train_parser, registered_envs, train_main
from wmkit.profiles import NOTEBOOK_TIME_TARGETS_MINUTES as TIME_TARGETS_MINUTES
from wmkit.profiles import PROFILES, check_seed, get_profile, resolve_profile_name
from wmkit.runs import checkout, default_runs_root, make_folder, needs_checkout, needs_module
from wmkit.video.config import video_sizes
from wmkit.video.experiment import make_data
from wmkit.video.frames import write_trajectories


def write_data(out: Path, episodes: int | None = None, seed: int | None = None) -> list[Path]:
    """Write data/<env>_<split>.jsonl (keys sorted) and SHA256SUMS; byte-identical on rerun.
    Episodes and seed default to the profiles' ``data`` section."""
    # Here, not at the top: wmkit.core imports torch, and `python -m wmkit --help` must not (about 2 s).
    from wmkit.core.build import DEFAULT_ENVS
    from wmkit.core.worldmodel import collect_transitions, split_by_episode, write_jsonl

    data = PROFILES["smoke"].data
    episodes = data.episodes if episodes is None else episodes
    seed = data.seed if seed is None else seed
    out.mkdir(parents=True, exist_ok=True)
    # The same call as the smoke profile's data, so data/ holds exactly those transitions.
    splits = split_by_episode(collect_transitions(DEFAULT_ENVS, episodes, seed))
    written = []
    for env in DEFAULT_ENVS:
        for name, items in splits.items():
            written.append(write_jsonl([t for t in items if t.env == env], out / f"{env}_{name}.jsonl"))
    written += write_video_data(out)
    sums = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(written))
    (out / "SHA256SUMS").write_text(sums)
    return written


def write_video_data(out: Path) -> list[Path]:
    """data/minigrid_<split>.jsonl: notebook 06's smoke-profile MiniGrid episodes as seeds and actions,
    with the SHA-256 of the frames each replay must give (`wmkit.video.frames.write_trajectories`)."""
    return [write_trajectories(t, out / f"minigrid_{name}.jsonl")
            for name, t in make_data(video_sizes(PROFILES["smoke"])).items()]


def notebooks() -> list[Path]:
    """The repository's notebooks, in order (a ValueError in one line for an installed kit, which has none)."""
    return sorted((needs_checkout("wmkit reproduce") / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@functools.cache
def this_interpreters_kernel() -> str:
    """The kernel name the notebooks ask for, `python3`, made to mean this interpreter.

    The notebooks, Colab and JupyterLab all say `python3`; a `python3` kernelspec found first on the
    Jupyter path (one installed --user for another Python, say) would run the notebooks in another
    environment. So a `python3` spec for sys.executable is written to a folder put first on
    JUPYTER_PATH, for this process and the kernels it starts."""
    from ipykernel.kernelspec import write_kernel_spec

    folder = Path(tempfile.mkdtemp(prefix="wmkit-kernel-"))
    write_kernel_spec(folder / "kernels" / "python3")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(folder), os.environ.get("JUPYTER_PATH")) if p)
    return "python3"


def expected_seconds(names: list[str], profile: str, previous: dict) -> dict[str, float | None]:
    """Each notebook's expected wall time: its last run at this profile (results.json), else the
    profile's time target, else None (gpu: never measured)."""
    targets = TIME_TARGETS_MINUTES.get(profile, {})
    found = {}
    for name in names:
        last = previous.get(name, {}).get("wall_seconds") if isinstance(previous.get(name), dict) else None
        target = targets.get(name[:2])
        found[name] = float(last) if last else (60.0 * target if target else None)
    return found


class NotebooksFailed(RuntimeError):
    """Raised by :func:`reproduce` after the whole series ran, when some notebooks failed;
    its message is one line per failed notebook."""


def failure_line(name: str, err: Exception, partial: Path) -> str:
    """One line for a notebook that failed: its name, the cell, the error's last line, the partial
    notebook's path (papermill's own report is a 40-line traceback a reader cannot act on)."""
    cell = getattr(err, "exec_count", None)
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    last = f"{ename}: {evalue}" if ename else (str(err).strip().splitlines() or [type(err).__name__])[-1]
    return f"{name}: failed at cell {cell if cell is not None else '?'}: {last.strip()} (partial notebook: {partial})"


def reproduce(profile: str, only: list[str] | None = None, out_root: Path | None = None,
              parameters: dict | None = None) -> Path:
    """Execute the notebooks in order; executed copies, figures and results.json go to runs/<profile>/.

    A notebook that fails is reported in one line and the series goes on; at the end
    :class:`NotebooksFailed` lists the failures (the command then exits non-zero). `parameters`:
    extra notebook parameters, given to every notebook that declares them."""
    chosen = notebooks()
    pm = needs_module("papermill", "wmkit reproduce")
    needs_module("ipykernel", "wmkit reproduce")
    # Here, not at the top: papermill (with wmkit.reproduce_progress) takes about 2.5 s to import, and
    # `python -m wmkit --help` must not pay it.
    from wmkit.reproduce_progress import SeriesProgress, WatchedEngine

    name = resolve_profile_name(profile)
    if only is not None:
        names = ", ".join(nb.name[:2] for nb in chosen)
        if not only or any(not str(o).strip() for o in only):
            raise ValueError(f"--only needs notebook numbers, e.g. --only 01 02; choose among {names}")
        unknown = [o for o in only if not any(nb.name.startswith(o) for nb in chosen)]
        if unknown:
            raise ValueError(f"--only {' '.join(unknown)}: no such notebook; choose among {names}")
        chosen = [nb for nb in chosen if any(nb.name.startswith(o) for o in only)]
    out_root = Path(out_root) if out_root else default_runs_root() / name
    out_root.mkdir(parents=True, exist_ok=True)
    combined_file = out_root / "results.json"
    # --only reruns some notebooks: the entries of the others stay (they are still on disk).
    combined: dict = {"profile": name, "notebooks": {}}
    if combined_file.exists():
        try:
            previous = json.loads(combined_file.read_text())
        except ValueError:
            previous = {}
        if previous.get("profile") == name and isinstance(previous.get("notebooks"), dict):
            combined["notebooks"] = previous["notebooks"]
    progress = SeriesProgress(expected_seconds([nb.stem for nb in chosen], name, combined["notebooks"]))
    WatchedEngine.progress = progress
    kernel = this_interpreters_kernel()
    failures = []
    for nb in chosen:
        out_dir = out_root / nb.stem
        progress.begin(nb.stem, len(json.loads(nb.read_text())["cells"]) + 1)  # + papermill's parameters cell
        start = time.perf_counter()
        declared = pm.inspect_notebook(str(nb)) if parameters else {}
        extra = {k: v for k, v in (parameters or {}).items() if k in declared}
        error = None
        try:
            # The kernel's own log (a warning that it listens on TCP) is nothing a reader can act on.
            pm.execute_notebook(str(nb), str(out_root / nb.name), cwd=str(nb.parent), kernel_name=kernel,
                                parameters={"PROFILE": name, "OUTPUT_DIR": str(out_dir), "RUNS_DIR": str(out_root),
                                            **extra},
                                engine_name="wmkit", progress_bar=False, log_output=False,
                                extra_arguments=["--IPKernelApp.log_level=ERROR"])
        except KeyboardInterrupt:
            raise
        except Exception as err:  # noqa: BLE001 -- any failure of one notebook: report it, run the next
            error = failure_line(nb.stem, err, out_root / nb.name)
            failures.append(error)
        seconds = time.perf_counter() - start
        results_file = out_dir / "results.json"
        if error:
            entry = {"error": error}
        else:
            entry = json.loads(results_file.read_text()) if results_file.exists() else {"error": "no results.json"}
        entry["wall_seconds"] = round(seconds, 1)
        combined["notebooks"][nb.stem] = entry
        progress.end(seconds)
        if error:
            print(error, file=sys.stderr, flush=True)
    combined["notebooks"] = dict(sorted(combined["notebooks"].items()))
    combined_file.write_text(json.dumps(combined, indent=1))
    print(f"Combined results: {combined_file}")
    if failures:
        raise NotebooksFailed("\n".join(failures))
    return out_root


def run_paper(args) -> int:
    """``python -m wmkit run <paper>``: the paper's entry of :data:`wmkit.experiments.REGISTRY` over
    seeds (:func:`wmkit.experiments.run_over_seeds`), at the profile's sizes, with the options given."""
    experiments.get(args.paper)  # an unknown paper: one line that lists them, before anything else
    profile = get_profile(args.profile)  # resolved once ('auto' -> gpu / cpu); passed down as a Profile
    given = {name: value for name, value in vars(args).items()
             if name not in ("command", "paper", "profile", "seeds", "out") and value not in (None, False)}
    experiments.run_over_seeds(args.paper, profile, args.seeds, args.out, **given)
    return 0


def add_run_parser(sub) -> None:
    """``run``: the registry's commands, and each one's options (an option several share, once)."""
    names = ", ".join(COMMANDS)
    p = sub.add_parser("run", help=f"one paper's experiment over seeds, as JSON ({names})",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="One paper's experiment over seeds, at the profile's sizes, as JSON under "
                                   "runs/<profile>/\n(resumable: finished seeds are kept). Papers:\n"
                                   + "".join(f"  {c:11s} {REGISTRY[n].description}\n" for c, n in COMMANDS.items()))
    p.add_argument("paper", help=" | ".join(COMMANDS))
    p.add_argument("--profile", default="auto", help=PROFILE_HELP)
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    p.add_argument("--out", default=None, help="JSON file (default runs/<profile>/<entry>.json: "
                   + ", ".join(f"{c}: {REGISTRY[n].out_name if isinstance(REGISTRY[n].out_name, str) and ':' not in REGISTRY[n].out_name else n + '.json'}"
                               for c, n in COMMANDS.items()) + ")")
    users: dict[str, list[str]] = {}
    for command, name in COMMANDS.items():
        for option in REGISTRY[name].options:
            users.setdefault(option.flag, []).append(command)
    added = set()
    for command, name in COMMANDS.items():
        group = None
        for option in REGISTRY[name].options:
            if option.flag in added:
                continue
            group = group or p.add_argument_group(command)
            shared = users[option.flag]
            option = option if len(shared) == 1 else dataclasses.replace(
                option, help=f"{', '.join(shared)}: {option.help}")
            option.add_to(group)
            added.add(option.flag)


def checked_envs(envs: list[str] | None, imports: list[str]) -> tuple[str, ...] | None:
    """Import each module of `imports` (one that registers an environment: ``--import my_envs`` or
    ``--import path/to/my_envs.py``; `wmkit.envs.import_modules`), then check that every name of
    `envs` is registered; a ValueError names what is wrong. Returns `envs` as registered (None: the
    command's default)."""
    import_modules(imports)
    if envs is None:
        return None
    return tuple(registered_envs(envs, "--envs", bool(imports)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wmkit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"wmkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("reproduce", help="run every notebook with papermill")
    p.add_argument("--profile", default="auto", help=PROFILE_HELP)
    p.add_argument("--only", nargs="*", help="notebook name prefixes, e.g. 01 02")
    add_run_parser(sub)
    p = sub.add_parser("data", help="regenerate the shipped datasets in data/")
    p.add_argument("--out", default=str((checkout() or Path.cwd()) / "data"),
                   help="default: the checkout's data/ (an installed kit: ./data)")
    p = sub.add_parser("world-model", help="build notebook 01's world model")
    p.add_argument("--profile", default="auto", help=PROFILE_HELP)
    p.add_argument("--seed", type=int, default=0, help="default 0")
    p.add_argument("--out", default=None, help="default runs/<profile>/01_build_world_model/world_model")
    p.add_argument("--model", default=None,
                   help="default: the profile's (tiny, built from scratch, at smoke and cpu); or smollm2, "
                        "a saved model's folder, a hub id")
    p.add_argument("--envs", nargs="+", default=None,
                   help="registered environments to collect and model (default: the kit's text game and phone)")
    p.add_argument("--import", dest="imports", nargs="+", default=[], metavar="MODULE_OR_PATH",
                   help="modules to import first (a module name, found from the current folder or the Python "
                        "path, or a .py file): one that registers your environment "
                        "(tutorials/bring_your_own_env.md)")
    add_train_parser(sub)
    add_bench_parser(sub)
    add_rekey_parser(sub)
    add_readme_parser(sub)
    add_gpu_check_parser(sub)
    args = parser.parse_args(argv)
    try:
        if args.command == "reproduce":
            try:
                reproduce(args.profile, args.only)
            except NotebooksFailed as failed:
                count = len(str(failed).splitlines())
                print(f"wmkit: {count} notebook(s) failed (each named above); the others ran", file=sys.stderr)
                return 1
        elif args.command == "run":
            return run_paper(args)
        elif args.command == "data":
            for path in write_data(make_folder(args.out, "--out folder")):
                print(path)
        elif args.command == "world-model":
            from wmkit.core.build import build_world_model  # here: wmkit.core imports torch (not for --help)

            check_seed(args.seed, "--seed")
            profile = get_profile(args.profile)
            envs = checked_envs(args.envs, args.imports)
            out = make_folder(args.out or default_runs_root() / profile.name / "01_build_world_model" / "world_model",
                              "--out folder")
            run = build_world_model(profile, out, seed=args.seed, model=args.model,
                                    **({"envs": envs} if envs else {}))
            print(json.dumps(run.info, indent=1))
        elif args.command == "train":
            return train_main(args)
        elif args.command == "bench":
            return verify_main(args) if args.verify else bench_main(args)
        elif args.command == "bench-rekey":
            return rekey_main(args)
        elif args.command == "readme":
            return readme_main(args)
        elif args.command == "gpu-check":
            return gpu_check_main(args)
    except KeyboardInterrupt:
        return interrupted()
    except Exception as err:
        from wmkit.core.models import ModelUnavailableError  # here: wmkit.core imports torch (not for --help)

        # Bad parameters, a model out of reach, a path the OS refuses: one clear line, no traceback.
        if isinstance(err, (ValueError, TypeError, ModelUnavailableError, OSError)):
            print(f"wmkit: error: {err}", file=sys.stderr)
            return 2
        raise
    return 0


def add_gpu_check_parser(sub) -> None:
    # Names spelled out here: importing wmkit.gpucheck (torch) would slow down every --help.
    p = sub.add_parser("gpu-check", help="GRPO step time, tokens/s and peak memory on one GPU (offline), as JSON",
                       description="Random-weight Qwen2.5-shaped policies (0.5B..7B), LoRA on 16-bit weights vs "
                                   "QLoRA on NF4, G=8, prompt 256 / completion 128 tokens; plus one world-model "
                                   "SFT, RLVR and WM-R1 step of the gpu profile. Out of memory is a row, not a "
                                   "crash. Downloads nothing.")
    p.add_argument("--cpu-dry-run", action="store_true",
                   help="the same code on tiny shapes and the smoke profile, on the CPU (under a minute)")
    p.add_argument("--out", default=None, help="JSON file (default runs/gpu_check/gpu_check.json)")
    p.add_argument("--policies", nargs="*", default=None, metavar="SHAPE",
                   help="shapes to measure (default: Qwen2.5-0.5B Qwen2.5-1.5B Qwen2.5-3B Qwen2.5-7B; "
                        "also tiny-qwen2)")
    p.add_argument("--modes", nargs="*", default=None, choices=("lora", "qlora"), help="lora and/or qlora (default both)")
    p.add_argument("--no-profile-steps", action="store_true", help="skip the gpu profile's SFT / RLVR / WM-R1 steps")
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds after which rows not started are skipped (default 420)")


def gpu_check_main(args) -> int:
    from wmkit.gpucheck import GPUCheckSettings, run_gpu_check  # here: it imports torch (not for --help)

    settings = GPUCheckSettings.cpu_dry_run() if args.cpu_dry_run else GPUCheckSettings()
    changes = {"policies": tuple(args.policies) if args.policies else None,
               "modes": tuple(args.modes) if args.modes else None,
               "time_budget_s": args.time_budget, "profile_steps": False if args.no_profile_steps else None}
    settings = replace(settings, **{k: v for k, v in changes.items() if v is not None})
    report = run_gpu_check(settings, args.out)
    # An out-of-memory or skipped row is a measurement; an error is not: the command then fails.
    errors = [row["name"] for row in report["policies"] + report["profile_steps"] if row["status"].startswith("error")]
    if errors:
        print(f"wmkit: gpu-check: {len(errors)} row(s) ended in an error: {', '.join(errors)}", file=sys.stderr)
        return 1
    return 0


def interrupted() -> int:
    """Ctrl-C: one line on stderr and status 130, nothing else.

    The work already done is on disk (checkpoints, the benchmark's per-run JSON), so the same
    command resumes. Further Ctrl-C are ignored, and the process ends at once (os._exit) so that
    threads and exit handlers still running (py4j gateways, half-written pipes) print no tracebacks.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 -- a closed pipe: nothing to flush
            pass
    try:
        print("wmkit: interrupted; rerun the same command to resume", file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001
        pass
    os._exit(130)
    return 130  # only where os._exit is replaced (tests)


if __name__ == "__main__":
    sys.exit(main())
