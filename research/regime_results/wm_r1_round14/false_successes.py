"""Which failures does a learned world model of the settings world judge a success?
(research/WM_R1_LADDER.md section 24.)

Plays `n` episodes of the seed's SFT start (sampled at T = 1) inside the world model saved in
`world_model_dir`, with the kit's success judge; replays each in the simulator; and writes one
row per episode: its actions, the judged and the real success, and whether each predicted screen
was exact. The rows of seed 0 on the Intel machine, with the judge that ignored side effects, are
false_successes_seed0_intel.json beside this file.

    python research/regime_results/wm_r1_round14/false_successes.py SEED WORLD_MODEL_DIR N OUT.json
"""
import json
import sys

import torch

from wmkit.core import build
from wmkit.envs import phone
from wmkit.profiles import get_profile
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import ladder as wm_ladder
from wmkit.wm_r1 import learned, method

torch.set_num_threads(1)
seed, world_model_dir, n, out = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
sizes = wm_ladder.learned_world_sizes(get_profile("cpu").wm_r1)
policy_model, policy_tokenizer, _ = wm_ladder.build_ladder_start(get_profile("cpu"), seed, sizes)
wm, wm_tokenizer, _ = build.load_world_model(world_model_dir)
source = learned.edit_world_model_source(wm, wm_tokenizer, sizes.wm_max_new_tokens)
tasks = wm_ladder.ladder_eval_tasks(sizes)[:n]
torch.manual_seed(seed + 5)
policy = ag.Policy(policy_model, policy_tokenizer, max_turn_tokens=sizes.max_turn_tokens, temperature=1.0)
episodes = ag.run_episodes(policy, tasks, method._make_source("world_model", source, 0.0), imaginer=source,
                           config=ag.AgentConfig(max_steps=sizes.max_steps, screen_view=sizes.screen_view))
rows = []
for episode in episodes:
    env = phone.PhoneEnv(max_steps=10_000)
    screen = env.reset(task=episode.task)
    exact = []
    for action in episode.actions:
        if phone.parse_action(action) not in (None, ("finished",)):
            real_next = env.step(action).observation
            exact.append(source.predict([(screen, action)])[0] == real_next)
            screen = real_next
    rows.append({"instr": episode.task.instruction, "template": episode.task.template, "actions": episode.actions,
                 "judged": episode.success, "real": env.is_success(), "exact_steps": exact,
                 "ref": phone.reference_solution(episode.task)})
false_successes = [r for r in rows if r["judged"] and not r["real"]]
print("episodes", len(rows), "true successes", sum(r["judged"] and r["real"] for r in rows),
      "false successes", len(false_successes), "missed", sum(r["real"] and not r["judged"] for r in rows),
      "false successes with every screen exact", sum(all(r["exact_steps"]) for r in false_successes))
with open(out, "w") as f:
    json.dump(rows, f)
