"""The benchmark's executors: local processes (the default) and submitit (SLURM on a cluster; its
local executor here), which run the same (experiment, seed) jobs and give the same records."""
from __future__ import annotations

import importlib
import json
import sys
import time

import pytest

from wmkit.bench import runner as bench
from wmkit.bench.claims import CLAIMS, EXPERIMENTS
from wmkit.bench.executor import LocalProcesses, SubmititExecutor, make_executor
from wmkit.profiles import get_profile
from wmkit.runs import jsonable

submitit = pytest.importorskip("submitit")
cloudpickle = pytest.importorskip("cloudpickle")
# submitit's jobs unpickle their function in a fresh process, where this test module is not importable
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def square(x: int) -> int:
    return x * x


def test_make_executor_reads_the_command_line_and_refuses_what_does_not_apply(tmp_path):
    assert make_executor("local", workers=2) == LocalProcesses(2)
    assert make_executor("submitit-local", workers=2).cluster == "local"  # make bench's --workers 2: every run a job
    slurm = make_executor("slurm", threads=4, folder=tmp_path,
                          options=["slurm_partition=cpu", "timeout_min=90", "mem_gb=7.5"])
    assert (slurm.cluster, slurm.threads, slurm.folder) == ("slurm", 4, tmp_path)
    assert slurm.parameters == {"slurm_partition": "cpu", "timeout_min": 90, "mem_gb": 7.5}
    for call, words in ((lambda: make_executor("ray"), "--executor must be one of local, slurm, submitit-local"),
                        (lambda: make_executor("local", options=["a=1"]), "--executor-option applies to"),
                        (lambda: make_executor("slurm", options=["partition"]), "expected KEY=VALUE")):
        with pytest.raises(ValueError, match=words):
            call()
    with pytest.raises(ValueError, match="executor parameters .*no_such_parameter"):
        SubmititExecutor(tmp_path, cluster="local", parameters={"no_such_parameter": 1}).executor()


def test_submitit_local_jobs_return_their_results_in_job_order(tmp_path):
    done = []
    executor = SubmititExecutor(tmp_path / "jobs", cluster="local", poll_seconds=0.2)
    assert executor.run([(square, {"x": x}) for x in (3, 1, 2)], on_done=lambda i, r: done.append((i, r))) == [9, 1, 4]
    assert sorted(done) == [(0, 9), (1, 1), (2, 4)]
    assert len(list((tmp_path / "jobs").glob("*/*_result.pkl"))) == 3  # each a job of its own


@pytest.mark.slow
def test_a_real_experiment_through_submitit_gives_the_record_of_a_run_here(tmp_path):
    """WMRL's controlled experiment (numpy) at smoke, seed 0, run by the benchmark through submitit's
    local executor: its record holds what the same call gives in this process, and says how it ran."""
    name = "wmrl_controlled"
    experiment = EXPERIMENTS[name]
    lines: list[str] = []
    start = time.perf_counter()
    through = bench.run_bench("smoke", 1, runs_root=tmp_path / "runs", experiments={name: experiment},
                              claims=[c for c in CLAIMS if c.experiment == name], log=lines.append, shipped_dir=False,
                              executor=SubmititExecutor(tmp_path / "jobs", cluster="local", poll_seconds=0.2))
    seconds = time.perf_counter() - start
    assert through.ran == [f"{name}/seed0"] and through.report["rows"]
    record = json.loads(next((tmp_path / "runs" / "bench" / name).glob("seed0_*.json")).read_text())
    profile = get_profile("smoke")
    run = experiment.run
    if isinstance(run, str):  # "module:function"
        module, _, function = run.partition(":")
        run = getattr(importlib.import_module(module), function)
    here = run(profile, 0, tmp_path / "here", bench.experiment_sizes(experiment, profile))
    assert record["result"] == json.loads(json.dumps(jsonable(here)))
    assert record["command"].endswith("--executor submitit-local")
    assert record["torch_threads"] == 1  # the job's own thread count, set by the executor
    assert any("through submitit local jobs" in line for line in lines), lines
    assert len(list((tmp_path / "jobs").glob("*/*_result.pkl"))) == 1
    print(f"{name} seed 0 at smoke through submitit's local executor, with its report: {seconds:.1f} s")
