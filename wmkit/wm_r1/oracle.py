"""A noisy-oracle world model: the simulator, with its predicted screens corrupted at a known rate.

The kit's learned world model is too weak at the cpu size for WM-R1 to learn anything (it judges
the reference solution a success on a few percent of tasks). A *fidelity ladder* separates the
method from the model: :class:`NoisyOracle` is a world model whose error rate ``p`` is a knob.

* Transitions come from the real simulator (one ``PhoneEnv`` per episode, like
  :class:`~wmkit.wm_r1.agent.SimulatorSource`). With probability ``p`` the *shown* next screen is
  corrupted, half the time as a **wrong element** (one element's label replaced by another word of
  the phone's vocabulary: a different contact / note / app / button at that id) and half the time
  as a **wrong value** (a switch flipped, a text, field or item detail replaced).
* The success judgment at the end of an episode is the simulator's goal check on the true final
  state, **flipped** with probability ``p``.
* Every draw is a hash of ``(seed, task template, task seed, step number, action)`` (for the
  judgment: the final step number and last action), so reruns, imagined calls of the same action
  and the real step agree. ``p = 0`` is exactly the simulator's transitions and judgments.

The corruption is observation noise on top of the true state: the next transition starts from the
true world, not from the corrupted screen (the agent's ``tap(N)`` acts on the real element N).
Errors therefore do not compound as a learned model's do; ``p`` is the per-transition error rate.

Interface: a :class:`~wmkit.wm_r1.agent.WorldModelSource` (pass it as ``world_model=`` to
:func:`wmkit.wm_r1.method.train_wm_r1` with ``transitions='world_model'``, or to the evaluation /
diagnostic functions of :mod:`wmkit.wm_r1.evaluation`). ``episode_source()`` gives a fresh
per-batch source of the same kind; ``imagine(source, ...)`` answers call_wm turns from the true
state of the asking episode (when `source` has simulator envs). A screen alone does not determine
the phone's state (the home screen is the same for every task), so the stateless
``predict(pairs)`` (used by ``evaluation.world_model_error``) only answers pairs registered with
:meth:`NoisyOracle.prime` (replayed episodes), in order; other pairs come back unchanged and are
counted in ``unresolved``.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict, deque
from collections.abc import Sequence

from wmkit.envs import phone
from wmkit.wm_r1 import agent as ag

__all__ = ["CORRUPTIONS", "NoisyOracle", "corrupt_screen", "draw"]


CORRUPTIONS = ("element", "value")
"""What a corrupted transition gets wrong (chosen with equal probability)."""


_ELEMENT = re.compile(r'^\[([0-9]+)\] (\S+) ("(?:[^"\\]|\\.)*")(.*)$')


_WORDS = tuple(sorted(set(phone.NAMES) | set(phone.NOTE_TITLES) | set(phone.APP_TITLES.values())
                      | set(phone.SETTING_LABELS.values())
                      | {"Add contact", "New note", "Add alarm", "New message", "Edit", "Delete", "Save",
                         "Send", "Message", "Display", "Back"}))
_TEXTS = tuple(sorted(set(phone.NOTE_BODIES) | set(phone.MESSAGE_TEXTS) | {"555-0142", "555-0199", "07:30"}))


def draw(*key) -> float:
    """A uniform number in [0, 1) determined by `key` alone (stable across processes)."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def corrupt_screen(screen: str, kind: str, key: tuple) -> str:
    """`screen` with one thing wrong (`kind` 'element' or 'value'); deterministic in `key`.
    A screen without elements comes back unchanged; otherwise the result differs from `screen`."""
    lines = screen.split("\n")
    elements = [(k, m) for k, line in enumerate(lines) if (m := _ELEMENT.match(line))]
    if not elements:
        return screen

    def pick(options, *salt):
        return options[int(draw(*key, *salt) * len(options))]

    if kind == "value":
        switches = [(k, m) for k, m in elements if m[2] == "switch"]
        valued = [(k, m) for k, m in elements if m[2] in ("text", "field") or m[4].strip().startswith('"')]
        if switches and (not valued or draw(*key, "which") < 0.5):
            k, m = pick(switches, "switch")
            flipped = " off" if m[4].strip() == "on" else " on"
            lines[k] = f"[{m[1]}] {m[2]} {m[3]}{flipped}"
            return "\n".join(lines)
        if valued:
            k, m = pick(valued, "valued")
            if m[4].strip().startswith('"'):  # an item detail or a field's content
                new = pick([t for t in _TEXTS if _quote(t) != m[4].strip()], "text")
                lines[k] = f"[{m[1]}] {m[2]} {m[3]} {_quote(new)}"
            else:  # a text element: its label is the value shown
                new = pick([t for t in _TEXTS if _quote(t) != m[3]], "text")
                lines[k] = f"[{m[1]}] {m[2]} {_quote(new)}{m[4]}"
            return "\n".join(lines)
        # nothing with a value on this screen: fall through to a wrong element
    k, m = pick(elements, "element")
    new = pick([w for w in _WORDS if _quote(w) != m[3]], "word")
    lines[k] = f"[{m[1]}] {m[2]} {_quote(new)}{m[4]}"
    return "\n".join(lines)


def _task_key(task: phone.PhoneTask) -> tuple:
    return (task.template, task.seed)


class NoisyOracle(ag.WorldModelSource):
    """The simulator as a world model whose screens are wrong with probability `p` and whose
    success judgment is flipped with probability `p` (see the module docstring)."""

    kind = "noisy_oracle"

    def __init__(self, p: float = 0.0, seed: int = 0, flip_success: bool = True,
                 corruptions: Sequence[str] = CORRUPTIONS):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p}")
        unknown = set(corruptions) - set(CORRUPTIONS)
        if unknown or not corruptions:
            raise ValueError(f"corruptions must be a non-empty subset of {CORRUPTIONS}, got {corruptions}")
        super().__init__(self._unsupported_predictor, judge=self._judge_screen_unsupported)
        self.p, self.seed, self.flip_success = float(p), seed, flip_success
        self.corruptions = tuple(corruptions)
        self.envs: list[phone.PhoneEnv] = []
        self.corrupted = 0
        """Transitions (real or imagined) whose screen was corrupted."""
        self.flipped = 0
        """Success judgments that were flipped."""
        self.unresolved = 0
        """predict() pairs whose state was unknown (returned unchanged)."""
        self._primed: dict[tuple[str, str], deque] = defaultdict(deque)

    # ---------------------------------------------------------------- what a learned model would need
    @staticmethod
    def _unsupported_predictor(pairs):
        raise TypeError("a NoisyOracle needs the episode's state: use it as a source (begin/step), through "
                        "episode_source() / imagine(), or prime() it before predict()")

    @staticmethod
    def _judge_screen_unsupported(task, screen):
        raise TypeError("a NoisyOracle judges episodes, not screens")

    # ---------------------------------------------------------------- the noise
    def transition(self, env: phone.PhoneEnv, action: str) -> str:
        """The (possibly corrupted) next screen after `action` from `env`'s state; `env` is not changed."""
        key = (self.seed, *_task_key(env.task), env.steps, action)
        after = env.clone()
        screen = after.step(action).observation
        if self.p > 0 and draw(*key, "corrupt") < self.p:
            kind = self.corruptions[int(draw(*key, "kind") * len(self.corruptions))]
            corrupted = corrupt_screen(screen, kind, key)
            self.corrupted += corrupted != screen
            return corrupted
        return screen

    def judged_success(self, env: phone.PhoneEnv, last_action: str) -> bool:
        """The simulator's goal check on `env`, flipped with probability p."""
        real = env.is_success()
        if self.flip_success and self.p > 0 and \
                draw(self.seed, *_task_key(env.task), env.steps, last_action, "judge") < self.p:
            self.flipped += 1
            return not real
        return real

    # ---------------------------------------------------------------- as a transition source
    def episode_source(self) -> NoisyOracle:
        return NoisyOracle(self.p, self.seed, self.flip_success, self.corruptions)

    def detached(self) -> NoisyOracle:
        """A fresh oracle with the same draws (they depend on the state, not on what was asked before)."""
        return self.episode_source()

    def begin(self, tasks):
        self.tasks = list(tasks)
        self.envs = [phone.PhoneEnv(max_steps=10_000) for _ in self.tasks]
        self.screens = [env.reset(task=t) for env, t in zip(self.envs, self.tasks)]
        self._last = ["" for _ in self.tasks]
        return list(self.screens)

    def _next(self, indices, actions):
        self.queries += len(indices)
        self.predictions += len(indices)
        out = []
        for i, action in zip(indices, actions):
            out.append(self.transition(self.envs[i], action))
            self.envs[i].step(action)
            self._last[i] = action
        return out

    def _judge(self, i):
        return self.judged_success(self.envs[i], self._last[i])

    def full_state(self, i: int) -> dict:
        return self.envs[i].full_state()

    # ---------------------------------------------------------------- as an imaginer
    def imagine(self, source, indices, actions):
        """Imagined screens from the true state of each asking episode (`source` must hold
        simulator envs: a NoisyOracle or a SimulatorSource)."""
        envs = getattr(source, "envs", None)
        if envs is None:
            raise TypeError(f"a NoisyOracle imagines from the episode's state; {type(source).__name__} has none")
        self.queries += len(indices)
        self.predictions += len(indices)
        return [self.transition(envs[i], a) for i, a in zip(indices, actions)]

    def prime(self, episodes: Sequence[ag.Episode]) -> int:
        """Register the (screen, action) pairs of `episodes` replayed in the simulator (real
        actions, finished() and unparseable ones skipped), so that predict() can answer them in
        order. Returns the number of pairs registered."""
        n = 0
        for ep in episodes:
            for screen, action, _, before in ag.replayed_steps(ep, keep_states=True):
                self._primed[(screen, action)].append(before)
                n += 1
        return n

    def predict(self, pairs):
        """Next screens of primed (screen, action) pairs (each primed pair answers once, in the
        order registered); pairs whose state is unknown come back unchanged."""
        self.queries += len(pairs)
        out = []
        for screen, action in pairs:
            queue = self._primed.get((screen, action))
            if not queue:
                self.unresolved += 1
                out.append(screen)
                continue
            self.predictions += 1
            out.append(self.transition(queue.popleft(), action))
        return out
