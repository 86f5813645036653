"""The record key and the tables of values in each paper's ``config.py`` (and ``profiles.py``): a
docstring or comment edit there keeps every key; a value edit keeps every key and changes the record
config of exactly the experiments whose sizes read the edited entry; a code edit there changes the
key of exactly the experiments that import the module; a run that reads an entry its config does not
hold is refused (`wmkit.bench.runner.check_values_read`)."""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from wmkit.bench import claims as bench_claims
from wmkit.bench import runner as bench
from wmkit.bench import source_key
from wmkit.bench.claims import Experiment


def _kit_copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(source_key.PACKAGE_ROOT / "wmkit", root / "wmkit", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _keys(root: Path) -> dict[str, str]:
    return {name: source_key.source_key(source_key.run_module(e.run), e.data, root=root).key
            for name, e in bench_claims.EXPERIMENTS.items()}


def _table_modules() -> list[str]:
    return list(dict.fromkeys(module for module, _ in source_key.tables_of_values()))


def _file(root: Path, module: str) -> Path:
    return source_key.module_file(module, root)


def _numbers_in_tables(module: str, source: str) -> list[ast.Constant]:
    """The numeric literals (not booleans) inside `module`'s tables of values, in source order."""
    found = []
    for start, end in source_key._value_regions(module, source.encode()):
        offset = source.encode()[:start].decode().count("\n")
        for node in ast.walk(ast.parse(source.encode()[start:end].decode())):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                node.lineno += offset
                node.end_lineno += offset
                found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _replace_at(source: str, node: ast.AST, text: str) -> str:
    lines = source.splitlines(keepends=True)
    line = lines[node.lineno - 1]
    start = len(line.encode()[:node.col_offset].decode())  # ast offsets are in bytes
    end = len(line.encode()[:node.end_col_offset].decode())
    lines[node.lineno - 1] = line[:start] + text + line[end:]
    return "".join(lines)


def _other_value(value: float) -> str:
    return repr(value + 1) if isinstance(value, int) else repr(value / 2 if value else 0.5)


def _with_docstrings_and_comments_edited(source: str) -> str:
    """Every docstring (module, class, function, attribute) with a sentence added, and a comment line
    before every top-level statement (tables of values included)."""
    tree = ast.parse(source)
    strings = [node.value for node in ast.walk(tree) if isinstance(node, ast.Expr)
               and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    lines = source.splitlines(keepends=True)
    for node in sorted(strings, key=lambda n: (n.end_lineno, n.end_col_offset), reverse=True):
        line = lines[node.end_lineno - 1]
        end = len(line.encode()[:node.end_col_offset].decode())
        quotes = 3 if line[:end].endswith(('"""', "'''")) else 1
        lines[node.end_lineno - 1] = line[:end - quotes] + " An edited sentence." + line[end - quotes:]
    for statement in sorted(tree.body, key=lambda n: n.lineno, reverse=True):
        lines.insert(statement.lineno - 1, "# an edited comment\n")
    return "".join(lines)


# ---------------------------------------------------------------------------- the key

def test_the_paper_configs_hold_tables_of_values():
    modules = _table_modules()
    configs = [m for m in modules if m.endswith(".config")]
    assert "wmkit.profiles" in modules and len(configs) >= 4, modules  # one per paper (RLVR-World's video apart)
    used = {m for e in bench_claims.EXPERIMENTS.values()
            for m in source_key.source_key(source_key.run_module(e.run), e.data).module_names()}
    assert set(configs) <= used  # each is in some experiment's closure, so each edit below can show something


def test_a_docstring_or_comment_edit_of_a_config_keeps_every_key_and_a_value_edit_too(tmp_path):
    root = _kit_copy(tmp_path)
    before = _keys(root)
    for module in _table_modules():
        path = _file(root, module)
        text = path.read_text()
        edited = _with_docstrings_and_comments_edited(text)
        assert edited.count("An edited sentence.") >= 3 and edited != text
        path.write_text(edited)
        assert _keys(root) == before, f"a docstring or comment edit of {module} changed a key"
        number = _numbers_in_tables(module, edited)[0]
        path.write_text(_replace_at(edited, number, _other_value(number.value)))
        assert _keys(root) == before, f"a value edit of {module}'s table (line {number.lineno}) changed a key"
        path.write_text(text)


def test_a_code_edit_of_a_config_changes_the_key_of_exactly_the_experiments_that_import_it(tmp_path):
    root = _kit_copy(tmp_path)
    before = {name: source_key.source_key(source_key.run_module(e.run), e.data, root=root)
              for name, e in bench_claims.EXPERIMENTS.items()}
    for module in _table_modules():
        path = _file(root, module)
        text = path.read_text()
        path.write_text(text + "\n\ndef _an_edit():\n    return 1\n")  # code, outside the tables
        after = _keys(root)
        importing = {name for name, key in before.items() if module in key.module_names()}
        assert importing, module
        assert {name for name in before if after[name] != before[name].key} == importing, module
        path.write_text(text)


# ---------------------------------------------------------------------------- the config: values

_CONFIGS = r"""
import dataclasses, json, sys
from pathlib import Path

def state():
    for name in [m for m in sys.modules if m == "wmkit" or m.startswith("wmkit.")]:
        del sys.modules[name]
    from wmkit.bench import runner, source_key
    from wmkit.profiles import Profile
    def plain(value):
        return json.loads(json.dumps(runner.jsonable(runner._plain(value)), sort_keys=True, default=str))

    entries = {}
    for module, name in source_key.tables_of_values():
        table = getattr(__import__(module, fromlist=[name]), name)
        if isinstance(table, dict):
            for key, value in table.items():
                if isinstance(value, Profile):  # a profile: part by part (its records hold the parts they read)
                    for part in runner.PROFILE_PARTS:
                        entries[f"{module}.{name}[{key!r}].{part}"] = plain(getattr(value, part))
                else:
                    entries[f"{module}.{name}[{key!r}]"] = plain(value)
    configs, reads = {}, {}
    for experiment in runner.EXPERIMENTS.values():
        for profile in ("smoke", "cpu", "gpu"):
            with source_key.recording_value_reads() as read:
                config = runner.experiment_config(experiment, profile, 0)
            at = f"{experiment.name}@{profile}"
            configs[at] = [runner.config_hash(config), plain(config)]
            reads[at] = sorted({f"{t}[{k!r}]" for t, k, v in read if not isinstance(v, Profile)}
                               | {f"{t}[{k!r}].{part}" for t, k, v in read if isinstance(v, Profile)
                                  for part in experiment.reads})
    return {"entries": entries, "configs": configs, "reads": reads}

edits = json.loads(Path(sys.argv[1]).read_text())
out = [state()]
for path, text in edits:
    original = Path(path).read_text()
    Path(path).write_text(text)
    out.append(state())
    Path(path).write_text(original)
print(json.dumps(out))
"""


def _subtrees(value):
    yield value
    for inner in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        yield from _subtrees(inner)


def _changed_parts(before, after) -> list:
    """The sections of `before` (dicts and lists) on the way to each value that differs in `after`."""
    if before == after:
        return []
    parts = [before] if isinstance(before, dict | list) else []
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        parts += [p for k in before for p in _changed_parts(before[k], after[k])]
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        parts += [p for x, y in zip(before, after) for p in _changed_parts(x, y)]
    return parts


@pytest.mark.slow
def test_a_value_edit_changes_the_config_of_exactly_the_experiments_whose_sizes_read_it(tmp_path):
    """One edit per entry of every table of values (its first number), each in a fresh import of a
    copy of the kit: the entries whose value changed (derived tables too) against the experiments'
    record configs, at every profile."""
    root = _kit_copy(tmp_path)
    edits, where = [], []
    for module in _table_modules():
        path = _file(root, module)
        text = path.read_text()
        seen_lines = set()
        for start, end in source_key._value_regions(module, text.encode()):
            offset = text.encode()[:start].decode().count("\n")
            for statement in ast.parse(text.encode()[start:end].decode()).body:
                if not isinstance(statement, ast.Assign) or not isinstance(statement.value, ast.Dict):
                    continue
                for entry in statement.value.values:  # the first number of each profile's entry
                    numbers = [n for n in ast.walk(entry) if isinstance(n, ast.Constant) and type(n.value) in (int, float)]
                    if not numbers:
                        continue
                    number = min(numbers, key=lambda n: (n.lineno, n.col_offset))
                    number.lineno += offset
                    number.end_lineno += offset
                    if (number.lineno, number.col_offset) in seen_lines:
                        continue
                    seen_lines.add((number.lineno, number.col_offset))
                    edits.append((str(path), _replace_at(text, number, _other_value(number.value))))
                    where.append(f"{module} line {number.lineno}")
    assert len(edits) >= 10, where
    (tmp_path / "edits.json").write_text(json.dumps(edits))
    process = subprocess.run([sys.executable, "-c", _CONFIGS, str(tmp_path / "edits.json")], capture_output=True, text=True,
                             check=False,
                             env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, timeout=600)
    assert process.returncode == 0, process.stderr[-3000:]
    base, *after = json.loads(process.stdout)
    touched = set()
    for label, state in zip(where, after):
        changed = {e for e, v in state["entries"].items() if base["entries"].get(e) != v}
        assert changed, f"the edit at {label} changed no entry of any table"
        # an experiment's config must change where its sizes read a changed entry and hold the part that
        # changed (a sizes function may return one section of an entry, or override the edited field)
        parts = [part for e in changed for part in _changed_parts(base["entries"][e], state["entries"][e])]
        expected = {at for at, read in base["reads"].items() if changed & set(read)
                    and any(part in list(_subtrees(base["configs"][at][1])) for part in parts)}
        actual = {at for at, (chash, _) in state["configs"].items() if base["configs"][at][0] != chash}
        assert actual == expected, (f"the edit at {label} changed {sorted(changed)}: configs changed "
                                    f"{sorted(actual)}, experiments whose sizes read it {sorted(expected)}")
        touched |= actual
    assert touched  # some edit reached some record's config


# ---------------------------------------------------------------------------- the run: no unkeyed read

def test_no_function_reads_a_table_the_recording_cannot_see():
    """In the modules an experiment can import, a table that is not a dict, or one imported under its
    name into another module, is read only while the tables are built, never by a function."""
    tables = source_key.tables_of_values()
    dicts = set()
    for module, name in tables:
        held = __import__(module, fromlist=[name])
        if isinstance(getattr(held, name), dict):
            dicts.add((module, name))
    problems = []
    run = {m for e in bench_claims.EXPERIMENTS.values()  # what a benchmark run can import
           for m in source_key.source_key(source_key.run_module(e.run), e.data).module_names()}
    for here in sorted(run):
        tree = ast.parse(source_key.module_file(here).read_text())
        imported = {alias.asname or alias.name: (node.module, alias.name) for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
        unseen = {name for module, name in tables if module == here and (module, name) not in dicts}
        unseen |= {local for local, target in imported.items() if target in set(tables)}
        for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)):
            for node in ast.walk(function):
                if isinstance(node, ast.Name) and node.id in unseen:
                    problems.append(f"{here}:{node.lineno} reads {node.id}")
    assert not problems, problems


@dataclass(frozen=True)
class _Sizes:
    steps: int


_TABLE = {"smoke": _Sizes(1), "cpu": _Sizes(3)}
_OTHER = {"smoke": _Sizes(2), "cpu": _Sizes(4)}
_TABLES = ((__name__, "_TABLE"), (__name__, "_OTHER"))


def _sizes(profile):
    return _TABLE[profile.name]


def _reads_its_sizes(profile, seed, runs_root, sizes):
    return {"steps": _TABLE[profile.name].steps}  # the same entry as its sizes: keyed


def _reads_another_entry(profile, seed, runs_root, sizes):
    return {"steps": sizes.steps + _OTHER[profile.name].steps}  # not in its config: an edit of it would go unseen


def test_a_run_that_reads_an_entry_its_config_does_not_hold_is_refused(tmp_path, monkeypatch):
    real = source_key.recording_value_reads
    monkeypatch.setattr(bench, "recording_value_reads", lambda tables=None: real(_TABLES))
    keyed = Experiment("keyed", "WMRL", _reads_its_sizes, _sizes, "reads its sizes")
    path, ran = bench.run_one(keyed, "smoke", 0, tmp_path, "src4-fake", "test", commit="c", dirty=False)
    assert ran and json.loads(path.read_text())["result"] == {"steps": 1}
    unkeyed = Experiment("unkeyed", "WMRL", _reads_another_entry, _sizes, "reads another table")
    with pytest.raises(ValueError, match=r"unkeyed's run read tests?\.?\w*\._OTHER\['smoke'\]"):
        bench.run_one(unkeyed, "smoke", 0, tmp_path, "src4-fake", "test", commit="c", dirty=False)
    assert type(_TABLE) is dict and type(_OTHER) is dict  # put back
