"""WM-R1's experiments in :data:`wmkit.experiments.REGISTRY` (its claims: ``claims.py``).

Functions are named as ``"module:function"`` strings: ``wmkit.wm_r1.experiment`` and
``wmkit.wm_r1.ladder`` import torch and transformers (about 3 s on 2 CPU cores), and
``python -m wmkit --help`` reads this file.
"""
from __future__ import annotations

from wmkit.entries import Experiment, Option

PAPER = "WM-R1"
_EXPERIMENT = "wmkit.wm_r1.experiment"
_LADDER = "wmkit.wm_r1.ladder"
_CONFIG = "wmkit.wm_r1.config:wm_r1_sizes"

EXPERIMENTS = (
    Experiment("wm_r1", PAPER, f"{_EXPERIMENT}:run_wm_r1", "wmkit.wm_r1.config:bench_wm_r1_sizes",
               "phone agent trained inside the world model vs its baselines and ablations, judged in the simulator",
               prepare="wmkit.core.build:prepare_series_world_model", reads=("default_model", "world_model")),
    Experiment("wm_r1_ladder", PAPER, f"{_LADDER}:run_wm_r1_ladder", _CONFIG,
               "phone agent trained by WM-R1 inside a noisy oracle (the simulator, screens corrupted and success "
               "flipped at rate p), one SFT start, p = 0 (= GRPO on the real simulator) up to 0.6, judged in the simulator"),
    Experiment("wm_r1_small_world", PAPER, f"{_LADDER}:run_wm_r1_small_world", _CONFIG,
               "the same ladder where its mechanism can act: GRPO and the evaluation on the four single-setting "
               "templates (the same right taps in every world), from a start stopped after 2 SFT epochs (cpu)"),
    Experiment("wm_r1_learned", PAPER, f"{_LADDER}:run_wm_r1_learned", _CONFIG,
               "WM-R1 inside a learned world model of the settings world (status-bar phone; structured edits; "
               "the reference neighbourhood) vs its start and vs GRPO on the simulator from the same start"),
    Experiment("wm_r1_learned_ablations", PAPER, "wmkit.wm_r1.ablations:run_wm_r1_learned_ablations", _CONFIG,
               "WM-R1's ablations where WM-R1 learns: in the learned settings world, from one start and the same "
               "number of updates, WM-R1 vs without imagined calls, without the length reward, and best-of-K "
               "inside the same world model; calls per episode over training"),
    Experiment("wm_r1_calls", PAPER, "wmkit.wm_r1.calls:run_wm_r1_calls", "wmkit.wm_r1.calls:calls_sizes",
               "WM-R1's world-model calls per episode over training, where the start calls: the same learned "
               "settings world and updates as wm_r1_learned_ablations, WM-R1 only, from a start taught to imagine "
               "every step but the last (imagine_rate 1.0); calls in the first vs the last quarter of the GRPO steps"),
    Experiment("wm_r1_seeds", PAPER, f"{_EXPERIMENT}:run_wm_r1_seed", _CONFIG,
               "notebook 03: the phone agent, every arm of the profile, judged in the simulator", role="run",
               command="wm-r1", combine=f"{_EXPERIMENT}:combine_wm_r1_seeds", check=f"{_EXPERIMENT}:check_options",
               timing_key=None,
               options=(Option("--arms", "arms to run (default: the profile's)", type=str, nargs="*"),
                        Option("--first-seed", "first seed (default 0)", to="seeds", type=int),
                        Option("--threads", "torch threads (default 2)", type=int))),
)
