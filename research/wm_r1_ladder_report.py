"""Tables of the second WM-R1 ladder round (research/WM_R1_LADDER.md section 7) from the probe's rows.

    python research/wm_r1_ladder_report.py [results.jsonl]   (default research/regime_results/wm_r1_ladder_round2.jsonl)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from wmkit import stats
from wmkit.wm_r1 import ladder as wm_ladder

source = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "research" / "regime_results" / "wm_r1_ladder_round2.jsonl"
rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
sft = [r for r in rows if r["cmd"] == "sft" and r.get("tag") == "bal600"]
print("SFT starts:")
for r in sft:
    print(f"  seed {r['seed']}: greedy {r['greedy']:.3f} sampled {r['sampled']:.3f} sft {r['sft_seconds']} s eval {r['eval_seconds']} s")
g = stats.summarize([r["greedy"] for r in sft]); s = stats.summarize([r["sampled"] for r in sft])
print("  greedy", stats.describe(g), "std", g["std"]); print("  sampled", stats.describe(s), "std", s["std"])
lad = [r["result"] for r in rows if r["cmd"] == "ladder" and "bal600" in (r.get("ckpt") or "")]
lad = sorted(lad, key=lambda r: r["seed"])
print("ladder seeds", [r["seed"] for r in lad])
for r in lad:
    print(f" seed {r['seed']} start g {r['start']['greedy']['success']:.3f} s {r['start']['sampled']['success']:.3f}")
    for k, x in r["rungs"].items():
        f = x["fidelity"]
        print(f"   p={k}: exact {f['exact']:.3f} agree {f['agreement']:.3f} succ->succ {f['success_judged_on_real_successes']:.3f} "
              f"fail->fail {f['failure_judged_on_real_failures']:.3f} | greedy {x['greedy']['success']:.3f} sampled {x['sampled']['success']:.3f} "
              f"| judged {x['judged_success_first_quarter']:.2f}->{x['judged_success_last_quarter']:.2f} calls {x['wm_calls_first_last_quarter'][0]:.2f}->{x['wm_calls_first_last_quarter'][1]:.2f} "
              f"signal {x['signal_groups']:.2f} train {x['train_seconds']:.0f}s rung {x['seconds']:.0f}s")
if lad:
    summ = wm_ladder.summarize_ladder(lad)
    for k, row in summ["rungs"].items():
        print(f"p={k}: greedy gain {stats.describe(row['greedy_gain'])} {row['greedy_verdict']} | sampled gain {stats.describe(row['sampled_gain'])} {row['sampled_verdict']} | exact {stats.describe(row['exact'])}")
    if len(lad) >= 2:
        for top in ("0.1", "0.3", "0.6"):
            if all(top in r["rungs"] for r in lad):
                for mode in ("greedy", "sampled"):
                    d = stats.differences([r["rungs"]["0"][mode]["success"] for r in lad], [r["rungs"][top][mode]["success"] for r in lad])
                    v = stats.verdict(d); print(f"p=0 - p={top} {mode}: {v.text}")
        d = [r["rungs"]["0"]["wm_calls_first_last_quarter"][0] - r["rungs"]["0"]["wm_calls_first_last_quarter"][1] for r in lad]
        print("calls fall p=0:", stats.verdict(d).text)
for tag in sorted({r.get("tag") for r in rows if r["cmd"] == "train"}):
    runs = sorted([r for r in rows if r["cmd"] == "train" and r.get("tag") == tag], key=lambda r: r["seed"])
    print(f"GRPO on the simulator, tag {tag}, lr {runs[0]['lr']}, hard_below {runs[0].get('hard_below')}:")
    for r in runs:
        print(f"  seed {r['seed']}: pool {len(r['pool_templates'])} templates {r['pool_templates']} greedy {r['greedy']} "
              f"sampled {r['sampled']} judged {r['train_success_q1_q4']} calls {r['wm_calls_q1_q4']} "
              f"signal {r['signal_groups']} train {r['train_seconds']} s")
    for mode in ("greedy", "sampled"):
        print(" ", mode, stats.verdict([r[mode][1] - r[mode][0] for r in runs]).text)
