"""Tiny helper to write a notebook from a list of (kind, source) cells, outputs empty.

Used to author the notebooks in code review-friendly form; the .ipynb files are what
users open and what CI executes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat


def write_notebook(path: str | Path, cells: list[tuple[str, str]]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": []},
    }
    for kind, source in cells:
        source = source.strip("\n")
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
        elif kind == "params":
            cell = nbformat.v4.new_code_cell(source)
            cell.metadata["tags"] = ["parameters"]
            nb.cells.append(cell)
        else:
            nb.cells.append(nbformat.v4.new_code_cell(source))
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    nbformat.validate(nb)
    Path(path).write_text(nbformat.writes(nb) + "\n")


if __name__ == "__main__":
    sys.exit("import write_notebook from this module")
