"""The one resume rule (wmkit.runs.checkpoint_to_resume): a run resumes only its own checkpoints, and
passes over a damaged one with one warning line."""
import json

import pytest
import torch

from wmkit import runs


def wmkit_lines(err: str) -> list[str]:
    """The kit's own stderr lines (transformers' progress bars aside)."""
    return [line for line in err.splitlines() if line.startswith("wmkit:")]


def truncate(path, keep: float = 0.5) -> None:
    with open(path, "r+b") as f:
        f.truncate(int(path.stat().st_size * keep))


def fake_checkpoint(model, tok, folder):
    """A folder shaped like a Trainer checkpoint: weights, config, optimizer state, trainer state."""
    from wmkit.core.models import save_model

    save_model(model, tok, folder)
    torch.save({"state": {}}, folder / "optimizer.pt")
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": int(folder.name.split("-")[1])}))
    return folder


def test_damage_is_told_by_headers_sizes_and_parses(tiny_lm, tmp_path):
    model, tok, _ = tiny_lm
    folder = fake_checkpoint(model, tok, tmp_path / "checkpoint-2")
    assert runs.checkpoint_damage(folder) is None and runs.model_damage(folder) is None
    weights = folder / "model.safetensors"
    intact = weights.read_bytes()
    weights.write_bytes(intact + b"\0")
    assert "its header says" in runs.checkpoint_damage(folder)  # padded: safetensors refuses it too
    weights.write_bytes(intact[:4])
    assert "less than a header" in runs.checkpoint_damage(folder)
    weights.write_bytes((10**9).to_bytes(8, "little") + intact[8:])
    assert "header alone claims" in runs.checkpoint_damage(folder)
    weights.write_bytes(intact)
    truncate(folder / "optimizer.pt")
    assert runs.checkpoint_damage(folder) == "optimizer.pt is not a complete archive"
    torch.save({"state": {}}, folder / "optimizer.pt")
    (folder / "trainer_state.json").write_text('{"global_step": ')
    assert runs.checkpoint_damage(folder) == "trainer_state.json does not parse"
    (folder / "trainer_state.json").unlink()
    assert runs.checkpoint_damage(folder) == "no trainer_state.json"
    weights.unlink()
    assert runs.model_damage(folder) == "no weights file"


def test_a_damaged_checkpoint_is_skipped_for_the_one_before_with_one_warning(tiny_lm, tmp_path, capsys):
    model, tok, _ = tiny_lm
    key = {"profile": "smoke", "seed": 0}
    assert runs.checkpoint_to_resume(tmp_path, key) is None  # a fresh folder, claimed for this run
    for step in (2, 4):
        fake_checkpoint(model, tok, tmp_path / f"checkpoint-{step}")
    assert runs.checkpoint_to_resume(tmp_path, key).endswith("checkpoint-4")
    truncate(tmp_path / "checkpoint-4" / "model.safetensors")
    capsys.readouterr()
    assert runs.checkpoint_to_resume(tmp_path, key).endswith("checkpoint-2")
    [warning] = wmkit_lines(capsys.readouterr().err)
    assert str(tmp_path / "checkpoint-4") in warning and "model.safetensors" in warning
    assert "resuming from checkpoint-2" in warning
    # kept for a look, out of the Trainer's way (its rotation would keep the higher-numbered folder)
    assert (tmp_path / "damaged-checkpoint-4").is_dir() and not (tmp_path / "checkpoint-4").exists()
    (tmp_path / "checkpoint-2" / "model.safetensors").unlink()
    assert runs.checkpoint_to_resume(tmp_path, key) is None
    assert "training from the start" in wmkit_lines(capsys.readouterr().err)[0]


def test_another_runs_checkpoints_are_refused_in_one_line_naming_both_runs(tmp_path):
    (tmp_path / "checkpoint-3").mkdir()
    runs.claim_checkpoints(tmp_path, {"profile": "smoke", "seed": 0, "settings": {"lr": 1e-3}, "data": "ab"},
                           resume=False)
    (tmp_path / "checkpoint-3").mkdir()
    with pytest.raises(ValueError) as error:
        runs.checkpoint_to_resume(tmp_path, {"profile": "smoke", "seed": 1, "settings": {"lr": 1e-3}, "data": "cd"})
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{tmp_path} holds checkpoints of another run")
    assert "(profile smoke, seed 0, data ab), not of this one (profile smoke, seed 1, data cd)" in message
    assert "delete that folder or choose another output folder" in message


def test_a_truncated_sft_checkpoint_is_skipped_and_training_starts_again(tiny_lm, small_splits, tmp_path, capsys):
    """It used to fail every rerun with SafetensorError (truncated) or "Can't find a valid checkpoint"
    (deleted); now the run trains from the start and ends where an undamaged one does."""
    from wmkit.core.models import build_tiny_model
    from wmkit.core.sft import SFTConfig, train_sft

    _, tok, config = tiny_lm
    train = small_splits["train"][:16]
    sft_config = SFTConfig(output_dir=str(tmp_path), epochs=1, batch_size=8, learning_rate=3e-3,
                           save_steps=2, show_progress=False)
    first = build_tiny_model(tok, config, seed=0)
    train_sft(first, tok, train, [], sft_config)
    truncate(tmp_path / "checkpoint-2" / "model.safetensors")
    capsys.readouterr()
    again = build_tiny_model(tok, config, seed=0)
    result = train_sft(again, tok, train, [], sft_config)
    [warning] = wmkit_lines(capsys.readouterr().err)
    assert str(tmp_path / "checkpoint-2") in warning and "training from the start" in warning
    assert result.extra["resumed_from"] is None and result.steps == 2
    for (name, p), q in zip(first.named_parameters(), again.parameters()):
        assert torch.allclose(p, q, atol=1e-6), name


def test_a_second_seed_into_an_rlvr_folder_is_refused(tiny_lm, small_splits, tmp_path):
    """`train rlvr` with seed=1 into seed 0's folder used to load seed 0's last checkpoint, train
    nothing and save it as seed 1's model. The job's seed draws the RL data sample."""
    from wmkit.core import world_model_rl as rl

    model, tok, _ = tiny_lm
    phone = [t for t in small_splits["train"] if t.env == "phone"]
    config = rl.RLVRConfig(output_dir=str(tmp_path), num_generations=2, prompts_per_step=2, max_steps=1,
                           max_completion_length=8, show_progress=False, save_steps=1)

    def length(completions, **kwargs):
        return [len(c) for c in completions]

    rl.train_rlvr(model, tok, rl.rl_transitions(phone, 0.25, seed=0), config, reward_funcs=[length])
    with pytest.raises(ValueError, match=r"checkpoints of another run \(data \w+.*\), not of this one \(data") as error:
        rl.train_rlvr(model, tok, rl.rl_transitions(phone, 0.25, seed=1), config, reward_funcs=[length])
    assert str(tmp_path / "checkpoints") in str(error.value) and "\n" not in str(error.value)
    again = rl.train_rlvr(model, tok, rl.rl_transitions(phone, 0.25, seed=0), config, reward_funcs=[length])
    assert again.resumed_from.endswith("checkpoint-1")  # its own run still resumes
