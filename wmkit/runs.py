"""Run folders, checkpoints and JSON-ready values: what every experiment, notebook and the benchmark share."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np


def latest_checkpoint(output_dir: str | Path) -> str | None:
    """The newest complete `checkpoint-N` folder in output_dir, or None.

    The Trainer writes `trainer_state.json` last, so a folder without it is a save that was
    interrupted (a kill, a full disk): it is skipped and the run resumes from the one before.
    Not `transformers.trainer_utils.get_last_checkpoint` (5.24): it returns the highest-numbered
    folder whether or not its save finished, and resuming from that one fails
    (tests/test_pipeline.py shows both on the same folder).
    """
    folders = [p for p in Path(output_dir).glob("checkpoint-*")
               if p.name.split("-", 1)[1].isdigit() and (p / "trainer_state.json").is_file()]
    folders.sort(key=lambda p: int(p.name.split("-", 1)[1]))
    return str(folders[-1]) if folders else None


def train_or_resume(trainer, resume_from: str | None) -> None:
    """``trainer.train(resume_from_checkpoint=resume_from)``, except when that checkpoint already
    holds the whole run: then its weights and state are loaded and nothing is trained.

    Resuming from a run's final checkpoint makes transformers' training loop take one more
    optimizer step before it notices the step budget is spent (measured with transformers 5.24:
    a finished 3-step GRPO run comes back with 4 steps), so a rerun would not give the same model.
    Both ways of resuming load the checkpoint's weights, so both go through `_tied_head_is_not_missing`."""
    if not resume_from:
        trainer.train()
        return
    import json

    state = json.loads((Path(resume_from) / "trainer_state.json").read_text())
    budget = trainer.args.max_steps if trainer.args.max_steps > 0 else state.get("max_steps", 0)
    with _tied_head_is_not_missing(trainer.model):
        if budget > 0 and state.get("global_step", 0) >= budget:
            from transformers import TrainerState

            trainer._load_from_checkpoint(resume_from)
            trainer.state = TrainerState.load_from_json(str(Path(resume_from) / "trainer_state.json"))
        else:
            trainer.train(resume_from_checkpoint=resume_from)


class _tied_head_is_not_missing:
    """While loading a checkpoint into `model`: drop transformers' "There were missing keys" warning
    when the only keys missing are weights tied to the input embedding (a tied ``lm_head.weight`` is
    not saved; loading the embedding sets it, since both are one tensor). The Trainer re-ties only
    models that declare ``_keys_to_ignore_on_save``, which Llama does not, so it warns, and the
    notebooks treat any stderr output as a failure. Any other missing key still warns."""

    def __init__(self, model):
        embedding = model.get_input_embeddings()
        tied = [name for name, p in model.named_parameters(remove_duplicate=False)
                if embedding is not None and p is embedding.weight and not name.endswith("embed_tokens.weight")]
        self.message = f"There were missing keys in the checkpoint model loaded: {tied}." if tied else None

    def filter(self, record) -> bool:
        return record.getMessage() != self.message

    def __enter__(self):
        import logging

        self.logger = logging.getLogger("transformers.trainer")
        if self.message:
            self.logger.addFilter(self)
        return self

    def __exit__(self, *exc) -> None:
        self.logger.removeFilter(self)


def bench_work_dir(runs_root: Path, experiment: str, seed: int) -> Path:
    """Checkpoints of one benchmark run (experiment, seed)."""
    return Path(runs_root) / "bench" / "work" / experiment / f"seed{seed}"


REPO = Path(__file__).resolve().parent.parent
"""The checkout (or site-packages when the kit is installed from a wheel): the one place that says where."""


def make_folder(path: str | Path, what: str = "output folder") -> Path:
    """Create `path` (and its parents) and check it is writable, up front; a ValueError naming
    `what` and the path otherwise (an unwritable --out is one clear line, not a traceback later)."""
    import os

    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create {what} {str(path)!r}: {err.strerror or err}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write to {what} {str(path)!r}: permission denied")
    return path


def default_runs_root() -> Path:
    """runs/ of the repository checkout, or of the working folder when the kit was installed
    from a wheel (Colab), where the package sits in site-packages."""
    return REPO / "runs" if (REPO / "notebooks").is_dir() else Path.cwd() / "runs"


def cpu_model() -> dict:
    """The CPU's model name (``/proc/cpuinfo``, else ``platform.processor()``) and the instruction
    set torch's CPU kernels use (e.g. AVX512 on an Intel Xeon with AMX, AVX2 on AMD EPYC). A seed's
    floats differ between CPU kinds (other kernels, other rounding) and repeat exactly on one kind,
    so every record keeps both."""
    import platform

    import torch

    name = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    capability = getattr(torch.backends.cpu, "get_cpu_capability", lambda: None)()
    return {"cpu_model": name or platform.processor() or platform.machine(), "torch_cpu_capability": capability}


def machine_and_load() -> dict:
    """Where a probe ran, for its results file: processor, CPU model (:func:`cpu_model`), CPU count
    and the load average when it ended (timings on a shared machine mean little without it)."""
    import os
    import platform

    return {"processor": platform.processor() or platform.machine(), **cpu_model(), "cpus": os.cpu_count(),
            "load_after": os.getloadavg()}


def jsonable(value: Any) -> Any:
    """numpy arrays and scalars as plain lists and numbers, paths as strings, and non-finite
    floats as None (JSON has no NaN), recursively through dicts, lists and tuples."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def stop_printing_logs(trainer) -> None:
    """Without a progress bar a transformers Trainer prints every log dict instead (hundreds of lines
    of numbers in a notebook); remove that printer. The logs stay in trainer.state.log_history."""
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)
