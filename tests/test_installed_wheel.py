"""The kit as a pip or Colab user has it: the built wheel installed into a fresh virtual environment,
no repository anywhere (no notebooks/, no executed/, no .git beside the package), no network.

Notebooks 03 and 05, copied alone into an empty folder, run there at `smoke` and show the shipped
`cpu` evidence with its library version (read from the package's own copy of executed/cpu), write
their runs under that folder, and leave site-packages as pip installed it. Offline: the venv gets the
dependencies of the running environment through a .pth file and the wheel with --no-index --no-deps.
This run is also those two notebooks' smoke test (tests/test_notebooks.py's checks, not run twice).
"""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from test_notebooks import INSTALLED_RUN, check_smoke_run

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("03_wm_r1_gui_agent", "05_benchmark_reproduction")
SHIPPED = "the cpu profile's records shipped with the kit, seeds "

# Run in the fresh venv, in the empty folder: the notebooks as Colab runs them (kernel `python3` =
# this interpreter), through papermill at the smoke profile, nothing else given.
RUN = """
import sys, time, papermill as pm, wmkit
from wmkit.__main__ import this_interpreters_kernel
print("wmkit imported from", wmkit.__file__, flush=True)
for name in sys.argv[1:]:
    start = time.perf_counter()
    pm.execute_notebook(f"{name}.ipynb", f"{name}.executed.ipynb", parameters={"PROFILE": "smoke"},
                        kernel_name=this_interpreters_kernel(), progress_bar=False, cwd=".")
    print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)
"""


# Imported by the fresh venv's interpreters (a .pth line), the notebook kernels included: no connection
# leaves this machine, so the run shows what an installed kit does offline (the kernels talk to
# papermill over the loopback interface only).
NO_NETWORK = """
import socket

_connect = socket.socket.connect


def _loopback_only(self, address):
    host = address[0] if isinstance(address, tuple) else None
    if host is not None and not str(host).startswith(("127.", "::1", "localhost")):
        raise OSError(f"network off in this test: no connection to {address}")
    return _connect(self, address)


socket.socket.connect = _loopback_only
"""


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def _printed(executed: Path) -> str:
    cells = json.loads(executed.read_text())["cells"]
    return "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", [])
                   if o.get("output_type") == "stream")


def build_wheel(out: Path) -> Path:
    """The wheel of this checkout, built offline (setuptools as installed) from a copy of what it packages."""
    source = out / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "wmkit", source / "wmkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "executed", source / "executed", ignore=shutil.ignore_patterns("*.ipynb"))
    done = subprocess.run([sys.executable, "-c", "from setuptools import build_meta; build_meta.build_wheel('dist')"],
                          cwd=source, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = (source / "dist").glob("wmkit-*.whl")
    return wheel


def fresh_venv(folder: Path) -> tuple[Path, Path]:
    """(python, site-packages) of a new venv that sees this environment's packages (never its wmkit:
    the .pth adds the folders as plain paths, so the editable install's finder is not loaded)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    target = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip())
    # This environment's site-packages, and the system's where this venv sees them (a CUDA machine's
    # torch: make setup's venv there has --system-site-packages).
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
            *(p for p in site.getsitepackages() if Path(p).is_dir())}
    (target / "zz_dependencies_of_the_test_environment.pth").write_text("\n".join(sorted(ours)) + "\n")
    (target / "wmkit_test_no_network.py").write_text(NO_NETWORK)
    (target / "zz_no_network.pth").write_text("import wmkit_test_no_network\n")
    return python, target


@pytest.mark.notebook
@pytest.mark.slow
def test_an_installed_wheel_shows_the_shipped_evidence_in_notebooks_03_and_05(tmp_path):
    start = time.perf_counter()
    wheel = build_wheel(tmp_path / "build")
    python, site = fresh_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WMKIT_RUNS", "WMKIT_RECORDS", "JUPYTER_PATH")}
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PIP_NO_INDEX="1")
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                               env=env, capture_output=True, text=True, timeout=300, check=False)
    assert installed.returncode == 0, installed.stderr[-2000:]
    assert (site / "wmkit" / "executed" / "cpu" / "bench.json").is_file(), "the wheel lacks the published evidence"
    before = _files(site)

    work = tmp_path / "work"  # the user's folder: two notebooks, nothing else
    work.mkdir()
    for name in NOTEBOOKS:
        shutil.copy(REPO / "notebooks" / f"{name}.ipynb", work / f"{name}.ipynb")
    ran = subprocess.run([str(python), "-c", RUN, *NOTEBOOKS], cwd=work, env=env, capture_output=True, text=True,
                         timeout=1500, check=False)
    print(ran.stdout, f"whole test: {time.perf_counter() - start:.0f} s", sep="\n")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert f"wmkit imported from {site / 'wmkit'}" in ran.stdout  # the installed kit, not this checkout
    blocked = subprocess.run([str(python), "-c", "import socket; socket.create_connection(('192.0.2.1', 443), 1)"],
                             env=env, capture_output=True, text=True, timeout=60, check=False)
    assert "network off in this test" in blocked.stderr  # the guard was in place

    runs = work / "runs" / "smoke"
    assert tuple(name[:2] for name in NOTEBOOKS) == INSTALLED_RUN
    for name in NOTEBOOKS:
        check_smoke_run(name, runs, work / f"{name}.executed.ipynb")
    notebook_03 = json.loads((runs / NOTEBOOKS[0] / "results.json").read_text())
    for key in ("verdict_source", "small_world_source", "learned_world_model_source"):
        assert notebook_03[key].startswith(SHIPPED) and "library version(s) " in notebook_03[key], notebook_03[key]
    printed_03 = _printed(work / f"{NOTEBOOKS[0]}.executed.ipynb")
    assert "no benchmark record" not in printed_03 and "not measured (" not in printed_03

    notebook_05 = json.loads((runs / NOTEBOOKS[1] / "results.json").read_text())
    assert notebook_05["shipped"]["headline"], "notebook 05 did not show the published cpu report"
    printed_05 = _printed(work / f"{NOTEBOOKS[1]}.executed.ipynb")
    evidence = site / "wmkit" / "executed" / "cpu" / "bench.json"
    assert f"the published cpu report — shipped with the kit: {evidence}" in printed_05
    assert "source: shipped cpu | profile cpu" in printed_05 and "records of src" in printed_05
    # its own smoke benchmark ran, measured rows, and is labelled one seed with no verdict
    assert notebook_05["smoke_benchmark"]["seeds"] == [0] and notebook_05["smoke_benchmark"]["measured"]
    assert "one seed proves the pipeline and gives no interval, so no verdict" in printed_05

    assert _files(site) == before, "the notebooks wrote into site-packages"
    assert not (site / "runs").exists() and not (tmp_path / "venv" / "runs").exists()
