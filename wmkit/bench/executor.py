"""Where the benchmark's (experiment, seed) runs execute: processes on this machine, or a cluster.

The benchmark hands its runs to an *executor*: ``run(jobs, on_done)`` runs ``function(**kwargs)``
for each ``(function, kwargs)`` of `jobs` and returns the results in job order, calling
``on_done(index, result)`` as each finishes. Each run writes its own record when it ends, so
where it ran changes nothing in the record but its timing (and, with another thread count, the
last digits a thread count can change: `wmkit.core.parallel`).

* :class:`LocalProcesses` (the default): this machine, ``workers`` processes side by side
  (`wmkit.core.parallel.run_jobs`; one process: in this one, in order).
* :class:`SubmititExecutor`: one SLURM job per run, submitted as one job array through submitit
  (``pip install "wmkit[cluster]"``). ``cluster="local"`` runs the same jobs as processes on this
  machine through submitit's local executor, which is how the kit tests it without a cluster.

Why SLURM through submitit and not Ray: SLURM is the scheduler of most university clusters, and
submitit submits to it with nothing to start (Ray needs a Ray cluster brought up inside a SLURM
allocation first); submitit is one 76 kB pure-Python wheel whose dependencies the kit already has
(cloudpickle, typing_extensions), where Ray's wheel alone is 79 MB with a dozen dependencies; both
install from PyPI. The records land in the runs folder, which on a cluster must be on a file
system the compute nodes share (the home or project folder, as usual).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Jobs = Sequence[tuple[Callable, dict]]
OnDone = Callable[[int, Any], None] | None

EXECUTORS = ("local", "slurm", "submitit-local")
"""Names the command line takes (``wmkit bench --executor``)."""


@dataclass
class LocalProcesses:
    """The runs on this machine: `workers` processes side by side, each with an equal share of the cores
    (`wmkit.core.parallel.run_jobs`); with one worker, in this process, in order."""

    workers: int = 1

    name = "local"

    @property
    def in_this_process(self) -> bool:
        """Whether the runs execute in this process (a log function can then be handed to them)."""
        return self.workers <= 1

    def run(self, jobs: Jobs, on_done: OnDone = None) -> list:
        from wmkit.core.parallel import run_jobs  # here: it loads multiprocessing (15 ms), --help does not

        return run_jobs(jobs, workers=self.workers if len(jobs) > 1 else 1, on_done=on_done)

    def describe(self) -> str:
        return f"{self.workers} local process(es)"


def run_with_threads(threads: int, function: Callable, kwargs: dict) -> Any:
    """``function(**kwargs)`` in a job of its own, with `threads` torch threads (a job's first call)."""
    from wmkit.core.parallel import start_worker  # here: it imports torch, which --help must not

    start_worker(threads)
    return function(**kwargs)


@dataclass
class SubmititExecutor:
    """Each run a job of its own, submitted through submitit as one job array and waited for here.

    `cluster`: "slurm" (sbatch; the jobs run on the cluster's nodes with this Python and this
    environment, so the kit must be installed where the nodes see it) or "local" (processes on this
    machine through submitit's local executor: the same submission path without a cluster).
    `folder`: where submitit keeps each job's pickled call, its stdout/stderr and its result.
    `threads`: torch threads per job, and the CPUs each job asks for (``cpus_per_task``).
    `parameters`: anything else ``submitit.AutoExecutor.update_parameters`` takes, e.g.
    ``{"slurm_partition": "cpu", "timeout_min": 240, "mem_gb": 8, "slurm_account": "..."}``.

    An interrupted submitter leaves its jobs running: each writes its record when it ends, and the
    same `wmkit bench` command later reuses those records (and resubmits only runs without one,
    so wait for running jobs before rerunning it, or they run twice)."""

    folder: Path
    cluster: str = "slurm"
    threads: int = 1
    parameters: dict = field(default_factory=dict)
    poll_seconds: float = 5.0

    @property
    def name(self) -> str:
        return "slurm" if self.cluster == "slurm" else "submitit-local"

    in_this_process = False

    def __post_init__(self):
        if self.cluster not in ("slurm", "local"):
            raise ValueError(f"cluster must be 'slurm' or 'local', not {self.cluster!r}")
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise ValueError(f"threads must be a positive integer, not {self.threads!r}")
        self.folder = Path(self.folder)

    def executor(self):
        try:
            import submitit
        except ImportError:
            raise ValueError("the cluster executor needs submitit: pip install 'wmkit[cluster]' "
                             "(or pip install submitit)") from None
        executor = submitit.AutoExecutor(folder=self.folder / "%j", cluster=self.cluster)
        defaults = {"name": "wmkit-bench", "cpus_per_task": self.threads, "timeout_min": 240}
        try:
            executor.update_parameters(**{**defaults, **self.parameters})
        except (TypeError, ValueError, NameError) as err:  # submitit names the parameter it does not know
            raise ValueError(f"executor parameters {self.parameters}: {' '.join(str(err).split())}") from None
        return executor

    def run(self, jobs: Jobs, on_done: OnDone = None) -> list:
        if not jobs:
            return []
        executor = self.executor()
        with executor.batch():  # one job array: one sbatch call for every run
            submitted = [executor.submit(run_with_threads, self.threads, function, kwargs)
                         for function, kwargs in jobs]
        results: list = [None] * len(jobs)
        waiting = dict(enumerate(submitted))
        while waiting:
            finished = [i for i, job in waiting.items() if job.done()]
            for i in finished:
                job = waiting.pop(i)
                results[i] = job.result()  # a failed job raises here, with its traceback and log paths
                if on_done:
                    on_done(i, results[i])
            if waiting and not finished:
                time.sleep(self.poll_seconds)
        return results

    def describe(self) -> str:
        ids = "" if self.cluster == "local" else " (squeue --me lists them)"
        return f"submitit {self.cluster} jobs, {self.threads} thread(s) each, logs in {self.folder}{ids}"


def make_executor(name: str = "local", workers: int = 1, threads: int | None = None,
                  folder: str | Path | None = None, options: Sequence[str] = ()) -> LocalProcesses | SubmititExecutor:
    """The executor of ``wmkit bench --executor NAME``: "local" (`workers` processes here), "slurm"
    or "submitit-local" (submitit: every run a job of its own, so `workers` does not apply; `threads`
    per job, default 1; `folder` for its job files, default ``runs/submitit``; `options` ``KEY=VALUE``
    strings for ``AutoExecutor.update_parameters``, a value read as a number where it is one)."""
    if name not in EXECUTORS:
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, not {name!r}")
    if name == "local":
        if options:
            raise ValueError("--executor-option applies to --executor slurm or submitit-local")
        return LocalProcesses(workers)
    parameters = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--executor-option {option!r}: expected KEY=VALUE, e.g. slurm_partition=cpu")
        parameters[key.strip()] = _number_or_text(value.strip())
    from wmkit.runs import default_runs_root  # here: keeps this module's import light

    return SubmititExecutor(folder=Path(folder) if folder else default_runs_root() / "submitit",
                            cluster="slurm" if name == "slurm" else "local", threads=threads or 1,
                            parameters=parameters)


def _number_or_text(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value
