"""A quick fidelity-ladder probe for WM-R1: train inside a noisy-oracle world model at error rate p.

WM-R1 trains with GRPO entirely inside a world model. With the kit's learned world model at the
cpu size nothing can be learned (it judges the reference solution a success on a few percent
of tasks), so this probe replaces it with :class:`wmkit.wm_r1.oracle.NoisyOracle` (the simulator,
each next screen corrupted and the final success judgment flipped with probability p) and asks
how held-out success in the real simulator falls with p. At p = 0 WM-R1 is GRPO on the
simulator (the same transitions and judgments), so the ``real`` arm must match it.

Steps, one process each (2 CPU cores: keep each under ~6 minutes)::

    python research/explore_wm_r1_ladder.py sft --seed 0                 # SFT warm start, saved
    python research/explore_wm_r1_ladder.py train --seed 0 --p 0.3       # WM-R1 inside the oracle
    python research/explore_wm_r1_ladder.py train --seed 0 --real        # GRPO on the simulator
    python research/explore_wm_r1_ladder.py fidelity --p 0 0.1 0.3 0.6   # the oracle's fidelity
    python research/explore_wm_r1_ladder.py table

Everything is appended to ``runs/ladder/results.jsonl``. The pieces are the kit's own:
``experiment.task_templates / unique_tasks / build_policy / sft_examples / train_policy_sft /
evaluate / world_model_error / judge_agreement`` and ``method.train_wm_r1``; only the sizes are
this probe's.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wmkit.core import models
from wmkit.envs import phone
from wmkit.wm_r1.config import WM_R1
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import experiment as ex
from wmkit.wm_r1 import tasks as wm_tasks
from wmkit.wm_r1.method import WMR1Config, train_wm_r1
from wmkit.wm_r1.oracle import NoisyOracle

OUT = REPO / "runs" / "ladder"

# The cpu profile's policy and task sizes, with a shorter SFT (20 instead of 30 epochs) so that
# one step fits the time box and the start leaves room to improve.
SIZES = replace(WM_R1["cpu"], sft_epochs=20.0, eval_train=100, eval_heldout=100)


def _log(row: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "results.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def _tasks(seed: int):
    train_templates, held_templates = wm_tasks.task_templates(SIZES.max_ref_len)
    return {
        "sft": wm_tasks.unique_tasks(SIZES.sft_tasks, 10_000 + seed, train_templates),
        "rl": wm_tasks.unique_tasks(SIZES.train_tasks, 20_000 + seed, train_templates),
        # the evaluation tasks of run_experiment: their own seeds, the same for every training seed
        "eval_train": phone.sample_tasks(SIZES.eval_train, 40_000, train_templates),
        "eval_held": phone.sample_tasks(SIZES.eval_heldout, 30_000, held_templates),
    }


def _evaluate(model, tokenizer, tasks, imaginer, seed, splits=("eval_train", "eval_held")) -> dict:
    out = {}
    for split in splits:
        r = wm_eval.evaluate(model, tokenizer, tasks[split], imaginer, SIZES.max_steps, greedy=True,
                             max_turn_tokens=SIZES.max_turn_tokens, max_completion_tokens=SIZES.grpo.max_completion_length,
                             seed=seed)
        out[split] = {k: round(v, 4) for k, v in r.items() if k in ("success", "steps", "wm_calls", "invalid")}
    return out


def cmd_sft(args) -> None:
    from transformers import set_seed

    set_seed(args.seed)
    t0 = time.perf_counter()
    tasks = _tasks(args.seed)
    model, tokenizer = ex.build_policy(SIZES, tasks["sft"], args.seed)
    examples = wm_tasks.sft_examples(tokenizer, tasks["sft"], SIZES.imagine_rate, args.seed,
                                     SIZES.grpo.max_completion_length + 200)
    loss = ex.train_policy_sft(model, tokenizer, examples, args.epochs or SIZES.sft_epochs,
                               SIZES.sft_learning_rate, SIZES.sft_batch_size, args.seed, progress=False)
    sft_seconds = time.perf_counter() - t0
    models.save_model(model, tokenizer, OUT / f"sft_seed{args.seed}", SIZES.policy)
    t1 = time.perf_counter()
    result = _evaluate(model, tokenizer, tasks, NoisyOracle(0.0), args.seed)
    _log({"arm": "sft", "seed": args.seed, "epochs": args.epochs or SIZES.sft_epochs,
          "loss": [round(loss[0], 3), round(loss[-1], 3)], "sft_seconds": round(sft_seconds, 1),
          "eval_seconds": round(time.perf_counter() - t1, 1), **result})


def cmd_eval_sft(args) -> None:
    tasks = _tasks(args.seed)
    model, tokenizer = models.load_model(str(OUT / f"sft_seed{args.seed}"))
    t1 = time.perf_counter()
    result = _evaluate(model, tokenizer, tasks, NoisyOracle(0.0), args.seed)
    r = wm_eval.evaluate(model, tokenizer, tasks["eval_train"], NoisyOracle(0.0), SIZES.max_steps, greedy=False,
                         max_turn_tokens=SIZES.max_turn_tokens, max_completion_tokens=SIZES.grpo.max_completion_length,
                         seed=args.seed)
    result["eval_train_sampled"] = {"success": r["success"]}
    _log({"arm": "sft", "seed": args.seed, "eval_seconds": round(time.perf_counter() - t1, 1), **result})


def cmd_train(args) -> None:
    from transformers import set_seed

    set_seed(args.seed)
    tasks = _tasks(args.seed)
    model, tokenizer = models.load_model(str(OUT / f"sft_seed{args.seed}"))
    p = 0.0 if args.real else args.p
    oracle = NoisyOracle(p, seed=args.seed)  # WM-R1's world model; the real arm imagines with p = 0
    arm = "grpo_real" if args.real else f"wm_r1_p{p:g}"
    config = WMR1Config(output_dir=str(OUT / "work" / f"{arm}_seed{args.seed}"),
                        transitions="simulator" if args.real else "world_model",
                        reward=WMR1RewardConfig(max_steps=SIZES.max_steps), max_steps=args.steps,
                        num_generations=args.group_size, prompts_per_step=args.prompts, learning_rate=args.lr,
                        max_episode_steps=SIZES.max_steps, max_turn_tokens=SIZES.max_turn_tokens,
                        max_completion_length=SIZES.grpo.max_completion_length, seed=args.seed, show_progress=False)
    res = train_wm_r1(config, model, tokenizer, tasks["rl"], oracle)
    t1 = time.perf_counter()
    result = _evaluate(res.model, tokenizer, tasks, oracle, args.seed,
                       splits=("eval_train",) if args.train_only else ("eval_train", "eval_held"))
    if args.sampled:  # the policy GRPO trains is the sampled one: its success at T=1 on the same tasks
        r = wm_eval.evaluate(res.model, tokenizer, tasks["eval_train"], oracle, SIZES.max_steps, greedy=False,
                             max_turn_tokens=SIZES.max_turn_tokens, max_completion_tokens=SIZES.grpo.max_completion_length,
                             seed=args.seed)
        result["eval_train_sampled"] = {"success": r["success"]}
    h = res.history
    k = max(1, len(h) // 4)
    mean = lambda rows, key: round(sum(r[key] for r in rows) / len(rows), 3)
    _log({"arm": arm, "p": p, "seed": args.seed, "steps": args.steps, "lr": args.lr, "group_size": args.group_size,
          "prompts_per_step": args.prompts, "train_seconds": round(res.seconds, 1),
          "eval_seconds": round(time.perf_counter() - t1, 1), "simulator_steps": res.simulator_steps,
          "judged_success_first_quarter": mean(h[:k], "success"), "judged_success_last_quarter": mean(h[-k:], "success"),
          "signal_groups_mean": mean(h, "signal_groups"), "wm_calls_first_last": [h[0]["wm_calls"], h[-1]["wm_calls"]],
          "imagined_corrupted": oracle.corrupted, "queries": res.world_model_queries,
          "reward_std_mean": round(sum(r.get("reward_std", 0.0) for r in res.log_history if "reward_std" in r)
                                   / max(1, sum("reward_std" in r for r in res.log_history)), 4),
          **result})


def cmd_fidelity(args) -> None:
    """The kit's world-model measures on the oracle: next-screen exactness on the SFT agent's real
    transitions (world_model_error) and imagined-vs-real success (judge_agreement)."""
    tasks = _tasks(args.seed)
    model, tokenizer = models.load_model(str(OUT / f"sft_seed{args.seed}"))
    r = wm_eval.evaluate(model, tokenizer, tasks["eval_train"], NoisyOracle(0.0), SIZES.max_steps, greedy=False,
                         seed=args.seed)
    episodes = r["episodes"]
    for p in args.p:
        oracle = NoisyOracle(p, seed=args.seed)
        oracle.prime(episodes)
        error = wm_eval.world_model_error(oracle, episodes, limit=10_000)
        judge = wm_eval.judge_agreement(model, tokenizer, tasks["eval_train"], NoisyOracle(p, seed=args.seed),
                                        SIZES.max_steps, seed=args.seed)
        # success agreement on real successes and on real failures separately
        real_succ = judge["real_success"]
        on_success = judge["true_positive"] / real_succ if real_succ else float("nan")
        on_failure = (1 - real_succ - judge["false_positive"]) / (1 - real_succ) if real_succ < 1 else float("nan")
        _log({"fidelity_p": p, "seed": args.seed, "world_model_error": error, "judge_agreement": judge,
              "judged_success_on_real_successes": round(on_success, 4),
              "judged_failure_on_real_failures": round(on_failure, 4), "unresolved": oracle.unresolved})


def cmd_table(args) -> None:
    """Per run, then mean over seeds per arm; with matplotlib, runs/ladder/ladder.png (success against p)."""
    rows = [json.loads(line) for line in (OUT / "results.jsonl").read_text().splitlines() if line]
    runs = [r for r in rows if "arm" in r]
    by_arm: dict[str, list[dict]] = {}
    for row in runs:
        arm = row["arm"] if row.get("lr", 2e-4) == 2e-4 else f"{row['arm']}_lr{row['lr']:g}"
        by_arm.setdefault(arm, []).append(row)  # the latest row per (arm, seed) wins below
    print(f"{'arm':14s} {'seeds':6s} {'train-templ':>11s} {'held-out':>9s}   per seed (train-templ / held-out)")
    summary = {}
    for arm, arm_rows in by_arm.items():
        latest = {r["seed"]: r for r in arm_rows}
        tr = [r["eval_train"]["success"] for r in latest.values()]
        he = [r["eval_held"]["success"] for r in latest.values() if "eval_held" in r]
        summary[arm] = (sum(tr) / len(tr), sum(he) / len(he) if he else float("nan"))
        per = ", ".join(f"s{s}: {r['eval_train']['success']:.2f}/{r.get('eval_held', {}).get('success', float('nan')):.2f}"
                        for s, r in sorted(latest.items()))
        print(f"{arm:14s} {len(latest):<6d} {summary[arm][0]:11.3f} {summary[arm][1]:9.3f}   {per}")
    ladder = sorted((r["p"], arm) for arm, rs in by_arm.items() for r in rs[:1] if arm.startswith("wm_r1_p"))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if not ladder:
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ps = [p for p, _ in ladder]
    for k, label in ((0, "training-template tasks"), (1, "held-out templates")):
        ax.plot(ps, [summary[a][k] for _, a in ladder], "o-", label=f"WM-R1 in noisy oracle, {label}")
        for ref, style in (("grpo_real", "--"), ("sft", ":")):
            if ref in summary:
                ax.axhline(summary[ref][k], ls=style, lw=1, color=f"C{k}", label=f"{ref}, {label}")
    ax.set_xlabel("oracle error rate p")
    ax.set_ylabel("greedy success in the real simulator")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(OUT / "ladder.png", dpi=120)
    print(f"wrote {OUT / 'ladder.png'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sft")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--epochs", type=float, default=None)
    e = sub.add_parser("eval-sft")
    e.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("train")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--p", type=float, default=0.0)
    t.add_argument("--real", action="store_true")
    t.add_argument("--steps", type=int, default=60)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--group-size", type=int, default=8)
    t.add_argument("--prompts", type=int, default=2)
    t.add_argument("--sampled", action="store_true", help="also evaluate sampled (T=1) success on training templates")
    t.add_argument("--train-only", action="store_true", help="evaluate on training-template tasks only")
    f = sub.add_parser("fidelity")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--p", type=float, nargs="+", default=[0.0, 0.1, 0.3, 0.6])
    sub.add_parser("table")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    {"sft": cmd_sft, "eval-sft": cmd_eval_sft, "train": cmd_train, "fidelity": cmd_fidelity, "table": cmd_table}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
