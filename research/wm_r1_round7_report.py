"""Tables of the seventh to ninth WM-R1 rounds (research/WM_R1_LADDER.md sections 14-16) from
the probe's rows: each seed-0 start's list step against section 11.3's seed-0 start and the
rounds' decision rule (the same in both), the index loss, and (when run) the positive control's
paired gains with 95% t-intervals and the kit's verdict rule, plus the start-vs-start change
against section 11.3's starts.

    python research/wm_r1_round7_report.py [results.jsonl]   (default research/regime_results/wm_r1_round7.jsonl;
                                                           section 15: research/regime_results/wm_r1_round8.jsonl;
                                                           section 16: research/regime_results/wm_r1_round9.jsonl)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from research.wm_r1_round3_report import control_runs, print_control  # noqa: E402 (after the path insert)
from wmkit import stats

LIST_TEMPLATES = ("open_contact", "open_note", "delete_contact", "open_chat")
BASE_TAG = "bal2400e15"  # section 11.3's start (plain thoughts, the phone's view), rows in wm_r1_round4.jsonl
RULE_MEAN_GAIN, RULE_TEMPLATES_HIGHER = 0.10, 3

source = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "research" / "regime_results" / "wm_r1_round7.jsonl"
rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
base_rows = [json.loads(line) for line in (REPO / "research/regime_results/wm_r1_round4.jsonl").read_text().splitlines()]


def tag_seed(ckpt):
    name = Path(ckpt).name
    tag, seed = name.rsplit("_seed", 1)
    return tag, int(seed)


def last(rows, cmd, tag, seed, **match):
    """The last row of `cmd` on the start <tag>_seed<seed> (sft rows name it by tag and seed, the
    probes by their checkpoint), with the given fields equal."""
    def start(r):
        return (r.get("tag"), r.get("seed")) if cmd == "sft" else tag_seed(r.get("ckpt") or "none_seed-1")
    found = [r for r in rows if r["cmd"] == cmd and start(r) == (tag, seed)
             and all(r.get(k) == v for k, v in match.items())]
    return found[-1] if found else None


def list_step(grounding):
    return {t: grounding["rows"][t]["second_step_right_given_first"] for t in LIST_TEMPLATES}


base = {s: (last(base_rows, "sft", BASE_TAG, s), list_step(last(base_rows, "grounding", BASE_TAG, s)))
        for s in (0, 1, 2)}
tags = sorted({r["tag"] for r in rows if r["cmd"] == "sft"})
print(f"list step = second step right given the first (grounding --n 100); in brackets the change over 11.3's seed-0 start")
print(f"11.3 start, seed 0: list step {base[0][1]} (mean {sum(base[0][1].values()) / 4:.3f})")
for tag in tags:
    for seed in sorted({r["seed"] for r in rows if r["cmd"] == "sft" and r["tag"] == tag}):
        sft = last(rows, "sft", tag, seed)
        print(f"\n{tag} seed {seed}: greedy {sft['greedy']:.3f} sampled {sft['sampled']:.3f}; SFT {sft['sft_seconds']:.0f} s, "
              f"{sft['epochs']:g} epochs x {sft['sft_tasks']}, weights {sft.get('sft_template_weights') or 'equal'}, "
              f"view {sft['screen_view']}, indexed thought {sft['thought_index']}, "
              f"policy (hidden, layers, heads, intermediate) {tuple(sft['policy'][:4])}")
        for token in ("name", "index", "tap"):
            loss = last(rows, "name_loss", tag, seed, token=token)
            if loss:
                print(f"  {token} loss: own SFT tasks {loss['sft_tasks']['loss']:.2f} (argmax {loss['sft_tasks']['argmax_right']:.2f}, "
                      f"n {loss['sft_tasks']['n']}), fresh {loss['fresh_tasks']['loss']:.2f} "
                      f"(argmax {loss['fresh_tasks']['argmax_right']:.2f}); offsets "
                      f"{loss['sft_tasks'].get('argmax_minus_right_index')} / {loss['fresh_tasks'].get('argmax_minus_right_index')}")
        grounding = last(rows, "grounding", tag, seed)
        if grounding is None:
            continue
        step = list_step(grounding)
        gains = {t: step[t] - base[seed][1][t] for t in LIST_TEMPLATES}
        mean_gain = sum(gains.values()) / 4
        higher = sum(g > 0 for g in gains.values())
        for t in LIST_TEMPLATES:
            g = grounding["rows"][t]
            indexed = (f"index is named item's {g['index_is_the_named_item']:.2f}; tap copies index "
                       f"{g['tap_copies_the_index']:.2f}; offsets {g['index_minus_named_items_index']}"
                       if g["indexed"] else "plain thoughts")
            print(f"  {t:15s} list step {step[t]:.2f} ({gains[t]:+.2f}); names {g['thought_names_target']:.2f}; "
                  f"tap hits named {g['tap_is_the_named_item']:.2f}; {indexed}")
        if seed == 0:
            passed = mean_gain >= RULE_MEAN_GAIN and higher >= RULE_TEMPLATES_HIGHER
            print(f"  rule: mean gain {mean_gain:+.3f} (need >= +{RULE_MEAN_GAIN}), higher on {higher} of 4 "
                  f"(need >= {RULE_TEMPLATES_HIGHER}) -> {'PASS' if passed else 'fail'}")

for tag, runs in control_runs(rows).items():
    print_control(f"control {tag}", runs)
    starts = [tag_seed(r["ckpt"]) for r in runs]
    for mode in ("greedy", "sampled"):
        judged = stats.verdict(stats.differences([r[mode][0] for r in runs], [base[s][0][mode] for _, s in starts]))
        print(f"  start vs 11.3's start, {mode}: {stats.describe(judged.summary)} -> {judged.text}")
    step_change = []
    for t, s in starts:
        g = last(rows, "grounding", t, s)
        if g:
            step_change.append(sum(list_step(g).values()) / 4 - sum(base[s][1].values()) / 4)
    if len(step_change) == len(starts):
        judged = stats.verdict(step_change)
        print(f"  start vs 11.3's start, list step (mean of 4): {stats.describe(judged.summary)} -> {judged.text}")
