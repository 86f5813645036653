"""Every notebook runs top to bottom in the smoke profile and writes a well-formed results.json."""
import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def stderr_outputs(executed: Path) -> list[str]:
    """The stderr stream outputs of an executed notebook, as 'cell N: first line'."""
    cells = json.loads(executed.read_text())["cells"]
    return [f"cell {i}: " + "".join(o.get("text", "")).strip().splitlines()[0][:160] if "".join(o.get("text", "")).strip()
            else f"cell {i}: (blank)"
            for i, cell in enumerate(cells) for o in cell.get("outputs", [])
            if o.get("output_type") == "stream" and o.get("name") == "stderr"]


INSTALLED_RUN = ("03", "05")
"""Notebooks whose smoke run is the one of tests/test_installed_wheel.py (the kit installed from its
wheel, as in Colab), checked there by :func:`check_smoke_run`, and not run a second time here."""


SERIES_WORLD_MODEL = Path("01_build_world_model") / "world_model"
"""Where notebooks 02 and 03 find notebook 01's world model in the runs folder (rebuilt there when missing)."""


@pytest.fixture(scope="session")
def smoke_world_model(tmp_path_factory) -> Path:
    """Notebook 01's world model at smoke (seed 0), built once for the whole test run by the function the
    notebooks call (`wmkit.core.build.series_world_model`) and shared by the pytest-xdist workers (a file
    lock in their common temporary folder): each notebook run that starts from it gets a copy
    (:func:`with_series_world_model`), as `make reproduce` runs notebook 02 after notebook 01. Where it is
    missing the notebooks build it themselves: test_notebook_02_runs_without_java (a fresh clone) and
    tests/test_installed_wheel.py's notebook 03 run that path."""
    from filelock import FileLock

    from wmkit.core import build
    from wmkit.profiles import get_profile

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the workers' basetemps are popen-gw<n> folders of one run's folder
    runs = shared / "smoke_series_runs"
    with FileLock(str(shared / "smoke_series_runs.lock")):
        if not (runs / SERIES_WORLD_MODEL / build.FINAL / "wmkit_info.json").exists():
            build.series_world_model(get_profile("smoke"), runs, seed=0)
    return runs / SERIES_WORLD_MODEL


def with_series_world_model(runs: Path, world_model: Path) -> Path:
    """`runs` holding a copy of notebook 01's world model `world_model` where the notebooks look for it."""
    shutil.copytree(world_model, runs / SERIES_WORLD_MODEL)
    return runs


STARTS_FROM_NOTEBOOK_01 = ("02",)
"""Notebooks of this file's smoke runs that load notebook 01's world model (given: `smoke_world_model`)."""


@pytest.mark.notebook
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if not p.name.startswith(INSTALLED_RUN)],
                         ids=[p.stem for p in NOTEBOOKS if not p.name.startswith(INSTALLED_RUN)])
def test_notebook_runs_in_smoke_profile(path, tmp_path, request):
    from wmkit.__main__ import reproduce

    if path.name.startswith(STARTS_FROM_NOTEBOOK_01):
        with_series_world_model(tmp_path, request.getfixturevalue("smoke_world_model"))
    out = reproduce("smoke", only=[path.name[:2]], out_root=tmp_path)
    check_smoke_run(path.stem, out, out / path.name)
    combined = json.loads((out / "results.json").read_text())
    assert path.stem in combined["notebooks"]


def check_smoke_run(stem: str, out: Path, executed: Path) -> None:
    """What a smoke run of notebook `stem` must show: its results.json and figures in `out`/`stem`
    (`out`: the profile's runs folder), the executed copy `executed` with no stderr output."""
    results = json.loads((out / stem / "results.json").read_text())
    assert results["notebook"] == stem and results["profile"] == "smoke"
    assert executed.exists()
    # A reader sees progress and results, not red stderr bands: dependencies' warnings and bars are
    # silenced (wmkit.quiet) and tqdm draws widgets (ipywidgets), so no cell writes to stderr.
    noise = stderr_outputs(executed)
    assert not noise, f"{len(noise)} stderr outputs: {noise[:5]}"
    if stem.startswith("01"):
        for env in ("textgame", "phone"):
            evaluation = results["evaluation"][env]
            for method in ("model_greedy", "model_sampled", "no_change", "most_frequent"):
                summary = evaluation[method]
                assert summary["n"] > 0 and 0 <= summary["overall"] <= 1
            assert evaluation["no_change"]["changed"] == 0.0  # true by construction
            assert len(evaluation["rollout"]["model"]) == 5
        assert set(results["verdicts"]) == {"textgame", "phone"}
        assert any(p.suffix == ".png" for p in (out / stem).iterdir())
    if stem.startswith("02"):
        sizes = results["sizes"]["regime"]
        regime = results["regime"]
        assert set(regime["levels"]) == set(sizes["levels"])  # results.json sorts its keys
        assert len(regime["levels"][regime["working_level"]]["runs"]) == sizes["seeds"]
        for level in regime["levels"].values():
            for part in ("changed", "unchanged"):
                measured = level["before"][part]
                assert measured["n"] > 0 and 0 <= measured["sampled"] <= 1 and 0 <= measured["greedy"] <= 1
                assert len(measured["pass_at"]) == sizes["eval_samples"]
                assert measured["pass_at"] == sorted(measured["pass_at"])  # pass@k never drops with k
            for rl_run in level["runs"]:
                assert rl_run["steps"] == sizes["grpo"]["max_steps"] and len(rl_run["reward_curve"]) == rl_run["steps"]
                assert set(rl_run["gain"]) == set(level["gain"])
        assert results["sanity"]["steps"] == sizes["sanity_steps"] and results["sanity"]["n"] > 0
        for mode in ("greedy", "sampled"):
            summary = results["phone"]["before"][mode]
            assert summary["n"] > 0 and 0 <= summary["changed"] <= 1 and 0 <= summary["unchanged"] <= 1
        textgame_rwml = results["rwml_textgame"]
        assert len(textgame_rwml["per_seed"]) == textgame_rwml["sizes"]["seeds"]
        twx = results["rwml_twx"]
        if "skipped" in twx:  # no Java 17 here: see test_notebook_02_runs_without_java
            assert "Java" in twx["skipped"]
        else:
            assert 0 < twx["threshold"]["tau"] <= 1
            assert set(twx["quality"]) == set(twx["forgetting"])
        # RWML's agent: one seed run here at smoke (RUN_RWML_AGENT's default), drawn with its four models
        agent = results["rwml_agent"]["run"]
        assert agent["seed"] == results["seed"]
        assert set(agent["acting"]) == {"warm", "rwml", "warm_policy_rl", "rwml_policy_rl"}
        for arm in agent["acting"].values():
            assert 0 <= arm["greedy"]["success"] <= 1 and 0 <= arm["sampled"]["success"] <= 1
        assert (out / stem / "rwml_agent.png").exists()
        _assert_beside_records(results["beside_records"], {"rlvr.regime_changed", "rwml.vs_sft", "rlvr.web_f1",
                                                            "rwml.invalid_actions"})
        invalid = next(r for r in results["beside_records"] if r["id"] == "rwml.invalid_actions")
        assert set(invalid["yours"]) == {str(agent["seed"])}  # the agent's claim beside the agent's run
        regime_row = next(r for r in results["beside_records"] if r["id"] == "rlvr.regime_changed")
        assert set(regime_row["yours"]) == {str(r["seed"]) for r in regime["levels"][regime["working_level"]]["runs"]}
        for figure in ("working_level.png", "regime_curve.png", "rwml_textgame.png"):
            assert (out / stem / figure).exists()
    if stem.startswith("03"):
        ladder_sizes = results["sizes"]["ladder"]
        ladder = results["ladder"]
        rungs = ladder_sizes["notebook_error_rates"] or ladder_sizes["error_rates"]
        assert set(ladder["rungs"]) == {f"{p:g}" for p in rungs}
        for mode in ("greedy", "sampled"):
            assert 0 <= ladder["start"][mode]["success"] <= 1 and ladder["start"][mode]["per_template"]
        for rung in ladder["rungs"].values():
            assert 0 <= rung["greedy"]["success"] <= 1 and 0 <= rung["sampled"]["success"] <= 1
            assert len(rung["history"]) == ladder_sizes["grpo"]["max_steps"]
        exact = ladder["rungs"]["0"]["fidelity"]  # p = 0 is the simulator: agrees on every judgment
        assert exact["agreement"] == 1.0 and (exact["transitions"] == 0 or exact["exact"] == 1.0)
        assert "learned_world_model" in ladder  # notebook 01's model, measured on the same axis
        assert set(results["pool_counts"]) == {"unique prompts", "template-balanced", "evaluation"}
        _assert_beside_records(results["beside_records"], {"wm_r1.positive_control", "wm_r1.small_world_control",
                                                            "wm_r1.vs_zero_shot"})
        # its sections over seeds show the cpu records shipped with the kit, labelled so, not one smoke seed
        for key in ("verdict_source", "small_world_source", "learned_world_model_source"):
            assert results[key].startswith("the cpu profile's records shipped with the kit, seeds "), results[key]
        assert [row["transitions"] for row in results["throughput"]] == ["simulator", "world_model"]
        for figure in ("fidelity_ladder_this_seed.png", "wm_calls_per_trajectory.png"):
            assert (out / stem / figure).exists()
        # section 10: at smoke RUN_ABLATIONS trains every arm of wm_r1_learned_ablations from one start,
        # each with the same number of updates; its figure is drawn (records, or this run labelled so)
        from wmkit.wm_r1.ablations import ABLATION_ARMS, TRAINED_ARMS

        ablation = results["learned_ablations"]
        assert ablation is not None and set(ablation["arms"]) == set(ABLATION_ARMS)
        assert len({len(ablation["arms"][arm]["history"]) for arm in TRAINED_ARMS}) == 1
        assert all(0 <= ablation["arms"][arm][mode]["success"] <= 1 for arm in TRAINED_ARMS for mode in ("greedy", "sampled"))
        assert (out / stem / "learned_ablations.png").exists()
        _assert_beside_records(results["beside_records"], {"wm_r1.imagined_calls", "wm_r1.calls_fall"})
    if stem.startswith("06"):

        sizes = results["sizes"]
        assert len(results["runs"]) == sizes["seeds"] and results["reconstruction"]["l1"] == 0.0
        for seed_run in results["runs"]:
            contrast = [f"changed_{sizes['contrast_reward']}"] if sizes["contrast_reward"] else []
            assert set(seed_run["arms"]) == {"all", "changed", *contrast}
            assert {arm["reward"] for key, arm in seed_run["arms"].items() if key in ("all", "changed")} == {
                sizes["reward"]}
            for measured in (seed_run["mle"], *seed_run["arms"].values()):
                assert 0 <= measured["one_step"]["greedy"]["l1"] <= 1 and -1 <= measured["one_step"]["greedy"]["ssim"] <= 1
                assert len(measured["rollout"]["curves"]["l1"]) == min(sizes["horizon"], sizes["steps"])
            for arm in seed_run["arms"].values():
                assert arm["rl_steps"] == sizes["grpo"]["max_steps"] and len(arm["reward_curve"]) == arm["rl_steps"]
        _assert_beside_records(results["beside_records"], {"rlvr.video", "rlvr.video_pixel_hacking"})
        assert {int(s) for s in results["beside_records"][0]["yours"]} == set(results["seeds"])
        for figure in ("metric_vs_horizon.png", "rollout_grid.png", "codebook.png"):
            assert (out / stem / figure).exists()
    if stem.startswith("05"):
        from wmkit.bench.claims import CLAIMS
        from wmkit.stats import VERDICTS

        assert results["source"] in ("loaded", "loaded smoke", "ran smoke", "shipped cpu")
        # without a bench.json of its own the notebook shows the published cpu report (executed/cpu/bench.json)
        assert results["source"] == "loaded" or results["shipped"]["headline"]
        assert [r["id"] for r in results["rows"]] == [c.id for c in CLAIMS]
        for row in results["rows"]:
            assert row["verdict"] in VERDICTS
            if row["verdict"] == "not measured":
                assert row["reason"]
            else:  # a verdict needs an interval: at least two seeds with different values
                assert row["kit"]["n"] >= 2 and row["kit"]["ci_low"] < row["kit"]["ci_high"]
            if row["kit"]["n"]:  # a number only with the run records that made it
                assert row["records"] and all(Path(p).exists() for p in row["records"])
        if results["source"] == "shipped cpu":  # the published report: its records measure claims
            assert results["measured"] or results["measured_exploratory"], "the published report measured nothing"
        else:
            assert results["measured"], "the report shown measured nothing"
        # At smoke the notebook runs the one-seed smoke benchmark: it must measure rows and judge none.
        smoke = results["smoke_benchmark"]
        assert smoke["measured"], "the smoke benchmark measured nothing"
        assert smoke["judged"] == [], "one smoke seed gave a verdict"
        assert (out / stem / "verdicts.png").exists()


def _assert_beside_records(rows: list[dict], some_ids: set[str]) -> None:
    """A notebook's claims: the card's verdict (the published report's) and this run's values, no verdict of its own."""
    from wmkit.stats import VERDICTS

    assert some_ids <= {r["id"] for r in rows}
    for row in rows:
        assert row["card"] is None or row["card"]["verdict"] in VERDICTS
        assert all(v is None or isinstance(v, float) for v in row["yours"].values())


@pytest.mark.notebook
@pytest.mark.slow
def test_notebook_02_runs_without_java(tmp_path, monkeypatch):
    """Where Java 17 is missing (a fresh Colab, a conda env without openjdk), notebook 02 skips its
    TextWorldExpress run with one printed reason, records that claim as not measured, and runs the rest.
    Run as a fresh clone at `cpu` would: RWML's agent not run here (RUN_RWML_AGENT = False, cpu's
    default) and benchmark records ignored (WMKIT_RECORDS=none, inherited by the kernel): one line says
    what an agent seed costs and the command, no agent figure is drawn, and the TextWorldExpress
    policy's records read "not measured"."""
    from wmkit.__main__ import reproduce
    from wmkit.bench import runner as bench

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"  # first on the kernel's PATH: a `java` that is not there
    java.write_text('#!/bin/sh\necho "java: command not found" >&2\nexit 127\n')
    java.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv(bench.RECORDS_ENV, "none")
    out = reproduce("smoke", only=["02"], out_root=tmp_path / "runs", parameters={"RUN_RWML_AGENT": False})
    stem = "02_rlvr_world_model"
    results = json.loads((out / stem / "results.json").read_text())
    assert results["rwml_agent"]["run"] is None and not (out / stem / "rwml_agent.png").exists()
    invalid = next(r for r in results["beside_records"] if r["id"] == "rwml.invalid_actions")
    assert invalid["yours"] == {}
    reason = results["rwml_twx"]["skipped"]
    assert "Java 17" in reason and "openjdk-17-jre-headless" in reason
    twx_claim = next(r for r in results["beside_records"] if r["id"] == "rwml.twx_vs_base")
    assert twx_claim["yours"] == {}  # nothing of its own to put beside the records
    # The rest ran: the regime experiment, the phone run and RWML on the kit's text game.
    assert results["regime"]["levels"] and results["phone"]["after"] and results["rwml_textgame"]["per_seed"]
    cells = json.loads((out / f"{stem}.ipynb").read_text())["cells"]
    printed = ["".join(o.get("text", "")) for c in cells for o in c.get("outputs", []) if o.get("output_type") == "stream"]
    assert sum("TextWorldExpress section skipped" in text for text in printed) == 1
    assert sum("RWML's agent is not run here" in text and "--only rwml_agent" in text for text in printed) == 1
    assert sum("no benchmark records of rwml_agent yet" in text for text in printed) == 1
    assert sum("TextWorldExpress policy experiment: not measured" in text for text in printed) == 1
    assert not stderr_outputs(out / f"{stem}.ipynb")


@pytest.mark.notebook
@pytest.mark.slow
def test_notebook_03_runs_with_no_records_and_no_learned_run(tmp_path, monkeypatch, smoke_world_model):
    """A fresh clone at `cpu`: notebook 03 does not train its learned world model there and no benchmark
    records exist. It crashed (AttributeError on None) at the first section that reads records; it must
    run to the end and say "not measured" with the command that measures it. Forced here at smoke:
    records ignored (WMKIT_RECORDS=none, inherited by the kernel) and the learned run switched off.
    Notebook 01's world model is given (`smoke_world_model`): without it notebook 03 builds it, the
    path tests/test_installed_wheel.py's run of notebook 03 takes."""
    from wmkit.__main__ import reproduce
    from wmkit.bench import runner as bench

    monkeypatch.setenv(bench.RECORDS_ENV, "none")
    stem = "03_wm_r1_gui_agent"
    with_series_world_model(tmp_path, smoke_world_model)
    out = reproduce("smoke", only=["03"], out_root=tmp_path, parameters={"LEARNED_WORLD_MODEL_HERE": False,
                                                                                 "LADDER_HERE": False,
                                                                                 "RUN_ABLATIONS": False})
    results = json.loads((out / stem / "results.json").read_text())
    assert results["learned_world_model"] is None and results["learned_world_model_summary"] is None
    assert results["learned_world_model_source"].startswith("not measured (")
    # asked to read the ladder's record, found none: trained it here and said so
    assert results["ladder_source"] == "trained in this notebook (no record found)" and results["ladder"]["rungs"]
    cells = json.loads((out / f"{stem}.ipynb").read_text())["cells"]
    printed = "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", [])
                      if o.get("output_type") == "stream")
    assert "--only wm_r1_learned" in printed  # the command that measures it
    # the ablations neither run nor recorded: their cost and the command, and the notebook goes on
    assert results["learned_ablations"] is None and results["learned_ablations_records"] == 0
    assert "RUN_ABLATIONS is off" in printed and "--only wm_r1_learned_ablations" in printed
    assert printed.count("records ignored") >= 3  # the ladder, the small world and the learned model
    assert not stderr_outputs(out / f"{stem}.ipynb")
