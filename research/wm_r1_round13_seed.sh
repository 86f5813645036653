#!/usr/bin/env bash
# One seed of the thirteenth round (WM_R1_LADDER.md section 20), one core: the planned test of
# WM-R1 inside the learned world model with the reference paths expanded (section 19.4's N = 60,
# 12-epoch model) on seeds never run. The same start, GRPO and judging as round twelve.
# Usage: research/wm_r1_round13_seed.sh SEED   (rows appended to runs/control/results.jsonl)
WM_TAG=sbedx60 WM_ARGS="--expand 60 --epochs 12" LEARNED_TAG=sbq2_editwmx60 \
  exec "$(dirname "$0")/wm_r1_round12_seed.sh" "$1"
