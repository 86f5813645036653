"""RLVR-World's video experiment at a size for 2 CPU cores (notebook 06).

One seeded run (:func:`run_video_seed`):

1. render MiniGrid trajectories (`wmkit.video.frames`; the data are the same for every seed),
   split by episode into train / val / test;
2. fit the patch codebook on the training frames and measure its reconstruction error on test;
3. build a tiny causal LM over the code vocabulary and train it by MLE (teacher forcing, loss on
   the next frame's codes only): prompt = the last `context_frames` frames and actions;
4. measure it on held-out trajectories: one-step (context from the real frames) greedy and sampled,
   and multi-step rollouts (each predicted frame fed back as context) for `horizon` steps;
5. train a copy with GRPO through TRL (`wmkit.core.world_model_rl.train_rlvr`) on the profile's
   reward of the decoded frame (`wmkit.video.model.VideoReward`), every parameter, as the authors
   do -- once per RL arm (`RL_ARMS`: all training transitions, or the changed ones plus a sample),
   and once more on the changed arm with `VideoSizes.contrast_reward` where set (`arm_plan`);
6. measure each RLVR model the same way.

Sizes: `wmkit.video.config.VideoSizes` (per profile). Seeds run two at a time in
worker processes on 2 cores (`wmkit.core.parallel.run_jobs`). Command line::

    python -m wmkit run rlvr-video --profile cpu --seeds 3
"""
from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from wmkit.profiles import Profile
from wmkit.runs import bench_work_dir, jsonable
from wmkit.stats import differences, summarize
from wmkit.video import frames as fr
from wmkit.video import model as vm
from wmkit.video import tokenizer as vt
from wmkit.video.config import VideoSizes, video_sizes

METRICS = ("l1", "mse", "ssim")
"""Lower, lower, higher is better."""


def make_data(sizes: VideoSizes) -> dict[str, fr.Trajectories]:
    """The profile's trajectories split by episode (seed `sizes.data_seed`, whatever the run's seed)."""
    total = sizes.train_episodes + sizes.val_episodes + sizes.test_episodes
    trajectories = fr.collect_trajectories(total, sizes.steps, sizes.data_seed, tile_size=sizes.tile_size)
    return fr.split_trajectories(trajectories, sizes.val_episodes, sizes.test_episodes)


def transitions(codes: np.ndarray, actions: np.ndarray, context: int) -> list[tuple[int, int, str]]:
    """(episode, target step, prompt) for every step of every episode that has `context` frames before it."""
    out = []
    for e in range(codes.shape[0]):
        for t in range(context, codes.shape[1]):
            out.append((e, t, vt.prompt_text(codes[e, t - context:t], actions[e, t - context:t])))
    return out


def mle_examples(tokenizer, codes: np.ndarray, actions: np.ndarray, context: int) -> list[dict]:
    """Teacher-forcing examples: prompt tokens labelled -100, the next frame's codes and <|im_end|> learned."""
    examples = []
    for e, t, prompt in transitions(codes, actions, context):
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        target = tokenizer(vt.frame_text(codes[e, t]), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        examples.append({"input_ids": p + target, "labels": [-100] * len(p) + target})
    return examples


def build_model(tokenizer, sizes: VideoSizes, seed: int):
    """The tiny causal LM over frame codes, on the GPU where there is one."""
    # Here, not at the top (torch, wmkit.core): --help imports this module (video/registry.py).
    import torch

    from wmkit.core.models import build_tiny_model

    model = build_tiny_model(tokenizer, sizes.model, seed=seed)
    return model.to("cuda") if torch.cuda.is_available() else model


def train_mle(model, tokenizer, codes, actions, sizes: VideoSizes, seed: int, show_progress: bool = False) -> list[float]:
    """MLE (teacher forcing) in place; the loss of every step."""
    from wmkit.core.sft import CompletionOnlyConfig, train_completion_only  # here: torch; --help imports this

    config = CompletionOnlyConfig(epochs=sizes.mle_epochs, learning_rate=sizes.mle_learning_rate,
                                  batch_size=sizes.mle_batch_size, seed=seed, batching="shuffled_stream",
                                  show_progress=show_progress, progress_desc="MLE")
    return train_completion_only(model, tokenizer, mle_examples(tokenizer, codes, actions, sizes.context_frames),
                                 config)


def one_step(model, tokenizer, codebook: vt.PatchCodebook, traj: fr.Trajectories, codes: np.ndarray,
             sizes: VideoSizes, seed: int = 0) -> dict:
    """Next-frame metrics from real context frames, greedy and sampled (T=1), on all and on changed steps.

    ``copy_rate``: share of changed steps whose greedy prediction is the last context frame again (a
    frozen video: the repetition artefact RLVR-World reports falling after RL)."""
    k = sizes.context_frames
    items = transitions(codes, traj.actions, k)[:sizes.eval_transitions]
    prompts = [p for _, _, p in items]
    truth = np.stack([traj.frames[e, t] for e, t, _ in items])
    changed = np.array([bool(np.any(traj.frames[e, t] != traj.frames[e, t - 1])) for e, t, _ in items])
    h, w = truth.shape[1:3]
    n = codes.shape[-1]
    out = {"n": len(items), "n_changed": int(changed.sum())}
    for mode, sample in (("greedy", False), ("sampled", True)):
        pred_codes = vm.predict_codes(model, tokenizer, prompts, n, do_sample=sample,
                                      num_samples=sizes.eval_samples, seed=seed)
        s = pred_codes.shape[1]
        preds = codebook.decode(pred_codes.reshape(-1, n), h, w)
        metrics = vm.frame_metrics(preds, np.repeat(truth, s, axis=0))
        per_item = {m: v.reshape(-1, s).mean(1) for m, v in metrics.items()}
        out[mode] = {m: float(v.mean()) for m, v in per_item.items()}
        out[mode].update({f"{m}_changed": float(v[changed].mean()) if changed.any() else None
                          for m, v in per_item.items()})
        out[mode].update({f"{m}_unchanged": float(v[~changed].mean()) if (~changed).any() else None
                          for m, v in per_item.items()})
        out[mode]["exact"] = float(np.mean([np.array_equal(p, codes[e, t]) for (e, t, _), p
                                            in zip(np.repeat(np.array(items, dtype=object), s, axis=0),
                                                   pred_codes.reshape(-1, n))]))
        if mode == "greedy":
            last = np.stack([codes[e, t - 1] for e, t, _ in items])
            copies = np.all(pred_codes[:, 0] == last, axis=1)
            out["copy_rate_changed"] = float(copies[changed].mean()) if changed.any() else None
            right = np.all(pred_codes[:, 0] == np.stack([codes[e, t] for e, t, _ in items]), axis=1)
            out["exact_changed"] = float(right[changed].mean()) if changed.any() else None
            out["exact_unchanged"] = float(right[~changed].mean()) if (~changed).any() else None
            out["agent_missing"] = float(1.0 - fr.agent_visible(preds).mean())
    return out


def rollout(model, tokenizer, codebook: vt.PatchCodebook, traj: fr.Trajectories, codes: np.ndarray,
            sizes: VideoSizes, episodes: int | None = None) -> dict:
    """Greedy multi-step rollouts: start from the first `context_frames` real frames of each held-out
    episode and predict `horizon` frames, each fed back as context (missing codes filled with code 0,
    the most frequent patch). Metrics per horizon step, averaged over episodes, and the predicted frames."""
    k, horizon = sizes.context_frames, min(sizes.horizon, traj.steps + 1 - sizes.context_frames)
    n_ep = min(episodes or sizes.rollout_episodes, len(traj))
    n = codes.shape[-1]
    h, w = traj.frames.shape[2:4]
    context = [list(codes[e, :k]) for e in range(n_ep)]
    predicted = []
    for step in range(horizon):
        prompts = [vt.prompt_text(context[e][-k:], traj.actions[e, step:step + k]) for e in range(n_ep)]
        pred = vm.predict_codes(model, tokenizer, prompts, n)[:, 0]
        predicted.append(pred)
        for e in range(n_ep):
            context[e].append(np.where(pred[e] < 0, 0, pred[e]))
    pred_codes = np.stack(predicted, axis=1)  # [episodes, horizon, n]
    pred_frames = codebook.decode(pred_codes, h, w)
    truth = traj.frames[:n_ep, k:k + horizon]
    curves = {m: [] for m in METRICS}
    for step in range(horizon):
        metrics = vm.frame_metrics(pred_frames[:, step], truth[:, step])
        for m in METRICS:
            curves[m].append(float(metrics[m].mean()))
    curves["agent_missing"] = (1.0 - fr.agent_visible(pred_frames).mean(axis=0)).tolist()
    return {"episodes": n_ep, "horizon": horizon, "curves": curves,
            "mean": {m: float(np.mean(curves[m])) for m in (*METRICS, "agent_missing")}, "frames": pred_frames}


def measure(model, tokenizer, codebook, traj, codes, sizes: VideoSizes, seed: int = 0) -> dict:
    return {"one_step": one_step(model, tokenizer, codebook, traj, codes, sizes, seed),
            "rollout": rollout(model, tokenizer, codebook, traj, codes, sizes)}


RL_ARMS = ("all", "changed")
"""The data GRPO trains on: ``all`` -- every training transition, as they come (about half change
the picture); ``changed`` -- every changed transition plus `rl_unchanged_ratio` x as many unchanged
ones (RLVR-World's recipe for its text world models, which notebook 02 uses)."""


def rl_items(traj: fr.Trajectories, codes: np.ndarray, sizes: VideoSizes, seed: int,
             arm: str = "all") -> list[tuple[int, int, str]]:
    """The transitions of RL arm `arm` (`RL_ARMS`), shuffled with `seed`. An unchanged frame the MLE
    model already copies right gives a group of identical rewards: no advantage, no gradient."""
    if arm not in RL_ARMS:
        raise ValueError(f"Unknown RL arm {arm!r}: choose one of {', '.join(RL_ARMS)}")
    items = transitions(codes, traj.actions, sizes.context_frames)
    rng = random.Random(seed)
    if arm == "all":
        rng.shuffle(items)
        return items
    moved = [bool(np.any(traj.frames[e, t] != traj.frames[e, t - 1])) for e, t, _ in items]
    changed = [it for it, m in zip(items, moved) if m]
    unchanged = [it for it, m in zip(items, moved) if not m]
    rng.shuffle(unchanged)
    chosen = changed + unchanged[:round(sizes.rl_unchanged_ratio * len(changed))]
    rng.shuffle(chosen)
    return chosen


def train_rl(model, tokenizer, codebook, traj: fr.Trajectories, codes: np.ndarray, sizes: VideoSizes,
             seed: int, out_dir: str | Path, arm: str = "all", show_progress: bool = False):
    """GRPO on the pixel reward of the decoded next frame, every parameter (the tiny model is smaller
    than a LoRA of a 1B model); returns (trained copy, RLVRResult). `model` is left as it was."""
    from wmkit.core.world_model_rl import RLVRConfig, train_rlvr  # here: torch; --help imports this module

    items = rl_items(traj, codes, sizes, seed, arm)
    targets = np.stack([traj.frames[e, t] for e, t, _ in items])
    rows = [{"prompt": p, "target_index": i} for i, (_, _, p) in enumerate(items)]
    if sizes.grpo.max_completion_length != codes.shape[-1] + 1:
        raise ValueError(f"grpo.max_completion_length {sizes.grpo.max_completion_length} must be a frame's codes and "
                         f"its end token, {codes.shape[-1] + 1}")
    config = RLVRConfig.of(sizes.grpo, output_dir=str(out_dir), lora=False, seed=seed,
                           save_steps=max(10, sizes.grpo.max_steps // 2), show_progress=show_progress, resume=True)
    reward = vm.VideoReward(codebook, targets, sizes.reward)
    result = train_rlvr(model, tokenizer, [], config, reward_funcs=[reward], prompt_rows=rows)
    return result.model, result


CONTRAST_ARM = "changed"
"""The RL arm the contrast reward (`VideoSizes.contrast_reward`) trains: the one where erasing the
agent paid most under -L1 in the validation runs."""


def contrast_key(sizes: VideoSizes) -> str | None:
    """The results key of the contrast arm, e.g. ``changed_l1``; None when the sizes have none."""
    return f"{CONTRAST_ARM}_{sizes.contrast_reward}" if sizes.contrast_reward else None


def arm_plan(sizes: VideoSizes) -> list[tuple[str, str, VideoSizes]]:
    """(results key, RL arm, sizes) of every GRPO copy one seed trains: each arm of `RL_ARMS` with
    the sizes' reward, then the contrast arm with the contrast reward."""
    plan = [(arm, arm, sizes) for arm in RL_ARMS]
    if sizes.contrast_reward:
        if sizes.contrast_reward not in vm.REWARD_NAMES:
            raise ValueError(f"Unknown contrast reward {sizes.contrast_reward!r}: choose one of "
                             f"{', '.join(vm.REWARD_NAMES)}")
        if sizes.contrast_reward == sizes.reward:
            raise ValueError(f"the contrast reward must differ from the reward ({sizes.reward!r})")
        plan.append((contrast_key(sizes), CONTRAST_ARM, replace(sizes, reward=sizes.contrast_reward)))
    return plan


def prepare_mle(sizes: VideoSizes, seed: int, show_progress: bool = False):
    """The data, codebook, codes, vocabulary and the seed's MLE model (trained here), the MLE losses
    and the seconds each part took: the start every RL run of the seed shares."""
    import torch  # here: --help imports this module (video/registry.py) and must not import torch

    torch.manual_seed(seed)
    timings = {}
    start = time.perf_counter()
    data = make_data(sizes)
    codebook = vt.fit_codebook(data["train"].frames, sizes.codebook_size, sizes.patch, seed=0)
    codes = {name: codebook.encode(t.frames) for name, t in data.items()}
    tokenizer = vt.build_vocabulary(codebook.size)
    timings["data_and_tokenizer"] = time.perf_counter() - start
    start = time.perf_counter()
    model = build_model(tokenizer, sizes, seed)
    losses = train_mle(model, tokenizer, codes["train"], data["train"].actions, sizes, seed, show_progress)
    timings["mle"] = time.perf_counter() - start
    return data, codebook, codes, tokenizer, model, losses, timings


def run_video_seed(profile: Profile, seed: int, out_dir: str, sizes: VideoSizes | None = None,
                   show_progress: bool = False, keep_frames: int = 4) -> dict:
    """One seed of the whole experiment (module docstring), every arm of `RL_ARMS` from the same MLE
    model. JSON-ready apart from the picture arrays under ``pictures`` (uint8 rollout frames of the
    first `keep_frames` test episodes: truth, mle and each arm)."""
    sizes = sizes or video_sizes(profile)
    data, codebook, codes, tokenizer, model, losses, timings = prepare_mle(sizes, seed, show_progress)
    start = time.perf_counter()
    mle = measure(model, tokenizer, codebook, data["test"], codes["test"], sizes, seed)
    timings["measure_mle"] = time.perf_counter() - start
    shown = mle["rollout"].pop("frames")[:keep_frames]
    pictures = {"truth": data["test"].frames[:len(shown), sizes.context_frames:][:, :shown.shape[1]], "mle": shown}

    arms = {}
    for key, arm, arm_sizes in arm_plan(sizes):
        start = time.perf_counter()
        rl_model, result = train_rl(model, tokenizer, codebook, data["train"], codes["train"], arm_sizes, seed,
                                    Path(out_dir) / f"seed{seed}" / f"{key}-{sizes_key(arm_sizes)}", arm,
                                    show_progress)
        timings[f"rlvr_{key}"] = time.perf_counter() - start
        start = time.perf_counter()
        measured = measure(rl_model, tokenizer, codebook, data["test"], codes["test"], arm_sizes, seed)
        timings[f"measure_{key}"] = time.perf_counter() - start
        pictures[key] = measured["rollout"].pop("frames")[:keep_frames]
        arms[key] = {**measured, "reward": arm_sizes.reward, "rl_steps": result.steps,
                     "n_rl_transitions": result.n_train,
                     "reward_curve": result.curve(f"rewards/video_{arm_sizes.reward}/mean") or result.curve("reward"),
                     "reward_std_curve": result.curve("reward_std"),
                     "zero_std_share": result.curve("frac_reward_zero_std"),
                     "moved": parameters_moved(model, rl_model)}
        del rl_model

    return {"seed": seed, "sizes": asdict(sizes), "codebook_size": codebook.size,
            "reconstruction": vt.reconstruction_error(codebook, data["test"].frames),
            "n_train_transitions": len(transitions(codes["train"], data["train"].actions, sizes.context_frames)),
            "changed_share_train": float(data["train"].changed().mean()),
            "mle_loss": {"first": losses[0], "last": losses[-1], "steps": len(losses)}, "mle": mle, "arms": arms,
            "seconds": {k: round(v, 1) for k, v in timings.items()}, "pictures": pictures}


def sizes_key(sizes: VideoSizes) -> str:
    """A short hash of the sizes: checkpoints of runs with other sizes go to other folders, so a rerun
    with, say, a larger group never resumes from a checkpoint trained with the old one."""
    return hashlib.sha256(json.dumps(asdict(sizes), sort_keys=True).encode()).hexdigest()[:10]


def parameters_moved(before, after) -> float:
    """Relative L2 change of the parameters, ||θ_after − θ_before|| / ||θ_before|| (0: RL did nothing)."""
    import torch  # here: --help imports this module (video/registry.py) and must not import torch

    num, den = 0.0, 0.0
    with torch.no_grad():
        for (_, a), (_, b) in zip(before.named_parameters(), after.named_parameters()):
            num += float(((b.float() - a.float()) ** 2).sum())
            den += float((a.float() ** 2).sum())
    return (num / den) ** 0.5 if den else 0.0


def _scopes():
    return (("one_step_greedy", lambda r, m: r["one_step"]["greedy"][m]),
            ("one_step_greedy_changed", lambda r, m: r["one_step"]["greedy"][f"{m}_changed"]),
            ("one_step_sampled", lambda r, m: r["one_step"]["sampled"][m]),
            ("rollout", lambda r, m: r["rollout"]["mean"][m]))


def paired_table(runs: Sequence[dict], arm: str = "all") -> dict:
    """Per scope and metric: MLE and RLVR (`arm`) over seeds and the paired difference RLVR − MLE."""
    table = {}
    for scope, getter in _scopes():
        for m in METRICS:
            before = [getter(r["mle"], m) for r in runs]
            after = [getter(r["arms"][arm], m) for r in runs]
            table[f"{scope}_{m}"] = {"mle": summarize(before), "rlvr": summarize(after),
                                     "difference": summarize(differences(after, before))}
    for key in ("copy_rate_changed", "exact_changed", "agent_missing"):
        before = [r["mle"]["one_step"][key] for r in runs]
        after = [r["arms"][arm]["one_step"][key] for r in runs]
        table[key] = {"mle": summarize(before), "rlvr": summarize(after),
                      "difference": summarize(differences(after, before))}
    before = [r["mle"]["rollout"]["mean"]["agent_missing"] for r in runs]
    after = [r["arms"][arm]["rollout"]["mean"]["agent_missing"] for r in runs]
    table["rollout_agent_missing"] = {"mle": summarize(before), "rlvr": summarize(after),
                                      "difference": summarize(differences(after, before))}
    return table


AGENT_TOLERANCE = 0.02
"""How much more often than the MLE model an RL model may leave the agent out of its greedy one-step
predictions before its lower copy rate stops counting as less repetition (2 points of the test steps)."""


COPYING_THRESHOLD = 0.5
"""An MLE model whose greedy copy rate on the held-out changed steps is at least this is in the
*copying* regime, else the *moving* one. At the cpu size MLE ends in either: some seeds learn the
moves by teacher forcing alone, others learn to repeat the last frame. RL on changed transitions has
something to fix only in the copying one (tutorials/video_world_models.md)."""


def start_regime(result: dict) -> str | None:
    """"copying" or "moving": the regime of one seed's MLE model, read from its copy rate before any RL
    (None when the held-out steps had no changed step to measure it on). "moving" means only "not
    copying": at the cpu size such a model has learned most moves; an untrained one (smoke) has not."""
    copy_rate = result["mle"]["one_step"]["copy_rate_changed"]
    if copy_rate is None:
        return None
    return "copying" if copy_rate >= COPYING_THRESHOLD else "moving"


def agent_kept(runs: Sequence[dict] | dict, arm: str = "all") -> str | None:
    """Precondition of the repetition claims: in every seed the RL model drops the agent from at most
    `AGENT_TOLERANCE` more greedy predictions than its MLE model. None when it holds, else the reason.
    A prediction that erases the agent is not a repeated frame, so a copy rate that falls that way is
    reward hacking (−L1 charges one wrong cell for a missing agent, two for a misplaced one), not the
    paper's effect. `runs`: a list of seeds' results, or the benchmark's {seed: result}."""
    items = sorted(runs.items()) if isinstance(runs, dict) else list(enumerate(runs))
    erased = [(s, r["arms"][arm]["one_step"]["agent_missing"] - r["mle"]["one_step"]["agent_missing"])
              for s, r in items]
    bad = [(s, d) for s, d in erased if d > AGENT_TOLERANCE]
    if not bad:
        return None
    return ("RL erased the agent from more predictions than MLE (" + ", ".join(f"seed {s}: {d:+.2f}" for s, d in bad)
            + "): a lower copy rate that way is reward hacking, not less repetition")


def agent_kept_all(results: dict) -> str | None:
    """`agent_kept` for the benchmark's RL-on-all-transitions arm."""
    return agent_kept(results, "all")


def agent_kept_changed(results: dict) -> str | None:
    """`agent_kept` for the benchmark's RL-on-changed-transitions arm."""
    return agent_kept(results, "changed")


L1_GAIN_SCOPES = {"rollout": ("rollout", "mean", "l1"), "one_step": ("one_step", "greedy", "l1"),
                  "one_step_changed": ("one_step", "greedy", "l1_changed"),
                  "one_step_unchanged": ("one_step", "greedy", "l1_unchanged")}
"""Where each scope of :func:`relative_l1_gain` reads its L1: greedy rollouts (mean over the horizon),
greedy one-step predictions on all held-out steps, on the steps whose picture changes, and on the
steps where it does not."""


def relative_l1_gain(runs: Sequence[dict], arm: str = "all", scope: str = "rollout") -> list[float | None]:
    """Per seed: (L1_MLE − L1_RLVR) / L1_MLE, the form of RLVR-World's "+9.2% relative LPIPS" (higher
    is better). `scope`: a key of :data:`L1_GAIN_SCOPES`. None where the MLE model's L1 is 0 or missing
    (no changed, or no unchanged, held-out step)."""
    if scope not in L1_GAIN_SCOPES:
        raise ValueError(f"Unknown scope {scope!r}: choose one of {', '.join(L1_GAIN_SCOPES)}")

    def get(x):
        node = x
        for key in L1_GAIN_SCOPES[scope]:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    out = []
    for r in runs:
        before, after = get(r["mle"]), get(r["arms"][arm])
        out.append((before - after) / before if before and after is not None else None)
    return out


def run_rlvr_video(profile: Profile, seed: int, runs_root: Path, sizes) -> dict:
    """The benchmark's one-seed run: :func:`run_video_seed` without its pictures, plus the per-seed
    relative L1 gains the ``rlvr.video`` claim reads."""
    result = run_video_seed(profile, seed, str(bench_work_dir(runs_root, "rlvr_video", seed)), sizes)
    result.pop("pictures")
    result["relative_l1_gain"] = {key: {scope: relative_l1_gain([result], key, scope)[0] for scope in L1_GAIN_SCOPES}
                                  for key in result["arms"]}
    return jsonable(result)


def run_video_seed_record(profile: Profile, seed: int, runs_root: Path, sizes: VideoSizes) -> dict:
    """``python -m wmkit run rlvr-video``, one seed: :func:`run_video_seed` without its pictures
    (checkpoints in runs_root/06_video_seeds)."""
    result = run_video_seed(profile, seed, str(Path(runs_root) / "06_video_seeds"), sizes)
    result.pop("pictures")
    return result


def combine_video_seeds(profile: Profile, records: dict[int, dict], sizes: VideoSizes) -> dict:
    """The seeds' runs, with the paired MLE / RLVR table and the relative L1 gains of every arm."""
    runs = list(records.values())
    return {"profile": profile.name, "runs": runs,
            "tables": {key: paired_table(runs, key) for key in runs[0]["arms"]},
            "relative_l1_gain": {key: summarize(relative_l1_gain(runs, key)) for key in runs[0]["arms"]}}


# ---------------------------------------------------------------- choosing the settings on validation

SELECTION_REWARDS = ("l1", "l1_ssim", "l1_agent", "l1_agent_cell", "l1_agent_present")
"""Rewards compared on the validation episodes (l1_lpips needs weights this machine cannot fetch);
a reward added later is scored beside the earlier ones' jobs (`merge_selection_jobs`). Why these
five: see research/README.md, 'Video settings'."""
SELECTION_LEARNING_RATES = (3e-4, 1e-3)
"""GRPO learning rates compared on the validation episodes: the one chosen before (on test episodes,
one seed) and a larger one (two of a 2-core machine's budget; 1e-4 had barely moved the model)."""
SELECTION_SEEDS = (0, 1, 2)
"""Seeds of the selection, fixed before it ran (the test measurements use the same seed numbers,
but every number of a selection is measured on validation episodes, never on test ones)."""


def run_selection_job(profile: Profile, seed: int, reward: str, out_dir: str, sizes: VideoSizes | None = None,
                      learning_rates: Sequence[float] = SELECTION_LEARNING_RATES) -> dict:
    """One seed and one reward of the selection: the seed's MLE model, then a GRPO copy per learning
    rate and RL arm, every model measured on the *validation* episodes. The MLE model depends on the
    seed only, so the jobs of one seed with different rewards train the same one (``mle`` twice)."""
    if reward not in vm.REWARD_NAMES:
        raise ValueError(f"Unknown video reward {reward!r}: choose one of {', '.join(vm.REWARD_NAMES)}")
    if not learning_rates or any(lr <= 0 for lr in learning_rates):
        raise ValueError(f"learning_rates must be positive numbers, not {list(learning_rates)!r}")
    sizes = replace(sizes or video_sizes(profile), reward=reward)
    data, codebook, codes, tokenizer, model, losses, timings = prepare_mle(sizes, seed)
    val = data["val"]
    mle = measure(model, tokenizer, codebook, val, codes["val"], sizes, seed)
    mle["rollout"].pop("frames")
    settings = []
    for lr in learning_rates:
        for arm in RL_ARMS:
            start = time.perf_counter()
            run_sizes = replace(sizes, grpo=replace(sizes.grpo, learning_rate=lr))
            rl_model, _ = train_rl(model, tokenizer, codebook, data["train"], codes["train"], run_sizes, seed,
                                        Path(out_dir) / f"seed{seed}" / f"{arm}-{sizes_key(run_sizes)}", arm)
            measured = measure(rl_model, tokenizer, codebook, val, codes["val"], run_sizes, seed)
            measured["rollout"].pop("frames")
            settings.append({"reward": reward, "learning_rate": lr, "arm": arm, **measured,
                             "moved": parameters_moved(model, rl_model),
                             "seconds": round(time.perf_counter() - start, 1)})
            del rl_model
    return {"seed": seed, "reward": reward, "split": "val", "n_val_episodes": len(val), "mle": mle,
            "mle_loss_last": losses[-1], "settings": settings, "seconds": {k: round(v, 1) for k, v in timings.items()}}


def merge_selection_jobs(new: Sequence[dict], earlier: Sequence[dict]) -> list[dict]:
    """The jobs of a new selection round plus the earlier round's jobs of the (seed, reward) pairs not
    rerun. The MLE model depends on the seed only, so both rounds must have measured the same MLE
    numbers per seed; a ValueError names the seeds where they did not (the rounds did not start from
    the same model and must not share a table)."""
    rerun = {(j["seed"], j["reward"]) for j in new}
    kept = [j for j in earlier if (j["seed"], j["reward"]) not in rerun]
    mle = {}
    for job in list(new) + kept:
        mle.setdefault(job["seed"], set()).add(json.dumps(job["mle"]["rollout"]["mean"], sort_keys=True))
    differing = [f"seed {s}" for s, values in sorted(mle.items()) if len(values) > 1]
    if differing:
        raise ValueError("the MLE models of the two selection rounds measured differently on validation ("
                         + ", ".join(differing) + "): rerun every reward in one round instead")
    return list(new) + kept


def selection_table(jobs: Sequence[dict]) -> list[dict]:
    """Per (reward, learning rate): the relative rollout L1 gain on validation, (MLE − RL) / MLE, per
    seed and arm, its mean, and whether every seed and arm kept the agent (`AGENT_TOLERANCE`)."""
    rows: dict[tuple[str, float], dict] = {}
    for job in jobs:
        before = job["mle"]["rollout"]["mean"]["l1"]
        for s in job["settings"]:
            row = rows.setdefault((s["reward"], s["learning_rate"]),
                                  {"reward": s["reward"], "learning_rate": s["learning_rate"], "gains": {},
                                   "agent_missing_increase": {}})
            key = f"seed{job['seed']}/{s['arm']}"
            row["gains"][key] = (before - s["rollout"]["mean"]["l1"]) / before if before > 0 else 0.0
            row["agent_missing_increase"][key] = (s["one_step"]["agent_missing"]
                                                  - job["mle"]["one_step"]["agent_missing"])
    for row in rows.values():
        row["mean_gain"] = float(np.mean(list(row["gains"].values())))
        row["agent_kept"] = all(d <= AGENT_TOLERANCE for d in row["agent_missing_increase"].values())
    return sorted(rows.values(), key=lambda r: (r["reward"], r["learning_rate"]))


def selection_markdown(table: Sequence[dict]) -> str:
    """The selection table as markdown rows (for the notebook and the docs, written from the JSON rather
    than by hand): reward and lr, mean gain, agent kept, and per seed the increase of one-step
    predictions without the agent (all / changed arm)."""
    header = ("| reward, lr | mean relative rollout L1 gain (val) | agent kept | more one-step predictions "
              "without the agent than MLE, per seed (all / changed arm) |")
    lines = [header, "|---|---|---|---|"]

    def signed(x: float, digits: int = 2) -> str:
        return f"{x:+.{digits}f}".replace("-", "−")

    for row in table:
        increase = row["agent_missing_increase"]
        seeds = sorted({int(key.split("/")[0][len("seed"):]) for key in increase})
        per_seed = ", ".join(f"seed {seed}: " + " / ".join(signed(increase[f"seed{seed}/{arm}"]) for arm in RL_ARMS
                                                           if f"seed{seed}/{arm}" in increase) for seed in seeds)
        lr = f"{row['learning_rate']:.0e}".replace("e-0", "e-")
        lines.append(f"| `{row['reward']}`, {lr} | {signed(100 * row['mean_gain'], 1)}% | "
                     f"{'yes' if row['agent_kept'] else 'no'} | {per_seed} |")
    return "\n".join(lines)


def choose_setting(table: Sequence[dict]) -> dict:
    """The rule, fixed before the selection ran: among the settings that kept the agent in every seed
    and arm on validation (a gain made by erasing it is reward hacking), the highest mean relative
    rollout L1 gain over seeds and both arms; when none kept it, the highest gain of all, flagged."""
    if not table:
        raise ValueError("no selection rows: run run_selection_job first")
    kept = [r for r in table if r["agent_kept"]]
    best = max(kept or table, key=lambda r: r["mean_gain"])
    return {"reward": best["reward"], "learning_rate": best["learning_rate"], "mean_gain": best["mean_gain"],
            "agent_kept": best["agent_kept"],
            "rule": "highest mean relative rollout L1 gain on validation among settings that kept the agent"}
