"""Training glue: supervised fine-tuning (MLE) of a world model with a completion-only loss.

The world model is trained by maximum likelihood on (prompt, target) pairs: the loss is the
cross-entropy of the target tokens only -- prompt tokens get the label -100 so they add
nothing to the loss (the model must *read* the state, not learn to write it). This is what
TRL's SFTTrainer does for prompt/completion data; the kit spells it out with a plain
`transformers.Trainer` and a small collator so a student can see every piece.

Training saves checkpoints and resumes from the newest one in `output_dir`; a run killed and
resumed ends with the same parameters as one that was not (same seed, same data order).
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from wmkit.core.worldmodel import prompt_text
from wmkit.envs.base import Transition
from wmkit.runs import latest_checkpoint


@dataclass
class SFTConfig:
    """Hyperparameters of world-model SFT."""

    output_dir: str
    """Where checkpoints go; training resumes from the newest one found here."""
    epochs: float = 3.0
    """Passes over the training transitions."""
    learning_rate: float = 2e-3
    """Peak AdamW learning rate (cosine decay after warm-up). From-scratch tiny models like
    1e-3..3e-3; a pretrained model with LoRA wants ~2e-4."""
    batch_size: int = 16
    """Transitions per optimizer step."""
    max_length: int = 512
    """Prompt + target token limit; longer transitions are dropped (and counted)."""
    warmup: float = 0.05
    """Fraction of the steps spent warming the learning rate up from 0."""
    weight_decay: float = 0.01
    """AdamW weight decay."""
    seed: int = 0
    """Seeds weight init order, data order and dropout."""
    logging_steps: int = 10
    """Log the training loss every this many steps."""
    eval_steps: int | None = None
    """Validation loss every this many steps (None: about 8 times per run)."""
    save_steps: int | None = None
    """Checkpoint every this many steps (None: about 4 times per run)."""
    resume: bool = True
    """Resume from the newest checkpoint in output_dir when there is one."""
    max_eval_examples: int = 128
    """Validation transitions used for the loss curve (a fixed subset: evaluation costs compute)."""
    show_progress: bool = True
    """Show a progress bar."""

    def __post_init__(self):
        for name in ("epochs", "learning_rate", "batch_size", "max_length"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"SFTConfig.{name} must be a positive number, not {value!r}")
        if not 0 <= self.warmup < 1:
            raise ValueError(f"SFTConfig.warmup must be in [0, 1), not {self.warmup!r}")


@dataclass
class SFTResult:
    """What a finished SFT run reports."""

    log_history: list[dict]
    """Trainer log: training loss per logging step, validation loss per evaluation."""
    n_train: int
    """Training examples used."""
    n_dropped: int
    """Training transitions dropped for exceeding max_length."""
    steps: int
    """Optimizer steps taken in total."""
    seconds: float
    """Wall time of this call (a resumed run counts only the resumed part)."""
    extra: dict = field(default_factory=dict)


def tokenize_sft_examples(tokenizer, transitions: Sequence[Transition], max_length: int):
    """Token ids of prompt + target + end-of-turn, with labels -100 on the prompt.

    Prompt and target are tokenized separately and concatenated, which is exactly what the
    model sees at generation time (prompt ids, then generated ids). Returns (examples,
    number dropped for length).
    """
    examples, dropped = [], 0
    for t in transitions:
        prompt_ids = tokenizer(prompt_text(tokenizer, t.env, t.state, t.action),
                               add_special_tokens=False)["input_ids"]
        target_ids = tokenizer(t.diff, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        if len(prompt_ids) + len(target_ids) > max_length:
            dropped += 1
            continue
        examples.append({"input_ids": prompt_ids + target_ids,
                         "labels": [-100] * len(prompt_ids) + target_ids})
    return examples, dropped


class CompletionOnlyCollator:
    """Right-pads input ids with the pad token and labels with -100."""

    def __init__(self, pad_token_id: int):
        self.pad_token_id = pad_token_id

    def __call__(self, features):
        width = max(len(f["input_ids"]) for f in features)
        input_ids, labels, attention = [], [], []
        for f in features:
            pad = width - len(f["input_ids"])
            input_ids.append(list(f["input_ids"]) + [self.pad_token_id] * pad)
            labels.append(list(f["labels"]) + [-100] * pad)
            attention.append([1] * len(f["input_ids"]) + [0] * pad)
        return {"input_ids": torch.tensor(input_ids), "labels": torch.tensor(labels),
                "attention_mask": torch.tensor(attention)}


def completion_only_loss(model, input_ids, attention_mask, labels):
    """Mean cross-entropy over target tokens, computing logits *only* at target positions.

    Equal to the usual causal-LM loss with -100 labels on the prompt, but the output layer
    (vocabulary x hidden, the biggest matmul of a tiny model) runs on the ~25% of positions
    that are targets instead of on every position.
    """
    decoder, head = model.get_decoder(), model.get_output_embeddings()
    hidden = decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    targets = labels[:, 1:]
    mask = targets != -100
    logits = head(hidden[:, :-1][mask])
    return torch.nn.functional.cross_entropy(logits.float(), targets[mask])


class _ListDataset(torch.utils.data.Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def _completion_only_trainer_class():
    from transformers import Trainer

    class CompletionOnlyTrainer(Trainer):
        """A Trainer whose loss computes logits only where labels are targets."""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if hasattr(model, "get_decoder"):
                loss = completion_only_loss(model, inputs["input_ids"], inputs["attention_mask"], inputs["labels"])
            else:
                # Wrapped for data parallelism (DDP, DeepSpeed): only the wrapper's forward keeps
                # the processes' gradients in sync, so take the model's own loss (the same mean
                # cross-entropy over target tokens, with logits at every position).
                loss = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                             labels=inputs["labels"]).loss
            return (loss, {}) if return_outputs else loss

    return CompletionOnlyTrainer


def train_sft(model, tokenizer, train: Sequence[Transition], val: Sequence[Transition],
              config: SFTConfig, callbacks=None) -> SFTResult:
    """Fine-tune `model` on the transitions with the completion-only loss; returns the log.

    `callbacks` are extra `transformers.TrainerCallback`s (the tests use one to kill a run).
    """
    from transformers import TrainingArguments

    train_examples, dropped = tokenize_sft_examples(tokenizer, train, config.max_length)
    val_examples, _ = tokenize_sft_examples(tokenizer, val, config.max_length)
    val_examples = val_examples[:config.max_eval_examples]
    if not train_examples:
        raise ValueError("No training transition fits max_length; raise max_length or shorten states.")
    # batch_size is the global batch: under N processes (accelerate launch, torchrun) each
    # takes batch_size / N, so N processes take the same steps on the same batches.
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    if config.batch_size % processes:
        raise ValueError(f"SFTConfig.batch_size {config.batch_size} must divide by the {processes} processes")
    per_device = config.batch_size // processes
    steps_per_epoch = math.ceil(len(train_examples) / config.batch_size)
    total_steps = max(1, math.ceil(steps_per_epoch * config.epochs))
    eval_steps = config.eval_steps or max(1, total_steps // 6)
    save_steps = config.save_steps or max(1, total_steps // 4)
    use_cpu = not torch.cuda.is_available()
    args = TrainingArguments(
        output_dir=config.output_dir,
        max_steps=total_steps,
        per_device_train_batch_size=per_device,
        per_device_eval_batch_size=per_device * 2,
        learning_rate=config.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=config.warmup,
        weight_decay=config.weight_decay,
        logging_steps=config.logging_steps,
        eval_strategy="steps" if val_examples else "no",
        eval_steps=eval_steps,
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=1,
        seed=config.seed,
        data_seed=config.seed,
        # Batches of similar length waste less compute on padding.
        train_sampling_strategy="group_by_length",
        use_cpu=use_cpu,
        bf16=False,
        report_to="none",
        disable_tqdm=not config.show_progress,
        dataloader_num_workers=0,
        prediction_loss_only=True,
    )
    trainer = _completion_only_trainer_class()(model=model, args=args, train_dataset=_ListDataset(train_examples),
                      eval_dataset=_ListDataset(val_examples) if val_examples else None,
                      data_collator=CompletionOnlyCollator(tokenizer.pad_token_id), callbacks=callbacks)
    resume_from = latest_checkpoint(config.output_dir) if config.resume else None
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume_from)
    return SFTResult(log_history=list(trainer.state.log_history), n_train=len(train_examples),
                     n_dropped=dropped, steps=trainer.state.global_step,
                     seconds=time.perf_counter() - start,
                     extra={"resumed_from": resume_from})
