"""How the changed arm's data mix decides what GRPO sharpens: unchanged steps per changed one, on the
validation episodes.

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python tools/explore_video_unchanged_ratio.py --profile cpu --ratios 0 0.25 0.5 1

For every seed of `SELECTION_SEEDS`: the seed's MLE model (`wmkit.video.experiment.prepare_mle`, the
profile's sizes), then one GRPO copy on the changed arm per `rl_unchanged_ratio` (every changed training
transition plus ratio x as many unchanged ones, as many as exist), each measured on the validation
episodes: relative one-step L1 gain on changed and on unchanged steps, relative rollout L1 gain, exact
changed steps, copy rate, agent missing. The reading rule, fixed before the run: a ratio replaces the
profile's only if its relative rollout L1 gain on validation beats the profile's ratio in every seed
and it keeps the agent (`agent_kept`) in every seed; otherwise the curve is a finding, not a change.
One process, one after another; writes tools/regime_results/video_unchanged_ratio_<profile>.json.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace

from wmkit.profiles import get_profile
from wmkit.runs import REPO, jsonable, machine_and_load
from wmkit.stats import differences, summarize
from wmkit.video import experiment as vx


def measure_ratios(profile: str, seed: int, ratios) -> dict:
    """One seed: its MLE model and a changed-arm GRPO copy per ratio, all measured on validation."""
    if any(r < 0 for r in ratios):
        raise ValueError(f"ratios must be at least 0, not {list(ratios)}")
    sizes = get_profile(profile).video
    data, codebook, codes, tokenizer, model, losses, timings = vx.prepare_mle(sizes, seed)
    val = data["val"]
    mle = vx.measure(model, tokenizer, codebook, val, codes["val"], sizes, seed)
    mle["rollout"].pop("frames")
    arms = {}
    with tempfile.TemporaryDirectory() as work:
        for ratio in ratios:
            start = time.perf_counter()
            run_sizes = replace(sizes, rl_unchanged_ratio=ratio)
            rl_model, result = vx.train_rl(model, tokenizer, codebook, data["train"], codes["train"], run_sizes,
                                           seed, f"{work}/ratio{ratio}", "changed")
            measured = vx.measure(rl_model, tokenizer, codebook, val, codes["val"], run_sizes, seed)
            measured["rollout"].pop("frames")
            arms[f"{ratio:g}"] = {**measured, "n_rl_transitions": len(vx.rl_items(data["train"], codes["train"],
                                                                                   run_sizes, seed, "changed")),
                                  "moved": vx.parameters_moved(model, rl_model),
                                  "seconds": round(time.perf_counter() - start, 1)}
            del rl_model
    run = {"seed": seed, "split": "val", "mle": mle, "arms": arms,
           "mle_seconds": {k: round(v, 1) for k, v in timings.items()}}
    run["relative_l1_gain"] = {key: {scope: vx.relative_l1_gain([run], key, scope)[0] for scope in vx.L1_GAIN_SCOPES}
                               for key in arms}
    return run


def summary_table(runs, ratios) -> list[dict]:
    """Per ratio, over seeds: the relative L1 gains and the paired one-step changes against the MLE model."""
    table = []
    for ratio in (f"{r:g}" for r in ratios):
        row = {"ratio": ratio, "n_rl_transitions": [r["arms"][ratio]["n_rl_transitions"] for r in runs]}
        for scope in vx.L1_GAIN_SCOPES:
            row[f"gain_{scope}"] = summarize([r["relative_l1_gain"][ratio][scope] for r in runs])
        for key in ("exact_changed", "exact_unchanged", "copy_rate_changed", "agent_missing"):
            row[f"delta_{key}"] = summarize(differences([r["arms"][ratio]["one_step"][key] for r in runs],
                                                        [r["mle"]["one_step"][key] for r in runs]))
        row["agent_kept"] = vx.agent_kept(runs, ratio) is None
        table.append(row)
    return table


def reading(runs, ratios, default: float) -> str:
    key = f"{default:g}"
    if key not in runs[0]["arms"]:
        return f"the profile's ratio {default:g} was not run: no reading"
    better = [f"{r:g}" for r in ratios if f"{r:g}" != key and vx.agent_kept(runs, f"{r:g}") is None and all(
        run["relative_l1_gain"][f"{r:g}"]["rollout"] > run["relative_l1_gain"][key]["rollout"] for run in runs)]
    if not better:
        return (f"keep {default:g}: no other ratio had a higher validation rollout L1 gain in every seed while "
                "keeping the agent")
    return f"{', '.join(better)} beat {default:g} on validation rollout L1 in every seed and kept the agent"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--ratios", nargs="+", type=float, default=[0.0, 0.25, 0.5, 1.0])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    machine = machine_and_load()
    runs = []
    for seed in vx.SELECTION_SEEDS:
        run = measure_ratios(args.profile, seed, args.ratios)
        runs.append(run)
        for ratio, gain in run["relative_l1_gain"].items():
            one = run["arms"][ratio]["one_step"]
            print(f"seed {seed} ratio {ratio}: rel. L1 gain changed {gain['one_step_changed']:+.3f}, unchanged "
                  f"{gain['one_step_unchanged']:+.3f}, rollout {gain['rollout']:+.3f}; exact changed "
                  f"{one['exact_changed']:.2f}, copy rate {one['copy_rate_changed']:.2f}, agent missing "
                  f"{one['agent_missing']:.2f} ({time.perf_counter() - start:.0f} s)", flush=True)
    default = get_profile(args.profile).video.rl_unchanged_ratio
    out = {"profile": args.profile, "ratios": args.ratios, "seeds": list(vx.SELECTION_SEEDS), "runs": runs,
           "table": summary_table(runs, args.ratios), "reading": reading(runs, args.ratios, default),
           "machine_before": machine, "machine_after": machine_and_load(),
           "seconds": round(time.perf_counter() - start, 1)}
    path = REPO / "tools" / "regime_results" / f"video_unchanged_ratio_{args.profile}.json"
    path.write_text(json.dumps(jsonable(out), indent=1))
    print(out["reading"])
    print(f"wrote {path} ({out['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
