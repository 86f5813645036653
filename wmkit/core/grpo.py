"""GRPO on TRL for every paper's RL step: the knobs, their one conversion to ``trl.GRPOConfig``, the run.

:class:`GRPOArgs` holds the GRPO knobs a paper's config sets, under TRL's names; :class:`GRPORunConfig`
adds what every run has (output folder, LoRA, seed, checkpoints, and ``trl_args``: any other
``trl.GRPOConfig`` field, passed through as it is). :func:`trl_grpo_config` is the one place such a
config becomes a ``trl.GRPOConfig``; an impossible combination is one :class:`GRPOArgsError` line
instead of TRL's traceback. :func:`train_grpo` adds adapters, trains or resumes, saves and merges.

This module imports neither torch, TRL nor numpy at import time: the papers' config modules import
:class:`GRPOArgs` and stay plain data (``python -m wmkit --help`` reads them; torch alone takes seconds).
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wmkit.entries import resolve


class GRPOArgsError(ValueError):
    """A GRPO setting that cannot work, said in one line before TRL would say it in a traceback."""


@dataclass(kw_only=True)
class GRPOArgs:
    """GRPO's knobs, under the names of their ``trl.GRPOConfig`` fields (``prompts_per_step`` is the
    kit's: TRL counts completions, see :func:`micro_batches`)."""

    max_steps: int
    """Optimizer steps (no default: every run takes its count from its paper's config)."""
    num_generations: int = 8
    """Group size G: completions sampled per prompt; advantages are relative within the group."""
    prompts_per_step: int = 4
    """Prompts (groups) per optimizer step: the batch holds prompts_per_step × G completions."""
    learning_rate: float = 1e-4
    """AdamW lr (LoRA adapters want ~1e-5..3e-4; the authors' full-parameter 1e-6 would barely move them)."""
    beta: float = 0.0
    """KL coefficient to the starting model (0: no reference model is even loaded)."""
    loss_type: str = "dapo"
    """TRL's loss aggregation (grpo: per-sequence mean; dapo/bnpo: per-token over the batch)."""
    scale_rewards: str = "group"
    """'group': divide advantages by the group's reward std; 'none': keep raw centred rewards."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    max_completion_length: int = 160
    """Longest completion sampled (tokens)."""


GRPO_KNOBS = tuple(f.name for f in dataclasses.fields(GRPOArgs))


def grpo_args(args: GRPOArgs) -> dict:
    """The knobs of `args` (a GRPOArgs or a run config built on one) as keywords."""
    return {name: getattr(args, name) for name in GRPO_KNOBS}


@dataclass(kw_only=True)
class GRPORunConfig(GRPOArgs):
    """The fields every GRPO run of the kit has beside the knobs: RLVR on a world model
    (`wmkit.core.world_model_rl.RLVRConfig`) and WM-R1 on a phone agent (`wmkit.wm_r1.method.WMR1Config`)
    add their own. Build one from a paper's knobs with :meth:`of`."""

    output_dir: str
    """Checkpoints and the trained weights go here."""
    prompts_per_micro_batch: int | None = None
    """Groups per forward/backward pass (gradient accumulation over the rest of the step; the
    optimizer step is the same either way). None: one group at a time for a model on NF4 weights (a
    pretrained vocabulary's logits fill a small GPU), the whole step at once otherwise."""
    lora: bool = True
    """Put LoRA adapters (`lora_r`, `lora_alpha`) on every linear layer of a model that has none and
    train those; False trains the model as it is: every parameter (the tiny from-scratch models), or
    the adapters it arrives with (a warm start's)."""
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
    trl_args: dict = field(default_factory=dict)
    """Any other ``trl.GRPOConfig`` / ``TrainingArguments`` field, passed to TRL as it is (``report_to``,
    ``push_to_hub``, ``hub_model_id``, ``logging_steps`` ...; :func:`check_trl_args`)."""

    @classmethod
    def of(cls, args: GRPOArgs, **run: Any):
        """This run config from a paper's knobs `args` and the run's own fields (`run` wins)."""
        return cls(**{**grpo_args(args), **run})


def run_settings(config: Any, ignored: Sequence[str]) -> dict:
    """A run config's fields less `ignored`, for its checkpoints' run key (`wmkit.runs.run_identity`);
    an empty ``trl_args`` is left out, as runs before the pass-through existed wrote their keys."""
    settings = dataclasses.asdict(config)
    if not settings.get("trl_args", True):
        settings.pop("trl_args")
    return {k: v for k, v in settings.items() if k not in ignored}


# ============================================================================ pass-through


TRAINER_ARGS = {"grpo": "trl:GRPOConfig", "sft": "transformers:TrainingArguments"}
"""The argument classes a pass-through is checked against (imported only when one is given)."""

KIT_SET = {"output_dir", "seed", "data_seed", "max_steps", "num_train_epochs", "per_device_train_batch_size",
           "gradient_accumulation_steps", "use_cpu", "bf16", "fp16"}
"""TrainingArguments fields the kit sets from its own config (set those there, not as a pass-through)."""

OWN_SETTINGS = {"grpo": set(GRPO_KNOBS), "sft": {"learning_rate", "weight_decay", "warmup_steps"}}
"""Per trainer, the further fields its kit config sets (`wmkit.core.sft.SFTConfig` for "sft")."""


def trainer_fields(trainer: str) -> set[str]:
    """The field names of ``trl.GRPOConfig`` (`trainer` "grpo") or ``TrainingArguments`` ("sft")."""
    return {f.name for f in dataclasses.fields(resolve(TRAINER_ARGS[trainer]))}


def check_trl_args(trl_args: Mapping[str, Any] | None, trainer: str = "grpo") -> dict:
    """`trl_args` as a dict after checking each key names a field of the trainer's arguments
    (`trainer`: "grpo" or "sft"; a ValueError in one line otherwise, with the nearest names) and is
    none of the kit's own settings (:data:`KIT_SET`, :data:`OWN_SETTINGS`: set those in the kit's
    config, where a record sees them)."""
    trl_args = dict(trl_args or {})
    if not trl_args:
        return trl_args
    if not all(isinstance(k, str) for k in trl_args):
        raise ValueError(f"TRL arguments must be named by strings, not {list(trl_args)}")
    known = trainer_fields(trainer)
    cls = TRAINER_ARGS[trainer].partition(":")[2]
    for key in trl_args:
        if key in OWN_SETTINGS[trainer] or key in KIT_SET:
            raise ValueError(f"{key} is a setting of the kit's config, not a pass-through: set it there "
                             f"(e.g. {key}=... on the command line)")
        if key not in known:
            close = difflib.get_close_matches(key, known, n=3)
            raise ValueError(f"unknown TRL argument {key!r}: not a field of {cls}"
                             + (f" (did you mean {', '.join(close)}?)" if close else ""))
    return trl_args


# ============================================================================ the one conversion


def micro_batches(prompts_per_step: int, num_generations: int, prompts_per_micro_batch: int | None = None) -> dict:
    """``per_device_train_batch_size`` and ``gradient_accumulation_steps`` for optimizer steps of
    `prompts_per_step` groups, trained `prompts_per_micro_batch` groups at a time (None: all at once).

    TRL still generates a whole step's completions at once (its ``steps_per_generation`` defaults
    to the accumulation steps) and scores whole groups; only the forward and backward passes are
    split. That is what lets a pretrained model fit: the logits of its large vocabulary over every
    completion token, not its weights, are what fills a small GPU."""
    micro = prompts_per_micro_batch or prompts_per_step
    if micro < 1 or prompts_per_step % micro:
        raise GRPOArgsError(f"prompts_per_micro_batch {micro} must divide prompts_per_step {prompts_per_step}")
    return {"per_device_train_batch_size": micro * num_generations,
            "gradient_accumulation_steps": prompts_per_step // micro}


def check_grpo(config: GRPORunConfig, one_group_per_pass: bool = False, num_processes: int = 1) -> dict:
    """Raise GRPOArgsError (one clear line) for settings TRL would reject later; returns the micro-batching."""
    if config.num_generations < 2:
        raise GRPOArgsError(f"num_generations must be at least 2 (a group of one has no baseline), "
                            f"not {config.num_generations}")
    micro = config.prompts_per_micro_batch or (1 if one_group_per_pass else None)
    batches = micro_batches(config.prompts_per_step, config.num_generations, micro)
    batch = batches["per_device_train_batch_size"] * batches["gradient_accumulation_steps"] * num_processes
    if batch % config.num_generations:
        raise GRPOArgsError(
            f"generation batch {batch} (= per_device_train_batch_size {batches['per_device_train_batch_size']}"
            f" x gradient_accumulation_steps {batches['gradient_accumulation_steps']} x processes "
            f"{num_processes}) is not divisible by num_generations {config.num_generations}; "
            f"use a batch that is a multiple of {config.num_generations}")
    if config.scale_rewards not in ("group", "batch", "none"):
        raise GRPOArgsError(f"scale_rewards must be 'group', 'batch' or 'none', not {config.scale_rewards!r}")
    if not 0 < config.learning_rate < 1:
        raise GRPOArgsError(f"learning_rate must be in (0, 1), not {config.learning_rate}")
    return batches


def trl_grpo_config(config: GRPORunConfig, *, output_dir: str | Path | None = None, one_group_per_pass: bool = False,
                    use_vllm: bool = False, vllm_mode: str = "colocate", num_processes: int = 1, **kit: Any):
    """THE conversion of a kit GRPO run config to ``trl.GRPOConfig``: the knobs, the step split into
    micro-batches (`one_group_per_pass`: what prompts_per_micro_batch=None means, one group per pass, for
    a model on NF4 weights, or else the whole step at once), mixed precision in bf16 where the GPU
    has it, fp16 where it does not (a T4; `wmkit.core.models.compute_dtype`), none on a CPU; `kit`: the
    run's own TRL settings (logging, checkpoints, columns); and last ``config.trl_args``, the user's
    pass-through (:func:`check_trl_args`), which may replace any of the kit's run settings.
    `output_dir`: where TRL's checkpoints go (None: the config's); `num_processes`: data-parallel
    processes the generation batch is checked for."""
    import torch  # here and below: see the module docstring
    from trl import GRPOConfig

    from wmkit.core.models import mixed_precision_flags

    batches = check_grpo(config, one_group_per_pass, num_processes)
    vllm_gpu_memory_utilization = config.trl_args.get("vllm_gpu_memory_utilization", 0.3)
    use_vllm, vllm_mode = config.trl_args.get("use_vllm", use_vllm), config.trl_args.get("vllm_mode", vllm_mode)
    if use_vllm:  # asked for by the run or by the pass-through: checked here, in one line
        check_vllm(vllm_mode, vllm_gpu_memory_utilization)
    return GRPOConfig(**{
        "output_dir": str(config.output_dir if output_dir is None else output_dir), **grpo_args_for_trl(config),
        **batches, "seed": config.seed, "use_cpu": not torch.cuda.is_available(), "report_to": "none",
        **mixed_precision_flags(), "use_vllm": use_vllm, "vllm_mode": vllm_mode,
        "vllm_gpu_memory_utilization": vllm_gpu_memory_utilization, **kit, **check_trl_args(config.trl_args)})


def grpo_args_for_trl(config: GRPOArgs) -> dict:
    """The knobs TRL takes under the same name (all but the kit's prompts_per_step)."""
    return {k: v for k, v in grpo_args(config).items() if k != "prompts_per_step"}


# ============================================================================ vLLM


VLLM_ENV = "WMKIT_USE_VLLM"
"""Environment variable that turns vLLM generation on for every later GRPO run ("1"); off by default."""


def vllm_requested() -> bool:
    """Whether vLLM generation was asked for (`request_vllm`, or WMKIT_USE_VLLM=1): the default of
    `RLVRConfig.use_vllm`."""
    return os.environ.get(VLLM_ENV, "0").strip().lower() in ("1", "true", "yes", "on")


def check_vllm(mode: str = "colocate", gpu_memory_utilization: float = 0.3) -> None:
    """Raise GRPOArgsError (one line) when vLLM generation cannot run here."""
    import torch  # here: see the module docstring

    if mode not in ("colocate", "server"):
        raise GRPOArgsError(f"vllm_mode must be 'colocate' or 'server', not {mode!r}")
    if not 0 < gpu_memory_utilization <= 1:
        raise GRPOArgsError(f"vllm_gpu_memory_utilization must be in (0, 1], not {gpu_memory_utilization}")
    if importlib.util.find_spec("vllm") is None:
        raise GRPOArgsError("use_vllm=True but vLLM is not installed (vLLM generation was asked for: "
                            "use_vllm, USE_VLLM or --vllm): pip install vllm (CUDA machines only), "
                            "or leave it off to generate with transformers")
    if not torch.cuda.is_available():
        raise GRPOArgsError("use_vllm=True needs a CUDA GPU and none is visible; set use_vllm=False")


def request_vllm(on: bool = True) -> None:
    """Make GRPO runs of this process generate with vLLM in TRL's colocate mode (a notebook's
    USE_VLLM parameter, ``--vllm`` on the command line). Asking for it where vLLM or CUDA is
    missing raises `GRPOArgsError` at once, in one line, instead of at the first GRPO step.
    WM-R1's episodes are played by the kit's own rollout function and never use vLLM."""
    if not on:
        os.environ.pop(VLLM_ENV, None)
        return
    check_vllm()
    os.environ[VLLM_ENV] = "1"


# ============================================================================ the run


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
    or the adapters it carries. `args` is the `trl.GRPOConfig` (:func:`trl_grpo_config`);
    `rollout_func` plays a prompt's completions itself (WM-R1's episodes); `resume_from` is the
    checkpoint `wmkit.runs.checkpoint_to_resume` chose.

    The final weights are always saved under `output_dir`: the adapters (with the tokenizer) in
    ``adapter/``, or the whole model in ``final/`` when there are no adapters.
    """
    from trl import GRPOTrainer  # here: see the module docstring

    from wmkit.core import models
    from wmkit.runs import stop_printing_logs, train_or_resume

    if lora is not None and not hasattr(policy, "peft_config"):
        r, alpha = lora
        policy = models.add_lora(policy, r=r, alpha=alpha, quantized=quantized, gradient_checkpointing=gradient_checkpointing)
    trainer = GRPOTrainer(model=policy, args=args, train_dataset=dataset, reward_funcs=list(reward_funcs),
                          processing_class=tokenizer, callbacks=list(callbacks), rollout_func=rollout_func)
    if not show_progress:
        stop_printing_logs(trainer)  # without a progress bar, no per-step log dicts printed either
    train_or_resume(trainer, resume_from)
    trained, out = trainer.model, Path(output_dir)
    # TRL's fused LM head (trl.trainer.utils.add_fused_lm_head) replaces `forward` on the model object
    # with a closure over the object's own bound forward. A deep copy of the trained model keeps that
    # closure, so the copy would run, and train, the original's weights: drop it (without
    # fused_lm_head it only called the model's own forward, so the trained model computes the same).
    patched = trained.get_base_model() if hasattr(trained, "get_base_model") else trained
    vars(patched).pop("forward", None)
    adapter_dir = None
    if hasattr(trained, "peft_config"):
        adapter_dir = models.save_adapters(trained, out / models.ADAPTER_FOLDER, tokenizer)
        if not models.is_nf4(trained):
            trained = trained.merge_and_unload()
    else:
        models.save_model(trained, tokenizer, out / models.FINAL_FOLDER)
    trained.eval()
    return GRPORun(model=trained, log_history=list(trainer.state.log_history),
                   global_step=trainer.state.global_step, adapter_dir=adapter_dir)
