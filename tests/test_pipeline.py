import json

import pytest

from wmkit.core import build
from wmkit.profiles import get_profile


def test_ensure_world_model_loads_a_saved_one_instead_of_rebuilding(tiny_lm, tmp_path):
    from wmkit.core.models import save_model

    model, tok, config = tiny_lm
    folder = save_model(model, tok, tmp_path / build.FINAL, tiny_config=config)
    (folder / "wmkit_info.json").write_text(json.dumps({"seed": 0, "envs": ["textgame"], "profile": "smoke"}))
    run = build.ensure_world_model(get_profile("smoke"), tmp_path)
    assert run.sft is None and run.info["envs"] == ["textgame"]
    assert {t.env for t in run.splits["train"]} == {"textgame"}
    assert sum(p.numel() for p in run.model.parameters()) == sum(p.numel() for p in model.parameters())


def test_bad_environment_and_seed_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="Unknown environment"):
        build.build_world_model(get_profile("smoke"), tmp_path, envs=("chess",))
    with pytest.raises(TypeError, match="seed"):
        build.build_world_model(get_profile("smoke"), tmp_path, seed="0")


def test_a_new_seed_never_resumes_another_seeds_checkpoints_and_a_damaged_final_is_rebuilt(tmp_path, capsys):
    """Seed 1 into seed 0's folder used to resume seed 0's last checkpoint, train 0 steps and save
    seed 0's weights as seed 1's model. Now it is refused with one line naming the folder, and
    seed 0's model stays as it was; rerunning seed 0 itself still resumes. A truncated final model
    used to crash `ensure_world_model` on every call; now it is rebuilt from the checkpoints."""
    profile = get_profile("smoke", episodes=6, epochs=0.5, eval_transitions=2)
    first = build.build_world_model(profile, tmp_path, seed=0, envs=("textgame",), show_progress=False)
    assert list((tmp_path / "checkpoints").glob("checkpoint-*"))
    saved = (first.folder / "model.safetensors").read_bytes()
    with pytest.raises(ValueError, match=r"checkpoints of another run \(profile smoke, seed 0.*not of this one "
                                         r"\(profile smoke, seed 1") as error:
        build.build_world_model(profile, tmp_path, seed=1, envs=("textgame",), show_progress=False)
    assert str(tmp_path / "checkpoints") in str(error.value) and "\n" not in str(error.value)
    assert (first.folder / "model.safetensors").read_bytes() == saved
    again = build.build_world_model(profile, tmp_path, seed=0, envs=("textgame",), show_progress=False)
    assert again.info["seed"] == 0 and again.sft.extra["resumed_from"]

    with open(first.folder / "model.safetensors", "r+b") as f:
        f.truncate(len(saved) // 2)
    capsys.readouterr()
    rebuilt = build.ensure_world_model(profile, tmp_path, envs=("textgame",), show_progress=False)
    [warning] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("wmkit:")]
    assert str(first.folder) in warning and "model.safetensors" in warning
    assert rebuilt.sft is not None and (first.folder / "model.safetensors").read_bytes() == saved
    assert build.ensure_world_model(profile, tmp_path, envs=("textgame",)).sft is None  # intact again: loaded


def test_checkpoints_without_a_run_key_are_refused_and_removed_when_not_resuming(tmp_path):
    from wmkit.runs import claim_checkpoints

    folder = tmp_path / "checkpoints"
    (folder / "checkpoint-3").mkdir(parents=True)
    key = {"profile": "smoke", "seed": 2, "sizes": {"episodes": (1, 2)}}
    with pytest.raises(ValueError, match="an unknown run"):
        claim_checkpoints(folder, key)
    claim_checkpoints(folder, key, resume=False)
    assert not (folder / "checkpoint-3").exists()
    (folder / "checkpoint-5").mkdir()
    claim_checkpoints(folder, key)  # its own run: fine (the tuple reads back as a list)


def test_an_interrupted_checkpoint_is_skipped_and_a_weightless_final_is_rebuilt(tiny_lm, tmp_path, monkeypatch):
    from wmkit.core.models import save_model
    from wmkit.runs import latest_checkpoint

    model, tok, _ = tiny_lm
    for step, complete in ((2, True), (4, True), (6, False)):  # checkpoint-6: killed mid-save
        folder = save_model(model, tok, tmp_path / "checkpoints" / f"checkpoint-{step}")
        if complete:
            (folder / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoints" / "checkpoint-x").mkdir()  # not a step number: never chosen, never a crash
    assert latest_checkpoint(tmp_path / "checkpoints").endswith("checkpoint-4")
    # why the kit keeps its own: transformers' get_last_checkpoint picks the interrupted save
    from transformers.trainer_utils import get_last_checkpoint

    assert get_last_checkpoint(str(tmp_path / "checkpoints")).endswith("checkpoint-6")

    final = tmp_path / build.FINAL
    final.mkdir()
    (final / "wmkit_info.json").write_text(json.dumps({"seed": 0}))  # the weights never made it
    calls = []
    monkeypatch.setattr(build, "build_world_model", lambda *args, **kwargs: calls.append((args, kwargs)) or "rebuilt")
    assert build.ensure_world_model(get_profile("smoke"), tmp_path) == "rebuilt" and len(calls) == 1


def test_a_truncated_final_model_is_rebuilt_with_one_warning(tiny_lm, tmp_path, monkeypatch, capsys):
    """It used to crash `ensure_world_model` (what notebook 02 calls) on every call with SafetensorError."""
    from wmkit.core.models import save_model

    model, tok, config = tiny_lm
    folder = save_model(model, tok, tmp_path / build.FINAL, tiny_config=config)
    (folder / "wmkit_info.json").write_text(json.dumps({"seed": 0, "envs": ["textgame"], "profile": "smoke"}))
    weights = folder / "model.safetensors"
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size - 100)
    calls = []
    monkeypatch.setattr(build, "build_world_model", lambda *args, **kwargs: calls.append((args, kwargs)) or "rebuilt")
    capsys.readouterr()
    assert build.ensure_world_model(get_profile("smoke"), tmp_path) == "rebuilt" and len(calls) == 1
    [warning] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("wmkit:")]
    assert str(folder) in warning and "model.safetensors" in warning and "building it again" in warning


def test_build_ensure_and_evaluate_take_no_default_profile_or_folder():
    """A default profile "auto" evaluated a smoke build at cpu sizes without a word, and a default
    out_dir landed relative to the current directory: both are required now."""
    import inspect

    for function in (build.build_world_model, build.ensure_world_model):
        parameters = inspect.signature(function).parameters
        assert parameters["profile"].default is inspect.Parameter.empty
        assert parameters["out_dir"].default is inspect.Parameter.empty
    assert inspect.signature(build.evaluate_world_model).parameters["profile"].default is inspect.Parameter.empty
    with pytest.raises(TypeError):
        build.ensure_world_model(get_profile("smoke"))
