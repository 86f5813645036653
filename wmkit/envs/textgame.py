"""A small ByteSized32-style text game, deterministic from a seed.

Each game is one room with 5-8 objects. Objects have a few properties (``isOpen``,
``isOn``, ``isCut``, ``temperature`` ...) and may contain other objects; the agent
is an object too, and its ``contains`` list is the inventory. A theme (cook a meal,
wash a dish, water a plant, light a lamp, make tea) fixes the task; the seed picks
the concrete objects, where things start and a few distractors.

The full state is JSON in the format of the ByteSized32 state-prediction data that
RLVR-World trains on::

    {"objects": [{"contains": [], "isCut": false, "name": "knife", "uuid": 2}, ...],
     "score": {"gameOver": false, "gameWon": false, "score": 0}}

serialized on one line with sorted keys, objects sorted by uuid and each
``contains`` list sorted by name (its order carries no meaning). A world model
predicts the *diff* between two states::

    {"modified": [full objects after the change], "removed": [uuids], "score": {...}}

A `Difficulty` sizes the world (``TextGameEnv(difficulty=...)``,
``collect_transitions(..., difficulty=...)``): which themes, how many distractors, whether the
nouns are fixed and whether uuids are shuffled. The default ("full") is the game above, drawn
from exactly the same random numbers as before the knob existed; "medium", "small" and "tiny"
are smaller worlds (`DIFFICULTIES`). "tiny" (the lamp theme, no distractors, fixed nouns, uuids
in role order) is the one a cpu-size world model can nearly learn in a few minutes: what is left
to predict is which battery goes where and what the containers then hold.

Invalid actions never raise: they return a message, leave the state unchanged and
report ``info["valid"] = False``. Valid actions always go through ``_tick`` (in the
tea theme a full kettle on a lit stove heats up by 40 degrees per step), so a
``wait`` can change the state.
"""
from __future__ import annotations

import copy
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from wmkit.envs.base import StepResult, Transition
from wmkit.rewards.lenient_json import parse_json_lenient

__all__ = [
    "ACTION_TYPES",
    "DIFFICULTIES",
    "THEMES",
    "Difficulty",
    "TextGameEnv",
    "action_type",
    "apply_diff",
    "collect_transitions",
    "compute_diff",
    "is_no_change",
    "parse_action",
    "parse_json_lenient",
    "resolve_difficulty",
    "state_text",
]

THEMES = ["cook", "wash", "plant", "lamp", "tea"]
"""Game themes; `TextGameEnv.reset(theme=...)` takes one of these."""

ACTION_TYPES = [
    "look", "inventory", "examine", "take", "drop", "put", "open", "close",
    "turn_on", "turn_off", "cut", "cook", "fill", "eat", "use", "wait",
]
"""Every verb `action_type` can return, besides "invalid"."""

MAX_OBJECTS = 8  # agent included; keeps a state text near 500-700 characters
BOIL_TEMPERATURE = 100
ROOM_TEMPERATURE = 20
HEAT_PER_STEP = 40


# --------------------------------------------------------------------------- difficulty
@dataclass(frozen=True)
class Difficulty:
    """How big a world the games are drawn from; the default is the kit's full game.

    Smaller worlds are easier for a small world model: fewer themes means fewer kinds of
    objects and rules to learn, fewer distractors means shorter states and fewer objects to
    look up. The default (all themes, each theme's own 1-3 distractors) draws exactly the
    games it always drew: same random numbers, byte-identical transitions.
    """

    themes: tuple[str, ...] = tuple(THEMES)
    """Themes a game may have (a subset of `THEMES`, in `THEMES` order for reproducibility)."""
    max_distractors: int | None = None
    """At most this many distractor objects per game (None: each theme's own count, 1-3)."""
    fixed_names: bool = False
    """Every game of a theme uses the same nouns (always "lamp", "drawer", a red working and a blue
    dead battery, never "lantern" or "box"); the second dish and distractors stay random."""
    shuffle_uuids: bool = True
    """Shuffle the uuids of the objects (False: uuids follow the order the theme adds its objects,
    so a uuid gives its object's role away and a model need not look it up in the state)."""

    def __post_init__(self) -> None:
        unknown = [t for t in self.themes if t not in THEMES]
        if unknown or not self.themes:
            raise ValueError(f"Difficulty.themes must be a non-empty subset of {THEMES}, not {self.themes!r}")
        if self.max_distractors is not None and (not isinstance(self.max_distractors, int)
                                                 or isinstance(self.max_distractors, bool)
                                                 or self.max_distractors < 0):
            raise ValueError(f"Difficulty.max_distractors must be None or an int >= 0, "
                             f"not {self.max_distractors!r}")
        for name in ("fixed_names", "shuffle_uuids"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"Difficulty.{name} must be True or False, not {getattr(self, name)!r}")


DIFFICULTIES: dict[str, Difficulty] = {
    "full": Difficulty(),
    "medium": Difficulty(themes=("wash", "plant", "lamp"), max_distractors=1),
    "small": Difficulty(themes=("lamp",), max_distractors=0),
    "tiny": Difficulty(themes=("lamp",), max_distractors=0, fixed_names=True, shuffle_uuids=False),
}
"""Named difficulty levels; "full" is the default game. At cpu size only "tiny" (fixed nouns: nothing
to copy from the action) leaves a model that RL can sharpen; why: see research/README.md, 'RLVR regime'.
"medium" is not measured yet."""


def resolve_difficulty(difficulty: str | Difficulty | dict | None) -> Difficulty:
    """A `Difficulty` from a name in `DIFFICULTIES`, a dict of its fields, an instance, or None (full)."""
    if difficulty is None:
        return DIFFICULTIES["full"]
    if isinstance(difficulty, Difficulty):
        return difficulty
    if isinstance(difficulty, str):
        if difficulty not in DIFFICULTIES:
            raise ValueError(f"unknown difficulty {difficulty!r}; choose one of {', '.join(DIFFICULTIES)}")
        return DIFFICULTIES[difficulty]
    if isinstance(difficulty, dict):
        fields = dict(difficulty)
        if "themes" in fields:
            fields["themes"] = tuple(fields["themes"])
        return Difficulty(**fields)
    raise TypeError(f"difficulty must be a name, a dict, a Difficulty or None, not {type(difficulty).__name__}")


# --------------------------------------------------------------------------- kinds
@dataclass(frozen=True)
class Kind:
    """What an object can do; static for a game and not part of the state JSON.

    A world model has to infer these from object names (a fridge cannot be taken),
    just as it would have to in ByteSized32.
    """

    takeable: bool = False
    big: bool = False  # too big for ordinary containers (pan, kettle, watering can)
    container: bool = False
    closable: bool = False
    accepts: frozenset[str] | None = None  # kinds a container takes; None: any small takeable
    accepts_big: bool = False
    capacity: int | None = None
    device: bool = False  # has isOn
    edible: bool = False
    cuttable: bool = False
    cookable: bool = False
    fillable: bool = False
    water_source: bool = False
    preposition: str = "in"  # "put kettle on stove", "put plate in dish rack"
    props: tuple[tuple[str, Any], ...] = ()  # visible properties and their defaults


KINDS: dict[str, Kind] = {
    "agent": Kind(container=True, accepts_big=True),
    "food": Kind(takeable=True, edible=True, cuttable=True, cookable=True,
                 props=(("isCut", False), ("isCooked", False))),
    "knife": Kind(takeable=True),
    "storage": Kind(container=True, closable=True, props=(("isOpen", False),)),
    "stove": Kind(container=True, device=True, accepts=frozenset({"cookware", "kettle"}),
                  accepts_big=True, preposition="on", props=(("isOn", False),)),
    "cookware": Kind(takeable=True, big=True, container=True, accepts=frozenset({"food"})),
    "sink": Kind(container=True, device=True, accepts_big=True, water_source=True,
                 props=(("isOn", False),)),
    "tap": Kind(device=True, water_source=True, props=(("isOn", False),)),
    "dish": Kind(takeable=True, props=(("isClean", False),)),
    "sponge": Kind(takeable=True),
    "rack": Kind(container=True, accepts=frozenset({"dish", "mug", "cookware"}), accepts_big=True),
    "plant": Kind(props=(("isWatered", False),)),
    "can": Kind(takeable=True, big=True, fillable=True, props=(("isFull", False),)),
    "lamp": Kind(container=True, device=True, accepts=frozenset({"battery"}), capacity=1,
                 props=(("isOn", False),)),
    "battery": Kind(takeable=True, props=(("isCharged", True),)),
    "kettle": Kind(takeable=True, big=True, fillable=True,
                   props=(("isFull", False), ("temperature", ROOM_TEMPERATURE))),
    "mug": Kind(takeable=True, container=True, props=(("hasTea", False),)),
    "teabag": Kind(takeable=True),
    "bowl": Kind(takeable=True, container=True),
    "thing": Kind(takeable=True),
}

# "use X on Y" does something only for these (tool kind, target kind) pairs.
_USE_RULES = {("sponge", "dish"), ("can", "plant"), ("kettle", "mug")}

# Distractors: (name, kind). A theme draws from those whose names are still free.
DISTRACTORS: list[tuple[str, str]] = [
    ("apple", "food"), ("banana", "food"), ("bread", "food"), ("spoon", "thing"),
    ("book", "thing"), ("towel", "thing"), ("coin", "thing"), ("candle", "thing"),
    ("bucket", "can"), ("bowl", "bowl"),
]


# --------------------------------------------------------------------------- building games
class _GameBuilder:
    """Collects the objects of one game, then numbers them."""

    def __init__(self, rng: random.Random, max_distractors: int | None = None, fixed_names: bool = False,
                 shuffle_uuids: bool = True) -> None:
        self.rng = rng
        self.max_distractors = max_distractors
        self.fixed_names = fixed_names
        self.shuffle_uuids = shuffle_uuids
        self.specs: list[tuple[str, str, dict[str, Any], str | None]] = []

    def add(self, name: str, kind: str, inside: str | None = None, **props: Any) -> str:
        self.specs.append((name, kind, props, inside))
        return name

    def pick(self, options: list[str]) -> str:
        """A noun for a role: random, or the first option in a world with fixed names."""
        return options[0] if self.fixed_names else self.rng.choice(options)

    def names(self) -> set[str]:
        return {spec[0] for spec in self.specs}

    def add_distractors(self, count: int, hosts: list[str]) -> None:
        """Add up to `count` distractors, some inside closable `hosts` (if they accept them)."""
        free = [d for d in DISTRACTORS if d[0] not in self.names()]
        count = min(count, MAX_OBJECTS - len(self.specs))
        if self.max_distractors is not None:  # None keeps the default games' random stream as it was
            count = min(count, self.max_distractors)
        for name, kind in self.rng.sample(free, k=max(0, count)):
            inside = None
            if hosts and self.rng.random() < 0.4 and not KINDS[kind].big:
                inside = self.rng.choice(hosts)
            props = {}
            if kind == "food" and self.rng.random() < 0.2:
                props["isCut"] = True
            self.add(name, kind, inside, **props)

    def build(self) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        """Objects (name -> visible dict) and kinds (name -> kind); agent is uuid 0."""
        others = [spec for spec in self.specs if spec[1] != "agent"]
        if self.shuffle_uuids:
            self.rng.shuffle(others)  # uuids should not give away roles
        ordered = [spec for spec in self.specs if spec[1] == "agent"] + others
        objects: dict[str, dict[str, Any]] = {}
        kinds: dict[str, str] = {}
        for uuid, (name, kind, props, _inside) in enumerate(ordered):
            obj: dict[str, Any] = {"name": name, "uuid": uuid, "contains": []}
            for prop, default in KINDS[kind].props:
                obj[prop] = props.get(prop, default)
            objects[name] = obj
            kinds[name] = kind
        for name, _kind, _props, inside in self.specs:
            if inside is not None:
                objects[inside]["contains"].append(name)
        return objects, kinds


@dataclass
class _Game:
    room: str
    task: str
    roles: dict[str, str]
    reference: list[str]


def _build_cook(b: _GameBuilder) -> _Game:
    rng = b.rng
    veg = b.pick(["carrot", "potato", "onion", "tomato", "pepper", "leek"])
    storage = b.pick(["fridge", "cupboard"])
    cookware = b.pick(["pan", "pot"])
    b.add("agent", "agent")
    b.add(storage, "storage")
    b.add(veg, "food", storage)
    b.add("stove", "stove")
    b.add(cookware, "cookware", "stove")
    steps = [f"open {storage}", f"take {veg}"]
    if rng.random() < 0.5:
        b.add("drawer", "storage")
        b.add("knife", "knife", "drawer")
        steps += ["open drawer"]
    else:
        b.add("knife", "knife")
    steps += ["take knife", f"cut {veg} with knife", "turn on stove", f"cook {veg} in {cookware}", f"eat {veg}"]
    b.add_distractors(rng.randint(1, 2), hosts=[storage])
    task = f"Make a meal: cut the {veg} with the knife, cook it in the {cookware}, then eat it."
    return _Game("kitchen", task, {"target": veg}, steps)


def _build_wash(b: _GameBuilder) -> _Game:
    rng = b.rng
    dish = b.pick(["plate", "bowl", "mug", "cup"])
    b.add("agent", "agent")
    b.add("sink", "sink")
    b.add(dish, "dish", "sink" if rng.random() < 0.5 else None)
    b.add("dish rack", "rack")
    steps = [f"take {dish}"]
    hosts = []
    if rng.random() < 0.5:
        b.add("cupboard", "storage")
        b.add("sponge", "sponge", "cupboard")
        steps.append("open cupboard")
        hosts = ["cupboard"]
    else:
        b.add("sponge", "sponge")
    steps += ["take sponge", "turn on sink", f"use sponge on {dish}", f"put {dish} in dish rack", "turn off sink"]
    if rng.random() < 0.5:  # a second dish, dirty or clean, to tell apart
        other = rng.choice([d for d in ["plate", "mug", "cup"] if d != dish])
        b.add(other, "dish", None, isClean=rng.random() < 0.5)
    b.add_distractors(rng.randint(1, 2), hosts=hosts)
    task = f"Wash the dirty {dish} with the sponge, put it in the dish rack, then turn off the sink."
    return _Game("kitchen", task, {"target": dish}, steps)


def _build_plant(b: _GameBuilder) -> _Game:
    rng = b.rng
    plant = b.pick(["fern", "cactus", "tulip", "basil", "orchid", "rose"])
    source = b.pick(["sink", "tap"])
    b.add("agent", "agent")
    b.add(plant, "plant")
    b.add(source, "tap" if source == "tap" else "sink")
    steps = []
    hosts = []
    if rng.random() < 0.5:
        b.add("cabinet", "storage")
        hosts = ["cabinet"]
    b.add("watering can", "can")  # too big for the cabinet: it stands in the room
    steps += ["take watering can", f"turn on {source}", "fill watering can with water",
              f"turn off {source}", f"use watering can on {plant}"]
    b.add_distractors(rng.randint(1, 3), hosts=hosts)
    task = f"Water the {plant} with the watering can, and leave the {source} turned off."
    return _Game("greenhouse", task, {"target": plant, "source": source}, steps)


def _build_lamp(b: _GameBuilder) -> _Game:
    rng = b.rng
    lamp = b.pick(["lamp", "lantern", "flashlight"])
    holder = b.pick(["drawer", "box"])
    colors = ["red", "blue", "green", "yellow"]
    good_color, bad_color = colors[:2] if b.fixed_names else rng.sample(colors, k=2)
    good, bad = f"{good_color} battery", f"{bad_color} battery"
    b.add("agent", "agent")
    b.add(lamp, "lamp")
    b.add(holder, "storage")
    steps = []
    good_inside = rng.random() < 0.7
    b.add(good, "battery", holder if good_inside else None, isCharged=True)
    b.add(bad, "battery", holder if rng.random() < 0.7 else None, isCharged=False)
    if good_inside:
        steps.append(f"open {holder}")
    steps += [f"take {good}", f"put {good} in {lamp}", f"turn on {lamp}"]
    b.add_distractors(rng.randint(1, 3), hosts=[holder])
    task = f"Put a working battery in the {lamp} and turn the {lamp} on."
    return _Game("bedroom", task, {"target": lamp}, steps)


def _build_tea(b: _GameBuilder) -> _Game:
    rng = b.rng
    mug = b.pick(["mug", "teacup"])
    b.add("agent", "agent")
    b.add("kettle", "kettle")
    b.add("sink", "sink")
    b.add("stove", "stove")
    b.add(mug, "mug")
    steps = []
    if rng.random() < 0.5:
        b.add("cupboard", "storage")
        b.add("teabag", "teabag", "cupboard")
        steps.append("open cupboard")
        hosts = ["cupboard"]
    else:
        b.add("teabag", "teabag")
        hosts = []
    steps += ["take teabag", f"put teabag in {mug}", "take kettle", "turn on sink",
              "fill kettle with water", "put kettle on stove", "turn on stove", "wait",
              "take kettle", f"use kettle on {mug}"]
    b.add_distractors(1, hosts=hosts)
    task = (f"Make tea: put the teabag in the {mug}, boil water in the kettle on the stove, "
            f"then pour it into the {mug}.")
    return _Game("kitchen", task, {"target": mug}, steps)


_BUILDERS = {"cook": _build_cook, "wash": _build_wash, "plant": _build_plant,
             "lamp": _build_lamp, "tea": _build_tea}


# --------------------------------------------------------------------------- action parsing
def _clean_name(phrase: str) -> str:
    phrase = phrase.strip()
    for article in ("the ", "a ", "an "):
        if phrase.startswith(article):
            return phrase[len(article):].strip()
    return phrase


_ACTION_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("look", re.compile(r"(?:look|look around|l)")),
    ("inventory", re.compile(r"(?:inventory|inv|i)")),
    ("wait", re.compile(r"(?:wait|z)")),
    ("examine", re.compile(r"(?:examine|inspect|x|look at) (.+)")),
    ("take", re.compile(r"(?:take|get|pick up) (.+?)(?: from (.+))?")),
    ("drop", re.compile(r"drop (.+)")),
    ("put", re.compile(r"(?:put|place) (.+?) (?:in|into|on|onto|inside) (.+)")),
    ("open", re.compile(r"open (.+)")),
    ("close", re.compile(r"close (.+)")),
    ("turn_on", re.compile(r"(?:turn|switch) on (.+)")),
    ("turn_off", re.compile(r"(?:turn|switch) off (.+)")),
    ("turn_on", re.compile(r"(?:turn|switch) (.+) on")),
    ("turn_off", re.compile(r"(?:turn|switch) (.+) off")),
    ("cut", re.compile(r"(?:cut|slice|chop) (.+?) with (.+)")),
    ("cook", re.compile(r"cook (.+?) (?:in|on) (.+)")),
    ("fill", re.compile(r"fill (.+?) with (.+)")),
    ("eat", re.compile(r"eat (.+)")),
    ("use", re.compile(r"use (.+?) (?:on|with) (.+)")),
]


def parse_action(action: Any) -> tuple[str, tuple[str, ...]] | None:
    """Parse an action string into (verb, object names), or None when it is not understood.

    Case, extra spaces, a trailing period and articles ("the", "a") are forgiven;
    synonyms ("pick up", "switch on", "slice") map to the canonical verbs.
    """
    if not isinstance(action, str) or len(action) > 200:
        return None
    text = " ".join(action.strip().strip("`'\"").lower().split()).rstrip(".!")
    for verb, pattern in _ACTION_PATTERNS:
        match = pattern.fullmatch(text)
        if match:
            args = tuple(_clean_name(g) for g in match.groups() if g is not None)
            if any(not arg for arg in args):
                return None
            return verb, args
    return None


def action_type(action: str) -> str:
    """The verb of an action ("take", "put", "turn_on", ...) or "invalid" when unparseable.

    Purely syntactic: "take stove" is a "take" even though the stove cannot be taken.
    """
    parsed = parse_action(action)
    return parsed[0] if parsed else "invalid"


# --------------------------------------------------------------------------- the environment
class TextGameEnv:
    """One-room text game with objects, properties, containment and a score.

    >>> env = TextGameEnv()
    >>> obs = env.reset(seed=3, theme="lamp")
    >>> for action in env.reference_solution():
    ...     result = env.step(action)
    >>> result.done, env.full_state()["score"]["gameWon"]
    (True, True)
    """

    name = "textgame"
    THEMES = THEMES

    def __init__(self, max_steps: int = 30, difficulty: str | Difficulty | dict | None = None) -> None:
        self.max_steps = max_steps
        self.difficulty = resolve_difficulty(difficulty)
        self._next_seed = 0
        self.reset(seed=0)

    # ----------------------------------------------------------------- public API
    def reset(self, seed: int | None = None, theme: str | None = None) -> str:
        """Start a new game; returns the first observation (room description and task).

        `seed=None` takes the next seed of this instance's own counter (0, 1, 2, ...),
        `theme=None` lets the seed pick one of the difficulty's themes (default: `THEMES`).
        """
        if seed is None:
            seed = self._next_seed
        self._next_seed = seed + 1
        rng = random.Random(seed)
        if theme is None:
            theme = rng.choice(list(self.difficulty.themes))
        if theme not in _BUILDERS:
            raise ValueError(f"unknown theme {theme!r}; choose one of {THEMES}")
        level = self.difficulty
        builder = _GameBuilder(rng, level.max_distractors, level.fixed_names, level.shuffle_uuids)
        game = _BUILDERS[theme](builder)
        self._objects, self._kinds = builder.build()
        self.seed = seed
        self.theme = theme
        self.room = game.room
        self.task = game.task
        self._roles = game.roles
        self._reference = list(game.reference)
        self._eaten: dict[str, dict[str, Any]] = {}
        self._parents: dict[str, str] | None = None
        self._steps = 0
        self._done = False
        self._score = {"score": 0, "gameOver": False, "gameWon": False}
        self._update_score()
        return self.observation()

    def step(self, action: str) -> StepResult:
        """Act; invalid actions return a message, change nothing, and set info["valid"]=False."""
        if self._done:
            return StepResult("The game is over. Call reset() to play again.", 0.0, True,
                              {"valid": False, "score": self._score["score"], "won": self._score["gameWon"],
                               "truncated": False})
        self._steps += 1
        old_points = self._score["score"]
        parsed = parse_action(action)
        if parsed is None:
            message = (f"I don't understand {str(action)[:60]!r}. Try: look, inventory, examine X, take X, "
                       "drop X, put X in Y, open X, close X, turn on X, turn off X, cut X with Y, "
                       "cook X in Y, fill X with water, eat X, use X on Y, wait.")
            valid = False
        else:
            verb, args = parsed
            error = self._check(verb, args)
            if error is not None:
                message, valid = error, False
            else:
                message, valid = self._apply(verb, args), True
                self._tick()
                self._update_score()
        reward = float(self._score["score"] - old_points)
        truncated = self._steps >= self.max_steps and not self._score["gameOver"]
        self._done = self._score["gameOver"] or truncated
        if self._score["gameWon"] and valid:
            message += " You have completed the task!"
        elif self._score["gameOver"] and valid:
            message += " The game is over: you lost."
        return StepResult(message, reward, self._done,
                          {"valid": valid, "score": self._score["score"], "won": self._score["gameWon"],
                           "truncated": truncated})

    def observation(self) -> str:
        """What the agent sees now: the room, its inventory and the task."""
        return self._describe_room() + " Task: " + self.task

    def full_state(self) -> dict[str, Any]:
        """The state JSON as a dict: objects sorted by uuid (contains sorted) and the score."""
        objects = []
        for obj in sorted(self._objects.values(), key=lambda o: o["uuid"]):
            copy_ = dict(obj)
            copy_["contains"] = sorted(obj["contains"])
            objects.append(copy_)
        return {"objects": objects, "score": dict(self._score)}

    def valid_actions(self) -> list[str]:
        """Every action (in canonical wording) that is valid now, sorted."""
        if self._done:
            return []
        names = [n for n in self._objects if n != "agent"]
        candidates: list[tuple[str, tuple[str, ...], str]] = [
            ("look", (), "look"), ("inventory", (), "inventory"), ("wait", (), "wait")]
        for x in names:
            kind = self._kind(x)
            candidates.append(("examine", (x,), f"examine {x}"))
            # Cheap filters by kind first; `_check` has the last word.
            if kind.takeable:
                candidates += [("take", (x,), f"take {x}"), ("drop", (x,), f"drop {x}")]
            if kind.closable:
                candidates += [("open", (x,), f"open {x}"), ("close", (x,), f"close {x}")]
            if kind.device:
                candidates += [("turn_on", (x,), f"turn on {x}"), ("turn_off", (x,), f"turn off {x}")]
            if kind.edible:
                candidates.append(("eat", (x,), f"eat {x}"))
            if kind.fillable:
                candidates.append(("fill", (x, "water"), f"fill {x} with water"))
            for y in names:
                if y == x:
                    continue
                y_kind, pair = self._kind(y), (self._kinds[x], self._kinds[y])
                if y_kind.container and kind.takeable:
                    candidates.append(("put", (x, y), f"put {x} {y_kind.preposition} {y}"))
                if kind.cuttable and self._kinds[y] == "knife":
                    candidates.append(("cut", (x, y), f"cut {x} with {y}"))
                if kind.cookable and self._kinds[y] == "cookware":
                    candidates.append(("cook", (x, y), f"cook {x} in {y}"))
                if pair in _USE_RULES:
                    candidates.append(("use", (x, y), f"use {x} on {y}"))
        return sorted({text for verb, args, text in candidates if self._check(verb, args) is None})

    def reference_solution(self) -> list[str]:
        """A short action sequence that wins the game from its reset state."""
        return list(self._reference)

    def clone(self) -> TextGameEnv:
        """An independent copy (same game, same progress)."""
        return copy.deepcopy(self)

    @property
    def done(self) -> bool:
        return self._done

    # ----------------------------------------------------------------- world queries
    def _parent(self, name: str) -> str | None:
        """The object that directly contains `name` (None: it stands in the room)."""
        if self._parents is None:  # rebuilt lazily after every change
            self._parents = {c: p for p, obj in self._objects.items() for c in obj["contains"]}
        return self._parents.get(name)

    def _ancestors(self, name: str) -> list[str]:
        chain, current = [], self._parent(name)
        while current is not None and current not in chain:
            chain.append(current)
            current = self._parent(current)
        return chain

    def _is_open(self, name: str) -> bool:
        return not KINDS[self._kinds[name]].closable or bool(self._objects[name].get("isOpen"))

    def _reachable(self, name: str) -> bool:
        """In the room, held, or inside open containers that are themselves reachable."""
        if name not in self._objects or name == "agent":
            return False
        return all(self._is_open(container) for container in self._ancestors(name))

    def _held(self, name: str) -> bool:
        return name in self._objects["agent"]["contains"]

    def _kind(self, name: str) -> Kind:
        return KINDS[self._kinds[name]]

    def _water_source_on(self) -> bool:
        return any(self._kind(n).water_source and self._objects[n]["isOn"] and self._reachable(n)
                   for n in self._objects)

    # ----------------------------------------------------------------- rules
    def _check(self, verb: str, args: tuple[str, ...]) -> str | None:
        """None when the action is valid now, else the message that says why not."""
        objects = args[:1] if verb == "fill" else args  # in "fill X with water", water is no object
        for arg in objects:
            if not self._reachable(arg):
                return f"You don't see any {arg} here."
        if verb in ("look", "inventory", "wait", "examine"):
            return None
        x = args[0]
        obj = self._objects[x]
        kind = self._kind(x)
        if verb == "take":
            if not kind.takeable:
                return f"You can't take the {x}."
            if self._held(x):
                return f"You already have the {x}."
            if len(args) == 2 and self._parent(x) != args[1]:
                return f"The {x} is not in the {args[1]}."
            return None
        if verb == "drop":
            return None if self._held(x) else f"You are not holding the {x}."
        if verb == "put":
            y = args[1]
            y_kind = self._kind(y)
            if not self._held(x):
                return f"You are not holding the {x}."
            if x == y or x in self._ancestors(y):
                return f"You can't put the {x} inside itself."
            if not y_kind.container:
                return f"You can't put things {y_kind.preposition} the {y}."
            if not self._is_open(y):
                return f"The {y} is closed."
            accepted = self._kinds[x] in y_kind.accepts if y_kind.accepts is not None else True
            if not accepted or (kind.big and not y_kind.accepts_big):
                return f"The {x} does not fit {y_kind.preposition} the {y}."
            if y_kind.capacity is not None and len(self._objects[y]["contains"]) >= y_kind.capacity:
                return f"The {y} is full."
            return None
        if verb in ("open", "close"):
            if not kind.closable:
                return f"You can't {verb} the {x}."
            if obj["isOpen"] == (verb == "open"):
                return f"The {x} is already {'open' if verb == 'open' else 'closed'}."
            return None
        if verb in ("turn_on", "turn_off"):
            want_on = verb == "turn_on"
            if not kind.device:
                return f"You can't turn the {x} {'on' if want_on else 'off'}."
            if obj["isOn"] == want_on:
                return f"The {x} is already {'on' if want_on else 'off'}."
            if want_on and self._kinds[x] == "lamp" and not any(
                    self._objects[b].get("isCharged") for b in obj["contains"]):
                return f"Nothing happens: the {x} has no working battery."
            return None
        if verb == "cut":
            tool = args[1]
            if self._kinds[tool] != "knife" or not self._held(tool):
                return f"You need to hold a knife to cut the {x}."
            if not kind.cuttable:
                return f"You can't cut the {x}."
            return f"The {x} is already cut." if obj["isCut"] else None
        if verb == "cook":
            vessel = args[1]
            if self._kinds[vessel] != "cookware":
                return f"You can't cook in the {vessel}."
            stove = self._parent(vessel)
            if stove is None or self._kinds[stove] != "stove" or not self._objects[stove]["isOn"]:
                return f"The {vessel} must be on a stove that is turned on."
            if not kind.cookable:
                return f"You can't cook the {x}."
            if obj["isCooked"]:
                return f"The {x} is already cooked."
            if not (self._held(x) or self._parent(x) == vessel):
                return f"Hold the {x} or put it in the {vessel} first."
            return None
        if verb == "fill":
            if args[1] != "water":
                return "You can only fill things with water."
            if not kind.fillable:
                return f"You can't fill the {x}."
            if not self._held(x):
                return f"You are not holding the {x}."
            if obj["isFull"]:
                return f"The {x} is already full."
            return None if self._water_source_on() else "There is no running water."
        if verb == "eat":
            return None if kind.edible else f"You can't eat the {x}."
        if verb == "use":
            y = args[1]
            if not self._held(x):
                return f"You are not holding the {x}."
            pair = (self._kinds[x], self._kinds[y])
            target = self._objects[y]
            if pair not in _USE_RULES:
                return f"Nothing happens when you use the {x} on the {y}."
            if pair == ("sponge", "dish"):
                if target["isClean"]:
                    return f"The {y} is already clean."
                return None if self._water_source_on() else "You need running water to wash it."
            if pair == ("can", "plant"):
                if not obj["isFull"]:
                    return f"The {x} is empty."
                return f"The {y} is already watered." if target["isWatered"] else None
            if pair == ("kettle", "mug"):
                if not obj["isFull"] or obj["temperature"] < BOIL_TEMPERATURE:
                    return "You need a kettle of boiling water."
                if not any(self._kinds[c] == "teabag" for c in target["contains"]):
                    return f"There is no teabag in the {y}."
                return f"The {y} already has tea." if target["hasTea"] else None
        return "You can't do that."  # pragma: no cover - every verb is handled above

    def _move(self, name: str, destination: str | None) -> None:
        parent = self._parent(name)
        self._parents = None
        if parent is not None:
            self._objects[parent]["contains"].remove(name)
            if self._kinds[parent] == "lamp" and self._objects[parent]["isOn"]:
                self._objects[parent]["isOn"] = False  # no battery, no light
        if destination is not None:
            self._objects[destination]["contains"].append(name)

    def _apply(self, verb: str, args: tuple[str, ...]) -> str:
        """Carry out a valid action; returns the message."""
        if verb == "look":
            return self._describe_room()
        if verb == "inventory":
            return self._describe_inventory()
        if verb == "wait":
            return "Time passes."
        x = args[0]
        obj = self._objects[x]
        if verb == "examine":
            return self._describe_object(x)
        if verb == "take":
            self._move(x, "agent")
            return f"You take the {x}."
        if verb == "drop":
            self._move(x, None)
            return f"You drop the {x}."
        if verb == "put":
            y = args[1]
            self._move(x, y)
            return f"You put the {x} {self._kind(y).preposition} the {y}."
        if verb in ("open", "close"):
            obj["isOpen"] = verb == "open"
            return f"You {verb} the {x}."
        if verb in ("turn_on", "turn_off"):
            obj["isOn"] = verb == "turn_on"
            return f"You turn {'on' if obj['isOn'] else 'off'} the {x}."
        if verb == "cut":
            obj["isCut"] = True
            return f"You cut the {x} into pieces."
        if verb == "cook":
            if self._parent(x) != args[1]:
                self._move(x, args[1])
            obj["isCooked"] = True
            return f"You cook the {x} in the {args[1]}."
        if verb == "fill":
            obj["isFull"] = True
            return f"You fill the {x} with water."
        if verb == "eat":
            self._move(x, None)
            self._eaten[x] = dict(self._objects.pop(x))
            return f"You eat the {x}."
        if verb == "use":
            y = args[1]
            pair = (self._kinds[x], self._kinds[y])
            if pair == ("sponge", "dish"):
                self._objects[y]["isClean"] = True
                return f"You scrub the {y} with the {x}. It is clean now."
            if pair == ("can", "plant"):
                self._objects[y]["isWatered"] = True
                obj["isFull"] = False
                return f"You water the {y}."
            self._objects[y]["hasTea"] = True  # ("kettle", "mug")
            obj["isFull"] = False
            return f"You pour boiling water into the {y}. The tea is ready."
        raise AssertionError(verb)  # pragma: no cover

    def _tick(self) -> None:
        """World dynamics after each valid action: a full kettle on a lit stove heats up."""
        for name, obj in self._objects.items():
            if self._kinds[name] == "kettle" and obj["isFull"]:
                stove = self._parent(name)
                if stove is not None and self._kinds[stove] == "stove" and self._objects[stove]["isOn"]:
                    obj["temperature"] = min(BOIL_TEMPERATURE, obj["temperature"] + HEAT_PER_STEP)

    def _props(self, name: str) -> dict[str, Any]:
        """Properties of an object, also after it was eaten."""
        return self._objects.get(name) or self._eaten.get(name) or {}

    def _update_score(self) -> None:
        """Score = number of sub-goals met in the current state (as ByteSized32's calculateScore)."""
        target = self._roles["target"]
        t = self._props(target)
        lost = False
        if self.theme == "cook":
            eaten = target in self._eaten
            won = eaten and t["isCut"] and t["isCooked"]
            lost = eaten and not won  # eating it half-prepared ends the game
            points = int(t["isCut"]) + int(t["isCooked"]) + int(won)
        elif self.theme == "wash":
            in_rack = target in self._objects["dish rack"]["contains"]
            won = t["isClean"] and in_rack and not self._objects["sink"]["isOn"]
            points = int(t["isClean"]) + int(t["isClean"] and in_rack) + int(won)
        elif self.theme == "plant":
            can_full = self._objects["watering can"]["isFull"]
            won = t["isWatered"] and not self._objects[self._roles["source"]]["isOn"]
            points = int(can_full or t["isWatered"]) + int(t["isWatered"]) + int(won)
        elif self.theme == "lamp":
            has_battery = any(self._props(b).get("isCharged") for b in t["contains"])
            won = bool(t["isOn"])
            points = int(has_battery) + int(won)
        else:  # tea
            kettle = self._objects["kettle"]
            has_bag = any(self._kinds[c] == "teabag" for c in t["contains"])
            won = bool(t["hasTea"])
            points = int(has_bag) + int(kettle["temperature"] >= BOIL_TEMPERATURE or won) + int(won)
        self._score = {"score": points, "gameOver": bool(won or lost), "gameWon": bool(won)}

    # ----------------------------------------------------------------- descriptions
    def _phrase(self, name: str) -> str:
        obj = self._objects[name]
        states = []
        for prop, on_word, off_word in (("isOpen", "open", "closed"), ("isOn", "on", "off"),
                                        ("isCut", "cut", None), ("isCooked", "cooked", None),
                                        ("isClean", "clean", "dirty"), ("isFull", "full", "empty"),
                                        ("isWatered", "watered", "dry"), ("hasTea", "with tea", None)):
            if prop in obj:
                word = on_word if obj[prop] else off_word
                if word:
                    states.append(word)
        if "isCharged" in obj:
            states.append("charged" if obj["isCharged"] else "dead")
        if "temperature" in obj:
            states.append(f"{obj['temperature']} degrees")
        article = "an" if name[0] in "aeiou" else "a"
        text = f"{article} {name}" + (f" ({', '.join(states)})" if states else "")
        if obj["contains"] and self._is_open(name):
            inner = ", ".join(self._phrase(c) for c in sorted(obj["contains"]))
            text += f" with {inner} {self._kind(name).preposition} it"
        return text

    def _describe_room(self) -> str:
        loose = sorted(n for n in self._objects if n != "agent" and self._parent(n) is None)
        seen = ", ".join(self._phrase(n) for n in loose) or "nothing"
        return f"You are in the {self.room}. You see {seen}. " + self._describe_inventory()

    def _describe_inventory(self) -> str:
        held = sorted(self._objects["agent"]["contains"])
        if not held:
            return "You are carrying nothing."
        return "You are carrying " + ", ".join(self._phrase(n) for n in held) + "."

    def _describe_object(self, name: str) -> str:
        text = self._phrase(name)
        if self._objects[name]["contains"] and not self._is_open(name):
            text += "; it is closed"
        elif not self._objects[name]["contains"] and self._kind(name).container:
            text += f" with nothing {self._kind(name).preposition} it"
        return "You see " + text + "."


# --------------------------------------------------------------------------- world-model helpers
def _ordered(value: Any) -> Any:
    """Key order of the kit's canonical JSON: an object dict lists "name" and "uuid" first, then
    its other properties sorted, then "contains" (ByteSized32's order); other dicts are sorted.

    The order matters to a small language model writing a diff: once it has written the
    object's name (copied from the action) it can look up that object's properties in the
    state; with sorted keys it would have to write "contains" before saying which object.
    """
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    if not isinstance(value, dict):
        return value
    head = [k for k in ("name", "uuid") if k in value] if "uuid" in value or "name" in value else []
    tail = ["contains"] if head and "contains" in value else []
    middle = sorted((k for k in value if k not in head and k not in tail), key=str)
    return {k: _ordered(value[k]) for k in head + middle + tail}


def dump_json(value: Any) -> str:
    """One line of canonical JSON (see `_ordered`)."""
    return json.dumps(_ordered(value))


def state_text(env: TextGameEnv) -> str:
    """The state JSON on one line in canonical key order: what a world model conditions on."""
    return dump_json(env.full_state())


def _objects_by_uuid(state: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {obj["uuid"]: obj for obj in state["objects"]}


def _contains_key(items: Any) -> Any:
    """A hashable, order-free view of a contains list (for comparisons)."""
    if not isinstance(items, list):
        return ("not-a-list", json.dumps(items, sort_keys=True, default=str))
    return frozenset(Counter(json.dumps(i, sort_keys=True, default=str) for i in items).items())


def _same_object(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if set(a) != set(b):
        return False
    for key, value in a.items():
        if key == "contains":
            if _contains_key(value) != _contains_key(b[key]):
                return False
        elif json.dumps(value, sort_keys=True) != json.dumps(b[key], sort_keys=True):
            return False
    return True


def compute_diff(before: str, after: str) -> str:
    """Canonical diff from one state text to the next (RLVR-World / ByteSized32 format).

    `modified` holds the full new dict of every object that was added or whose
    properties or contents changed (sorted by uuid), `removed` the uuids that
    disappeared, `score` the full score after the step. Inputs must be valid state
    texts (this builds training targets; use `apply_diff` for model output).
    """
    old = _objects_by_uuid(json.loads(before))
    new_state = json.loads(after)
    new = _objects_by_uuid(new_state)
    modified = [new[u] for u in sorted(new) if u not in old or not _same_object(old[u], new[u])]
    removed = sorted(u for u in old if u not in new)
    return dump_json({"modified": modified, "removed": removed, "score": new_state["score"]})


def _contains_sort_key(item: Any) -> tuple[int, str]:
    # Names sort as plain strings (as in `full_state`); anything a model writes instead
    # of a name sorts after them, by its JSON text.
    return (0, item) if isinstance(item, str) else (1, json.dumps(item, sort_keys=True, default=str))


def _canonical_object(obj: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    if isinstance(out.get("contains"), list):
        out["contains"] = sorted(out["contains"], key=_contains_sort_key)
    return out


def _is_uuid(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def apply_diff(before: str, diff: str) -> str | None:
    """Apply a (possibly model-written) diff to a state text; canonical state text or None.

    Rules (after RLVR-World's `recover_game_state_from_partial`): each dict in
    `modified` with an integer uuid replaces the object with that uuid, or is added
    when the uuid is new (RLVR-World drops new uuids; we keep them so that created
    objects can be predicted); entries without an integer uuid are skipped; uuids in
    `removed` (a list, or a single uuid) are deleted; a non-empty `score` dict
    replaces the score, a missing or empty one keeps the current score. None when
    either text does not parse, `modified` or `removed` is missing or of the wrong
    type, or `score` is neither missing nor a dict. Never raises.
    """
    try:
        state = json.loads(before) if isinstance(before, str) else None
        if not isinstance(state, dict) or not isinstance(state.get("objects"), list):
            return None
        patch = parse_json_lenient(diff) if isinstance(diff, str) else diff
        if not isinstance(patch, dict) or "modified" not in patch or "removed" not in patch:
            return None
        modified, removed = patch["modified"], patch["removed"]
        if not isinstance(modified, list):
            return None
        if _is_uuid(removed):
            removed = [removed]
        if not isinstance(removed, list):
            return None
        score = patch.get("score", {})
        if score is None:
            score = {}
        if not isinstance(score, dict):
            return None
        objects = {obj["uuid"]: obj for obj in state["objects"] if isinstance(obj, dict) and _is_uuid(obj.get("uuid"))}
        for obj in modified:
            if isinstance(obj, dict) and _is_uuid(obj.get("uuid")):
                objects[obj["uuid"]] = obj
        removed_set = {u for u in removed if _is_uuid(u)}
        kept = [_canonical_object(objects[u]) for u in sorted(objects) if u not in removed_set]
        new_score = score if score else state.get("score", {})
        return dump_json({"objects": kept, "score": new_score})
    except Exception:  # noqa: BLE001 -- model output is untrusted: never let it raise
        return None


def is_no_change(diff: str) -> bool:
    """True when the diff modifies and removes nothing (False if it does not parse)."""
    patch = parse_json_lenient(diff)
    if patch is None:
        return False
    return patch.get("modified") == [] and patch.get("removed") == []


_NONSENSE_ACTIONS = ["dance", "xyzzy", "sing a song", "go north", "", "take", "open", "put",
                     "jump", "take unicorn", "eat the moon", "use", "turn on", "fill"]
_WRONG_TEMPLATES = ["take {a}", "open {a}", "close {a}", "turn on {a}", "turn off {a}", "eat {a}",
                    "drop {a}", "cut {a} with {b}", "put {a} in {b}", "use {a} on {b}",
                    "fill {a} with {b}", "cook {a} in {b}"]


def _invalid_or_noop_action(env: TextGameEnv, rng: random.Random) -> str:
    """An action that usually changes nothing: an observation, nonsense, or a wrong use."""
    names = sorted(n for n in env._objects if n != "agent")
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(["look", "inventory", "wait"] + [f"examine {n}" for n in names])
    if roll < 0.65:
        return rng.choice(_NONSENSE_ACTIONS)
    template = rng.choice(_WRONG_TEMPLATES)
    return template.format(a=rng.choice(names), b=rng.choice(names + ["water"]))


def collect_transitions(n_episodes: int, seed: int, themes: list[str] | None = None,
                        p_random: float = 0.35, p_invalid: float = 0.1,
                        max_steps: int = 30,
                        difficulty: str | Difficulty | dict | None = None) -> list[Transition]:
    """Play `n_episodes` games and record every (state, action, next state, diff).

    Per step: with probability `p_invalid` an invalid or no-op action, with
    `p_random` a random valid action, otherwise the next reference step. After a
    detour the player resumes the reference at its first step that is valid now,
    or acts randomly when none is. Episodes stop when the game ends or after
    `max_steps`. Deterministic in `seed` (its own `random.Random`). About 60% of
    the transitions change the state.

    `difficulty` (a name in `DIFFICULTIES`, a dict of `Difficulty` fields, or a `Difficulty`)
    sizes the world: its themes (unless `themes` is given) and distractors. None is the full
    game, byte-identical to the transitions collected before the knob existed.
    """
    rng = random.Random(seed)
    level = resolve_difficulty(difficulty)
    themes = list(themes) if themes else list(level.themes)
    env = TextGameEnv(max_steps=max_steps, difficulty=level)
    transitions: list[Transition] = []
    for episode in range(n_episodes):
        env.reset(seed=rng.randrange(2**31), theme=rng.choice(themes))
        reference = env.reference_solution()
        next_ref = 0
        before = state_text(env)
        step = 0
        while not env.done:
            roll = rng.random()
            if roll < p_invalid:
                action = _invalid_or_noop_action(env, rng)
            else:
                valid = env.valid_actions()
                action = None
                if roll >= p_invalid + p_random:
                    for k in range(next_ref, len(reference)):
                        if reference[k] in valid:
                            action, next_ref = reference[k], k + 1
                            break
                if action is None:
                    action = rng.choice(valid)
            env.step(action)
            after = state_text(env)
            diff = compute_diff(before, after)
            transitions.append(Transition(
                env="textgame", episode=f"textgame-{seed}-{episode}", step=step, state=before,
                action=action, action_type=action_type(action), next_state=after, diff=diff,
                changed=not is_no_change(diff), task=env.task))
            before = after
            step += 1
    return transitions
