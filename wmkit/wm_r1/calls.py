"""WM-R1's world-model calls per episode over training, from a start that calls.

The set-up is :mod:`wmkit.wm_r1.ablations`' (the status-bar settings world, the seed's edit world model
of :mod:`wmkit.wm_r1.learned`, a 2-epoch SFT start, GRPO inside the learned world model), with the
``wm_r1`` arm only and one change: the SFT start is taught on reference episodes in which every step
but the last (``finished()``) first imagines its action with ``call_wm``
(``imagine_rate`` :data:`CALLS_IMAGINE_RATE`, :func:`wmkit.wm_r1.tasks.reference_episode`), so the
policy calls the world model before each real step when training begins.

Calls per episode over training are the ``wm_r1`` arm's ``wm_calls_first_last_quarter``: the mean over
every rollout of the first quarter of its GRPO steps and of the last quarter (sampled at the rung's
temperature); the claim ``wm_r1.calls_fall`` reads their difference, first − last (> 0: calls fell).

:func:`calls_sizes` is the benchmark's sizes for ``wm_r1_calls``; :func:`run_wm_r1_calls` its entry.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from wmkit.profiles import Profile
from wmkit.runs import bench_work_dir
from wmkit.wm_r1.config import WMR1Sizes, wm_r1_sizes

CALLS_IMAGINE_RATE = 1.0
"""The share of reference steps (all but the last of an episode) that first imagine their action, in the
SFT start of ``wm_r1_calls``."""

CALLS_ARMS = ("wm_r1",)
"""The arms of :func:`wmkit.wm_r1.ablations.run_learned_ablations` that ``wm_r1_calls`` runs."""


def calls_sizes(profile: Profile) -> WMR1Sizes:
    """The profile's WM-R1 sizes with a start that imagines every step but the last (:data:`CALLS_IMAGINE_RATE`)."""
    return replace(wm_r1_sizes(profile), imagine_rate=CALLS_IMAGINE_RATE)


def run_wm_r1_calls(profile: Profile, seed: int, runs_root: Path, sizes: WMR1Sizes) -> dict:
    """The benchmark's calls-per-episode experiment: :func:`wmkit.wm_r1.ablations.run_learned_ablations`
    for this seed, its own world model and start (at `sizes`, :func:`calls_sizes`), the ``wm_r1`` arm only."""
    from wmkit.wm_r1.ablations import run_learned_ablations  # here: it imports torch and transformers

    return run_learned_ablations(profile, seed, sizes=sizes, out_dir=bench_work_dir(runs_root, "wm_r1_calls", seed),
                                 arms=CALLS_ARMS, log=lambda line: None)


__all__ = ["CALLS_ARMS", "CALLS_IMAGINE_RATE", "calls_sizes", "run_wm_r1_calls"]
