"""Shared fixtures: tiny models and data built on the fly, CPU only, one thread."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest
import torch

torch.set_num_threads(2)


def pytest_collection_modifyitems(config, items):
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
def tiny_lm(small_splits):
    """(model, tokenizer): a ~100k-parameter Llama and a tokenizer trained on the small data."""
    from wmkit.core.build import tokenizer_corpus
    from wmkit.core.models import TinyModelConfig, build_tiny_model, train_tokenizer

    tokenizer = train_tokenizer(tokenizer_corpus(small_splits["train"]), vocab_size=512)
    config = TinyModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64, vocab_size=512)
    return build_tiny_model(tokenizer, config, seed=0), tokenizer, config
