"""A GUI agent for the phone: turn format, imagined world-model calls, batched multi-turn rollouts.

Turn format (WM-R1, as the authors' code writes it, here on one line)::

    Thought: find "Location". Action: tap(4)

A thought may instead end in ``call_wm(action='tap(4)')`` with no ``Action:`` line: that turn is
*imagined*. The world model's predicted next screen comes back as a system observation
(:data:`IMAGINED_NOTE` followed by the screen), the step counter does not advance, and at most
``max_wm_calls`` (5) imagined calls are allowed per step; a sixth is a failed step. Anything that
does not parse is an invalid action: a failed step that leaves the screen as it was (there is no
separate format reward). Parsing never raises.

An episode is one *text*: the prompt (task + first screen), then the agent's turns, each followed
by an observation written by the environment (the next screen, or an imagined one). Turns end with
the tokenizer's end-of-sequence token. ``env_mask`` marks which completion tokens the agent wrote
(1) and which the environment wrote (0), so GRPO's loss only sees the agent's tokens.

Transitions come from a :class:`TransitionSource` — one interface, three kinds:

* :class:`SimulatorSource`: the real phone (``PhoneEnv``); success is the goal check on the real
  final state; an optional emulated per-step device latency (default 0: the kit's phone is instant).
* :class:`WorldModelSource`: a learned world model predicts the screen diff of every action (batched,
  cached by (screen, action)); success is judged on the *predicted* final screen with
  ``phone.judge_screen`` (or a judge hook) — the simulator is never stepped.
* :class:`ScriptedSource`: a scripted oracle (a function of (task, screen, action)), for tests.

The first screen of an episode comes from ``PhoneEnv.reset`` (the task's initial screenshot, as a
dataset would hold it); ``reset`` is not a step, and :class:`SimulatorSource` counts steps only.

*The agent's view of a screen* (:data:`SCREEN_VIEWS`, ``AgentConfig.screen_view``) is how screens
are written into the agent's text; the environment, world models and rewards always use the
phone's own format. ``'env'`` (default) writes them unchanged (``[3] item "Nora"``);
``'index_after_label'`` moves each element's index behind its label (``item "Nora" [3]``), so a
thought that names an item and its index in the same order (``find "Nora" [3].``) reads the index
off the screen by matching the tokens ``"Nora" [`` and copying the next one. ``'index_in_label'``
writes the index inside the label's quotes, right after its last character (``item "Nora 3"``):
the policy's byte-level BPE cuts a space-and-digits run off the letters before it, so the token
right before the index is the label's own last token, different on every line, and a thought
``find "Nora 3".`` reads the index with a one-hop copy (match ``Nora``, copy the next token) --
with ``index_after_label`` the token before the index is `` [`` on every line. Actions keep the
environment's indices (``tap(3)``).
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from wmkit.core.worldmodel import predict_diffs
from wmkit.envs import phone
from wmkit.quiet import transient_bar

__all__ = [
    "IMAGINED_NOTE",
    "SCREEN_VIEWS",
    "AgentConfig",
    "Episode",
    "ParsedTurn",
    "Policy",
    "ScriptedSource",
    "SimulatorSource",
    "TransitionSource",
    "WorldModelSource",
    "agent_screen",
    "check_screen_view",
    "env_screen",
    "format_turn",
    "initial_screen",
    "observation_text",
    "parse_turn",
    "prompt_text",
    "run_episodes",
]


IMAGINED_NOTE = ("The result of your imagined action is shown below. "
                 "Please continue your thinking or provide a final action.")


"""The system observation that precedes an imagined screen (the authors' wording)."""


_ACTION_LINE = re.compile(r"Action\s*:\s*(.+)", re.IGNORECASE)


_CALL_WM_OPEN = re.compile(r"call_wm\s*+\(\s*+(?:action\s*+=\s*+)?+(['\"])", re.IGNORECASE)
_CALL_WM_CLOSE = {quote: re.compile(quote + r"\s*+\)") for quote in "'\""}


def _find_call_wm(text: str) -> tuple[int, str] | None:
    """(start, action) of the first ``call_wm(action='...')``: the action runs to the first matching
    quote that is followed by ``)``. Linear time: the regex form ``(['"])(.*?)\\1\\s*\\)`` rescanned
    the rest of the text from every unclosed ``call_wm('`` (quadratic)."""
    closes: dict[str, re.Match | None] = {}
    for opened in _CALL_WM_OPEN.finditer(text):
        quote, begin = opened[1], opened.end()
        close = closes.get(quote, False)
        if close is False or (close is not None and close.start() < begin):
            close = closes[quote] = _CALL_WM_CLOSE[quote].search(text, begin)
        if close is None:
            continue  # no closing quote after this call, nor after any later one of this quote
        return opened.start(), text[begin:close.start()]
    return None


@dataclass(frozen=True)
class ParsedTurn:
    """What one agent turn asks for."""

    kind: str
    """'action' (a real step), 'imagine' (a call_wm turn) or 'invalid' (nothing usable)."""
    action: str = ""
    """The action text (kind 'action': the final action; 'imagine': the imagined one)."""
    thought: str = ""


def parse_turn(text: Any) -> ParsedTurn:
    """Parse one turn; never raises. A final ``Action:`` line wins over a ``call_wm(...)``.

    An action line whose action does not parse as a phone action is 'invalid'; so is an
    imagined call of an unparseable action.
    """
    if not isinstance(text, str):
        return ParsedTurn("invalid")
    try:
        thought = text.split("Action", 1)[0].strip()
        if thought.lower().startswith("thought:"):
            thought = thought[len("thought:"):].strip()
        match = None
        for match in _ACTION_LINE.finditer(text):
            pass  # the last Action: line is the final action
        if match is not None:
            action = match[1].strip().split("\n")[0].strip()
            return ParsedTurn("action" if phone.parse_action(action) else "invalid", action, thought)
        call = _find_call_wm(text)
        if call is not None:
            action = call[1].strip()
            thought = text[:call[0]].strip()
            if thought.lower().startswith("thought:"):
                thought = thought[len("thought:"):].strip()
            return ParsedTurn("imagine" if phone.parse_action(action) else "invalid", action, thought)
    except Exception:  # noqa: BLE001 -- model output is untrusted; a parser bug must not end a run
        return ParsedTurn("invalid")
    return ParsedTurn("invalid", "", thought if isinstance(thought, str) else "")


def format_turn(thought: str, action: str | None = None, imagine: str | None = None) -> str:
    """An agent turn as the policy writes it (without the end-of-sequence token)."""
    if (action is None) == (imagine is None):
        raise ValueError("give exactly one of action (a real step) or imagine (a call_wm turn)")
    if imagine is not None:
        quote = '"' if "'" in imagine else "'"
        return f"Thought: {thought} call_wm(action={quote}{imagine}{quote})"
    # One line: the paper writes Action: on its own line; a from-scratch model learns the format far
    # sooner when the newline (which also separates screen lines) does not have to mean two things.
    return f"Thought: {thought} Action: {action}"


SCREEN_VIEWS = ("env", "index_after_label", "index_in_label")
"""How a screen is written into the agent's text (:func:`agent_screen`)."""


# An element line of the phone's format: [index] kind "label" then the value, if any (` on`,
# ` off` or a quoted text); the label is JSON-quoted, so it may hold escaped quotes.
_ENV_ELEMENT = re.compile(r'^\[([0-9]+)\] (\S+) ("(?:[^"\\]|\\.)*")(.*)$')
_VIEW_ELEMENT = re.compile(r'^(\S+) ("(?:[^"\\]|\\.)*") \[([0-9]+)\](.*)$')
# The 'index_in_label' view of an element line: kind "label index" then the value; the view always
# appends " <index>" to the label, so the last space-and-digits before the closing quote is the
# index even when the label itself ends in digits ("Trip 2" -> "Trip 2 5").
_IN_LABEL_ELEMENT = re.compile(r'^(\S+) "((?:[^"\\]|\\.)*) ([0-9]+)"(.*)$')


def check_screen_view(view: str) -> str:
    """`view` if it is one of :data:`SCREEN_VIEWS`, else a ValueError that names them."""
    if view not in SCREEN_VIEWS:
        raise ValueError(f"Unknown screen_view {view!r}: choose one of {', '.join(map(repr, SCREEN_VIEWS))}")
    return view


def agent_screen(screen: str, view: str = "env") -> str:
    """The agent's view of a phone screen. ``'env'``: unchanged. ``'index_after_label'``: every
    element line ``[3] item "Nora" "hi"`` becomes ``item "Nora" [3] "hi"`` (the index right after
    the label, the value after it). ``'index_in_label'``: it becomes ``item "Nora 3" "hi"`` (the
    index inside the label's quotes). The header and any line that is not an element (a world
    model's garbled prediction) stay as they are. On the phone's screens :func:`env_screen` inverts
    it exactly (nothing is lost)."""
    check_screen_view(view)
    if view == "env" or not isinstance(screen, str):
        return screen
    lines = []
    for line in screen.split("\n"):
        match = _ENV_ELEMENT.match(line)
        if not match:
            lines.append(line)
        elif view == "index_after_label":
            lines.append(f"{match[2]} {match[3]} [{match[1]}]{match[4]}")
        else:  # index_in_label: the index before the label's closing quote
            lines.append(f"{match[2]} {match[3][:-1]} {match[1]}\"{match[4]}")
    return "\n".join(lines)


def env_screen(text: str, view: str = "env") -> str:
    """The phone's format of a screen written in the agent's `view` (the inverse of
    :func:`agent_screen`; lines that are not elements stay as they are)."""
    check_screen_view(view)
    if view == "env" or not isinstance(text, str):
        return text
    lines = []
    for line in text.split("\n"):
        if view == "index_after_label":
            match = _VIEW_ELEMENT.match(line)
            lines.append(f"[{match[3]}] {match[1]} {match[2]}{match[4]}" if match else line)
        else:
            match = _IN_LABEL_ELEMENT.match(line)
            lines.append(f'[{match[3]}] {match[1]} "{match[2]}"{match[4]}' if match else line)
    return "\n".join(lines)


def prompt_text(task: phone.PhoneTask, screen: str, view: str = "env") -> str:
    """The episode's prompt: the instruction and the first screen (in the agent's `view`)."""
    return f"Task: {task.instruction}\nScreen:\n{agent_screen(screen, view)}\n"


def observation_text(screen: str, imagined: bool = False, view: str = "env") -> str:
    """What the environment writes after a turn (masked out of the loss); the screen -- real or
    imagined by a world model -- in the agent's `view`."""
    shown = agent_screen(screen, view)
    if imagined:
        return f"\nImagined: {IMAGINED_NOTE}\n{shown}\n"
    return f"\nScreen:\n{shown}\n"


def initial_screen(task: phone.PhoneTask) -> str:
    """The task's first screen (a reset, not a step)."""
    env = phone.PhoneEnv()
    return env.reset(task=task)


def describe_action(screen: str, action: str, thought_index: bool = False, screen_view: str = "env") -> str:
    """A short thought for an action on `screen` (the phone's format): the label of the element it
    touches (used for SFT data). With `thought_index` a tap's thought also names the element's
    index on the current screen (`find "Nora" at [3].`), so the action that follows copies a number
    already in the thought instead of looking the name up on the screen again. With the
    ``'index_after_label'`` screen view the thought writes label and index exactly as that view
    shows them (`find "Nora" [3].`), so the index is read off the screen by matching `"Nora" [`;
    with ``'index_in_label'`` it is `find "Nora 3".` (match `Nora`, copy the next token)."""
    check_screen_view(screen_view)
    parsed = phone.parse_action(action)
    if parsed is None:
        return "try."
    if parsed[0] in ("tap", "type"):
        for line in screen.split("\n"):
            if line.startswith(f"[{parsed[1]}] "):
                label = re.search(r'"(.*?)"', line)
                name = label[1] if label else "it"
                if parsed[0] == "type":
                    return f'write in "{name}".'
                if not thought_index:
                    return f'find "{name}".'
                if screen_view == "index_after_label":
                    return f'find "{name}" [{parsed[1]}].'
                if screen_view == "index_in_label":
                    return f'find "{name} {parsed[1]}".'
                return f'find "{name}" at [{parsed[1]}].'
        return "tap."
    if parsed[0] == "open_app":
        return f"open {parsed[1]}."
    if parsed[0] == "finished":
        return "done."
    return f"{parsed[0]}."


class TransitionSource:
    """Where an episode's next screens come from. Subclasses fill in `_next` and `_judge`."""

    kind = "base"

    def __init__(self):
        self.tasks: list[phone.PhoneTask] = []
        self.screens: list[str] = []
        self.step_calls = 0
        """Batched `step` calls made (one per round of the rollout loop)."""
        self.transitions = 0
        """Single transitions asked for."""
        self.seconds = 0.0

    def begin(self, tasks: Sequence[phone.PhoneTask]) -> list[str]:
        """Start one episode per task; returns the first screens."""
        self.tasks = list(tasks)
        self.screens = [initial_screen(t) for t in self.tasks]
        return list(self.screens)

    def step(self, indices: Sequence[int], actions: Sequence[str]) -> list[str]:
        """Apply `actions[k]` in episode `indices[k]` (batched); returns the next screens."""
        if not indices:
            return []
        start = time.perf_counter()
        nexts = self._next(list(indices), list(actions))
        for i, screen in zip(indices, nexts):
            self.screens[i] = screen
        self.step_calls += 1
        self.transitions += len(indices)
        self.seconds += time.perf_counter() - start
        return nexts

    def success(self, i: int) -> bool:
        """Whether episode `i` reached its task's goal (judged the way this source can)."""
        try:
            return bool(self._judge(i))
        except Exception:  # noqa: BLE001 -- a judge hook must not end a run
            return False

    def _next(self, indices: list[int], actions: list[str]) -> list[str]:
        raise NotImplementedError

    def _judge(self, i: int) -> bool:
        raise NotImplementedError


class SimulatorSource(TransitionSource):
    """The real phone. `device_latency` seconds are slept once per batched step, as if each
    episode ran on its own device in parallel (default 0: the kit's phone is instant)."""

    kind = "simulator"

    def __init__(self, device_latency: float = 0.0, env_factory: Callable[[], phone.PhoneEnv] | None = None):
        super().__init__()
        self.device_latency = float(device_latency)
        self.env_factory = env_factory or (lambda: phone.PhoneEnv(max_steps=10_000))
        self.envs: list[phone.PhoneEnv] = []

    def begin(self, tasks):
        self.tasks = list(tasks)
        self.envs = [self.env_factory() for _ in self.tasks]
        self.screens = [env.reset(task=t) for env, t in zip(self.envs, self.tasks)]
        return list(self.screens)

    def _next(self, indices, actions):
        if self.device_latency > 0:
            time.sleep(self.device_latency)
        return [self.envs[i].step(a).observation for i, a in zip(indices, actions)]

    def _judge(self, i):
        return self.envs[i].is_success()

    def full_state(self, i: int) -> dict:
        return self.envs[i].full_state()


class WorldModelSource(TransitionSource):
    """A learned world model as the environment, and as the imaginer of call_wm turns.

    `predictor` maps a batch of (screen, action) pairs to predicted diffs (text); predictions
    are cached by (screen, action) (greedy decoding makes them deterministic). A diff that does
    not parse leaves the screen as it was. Success is `judge(task, screen)` on the predicted
    final screen (default: ``phone.judge_screen(...) is True``).
    """

    kind = "world_model"

    def __init__(self, predictor: Callable[[list[tuple[str, str]]], list[str]],
                 judge: Callable[[phone.PhoneTask, str], bool] | None = None, cache: dict | None = None):
        super().__init__()
        self.predictor = predictor
        self.judge = judge or (lambda task, screen: phone.judge_screen(task, screen) is True)
        self.cache: dict[tuple[str, str], str] = {} if cache is None else cache
        self.queries = 0
        """(screen, action) pairs asked for, imagined calls included."""
        self.predictions = 0
        """Pairs the model actually had to predict (cache misses)."""

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        """Next screens for (screen, action) pairs, batched, through the cache."""
        self.queries += len(pairs)
        missing = sorted({p for p in pairs if p not in self.cache})
        if missing:
            self.predictions += len(missing)
            diffs = self.predictor(missing)
            for (screen, action), diff in zip(missing, diffs):
                try:
                    after = phone.apply_diff(screen, diff)
                except Exception:  # noqa: BLE001 -- untrusted prediction: a failed transition, as garbage
                    after = None
                self.cache[(screen, action)] = after or screen
        return [self.cache[p] for p in pairs]

    def imagine(self, source: TransitionSource, indices: Sequence[int], actions: Sequence[str]) -> list[str]:
        """Imagined next screens for a call_wm turn in episode `indices[k]` of `source` (batched).
        A learned world model only sees the screen: ``predict`` on (screen, action)."""
        return self.predict([(source.screens[i], a) for i, a in zip(indices, actions)])

    def detached(self) -> WorldModelSource:
        """The same predictor and judge with a *copy* of the prediction cache: a measurement made
        through it leaves this source's cache, and so which pairs later batches must predict, as
        they were."""
        return WorldModelSource(self.predictor, judge=self.judge, cache=dict(self.cache))

    def episode_source(self) -> WorldModelSource:
        """A fresh transition source for one batch of episodes that shares this one's predictor,
        judge and prediction cache (its counters are its own)."""
        return WorldModelSource(self.predictor, judge=self.judge, cache=self.cache)

    def _next(self, indices, actions):
        return self.predict([(self.screens[i], a) for i, a in zip(indices, actions)])

    def _judge(self, i):
        return self.judge(self.tasks[i], self.screens[i])


class ScriptedSource(TransitionSource):
    """A scripted oracle for tests: `transition(task, screen, action) -> next screen`,
    `judge(task, screen) -> bool`."""

    kind = "scripted"

    def __init__(self, transition: Callable[[phone.PhoneTask, str, str], str],
                 judge: Callable[[phone.PhoneTask, str], bool]):
        super().__init__()
        self.transition, self.judge = transition, judge

    def _next(self, indices, actions):
        return [self.transition(self.tasks[i], self.screens[i], a) for i, a in zip(indices, actions)]

    def _judge(self, i):
        return self.judge(self.tasks[i], self.screens[i])


def world_model_predictor(model, tokenizer, max_new_tokens: int, batch_size: int = 64):
    """Greedy screen-diff predictions of a world model from notebook 01, as (screen, action) -> diff."""
    def predict(pairs):
        queries = [("phone", screen, action) for screen, action in pairs]
        return [o[0] for o in predict_diffs(model, tokenizer, queries, max_new_tokens, batch_size=batch_size)]
    return predict


class Policy:
    """Samples one turn per context (token ids), batched; stops at the end-of-sequence token."""

    def __init__(self, model, tokenizer, max_turn_tokens: int = 32, temperature: float = 1.0,
                 greedy: bool = False, batch_size: int = 64):
        self.model, self.tokenizer = model, tokenizer
        self.max_turn_tokens, self.temperature, self.greedy = max_turn_tokens, temperature, greedy
        self.batch_size = batch_size
        self.eos = tokenizer.eos_token_id
        self.generated_tokens = 0

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @torch.no_grad()
    def turns(self, contexts: Sequence[Sequence[int]], num_samples: int = 1) -> list[list[list[int]]]:
        """`num_samples` turns (token ids, ending with EOS unless cut) for each context."""
        model = self.model
        was_training = model.training
        model.eval()
        device = next(model.parameters()).device
        pad = self.tokenizer.pad_token_id
        out: list[list[list[int]]] = []
        try:
            for start in range(0, len(contexts), self.batch_size):
                batch = [list(c) for c in contexts[start:start + self.batch_size]]
                width = max(len(c) for c in batch)
                ids = torch.tensor([[pad] * (width - len(c)) + c for c in batch], device=device)
                mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in batch], device=device)
                kwargs = {"max_new_tokens": self.max_turn_tokens, "pad_token_id": pad, "eos_token_id": self.eos,
                              "num_return_sequences": num_samples}
                if self.greedy and num_samples == 1:
                    kwargs.update(do_sample=False)
                else:
                    kwargs.update(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
                generated = model.generate(input_ids=ids, attention_mask=mask, **kwargs)[:, width:].tolist()
                for b in range(len(batch)):
                    samples = []
                    for row in generated[b * num_samples:(b + 1) * num_samples]:
                        cut = row.index(self.eos) + 1 if self.eos in row else len(row)
                        row = [t for t in row[:cut] if t != pad or t == self.eos]
                        self.generated_tokens += len(row)
                        samples.append(row)
                    out.append(samples)
        finally:
            if was_training:
                model.train()
        return out


@dataclass
class AgentConfig:
    """How an episode runs."""

    max_steps: int = 8
    """Real steps per episode (imagined turns do not count)."""
    max_wm_calls: int = 5
    """Imagined calls allowed per step (n_max); one more is a failed step."""
    imagine: bool = True
    """False: call_wm turns get no world model and count as failed steps."""
    max_completion_tokens: int = 1536
    """Episode text budget after the prompt (agent + environment tokens); past it the episode ends."""
    best_of_k: int = 0
    """Inference-time simulation: >1 samples K candidate actions per step, imagines each with the
    world model and commits the one whose imagined screen the judge likes best (0/1: off)."""
    screen_view: str = "env"
    """How screens are written into the agent's text (:data:`SCREEN_VIEWS`, :func:`agent_screen`):
    the prompt, every observation and every imagined screen; sources keep the phone's format."""


@dataclass
class Episode:
    """One rollout: its text pieces, counts and outcome."""

    task: phone.PhoneTask
    prompt: str
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    steps: int = 0
    """Real steps taken (finished() and failed steps included)."""
    wm_calls: int = 0
    """Imagined call_wm turns."""
    invalid: int = 0
    """Failed steps (unparseable turns, actions that are not phone actions, too many calls)."""
    actions: list[str] = field(default_factory=list)
    """The real actions, in order (failed steps as written)."""
    finished: bool = False
    """The agent said finished()."""
    truncated: bool = False
    """The token budget ran out."""
    success: bool = False
    final_screen: str = ""
    turns_this_step: int = 0

    @property
    def done(self) -> bool:
        return self.finished or self.truncated

    def add(self, ids: Sequence[int], from_agent: bool) -> None:
        self.completion_ids += list(ids)
        self.env_mask += [1 if from_agent else 0] * len(ids)


def replayed_steps(episode: Episode, keep_states: bool = False) -> Iterator[tuple[str, str, str, phone.PhoneEnv | None]]:
    """(screen, action, next screen, simulator before the action) for each real action of `episode`,
    replayed in the simulator from its task's start; finished() and actions that do not parse are
    skipped, as the agent loop skips them. The simulator is a clone when `keep_states`, else None."""
    env = phone.PhoneEnv(max_steps=10_000)
    screen = env.reset(task=episode.task)
    for action in episode.actions:
        if phone.parse_action(action) in (None, ("finished",)):
            continue
        before = env.clone() if keep_states else None
        next_screen = env.step(action).observation
        yield screen, action, next_screen, before
        screen = next_screen


def _pick_best(source: TransitionSource | None, imaginer: WorldModelSource, task: phone.PhoneTask,
               screen: str, candidates: list[str]) -> str:
    """Inference-time simulation: the candidate whose imagined screen scores best
    (judge True 2 > unknown 1 > False 0), ties broken by how often it was sampled."""
    valid = [c for c in candidates if phone.parse_action(c)]
    if not valid:
        return candidates[0] if candidates else ""
    unique = sorted(set(valid), key=lambda c: (-valid.count(c), valid.index(c)))
    imagined = imaginer.predict([(screen, c) for c in unique])

    def score(c, s):  # finished() changes nothing on screen: it is judged on the current one
        verdict = phone.judge_screen(task, screen if c == "finished()" else s)
        return 2 if verdict is True else 1 if verdict is None else 0
    scores = [score(c, s) for c, s in zip(unique, imagined)]
    return unique[max(range(len(unique)), key=lambda k: (scores[k], -k))]


def run_episodes(policy: Policy, tasks: Sequence[phone.PhoneTask], source: TransitionSource,
                 imaginer: WorldModelSource | None = None, config: AgentConfig | None = None,
                 progress: bool = False) -> list[Episode]:
    """Play one episode per task, all batched: each round asks the policy for one turn in every
    unfinished episode, then sends the real actions to `source` in one batch and the imagined
    ones to `imaginer` in one batch. Success is judged by `source` when an episode ends."""
    config = config or AgentConfig()
    view = check_screen_view(config.screen_view)
    screens = source.begin(tasks)
    episodes = []
    for task, screen in zip(tasks, screens):
        prompt = prompt_text(task, screen, view)
        episodes.append(Episode(task=task, prompt=prompt, prompt_ids=policy.encode(prompt), final_screen=screen))
    rounds = 0
    bar = None
    if progress:
        bar = transient_bar(total=len(episodes), desc=f"episodes ({source.kind})")
    while True:
        active = [i for i, e in enumerate(episodes) if not e.done]
        if not active:
            break
        rounds += 1
        contexts = [episodes[i].prompt_ids + episodes[i].completion_ids for i in active]
        k = config.best_of_k if (config.best_of_k > 1 and imaginer is not None) else 1
        sampled = policy.turns(contexts, num_samples=k)
        real_idx, real_actions, imag_idx, imag_actions = [], [], [], []
        for i, samples in zip(active, sampled):
            ep = episodes[i]
            ids = samples[0]
            if k > 1:
                texts = [policy.tokenizer.decode(s, skip_special_tokens=True) for s in samples]
                parsed_all = [parse_turn(t) for t in texts]
                candidates = [p.action for p in parsed_all if p.kind == "action"]
                if candidates:
                    best = _pick_best(source, imaginer, ep.task, source.screens[i], candidates)
                    ids = samples[next(j for j, p in enumerate(parsed_all) if p.kind == "action" and p.action == best)]
            ep.add(ids, from_agent=True)
            turn = parse_turn(policy.tokenizer.decode(ids, skip_special_tokens=True))
            if turn.kind == "imagine" and config.imagine and imaginer is not None \
                    and ep.turns_this_step < config.max_wm_calls:
                ep.wm_calls += 1
                ep.turns_this_step += 1
                imag_idx.append(i)
                imag_actions.append(turn.action)
                continue
            # A real step: a valid action, or a failed one (invalid / call_wm over the limit or unavailable).
            ep.steps += 1
            ep.turns_this_step = 0
            if turn.kind == "action":
                ep.actions.append(turn.action)
                if phone.parse_action(turn.action) == ("finished",):
                    ep.finished = True
                else:
                    real_idx.append(i)
                    real_actions.append(turn.action)
            else:
                ep.invalid += 1
                ep.actions.append(turn.action or "<invalid>")
                ep.add(policy.encode(observation_text(source.screens[i], view=view)), from_agent=False)
        for i, screen in zip(real_idx, source.step(real_idx, real_actions)):
            episodes[i].add(policy.encode(observation_text(screen, view=view)), from_agent=False)
        if imag_idx:
            imagined = imaginer.imagine(source, imag_idx, imag_actions)
            for i, screen in zip(imag_idx, imagined):
                episodes[i].add(policy.encode(observation_text(screen, imagined=True, view=view)), from_agent=False)
        for i in active:
            ep = episodes[i]
            if not ep.done and (ep.steps >= config.max_steps
                                or len(ep.completion_ids) >= config.max_completion_tokens):
                ep.truncated = True
            if ep.done:
                ep.final_screen = source.screens[i]
                ep.success = source.success(i)
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    for ep in episodes:
        # The loss never ends on an environment observation: drop a trailing one.
        while ep.env_mask and ep.env_mask[-1] == 0:
            ep.env_mask.pop()
            ep.completion_ids.pop()
    return episodes


def summarize_episodes(episodes: Sequence[Episode]) -> dict:
    """Success rate, mean steps, world-model calls and failed steps per episode."""
    n = max(1, len(episodes))
    return {
        "n": len(episodes),
        "success": sum(e.success for e in episodes) / n,
        "steps": sum(e.steps for e in episodes) / n,
        "wm_calls": sum(e.wm_calls for e in episodes) / n,
        "invalid": sum(e.invalid for e in episodes) / n,
        "finished": sum(e.finished for e in episodes) / n,
    }
