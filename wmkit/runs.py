"""Run folders, checkpoints and JSON-ready values: what every experiment, notebook and the benchmark share."""
from __future__ import annotations

import hashlib
import importlib
import json
import logging
import math
import os
import platform
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

RUN_KEY_FILE = "wmkit_run.json"
"""Written beside a run's checkpoints: what identifies the run they belong to (:func:`checkpoint_to_resume`)."""
DAMAGED_PREFIX = "damaged-"
"""A damaged checkpoint is renamed with this prefix: kept for a look, out of the Trainer's ``checkpoint-*``
(its rotation keeps the highest-numbered folder, so a damaged one left there would outlive every new save)."""
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json", "adapter_model.safetensors", "adapter_model.bin")
"""What a saved model or checkpoint folder holds its weights in (one of them; LoRA runs save adapters only)."""


def warn(message: str) -> None:
    """One line on stderr, from one process per machine (every rank of a multi-process run meets the
    same checkpoints)."""
    if os.environ.get("LOCAL_RANK", "0") == "0":
        print(f"wmkit: warning: {message}", file=sys.stderr, flush=True)


def _safetensors_damage(path: Path) -> str | None:
    """Why the safetensors file cannot be loaded (header unreadable, or the file is not exactly as long
    as its header's data offsets say: a truncated or padded copy), or None."""
    size = path.stat().st_size
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                return f"{path.name} has {size} bytes, less than a header"
            header_length = int.from_bytes(head, "little")
            if header_length > size - 8:
                return f"{path.name} has {size} bytes, its header alone claims {header_length}"
            header = json.loads(f.read(header_length))
        end = max((entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"), default=0)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return f"{path.name} has an unreadable header"
    if size != 8 + header_length + end:
        return f"{path.name} has {size} bytes, its header says {8 + header_length + end}"
    return None


def _torch_file_damage(path: Path) -> str | None:
    """Why a `torch.save` file (a zip archive since torch 1.6) cannot be opened, or None. Only the
    archive's directory is read (at its end, so a truncated file has none); an older non-zip file is
    not checked."""
    with open(path, "rb") as f:
        magic = f.read(2)
    if not magic:
        return f"{path.name} is empty"
    if magic != b"PK":
        return None
    try:
        zipfile.ZipFile(path).close()
    except (zipfile.BadZipFile, OSError):
        return f"{path.name} is not a complete archive"
    return None


def model_damage(folder: str | Path, required: tuple[str, ...] = ("config.json",)) -> str | None:
    """Why the saved model (or checkpoint) in `folder` cannot be loaded, in a few words, or None when
    it looks intact: its `required` files and a weights file (`WEIGHT_FILES`) exist, every JSON file
    in it parses, every safetensors file is exactly as long as its header says (shards of an index
    included) and every torch file is a complete archive. Reads headers and directories only."""
    folder = Path(folder)
    if not folder.is_dir():
        return "missing"
    for name in required:
        if not (folder / name).is_file():
            return f"no {name}"
    files = sorted(p for p in folder.iterdir() if p.is_file())
    for path in files:
        if path.suffix == ".json":
            try:
                json.loads(path.read_text())
            except (ValueError, UnicodeDecodeError):
                return f"{path.name} does not parse"
    present = [name for name in WEIGHT_FILES if (folder / name).is_file()]
    # Sharded FSDP states, DeepSpeed's global_step folders and per-adapter subfolders keep their weights in
    # a subfolder, which the Trainer reads itself; they are taken as they are.
    if not present and not any(p.is_dir() for p in folder.iterdir()):
        return "no weights file"
    shards = set()
    for index in (name for name in present if name.endswith(".index.json")):
        shards |= set(json.loads((folder / index).read_text()).get("weight_map", {}).values())
    for shard in sorted(shards):
        if not (folder / shard).is_file():
            return f"no {shard} (a shard its index names)"
    for path in files:
        damage = (_safetensors_damage(path) if path.suffix == ".safetensors"
                  else _torch_file_damage(path) if path.suffix in (".bin", ".pt", ".pth") else None)
        if damage:
            return damage
    return None


def checkpoint_damage(folder: str | Path) -> str | None:
    """Why the Trainer checkpoint in `folder` cannot be resumed, or None (:func:`model_damage`, plus
    the `trainer_state.json` the Trainer writes last: without it the save was interrupted)."""
    return model_damage(folder, required=("trainer_state.json",))


def _numbered_checkpoints(output_dir: str | Path) -> list[Path]:
    """The `checkpoint-N` folders of output_dir, newest (highest N) first."""
    folders = [p for p in Path(output_dir).glob("checkpoint-*") if p.name.split("-", 1)[1].isdigit() and p.is_dir()]
    return sorted(folders, key=lambda p: int(p.name.split("-", 1)[1]), reverse=True)


def latest_checkpoint(output_dir: str | Path) -> str | None:
    """The newest intact `checkpoint-N` folder in output_dir (:func:`checkpoint_damage`), or None.

    A checkpoint can be incomplete (a kill or a full disk during its save: no `trainer_state.json`,
    which the Trainer writes last) or damaged afterwards (a truncated weights file): it is passed over
    for the one before. Not `transformers.trainer_utils.get_last_checkpoint` (5.24): it returns the
    highest-numbered folder whether or not its save finished, and resuming from that one fails
    (tests/test_pipeline.py shows both on the same folder). :func:`checkpoint_to_resume` is the rule
    the trainers follow; this only looks.
    """
    return next((str(p) for p in _numbered_checkpoints(output_dir) if checkpoint_damage(p) is None), None)


def _flat(key: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(key, dict):
        out: dict[str, Any] = {}
        for name, value in key.items():
            out.update(_flat(value, f"{prefix}{name}."))
        return out
    return {prefix[:-1]: key}


def describe_run(key: Any, other: Any = None) -> str:
    """A run key in a few words: its profile, seed and model, then the entries where it differs from
    `other`, seeds first (at most six; long values cut), e.g. ``settings.seed 0, data 3fa2c1d09b1e``."""
    if not isinstance(key, dict):
        return "an unknown run"
    mine, theirs = _flat(key), _flat(other) if isinstance(other, dict) else {}
    names = [n for n in ("profile", "seed", "model") if n in mine]
    differing = sorted((n for n in set(mine) | set(theirs) if mine.get(n) != theirs.get(n) and n not in names),
                       key=lambda n: (n.rsplit(".", 1)[-1] not in ("profile", "seed", "model"), n))
    shown = [f"{n} {str(mine.get(n, '-'))[:12]}" for n in names + differing[:6]]
    return ", ".join(shown + (["..."] if len(differing) > 6 else [])) or "a run"


def claim_checkpoints(output_dir: str | Path, run_key: dict, resume: bool = True) -> None:
    """Let the checkpoints in output_dir resume only the run that wrote them (:func:`checkpoint_to_resume`).

    With `resume`, checkpoints of another run (or of an unknown one: no run key beside them) are refused
    with one line naming the folder and both runs; without it they are removed, since the caller asked
    to start over there. Then `run_key` is written beside the checkpoints (`RUN_KEY_FILE`).
    """
    folder = Path(output_dir)
    stamp = folder / RUN_KEY_FILE
    key = json.loads(json.dumps(run_key, default=str))  # as it reads back from disk (tuples become lists)
    try:
        stored = json.loads(stamp.read_text())
    except (OSError, ValueError):
        stored = None
    stale = _numbered_checkpoints(folder)
    if stale and resume and stored != key:
        raise ValueError(f"{folder} holds checkpoints of another run ({describe_run(stored, key)}), not of this "
                         f"one ({describe_run(key, stored)}): delete that folder or choose another output folder")
    if stale and not resume:
        for checkpoint in stale:
            shutil.rmtree(checkpoint, ignore_errors=True)  # every rank may be removing the same folders
    if stored != key:
        folder.mkdir(parents=True, exist_ok=True)
        # written whole and renamed, so that another rank never reads it half-written
        partial = folder / f".{RUN_KEY_FILE}.{os.getpid()}"
        partial.write_text(json.dumps(key, indent=1))
        os.replace(partial, stamp)


def checkpoint_to_resume(output_dir: str | Path, run_key: dict, resume: bool = True) -> str | None:
    """The kit's one resume rule: the checkpoint in output_dir a trainer resumes from, or None (start afresh).

    A checkpoint holds weights, not the settings that made them: resumed by another run (another seed,
    another data sample, a setting that keeps tensor shapes) it trained 0 steps and came back as that
    run's result. So `run_key` (what identifies the run: :func:`run_identity`) is written beside the
    checkpoints, and a folder holding another run's checkpoints is refused (:func:`claim_checkpoints`).
    Of the run's own checkpoints the newest intact one is taken; a damaged one newer than it is skipped
    with one warning line and renamed ``damaged-checkpoint-N``. `resume` False removes the folder's
    checkpoints and starts afresh.
    """
    claim_checkpoints(output_dir, run_key, resume)
    if not resume:
        return None
    skipped = []
    for folder in _numbered_checkpoints(output_dir):
        damage = checkpoint_damage(folder)
        if damage is None:
            _report_skipped(skipped, folder)
            return str(folder)
        skipped.append((folder, damage))
    _report_skipped(skipped, None)
    return None


def _report_skipped(skipped: list[tuple[Path, str]], chosen: Path | None) -> None:
    for folder, damage in skipped:
        aside = folder.with_name(DAMAGED_PREFIX + folder.name)
        instead = f"resuming from {chosen.name}" if chosen else "training from the start"
        warn(f"checkpoint {folder} is damaged ({damage}): {instead}; it is kept as {aside.name}")
        if os.environ.get("LOCAL_RANK", "0") == "0":
            shutil.rmtree(aside, ignore_errors=True)
            try:
                folder.rename(aside)
            except OSError:
                pass  # another process moved it first


def data_digest(rows: Any) -> str:
    """A short hash of training data (anything JSON can write, other values by their str)."""
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:16]


def weights_digest(model) -> str:
    """A short hash of a model's weights: every tensor's name, shape, dtype and up to 64 of its values,
    evenly spaced (cheap for a 7B model; two trainings or inits differ in them)."""
    import torch  # here: `python -m wmkit --help` imports this module and must not import torch (1.5 s)

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        if not isinstance(tensor, torch.Tensor):
            continue
        digest.update(f"{name}{tuple(tensor.shape)}{tensor.dtype}".encode())
        try:
            flat = tensor.detach().reshape(-1)
            sample = flat[::max(1, flat.numel() // 64)][:64]
            digest.update(sample.to("cpu", torch.float64).numpy().tobytes())
        except (RuntimeError, NotImplementedError, TypeError):
            pass  # meta or sharded tensors: shape and dtype only
    return digest.hexdigest()[:16]


def run_identity(settings: dict, ignored: tuple[str, ...], data: Any, lora_base=None) -> dict:
    """What identifies a training run to its checkpoints (:func:`checkpoint_to_resume`), when its caller
    does not name it whole: the trainer's `settings` less the `ignored` entries (those that do not change
    what is trained: the output folder, logging, checkpoint spacing, progress bars), a digest of the
    `data` and, for a LoRA run, a digest of the base weights (`lora_base`): its checkpoints hold the
    adapters only, which resumed on other base weights would make another model. A full-parameter
    checkpoint holds every weight, so a start model that differs in its last bits (a GPU rerun of the
    step before) still resumes its own run.
    """
    key = {"settings": {k: v for k, v in settings.items() if k not in ignored}, "data": data_digest(data)}
    if lora_base is not None:
        key["lora_base"] = weights_digest(lora_base)
    return key


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
    state = json.loads((Path(resume_from) / "trainer_state.json").read_text())
    budget = trainer.args.max_steps if trainer.args.max_steps > 0 else state.get("max_steps", 0)
    with _tied_head_is_not_missing(trainer.model):
        if budget > 0 and state.get("global_step", 0) >= budget:
            from transformers import TrainerState  # here: --help imports this module, not transformers

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
"""The checkout (or site-packages when the kit is installed from a wheel): the one place that says where.
Write nothing under it: outputs go to :func:`default_runs_root`; :func:`checkout` says whether it is one."""

RUNS_ENV = "WMKIT_RUNS"
"""Environment variable naming the folder every command and notebook writes its runs into by default."""


def make_folder(path: str | Path, what: str = "output folder") -> Path:
    """Create `path` (and its parents) and check it is writable, up front; a ValueError naming
    `what` and the path otherwise (an unwritable --out is one clear line, not a traceback later)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create {what} {str(path)!r}: {err.strerror or err}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write to {what} {str(path)!r}: permission denied")
    return path


def checkout() -> Path | None:
    """The repository checkout this package runs from (its ``notebooks/`` and ``pyproject.toml``
    beside ``wmkit/``), or None for a kit installed from a wheel (the package in site-packages)."""
    return REPO if (REPO / "notebooks").is_dir() and (REPO / "pyproject.toml").is_file() else None


def default_runs_root() -> Path:
    """The folder every default output goes under (``<root>/<profile>/...``): ``$WMKIT_RUNS`` when
    set, else ``runs/`` of the repository checkout, else ``runs/`` of the working folder (a kit
    installed from a wheel, as in Colab: never under site-packages)."""
    if os.environ.get(RUNS_ENV):
        return Path(os.environ[RUNS_ENV]).expanduser()
    return (checkout() or Path.cwd()) / "runs"


def needs_checkout(what: str) -> Path:
    """The checkout, or a ValueError in one line saying that `what` needs the repository's files
    and where to clone them from (the installed package's ``Project-URL: Repository``)."""
    import importlib.metadata

    repo = checkout()
    if repo is None:
        url = "the repository"
        try:
            for entry in importlib.metadata.metadata("wmkit").get_all("Project-URL") or []:
                label, _, address = entry.partition(",")
                if label.strip().lower() == "repository":
                    url = address.strip()
        except importlib.metadata.PackageNotFoundError:
            pass
        raise ValueError(f"{what} needs the repository's files (notebooks/, executed/), which an installed "
                         f"kit does not have: clone {url} and run it there")
    return repo


def needs_module(module: str, what: str, extra: str = "dev"):
    """Import `module`, or a ValueError in one line naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ValueError(f"{what} needs {module}, which the kit's {extra!r} extra installs: "
                         f"pip install 'wmkit[{extra}]' (make setup installs it in a checkout)") from None


def cpu_model() -> dict:
    """The CPU's model name (``/proc/cpuinfo``, else ``platform.processor()``) and the instruction
    set torch's CPU kernels use (e.g. AVX512 on an Intel Xeon with AMX, AVX2 on AMD EPYC). A seed's
    floats differ between CPU kinds (other kernels, other rounding) and repeat exactly on one kind,
    so every record keeps both."""
    import torch  # here: --help imports this module and must not import torch (1.5 s)

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
    from transformers import PrinterCallback  # here: --help imports this module, not transformers

    trainer.remove_callback(PrinterCallback)
