"""Each notebooks/NN_*.ipynb is what its jupytext source notebooks/NN_*.py gives (make notebooks).

Nothing is executed: both files are read and their cells compared.
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _cells(nb) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]


def test_every_notebook_has_a_source_and_every_source_a_notebook():
    sources = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
    assert NOTEBOOKS
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in sources]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_matches_its_source(path):
    notebook = _cells(nbformat.read(path, as_version=4))
    source = _cells(jupytext.read(path.with_suffix(".py"), fmt="py:percent"))
    hint = f"{path.name} differs from {path.stem}.py: edit the .py, then run `make notebooks`"
    assert len(notebook) == len(source), hint
    for i, (cell, expected) in enumerate(zip(notebook, source, strict=True)):
        assert cell == expected, f"{hint} (cell {i})"


def test_make_notebooks_would_change_nothing():
    """Byte for byte, ids and notebook metadata included."""
    spec = importlib.util.spec_from_file_location("notebooks_tool", REPO / "tools" / "notebooks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    stale = [p.name for p in NOTEBOOKS if p.read_text() != tool.render(p.with_suffix(".py"))]
    assert not stale, f"run `make notebooks`: {stale}"


def test_notebook_sources_pass_ruff():
    """`ruff check notebooks` passes: the only lint that `make test` (and so CI) runs."""
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "notebooks"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
