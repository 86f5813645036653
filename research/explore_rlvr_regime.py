"""Where does RLVR act at cpu size? MLE (SFT) then GRPO on one text-game difficulty level.

For one world size (``--difficulty``: a name in `wmkit.envs.textgame.DIFFICULTIES` or a JSON
dict of `Difficulty` fields) and one data/model seed this

1. collects text-game transitions, splits them by episode;
2. trains a tiny from-scratch world model by completion-only SFT (cached in ``--cache``: the RL
   seeds of a level all start from the same MLE model, as in notebook 02);
3. measures it on held-out (test) transitions: greedy exact, sampled (T=1) pass@1 over k
   samples, pass@1..k (a perfect verifier picks any right sample) and the task-specific reward,
   on changed and unchanged transitions;
4. for each RL seed runs GRPO (the kit's `train_rlvr`, all parameters as notebook 02 does for the
   tiny model, task-specific reward) and measures again;
5. prints one table line per run (MLE and each RL seed), the mean gain with a 95% t-interval over
   RL seeds, and writes everything to ``--out`` (JSON). ``summarize a.json b.json ...`` pools the
   RL seeds of several such files (one process per seed keeps each run short).

Example (about 5 minutes on 2 shared CPU cores)::

    PYTHONPATH=$PWD python research/explore_rlvr_regime.py --difficulty tiny --rl-seeds 0 1 2
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

from wmkit.core import models
from wmkit.core.build import tokenizer_corpus
from wmkit.core.sft import SFTConfig, train_sft
from wmkit.core.worldmodel import generate, is_exact, prompt_text, split_by_episode
from wmkit.envs import textgame
from wmkit.rewards.textgame import textgame_task_specific_reward
from wmkit.core import world_model_rl as rl

T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def t_interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high) of a 95% t-interval; a single value gives (v, nan, nan)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("nan"), float("nan")
    half = T_975.get(len(values) - 1, 1.96) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def eval_set(test, n_changed: int, n_unchanged: int, seed: int = 0):
    import random

    rng = random.Random(seed)
    changed = [t for t in test if t.changed]
    unchanged = [t for t in test if not t.changed]
    rng.shuffle(changed)
    rng.shuffle(unchanged)
    return changed[:n_changed] + unchanged[:n_unchanged]


def measure(model, tokenizer, transitions, k: int, max_new_tokens: int, seed: int = 0) -> dict:
    """Greedy exact, sampled pass@1 (mean over k samples), pass@1..k, task-specific reward."""
    start = time.perf_counter()
    prompts = [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]
    greedy = [o[0] for o in generate(model, tokenizer, prompts, max_new_tokens, batch_size=32)]
    sampled = generate(model, tokenizer, prompts, max_new_tokens, do_sample=True, num_samples=k, seed=seed,
                       batch_size=16)
    rows = []
    for t, g, samples in zip(transitions, greedy, sampled):
        hits = [is_exact(t.env, t.state, p, t.next_state) for p in samples]
        rows.append({
            "changed": t.changed,
            "greedy": float(is_exact(t.env, t.state, g, t.next_state)),
            "greedy_reward": textgame_task_specific_reward(g, t.state, t.next_state),
            "sampled": sum(hits) / len(hits),
            "sampled_reward": statistics.fmean(textgame_task_specific_reward(p, t.state, t.next_state)
                                               for p in samples),
            "pass": [float(any(hits[:j])) for j in range(1, k + 1)],
        })
    out = {}
    for part, keep in (("changed", True), ("unchanged", False)):
        sel = [r for r in rows if r["changed"] == keep]
        if not sel:
            continue
        out[part] = {
            "n": len(sel),
            "greedy": statistics.fmean(r["greedy"] for r in sel),
            "greedy_reward": statistics.fmean(r["greedy_reward"] for r in sel),
            "sampled": statistics.fmean(r["sampled"] for r in sel),
            "sampled_reward": statistics.fmean(r["sampled_reward"] for r in sel),
            "pass_at": [statistics.fmean(r["pass"][j] for r in sel) for j in range(k)],
        }
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def sft_model(args, splits, cache: Path):
    """Train (or load from `cache`) the MLE world model of this level and seed."""
    folder = cache / "final"
    if (folder / "wmkit_info.json").exists():
        model, tokenizer = models.load_model(str(folder))
        info = json.loads((folder / "wmkit_info.json").read_text())
        return model, tokenizer, info
    torch.manual_seed(args.seed)
    tokenizer = models.train_tokenizer(tokenizer_corpus(splits["train"]), args.vocab)
    config = models.TinyModelConfig(hidden_size=args.hidden, num_layers=args.layers, num_heads=args.heads,
                                    intermediate_size=2 * args.hidden, vocab_size=args.vocab)
    net = models.build_tiny_model(tokenizer, config, seed=args.seed)
    sft = train_sft(net, tokenizer, splits["train"], splits["val"],
                    SFTConfig(output_dir=str(cache / "checkpoints"), epochs=args.epochs, learning_rate=args.sft_lr,
                              batch_size=args.batch, max_length=512, seed=args.seed, resume=False,
                              show_progress=False, save_steps=10**9))
    evals = [row["eval_loss"] for row in sft.log_history if "eval_loss" in row]
    info = {"parameters": models.count_parameters(net), "sft_steps": sft.steps, "sft_seconds": round(sft.seconds, 1),
            "sft_seconds_per_step": round(sft.seconds / max(1, sft.steps), 4), "n_train": sft.n_train,
            "n_dropped": sft.n_dropped, "final_eval_loss": evals[-1] if evals else None,
            "model_config": {"hidden": args.hidden, "layers": args.layers, "heads": args.heads, "vocab": args.vocab}}
    models.save_model(net, tokenizer, folder, tiny_config=config)
    (folder / "wmkit_info.json").write_text(json.dumps(info, indent=1))
    return net, tokenizer, info


def line(label: str, m: dict, extra: str = "") -> str:
    c, u = m["changed"], m.get("unchanged", {})
    return (f"{label:<24} chg greedy {c['greedy']:.3f} samp {c['sampled']:.3f} pass@{len(c['pass_at'])} "
            f"{c['pass_at'][-1]:.3f} rew(s) {c['sampled_reward']:.3f} | unch greedy {u.get('greedy', float('nan')):.3f}"
            f" samp {u.get('sampled', float('nan')):.3f} {extra}")


def summarize(paths: list[str]) -> dict:
    """Pool the RL seeds of several result files of one level (same MLE model, same evaluation set)."""
    results = [json.loads(Path(p).read_text()) for p in paths]
    before = results[0]["before"]
    runs = [e for r in results for e in r["rl"]]
    print(line("MLE", before))
    for e in runs:
        print(line(f"RLVR seed {e['seed']}", e["after"], f"| {e['seconds_per_step']} s/step"))
    summary = {}
    for key in ("sampled_changed", "greedy_changed", "reward_changed"):
        mean, lo, hi = t_interval([e["gain"][key] for e in runs])
        summary[key] = {"mean": mean, "low": lo, "high": hi, "n": len(runs)}
        print(f"gain {key:<16} {mean:+.3f}  95% CI [{lo:+.3f}, {hi:+.3f}]  (n={len(runs)})")
    return summary


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "summarize":  # explore_rlvr_regime.py summarize result1.json result2.json ...
        summarize(argv[1:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--difficulty", default="full", help="name in DIFFICULTIES or JSON of Difficulty fields")
    p.add_argument("--episodes", type=int, default=300)
    p.add_argument("--seed", type=int, default=0, help="data and model seed")
    p.add_argument("--hidden", type=int, default=96)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--epochs", type=float, default=3.0)
    p.add_argument("--sft-lr", type=float, default=2e-3)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--rl-seeds", type=int, nargs="*", default=[0])
    p.add_argument("--rl-steps", type=int, default=60)
    p.add_argument("--rl-lr", type=float, default=1e-4)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--prompts-per-step", type=int, default=4)
    p.add_argument("--reward", default="task_specific")
    p.add_argument("--max-completion", type=int, default=128)
    p.add_argument("--max-new-tokens", type=int, default=160)
    p.add_argument("--eval-changed", type=int, default=60)
    p.add_argument("--eval-unchanged", type=int, default=20)
    p.add_argument("--eval-split", default="test", choices=("val", "test"),
                   help="held-out split measured (choose settings on val, report test)")
    p.add_argument("--k", type=int, default=8, help="samples per prompt: pass@1..k")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cache", default="runs/regime")
    p.add_argument("--out", default=None)
    p.add_argument("--no-rl", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    diff = args.difficulty
    level = textgame.resolve_difficulty(json.loads(diff) if diff.strip().startswith("{") else diff)
    tag = (f"{'-'.join(level.themes)}_d{level.max_distractors}{'_fixed' if level.fixed_names else ''}"
           f"{'' if level.shuffle_uuids else '_noshuf'}_e{args.episodes}_s{args.seed}_h{args.hidden}"
           f"l{args.layers}_ep{args.epochs:g}_lr{args.sft_lr:g}_b{args.batch}")
    cache = Path(args.cache) / tag

    t0 = time.perf_counter()
    transitions = textgame.collect_transitions(args.episodes, seed=args.seed, difficulty=level)
    splits = split_by_episode(transitions)
    evaluation = eval_set(splits[args.eval_split], args.eval_changed, args.eval_unchanged)
    model, tokenizer, info = sft_model(args, splits, cache)
    before = measure(model, tokenizer, evaluation, args.k, args.max_new_tokens, seed=0)
    print(f"[{tag}] {info['parameters']/1e6:.2f}M params, {info['sft_steps']} SFT steps in {info['sft_seconds']} s "
          f"({info['sft_seconds_per_step']} s/step), eval loss {info['final_eval_loss']}, "
          f"{len(splits['train'])} train / {len(splits['test'])} test transitions, eval {before['seconds']} s", flush=True)
    print(line("MLE", before), flush=True)
    from dataclasses import asdict

    result = {"difficulty": asdict(level),
              "args": vars(args), "tag": tag, "sft": info,
              "n_transitions": {k: len(v) for k, v in splits.items()}, "before": before, "rl": []}
    train = [t for t in splits["train"]]
    for rl_seed in [] if args.no_rl else args.rl_seeds:
        config = rl.RLVRConfig(output_dir=str(cache / f"rl_{args.reward}_lr{args.rl_lr:g}_G{args.group}_"
                                              f"st{args.rl_steps}_seed{rl_seed}"),
                               reward=args.reward, num_generations=args.group,
                               prompts_per_step=args.prompts_per_step, learning_rate=args.rl_lr,
                               max_completion_length=args.max_completion, max_steps=args.rl_steps, seed=rl_seed,
                               save_steps=10**9, resume=False, show_progress=False, lora=False)
        res = rl.train_rlvr(model, tokenizer, rl.rl_transitions(train, seed=rl_seed), config)
        after = measure(res.model, tokenizer, evaluation, args.k, args.max_new_tokens, seed=0)
        zero = res.curve("frac_reward_zero_std")
        rewards = res.curve("reward")
        entry = {"seed": rl_seed, "seconds": round(res.seconds, 1), "seconds_per_step": round(res.seconds / max(1, res.steps), 3),
                 "reward_curve": rewards, "zero_std_share": zero, "completion_length": res.curve("completions/mean_length"),
                 "after": after,
                 "gain": {"sampled_changed": after["changed"]["sampled"] - before["changed"]["sampled"],
                          "greedy_changed": after["changed"]["greedy"] - before["changed"]["greedy"],
                          "reward_changed": after["changed"]["sampled_reward"] - before["changed"]["sampled_reward"]}}
        result["rl"].append(entry)
        q = max(1, len(rewards) // 4)
        print(line(f"RLVR seed {rl_seed}", after,
                   f"| {entry['seconds_per_step']} s/step, train reward {statistics.fmean(rewards[:q]):.3f}->"
                   f"{statistics.fmean(rewards[-q:]):.3f}, zero-std {statistics.fmean(zero) if zero else float('nan'):.2f}"),
              flush=True)
    if result["rl"]:
        summary = {}
        for key in ("sampled_changed", "greedy_changed", "reward_changed"):
            mean, lo, hi = t_interval([e["gain"][key] for e in result["rl"]])
            summary[key] = {"mean": mean, "low": lo, "high": hi}
            print(f"gain {key:<16} {mean:+.3f}  95% CI [{lo:+.3f}, {hi:+.3f}]  (n={len(result['rl'])})")
        result["gain"] = summary
    result["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"total {result['seconds']} s")
    out = Path(args.out) if args.out else cache / f"result_{args.reward}_lr{args.rl_lr:g}_G{args.group}_st{args.rl_steps}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
