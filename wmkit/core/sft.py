"""Training glue: supervised fine-tuning (MLE) of a world model with a completion-only loss.

The world model is trained by maximum likelihood on (prompt, target) pairs: the loss is the
cross-entropy of the target tokens only -- prompt tokens get the label -100 so they add
nothing to the loss (the model must *read* the state, not learn to write it). This is what
TRL's SFTTrainer does for prompt/completion data; the kit spells it out with a plain
`transformers.Trainer` and a small collator so a student can see every piece.

Training saves checkpoints and resumes from the newest one in `output_dir`; a run killed and
resumed ends with the same parameters as one that was not (same seed, same data order).

Two entry points share the examples format ({input_ids, labels} with -100 on the prompt), the
collator and the loss:

* :func:`train_sft` -- world models: a `transformers.Trainer` (checkpoints and resume, a
  validation-loss curve, callbacks, several processes under ``accelerate launch`` / torchrun).
* :func:`train_completion_only` -- the one plain loop for short warm starts of a policy in
  memory: the WM-R1 policy (:func:`wmkit.wm_r1.experiment.train_policy_sft`) and RWML's
  behaviour cloning (:func:`wmkit.rwml.policy.behaviour_cloning`), whose differences are the
  fields of :class:`CompletionOnlyConfig`.

The world model stays on the Trainer (checkpoints, resume, multi-process training; the plain loop
would give other numbers). Not TRL's ``SFTTrainer``: the same loss, slower per step at notebook 01's
sizes (research/README.md, 'SFT Trainer'); the kit's loss computes logits only at targets and
honours ``num_items_in_batch`` as transformers' own loss does.
"""
from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from wmkit.core.grpo import check_trl_args, run_settings
from wmkit.core.worldmodel import prompt_text
from wmkit.envs.base import Transition
from wmkit.quiet import transient_bar
from wmkit.runs import checkpoint_to_resume, run_identity, stop_printing_logs, train_or_resume


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
    trl_args: dict = field(default_factory=dict)
    """Any other ``transformers.TrainingArguments`` field, passed to the Trainer as it is (``report_to``,
    ``push_to_hub`` ...; `wmkit.core.grpo.check_trl_args`)."""

    def __post_init__(self):
        for name in ("epochs", "learning_rate", "batch_size", "max_length"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"SFTConfig.{name} must be a positive number, not {value!r}")
        if not 0 <= self.warmup < 1:
            raise ValueError(f"SFTConfig.warmup must be in [0, 1), not {self.warmup!r}")


SFT_NOT_IN_RUN_KEY = ("output_dir", "resume", "show_progress", "logging_steps", "eval_steps", "save_steps",
                      "max_eval_examples")
"""SFTConfig fields that do not change what is trained (a rerun may change them and still resume)."""


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


def completion_only_loss(model, input_ids, attention_mask, labels, num_items_in_batch=None):
    """Mean cross-entropy over target tokens, computing logits *only* at target positions.

    Equal to the usual causal-LM loss with -100 labels on the prompt, but the output layer
    (vocabulary x hidden, the biggest matmul of a tiny model) runs on the ~25% of positions
    that are targets instead of on every position. With `num_items_in_batch` (the Trainer's count
    of target tokens over the whole optimizer step: all accumulation micro-batches, all
    processes) the sum is divided by that count instead, as transformers' own causal-LM loss does,
    so every target token of a step weighs the same however the step is split.
    """
    decoder, head = model.get_decoder(), model.get_output_embeddings()
    hidden = decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    targets = labels[:, 1:]
    mask = targets != -100
    logits = head(hidden[:, :-1][mask])
    if num_items_in_batch is None:
        return torch.nn.functional.cross_entropy(logits.float(), targets[mask])
    total = torch.nn.functional.cross_entropy(logits.float(), targets[mask], reduction="sum")
    return total / torch.as_tensor(num_items_in_batch, device=total.device)


@dataclass
class CompletionOnlyConfig:
    """Settings of the plain completion-only SFT loop, :func:`train_completion_only`: the WM-R1 policy
    warm start (:func:`wmkit.wm_r1.experiment.train_policy_sft`; the defaults are its) and RWML's
    behaviour cloning (:func:`wmkit.rwml.policy.behaviour_cloning`) differ in each field below."""

    epochs: float
    """Passes over the examples (a fractional last pass stops part-way); see `batching` for how
    this becomes a number of optimizer steps."""
    learning_rate: float
    """Peak AdamW learning rate."""
    batch_size: int
    """Examples per optimizer step."""
    seed: int = 0
    """Seeds the batch order (a private generator: the global torch / random states are untouched)."""
    batching: str = "length_grouped"
    """How examples are drawn into batches, and so how many steps `epochs` makes.

    * ``"length_grouped"`` (WM-R1 policy): every epoch, a ``torch.Generator(seed)`` permutation,
      stably sorted by ``len(input_ids) // 64``, cut into batches (the last one short), the
      batches visited in a random order; ``max(1, ceil(ceil(n / batch_size) * epochs))`` steps.
      Its examples are whole reference episodes whose lengths vary a lot, so grouping similar
      lengths saves most of the padding.
    * ``"shuffled_stream"`` (RWML behaviour cloning): ``random.Random(seed)`` shuffles of the
      examples joined into one stream cut into full batches (an epoch's leftovers open the next
      batch); ``max(1, round(epochs * n / batch_size))`` steps. Its examples are (prompt, one
      action) pairs of similar length, so there is little padding to save.
    """
    weight_decay: float = 0.01
    """AdamW weight decay on every trained parameter (WM-R1 policy: 0.01, as :class:`SFTConfig`; RWML
    behaviour cloning: 0.0, a few batches that should move both start models by the gold actions alone)."""
    schedule: str = "warmup_cosine"
    """``"warmup_cosine"`` (WM-R1 policy, as :class:`SFTConfig`): the rate rises linearly over
    ``max(1, steps // 20)`` steps, then decays along a cosine to 0 at the last step -- a full
    training run of a from-scratch policy. ``"constant"`` (RWML behaviour cloning):
    `learning_rate` at every step; with a handful of steps (1 in the smoke profile) a warm-up
    would spend a large share of them at a tiny rate."""
    max_grad_norm: float | None = 1.0
    """Clip the gradient norm to this before each step; None: no clipping (WM-R1 policy: 1.0, as the
    Trainer's default; RWML behaviour cloning: None, a few constant-rate steps)."""
    show_progress: bool = False
    """Show a progress bar with the running loss."""
    progress_desc: str = "SFT"
    """The progress bar's label."""

    def __post_init__(self):
        for name in ("epochs", "learning_rate", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"CompletionOnlyConfig.{name} must be a positive number, not {value!r}")
        if self.batching not in _BATCHINGS:
            raise ValueError(f"CompletionOnlyConfig.batching must be one of {', '.join(_BATCHINGS)}, "
                             f"not {self.batching!r}")
        if self.schedule not in ("warmup_cosine", "constant"):
            raise ValueError(f"CompletionOnlyConfig.schedule must be 'warmup_cosine' or 'constant', "
                             f"not {self.schedule!r}")


def _length_grouped_batches(examples: Sequence[dict], batch_size: int, seed: int):
    """Endless batches (lists of indices): per epoch, similar lengths together, random batch order."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        order = torch.randperm(len(examples), generator=gen).tolist()
        order = sorted(order, key=lambda i: len(examples[i]["input_ids"]) // 64)
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        for b in torch.randperm(len(batches), generator=gen).tolist():
            yield batches[b]


def _shuffled_stream_batches(examples: Sequence[dict], batch_size: int, seed: int):
    """Endless full batches cut from one stream of reshuffled epochs."""
    rng = random.Random(seed)
    order: list[int] = []
    while True:
        if len(order) < batch_size:  # reshuffle when the epoch runs out
            order += rng.sample(range(len(examples)), len(examples))
        yield order[:batch_size]
        del order[:batch_size]


_BATCHINGS = {
    "length_grouped": (_length_grouped_batches,
                       lambda n, config: max(1, math.ceil(math.ceil(n / config.batch_size) * config.epochs))),
    "shuffled_stream": (_shuffled_stream_batches,
                        lambda n, config: max(1, round(config.epochs * n / config.batch_size))),
}


def completion_only_steps(n_examples: int, config: CompletionOnlyConfig) -> int:
    """Optimizer steps :func:`train_completion_only` takes on `n_examples` examples."""
    return _BATCHINGS[config.batching][1](n_examples, config)


def train_completion_only(model, tokenizer, examples: Sequence[dict], config: CompletionOnlyConfig) -> list[float]:
    """Fine-tune `model` in place on token examples; returns the loss of every step.

    Each example is ``{"input_ids": [...], "labels": [...]}`` with -100 on every token the model
    should read but not learn to write (:func:`tokenize_sft_examples` builds them for a world
    model). The loop is the whole of SFT with the completion-only loss: batches right-padded by
    :class:`CompletionOnlyCollator`, :func:`completion_only_loss`, AdamW on the parameters that
    require gradients, optional clipping and schedule; the model is left in eval mode.
    """
    if not examples:
        raise ValueError("train_completion_only needs at least one example")
    make_batches, _ = _BATCHINGS[config.batching]
    total = completion_only_steps(len(examples), config)
    collate = CompletionOnlyCollator(tokenizer.pad_token_id)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=config.weight_decay)
    sched = None
    if config.schedule == "warmup_cosine":
        warm = max(1, total // 20)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total))))
    device = next(model.parameters()).device
    bar = None
    if config.show_progress:
        bar = transient_bar(total=total, desc=config.progress_desc)
    model.train()
    losses: list[float] = []
    batches = make_batches(examples, config.batch_size, config.seed)
    for _ in range(total):
        batch = collate([examples[i] for i in next(batches)])
        loss = completion_only_loss(model, batch["input_ids"].to(device), batch["attention_mask"].to(device),
                                    batch["labels"].to(device))
        opt.zero_grad()
        loss.backward()
        if config.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
    if bar is not None:
        bar.close()
    model.eval()
    return losses


def _completion_only_trainer_class():
    from transformers import Trainer  # here, not at the top: transformers takes seconds to import

    class CompletionOnlyTrainer(Trainer):
        """A Trainer whose loss computes logits only where labels are targets."""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if not hasattr(model, "get_decoder"):
                # Wrapped for data parallelism (DDP, DeepSpeed): only the wrapper's forward keeps
                # the processes' gradients in sync, so take the Trainer's own loss (the model's
                # cross-entropy over target tokens, logits at every position, num_items_in_batch
                # honoured the Trainer's way).
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            loss = completion_only_loss(model, inputs["input_ids"], inputs["attention_mask"], inputs["labels"],
                                        num_items_in_batch)
            if num_items_in_batch is not None and self.args.average_tokens_across_devices:
                # As Trainer.compute_loss: num_items_in_batch counts every process's tokens and DDP
                # averages the processes' gradients, so each process's share is scaled back up.
                loss = loss * self.accelerator.num_processes
            return (loss, {}) if return_outputs else loss

    return CompletionOnlyTrainer


def train_sft(model, tokenizer, train: Sequence[Transition], val: Sequence[Transition],
              config: SFTConfig, callbacks=None, run_key: dict | None = None) -> SFTResult:
    """Fine-tune `model` on the transitions with the completion-only loss; returns the log.

    `callbacks` are extra `transformers.TrainerCallback`s (the tests use one to kill a run).
    `run_key` names the run whole for its checkpoints (`build_world_model`: profile, seed, envs, model,
    sizes); None: the config's training settings and the data name it (`wmkit.runs.run_identity`).
    Checkpoints of another run in output_dir are refused (`wmkit.runs.checkpoint_to_resume`).
    """
    from transformers import TrainingArguments  # here, not at the top: transformers takes seconds to import

    train_examples, dropped = tokenize_sft_examples(tokenizer, train, config.max_length)
    val_examples, _ = tokenize_sft_examples(tokenizer, val, config.max_length)
    val_examples = val_examples[:config.max_eval_examples]
    if not train_examples:
        raise ValueError("No training transition fits max_length; raise max_length or shorten states.")
    if run_key is None:
        run_key = run_identity(run_settings(config, SFT_NOT_IN_RUN_KEY), (),
                               [[e["input_ids"], e["labels"]] for e in train_examples],
                               lora_base=model if hasattr(model, "peft_config") else None)
    resume_from = checkpoint_to_resume(config.output_dir, run_key, config.resume)
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
    args = TrainingArguments(**{
        "output_dir": config.output_dir,
        "max_steps": total_steps,
        "per_device_train_batch_size": per_device,
        "per_device_eval_batch_size": per_device * 2,
        "learning_rate": config.learning_rate,
        "lr_scheduler_type": "cosine",
        "warmup_steps": config.warmup,
        "weight_decay": config.weight_decay,
        "logging_steps": config.logging_steps,
        "eval_strategy": "steps" if val_examples else "no",
        "eval_steps": eval_steps,
        "save_strategy": "steps",
        "save_steps": save_steps,
        "save_total_limit": 1,
        "seed": config.seed,
        "data_seed": config.seed,
        # Batches of similar length waste less compute on padding.
        "train_sampling_strategy": "group_by_length",
        "use_cpu": use_cpu,
        "bf16": False,
        "report_to": "none",
        "disable_tqdm": not config.show_progress,
        "dataloader_num_workers": 0,
        "prediction_loss_only": True,
        **check_trl_args(config.trl_args, "sft"),  # the user's pass-through, last: it wins
    })
    from datasets import Dataset  # here, not at the top: datasets takes a second to import

    trainer = _completion_only_trainer_class()(model=model, args=args, train_dataset=Dataset.from_list(train_examples),
                      eval_dataset=Dataset.from_list(val_examples) if val_examples else None,
                      data_collator=CompletionOnlyCollator(tokenizer.pad_token_id), callbacks=callbacks)
    if not config.show_progress:
        stop_printing_logs(trainer)
    start = time.perf_counter()
    train_or_resume(trainer, resume_from)
    return SFTResult(log_history=list(trainer.state.log_history), n_train=len(train_examples),
                     n_dropped=dropped, steps=trainer.state.global_step,
                     seconds=time.perf_counter() - start,
                     extra={"resumed_from": resume_from})
