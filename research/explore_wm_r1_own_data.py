"""Probe (round 14 of research/WM_R1_LADDER.md): does the learned world model stop being exploited
when its data also holds the agent's own episodes?

The kit's settings-world world model (``wmkit.wm_r1.learned``) is trained on collection episodes
(the reference plan with random detours) and the reference neighbourhood (every action from every
state of a few reference paths). The issue asks for "the agent's own and perturbed actions from
those states" as well. This probe adds, before any RL:

- ``--agent-episodes`` episodes of the SFT start, sampled at T = 1 in the simulator on tasks of
  their own seed (90_000 + seed), replayed into transitions;
- for the first ``--agent-neighbourhood`` of them, every valid action and two invalid ones from
  every state the episode visits (the agent's neighbourhood).

Then it trains the edit world model on both (the kit's sizes), measures its judging as the kit
does, and trains WM-R1 inside it from the same start (the kit's rung ``"learned"``). With
``--simulator`` it also runs GRPO on the simulator (the rung p = 0); with ``--kit-model`` also
WM-R1 inside the kit's own world model (no agent data), so a new seed has every arm paired.

Nothing here changes the library: the kit's functions are called, and the world model's data
function is wrapped for this process only.

    python research/explore_wm_r1_own_data.py --seed 0 [--simulator] [--kit-model]
"""
from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def agent_transitions(model, tokenizer, sizes, seed: int, n_episodes: int,
                      n_neighbourhood: int) -> tuple[list, float]:
    """(transitions, success of the episodes): the start's sampled episodes (and the
    neighbourhood of the first `n_neighbourhood`) as world-model transitions of the status-bar phone."""
    from wmkit.envs import phone
    from wmkit.envs.base import Transition
    from wmkit.wm_r1 import evaluation as wm_eval
    from wmkit.wm_r1 import ladder as wm_ladder
    from wmkit.wm_r1.oracle import NoisyOracle

    tasks = wm_ladder.on_ladder_phone(phone.sample_tasks(n_episodes, 90_000 + seed, wm_ladder.ladder_world(sizes)), sizes)
    episodes = wm_eval.evaluate(model, tokenizer, tasks, NoisyOracle(0.0), sizes.max_steps, greedy=False,
                                max_turn_tokens=sizes.max_turn_tokens, max_completion_tokens=sizes.grpo.max_completion_length,
                                seed=90_000 + seed, screen_view=sizes.screen_view)["episodes"]
    rng = random.Random(90_000 + seed)
    out = []
    for i, ep in enumerate(episodes):
        env = phone.PhoneEnv(max_steps=10_000)
        env.reset(task=ep.task)
        for step, action in enumerate(ep.actions):
            if phone.parse_action(action) in (None, ("finished",)):
                continue
            before = env.observation()
            tried = [action]
            if i < n_neighbourhood:
                tried += [a for a in env.valid_actions() + rng.sample(phone._INVALID_ACTIONS, 2) if a != action]
            for a in tried:
                branch = env.clone()
                branch.step(a)
                after = branch.observation()
                diff = phone.compute_diff(before, after)
                out.append(Transition(env="phone", episode=f"agent-{seed}-{i}", step=step, state=before, action=a,
                                      action_type=phone.action_type(a), next_state=after, diff=diff,
                                      changed=not phone.is_no_change(diff), task=ep.task.instruction))
            env.step(action)
    return out, sum(ep.success for ep in episodes) / max(1, len(episodes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agent-episodes", type=int, default=300)
    parser.add_argument("--agent-neighbourhood", type=int, default=30)
    parser.add_argument("--simulator", action="store_true", help="also GRPO on the simulator (p = 0)")
    parser.add_argument("--kit-model", action="store_true", help="also WM-R1 inside the kit's world model")
    parser.add_argument("--only-kit-model", action="store_true",
                        help="only WM-R1 inside the kit's world model (the pairing of an earlier run)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", default=str(REPO / "runs" / "probe_own_data"))
    args = parser.parse_args()

    import torch

    from wmkit.core.worldmodel import split_by_episode
    from wmkit.envs import phone_edit
    from wmkit.profiles import get_profile
    from wmkit.wm_r1.config import wm_r1_sizes
    from wmkit.wm_r1 import evaluation as wm_eval
    from wmkit.wm_r1 import experiment as ex
    from wmkit.wm_r1 import ladder as wm_ladder
    from wmkit.wm_r1 import learned

    torch.set_num_threads(1)
    profile = get_profile(args.profile)
    sizes = wm_ladder.learned_world_sizes(wm_r1_sizes(profile))
    out = Path(args.out) / args.profile / f"a{args.agent_episodes}n{args.agent_neighbourhood}_seed{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    model, tokenizer, _ = wm_ladder.build_ladder_start(profile, args.seed, sizes)
    extra, start_sampled = agent_transitions(model, tokenizer, sizes, args.seed, args.agent_episodes,
                                             args.agent_neighbourhood)
    extra_split = split_by_episode(extra)
    kit_transitions = learned.edit_transitions

    def with_agent_data(wm_sizes, seed, templates):
        data, kept_plain = kit_transitions(wm_sizes, seed, templates)
        for split, rows in extra_split.items():
            edits = [phone_edit.encode_edit(t.state, t.diff) for t in rows]
            kept_plain += sum(e is None for e in edits)
            data[split] = data[split] + [replace(t, diff=e) if e is not None else t for t, e in zip(rows, edits)]
        return data, kept_plain

    record = {"seed": args.seed, "agent_episodes": args.agent_episodes,
              "agent_neighbourhood": args.agent_neighbourhood, "agent_transitions": len(extra),
              "agent_split": {k: len(v) for k, v in extra_split.items()}, "start_sampled_on_agent_tasks": start_sampled}
    print(json.dumps(record), flush=True)
    arms = {} if args.only_kit_model else {"own_data": with_agent_data}
    if args.kit_model or args.only_kit_model:
        arms["kit_model"] = kit_transitions
    eval_tasks = wm_ladder.ladder_eval_tasks(sizes)
    for arm, data_function in arms.items():
        learned.edit_transitions = data_function
        wm, wm_tokenizer, info = learned.train_edit_world_model(sizes.learned, args.seed, wm_ladder.ladder_world(sizes),
                                                                out / f"world_model_{arm}")
        learned.edit_transitions = kit_transitions
        source = learned.edit_world_model_source(wm, wm_tokenizer, sizes.wm_max_new_tokens)
        error_rates = (0.0,) if (args.simulator and arm == "own_data") else ()
        arm_sizes = replace(sizes, ladder=replace(sizes.ladder, error_rates=error_rates))
        result = wm_ladder.run_fidelity_ladder(profile, args.seed, sizes=arm_sizes, start=(model, tokenizer),
                                               out_dir=out / arm, learned_world_model=source, train_in_learned=True)
        result["learned_world_model"]["reference"] = wm_eval.reference_in_world_model(eval_tasks[:200], source)
        result["world_model_info"] = info
        record[arm] = ex._jsonable(result)
        record["seconds"] = round(time.perf_counter() - started, 1)
        (out / ("record_kit_model.json" if args.only_kit_model else "record.json")).write_text(json.dumps(record, indent=1, default=str))
        rung = result["rungs"]["learned"]
        fid = result["learned_world_model"]
        print(f"{arm}: judging failures {fid['failure_judged_on_real_failures']:.3f} successes "
              f"{fid['success_judged_on_real_successes']:.3f} reference {fid['reference']['imagined_success_of_reference']:.3f} exact {fid['exact']:.3f}; "
              f"start {result['start']['greedy']['success']:.3f} -> learned greedy {rung['greedy']['success']:.3f} "
              f"sampled {rung['sampled']['success']:.3f}; judged {rung['judged_success_first_quarter']:.3f} -> "
              f"{rung['judged_success_last_quarter']:.3f}", flush=True)


if __name__ == "__main__":
    main()
