"""Frame tokenizer: fixed patch quantisation with a k-means codebook, and the text vocabulary.

Video world models (RLVR-World's iVideoGPT, for one) do not predict pixels: a tokenizer turns each
frame into a short grid of discrete codes, a causal transformer predicts the next frame's codes,
and the decoder turns codes back into pixels. The kit's tokenizer is the simplest that works on
MiniGrid: cut a frame into ``patch`` x ``patch`` squares and replace each by the nearest of
``codebook_size`` prototype patches, found by k-means over the training frames' patches. With
``patch`` equal to MiniGrid's tile size every patch is one grid cell, and the cells take only a few
dozen looks (floor, wall, key, door open/closed, agent facing 4 ways, ...), so a codebook of that
size reconstructs the training frames exactly; `reconstruction_error` measures it on held-out
frames. A VQ-VAE would be needed for natural images, not here.

The codes become words of a word-level vocabulary (``v0`` .. ``v{K-1}``, one word per action and
three markers) so the world model is an ordinary causal LM and TRL's GRPO trains it unchanged::

    <frame> v3 v3 v7 ... v3 <act> a_forward <next>  ->  v3 v3 v7 ... v3 <|im_end|>
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wmkit.video.frames import ACTIONS

FRAME, ACT, NEXT = "<frame>", "<act>", "<next>"
EOS, PAD = "<|im_end|>", "<|pad|>"
_CODE = re.compile(r"^v(\d+)$")


@dataclass
class PatchCodebook:
    """Fixed patch quantisation: `codebook` [K, patch, patch, 3] float32 in 0..1, most frequent first."""

    codebook: np.ndarray
    patch: int

    @property
    def size(self) -> int:
        return int(self.codebook.shape[0])

    def grid(self, height: int, width: int) -> tuple[int, int]:
        if height % self.patch or width % self.patch:
            raise ValueError(f"frame {height}x{width} is not a whole number of {self.patch}-pixel patches")
        return height // self.patch, width // self.patch

    def _patches(self, frames: np.ndarray) -> np.ndarray:
        """[..., H, W, 3] uint8 -> [..., gh, gw, patch*patch*3] float32 in 0..1."""
        *lead, h, w, c = frames.shape
        gh, gw = self.grid(h, w)
        x = frames.reshape(*lead, gh, self.patch, gw, self.patch, c)
        x = np.moveaxis(x, -3, -4)  # [..., gh, gw, patch, patch, c]
        return x.reshape(*lead, gh, gw, self.patch * self.patch * c).astype(np.float32) / 255.0

    def encode(self, frames: np.ndarray) -> np.ndarray:
        """[..., H, W, 3] uint8 -> int64 codes [..., gh * gw] (row-major): the nearest prototype per patch."""
        p = self._patches(frames)
        flat = p.reshape(-1, p.shape[-1])
        book = self.codebook.reshape(self.size, -1)
        dist = (flat ** 2).sum(1, keepdims=True) - 2 * flat @ book.T + (book ** 2).sum(1)[None]
        return dist.argmin(1).reshape(*p.shape[:-3], p.shape[-3] * p.shape[-2])

    def decode(self, codes: np.ndarray, height: int, width: int) -> np.ndarray:
        """int codes [..., gh * gw] -> uint8 frames [..., H, W, 3]. A code outside 0..K-1 (a missing or
        invalid prediction, see `parse_codes`) decodes to a black patch."""
        gh, gw = self.grid(height, width)
        codes = np.asarray(codes)
        if codes.shape[-1] != gh * gw:
            raise ValueError(f"{codes.shape[-1]} codes for a {gh}x{gw} grid")
        valid = (codes >= 0) & (codes < self.size)
        patches = self.codebook[np.where(valid, codes, 0)] * valid[..., None, None, None]
        lead = codes.shape[:-1]
        x = patches.reshape(*lead, gh, gw, self.patch, self.patch, 3)
        x = np.moveaxis(x, -4, -3).reshape(*lead, height, width, 3)
        return np.clip(np.rint(x * 255.0), 0, 255).astype(np.uint8)


def fit_codebook(frames: np.ndarray, codebook_size: int, patch: int, seed: int = 0) -> PatchCodebook:
    """k-means over the distinct patches of `frames` (weighted by how often each occurs).

    When the frames hold at most `codebook_size` distinct patches the codebook *is* those patches
    (lossless on these frames); otherwise scikit-learn's KMeans picks the prototypes. Codes are
    numbered by frequency, most frequent first (code 0 is what `rollout` fills gaps with)."""
    if codebook_size < 2 or patch < 1:
        raise ValueError(f"codebook_size must be >= 2 and patch >= 1, not {codebook_size} and {patch}")
    probe = PatchCodebook(np.zeros((1, patch, patch, 3), np.float32), patch)
    flat = probe._patches(np.asarray(frames)).reshape(-1, patch * patch * 3)
    unique, counts = np.unique(flat, axis=0, return_counts=True)
    if len(unique) <= codebook_size:
        centres, weights = unique, counts.astype(np.float64)
    else:
        from sklearn.cluster import KMeans

        km = KMeans(n_clusters=codebook_size, n_init=4, random_state=seed).fit(unique, sample_weight=counts)
        centres = km.cluster_centers_.astype(np.float32)
        weights = np.bincount(km.labels_, weights=counts, minlength=codebook_size)
    order = np.lexsort((np.arange(len(weights)), -weights))
    return PatchCodebook(centres[order].reshape(-1, patch, patch, 3).astype(np.float32), patch)


def reconstruction_error(codebook: PatchCodebook, frames: np.ndarray) -> dict[str, float]:
    """Mean absolute error (pixels in 0..1) of encode -> decode, and the share of frames rebuilt exactly."""
    frames = np.asarray(frames)
    h, w = frames.shape[-3:-1]
    rebuilt = codebook.decode(codebook.encode(frames), h, w)
    diff = np.abs(rebuilt.astype(np.float32) - frames.astype(np.float32)) / 255.0
    flat = diff.reshape(-1, h * w * 3)
    return {"l1": float(flat.mean()), "exact_frames": float((flat.max(1) == 0).mean()), "frames": len(flat)}


def code_word(code: int) -> str:
    return f"v{code}"


def action_word(action: int) -> str:
    return f"a_{ACTIONS[action]}"


def frame_text(codes: Sequence[int]) -> str:
    return " ".join(code_word(int(c)) for c in codes)


def prompt_text(context_codes: Sequence[Sequence[int]], actions: Sequence[int]) -> str:
    """The world model's prompt: each context frame followed by the action taken after it, then <next>.
    `context_codes` are the last k frames' codes, `actions` the k actions that followed them."""
    if len(context_codes) != len(actions) or len(actions) == 0:
        raise ValueError(f"{len(context_codes)} context frames need as many actions, not {len(actions)}")
    parts = [f"{FRAME} {frame_text(c)} {ACT} {action_word(a)}" for c, a in zip(context_codes, actions)]
    return " ".join(parts) + f" {NEXT}"


def parse_codes(text: str, n_codes: int) -> np.ndarray:
    """The codes of a predicted frame (untrusted model output): the first `n_codes` words of the form
    ``v<digits>``, other words skipped; a short prediction is padded with -1 (decoded as black
    patches). Never raises."""
    codes = []
    for word in str(text).split():
        m = _CODE.match(word)
        if m and len(m.group(1)) < 6:
            codes.append(int(m.group(1)))
            if len(codes) == n_codes:
                break
    return np.asarray(codes + [-1] * (n_codes - len(codes)), dtype=np.int64)


def build_vocabulary(codebook_size: int, max_length: int = 512):
    """A word-level `PreTrainedTokenizerFast`: codes, actions, markers, end-of-frame and padding."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast  # here: --help imports this module, not transformers

    words = [PAD, EOS, FRAME, ACT, NEXT] + [action_word(a) for a in range(len(ACTIONS))]
    words += [code_word(c) for c in range(codebook_size)] + ["<unk>"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # Decoded words are joined with spaces (the WordPiece decoder does that for words without "##").
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD, unk_token="<unk>",
                                   bos_token=FRAME, model_max_length=max_length)
