"""Compare notebook 06's MLE epochs on the validation episodes (the MLE model alone, no RL).

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python research/compare_video_mle_epochs.py --profile cpu --epochs 8 12 16

For every seed of `SELECTION_SEEDS` and every epoch count: train the seed's MLE model with that many
epochs (`wmkit.video.experiment.prepare_mle`) and measure it on the validation episodes (one-step and
rollout: L1, the copy rate of changed steps, exact changed steps, agent missing). The reading rule,
fixed before the run: the profile's count stays unless another one has a lower rollout L1 on
validation in every seed; a change would also need the RL settings chosen again, since GRPO starts
from this model. One process, one after another; writes
research/regime_results/video_mle_epochs_<profile>.json.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from wmkit.profiles import Profile, get_profile
from wmkit.video.config import video_sizes
from wmkit.runs import REPO, jsonable, machine_and_load
from wmkit.video import experiment as vx


def measure_epochs(profile: Profile, seed: int, epochs: float) -> dict:
    """One seed's MLE model at `epochs`, measured on the validation episodes."""
    if epochs <= 0:
        raise ValueError(f"epochs must be positive, not {epochs}")
    sizes = replace(video_sizes(profile), mle_epochs=epochs)
    data, codebook, codes, tokenizer, model, losses, timings = vx.prepare_mle(sizes, seed)
    measured = vx.measure(model, tokenizer, codebook, data["val"], codes["val"], sizes, seed)
    measured["rollout"].pop("frames")
    return {"seed": seed, "epochs": epochs, "split": "val", "mle_loss_last": losses[-1], **measured,
            "seconds": {k: round(v, 1) for k, v in timings.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--epochs", nargs="+", type=float, default=[8.0, 12.0, 16.0])
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)
    start = time.perf_counter()
    rows = []
    for seed in vx.SELECTION_SEEDS:
        for epochs in args.epochs:
            row = measure_epochs(profile, seed, epochs)
            rows.append(row)
            print(f"seed {seed} epochs {epochs:g}: rollout L1 {row['rollout']['mean']['l1']:.5f}, one-step L1 "
                  f"{row['one_step']['greedy']['l1']:.5f}, copy rate (changed) {row['one_step']['copy_rate_changed']:.2f}, "
                  f"exact changed {row['one_step']['exact_changed']:.2f}, agent missing "
                  f"{row['one_step']['agent_missing']:.2f} ({time.perf_counter() - start:.0f} s)", flush=True)
    default = video_sizes(profile).mle_epochs
    best_everywhere = [e for e in args.epochs if e != default and all(
        next(r for r in rows if r["seed"] == s and r["epochs"] == e)["rollout"]["mean"]["l1"]
        < next(r for r in rows if r["seed"] == s and r["epochs"] == default)["rollout"]["mean"]["l1"]
        for s in vx.SELECTION_SEEDS)] if default in args.epochs else []
    reading = (f"keep {default:g} epochs: no other count had a lower validation rollout L1 in every seed"
               if not best_everywhere else
               f"{', '.join(f'{e:g}' for e in best_everywhere)} epochs had a lower validation rollout L1 in every "
               f"seed than {default:g}: a change, which needs the RL settings chosen again")
    print(reading)
    out = REPO / "research" / "regime_results" / f"video_mle_epochs_{args.profile}.json"
    out.write_text(json.dumps(jsonable({
        "profile": args.profile, "seeds": list(vx.SELECTION_SEEDS), "epochs": args.epochs, "default": default,
        "rule": "keep the profile's count unless another has a lower validation rollout L1 in every seed",
        "reading": reading, "rows": rows, "seconds": round(time.perf_counter() - start, 1),
        "machine": machine_and_load()}), indent=1))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
