"""Frames from a real environment: MiniGrid's DoorKey rendered as small RGB pictures, offline.

Why MiniGrid: it installs from PyPI (``pip install minigrid``), needs no download at run time and
renders RGB arrays with numpy alone, so the same trajectories come out on every machine with the
pinned version. ALE would also work offline (it ships its ROMs), but Atari frames need a learned
tokenizer to be reconstructed well; MiniGrid's flat colours make the tokenizer nearly lossless,
which keeps the experiment about the *world model*, not the autoencoder.

Why DoorKey-6x6: every reset draws a new layout (wall, door, key and goal positions) and its
actions have visible effects of several kinds: turning redraws the agent, moving forward moves it
or is blocked by a wall or a locked door, picking the key up removes it from the picture, toggling
with the key opens the door. A random walk alone turns a lot, so the behaviour policy favours
"forward" (`ACTION_PROBABILITIES`).

Pictures: ``tile_size`` pixels per grid cell, without the highlighted field of view (it would make
the picture depend on more than the grid), so the 6x6 grid at 8 pixels is 48x48x3 uint8.

The shipped copy in data/ holds episodes, not pixels (a few KB instead of megabytes): each line is
an episode's seed and actions plus the SHA-256 of the frames its replay must produce, and
:func:`load_trajectories` replays it and checks that hash, so a different MiniGrid renders a clear
error instead of silently different data.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ENV_ID = "MiniGrid-DoorKey-6x6-v0"
"""The MiniGrid environment every trajectory comes from."""

ACTIONS = ("left", "right", "forward", "pickup", "toggle")
"""The actions the behaviour policy takes (MiniGrid's `drop` and `done` are left out: `done` does
nothing in DoorKey, `drop` undoes a pickup the random walk rarely makes)."""

ACTION_PROBABILITIES = (0.2, 0.2, 0.4, 0.1, 0.1)
"""Behaviour policy: forward twice as often as each turn, so the agent walks instead of spinning."""

_MINIGRID_ACTION = {"left": 0, "right": 1, "forward": 2, "pickup": 3, "toggle": 5}


@dataclass
class Trajectories:
    """Rendered episodes of equal length."""

    frames: np.ndarray
    """uint8 [episodes, steps + 1, height, width, 3]: the first picture and one after each action."""
    actions: np.ndarray
    """int64 [episodes, steps]: indices into `ACTIONS`."""
    seeds: list[int]
    """The reset seed of each episode (its layout)."""
    env_id: str = ENV_ID
    tile_size: int = 8

    def __len__(self) -> int:
        return len(self.seeds)

    @property
    def steps(self) -> int:
        return int(self.actions.shape[1])

    def changed(self) -> np.ndarray:
        """bool [episodes, steps]: whether the picture after each action differs from the one before."""
        return np.any(self.frames[:, 1:] != self.frames[:, :-1], axis=(2, 3, 4))

    def subset(self, index: Sequence[int]) -> Trajectories:
        index = list(index)
        return Trajectories(self.frames[index], self.actions[index], [self.seeds[i] for i in index],
                            self.env_id, self.tile_size)


def _make_env(env_id: str, tile_size: int):
    import gymnasium as gym
    import minigrid  # noqa: F401 -- registers the MiniGrid environments with gymnasium

    return gym.make(env_id, render_mode="rgb_array", highlight=False, tile_size=tile_size)


def _play(env, seed: int, actions: Sequence[int]) -> tuple[np.ndarray, bool]:
    """Reset with `seed`, take `actions`; the frames, and whether the episode ended early."""
    env.reset(seed=seed)
    frames = [env.render()]
    for a in actions:
        _, _, terminated, truncated, _ = env.step(_MINIGRID_ACTION[ACTIONS[a]])
        frames.append(env.render())
        if terminated or truncated:
            return np.stack(frames), True
    return np.stack(frames), False


def collect_trajectories(episodes: int, steps: int, seed: int = 0, env_id: str = ENV_ID,
                         tile_size: int = 8) -> Trajectories:
    """`episodes` trajectories of `steps` actions from the behaviour policy, deterministic in `seed`.

    Episode i resets with a seed drawn from `seed`; an episode that ends early (the agent reached the
    goal) is replaced by the next one, so all have the same length."""
    if episodes < 1 or steps < 1:
        raise ValueError(f"episodes and steps must be at least 1, not {episodes} and {steps}")
    if tile_size < 1:
        raise ValueError(f"tile_size must be at least 1, not {tile_size}")
    rng = np.random.default_rng(seed)
    env = _make_env(env_id, tile_size)
    frames, actions, seeds = [], [], []
    while len(seeds) < episodes:
        reset_seed = int(rng.integers(0, 2**31 - 1))
        acts = rng.choice(len(ACTIONS), size=steps, p=ACTION_PROBABILITIES).tolist()
        played, ended = _play(env, reset_seed, acts)
        if ended:
            continue
        frames.append(played)
        actions.append(acts)
        seeds.append(reset_seed)
    env.close()
    return Trajectories(np.stack(frames), np.asarray(actions, dtype=np.int64), seeds, env_id, tile_size)


def split_trajectories(trajectories: Trajectories, val: int, test: int) -> dict[str, Trajectories]:
    """train / val / test by episode (the last `val` + `test` episodes are held out)."""
    n = len(trajectories)
    if val < 0 or test < 0 or val + test >= n:
        raise ValueError(f"val ({val}) + test ({test}) must leave training episodes out of {n}")
    return {"train": trajectories.subset(range(n - val - test)),
            "val": trajectories.subset(range(n - val - test, n - test)),
            "test": trajectories.subset(range(n - test, n))}


def frames_digest(frames: np.ndarray) -> str:
    """SHA-256 of an episode's frames (uint8 bytes, C order)."""
    return hashlib.sha256(np.ascontiguousarray(frames, dtype=np.uint8).tobytes()).hexdigest()


def write_trajectories(trajectories: Trajectories, path: str | Path) -> Path:
    """One JSON line per episode (keys sorted): env_id, tile_size, seed, action names, frames_sha256."""
    path = Path(path)
    lines = []
    for i, seed in enumerate(trajectories.seeds):
        lines.append(json.dumps({"env_id": trajectories.env_id, "tile_size": trajectories.tile_size, "seed": seed,
                                 "actions": [ACTIONS[a] for a in trajectories.actions[i]],
                                 "frames_sha256": frames_digest(trajectories.frames[i])}, sort_keys=True))
    path.write_text("\n".join(lines) + "\n")
    return path


class ReplayMismatchError(RuntimeError):
    """A shipped episode replayed to different pixels (another MiniGrid version renders differently)."""


def load_trajectories(path: str | Path) -> Trajectories:
    """Replay the episodes of a file written by `write_trajectories` and check every frame hash."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    if not rows:
        raise ValueError(f"{path}: no episodes")
    env_id, tile_size = rows[0]["env_id"], rows[0]["tile_size"]
    env = _make_env(env_id, tile_size)
    frames, actions = [], []
    for row in rows:
        acts = [ACTIONS.index(a) for a in row["actions"]]
        played, _ = _play(env, row["seed"], acts)
        if frames_digest(played) != row["frames_sha256"]:
            raise ReplayMismatchError(f"{path}: episode with seed {row['seed']} renders differently here "
                                      f"(MiniGrid version?); regenerate with `python -m wmkit data`")
        frames.append(played)
        actions.append(acts)
    env.close()
    return Trajectories(np.stack(frames), np.asarray(actions, dtype=np.int64), [r["seed"] for r in rows],
                        env_id, tile_size)


def agent_mask(frames: np.ndarray) -> np.ndarray:
    """bool [..., H, W]: the agent's pixels. MiniGrid draws the agent as a pure red triangle (255, 0, 0
    at its core) and nothing else in DoorKey is red, so the strongly red pixels are the agent."""
    f = np.asarray(frames)
    return (f[..., 0] >= 200) & (f[..., 1] <= 60) & (f[..., 2] <= 60)


def agent_visible(frames: np.ndarray) -> np.ndarray:
    """bool [...]: whether each frame [..., H, W, 3] shows the agent (some pixel of `agent_mask`). A
    predicted frame without it has *erased* the agent: the cheapest guess under a pixel reward when
    the model is unsure where the agent went (one cell wrong instead of two)."""
    return agent_mask(frames).any(axis=(-1, -2))
