"""Every notebook runs top to bottom in the smoke profile and writes a well-formed results.json."""
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_smoke_profile(path, tmp_path):
    from wmkit.__main__ import reproduce

    out = reproduce("smoke", only=[path.name[:2]], out_root=tmp_path)
    results = json.loads((out / path.stem / "results.json").read_text())
    assert results["notebook"] == path.stem and results["profile"] == "smoke"
    assert (out / path.name).exists()
    combined = json.loads((out / "results.json").read_text())
    assert path.stem in combined["notebooks"]
    if path.stem.startswith("01"):
        for env in ("textgame", "phone"):
            evaluation = results["evaluation"][env]
            for method in ("model_greedy", "model_sampled", "no_change", "most_frequent"):
                summary = evaluation[method]
                assert summary["n"] > 0 and 0 <= summary["overall"] <= 1
            assert evaluation["no_change"]["changed"] == 0.0  # true by construction
            assert len(evaluation["rollout"]["model"]) == 5
        assert set(results["verdicts"]) == {"textgame", "phone"}
        assert any(p.suffix == ".png" for p in (out / path.stem).iterdir())
