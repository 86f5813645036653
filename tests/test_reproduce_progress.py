"""The terminal line of `python -m wmkit reproduce`: notebook, cell, time against the expected, and
the training bar the kernel shows (read from tqdm's widget or its text)."""
import io

from wmkit.__main__ import expected_seconds
from wmkit.reproduce_progress import SeriesProgress, read_bar


def test_read_bar_reads_tqdm_text_and_widget_meters():
    text = "\rSFT textgame:  40%|████      | 120/300 [00:20<00:30,  5.90it/s]"
    assert read_bar(text) == ("SFT textgame", "120/300 [00:20<00:30]")
    # tqdm.notebook: HTML-escaped, spaces as U+2007, description and meter in two widgets
    widget = "GRPO:\u2007\u200740%| 12/30\u2007[00:04&lt;00:06,\u2007\u20073.00it/s]"
    assert read_bar(widget) == ("GRPO", "12/30 [00:04<00:06]")
    assert read_bar("a warning, no bar") is None


def test_series_line_counts_time_against_the_last_run_and_the_rest():
    out = io.StringIO()
    progress = SeriesProgress({"01_a": 120.0, "02_b": 60.0, "03_c": 30.0}, stream=out, log_every=0)
    progress.begin("01_a", cells=10)
    progress.cell_started(3)
    progress.bar_text("train: 50%|█| 5/10 [00:01<00:01]")
    line = progress.line()
    assert line.startswith("[1/3] 01_a  cell 4/10 | 0:00 so far, ~")  # ~2:00 or ~1:59 left
    assert "then ~1:30 for the other 2" in line and "train 5/10 [00:01<00:01]" in line
    progress.start -= 500  # past the expected time: say so, never a negative ETA
    assert "past the expected 2:00" in progress.line()
    progress.end(500)
    assert "01_a done in 8:20" in out.getvalue()


def test_expected_seconds_prefer_the_last_run_then_the_target():
    previous = {"01_build_world_model": {"wall_seconds": 80.4}}
    names = ["01_build_world_model", "04_anchored_debiasing"]
    assert expected_seconds(names, "smoke", previous) == {"01_build_world_model": 80.4, "04_anchored_debiasing": 120.0}
    assert expected_seconds(names, "gpu", {}) == {"01_build_world_model": None, "04_anchored_debiasing": None}


def test_notebooks_and_reproduce_agree_on_the_kernel_python3_of_this_interpreter():
    """Notebooks, Colab and JupyterLab say `python3`; `wmkit reproduce` runs them in its own interpreter
    under that name, whatever other `python3` kernelspec a machine has."""
    import json
    import sys
    from pathlib import Path

    from jupyter_client.kernelspec import KernelSpecManager

    from wmkit.__main__ import this_interpreters_kernel

    repo = Path(__file__).resolve().parent.parent
    for path in sorted((repo / "notebooks").glob("*.ipynb")):
        assert json.loads(path.read_text())["metadata"]["kernelspec"]["name"] == "python3", path.name
    assert "ipykernel install" not in (repo / "Makefile").read_text()
    assert this_interpreters_kernel() == "python3"
    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable


def test_the_line_keeps_coming_while_a_cell_runs_without_a_bar():
    import time

    out = io.StringIO()
    progress = SeriesProgress({"01_a": 120.0}, stream=out, log_every=0.05)
    progress.begin("01_a", cells=10)
    progress.cell_started(1)
    time.sleep(0.5)  # a long cell: no cell starts, no bar
    lines = [line for line in out.getvalue().splitlines() if line.startswith("[1/1] 01_a  cell 2/10")]
    assert len(lines) >= 3
    progress.end(1)
    printed = out.getvalue()
    time.sleep(0.2)
    assert out.getvalue() == printed  # nothing after the notebook ended
