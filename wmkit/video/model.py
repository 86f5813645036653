"""The video world model's rewards, predictions and measurements.

RLVR-World trains its video world model with GRPO on a *verifiable* reward computed on the decoded
next frame: ``r = -(L1 + LPIPS)`` between prediction and truth. LPIPS compares deep features of a
pretrained network whose weights cannot be downloaded here, so the kit offers stand-ins for the
perceptual term that need no weights: SSIM (a hand-designed structural similarity) and agent terms,
which are the kit's own, not the paper's (the profiles' default, ``l1_agent_present``, was chosen on
validation episodes: `wmkit.video.experiment.choose_setting`)::

    l1        r = -L1(x̂, x)                      L1 = mean |x̂ - x| over pixels and channels, in 0..1
    l1_ssim   r = -(L1(x̂, x) + (1 - SSIM(x̂, x)) / 2)      (1 - SSIM)/2 is in 0..1 like LPIPS
    l1_agent          r = -(L1(x̂, x) + A(x̂, x))        A = 1 - IoU of the agent's pixels, in 0..1 (the kit's)
    l1_agent_cell     r = -(L1(x̂, x) + w A(x̂, x))      w = one cell's share of the frame (the kit's)
    l1_agent_present  r = -(L1(x̂, x) + w P(x̂, x))      P = 1 if the truth shows the agent and x̂ does not
    l1_lpips  r = -(L1(x̂, x) + LPIPS(x̂, x))      the paper's; only where the `lpips` package and its
                                                  weights are present (e.g. Colab), else a clear error

x̂ is decoded from the sampled codes (`wmkit.video.tokenizer.parse_codes`: missing codes become black
patches, so a truncated prediction is penalised, never an exception) and compared with the real
rendered frame, not with its tokenized copy.

Why the agent term. Under -L1 alone a predicted frame that *erases* the agent is wrong in one cell
(where the agent is), one that draws it in the wrong cell is wrong in two, so a model unsure where
the agent went is paid for leaving it out: reward hacking (research/README.md, 'Video settings').
LPIPS is what penalises a missing object in the paper's reward; offline, the kit checks the object
that matters directly. ``A(x̂, x) = 1 - |M(x̂) ∩ M(x)| / |M(x̂) ∪ M(x)|`` with M the agent's red pixels
(`wmkit.video.frames.agent_mask`), computed on the decoded frame against the true next frame, so it
stays verifiable: an erased agent and a misplaced one both cost 1 (plus their L1), a right one 0, the
right cell facing another way something between (the triangles overlap in part).

Why the weighted variants. At weight 1 the agent term is hundreds of times the frame's L1 (a
48x48 MiniGrid prediction is off by ~0.003 on average), so a group's advantages are nearly all the
agent's IoU and GRPO stops caring about the rest of the frame. ``w = cell² / (H W)`` (1/36 for
6x6 cells) makes the term weigh what one cell entirely wrong weighs in L1: ``l1_agent_cell`` keeps
the IoU (erased and misplaced cost w more, erasing still one cell cheaper than misplacing), and
``l1_agent_present`` charges only a missing agent, which makes erasing the costliest mistake
(erased: one cell + w, misplaced: two cells) while leaving where the agent goes to L1.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np

from wmkit.rewards import extract_completion_text
from wmkit.video.frames import agent_mask, agent_visible
from wmkit.video.tokenizer import PatchCodebook, frame_text, parse_codes

REWARD_NAMES = ("l1", "l1_ssim", "l1_agent", "l1_agent_cell", "l1_agent_present", "l1_lpips")


def l1_distance(pred: np.ndarray, target: np.ndarray) -> float:
    """Mean absolute difference of two uint8 frames, pixels scaled to 0..1."""
    return float(np.abs(pred.astype(np.float64) - target.astype(np.float64)).mean() / 255.0)


def mse_distance(pred: np.ndarray, target: np.ndarray) -> float:
    """Mean squared difference of two uint8 frames, pixels scaled to 0..1."""
    return float((((pred.astype(np.float64) - target.astype(np.float64)) / 255.0) ** 2).mean())


def ssim(pred: np.ndarray, target: np.ndarray) -> float:
    """Structural similarity of two uint8 RGB frames (1 = identical), as scikit-image computes it by
    default: a **7x7 uniform** (box) window, per channel, averaged, sample covariances. This is not
    the SSIM of Wang et al. (2004), an **11x11 Gaussian** window with σ = 1.5 (scikit-image's
    ``gaussian_weights=True, sigma=1.5, use_sample_covariance=False``); the two give different numbers,
    so SSIM values from papers are not comparable with these."""
    from skimage.metrics import structural_similarity

    return float(structural_similarity(pred, target, channel_axis=-1, data_range=255))


def agent_distance(pred: np.ndarray, target: np.ndarray) -> float:
    """1 - IoU of the agent's pixels in two uint8 frames (`wmkit.video.frames.agent_mask`): 0 when the
    prediction draws the agent on exactly its pixels, 1 when it leaves it out or draws it elsewhere.
    0 when neither frame shows an agent (nothing to get wrong)."""
    p, t = agent_mask(pred), agent_mask(target)
    union = int((p | t).sum())
    return 0.0 if union == 0 else 1.0 - int((p & t).sum()) / union


def agent_missing(pred: np.ndarray, target: np.ndarray) -> float:
    """1.0 when the target frame shows the agent and the prediction does not, else 0.0."""
    return float(bool(agent_visible(target)) and not bool(agent_visible(pred)))


def cell_weight(frame: np.ndarray, cell: int) -> float:
    """One `cell` x `cell` cell's share of a frame [H, W, 3]: the L1 of one cell entirely wrong."""
    if cell < 1:
        raise ValueError(f"cell must be at least 1 pixel, not {cell}")
    h, w = np.asarray(frame).shape[:2]
    return min(1.0, cell * cell / (h * w))


def lpips_available() -> bool:
    """Whether the `lpips` package is importable (it loads its AlexNet weights from torchvision's cache)."""
    return importlib.util.find_spec("lpips") is not None


class _LPIPS:
    _net = None

    @classmethod
    def distance(cls, pred: np.ndarray, target: np.ndarray) -> float:
        import torch  # here: --help imports this module (via video/registry.py), not torch

        if cls._net is None:
            if not lpips_available():
                raise RuntimeError("reward 'l1_lpips' needs the lpips package and its pretrained AlexNet weights "
                                   "(pip install lpips, online once, e.g. on Colab); use 'l1', 'l1_ssim' or "
                                   "'l1_agent' offline")
            import lpips

            cls._net = lpips.LPIPS(net="alex", verbose=False)
        def to_tensor(x):  # LPIPS takes [1, 3, H, W] in -1..1
            return torch.from_numpy(x.astype(np.float32) / 127.5 - 1.0).permute(2, 0, 1)[None]

        with torch.no_grad():
            return float(cls._net(to_tensor(pred), to_tensor(target)).item())


def frame_reward(pred: np.ndarray, target: np.ndarray, name: str = "l1", cell: int = 8) -> float:
    """The reward of one predicted frame (see the module docstring); higher is better, 0 is perfect.
    `cell`: pixels per grid cell (the weight of the weighted agent terms; MiniGrid's tile size)."""
    if name == "l1":
        return -l1_distance(pred, target)
    if name == "l1_ssim":
        return -(l1_distance(pred, target) + (1.0 - ssim(pred, target)) / 2.0)
    if name == "l1_agent":
        return -(l1_distance(pred, target) + agent_distance(pred, target))
    if name == "l1_agent_cell":
        return -(l1_distance(pred, target) + cell_weight(target, cell) * agent_distance(pred, target))
    if name == "l1_agent_present":
        return -(l1_distance(pred, target) + cell_weight(target, cell) * agent_missing(pred, target))
    if name == "l1_lpips":
        return -(l1_distance(pred, target) + _LPIPS.distance(pred, target))
    raise ValueError(f"Unknown video reward {name!r}: choose one of {', '.join(REWARD_NAMES)}")


class VideoReward:
    """A TRL reward function: decode each completion to a frame, score it against the real next frame.

    The dataset rows carry ``target_index``, the row of `targets` (uint8 [N, H, W, 3]) to compare with,
    so the frames stay in memory here instead of in the dataset."""

    def __init__(self, codebook: PatchCodebook, targets: np.ndarray, name: str = "l1"):
        if name not in REWARD_NAMES:
            raise ValueError(f"Unknown video reward {name!r}: choose one of {', '.join(REWARD_NAMES)}")
        self.codebook, self.targets, self.name = codebook, np.asarray(targets), name
        self.height, self.width = self.targets.shape[1:3]
        gh, gw = codebook.grid(self.height, self.width)
        self.n_codes = gh * gw
        self.__name__ = f"video_{name}"  # TRL logs each reward under its function's name

    def decode(self, completion: Any) -> np.ndarray:
        codes = parse_codes(extract_completion_text(completion), self.n_codes)
        return self.codebook.decode(codes, self.height, self.width)

    def __call__(self, completions: Sequence[Any], target_index: Sequence[int], **kwargs: Any) -> list[float]:
        return [frame_reward(self.decode(c), self.targets[int(i)], self.name, self.codebook.patch)
                for c, i in zip(completions, target_index)]


def frame_metrics(preds: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
    """Per-frame L1, MSE and SSIM of uint8 frames [N, H, W, 3] (lower, lower, higher is better)."""
    return {"l1": np.array([l1_distance(p, t) for p, t in zip(preds, targets)]),
            "mse": np.array([mse_distance(p, t) for p, t in zip(preds, targets)]),
            "ssim": np.array([ssim(p, t) for p, t in zip(preds, targets)])}


def predict_codes(model, tokenizer, prompts: Sequence[str], n_codes: int, do_sample: bool = False,
                  num_samples: int = 1, seed: int = 0) -> np.ndarray:
    """int64 codes [len(prompts), samples, n_codes] of the predicted next frames (-1 where missing)."""
    from wmkit.core.worldmodel import generate  # here: it imports torch; --help imports this module

    texts = generate(model, tokenizer, list(prompts), n_codes + 1, do_sample=do_sample,
                     num_samples=num_samples if do_sample else 1, seed=seed)
    return np.stack([np.stack([parse_codes(t, n_codes) for t in row]) for row in texts])


GROUP_KINDS = ("right", "repeated", "first 12 codes", "no frame")
"""The four predictions of `hand_made_group`, in its order."""


def hand_made_group(codes: np.ndarray, frames: np.ndarray) -> tuple[int, list[str]]:
    """A GRPO group to compute by hand (notebook 06's exercise): for one episode's codes [T+1, n] and
    frames [T+1, H, W, 3], the first step t whose picture changes and four completions predicting
    frame t (`GROUP_KINDS`): the right codes, the previous frame's codes (the repetition artefact),
    the right codes cut after 12, and text that is no frame."""
    changed = [t for t in range(1, len(frames)) if np.any(frames[t] != frames[t - 1])]
    if not changed:
        raise ValueError("the episode's picture never changes: no step to predict a change of")
    t = changed[0]
    right = frame_text(codes[t])
    return t, [right, frame_text(codes[t - 1]), " ".join(right.split()[:12]), "not a frame at all"]
