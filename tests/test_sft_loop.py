"""The one plain SFT loop (core.sft.train_completion_only) against hand-written references.

The references below are the two loops it replaced, verbatim in what they compute: the WM-R1
policy warm start and RWML's behaviour cloning. Each option set must give *bitwise* the same
parameters and losses as its reference, in the same process (no stored checksums: those would
differ across CPUs and torch builds).
"""
import math
import random

import pytest
import torch

from wmkit.core.models import build_tiny_model
from wmkit.core.sft import (
    CompletionOnlyCollator,
    CompletionOnlyConfig,
    completion_only_loss,
    completion_only_steps,
    tokenize_sft_examples,
    train_completion_only,
)


def reference_policy_sft(model, tokenizer, examples, epochs, learning_rate, batch_size, seed):
    """wm_r1.experiment.train_policy_sft as it was before the move."""
    gen = torch.Generator().manual_seed(seed)
    collate = CompletionOnlyCollator(tokenizer.pad_token_id)
    steps_per_epoch = math.ceil(len(examples) / batch_size)
    total = max(1, math.ceil(steps_per_epoch * epochs))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.01)
    warm = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total))))
    model.train()
    losses, step = [], 0
    while step < total:
        order = torch.randperm(len(examples), generator=gen).tolist()
        order = sorted(order, key=lambda i: len(examples[i]["input_ids"]) // 64)
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        for b in torch.randperm(len(batches), generator=gen).tolist():
            if step >= total:
                break
            batch = collate([examples[i] for i in batches[b]])
            loss = completion_only_loss(model, batch["input_ids"], batch["attention_mask"], batch["labels"])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
            step += 1
    model.eval()
    return losses


def reference_behaviour_cloning(policy, tokenizer, examples, epochs, learning_rate, batch_size, seed):
    """rwml.policy.behaviour_cloning's loop as it was before the move."""
    collate = CompletionOnlyCollator(tokenizer.pad_token_id)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=learning_rate, weight_decay=0.0)
    rng = random.Random(seed)
    n_batches = max(1, round(epochs * len(examples) / batch_size))
    order, losses = [], []
    policy.train()
    for _ in range(n_batches):
        if len(order) < batch_size:
            order += rng.sample(range(len(examples)), len(examples))
        batch = collate([examples[i] for i in order[:batch_size]])
        del order[:batch_size]
        loss = completion_only_loss(policy, batch["input_ids"], batch["attention_mask"], batch["labels"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    policy.eval()
    return losses


@pytest.fixture(scope="module")
def examples(tiny_lm, small_splits):
    _, tok, _ = tiny_lm
    examples, _ = tokenize_sft_examples(tok, small_splits["train"][:10], max_length=4096)
    assert len({len(e["input_ids"]) // 64 for e in examples}) > 1  # the length grouping has work to do
    return examples


def _same(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


# (batch_size, epochs) chosen to reach the loops' corners: a short last batch, a fractional last
# epoch, an epoch's leftovers carried into the next batch.
@pytest.mark.parametrize("batch_size,epochs,seed", [(4, 1.5, 0), (3, 2.0, 5)])
def test_length_grouped_loop_is_the_wm_r1_policy_sft(tiny_lm, examples, batch_size, epochs, seed):
    _, tok, cfg = tiny_lm
    reference, unified = build_tiny_model(tok, cfg, seed=0), build_tiny_model(tok, cfg, seed=0)
    want = reference_policy_sft(reference, tok, examples, epochs, 3e-3, batch_size, seed)
    rng_before = torch.get_rng_state(), random.getstate()
    got = train_completion_only(unified, tok, examples, CompletionOnlyConfig(
        epochs=epochs, learning_rate=3e-3, batch_size=batch_size, seed=seed, batching="length_grouped",
        weight_decay=0.01, schedule="warmup_cosine", max_grad_norm=1.0))
    assert torch.equal(torch.get_rng_state(), rng_before[0]) and random.getstate() == rng_before[1]
    assert got == want and len(got) == completion_only_steps(len(examples), CompletionOnlyConfig(
        epochs=epochs, learning_rate=3e-3, batch_size=batch_size))
    assert _same(reference, unified) and not unified.training


@pytest.mark.parametrize("batch_size,epochs,seed", [(3, 2.5, 7), (16, 1.0, 0)])
def test_shuffled_stream_loop_is_rwml_behaviour_cloning(tiny_lm, examples, batch_size, epochs, seed):
    _, tok, cfg = tiny_lm
    reference, unified = build_tiny_model(tok, cfg, seed=0), build_tiny_model(tok, cfg, seed=0)
    want = reference_behaviour_cloning(reference, tok, examples, epochs, 2e-3, batch_size, seed)
    got = train_completion_only(unified, tok, examples, CompletionOnlyConfig(
        epochs=epochs, learning_rate=2e-3, batch_size=batch_size, seed=seed, batching="shuffled_stream",
        weight_decay=0.0, schedule="constant", max_grad_norm=None))
    assert got == want and _same(reference, unified)


def test_each_option_changes_the_result(tiny_lm, examples):
    """The options are real choices: flipping any one of them gives different parameters."""
    _, tok, cfg = tiny_lm
    base = {"epochs": 1.0, "learning_rate": 3e-3, "batch_size": 4, "seed": 0}

    def run(**change):
        model = build_tiny_model(tok, cfg, seed=0)
        train_completion_only(model, tok, examples, CompletionOnlyConfig(**{**base, **change}))
        return model

    default = run()
    for change in ({"batching": "shuffled_stream"}, {"weight_decay": 0.0}, {"schedule": "constant"},
                   {"max_grad_norm": 1e-3}):
        assert not _same(default, run(**change)), change


def test_only_trainable_parameters_move(tiny_lm, examples):
    _, tok, cfg = tiny_lm
    model = build_tiny_model(tok, cfg, seed=0)
    frozen = model.get_input_embeddings().weight
    frozen.requires_grad_(False)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    train_completion_only(model, tok, examples[:4], CompletionOnlyConfig(epochs=1, learning_rate=3e-3, batch_size=2))
    assert torch.equal(frozen, before["model.embed_tokens.weight"])
    assert any(not torch.equal(p, before[n]) for n, p in model.named_parameters() if p.requires_grad)


def test_completion_only_config_rejects_bad_values(tiny_lm):
    with pytest.raises(ValueError, match="batch_size"):
        CompletionOnlyConfig(epochs=1, learning_rate=1e-3, batch_size=0)
    with pytest.raises(ValueError, match="batching"):
        CompletionOnlyConfig(epochs=1, learning_rate=1e-3, batch_size=2, batching="sorted")
    with pytest.raises(ValueError, match="schedule"):
        CompletionOnlyConfig(epochs=1, learning_rate=1e-3, batch_size=2, schedule="linear")
    model, tok, _ = tiny_lm
    with pytest.raises(ValueError, match="at least one example"):
        train_completion_only(model, tok, [], CompletionOnlyConfig(epochs=1, learning_rate=1e-3, batch_size=2))
