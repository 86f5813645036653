"""Best instruction-blind policy (open Settings, tap switch k, finish) on the settings ladders' 400
evaluation tasks, and each arm's greedy success against it over the published records.
Run from the repository root: PYTHONPATH=$PWD .venv/bin/python research/regime_results/wm_r1_round15/instruction_blind_policy.py"""
import glob
import json
from collections import defaultdict
from pathlib import Path

from wmkit import stats
from wmkit.envs import phone
from wmkit.profiles import get_profile
from wmkit.wm_r1 import ladder as wm_ladder


def blind(tasks):
    best = None
    for k in range(1, 8):
        per = defaultdict(list)
        for t in tasks:
            env = phone.PhoneEnv(); env.reset(task=t)
            for a in ("open_app(settings)", f"tap({k})", "finished()"):
                if env.step(a).done:
                    break
            per[t.template].append(float(env.is_success()))
        total = sum(sum(v) for v in per.values()) / len(tasks)
        if best is None or total > best[0]:
            best = (total, k, {t[8:]: round(sum(v) / len(v), 2) for t, v in sorted(per.items())})
    return best

w = get_profile("cpu").wm_r1
for name, sizes, exp, rungs in (("small_world", wm_ladder.small_world_sizes(w), "wm_r1_small_world", ("0", "0.6")),
                                 ("learned", wm_ladder.learned_world_sizes(w), "wm_r1_learned", ("learned", "0"))):
    b = blind(wm_ladder.ladder_eval_tasks(sizes))
    print(name, "best blind policy: tap", b[1], round(b[0], 4), b[2])
    for ver in ("c8e0", "15ba"):
        recs = [json.loads(Path(f).read_text())["result"]
                for f in sorted(glob.glob(f"executed/cpu/bench/records/{exp}/*{ver}*.json"))]
        if not recs:
            continue
        for arm in ("start",) + rungs:
            v = [(r["start"] if arm == "start" else r["rungs"][arm])["greedy"]["success"] for r in recs]
            d = [x - b[0] for x in v]
            print(f"  {ver} {arm:8s} − blind: {stats.describe(stats.verdict(d).summary)}  above on {sum(x > b[0] for x in v)}/{len(v)}")
