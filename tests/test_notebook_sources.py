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


def test_a_jupyterlab_edit_is_saved_into_the_py_source_too(tmp_path):
    """The .ipynb carries the pairing its .py declares (ipynb,py:percent): jupytext's contents
    manager, which JupyterLab uses where jupytext is installed, then writes the .py on every save, so
    `make notebooks` (the .ipynb from the .py) keeps a student's edit instead of overwriting it."""
    import shutil

    from jupytext import TextFileContentsManager

    spec = importlib.util.spec_from_file_location("notebooks_tool", REPO / "tools" / "notebooks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    name = NOTEBOOKS[0].stem
    for suffix in (".py", ".ipynb"):
        shutil.copy(REPO / "notebooks" / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    manager = TextFileContentsManager(root_dir=str(tmp_path))
    model = manager.get(f"{name}.ipynb")
    assert model["content"]["metadata"]["jupytext"]["formats"] == "ipynb,py:percent"
    cell = next(c for c in model["content"]["cells"] if c["cell_type"] == "code" and "tags" not in c["metadata"])
    cell["source"] += "\nstudent_edit = 1  # typed in JupyterLab"
    manager.save(model, f"{name}.ipynb")
    assert "student_edit = 1  # typed in JupyterLab" in (tmp_path / f"{name}.py").read_text()
    assert "student_edit = 1" in tool.render(tmp_path / f"{name}.py")  # what make notebooks writes


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


# ------------------------------------------------------------------ no measured numbers typed into prose

# A number a run produced (a gain, an interval, a success rate, "7 of 8 seeds", a timing) goes stale
# the moment the code, the library or the machine changes; the notebook prints it from the variables
# or records it already has, or the prose says it without the number. What these patterns catch:
TYPED_RESULT = {
    "an interval": r"\[\s*[+−-]?\d*\.\d+\s*,\s*[+−-]?\d*\.\d+\s*\]",
    "a signed gain": r"(?<![\w.^])\+\d*\.\d+",
    "a count of seeds or cases": r"\b\d+ of (?:the |its |their )?\d+\b",
    "a timing": r"\b\d+(?:\.\d+)?\s?(?:s|sec|seconds|min|minutes|h|hours)\b",
    "an approximate share": r"(?:about|~|nearly|roughly)\s?\d+(?:\.\d+)?\s?%|\d+\s?[-–]\s?\d+\s?%",
    "a before → after": r"\d*\.\d+\s?(?:→|->)\s?\d*\.\d+|\bfrom (?:about )?[+−-]?\d*\.\d+",
    "a measured figure": r"\b(?:greedy|sampled|exact|precision|accuracy|success|F1|gain(?:ed)?|rose|fell|lost|judged|"
                         r"correlation|pass@\d+)\b[^.;()\[\]+·×]{0,20}?(?<![\w.])[+−-]?\d*\.\d+(?!\s?[·×λ])",
}
# What stays: text removed before the search (formulas, code, link targets, dates) ...
NOT_PROSE = [r"\$\$.*?\$\$", r"\$[^$]*\$", r"`[^`]*`", r"\]\([^)]*\)", r"\b\d{4}-\d{2}-\d{2}\b"]
# ... and the phrases below, each a setting, a budget or a hand-made example, not a run's result.
ALLOWED = [
    r"\b[A-Za-zβγαλτεσρ]\s?=\s?[+−-]?\d",        # settings and worked examples: G = 8, p = 0.6, T = 0.6, t = 4.30
    r"\b(?:lr|learning rate)\s?\d",                # lr 1e-4
    r"within \d+ minutes",                         # a time budget the notebook is sized to
    r"emulator step of 1 s",                       # section 11's assumed device latency (notebook 03)
    r"\d+ of 768 values off",                      # notebook 06's worked example of a 2x2 frame's values
    r"400 of 1000 at cpu",                         # notebook 03's evaluation tasks: a size of the cpu profile
    r"the 0\.90 the kit aims for",                 # notebook 03's target for a world model's judging
]
# A sentence that gives a paper's own figures, and says so, is the paper's, not the kit's run.
PAPER = r"\bpaper(?:'s|s')?\b|\breports\b|RLVR-World's|on their 1\.5B|^(?:[*-] )?\*\*(?:RLVR-World|RWML|WM-R1|WMRL|iVideoGPT)\*\*:"


def typed_results(source_path: Path) -> list[str]:
    """'line: what it is: the text' for each typed run result in the markdown of a notebook source.

    The first markdown cell is left out: its time table (a measured time per profile) is the
    convention's, checked by `test_notebook_follows_the_convention`."""
    import re

    cells = [c for c in jupytext.read(source_path, fmt="py:percent").cells if c.cell_type == "markdown"][1:]
    found = []
    for cell in cells:
        # sentences, within paragraphs and bullets: the unit a paper's figure is attributed in
        blocks = re.split(r"\n\s*\n|\n(?=\s*(?:[*-]|\d+\.|\|) )", cell.source)
        for block in blocks:
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*(])", " ".join(block.split())):
                if re.search(PAPER, sentence):
                    continue
                text = sentence
                for pattern in NOT_PROSE + ALLOWED:
                    text = re.sub(pattern, " ", text)
                for name, pattern in TYPED_RESULT.items():
                    for match in re.finditer(pattern, text):
                        found.append(f"{name} '{match.group().strip()}' in: {sentence[:160]}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_no_measured_numbers_typed_into_the_prose(path):
    """A result in the markdown is printed by a code cell, or the sentence says it without the number
    (or links the study in research/README.md, for the history of how the kit was built)."""
    found = typed_results(path)
    assert not found, f"{path.name}: print these from the run, or write them without the number:\n  " + "\n  ".join(found)


def test_typed_results_catches_a_typed_result(tmp_path):
    source = tmp_path / "07_example.py"
    source.write_text('# %% [markdown]\n# # Title\n\n# %% [markdown]\n'
                      "# With lr 1e-4 and G = 8, RL raised greedy success from 0.40 to 0.62 on 7 of 8 seeds\n"
                      "# (+0.22 [+0.10, +0.34]; about 5 minutes at cpu). The paper reports +9.6.\n")
    kinds = {line.split(" '")[0] for line in typed_results(source)}
    assert kinds == {"a before → after", "a count of seeds or cases", "a signed gain", "an interval", "a timing",
                     "a measured figure"}


# ------------------------------------------------------------------ one result, shown once

# A claim has one verdict, the benchmark report's (the card); a notebook shows its own run as numbers
# per seed beside the records (wmkit.bench.cards.beside_the_records), never a verdict of its own.
SECOND_VERDICT = r"\b(?:stats\.)?verdict\(|\bcontrolled_verdicts\(|\bclaim_table\(|\[['\"]\w*_verdict['\"]\]"


@pytest.mark.parametrize("path", [p for p in SOURCES if not p.name.startswith("05")], ids=lambda p: p.stem)
def test_notebook_computes_no_second_verdict(path):
    """Notebook 05 is the report itself; the others show its verdicts and their own numbers."""
    import re

    code = [c.source for c in jupytext.read(path, fmt="py:percent").cells if c.cell_type == "code"]
    found = [line.strip() for text in code for line in text.splitlines()
             if re.search(SECOND_VERDICT, line) and not line.lstrip().startswith(("exercises.", "#"))]
    assert not found, f"{path.name} computes verdicts of its own: {found}"
