"""Choose notebook 06's GRPO reward and learning rate on the validation episodes.

    PYTHONPATH=$PWD python research/select_video_settings.py --profile cpu

Runs `wmkit.video.experiment.run_selection_job` for every seed of `SELECTION_SEEDS` and reward of
`SELECTION_REWARDS` (two processes at a time, one torch thread each), scores every (reward,
learning rate) by `choose_setting`'s rule -- fixed before the run -- and writes the raw rows and
the choice to research/regime_results/video_selection_<profile>.json. ``--rewards l1_agent --reuse
FILE`` runs only the named rewards and scores them beside the other rewards' jobs from an earlier
round's FILE (same seeds; `merge_selection_jobs` checks both rounds trained the same MLE models).
With ``--workers 1`` the jobs run here, one after another (set OMP_NUM_THREADS=1 for one torch
thread, as each worker of a parallel round has). Every number is measured on
validation episodes; the test episodes are measured only with the chosen setting (notebook 06 and
the benchmark's rlvr_video experiment).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from wmkit.core.parallel import run_jobs
from wmkit.profiles import get_profile
from wmkit.runs import REPO, default_runs_root, jsonable, machine_and_load
from wmkit.video import experiment as vx


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rewards", nargs="+", default=list(vx.SELECTION_REWARDS), choices=vx.SELECTION_REWARDS)
    parser.add_argument("--learning-rates", nargs="+", type=float, default=list(vx.SELECTION_LEARNING_RATES))
    parser.add_argument("--reuse", default=None, help="an earlier round's JSON: its jobs of the rewards not rerun")
    parser.add_argument("--out", default=None, help="default research/regime_results/video_selection_<profile>.json")
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)
    work = default_runs_root() / profile.name / "06_selection"
    jobs = [(vx.run_selection_job, {"profile": profile, "seed": seed, "reward": reward, "out_dir": str(work),
                                    "learning_rates": args.learning_rates})
            for seed in vx.SELECTION_SEEDS for reward in args.rewards]
    start = time.perf_counter()

    def done(i, job):
        print(f"seed {job['seed']} reward {job['reward']}: done ({time.perf_counter() - start:.0f} s since start)",
              flush=True)

    results = run_jobs(jobs, workers=args.workers, on_done=done)
    out = Path(args.out) if args.out else REPO / "research" / "regime_results" / f"video_selection_{profile.name}.json"
    # This round's jobs on their own first, so a failed merge below loses no measurement.
    work.mkdir(parents=True, exist_ok=True)
    (work / "this_round.json").write_text(json.dumps(jsonable(results), indent=1))
    fresh = [(job["seed"], job["reward"]) for job in results]
    earlier = None
    if args.reuse:
        earlier = json.loads(Path(args.reuse).read_text())
        results = vx.merge_selection_jobs(results, earlier["jobs"])
    table = vx.selection_table(results)
    choice = vx.choose_setting(table)
    for row in table:
        print(f"{row['reward']:8s} lr {row['learning_rate']:.0e}: mean relative rollout L1 gain "
              f"{row['mean_gain']:+.3f}, agent kept {row['agent_kept']}; per seed/arm "
              + ", ".join(f"{k} {v:+.3f}" for k, v in row["gains"].items()))
    print("chosen:", choice)
    out.write_text(json.dumps(jsonable({
        "profile": profile.name, "seeds": list(vx.SELECTION_SEEDS),
        "rewards": sorted({job["reward"] for job in results}), "rerun_here": fresh,
        "reused_from_earlier_round": None if earlier is None else {
            "seconds": earlier.get("seconds"), "workers": earlier.get("workers"), "machine": earlier.get("machine"),
            "rerun_there": earlier.get("rerun_here"), "before_that": earlier.get("reused_from_earlier_round")},
        "learning_rates": sorted({s["learning_rate"] for job in results for s in job["settings"]}),
        "split": "val", "table": table, "choice": choice,
        "jobs": results, "seconds": round(time.perf_counter() - start, 1), "workers": args.workers,
        "torch_threads": _torch_threads(),
        "machine": machine_and_load()}), indent=1))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
