"""Tables of the third WM-R1 round (research/WM_R1_LADDER.md section 9) from the probe's rows: GRPO on
the exact simulator (= WM-R1 at p = 0) from the balanced SFT starts, per task pool and step size,
gains over each seed's start with 95% t-intervals and the kit's verdict rule.

    python research/wm_r1_round3_report.py [results.jsonl]   (default research/regime_results/wm_r1_round3.jsonl)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from wmkit import stats

def control_runs(rows: list[dict]) -> dict[str, list[dict]]:
    """The probe's `train` rows (GRPO from a start) by tag, each tag's seeds in order."""
    tags = sorted({r["tag"] for r in rows if r["cmd"] == "train"})
    return {tag: sorted((r for r in rows if r["cmd"] == "train" and r["tag"] == tag), key=lambda r: r["seed"])
            for tag in tags}


def print_control(tag: str, runs: list[dict]) -> None:
    """One control's rows per seed, then its gains over the starts with 95% t-intervals and the verdict rule."""
    print(f"\n{tag}: pool {runs[0].get('pool') or 'balanced'}, lr {runs[0]['lr']}, {runs[0]['steps']} steps, "
          f"T {runs[0]['T']}, {runs[0]['prompts']} tasks/step, G {runs[0]['G']}")
    for r in runs:
        print(f"  seed {r['seed']}: greedy {r['greedy'][0]:.3f} -> {r['greedy'][1]:.3f}, sampled {r['sampled'][0]:.3f} -> "
              f"{r['sampled'][1]:.3f}; training success {r['train_success_q1_q4'][0]:.2f} -> {r['train_success_q1_q4'][1]:.2f}; "
              f"calls {r['wm_calls_q1_q4'][0]:.2f} -> {r['wm_calls_q1_q4'][1]:.2f}; signal {r['signal_groups']:.2f}; "
              f"{r.get('distinct_worlds')} worlds in {r.get('groups_played')} groups; {r['train_seconds']:.0f} s")
    for mode in ("greedy", "sampled"):
        judged = stats.verdict(stats.differences([r[mode][1] for r in runs], [r[mode][0] for r in runs]))
        print(f"  {mode} gain (seeds {[r['seed'] for r in runs]}): {stats.describe(judged.summary)} -> {judged.text}")
    train = stats.verdict([r["train_success_q1_q4"][1] - r["train_success_q1_q4"][0] for r in runs])
    calls = stats.verdict([r["wm_calls_q1_q4"][0] - r["wm_calls_q1_q4"][1] for r in runs])
    print(f"  training success rise: {stats.describe(train.summary)} -> {train.text}; "
          f"calls fall: {stats.describe(calls.summary)} -> {calls.text}")


def print_starts(rows: list[dict]) -> None:
    """The probe's `sft` rows: each start's greedy and sampled success and its seconds."""
    for r in rows:
        if r["cmd"] == "sft":
            print(f"SFT {r['tag']} seed {r['seed']}: {r['epochs']:g} epochs, greedy {r['greedy']:.3f} sampled "
                  f"{r['sampled']:.3f} on {r['n']} tasks ({r['sft_seconds']:.0f} s SFT, {r['eval_seconds']:.0f} s evaluation)")


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "research" / "regime_results" / "wm_r1_round3.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    print_starts(rows)
    for tag, runs in control_runs(rows).items():
        print_control(tag, runs)
