"""RLVR-World's claims on the kit's text game and phone screens, each with the experiment of
:mod:`wmkit.rlvr_world.registry` that measures it (the video claims are in :mod:`wmkit.video.claims`).

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

from wmkit.entries import LIMITATION, Claim


def _rl(mode: str, part: str) -> tuple[str, str]:
    return f"runs/0/after/{mode}/{part}", f"before/{mode}/{part}"


CLAIMS = (
    Claim("rlvr.regime_changed", "RLVR-World", "RLVR raises sampled accuracy on changed transitions where the "
          "MLE model can nearly predict them (small text-game world)", "1.5B: +9.6 points on changed",
          "rlvr_regime", "runs/0/after/changed/sampled", "before/changed/sampled",
          kit_label="Δ exact accuracy, changed (sampled), working level"),
    Claim("rlvr.regime_reward", "RLVR-World", "RLVR raises the task-specific reward on changed transitions "
          "where the MLE model can nearly predict them", "text game: +30.7% accuracy", "rlvr_regime",
          "runs/0/after/changed/reward", "before/changed/reward",
          kit_label="Δ task-specific reward of samples, changed (0..1.3), working level"),
    # Compared at the same k: MLE pass@k_max ≥ RLVR pass@1 holds almost whatever RL does, so it would
    # show little; RL that only sharpens leaves pass@k at large k no higher than the MLE model's.
    Claim("rlvr.regime_pass_at_k", "RLVR-World", "limitation: RL sharpens what the model can already do "
          "(at the largest k, RLVR's pass@k is no higher than the MLE model's)", "— (stated limitation)",
          "rlvr_regime", "before/changed/pass_at/-1", "runs/0/after/changed/pass_at/-1", direction="higher",
          threshold=-1e-9,
          kit_label="MLE pass@k_max − RLVR pass@k_max (same k), changed, working level (≥ 0: RL did not extend)",
          kind=LIMITATION),
    Claim("rlvr.regime_reward_type", "RLVR-World", "a task-specific reward beats the binary check where the "
          "MLE model can nearly predict (small text-game world)", "— (reward ablation; no headline number)",
          "rlvr_regime_ablations", "arms/reward_task_specific/after/changed/sampled",
          "arms/reward_binary/after/changed/sampled",
          kit_label="task-specific − binary-check arm, exact accuracy on changed (sampled), working level"),
    Claim("rlvr.regime_group_size", "RLVR-World", "larger GRPO groups end higher where the MLE model can nearly "
          "predict", "— (group-size ablation; paper runs use G=5)", "rlvr_regime_ablations",
          "arms/reward_exact/after/changed/sampled", "arms/group_4/after/changed/sampled",
          kit_label="G = 8 − G = 4 arm (exact reward), exact accuracy on changed (sampled), working level"),
    Claim("rlvr.changed", "RLVR-World", "RLVR raises accuracy on changed transitions (sampled, T=1), full world",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("sampled", "changed"),
          kit_label="Δ exact accuracy, changed (sampled)", measures="rlvr.regime_changed"),
    Claim("rlvr.unchanged", "RLVR-World", "RLVR raises accuracy on unchanged transitions (sampled, T=1), full world",
          "1.5B: +44.8 points on unchanged", "rlvr_mle_vs_rl", *_rl("sampled", "unchanged"),
          kit_label="Δ exact accuracy, unchanged (sampled)"),
    Claim("rlvr.changed_greedy", "RLVR-World", "RLVR raises greedy accuracy on changed transitions, full world",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("greedy", "changed"),
          kit_label="Δ exact accuracy, changed (greedy)", measures="rlvr.regime_changed"),
    Claim("rlvr.partial", "RLVR-World", "RLVR raises the task-specific reward on changed transitions, full world",
          "text game: +30.7% accuracy", "rlvr_mle_vs_rl", *_rl("greedy", "partial_changed"),
          kit_label="Δ task-specific reward, changed (greedy, 0..1.3)", measures="rlvr.regime_reward"),
    Claim("rlvr.web_f1", "RLVR-World", "RLVR raises screen-diff F1 (web pages in the paper, phone screens here)",
          "web page: +15.1% F1", "rlvr_phone", "arm/after/greedy/partial_changed", "before/greedy/partial_changed",
          kit_label="Δ screen-diff F1, changed (greedy)"),
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
