"""How the learned world model judges the *trained* WM-R1 policy, per seed (WM_R1_LADDER.md 26).

The benchmark measures the learned world model's judging on the SFT start's episodes only. Seeds 6
and 9 ended on one instruction-blind sequence (open Settings, tap(1), finish) and seed 10 raised
its judged success in training while its real success fell. This probe, for the seeds whose world
model is still in runs/cpu/bench/work/wm_r1_learned/ (9-12 on the Intel machine):

1. retrains the benchmark's "learned" rung exactly (run_learned_world_model without the p = 0 rung;
   train_wm_r1 reseeds itself, so the rung is the same; checked against the published record),
2. judges, inside that seed's world model, the trained policy's own episodes (greedy and sampled)
   and compares with the simulator, per class,
3. plays every instruction-blind sequence open_app(settings), tap(k), finished() inside the world
   model and in the simulator: does the model reward the blind sequence more than the phone does?

Written and run at library version 15ba3d8c8cb3 (its outputs beside it); since 7b52c806c50c it calls
the library's replayed_success, judging_by_class and detached(), which do what its own code did,
and the benchmark's learned rung records the trained policy's judging itself.
Run from the repository root (one core, ~8 min a seed):
    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python research/regime_results/wm_r1_round16/trained_policy_judging.py 9 10 11 12
"""
import glob
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from wmkit.envs import phone
from wmkit.profiles import get_profile
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import ladder as wm_ladder

OUT = Path("research/regime_results/wm_r1_round16")
BLIND_TAPS = range(1, 8)


def fixed_sequence_in_world_model(tasks, source: ag.WorldModelSource, actions) -> dict:
    """Judged success of `actions` (then finished()) on every task inside `source`, beside the
    simulator's success of the same actions (through a copy of the model's cache, ``detached``, so
    the training's cache stays as it was)."""
    wm = source.detached()
    wm.begin(tasks)
    idx = list(range(len(tasks)))
    sims = [phone.PhoneEnv(max_steps=10_000) for _ in tasks]
    for env, task in zip(sims, tasks):
        env.reset(task=task)
    for a in actions:  # the agent loop ends an episode at finished() without a transition
        wm.step(idx, [a] * len(idx))
        for env in sims:
            env.step(a)
    for env in sims:
        env.step("finished()")
    judged = [wm.success(i) for i in idx]
    real = [env.is_success() for env in sims]
    n = len(tasks)
    return {"judged": sum(judged) / n, "real": sum(real) / n,
            "false_positive": sum(j and not r for j, r in zip(judged, real)) / n,
            "false_negative": sum(r and not j for j, r in zip(judged, real)) / n}


def judging_of(policy, tasks, source, sizes, seed) -> dict:
    """The world model's judging of `policy`'s episodes played inside it, per class."""
    return wm_eval.judging_by_class(wm_eval.judge_agreement(None, None, tasks, source.detached(), sizes.max_steps,
                                                            seed=seed, policy=policy, screen_view=sizes.screen_view))


def judged_by_sequence(policy, tasks, source, sizes, seed, top: int = 8) -> list[dict]:
    """The policy's episodes played inside the world model, grouped by their action sequence (the
    most frequent first): how many, how many the model judged a success, how many really succeed
    when the same actions are replayed in the simulator."""
    import torch

    torch.manual_seed(seed)
    wm = source.detached()
    episodes = ag.run_episodes(policy, tasks, wm.episode_source(), imaginer=wm,
                               config=ag.AgentConfig(max_steps=sizes.max_steps, screen_view=sizes.screen_view))
    groups: dict[tuple, list[int]] = {}
    for ep in episodes:
        row = groups.setdefault(tuple(ep.actions), [0, 0, 0])
        row[0] += 1
        row[1] += bool(ep.success)
        row[2] += wm_eval.replayed_success(ep)
    ranked = sorted(groups.items(), key=lambda kv: -kv[1][0])[:top]
    return [{"actions": list(k), "episodes": n, "judged": j, "real": r} for k, (n, j, r) in ranked]


def blind_share(episodes) -> dict:
    """Share of episodes that are exactly open_app(settings), tap(k), finished() for each k."""
    out = {}
    for k in BLIND_TAPS:
        seq = ["open_app(settings)", f"tap({k})", "finished()"]
        parsed = [phone.parse_action(a) for a in seq]  # as parsed: the policy may write spaces
        out[k] = sum([phone.parse_action(a) for a in e.actions] == parsed for e in episodes) / max(1, len(episodes))
    return {k: v for k, v in out.items() if v}


def run(seed: int) -> dict:
    w = get_profile("cpu").wm_r1
    sizes = replace(w, learned_world=replace(w.learned_world, error_rates=()))
    work = OUT / "work" / f"seed{seed}"
    cached = Path(f"runs/cpu/bench/work/wm_r1_learned/seed{seed}/world_model_seed{seed}")
    if not (work / f"world_model_seed{seed}").exists():
        shutil.copytree(cached, work / f"world_model_seed{seed}")
    captured = {}
    train = wm_ladder.train_wm_r1

    def capture(config, *args, **kwargs):
        result = train(config, *args, **kwargs)
        captured["model"], captured["tokenizer"] = result.model, args[1]
        return result

    sources = {}
    from wmkit.wm_r1 import learned
    make_source = learned.edit_world_model_source

    def keep_source(*args, **kwargs):
        sources["wm"] = make_source(*args, **kwargs)
        return sources["wm"]

    wm_ladder.train_wm_r1, learned.edit_world_model_source = capture, keep_source
    try:
        result = wm_ladder.run_learned_world_model(get_profile("cpu"), seed, sizes=sizes, out_dir=work, log=print)
    finally:
        wm_ladder.train_wm_r1, learned.edit_world_model_source = train, make_source
    record = json.loads(Path(glob.glob(f"executed/cpu/bench/records/wm_r1_learned/seed{seed}_15ba3d8c8cb3_*.json")[0])
                        .read_text())["result"]
    same = {arm: (result[arm]["greedy"], record[arm]["greedy"]) if arm == "start" else
            (result["rungs"]["learned"]["greedy"], record["rungs"]["learned"]["greedy"]) for arm in ("start", "learned")}
    reproduced = all(a["success"] == b["success"] and a["per_template"] == b["per_template"] for a, b in same.values())
    sl = wm_ladder.learned_world_sizes(sizes)
    tasks = wm_ladder.ladder_eval_tasks(sl)
    fidelity_tasks = tasks[:sl.ladder.fidelity_episodes]
    from wmkit.wm_r1.oracle import NoisyOracle

    model, tokenizer, source = captured["model"], captured["tokenizer"], sources["wm"]
    greedy = ag.Policy(model, tokenizer, max_turn_tokens=sl.max_turn_tokens, greedy=True)
    sampled = ag.Policy(model, tokenizer, max_turn_tokens=sl.max_turn_tokens, temperature=1.0)
    # the benchmark's greedy evaluation (imagined calls answered by the exact oracle)
    real_greedy = wm_eval.evaluate(model, tokenizer, tasks, NoisyOracle(0.0), sl.max_steps, greedy=True,
                                   max_turn_tokens=sl.max_turn_tokens, max_completion_tokens=sl.max_completion_tokens,
                                   seed=seed, screen_view=sl.screen_view)
    out = {"seed": seed, "reproduces_record": reproduced, "trained_greedy_success": real_greedy["success"],
           "record_greedy": {"start": record["start"]["greedy"]["success"],
                             "learned": record["rungs"]["learned"]["greedy"]["success"]},
           "judged_on_start_sampled": {k: record["learned_world_model"][k] for k in
                                       ("success_judged_on_real_successes", "failure_judged_on_real_failures",
                                        "imagined_success", "real_success")},
           "trained_greedy_in_wm": judging_of(greedy, fidelity_tasks, source, sl, seed),
           "trained_sampled_in_wm": judging_of(sampled, fidelity_tasks, source, sl, seed),
           "trained_greedy_blind_share": blind_share(real_greedy["episodes"]),
           "trained_greedy_sequences_in_wm": judged_by_sequence(greedy, fidelity_tasks, source, sl, seed),
           "blind_sequences": {k: fixed_sequence_in_world_model(tasks, source,
                                                                ["open_app(settings)", f"tap({k})"])
                               for k in BLIND_TAPS}}
    return out


if __name__ == "__main__":
    for s in map(int, sys.argv[1:]):
        row = run(s)
        (OUT / f"trained_policy_judging_seed{s}.json").write_text(json.dumps(row, indent=1, default=str))
        print(json.dumps(row, default=str))
