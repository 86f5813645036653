"""Any registered environment's world model as an agent's environment.

An agent trained "inside a world model" (WM-R1's setting) never touches the real environment:
each action goes to the world model, which predicts the change to the current state; the
predicted diff is applied, and the environment's own rules judge the predicted state (its
`Environment.judge`: reward and done). Per step:

    diff  ~ world_model(q(state, action))        # greedy, or sampled at `temperature`
    state <- apply_diff(state, diff)             # a diff that does not parse leaves the state
    reward, done = judge(state)                  # the environment's rules, on the imagined state

A diff that does not parse keeps the state as it was, which looks like "nothing happened": the
step says so (`parsed=False`) and `unparsed` counts them, so a model that writes garbage is not
mistaken for a world where nothing moves. WM-R1's phone agent uses its own source
(`wmkit.wm_r1.agent.WorldModelSource`: screens, calls to the model while it reasons, the task's
goal check); this class is the same idea for any registered environment.
"""
from __future__ import annotations

from dataclasses import dataclass

from wmkit.core.worldmodel import predict_diffs, predicted_next_state
from wmkit.envs import get_environment


@dataclass
class WorldModelStep:
    """What one imagined step returns."""

    state: str
    """The predicted next state (the current one when the prediction did not parse)."""
    reward: float
    """The environment's judge on that state."""
    done: bool
    """Whether the judge ends the episode there."""
    parsed: bool
    """Whether the world model's diff applied to the state."""
    diff: str
    """The world model's raw prediction."""


class WorldModelEnv:
    """`reset(state)`, then `step(action)` until `done`: the registered environment `env`, played
    inside `model`'s predictions and judged by `env`'s own `judge`.

    `max_new_tokens`: longest predicted diff. `temperature` None: greedy predictions (the world
    model's most likely change); a number: sampled, seeded per step from `seed`, so a rerun of the
    same episode imagines the same states."""

    def __init__(self, env: str, model, tokenizer, max_new_tokens: int, temperature: float | None = None,
                 seed: int = 0):
        spec = get_environment(env)  # an unknown name: one ValueError listing the registered ones
        if spec.judge is None:
            raise ValueError(f"environment {env!r} declares no judge: register it with judge=<function "
                             "state -> (reward, done)> to play inside its world model")
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        self.env, self.model, self.tokenizer = env, model, tokenizer
        self.max_new_tokens, self.temperature, self.seed = max_new_tokens, temperature, seed
        self.judge = spec.judge_state  # the registered judge; a user's judge that raises pays 0, not done
        self.state: str | None = None
        self.steps = 0
        """Steps since the last reset."""
        self.unparsed = 0
        """Predictions since the last reset that did not parse (their steps kept the state)."""

    def reset(self, state: str) -> str:
        """Start an episode from a real state (the world model predicts changes, not first states)."""
        self.state, self.steps, self.unparsed = state, 0, 0
        return state

    def step(self, action: str) -> WorldModelStep:
        if self.state is None:
            raise RuntimeError("call reset(state) before step(action)")
        sampling = {} if self.temperature is None else {"do_sample": True, "temperature": self.temperature,
                                                         "seed": self.seed + self.steps}
        diff = predict_diffs(self.model, self.tokenizer, [(self.env, self.state, action)], self.max_new_tokens,
                             **sampling)[0][0]
        applied = predicted_next_state(self.env, self.state, diff)
        if applied is None:
            self.unparsed += 1
        else:
            self.state = applied
        self.steps += 1
        reward, done = self.judge(self.state)
        return WorldModelStep(state=self.state, reward=reward, done=done, parsed=applied is not None,
                              diff=diff)
