"""GRPO by hand (numpy) against one real TRL GRPO update on a tiny group: advantages and clipped loss."""
import math

import numpy as np
import pytest

from wmkit.core import grpo_step
from wmkit.core.grpo_step import LOSS_TYPES, advantages_by_hand, clipped_loss_by_hand, record_grpo_step


def test_advantages_by_hand_on_a_hand_computed_group():
    # [1, 0, 0, 1]: mean 0.5, sample std sqrt(1/3) = 0.57735 -> ±0.5 / 0.57745 = ±0.86588
    a = advantages_by_hand([1, 0, 0, 1])
    assert a == pytest.approx([0.86588, -0.86588, -0.86588, 0.86588], abs=1e-5)
    assert advantages_by_hand([1, 0, 0, 1], "none") == pytest.approx([0.5, -0.5, -0.5, 0.5])


def test_clipped_loss_by_hand_on_a_hand_computed_group():
    # Two completions (2 tokens and 1 token), A = [+1, -1], ε = 0.2. Ratios 1.5, 0.5 | 1.1:
    # token losses -min(1.5, 1.2) = -1.2, -min(0.5, 0.8) = -0.5 | -min(-1.1, -1.1) = +1.1.
    old = [[0.0, 0.0], [0.0, 0.0]]
    new = [[math.log(1.5), math.log(0.5)], [math.log(1.1), 0.0]]
    mask = [[1, 1], [1, 0]]
    args = (old, new, mask, [1.0, -1.0], 0.2)
    assert clipped_loss_by_hand(*args, "dapo") == pytest.approx((-1.2 - 0.5 + 1.1) / 3)
    assert clipped_loss_by_hand(*args, "bnpo") == pytest.approx(-0.2)
    assert clipped_loss_by_hand(*args, "grpo") == pytest.approx(((-1.2 - 0.5) / 2 + 1.1) / 2)
    assert clipped_loss_by_hand(*args, "dr_grpo", max_completion_length=2) == pytest.approx(-0.6 / 4)
    assert clipped_loss_by_hand(*args, "dapo", clip=False) == pytest.approx((-1.5 - 0.5 + 1.1) / 3)
    # max instead of min: -max(1.5, 1.2) = -1.5, -max(0.5, 0.8) = -0.8, -max(-1.1, -1.1) = 1.1
    assert clipped_loss_by_hand(*args, "dapo", pessimistic=False) == pytest.approx((-1.5 - 0.8 + 1.1) / 3)
    with pytest.raises(ValueError, match="max_completion_length"):
        clipped_loss_by_hand(*args, "dr_grpo")


@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_hand_computation_equals_what_trl_logged_and_used(loss_type):
    record = record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], loss_type=loss_type, seed=0)
    assert record["rewards"] == [1.0, 0.0, 0.5, 0.0]
    assert record["advantages"] == pytest.approx(list(advantages_by_hand(record["rewards"])), abs=1e-5)
    first, second = record["passes"]
    assert first["mask"] == second["mask"] and sorted(first["rewards"]) == sorted(record["rewards"])
    lengths = np.asarray(second["mask"]).sum(1)
    assert len(set(lengths.tolist())) > 1  # completions of different lengths: the loss types differ
    for p in (first, second):
        a = advantages_by_hand(p["rewards"])
        assert p["advantages"] == pytest.approx(list(a), abs=1e-5)
        hand = clipped_loss_by_hand(p["old_logps"], p["new_logps"], p["mask"], a, record["epsilon"], loss_type)
        assert hand == pytest.approx(p["loss"], abs=1e-5)
    # First pass: every ratio is 1. Second pass, after one AdamW step: some ratios left [0.8, 1.2],
    # so the clip changes the loss.
    assert np.allclose(first["old_logps"], first["new_logps"], atol=1e-6)
    a = advantages_by_hand(second["rewards"])
    unclipped = clipped_loss_by_hand(second["old_logps"], second["new_logps"], second["mask"], a, 0.2, loss_type, clip=False)
    assert abs(unclipped - second["loss"]) > 0.05
    other = "grpo" if loss_type == "dapo" else "dapo"
    assert abs(clipped_loss_by_hand(second["old_logps"], second["new_logps"], second["mask"], a, 0.2, other)
               - second["loss"]) > 1e-3
    assert record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], loss_type=loss_type, seed=0) == record  # seeded
    # The notebooks' exercise: the hand computation passes the checkers on a real record.
    from wmkit import exercises

    assert exercises.check_grpo_advantages_by_hand(advantages_by_hand(record["rewards"]), record) is True
    hand = clipped_loss_by_hand(second["old_logps"], second["new_logps"], second["mask"], a, 0.2, loss_type)
    assert exercises.check_grpo_clipped_loss_by_hand(hand, record) is True
    assert exercises.check_grpo_clipped_loss_by_hand(unclipped, record) is False


def test_scale_rewards_none_is_followed():
    record = record_grpo_step(rewards=[1.0, 0.0, 0.0], scale_rewards="none", seed=1)
    assert record["advantages"] == pytest.approx([2 / 3, -1 / 3, -1 / 3], abs=1e-6)


@pytest.mark.parametrize("kwargs, words", [
    ({"rewards": [1.0]}, "at least 2"), ({"rewards": "1, 0"}, "list of numbers"),
    ({"rewards": [1.0, float("nan")]}, "finite"), ({"loss_type": "ppo"}, "loss_type"),
    ({"scale_rewards": "batch"}, "scale_rewards"), ({"epsilon": 1.5}, "epsilon"),
    ({"learning_rate": 0.0}, "learning_rate"), ({"max_completion_length": 0}, "max_completion_length"),
])
def test_bad_parameters_are_one_clear_error(kwargs, words):
    with pytest.raises((ValueError, TypeError), match=words):
        record_grpo_step(**kwargs)


def test_loss_types_listed_are_those_the_hand_code_knows():
    for loss_type in LOSS_TYPES:
        clipped_loss_by_hand([[0.0]], [[0.1]], [[1]], [1.0], loss_type=loss_type, max_completion_length=1)
    assert grpo_step.EOS_SAMPLING_BIAS > 0


def test_k3_estimator_by_hand():
    # Δ = log π_ref − log π_θ: Δ = 0 gives 0; Δ = 1 gives e − 2; Δ = −1 gives 1/e
    assert grpo_step.k3_kl_by_hand([[0.0, -1.0, -2.0]], [[0.0, -2.0, -1.0]])[0] == pytest.approx(
        [0.0, math.e - 2, math.exp(-1)])


def test_beta_step_includes_the_k3_kl_term():
    """With β > 0 TRL's loss is the clipped surrogate plus β·ρ·k3 per token, k3 toward the initial model."""
    beta = 0.5
    record = record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], loss_type="dapo", seed=0, beta=beta)
    assert record["beta"] == beta
    first, second = record["passes"]
    assert np.allclose(first["ref_logps"], first["new_logps"], atol=1e-6)  # the policy starts at the reference
    a = advantages_by_hand(second["rewards"])
    args = (second["old_logps"], second["new_logps"], second["mask"], a, record["epsilon"], "dapo")
    kl = grpo_step.k3_kl_by_hand(second["ref_logps"], second["new_logps"])
    assert (kl >= 0).all() and kl.max() > 1e-3  # after one step the policy left the reference
    without = clipped_loss_by_hand(*args)
    with_kl = clipped_loss_by_hand(*args, beta=beta, ref_logps=second["ref_logps"])
    assert with_kl - without > 1e-4  # the term is there and large enough to see
    assert with_kl == pytest.approx(second["loss"], abs=1e-5)
    assert without != pytest.approx(second["loss"], abs=1e-5)


@pytest.mark.parametrize("scale_rewards", ["group", "none"])
def test_keep_tensors_lets_plain_torch_redo_the_trainers_first_update(scale_rewards):
    """What notebooks 02 and 03 do in "the algorithm in 30 lines": the recorded model, samples and mask
    give TRL's loss and gradient in plain torch, and one clipped AdamW step gives its parameters."""
    import torch

    record = record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], scale_rewards=scale_rewards, seed=1, keep_tensors=True)
    policy, first = record["initial_model"], record["passes"][0]
    mask = torch.tensor(first["mask"], dtype=torch.float32)
    r = torch.tensor(first["rewards"])
    adv = (r - r.mean()) / (r.std() + 1e-4) if scale_rewards == "group" else r - r.mean()
    ids = torch.cat([first["prompt_ids"], first["completion_ids"]], dim=1)
    attention = torch.cat([first["prompt_mask"], mask.long()], dim=1)
    logits = policy(input_ids=ids, attention_mask=attention).logits[:, first["prompt_ids"].shape[1] - 1:-1]
    logp = torch.log_softmax(logits / record["temperature"], -1).gather(-1, first["completion_ids"][..., None])[..., 0]
    ratio = torch.exp(logp - logp.detach())
    loss = -(torch.min(ratio * adv[:, None], ratio.clamp(0.8, 1.2) * adv[:, None]) * mask).sum() / mask.sum()
    loss.backward()
    assert loss.item() == pytest.approx(first["loss"], abs=1e-6)
    grads = dict(policy.named_parameters())
    assert max((grads[n].grad - g).abs().max().item() for n, g in record["gradients"].items()) < 1e-6
    opt = record["optimizer"]
    torch.nn.utils.clip_grad_norm_(policy.parameters(), opt["max_grad_norm"])
    torch.optim.AdamW(policy.parameters(), lr=opt["learning_rate"], betas=opt["betas"], eps=opt["eps"],
                      weight_decay=opt["weight_decay"]).step()
    moved = [(p.detach() - record["after_first_step"][n]).abs()[record["gradients"][n].abs() > 1e-6]
             for n, p in policy.named_parameters() if n in record["gradients"]]
    assert max(m.max().item() for m in moved if m.numel()) < 1e-4
    # and a wrong aggregation would not pass: "grpo" (each completion's mean first) differs here
    per_seq = (-(torch.min(ratio * adv[:, None], ratio.clamp(0.8, 1.2) * adv[:, None])) * mask).sum(1) / mask.sum(1)
    assert abs(per_seq.mean().item() - first["loss"]) > 1e-4
