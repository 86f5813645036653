"""Bad input on the command line and in a notebook's parameters: one clear line, non-zero status,
before any expensive work (the reliability issue's cases, each reproduced first)."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from wmkit import notebook as nb


def run_cli(*args, timeout=120):
    # HF_HUB_OFFLINE: the hub is out of reach here anyway; this makes it so everywhere, and fast.
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "wmkit", *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def one_line(out) -> str:
    assert out.returncode != 0, out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("wmkit: error: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("args, words", [
    # hub id while offline: was a 15-line ModelUnavailableError traceback
    (("world-model", "--profile", "smoke", "--model", "someorg/some-model"),
     ("'someorg/some-model'", "not in the local cache", "MODEL='tiny'")),
    # unwritable --out: was a 34-line FileNotFoundError traceback
    (("world-model", "--profile", "smoke", "--out", "/proc/x"), ("--out", "/proc/x")),
    (("data", "--out", "/proc/x"), ("--out", "/proc/x")),
    # a negative --seed: was rejected by NumPy after the data and the tokenizer were built
    (("world-model", "--profile", "smoke", "--seed", "-3"), ("--seed", "-3")),
    # epochs=.inf: was a 25-line OverflowError traceback after the data was collected
    (("train", "world-model", "--profile", "smoke", "world_model.epochs=.inf"), ("world_model.epochs", "inf")),
    # episodes=0: blamed max_length
    (("train", "world-model", "--profile", "smoke", "episodes=0"), ("world_model.episodes", "0")),
    # eval_transitions=-5: silently evaluated 77 transitions
    (("train", "world-model", "--profile", "smoke", "eval_transitions=-5", "evaluate=true"),
     ("world_model.eval_transitions", "-5")),
    # a negative seed: rejected only after ~29 s of work
    (("train", "world-model", "--profile", "smoke", "seed=-1"), ("seed", "-1")),
    # profile=huge next to --profile smoke: silently ignored
    (("train", "world-model", "--profile", "smoke", "profile=huge", "--dry-run"), ("profile=huge", "--profile smoke")),
])
def test_bad_input_is_one_line_and_fails_fast(args, words, tmp_path):
    if args[0] in ("world-model", "train") and not any("/proc/x" in a for a in args):
        args = (*args, *(["--out", str(tmp_path / "wm")] if args[0] == "world-model" else [f"out={tmp_path / 'wm'}"]))
    start = time.perf_counter()
    line = one_line(run_cli(*args))
    for word in words:
        assert word in line, line
    assert time.perf_counter() - start < 20, "checked before the expensive work"
    assert not (tmp_path / "wm" / "checkpoints").exists()


def test_an_empty_model_folder_is_named_not_sentencepiece(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    line = one_line(run_cli("world-model", "--profile", "smoke", "--model", str(empty), "--out", str(tmp_path / "o")))
    assert str(empty) in line and "no saved model" in line and "sentencepiece" not in line, line


def test_the_same_profile_twice_is_fine():
    out = run_cli("train", "world-model", "--profile", "smoke", "profile=smoke", "--dry-run")
    assert out.returncode == 0 and out.stdout.startswith("profile: smoke"), out.stderr


@pytest.mark.parametrize("profile, seed, error, message", [
    ("huge", 0, ValueError, "PROFILE: unknown profile 'huge'"),
    (None, 0, TypeError, "PROFILE must be a string"),
    ("smoke", -1, ValueError, "SEED must be between 0 and 2**32 - 1, not -1"),
    ("smoke", 2**32, ValueError, "SEED must be between 0 and 2**32 - 1"),
    ("smoke", 1.5, TypeError, "SEED must be an int, not 1.5"),
])
def test_notebook_start_rejects_bad_parameters_in_one_line(tmp_path, profile, seed, error, message):
    with pytest.raises(error) as caught:
        nb.start("00_test", profile, seed, output_dir=str(tmp_path / "out"), runs_dir=str(tmp_path))
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text and len(text) < 120, text
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert not (tmp_path / "out").exists(), "nothing made before the parameters are checked"


def test_notebook_start_rejects_an_unwritable_output_dir():
    with pytest.raises(ValueError, match="OUTPUT_DIR '/proc/x'"):
        nb.start("00_test", "smoke", 0, output_dir="/proc/x")


def test_ctrl_c_during_bench_is_one_line_and_status_130(monkeypatch, capsys):
    """The handler itself (no signals): Ctrl-C inside the benchmark ends with one line, status 130."""
    import os

    import wmkit.__main__ as cli
    from wmkit.bench import runner

    def interrupted_run(*args, **kwargs):
        print("half a table", flush=True)
        raise KeyboardInterrupt

    exits = []
    monkeypatch.setattr(runner, "run_bench", interrupted_run)
    monkeypatch.setattr(os, "_exit", exits.append)
    import signal

    previous = signal.getsignal(signal.SIGINT)
    try:
        status = cli.main(["bench", "--profile", "smoke", "--seeds", "1"])
    except KeyboardInterrupt:  # (not left to reach pytest, which would stop the session)
        pytest.fail("Ctrl-C escaped wmkit's main as a traceback")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert exits == [130] and status == 130
    err = capsys.readouterr().err
    assert err == "wmkit: interrupted; rerun the same command to resume\n", err
