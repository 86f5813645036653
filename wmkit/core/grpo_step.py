"""One real TRL GRPO update on a tiny group, recorded, so a student can redo it by hand.

:func:`record_grpo_step` builds a tiny Llama and tokenizer on the fly, gives TRL's
``GRPOTrainer`` one prompt and a reward function that returns a fixed list of rewards (one
per completion of the group), and lets it train for two passes over that one generation
batch (``num_iterations=2``). It records what TRL used and logged:

* the rewards and the advantages TRL formed from them (its own log);
* for each pass, the per-token log-probabilities under the policy that sampled the group
  ("old") and under the current policy ("new"), the completion mask, and the loss TRL
  returned for that pass.

The first pass has ratio ``exp(new − old) = 1`` everywhere: clipping cannot act there, and
with ``beta=0`` the loss is minus the token-weighted mean advantage. With ``beta > 0`` TRL also
loads a frozen reference (here a copy of the initial tiny model) and each pass records its
per-token log-probabilities ``ref_logps``: the first pass's policy *is* the reference, so its KL
term is 0; the second pass's is not. The second pass comes
after one optimizer step, so the ratios differ from 1 and the clipped surrogate matters:
that is the pass whose loss the exercise asks for (notebooks 02 and 04).

What TRL 1.16 computes (``trl/trainer/grpo_trainer.py``, ``_generate_and_score_completions``
and ``_compute_loss``), which the exercise checkers in :mod:`wmkit.exercises` follow:

    A_i = (r_i − mean(r)) / (std(r) + 1e-4)        std with n − 1 (TRL's ``nanstd``);
                                                   scale_rewards="none" skips the division
    ρ_it = exp(logp_new − logp_old)
    ℓ_it = −min(ρ_it · A_i, clip(ρ_it, 1 − ε, 1 + ε_high) · A_i) + β · ρ_it · k3_it
    k3_it = e^Δ − Δ − 1,  Δ = logp_ref − logp_new    the per-token "k3" estimator of
                                                   KL(π_θ ‖ π_ref): ≥ 0, unbiased in expectation
                                                   over tokens sampled from π_θ, never the exact KL
                                                   (TRL's ``use_bias_correction_kl``, default True,
                                                   multiplies it by ρ_it; β = 0 drops the term)
    "dapo", "bnpo":  loss = Σ_it ℓ_it m_it / Σ_it m_it       (one token, one weight; one
                                                            generation batch, one micro-batch)
    "grpo":          loss = mean_i (Σ_t ℓ_it m_it / Σ_t m_it)
    "dr_grpo":       loss = Σ_it ℓ_it m_it / (G · max_completion_length)
"""
from __future__ import annotations

import copy
import math
import tempfile
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from wmkit.core.grpo import GRPORunConfig, trl_grpo_config
from wmkit.runs import stop_printing_logs

LOSS_TYPES = ("dapo", "grpo", "bnpo", "dr_grpo")
"""The loss aggregations this recorder supports (TRL's clipped-surrogate family)."""

EOS_SAMPLING_BIAS = 5.0
"""Added to end-of-text's logit while sampling (about a 1-in-3 chance per token for the tiny model)."""

_CORPUS = [
    "the cat sat on the mat and looked at the door",
    "a dog ran to the park and back to the house",
    "open the box, take the key, unlock the door",
]


def _check(rewards: Sequence[float], loss_type: str, scale_rewards: str, epsilon: float,
           learning_rate: float, max_completion_length: int) -> list[float]:
    if isinstance(rewards, (str, bytes)):
        raise TypeError(f"rewards must be a list of numbers, not {rewards!r}")
    values = [float(r) for r in rewards]
    if len(values) < 2:
        raise ValueError(f"a group needs at least 2 rewards (one per completion), got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"rewards must be finite numbers, got {values}")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {', '.join(LOSS_TYPES)}, not {loss_type!r}")
    if scale_rewards not in ("group", "none"):
        raise ValueError(f"scale_rewards must be 'group' or 'none' (one group: 'batch' is 'group'), not {scale_rewards!r}")
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), not {epsilon}")
    if not 0 < learning_rate < 1:
        raise ValueError(f"learning_rate must be in (0, 1), not {learning_rate}")
    if max_completion_length < 1:
        raise ValueError(f"max_completion_length must be at least 1, not {max_completion_length}")
    return values


def record_grpo_step(rewards: Sequence[float] = (1.0, 0.0, 0.5, 0.0), loss_type: str = "dapo",
                     scale_rewards: str = "group", epsilon: float = 0.2, learning_rate: float = 0.05,
                     max_completion_length: int = 6, seed: int = 0, beta: float = 0.0,
                     keep_tensors: bool = False) -> dict[str, Any]:
    """Run TRL's GRPOTrainer for two passes over one group whose rewards are `rewards`; return
    what it used and logged (see the module docstring).

    The learning rate is large on purpose: after one AdamW step some tokens' ratios leave
    [1 − ε, 1 + ε], so the second pass shows clipping at work. Deterministic given `seed`.
    Takes a few seconds on a CPU.

    `beta` > 0 adds TRL's KL term toward the initial model (see the module docstring).

    Returns a dict of plain lists: ``rewards`` (G), ``advantages`` (G, TRL's log),
    ``loss_type``, ``scale_rewards``, ``epsilon``, ``max_completion_length``, ``beta`` and ``passes``:
    two dicts with ``rewards`` and ``advantages`` (G, in the order of that pass's rows: TRL
    shuffles a generation batch before training on it), ``old_logps``, ``new_logps``, ``mask``
    (G × T, T the longest completion; masked positions hold 0) and ``loss`` (TRL's value for that
    pass), ``ref_logps`` when `beta` > 0, plus ``completions`` (the sampled texts) and ``trl_version``.

    `keep_tensors`: also what it takes to redo the first update in plain torch (notebooks 02 and 03,
    "the algorithm in 30 lines"): ``initial_model`` (a copy of the policy before any step),
    ``gradients`` (name -> the gradient of the first pass's loss, before clipping and the optimizer),
    ``after_first_step`` (name -> the parameters after TRL's first optimizer step), ``optimizer``
    (AdamW's settings and ``max_grad_norm``), ``temperature``, and per pass ``prompt_ids``,
    ``prompt_mask`` and ``completion_ids`` (torch tensors: not JSON).
    """
    values = _check(rewards, loss_type, scale_rewards, epsilon, learning_rate, max_completion_length)
    if not (math.isfinite(beta) and beta >= 0):
        raise ValueError(f"beta must be a number ≥ 0, not {beta}")
    # Here, not at the top: the exercises import this module for its by-hand formulas, which need none of
    # these (torch, TRL, datasets, transformers, and wmkit.core.models with torch: about 6 s).
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import GRPOTrainer

    from wmkit.core.models import TinyModelConfig, build_tiny_model, train_tokenizer

    group_size = len(values)
    set_seed(seed)
    tokenizer = train_tokenizer(_CORPUS, vocab_size=300)
    tokenizer.padding_side = "left"
    model = build_tiny_model(tokenizer, TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2,
                                                        intermediate_size=64, vocab_size=300), seed=seed)

    def fixed_rewards(completions, **_):
        if len(completions) != group_size:  # one prompt, one group per generation batch
            raise RuntimeError(f"expected {group_size} completions, TRL passed {len(completions)}")
        return list(values)

    passes: list[dict[str, Any]] = []
    kept: dict[str, Any] = {"initial_model": copy.deepcopy(model)} if keep_tensors else {}

    class RecordingTrainer(GRPOTrainer):
        """GRPOTrainer that keeps, for every loss it computes, its inputs and its value."""

        def training_step(self, model, inputs, *args, **kwargs):
            if keep_tensors and len(passes) == 1:  # before the second pass: after the first optimizer step
                kept["after_first_step"] = {n: p.detach().clone() for n, p in model.named_parameters()}
            out = super().training_step(model, inputs, *args, **kwargs)
            if keep_tensors and "gradients" not in kept:  # the first pass's gradient, before clipping and AdamW
                kept["gradients"] = {n: p.grad.detach().clone() for n, p in model.named_parameters()
                                     if p.grad is not None}
            return out

        def _get_per_token_logps_and_entropies(self, *args, **kwargs):
            out = super()._get_per_token_logps_and_entropies(*args, **kwargs)
            self._last_logps = out[0]
            return out

        def _compute_loss(self, model, inputs):
            loss = super()._compute_loss(model, inputs)
            mask = inputs["completion_mask"].detach().float()
            new = self._last_logps.detach()
            old = inputs.get("old_per_token_logps")
            old = new if old is None else old.detach()
            passes.append({"old_logps": (old * mask).tolist(), "new_logps": (new * mask).tolist(),
                           "mask": mask.int().tolist(), "loss": float(loss.detach()),
                           "advantages": inputs["advantages"].detach().view(-1).tolist()})
            if "ref_per_token_logps" in inputs:
                passes[-1]["ref_logps"] = (inputs["ref_per_token_logps"].detach() * mask).tolist()
            if keep_tensors:
                passes[-1].update({key: inputs[key].detach().clone()
                                   for key in ("prompt_ids", "prompt_mask", "completion_ids")})
            return loss

    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        # transformers 5.24 deprecates the gradient_checkpointing names TRL 1.16 still calls: nothing
        # a reader can act on.
        warnings.filterwarnings("ignore", message=r".*gradient_checkpointing\w*` is deprecated", category=FutureWarning)
        if beta > 0:  # TRL builds the reference from the policy's config path: save the initial model there
            reference = f"{out}/reference"
            model.save_pretrained(reference)
            model.config._name_or_path = reference
        # Two iterations on one generation batch, so that the second pass's ratio is not 1.
        knobs = GRPORunConfig(output_dir=out, num_generations=group_size, prompts_per_step=1, max_steps=2,
                              learning_rate=learning_rate, beta=beta, loss_type=loss_type, scale_rewards=scale_rewards,
                              max_completion_length=max_completion_length, temperature=1.0, seed=seed)
        config = trl_grpo_config(
            knobs, num_iterations=2, lr_scheduler_type="constant", warmup_steps=0, epsilon=epsilon,
            logging_steps=1, save_strategy="no", disable_tqdm=True,
            # An untrained model almost never samples end-of-text, so every completion would be
            # max_completion_length long and the loss types would agree. A bias on that token's logit
            # *while sampling* (never in the log-probabilities TRL trains on) gives the group
            # completions of different lengths, where "grpo" and "dapo" weigh tokens differently.
            generation_kwargs={"sequence_bias": [[[tokenizer.eos_token_id], EOS_SAMPLING_BIAS]]})
        trainer = RecordingTrainer(model=model, args=config, reward_funcs=[fixed_rewards],
                                   train_dataset=Dataset.from_list([{"prompt": "the cat"}] * 4),
                                   processing_class=tokenizer)
        stop_printing_logs(trainer)
        trainer.train()
        logged_advantages = list(trainer._logs["advantages"])[:group_size]
        logged_rewards = list(trainer._logs["rewards"]["fixed_rewards"])[:group_size]
        completions = list(trainer._logs["completion"])[:group_size]
    if len(passes) != 2:
        raise RuntimeError(f"expected two loss computations (num_iterations=2), TRL made {len(passes)}")
    # TRL shuffles the rows of a generation batch before training on it: each pass keeps its rows'
    # advantages as TRL used them, and their rewards (the advantage is increasing in the reward, so
    # a row's reward is the one whose logged advantage it carries).
    for p in passes:
        rows = []
        for a in p["advantages"]:
            match = [r for r, logged in zip(logged_rewards, logged_advantages) if abs(logged - a) <= 1e-6]
            if not match:
                raise RuntimeError("TRL trained on an advantage it did not log")
            rows.append(match[0])
        p["rewards"] = rows
    if keep_tensors:
        kept.update(temperature=config.temperature,
                    optimizer={"learning_rate": config.learning_rate, "betas": (config.adam_beta1, config.adam_beta2),
                               "eps": config.adam_epsilon, "weight_decay": config.weight_decay,
                               "max_grad_norm": config.max_grad_norm})
    return {"rewards": logged_rewards, "advantages": logged_advantages, "loss_type": loss_type,
            "scale_rewards": scale_rewards, "epsilon": epsilon, "max_completion_length": max_completion_length,
            "beta": beta, "passes": passes, "completions": completions, "trl_version": trl.__version__, **kept}


# ------------------------------------------------------------------ the same, by hand (numpy)


def advantages_by_hand(rewards: Sequence[float], scale_rewards: str = "group") -> np.ndarray:
    """TRL's advantages of one group: centred on the group mean, divided by the sample std + 1e-4."""
    r = np.asarray(rewards, dtype=float)
    centred = r - r.mean()
    return centred if scale_rewards == "none" else centred / (r.std(ddof=1) + 1e-4)


def k3_kl_by_hand(ref_logps: Any, new_logps: Any) -> np.ndarray:
    """Per-token k3 estimate of KL(π_θ ‖ π_ref), e^Δ − Δ − 1 with Δ = log π_ref − log π_θ (what TRL
    adds, times β, to each token's loss). Not the exact KL, which sums over the whole vocabulary:
    one sampled token's estimate, ≥ 0, whose mean over tokens sampled from π_θ is the KL."""
    delta = np.asarray(ref_logps, dtype=float) - np.asarray(new_logps, dtype=float)
    return np.exp(delta) - delta - 1


def clipped_loss_by_hand(old_logps: Any, new_logps: Any, mask: Any, advantages: Sequence[float],
                         epsilon: float = 0.2, loss_type: str = "dapo", max_completion_length: int | None = None,
                         clip: bool = True, pessimistic: bool = True, beta: float = 0.0,
                         ref_logps: Any = None) -> float:
    """The clipped surrogate loss of one pass, as TRL aggregates it for `loss_type`; with `beta` > 0
    plus β·ρ·k3 per token (:func:`k3_kl_by_hand` toward `ref_logps`, times the ratio ρ as TRL's
    default ``use_bias_correction_kl`` does).

    `clip=False` gives the unclipped ρ·A surrogate and `pessimistic=False` keeps the max of the
    clipped and unclipped terms instead of the min: the two ways of getting PPO's clip wrong,
    which the exercise checker names."""
    old, new, m = (np.asarray(x, dtype=float) for x in (old_logps, new_logps, mask))
    a = np.asarray(advantages, dtype=float)[:, None]
    ratio = np.exp(new - old)
    clipped = np.clip(ratio, 1 - epsilon, 1 + epsilon) if clip else ratio
    per_token = -(np.minimum if pessimistic else np.maximum)(ratio * a, clipped * a)
    if beta:
        if ref_logps is None:
            raise ValueError("beta > 0 needs the reference's log-probabilities (ref_logps)")
        per_token = per_token + beta * ratio * k3_kl_by_hand(ref_logps, new)
    if loss_type in ("dapo", "bnpo"):
        return float((per_token * m).sum() / max(m.sum(), 1.0))
    if loss_type == "grpo":
        return float(((per_token * m).sum(1) / np.maximum(m.sum(1), 1.0)).mean())
    if loss_type == "dr_grpo":
        if max_completion_length is None:
            raise ValueError("dr_grpo divides by G · max_completion_length: pass max_completion_length")
        return float((per_token * m).sum() / (m.shape[0] * max_completion_length))
    raise ValueError(f"loss_type must be one of {', '.join(LOSS_TYPES)}, not {loss_type!r}")
