"""GRPO settings for TRL's GRPOTrainer, shared by every paper's RL step.

:class:`GRPOSettings` names the knobs the kit's RL runs share (group size, prompts per
step, learning rate, KL, clipping, loss type, reward scaling) and turns them into a
``trl.GRPOConfig``; an impossible combination raises :class:`GRPOSettingsError` with one
clear line instead of TRL's own error. :class:`GRPORunConfig` holds the fields every GRPO run
of the kit has (RLVR's and WM-R1's configs inherit them) and builds its GRPOSettings.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from wmkit.core import models
from wmkit.runs import stop_printing_logs, train_or_resume


class GRPOSettingsError(ValueError):
    """A GRPO setting that cannot work, said in one line before TRL would say it in a traceback."""


def micro_batches(prompts_per_step: int, num_generations: int, prompts_per_micro_batch: int | None = None) -> dict:
    """``per_device_train_batch_size`` and ``gradient_accumulation_steps`` for optimizer steps of
    `prompts_per_step` groups, trained `prompts_per_micro_batch` groups at a time (None: all at once).

    TRL still generates a whole step's completions at once (its ``steps_per_generation`` defaults
    to the accumulation steps) and scores whole groups; only the forward and backward passes are
    split. That is what lets a pretrained model fit: the logits of its large vocabulary over every
    completion token, not its weights, are what fills a small GPU."""
    micro = prompts_per_micro_batch or prompts_per_step
    if micro < 1 or prompts_per_step % micro:
        raise GRPOSettingsError(f"prompts_per_micro_batch {micro} must divide prompts_per_step {prompts_per_step}")
    return {"per_device_train_batch_size": micro * num_generations,
            "gradient_accumulation_steps": prompts_per_step // micro}


VLLM_ENV = "WMKIT_USE_VLLM"
"""Environment variable that turns vLLM generation on for every later GRPO run ("1"); off by default."""


def vllm_requested() -> bool:
    """Whether vLLM generation was asked for (`request_vllm`, or WMKIT_USE_VLLM=1): the default of
    `GRPOSettings.use_vllm` and `RLVRConfig.use_vllm`."""
    return os.environ.get(VLLM_ENV, "0").strip().lower() in ("1", "true", "yes", "on")


def request_vllm(on: bool = True) -> None:
    """Make GRPO runs of this process generate with vLLM in TRL's colocate mode (a notebook's
    USE_VLLM parameter, ``--vllm`` on the command line). Asking for it where vLLM or CUDA is
    missing raises `GRPOSettingsError` at once, in one line, instead of at the first GRPO step.
    WM-R1's episodes are played by the kit's own rollout function and never use vLLM."""
    if not on:
        os.environ.pop(VLLM_ENV, None)
        return
    GRPOSettings(output_dir=".", use_vllm=True, max_steps=1).check_vllm()
    os.environ[VLLM_ENV] = "1"


@dataclass
class GRPOSettings:
    """The GRPO knobs the kit exposes (mapped onto `trl.GRPOConfig` by `to_trl_config`)."""

    output_dir: str
    """Where checkpoints go."""
    num_generations: int = 8
    """Group size G: completions sampled per prompt; advantages are relative within a group."""
    per_device_train_batch_size: int = 16
    """Completions (not prompts) per device per micro-batch, as TRL counts them."""
    gradient_accumulation_steps: int = 1
    """Micro-batches per optimizer step."""
    num_processes: int = 1
    """Data-parallel processes (accelerate)."""
    learning_rate: float = 1e-4
    """LoRA adapters want ~1e-5..3e-4; the authors' full-parameter 1e-6 barely moves them."""
    beta: float = 0.0
    """KL coefficient to the reference model (0: no reference model is even loaded)."""
    loss_type: str = "dapo"
    """TRL loss aggregation: grpo, dr_grpo, dapo, bnpo ..."""
    scale_rewards: str = "group"
    """Advantage scaling: 'group' divides by the group's std, 'none' keeps raw centred rewards."""
    max_completion_length: int = 128
    """Longest completion sampled."""
    temperature: float = 1.0
    """Sampling temperature during rollouts."""
    max_steps: int = field(kw_only=True)
    """Optimizer steps (no default: every run takes its count from its profile's sizes)."""
    seed: int = 0
    """Seed of sampling and data order."""
    use_vllm: bool = field(default_factory=vllm_requested)
    """Generate rollouts with vLLM instead of transformers' `generate` (CUDA and `pip install vllm`
    only; off unless `request_vllm` asked for it). Much faster for long completions and big groups; see tutorials/multi_gpu.md."""
    vllm_mode: str = "colocate"
    """'colocate': vLLM runs inside each training process and shares its GPU (no extra GPU);
    'server': a separate `trl vllm-serve` process on its own GPU(s) serves every trainer."""
    vllm_gpu_memory_utilization: float = 0.3
    """colocate: share of each GPU's memory vLLM reserves up front for weights + KV cache (the
    trainer keeps the rest); raise it for long completions / big groups, lower it on OOM."""

    def generation_batch(self) -> int:
        return self.per_device_train_batch_size * self.gradient_accumulation_steps * self.num_processes

    def check(self) -> None:
        """Raise GRPOSettingsError (one clear line) for settings TRL would reject later."""
        if self.num_generations < 2:
            raise GRPOSettingsError(f"num_generations must be at least 2 (a group of one has no baseline), "
                                    f"not {self.num_generations}")
        batch = self.generation_batch()
        if batch % self.num_generations:
            raise GRPOSettingsError(
                f"generation batch {batch} (= per_device_train_batch_size {self.per_device_train_batch_size}"
                f" x gradient_accumulation_steps {self.gradient_accumulation_steps} x processes "
                f"{self.num_processes}) is not divisible by num_generations {self.num_generations}; "
                f"use a batch that is a multiple of {self.num_generations}")
        if self.scale_rewards not in ("group", "batch", "none"):
            raise GRPOSettingsError(f"scale_rewards must be 'group', 'batch' or 'none', not {self.scale_rewards!r}")
        if not 0 < self.learning_rate < 1:
            raise GRPOSettingsError(f"learning_rate must be in (0, 1), not {self.learning_rate}")
        if self.use_vllm:
            self.check_vllm()

    def check_vllm(self) -> None:
        """Raise GRPOSettingsError (one line) when vLLM generation cannot run here."""
        if self.vllm_mode not in ("colocate", "server"):
            raise GRPOSettingsError(f"vllm_mode must be 'colocate' or 'server', not {self.vllm_mode!r}")
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            raise GRPOSettingsError(f"vllm_gpu_memory_utilization must be in (0, 1], "
                                    f"not {self.vllm_gpu_memory_utilization}")
        import importlib.util

        if importlib.util.find_spec("vllm") is None:
            raise GRPOSettingsError("use_vllm=True but vLLM is not installed (vLLM generation was asked for: "
                                    "use_vllm, USE_VLLM or --vllm): pip install vllm (CUDA machines only), "
                                    "or leave it off to generate with transformers")
        if not torch.cuda.is_available():
            raise GRPOSettingsError("use_vllm=True needs a CUDA GPU and none is visible; set use_vllm=False")

    def to_trl_config(self, **extra):
        """A `trl.GRPOConfig` with these settings: mixed precision in bf16 where the GPU has it, fp16
        where it does not (a T4; `wmkit.core.models.compute_dtype`), none on a CPU."""
        from trl import GRPOConfig  # here, not at the top: TRL takes seconds to import

        self.check()
        cuda = torch.cuda.is_available()
        return GRPOConfig(
            output_dir=self.output_dir, num_generations=self.num_generations,
            per_device_train_batch_size=self.per_device_train_batch_size,
            gradient_accumulation_steps=self.gradient_accumulation_steps,
            learning_rate=self.learning_rate, beta=self.beta, loss_type=self.loss_type,
            scale_rewards=self.scale_rewards, max_completion_length=self.max_completion_length,
            temperature=self.temperature, max_steps=self.max_steps, seed=self.seed,
            use_cpu=not cuda, report_to="none", **models.mixed_precision_flags(),
            **{"use_vllm": self.use_vllm, "vllm_mode": self.vllm_mode,
               "vllm_gpu_memory_utilization": self.vllm_gpu_memory_utilization, **extra})


@dataclass(kw_only=True)
class GRPORunConfig:
    """The fields every GRPO run of the kit has, whatever it trains: RLVR on a world model
    (`wmkit.core.world_model_rl.RLVRConfig`) and WM-R1 on a phone agent (`wmkit.wm_r1.method.WMR1Config`)
    inherit them and add their own. `grpo_settings` turns them into the one `GRPOSettings` both train with.

    The defaults are RLVR's; a subclass that needs another one redeclares that field."""

    output_dir: str
    """Checkpoints and the trained weights go here."""
    max_steps: int
    """Optimizer steps (no default: every run takes its count from its profile's sizes)."""
    num_generations: int = 8
    """Group size G: completions sampled per prompt; advantages are relative within the group."""
    prompts_per_step: int = 4
    """Prompts (groups) per optimizer step: the batch holds prompts_per_step × G completions."""
    prompts_per_micro_batch: int | None = None
    """Groups per forward/backward pass (gradient accumulation over the rest of the step; the
    optimizer step is the same either way). None: one group at a time for a model on NF4 weights (a
    pretrained vocabulary's logits fill a small GPU), the whole step at once otherwise."""
    learning_rate: float = 1e-4
    """AdamW lr (LoRA adapters want ~1e-5..3e-4; the authors' full-parameter 1e-6 would barely move them)."""
    scale_rewards: str = "group"
    """'group': divide advantages by the group's reward std; 'none': keep raw centred rewards."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    max_completion_length: int = 160
    """Longest completion sampled (tokens)."""
    lora: bool = True
    """Put LoRA adapters (`lora_r`, `lora_alpha`) on every linear layer of a model that has none and
    train those; False trains the model as it is: every parameter, as the authors do (sensible for the
    tiny from-scratch models, where the whole model is smaller than a LoRA of a 1B one), or the
    adapters it arrives with (a warm start's). RLVR merges the adapters back at the end."""
    lora_r: int = 16
    """LoRA rank of the adapters `lora` adds."""
    lora_alpha: int = 32
    """LoRA scale numerator (scale = alpha / r)."""
    seed: int = 0
    """Seed of data order and sampling."""
    save_steps: int = 20
    """Checkpoint every this many steps (resumable)."""
    show_progress: bool = True
    """tqdm bar over steps."""

    def grpo_settings(self, *, one_group_per_pass: bool, output_dir: str | Path | None = None,
                      **settings: Any) -> GRPOSettings:
        """The `GRPOSettings` of this run: the fields above, the step split into micro-batches
        (`micro_batches`), and `settings`, the GRPOSettings knobs a run sets beyond these (RLVR: beta,
        loss_type, vLLM). `one_group_per_pass`: what prompts_per_micro_batch=None means, one group
        per forward/backward pass (a model on NF4 weights) or else the whole step at once.
        `output_dir`: where TRL's checkpoints go (None: this run's output_dir)."""
        micro = self.prompts_per_micro_batch or (1 if one_group_per_pass else None)
        return GRPOSettings(
            output_dir=str(self.output_dir if output_dir is None else output_dir),
            num_generations=self.num_generations,
            **micro_batches(self.prompts_per_step, self.num_generations, micro),
            learning_rate=self.learning_rate, scale_rewards=self.scale_rewards,
            max_completion_length=self.max_completion_length, temperature=self.temperature,
            max_steps=self.max_steps, seed=self.seed, **settings)


@dataclass
class GRPORun:
    """What one GRPO training run leaves behind (:func:`train_grpo`)."""

    model: Any
    """The trained policy in eval mode: adapters merged into 16-bit weights; on 4-bit weights the
    PeftModel itself (merging into NF4 would round the update away); with no adapters, the model."""
    log_history: list[dict]
    """TRL's per-step logs (reward, loss, ...)."""
    global_step: int
    """Optimizer steps taken, resumed ones included."""
    adapter_dir: Path | None
    """Where the trained adapters were saved (None: no adapters; the whole model is in ``final/``)."""


def train_grpo(policy, tokenizer, args, dataset, reward_funcs: Sequence[Callable], *, output_dir: str | Path,
               lora: tuple[int, int] | None = None, quantized: bool = False, gradient_checkpointing: bool = False,
               callbacks: Sequence = (), rollout_func: Callable | None = None, show_progress: bool = True,
               resume_from: str | None = None) -> GRPORun:
    """The kit's one GRPO training run on TRL, shared by RLVR (`wmkit.core.world_model_rl.train_rlvr`)
    and WM-R1 (`wmkit.wm_r1.method.train_wm_r1`): add adapters, train or resume, save, merge.

    `policy` is trained in place. `lora` = (r, alpha) puts LoRA adapters on every linear layer first
    (`quantized`: the policy is in NF4, QLoRA), unless it carries adapters already: a warm start
    trained those, and GRPO goes on training them. None trains the policy as it is, every parameter
    or the adapters it carries. `args` is the `trl.GRPOConfig` (`GRPOSettings.to_trl_config`);
    `rollout_func` plays a prompt's completions itself (WM-R1's episodes); `resume_from` is the
    checkpoint `wmkit.runs.checkpoint_to_resume` chose.

    The final weights are always saved under `output_dir`: the adapters (with the tokenizer) in
    ``adapter/``, or the whole model in ``final/`` when there are no adapters.
    """
    from trl import GRPOTrainer  # here, not at the top: TRL takes seconds to import

    if lora is not None and not hasattr(policy, "peft_config"):
        r, alpha = lora
        policy = models.add_lora(policy, r=r, alpha=alpha, quantized=quantized, gradient_checkpointing=gradient_checkpointing)
    trainer = GRPOTrainer(model=policy, args=args, train_dataset=dataset, reward_funcs=list(reward_funcs),
                          processing_class=tokenizer, callbacks=list(callbacks), rollout_func=rollout_func)
    if not show_progress:
        stop_printing_logs(trainer)  # without a progress bar, no per-step log dicts printed either
    train_or_resume(trainer, resume_from)
    trained, out = trainer.model, Path(output_dir)
    adapter_dir = None
    if hasattr(trained, "peft_config"):
        adapter_dir = models.save_adapters(trained, out / models.ADAPTER_FOLDER, tokenizer)
        if not models.is_nf4(trained):
            trained = trained.merge_and_unload()
    else:
        trained.save_pretrained(out / models.FINAL_FOLDER)
        tokenizer.save_pretrained(out / models.FINAL_FOLDER)
    trained.eval()
    return GRPORun(model=trained, log_history=list(trainer.state.log_history),
                   global_step=trainer.state.global_step, adapter_dir=adapter_dir)
