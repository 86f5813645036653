"""WM-R1 (notebook 03): a phone agent trained with GRPO entirely inside a learned world model.

One readable path:

1. **Tasks.** Phone tasks split by template (``phone.split_templates``): held-out tasks have goal
   structures the agent never trained on. The profile keeps templates whose shortest solution
   fits its step budget (``max_ref_len``).
2. **Policy.** A tiny from-scratch Llama with a byte-level BPE tokenizer trained on the agent's
   text, warm-started by SFT on reference trajectories (the paper starts from an
   instruction-tuned VLM; a from-scratch model needs the format and the apps taught first). The
   SFT data put an imagined ``call_wm(...)`` turn before a share of the steps, so the agent starts
   out calling the world model. A hub / offline pretrained model gets LoRA (QLoRA on CUDA).
3. **GRPO** through TRL's ``GRPOTrainer`` with a ``rollout_func`` that plays whole episodes
   (:func:`wmkit.wm_r1.agent.run_episodes`) against a transition source and returns an ``env_mask`` that
   keeps screens out of the loss. WM-R1's source is the world model: every next screen is a
   prediction, success is judged on the predicted final screen, the simulator is never stepped.
   Reward: the composite of :mod:`wmkit.rewards.wm_r1` (α·R_succ + β·R_L + γ·R_WM) per group.
4. **Evaluation** in the real simulator, greedy (and sampled at T=1), on held-out templates and on
   unseen tasks of the training templates, against baselines: the SFT policy (zero-shot), GRPO
   with real-simulator transitions, inference-time simulation (best-of-K with the world model),
   WM-R1 without imagined calls, WM-R1 without the length term.

:func:`train_wm_r1` runs one training job from a :class:`WMR1Config`; :func:`run_experiment` runs
the whole comparison for a profile and seed at the profile's ``wm_r1`` sizes (`wmkit.profiles`);
``python -m wmkit run wm-r1 --profile cpu --seeds 3`` repeats it over seeds and writes JSON.
The tasks and SFT data are in :mod:`wmkit.wm_r1.tasks`, the measurements in
:mod:`wmkit.wm_r1.evaluation`, the fidelity ladder in :mod:`wmkit.wm_r1.ladder`.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from wmkit import stats
from wmkit.core import models
from wmkit.core.build import series_world_model
from wmkit.core.sft import CompletionOnlyConfig, train_completion_only
from wmkit.envs import phone
from wmkit.profiles import Profile
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.runs import bench_work_dir, default_runs_root, jsonable
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1.config import WM_R1_ARMS, WMR1Sizes, wm_r1_sizes
from wmkit.wm_r1.evaluation import evaluate, judge_agreement, reference_in_world_model, world_model_error
from wmkit.wm_r1.method import WMR1Config, train_wm_r1
from wmkit.wm_r1.tasks import (
    GRPO_TASK_SEED,
    HELDOUT_EVAL_SEED,
    SFT_TASK_SEED,
    TRAIN_EVAL_SEED,
    sft_examples,
    task_templates,
    tokenizer_corpus,
    unique_tasks,
)

PAPER = {
    "wm_r1_7b_androidworld": 39.8, "ui_r1_7b_androidworld": 30.8, "gain_7b": 9.0,
    "wm_r1_3b_androidworld": 29.5, "baseline_3b": 18.6, "no_cot": -5.2, "length_reward": 3.3,
    "wm_calls_per_trajectory": (4.0, 2.5, 1.8), "hours_15_episodes_h200": 11.2,
}


"""Headline numbers of Han & Qian (2026), shown beside the kit's."""


ARMS = WM_R1_ARMS
"""The comparison arms (defined with the size table, whose ``baselines`` name them)."""


def train_policy_sft(model, tokenizer, examples: list[dict], epochs: float, learning_rate: float,
                     batch_size: int, seed: int, progress: bool = True) -> list[float]:
    """The policy warm start: :func:`wmkit.core.sft.train_completion_only` with its defaults (AdamW
    weight decay 0.01, warm-up + cosine, clipping at 1.0, length-grouped batches); returns the
    loss per step."""
    config = CompletionOnlyConfig(epochs=epochs, learning_rate=learning_rate, batch_size=batch_size, seed=seed,
                                  batching="length_grouped", weight_decay=0.01, schedule="warmup_cosine",
                                  max_grad_norm=1.0, show_progress=progress, progress_desc="policy SFT")
    return train_completion_only(model, tokenizer, examples, config)


def build_policy(sizes: WMR1Sizes, train_tasks: Sequence[phone.PhoneTask], seed: int, model_name: str | None = None,
                 quantization: str = "auto"):
    """(model, tokenizer): a tiny from-scratch Llama with a tokenizer trained on the agent's
    text, or a pretrained model (its own tokenizer) with LoRA adapters on its attention and MLP
    projections -- on NF4 4-bit weights with CUDA (QLoRA; `quantization`, see
    `models.resolve_quantization`) -- that the SFT warm start and then GRPO train."""
    if model_name in (None, "tiny"):
        tokenizer = models.train_tokenizer(tokenizer_corpus(list(train_tasks)[:200], sizes.thought_index,
                                                            sizes.screen_view),
                                           sizes.policy.vocab_size,
                                           split=sizes.tokenizer_split)
        model = models.build_tiny_model(tokenizer, sizes.policy, seed=seed)
        return model, tokenizer
    quant = models.resolve_quantization(quantization)
    model, tokenizer = models.load_model(model_name, quantization=quant)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # The adapters go on now, not at GRPO: the SFT warm start cannot train 4-bit weights either.
    model = models.add_lora(model, r=sizes.lora_r, alpha=sizes.lora_alpha, quantized=quant == "nf4",
                            gradient_checkpointing=torch.cuda.is_available())
    return model, tokenizer


def load_world_model_source(profile: Profile, runs_dir: str | Path, seed: int = 0,
                            max_new_tokens: int = 160) -> tuple[ag.WorldModelSource, dict]:
    """Notebook 01's world model (built at the profile's size when missing) as a transition source."""
    run = series_world_model(profile, runs_dir, seed=seed)
    run.model.eval()
    predictor = ag.world_model_predictor(run.model, run.tokenizer, max_new_tokens)
    return ag.WorldModelSource(predictor), {**run.info, "folder": str(run.folder)}


def run_experiment(profile: Profile, seed: int = 0, runs_dir: str | Path | None = None,
                   out_dir: str | Path | None = None, model_name: str | None = None,
                   arms: Sequence[str] | None = None, device_latency: float = 0.0,
                   world_model: ag.WorldModelSource | None = None, progress: bool = True,
                   log=print, sizes: WMR1Sizes | None = None, trl_args: dict | None = None) -> dict:
    """SFT warm start, then every arm's training and evaluation in the simulator, for one seed.
    `sizes` overrides the profile's sizes (the profile still names the world model to load);
    `trl_args`: any other ``trl.GRPOConfig`` field for every arm's GRPO (`WMR1Config.trl_args`)."""
    from transformers import set_seed  # here, not at the top: transformers takes seconds to import

    sizes = sizes or wm_r1_sizes(profile)
    # None: the profile's policy (tiny for smoke/cpu; gpu: a pretrained model with QLoRA, SmolLM2 offline)
    model_name = models.resolve_model_name(model_name, profile.default_model)
    models.check_model(model_name)
    runs_dir = Path(runs_dir) if runs_dir else default_runs_root() / profile.name
    out_dir = Path(out_dir) if out_dir else runs_dir / "03_wm_r1_gui_agent" / f"seed{seed}"
    out_dir.mkdir(parents=True, exist_ok=True)
    arms = tuple(arms or sizes.baselines)
    set_seed(seed)
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    wm_info: dict = {}
    if world_model is None:
        world_model, wm_info = load_world_model_source(profile, runs_dir, 0, sizes.wm_max_new_tokens)
    timings["world_model_load"] = time.perf_counter() - t_start

    train_templates, held_templates = task_templates(sizes.max_ref_len)
    sft_tasks = unique_tasks(sizes.sft_tasks, SFT_TASK_SEED + seed, train_templates)
    rl_tasks = unique_tasks(sizes.train_tasks, GRPO_TASK_SEED + seed, train_templates)
    # Evaluation tasks need not have distinct prompts (the same instruction on another world is
    # another task); they come from their own seeds, the same for every training seed.
    eval_held = phone.sample_tasks(sizes.eval_heldout, HELDOUT_EVAL_SEED, held_templates)
    eval_train = phone.sample_tasks(sizes.eval_train, TRAIN_EVAL_SEED, train_templates)

    t = time.perf_counter()
    base_model, tokenizer = build_policy(sizes, sft_tasks, seed, model_name)
    max_len = sizes.grpo.max_completion_length + 200
    examples = sft_examples(tokenizer, sft_tasks, sizes.imagine_rate, seed, max_len, sizes.thought_index,
                            sizes.screen_view)
    sft_loss = train_policy_sft(base_model, tokenizer, examples, sizes.sft_epochs, sizes.sft_learning_rate,
                                sizes.sft_batch_size, seed, progress)
    no_imag_model = None
    if "wm_r1_no_imagine" in arms:
        no_imag_model = copy.deepcopy(base_model)  # the same start; its call_wm turns simply fail
    timings["sft"] = time.perf_counter() - t
    log(f"SFT: {len(examples)} reference episodes, {len(sft_loss)} steps, loss {sft_loss[0]:.2f} -> "
        f"{sft_loss[-1]:.2f} ({timings['sft']:.0f} s)")

    common = dict(max_episode_steps=sizes.max_steps, max_turn_tokens=sizes.max_turn_tokens,
                  lora=sizes.lora or model_name not in (None, "tiny"), lora_r=sizes.lora_r, lora_alpha=sizes.lora_alpha,
                  seed=seed, show_progress=progress, screen_view=sizes.screen_view, trl_args=dict(trl_args or {}))
    arm_configs = {
        "wm_r1": WMR1Config.of(sizes.grpo, output_dir=str(out_dir / "wm_r1"), transitions="world_model", **common),
        "grpo_real": WMR1Config.of(sizes.grpo, output_dir=str(out_dir / "grpo_real"), transitions="simulator",
                                   device_latency=device_latency, **common),
        "wm_r1_no_imagine": WMR1Config.of(sizes.grpo, output_dir=str(out_dir / "no_imagine"), transitions="world_model",
                                          imagine=False, **common),
        "wm_r1_no_length": WMR1Config.of(sizes.grpo, output_dir=str(out_dir / "no_length"), transitions="world_model",
                                         reward=WMR1RewardConfig(beta=0.0, max_steps=sizes.max_steps), **common),
    }
    for name in ("wm_r1", "grpo_real", "wm_r1_no_imagine"):
        arm_configs[name] = replace(arm_configs[name], reward=WMR1RewardConfig(max_steps=sizes.max_steps))

    results: dict[str, Any] = {"arms": {}, "training": {}}
    eval_kw = {"max_turn_tokens": sizes.max_turn_tokens, "max_completion_tokens": sizes.grpo.max_completion_length,
                   "seed": seed, "screen_view": sizes.screen_view}

    def evaluate_arm(name, model, imagine=True, best_of_k=0, sampled=False):
        t0 = time.perf_counter()
        entry = {}
        for split, tasks in (("heldout", eval_held), ("train_templates", eval_train)):
            r = evaluate(model, tokenizer, tasks, world_model, sizes.max_steps, greedy=True, imagine=imagine,
                         best_of_k=best_of_k, progress=progress, **eval_kw)
            entry[split] = {k: v for k, v in r.items() if k != "episodes"}
            if split == "heldout":
                entry["_episodes"] = r["episodes"]
            if sampled:
                r = evaluate(model, tokenizer, tasks, world_model, sizes.max_steps, greedy=False, imagine=imagine,
                             progress=progress, **eval_kw)
                entry[split + "_sampled"] = {k: v for k, v in r.items() if k != "episodes"}
        entry["eval_seconds"] = round(time.perf_counter() - t0, 1)
        log(f"{name:18s} held-out success {entry['heldout']['success']:.3f} | train-template tasks "
            f"{entry['train_templates']['success']:.3f} | wm calls/episode {entry['heldout']['wm_calls']:.2f}")
        return entry

    if "sft" in arms:
        results["arms"]["sft"] = evaluate_arm("sft", base_model, sampled=sizes.sampled_eval)
    if "best_of_k" in arms:
        results["arms"]["best_of_k"] = evaluate_arm(f"best_of_{sizes.best_of_k}", base_model,
                                                    best_of_k=sizes.best_of_k)
    trained_models = {}
    for name in ("wm_r1", "grpo_real", "wm_r1_no_imagine", "wm_r1_no_length"):
        if name not in arms:
            continue
        t = time.perf_counter()
        start_model = no_imag_model if name == "wm_r1_no_imagine" else copy.deepcopy(base_model)
        res = train_wm_r1(arm_configs[name], start_model, tokenizer, rl_tasks, world_model)
        timings[f"train_{name}"] = time.perf_counter() - t
        trained_models[name] = res.model
        results["training"][name] = {
            "history": res.history, "simulator_steps": res.simulator_steps,
            "world_model_queries": res.world_model_queries, "world_model_predictions": res.world_model_predictions,
            "log": [{k: v for k, v in row.items() if k in ("step", "loss", "reward", "reward_std", "entropy",
                                                          "grad_norm", "learning_rate", "frac_reward_zero_std")}
                    for row in res.log_history if "loss" in row or "entropy" in row],
            "seconds": round(res.seconds, 1)}
        log(f"trained {name}: {sizes.grpo.max_steps} GRPO steps in {res.seconds:.0f} s, simulator steps "
            f"{res.simulator_steps}, imagined success {res.history[0]['success']:.2f} -> "
            f"{res.history[-1]['success']:.2f}, wm calls/episode {res.history[0]['wm_calls']:.2f} -> "
            f"{res.history[-1]['wm_calls']:.2f}")
        results["arms"][name] = evaluate_arm(name, res.model, imagine=name != "wm_r1_no_imagine",
                                             sampled=sizes.sampled_eval and name == "wm_r1")
    timings["total"] = time.perf_counter() - t_start

    # Diagnostics: the world model's error where this agent goes, and its success judgments.
    diag_model = trained_models.get("wm_r1", base_model)
    visited = results["arms"].get("wm_r1", results["arms"].get("sft", {})).get("_episodes", [])
    results["world_model_error"] = world_model_error(world_model, visited)
    results["judge_agreement"] = {
        "train_templates": judge_agreement(diag_model, tokenizer, rl_tasks[:sizes.diagnostic_episodes],
                                           world_model, sizes.max_steps, seed, sizes.max_turn_tokens,
                                           screen_view=sizes.screen_view)}
    results["reference_in_world_model"] = reference_in_world_model(eval_train[:sizes.diagnostic_episodes],
                                                                   world_model)
    for entry in results["arms"].values():
        entry.pop("_episodes", None)
    results.update({
        "profile": profile.name, "seed": seed, "sizes": asdict(sizes), "world_model": wm_info,
        "policy_parameters": models.count_parameters(base_model),
        "tasks": {"train_templates": train_templates, "heldout_templates": held_templates,
                  "n_sft": len(sft_tasks), "n_rl": len(rl_tasks), "n_eval_heldout": len(eval_held),
                  "n_eval_train_templates": len(eval_train)},
        "sft_loss": sft_loss, "timings": {k: round(v, 1) for k, v in timings.items()},
    })
    results["_models"] = {"sft": base_model, **trained_models}
    results["_tokenizer"] = tokenizer
    return results


def public(results: dict) -> dict:
    """The JSON-ready part of run_experiment's result (no models)."""
    return {k: v for k, v in results.items() if not k.startswith("_")}


def run_wm_r1_seed(profile: Profile, seed: int, runs_root: Path, sizes: WMR1Sizes,
                   arms: Sequence[str] | None = None, threads: int | None = 2) -> dict:
    """``python -m wmkit run wm-r1``, one seed: :func:`run_experiment` with every arm (or `arms`),
    trained inside the simulator-backed oracle, on `threads` torch threads."""
    if threads:
        torch.set_num_threads(threads)
    return public(run_experiment(profile, seed, arms=arms, progress=False, sizes=sizes))


def combine_wm_r1_seeds(profile: Profile, records: dict[int, dict], sizes: WMR1Sizes, **options) -> dict:
    """The seeds' records and :func:`summarize_seeds` over them."""
    per_seed = {str(s): r for s, r in records.items()}
    return {"profile": profile.name, "seeds": list(records), "per_seed": per_seed, "summary": summarize_seeds(per_seed)}


def check_options(arms: Sequence[str] | None = None, **_) -> None:
    unknown = [a for a in arms or () if a not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {', '.join(unknown)}: choose from {', '.join(ARMS)}")


def summarize_seeds(per_seed: dict[str, dict]) -> dict:
    """:func:`wmkit.stats.summarize` over seeds of each arm's held-out and train-template success,
    and the verdict of "WM-R1 beats this arm": :func:`wmkit.stats.verdict` on the per-seed paired
    differences WM-R1 − arm (the arms of one seed share its SFT start and evaluation tasks)."""
    arms = sorted({a for r in per_seed.values() for a in r["arms"]})
    summary: dict[str, Any] = {}
    for arm in arms:
        row = {}
        for split in ("heldout", "train_templates"):
            row[split] = stats.summarize([r["arms"][arm][split]["success"] for r in per_seed.values()
                                          if arm in r["arms"]])
        summary[arm] = row
    if "wm_r1" in summary:
        for arm in arms:
            if arm == "wm_r1":
                continue
            for split in ("heldout", "train_templates"):
                pairs = [(r["arms"]["wm_r1"][split]["success"], r["arms"][arm][split]["success"])
                         for r in per_seed.values() if "wm_r1" in r["arms"] and arm in r["arms"]]
                judged = stats.verdict(stats.differences([a for a, _ in pairs], [b for _, b in pairs]))
                summary[arm][f"verdict_wm_r1_vs_this_{split}"] = judged.verdict
                summary[arm][f"verdict_reason_wm_r1_vs_this_{split}"] = judged.reason
                summary[arm][f"wm_r1_minus_this_{split}"] = judged.summary
    return summary


def _jsonable(obj):
    return jsonable(obj)


def run_wm_r1(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """WM-R1: :func:`wmkit.wm_r1.experiment.run_experiment` for this seed, every arm, at the benchmark's sizes."""
    world_model, wm_info = load_world_model_source(profile, runs_root, 0, sizes.wm_max_new_tokens)
    result = run_experiment(profile, seed, runs_dir=runs_root, out_dir=bench_work_dir(runs_root, "wm_r1", seed),
                            arms=sizes.baselines, world_model=world_model, progress=False, log=lambda line: None,
                            sizes=sizes)
    result = public(result)
    result["profile"], result["world_model"] = profile.name, wm_info
    history = result["training"].get("wm_r1", {}).get("history", [])
    result["wm_calls_first"] = history[0]["wm_calls"] if history else None
    result["wm_calls_last"] = history[-1]["wm_calls"] if history else None
    return result
