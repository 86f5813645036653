#!/usr/bin/env bash
# One seed of the twelfth round (WM_R1_LADDER.md section 19), one core: the bar phone's 2-epoch
# start, a structured-edit world model of the settings world, WM-R1 inside it, GRPO on the
# simulator from the same start, and the world model's judging on the start's own episodes.
# Usage: research/wm_r1_round12_seed.sh SEED   (rows appended to runs/control/results.jsonl)
# WM_TAG, WM_ARGS and LEARNED_TAG name another world model (research/wm_r1_round13_seed.sh).
set -euo pipefail
S=$1
WM_TAG=${WM_TAG:-sbedid20}
WM_ARGS=${WM_ARGS:---epochs 20}
LEARNED_TAG=${LEARNED_TAG:-sbq2_editwm}
T=setting_on,setting_off,setting_flip,setting_match
P="env OMP_NUM_THREADS=1 .venv/bin/python research/explore_wm_r1_control.py"
GRPO="--templates $T --steps 60 --group-size 8 --prompts 4 --temperature 0.6 --pool fresh --n 400 --p 0 --seed $S"
[ -e runs/control/sbqunder2_seed$S/agent_text.json ] || \
  $P sft --status-bar --balanced --sft-tasks 2400 --epochs 2 --seed $S --tag sbqunder2
[ -e runs/control/${WM_TAG}_seed$S/edit_format.json ] || \
  $P world-model --edit --status-bar --templates $T --episodes 600 $WM_ARGS --seed $S --tag $WM_TAG
$P train --ckpt runs/control/sbqunder2_seed$S $GRPO --learned runs/control/${WM_TAG}_seed$S --tag $LEARNED_TAG
$P train --ckpt runs/control/sbqunder2_seed$S $GRPO --tag sbq2_ctrl
$P fidelity --ckpt runs/control/sbqunder2_seed$S --templates $T --learned runs/control/${WM_TAG}_seed$S \
  --fidelity-episodes 200 --p 0 --seed $S
