import json

import pytest

from wmkit.core import build as pipeline


def test_ensure_world_model_loads_a_saved_one_instead_of_rebuilding(tiny_lm, tmp_path):
    from wmkit.core.models import save_model

    model, tok, config = tiny_lm
    folder = save_model(model, tok, tmp_path / pipeline.FINAL, tiny_config=config)
    (folder / "wmkit_info.json").write_text(json.dumps({"seed": 0, "envs": ["textgame"], "profile": "smoke"}))
    run = pipeline.ensure_world_model("smoke", tmp_path)
    assert run.sft is None and run.info["envs"] == ["textgame"]
    assert {t.env for t in run.splits["train"]} == {"textgame"}
    assert sum(p.numel() for p in run.model.parameters()) == sum(p.numel() for p in model.parameters())


def test_bad_environment_and_seed_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="Unknown environment"):
        pipeline.build_world_model("smoke", tmp_path, envs=("chess",))
    with pytest.raises(TypeError, match="seed"):
        pipeline.build_world_model("smoke", tmp_path, seed="0")
