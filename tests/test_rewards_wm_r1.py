"""WM-R1 composite reward (Han & Qian, 2026; genalyu/WM-R1): hand-computed groups."""

import pytest

from wmkit.rewards.wm_r1 import (
    WMR1RewardConfig,
    composite_rewards,
    group_budget,
    group_has_signal,
    length_rewards,
    wm_call_rewards,
)


def test_golden_case():
    rewards = length_rewards([1, 1, 0], [3, 5, 20], max_steps=20)
    assert group_budget([1, 1, 0], [3, 5, 20], 20) == pytest.approx(28 / 3)
    assert [round(r, 3) for r in rewards] == [0.839, 0.732, -0.1]


def test_all_succeed_budget_is_mean_length():
    # p = 1, L_ref = 4, budget = 4
    rewards = length_rewards([True, True, True], [2, 4, 6], max_steps=20)
    assert group_budget([1, 1, 1], [2, 4, 6], 20) == pytest.approx(4.0)
    # lambda = -0.5, 0, 0.5 -> 0.75, 0.5, 0.25
    assert rewards == pytest.approx([0.75, 0.5, 0.25])


def test_long_success_is_floored_at_point_one():
    # all succeed: budget = mean length = 4; lambda(10) = 1.5 -> -0.25, floored to 0.1
    rewards = length_rewards([1, 1, 1], [1, 1, 10], max_steps=20)
    assert rewards[2] == pytest.approx(0.1)
    assert rewards[0] == pytest.approx(-0.5 * (1 - 4) / 4 + 0.5)


def test_none_succeed_budget_is_max_steps():
    # p = 0 -> budget = max_steps = 20
    rewards = length_rewards([0, 0, 0], [5, 20, 10], max_steps=20)
    assert group_budget([0, 0, 0], [5, 20, 10], 20) == pytest.approx(20.0)
    # lambda = -0.75, 0, -0.5 -> min(0.9*l - 0.1, -0.1)
    assert rewards == pytest.approx([-0.775, -0.1, -0.55])


def test_mixed_group():
    # success [1, 0, 1, 0], lengths [4, 10, 6, 20]: p = 0.5, L_ref = 5, budget = 12.5
    rewards = length_rewards([1, 0, 1, 0], [4, 10, 6, 20], max_steps=20)
    budget = 0.5 * 5 + 0.5 * 20
    expected = [
        max(-0.5 * (4 - budget) / budget + 0.5, 0.1),
        min(0.9 * (10 - budget) / budget - 0.1, -0.1),
        max(-0.5 * (6 - budget) / budget + 0.5, 0.1),
        min(0.9 * (20 - budget) / budget - 0.1, -0.1),
    ]
    assert rewards == pytest.approx(expected)
    assert rewards[1] == pytest.approx(0.9 * (-0.2) - 0.1)  # -0.28
    assert rewards[3] == pytest.approx(-0.1)


def test_zero_budget_replaced_by_one():
    # every rollout succeeded with 0 imagined calls: N_ref = 0, p = 1 -> budget 0 -> 1
    assert group_budget([1, 1], [0, 0], 5) == 1.0
    # lambda = (0 - 1) / 1 = -1 -> success reward 1.0
    assert wm_call_rewards([1, 1], [0, 0], n_max=5) == pytest.approx([1.0, 1.0])


def test_wm_call_term_hand_computed():
    # success [1, 1, 0], calls [1, 3, 5]: p = 2/3, N_ref = 2, budget = 4/3 + 5/3 = 3
    rewards = wm_call_rewards([1, 1, 0], [1, 3, 5], n_max=5)
    # lambda = -2/3, 0, 2/3 -> 0.8333, 0.5, min(0.5, -0.1) = -0.1
    assert rewards == pytest.approx([5 / 6, 0.5, -0.1])


def test_wm_call_reference_is_group_max_when_none_succeed():
    # p = 0 -> budget = n_max regardless of N_ref (= group max, 4)
    assert group_budget([0, 0], [2, 4], 5) == pytest.approx(5.0)
    assert wm_call_rewards([0, 0], [2, 4], n_max=5) == pytest.approx(
        [min(0.9 * -0.6 - 0.1, -0.1), min(0.9 * -0.2 - 0.1, -0.1)]
    )


def test_composite_hand_computed():
    successes, lengths, calls = [1, 1, 0], [3, 5, 20], [1, 3, 5]
    total = composite_rewards(successes, lengths, calls, max_steps=20)
    r_l = [-0.5 * (3 - 28 / 3) / (28 / 3) + 0.5, -0.5 * (5 - 28 / 3) / (28 / 3) + 0.5, -0.1]
    r_wm = [5 / 6, 0.5, -0.1]
    expected = [1.0 + 0.5 * r_l[0] + 0.1 * r_wm[0], 1.0 + 0.5 * r_l[1] + 0.1 * r_wm[1], 0.0 - 0.05 - 0.01]
    assert total == pytest.approx(expected)
    assert total[2] == pytest.approx(-0.06)
    assert WMR1RewardConfig().rewards(successes, lengths, calls) == pytest.approx(expected)
    weighted = composite_rewards(successes, lengths, calls, alpha=2.0, beta=0.0, gamma=0.0)
    assert weighted == pytest.approx([2.0, 2.0, 0.0])


def test_no_thinking_ablation_config_skips_the_call_term():
    # The authors' no-thinking ablation: env.n_wm_max=0 and reward.gamma left at its default 0
    # (examples/run_ablation_wm_no_think.slurm, verl/trainer/config.py); their reward computes
    # R_WM only when gamma > 0 (verl/utils/reward_score/wm_r1.py).
    # success [1, 0, 1, 0], lengths [4, 10, 6, 20], max_steps 15: p = 0.5, L_ref = 5,
    # budget = 2.5 + 7.5 = 10; lambda = -0.6, 0, -0.4, 1.0 -> R_L = 0.8, -0.1, 0.7, -0.1
    successes, lengths, calls = [1, 0, 1, 0], [4, 10, 6, 20], [2, 5, 0, 3]
    expected = [1.4, -0.05, 1.35, -0.05]
    assert composite_rewards(successes, lengths, calls, max_steps=15, gamma=0.0, n_max=0) == pytest.approx(expected)
    assert WMR1RewardConfig(gamma=0.0, n_max=0, max_steps=15).rewards(successes, lengths, calls) == \
        pytest.approx(expected)
    # gamma = 0 ignores the call counts altogether (n_max 5 or 0, any counts)
    assert composite_rewards(successes, lengths, [0, 0, 0, 0], max_steps=15, gamma=0.0) == pytest.approx(expected)


def test_zero_call_budget_with_positive_gamma_follows_the_authors_code():
    # n_max = 0, gamma = 0.1: N_ref = mean(2, 0) = 1, budget = 0.5 * 1 + 0.5 * 0 = 0.5;
    # mu = 3, 9, -1, 5 -> R_WM = max(-1.0, 0.1) = 0.1, -0.1, max(1.0, 0.1) = 1.0, -0.1
    assert wm_call_rewards([1, 0, 1, 0], [2, 5, 0, 3], n_max=0) == pytest.approx([0.1, -0.1, 1.0, -0.1])
    total = composite_rewards([1, 0, 1, 0], [4, 10, 6, 20], [2, 5, 0, 3], max_steps=15, gamma=0.1, n_max=0)
    assert total == pytest.approx([1.41, -0.06, 1.45, -0.06])
    # every call budget 0 (p = 1, N_ref = 0) -> 1
    assert wm_call_rewards([1, 1], [0, 0], n_max=0) == pytest.approx([1.0, 1.0])


def test_group_has_signal():
    assert not group_has_signal([1.0, 1.0, 1.0])
    assert not group_has_signal([0.5])
    assert not group_has_signal([1.0, 1.005])  # sample std 0.0035 < 0.01
    assert group_has_signal([1.0, 1.02])  # sample std 0.0141
    assert group_has_signal([0.0, 1.0, 1.0])
    assert WMR1RewardConfig(min_group_std=0.5).has_signal([0.0, 0.1]) is False


def test_empty_group():
    assert composite_rewards([], [], []) == []


@pytest.mark.parametrize(
    "call",
    [
        lambda: length_rewards([1, 0], [3], max_steps=20),
        lambda: length_rewards([1, 0], [3, -1], max_steps=20),
        lambda: length_rewards([1], [3], max_steps=0),
        lambda: wm_call_rewards([1, 0], [1, -2]),
        lambda: wm_call_rewards([1], [1], n_max=-1),
        lambda: composite_rewards([1, 0], [3, 4], [1]),
        lambda: composite_rewards([1, 0], [3, float("nan")], [1, 1]),
    ],
)
def test_invalid_inputs_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_error_message_says_what_is_wrong():
    with pytest.raises(ValueError, match="lengths"):
        length_rewards([1, 1], [3, -1], max_steps=20)
    with pytest.raises(ValueError, match="successes has 2 entries but lengths has 1"):
        length_rewards([1, 1], [3], max_steps=20)
