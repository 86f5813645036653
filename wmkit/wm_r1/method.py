"""WM-R1's training step (Han & Qian, 2026): GRPO on whole episodes played inside a world model.

:func:`train_wm_r1` runs TRL's ``GRPOTrainer`` with a ``rollout_func`` that plays each
group's episodes against a transition source (:mod:`wmkit.wm_r1.agent`): for WM-R1 the world
model predicts every next screen and success is judged on the predicted final screen, so the
simulator is never stepped; for the UI-R1-style baseline the simulator is the source. Each
episode is packed into one completion whose screens are masked out of the loss
(``env_mask``), and the group's rewards are WM-R1's composite
(:mod:`wmkit.rewards.wm_r1`: α·R_succ + β·R_L + γ·R_WM).
"""
from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from wmkit.core import models
from wmkit.core.grpo import GRPORunConfig, run_settings, train_grpo, trl_grpo_config
from wmkit.envs import phone
from wmkit.rewards.wm_r1 import WMR1RewardConfig, group_has_signal
from wmkit.runs import checkpoint_to_resume, run_identity
from wmkit.wm_r1 import agent as ag


@dataclass(kw_only=True)
class WMR1Config(GRPORunConfig):
    """One WM-R1 training job (GRPO from an SFT policy): the knobs and fields of every GRPO run
    (`wmkit.core.grpo.GRPORunConfig`; max_steps counts optimizer steps) plus WM-R1's own.
    Each prompt is a task and its G completions are whole episodes, played all at once whatever
    prompts_per_micro_batch says (it only splits the forward/backward passes); the episode's step
    budget is `max_episode_steps`."""

    transitions: str = "world_model"
    """'world_model' (WM-R1: every transition predicted), 'simulator' (the UI-R1-style baseline)."""
    imagine: bool = True
    """Whether call_wm turns reach the world model (False: they are failed steps)."""
    reward: WMR1RewardConfig = field(default_factory=WMR1RewardConfig)
    """WM-R1's composite reward α·R_succ + β·R_L + γ·R_WM (`wmkit.rewards.wm_r1`)."""
    scale_rewards: str = "none"
    """'none' keeps raw centred rewards: TRL's group-std scaling would turn the small penalties of an
    all-fail group into full-size advantages."""
    max_episode_steps: int = 7
    """Real steps per episode, imagined turns not counted (`wmkit.wm_r1.agent.AgentConfig.max_steps`)."""
    max_wm_calls: int = 5
    """Imagined calls allowed per step (n_max); one more is a failed step."""
    max_turn_tokens: int = 24
    """Longest agent turn sampled (tokens)."""
    max_completion_length: int = 1400
    """Episode text budget after the prompt (agent + environment tokens); past it the episode ends
    (`AgentConfig.max_completion_tokens`, and TRL's max_completion_length)."""
    lora: bool = False
    """Put LoRA adapters on a policy that has none (a pretrained policy arrives with the SFT warm
    start's adapters on, and GRPO trains those whatever this says)."""
    lora_r: int = 8
    """Rank of the adapters `lora` adds (`WMR1Sizes.lora_r`)."""
    lora_alpha: int = 16
    """Their scale numerator, scale = alpha / r (`WMR1Sizes.lora_alpha`)."""
    save_steps: int = 0
    """Checkpoint every this many steps (0: none); training resumes from the newest one."""
    device_latency: float = 0.0
    """Emulated seconds per simulator step (simulator transitions only)."""
    screen_view: str = "env"
    """The agent's view of the screens (:data:`wmkit.wm_r1.agent.SCREEN_VIEWS`): its prompts and
    observations; the transition source and the rewards keep the phone's format."""


WM_R1_NOT_IN_RUN_KEY = ("output_dir", "save_steps", "show_progress", "device_latency", "prompts_per_micro_batch")
"""WMR1Config fields that do not change what is trained (the simulator's emulated latency included): a
rerun may change them and still resume."""


@dataclass
class WMR1Result:
    model: Any
    history: list[dict]
    """Per GRPO step: mean success as judged by the source, steps, world-model calls, invalid
    steps, share of groups with signal, seconds."""
    log_history: list[dict]
    """TRL's log (loss, reward, entropy ...)."""
    simulator_steps: int
    """Simulator transitions during training (0 for WM-R1)."""
    world_model_queries: int
    world_model_predictions: int
    seconds: float
    groups_played: int = 0
    """Rollout groups (one task world each) played during training."""
    distinct_worlds: int = 0
    """Distinct task worlds among them (equal to groups_played: no group repeated a world)."""


def make_source(kind: str, wm_source: ag.WorldModelSource | None, device_latency: float) -> ag.TransitionSource:
    if kind == "world_model":
        if wm_source is None:
            raise ValueError("transitions='world_model' needs a world model")
        # A fresh episode state that shares the prediction cache and the counters' owner (a noisy
        # oracle, wmkit.wm_r1.oracle, returns one of its own kind).
        return wm_source.episode_source()
    if kind == "simulator":
        return ag.SimulatorSource(device_latency=device_latency)
    raise ValueError(f"Unknown transitions {kind!r}: choose 'world_model' or 'simulator'")


def train_wm_r1(config: WMR1Config, model, tokenizer, tasks: Sequence[phone.PhoneTask],
                world_model: ag.WorldModelSource | None) -> WMR1Result:
    """GRPO on `tasks` from `model` (modified in place unless LoRA wraps it).

    The rollout_func plays every prompt's episode against the configured transition source; the
    reward function scores each group with the WM-R1 composite reward. Extra keys returned by
    the rollout_func (success, steps, wm_calls) reach the reward function.
    """
    from datasets import Dataset  # here, not at the top: datasets takes a second to import

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    ag.check_screen_view(config.screen_view)
    torch.manual_seed(config.seed)
    # TRL passes prompt strings only, and on the phone the prompt is the instruction on the home
    # screen, which many task worlds share. Every prompt therefore keeps the queue of its tasks, and
    # each rollout group takes the next one: a task list of fresh worlds (`tasks.fresh_tasks`)
    # gives every group a world of its own; a list that repeats a task (`balanced_tasks`) repeats it.
    by_prompt: dict[str, list[phone.PhoneTask]] = {}
    prompts = []  # one per task, repeats kept: a task list that repeats a prompt weights it
    for task in tasks:
        prompt = ag.prompt_text(task, ag.initial_screen(task), config.screen_view)  # the prompt run_episodes writes
        by_prompt.setdefault(prompt, []).append(task)
        prompts.append(prompt)
    n_rows = max(len(prompts), config.max_steps * config.prompts_per_step)
    rng = random.Random(config.seed)
    rows = [prompts[i % len(prompts)] for i in range(n_rows)]
    rng.shuffle(rows)
    dataset = Dataset.from_dict({"prompt": rows})
    drawn = {prompt: 0 for prompt in by_prompt}  # groups played per prompt so far
    worlds_played: list[tuple[str, int]] = []  # (template, world seed) of every group, in order

    history: list[dict] = []
    counters = {"sim": 0, "wm_q0": world_model.queries if world_model else 0,
                "wm_p0": world_model.predictions if world_model else 0}
    agent_config = ag.AgentConfig(max_steps=config.max_episode_steps, max_wm_calls=config.max_wm_calls,
                                  imagine=config.imagine, max_completion_tokens=config.max_completion_length,
                                  screen_view=config.screen_view)
    G = config.num_generations
    start_time = time.perf_counter()

    def rollout(batch_prompts, trainer):
        t0 = time.perf_counter()
        batch_tasks = []
        for g in range(0, len(batch_prompts), G):
            prompt = batch_prompts[g]
            queue = by_prompt[prompt]
            task = queue[drawn[prompt] % len(queue)]  # past its end the queue starts again
            drawn[prompt] += 1
            worlds_played.append((task.template, task.seed))
            batch_tasks += [task] * len(batch_prompts[g:g + G])
        source = make_source(config.transitions, world_model, config.device_latency)
        policy = ag.Policy(trainer.model, tokenizer, max_turn_tokens=config.max_turn_tokens,
                           temperature=config.temperature)
        episodes = ag.run_episodes(policy, batch_tasks, source, imaginer=world_model, config=agent_config)
        if isinstance(source, ag.SimulatorSource):
            counters["sim"] += source.transitions
        elif isinstance(source, ag.WorldModelSource) and world_model is not None:
            world_model.queries += source.queries
            world_model.predictions += source.predictions
        stats = ag.summarize_episodes(episodes)
        groups = [episodes[i:i + G] for i in range(0, len(episodes), G)]
        signal = [group_has_signal(config.reward.rewards([e.success for e in g], [e.steps for e in g],
                                                         [e.wm_calls for e in g]), config.reward.min_group_std)
                  for g in groups]
        # the call term's direction depends on these (notebook 03, section 2): in an all-fail group
        # more calls score higher, among a group's successes fewer calls do
        all_fail = [not any(e.success for e in g) for g in groups]
        all_success = [all(e.success for e in g) for g in groups]
        history.append({"step": len(history), **stats, "signal_groups": sum(signal) / max(1, len(signal)),
                        "all_fail_groups": sum(all_fail) / max(1, len(groups)),
                        "all_success_groups": sum(all_success) / max(1, len(groups)),
                        "seconds": round(time.perf_counter() - t0, 2)})
        return {
            "prompt_ids": [e.prompt_ids for e in episodes],
            "completion_ids": [e.completion_ids for e in episodes],
            "logprobs": [[0.0] * len(e.completion_ids) for e in episodes],
            "env_mask": [e.env_mask for e in episodes],
            "success": [float(e.success) for e in episodes],
            "steps": [e.steps for e in episodes],
            "wm_calls": [e.wm_calls for e in episodes],
        }

    def wm_r1_reward(prompts, completions, success, steps, wm_calls, **kwargs):
        rewards: list[float] = []
        for g in range(0, len(prompts), G):
            if len(set(prompts[g:g + G])) != 1:
                raise RuntimeError("a GRPO group mixes prompts: the rollout order is not per group")
            rewards += config.reward.rewards(success[g:g + G], steps[g:g + G], wm_calls[g:g + G])
        return rewards

    # Checkpoints of another run (another seed's tasks, another start policy under LoRA) are refused here.
    has_adapters = hasattr(model, "peft_config")
    run_key = run_identity(run_settings(config, WM_R1_NOT_IN_RUN_KEY), (), [rows, [(t.template, t.seed) for t in tasks]],
                           lora_base=model if config.lora or has_adapters else None)
    resume = checkpoint_to_resume(config.output_dir, run_key, resume=True) if config.save_steps else None
    extra = {"logging_steps": 1, "save_strategy": "steps" if config.save_steps else "no",
             "disable_tqdm": not config.show_progress, "shuffle_dataset": False}
    if config.save_steps:
        extra["save_steps"] = config.save_steps
    # Gradient checkpointing saves GPU memory; on a CPU it only costs a second forward pass.
    checkpointing = torch.cuda.is_available()
    # use_vllm off: the rollout_func plays the episodes with the policy itself; vLLM would sit idle.
    trl_config = trl_grpo_config(config, one_group_per_pass=models.is_nf4(model), use_vllm=False,
                                 gradient_checkpointing=checkpointing, **extra)
    # A pretrained policy arrives with its adapters already on (`experiment.build_policy`: the SFT warm
    # start trained them, on NF4 weights on CUDA); GRPO then trains those and adds none.
    run = train_grpo(model, tokenizer, trl_config, dataset, [wm_r1_reward], output_dir=config.output_dir,
                     lora=(config.lora_r, config.lora_alpha) if config.lora else None,
                     quantized=models.is_nf4(model), gradient_checkpointing=checkpointing,
                     rollout_func=rollout, show_progress=config.show_progress, resume_from=resume)
    return WMR1Result(
        model=run.model, history=history, log_history=run.log_history,
        simulator_steps=counters["sim"],
        world_model_queries=(world_model.queries - counters["wm_q0"]) if world_model else 0,
        world_model_predictions=(world_model.predictions - counters["wm_p0"]) if world_model else 0,
        seconds=time.perf_counter() - start_time, groups_played=len(worlds_played),
        distinct_worlds=len(set(worlds_played)))
