"""Shared fixtures: tiny models and data built on the fly, CPU only, one thread."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest
import torch

# One thread per pytest-xdist worker (make test runs one worker per core); two in a single process.
torch.set_num_threads(1 if os.environ.get("PYTEST_XDIST_WORKER") else 2)


def _longest_first(items) -> None:
    """Sort `items` in place, longest first: the tests that execute a notebook (minutes each), then the
    modules holding a test marked slow, then the rest; otherwise in collection order, each module's
    tests together (a module-scoped fixture is built once; pytest tears it down when the next test is
    in another module)."""
    slow_modules = {getattr(item, "module", None) for item in items if item.get_closest_marker("slow") is not None}
    position = {id(item): i for i, item in enumerate(items)}

    def key(item):
        if item.get_closest_marker("notebook") is not None:
            tier = 0
        else:
            tier = 1 if getattr(item, "module", None) in slow_modules else 2
        return tier, position[id(item)]

    items.sort(key=key)


def pytest_collection_modifyitems(config, items):
    # make test runs the tests with pytest-xdist's work stealing (--dist worksteal): a worker that runs out
    # of tests takes half of another's queue, from its end. In file order the notebook runs
    # (tests/test_notebooks.py) came last and queued behind one another on one worker while the other sat
    # idle for minutes; first, they run side by side while the short tests fill in around them.
    _longest_first(items)
    if torch.cuda.device_count() < 2:
        skip_multi = pytest.mark.skip(reason="needs more than one CUDA device")
        for item in items:
            if item.get_closest_marker("multigpu") is not None:
                item.add_marker(skip_multi)
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def small_splits():
    """A few episodes of both environments, split by episode."""
    from wmkit.core.worldmodel import collect_transitions, split_by_episode

    return split_by_episode(collect_transitions(["textgame", "phone"], 12, seed=0))


@pytest.fixture(scope="session")
def tiny_tokenizer(small_splits):
    """A byte-level BPE tokenizer trained on the small data."""
    from wmkit.core.build import tokenizer_corpus
    from wmkit.core.models import train_tokenizer

    return train_tokenizer(tokenizer_corpus(small_splits["train"]), vocab_size=512)


@pytest.fixture(scope="session")
def tiny_lm(tiny_tokenizer):
    """(model, tokenizer): a ~100k-parameter Llama and a tokenizer trained on the small data."""
    from wmkit.core.models import TinyModelConfig, build_tiny_model

    config = TinyModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64, vocab_size=512)
    return build_tiny_model(tiny_tokenizer, config, seed=0), tiny_tokenizer, config


@pytest.fixture(scope="session")
def nf4_lm(tiny_tokenizer):
    """Like `tiny_lm`, but wide enough to NF4-quantize on every CPU: each linear layer's
    in_features a multiple of 64 and out_features a multiple of 32 (see
    `wmkit.core.models.nf4_unfit_layers`). `tiny_lm`'s 32-wide layers are not."""
    from wmkit.core.models import TinyModelConfig, build_tiny_model

    config = TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128, vocab_size=512)
    return build_tiny_model(tiny_tokenizer, config, seed=0), tiny_tokenizer, config


@pytest.fixture(params=[False, True], ids=["native", "avx512bf16"])
def packed_cpu_path(request, monkeypatch):
    """Run an NF4 test twice: on this CPU's own bitsandbytes path, and on the packed CPU path
    that bitsandbytes takes on Intel Xeons with AVX512-BF16/AMX (True: forced here).

    `Linear4bit.__init__` (bitsandbytes/nn/modules.py) asks `has_avx512bf16()` -- the native
    library's CPU check, false on AMD -- and, when true, `Linear4bit.forward` repacks the
    weight for the fused kernel (`_convert_weight_packed_for_cpu`) on a CPU input in eval mode
    that needs no grad: the repacking that fails for narrow layers, and whose inference kernel
    breaks training afterwards (the kit turns it off: `models.keep_nf4_trainable_on_cpu`). Patched before the model
    is loaded, the repacking runs here too; the matmul after it then takes the generic kernel
    (the fused one needs the real instructions), so its numbers are not the Xeon's -- the
    shapes and the code path up to the kernel are. Skips where bitsandbytes is missing.
    """
    bnb_modules = pytest.importorskip("bitsandbytes.nn.modules")
    if request.param:
        monkeypatch.setattr(bnb_modules, "has_avx512bf16", lambda: True)
    return request.param
