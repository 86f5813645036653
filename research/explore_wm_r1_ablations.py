"""Exploration: WM-R1's four agent ablations inside the settings world's learned world model.

Question (issue 53, item 2): where WM-R1 learns (``wm_r1_learned``: the status-bar settings world, the
edit world model, a 2-epoch SFT start), does it beat best-of-K inside the same world model, do
imagined calls help, does the length reward help, and do calls per episode fall over training?
Every arm from the same start, the same number of GRPO updates, the same world model
(:func:`wmkit.wm_r1.ablations.run_learned_ablations`). Exploration seeds 100-199 only.

    PYTHONPATH=$PWD python research/explore_wm_r1_ablations.py 100 101 [--imagine-rate 0.3] [--tag base]
        [--no-imagine-start] [--arms best_of_k]
    PYTHONPATH=$PWD python research/explore_wm_r1_ablations.py --summary [--tag base]

One JSON per seed in research/regime_results/wm_r1_ablations/<tag>/seed<S>.json, written when the
seed finishes (so a killed run keeps the seeds it finished); a seed whose file exists is skipped.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "regime_results" / "wm_r1_ablations"
FIRST_EXPLORATION_SEED, LAST_EXPLORATION_SEED = 100, 199


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], check=False, capture_output=True, text=True).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        return platform.processor()


def run(seeds: list[int], tag: str, imagine_rate: float | None, no_imagine_start: bool = False,
        arms: list[str] | None = None) -> None:
    import torch

    from wmkit.profiles import get_profile
    from wmkit.wm_r1.ablations import run_learned_ablations
    from wmkit.wm_r1.config import wm_r1_sizes

    torch.set_num_threads(1)
    profile = get_profile("cpu")
    sizes = wm_r1_sizes(profile) if imagine_rate is None else replace(wm_r1_sizes(profile), imagine_rate=imagine_rate)
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
        result = run_learned_ablations(profile, seed, sizes=sizes, out_dir=Path("runs/explore/wm_r1_ablations") / tag,
                                       log=lambda line: print(line, flush=True), no_imagine_start=no_imagine_start,
                                       **({"arms": tuple(arms)} if arms else {}))
        result["wall_seconds"] = round(time.perf_counter() - start, 1)
        result["cpu"] = cpu_model()
        result["imagine_rate"] = sizes.imagine_rate
        result["no_imagine_start_own"] = no_imagine_start
        path.write_text(json.dumps(result, indent=1, default=float))
        print(f"seed {seed}: {result['wall_seconds']:.0f} s -> {path}", flush=True)


def summary(tag: str) -> None:
    from wmkit import stats

    rows = [json.loads(p.read_text()) for p in sorted((ROOT / tag).glob("seed*.json"))]
    if not rows:
        raise SystemExit(f"no results in {ROOT / tag}")
    print(f"{tag}: seeds {[r['seed'] for r in rows]}, CPU {rows[0].get('cpu')}, imagine_rate {rows[0].get('imagine_rate')}")

    def show(name, values):
        s = stats.summarize(values)
        sd = statistics.stdev(values) if len(values) > 1 else float("nan")
        low, high = (f"{x:+.3f}" if x is not None else "—" for x in (s["ci_low"], s["ci_high"]))
        print(f"  {name:52s} mean {s['mean']:+.3f} sd {sd:.3f} 95% [{low}, {high}] "
              f"n={len(values)}  {[round(v, 3) for v in values]}")

    def arm(r, a, mode="greedy"):
        return r["arms"][a]["success"] if a == "best_of_k" else r["arms"][a][mode]["success"]

    def everywhere(*names):  # a run with --arms holds only some arms
        return all(name in r["arms"] for r in rows for name in names)

    def cell(r, a):
        if a not in r["arms"]:
            return "—"
        if a == "best_of_k":
            return f"{arm(r, a):.3f}"
        return f"{arm(r, a):.3f}/{arm(r, a, 'sampled'):.3f}"

    trained = [a for a in ("wm_r1", "no_imagine", "no_length") if any(a in r["arms"] for r in rows)]
    print("per seed: start greedy/sampled | wm_r1 | no_imagine | no_length | best_of_k | blind | calls q1->q4 | s")
    for r in rows:
        a = r["arms"]
        calls = (f"{a['wm_r1']['wm_calls_first_last_quarter'][0]:.2f}->{a['wm_r1']['wm_calls_first_last_quarter'][1]:.2f}"
                 if "wm_r1" in a else "—")
        print(f"  {r['seed']}: {r['start']['greedy']['success']:.3f}/{r['start']['sampled']['success']:.3f} | "
              + " | ".join(cell(r, name) for name in ("wm_r1", "no_imagine", "no_length", "best_of_k"))
              + f" | {r['instruction_blind']['success']:.3f} | {calls} | {r['wall_seconds']:.0f}")
        print(f"      calls at eval: start greedy {r['start']['greedy']['wm_calls']:.2f} sampled "
              f"{r['start']['sampled']['wm_calls']:.2f}; "
              + "; ".join(f"{name} greedy {a[name]['greedy']['wm_calls']:.2f} sampled {a[name]['sampled']['wm_calls']:.2f}"
                          for name in trained if name in a) + "; "
              + "; ".join(f"{name}: param change {a[name]['param_change']:.4f}, signal groups "
                          f"{a[name]['signal_groups']:.2f}" for name in trained if name in a)
              + f"; judge agreement {r['learned_world_model']['agreement']:.2f}; timings {r['timings']}")
        for name in trained:
            if name in a:
                print(f"      {name} calls/episode per GRPO step: {[round(h['wm_calls'], 2) for h in a[name]['history']]}")
    for mode in ("greedy", "sampled"):
        if everywhere("wm_r1"):
            show(f"wm_r1 - start ({mode})", [arm(r, "wm_r1", mode) - r["start"][mode]["success"] for r in rows])
        for other in ("no_imagine", "no_length"):
            if everywhere("wm_r1", other):
                show(f"wm_r1 - {other} ({mode})", [arm(r, "wm_r1", mode) - arm(r, other, mode) for r in rows])
        if everywhere("wm_r1", "best_of_k"):
            show(f"wm_r1 ({mode}) - best_of_k", [arm(r, "wm_r1", mode) - arm(r, "best_of_k") for r in rows])
    if everywhere("best_of_k"):
        show("best_of_k - start greedy", [arm(r, "best_of_k") - r["start"]["greedy"]["success"] for r in rows])
    if all("no_imagine_start" in r for r in rows):
        for mode in ("greedy", "sampled"):
            show(f"start - start without imagined turns ({mode})",
                 [r["start"][mode]["success"] - r["no_imagine_start"][mode]["success"] for r in rows])
    for a in trained:
        if everywhere(a):
            show(f"{a}: calls/episode first - last quarter of training",
                 [r["arms"][a]["wm_calls_first_last_quarter"][0] - r["arms"][a]["wm_calls_first_last_quarter"][1]
                  for r in rows])
    show("wall seconds per seed", [r["wall_seconds"] for r in rows])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="*", type=int)
    parser.add_argument("--tag", default="base")
    parser.add_argument("--imagine-rate", type=float, default=None,
                        help="share of SFT steps preceded by an imagined call (default: the profile's)")
    parser.add_argument("--no-imagine-start", action="store_true",
                        help="the no_imagine arm starts from the same SFT without imagined turns")
    parser.add_argument("--arms", nargs="*", default=None,
                        help="only these arms (default: all); a seed's world model is reused from its folder")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary(args.tag)
    elif args.seeds:
        run(args.seeds, args.tag, args.imagine_rate, args.no_imagine_start, args.arms)
    else:
        sys.exit(parser.format_usage())
