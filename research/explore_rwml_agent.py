"""Exploration: RWML with one model that predicts and acts (issue 53, item 1).

Question: in the phone's settings world (WM-R1's learned set-up, where a tiny policy's success lies
between 0 and its ceiling), does RWML on next-screen prediction alone (no task reward) raise the
*agent's* held-out success and lower its share of failed steps, against the same warm-up without it;
and does policy RL from the RWML model beat the same policy RL from the warm-up? If not, why: which
parameters move, and does it matter whether the prediction is asked where the agent reads screens
(`--context episode`) or apart from its episodes (`--context screen`), as its change (`--target diff`)
or as the whole next screen (`--target screen`), and in which world (`--world`: the settings world of
WM-R1's small world, no status bar; or its learned set-up's status-bar phone)?
(:func:`wmkit.rwml.agent.run_rwml_agent_seed`; exploration seeds 100-199 only.)

    PYTHONPATH=$PWD python research/explore_rwml_agent.py 100 101 --tag T [--context screen --target diff]
        [--world small_world] [--set steps=60 ...] [--no-policy-rl]
    PYTHONPATH=$PWD python research/explore_rwml_agent.py --summary --tag T

One JSON per seed in research/regime_results/rwml_agent/<tag>/seed<S>.json, written when the seed
finishes; a seed whose file exists is skipped.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explore_wm_r1_ablations import FIRST_EXPLORATION_SEED, LAST_EXPLORATION_SEED, cpu_model

ROOT = Path(__file__).resolve().parent / "regime_results" / "rwml_agent"


def parse_set(items: list[str], sizes):
    """`field=value` overrides of the RWMLAgentSizes or of its GRPO knobs (``steps`` is ``grpo.max_steps``;
    values parsed as the field's type)."""
    types = {f.name: type(getattr(sizes, f.name)) for f in dataclasses.fields(sizes) if f.name != "grpo"}
    knobs = {f.name: type(getattr(sizes.grpo, f.name)) for f in dataclasses.fields(sizes.grpo)}
    changes, grpo = {}, {}
    for item in items:
        name, _, value = item.partition("=")
        name = "max_steps" if name == "steps" else name
        if name in types:
            changes[name] = types[name](value)
        elif name in knobs:
            grpo[name] = knobs[name](value)
        else:
            raise SystemExit(f"--set {item}: no field {name!r} (fields: {', '.join([*types, *knobs])})")
    return replace(sizes, grpo=replace(sizes.grpo, **grpo), **changes)


def run(seeds: list[int], tag: str, context: str, target: str, world: str, overrides: list[str],
        policy_rl: bool, acting_tasks: int | None = None, acting_only_control: bool | None = None,
        warm_from: str | None = None) -> None:
    import torch

    from wmkit.profiles import get_profile
    from wmkit.rwml.agent import run_rwml_agent_seed
    from wmkit.rwml.config import bench_rwml_agent_sizes
    from wmkit.wm_r1.config import wm_r1_sizes

    torch.set_num_threads(1)
    profile = get_profile("cpu")
    sizes = bench_rwml_agent_sizes(profile)
    ladder = sizes.world.ladder  # the profile's: WM-R1's small world with its own acting episodes
    if world != "small_world":
        ladder = replace(getattr(wm_r1_sizes(profile), world), sft_tasks=ladder.sft_tasks)
    if acting_tasks:
        ladder = replace(ladder, sft_tasks=acting_tasks)
    sizes = replace(sizes, prediction_context=context, prediction_target=target,
                    world=replace(sizes.world, ladder=ladder))
    sizes = parse_set(overrides, sizes)
    out = ROOT / tag
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        if not FIRST_EXPLORATION_SEED <= seed <= LAST_EXPLORATION_SEED:
            raise SystemExit(f"seed {seed}: exploration uses seeds {FIRST_EXPLORATION_SEED}-{LAST_EXPLORATION_SEED}")
        path = out / f"seed{seed}.json"
        if path.exists():
            print(f"seed {seed}: {path} exists, skipped", flush=True)
            continue
        start = time.perf_counter()
        runs = Path("runs/explore/rwml_agent")
        # variants that share the warm-up settings share its model (the saved key checks they match)
        warm = runs / "warm" / f"{warm_from or tag}_seed{seed}"
        result = run_rwml_agent_seed(sizes, seed, runs / tag / f"seed{seed}", warm_dir=warm,
                                     progress=lambda line: print(line, flush=True), policy_rl=policy_rl,
                                     acting_only_control=acting_only_control)
        result["wall_seconds"] = round(time.perf_counter() - start, 1)
        result["cpu"] = cpu_model()
        result["sizes"] = {k: v for k, v in dataclasses.asdict(sizes).items() if k != "world"}
        result["world"] = world
        result["acting_tasks"] = ladder.sft_tasks
        path.write_text(json.dumps(result, indent=1, default=float))
        print(f"seed {seed}: {result['wall_seconds']:.0f} s -> {path}", flush=True)


def summary(tag: str) -> None:
    from wmkit import stats

    rows = [json.loads(p.read_text()) for p in sorted((ROOT / tag).glob("seed*.json"))]
    if not rows:
        raise SystemExit(f"no results in {ROOT / tag}")
    print(f"{tag}: seeds {[r['seed'] for r in rows]}, context {rows[0]['prediction_context']}, target "
          f"{rows[0]['prediction_target']}, world {rows[0].get('world')}, CPU {rows[0].get('cpu')}")
    print(f"  sizes {rows[0].get('sizes')}")

    def show(name, values):
        values = [v for v in values if v is not None]
        s = stats.summarize(values)
        sd = statistics.stdev(values) if len(values) > 1 else float("nan")
        low, high = (f"{x:+.3f}" if x is not None else "—" for x in (s["ci_low"], s["ci_high"]))
        print(f"  {name:58s} mean {s['mean']:+.3f} sd {sd:.3f} 95% [{low}, {high}] n={len(values)} "
              f"{[round(v, 3) for v in values]}")

    for r in rows:
        a, p = r["acting"], r["prediction"]
        line = " | ".join(f"{k} {a[k]['greedy']['success']:.3f}/{a[k]['sampled']['success']:.3f} "
                          f"inv {a[k]['greedy']['invalid_share']:.3f}/{a[k]['sampled']['invalid_share']:.3f}"
                          for k in a)
        print(f"  seed {r['seed']}: {line}")
        print(f"      tau {r['threshold']['tau']:.4f} ({r['threshold']['n_exact']}/{r['threshold']['n_inexact']}), "
              f"easy {r['filter']['easy_share']:.2f} kept {r['n']['kept']}, first-step reward share "
              f"{r['first_step_reward_share']}, curve {[round(x, 2) for x in r['rwml_curve'][:3]]}..."
              f"{[round(x, 2) for x in r['rwml_curve'][-3:]]}; param change {r['param_change']:.2e}, "
              f"predictions changed {r['prediction_change']:.2f}; next screen exact greedy "
              f"{p['warm']['greedy']['exact']:.2f}->{p['rwml']['greedy']['exact']:.2f}, sampled "
              f"{p['warm']['sampled']['exact']:.2f}->{p['rwml']['sampled']['exact']:.2f}; blind "
              f"{r['instruction_blind']['success']:.3f}; {r['wall_seconds']:.0f} s {r['seconds']}")
        print(f"      acting change {r.get('acting_change')}, reference NLL {r.get('reference_nll')}, "
              f"prediction changed-exact greedy {p['warm']['greedy']['changed']['exact']:.2f}->"
              f"{p['rwml']['greedy']['changed']['exact']:.2f}")
        if "acting_only" in r:
            o = r["acting_only"]
            print(f"      acting-only warm-up: {o['acting']['greedy']['success']:.3f}/{o['acting']['sampled']['success']:.3f}, "
                  f"reference NLL {o['reference_nll']:.4f}")
        blocks = r["param_change_by_block"]
        print("      by block: " + ", ".join(f"{k.replace('model.', '')} {v:.1e}" for k, v in blocks.items()
                                            if v is not None))
    for mode in ("greedy", "sampled"):
        show(f"RWML - warm-up, success ({mode})",
             [r["acting"]["rwml"][mode]["success"] - r["acting"]["warm"][mode]["success"] for r in rows])
        show(f"RWML - warm-up, invalid share ({mode})",
             [r["acting"]["rwml"][mode]["invalid_share"] - r["acting"]["warm"][mode]["invalid_share"] for r in rows])
        show(f"RWML - warm-up, next screen exact ({mode})",
             [r["prediction"]["rwml"][mode]["exact"] - r["prediction"]["warm"][mode]["exact"] for r in rows])
        if all("rwml_policy_rl" in r["acting"] for r in rows):
            show(f"RWML+PRL - PRL, success ({mode})",
                 [r["acting"]["rwml_policy_rl"][mode]["success"] - r["acting"]["warm_policy_rl"][mode]["success"]
                  for r in rows])
            show(f"RWML+PRL - PRL, invalid share ({mode})",
                 [r["acting"]["rwml_policy_rl"][mode]["invalid_share"]
                  - r["acting"]["warm_policy_rl"][mode]["invalid_share"] for r in rows])
            show(f"PRL - warm-up, success ({mode})",
                 [r["acting"]["warm_policy_rl"][mode]["success"] - r["acting"]["warm"][mode]["success"] for r in rows])
    show("warm-up greedy success (the precondition)", [r["acting"]["warm"]["greedy"]["success"] for r in rows])
    show("wall seconds per seed", [r["wall_seconds"] for r in rows])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="*", type=int)
    parser.add_argument("--tag", required=False, default=None, help="results folder (default: context_target)")
    parser.add_argument("--context", default="screen", choices=("screen", "episode"))
    parser.add_argument("--target", default="diff", choices=("diff", "screen"))
    parser.add_argument("--world", default="small_world", choices=("small_world", "learned_world"))
    parser.add_argument("--set", nargs="*", default=[], help="field=value overrides of the cpu RWMLAgentSizes")
    parser.add_argument("--no-policy-rl", action="store_true", help="stop after RWML (no policy RL arms)")
    parser.add_argument("--acting-tasks", type=int, default=None,
                        help="reference episodes of the acting warm-up (default: the world's sft_tasks)")
    parser.add_argument("--acting-only-control", action="store_true", default=None,
                        help="also train the warm-up without its prediction examples and measure its acting "
                             "(default: the sizes' acting_only_control)")
    parser.add_argument("--warm-from", default=None,
                        help="reuse the warm-up saved under this tag (the saved key must match)")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    tag = args.tag or f"{args.context}_{args.target}"
    if args.summary:
        summary(tag)
    elif args.seeds:
        run(args.seeds, tag, args.context, args.target, args.world, args.set, not args.no_policy_rl,
            args.acting_tasks, args.acting_only_control, args.warm_from)
    else:
        sys.exit(parser.format_usage())
