"""Independent runs side by side in worker processes, so that a 2-core machine runs two at once.

A tiny model's GRPO step is a long chain of small matrix products: a second thread barely
speeds it up, so two processes with one thread each do nearly twice the work (why: see
research/README.md, 'Worker processes'). So independent runs (RL seeds, world sizes) go to
``workers`` processes, each with an equal share of the cores.

Each job is a module-level function and its keyword arguments (both must pickle: the workers
are *spawned*, they import the function by name and load models from disk themselves). Results
come back in job order. With ``workers <= 1`` (or one job) everything runs here, in order, with
no process started: the same code path a test or a GPU takes.

A run does not depend on which process ran it, but the number of torch threads can change the
last digits of a sum, and with them a sampled token now and then: a parallel run's figures can
differ slightly from a sequential run of the same seed.
"""
from __future__ import annotations

import multiprocessing
import os
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

from wmkit.quiet import quiet_dependencies


def threads_per_worker(workers: int) -> int:
    """Torch threads for each of `workers` processes: an equal share of this machine's cores."""
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def start_worker(threads: int) -> None:
    """Each worker: its share of the cores, and as quiet as the notebook's kernel (a worker's
    stderr lands in the notebook's output: no dependency progress bars or known warnings)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch  # here, once OMP_NUM_THREADS is set: torch reads it when imported

    torch.set_num_threads(threads)
    warnings.filterwarnings("ignore", message=r".*gradient_checkpointing` is deprecated", category=FutureWarning)
    quiet_dependencies()


def spread_workers(n_jobs: int, workers: int) -> int:
    """Processes for `n_jobs` similar jobs given `workers`: at most one per job, and every job at
    once when there is one job more than workers. Three seeds on two workers would run in two
    rounds, the second alone on one core; three processes sharing two cores take about 3/2 of a
    job's time instead of 2. `run_jobs` gives each process the threads of the workers asked for,
    so the figures are the same either way."""
    return n_jobs if n_jobs == workers + 1 else min(workers, n_jobs)


def run_jobs(jobs: Sequence[tuple[Callable, dict]], workers: int = 1,
             on_done: Callable[[int, object], None] | None = None) -> list:
    """Run ``function(**kwargs)`` for every ``(function, kwargs)`` in `jobs`, `workers` at a
    time, and return the results in job order. `on_done(index, result)` is called here as each
    job finishes (for progress lines). An exception in a job is raised here."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    results: list = [None] * len(jobs)
    if workers == 1 or len(jobs) <= 1:
        for i, (function, kwargs) in enumerate(jobs):
            results[i] = function(**kwargs)
            if on_done:
                on_done(i, results[i])
        return results
    # Threads as for the workers asked for, so spreading the jobs changes no figure.
    threads = threads_per_worker(min(workers, len(jobs)))
    workers = spread_workers(len(jobs), workers)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=start_worker,
                             initargs=(threads,)) as pool:
        futures = {pool.submit(function, **kwargs): i for i, (function, kwargs) in enumerate(jobs)}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            if on_done:
                on_done(i, results[i])
    return results
