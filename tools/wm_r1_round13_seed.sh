#!/usr/bin/env bash
# One seed of the thirteenth round (WM_R1_LADDER.md section 20), one core: the planned test of
# WM-R1 inside the learned world model with the reference paths expanded (section 19.4's N = 60,
# 12-epoch model) on seeds never run. The same start, GRPO and judging as round twelve.
# Usage: tools/wm_r1_round13_seed.sh SEED   (rows appended to runs/control/results.jsonl)
set -euo pipefail
S=$1
T=setting_on,setting_off,setting_flip,setting_match
P="env OMP_NUM_THREADS=1 .venv/bin/python tools/explore_wm_r1_control.py"
GRPO="--templates $T --steps 60 --group-size 8 --prompts 4 --temperature 0.6 --pool fresh --n 400 --p 0 --seed $S"
[ -e runs/control/sbqunder2_seed$S/agent_text.json ] || \
  $P sft --status-bar --balanced --sft-tasks 2400 --epochs 2 --seed $S --tag sbqunder2
[ -e runs/control/sbedx60_seed$S/edit_format.json ] || \
  $P world-model --edit --status-bar --templates $T --episodes 600 --expand 60 --epochs 12 --seed $S --tag sbedx60
$P train --ckpt runs/control/sbqunder2_seed$S $GRPO --learned runs/control/sbedx60_seed$S --tag sbq2_editwmx60
$P train --ckpt runs/control/sbqunder2_seed$S $GRPO --tag sbq2_ctrl
$P fidelity --ckpt runs/control/sbqunder2_seed$S --templates $T --learned runs/control/sbedx60_seed$S \
  --fidelity-episodes 200 --p 0 --seed $S
