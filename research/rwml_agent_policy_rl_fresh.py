"""Policy RL from a saved model of research/explore_rwml_agent.py, the start loaded fresh from disk.

Why (research/RWML_AGENT.md, section 5): in `wmkit.rwml.agent.run_rwml_agent_seed` policy RL from the
RWML model starts from ``copy.deepcopy(rwml)``, and the RWML model has been through TRL's GRPOTrainer,
whose fused-LM-head patch (trl 1.16, ``trl/trainer/utils.py``) set an instance ``forward`` on it that
calls the *original* object's bound forward from its closure. The copy keeps that closure: its
gradients reach its own weights, but every generation (its GRPO rollouts and the evaluation) runs the
RWML model's weights, so ``acting/rwml_policy_rl`` is the RWML model's acting (bitwise the same
success, failed steps and expert NLL on seeds 103 and 104). The warm-up never went through GRPO and
its arm is unaffected.

This script repeats step 6 of the seed for one start (`rwml`: the RWML model saved in
``runs/explore/rwml_agent/<tag>/seed<S>/rwml/final``; `warm`: the saved warm-up, as a check that the
run out of process gives the recorded warm arm), loaded fresh (no patched forward), with the same
world, tasks, reward, GRPO settings and seed, and writes
``regime_results/rwml_agent/<tag>_policy_rl_fresh/seed<S>_<start>.json``. Exploration seeds only.

    PYTHONPATH=$PWD python research/rwml_agent_policy_rl_fresh.py 103 --start rwml [--tag main]
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explore_wm_r1_ablations import FIRST_EXPLORATION_SEED, LAST_EXPLORATION_SEED, cpu_model

HERE = Path(__file__).resolve().parent
RUNS = Path("runs/explore/rwml_agent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=int)
    parser.add_argument("--start", choices=("rwml", "warm"), required=True)
    parser.add_argument("--tag", default="main")
    args = parser.parse_args()
    seed, start_name = args.seed, args.start
    if not FIRST_EXPLORATION_SEED <= seed <= LAST_EXPLORATION_SEED:
        raise SystemExit(f"seed {seed}: exploration uses seeds {FIRST_EXPLORATION_SEED}-{LAST_EXPLORATION_SEED}")
    import torch

    from wmkit.core import models
    from wmkit.core.models import parameter_change
    from wmkit.profiles import get_profile
    from wmkit.rewards.wm_r1 import WMR1RewardConfig
    from wmkit.rwml.agent import acting, reference_nll
    from wmkit.rwml.config import bench_rwml_agent_sizes
    from wmkit.wm_r1.ladder import ladder_eval_tasks, ladder_world, on_ladder_phone, rung_config
    from wmkit.wm_r1.method import train_wm_r1
    from wmkit.wm_r1.oracle import NoisyOracle
    from wmkit.wm_r1.tasks import grpo_pool

    torch.set_num_threads(1)
    recorded = json.loads((HERE / "regime_results" / "rwml_agent" / args.tag / f"seed{seed}.json").read_text())
    sizes = bench_rwml_agent_sizes(get_profile("cpu"))
    world = sizes.world
    folder = (RUNS / args.tag / f"seed{seed}" / "rwml" / "final" if start_name == "rwml"
              else RUNS / "warm" / f"{args.tag}_seed{seed}")
    begin = time.perf_counter()
    start, tokenizer = models.load_model(str(folder))
    assert "forward" not in start.__dict__, "a freshly loaded model carries no patched forward"
    eval_tasks = ladder_eval_tasks(world)
    nll_tasks = eval_tasks[:world.ladder.fidelity_episodes]
    start_nll = reference_nll(start, tokenizer, nll_tasks, world, seed)
    print(f"seed {seed}: {start_name} loaded from {folder}: expert NLL {start_nll:.6f} "
          f"(recorded {recorded['reference_nll'][start_name]:.6f})", flush=True)
    templates = ladder_world(world)
    rl_tasks = on_ladder_phone(grpo_pool(world, seed, templates), world)
    assert sizes.policy_reward == "success"
    policy_reward = WMR1RewardConfig(beta=0.0, gamma=0.0, max_steps=world.max_steps)
    out = RUNS / f"{args.tag}_policy_rl_fresh" / f"seed{seed}"
    rung = rung_config(world, out / f"policy_rl_{start_name}", seed, reward=policy_reward)
    run = train_wm_r1(rung, copy.deepcopy(start), tokenizer, rl_tasks, NoisyOracle(0.0, seed=seed))
    result_acting = acting(run.model, tokenizer, eval_tasks, world, seed)
    result_acting.pop("greedy_actions")
    quarter = max(1, len(run.history) // 4)
    result = {
        "seed": seed, "start": start_name, "tag": args.tag, "loaded_from": str(folder),
        "start_reference_nll": start_nll, "recorded_start_reference_nll": recorded["reference_nll"][start_name],
        "acting": result_acting, "reference_nll": reference_nll(run.model, tokenizer, nll_tasks, world, seed),
        "param_change": parameter_change(start, run.model),
        "success_first_last_quarter": [sum(h["success"] for h in run.history[:quarter]) / quarter,
                                       sum(h["success"] for h in run.history[-quarter:]) / quarter],
        "train_seconds": round(run.seconds, 1), "wall_seconds": round(time.perf_counter() - begin, 1),
        "cpu": cpu_model(),
        "recorded": {"acting": {m: recorded["acting"][f"{start_name}_policy_rl"][m] for m in ("greedy", "sampled")},
                     "reference_nll": recorded["reference_nll"][f"{start_name}_policy_rl"],
                     "policy_rl": recorded["policy_rl"][start_name]}}
    path = HERE / "regime_results" / "rwml_agent" / f"{args.tag}_policy_rl_fresh" / f"seed{seed}_{start_name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=float))
    print(f"seed {seed}: policy RL from {start_name} (fresh): greedy success {result_acting['greedy']['success']:.3f}, "
          f"sampled {result_acting['sampled']['success']:.3f} (recorded {recorded['acting'][f'{start_name}_policy_rl']['greedy']['success']:.3f}); "
          f"{result['wall_seconds']:.0f} s -> {path}", flush=True)


if __name__ == "__main__":
    main()
