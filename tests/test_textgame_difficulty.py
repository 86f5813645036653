"""The text game's difficulty knob: the default is the game as it always was, smaller worlds are smaller."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from wmkit.core.worldmodel import split_by_episode, write_jsonl
from wmkit.envs.textgame import (
    DIFFICULTIES,
    DISTRACTORS,
    THEMES,
    Difficulty,
    TextGameEnv,
    collect_transitions,
    resolve_difficulty,
)

DATA = Path(__file__).resolve().parent.parent / "data"
DEFAULTS = [None, "full", {}, Difficulty(), Difficulty(themes=tuple(THEMES), max_distractors=None)]

# sha256 of collect_transitions(n, seed) (one sorted-key JSON line per transition), computed with
# the code *before* the knob existed (commit 9948a32).
PINNED = {(60, 0): "f68e666341c3bfbb2304095aab329aee2b5b7acb2b90b8a32c13fbce28f0775f",
          (40, 7): "2be0d04c8f00a343ea19465acf614a8d34786df6aef22e8d1e56866d72b291c8",
          (25, 1000): "d5d07aa97b1872feab7591ae6d69f5368692fb636c078398ab564964247be8a1"}


def _digest(transitions) -> str:
    text = "".join(json.dumps(t.to_dict(), sort_keys=True) + "\n" for t in transitions)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("difficulty", DEFAULTS, ids=repr)
def test_default_reproduces_the_shipped_data_byte_for_byte(difficulty, tmp_path):
    # data/textgame_*.jsonl are `python -m wmkit data`: 60 episodes, seed 0 (the first env of DEFAULT_ENVS).
    splits = split_by_episode(collect_transitions(60, seed=0, difficulty=difficulty))
    sums = dict(reversed(line.split("  ")) for line in (DATA / "SHA256SUMS").read_text().splitlines() if line)
    for name, items in splits.items():
        path = write_jsonl(items, tmp_path / f"textgame_{name}.jsonl")
        assert path.read_bytes() == (DATA / path.name).read_bytes(), path.name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sums[path.name]


@pytest.mark.parametrize("difficulty", DEFAULTS, ids=repr)
def test_default_matches_the_pre_knob_code_on_other_seeds(difficulty):
    for (n, seed), digest in PINNED.items():
        assert _digest(collect_transitions(n, seed=seed, difficulty=difficulty)) == digest
    assert _digest(collect_transitions(40, seed=7)) == PINNED[(40, 7)]  # no argument at all


def test_default_env_games_are_unchanged():
    plain, knob = TextGameEnv(), TextGameEnv(difficulty="full")
    for seed in range(40):
        assert plain.reset(seed=seed) == knob.reset(seed=seed)
        assert plain.full_state() == knob.full_state() and plain.theme == knob.theme


@pytest.mark.parametrize("name", ["medium", "small", "tiny"])
def test_smaller_levels_keep_to_their_themes_and_distractors(name):
    level = DIFFICULTIES[name]
    env = TextGameEnv(difficulty=name)
    full = TextGameEnv()
    names = {d[0] for d in DISTRACTORS}
    picked = set()
    for seed in range(60):
        env.reset(seed=seed)
        picked.add(env.theme)
    assert picked == set(level.themes)
    for seed, theme in [(seed, theme) for seed in range(30) for theme in level.themes]:
        env.reset(seed=seed, theme=theme)
        full.reset(seed=seed, theme=theme)  # same random stream up to the distractors
        assert len(env.full_state()["objects"]) <= len(full.full_state()["objects"])
        if env.theme != "wash":  # wash may use "bowl" as its dish, a distractor name too
            extra = [o["name"] for o in env.full_state()["objects"] if o["name"] in names]
            assert len(extra) <= level.max_distractors
        for action in env.reference_solution():  # still winnable
            env.step(action)
        assert env.full_state()["score"]["gameWon"]


def test_no_distractors_at_all():
    env = TextGameEnv(difficulty={"max_distractors": 0})
    for seed in range(30):
        env.reset(seed=seed, theme="lamp")
        assert len(env.full_state()["objects"]) == 5  # agent, lamp, holder, two batteries


def test_smaller_worlds_give_shorter_states_and_different_data():
    full = collect_transitions(40, seed=3)
    easy = collect_transitions(40, seed=3, difficulty="small")
    assert _digest(full) != _digest(easy)
    mean = lambda ts: sum(len(t.state) for t in ts) / len(ts)
    assert mean(easy) < mean(full)
    assert {t.task.split(":")[0] for t in easy} <= {t.task.split(":")[0] for t in full}
    # deterministic
    assert _digest(easy) == _digest(collect_transitions(40, seed=3, difficulty="small"))


def test_explicit_themes_argument_still_wins():
    ts = collect_transitions(10, seed=1, themes=["tea"], difficulty="small")
    assert all("tea" in t.task for t in ts)


@pytest.mark.parametrize("bad", [{"themes": ()}, {"themes": ("space",)}, {"max_distractors": -1},
                                 {"max_distractors": 1.5}, "impossible", {"colour": 3},
                                 {"fixed_names": "yes"}, {"shuffle_uuids": None}])
def test_bad_difficulties_are_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        resolve_difficulty(bad)
    with pytest.raises(TypeError):
        resolve_difficulty(3)


def test_fixed_names_and_unshuffled_uuids():
    env = TextGameEnv(difficulty="tiny")
    layouts = set()
    for seed in range(30):
        env.reset(seed=seed)
        objects = env.full_state()["objects"]
        assert [o["name"] for o in objects[:3]] == ["agent", "lamp", "drawer"]  # build order = uuid order
        assert [o["name"] for o in objects[3:]] == ["red battery", "blue battery"]
        layouts.add(env.state_text() if hasattr(env, "state_text") else str(objects))
        for action in env.reference_solution():
            env.step(action)
        assert env.full_state()["score"]["gameWon"]
    assert len(layouts) > 1  # where the batteries start still varies


def test_every_theme_builds_with_every_knob():
    for level in [Difficulty(themes=(theme,), max_distractors=d, fixed_names=f, shuffle_uuids=u)
                  for theme in THEMES for d in (None, 0, 2) for f in (False, True) for u in (False, True)]:
        env = TextGameEnv(difficulty=level)
        for seed in range(3):
            env.reset(seed=seed)
            assert env.theme == level.themes[0]
            for action in env.reference_solution():
                env.step(action)
            assert env.full_state()["score"]["gameWon"], (level, seed)
        assert collect_transitions(3, seed=5, difficulty=level)
