import subprocess
import sys

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
    for command in ("reproduce", "run", "data", "world-model", "train", "bench"):
        assert command in out.stdout, command
    out = run_cli("run", "--help")
    assert out.returncode == 0
    for word in ("rlvr-world", "rwml", "wm-r1", "wmrl", "--profile", "--seeds", "--out", "--sweep", "--arms",
                 "--check"):
        assert word in out.stdout, word


@pytest.mark.parametrize("args, message", [
    (("run", "dreamer", "--profile", "smoke"),
     "wmkit: error: unknown paper 'dreamer': choose one of rlvr-world, rwml, wm-r1, wmrl"),
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


@pytest.mark.parametrize("paper, module, extra, expected", [
    ("rlvr-world", "wmkit.rlvr_world.experiment", ["--sweep", "--lora", "--steps", "3", "--runs-dir", "R"],
     {"runs_dir": "R", "sweep": True, "steps": 3, "lora": True}),
    ("rwml", "wmkit.rwml.experiment", [], {"runs_dir": None}),
    ("wm-r1", "wmkit.wm_r1.experiment", ["--arms", "sft", "wm_r1", "--first-seed", "4"],
     {"first_seed": 4, "arms": ["sft", "wm_r1"], "threads": 2}),
    ("wmrl", "wmkit.wmrl.experiment", ["--check", "5"], {"check": "5"}),
])
def test_run_resolves_the_profile_once_and_calls_the_papers_run_seeds(monkeypatch, paper, module, extra, expected):
    import importlib

    from wmkit.__main__ import main
    from wmkit.profiles import PROFILES

    calls = []
    target = importlib.import_module(module)
    monkeypatch.setattr(target, "run_seeds", lambda *args, **kwargs: calls.append((args, kwargs)))
    assert main(["run", paper, "--profile", "smoke", "--seeds", "2", "--out", "x.json", *extra]) == 0
    (args, kwargs), = calls
    assert args == (PROFILES["smoke"], 2, "x.json")
    assert kwargs == expected
