"""TextWorldExpress as a world-model environment: a real text game the kit did not write.

TextWorldExpress (`textworld-express` on PyPI, Apache-2.0; Jansen & Côté 2022) is a fast
Java reimplementation of several text games (CookingWorld, Coin, Sorting, Arithmetic,
Simon Says, ...) with seeds, train/dev/test folds and gold action sequences. It runs
offline (Java 17 needed) at thousands of steps per second.

Unlike the kit's text game it exposes no JSON state to predict a diff of: an agent sees
free-text observations. A transition here is therefore

    state  = the observation the agent has just seen (free text)
    action = the command it types ("take 37mg of wood")
    target = the next observation, verbatim (the "diff" of this environment *is* the next
             observation, so `apply_diff(before, diff)` just returns it)

which is the setting RWML's embedding reward was made for: an exact match is rare and a
paraphrase of the right outcome should still count. The world model sees only the last
observation, not the whole history (kept short for tiny models; the history would make
e.g. the contents of a room already visited predictable).

Episodes follow the gold action sequence with a small chance of a random valid action
inserted before each gold step, so the data holds both purposeful and aimless moves.
"""
from __future__ import annotations

import random
import re
import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache

from wmkit.envs.base import Transition

GAMES = {
    # name -> TextWorldExpress gameParams kept small: short observations suit tiny models.
    "sorting": "",
    "simonsays": "",
    "arithmetic": "",
    "coin": "numLocations=2,includeDoors=0,numDistractorItems=0",
}
DEFAULT_GAMES = ("sorting", "simonsays", "arithmetic")
RANDOM_ACTION_RATE = 0.25
MAX_STEPS = 16


class TextWorldExpressUnavailable(RuntimeError):
    """textworld-express (or Java) is missing."""


JAVA_NEEDED = 17
INSTALL_JAVA = ("install Java 17 (Debian/Ubuntu/Colab: apt-get install openjdk-17-jre-headless; "
                "conda: conda install -c conda-forge openjdk=17)")


def java_major_version() -> int | None:
    """Major version of the `java` on PATH (8 for "1.8.0", 17 for "17.0.15"); None when there is no
    working `java`."""
    java = shutil.which("java")
    if java is None:
        return None
    try:
        said = subprocess.run([java, "-version"], check=False, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(?:1\.)?(\d+)', said.stderr + said.stdout)
    return int(found.group(1)) if said.returncode == 0 and found else None


@lru_cache(maxsize=1)
def _env():
    """One TextWorldExpress JVM per process (starting it costs about a second)."""
    try:
        from textworld_express import TextWorldExpressEnv
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise TextWorldExpressUnavailable(
            "TextWorldExpress is not installed: pip install textworld-express (needs Java 17)") from exc
    # Checked first because py4j, given a missing or failing `java`, fails with a bare
    # "invalid literal for int()" and the half-built env then writes a traceback to stderr.
    major = java_major_version()
    if major is None:
        raise TextWorldExpressUnavailable(f"TextWorldExpress needs Java {JAVA_NEEDED} and no working `java` "
                                          f"is on PATH: {INSTALL_JAVA}")
    if major < JAVA_NEEDED:
        raise TextWorldExpressUnavailable(f"TextWorldExpress needs Java {JAVA_NEEDED}, `java` here is Java "
                                          f"{major}: {INSTALL_JAVA}")
    try:
        return TextWorldExpressEnv(envStepLimit=10_000)
    except Exception as exc:
        raise TextWorldExpressUnavailable(f"TextWorldExpress could not start Java: {exc}") from exc


def unavailable_reason() -> str | None:
    """Why TextWorldExpress cannot run in this process (one sentence), or None when it can.

    Starts the JVM when it can (so a later `reset` costs nothing more); never raises."""
    try:
        _env()
    except TextWorldExpressUnavailable as exc:
        return str(exc)
    return None


def _check_game(game: str) -> str:
    if game not in GAMES:
        raise ValueError(f"Unknown TextWorldExpress game {game!r}: choose from {', '.join(GAMES)}")
    return game


def reset(game: str, seed: int, fold: str = "train") -> tuple[str, dict]:
    """Start `game` with `seed`; returns (first observation, infos) and keeps the gold path ready."""
    if fold not in ("train", "dev", "test"):
        raise ValueError(f"fold must be train, dev or test, not {fold!r}")
    return _env().reset(seed=seed, gameFold=fold, gameName=_check_game(game), gameParams=GAMES[game],
                        generateGoldPath=True)


def gold_actions() -> list[str]:
    """Gold action sequence of the game last reset."""
    return list(_env().getGoldActionSequence())


def step(action: str) -> tuple[str, float, bool, dict]:
    """One step of the current game: (observation, reward, done, infos). Unknown commands do not raise."""
    return _env().step(action)


# --------------------------------------------------------------------------- world-model helpers

def state_text(observation: str) -> str:
    return observation.strip()


def compute_diff(before: str, after: str) -> str:
    """The target of this environment is the next observation itself."""
    return state_text(after)


def apply_diff(before: str, diff: str) -> str | None:
    """The predicted next observation (None for an empty or non-text prediction). Never raises."""
    if not isinstance(diff, str) or not diff.strip():
        return None
    return diff.strip()


def is_no_change(diff: str) -> bool:
    """Observations carry no 'no change' marker: every transition counts as changed unless the
    collector saw the same observation again (see `collect_transitions`)."""
    return False


def action_type(action: str) -> str:
    words = action.split()
    if not words:
        return ""
    return " ".join(words[:2]) if words[0] in ("look", "move") else words[0]


def collect_transitions(n_episodes: int, seed: int, games: Sequence[str] = DEFAULT_GAMES, fold: str = "train",
                        random_action_rate: float = RANDOM_ACTION_RATE, max_steps: int = MAX_STEPS,
                        ) -> list[Transition]:
    """Play `n_episodes` games (round-robin over `games`) and record every step.

    Before each gold action, with probability `random_action_rate`, a random valid action is
    taken instead (then the gold sequence resumes where it was). A transition is *changed*
    when the next observation differs from the current one. Deterministic given `seed`.
    """
    games = [_check_game(g) for g in games]
    if not games:
        raise ValueError("games must name at least one game")
    rng = random.Random(seed)
    transitions: list[Transition] = []
    for episode_index in range(n_episodes):
        game = games[episode_index % len(games)]
        game_seed = seed * 10_000 + episode_index
        observation, infos = reset(game, game_seed, fold)
        task = infos.get("taskDescription", "")
        gold = gold_actions()
        step_index, done = 0, False
        while gold and not done and step_index < max_steps:
            if rng.random() < random_action_rate:
                choices = sorted(a for a in infos.get("validActions", []) if a not in gold[:1])
                action = rng.choice(choices) if choices else gold.pop(0)
            else:
                action = gold.pop(0)
            next_observation, _, done, infos = step(action)
            before, after = state_text(observation), state_text(next_observation)
            transitions.append(Transition(
                env="twx", episode=f"twx-{game}-{fold}-{game_seed}", step=step_index, state=before,
                action=action, action_type=action_type(action), next_state=after, diff=after,
                changed=before != after, task=task))
            observation = next_observation
            step_index += 1
    return transitions
