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
    if path.stem.startswith("02"):
        for mode in ("greedy", "sampled"):
            for summary in (results["textgame"]["before"][mode], results["phone"]["before"][mode]):
                assert summary["n"] > 0 and 0 <= summary["changed"] <= 1 and 0 <= summary["unchanged"] <= 1
        arms = results["textgame"]["arms"]
        assert set(results["sizes"]["rewards"]) <= set(arms)
        for arm in arms.values():
            assert arm["steps"] == results["sizes"]["steps"] and len(arm["reward_curve"]) == arm["steps"]
        assert 0 < results["rwml"]["threshold"]["tau"] <= 1
        assert set(results["rwml"]["quality"]) == set(results["rwml"]["forgetting"])
        assert len(results["best_of_k"]["mle"]) == results["sizes"]["best_of_k"]
        assert results["best_of_k"]["mle"] == sorted(results["best_of_k"]["mle"])  # any-of-k never drops
        from wmkit.stats import VERDICTS

        for v in results["verdicts"]:
            assert v["verdict"] in VERDICTS and v["reason"]
            if v["source"] == "this run":  # one RL seed: no interval, so never a reproduction verdict
                assert v["verdict"] == "not measured"
        forgetting = next(v for v in results["verdicts"] if v["claim"].startswith("RL forgets less"))
        if results["rwml"]["rwml_param_change"] == 0:  # RL did not move the model: the precondition fails
            assert "did not change the model" in forgetting["reason"]
        assert (out / path.stem / "mle_vs_rlvr.png").exists() and (out / path.stem / "rwml.png").exists()
    if path.stem.startswith("03"):
        assert {"sft", "wm_r1"} <= set(results["arms"])
        for arm in results["arms"].values():
            for split in ("heldout", "train_templates"):
                assert arm[split]["n"] > 0 and 0 <= arm[split]["success"] <= 1
        assert results["training"]["wm_r1"]["simulator_steps"] == 0  # WM-R1 never steps the simulator
        assert len(results["training"]["wm_r1"]["history"]) == results["sizes"]["grpo_steps"]
        assert [row["transitions"] for row in results["throughput"]] == ["simulator", "world_model"]
        assert (out / path.stem / "wm_calls_per_trajectory.png").exists()
    if path.stem.startswith("05"):
        from wmkit.bench.claims import CLAIMS
        from wmkit.stats import VERDICTS

        assert results["source"] in ("loaded", "loaded smoke", "ran smoke")
        assert [r["id"] for r in results["rows"]] == [c.id for c in CLAIMS]
        for row in results["rows"]:
            assert row["verdict"] in VERDICTS
            if row["verdict"] == "not measured":
                assert row["reason"]
            else:  # a verdict needs an interval: at least two seeds with different values
                assert row["kit"]["n"] >= 2 and row["kit"]["ci_low"] < row["kit"]["ci_high"]
            if row["kit"]["n"]:  # a number only with the run records that made it
                assert row["records"] and all(Path(p).exists() for p in row["records"])
        assert results["measured"], "the smoke benchmark measured nothing"
        assert (out / path.stem / "verdicts.png").exists()
