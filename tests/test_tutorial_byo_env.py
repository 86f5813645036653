"""tutorials/bring_your_own_env.md is a test: its Python blocks run here, in order, in an empty
folder, so the tutorial cannot go stale.

The first block is the environment module, `tests/cellar_key.py` verbatim; it is written to the
folder as `cellar_key.py` (the tutorial tells the reader to save it so) and the other blocks run
in one namespace, as in a notebook. The environment stays registered only while the test runs.
"""
from __future__ import annotations

import json
import math
import warnings
import re
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
TUTORIAL = REPO / "tutorials" / "bring_your_own_env.md"
MODULE_FILE = Path(__file__).with_name("cellar_key.py")
MODULE_HEADER = "# cellar_key.py\n"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def tutorial_blocks() -> tuple[str, list[str]]:
    """(the module block, the other Python blocks in order)."""
    blocks = PYTHON_BLOCK.findall(TUTORIAL.read_text())
    modules = [b for b in blocks if b.startswith(MODULE_HEADER)]
    assert len(modules) == 1, f"expected one block starting {MODULE_HEADER!r}, found {len(modules)}"
    return modules[0], [b for b in blocks if not b.startswith(MODULE_HEADER)]


def textgame_tokenizer() -> tuple[list[str], dict, list]:
    """The text game's tokenizer corpus and the vocabulary and merges trained on it at smoke size."""
    from wmkit.core.build import tokenizer_corpus
    from wmkit.core.models import train_tokenizer
    from wmkit.core.worldmodel import collect_transitions
    from wmkit.profiles import get_profile

    corpus = tokenizer_corpus(collect_transitions(["textgame"], 2, seed=0))
    trained = train_tokenizer(corpus, get_profile("smoke").world_model.model.vocab_size)
    model = json.loads(trained.backend_tokenizer.to_str())["model"]
    return corpus, model["vocab"], model["merges"]


@pytest.fixture
def tutorial_folder(tmp_path, monkeypatch):
    """An empty working folder on sys.path; afterwards cellar_key is unregistered and forgotten."""
    from wmkit import envs

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cellar_key", None)
    try:
        yield tmp_path
    finally:
        # the tutorial may register it under another spelling (names compare without case)
        if envs.registered_name("cellar_key") is not None:
            envs.unregister_environment("cellar_key")
        sys.modules.pop("cellar_key", None)


def test_the_tutorial_shows_the_environment_module_verbatim():
    module, steps = tutorial_blocks()
    assert module == MODULE_FILE.read_text()
    assert len(steps) == 9  # check, register, budget+build, evaluate, RLVR, re-evaluate, agent, replay, raise


@pytest.mark.slow
def test_the_tutorial_runs_at_smoke(tutorial_folder):
    from wmkit import envs

    assert "cellar_key" not in envs.ENVIRONMENTS  # not one of the kit's: the tutorial registers it
    textgame_before = textgame_tokenizer()
    module, steps = tutorial_blocks()
    (tutorial_folder / "cellar_key.py").write_text(module)
    namespace: dict = {"__name__": "tutorial"}
    envs.reset_failed_calls()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for number, block in enumerate(steps, start=1):
            exec(compile(block, f"{TUTORIAL.name} (Python block {number} after the module)", "exec"), namespace)
    ours = [w for w in caught if issubclass(w.category, envs.EnvironmentFunctionWarning)]

    assert "cellar_key" in envs.ENVIRONMENTS
    # The kit claims registering changes no other environment's tokenizer (wmkit.envs.tokenizer_prompts).
    assert textgame_tokenizer() == textgame_before

    # the token budget was counted before the build, with the tokenizer the build then trained
    run, budget = namespace["run"], namespace["budget"]
    assert budget.problems() == [] and 1 <= budget.longest_diff <= budget.max_new_tokens
    assert budget.n == sum(map(len, run.splits.values()))
    assert budget.longest_diff == max(len(run.tokenizer(t.diff, add_special_tokens=False)["input_ids"])
                                      for split in run.splits.values() for t in split)
    assert run.info["envs"] == ["cellar_key"] and run.info["profile"] == "smoke"
    assert {t.env for split in run.splits.values() for t in split} == {"cellar_key"}

    scores = namespace["evaluation"]["cellar_key"]
    assert scores["model_greedy"]["partial_metric"] == "fields_right"
    partial = namespace["partial"]
    assert isinstance(partial, float) and math.isfinite(partial) and 0.0 <= partial <= 1.0

    rlvr = namespace["rlvr"]
    assert rlvr.steps == namespace["config"].max_steps
    assert all(0.0 <= r <= 1.0 for r in rlvr.curve("reward"))  # changes_right's range
    before = dict(run.model.named_parameters())
    assert any(not torch.equal(p, before[name]) for name, p in rlvr.model.named_parameters()), \
        "RLVR left every parameter as it was (all rewards in every group equal?)"
    assert namespace["moved"] > 0
    # the RLVR model was evaluated on the same test transitions as the model before it
    after = namespace["after_rlvr"]["cellar_key"]
    assert after["model_greedy"]["n"] == scores["model_greedy"]["n"] > 0
    assert [e["state"] for e in after["examples"]] == [e["state"] for e in scores["examples"]]

    episode, max_steps = namespace["episode"], namespace["max_steps"]
    assert 1 <= len(episode) <= max_steps
    assert episode[-1][3] or len(episode) == max_steps  # ended: goal reached, or out of steps
    assert all(not done for *_, done in episode[:-1])  # no step after the end
    imagined = namespace["imagined"]  # the generic world-model environment: it counted what it played
    assert imagined.steps == len(episode) and 0 <= imagined.unparsed <= imagined.steps

    # imagined successes were replayed in the real puzzle: real ones are exactly those that get out
    episodes, real = namespace["episodes"], namespace["real_successes"]
    imagined_successes = namespace["imagined_successes"]
    assert len(episodes) == 8 and len(real) <= len(imagined_successes) <= len(episodes)
    cellar_key = sys.modules["cellar_key"]
    for actions in imagined_successes:
        state = dict(cellar_key.START)
        for action in actions:
            state = cellar_key.next_state(state, action) or state
            if state["room"] == "outside":
                break
        assert (state["room"] == "outside") == (actions in real)
    assert namespace["real_success"](cellar_key.CellarKeyEnv().reference_solution())
    assert not namespace["real_success"](["go down", "take key"])

    # a metric that raises on junk: evaluation and RLVR both finished, each function warned once
    assert namespace["hot_run"].steps == namespace["hot"].max_steps
    strict = namespace["strict"]["cellar_key"]
    assert strict["model_greedy"]["partial_metric"] == "trusting_fields_right"
    failed, metric = envs.failed_calls(), "cellar_key: metric tutorial.trusting_fields_right"
    assert set(failed) <= {metric, "cellar_key: judge tutorial.<lambda>"}, failed
    # junk sampled at T = 1.5 inside the reward function TRL called, then junk in the evaluation
    assert 0 < namespace["during_rlvr"][metric] < failed[metric]
    assert len(ours) == len(failed)  # one warning per function, however often it failed
    line = str(ours[0].message)
    assert line.startswith("environment 'cellar_key': metric tutorial.trusting_fields_right raised ValueError: ")
    assert "counted as a failed prediction (score 0)" in line
    print(warnings.formatwarning(ours[0].message, ours[0].category, ours[0].filename, ours[0].lineno, None))


def test_the_command_line_builds_the_world_model_of_an_environment_a_module_registers(tutorial_folder, capsys):
    from wmkit.__main__ import main

    (tutorial_folder / "cellar_key.py").write_text(MODULE_FILE.read_text())
    (tutorial_folder / "my_envs.py").write_text(
        "import cellar_key\nfrom wmkit.envs import register_environment\nfrom wmkit.envs.base import Environment\n"
        "register_environment(Environment(name=cellar_key.NAME, module=cellar_key, system_prompt='Predict.', "
        "metric_name='fields_right', metric=cellar_key.fields_right), replace=True)\n")
    sys.modules.pop("my_envs", None)
    try:
        assert main(["world-model", "--profile", "smoke", "--envs", "cellar_key", "--out", "wm"]) == 2
        assert "not registered" in capsys.readouterr().err  # without --import nobody registered it
        assert main(["world-model", "--profile", "smoke", "--import", "no_such_module", "--out", "wm"]) == 2
        assert main(["world-model", "--profile", "smoke", "--import", "my_envs", "--envs", "cellar_key",
                     "--out", "wm"]) == 0
    finally:
        sys.modules.pop("my_envs", None)
    out = capsys.readouterr().out
    info = json.loads(out[out.index("{\n"):])  # the command prints the run's info as JSON last
    assert info["envs"] == ["cellar_key"] and (tutorial_folder / "wm" / "final").is_dir()


def test_wmkit_train_imports_a_module_or_file_and_its_dry_run_checks_the_environment_names(tutorial_folder, capsys):
    from wmkit.__main__ import main

    (tutorial_folder / "cellar_key.py").write_text(MODULE_FILE.read_text())
    sub = tutorial_folder / "mine"
    sub.mkdir()
    (sub / "register_cellar.py").write_text(
        "import cellar_key\nfrom wmkit.envs import register_environment\nfrom wmkit.envs.base import Environment\n"
        "register_environment(Environment(name='Cellar_Key', module=cellar_key, system_prompt='Predict.', "
        "metric_name='fields_right', metric=cellar_key.fields_right), replace=True)\n")
    sys.modules.pop("register_cellar", None)
    try:
        assert main(["train", "world-model", "--profile", "smoke", "--dry-run", "envs=cellar_key"]) == 2
        assert ("envs cellar_key: not registered; registered: textgame, phone, twx (register yours in a module "
                "and name it with --import MODULE_OR_PATH)") in capsys.readouterr().err
        assert main(["train", "world-model", "--profile", "smoke", "--dry-run", "--import", "mine/nothing.py"]) == 2
        assert "--import mine/nothing.py: no such file" in capsys.readouterr().err
        # a path: its folder goes first on sys.path; names compare without case
        assert main(["train", "world-model", "--profile", "smoke", "--import", "mine/register_cellar.py",
                     "--dry-run", "envs=cellar_key,textgame"]) == 0
        assert "envs:\n- cellar_key\n- textgame\n" in capsys.readouterr().out
        assert main(["train", "world-model", "--profile", "smoke", "--import", "mine/register_cellar.py",
                     "--dry-run", "envs=cellar_key,sokoban5"]) == 2
        assert "envs sokoban5: not registered; registered: textgame, phone, twx, Cellar_Key" in capsys.readouterr().err
    finally:
        sys.modules.pop("register_cellar", None)
