"""WMRL's claims, each with the experiment of :mod:`wmkit.wmrl.registry` that measures it.

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

from wmkit.entries import KIT_CONTROL, Claim

CLAIMS = (
    Claim("wmrl.error_floor", "WMRL", "pure world-model RL plateaus at an error floor above real-execution RL",
          "Theorem 3 (permanent floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/real/final_gap/mean",
          kit_label="final gap to J*, pure WM − real (controlled problem)"),
    Claim("wmrl.closes_gap", "WMRL", "anchored RL ends closer to the optimum than pure world-model RL",
          "Theorem 4 (contracting floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, pure WM − WMRL (controlled problem)"),
    Claim("wmrl.compute_controlled", "WMRL", "WMRL reaches real-execution quality with less compute",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_controlled", "compute_ratio/real_over_wmrl/ratio",
          direction="higher", threshold=0.0, derive="wmkit.wmrl.experiment:record_log_ratio_controlled",
          kit_label="log of compute to target, real / WMRL (controlled; > 0: WMRL cheaper; e^value is the "
                    "ratio; WMRL never reaching it counts as at best 1×)", measures="wmrl.compute_research"),
    Claim("wmrl.compute_research", "WMRL", "the same on research tasks executed for real",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_research",
          "compute_ratio/learned/real_over_wmrl/ratio", direction="higher", threshold=0.0,
          derive="wmkit.wmrl.experiment:record_log_ratio_research",
          kit_label="log of compute to target in work units (1 per execution), real / WMRL (learned WM, "
                    "build counted; > 0: WMRL cheaper; WMRL never reaching it counts as at best 1×)"),
    Claim("wmrl.final_score", "WMRL", "WMRL's final score is at least real-execution GRPO's",
          "16.4 vs 15.2 (MLE-Dojo)", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/real/final/mean",
          direction="higher", threshold=-1e-9, kit_label="final expected grade, WMRL − real (learned WM)"),
    Claim("wmrl.ablation_both", "WMRL", "ablation: both corrections beat no correction", "16.4 vs 13.5",
          "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, both − none (learned WM)"),
    Claim("wmrl.ablation_debias", "WMRL", "ablation: debiasing alone helps", "15.7 vs 13.5", "wmrl_research",
          "arms/debias only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, debias only − none (learned WM)"),
    Claim("wmrl.ablation_denoise", "WMRL", "ablation: denoising alone helps", "14.9 vs 13.5", "wmrl_research",
          "arms/denoise only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, denoise only − none (learned WM)"),
    Claim("wmrl.ablation_controlled", "WMRL", "ablation on the controlled problem: both corrections beat none",
          "16.4 vs 13.5", "wmrl_controlled", "arms/no correction/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, none − both (controlled)", measures="wmrl.ablation_both"),
    Claim("wmrl.vs_anchors_only", "WMRL", "(kit's control) the world-model groups help beyond the anchors alone",
          "not reported", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/anchors only/final/mean",
          kit_label="final grade, WMRL − anchors-only (learned WM)", kind=KIT_CONTROL),
)

SCALE_NOTE = ("the kit's policy is a small softmax on small problems, where the differences between WMRL, its "
              "ablations and real execution are small next to the spread between seeds")
"""Why the kit, at its scale, reproduces some of WMRL's claims and not others: in words, without
numbers (the numbers are the report's). Read by :func:`wmkit.bench.cards.result_card`."""
