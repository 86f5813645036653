"""``python -m wmkit gpu-check``: what one GPU does with the kit, measured in a few minutes, offline.

Two tables, printed and written as JSON:

1. **Policies of real shapes.** For Qwen2.5-0.5B, 1.5B, 3B and 7B -- built from `transformers`
   config objects with random weights, so nothing is downloaded -- and for two ways to train
   them, LoRA on 16-bit weights and QLoRA on NF4 weights, one row each with

   * the time of one GRPO step (TRL's GRPOTrainer: generate G = 8 completions of 128 tokens for
     one prompt of 256 tokens, score them, one backward pass and one AdamW step on the adapters),
   * generated tokens per second (transformers' ``generate``, the same 8 x 256 -> 128 tokens),
   * peak GPU memory over both (``torch.cuda.max_memory_allocated``; what the weights alone take
     is its own column).

   Random weights produce gibberish, but gibberish costs what text costs: the completions are
   forced to their full 128 tokens (``min_new_tokens``), so every row does the same work.
   A row that runs out of memory is recorded as "OOM" and the check goes on.
2. **The ``gpu`` profile's own steps**: one world-model SFT step, one RLVR (GRPO) step and one
   WM-R1 (GRPO in the world model) step, at the profile's batch and length settings, on models
   built from scratch at the profile's shapes (the GPU machine the kit is checked on has no
   internet and no pretrained weights).

``--cpu-dry-run`` runs the same code on tiny shapes and the ``smoke`` profile on a CPU, in under a
minute: the test suite runs it so that the GPU command keeps working.

Packages: torch and transformers are needed; without peft nothing trains, without trl (and
datasets) the GRPO steps are skipped but generation is still measured, without bitsandbytes the
QLoRA rows are skipped. Each skipped part says which package it missed.
"""
from __future__ import annotations

import gc
import importlib.util
import json
import platform
import random
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch

from wmkit.core import models
from wmkit.core import world_model_rl as rl
from wmkit.core.build import tokenizer_corpus
from wmkit.core.grpo import GRPORunConfig, trl_grpo_config
from wmkit.core.models import compute_dtype
from wmkit.core.sft import SFTConfig, train_sft
from wmkit.core.worldmodel import collect_transitions
from wmkit.profiles import Profile, get_profile
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.rlvr_world.config import rlvr_sizes
from wmkit.runs import default_runs_root, stop_printing_logs
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import experiment as wx
from wmkit.wm_r1 import tasks as wm_tasks
from wmkit.wm_r1.config import wm_r1_sizes
from wmkit.wm_r1.method import WMR1Config, train_wm_r1

QWEN25_SHAPES: dict[str, dict] = {
    # From the models' config.json on the hub (Qwen/Qwen2.5-*-Instruct); grouped-query attention.
    "Qwen2.5-0.5B": {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                     "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
                     "tie_word_embeddings": True},
    "Qwen2.5-1.5B": {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28,
                     "num_attention_heads": 12, "num_key_value_heads": 2, "vocab_size": 151936,
                     "tie_word_embeddings": True},
    "Qwen2.5-3B": {"hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
                   "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151936,
                   "tie_word_embeddings": True},
    "Qwen2.5-7B": {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
                   "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
                   "tie_word_embeddings": False},
    # The dry run's shape: every linear layer at least 64 wide, so that bitsandbytes' CPU kernels
    # (which reject narrower layers on Intel CPUs with AMX) take the QLoRA rows too.
    "tiny-qwen2": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
                   "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
                   "tie_word_embeddings": True},
}
"""Shapes of the random-weight policies, by name."""

MODES = ("lora", "qlora")
"""lora: frozen 16-bit base weights (bf16, fp16 on a GPU without bf16) + LoRA adapters;
qlora: frozen NF4 base weights with double quantisation + LoRA adapters (the kit's GPU default)."""

PACKAGES = ("peft", "trl", "datasets", "accelerate", "bitsandbytes")
"""Packages beyond torch and transformers that parts of the check need."""


@dataclass
class GPUCheckSettings:
    """What `run_gpu_check` measures, and at which sizes."""

    policies: tuple[str, ...] = ("Qwen2.5-0.5B", "Qwen2.5-1.5B", "Qwen2.5-3B", "Qwen2.5-7B")
    """Shapes (names in `QWEN25_SHAPES`), smallest first: a row that runs out of memory says
    nothing about the next, so every row is tried."""
    modes: tuple[str, ...] = MODES
    """Ways to train each shape (see `MODES`)."""
    num_generations: int = 8
    """Group size G: completions per prompt, all in one GRPO step."""
    prompt_tokens: int = 256
    """Length of the one prompt per step, in tokens (random ids of the policy's vocabulary)."""
    completion_tokens: int = 128
    """Length of every completion: generation is forced to run this long."""
    grpo_steps: int = 2
    """GRPO steps per row; the last one is reported (the first also pays for CUDA warm-up)."""
    lora_r: int = 16
    """LoRA rank on every attention and MLP projection (alpha = 2r)."""
    gradient_checkpointing: bool = True
    """Recompute activations in the backward pass, as the kit's QLoRA path does."""
    profile: str = "gpu"
    """Profile whose SFT, RLVR and WM-R1 steps are timed (the dry run uses smoke)."""
    profile_steps: bool = True
    """Also time the profile's three steps (table 2)."""
    time_budget_s: float = 420.0
    """Rows not started by then are recorded as skipped (the whole check should stay under 8 minutes:
    a row started just before the budget runs out still finishes)."""
    profile_steps_reserve_s: float = 90.0
    """Seconds of the budget kept for the profile's steps: policy rows stop starting earlier by this much."""
    device: str = "cuda"
    """cuda, or cpu for the dry run."""
    seed: int = 0
    """Seeds the random weights, prompts and rewards."""

    @classmethod
    def cpu_dry_run(cls) -> GPUCheckSettings:
        """The same code on a CPU, on a tiny shape and the smoke profile: well under a minute."""
        return cls(policies=("tiny-qwen2",), num_generations=4, prompt_tokens=32, completion_tokens=8, lora_r=8,
                   profile="smoke", time_budget_s=240.0, profile_steps_reserve_s=30.0, device="cpu")


@dataclass
class CheckRow:
    """One measured thing: a policy shape in one mode, or one step of a profile."""

    name: str
    """e.g. "Qwen2.5-7B qlora" or "gpu: RLVR step"."""
    status: str = "ok"
    """ok | OOM (at <stage>) | skipped: <why> | error: <one line>."""
    values: dict = field(default_factory=dict)
    """The measurements (seconds, tokens/s, GiB, parameter counts, sizes)."""


def missing_packages() -> list[str]:
    """The `PACKAGES` that are not installed here."""
    return [name for name in PACKAGES if importlib.util.find_spec(name) is None]


# ============================================================================ memory and timing


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _gib(n_bytes: float) -> float:
    return round(n_bytes / 2**30, 2)


def _free_memory(device: str) -> None:
    # Only a GPU needs the previous row's tensors gone before the next row (its peak memory); on a
    # CPU a full collection costs more than the tiny rows themselves.
    if device.startswith("cuda"):
        gc.collect()
        torch.cuda.empty_cache()


def _is_oom(err: BaseException) -> bool:
    # torch raises OutOfMemoryError; bitsandbytes and some kernels raise a plain RuntimeError.
    return isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()


# ============================================================================ random-weight policies


SPECIAL_WORDS = ("<unk>", "<pad>", "</s>")
"""Ids 0, 1, 2 of `word_tokenizer`; spelled so that no ordinary word contains one (special tokens
are matched inside text first)."""


def word_tokenizer(vocab_size: int):
    """A word-level tokenizer whose ordinary words are "w3" .. "w<vocab_size-1>": one word, one
    token, so a prompt of n words is exactly n tokens and every id the policy can sample decodes."""
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast  # here: transformers takes seconds to import

    vocab = {word: i for i, word in enumerate(SPECIAL_WORDS)}
    vocab.update({f"w{i}": i for i in range(len(SPECIAL_WORDS), vocab_size)})
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", pad_token="<pad>",
                                   eos_token="</s>")


def random_prompt(n_tokens: int, vocab_size: int, rng: random.Random) -> str:
    """`n_tokens` random ordinary words of `word_tokenizer`."""
    return " ".join(f"w{rng.randrange(len(SPECIAL_WORDS), vocab_size)}" for _ in range(n_tokens))


def _random_like(shape, device: str, dtype: torch.dtype, name: str) -> torch.Tensor:
    """Initial values: small normal noise for matrices, ones for norm weights, zeros for biases."""
    if len(shape) >= 2:
        return torch.empty(shape, device=device, dtype=dtype).normal_(0.0, 0.02)
    if name == "bias":
        return torch.zeros(shape, device=device, dtype=dtype)
    return torch.ones(shape, device=device, dtype=dtype)


def build_random_policy(shape: str, mode: str, device: str, seed: int = 0):
    """A Qwen2 causal LM of `shape` with random weights on `device`, base weights in 16 bits
    (`mode` "lora") or NF4 (`mode` "qlora"), and its `word_tokenizer`.

    The model is laid out on the meta device (no memory), then filled in one layer at a time, each
    linear layer quantised as soon as it exists in QLoRA mode: the 16-bit copy of the whole model
    never exists, so a 7B shape in NF4 can be built on a GPU smaller than its 15 GB of bf16.
    """
    from transformers import AutoModelForCausalLM, Qwen2Config  # here: transformers takes seconds to import

    dtype = models.compute_dtype(device)
    config = Qwen2Config(**QWEN25_SHAPES[shape], max_position_embeddings=32768)
    torch.manual_seed(seed)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    if mode == "qlora":  # pass 1: each projection straight to NF4 (its 16-bit weight lives for one layer)
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if type(child) is torch.nn.Linear and name != "lm_head":
                    weight = _random_like(child.weight.shape, device, dtype, "weight")
                    bias = None if child.bias is None else _random_like(child.bias.shape, device, dtype, "bias")
                    setattr(parent, name, models.nf4_linear(weight, bias, dtype))
                    del weight, bias
        model.is_loaded_in_4bit = True  # what from_pretrained sets; peft's k-bit preparation reads it
    made: dict[int, torch.nn.Parameter] = {}  # tied weights (embedding = output head) stay one tensor
    for module in model.modules():  # pass 2: everything still on the meta device
        for name, param in list(module.named_parameters(recurse=False)):
            if param.is_meta:
                if id(param) not in made:
                    made[id(param)] = torch.nn.Parameter(_random_like(param.shape, device, param.dtype, name),
                                                         requires_grad=param.requires_grad)
                module._parameters[name] = made[id(param)]
    for parent in list(model.modules()):  # rotary tables are computed, not learned: rebuild them
        for name, child in list(parent.named_children()):
            if any(b.is_meta for b in child.buffers(recurse=False)):
                setattr(parent, name, type(child)(config=model.config).to(device))
    left = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
    if left:
        raise RuntimeError(f"build_random_policy left tensors on the meta device: {left[:3]}")
    tokenizer = word_tokenizer(config.vocab_size)
    for holder in (model.config, model.generation_config):
        holder.pad_token_id, holder.eos_token_id = tokenizer.pad_token_id, tokenizer.eos_token_id
        holder.bos_token_id = None
    return model, tokenizer


def step_timer(device: str):
    """A TrainerCallback that times every optimizer step, generation included (TRL generates inside
    the step); `.seconds` lists them."""
    from transformers import TrainerCallback  # here: transformers takes seconds to import

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.seconds: list[float] = []
            self._start = 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            _sync(device)
            self._start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            _sync(device)
            self.seconds.append(time.perf_counter() - self._start)

    return StepTimer()


def measure_policy(shape: str, mode: str, settings: GPUCheckSettings, work_dir: Path) -> CheckRow:
    """One row of table 1: build, measure generation, run `grpo_steps` GRPO steps. Raises on OOM
    (the caller records it) and returns the row otherwise."""
    row = CheckRow(f"{shape} {mode}")
    missing = missing_packages()
    if "peft" in missing:
        row.status = "skipped: peft not installed (pip install peft)"
        return row
    if mode == "qlora" and "bitsandbytes" in missing:
        row.status = "skipped: bitsandbytes not installed (pip install bitsandbytes)"
        return row
    device, G, P, C = settings.device, settings.num_generations, settings.prompt_tokens, settings.completion_tokens
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    stage = "build"
    try:
        t0 = time.perf_counter()
        model, tokenizer = build_random_policy(shape, mode, device, settings.seed)
        model = models.add_lora(model, r=settings.lora_r, alpha=2 * settings.lora_r, quantized=mode == "qlora",
                                gradient_checkpointing=settings.gradient_checkpointing)
        _sync(device)
        row.values.update(
            weights="nf4" if mode == "qlora" else str(models.compute_dtype(device)).replace("torch.", ""),
            parameters=models.count_parameters(model),
            trainable_parameters=models.count_parameters(model, trainable_only=True),
            build_s=round(time.perf_counter() - t0, 1),
            weights_gib=_gib(torch.cuda.memory_allocated()) if cuda else None)

        stage = "generate"
        rng = random.Random(settings.seed)
        prompt = random_prompt(P, model.config.vocab_size, rng)
        batch = tokenizer([prompt] * G, return_tensors="pt").to(device)
        assert batch["input_ids"].shape[1] == P, "the prompt is not the length asked for"
        model.eval()
        with torch.no_grad():
            model.generate(**batch, max_new_tokens=4, min_new_tokens=4, do_sample=True)  # warm-up
            _sync(device)
            t0 = time.perf_counter()
            out = model.generate(**batch, max_new_tokens=C, min_new_tokens=C, do_sample=True, temperature=1.0)
            _sync(device)
        seconds = time.perf_counter() - t0
        generated = (out.shape[1] - batch["input_ids"].shape[1]) * G
        row.values.update(generate_s=round(seconds, 2), generated_tokens_per_s=round(generated / seconds, 1))
        del out
        model.train()

        missing_grpo = [p for p in ("trl", "datasets", "accelerate") if p in missing]
        if missing_grpo:
            row.status = f"ok (GRPO step skipped: {', '.join(missing_grpo)} not installed)"
        else:
            stage = "GRPO step"
            # Here, not at the top: optional (without them the GRPO rows are skipped), and slow to import.
            from datasets import Dataset
            from trl import GRPOTrainer

            prompts = [random_prompt(P, model.config.vocab_size, rng) for _ in range(settings.grpo_steps)]
            grpo = GRPORunConfig(output_dir=str(work_dir / row.name.replace(" ", "_")), num_generations=G,
                                 prompts_per_step=1, learning_rate=1e-5, max_completion_length=C,
                                 max_steps=settings.grpo_steps, seed=settings.seed)
            trl_config = trl_grpo_config(grpo, logging_steps=1, save_strategy="no", disable_tqdm=True,
                                         gradient_checkpointing=settings.gradient_checkpointing,
                                         generation_kwargs={"min_new_tokens": C})
            reward_rng = random.Random(settings.seed)

            def random_reward(completions, **kwargs):  # any spread of rewards gives nonzero advantages
                return [reward_rng.random() for _ in completions]

            timer = step_timer(device)
            tokenizer.padding_side = "left"
            trainer = GRPOTrainer(model=model, reward_funcs=[random_reward], args=trl_config,
                                  train_dataset=Dataset.from_dict({"prompt": prompts}), processing_class=tokenizer,
                                  callbacks=[timer])
            stop_printing_logs(trainer)
            trainer.train()
            row.values.update(grpo_step_s=round(timer.seconds[-1], 2),
                              grpo_first_step_s=round(timer.seconds[0], 2))
            del trainer
        if cuda:
            row.values.update(peak_gib=_gib(torch.cuda.max_memory_allocated()),
                              peak_reserved_gib=_gib(torch.cuda.max_memory_reserved()))
        return row
    except Exception as err:
        err.add_note(f"stage: {stage}")
        raise


# ============================================================================ the profile's steps


def profile_steps(profile: Profile, settings: GPUCheckSettings, work_dir: Path,
                  record: Callable[[str, Callable[[], dict]], None]):
    """Table 2: one world-model SFT step, one RLVR step and one WM-R1 step at the sizes of `profile`
    (``settings.profile`` resolved), each through the same library call the notebooks make.
    `record(name, measure)` runs and records each (a step that needs the previous one's model is
    skipped when that one failed)."""
    label = profile.name
    missing = missing_packages()
    state: dict = {}

    def needs(*packages):
        absent = [p for p in packages if p in missing]
        return f"skipped: {', '.join(absent)} not installed" if absent else None

    def sft_step() -> dict:
        wm = profile.world_model
        transitions = collect_transitions(("textgame", "phone"), 8, seed=settings.seed)
        tokenizer = models.train_tokenizer(tokenizer_corpus(transitions), wm.model.vocab_size)
        model = models.build_tiny_model(tokenizer, wm.model, seed=settings.seed)
        config = SFTConfig(output_dir=str(work_dir / "sft"), epochs=1.0, learning_rate=wm.learning_rate,
                           batch_size=wm.batch_size, max_length=wm.max_length, seed=settings.seed, resume=False,
                           show_progress=False, save_steps=10**6)
        t0 = time.perf_counter()
        result = train_sft(model, tokenizer, transitions[:wm.batch_size], [], config)
        state.update(model=model.eval(), tokenizer=tokenizer, transitions=transitions)
        return {"seconds": round(time.perf_counter() - t0, 2), "steps": result.steps,
                "model": "from scratch", "parameters": models.count_parameters(model),
                "batch": wm.batch_size, "max_length": wm.max_length}

    def rlvr_step() -> dict:
        sizes = rlvr_sizes(profile)
        data = rl.rl_transitions([t for t in state["transitions"] if t.env == "textgame"], seed=settings.seed)
        config = rl.RLVRConfig.of(sizes.grpo, max_steps=1, output_dir=str(work_dir / "rlvr"), reward="task_specific",
                                  lora=False, resume=False, show_progress=False, use_vllm=False)
        result = rl.train_rlvr(state["model"], state["tokenizer"], data, config)
        return {"seconds": round(result.seconds, 2), "steps": result.steps, "model": "from scratch, every weight",
                "G": sizes.grpo.num_generations, "prompts": sizes.grpo.prompts_per_step,
                "max_completion_tokens": sizes.grpo.max_completion_length}

    def wm_r1_step() -> dict:
        sizes = wm_r1_sizes(profile)
        train_templates, _ = wm_tasks.task_templates(sizes.max_ref_len)
        tasks = wm_tasks.unique_tasks(sizes.grpo.prompts_per_step, wm_tasks.GRPO_TASK_SEED + settings.seed, train_templates)
        policy, tokenizer = wx.build_policy(sizes, tasks, settings.seed)
        world_model = ag.WorldModelSource(ag.world_model_predictor(state["model"], state["tokenizer"],
                                                                   sizes.wm_max_new_tokens))
        config = WMR1Config.of(sizes.grpo, max_steps=1, output_dir=str(work_dir / "wm_r1"), transitions="world_model",
                               max_episode_steps=sizes.max_steps, max_turn_tokens=sizes.max_turn_tokens,
                               reward=WMR1RewardConfig(max_steps=sizes.max_steps), lora=False, show_progress=False,
                               seed=settings.seed)
        result = train_wm_r1(config, policy, tokenizer, tasks, world_model)
        return {"seconds": round(result.seconds, 2), "model": "from scratch policy and world model (untrained)",
                "parameters": models.count_parameters(policy), "G": sizes.grpo.num_generations,
                "prompts": sizes.grpo.prompts_per_step, "max_steps": sizes.max_steps,
                "world_model_queries": result.world_model_queries}

    grpo_packages = ("trl", "datasets", "peft", "accelerate")
    for name, measure, packages in (("world-model SFT step", sft_step, ("accelerate",)),
                                    ("RLVR step", rlvr_step, grpo_packages),
                                    ("WM-R1 step", wm_r1_step, grpo_packages)):
        reason = needs(*packages)
        if reason is None and measure is not sft_step and "model" not in state:
            reason = "skipped: needs the SFT step's model"  # RLVR trains it, WM-R1 uses it as the world model
        record(f"{label}: {name}", (lambda r=reason: {"_skip": r}) if reason else measure)


# ============================================================================ the whole check


def _row_line(row: CheckRow) -> str:
    v = row.values

    def show(key, fmt="{}"):
        return fmt.format(v[key]) if v.get(key) is not None else "-"

    return (f"{row.name:28s} {row.status[:56]:56s} {show('grpo_step_s', '{:.2f}'):>8s} "
            f"{show('generated_tokens_per_s', '{:.0f}'):>8s} {show('peak_gib', '{:.2f}'):>8s} "
            f"{show('weights_gib', '{:.2f}'):>8s} {show('seconds', '{:.2f}'):>8s}")


def run_gpu_check(settings: GPUCheckSettings | None = None, out: str | Path | None = None,
                  log: Callable[[str], None] = print) -> dict:
    """Measure table 1 and table 2 (module docstring), print them row by row, write the JSON to `out`
    (default runs/gpu_check/gpu_check.json; the dry run: gpu_check_cpu_dry_run.json) and return it."""
    settings = settings or GPUCheckSettings()
    profile = get_profile(settings.profile)  # once, up front: an unknown name fails before any row runs
    device = settings.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("gpu-check needs a CUDA GPU and none is visible here; "
                         "`python -m wmkit gpu-check --cpu-dry-run` runs the same code on tiny shapes on the CPU")
    unknown = [p for p in settings.policies if p not in QWEN25_SHAPES] + [m for m in settings.modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown policy shape or mode {unknown}: shapes {', '.join(QWEN25_SHAPES)}; "
                         f"modes {', '.join(MODES)}")
    # Warnings about deprecated names and k-bit kernels say nothing about speed or memory.
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning)
    from transformers.utils import logging as hf_logging  # here: transformers takes seconds to import

    hf_logging.disable_progress_bar()  # "Writing model shards" of the steps' final checkpoints
    start = time.perf_counter()
    missing = missing_packages()
    cuda = device.startswith("cuda")
    report = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "device": torch.cuda.get_device_name(0) if cuda else f"CPU ({platform.processor() or platform.machine()})",
        "gpu_memory_gib": _gib(torch.cuda.get_device_properties(0).total_memory) if cuda else None,
        "dry_run": not cuda,
        "compute_dtype": str(compute_dtype(device)).replace("torch.", ""),
        "versions": {name: _version(name) for name in ("torch", "transformers") + PACKAGES},
        "missing_packages": missing, "settings": asdict(settings), "policies": [], "profile_steps": [],
    }
    log(f"gpu-check on {report['device']} ({report['compute_dtype']}), {report['date']}")
    if missing:
        log(f"missing packages: {', '.join(missing)} -- the parts that need them are skipped "
            f"(pip install {' '.join(missing)})")
    header = (f"{'row':28s} {'status':56s} {'step s':>8s} {'tok/s':>8s} {'peak GiB':>8s} {'wts GiB':>8s} "
              f"{'seconds':>8s}")
    log(header)

    def over_budget(reserve: float = 0.0) -> bool:
        return time.perf_counter() - start > settings.time_budget_s - reserve

    reserve = settings.profile_steps_reserve_s if settings.profile_steps else 0.0

    with tempfile.TemporaryDirectory(prefix="wmkit_gpu_check_") as tmp:
        work = Path(tmp)
        for shape in settings.policies:
            for mode in settings.modes:
                if over_budget(reserve):
                    row = CheckRow(f"{shape} {mode}", f"skipped: time budget ({settings.time_budget_s:.0f} s) spent")
                else:
                    row = _guarded(lambda s=shape, m=mode: measure_policy(s, m, settings, work), f"{shape} {mode}",
                                   device)
                report["policies"].append(asdict(row))
                log(_row_line(row))
        if settings.profile_steps:
            def record(name: str, measure: Callable[[], dict]) -> None:
                if over_budget():
                    row = CheckRow(name, f"skipped: time budget ({settings.time_budget_s:.0f} s) spent")
                else:
                    def run() -> CheckRow:
                        if device.startswith("cuda"):
                            torch.cuda.reset_peak_memory_stats()
                        values = measure()
                        if "_skip" in values:
                            return CheckRow(name, values["_skip"])
                        if device.startswith("cuda"):
                            values["peak_gib"] = _gib(torch.cuda.max_memory_allocated())
                        return CheckRow(name, "ok", values)
                    row = _guarded(run, name, device)
                report["profile_steps"].append(asdict(row))
                log(_row_line(row))

            profile_steps(profile, settings, work, record)
    report["seconds"] = round(time.perf_counter() - start, 1)
    default_name = "gpu_check.json" if cuda else "gpu_check_cpu_dry_run.json"
    path = Path(out) if out else default_runs_root() / "gpu_check" / default_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    log(f"done in {report['seconds']:.0f} s; wrote {path}")
    return report


def _guarded(measure: Callable[[], CheckRow], name: str, device: str) -> CheckRow:
    """Run one row; out-of-memory and any other failure become the row's status, never a crash."""
    try:
        return measure()
    except Exception as err:  # noqa: BLE001 -- one row's failure must not end the check
        stage = next((n.removeprefix("stage: ") for n in getattr(err, "__notes__", []) if n.startswith("stage")),
                     None)
        where = f" at {stage}" if stage else ""
        if _is_oom(err):
            return CheckRow(name, f"OOM{where}")
        first_line = str(err).splitlines()[0][:200] if str(err) else ""
        return CheckRow(name, f"error{where}: {type(err).__name__}: {first_line}")
    finally:
        _free_memory(device)


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None
