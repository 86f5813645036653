"""Whole jobs built from the library's pieces: build a world model, evaluate it.

Notebook 01 calls `build_world_model` and `evaluate_world_model`; later notebooks call
`ensure_world_model`, which loads notebook 01's saved model or, when it is missing (a
notebook opened alone in Colab, say), rebuilds it with the same call at the profile's size.
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from wmkit.core import models
from wmkit.core.sft import SFTConfig, SFTResult, train_sft
from wmkit.core.worldmodel import (
    baseline_predictions,
    baseline_predictor,
    collect_transitions,
    model_predictor,
    predict_diffs,
    prompt_text,
    rollout_accuracy,
    rollout_windows,
    select_eval_set,
    split_by_episode,
    summarize,
)
from wmkit.envs import ENVIRONMENTS, get_environment, registered_name, tokenizer_prompts
from wmkit.envs.base import Transition
from wmkit.envs.textgame import DIFFICULTIES
from wmkit.profiles import Profile, check_profile, check_seed, check_sizes
from wmkit.runs import make_folder, model_damage, warn
from wmkit.stats import all_of, verdict

DEFAULT_ENVS = ("textgame", "phone")


FINAL = "final"  # subfolder holding the finished model


@dataclass
class WorldModelRun:
    """A trained world model and what it was trained on."""

    folder: Path
    """Folder of the saved model (load it with `load_world_model`)."""
    model: object
    tokenizer: object
    splits: dict[str, list[Transition]]
    """train / val / test transitions (split by episode)."""
    sft: SFTResult | None = None
    """Training log (None when the model was loaded rather than trained)."""
    info: dict = field(default_factory=dict)
    """Profile, seed, model size, data sizes, timings."""


def tokenizer_corpus(transitions: Sequence[Transition]) -> list[str]:
    """Text the from-scratch tokenizer is trained on: everything a prompt or target holds (the system
    prompts of the kit's environments and of any other environment among the transitions')."""
    texts = tokenizer_prompts(t.env for t in transitions) + ["system user assistant State: Action:"]
    for t in transitions:
        texts += [t.state, t.action, t.diff]
    return texts


def _check_envs(envs: Sequence[str]) -> tuple[str, ...]:
    """`envs` as the names they are registered under; a ValueError names the unknown ones."""
    if isinstance(envs, str):
        envs = (envs,)
    names = [registered_name(e) for e in envs]
    unknown = [e for e, name in zip(envs, names) if name is None]
    if unknown or not envs:
        raise ValueError(f"Unknown environment(s) {unknown}: choose from {', '.join(ENVIRONMENTS)}")
    return tuple(names)


def make_splits(profile: Profile, envs: Sequence[str] = DEFAULT_ENVS, seed: int = 0,
                difficulty: str | None = None):
    """Collect the profile's transitions (the text game at `difficulty`) and split them by episode."""
    return split_by_episode(collect_transitions(_check_envs(envs), profile.world_model.episodes, seed,
                                                difficulty=difficulty))


def _check_difficulty(difficulty: str | None) -> str | None:
    """A difficulty name of the text game (None and "full": the full game, recorded as None)."""
    if difficulty is None or difficulty == "full":
        return None
    if not isinstance(difficulty, str) or difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTIES)} (the text game's world size), "
                         f"not {difficulty!r}")
    return difficulty


@dataclass
class TokenBudget:
    """How the transitions of a build fit its token limits (`token_budget`)."""

    n: int
    """Transitions counted (every split)."""
    longest_diff: int
    """Tokens of the longest target diff (what the world model must write; without the end-of-turn token)."""
    diffs_over_max_new_tokens: int
    """Transitions whose diff needs more than `max_new_tokens`: predictions of them are cut and rarely parse."""
    longest_example: int
    """Tokens of the longest prompt + diff + end-of-turn (what training sees)."""
    examples_over_max_length: int
    """Transitions longer than `max_length`: left out of training."""
    max_new_tokens: int
    max_length: int

    def problems(self) -> list[str]:
        """One sentence per limit that is too small, with the numbers to raise it to (empty: both fit)."""
        out = []
        if self.diffs_over_max_new_tokens:
            out.append(f"max_new_tokens={self.max_new_tokens} is too small: the longest target diff has "
                       f"{self.longest_diff} tokens and {self.diffs_over_max_new_tokens} of {self.n} diffs need "
                       f"more than {self.max_new_tokens} (their predictions are cut off and rarely parse); "
                       f"set max_new_tokens to at least {self.longest_diff + 1} (the diff and its end-of-turn token)")
        if self.examples_over_max_length:
            out.append(f"max_length={self.max_length} is too small: the longest prompt + diff has "
                       f"{self.longest_example} tokens and {self.examples_over_max_length} of {self.n} transitions "
                       f"are longer (left out of training); set max_length to at least {self.longest_example}")
        return out

    def __str__(self) -> str:
        return "; ".join(self.problems()) or (
            f"both limits fit: the longest diff has {self.longest_diff} tokens (max_new_tokens={self.max_new_tokens}), "
            f"the longest prompt + diff {self.longest_example} (max_length={self.max_length})")


def token_budget(profile: Profile, envs: Sequence[str] = DEFAULT_ENVS, seed: int = 0, tokenizer=None,
                 difficulty: str | None = None) -> TokenBudget:
    """Count, before a build, whether the profile's `max_new_tokens` and `max_length` fit the transitions
    `build_world_model(profile, ..., envs, seed)` would collect: the tokens of each target diff and of each
    prompt + diff, with `tokenizer`, or (None) the from-scratch tokenizer the build would train (on the same
    training split, so the counts are the build's own). Seconds: no model is made."""
    check_profile(profile)
    wm = profile.world_model
    splits = make_splits(profile, _check_envs(envs), seed, _check_difficulty(difficulty))
    if tokenizer is None:
        tokenizer = models.train_tokenizer(tokenizer_corpus(splits["train"]), wm.model.vocab_size)
    transitions = [t for split in splits.values() for t in split]
    if not transitions:
        raise ValueError(f"no transitions collected for {', '.join(envs)} at profile {profile.name}")
    diffs = [len(ids) for ids in tokenizer([t.diff for t in transitions], add_special_tokens=False)["input_ids"]]
    prompts = tokenizer([prompt_text(tokenizer, t.env, t.state, t.action) for t in transitions],
                        add_special_tokens=False)["input_ids"]
    examples = [len(p) + d + 1 for p, d in zip(prompts, diffs)]  # + the end-of-turn token, as in training
    return TokenBudget(n=len(transitions), longest_diff=max(diffs),
                       diffs_over_max_new_tokens=sum(d > wm.max_new_tokens for d in diffs),
                       longest_example=max(examples), examples_over_max_length=sum(e > wm.max_length for e in examples),
                       max_new_tokens=wm.max_new_tokens, max_length=wm.max_length)


def build_world_model(profile: Profile, out_dir: str | Path, seed: int = 0,
                      envs: Sequence[str] = DEFAULT_ENVS, model: str | None = None, resume: bool = True, show_progress: bool = True,
                      difficulty: str | None = None, trl_args: dict | None = None) -> WorldModelRun:
    """Collect data, make the model, train it by MLE (completion-only SFT) and save it in `out_dir`.

    `profile` (a `wmkit.profiles.Profile`, resolved once at the entry from its name) and `out_dir`
    have no default: a silent "auto" evaluated a smoke build at cpu sizes, and a default folder landed
    relative to whatever the current directory was.

    `model` None is the profile's default ("tiny" for smoke and cpu, "pretrained" for gpu);
    "tiny": a from-scratch Llama with a tokenizer trained on the training split. Anything else
    ("pretrained", "smollm2", a folder, a hub id) is loaded and trained with LoRA.
    `difficulty` names the text game's world size (`wmkit.envs.textgame.DIFFICULTIES`; None: full).
    `trl_args`: any other ``TrainingArguments`` field for the Trainer (`SFTConfig.trl_args`).
    """
    check_profile(profile)
    check_seed(seed)
    envs = _check_envs(envs)
    difficulty = _check_difficulty(difficulty)
    wm = profile.world_model
    check_sizes(wm, "world_model.")
    model_name = models.resolve_model_name(model, profile.default_model)  # "pretrained": hub id or SmolLM2
    models.check_model(model_name)  # an unknown or unreachable model fails before the data is collected
    out_dir = make_folder(out_dir)
    start = time.perf_counter()
    splits = make_splits(profile, envs, seed, difficulty)
    torch.manual_seed(seed)
    if model_name == "tiny":
        tokenizer = models.train_tokenizer(tokenizer_corpus(splits["train"]), wm.model.vocab_size)
        net = models.build_tiny_model(tokenizer, wm.model, seed=seed)
        learning_rate, lora = wm.learning_rate, False
    else:
        net, tokenizer = models.load_model(model_name)
        # Gradient checkpointing: a pretrained model's activations are what fills a small GPU.
        net = models.add_lora(net, gradient_checkpointing=torch.cuda.is_available())
        learning_rate, lora = 2e-4, True
    run_key = {"profile": profile.name, "seed": seed, "envs": list(envs), "model": model_name,
               "sizes": asdict(wm)}
    # What the checkpoints are claimed with (wmkit.runs.checkpoint_to_resume): the data, the tokenizer and
    # the training settings all follow from these, so they name the run whole.
    if difficulty is not None:  # absent for the full game: checkpoints of older runs stay claimable
        run_key["difficulty"] = difficulty
    if trl_args:  # absent without a pass-through, likewise
        run_key["trl_args"] = dict(trl_args)
    config = SFTConfig(output_dir=str(out_dir / "checkpoints"), epochs=wm.epochs,
                       learning_rate=learning_rate, batch_size=wm.batch_size,
                       max_length=wm.max_length, seed=seed, resume=resume, show_progress=show_progress,
                       trl_args=dict(trl_args or {}))
    sft = train_sft(net, tokenizer, splits["train"], splits["val"], config, run_key=run_key)
    if lora:
        net = net.merge_and_unload()
    info = {
        "profile": profile.name, "seed": seed, "envs": list(envs), "model": model_name, "difficulty": difficulty,
        "parameters": models.count_parameters(net), "vocab_size": len(tokenizer),
        "n_transitions": {k: len(v) for k, v in splits.items()},
        "n_dropped_for_length": sft.n_dropped, "sft_steps": sft.steps,
        "seconds": round(time.perf_counter() - start, 1),
    }
    folder = models.save_model(net, tokenizer, out_dir / FINAL,
                               tiny_config=wm.model if model_name == "tiny" else None)
    (folder / "wmkit_info.json").write_text(json.dumps(info, indent=1))
    (folder / "sft_log.json").write_text(json.dumps(sft.log_history))
    return WorldModelRun(folder=folder, model=net, tokenizer=tokenizer, splits=splits, sft=sft, info=info)


def load_world_model(folder: str | Path) -> tuple[object, object, dict]:
    """(model, tokenizer, info) of a world model saved by `build_world_model`."""
    folder = Path(folder)
    model, tokenizer = models.load_model(str(folder))
    info_file = folder / "wmkit_info.json"
    info = json.loads(info_file.read_text()) if info_file.exists() else {}
    return model, tokenizer, info


def ensure_world_model(profile: Profile, out_dir: str | Path, seed: int = 0,
                       envs: Sequence[str] = DEFAULT_ENVS, difficulty: str | None = None,
                       show_progress: bool = True) -> WorldModelRun:
    """Load the world model saved in `out_dir`, or build it there if it is missing or damaged
    (`wmkit.runs.model_damage`: a truncated weights file, say; one warning line then)."""
    check_profile(profile)
    folder = Path(out_dir) / FINAL
    has_info = (folder / "wmkit_info.json").exists()
    damage = model_damage(folder) if has_info else None
    if has_info and damage is None:
        model, tokenizer, info = load_world_model(folder)
        if info.get("difficulty") != _check_difficulty(difficulty):
            raise ValueError(f"{folder} holds a world model of the text game at difficulty "
                             f"{info.get('difficulty') or 'full'}, not {difficulty or 'full'}: choose another folder")
        splits = make_splits(profile, info.get("envs", envs), info.get("seed", seed), info.get("difficulty"))
        return WorldModelRun(folder=folder, model=model, tokenizer=tokenizer, splits=splits, info=info)
    if has_info:  # an interrupted save, or a file damaged since: the checkpoints make it again
        warn(f"the world model in {folder} is damaged ({damage}): building it again "
             "(training resumes from its checkpoints)")
    else:
        print(f"No world model in {folder}: building one (profile {profile.name}, seed {seed}).")
    return build_world_model(profile, out_dir, seed=seed, envs=envs, difficulty=difficulty,
                             show_progress=show_progress)


def series_world_model(profile: Profile, runs_root: str | Path, seed: int = 0) -> WorldModelRun:
    """The world model of notebook 01 that the later experiments start from:
    ``runs_root/01_build_world_model/world_model``, built there when missing. Another `seed` is another
    model (its own initialisation and data split), in ``world_model_seed<seed>`` beside it: the
    benchmark's RLVR seeds each build their own, so that their spread holds the MLE model's too."""
    folder = "world_model" if seed == 0 else f"world_model_seed{seed}"
    return ensure_world_model(profile, Path(runs_root) / "01_build_world_model" / folder, seed=seed)


def prepare_series_world_model(profile: Profile, runs_root, sizes=None) -> None:
    """An experiment's ``prepare``: notebook 01's world model under `runs_root`, built when missing (the
    RLVR-World, RWML and WM-R1 experiments start from it or judge with it)."""
    series_world_model(profile, runs_root)


def evaluate_world_model(model, tokenizer, splits: dict[str, list[Transition]],
                         profile: Profile, seed: int = 0,
                         envs: Sequence[str] | None = None) -> dict:
    """The evaluation protocol of the kit, per environment.

    Returns {env: {"model_greedy", "model_sampled", "no_change", "most_frequent": summaries,
    "rollout": {name: [acc at k=1..K], "model_unparsed": [share of the model's diffs that did not
    parse at k=1..K]}}} plus the protocol settings.
    """
    wm = check_profile(profile).world_model
    envs = envs or sorted({t.env for t in splits["test"]})
    results: dict = {"protocol": {"max_new_tokens": wm.max_new_tokens, "sampled_temperature": 1.0,
                                  "sampled_n": wm.eval_samples, "seed": seed}}
    for env in envs:
        name = get_environment(env).name  # as the transitions carry it
        test_env = [t for t in splits["test"] if t.env == name]
        train_env = [t for t in splits["train"] if t.env == name]
        chosen = select_eval_set(test_env, wm.eval_transitions, seed)
        queries = [(t.env, t.state, t.action) for t in chosen]
        greedy = predict_diffs(model, tokenizer, queries, wm.max_new_tokens, progress=True)
        sampled = predict_diffs(model, tokenizer, queries, wm.max_new_tokens, do_sample=True,
                                num_samples=wm.eval_samples, seed=seed, progress=True)
        baselines = baseline_predictions(chosen, train_env)
        entry = {
            "model_greedy": summarize(chosen, greedy).to_dict(),
            "model_sampled": summarize(chosen, sampled).to_dict(),
            "no_change": summarize(chosen, [[p] for p in baselines["no_change"]]).to_dict(),
            "most_frequent": summarize(chosen, [[p] for p in baselines["most_frequent"]]).to_dict(),
            "examples": [{"state": t.state, "action": t.action, "gold": t.diff, "predicted": g[0]}
                         for t, g in list(zip(chosen, greedy))[:3]],
        }
        windows = rollout_windows(test_env, wm.rollout_k, wm.rollout_starts, seed)
        unparsed: list[float] = []
        entry["rollout"] = {
            "n_windows": len(windows),
            "model": rollout_accuracy(model_predictor(model, tokenizer, wm.max_new_tokens), windows, unparsed),
            # where the model's diff did not parse its state stayed as it was, as "no change" keeps it
            "model_unparsed": unparsed,
            "no_change": rollout_accuracy(baseline_predictor("no_change", train_env), windows),
            "most_frequent": rollout_accuracy(baseline_predictor("most_frequent", train_env), windows),
        }
        results[env] = entry
    return results


BASELINES = ("no_change", "most_frequent")
"""The two baselines every world-model number stands beside."""


def baseline_verdicts(evaluation: dict, env: str) -> dict[str, dict]:
    """Does the greedy model beat *both* baselines on `env`'s changed test transitions?

    Per measure ("changed": exact match; "partial_changed": the partial-credit reward), the
    kit's one verdict rule (:func:`wmkit.stats.verdict`) on the per-transition paired
    differences model − baseline (same transitions), once per baseline, combined with
    :func:`wmkit.stats.all_of` (reproduced only when both comparisons are). The interval is
    over the test transitions of this one trained model: it says whether *this* model beats the
    baselines on this test set, not whether training does so reliably (that needs seeds).
    Returns {measure: {"verdict", "reason", "model", "baselines", "differences"}}.
    """
    entry = evaluation[env]
    out = {}
    for measure, items in (("changed", "changed_items"), ("partial_changed", "partial_changed_items")):
        model = entry["model_greedy"][items]
        parts, means = [], {}
        for baseline in BASELINES:
            differences = [m - b for m, b in zip(model, entry[baseline][items])]
            means[baseline] = sum(differences) / len(differences) if differences else float("nan")
            same = bool(differences) and max(differences) == min(differences)
            parts.append(verdict(differences, "higher", 0.0, not_measured=(
                f"model and {baseline} differ by the same {differences[0]:+.3f} on all {len(differences)} changed "
                "transitions: no interval" if same else None)))
        name, reason = all_of(parts)
        out[measure] = {"verdict": name, "reason": reason, "model": entry["model_greedy"][measure],
                        "baselines": {b: entry[b][measure] for b in BASELINES}, "differences": means}
    return out


def run_summary(run: WorldModelRun) -> dict:
    """JSON-ready facts about a run (for results.json)."""
    out = dict(run.info)
    if run.sft is not None:
        out["sft"] = {k: v for k, v in asdict(run.sft).items() if k != "log_history"}
    return out
