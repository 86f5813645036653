"""One config shape: a profile's name is resolved once, at an entry (the command line, a job, a
notebook's `nb.start`, the benchmark's worker), and the experiment code below takes the resolved
`wmkit.profiles.Profile`. A function there that took ``profile: str | Profile = "cpu"`` and looked
the name up again could run a smoke build's evaluation at cpu sizes without a word."""
import ast
from pathlib import Path

import pytest

WMKIT = Path(__file__).resolve().parent.parent / "wmkit"
PACKAGES = ("core", "rlvr_world", "rwml", "wm_r1", "wmrl", "video")
"""The experiment packages: library code that takes a Profile and never a profile's name."""

ALLOWED: dict[str, str] = {
    # "package/module.py:function": "why it may take a name or look one up",
    # (none: every entry that resolves a name is outside these packages, e.g. wmkit/__main__.py,
    # wmkit/jobs.py, wmkit/notebook.py, wmkit/bench/runner.py, wmkit/gpucheck.py)
}


def _functions():
    for package in PACKAGES:
        for path in sorted((WMKIT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{path.relative_to(WMKIT).as_posix()}:{node.name}", node


def _profile_argument(function: ast.FunctionDef):
    """(the `profile` argument, its default or None), or None when there is none."""
    args = function.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults)):
        if arg.arg == "profile":
            return arg, default
    return None


def test_experiment_code_takes_a_resolved_profile_with_no_default():
    wrong = []
    for name, function in _functions():
        found = _profile_argument(function)
        if found is None or name in ALLOWED:
            continue
        arg, default = found
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
        if annotation != "Profile":
            wrong.append(f"{name}: profile: {annotation or '(no annotation)'}")
        if default is not None:
            wrong.append(f"{name}: profile has a default ({ast.unparse(default)})")
    assert not wrong, "take `profile: Profile`, required (resolve the name at the entry):\n" + "\n".join(wrong)


def test_experiment_code_never_looks_a_profile_up_by_name():
    lookups = []
    for name, function in _functions():
        if name in ALLOWED:
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if callee in ("get_profile", "resolve_profile_name"):
                    lookups.append(f"{name}: {ast.unparse(node)}")
    for package in PACKAGES:  # an import alone says the lookup is meant to happen here
        for path in sorted((WMKIT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and any(a.name in ("get_profile", "resolve_profile_name")
                                                            for a in node.names):
                    lookups.append(f"{path.relative_to(WMKIT).as_posix()}: imports {node.names[0].name}")
    assert not lookups, "the entry resolves the profile once; pass the Profile down:\n" + "\n".join(lookups)


def test_the_allow_list_names_only_functions_that_exist():
    names = {name for name, _ in _functions()}
    assert not set(ALLOWED) - names


def test_get_profile_returns_a_profile_as_it_is():
    from wmkit.profiles import PROFILES, get_profile

    assert get_profile(PROFILES["smoke"]) is PROFILES["smoke"]


def test_a_profile_name_given_where_a_profile_is_needed_is_one_clear_error(tmp_path):
    """The public entries below the command line take the resolved Profile: a name is a TypeError
    that says how to resolve it, before any data is collected."""
    from wmkit.core.build import build_world_model
    from wmkit.experiments import run_over_seeds

    with pytest.raises(TypeError, match=r"get_profile\('smoke'\)"):
        build_world_model("smoke", tmp_path)
    with pytest.raises(TypeError, match=r"get_profile\('smoke'\)"):
        run_over_seeds("rlvr_seeds", "smoke", seeds=1, out=tmp_path)
