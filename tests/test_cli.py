import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "wmkit", *args], capture_output=True, text=True, timeout=120)


def test_unknown_profile_is_one_clear_line():
    out = run_cli("world-model", "--profile", "huge")
    assert out.returncode == 2
    assert out.stderr.strip() == "wmkit: error: Unknown profile 'huge': choose one of auto, smoke, cpu, gpu"


def test_bad_seed_type_is_rejected_by_the_parser():
    out = run_cli("world-model", "--seed", "abc")
    assert out.returncode == 2 and "invalid int value" in out.stderr


def test_help_lists_every_subcommand():
    out = run_cli("--help")
    assert out.returncode == 0
    for command in ("reproduce", "run", "data", "world-model", "train", "bench", "readme"):
        assert command in out.stdout, command
    out = run_cli("run", "--help")
    assert out.returncode == 0
    for word in ("rlvr-world", "rwml", "wm-r1", "wmrl", "rlvr-video", "--profile", "--seeds", "--out", "--sweep", "--arms",
                 "--check"):
        assert word in out.stdout, word


@pytest.mark.parametrize("command", ["reproduce", "run", "world-model", "train", "bench"])
def test_every_profile_option_names_the_profiles_in_its_help(command):
    """A reader of `--help` learns which profiles exist without reading the code (reproduce, world-model and
    bench once said only `--profile PROFILE`)."""
    out = run_cli(command, "--help")
    assert out.returncode == 0
    profile_help = out.stdout.split("--profile PROFILE", 2)[-1].split("\n  --", 1)[0]
    for name in ("smoke", "cpu", "gpu", "auto"):
        assert name in profile_help, (command, name, profile_help)


@pytest.mark.parametrize("args, message", [
    (("run", "dreamer", "--profile", "smoke"),
     "wmkit: error: unknown paper 'dreamer': choose one of rlvr-world, rlvr-video, rwml, wm-r1, wmrl"),
    (("run", "wmrl", "--profile", "huge"),
     "wmkit: error: Unknown profile 'huge': choose one of auto, smoke, cpu, gpu"),
    (("run", "wmrl", "--profile", "smoke", "--sweep"), "wmkit: error: --sweep not an option of wmrl"),
    (("run", "rwml", "--profile", "smoke", "--arms", "sft"), "wmkit: error: --arms not an option of rwml"),
    (("run", "wmrl", "--profile", "smoke", "--check", "7"), "wmkit: error: --check must be 4, 5 or all, not '7'"),
    (("run", "wmrl", "--profile", "smoke", "--seeds", "0"), "wmkit: error: --seeds must be at least 1"),
])
def test_run_with_bad_input_exits_2_with_one_line(args, message):
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stderr.strip() == message
    assert out.stdout == ""


@pytest.mark.parametrize("paper, extra, expected", [
    ("rlvr-world", ["--sweep", "--lora", "--steps", "3", "--runs-dir", "R"],
     {"runs_dir": "R", "sweep": True, "steps": 3, "lora": True}),
    ("rwml", [], {}),
    ("wm-r1", ["--arms", "sft", "wm_r1", "--first-seed", "4"], {"first_seed": 4, "arms": ["sft", "wm_r1"]}),
    ("wmrl", ["--check", "5"], {"check": "5"}),
    ("rlvr-video", ["--runs-dir", "R"], {"runs_dir": "R"}),
])
def test_run_resolves_the_profile_once_and_passes_the_papers_options(monkeypatch, paper, extra, expected):
    from wmkit import experiments
    from wmkit.__main__ import main
    from wmkit.profiles import PROFILES

    calls = []
    monkeypatch.setattr(experiments, "run_over_seeds", lambda *args, **kwargs: calls.append((args, kwargs)))
    assert main(["run", paper, "--profile", "smoke", "--seeds", "2", "--out", "x.json", *extra]) == 0
    (args, kwargs), = calls
    assert args == (paper, PROFILES["smoke"], 2, "x.json")
    assert kwargs == expected


@pytest.mark.parametrize("paper, options, function, passed", [
    ("rlvr-world", {"steps": 3}, "run_rlvr_seed", {}),
    ("rlvr-world", {"sweep": True, "lora": True}, "run_rlvr_sweep", {"lora": True}),
    ("wm-r1", {"arms": ["sft"], "threads": 1}, "run_wm_r1_seed", {"arms": ["sft"], "threads": 1}),
    ("wmrl", {"check": "4"}, "run_wmrl_seed", {"check": "4"}),
])
def test_run_over_seeds_gives_each_seed_the_papers_options_and_keeps_finished_seeds(
        monkeypatch, tmp_path, paper, options, function, passed):
    """The registry entry's function gets the options that go to it (`--steps` changes the sizes
    instead); a second call with more seeds runs only the new ones."""
    import dataclasses
    import json

    from wmkit import experiments
    from wmkit.profiles import PROFILES

    entry = experiments.get(paper)
    if options.get("sweep"):
        entry = experiments.REGISTRY["rlvr_lr_sweep"]
    calls = []

    def fake(profile, seed, runs_root, sizes, **kwargs):
        calls.append((seed, kwargs, sizes))
        return {"seed": seed}

    name = entry.name
    monkeypatch.setitem(experiments.REGISTRY, name, dataclasses.replace(
        entry, run_one_seed=fake, combine=lambda profile, records, sizes, **kw: {"seeds": list(records)}))
    assert entry.run_one_seed.split(":")[-1] == function if isinstance(entry.run_one_seed, str) else \
        entry.run_one_seed.__name__ == function
    out = tmp_path / "x.json"
    experiments.run_over_seeds(paper, PROFILES["smoke"], 1, out, **options)
    assert [(s, k) for s, k, _ in calls] == [(0, passed)]
    if "steps" in options:
        assert calls[0][2].grpo.max_steps == 3
    experiments.run_over_seeds(paper, PROFILES["smoke"], 2, out, **options)
    seeds = [0] if options.get("sweep") else [0, 1]
    assert [s for s, _, _ in calls] == seeds
    assert json.loads(out.read_text())["seeds"] == seeds


def test_reproduce_only_rejects_an_unknown_notebook_and_writes_nothing(tmp_path):
    from wmkit.__main__ import main, reproduce

    with pytest.raises(ValueError, match=r"--only 09: no such notebook"):
        reproduce("smoke", only=["09"], out_root=tmp_path)
    assert not (tmp_path / "results.json").exists()
    assert main(["reproduce", "--profile", "smoke", "--only", "09"]) == 2


def test_reproduce_only_keeps_the_other_notebooks_entries(tmp_path, monkeypatch):
    """`--only 02` reruns notebook 02 and merges it into runs/<profile>/results.json instead of
    replacing the file (which dropped every other notebook's entry)."""
    import json

    import papermill

    from wmkit.__main__ import reproduce

    def fake_execute(source, output, parameters, **kwargs):  # writes what a notebook would
        out_dir = tmp_path / parameters["OUTPUT_DIR"].split("/")[-1]
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "results.json").write_text(json.dumps({"notebook": out_dir.name, "value": 2}))

    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    earlier = {"profile": "smoke", "notebooks": {"01_build_world_model": {"value": 1},
                                                 "02_rlvr_world_model": {"value": 0}}}
    (tmp_path / "results.json").write_text(json.dumps(earlier))
    reproduce("smoke", only=["02"], out_root=tmp_path)
    combined = json.loads((tmp_path / "results.json").read_text())
    assert combined["notebooks"]["01_build_world_model"] == {"value": 1}
    assert combined["notebooks"]["02_rlvr_world_model"]["value"] == 2


@pytest.mark.parametrize("only", [[], [""], ["  "]])
def test_reproduce_only_without_a_notebook_is_refused(only, tmp_path, capsys):
    """`--only` with no value (or an empty one) ran every notebook; it is refused like an unknown one."""
    from wmkit.__main__ import main, reproduce

    with pytest.raises(ValueError, match="--only needs notebook numbers"):
        reproduce("smoke", only=only, out_root=tmp_path)
    assert not (tmp_path / "results.json").exists()
    assert main(["reproduce", "--profile", "smoke", "--only", *only]) == 2
    assert "--only needs notebook numbers" in capsys.readouterr().err


def test_a_failing_notebook_is_one_line_and_the_series_goes_on(tmp_path, monkeypatch, capsys):
    """A notebook that fails inside `reproduce` is reported in one line (name, cell, the error's last
    line, the partial notebook's path); the notebooks after it still run; the command exits 1 with
    results.json written (the failed notebook's entry holds the line)."""
    import json

    import papermill
    from papermill.exceptions import PapermillExecutionError

    from wmkit import __main__ as cli

    ran = []

    def fake_execute(source, output, parameters, **kwargs):
        name = Path(source).stem
        ran.append(name)
        if name.startswith("03"):
            raise PapermillExecutionError(cell_index=23, exec_count=24, source="x = None.get",
                                          ename="AttributeError",
                                          evalue="'NoneType' object has no attribute 'get'",
                                          traceback=["line"] * 40)
        out_dir = Path(parameters["OUTPUT_DIR"])
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "results.json").write_text(json.dumps({"notebook": name}))

    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    monkeypatch.setattr(cli, "expected_seconds", lambda names, *a: dict.fromkeys(names))
    with pytest.raises(cli.NotebooksFailed) as failed:
        cli.reproduce("smoke", only=["02", "03", "04"], out_root=tmp_path)
    line = str(failed.value)
    assert line.count("\n") == 0
    assert line.startswith("03_wm_r1_gui_agent: failed at cell 24: AttributeError: 'NoneType' object has no")
    assert str(tmp_path / "03_wm_r1_gui_agent.ipynb") in line
    assert [n[:2] for n in ran] == ["02", "03", "04"]  # 04 still ran after 03 failed
    combined = json.loads((tmp_path / "results.json").read_text())
    assert combined["notebooks"]["03_wm_r1_gui_agent"]["error"] == line
    assert combined["notebooks"]["04_anchored_debiasing"]["notebook"] == "04_anchored_debiasing"
    capsys.readouterr()
    monkeypatch.setattr(cli, "reproduce", lambda *a, **k: (_ for _ in ()).throw(cli.NotebooksFailed(line)))
    assert cli.main(["reproduce", "--profile", "smoke"]) == 1
    assert "1 notebook(s) failed" in capsys.readouterr().err


def test_default_outputs_go_under_the_working_folder_of_an_installed_kit(tmp_path, monkeypatch):
    """A checkout writes runs/ beside its notebooks; an installed kit (the package in site-packages,
    no notebooks/ beside it) writes ./runs of the working folder; WMKIT_RUNS overrides both."""
    from wmkit import runs

    monkeypatch.delenv(runs.RUNS_ENV, raising=False)
    assert runs.checkout() == runs.REPO and runs.default_runs_root() == runs.REPO / "runs"
    site_packages = tmp_path / "site-packages"
    (site_packages / "wmkit").mkdir(parents=True)
    monkeypatch.setattr(runs, "REPO", site_packages)
    monkeypatch.chdir(tmp_path)
    assert runs.checkout() is None and runs.default_runs_root() == tmp_path / "runs"
    monkeypatch.setenv(runs.RUNS_ENV, str(tmp_path / "mine"))
    assert runs.default_runs_root() == tmp_path / "mine"


def test_reproduce_from_an_installed_kit_or_without_papermill_is_one_line(tmp_path, monkeypatch, capsys):
    """`wmkit reproduce` of a kit without its repository ran 0 notebooks, wrote results.json into
    site-packages and exited 0; without papermill (the dev extra) it died with a traceback."""
    from wmkit import __main__ as cli
    from wmkit import runs

    real_repo = runs.REPO
    monkeypatch.setattr(runs, "REPO", tmp_path / "site-packages")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["reproduce", "--profile", "smoke"]) == 2
    err = capsys.readouterr().err
    assert "wmkit reproduce needs the repository's files" in err and "clone https://github.com/" in err
    assert not list(tmp_path.rglob("results.json"))
    monkeypatch.setattr(runs, "REPO", real_repo)
    monkeypatch.setitem(sys.modules, "papermill", None)  # as if not installed: importing it raises ImportError
    monkeypatch.setattr(cli, "default_runs_root", lambda: tmp_path / "runs")  # should it get further
    assert cli.main(["reproduce", "--profile", "smoke"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["wmkit: error: wmkit reproduce needs papermill, which the kit's 'dev' extra installs: "
                   "pip install 'wmkit[dev]' (make setup installs it in a checkout)"]
