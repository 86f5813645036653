"""How much of wm_r1_learned's world-model SFT step is the model's own compute?

wm_r1_learned spends half of each seed in the SFT of its edit world model (`bench_cost.py`): about
7,000 steps of batch 8 at cpu sizes. This times, on the same model, data and batches, (a) the kit's
SFT (`wmkit.core.sft.train_sft`, a transformers Trainer) for `--steps` steps with evaluation and
checkpoints switched off, and (b) a plain loop doing only what a step must do: the completion-only
loss forward, backward, gradient clipping, one AdamW step. The gap is what a leaner trainer could
save on such tiny models, at most; the rest is the model's compute. It trains nothing that is kept.

    PYTHONPATH=$PWD python research/profile_wm_sft.py [--steps 300] [--threads 1]

One torch thread by default, as each `make bench` worker runs.
"""
from __future__ import annotations

import argparse
import random
import tempfile
import time

import torch

from wmkit.core import build, models
from wmkit.core.sft import (
    CompletionOnlyCollator,
    SFTConfig,
    completion_only_loss,
    tokenize_sft_examples,
    train_sft,
)
from wmkit.wm_r1.config import WM_R1
from wmkit.wm_r1 import learned
from wmkit.wm_r1.ladder import ladder_world, learned_world_sizes


def setup(seed: int):
    sizes = learned_world_sizes(WM_R1["cpu"])
    data, _ = learned.edit_transitions(sizes.learned, seed, ladder_world(sizes))
    tokenizer = models.train_tokenizer(build.tokenizer_corpus(data["train"]), sizes.learned.model.vocab_size)
    return sizes.learned, data, tokenizer


def time_trainer(learned_sizes, data, tokenizer, steps: int, seed: int) -> float:
    model = models.build_tiny_model(tokenizer, learned_sizes.model, seed=seed)
    n_train = len(data["train"])
    with tempfile.TemporaryDirectory() as out:
        config = SFTConfig(output_dir=out, epochs=steps * learned_sizes.batch_size / n_train,
                           learning_rate=learned_sizes.learning_rate, batch_size=learned_sizes.batch_size,
                           max_length=learned_sizes.max_length, seed=seed, resume=False, show_progress=False,
                           eval_steps=10**9, save_steps=10**9)
        result = train_sft(model, tokenizer, data["train"], data["val"][:1], config)
    return result.seconds / result.steps


def time_plain_loop(learned_sizes, data, tokenizer, steps: int, seed: int) -> float:
    model = models.build_tiny_model(tokenizer, learned_sizes.model, seed=seed)
    model.train()
    examples, _ = tokenize_sft_examples(tokenizer, data["train"], learned_sizes.max_length)
    collate = CompletionOnlyCollator(tokenizer.pad_token_id)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learned_sizes.learning_rate, weight_decay=0.01)
    # batches of similar length, in random order, as the Trainer's group_by_length sampler gives
    by_length = sorted(examples, key=lambda e: len(e["input_ids"]))
    size = learned_sizes.batch_size
    batches = [by_length[i:i + size] for i in range(0, len(by_length) - size + 1, size)]
    random.Random(seed).shuffle(batches)
    start = time.perf_counter()
    for step in range(steps):
        batch = collate(batches[step % len(batches)])
        loss = completion_only_loss(model, batch["input_ids"], batch["attention_mask"], batch["labels"], None)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    learned_sizes, data, tokenizer = setup(args.seed)
    trainer = time_trainer(learned_sizes, data, tokenizer, args.steps, args.seed)
    plain = time_plain_loop(learned_sizes, data, tokenizer, args.steps, args.seed)
    print(f"{args.steps} steps of batch {learned_sizes.batch_size}, {args.threads} thread(s), "
          f"{len(data['train'])} training transitions")
    print(f"  kit SFT (Trainer)  {trainer * 1000:7.1f} ms/step")
    print(f"  plain loop         {plain * 1000:7.1f} ms/step   ({1 - plain / trainer:.0%} less)")


if __name__ == "__main__":
    main()
