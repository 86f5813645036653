"""RL for world models: GRPO on a reward that checks the predicted next state.

Shared by three papers' experiments: RLVR-World (verifiable rewards), RWML (the embedding reward)
and the video world model (a reward on predicted frames). Each takes a world model trained by
maximum likelihood and trains it further with GRPO, rewarding each sampled prediction by how right
it is. With the kit's
defaults the algorithm reduces to this, per optimizer step:

    for each of `prompts_per_step` transitions (s, a, s'):
        sample G = num_generations predictions ŝ'_1..G ~ π_θ(· | q(s, a)) at temperature 1
        r_i = reward(ŝ'_i, s')                       # binary, task-specific, F1, ROUGE, embedding
        A_i = (r_i - mean(r)) / (std(r) + eps)       # scale_rewards="group"; "none" skips the division
    loss = -mean_tokens( A_i · π_θ(token) / π_θ_old(token) )   # one step per batch: ratio = 1,
                                                                # clipping never bites; beta=0: no KL
    update the LoRA adapters with AdamW at `learning_rate`

TRL's `GRPOTrainer` does the sampling, advantages and loss; this module builds the
dataset (all changed transitions plus a sample of unchanged ones, as RLVR-World does),
picks the reward, wraps the model with LoRA and merges the adapters back when done.

Where the kit departs from the authors: they train all parameters with lr 1e-6; the kit
trains LoRA adapters, where such an lr barely moves anything, so notebook 02 sweeps the
learning rate on the validation split.
"""
from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from wmkit.core.grpo import (
    GRPORunConfig,
    check_grpo,
    run_settings,
    train_grpo,
    trl_grpo_config,
    vllm_requested,
)
from wmkit.core.models import ADAPTER_FOLDER, is_nf4, merge_adapters, quantize_nf4, save_model
from wmkit.core.worldmodel import AccuracySummary, generate, is_exact, prompt_text, summarize
from wmkit.envs import get_environment
from wmkit.envs.base import Transition, scoring_transition
from wmkit.rewards import extract_completion_text
from wmkit.rewards.text_similarity import rouge_reward_fn, with_repetition_penalty
from wmkit.runs import checkpoint_to_resume, run_identity

REWARD_NAMES = ("binary", "exact", "task_specific", "continuous", "continuous_rep", "embedding")


def _exact_reward(env: str, completion: str, state: str, next_state: str, diff: str = "",
                  changed: bool | None = None, **fields: Any) -> float:
    """The environment's registered binary check (the text game's official one), else exact match."""
    own = get_environment(env).binary(scoring_transition(env, state, next_state, diff, changed, **fields), completion)
    return own if own is not None else float(is_exact(env, state, completion.strip(), next_state))


def _task_reward(env: str, completion: str, state: str, next_state: str, diff: str,
                 changed: bool | None = None, **fields: Any) -> float:
    """RLVR-World's reward of the task, as the environment registered it (`wmkit.envs`): task-specific
    (text game), F1 (screens), ROUGE-L (free text, no structure to score part by part). A user's
    reward that raises on the completion pays it 0, with one warning (`Environment.guarded`)."""
    return get_environment(env).reward(scoring_transition(env, state, next_state, diff, changed, **fields), completion)


def binary_reward(completions: Sequence[Any], env: Sequence[str], state: Sequence[str],
                  next_state: Sequence[str], **kwargs: Any) -> list[float]:
    """RLVR-World's binary reward: on the text game its official check (every property, `contains`
    list and score field; names and objects the prediction adds are not checked); elsewhere 1 iff
    the predicted next state is exactly the real one."""
    return [_exact_reward(e, extract_completion_text(c), s, n, **row)
            for c, e, s, n, row in zip(completions, env, state, next_state, _rows(len(completions), kwargs))]


def exact_reward(completions: Sequence[Any], env: Sequence[str], state: Sequence[str],
                 next_state: Sequence[str], **kwargs: Any) -> list[float]:
    """1 iff the predicted next state is exactly the real one, every field checked (the kit's
    evaluation). On the text game this is stricter than RLVR-World's binary reward, which does not
    check object names or objects the prediction adds; notebook 02 shows RL exploiting that gap."""
    return [float(is_exact(e, s, extract_completion_text(c).strip(), n))
            for c, e, s, n in zip(completions, env, state, next_state)]


def task_specific_reward(completions: Sequence[Any], env: Sequence[str], state: Sequence[str],
                         next_state: Sequence[str], diff: Sequence[str], **kwargs: Any) -> list[float]:
    """The RLVR-World reward of each transition's task (text game 0..1.3, screens F1 0..1)."""
    rows = _rows(len(completions), {**kwargs, "diff": diff})
    return [_task_reward(e, extract_completion_text(c), s, n, **row)
            for c, e, s, n, row in zip(completions, env, state, next_state, rows)]


TRANSITION_COLUMNS = ("diff", "changed", "action", "action_type", "episode", "step", "task")
"""The columns of an RL batch (`rl_dataset`) besides env, state and next_state that the rewards pass
on: a registered metric sees the transition as it was collected."""


def _rows(n: int, kwargs: dict) -> list[dict]:
    """Per row of an RL batch, its TRANSITION_COLUMNS among `kwargs` (a column absent: not passed;
    `scoring_transition` fills in "" and None)."""
    columns = {name: kwargs[name] for name in TRANSITION_COLUMNS if kwargs.get(name) is not None}
    return [{name: values[i] for name, values in columns.items()} for i in range(n)]


def reward_functions(name: str, embedding_reward: Callable | None = None,
                     repetition_weight: float = 0.5) -> list[Callable]:
    """TRL reward functions for reward `name` (one of REWARD_NAMES)."""
    if name == "binary":
        return [binary_reward]
    if name == "exact":
        return [exact_reward]
    if name == "task_specific":
        return [task_specific_reward]
    if name == "continuous":
        return [rouge_reward_fn]
    if name == "continuous_rep":
        return [with_repetition_penalty(rouge_reward_fn, repetition_weight)]
    if name == "embedding":
        if embedding_reward is None:
            raise ValueError("reward 'embedding' needs embedding_reward= (a wmkit.rewards.embedding."
                             "EmbeddingReward with its threshold chosen)")
        return [embedding_reward]
    raise ValueError(f"Unknown reward {name!r}: choose one of {', '.join(REWARD_NAMES)}")


def rl_transitions(transitions: Sequence[Transition], unchanged_ratio: float = 0.25,
                   seed: int = 0) -> list[Transition]:
    """All changed transitions plus `unchanged_ratio` × as many unchanged ones, shuffled."""
    if unchanged_ratio < 0:
        raise ValueError(f"unchanged_ratio must be >= 0, not {unchanged_ratio}")
    rng = random.Random(seed)
    changed = [t for t in transitions if t.changed]
    unchanged = [t for t in transitions if not t.changed]
    rng.shuffle(unchanged)
    chosen = changed + unchanged[:round(unchanged_ratio * len(changed))]
    rng.shuffle(chosen)
    return chosen


RUN_KEY_COLUMNS = ("prompt", "env", "state", "next_state", "diff", "changed")
"""The columns of `rl_dataset` a run's checkpoints are claimed with (`train_rlvr`'s run key): the
others (action, episode, ...) are implied by them, and leaving them out keeps older checkpoints
resumable."""


def rl_dataset(tokenizer, transitions: Sequence[Transition]):
    """A `datasets.Dataset` TRL can train on: a text `prompt` column (chat template applied) plus the
    transition's fields, which TRL passes to the rewards (env, state, next_state, diff, changed,
    action, action_type, episode, step, task): a registered metric sees the whole transition."""
    from datasets import Dataset  # here, not at the top: datasets takes a second to import

    return Dataset.from_list([
        {"prompt": prompt_text(tokenizer, t.env, t.state, t.action), "env": t.env, "state": t.state,
         "next_state": t.next_state, "diff": t.diff, "changed": t.changed, "action": t.action,
         "action_type": t.action_type, "episode": t.episode, "step": t.step, "task": t.task}
        for t in transitions])


@dataclass(kw_only=True)
class RLVRConfig(GRPORunConfig):
    """One RLVR (GRPO) run on a world model: the knobs and fields of every GRPO run
    (`wmkit.core.grpo.GRPORunConfig`) plus RLVR's own. Each prompt is a transition (s, a) and G
    predictions of s' are sampled per prompt. With `lora` on, the adapters are merged back at the end;
    prompts_per_micro_batch=None means one group at a time under QLoRA."""

    reward: str = "task_specific"
    """binary (RLVR-World's check) | exact (every field) | task_specific | continuous (ROUGE-L) |
    continuous_rep (ROUGE-L minus repetition) | embedding."""
    unchanged_ratio: float = 0.25
    """Unchanged transitions added per changed one (RLVR-World trains on all changed plus a sample)."""
    quantized: bool | None = None
    """QLoRA: train the LoRA adapters on NF4 4-bit base weights. None (auto): yes on CUDA whenever
    `lora` is on, no on a CPU. A model given already in 4-bit (`models.load_model(folder,
    quantization="nf4")`) gets its adapters in place and comes back unmerged (merging into 4-bit
    weights would round them); a 16-bit model is quantized in a copy, and comes back as itself plus
    the trained adapters merged in 16 bits. On a CPU only to exercise the code path."""
    repetition_weight: float = 0.5
    """λ of the continuous_rep reward."""
    gradient_checkpointing: bool | None = None
    """Recompute activations in the backward pass to save memory. None (auto): on with QLoRA (a
    pretrained model on a small GPU), off otherwise -- the kit's tiny models do not need it."""
    use_vllm: bool = field(default_factory=vllm_requested)
    """Generate rollouts with vLLM, TRL's colocate mode (CUDA, vLLM installed; see
    tutorials/multi_gpu.md). Default: off, unless `wmkit.core.grpo.request_vllm()` asked for it."""
    vllm_mode: str = "colocate"
    """'colocate' (vLLM in the training process) or 'server' (a separate `trl vllm-serve`)."""
    merge_adapters: bool = False
    """Also save a standalone 16-bit copy, base + adapters merged, in output_dir/merged (LoRA runs
    save their adapters alone in output_dir/adapter either way)."""
    resume: bool = True
    """Continue from the latest checkpoint in output_dir if there is one."""
    logging_steps: int = 1
    """Log reward and loss every this many steps."""

    def uses_qlora(self) -> bool:
        """Whether this run trains on NF4 base weights (`quantized`, None resolved)."""
        return bool(self.lora and torch.cuda.is_available()) if self.quantized is None else self.quantized

    def uses_gradient_checkpointing(self) -> bool:
        return self.uses_qlora() if self.gradient_checkpointing is None else self.gradient_checkpointing

    def trl_config(self):
        """This run's `trl.GRPOConfig` (`wmkit.core.grpo.trl_grpo_config`): TRL's checkpoints in
        output_dir/checkpoints, one group per pass under QLoRA unless prompts_per_micro_batch says."""
        return trl_grpo_config(self, output_dir=Path(self.output_dir) / "checkpoints",
                               one_group_per_pass=self.uses_qlora(), use_vllm=self.use_vllm, vllm_mode=self.vllm_mode,
                               save_steps=self.save_steps, logging_steps=self.logging_steps,
                               disable_tqdm=not self.show_progress, shuffle_dataset=True, remove_unused_columns=False,
                               gradient_checkpointing=self.uses_gradient_checkpointing())

    def check(self) -> None:
        if self.quantized and not self.lora:
            raise ValueError("quantized=True needs lora=True: 4-bit weights are not trained directly")
        if self.reward not in REWARD_NAMES:
            raise ValueError(f"Unknown reward {self.reward!r}: choose one of {', '.join(REWARD_NAMES)}")
        if self.prompts_per_step < 1 or self.max_steps < 1:
            raise ValueError("prompts_per_step and max_steps must be at least 1")
        check_grpo(self, self.uses_qlora())


RLVR_NOT_IN_RUN_KEY = ("output_dir", "save_steps", "resume", "show_progress", "logging_steps", "merge_adapters",
                       "use_vllm", "vllm_mode", "prompts_per_micro_batch", "gradient_checkpointing")
"""RLVRConfig fields that do not change what is trained (where rollouts are generated and how a step is
split into micro-batches included): a rerun may change them and still resume."""


@dataclass
class RLVRResult:
    """What an RLVR run returns."""

    model: Any
    """The trained model, adapters merged (a plain transformers model)."""
    log_history: list[dict] = field(default_factory=list)
    """TRL's per-step logs (reward, reward_std, loss, completion length, ...)."""
    steps: int = 0
    seconds: float = 0.0
    n_train: int = 0
    """Rows of the RL dataset (transitions, or prompt_rows when given)."""
    resumed_from: str | None = None

    def curve(self, key: str = "reward") -> list[float]:
        """The logged values of `key` per step (e.g. 'reward', 'reward_std', 'loss')."""
        return [float(row[key]) for row in self.log_history if key in row]


def train_rlvr(model, tokenizer, transitions: Sequence[Transition], config: RLVRConfig,
               embedding_reward: Callable | None = None, callbacks: Sequence | None = None,
               reward_funcs: Sequence[Callable] | None = None,
               prompt_rows: Sequence[dict] | None = None, run_key: dict | None = None) -> RLVRResult:
    """GRPO with a verifiable reward on `transitions` (already filtered to what RL should see).

    `model` is left untouched: a copy is trained (LoRA adapters merged back, or every parameter with
    `lora=False`) and returned; with `quantized=True` the 4-bit model gets its adapters in place and
    comes back as a PeftModel. The tokenizer is switched to left padding (generation needs it).
    `reward_funcs` (TRL reward functions) replaces the reward named in the config: bring your own.
    `prompt_rows` (dicts with a text `prompt`, chat template applied, plus the columns your
    reward_funcs read) replaces the world-model dataset built from `transitions`: GRPO on any
    task, e.g. the acting policy of `wmkit.rwml.policy`.
    `run_key` names the run whole for its checkpoints; None: the config's training settings, the data
    and, under LoRA, the base weights name it (`wmkit.runs.run_identity`). Checkpoints of another run
    in output_dir are refused (`wmkit.runs.checkpoint_to_resume`).
    """
    config.check()
    if not (prompt_rows if prompt_rows is not None else transitions):
        raise ValueError("no transitions to train on")
    start = time.perf_counter()
    if prompt_rows is not None:
        from datasets import Dataset  # here, not at the top: datasets takes a second to import

        dataset = Dataset.from_list(list(prompt_rows))
    else:
        dataset = rl_dataset(tokenizer, transitions)
    trl_config = config.trl_config()
    # Before the model is copied: checkpoints of another run (another seed's data sample, another
    # world model under LoRA) are refused here, in one line.
    if run_key is None:
        rows = dataset.to_list() if prompt_rows is not None else dataset.select_columns(list(RUN_KEY_COLUMNS)).to_list()
        run_key = run_identity(run_settings(config, RLVR_NOT_IN_RUN_KEY), (), rows, lora_base=model if config.lora else None)
    resume_from = checkpoint_to_resume(trl_config.output_dir, run_key, config.resume)
    qlora, checkpointing = config.uses_qlora(), config.uses_gradient_checkpointing()
    # Completions end at the tokenizer's end-of-turn token, as in worldmodel.generate.
    trl_config.generation_kwargs = {"eos_token_id": tokenizer.eos_token_id,
                                    "pad_token_id": tokenizer.pad_token_id}
    given_in_4bit = is_nf4(model)
    if qlora and given_in_4bit:
        policy = model  # adapters go onto the caller's 4-bit model, as it asked
    elif qlora:
        policy = quantize_nf4(copy.deepcopy(model))  # the caller's 16-bit model stays as it was
    else:
        policy = copy.deepcopy(model)
    tokenizer.padding_side = "left"
    out = Path(config.output_dir)
    run = train_grpo(policy, tokenizer, trl_config, dataset,
                     reward_funcs or reward_functions(config.reward, embedding_reward, config.repetition_weight),
                     output_dir=out, lora=(config.lora_r, config.lora_alpha) if config.lora else None,
                     quantized=qlora, gradient_checkpointing=checkpointing, callbacks=callbacks or (),
                     show_progress=config.show_progress, resume_from=resume_from)
    log_history, global_step, merged = run.log_history, run.global_step, run.model
    if qlora and not given_in_4bit:
        # Trained on an NF4 copy: apply the adapters to the caller's 16-bit weights (the QLoRA
        # recipe's merge), so what comes back is a plain model like the other branches return.
        del run, policy
        merged = merge_adapters(copy.deepcopy(model), out / ADAPTER_FOLDER)
    merged.eval()
    if config.merge_adapters and config.lora:
        if is_nf4(merged):
            merge_adapters(getattr(model, "name_or_path", ""), out / ADAPTER_FOLDER, out / "merged", tokenizer)
        else:
            save_model(merged, tokenizer, out / "merged")
    result = RLVRResult(model=merged, log_history=log_history, steps=global_step,
                        seconds=time.perf_counter() - start, n_train=len(dataset), resumed_from=resume_from)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rlvr_config.json").write_text(json.dumps(asdict(config), indent=1))
    (out / "rlvr_log.json").write_text(json.dumps(result.log_history))
    return result


def evaluate_predictions(model, tokenizer, transitions: Sequence[Transition], max_new_tokens: int,
                         num_samples: int = 2, seed: int = 0, progress: bool = False) -> dict[str, AccuracySummary]:
    """Greedy and sampled (T=1, pass@1 over `num_samples`) accuracy on `transitions`."""
    prompts = [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]
    greedy = generate(model, tokenizer, prompts, max_new_tokens, progress=progress)
    sampled = generate(model, tokenizer, prompts, max_new_tokens, do_sample=True, num_samples=num_samples,
                       seed=seed, progress=progress)
    return {"greedy": summarize(transitions, greedy), "sampled": summarize(transitions, sampled)}


def best_of_k_curve(model, tokenizer, transitions: Sequence[Transition], k_max: int, max_new_tokens: int,
                    seed: int = 0) -> list[float]:
    """Share of transitions with at least one exact prediction among the first k samples, k = 1..k_max
    (pass@k with a perfect verifier: the test-time alternative to RL)."""
    prompts = [prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions]
    samples = generate(model, tokenizer, prompts, max_new_tokens, do_sample=True, num_samples=k_max, seed=seed)
    hits = [[is_exact(t.env, t.state, p, t.next_state) for p in preds] for t, preds in zip(transitions, samples)]
    return [sum(any(h[:k]) for h in hits) / max(1, len(hits)) for k in range(1, k_max + 1)]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are right (Chen et al., 2021): the chance that k
    samples drawn without replacement from the n hold at least one right one, 1 − C(n−c, k)/C(n, k).
    Averaging it over prompts estimates pass@k with less variance than "any of the first k"."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, not n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):  # C(n−c, k)/C(n, k) as a product: no huge binomials
        miss *= 1.0 - k / i
    return 1.0 - miss

def eval_set(transitions: Sequence[Transition], env: str, n_changed: int, n_unchanged: int,
             seed: int = 0) -> list[Transition]:
    """A fixed random choice of changed and unchanged transitions of `env` (changed first)."""
    rng = random.Random(seed)
    changed = [t for t in transitions if t.env == env and t.changed]
    unchanged = [t for t in transitions if t.env == env and not t.changed]
    rng.shuffle(changed)
    rng.shuffle(unchanged)
    return changed[:n_changed] + unchanged[:n_unchanged]


def uses_lora(info: dict) -> bool:
    """Pretrained models get LoRA; the from-scratch one trains every parameter (see notebook 02)."""
    return info.get("model", "tiny") != "tiny"
