"""Small helpers every notebook uses: resolve parameters, seed, save figures and results.json."""
from __future__ import annotations

import json
import platform
import warnings
from dataclasses import dataclass
from pathlib import Path

from wmkit.quiet import drop_dependency_messages, quiet_dependencies

# A notebook imports this module before anything that imports bitsandbytes (peft does, and with the
# pinned versions so does `from transformers import set_seed`): the filter goes on first.
drop_dependency_messages()

import torch
from transformers import set_seed

from wmkit.profiles import Profile, check_seed, get_profile
from wmkit.runs import default_runs_root, jsonable, make_folder


@dataclass
class NotebookRun:
    """Resolved parameters of one notebook run."""

    name: str
    """Notebook stem, e.g. '01_build_world_model'."""
    profile: Profile
    seed: int
    output_dir: Path
    """Figures and results.json go here."""
    runs_dir: Path
    """runs/<profile>/: where the other notebooks of the series keep their artefacts."""


def start(name: str, profile: str = "auto", seed: int = 0, output_dir: str | None = None,
          runs_dir: str | None = None) -> NotebookRun:
    """Check the parameters cell, seed everything, make the output folder, say where we are.

    A bad parameter fails here, in the first code cell, with one ValueError / TypeError whose
    message says which parameter and what it may be (the frames below this one are not shown)."""
    __tracebackhide__ = True  # IPython: hide this frame; the message is the whole story
    try:
        check_seed(seed, "SEED")
        prof = get_profile(profile)
        for value, label in ((output_dir, "OUTPUT_DIR"), (runs_dir, "RUNS_DIR")):
            if value is not None and not isinstance(value, (str, Path)):
                raise TypeError(f"{label} must be None or a folder path, not {value!r}")
        runs = Path(runs_dir) if runs_dir else default_runs_root() / prof.name
        out = make_folder(Path(output_dir) if output_dir else runs / name, "OUTPUT_DIR")
    except (ValueError, TypeError) as err:
        raise type(err)(str(err).replace("Unknown profile", "PROFILE: unknown profile")) from None
    set_seed(seed)  # Python, NumPy and torch (CPU and CUDA)
    # TRL 1.16 still uses transformers' deprecated `gradient_checkpointing` names; the warnings are
    # nothing a reader can act on and they bury every training cell's output.
    warnings.filterwarnings("ignore", message=r".*gradient_checkpointing` is deprecated", category=FutureWarning)
    quiet_dependencies()
    # Small CPUs: one process, all cores, no oversubscription by tokenizers' threads.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"notebook {name} | profile {prof.name} ({prof.description}) | seed {seed} | device {device}"
          f" | torch {torch.__version__} | python {platform.python_version()}")
    print(f"outputs -> {out}")
    if prof.name == "gpu":
        print("note: the gpu profile has never been run: its sizes, times and figures are unmeasured")
    return NotebookRun(name=name, profile=prof, seed=seed, output_dir=out, runs_dir=runs)


def save_figure(fig, run: NotebookRun, filename: str) -> Path:
    path = run.output_dir / filename
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def write_results(run: NotebookRun, results: dict) -> Path:
    """Write results.json (numpy values as plain ones, NaN as null) with the run's name, profile and seed."""
    payload = {"notebook": run.name, "profile": run.profile.name, "seed": run.seed, **results}
    path = run.output_dir / "results.json"
    path.write_text(json.dumps(jsonable(payload), indent=1, sort_keys=True))
    return path
