"""RLVR-World's claims on the kit's text game and phone screens, each with the experiment of
:mod:`wmkit.rlvr_world.registry` that measures it (the video claims are in :mod:`wmkit.video.claims`).

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

from wmkit.design import Design, all_of, reward_varied
from wmkit.entries import LIMITATION, Claim

RL_SIGNAL = reward_varied("runs/0/zero_std_share", "GRPO had a signal: in some step a group's rewards differed")
"""The precondition that RLVR acted: a step whose groups all scored alike moves nothing (TRL's
``frac_reward_zero_std`` below 1 in some step)."""


def arm_signal(arm: str):
    """RLVR acted in the ablation arm `arm`: its mean share of groups whose rewards were all alike is below 1."""
    return reward_varied(f"arms/{arm}/zero_std_share", f"GRPO had a signal in the {arm} arm")


def _rl(mode: str, part: str) -> tuple[str, str]:
    return f"runs/0/after/{mode}/{part}", f"before/{mode}/{part}"


CLAIMS = (
    Claim("rlvr.regime_changed", "RLVR-World", "RLVR raises sampled accuracy on changed transitions where the "
          "MLE model can nearly predict them (small text-game world)", "1.5B: +9.6 points on changed",
          "rlvr_regime", "runs/0/after/changed/sampled", "before/changed/sampled",
          kit_label="Δ exact accuracy, changed (sampled), working level",
          precondition=RL_SIGNAL,
          design=Design(paper_effect=0.096, sesoi=0.048, sd=0.06, sd_seeds=3,
              conversion="the paper's +9.6 points of exact accuracy on changed transitions (1.5B) as a share:"
                         " +0.096",
              sd_source="regime_results/design_seeds_rlvr_regime.json seeds 100-102")),
    Claim("rlvr.regime_reward", "RLVR-World", "RLVR raises the task-specific reward on changed transitions "
          "where the MLE model can nearly predict them",
          "— (the paper reports no reward figure on the text game)", "rlvr_regime",
          "runs/0/after/changed/reward", "before/changed/reward",
          kit_label="Δ task-specific reward of samples, changed (0..1.3), working level",
          # the same RL runs and samples as rlvr.regime_changed, scored another way: a sub-row, no vote
          measures="rlvr.regime_changed"),
    # Compared at the same k: MLE pass@k_max ≥ RLVR pass@1 holds almost whatever RL does, so it would
    # show little; RL that only sharpens leaves pass@k at large k no higher than the MLE model's.
    Claim("rlvr.regime_pass_at_k", "RLVR-World", "limitation: RL sharpens what the model can already do "
          "(at the largest k, RLVR's pass@k is no higher than the MLE model's)", "— (stated limitation)",
          "rlvr_regime", "before/changed/pass_at/-1", "runs/0/after/changed/pass_at/-1", direction="higher",
          threshold=-1e-9,
          kit_label="MLE pass@k_max − RLVR pass@k_max (same k), changed, working level (≥ 0: RL did not extend)",
          kind=LIMITATION,
          precondition=RL_SIGNAL,
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0918, sd_seeds=3,
              conversion="none: a limitation the paper states without a number",
              sd_source="regime_results/design_seeds_rlvr_regime.json seeds 100-102")),
    Claim("rlvr.regime_reward_type", "RLVR-World", "a task-specific reward beats the binary check where the "
          "MLE model can nearly predict (small text-game world)", "— (reward ablation; no headline number)",
          "rlvr_regime_ablations", "arms/reward_task_specific/after/changed/sampled",
          "arms/reward_binary/after/changed/sampled",
          kit_label="task-specific − binary-check arm, exact accuracy on changed (sampled), working level",
          precondition=all_of(arm_signal("reward_task_specific"), arm_signal("reward_binary")),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0232, sd_seeds=3,
              conversion="none: the paper gives the ablation's direction, no number",
              sd_source="executed/cpu/bench/records seeds 0-2")),
    Claim("rlvr.regime_group_size", "RLVR-World", "larger GRPO groups end higher where the MLE model can nearly "
          "predict", "— (group-size ablation; paper runs use G=5)", "rlvr_regime_ablations",
          "arms/reward_exact/after/changed/sampled", "arms/group_4/after/changed/sampled",
          kit_label="G = 8 − G = 4 arm (exact reward), exact accuracy on changed (sampled), working level",
          precondition=all_of(arm_signal("reward_exact"), arm_signal("group_4")),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0241, sd_seeds=3,
              conversion="none: the paper gives no number (its runs use G = 5)",
              sd_source="executed/cpu/bench/records seeds 0-2")),
    Claim("rlvr.changed", "RLVR-World", "RLVR raises accuracy on changed transitions (sampled, T=1), full world",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("sampled", "changed"),
          kit_label="Δ exact accuracy, changed (sampled)", measures="rlvr.regime_changed"),
    Claim("rlvr.unchanged", "RLVR-World", "RLVR raises accuracy on unchanged transitions (sampled, T=1), full world",
          "1.5B: +44.8 points on unchanged", "rlvr_mle_vs_rl", *_rl("sampled", "unchanged"),
          kit_label="Δ exact accuracy, unchanged (sampled)",
          precondition=RL_SIGNAL,
          design=Design(paper_effect=0.448, sesoi=0.05, sd=0.0509, sd_seeds=3,
              conversion="the paper's +44.8 points of exact accuracy on unchanged transitions (1.5B) as a "
                         "share: +0.448",
              sd_source="regime_results/design_seeds_rlvr_mle_vs_rl.json seeds 100-102")),
    Claim("rlvr.changed_greedy", "RLVR-World", "RLVR raises greedy accuracy on changed transitions, full world",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("greedy", "changed"),
          kit_label="Δ exact accuracy, changed (greedy)", measures="rlvr.regime_changed"),
    Claim("rlvr.partial", "RLVR-World", "RLVR raises the task-specific reward on changed transitions, full world",
          "— (the paper reports no reward figure on the text game)", "rlvr_mle_vs_rl",
          *_rl("greedy", "partial_changed"),
          kit_label="Δ task-specific reward, changed (greedy, 0..1.3)", measures="rlvr.regime_changed"),
    Claim("rlvr.web_f1", "RLVR-World", "RLVR raises screen-diff F1 (web pages in the paper, phone screens here)",
          "web page: +15.1% F1", "rlvr_phone", "arm/after/greedy/partial_changed", "before/greedy/partial_changed",
          kit_label="Δ screen-diff F1, changed (greedy)",
          precondition=reward_varied("arm/zero_std_share",
                                     "GRPO had a signal: in some step a group's F1 rewards differed"),
          design=Design(paper_effect=0.151, sesoi=0.05, sd=0.0136, sd_seeds=3,
              conversion="the paper's +15.1% F1 on web pages as points of F1 (0..1): +0.151 of the kit's "
                         "screen-diff F1",
              sd_source="regime_results/design_seeds_rlvr_phone.json seeds 100-102")),
    Claim("rlvr.reward_type", "RLVR-World", "a task-specific reward beats the binary exact-match reward, full world",
          "— (reward ablation; no headline number)", "rlvr_ablations",
          "rewards/task_specific/after/greedy/partial_changed", "rewards/binary/after/greedy/partial_changed",
          kit_label="task-specific − binary arm, task-specific reward on changed",
          measures="rlvr.regime_reward_type"),
    Claim("rlvr.group_size", "RLVR-World", "larger GRPO groups end higher, full world",
          "— (group-size ablation; paper runs use G=5)", "rlvr_ablations",
          "group_sizes/large/after/greedy/partial_changed", "group_sizes/small/after/greedy/partial_changed",
          kit_label="largest − smallest G, task-specific reward on changed", measures="rlvr.regime_group_size"),
    Claim("rlvr.best_of_k", "RLVR-World", "limitation: the MLE model sampled k times (perfect verifier) "
          "catches up with RLVR's single answer", "— (stated limitation)", "rlvr_ablations",
          "best_of_k/mle_at_k_max", "best_of_k/rlvr_at_1", direction="higher", threshold=-1e-9,
          kit_label="MLE best-of-k_max − RLVR pass@1, changed (≥ 0: caught up)",
          kind=LIMITATION, measures="rlvr.regime_pass_at_k"),
)

SCALE_NOTE = ("RL sharpens what the MLE model can nearly predict: the kit's tiny models gain where a small "
              "world puts the right answer within reach, and elsewhere a few seeds cannot tell the change from "
              "no change")
"""Why the kit, at its scale, reproduces some of RLVR-World's claims and not others: in words, without
numbers (the numbers are the report's). Read by :func:`wmkit.bench.cards.result_card`."""
