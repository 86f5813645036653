"""Cross-CPU floats: does pinning the CPU kernels make a benchmark seed bit-identical between kernel
sets (and between an AMD and an Intel machine), and what does each setting cost in time?

For each experiment, seed 0 of its shipped cpu record is rerun here by the code of the commit that
made it (a temporary git worktree, as ``bench-rekey`` makes a reference), once per setting below,
each in a fresh process and a fresh runs folder, one torch thread (as the benchmark runs). Each
result is compared bit for bit (``wmkit.bench.rekey.result_differences``: measured time aside)
with the default setting's result here and with the shipped record, made on another CPU.

    PYTHONPATH=$PWD python research/cross_cpu_floats.py                       # every setting, both experiments
    PYTHONPATH=$PWD python research/cross_cpu_floats.py --experiments wmrl_research --settings default pin_avx2
    PYTHONPATH=$PWD python research/cross_cpu_floats.py --report              # the table from the results file

Results: ``research/regime_results/cross_cpu_floats.json`` (one entry per experiment and setting,
kept between invocations: a finished setting is not rerun; ``--repeat`` runs each again for its
time). Runs go to ``runs/cpu/cross_cpu/`` (not in git).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wmkit.bench.rekey import _leaves, made_by, result_differences
from wmkit.bench.runner import cpu_kind, published_dir
from wmkit.runs import REPO, cpu_model

SETTINGS = {
    "default": {},
    "aten_avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "aten_default": {"ATEN_CPU_CAPABILITY": "default"},
    "mkl_cbwr_avx2": {"MKL_CBWR": "AVX2"},
    "mkl_cbwr_compatible": {"MKL_CBWR": "COMPATIBLE"},
    "onednn_avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "deterministic": {"DETERMINISTIC": "1"},
    "pin_avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "pin_compatible": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "pin_portable": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx2_machine": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx2_machine_pin_avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "MKL_CBWR": "AVX2",
                              "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx2_machine_pin_portable": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                                  "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"},
}
"""Environment of each setting (read by torch, MKL and oneDNN when the process starts);
``DETERMINISTIC`` makes the run call ``torch.use_deterministic_algorithms(True)`` first. The
``avx2_machine`` settings stand in for an Intel CPU without AVX-512: every library limited to AVX2
(``MKL_ENABLE_INSTRUCTIONS`` caps what MKL dispatches to), with and without a pin on top, to
compare with the same pin on this AVX-512 machine. ``pin_portable`` is the one pin MKL documents
for non-Intel CPUs too: its CNR branches other than AUTO and COMPATIBLE apply to Intel processors
only (oneMKL Developer Guide, "Specifying Code Branches")."""

PINNED = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")
"""The variables a setting may set: each run starts with none of them from the caller's environment."""

RESULTS = REPO / "research" / "regime_results" / "cross_cpu_floats.json"
MICRO_RESULTS = REPO / "research" / "regime_results" / "cross_cpu_floats_micro.json"

RUN = r"""
import json, sys, time
from pathlib import Path
args = json.loads(sys.argv[1])
import torch
torch.set_num_threads(1)
if args["deterministic"]:
    torch.use_deterministic_algorithms(True)
from wmkit.bench import runner
from wmkit.profiles import get_profile
experiment = runner.EXPERIMENTS[args["experiment"]]
runs_root = Path(args["runs_root"])
start = time.perf_counter()
if experiment.prepare is not None:
    profile = get_profile(args["profile"])
    runner._resolve(experiment.prepare)(profile, runs_root, runner.experiment_sizes(experiment, profile))
prepared = time.perf_counter() - start
cpu = time.process_time()
path, _ = runner.run_one(experiment, args["profile"], args["seed"], runs_root, None, "research/cross_cpu_floats.py")
print("RESULT " + json.dumps({"record": str(path), "prepare_seconds": prepared, "run_cpu_seconds": time.process_time() - cpu,
                              "capability": torch.backends.cpu.get_cpu_capability()}), flush=True)
"""


MICRO = r"""
import hashlib, json, sys, time
import torch
torch.set_num_threads(1)
if sys.argv[1] == "1":
    torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
# the shapes of the kit's tiny models: 64-wide layers, a 128-wide MLP, a 64-token vocabulary
layer = torch.nn.TransformerEncoderLayer(64, 2, 128, dropout=0.0, batch_first=True)
head = torch.nn.Linear(64, 64)
x = torch.randn(8, 32, 64)
digest = hashlib.sha256()
start, cpu = time.perf_counter(), time.process_time()
for step in range(200):
    out = head(layer(x)).log_softmax(-1)
    loss = -out[..., 0].mean()
    loss.backward()
    for p in [*layer.parameters(), *head.parameters()]:
        digest.update(p.grad.numpy().tobytes())
        p.grad = None
print(json.dumps({"digest": digest.hexdigest()[:16], "cpu_seconds": time.process_time() - cpu,
                  "capability": torch.backends.cpu.get_cpu_capability()}))
"""
"""200 forward and backward passes of one transformer layer the size of the kit's tiny models: the
SHA-256 of every gradient's bits, and the CPU time (``--micro``: seconds per setting, no worktree)."""


def micro(settings: list[str], rounds: int = 5) -> dict:
    """Each setting `rounds` times, the settings interleaved round by round (so that the load of a
    shared machine falls on all alike): {setting: digest, kernels, CPU seconds of each round}."""
    out: dict[str, dict] = {}
    for round_ in range(rounds):
        for setting in settings:
            env = {k: v for k, v in os.environ.items() if k not in PINNED}
            env.update({k: v for k, v in SETTINGS[setting].items() if k != "DETERMINISTIC"})
            env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
            run = json.loads(subprocess.run([sys.executable, "-c", MICRO, SETTINGS[setting].get("DETERMINISTIC", "0")],
                                            env=env, capture_output=True, text=True, check=True).stdout)
            entry = out.setdefault(setting, {"digest": run["digest"], "capability": run["capability"],
                                             "cpu_seconds": []})
            assert entry["digest"] == run["digest"], f"{setting} did not repeat"
            entry["cpu_seconds"].append(round(run["cpu_seconds"], 3))
        print(f"round {round_ + 1}/{rounds} done", flush=True)
    base = statistics.median(out["default"]["cpu_seconds"]) if "default" in out else None
    for setting, entry in out.items():
        seconds = statistics.median(entry["cpu_seconds"])
        same = [s for s, e in out.items() if e["digest"] == entry["digest"] and s != setting]
        print(f"{setting:26s} {entry['capability']:8s} {entry['digest']}  CPU s {seconds:.3f}"
              + (f" ({100 * (seconds / base - 1):+.0f}%)" if base else "") + (f"  = {', '.join(same)}" if same else ""))
    return out


def micro_report() -> None:
    """The probe's table (``MICRO_RESULTS``) in markdown."""
    data = json.loads(MICRO_RESULTS.read_text())
    settings = data["settings"]
    base = statistics.median(settings["default"]["cpu_seconds"])
    print(f"machine: {data['machine']['kind']}, torch {data.get('torch')}, {data['steps']} steps, median of "
          f"{len(settings['default']['cpu_seconds'])} runs")
    print("| setting | torch kernels | gradient digest | same digest as | CPU s | vs default |")
    print("|---|---|---|---|---|---|")
    for setting, entry in settings.items():
        seconds = statistics.median(entry["cpu_seconds"])
        same = [s for s, e in settings.items() if e["digest"] == entry["digest"] and s != setting]
        print(f"| {setting} | {entry['capability']} | `{entry['digest']}` | {', '.join(same) or '—'} | "
              f"{seconds:.3f} | {100 * (seconds / base - 1):+.0f}% |")


def shipped_record(experiment: str, seed: int) -> tuple[Path, dict]:
    folder = published_dir("cpu", REPO) / "bench" / "records" / experiment
    paths = sorted(folder.glob(f"seed{seed}_*.json"))
    if not paths:
        raise SystemExit(f"no shipped cpu record of {experiment} seed {seed} in {folder}")
    return paths[0], json.loads(paths[0].read_text())


def run_setting(worktree: Path, experiment: str, seed: int, setting: str, runs_root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PINNED}
    env.update({k: v for k, v in SETTINGS[setting].items() if k != "DETERMINISTIC"})
    env.update({"PYTHONPATH": str(worktree), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    args = json.dumps({"experiment": experiment, "profile": "cpu", "seed": seed, "runs_root": str(runs_root),
                       "deterministic": bool(SETTINGS[setting].get("DETERMINISTIC"))})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.run([sys.executable, "-c", RUN, args], cwd=worktree, env=env, capture_output=True, text=True,
                             check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((l for l in process.stdout.splitlines() if l.startswith("RESULT ")), None)
    if process.returncode or line is None:
        raise SystemExit(f"{experiment} / {setting} failed:\n{process.stdout[-3000:]}\n{process.stderr[-3000:]}")
    out = json.loads(line[len("RESULT "):])
    record = json.loads(Path(out["record"]).read_text())
    return {"record": out["record"], "capability": out["capability"], "prepare_seconds": round(out["prepare_seconds"], 2),
            "run_seconds": record["wall_seconds"], "run_cpu_seconds": round(out["run_cpu_seconds"], 2),
            "process_wall_seconds": round(wall, 2),
            "process_cpu_seconds": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 2),
            "load_after": os.getloadavg()[0], "result": record["result"]}


def load() -> dict:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {"machine": {}, "experiments": {}}


def save(data: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=1, sort_keys=True))


def measure(experiments: list[str], settings: list[str], seed: int, repeat: bool) -> None:
    data = load()
    data["machine"] = {**cpu_model(), "kind": cpu_kind(cpu_model()), "cpus": os.cpu_count()}
    for name in experiments:
        path, shipped = shipped_record(name, seed)
        commit, _ = made_by(shipped)
        entry = data["experiments"].setdefault(name, {"settings": {}})
        entry.update({"seed": seed, "shipped_record": path.name, "shipped_cpu": cpu_kind(shipped.get("cpu")),
                      "commit": commit, "shipped_run_seconds": shipped["wall_seconds"]})
        todo = [s for s in settings if repeat or s not in entry["settings"]]
        if not todo:
            continue
        folder = Path(tempfile.mkdtemp(prefix="wmkit-cross-cpu-"))
        worktree = folder / "checkout"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), commit], cwd=REPO, check=True,
                       capture_output=True)
        try:
            for setting in todo:
                runs_root = REPO / "runs" / "cpu" / "cross_cpu" / name / setting
                shutil.rmtree(runs_root, ignore_errors=True)  # every setting builds what it uses itself
                print(f"{name} seed {seed}, {setting} {SETTINGS[setting] or '(nothing pinned)'} ...", flush=True)
                run = {**run_setting(worktree, name, seed, setting, runs_root), "commit": commit}
                old = entry["settings"].get(setting)
                if old is not None and repeat:
                    run["earlier_times"] = [*old.get("earlier_times", []), old["run_cpu_seconds"]]
                    assert result_differences({"result": old["result"]}, run)[0] == 0, f"{setting} did not repeat"
                entry["settings"][setting] = run
                save(data)
                print(f"  {run['capability']}, run {run['run_seconds']:.1f} s wall, {run['run_cpu_seconds']:.1f} s CPU "
                      f"(load {run['load_after']:.1f})", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, capture_output=True,
                           check=False)
            shutil.rmtree(folder, ignore_errors=True)
    report(data)


def report(data: dict | None = None) -> None:
    data = data or load()
    print(f"machine: {data['machine'].get('kind')}, {data['machine'].get('cpus')} CPUs; one torch thread per run")
    for name, entry in data["experiments"].items():
        settings = entry["settings"]
        if not settings:
            continue
        shipped = shipped_record(name, entry["seed"])[1]  # today's file of that record (a carry renames it)
        base = settings.get("default")
        print(f"\n{name} seed {entry['seed']} (code of commit {entry['commit'][:12]}; shipped record made on "
              f"{entry['shipped_cpu']}, {entry['shipped_run_seconds']:.0f} s)\n")
        print("| setting | torch kernels | = default here | = shipped record | run CPU s (median) | vs default |")
        print("|---|---|---|---|---|---|")
        base_time = statistics.median([base["run_cpu_seconds"], *base.get("earlier_times", [])]) if base else None
        classes: list[tuple[dict, list[str]]] = []  # (a result, the settings that gave exactly it)
        for setting, run in sorted(settings.items(), key=lambda item: list(SETTINGS).index(item[0])):
            seconds = statistics.median([run["run_cpu_seconds"], *run.get("earlier_times", [])])
            cost = f"{100 * (seconds / base_time - 1):+.0f}%" if base_time else "—"
            print(f"| {setting} | {run['capability']} | {'—' if base is None else _same(base, run)} | "
                  f"{_same(shipped, run)} | {seconds:.1f} | {cost} |")
            match = next((names for result, names in classes if result_differences(result, run)[0] == 0), None)
            if match is None:
                classes.append((run, [setting]))
            else:
                match.append(setting)
        print("\nidentical results: " + "; ".join("{" + ", ".join(names) + "}" for _, names in classes))


def _same(a: dict, b: dict) -> str:
    n, first = result_differences(a, b, limit=1)
    total = len(_leaves(b.get("result")))
    return "yes" if n == 0 else f"no ({n} of {total} fields, e.g. {first[0].split(':')[0]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiments", nargs="+", default=["wmrl_research", "rlvr_video"])
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", action="store_true", help="run finished settings again (for their time)")
    parser.add_argument("--report", action="store_true", help="print the table from the results file; run nothing")
    parser.add_argument("--micro", action="store_true",
                        help="only the transformer-layer probe (MICRO), every setting 5 times interleaved; minutes")
    args = parser.parse_args()
    if args.micro:
        import torch  # here: the measuring runs happen in subprocesses; this only names the version

        MICRO_RESULTS.write_text(json.dumps({"machine": {**cpu_model(), "kind": cpu_kind(cpu_model())},
                                             "torch": torch.__version__, "python": sys.version.split()[0],
                                             "steps": 200, "settings": micro(args.settings)}, indent=1))
    elif args.report:
        report()
        if MICRO_RESULTS.exists():
            print()
            micro_report()
    else:
        measure(args.experiments, args.settings, args.seed, args.repeat)


if __name__ == "__main__":
    main()
