"""WMRL's claims, each with the experiment of :mod:`wmkit.wmrl.registry` that measures it.

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

import math

from wmkit.design import Design, above, all_of, moved_from
from wmkit.entries import KIT_CONTROL, Claim


def policy_moved(arm: str, start: str = "initial"):
    """The policy of arm `arm` moved: its final expected grade differs from the start's (at `start`)."""
    return moved_from(f"arms/{arm}/final/mean", start, f"the {arm} arm's policy moved from its start")


def refit(arm: str):
    """The world-model correction of arm `arm` acted: it was refit at least once."""
    return above(f"arms/{arm}/refits/0", f"{arm}'s correction was refit at least once")


CLAIMS = (
    Claim("wmrl.error_floor", "WMRL", "pure world-model RL plateaus at an error floor above real-execution RL",
          "Theorem 3 (permanent floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/real/final_gap/mean",
          kit_label="final gap to J*, pure WM − real (controlled problem)",
          precondition=all_of(policy_moved("pure WM", "initial/0"), policy_moved("real", "initial/0")),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.0183, sd_seeds=30,
              conversion="none: Theorem 3 states a floor, no number",
              sd_source="regime_results/design_seeds_wmrl_controlled.json seeds 100-129")),
    Claim("wmrl.closes_gap", "WMRL", "anchored RL ends closer to the optimum than pure world-model RL",
          "Theorem 4 (contracting floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, pure WM − WMRL (controlled problem)",
          precondition=all_of(policy_moved("pure WM", "initial/0"), refit("WMRL")),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.0195, sd_seeds=30,
              conversion="none: Theorem 4 states a contracting floor, no number",
              sd_source="regime_results/design_seeds_wmrl_controlled.json seeds 100-129")),
    Claim("wmrl.compute_controlled", "WMRL", "the same on the controlled problem (a known optimum, the paper's "
          "error model)",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_controlled", "compute_ratio/real_over_wmrl/ratio",
          direction="higher", threshold=0.0, derive="wmkit.wmrl.experiment:record_log_ratio_controlled",
          kit_label="log of compute to target, the smaller of real / WMRL and anchors-only / WMRL (controlled; "
                    "> 0: WMRL cheaper than both; e^value is the ratio; WMRL never reaching it counts as at best "
                    "1×)",
          measures="wmrl.compute_research"),
    Claim("wmrl.compute_research", "WMRL", "WMRL reaches real-execution quality with less compute than real "
          "execution and than the anchors-only control (research tasks executed for real)",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_research",
          "compute_ratio/learned/real_over_wmrl/ratio", direction="higher", threshold=0.0,
          derive="wmkit.wmrl.experiment:record_log_ratio_research",
          kit_label="log of compute to target in work units (1 per execution), the smaller of real / WMRL and "
                    "anchors-only / WMRL (learned WM, build counted; > 0: WMRL cheaper than both; WMRL never "
                    "reaching it counts as at best 1×)",
          precondition=refit("WMRL (learned)"),
          design=Design(paper_effect=1.131, sesoi=math.log(1.5), sd=0.539, sd_seeds=27,
              conversion="the paper's 3.1-3.4x less compute than real-execution GRPO, its lower end as a log "
                         "ratio: ln 3.1 = +1.131 (GPU-hours there, executions here)",
              sd_source="regime_results/design_seeds_wmrl_research.json seeds 100-129")),
    Claim("wmrl.final_score", "WMRL", "WMRL's final score is at least real-execution GRPO's",
          "16.4 vs 15.2 (MLE-Dojo)", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/real/final/mean",
          direction="higher", threshold=-1e-9, kit_label="final expected grade, WMRL − real (learned WM)",
          precondition=all_of(refit("WMRL (learned)"), policy_moved("real")),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.0208, sd_seeds=30,
              conversion="none: MLE-Dojo's score (16.4 vs 15.2) has no mapping to the kit's expected grade",
              sd_source="regime_results/design_seeds_wmrl_research.json seeds 100-129")),
    Claim("wmrl.ablation_both", "WMRL", "ablation: both corrections beat no correction", "16.4 vs 13.5",
          "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, both − none (learned WM)",
          precondition=all_of(refit("WMRL (learned)"), policy_moved("no correction (learned)")),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.0259, sd_seeds=30,
              conversion="none: MLE-Dojo's score (16.4 vs 13.5) has no mapping to the kit's expected grade",
              sd_source="regime_results/design_seeds_wmrl_research.json seeds 100-129")),
    Claim("wmrl.ablation_debias", "WMRL", "ablation: debiasing alone helps", "15.7 vs 13.5", "wmrl_research",
          "arms/debias only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, debias only − none (learned WM)",
          precondition=all_of(refit("debias only (learned)"), policy_moved("no correction (learned)")),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.0343, sd_seeds=30,
              conversion="none: MLE-Dojo's score (15.7 vs 13.5) has no mapping to the kit's expected grade",
              sd_source="regime_results/design_seeds_wmrl_research.json seeds 100-129")),
    Claim("wmrl.ablation_denoise", "WMRL", "ablation: denoising alone helps", "14.9 vs 13.5", "wmrl_research",
          "arms/denoise only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, denoise only − none (learned WM)",
          precondition=all_of(policy_moved("denoise only (learned)"), policy_moved("no correction (learned)")),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.022, sd_seeds=30,
              conversion="none: MLE-Dojo's score (14.9 vs 13.5) has no mapping to the kit's expected grade",
              sd_source="regime_results/design_seeds_wmrl_research.json seeds 100-129")),
    Claim("wmrl.ablation_controlled", "WMRL", "ablation on the controlled problem: both corrections beat none",
          "16.4 vs 13.5", "wmrl_controlled", "arms/no correction/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, none − both (controlled)", measures="wmrl.ablation_both"),
    Claim("wmrl.vs_anchors_only", "WMRL", "(kit's control) the world-model groups help beyond the anchors alone",
          "not reported", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/anchors only/final/mean",
          kit_label="final grade, WMRL − anchors-only (learned WM)", kind=KIT_CONTROL,
          precondition=refit("WMRL (learned)"),
          design=Design(paper_effect=None, sesoi=0.02, sd=0.0363, sd_seeds=30,
              conversion="none: the kit's own control",
              sd_source="regime_results/design_seeds_wmrl_research.json seeds 100-129")),
)

SCALE_NOTE = ("the kit's policy is a small softmax on small problems, where the differences between WMRL, its "
              "ablations and real execution are small next to the spread between seeds")
"""Why the kit, at its scale, reproduces some of WMRL's claims and not others: in words, without
numbers (the numbers are the report's). Read by :func:`wmkit.bench.cards.result_card`."""
