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


# ------------------------------------------------------------------ the convention every notebook follows

def _convention_problems(source_path: Path) -> list[str]:
    """What a notebook source lacks of the kit's convention (an empty list: nothing)."""
    import re

    cells = jupytext.read(source_path, fmt="py:percent").cells
    markdown = [c.source for c in cells if c.cell_type == "markdown"]
    problems = []
    parameters = [c for c in cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if len(parameters) != 1:
        problems.append(f"{len(parameters)} cells tagged 'parameters', not one")
    elif not all(re.search(rf"^{name}\s*(:[^=]+)?=", parameters[0].source, re.MULTILINE)
                 for name in ("PROFILE", "SEED", "MODEL", "OUTPUT_DIR")):
        problems.append("the parameters cell lacks one of PROFILE, SEED, MODEL, OUTPUT_DIR")
    first = markdown[0] if markdown else ""
    if not re.search(r"\*\*Learning objectives\.\*\*.*?\n1\. ", first, re.DOTALL):
        problems.append("the first cell has no numbered learning objectives")
    if "**What it needs.**" not in first:
        problems.append("the first cell does not say what it needs")
    table = re.search(r"^\| profile \|.*?(?=\n\n|\Z)", first, re.DOTALL | re.MULTILINE)
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `(\w+)` \| ([^|]*)\|", table[0], re.MULTILINE)} if table else {}
    if set(rows) != {"smoke", "cpu", "gpu"}:
        problems.append(f"the first cell's time table has rows {sorted(rows)}, not smoke, cpu, gpu")
    elif not all(re.search(r"\d+ (s|min)\b|not measured", time) for time in rows.values()):
        problems.append("a profile's time is neither measured (s / min) nor 'not measured'")
    if "**Where it fits.**" not in first:
        problems.append("the first cell does not say how it connects to the other notebooks")
    headings = [line for text in markdown for line in text.splitlines() if line.startswith("## ")]
    if not any("paper" in h.lower() for h in headings):
        problems.append("no section that puts the paper beside the kit ('## ... paper ...')")
    if "## Summary" not in headings:
        problems.append("no '## Summary'")
    exercise_cells = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and "## Exercises" in c.source]
    if not exercise_cells:
        problems.append("no '## Exercises'")
    else:
        start = exercise_cells[0]
        text = cells[start].source.split("## Exercises", 1)[1]
        n_exercises = len(re.findall(r"^\d+\. ", text, re.MULTILINE))
        code_after = "\n".join(c.source for c in cells[start + 1:] if c.cell_type == "code")
        n_checkers = len(re.findall(r"^exercises\.check_\w+\(ANSWER_\d+", code_after, re.MULTILINE))
        if n_exercises == 0 or n_checkers < n_exercises:
            problems.append(f"{n_exercises} exercises but {n_checkers} checker calls")
    return problems


SOURCES = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_notebook_follows_the_convention(path):
    """Parameters cell; first cell with objectives, needs (a time per profile), where it fits; a
    paper-beside-the-kit section; a summary; exercises, each with a checker."""
    problems = _convention_problems(path)
    assert not problems, f"{path.name}: " + "; ".join(problems)
