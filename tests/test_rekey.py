"""Record keys that survive a refactor by evidence: the syntax-tree key (docstrings, comments and
formatting left out, tables of values left out), the carry of a record from its commit's source,
and ``bench-rekey``'s rerun of one seed, verified and changed."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from wmkit.bench import claims as bench_claims
from wmkit.bench import rekey, source_key
from wmkit.bench import runner as bench
from wmkit.bench.claims import Experiment
from wmkit.bench.source_key import SourceKey
from wmkit.runs import REPO, cpu_model


def _kit_copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(source_key.PACKAGE_ROOT / "wmkit", root / "wmkit", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _keys(root: Path) -> dict[str, SourceKey]:
    return {name: source_key.source_key(source_key.run_module(e.run), e.data, root=root)
            for name, e in bench_claims.EXPERIMENTS.items()}


# ---------------------------------------------------------------------------- the key: the code's syntax tree

def test_a_docstring_comment_or_formatting_edit_in_core_grpo_keeps_every_key_and_a_code_edit_changes_them(tmp_path):
    root = _kit_copy(tmp_path)
    before = _keys(root)
    grpo = root / "wmkit" / "core" / "grpo.py"
    text = grpo.read_text()
    tree = ast.parse(text)
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and ast.get_docstring(n))
    lines = text.splitlines(keepends=True)
    doc_line = function.body[0].lineno - 1
    lines[doc_line] = lines[doc_line].replace('"""', '"""An edited docstring. ', 1)
    edited = "".join(lines).replace('"""', '"""An edited module docstring.\n', 1)
    edited = edited.replace("\ndef ", "\n# a new comment\n\n\ndef ", 3)  # comments and blank lines
    grpo.write_text(edited)
    assert edited != text and _keys(root) == before
    grpo.write_text(edited + "\n_EDITED = 1\n")  # code: a new module-level name
    after = _keys(root)
    uses_grpo = {n for n, k in before.items() if "wmkit.core.grpo" in k.module_names()}
    assert uses_grpo and uses_grpo != set(before)  # WMRL's experiments do not import it
    assert {n for n in before if after[n].key != before[n].key} == uses_grpo
    assert source_key.module_differences(before["wm_r1"], after["wm_r1"]) == ["wmkit.core.grpo"]


def test_the_code_hash_ignores_positions_docstrings_and_attribute_docstrings_but_not_code():
    h = source_key.module_hash
    base = 'X = 1\n"""X, documented."""\n\ndef f(a):\n    """Doc."""\n    return a + X\n'
    assert h("m", base.encode()) == h("m", b"X = 1\ndef f(a):\n  return (a +\n          X)  # comment\n")
    assert h("m", base.encode()) != h("m", b"X = 1\ndef f(a):\n    return X + a\n")
    assert h("m", b"def f():\n    '''only a docstring'''\n") == h("m", b"def f():\n    'another'\n")
    assert h("m", b"x = 'a string value'\n") != h("m", b"x = 'another value'\n")  # a string that is a value counts
    # the previous formats, for records made under them: bytes (2), bytes without profiles.py's table (3)
    assert h("m", b"x = 1\n", 2) == source_key._sha(b"x = 1\n") != h("m", b"x = 1  # c\n", 2)
    with pytest.raises(ValueError, match="key format 1"):
        h("m", b"", 1)


def test_a_table_of_values_is_left_out_in_any_module_and_checked(tmp_path):
    pkg = tmp_path / "wmkit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    table = ("# ==== values (not in record keys): sizes per profile\n"
             "SIZES = {'smoke': Config(steps=1), 'cpu': Config(steps=3)}\n\"\"\"Each profile's sizes.\"\"\"\n"
             "# ==== end of values\n")
    code = "class Config:\n    def __init__(self, steps):\n        self.steps = steps\n\n"
    (pkg / "config.py").write_text(code + table + "def sizes(name):\n    return SIZES[name]\n")

    def key():
        return source_key.source_key("wmkit.config", root=tmp_path).key

    before = key()
    (pkg / "config.py").write_text(code + table.replace("steps=3", "steps=30") + "def sizes(name):\n    return SIZES[name]\n")
    assert key() == before  # a value: the record's config holds it
    (pkg / "config.py").write_text(code + table + "def sizes(name):\n    return SIZES.get(name)\n")
    assert key() != before  # code outside the table
    for bad, message in ((table.replace("# ==== end", "def hidden():\n    return 1\n# ==== end"), "assignments only"),
                         (table.replace("Config(steps=1)", "(lambda: 1)()"), "no lambda"),
                         (table.replace("# ==== end of values\n", ""), "values markers|'# ==== end of values'"),
                         ("# ==== values (not in record keys)\nSIZES = {\n# ==== end of values\n'smoke': 1}\n", "whole statements")):
        (pkg / "config.py").write_text(code + bad)
        with pytest.raises(ValueError, match=message):
            key()


# ---------------------------------------------------------------------------- 1. carried from the source

def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def tiny_repo(tmp_path):
    """A git repository holding a two-module ``wmkit`` package whose ``profiles`` module has a format-3 table."""
    repo = tmp_path / "repo"
    (repo / "wmkit").mkdir(parents=True)
    (repo / "wmkit" / "__init__.py").write_text('"""The package."""\n')
    (repo / "wmkit" / "profiles.py").write_text(
        "STEPS_NAME = 'steps'\n# ======== the table\nSTEPS = {'cpu': 3}\n# ======== look-ups\n"
        "def steps(name):\n    return STEPS[name]\n")
    (repo / "wmkit" / "fake.py").write_text(
        '"""A fake experiment."""\nfrom wmkit import profiles\n\ndef run(seed):\n    """One seed."""\n'
        "    return profiles.steps('cpu') + seed\n")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "first")
    return repo


def _format3_record(repo: Path, commit: str) -> dict:
    """A record as key format 3 made it at `commit`: its module pairs and key from that commit's files."""
    names = source_key.closure("wmkit.fake", repo)
    pairs = [(m, source_key.module_hash(m, path.read_bytes(), 3)) for m, path in names.items()]
    return {"code": source_key.key_of(pairs, (), 3), "key_format": 3, "commit": commit, "dirty": False,
            "modules": [list(p) for p in pairs], "data": []}


def test_a_record_is_carried_from_its_commits_source_when_only_docstrings_comments_or_values_changed(tiny_repo):
    record = _format3_record(tiny_repo, _git(tiny_repo, "rev-parse", "HEAD"))

    def today():
        return source_key.source_key("wmkit.fake", root=tiny_repo)

    fake, profiles = tiny_repo / "wmkit" / "fake.py", tiny_repo / "wmkit" / "profiles.py"
    assert rekey.static_check(record, today(), tiny_repo) is None  # key format 3 -> 4, same code
    before = today()
    profiles.write_text(profiles.read_text().replace("# ======== the table", "# ======== values (not in record keys)")
                        .replace("# ======== look-ups", "# ======== end of values"))
    assert today() == before  # profiles.py's table under format 3's markers or today's: left out alike
    assert rekey.static_check(record, today(), tiny_repo) is None
    own, _ = rekey.source_key_of(record, tiny_repo)
    assert own == today()  # the record's own code in today's format: what a record of changed code is rewritten under
    fake.write_text(fake.read_text().replace("One seed.", "One seed, reworded.") + "# a comment\n")
    profiles.write_text(profiles.read_text().replace("3}", "30}"))
    assert rekey.static_check(record, today(), tiny_repo) is None  # a docstring, a comment, a value
    fake.write_text(fake.read_text().replace("+ seed", "- seed"))
    assert rekey.static_check(record, today(), tiny_repo) == (
        f"code changed since commit {record['commit'][:12]} in wmkit.fake")
    assert rekey.source_key_of(record, tiny_repo)[0] == own  # its own code stays what it was
    fake.write_text(fake.read_text().replace("- seed", "+ seed"))
    tampered = {**record, "modules": [[m, "0" * 64 if m == "wmkit.fake" else h] for m, h in record["modules"]]}
    assert "do not give its key" in rekey.static_check(tampered, today(), tiny_repo)
    tampered["code"] = source_key.key_of([tuple(p) for p in tampered["modules"]], (), 3)
    assert "wmkit.fake at commit" in rekey.static_check(tampered, today(), tiny_repo)
    assert "uncommitted" in rekey.static_check({**record, "dirty": True}, today(), tiny_repo)
    assert "not in this checkout" in rekey.static_check({**record, "commit": "f" * 40}, today(), tiny_repo)
    assert "no module hashes" in rekey.static_check({"code": "a" * 40}, today(), tiny_repo)
    # a record carried by a rerun holds the code of the commit that verified it, not of the one that made it
    fake.write_text(fake.read_text().replace("+ seed", "+ 2 * seed"))
    _git(tiny_repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-am", "second")
    verified = {**record, "code": today().key, "key_format": source_key.KEY_FORMAT,
                "modules": [list(p) for p in today().modules],
                "carried": [{"how": "rerun", "from_code": record["code"],
                             "verified_by": {"commit": _git(tiny_repo, "rev-parse", "HEAD"), "dirty": False}}]}
    assert rekey.static_check(verified, today(), tiny_repo) is None
    assert "wmkit.fake at commit" in rekey.static_check({**verified, "carried": []}, today(), tiny_repo)


# ---------------------------------------------------------------------------- 2. by a rerun

@dataclass(frozen=True)
class RekeySizes:
    size: int


def rekey_sizes(profile):
    return RekeySizes(size=16)


def rekey_run(profile, seed, runs_root, sizes):
    """A seeded float computation, and its measured time (left out of the comparison)."""
    start = time.perf_counter()
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(sizes.size, sizes.size, generator=generator)
    value = (x @ x.T).softmax(-1).sum(0)
    return {"values": value.tolist(), "total": float(value.sum()), "seconds": time.perf_counter() - start,
            "train_cpu_s": time.process_time()}


REKEY = {"fake": Experiment("fake", "WMRL", rekey_run, rekey_sizes, "a seeded float computation")}
OLD_KEY = SourceKey("src4-" + "1" * 64, (("wmkit.old", "0" * 64),))


def _old_records(runs_root: Path, seeds=(0, 1), cpu: dict | None = None, commit: str | None = None) -> list[Path]:
    paths = []
    for seed in seeds:
        path, _ = bench.run_one(REKEY["fake"], "smoke", seed, runs_root, OLD_KEY, "test", log=lambda line: None,
                                commit=commit or "0" * 40, dirty=False)
        if cpu is not None:
            record = json.loads(path.read_text())
            path.write_text(json.dumps({**record, "cpu": cpu}))
        paths.append(path)
    return paths


def _rekey(runs_root: Path, lines: list[str], **kw):
    return rekey.rekey("smoke", ["fake"], runs_root, shipped_dir=False, experiments=REKEY, publish=False,
                       log=lines.append, **kw)


def test_rekey_verifies_one_seed_bit_for_bit_and_carries_every_seed(tmp_path):
    old = _old_records(tmp_path)
    lines: list[str] = []
    planned = _rekey(tmp_path, lines, plan_only=True)
    assert [s.seed for s in planned.steps] == [0] and planned.steps[0].compare_with is not None
    assert "seed 0 rerun, compared with its record made on this CPU kind" in "\n".join(lines)
    assert all(p.exists() for p in old)  # a plan carries nothing
    lines.clear()
    result = _rekey(tmp_path, lines)
    here = bench.cpu_kind(cpu_model())
    assert result.verdicts["fake"].startswith(f"verified by seed 0 on {here}")
    assert any(line.startswith("bench-rekey: verifying 1/1 (fake), ") for line in lines)  # a progress line
    key = bench.experiment_key(REKEY["fake"])
    assert not any(p.exists() for p in old) and len(result.carried) == 2
    for seed, path in zip((0, 1), result.carried):
        record = json.loads(path.read_text())
        assert record["code"] == key.key and record["seed"] == seed and record["key_format"] == source_key.KEY_FORMAT
        step = record["carried"][-1]
        assert step["how"] == "rerun" and step["from_code"] == OLD_KEY.key
        assert step["verified_by"]["seed"] == 0 and step["verified_by"]["cpu"] == here
        assert step["verified_by"]["commit"] == bench.head_commit()
        assert path == bench.current_record_path(tmp_path / "bench", REKEY["fake"], "smoke", seed, key.key)
    assert (tmp_path / "rekey").is_dir()  # the rerun ran in a runs folder of its own code version
    lines.clear()
    again = _rekey(tmp_path, lines)
    assert not again.steps and "nothing to carry" in lines[1]


def test_rekey_names_a_changed_experiment_and_its_first_differing_field_and_carries_nothing(tmp_path):
    old = _old_records(tmp_path)
    record = json.loads(old[0].read_text())
    record["result"]["values"][3] += 1e-7  # the last digits of one float
    record["result"]["seconds"] = 99.0  # measured time: not compared
    old[0].write_text(json.dumps(record))
    lines: list[str] = []
    result = _rekey(tmp_path, lines)
    assert result.verdicts["fake"].startswith("changed: 1 field(s) differ, first values[3]: ")
    assert "CHANGED: seed 0 differs from its record of CPU kind" in "\n".join(lines) and not result.carried
    assert all(p.exists() for p in old)


def test_rekey_makes_the_reference_at_the_records_commit_when_no_record_is_of_this_cpu_kind(tmp_path, monkeypatch):
    commit = bench.head_commit()
    if commit == "nogit":
        pytest.skip("needs a git checkout")
    amd = {"cpu_model": "AMD EPYC", "torch_cpu_capability": "AVX2"}
    old = _old_records(tmp_path, cpu=amd, commit=commit)
    made = []

    def reference(repo, at, experiment, profile, seed, runs_root, threads, log):  # the commit's code: the old key's
        made.append((at, experiment, seed, threads))
        path, _ = bench.run_one(REKEY[experiment], profile, seed, runs_root, OLD_KEY, "reference", log=log)
        return json.loads(path.read_text())

    monkeypatch.setattr(rekey, "run_at_commit", reference)
    lines: list[str] = []
    result = _rekey(tmp_path, lines)
    assert made == [(commit, "fake", 0, 1)]
    assert "no record of this CPU kind" in "\n".join(lines) and result.verdicts["fake"].startswith("verified by seed 0")
    step = json.loads(result.carried[0].read_text())["carried"][-1]
    assert f"a reference made here by commit {commit[:12]}'s code in a temporary git worktree" == \
        step["verified_by"]["compared_with"]
    assert not any(p.exists() for p in old)


def test_a_reference_run_in_a_worktree_of_head_equals_a_run_of_this_checkout(tmp_path, monkeypatch):
    """The worktree path end to end, on the cheapest real experiment (WMRL's controlled loop at
    smoke): HEAD's code in a temporary git worktree and this checkout's code give the same record."""
    experiment = bench_claims.EXPERIMENTS["wmrl_controlled"]
    key = bench.experiment_key(experiment)
    if bench.head_commit() == "nogit" or bench.closure_dirty(key) is not False:
        pytest.skip("needs a git checkout whose wmrl_controlled modules are committed (HEAD is the code compared)")
    lines: list[str] = []
    worktrees = tmp_path / "worktrees"
    monkeypatch.setattr(rekey.tempfile, "mkdtemp", lambda prefix: str(worktrees.mkdir() or worktrees))
    reference = rekey.run_at_commit(REPO, bench.head_commit(), "wmrl_controlled", "smoke", 0, tmp_path / "ref", 1,
                                    lines.append)
    assert reference["code"] == key.key and reference["commit"] == bench.head_commit()
    assert not worktrees.exists() and str(worktrees) not in _git(REPO, "worktree", "list")  # removed after
    here = rekey.run_here(experiment, "smoke", 0, tmp_path / "here", key, 1, lines.append)
    assert rekey.result_differences(reference, here) == (0, [])
    changed = json.loads(json.dumps(here))
    changed["result"]["arms"]["real"]["total_cost"][0] += 1.0
    n, first = rekey.result_differences(reference, changed)
    assert n == 1 and first[0].startswith("arms.real.total_cost[0]: ")


def test_a_result_whose_sizes_hold_the_grpo_knobs_under_their_old_names_is_the_same_result():
    """Records made before the papers' configs moved embed their sizes with the knobs by their old names
    (``grpo_steps``, ``group_size``); today's embed them as ``grpo``. Renamed is not changed; a value is."""
    old = {"result": {"sizes": {"error_rates": [0.0], "grpo_steps": 2, "group_size": 4, "prompts_per_step": 2,
                                "learning_rate": 1e-4, "temperature": 0.6}, "success": 0.5}}
    new = {"result": {"sizes": {"error_rates": [0.0], "grpo": {
        "max_steps": 2, "num_generations": 4, "prompts_per_step": 2, "learning_rate": 1e-4, "temperature": 0.6,
        "beta": 0.0, "loss_type": "dapo", "scale_rewards": "none", "max_completion_length": 1400}}, "success": 0.5}}
    assert rekey.result_differences(old, new) == (0, [])
    assert rekey.result_differences(new, new) == (0, [])
    new["result"]["sizes"]["grpo"]["num_generations"] = 8
    assert rekey.result_differences(old, new) == (1, ["sizes.group_size: 4 -> 8"])
    unknown = {"result": {"grpo": {"max_steps": 1}}}  # no sizes section: kept as it is
    assert rekey.result_differences(unknown, {"result": {"grpo": {"max_steps": 2}}})[0] == 1


def test_the_comparison_leaves_out_measured_time_and_folders_only():
    assert rekey.excluded("seconds") and rekey.excluded("train_seconds") and rekey.excluded("total_cost_cpu_s")
    assert rekey.excluded("build_costs") and rekey.excluded("folder") and rekey.excluded("timings")
    assert not rekey.excluded("total_cost") and not rekey.excluded("steps") and not rekey.excluded("success")
    a = {"result": {"x": [1.0, float("nan")], "seconds": 1, "inner": {"eval_seconds": 2, "y": 1}}}
    b = {"result": {"x": [1.0, float("nan")], "seconds": 5, "inner": {"eval_seconds": 9, "y": 1}}}
    assert rekey.result_differences(a, b) == (0, [])
    b["result"]["inner"]["y"] = 1.0  # an int that became a float is a change
    assert rekey.result_differences(a, b) == (1, ["inner.y: 1 -> 1.0"])
    b["result"]["x"].append(2.0)
    assert rekey.result_differences(a, b)[1][1] == "x[2]: (absent) -> 2.0"


def test_the_code_of_a_records_key_is_its_commits_or_the_commit_that_verified_its_carry():
    made = {"code": "src4-b", "commit": "c1", "dirty": False}
    assert rekey.made_by(made) == ("c1", {"src4-b"})
    rewritten = {**made, "carried": [{"how": "key format", "from_code": "src3-a"}]}
    assert rekey.made_by(rewritten) == ("c1", {"src4-b", "src3-a"})
    verified = {**made, "code": "src4-c", "carried": [{"how": "key format", "from_code": "src3-a"},
                                                      {"how": "rerun", "from_code": "src4-b",
                                                       "verified_by": {"commit": "c2", "dirty": False}}]}
    assert rekey.made_by(verified) == ("c2", {"src4-c"})
    assert rekey.made_by({**made, "dirty": True})[0] is None
    verified["carried"][-1]["verified_by"]["dirty"] = True
    assert rekey.made_by(verified)[0] is None


def test_the_reference_script_builds_what_the_seeds_share_first(tmp_path, monkeypatch, capsys):
    """A reference of an experiment with a ``prepare`` (RWML's and WM-R1's: notebook 01's world model)
    runs it before the seed, by the name the commit's runner has for ``resolve``."""
    calls = []
    fake = Experiment("fake_prepared", "WMRL", rekey_run, rekey_sizes, "a fake experiment with a prepare",
                      prepare=lambda profile, runs_root, sizes: calls.append(("prepare", profile.name, sizes.size)))

    def run_one(experiment, profile, seed, runs_root, code, command):
        calls.append(("run", experiment.name, seed))
        return Path(runs_root) / "record.json", True

    monkeypatch.setattr(bench, "EXPERIMENTS", {"fake_prepared": fake})
    monkeypatch.setattr(bench, "run_one", run_one)
    args = {"experiment": "fake_prepared", "profile": "smoke", "seed": 2, "runs_root": str(tmp_path), "threads": 1,
            "command": "test"}
    monkeypatch.setattr(sys, "argv", ["-c", json.dumps(args)])
    before = torch.get_num_threads()
    try:
        exec(rekey.REFERENCE_SCRIPT, {"__name__": "__main__"})  # noqa: S102 (the script a worktree runs, here with stubs)
    finally:
        torch.set_num_threads(before)
    assert calls == [("prepare", "smoke", 16), ("run", "fake_prepared", 2)]
    assert capsys.readouterr().out.strip() == f"RECORD {tmp_path / 'record.json'}"
