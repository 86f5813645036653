# cellar_key.py
"""A two-room puzzle: the hall's front door is locked, and its key lies in the dark cellar.

Switch the cellar light on (the switch is in the hall), go down, take the key, go up, unlock the
door, go out. An action that does not apply where you are says "Nothing happens." and changes
nothing. The state is four `field: value` lines; a world model's target (the diff) is the lines
that change, or "no change".
"""
from __future__ import annotations

import random

from wmkit.envs.base import StepResult, Transition

NAME = "cellar_key"
FIELDS = {"room": ("hall", "cellar", "outside"), "light": ("off", "on"),
          "key": ("cellar", "held"), "door": ("locked", "open")}
START = {"room": "hall", "light": "off", "key": "cellar", "door": "locked"}
ACTIONS = ("flip switch", "go down", "go up", "take key", "unlock door", "go out")
NO_CHANGE = "no change"
NOTHING_HAPPENS = "Nothing happens."


# ---------------------------------------------------------------- the rules

def next_state(state: dict, action: str) -> dict | None:
    """The state after `action`, or None when the action does nothing here."""
    room = state["room"]
    if action == "flip switch" and room == "hall":
        return {**state, "light": "off" if state["light"] == "on" else "on"}
    if action == "go down" and room == "hall":
        return {**state, "room": "cellar"}
    if action == "go up" and room == "cellar":
        return {**state, "room": "hall"}
    if action == "take key" and room == "cellar" and state["light"] == "on" and state["key"] == "cellar":
        return {**state, "key": "held"}
    if action == "unlock door" and room == "hall" and state["key"] == "held" and state["door"] == "locked":
        return {**state, "door": "open"}
    if action == "go out" and room == "hall" and state["door"] == "open":
        return {**state, "room": "outside"}
    return None


def reward_and_done(state: dict) -> tuple[float, bool]:
    """The task's reward and end: 1 and done once you are outside."""
    return (1.0, True) if state["room"] == "outside" else (0.0, False)


def expert_action(state: dict) -> str:
    """The next step of the reference solution from `state` (a policy that reads the state)."""
    if state["room"] == "cellar":
        return "take key" if state["key"] == "cellar" and state["light"] == "on" else "go up"
    if state["key"] == "held":
        return "unlock door" if state["door"] == "locked" else "go out"
    return "flip switch" if state["light"] == "off" else "go down"


# ---------------------------------------------------------------- state text

def format_state(state: dict) -> str:
    return "\n".join(f"{field}: {state[field]}" for field in FIELDS)


def parse_state(text: str) -> dict | None:
    """The state a text describes (all four fields, known values), or None."""
    state = _parse_fields(text)
    return state if state is not None and set(state) == set(FIELDS) else None


def _parse_fields(text: str) -> dict | None:
    """`field: value` lines -> dict; None if a line is not one (unknown field or value, repeats)."""
    if not isinstance(text, str):
        return None
    fields = {}
    for line in text.strip().splitlines():
        field, sep, value = (part.strip() for part in line.partition(":"))
        if not sep or field not in FIELDS or value not in FIELDS[field] or field in fields:
            return None
        fields[field] = value
    return fields


# ---------------------------------------------------------------- the environment

class CellarKeyEnv:
    def __init__(self, max_steps: int = 20) -> None:
        self.max_steps = max_steps
        self.reset()

    def reset(self, seed: int | None = None) -> str:
        """Start again (the puzzle has one start; `seed` is accepted for the common interface)."""
        self._state, self._steps, self._done = dict(START), 0, False
        return self.observation()

    def step(self, action: str) -> StepResult:
        if self._done:
            return StepResult("The game is over. Call reset() to play again.", 0.0, True, {"valid": False})
        self._steps += 1
        after = next_state(self._state, action)
        if after is not None:
            self._state = after
        reward, self._done = reward_and_done(self._state)
        self._done = self._done or self._steps >= self.max_steps
        message = self.observation() if after is not None else NOTHING_HAPPENS
        return StepResult(message, reward, self._done, {"valid": after is not None})

    def observation(self) -> str:
        return format_state(self._state)

    def full_state(self) -> dict:
        return dict(self._state)

    def valid_actions(self) -> list[str]:
        return [a for a in ACTIONS if next_state(self._state, a) is not None]

    def reference_solution(self) -> list[str]:
        """The actions that solve the puzzle from the current state."""
        state, actions = dict(self._state), []
        while not reward_and_done(state)[1]:
            actions.append(expert_action(state))
            state = next_state(state, actions[-1])
        return actions

    @property
    def done(self) -> bool:
        return self._done


# ---------------------------------------------------------------- the world-model helpers

def state_text(env: CellarKeyEnv) -> str:
    return env.observation()


def compute_diff(before: str, after: str) -> str:
    old, new = parse_state(before), parse_state(after)
    changed = [f"{field}: {new[field]}" for field in FIELDS if new[field] != old[field]]
    return "\n".join(changed) or NO_CHANGE


def apply_diff(before: str, diff: str) -> str | None:
    """The predicted next state, or None when `diff` is not a usable diff. Never raises."""
    state = parse_state(before)
    if state is None or not isinstance(diff, str):
        return None
    if diff.strip() == NO_CHANGE:
        return before
    changes = _parse_fields(diff)
    return format_state({**state, **changes}) if changes else None


def action_type(action: str) -> str:
    return action.split()[0] if isinstance(action, str) and action.split() else ""


def collect_transitions(n_episodes: int, seed: int, p_expert: float = 0.6,
                        max_steps: int = 12) -> list[Transition]:
    """Episodes of an agent that follows the reference solution with probability `p_expert` and
    otherwise tries any action (many do nothing). Deterministic in `seed`."""
    rng, env, out = random.Random(seed), CellarKeyEnv(max_steps=max_steps), []
    for episode in range(n_episodes):
        env.reset()
        step = 0
        while not env.done:
            before = state_text(env)
            action = expert_action(env.full_state()) if rng.random() < p_expert else rng.choice(ACTIONS)
            env.step(action)
            after = state_text(env)
            out.append(Transition(env=NAME, episode=f"{NAME}-{seed}-{episode}", step=step,
                                  state=before, action=action, action_type=action_type(action),
                                  next_state=after, diff=compute_diff(before, after), changed=after != before))
            step += 1
    return out


# ---------------------------------------------------------------- scoring predictions

def fields_right(t: Transition, prediction: str) -> float:
    """Partial credit: the share of the four fields the predicted next state gets right
    (0 when the prediction is not a usable diff)."""
    predicted = parse_state(apply_diff(t.state, prediction) or "")
    if predicted is None:
        return 0.0
    truth = parse_state(t.next_state)
    return sum(predicted[f] == truth[f] for f in FIELDS) / len(FIELDS)


def changes_right(t: Transition, prediction: str) -> float:
    """RLVR's reward: 1 for the exact next state; on a transition that changed something, the
    share of the changed fields predicted right, so that "no change" earns nothing there
    (under `fields_right` it would earn 3/4 for free)."""
    predicted = parse_state(apply_diff(t.state, prediction) or "")
    if predicted is None:
        return 0.0
    truth, before = parse_state(t.next_state), parse_state(t.state)
    if predicted == truth:
        return 1.0
    changed = [f for f in FIELDS if truth[f] != before[f]]
    return sum(predicted[f] == truth[f] for f in changed) / len(changed) if changed else 0.0
