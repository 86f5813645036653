"""Every `wmkit.<dotted.name>` the tutorials, the README and the notebooks' markdown name must exist,
so that a rename in the library cannot leave a stale name in the course text (as names of the old
pipeline module and of a policy module that moved once did)."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NAME = re.compile(r"(?<![\w./])wmkit(?:\.[A-Za-z_]\w*)+")

ILLUSTRATIVE = {
    # tutorials/multi_gpu.md's register_job example: a module the reader is to write.
    "wmkit.my_module": "the multi-GPU tutorial's example of a job module the reader writes",
}
"""Names that are examples of code the reader writes, with the reason they cannot resolve."""


def markdown_of_notebook_source(path: Path) -> str:
    """The markdown cells of a jupytext percent source, their leading `# ` removed."""
    text, cells, markdown = path.read_text(), [], False
    for line in text.splitlines():
        if line.startswith("# %%"):
            markdown = "[markdown]" in line
            continue
        if markdown:
            cells.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
    return "\n".join(cells)


def mentioned_names() -> dict[str, list[str]]:
    """name -> the files that mention it."""
    sources = [(p, p.read_text()) for p in [*sorted((REPO / "tutorials").glob("*.md")), REPO / "README.md"]]
    sources += [(p, markdown_of_notebook_source(p)) for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))]
    names: dict[str, list[str]] = {}
    for path, text in sources:
        for name in set(NAME.findall(text)):
            names.setdefault(name, []).append(str(path.relative_to(REPO)))
    return names


def resolves(name: str) -> bool:
    """An importable module, or an attribute (chain) of the longest importable module prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as err:
            if err.name and not ".".join(parts[:cut]).startswith(err.name):
                raise  # a dependency of an existing module is missing: not a stale name
            continue
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return False
        return True
    return False


def test_the_texts_name_some_library_names():
    names = mentioned_names()
    assert len(names) > 20, sorted(names)  # the regex still finds them


def test_every_wmkit_name_in_tutorials_readme_and_notebook_markdown_resolves():
    stale = {name: files for name, files in mentioned_names().items()
             if not any(name == n or name.startswith(n + ".") for n in ILLUSTRATIVE) and not resolves(name)}
    assert not stale, "names that no longer exist in the library:\n" + "\n".join(
        f"  {name}  ({', '.join(files)})" for name, files in sorted(stale.items()))


@pytest.mark.parametrize("name", sorted(ILLUSTRATIVE))
def test_illustrative_names_really_are_examples(name):
    """An example name that starts to exist should be checked like any other."""
    assert not resolves(name), f"{name} exists now: drop it from ILLUSTRATIVE"
