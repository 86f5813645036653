"""RLVR-World's experiments in :data:`wmkit.experiments.REGISTRY` (its claims: ``claims.py``) (the video one is in ``wmkit/video``).

Functions are named as ``"module:function"`` strings: ``wmkit.rlvr_world.experiment`` and ``.regime``
import torch and transformers (about 4 s on 2 CPU cores), and ``python -m wmkit --help`` reads this file.
"""
from __future__ import annotations

from wmkit.entries import Experiment, Option

PAPER = "RLVR-World"
_EXPERIMENT = "wmkit.rlvr_world.experiment"
_CONFIG = "wmkit.rlvr_world.config:rlvr_sizes"
_BENCH_CONFIG = "wmkit.rlvr_world.config:bench_rlvr_sizes"
_WORLD_MODEL = ("default_model", "world_model")
"""The profile parts besides the sizes that the bench experiments read: notebook 01's world model, or the
working level's, is built at its sizes (`Experiment.reads`)."""


EXPERIMENTS = (
    Experiment("rlvr_mle_vs_rl", PAPER, f"{_EXPERIMENT}:run_rlvr_mle_vs_rl", _BENCH_CONFIG,
               "text game: an MLE world model of notebook 01's recipe, its own per seed, vs MLE + GRPO "
               "(task-specific reward)", reads=_WORLD_MODEL),
    Experiment("rlvr_regime", PAPER, "wmkit.rlvr_world.regime:run_rlvr_regime", _BENCH_CONFIG,
               "text game, a small world the MLE model can nearly predict (notebook 02's working level): "
               "MLE vs MLE + GRPO (the regime recipe: exact reward, every field of the next state), each seed "
               "from its own MLE model", reads=_WORLD_MODEL),
    Experiment("rlvr_regime_ablations", PAPER, "wmkit.rlvr_world.regime:run_rlvr_regime_ablations",
               _BENCH_CONFIG, "text game, notebook 02's working level: reward types (exact, RLVR-World's binary "
               "check, task-specific, ROUGE-L) and G = 4 vs the recipe's G, each from the same MLE model (the "
               "seed's own)", reads=_WORLD_MODEL),
    Experiment("rlvr_ablations", PAPER, f"{_EXPERIMENT}:run_rlvr_ablations", _BENCH_CONFIG,
               "text game, full world: reward types, group sizes, best-of-k of the MLE model (the seed's own)",
               reads=_WORLD_MODEL),
    Experiment("rlvr_phone", PAPER, f"{_EXPERIMENT}:run_rlvr_phone", _BENCH_CONFIG,
               "phone screens: screen-diff F1 before and after RLVR, from the seed's own MLE model",
               reads=_WORLD_MODEL),
    Experiment("rlvr_seeds", PAPER, f"{_EXPERIMENT}:run_rlvr_seed", _CONFIG,
               "notebook 02: notebook 01's MLE world model vs MLE + GRPO (task-specific reward), one RL run per "
               "seed", role="run", command="rlvr-world", combine=f"{_EXPERIMENT}:combine_rlvr_seeds",
               check=f"{_EXPERIMENT}:check_options",
               options=(Option("--sweep", "learning-rate sweep on validation instead of seeds (seed 0, "
                                          "rlvr_lr_sweep.json)", to="variant", variant="rlvr_lr_sweep"),
                        Option("--steps", "override GRPO steps", to="sizes", type=int, field="grpo.max_steps"),
                        Option("--lora", "sweep: LoRA adapters even on the from-scratch model"),
                        Option("--runs-dir", "where notebook 01's world model is and the JSON goes "
                                             "(default runs/<profile>)", to="seeds", type=str),
                        Option("--vllm", "generate GRPO rollouts with vLLM (TRL colocate mode; CUDA and "
                                         "pip install vllm)", to="seeds"))),
    Experiment("rlvr_lr_sweep", PAPER, f"{_EXPERIMENT}:run_rlvr_sweep", _CONFIG,
               "notebook 02's learning-rate sweep on the validation split (the test split never chooses)",
               role="variant", combine="wmkit.entries:single_record", out_name=f"{_EXPERIMENT}:sweep_file",
               seeds=(0,)),
)
