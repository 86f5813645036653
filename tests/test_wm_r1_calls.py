"""WM-R1's calls per episode over training from a start that calls (wmkit.wm_r1.calls): its sizes,
its registry entry, and one tiny seed end to end with the measure and preconditions wm_r1.calls_fall reads."""
from dataclasses import replace

import pytest

from wmkit.bench import claims as bench_claims
from wmkit.core.models import TinyModelConfig
from wmkit.experiments import REGISTRY
from wmkit.profiles import get_profile
from wmkit.wm_r1 import calls
from wmkit.wm_r1.config import wm_r1_sizes

TINY = TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, vocab_size=512,
                       max_positions=2048)


def _claim():
    return {c.id: c for c in bench_claims.CLAIMS}["wm_r1.calls_fall"]


def test_the_start_imagines_every_step_and_nothing_else_changes():
    for name in ("smoke", "cpu"):
        profile = get_profile(name)
        base, sizes = wm_r1_sizes(profile), calls.calls_sizes(profile)
        assert base.imagine_rate < 1.0 and sizes.imagine_rate == calls.CALLS_IMAGINE_RATE == 1.0
        assert replace(sizes, imagine_rate=base.imagine_rate) == base
    entry = REGISTRY["wm_r1_calls"]
    assert entry.role == "bench" and entry.sizes == "wmkit.wm_r1.calls:calls_sizes"
    assert _claim().experiment == "wm_r1_calls"


@pytest.mark.slow
def test_one_tiny_seed_runs_end_to_end_and_gives_what_the_claim_reads(tmp_path):
    sizes = calls.calls_sizes(get_profile("smoke"))
    sizes = replace(sizes, policy=TINY, max_steps=2, max_turn_tokens=8, grpo=replace(sizes.grpo, max_completion_length=600),
                    lora=False,
                    learned=replace(sizes.learned, model=TINY, episodes=4, reference_neighbourhood=1),
                    learned_world=replace(sizes.learned_world, grpo=replace(sizes.learned_world.grpo, max_steps=4),
                                          eval_tasks=4, fidelity_episodes=2, sft_tasks=8))
    result = calls.run_wm_r1_calls(get_profile("smoke"), 100, tmp_path, sizes)
    assert set(result["arms"]) == set(calls.CALLS_ARMS) == {"wm_r1"}
    arm = result["arms"]["wm_r1"]
    first, last = arm["wm_calls_first_last_quarter"]
    history = [h["wm_calls"] for h in arm["history"]]
    assert len(history) == 4 and (first, last) == (pytest.approx(history[0]), pytest.approx(history[-1]))
    claim = _claim()
    assert bench_claims.claim_value(claim, result) == pytest.approx(first - last)
    # the preconditions read fields this result has: they say whether the method acted, never "missing"
    reason = bench_claims.precondition_failure(claim, {100: result})
    assert reason is None or reason.startswith("the method did not act"), reason
    assert {"signal_groups", "param_change"} <= set(arm) and result["start"]["greedy"]["success"] >= 0
