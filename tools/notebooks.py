"""Write notebooks/NN_*.ipynb from their sources notebooks/NN_*.py (run: make notebooks).

    python tools/notebooks.py            # every notebook
    python tools/notebooks.py 02 03      # the notebooks whose name starts with 02 or 03
    python tools/notebooks.py --check    # write nothing; exit 1 if an .ipynb is not what its .py gives

The .py files are jupytext "percent" sources (`# %%` code cells, `# %% [markdown]` cells, the
papermill parameters cell as `# %% tags=["parameters"]`): edit those, not the .ipynb. The
.ipynb is written with empty outputs, cell ids cell-00, cell-01, ... (so a diff shows only the
cells that changed) and fixed notebook metadata; of a cell's metadata only its tags are kept.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import jupytext
import nbformat

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
    "colab": {"provenance": []},
}


def sources() -> list[Path]:
    """The notebooks' sources, notebooks/NN_*.py."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def render(source: Path) -> str:
    """The .ipynb text that `source` (a py:percent file) gives."""
    text_nb = jupytext.read(source, fmt="py:percent")
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(METADATA))
    for i, cell in enumerate(text_nb.cells):
        if cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source)
        elif cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(cell.source)
        else:
            raise ValueError(f"{source.name}: cell {i} is a {cell.cell_type} cell")
        if cell.metadata.get("tags"):
            new.metadata["tags"] = list(cell.metadata["tags"])
        new["id"] = f"cell-{i:02d}"
        nb.cells.append(new)
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def main(args: list[str]) -> int:
    check = "--check" in args
    prefixes = [a for a in args if a != "--check"]
    if any(p.startswith("-") for p in prefixes):
        sys.exit(__doc__)
    chosen = [s for s in sources() if not prefixes or any(s.name.startswith(p) for p in prefixes)]
    if not chosen:
        sys.exit(f"no notebooks/NN_*.py starts with {' or '.join(prefixes)}")
    stale = []
    for source in chosen:
        target = source.with_suffix(".ipynb")
        text = render(source)
        if target.exists() and target.read_text() == text:
            continue
        stale.append(target)
        if not check:
            target.write_text(text)
            print(f"wrote {target.relative_to(REPO)}")
    if check and stale:
        print("not what their .py sources give (run `make notebooks`):",
              *(p.relative_to(REPO) for p in stale), sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
