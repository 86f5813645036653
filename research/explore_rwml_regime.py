"""Where does RWML act at cpu size? The library's RWML recipe on the kit's text game, a few seeds.

Runs :func:`wmkit.rwml.experiment.rwml_textgame_experiment` (warm-up SFT on ~10%, τ by balanced
accuracy on matching vs other pairs, hard-sample filter, GRPO on the embedding reward, SFT
baseline) from notebook 01's world model in ``--runs`` (built there at the profile's size when
missing), at the profile's ``rwml.textgame`` sizes with ``--set field=value`` overrides, for each
``--seeds``, and prints per seed: τ, first-step reward-1 share, kept transitions, parameter and
prediction change, warm / RWML / SFT held-out quality, seconds; then the paired differences over
seeds (95% t-interval, `wmkit.stats`). Everything goes to ``--out`` (JSON).

Example (about 2 minutes a seed on 2 shared CPU cores)::

    PYTHONPATH=$PWD python research/explore_rwml_regime.py --seeds 0 1 2 --set learning_rate=1e-3
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import torch


def _parse(value: str):
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def main(argv: list[str] | None = None) -> int:
    from wmkit.core.build import series_world_model
    from wmkit.profiles import get_profile
    from wmkit.rwml.config import rwml_sizes
    from wmkit.rlvr_world import experiment as rx
    from wmkit.runs import jsonable
    from wmkit.rwml import experiment as rwml
    from wmkit.stats import describe

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--runs", default="runs/cpu", help="runs root holding notebook 01's world model")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--set", nargs="*", default=[], help="field=value overrides of rwml.textgame sizes")
    parser.add_argument("--no-forgetting", action="store_true", help="skip the forgetting sets (faster)")
    parser.add_argument("--out", default="runs/rwml_regime/explore.json")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    profile = get_profile(args.profile)
    sets = {k: _parse(v) for k, v in (item.split("=", 1) for item in args.set)}
    sizes = rwml_sizes(profile).textgame  # a --set of a GRPO knob (learning_rate=...) goes to its grpo
    knobs = {k: v for k, v in sets.items() if k in {f.name for f in dataclasses.fields(sizes.grpo)}}
    sizes = dataclasses.replace(sizes, grpo=dataclasses.replace(sizes.grpo, **knobs),
                                **{k: v for k, v in sets.items() if k not in knobs})
    start = time.perf_counter()
    wm = series_world_model(profile, args.runs)
    print(f"world model loaded ({time.perf_counter() - start:.0f} s); sizes {sizes}", flush=True)
    n = sizes.forgetting_eval
    forgetting = None if args.no_forgetting else {
        env: rx.eval_set(wm.splits["test"], env, n // 2, n - n // 2, 0) for env in ("textgame", "phone")}
    result = rwml.rwml_textgame_seeds(wm.model, wm.tokenizer, sizes, Path(args.out).with_suffix(""), forgetting,
                                      seeds=args.seeds, lora=rx.uses_lora(wm.info))
    print("seed  tau     BA    share  kept  dθ       Δpred | greedy emb/rouge/exact warm→rwml (sft) | "
          "sampled emb/rouge/exact warm→rwml (sft) | s")
    for seed, r in result["per_seed"].items():
        q = r["quality"]
        cells = []
        for mode in ("greedy", "sampled"):
            cells.append("  ".join(f"{q['warm'][mode][m]:.2f}→{q['rwml'][mode][m]:.2f} ({q['sft'][mode][m]:.2f})"
                                   for m in rwml.QUALITY_METRICS) + " chg exact " + "/".join(
                f"{q[k][mode]['changed']['exact']:.2f}" for k in ("warm", "rwml", "sft")))
        print(f"{seed:>4}  {r['threshold']['tau']:.4f} {r['threshold']['balanced_accuracy']:.2f}  "
              f"{r['first_step_reward_share']:.2f}   {r['n']['kept']:>4}  {r['param_change']:.1e}  "
              f"{r['prediction_change']:.2f} | {cells[0]} | {cells[1]} | {r['seconds']['total']:.0f} {r['seconds']}",
              flush=True)
    s = result["summary"]
    for mode, subsets in s["comparisons"].items():
        for subset, metrics in subsets.items():
            for metric, c in metrics.items():
                print(f"{mode:8} {subset:9} {metric:17} RWML−warm {describe(c['rwml_minus_warm']['summary'])} "
                      f"{c['rwml_minus_warm']['verdict']:13} RWML−SFT {describe(c['rwml_minus_sft']['summary'])} "
                      f"{c['rwml_minus_sft']['verdict']}")
    print(f"forgets less: {describe(s['forgets_less']['summary'])} {s['forgets_less']['verdict']}: "
          f"{s['forgets_less']['reason']}")
    print(f"first-step share {describe(s['first_step_reward_share'])}; tau {describe(s['tau'], 4)}; "
          f"total {result['seconds']:.0f} s")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(jsonable(result), indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
