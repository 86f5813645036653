"""RWML's experiments in :data:`wmkit.experiments.REGISTRY` (its claims: ``claims.py``).

Functions are named as ``"module:function"`` strings: ``wmkit.rwml.experiment`` imports torch and
transformers (seconds), and ``python -m wmkit --help`` reads this file.
"""
from __future__ import annotations

from wmkit.entries import Experiment, Option

PAPER = "RWML"
_EXPERIMENT = "wmkit.rwml.experiment"

EXPERIMENTS = (
    Experiment("rwml", PAPER, f"{_EXPERIMENT}:run_rwml", "wmkit.rwml.config:bench_rwml_sizes",
               "TextWorldExpress: embedding-reward RL vs SFT, forgetting on the kit's environments; "
               "policy RL (Simon Says) from the base vs the RWML model",
               requires="wmkit.envs.twx:unavailable_reason",
               prepare="wmkit.core.build:prepare_series_world_model", reads=("default_model", "world_model")),
    Experiment("rwml_textgame", PAPER, f"{_EXPERIMENT}:run_rwml_textgame", "wmkit.rwml.config:bench_rwml_textgame_sizes",
               "the kit's text game (tiny world): embedding-reward RL from a 10% warm-up vs the warm-up and vs "
               "SFT on the same data; forgetting on the kit's full text game and phone",
               prepare="wmkit.core.build:prepare_series_world_model", reads=("default_model", "world_model")),
    Experiment("rwml_agent", PAPER, "wmkit.rwml.agent:run_rwml_agent", "wmkit.rwml.config:bench_rwml_agent_sizes",
               "one model that predicts and acts (the phone's settings world): the agent's success and failed "
               "steps after RWML on next-screen prediction vs its warm-up, and policy RL from each"),
    Experiment("rwml_seeds", PAPER, f"{_EXPERIMENT}:run_rwml_seed", "wmkit.rwml.config:rwml_sizes",
               "TextWorldExpress: embedding-reward RL vs SFT from notebook 01's world model, and policy RL, "
               "at the profile's rwml sizes (notebook 02)", role="run", command="rwml",
               options=(Option("--runs-dir", "where notebook 01's world model is and the JSON goes "
                                             "(default runs/<profile>)", to="seeds", type=str),
                        Option("--vllm", "generate GRPO rollouts with vLLM (TRL colocate mode; CUDA and "
                                         "pip install vllm)", to="seeds"))),
)
