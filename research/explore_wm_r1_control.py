"""Probe: find a cpu regime where GRPO on the real simulator raises greedy success over its SFT start.

Subcommands (one process each; results appended to runs/control/results.jsonl)::

    diagnose --ckpt DIR            per-template greedy success and pass@k (sampled, T=1) of a policy
    sft --seed S --epochs E ...    SFT warm start saved under runs/control/<tag>_seed<S>
    train --seed S --ckpt DIR ...  GRPO on the real simulator; greedy + sampled success before/after
    grounding --ckpt DIR --n 100   which list item the start taps, against the reference and chance
    (--screen-view index_after_label: the agent sees `item "Nora" [3]`; a checkpoint from sft records its view)
    name-loss --ckpt DIR --balanced --sft-tasks N   loss on the name the second step's thought must write
    world-model --templates T1,T2 --episodes N --epochs E   a phone world model of those templates only
    wm-errors --learned DIR --templates T1,T2   a world-model folder's exact match per kind of transition on
        its own held-out episodes, and whether it copies the toggles' values (with --status-bar)
    judge-errors --ckpt DIR --learned DIR   where a learned world model judges the start's episodes wrongly
    (world-model --edit: targets as structured edits, wmkit/envs/phone_edit.py; --expand N: every action
     from every state of N tasks' reference paths added to the transitions)
    (train/fidelity --learned DIR: notebook 01's model from a runs folder, or a world-model folder)
    (sft --lookup-boost 4: the four list templates drawn 4x as often in the SFT data; saved beside the checkpoint)
    (--status-bar: every task on a phone whose screens show the toggles' values, phone.with_status_bar;
     a checkpoint from sft records it, world-model collects its transitions on that phone)
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wmkit.core import models
from wmkit.envs import phone
from wmkit.envs import phone_edit as edit_format
from wmkit.profiles import get_profile
from wmkit.wm_r1.config import WM_R1
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import experiment as ex
from wmkit.wm_r1 import ladder as wm_ladder
from wmkit.wm_r1 import tasks as wm_tasks
from wmkit.wm_r1.method import WMR1Config, train_wm_r1
from wmkit.wm_r1.oracle import NoisyOracle

OUT = REPO / "runs" / "control"
AGENT_TEXT = "agent_text.json"
"""Beside a checkpoint saved by `sft`: how its agent text was written (screen view, indexed thoughts)."""


def saved_agent_text(args):
    """The AGENT_TEXT dict of --ckpt (a checkpoint saved by `sft`), or None without one."""
    saved = Path(args.ckpt) / AGENT_TEXT if args.ckpt else None
    return json.loads(saved.read_text()) if saved is not None and saved.exists() else None


def log(row):
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "results.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def sizes_for(args):
    s = WM_R1["cpu"]
    s = replace(s, max_ref_len=args.max_ref_len, max_steps=args.max_steps)
    if args.tokenizer:
        s = replace(s, tokenizer_split=args.tokenizer)
    if args.turn_tokens:
        s = replace(s, max_turn_tokens=args.turn_tokens)
    if args.thought_index:
        s = replace(s, thought_index=True)
    if args.screen_view:
        s = replace(s, screen_view=ag.check_screen_view(args.screen_view))
    agent_text = saved_agent_text(args)
    if agent_text is not None:
        # a policy must see the screens as it was trained to: take the checkpoint's view (and its
        # thought form, for the reference text of name-loss), and refuse a --screen-view that
        # contradicts it
        view = agent_text["screen_view"]
        if args.screen_view and args.screen_view != view:
            raise SystemExit(f"--screen-view {args.screen_view} but {args.ckpt} was trained with {view!r}")
        s = replace(s, screen_view=view, thought_index=s.thought_index or agent_text["thought_index"])
    if args.policy:  # hidden,layers,heads,intermediate
        h, n, a, i = (int(x) for x in args.policy.split(","))
        s = replace(s, policy=replace(s.policy, hidden_size=h, num_layers=n, num_heads=a, intermediate_size=i))
    return s


def learned_world_model(path, sizes):
    """A learned world model as a transition source: notebook 01's (a runs folder holding
    01_build_world_model) or one saved by the `world-model` command (a model folder)."""
    from wmkit.core import build

    if (Path(path) / "01_build_world_model").exists():
        return ex.load_world_model_source(get_profile("cpu"), path, 0, sizes.wm_max_new_tokens)[0]
    model, tokenizer, _ = build.load_world_model(path)
    model.eval()
    predictor = ag.world_model_predictor(model, tokenizer, sizes.wm_max_new_tokens)
    if (Path(path) / edit_format.MARKER).exists():  # trained on edits (world-model --edit): decode them
        edits = predictor
        predictor = lambda pairs: [edit_format.decode_edit(screen, e) for (screen, _), e in zip(pairs, edits(pairs))]
    return ag.WorldModelSource(predictor)


def named_templates(args, sizes):
    """--templates as a list of training templates, checked by the library's ladder_world (a clear
    error for any other name); None without --templates."""
    if not args.templates:
        return None
    named = replace(sizes, ladder=replace(sizes.ladder, templates=tuple(args.templates.split(","))))
    try:
        return wm_ladder.ladder_world(named)
    except ValueError as error:
        raise SystemExit(f"--templates: {error}") from None


def status_bar(args):
    """--status-bar, or a checkpoint saved by sft with one: the tasks' phone shows a status bar. A
    policy must see the screens it was trained on: --status-bar with a checkpoint trained without
    the bar is refused."""
    agent_text = saved_agent_text(args)
    trained_with = agent_text.get("status_bar", False) if agent_text is not None else None
    if args.status_bar and trained_with is False:
        raise SystemExit(f"--status-bar but {args.ckpt} was trained without the status bar")
    return bool(args.status_bar or trained_with)


def on_phone(args, tasks):
    """The tasks on the phone the run uses (with a status bar under status_bar(args))."""
    return [phone.with_status_bar(t) for t in tasks] if status_bar(args) else list(tasks)


def eval_tasks(sizes, n, which="train", templates=None):
    tr, he = wm_tasks.task_templates(sizes.max_ref_len)
    chosen = templates or (tr if which == "train" else he)
    return phone.sample_tasks(n, 40_000 if which == "train" else 30_000, chosen)


def run(model, tok, tasks, sizes, greedy, seed=0, k=1):
    policy = ag.Policy(model, tok, max_turn_tokens=sizes.max_turn_tokens, greedy=greedy, temperature=1.0)
    torch.manual_seed(seed)
    eps = ag.run_episodes(policy, [t for t in tasks for _ in range(k)], ag.SimulatorSource(), imaginer=NoisyOracle(0.0),
                          config=ag.AgentConfig(max_steps=sizes.max_steps, screen_view=sizes.screen_view,
                                                max_completion_tokens=sizes.grpo.max_completion_length))
    return eps


def per_template(tasks, eps, k):
    by = defaultdict(list)
    for i, t in enumerate(tasks):
        by[t.template].append([e.success for e in eps[i * k:(i + 1) * k]])
    return by


def cmd_diagnose(args):
    sizes = sizes_for(args)
    model, tok = models.load_model(args.ckpt)
    tasks = on_phone(args, eval_tasks(sizes, args.n, templates=named_templates(args, sizes)))
    t0 = time.perf_counter()
    g = run(model, tok, tasks, sizes, True)
    s = run(model, tok, tasks, sizes, False, k=args.k)
    gt = per_template(tasks, g, 1)
    st = per_template(tasks, s, args.k)
    rows = {}
    for tmpl in sorted(gt):
        gs = [x[0] for x in gt[tmpl]]
        ss = st[tmpl]
        rows[tmpl] = {"n": len(gs), "greedy": round(sum(gs) / len(gs), 2),
                      "sampled": round(sum(sum(x) for x in ss) / (len(ss) * args.k), 2),
                      f"pass@{args.k}": round(sum(any(x) for x in ss) / len(ss), 2)}
    fails = Counter()
    for e in g:
        if not e.success:
            fails[(e.task.template, tuple(e.actions) == tuple(phone.reference_solution(e.task)[:len(e.actions)]))] += 1
    log({"cmd": "diagnose", "ckpt": args.ckpt, "n": args.n, "k": args.k, "templates": args.templates, "seconds": round(time.perf_counter() - t0, 1),
         "greedy": round(sum(e.success for e in g) / len(g), 3),
         "sampled": round(sum(e.success for e in s) / len(s), 3),
         "pass@k": round(sum(any(x) for v in st.values() for x in v) / len(tasks), 3), "per_template": rows})
    for e in g[:12]:
        print(e.task.template, e.task.instruction, e.actions, phone.reference_solution(e.task), e.success)


def cmd_sft(args):
    from transformers import set_seed as seed_everything

    sizes = sizes_for(args)
    seed_everything(args.seed)
    tr, _ = wm_tasks.task_templates(sizes.max_ref_len)
    weights = lookup_weights(args)
    sft_tasks = on_phone(args, wm_tasks.template_balanced_tasks(args.sft_tasks, 10_000 + args.seed, tr, weights)
                         if args.balanced else wm_tasks.unique_tasks(args.sft_tasks, 10_000 + args.seed, tr))
    t0 = time.perf_counter()
    model, tok = ex.build_policy(sizes, sft_tasks, args.seed)
    examples = wm_tasks.sft_examples(tok, sft_tasks, sizes.imagine_rate, args.seed, sizes.grpo.max_completion_length + 200,
                                     sizes.thought_index, sizes.screen_view)
    loss = ex.train_policy_sft(model, tok, examples, args.epochs, args.lr_sft or sizes.sft_learning_rate, sizes.sft_batch_size,
                               args.seed, progress=False)
    sec = time.perf_counter() - t0
    path = OUT / f"{args.tag}_seed{args.seed}"
    models.save_model(model, tok, path, sizes.policy)
    (path / AGENT_TEXT).write_text(json.dumps({"screen_view": sizes.screen_view, "thought_index": sizes.thought_index,
                                               "sft_template_weights": weights, "status_bar": args.status_bar}))
    tasks = on_phone(args, eval_tasks(sizes, args.n))
    g = run(model, tok, tasks, sizes, True)
    s = run(model, tok, tasks, sizes, False, seed=args.seed)
    log({"cmd": "sft", "tag": args.tag, "seed": args.seed, "epochs": args.epochs, "sft_tasks": args.sft_tasks,
         "tokenizer": sizes.tokenizer_split, "turn_tokens": sizes.max_turn_tokens, "thought_index": sizes.thought_index,
         "screen_view": sizes.screen_view, "policy": list(vars(sizes.policy).values()),
         "sft_lr": args.lr_sft or sizes.sft_learning_rate, "examples": len(examples),
         "balanced": args.balanced, "sft_template_weights": weights, "status_bar": args.status_bar,
         "sft_template_counts": dict(sorted(Counter(t.template for t in sft_tasks).items())),
         "eval_seconds": round(time.perf_counter() - t0 - sec, 1),
         "per_template_greedy": {k: round(sum(x[0] for x in v) / len(v), 3) for k, v in per_template(tasks, g, 1).items()},
         "max_ref_len": args.max_ref_len, "sft_seconds": round(sec, 1), "loss_last": round(loss[-1], 3),
         "greedy": sum(e.success for e in g) / len(g), "sampled": sum(e.success for e in s) / len(s), "n": args.n})


def start_evaluation(args, sizes):
    """The sft command's own evaluation of this checkpoint (same tasks, same seeds, so the same
    numbers: greedy is deterministic and the sampled run seeds torch with the seed), or None."""
    if not (OUT / "results.jsonl").exists():
        return None
    for line in (OUT / "results.jsonl").read_text().splitlines()[::-1]:
        row = json.loads(line)
        if (row.get("cmd") == "sft" and Path(args.ckpt).name == f"{row['tag']}_seed{row['seed']}"
                and row["seed"] == args.seed and row["n"] == args.n and row["max_ref_len"] == sizes.max_ref_len):
            return row
    return None


def cmd_train(args):
    from transformers import set_seed as seed_everything

    sizes = sizes_for(args)
    seed_everything(args.seed)
    model, tok = models.load_model(args.ckpt)
    tr, _ = wm_tasks.task_templates(sizes.max_ref_len)
    if args.hard_below < 1:
        # keep the templates the start has not mastered (greedy success on 10 training tasks each,
        # drawn from the pool's own seed, never the evaluation tasks): saturated templates give
        # all-success groups, whose rewards differ only by length
        probe_tasks = on_phone(args, [phone.make_task(t, 20_000 + args.seed + k) for t in tr for k in range(10)])
        probe = run(model, tok, probe_tasks, sizes, True)
        rates = {t: sum(e.success for e in probe if e.task.template == t) / 10 for t in tr}
        tr_pool = [t for t in tr if rates[t] < args.hard_below]
        print("start greedy per template on pool-seed tasks:", rates, "->", tr_pool, flush=True)
    else:
        tr_pool = tr
    names = named_templates(args, sizes)
    if names:  # a smaller world: GRPO's pool and the evaluation both keep only these training templates
        tr_pool = [t for t in tr_pool if t in names]
    if args.pool == "fresh":  # a distinct world for every rollout group
        rl_tasks = wm_tasks.fresh_tasks(args.steps * args.prompts, 20_000 + args.seed, tr_pool)
    else:
        rl_tasks = (wm_tasks.balanced_tasks if args.balanced else wm_tasks.unique_tasks)(300, 20_000 + args.seed, tr_pool)
    rl_tasks = on_phone(args, rl_tasks)
    tasks = on_phone(args, eval_tasks(sizes, args.n, templates=tr_pool if args.templates else None))
    start_row = None if args.templates else start_evaluation(args, sizes)
    if start_row is None:
        g0 = run(model, tok, tasks, sizes, True)
        s0 = run(model, tok, tasks, sizes, False, seed=args.seed)
    reward = WMR1RewardConfig(max_steps=sizes.max_steps, beta=args.beta, gamma=args.gamma)
    if len(args.p) != 1:
        raise SystemExit("train takes one --p (the ladder command takes several)")
    p_error = args.p[0]
    # p > 0: a rung of the fidelity ladder (transitions and judgments from the noisy oracle, as in
    # experiment.run_fidelity_ladder); p = 0: the simulator itself, the positive control;
    # --learned: WM-R1 proper, every transition, imagined call and success judgment from notebook 01's model
    if args.learned:
        if p_error:
            raise SystemExit("--learned trains inside notebook 01's world model: leave --p at 0")
        world_model = learned_world_model(args.learned, sizes)
    else:
        world_model = NoisyOracle(p_error, seed=args.seed)
    config = WMR1Config(output_dir=str(OUT / "work" / f"{args.tag}_p{p_error:g}_s{args.seed}"),
                        transitions="world_model" if (p_error > 0 or args.learned) else "simulator",
                        reward=reward, max_steps=args.steps, num_generations=args.group_size,
                        prompts_per_step=args.prompts, learning_rate=args.lr, temperature=args.temperature,
                        max_episode_steps=sizes.max_steps, max_turn_tokens=sizes.max_turn_tokens,
                        max_completion_length=sizes.grpo.max_completion_length, seed=args.seed, show_progress=False,
                        screen_view=sizes.screen_view)
    res = train_wm_r1(config, model, tok, rl_tasks, world_model)
    if args.save:  # the trained policy, with how its agent text is written (for judge-errors --ckpt)
        models.save_model(res.model, tok, OUT / f"{args.save}_seed{args.seed}", sizes.policy)
        (OUT / f"{args.save}_seed{args.seed}" / AGENT_TEXT).write_text((Path(args.ckpt) / AGENT_TEXT).read_text())
    g1 = run(res.model, tok, tasks, sizes, True)
    s1 = run(res.model, tok, tasks, sizes, False, seed=args.seed)
    h = res.history
    k = max(1, len(h) // 4)
    m = lambda rows, key: round(sum(r[key] for r in rows) / len(rows), 3)
    rate = lambda eps: round(sum(e.success for e in eps) / len(eps), 4)
    log({"cmd": "train", "tag": args.tag, "ckpt": args.ckpt, "seed": args.seed, "screen_view": sizes.screen_view,
         "p": p_error, "learned": args.learned, "status_bar": status_bar(args),
         "simulator_steps": res.simulator_steps, "world_model_predictions": res.world_model_predictions,
         "steps": args.steps, "lr": args.lr,
         "G": args.group_size, "prompts": args.prompts, "T": args.temperature, "balanced": args.balanced, "beta": args.beta, "gamma": args.gamma,
         "max_ref_len": args.max_ref_len, "n": args.n, "train_seconds": round(res.seconds, 1),
         "hard_below": args.hard_below, "pool": args.pool, "templates": args.templates, "groups_played": res.groups_played,
         "distinct_worlds": res.distinct_worlds, "pool_tasks": len(rl_tasks),
         "per_template_greedy": [start_row["per_template_greedy"] if start_row else
                                 {k: v["success"] for k, v in wm_eval.success_per_template(g0).items()},
                                 {k: v["success"] for k, v in wm_eval.success_per_template(g1).items()}],
         "pool_templates": sorted({t.template for t in rl_tasks}),
         "history": [{k: h[k] for k in ("step", "success", "wm_calls", "signal_groups")} for h in res.history],
         "greedy": [start_row["greedy"] if start_row else rate(g0), rate(g1)],
         "sampled": [start_row["sampled"] if start_row else rate(s0), rate(s1)],
         "start_eval_from": "sft row" if start_row else "evaluated here",
         "train_success_q1_q4": [m(h[:k], "success"), m(h[-k:], "success")],
         "signal_groups": m(h, "signal_groups"), "wm_calls_q1_q4": [m(h[:k], "wm_calls"), m(h[-k:], "wm_calls")]})


def cmd_ladder(args):
    """The library's ladder (experiment.run_fidelity_ladder) at the cpu profile's ladder sizes, from a
    saved SFT start, for the given error rates; --learned also measures notebook 01's world model."""
    sizes = replace(WM_R1["cpu"], screen_view=sizes_for(args).screen_view)
    sizes = replace(sizes, ladder=replace(sizes.ladder, error_rates=tuple(args.p),
                                          eval_tasks=args.n if args.n else sizes.ladder.eval_tasks))
    start = models.load_model(args.ckpt) if args.ckpt else None  # None: the ladder's own SFT
    learned = None
    if args.learned:
        learned, _ = ex.load_world_model_source(get_profile("cpu"), args.learned, 0, sizes.wm_max_new_tokens)
    t0 = time.perf_counter()
    result = wm_ladder.run_fidelity_ladder(get_profile("cpu"), args.seed, sizes=sizes, start=start, out_dir=OUT / "work",
                                           learned_world_model=learned)
    log({"cmd": "ladder", "seed": args.seed, "ckpt": args.ckpt, "seconds": round(time.perf_counter() - t0, 1),
         "result": result})


def cmd_fidelity(args):
    """Only the error measures: the oracle at each --p and notebook 01's world model (--learned),
    on the sampled episodes of a saved SFT start (no training)."""
    sizes = replace(WM_R1["cpu"], screen_view=sizes_for(args).screen_view)
    model, tok = models.load_model(args.ckpt)
    tasks = on_phone(args, eval_tasks(sizes, args.fidelity_episodes or sizes.ladder.fidelity_episodes,
                                      templates=named_templates(args, sizes)))
    probe = wm_eval.evaluate(model, tok, tasks, NoisyOracle(0.0), sizes.max_steps, greedy=False,
                             max_turn_tokens=sizes.max_turn_tokens, seed=args.seed,
                             screen_view=sizes.screen_view)["episodes"]
    sampler = ag.Policy(model, tok, max_turn_tokens=sizes.max_turn_tokens, temperature=1.0)
    rows = {}
    for p in args.p:
        rows[f"{p:g}"] = wm_eval.world_model_fidelity(NoisyOracle(p, seed=args.seed), sampler, tasks, probe,
                                                      sizes.max_steps, args.seed, sizes.screen_view)
    if args.learned:
        t0 = time.perf_counter()
        learned = learned_world_model(args.learned, sizes)
        rows["learned"] = wm_eval.world_model_fidelity(learned, sampler, tasks, probe, sizes.max_steps, args.seed,
                                                       sizes.screen_view)
        rows["learned"]["seconds"] = round(time.perf_counter() - t0, 1)
        # the reference solutions of the same tasks played inside it: judged a success?
        rows["learned_reference"] = wm_eval.reference_in_world_model(tasks, learned)
    log({"cmd": "fidelity", "seed": args.seed, "ckpt": args.ckpt, "templates": args.templates,
         "status_bar": status_bar(args), "learned": args.learned,
         "episodes": len(tasks), "rows": rows})


def cmd_world_model(args):
    """A phone world model of --templates only: transitions of phone.collect_transitions (the
    reference plan with ~30% random and ~5% invalid actions, re-planning after a detour), a
    from-scratch model of notebook 01's cpu shape, trained --epochs; saved as runs/control/<tag>_seed<S>."""
    from wmkit.core import build
    from wmkit.core.sft import SFTConfig, train_sft
    from wmkit.core.worldmodel import split_by_episode

    wm = get_profile("cpu").world_model
    if args.wm_shape:  # hidden,layers,heads,intermediate
        h, n, a, i = (int(x) for x in args.wm_shape.split(","))
        wm = replace(wm, model=replace(wm.model, hidden_size=h, num_layers=n, num_heads=a, intermediate_size=i))
    templates = args.templates.split(",") if args.templates else None
    t0 = time.perf_counter()
    data = split_by_episode(phone.collect_transitions(args.episodes, 70_000 + args.seed, templates,
                                                      status_bar=args.status_bar))
    if args.expand:  # every action from every state of a reference path, on tasks of their own
        expanded = split_by_episode(phone.reference_neighbourhood(args.expand, 80_000 + args.seed, templates,
                                                                  args.status_bar))
        data = {split: data[split] + expanded[split] for split in data}
    kept_plain = 0
    if args.edit:  # targets as structured edits (wmkit/envs/phone_edit.py): values named, not copied
        for split, rows in data.items():
            edits = [edit_format.encode_edit(t.state, t.diff) for t in rows]
            kept_plain += sum(e is None for e in edits)
            data[split] = [replace(t, diff=e) if e is not None else t for t, e in zip(rows, edits)]
    tokenizer = models.train_tokenizer(build.tokenizer_corpus(data["train"]), wm.model.vocab_size)
    net = models.build_tiny_model(tokenizer, wm.model, seed=args.seed)
    config = SFTConfig(output_dir=str(OUT / "work" / f"{args.tag}_wm_s{args.seed}"), epochs=args.epochs,
                       learning_rate=args.lr_wm or wm.learning_rate, batch_size=args.wm_batch, max_length=wm.max_length, seed=args.seed,
                       resume=False, show_progress=False)
    result = train_sft(net, tokenizer, data["train"], data["val"], config)
    models.save_model(net, tokenizer, OUT / f"{args.tag}_seed{args.seed}", tiny_config=wm.model)
    if args.edit:
        (OUT / f"{args.tag}_seed{args.seed}" / edit_format.MARKER).write_text(json.dumps({"kept_plain": kept_plain}))
    log({"cmd": "world-model", "tag": args.tag, "seed": args.seed, "templates": args.templates,
         "status_bar": args.status_bar, "edit": args.edit, "kept_plain": kept_plain, "expand": args.expand,
         "batch_size": args.wm_batch, "shape": list(vars(wm.model).values()),
         "lr": args.lr_wm or wm.learning_rate,
         "eval_loss": [round(r["eval_loss"], 3) for r in result.log_history if "eval_loss" in r],
         "episodes": args.episodes, "epochs": args.epochs, "transitions": {k: len(v) for k, v in data.items()},
         "sft_steps": result.steps, "seconds": round(time.perf_counter() - t0, 1)})


def transition_kind(t):
    """What a settings-world transition asks of a world model: open the Settings (or Display) screen
    (reveal the toggles), flip a toggle, change nothing, or something else."""
    before, after = t.state.split("\n")[0], t.next_state.split("\n")[0]
    if not t.changed:
        return "no change"
    if after.endswith("screen: settings") and not before.endswith(("screen: settings", "screen: display")):
        return "open Settings"
    if after.endswith("screen: display") and not before.endswith("screen: display"):
        return "open Display"
    if before == after and before.endswith(("screen: settings", "screen: display")):
        return "flip a toggle"
    return "other"


def cmd_wm_errors(args):
    """A saved world model (the world-model command's folder) on the held-out episodes of its own
    collection (the same seed and templates): exact next screens per kind of transition, and, for
    toggle flips on a phone with a status bar, the share of the bar's eight values it writes right
    against copying the bar it was shown (which gets all but the flipped one right) and against
    writing each position's most frequent value in the training flips (a guess that reads nothing)."""
    from wmkit.core import build
    from wmkit.core.worldmodel import predict_diffs, split_by_episode

    model, tokenizer, _ = build.load_world_model(args.learned)
    model.eval()
    templates = args.templates.split(",") if args.templates else None
    data = split_by_episode(phone.collect_transitions(args.episodes, 70_000 + args.seed, templates,
                                                      status_bar=args.status_bar))
    test = data["test"][:args.n]
    predicted = [o[0] for o in predict_diffs(model, tokenizer, [("phone", t.state, t.action) for t in test],
                                              get_profile("cpu").world_model.max_new_tokens, batch_size=32)]
    edit = (Path(args.learned) / edit_format.MARKER).exists()
    if edit:  # a model trained on edits: its predictions decoded into diffs first
        predicted = [edit_format.decode_edit(t.state, d) for t, d in zip(test, predicted)]
    kinds = defaultdict(list)
    for t, diff in zip(test, predicted):
        kinds[transition_kind(t)].append(phone.apply_diff(t.state, diff) == t.next_state)
    values = lambda line: re.findall(r'" (on|off)', line)
    status_of = lambda text: next((ln for ln in text.split("\n") if ln.startswith("status: ")), "")
    trained_flips = [values(status_of(t.next_state)) for t in data["train"]
                     if args.status_bar and transition_kind(t) == "flip a toggle"]
    majority = [Counter(v[i] for v in trained_flips).most_common(1)[0][0]
                for i in range(len(phone.SETTING_KEYS))] if trained_flips else []
    written, copied, guessed = [], [], []
    for t, diff in zip(test, predicted):
        if args.status_bar and transition_kind(t) == "flip a toggle":
            truth = values(status_of(t.next_state))
            written.append(sum(a == b for a, b in zip(truth, values(status_of(diff)))) / len(truth))
            copied.append(sum(a == b for a, b in zip(truth, values(status_of(t.state)))) / len(truth))
            guessed.append(sum(a == b for a, b in zip(truth, majority)) / len(truth))
    log({"cmd": "wm-errors", "learned": args.learned, "seed": args.seed, "templates": args.templates,
         "status_bar": args.status_bar, "edit": edit, "transitions": len(test),
         "exact": round(sum(sum(v) for v in kinds.values()) / len(test), 3),
         "exact_per_kind": {k: {"n": len(v), "exact": round(sum(v) / len(v), 3)} for k, v in sorted(kinds.items())},
         "flip_bar_values_right": round(sum(written) / len(written), 3) if written else None,
         "flip_bar_values_right_if_copied": round(sum(copied) / len(copied), 3) if copied else None,
         "flip_bar_values_right_if_majority_guess": round(sum(guessed) / len(guessed), 3) if guessed else None})


def cmd_judge_errors(args):
    """Where a learned world model (--learned) judges wrongly: --fidelity-episodes sampled episodes
    (T = 1) of --ckpt on the same tasks as `fidelity`, played inside the model (as WM-R1 plays them)
    and replayed in the simulator; per template the real and imagined successes and the episodes
    judged a success that fail, with the most frequent of those action sequences."""
    sizes = replace(WM_R1["cpu"], screen_view=sizes_for(args).screen_view)
    model, tok = models.load_model(args.ckpt)
    tasks = on_phone(args, eval_tasks(sizes, args.fidelity_episodes or sizes.ladder.fidelity_episodes,
                                      templates=named_templates(args, sizes)))
    learned = learned_world_model(args.learned, sizes)
    torch.manual_seed(args.seed)
    policy = ag.Policy(model, tok, max_turn_tokens=sizes.max_turn_tokens, temperature=1.0)
    episodes = ag.run_episodes(policy, tasks, learned.episode_source(), imaginer=learned,
                               config=ag.AgentConfig(max_steps=sizes.max_steps, screen_view=sizes.screen_view))
    per_template, wrongly_judged = defaultdict(Counter), Counter()
    for ep in episodes:
        env = phone.PhoneEnv(max_steps=10_000)
        env.reset(task=ep.task)
        for action in ep.actions:
            if phone.parse_action(action) not in (None, ("finished",)):
                env.step(action)
        real, row = env.is_success(), per_template[ep.task.template]
        row["n"] += 1
        row["real"] += real
        row["imagined"] += ep.success
        row["judged_success_but_failed"] += ep.success and not real
        row["judged_failure_but_succeeded"] += real and not ep.success
        if ep.success and not real:
            wrongly_judged[f"{ep.task.instruction} :: {' '.join(ep.actions)}"] += 1
    log({"cmd": "judge-errors", "seed": args.seed, "ckpt": args.ckpt, "learned": args.learned,
         "templates": args.templates, "episodes": len(episodes),
         "per_template": {k: dict(v) for k, v in sorted(per_template.items())},
         "judged_success_but_failed": wrongly_judged.most_common(12)})


def cmd_grounding(args):
    """How the start picks an item on a list screen (open_contact, open_note, delete_contact,
    open_chat: the first step opens the app, the second taps the named item): the second action
    against the reference one, and what uniform guessing among the listed items would score."""
    model, tok = models.load_model(args.ckpt)
    sizes = sizes_for(args)
    rows = {}
    for template in LIST_TEMPLATES:
        tasks = [phone.make_task(template, 90_000 + k) for k in range(args.n)]
        episodes = run(model, tok, tasks, sizes, True)
        first_right, second_right, agent_second, items = 0, 0, Counter(), Counter()
        named, named_right, tap_matches_name = 0, 0, 0
        indexed, index_is_named_item, tap_copies_index = 0, 0, 0
        index_offset = Counter()  # the thought's index minus the named item's index, when it names one on screen
        for e in episodes:
            ref = phone.reference_solution(e.task)
            if e.actions[:1] != ref[:1]:
                continue
            first_right += 1
            if len(e.actions) > 1:
                agent_second[e.actions[1]] += 1
                second_right += e.actions[1] == ref[1]
                env = phone.PhoneEnv()
                env.reset(task=e.task)
                list_screen = env.step(ref[0]).observation
                items[sum(" item " in line for line in list_screen.split("\n"))] += 1
                # Split the failure: does the thought of the second step name the right item
                # (copying from the instruction), and does the tap hit the item it names (lookup)?
                after_first = tok.decode(e.completion_ids, skip_special_tokens=True).split("\nScreen:\n", 1)[-1]
                thoughts = [name for name, _ in thought_lookups(after_first, sizes.screen_view)]
                target = re.search(r'find "(.*?)"', ag.describe_action(list_screen, ref[1]))
                if thoughts and target and ref[1].startswith("tap"):
                    named += 1
                    named_right += thoughts[0] == target[1]
                    tapped = ag.describe_action(list_screen, e.actions[1])
                    tap_matches_name += tapped == f'find "{thoughts[0]}".'
                    # With indexed thoughts (sft --thought-index; `at [3]`, `[3]` with the
                    # index_after_label view, `"Nora 3"` with index_in_label): is the index the named item's line on this screen
                    # (the phone's format), and does the tap copy it?
                    indexed_thoughts = [(n, i) for n, i in thought_lookups(after_first, sizes.screen_view) if i]
                    index = (None, *indexed_thoughts[0]) if indexed_thoughts else None
                    if index:
                        indexed += 1
                        index_is_named_item += f'[{index[2]}] item "{index[1]}"' in list_screen
                        tap_copies_index += e.actions[1] == f"tap({index[2]})"
                        named_line = [ln for ln in list_screen.split("\n") if f'item "{index[1]}"' in ln]
                        if named_line:
                            index_offset[int(index[2]) - int(named_line[0][1:named_line[0].index("]")])] += 1
        played = sum(agent_second.values())
        rows[template] = {"greedy": sum(e.success for e in episodes) / len(episodes),
                          "first_step_right": first_right / len(episodes),
                          "second_step_right_given_first": second_right / max(1, played),
                          "uniform_guess_among_items": sum(c / k for k, c in items.items()) / max(1, played),
                          "agent_second_action": dict(agent_second.most_common()),
                          "thought_names_target": named_right / max(1, named),
                          "tap_is_the_named_item": tap_matches_name / max(1, named), "named": named,
                          "indexed": indexed, "index_is_the_named_item": index_is_named_item / max(1, indexed),
                          "tap_copies_the_index": tap_copies_index / max(1, indexed),
                          "index_minus_named_items_index": dict(sorted(index_offset.items()))}
    log({"cmd": "grounding", "ckpt": args.ckpt, "n": args.n, "screen_view": sizes.screen_view, "rows": rows})


LIST_TEMPLATES = ("open_contact", "open_note", "delete_contact", "open_chat")


def thought_lookups(text, view):
    """(name, index or None) of every `find` thought in `text`, in the forms the reference
    thoughts take: `find "Nora".`, `find "Nora" at [3].`, `find "Nora" [3].`, and with the
    index_in_label view `find "Nora 3".` (the index inside the quotes)."""
    if view == "index_in_label":
        return [(m[1], m[2]) for m in re.finditer(r'find "([^"]*?)(?: (\d+))?"\.', text)]
    return [(m[1], m[2]) for m in re.finditer(r'find "([^"]*)"(?:(?: at)? \[(\d+)\])?\.', text)]


def lookup_weights(args):
    """The SFT draw's template weights: --lookup-boost on the list templates (only with
    --balanced), or, for a checkpoint saved by sft, the weights it was trained with."""
    agent_text = saved_agent_text(args)
    if agent_text is not None:
        weights = agent_text.get("sft_template_weights", {})
        if args.lookup_boost != 1.0 and weights != {t: args.lookup_boost for t in LIST_TEMPLATES}:
            raise SystemExit(f"--lookup-boost {args.lookup_boost} but {args.ckpt} was trained with weights {weights}")
        return weights
    if args.lookup_boost == 1.0:
        return {}
    if not args.balanced:
        raise SystemExit("--lookup-boost weights the template-balanced draw: add --balanced")
    return {t: args.lookup_boost for t in LIST_TEMPLATES}


def cmd_name_loss(args):
    """Does the start fit the name it must write? The loss (and argmax hit) of the first token of
    the name in the second step's thought (`find "<name>".`) of reference episodes, on the
    start's own SFT tasks of the list templates (fit) and on fresh tasks (generalisation).
    `--token index` (a start with indexed thoughts): the same for the index token after `[` in that
    thought (`find "<name>" [3].` or `at [3].`; with the index_in_label view the ` 3` token of
    `find "<name> 3".`), with the argmax's offset from the right index;
    `--token tap`: the index in the step's action (`tap(3)`), the lookup of a plain-thought start."""
    import random

    sizes = sizes_for(args)
    model, tok = models.load_model(args.ckpt)
    model.eval()
    tr, _ = wm_tasks.task_templates(sizes.max_ref_len)
    weights = lookup_weights(args)
    sft_tasks = (wm_tasks.template_balanced_tasks(args.sft_tasks, 10_000 + args.seed, tr, weights) if args.balanced
                 else wm_tasks.unique_tasks(args.sft_tasks, 10_000 + args.seed, tr))
    seen = [t for t in sft_tasks if t.template in LIST_TEMPLATES][:args.n]
    fresh = [phone.make_task(t, 90_000 + k) for t in LIST_TEMPLATES for k in range(max(1, args.n // 4))]
    prefix = tok('Thought: find "', add_special_tokens=False)["input_ids"]
    if args.token == "index" and not sizes.thought_index:
        raise SystemExit("--token index needs a start with indexed thoughts (--thought-index)")
    # " [" is one token only in a tokenizer that saw indexed thoughts (with the phone's view, "["
    # starts every screen line and is never merged with a space): look it up only for the index
    bracket = tok(" [", add_special_tokens=False)["input_ids"]
    if args.token == "index" and len(bracket) != 1 and sizes.screen_view != "index_in_label":
        raise SystemExit(f"--token index: this tokenizer splits ' [' into {len(bracket)} tokens")
    tap = tok(" tap(", add_special_tokens=False)["input_ids"]
    row = {"cmd": "name_loss", "ckpt": args.ckpt, "seed": args.seed, "token": args.token,
           "screen_view": sizes.screen_view, "sft_template_weights": weights}
    for name, tasks in (("sft_tasks", seen), ("fresh_tasks", fresh)):
        losses, hits, offsets = [], [], Counter()
        for task in tasks:
            ids, at = [], None
            for k, (text, from_agent) in enumerate(wm_tasks.reference_episode(task, 0.0, random.Random(0),
                                                                              sizes.thought_index, sizes.screen_view)):
                piece = tok(text, add_special_tokens=False)["input_ids"] + ([tok.eos_token_id] if from_agent else [])
                if from_agent and k >= 3 and at is None and piece[:len(prefix)] == prefix:
                    at = len(ids) + len(prefix)  # pieces: prompt, turn 1, screen, turn 2, ...
                    if args.token == "index" and sizes.screen_view == "index_in_label":
                        # `find "Nora 3".`: the index's token (` 3`) starts at the space before its
                        # digits; the text up to there tokenizes to a prefix of the turn
                        found = re.search(r'find "[^"]*? (\d+)"\.', text)
                        head = tok(text[:found.start(1) - 1], add_special_tokens=False)["input_ids"] if found else None
                        if head is None or piece[:len(head)] != head:
                            raise SystemExit(f"the index of {text!r} is not a token of its own")
                        at = len(ids) + len(head)
                    elif args.token == "index":  # the token after the thought's " ["
                        at = len(ids) + piece.index(bracket[0], len(prefix)) + 1
                    elif args.token == "tap":  # the token after the action's " tap("
                        starts = [i for i in range(len(prefix), len(piece)) if piece[i:i + len(tap)] == tap]
                        if not starts:
                            raise SystemExit(f"no ' tap(' in the list step's turn {text!r}")
                        at = len(ids) + starts[0] + len(tap)
                ids += piece
            if at is None:
                continue
            with torch.no_grad():
                logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, at - 1], -1)
            losses.append(-logp[ids[at]].item())
            hits.append(int(logp.argmax().item() == ids[at]))
            guess, truth = tok.decode([logp.argmax().item()]).strip(), tok.decode([ids[at]]).strip()
            if args.token in ("index", "tap") and guess.isdigit() and truth.isdigit():
                offsets[int(guess) - int(truth)] += 1
        row[name] = {"loss": round(sum(losses) / len(losses), 3), "argmax_right": round(sum(hits) / len(hits), 3),
                     "n": len(losses)}
        if args.token in ("index", "tap"):
            row[name]["argmax_minus_right_index"] = dict(sorted(offsets.items()))
    log(row)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("diagnose", "sft", "train", "ladder", "fidelity", "grounding", "name-loss", "world-model",
                 "wm-errors", "judge-errors"):
        s = sub.add_parser(name)
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--ckpt", default="")
        s.add_argument("--n", type=int, default=300)
        s.add_argument("--k", type=int, default=8)
        s.add_argument("--max-ref-len", type=int, default=4)
        s.add_argument("--max-steps", type=int, default=6)
        s.add_argument("--tag", default="x")
        s.add_argument("--epochs", type=float, default=10)
        s.add_argument("--sft-tasks", type=int, default=400)
        s.add_argument("--steps", type=int, default=60)
        s.add_argument("--lr", type=float, default=1e-4)
        s.add_argument("--group-size", type=int, default=8)
        s.add_argument("--prompts", type=int, default=2)
        s.add_argument("--temperature", type=float, default=1.0)
        s.add_argument("--beta", type=float, default=0.5)
        s.add_argument("--gamma", type=float, default=0.1)
        s.add_argument("--balanced", action="store_true", help="template-balanced task pool (sft: reference data; train: GRPO prompts)")
        s.add_argument("--pool", default="", choices=["", "fresh"],
                       help="train: 'fresh' = a distinct task world for every rollout group (wm_tasks.fresh_tasks)")
        s.add_argument("--p", type=float, nargs="+", default=[0.0])
        s.add_argument("--templates", default="",
                       help="train: comma-separated training templates; GRPO's pool and the evaluation keep only these "
                            "(diagnose: the evaluation)")
        s.add_argument("--hard-below", type=float, default=1.0,
                       help="train: GRPO pool only from templates whose start greedy success is below this")
        s.add_argument("--learned", default="", help="runs dir holding 01_build_world_model (read only), "
                       "or a folder saved by the world-model command")
        s.add_argument("--tokenizer", default="", choices=["", "bpe", "words"],
                       help="sft: the policy tokenizer's split (models.train_tokenizer); default the profile's")
        s.add_argument("--turn-tokens", type=int, default=0, help="max tokens per agent turn (0: the profile's)")
        s.add_argument("--policy", default="", help="sft: policy shape 'hidden,layers,heads,intermediate'")
        s.add_argument("--lr-sft", type=float, default=0.0, help="sft: learning rate (0: the profile's)")
        s.add_argument("--thought-index", action="store_true",
                       help="sft: reference tap thoughts name the index too (find \"Nora\" at [3].)")
        s.add_argument("--lookup-boost", type=float, default=1.0,
                       help="sft/name-loss with --balanced: draw the list templates this many times as often "
                            "(wm_tasks.template_balanced_tasks weights); a checkpoint from sft records its weights")
        s.add_argument("--token", default="name", choices=["name", "index", "tap"],
                       help="name-loss: the token of the list step to score (the thought's name's first, the "
                            "thought's index, or the index in the action's tap(...))")
        s.add_argument("--episodes", type=int, default=600, help="world-model: episodes of transitions collected")
        s.add_argument("--save", default="", help="train: save the trained policy as runs/control/<save>_seed<S>")
        s.add_argument("--status-bar", action="store_true",
                       help="every task on a phone whose screens show the toggles' values (phone.with_status_bar)")
        s.add_argument("--fidelity-episodes", type=int, default=0,
                       help="fidelity: sampled episodes measured (0: the cpu ladder's fidelity_episodes)")
        s.add_argument("--wm-shape", default="", help="world-model: 'hidden,layers,heads,intermediate'")
        s.add_argument("--lr-wm", type=float, default=0.0, help="world-model: learning rate (0: notebook 01's)")
        s.add_argument("--wm-batch", type=int, default=8, help="world-model: SFT batch size")
        s.add_argument("--expand", type=int, default=0, help="world-model: also every action from every "
                       "state of this many tasks' reference paths (phone.reference_neighbourhood)")
        s.add_argument("--edit", action="store_true", help="world-model: train on structured edits "
                       "(wmkit/envs/phone_edit.py: a switch value named as flipped / from-bar, not copied)")
        s.add_argument("--screen-view", default="", choices=["", *ag.SCREEN_VIEWS],
                       help="the agent's view of the screens (agent.agent_screen); default the profile's, or the "
                            "view a checkpoint saved by sft was trained with")
    args = p.parse_args()
    torch.set_num_threads(1)
    {"diagnose": cmd_diagnose, "sft": cmd_sft, "train": cmd_train, "ladder": cmd_ladder, "fidelity": cmd_fidelity,
     "grounding": cmd_grounding, "name-loss": cmd_name_loss, "world-model": cmd_world_model,
     "wm-errors": cmd_wm_errors, "judge-errors": cmd_judge_errors}[args.cmd](args)


if __name__ == "__main__":
    main()
