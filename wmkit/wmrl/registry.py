"""WMRL's experiments in :data:`wmkit.experiments.REGISTRY` (its claims: ``claims.py``).

``wmkit.wmrl.experiment`` imports numpy alone (about 0.12 s more on top of ``python -m wmkit --help``),
so the entries name its functions directly.
"""
from __future__ import annotations

from wmkit.entries import Experiment, Option
from wmkit.wmrl import experiment as wmrl

PAPER = "WMRL"

EXPERIMENTS = (
    Experiment("wmrl_controlled", PAPER, wmrl.run_wmrl_controlled, "wmkit.wmrl.config:bench_wmrl_sizes",
               "controlled problem with a known optimum and the paper's error model"),
    Experiment("wmrl_research", PAPER, wmrl.run_wmrl_research, "wmkit.wmrl.config:bench_wmrl_sizes",
               "research tasks executed for real (scikit-learn), learned world model"),
    Experiment("wmrl_seeds", PAPER, wmrl.run_wmrl_seed, "wmkit.wmrl.config:wmrl_sizes",
               "notebook 04's checks 4 (controlled problem) and 5 (research tasks executed for real)",
               role="run", command="wmrl", combine=wmrl.combine_wmrl_seeds, check=wmrl.check_options,
               timing_key="wall_seconds", options=(Option("--check", "4, 5 or all (default)", type=str),)),
)
