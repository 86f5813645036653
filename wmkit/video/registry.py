"""The video experiment (RLVR-World's video world model, notebook 06) in :data:`wmkit.experiments.REGISTRY` (its claims: ``claims.py``).

``wmkit.video.experiment`` imports numpy alone at import time (torch when it runs), so the entries name
its functions directly.
"""
from __future__ import annotations

from wmkit.entries import Experiment, Option
from wmkit.video import experiment as video

PAPER = "RLVR-World"

EXPERIMENTS = (
    Experiment("rlvr_video", PAPER, video.run_rlvr_video, "wmkit.video.config:video_sizes",
               "video: MiniGrid frames, patch-codebook tokens, a tiny next-frame model by MLE vs MLE + GRPO on "
               "the decoded frame (the profile's reward; cpu: −(L1 + a missing-agent term), and −L1 alone on the "
               "changed arm as the contrast) (notebook 06)"),
    Experiment("video_seeds", PAPER, video.run_video_seed_record, "wmkit.video.config:video_sizes",
               "notebook 06: MiniGrid next-frame model, MLE vs MLE + GRPO, seeds run `parallel_runs` at a time",
               role="run", command="rlvr-video", combine=video.combine_video_seeds, workers="parallel_runs",
               options=(Option("--runs-dir", "where the JSON goes (default runs/<profile>)", to="seeds", type=str),)),
)
