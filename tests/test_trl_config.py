"""The three ways into RLVR-World's GRPO run build the same `trl.GRPOConfig` and make the same LoRA
choice for the same profile: ``wmkit train rlvr`` (the job), notebook 02's RLVR cell (the phone arm,
which runs the same settings on the phone's transitions) and the benchmark's ``rlvr_mle_vs_rl``.

Each path runs as it is up to TRL: the world model is a tiny one built on the fly, generation is
stubbed (the measurements before training are not what is compared) and ``trl.GRPOTrainer``
records the config and the model it is given, then stops the run."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "02_rlvr_world_model.py"
PROFILE = "cpu"
"""The published profile: there the benchmark runs notebook 02's settings (smoke's benchmark is smaller)."""


DISPLAY_ONLY = ("disable_tqdm",)


class Captured(Exception):
    pass


@pytest.fixture
def capture(monkeypatch, tiny_lm, small_splits, tmp_path):
    """Patches the world model, generation and TRL's trainer; returns the list the trainer fills."""
    import trl

    from wmkit.core import build
    from wmkit.core import world_model_rl as rl

    model, tokenizer, _ = tiny_lm
    seen: list[dict] = []

    def world_model(profile, out_dir, seed=0, **kwargs):
        return build.WorldModelRun(folder=Path(out_dir) / build.FINAL, model=model, tokenizer=tokenizer,
                                   splits=small_splits, info={"model": "tiny", "profile": profile.name})

    def no_generation(model, tokenizer, prompts, max_new_tokens, do_sample=False, num_samples=1, **kwargs):
        return [[""] * (num_samples if do_sample else 1) for _ in prompts]

    class Trainer:
        def __init__(self, model, args, **kwargs):
            seen.append({"args": args, "lora": hasattr(model, "peft_config")})
            raise Captured

    monkeypatch.setattr(build, "ensure_world_model", world_model)
    monkeypatch.setattr(rl, "generate", no_generation)
    monkeypatch.setattr(trl, "GRPOTrainer", Trainer)
    return seen


def _comparable(captured: dict) -> dict:
    """The GRPOConfig as a dict, its output folder (and what TRL derives from it) written as <out>, less
    whether it draws a progress bar (a terminal's job shows one, the benchmark's workers do not)."""
    args = captured["args"]
    out = str(args.output_dir)
    found = {}
    for key, value in args.to_dict().items():
        if key in DISPLAY_ONLY:
            continue
        if isinstance(value, str) and out in value:
            value = value.replace(out, "<out>")
        found[key] = value
    return {"grpo_config": found, "lora": captured["lora"]}


def _job(tmp_path) -> dict:
    from wmkit import jobs

    config = jobs.build_config("rlvr", PROFILE, None, [f"world_model={tmp_path / 'wm'}",
                                                       f"out={tmp_path / 'job'}"])
    with pytest.raises(Captured):
        jobs.run_job("rlvr", config)


def _experiment(tmp_path) -> None:
    from wmkit.bench import runner
    from wmkit.entries import resolve
    from wmkit.profiles import get_profile

    experiment = runner.EXPERIMENTS["rlvr_mle_vs_rl"]
    profile = get_profile(PROFILE)
    with pytest.raises(Captured):
        resolve(experiment.run)(profile, 0, tmp_path / "bench_runs",
                                runner.experiment_sizes(experiment, profile))


def _cells() -> list[str]:
    return [c.strip() for c in re.split(r"^# %%.*$", NOTEBOOK.read_text(), flags=re.M)]


def _notebook(tmp_path) -> None:
    """Notebook 02's parameters, its set-up cell, the cell that loads the world model and chooses LoRA, and the
    cell that runs RLVR on the phone, in that order, in one namespace (what papermill would run)."""
    cells = _cells()
    wanted = [next(c for c in cells if c.startswith("from typing import Optional")),  # parameters
              next(c for c in cells if "nb.start(" in c),
              next(c for c in cells if "LORA = " in c),
              next(c for c in cells if "phone_arm = rx.reward_arm(" in c)]
    namespace = {}
    for cell in wanted[:3]:
        exec(compile(cell, str(NOTEBOOK), "exec"), namespace)
        if "from typing import Optional" in cell:
            namespace.update(PROFILE=PROFILE, OUTPUT_DIR=str(tmp_path / "nb"), RUNS_DIR=str(tmp_path / "nb_runs"))
    with pytest.raises(Captured):
        exec(compile(wanted[3], str(NOTEBOOK), "exec"), namespace)
    return namespace


@pytest.mark.slow
def test_job_notebook_and_benchmark_build_the_same_trl_config(capture, tmp_path):
    _job(tmp_path)
    _experiment(tmp_path)
    namespace = _notebook(tmp_path)
    job, experiment, notebook = (_comparable(c) for c in capture)
    # The notebook's cell is the phone arm: the same settings, its own step count (the profile's phone
    # steps) and the checkpoint spacing that follows from it.
    phone_steps = notebook["grpo_config"].pop("max_steps")
    notebook["grpo_config"].pop("save_steps")
    differences = [f"wmkit train rlvr vs rlvr_mle_vs_rl: {_differences(job, experiment)}",
                   f"notebook 02 vs rlvr_mle_vs_rl: {_differences(_steps_left_out(experiment), notebook)}"]
    assert job == experiment and notebook == _steps_left_out(experiment), "\n".join(differences)
    assert phone_steps == _phone_steps(namespace)


def _steps_left_out(found: dict) -> dict:
    return {**found, "grpo_config": {k: v for k, v in found["grpo_config"].items()
                                     if k not in ("max_steps", "save_steps")}}


def _phone_steps(namespace) -> int:
    sizes = namespace["sizes"]
    return getattr(sizes, "phone_steps", None) or sizes.phone.max_steps


def _differences(a: dict, b: dict) -> str:
    lines = [f"lora {a['lora']} vs {b['lora']}"] if a["lora"] != b["lora"] else []
    for key in sorted(set(a["grpo_config"]) | set(b["grpo_config"])):
        if a["grpo_config"].get(key) != b["grpo_config"].get(key):
            lines.append(f"{key}: {a['grpo_config'].get(key)!r} vs {b['grpo_config'].get(key)!r}")
    return "; ".join(lines)
