"""RLVR-World's video claims, measured by ``rlvr_video`` (:mod:`wmkit.video.registry`).

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

from wmkit.design import Design, above, all_of
from wmkit.entries import KIT_CONTROL, Claim


def moved(arm: str):
    """RL acted on the video model of arm `arm`: its parameters moved (relative change above 0)."""
    return above(f"arms/{arm}/moved", f"RL moved the {arm} arm's parameters")

CLAIMS = (
    Claim("rlvr.video", "RLVR-World", "RLVR improves video world models (LPIPS)", "video LPIPS +9.2% relative",
          "rlvr_video", "relative_l1_gain/all/rollout",
          kit_label="relative L1 gain of RLVR over MLE, (L1_MLE − L1_RLVR)/L1_MLE, greedy 8-frame rollouts on "
                    "held-out MiniGrid episodes; RL on every training transition with the profile's reward "
                    "(cpu: l1_agent_present, −(L1 + a missing-agent term), the kit's offline stand-in for "
                    "−(L1 + LPIPS), whose pretrained weights cannot be downloaded here)",
          precondition=moved("all"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.384, sd_seeds=18,
              conversion="none: the paper's +9.2% is relative LPIPS; the kit measures relative L1 (LPIPS "
                         "weights need a download)",
              sd_source="executed/cpu/bench/records seeds 0-17")),
    Claim("rlvr.video_changed", "RLVR-World", "the same, RL on changed transitions plus a sample of unchanged ones",
          "— (the kit's check: RLVR-World's text-model data recipe on video)", "rlvr_video",
          "relative_l1_gain/changed/rollout",
          kit_label="relative L1 gain of RLVR over MLE, greedy rollouts; RL on changed transitions + 25% unchanged",
          measures="rlvr.video"),
    Claim("rlvr.video_one_step", "RLVR-World", "RLVR improves one-step next-frame prediction", "— (the kit's check)",
          "rlvr_video", "relative_l1_gain/all/one_step",
          kit_label="relative L1 gain of RLVR over MLE, greedy one-step predictions from real frames",
          measures="rlvr.video"),
    Claim("rlvr.repetition", "RLVR-World", "RLVR reduces repetition artefacts in video prediction",
          "repetition 48.6% → 9.9%", "rlvr_video", "arms/all/one_step/copy_rate_changed",
          "mle/one_step/copy_rate_changed", direction="lower",
          kit_label="Δ copy rate: share of held-out steps where the picture changes but the greedy prediction "
                    "repeats the last frame (RLVR − MLE, RL on every transition)",
          precondition=all_of(moved("all"), "wmkit.video.experiment:agent_kept_all"),
          design=Design(paper_effect=-0.387, sesoi=0.05, sd=0.0865, sd_seeds=18,
              conversion="the paper's repetition rate 48.6% -> 9.9% as a share of frames: -0.387 of the kit's"
                         " copy rate",
              sd_source="executed/cpu/bench/records seeds 0-17")),
    Claim("rlvr.repetition_changed", "RLVR-World", "the same, RL on changed transitions plus a sample of "
          "unchanged ones", "— (the kit's check)", "rlvr_video", "arms/changed/one_step/copy_rate_changed",
          "mle/one_step/copy_rate_changed", direction="lower",
          kit_label="Δ copy rate (RLVR − MLE), RL on changed transitions + 25% unchanged",
          precondition="wmkit.video.experiment:agent_kept_changed", measures="rlvr.repetition"),
    Claim("rlvr.video_exact_changed", "RLVR-World", "RLVR predicts more of the changing frames exactly",
          "— (the kit's check that a lower copy rate is a right move, not an erased agent)", "rlvr_video",
          "arms/changed/one_step/exact_changed", "mle/one_step/exact_changed",
          kit_label="Δ share of held-out changed steps predicted exactly (greedy), RL on changed + 25% unchanged",
          kind=KIT_CONTROL,
          precondition=moved("changed"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.135, sd_seeds=18,
              conversion="none: the kit's own check",
              sd_source="executed/cpu/bench/records seeds 0-17")),
    Claim("rlvr.video_changed_steps", "RLVR-World", "RL on changed transitions sharpens the frames that change",
          "— (the kit's check)", "rlvr_video",
          "relative_l1_gain/changed/one_step_changed",
          kit_label="relative L1 gain of RLVR over MLE, greedy one-step predictions on the held-out steps whose "
                    "picture changes; RL on changed + 25% unchanged", kind=KIT_CONTROL,
          precondition=moved("changed"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.322, sd_seeds=18,
              conversion="none: the kit's own check",
              sd_source="executed/cpu/bench/records seeds 0-17")),
    Claim("rlvr.video_unchanged_cost", "RLVR-World", "the price: the same RL gets the frames that do not change wrong",
          "— (the kit's check; its relative-L1 form is undefined where MLE is exact on them)", "rlvr_video",
          "arms/changed/one_step/exact_unchanged", "mle/one_step/exact_unchanged", direction="lower",
          kit_label="Δ share of held-out unchanged steps predicted exactly (greedy), RL on changed + 25% unchanged",
          kind=KIT_CONTROL,
          precondition=moved("changed"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.321, sd_seeds=18,
              conversion="none: the kit's own check",
              sd_source="executed/cpu/bench/records seeds 0-17")),
    Claim("rlvr.video_agent_kept", "RLVR-World", "the reward's object term keeps the agent in the picture",
          "— (the kit's check: the perceptual term's job, done offline by the kit's agent term)", "rlvr_video",
          "arms/changed/one_step/agent_missing", "mle/one_step/agent_missing", direction="lower",
          threshold=0.02,
          kit_label="Δ share of held-out one-step predictions without the agent (RLVR − MLE), RL on changed "
                    "+ 25% unchanged with the profile's reward; the line is the kit's 2-point tolerance",
          kind=KIT_CONTROL,
          precondition=moved("changed"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0269, sd_seeds=18,
              conversion="none: the kit's own check",
              sd_source="executed/cpu/bench/records seeds 0-17")),
    Claim("rlvr.video_pixel_hacking", "RLVR-World", "a pixel-only reward (−L1) erases the agent: reward hacking",
          "— (the kit's check: why the paper adds a perceptual term to L1)", "rlvr_video",
          "arms/changed_l1/one_step/agent_missing", "mle/one_step/agent_missing", direction="higher",
          threshold=0.02,
          kit_label="Δ share of held-out one-step predictions without the agent (RLVR − MLE), RL on changed "
                    "+ 25% unchanged with −L1 alone (the profile's contrast arm); the line is the kit's 2-point "
                    "tolerance", kind=KIT_CONTROL,
          precondition=moved("changed_l1"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.28, sd_seeds=18,
              conversion="none: the kit's own check",
              sd_source="executed/cpu/bench/records seeds 0-17")),
)

EXPERIMENT_SCALE_NOTES = {
    "rlvr_video": ("on a tiny next-frame model a pixel reward trades the steps it trains on against the ones it "
                   "rarely sees, and RL removes the repetition artefact only where a seed's MLE model copies the "
                   "last frame"),
}
"""The same as a paper's ``SCALE_NOTE``, for a card whose claims all come from one experiment that
measures a paper's claims in another medium than the paper's other experiments."""
