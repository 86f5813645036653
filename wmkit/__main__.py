"""Command line: the same library calls the notebooks make.

    python -m wmkit reproduce --profile smoke     run every notebook with papermill
    python -m wmkit data [--out data]             regenerate the shipped datasets
    python -m wmkit world-model --profile cpu     build notebook 01's world model
    python -m wmkit train --list                  training jobs (also: accelerate launch -m wmkit train ...)
    python -m wmkit bench --profile cpu --seeds 3 the papers' claims over seeds (notebook 05), resumable
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA_EPISODES = 60  # episodes per environment in the shipped data/ copy (the smoke size)
DATA_SEED = 0


def write_data(out: Path, episodes: int = DATA_EPISODES, seed: int = DATA_SEED) -> list[Path]:
    """Write data/<env>_<split>.jsonl (keys sorted) and SHA256SUMS; byte-identical on rerun."""
    from wmkit.core.build import DEFAULT_ENVS
    from wmkit.core.worldmodel import collect_transitions, split_by_episode, write_jsonl

    out.mkdir(parents=True, exist_ok=True)
    # The same call as the smoke profile's data, so data/ holds exactly those transitions.
    splits = split_by_episode(collect_transitions(DEFAULT_ENVS, episodes, seed))
    written = []
    for env in DEFAULT_ENVS:
        for name, items in splits.items():
            written.append(write_jsonl([t for t in items if t.env == env], out / f"{env}_{name}.jsonl"))
    sums = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(written))
    (out / "SHA256SUMS").write_text(sums)
    return written


def notebooks() -> list[Path]:
    return sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def kernel_name() -> str:
    """The kit's registered kernel when present (make setup registers it), else python3."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        return "wmkit" if "wmkit" in KernelSpecManager().find_kernel_specs() else "python3"
    except Exception:  # noqa: BLE001
        return "python3"


def reproduce(profile: str, only: list[str] | None = None, out_root: Path | None = None) -> Path:
    """Execute the notebooks in order; executed copies, figures and results.json go to runs/<profile>/."""
    import papermill as pm

    from wmkit.profiles import resolve_profile_name

    name = resolve_profile_name(profile)
    out_root = out_root or REPO / "runs" / name
    out_root.mkdir(parents=True, exist_ok=True)
    combined: dict = {"profile": name, "notebooks": {}}
    for nb in notebooks():
        if only and not any(nb.name.startswith(o) for o in only):
            continue
        out_dir = out_root / nb.stem
        print(f"== {nb.name} (profile {name}) -> {out_dir}", flush=True)
        start = time.perf_counter()
        pm.execute_notebook(str(nb), str(out_root / nb.name), cwd=str(nb.parent), kernel_name=kernel_name(),
                            parameters={"PROFILE": name, "OUTPUT_DIR": str(out_dir), "RUNS_DIR": str(out_root)},
                            progress_bar=True, log_output=False)
        seconds = time.perf_counter() - start
        results_file = out_dir / "results.json"
        entry = json.loads(results_file.read_text()) if results_file.exists() else {"error": "no results.json"}
        entry["wall_seconds"] = round(seconds, 1)
        combined["notebooks"][nb.stem] = entry
        print(f"   done in {seconds:.0f} s", flush=True)
    (out_root / "results.json").write_text(json.dumps(combined, indent=1))
    print(f"Combined results: {out_root / 'results.json'}")
    return out_root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wmkit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("reproduce", help="run every notebook with papermill")
    p.add_argument("--profile", default="auto")
    p.add_argument("--only", nargs="*", help="notebook name prefixes, e.g. 01 02")
    p = sub.add_parser("data", help="regenerate the shipped datasets in data/")
    p.add_argument("--out", default=str(REPO / "data"))
    p = sub.add_parser("world-model", help="build notebook 01's world model")
    p.add_argument("--profile", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="default runs/<profile>/01_build_world_model/world_model")
    p.add_argument("--model", default=None)
    from wmkit.jobs import add_train_parser, train_main

    add_train_parser(sub)
    from wmkit.bench.runner import add_bench_parser

    add_bench_parser(sub)
    args = parser.parse_args(argv)
    try:
        if args.command == "reproduce":
            reproduce(args.profile, args.only)
        elif args.command == "data":
            for path in write_data(Path(args.out)):
                print(path)
        elif args.command == "world-model":
            from wmkit.core.build import build_world_model
            from wmkit.profiles import resolve_profile_name

            name = resolve_profile_name(args.profile)
            out = args.out or REPO / "runs" / name / "01_build_world_model" / "world_model"
            run = build_world_model(name, out, seed=args.seed, model=args.model)
            print(json.dumps(run.info, indent=1))
        elif args.command == "train":
            return train_main(args)
        elif args.command == "bench":
            from wmkit.bench.runner import bench_main

            return bench_main(args)
    except (ValueError, TypeError) as err:  # bad parameters: one clear line, no traceback
        print(f"wmkit: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
