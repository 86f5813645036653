"""Phone: a deterministic mobile-GUI simulator with tasks, shortest reference solutions and screen diffs.

Five apps (Settings, Contacts, Clock, Notes, Messages) and a home screen. A screen is an
accessibility tree in text: a header line, then the elements numbered 1..n in display order::

    app: Clock | screen: alarms
    [1] button "Add alarm"
    [2] switch "07:00" on
    [3] switch "08:30" off
    [4] button "Delete alarms"
    [5] button "Back"

Lists show one page of ``PAGE_SIZE`` rows and ``scroll(down)`` / ``scroll(up)`` move the page,
so a screen hides what lies behind it (the header says ``page 1/2``). Element ids are positions
on the current screen and change when the screen changes.

Actions, as an agent writes them: ``tap(N)``, ``type(N, "text")``, ``scroll(up|down)``, ``back()``,
``home()``, ``open_app(name)``, ``finished()``. Anything unparseable or impossible is an *invalid
action*: the world stays as it was (only the step counter moves), the observation is the unchanged
screen, ``info["valid"]`` is False and ``info["message"]`` says why. Nothing here raises on agent
or model text.

The world is an immutable tuple (:class:`World`), so cloning is free and breadth-first search can
hash states directly; ``full_state()`` is its JSON form. Tasks carry their initial world, the
expected values of a few facts (``"setting:wifi": True``, ``"contact:Ana": None`` = absent ...) and
the goal check also requires that nothing outside the task's scope changed.

A phone with a *status bar* (:func:`with_status_bar`, off by default) shows every toggle's value
on a second line of every screen, as a real phone's status icons do::

    app: Home | screen: home
    status: "Wi-Fi" on, "Bluetooth" off, "Airplane mode" off, "Location" on, "Do not disturb" off, ...

Without it the home screen is the same in every world, so what the Settings screen will show
cannot be told from the screen before it; with it, the next screen is a function of the current
screen and the action on the settings screens, which is what a world model that sees only the
screen needs. Each toggle is written as its switch line writes it (``"Wi-Fi" on``), so a model can
copy a value from the bar to the switch by matching the same tokens.
"""
from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, NamedTuple

from wmkit.envs.base import StepResult, Transition

__all__ = [
    "APPS",
    "GOAL_CHECKS",
    "PAGE_SIZE",
    "TASK_TEMPLATES",
    "PhoneEnv",
    "PhoneTask",
    "World",
    "action_type",
    "apply_diff",
    "collect_transitions",
    "compute_diff",
    "is_no_change",
    "judge_screen",
    "judge_success",
    "make_task",
    "parse_action",
    "reference_solution",
    "sample_tasks",
    "split_templates",
    "state_text",
    "with_status_bar",
]

# --------------------------------------------------------------------------- vocabulary

APPS = ("settings", "contacts", "clock", "notes", "messages")
APP_TITLES = {"home": "Home", "settings": "Settings", "contacts": "Contacts", "clock": "Clock",
              "notes": "Notes", "messages": "Messages"}
APP_ROOTS = {"settings": "settings", "contacts": "contacts", "clock": "alarms", "notes": "notes",
             "messages": "conversations"}

SETTING_LABELS = {"wifi": "Wi-Fi", "bluetooth": "Bluetooth", "airplane": "Airplane mode",
                  "location": "Location", "dnd": "Do not disturb", "dark_mode": "Dark mode",
                  "auto_rotate": "Auto-rotate", "large_text": "Large text"}
SETTING_KEYS = tuple(SETTING_LABELS)
MAIN_SETTINGS = ("wifi", "bluetooth", "airplane", "location", "dnd")  # on the Settings screen
DISPLAY_SETTINGS = ("dark_mode", "auto_rotate", "large_text")         # on the Display sub-screen
PLAIN_SETTINGS = ("wifi", "bluetooth", "location", "dnd")              # main toggles without side effects

LIST_SCREENS = ("contacts", "choose contact", "alarms", "delete alarms", "notes", "conversations")
NO_PAGES = (0,) * len(LIST_SCREENS)
PAGE_SIZE = 5
CHAT_LINES = 3   # messages a chat screen shows (the latest ones)
MAX_TEXT = 60    # typed text is cut to this length so screens stay short

# Where back() leads; "home" leaves the app.
PARENT = {"settings": "home", "display": "settings", "contacts": "home", "contact": "contacts",
          "new contact": "contacts", "edit contact": "contact", "alarms": "home",
          "new alarm": "alarms", "delete alarms": "alarms", "notes": "home", "note": "notes",
          "new note": "notes", "edit note": "note", "conversations": "home", "chat": "conversations",
          "choose contact": "conversations"}

# Small word lists so that a tiny language model can learn the whole vocabulary.
NAMES = ("Ana", "Bob", "Carl", "Dana", "Eva", "Finn", "Gia", "Hugo", "Ines", "Jon", "Kim", "Leo",
         "Mia", "Nora", "Omar", "Pia")
NOTE_TITLES = ("groceries", "ideas", "todo", "books", "trip", "recipes", "gifts", "movies",
               "garden", "workout", "music", "budget")
NOTE_BODIES = ("milk and eggs", "call mom", "buy bread", "pay rent", "read more", "walk the dog",
               "fix the bike", "water plants", "book flights", "clean desk")
MESSAGE_TEXTS = ("hi", "see you", "on my way", "thanks", "call me", "ok", "running late",
                 "good night", "lunch today", "where are you", "happy birthday", "sounds good")
ALARM_HOURS = range(5, 12)

# --------------------------------------------------------------------------- world and screens


class World(NamedTuple):
    """The whole phone, immutable (hashable, so search can use it as a key)."""

    settings: tuple[bool, ...]                    # in SETTING_KEYS order
    contacts: tuple[tuple[str, str], ...]         # (name, phone), sorted by name
    alarms: tuple[tuple[str, bool], ...]          # ("07:00", on), sorted by time
    notes: tuple[tuple[str, str], ...]            # (title, body), newest first
    chats: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (contact, ((sender, text), ...)), most recent first
    app: str = "home"
    screen: str = "home"
    target: str = ""                              # the contact / note / chat a screen is about
    fields: tuple[tuple[str, str], ...] = ()      # (label, text) of the form on screen
    pages: tuple[int, ...] = NO_PAGES             # page of each list, in LIST_SCREENS order
    status_bar: bool = False                      # every screen shows the toggles' values (with_status_bar)


DATA_FIELDS = ("settings", "contacts", "alarms", "notes", "chats")


class _Element(NamedTuple):
    kind: str                  # app, button, switch, item, text, field
    label: str
    value: Any = None          # bool for a switch, text for a field or a list item's detail
    tap: tuple | None = None   # what tapping does; None = not tappable


class _Screen(NamedTuple):
    header: str
    elements: list[_Element]
    list_name: str | None = None   # the scrollable list on screen, if any
    page: int = 0
    n_pages: int = 1
    status: str | None = None      # the status bar's line, on a phone that has one

    def text(self) -> str:
        top = [self.header] if self.status is None else [self.header, self.status]
        return "\n".join(top + [_element_line(i, e) for i, e in enumerate(self.elements, 1)])


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _element_line(index: int, element: _Element) -> str:
    line = f"[{index}] {element.kind} {_quote(element.label)}"
    if element.kind == "switch":
        return line + (" on" if element.value else " off")
    return line if element.value is None else f"{line} {_quote(element.value)}"


def _button(label: str, tap: tuple) -> _Element:
    return _Element("button", label, None, tap)


BACK_BUTTON = _button("Back", ("back",))


def _list_length(w: World, list_name: str) -> int:
    return len({"contacts": w.contacts, "choose contact": w.contacts, "alarms": w.alarms,
                "delete alarms": w.alarms, "notes": w.notes, "conversations": w.chats}[list_name])


def _n_pages(n_rows: int) -> int:
    return max(1, -(-n_rows // PAGE_SIZE))


STATUS_PREFIX = "status: "


def _status_line(w: World) -> str:
    """The status bar: every toggle, in SETTING_KEYS order, with its value, as its switch shows it."""
    return STATUS_PREFIX + ", ".join(f"{_quote(SETTING_LABELS[k])} {'on' if v else 'off'}"
                                     for k, v in zip(SETTING_KEYS, w.settings))


def _render(w: World) -> _Screen:
    """The screen of world `w`: header and elements (with what tapping each one does)."""
    screen = _render_screen(w)
    return screen._replace(status=_status_line(w)) if w.status_bar else screen


def _render_screen(w: World) -> _Screen:
    s, t = w.screen, w.target
    title = f"chat with {t}" if s == "chat" else s
    top: list[_Element] = []
    rows: list[_Element] = []
    bottom: list[_Element] = [BACK_BUTTON]
    if s == "home":
        top, bottom = [_Element("app", APP_TITLES[a], None, ("open_app", a)) for a in APPS], []
    elif s in ("settings", "display"):
        keys = MAIN_SETTINGS if s == "settings" else DISPLAY_SETTINGS
        values = dict(zip(SETTING_KEYS, w.settings))
        top = [_Element("switch", SETTING_LABELS[k], values[k], ("toggle", k)) for k in keys]
        if s == "settings":
            top.append(_button("Display", ("goto", "display", "")))
    elif s == "contacts":
        top = [_button("Add contact", ("goto", "new contact", ""))]
        rows = [_Element("item", name, None, ("goto", "contact", name)) for name, _ in w.contacts]
    elif s == "contact":
        phone = dict(w.contacts).get(t, "")
        top = [_Element("text", t), _Element("text", phone), _button("Message", ("message", t)),
               _button("Edit", ("goto", "edit contact", t)), _button("Delete", ("delete_contact", t))]
    elif s == "alarms":
        top = [_button("Add alarm", ("goto", "new alarm", ""))]
        rows = [_Element("switch", time, on, ("toggle_alarm", time)) for time, on in w.alarms]
        if w.alarms:
            bottom = [_button("Delete alarms", ("goto", "delete alarms", "")), BACK_BUTTON]
    elif s == "delete alarms":
        rows = [_button(f"Delete {time}", ("delete_alarm", time)) for time, _ in w.alarms]
    elif s == "notes":
        top = [_button("New note", ("goto", "new note", ""))]
        rows = [_Element("item", title, None, ("goto", "note", title)) for title, _ in w.notes]
    elif s == "note":
        top = [_Element("text", t), _Element("text", dict(w.notes).get(t, "")),
               _button("Edit", ("goto", "edit note", t)), _button("Delete", ("delete_note", t))]
    elif s == "conversations":
        top = [_button("New message", ("goto", "choose contact", ""))]
        rows = [_Element("item", name, msgs[-1][1] if msgs else None, ("goto", "chat", name))
                for name, msgs in w.chats]
    elif s == "choose contact":
        rows = [_Element("item", name, None, ("goto", "chat", name)) for name, _ in w.contacts]
    elif s == "chat":
        messages = dict(w.chats).get(t, ())
        top = [_Element("text", f"{'Me' if sender == 'me' else sender}: {text}")
               for sender, text in messages[-CHAT_LINES:]]
        top += [_Element("field", label, value) for label, value in w.fields]
        top.append(_button("Send", ("send",)))
        if messages:
            top.append(_button("Delete chat", ("delete_chat", t)))
    if s in ("new contact", "edit contact", "new alarm", "new note", "edit note"):
        save = {"new contact": "save_contact", "edit contact": "save_contact",
                "new alarm": "save_alarm"}.get(s, "save_note")
        top = [_Element("field", label, value) for label, value in w.fields] + [_button("Save", (save,))]

    header = f"app: {APP_TITLES[w.app]} | screen: {title}"
    if s not in LIST_SCREENS:
        return _Screen(header, top + rows + bottom)
    n_pages = _n_pages(len(rows))
    page = min(w.pages[LIST_SCREENS.index(s)], n_pages - 1)
    if n_pages > 1:
        header += f" | page {page + 1}/{n_pages}"
    visible = rows[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]
    return _Screen(header, top + visible + bottom, s, page, n_pages)


# --------------------------------------------------------------------------- dynamics

def _form_fields(w: World, screen: str, target: str) -> tuple[tuple[str, str], ...]:
    """The fields a screen opens with (edit forms start from the current values)."""
    if screen == "new contact":
        return (("Name", ""), ("Phone", ""))
    if screen == "edit contact":
        return (("Name", target), ("Phone", dict(w.contacts).get(target, "")))
    if screen == "new alarm":
        return (("Hour", ""), ("Minute", "00"))
    if screen == "new note":
        return (("Title", ""), ("Body", ""))
    if screen == "edit note":
        return (("Title", target), ("Body", dict(w.notes).get(target, "")))
    if screen == "chat":
        return (("Message", ""),)
    return ()


def _goto(w: World, screen: str, target: str = "", app: str | None = None) -> World:
    if screen == "home":
        return w._replace(app="home", screen="home", target="", fields=(), pages=NO_PAGES)
    changes: dict[str, Any] = {"screen": screen, "target": target, "fields": _form_fields(w, screen, target)}
    if app is not None and app != w.app:
        changes.update(app=app, pages=NO_PAGES)  # lists start at their first page in a newly opened app
    return w._replace(**changes)


def _open_app(w: World, app: str) -> World:
    return w._replace(app=app, screen=APP_ROOTS[app], target="", fields=(), pages=NO_PAGES)


def _back(w: World) -> World:
    parent = PARENT[w.screen]
    return _goto(w, parent, w.target if parent in ("contact", "note") else "")


def _clamp_pages(w: World) -> World:
    """Keep every list on an existing page after something was deleted."""
    pages = tuple(min(p, _n_pages(_list_length(w, name)) - 1) for p, name in zip(w.pages, LIST_SCREENS))
    return w if pages == w.pages else w._replace(pages=pages)


def _clean_text(text: str) -> str:
    """Typed text: printable characters only (so it stays one screen line), cut to MAX_TEXT."""
    return "".join(ch if ch.isprintable() else " " for ch in text).strip()[:MAX_TEXT]


def _save_contact(w: World) -> World | str:
    fields = dict(w.fields)
    name = fields.get("Name", "").strip()
    phone = re.sub(r"[\s-]", "", fields.get("Phone", ""))
    if not name:
        return "a contact needs a name"
    if not re.fullmatch(r"[0-9]{3,15}", phone):
        return "the phone number must be 3 to 15 digits"
    contacts = dict(w.contacts)
    editing = w.screen == "edit contact"
    if name in contacts and not (editing and name == w.target):
        return f"a contact named {name} already exists"
    if editing:
        contacts.pop(w.target, None)
    contacts[name] = phone
    ordered = tuple(sorted(contacts.items(), key=lambda item: (item[0].lower(), item[0])))
    return w._replace(contacts=ordered, screen="contact", target=name, fields=())


def _save_alarm(w: World) -> World | str:
    fields = dict(w.fields)
    hour, minute = fields.get("Hour", "").strip(), fields.get("Minute", "").strip()
    if not (re.fullmatch(r"[0-9]{1,2}", hour) and re.fullmatch(r"[0-9]{1,2}", minute)
            and int(hour) < 24 and int(minute) < 60):
        return "the hour must be 0-23 and the minute 0-59"
    time = f"{int(hour):02d}:{int(minute):02d}"
    alarms = dict(w.alarms)
    alarms[time] = True  # saving an existing time switches that alarm on
    return w._replace(alarms=tuple(sorted(alarms.items())), screen="alarms", target="", fields=())


def _save_note(w: World) -> World | str:
    fields = dict(w.fields)
    title, body = fields.get("Title", "").strip(), fields.get("Body", "").strip()
    if not title:
        return "a note needs a title"
    editing = w.screen == "edit note"
    titles = [t for t, _ in w.notes]
    if title in titles and not (editing and title == w.target):
        return f"a note titled {title!r} already exists"
    if editing:  # an edited note keeps its place in the list
        notes = tuple((title, body) if t == w.target else (t, b) for t, b in w.notes)
    else:
        notes = ((title, body),) + w.notes
    return w._replace(notes=notes, screen="note", target=title, fields=())


def _send(w: World) -> World | str:
    text = dict(w.fields).get("Message", "").strip()
    if not text:
        return "type a message first"
    old = dict(w.chats).get(w.target, ())
    others = tuple(chat for chat in w.chats if chat[0] != w.target)
    chats = ((w.target, old + (("me", text),)),) + others  # the chat moves to the top
    return w._replace(chats=chats, fields=(("Message", ""),))


def _tap(w: World, tap: tuple) -> World | str:
    """Apply what tapping an element does; a string means the tap is impossible (why)."""
    kind = tap[0]
    if kind == "open_app":
        return _open_app(w, tap[1])
    if kind == "goto":
        return _goto(w, tap[1], tap[2])
    if kind == "back":
        return _back(w)
    if kind == "toggle":
        values = dict(zip(SETTING_KEYS, w.settings))
        values[tap[1]] = not values[tap[1]]
        if tap[1] == "airplane" and values["airplane"]:  # airplane mode switches the radios off
            values["wifi"] = values["bluetooth"] = False
        return w._replace(settings=tuple(values[k] for k in SETTING_KEYS))
    if kind == "toggle_alarm":
        return w._replace(alarms=tuple((t, not on if t == tap[1] else on) for t, on in w.alarms))
    if kind == "delete_alarm":
        return _clamp_pages(w._replace(alarms=tuple(a for a in w.alarms if a[0] != tap[1])))
    if kind == "delete_contact":
        return _clamp_pages(_goto(w._replace(contacts=tuple(c for c in w.contacts if c[0] != tap[1])), "contacts"))
    if kind == "delete_note":
        return _clamp_pages(_goto(w._replace(notes=tuple(n for n in w.notes if n[0] != tap[1])), "notes"))
    if kind == "delete_chat":
        return _clamp_pages(_goto(w._replace(chats=tuple(c for c in w.chats if c[0] != tap[1])), "conversations"))
    if kind == "message":
        return _goto(w, "chat", tap[1], app="messages")
    if kind == "save_contact":
        return _save_contact(w)
    if kind == "save_alarm":
        return _save_alarm(w)
    if kind == "save_note":
        return _save_note(w)
    if kind == "send":
        return _send(w)
    return f"unknown tap effect {kind}"  # unreachable for screens built by _render


def _apply(w: World, screen: _Screen, action: tuple) -> World | str:
    """The world after a parsed action (not finished()), or the reason it is invalid."""
    kind = action[0]
    if kind in ("tap", "type"):
        index = action[1]
        if not 1 <= index <= len(screen.elements):
            return f"there is no element {index} on this screen (ids are 1..{len(screen.elements)})"
        element = screen.elements[index - 1]
        if kind == "tap":
            if element.tap is None:
                hint = "; use type(N, \"text\")" if element.kind == "field" else ""
                return f"element {index} ({element.kind}) cannot be tapped{hint}"
            return _tap(w, element.tap)
        if element.kind != "field":
            return f"element {index} ({element.kind}) is not a text field"
        text = _clean_text(action[2])
        return w._replace(fields=tuple((label, text if label == element.label else value)
                                       for label, value in w.fields))
    if kind == "scroll":
        if screen.list_name is None or screen.n_pages == 1:
            return "nothing to scroll on this screen"
        page = screen.page + (1 if action[1] == "down" else -1)
        if not 0 <= page < screen.n_pages:
            return f"already at the {'bottom' if action[1] == 'down' else 'top'} of the list"
        index = LIST_SCREENS.index(screen.list_name)
        return w._replace(pages=w.pages[:index] + (page,) + w.pages[index + 1:])
    if kind in ("back", "home"):
        if w.screen == "home":
            return "already on the home screen"
        return _back(w) if kind == "back" else _goto(w, "home")
    if kind == "open_app":
        if action[1] not in APPS:
            return f"unknown app {action[1]!r}; apps: {', '.join(APPS)}"
        return _open_app(w, action[1])
    return f"unknown action {kind}"


# --------------------------------------------------------------------------- actions

# Possessive quantifiers keep the match linear: with backtracking ones, the three whitespace runs after the
# parenthesis backtrack against each other on junk such as "tap()" + thousands of spaces + "x".
_ACTION_RE = re.compile(r"^\s*+`?\s*+([A-Za-z_]++)\s*+\((.*)\)\s*+;?\s*+`?\s*+$", re.DOTALL)


def parse_action(action: Any) -> tuple | None:
    """Parse an agent's action leniently: ``("tap", 3)``, ``("type", 2, "Ana")``, ``("scroll", "down")``,
    ``("back",)``, ``("home",)``, ``("open_app", "clock")``, ``("finished",)``; None if unparseable."""
    if not isinstance(action, str):
        return None
    match = _ACTION_RE.match(action)
    if match is None:
        return None
    name, args = match[1].lower(), match[2].strip()
    if name == "tap":
        number = args.strip("\"' ")
        return ("tap", int(number)) if re.fullmatch(r"[0-9]{1,6}", number) else None
    if name == "type":
        parts = re.fullmatch(r"[\"']?([0-9]{1,6})[\"']?\s*,\s*(.*)", args, re.DOTALL)
        if parts is None:
            return None
        text = parts[2].strip()
        if text[:1] in ("'", '"'):
            if len(text) < 2 or text[-1] != text[0]:
                return None  # an opened quote that never closes
            text = text[1:-1]
        return ("type", int(parts[1]), text)
    if name == "scroll":
        direction = args.strip("\"' ").lower()
        return ("scroll", direction) if direction in ("up", "down") else None
    if name in ("back", "home", "finished"):
        return (name,) if not args else None
    if name == "open_app":
        app = args.strip("\"' ").lower()
        return ("open_app", app) if app else None
    return None


def action_type(action: str) -> str:
    """Coarse kind of an action: tap, type, scroll, back, home, open_app, finished or invalid."""
    parsed = parse_action(action)
    return parsed[0] if parsed else "invalid"


def _format_type(index: int, text: str) -> str:
    quote = "'" if '"' in text else '"'
    return f"type({index}, {quote}{text}{quote})"


def _candidate_actions(w: World, screen: _Screen, texts: dict[str, Iterable[str]]) -> list[tuple[str, tuple]]:
    """(action text, parsed action) for every valid-looking action except finished()."""
    out: list[tuple[str, tuple]] = []
    for index, element in enumerate(screen.elements, 1):
        if element.tap is not None:
            out.append((f"tap({index})", ("tap", index)))
        elif element.kind == "field":
            for text in texts.get(element.label, ()):
                if text != element.value:  # typing what is already there changes nothing
                    out.append((_format_type(index, text), ("type", index, text)))
    if screen.page > 0:
        out.append(("scroll(up)", ("scroll", "up")))
    if screen.page < screen.n_pages - 1:
        out.append(("scroll(down)", ("scroll", "down")))
    if w.screen != "home":
        out += [("back()", ("back",)), ("home()", ("home",))]
    out += [(f"open_app({app})", ("open_app", app)) for app in APPS]
    return out


# --------------------------------------------------------------------------- state as data

def _world_to_dict(w: World) -> dict[str, Any]:
    return {
        "settings": dict(zip(SETTING_KEYS, w.settings)),
        "contacts": [{"name": n, "phone": p} for n, p in w.contacts],
        "alarms": [{"time": t, "on": on} for t, on in w.alarms],
        "notes": [{"title": t, "body": b} for t, b in w.notes],
        "chats": [{"contact": c, "messages": [{"from": s, "text": x} for s, x in msgs]} for c, msgs in w.chats],
        "app": w.app, "screen": w.screen, "target": w.target,
        "fields": dict(w.fields),
        "scroll": dict(zip(LIST_SCREENS, w.pages)),
        **({"status_bar": True} if w.status_bar else {}),
    }


def _world_from_dict(d: dict[str, Any]) -> World:
    """Inverse of _world_to_dict (UI parts default to the home screen)."""
    settings = d["settings"]
    scroll = d.get("scroll", {})
    return World(
        settings=tuple(bool(settings.get(k, False)) for k in SETTING_KEYS),
        contacts=tuple((c["name"], c["phone"]) for c in d["contacts"]),
        alarms=tuple((a["time"], bool(a["on"])) for a in d["alarms"]),
        notes=tuple((n["title"], n["body"]) for n in d["notes"]),
        chats=tuple((c["contact"], tuple((m["from"], m["text"]) for m in c["messages"])) for c in d["chats"]),
        app=d.get("app", "home"), screen=d.get("screen", "home"), target=d.get("target", ""),
        fields=tuple(d.get("fields", {}).items()),
        pages=tuple(int(scroll.get(name, 0)) for name in LIST_SCREENS),
        status_bar=bool(d.get("status_bar", False)),
    )


def _facts(w: World) -> dict[str, Any]:
    """The world as flat facts: ``setting:wifi``, ``contact:Ana``, ``alarm:07:00``, ``note:todo``,
    ``chat:Bob`` (a tuple of (sender, text)) and ``ui:app`` / ``ui:screen`` / ``ui:target``."""
    facts: dict[str, Any] = {f"setting:{k}": v for k, v in zip(SETTING_KEYS, w.settings)}
    facts.update((f"contact:{n}", p) for n, p in w.contacts)
    facts.update((f"alarm:{t}", on) for t, on in w.alarms)
    facts.update((f"note:{t}", b) for t, b in w.notes)
    facts.update((f"chat:{c}", msgs) for c, msgs in w.chats)
    facts.update({"ui:app": w.app, "ui:screen": w.screen, "ui:target": w.target})
    return facts


def _freeze(value: Any) -> Any:
    """JSON lists -> tuples, so expected values compare equal to world facts."""
    return tuple(_freeze(v) for v in value) if isinstance(value, (list, tuple)) else value


# --------------------------------------------------------------------------- tasks


@dataclass
class PhoneTask:
    """One task: an instruction, its initial world and what the final world must look like."""

    template: str
    """Template id (one goal structure; see TASK_TEMPLATES)."""
    instruction: str
    params: dict[str, Any]
    """The values filled into the instruction."""
    seed: int
    initial: dict[str, Any] = field(default_factory=dict)
    """App data at the start (the JSON form full_state() uses; the episode starts on the home screen)."""
    expect: dict[str, Any] = field(default_factory=dict)
    """Fact -> required final value (None = must be absent); facts as in ``_facts``."""
    free: list[str] = field(default_factory=list)
    """Facts allowed to change as side effects (every other fact must keep its initial value)."""
    texts: dict[str, list[str]] = field(default_factory=dict)
    """Field label -> texts the task needs typed there (offered by valid_actions)."""
    lookups: list[str] = field(default_factory=list)
    """Texts that must be seen on some screen before valid_actions offers to type them."""
    apps: list[str] = field(default_factory=list)
    """Apps the task involves (the search for a reference solution stays inside them)."""


class _Goal:
    """The goal check of a task, precomputed for speed (search calls it very often)."""

    def __init__(self, task: PhoneTask):
        self.expect = {key: _freeze(value) for key, value in task.expect.items()}
        self.has_ui = any(key.startswith("ui:") for key in self.expect)
        exact = {k for k in task.free if not k.endswith("*")} | set(self.expect)
        prefixes = tuple(k[:-1] for k in task.free if k.endswith("*"))
        self.in_scope = lambda key: key.startswith("ui:") or key in exact or key.startswith(prefixes)
        initial = _facts(_world_from_dict(task.initial))
        self.fixed = {k: v for k, v in initial.items() if not self.in_scope(k)}

    def scope_ok(self, facts: dict[str, Any]) -> bool:
        """Nothing outside the task's scope changed (no fact lost, altered or added)."""
        if any(facts.get(k, _MISSING) != v for k, v in self.fixed.items()):
            return False
        return all(k in self.fixed or self.in_scope(k) for k in facts)

    def satisfied(self, w: World) -> bool:
        facts = _facts(w)
        return all(facts.get(k) == v for k, v in self.expect.items()) and self.scope_ok(facts)


_MISSING = object()


def _check_expectations(task: PhoneTask, w: World) -> bool:
    """The goal check every template uses: its expected facts hold, nothing else changed."""
    return _Goal(task).satisfied(w)


def judge_success(task: PhoneTask, full_state: dict[str, Any]) -> bool:
    """The goal check: the expected facts hold and nothing outside the task's scope changed."""
    try:
        world = _world_from_dict(full_state)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return GOAL_CHECKS.get(task.template, _check_expectations)(task, world)


class _Draft:
    """Mutable app data while a task template prepares its initial world."""

    def __init__(self, seed: int, rng: random.Random):
        world_rng = random.Random(seed)  # the base world depends on the seed only
        self.rng = rng
        self.settings = {k: world_rng.random() < 0.5 for k in SETTING_KEYS}
        self.settings["airplane"] = world_rng.random() < 0.1
        if self.settings["airplane"]:
            self.settings["wifi"] = self.settings["bluetooth"] = False
        names = world_rng.sample(NAMES, world_rng.randint(4, 7))
        phones = world_rng.sample(range(1000, 10000), len(names))
        self.contacts = {name: f"555{p}" for name, p in zip(names, phones)}
        times = world_rng.sample([f"{h:02d}:{m}" for h in ALARM_HOURS for m in ("00", "15", "30", "45")],
                                 world_rng.randint(2, 4))
        self.alarms = {t: world_rng.random() < 0.6 for t in times}
        self.notes = {t: world_rng.choice(NOTE_BODIES) for t in world_rng.sample(NOTE_TITLES, world_rng.randint(2, 5))}
        self.chats: dict[str, list[list[str]]] = {}
        for name in world_rng.sample(names, world_rng.randint(1, 3)):
            texts = world_rng.sample(MESSAGE_TEXTS, world_rng.randint(1, 3))
            self.chats[name] = [[name if i % 2 == 0 else "me", text] for i, text in enumerate(texts)]

    def to_dict(self) -> dict[str, Any]:
        return _world_to_dict(World(
            settings=tuple(self.settings[k] for k in SETTING_KEYS),
            contacts=tuple(sorted(self.contacts.items(), key=lambda item: (item[0].lower(), item[0]))),
            alarms=tuple(sorted(self.alarms.items())),
            notes=tuple(self.notes.items()),
            chats=tuple((c, tuple(map(tuple, msgs))) for c, msgs in self.chats.items())))

    # Helpers that pick (or create) what a template needs, keeping the world consistent.
    def contact(self, exclude: Sequence[str] = ()) -> str:
        return self.rng.choice(sorted(n for n in self.contacts if n not in exclude))

    def new_name(self) -> str:
        name = self.rng.choice([n for n in NAMES if n not in self.contacts])
        self.chats.pop(name, None)
        return name

    def new_phone(self) -> str:
        used = set(self.contacts.values())
        return self.rng.choice([p for p in (f"555{n}" for n in range(1000, 10000, 7)) if p not in used])

    def chat_contact(self, exclude: Sequence[str] = ()) -> str:
        names = [c for c in self.chats if c in self.contacts and c not in exclude]
        if names:
            return self.rng.choice(names)
        name = self.contact(exclude=list(exclude) + list(self.chats))
        self.chats[name] = [[name, self.rng.choice(MESSAGE_TEXTS)]]
        return name

    def alarm(self, on: bool | None = None, exclude: Sequence[str] = ()) -> str:
        times = [t for t in self.alarms if t not in exclude]
        time = self.rng.choice(sorted(times)) if times else self.new_time()
        self.alarms[time] = self.alarms.get(time, True) if on is None else on
        return time

    def new_time(self, minutes: Sequence[str] = ("00",)) -> str:
        return self.rng.choice([f"{h:02d}:{m}" for h in ALARM_HOURS for m in minutes
                                if f"{h:02d}:{m}" not in self.alarms])

    def note(self, exclude: Sequence[str] = ()) -> str:
        return self.rng.choice(sorted(t for t in self.notes if t not in exclude))

    def new_title(self) -> str:
        return self.rng.choice([t for t in NOTE_TITLES if t not in self.notes])

    def message(self, exclude: Sequence[str] = ()) -> str:
        return self.rng.choice([m for m in MESSAGE_TEXTS if m not in exclude])

    def chat_after(self, name: str, *texts: str) -> list[list[str]]:
        return [list(m) for m in self.chats.get(name, [])] + [["me", t] for t in texts]


_TEMPLATES: dict[str, tuple[Callable[[_Draft], dict[str, Any]], tuple[str, ...]]] = {}


def _template(name: str, *apps: str):
    def register(build: Callable[[_Draft], dict[str, Any]]):
        _TEMPLATES[name] = (build, apps)
        return build
    return register


def _spec(instruction: str, expect: dict[str, Any], texts: dict[str, list[str]] | None = None,
          lookups: Sequence[str] = (), free: Sequence[str] = (), **params: Any) -> dict[str, Any]:
    return {"instruction": instruction, "expect": expect, "texts": texts or {}, "lookups": list(lookups),
            "free": list(free), "params": params}


def _say(time: str) -> str:
    """'07:30' -> '7:30', as a person writes it."""
    return f"{int(time[:2])}:{time[3:]}"


def _time_texts(time: str) -> dict[str, list[str]]:
    texts = {"Hour": [str(int(time[:2]))]}
    if time[3:] != "00":  # the Minute field starts at 00
        texts["Minute"] = [time[3:]]
    return texts


def _label(key: str) -> str:
    return SETTING_LABELS[key]


# ---- Settings
@_template("setting_on", "settings")
def _setting_on(d: _Draft):
    key = d.rng.choice(PLAIN_SETTINGS)
    d.settings.update({key: False, "airplane": False})
    return _spec(f"Turn on {_label(key)}", {f"setting:{key}": True}, setting=_label(key))


@_template("setting_off", "settings")
def _setting_off(d: _Draft):
    key = d.rng.choice(PLAIN_SETTINGS)
    d.settings.update({key: True, "airplane": False})
    return _spec(f"Turn off {_label(key)}", {f"setting:{key}": False}, setting=_label(key))


@_template("display_setting_on", "settings")
def _display_setting_on(d: _Draft):
    key = d.rng.choice(DISPLAY_SETTINGS)
    d.settings[key] = False
    return _spec(f"Turn on {_label(key)}", {f"setting:{key}": True}, setting=_label(key))


@_template("display_setting_off", "settings")
def _display_setting_off(d: _Draft):
    key = d.rng.choice(DISPLAY_SETTINGS)
    d.settings[key] = True
    return _spec(f"Turn off {_label(key)}", {f"setting:{key}": False}, setting=_label(key))


@_template("airplane_on", "settings")
def _airplane_on(d: _Draft):
    d.settings["airplane"] = False
    return _spec("Turn on airplane mode", {"setting:airplane": True},
                 free=["setting:wifi", "setting:bluetooth"])


@_template("airplane_off", "settings")
def _airplane_off(d: _Draft):
    d.settings.update(airplane=True, wifi=False, bluetooth=False)
    return _spec("Turn off airplane mode", {"setting:airplane": False})


@_template("airplane_keep_wifi", "settings")
def _airplane_keep_wifi(d: _Draft):
    d.settings.update(airplane=False, wifi=True)
    return _spec("Turn on airplane mode but keep Wi-Fi on", {"setting:airplane": True, "setting:wifi": True},
                 free=["setting:bluetooth"])


@_template("airplane_off_wifi_on", "settings")
def _airplane_off_wifi_on(d: _Draft):
    d.settings.update(airplane=True, wifi=False, bluetooth=False)
    return _spec("Turn off airplane mode and turn on Wi-Fi", {"setting:airplane": False, "setting:wifi": True})


@_template("two_settings_on", "settings")
def _two_settings_on(d: _Draft):
    a, b = d.rng.sample(PLAIN_SETTINGS, 2)
    d.settings.update({a: False, b: False, "airplane": False})
    return _spec(f"Turn on {_label(a)} and {_label(b)}", {f"setting:{a}": True, f"setting:{b}": True},
                 settings=[_label(a), _label(b)])


@_template("two_settings_off", "settings")
def _two_settings_off(d: _Draft):
    a, b = d.rng.sample(PLAIN_SETTINGS, 2)
    d.settings.update({a: True, b: True, "airplane": False})
    return _spec(f"Turn off {_label(a)} and {_label(b)}", {f"setting:{a}": False, f"setting:{b}": False},
                 settings=[_label(a), _label(b)])


@_template("three_settings_off", "settings")
def _three_settings_off(d: _Draft):
    keys = d.rng.sample(PLAIN_SETTINGS, 3)
    d.settings.update({k: True for k in keys}, airplane=False)
    labels = [_label(k) for k in keys]
    return _spec(f"Turn off {labels[0]}, {labels[1]} and {labels[2]}", {f"setting:{k}": False for k in keys},
                 settings=labels)


@_template("setting_on_display_off", "settings")
def _setting_on_display_off(d: _Draft):
    a, b = d.rng.choice(PLAIN_SETTINGS), d.rng.choice(DISPLAY_SETTINGS)
    d.settings.update({a: False, b: True, "airplane": False})
    return _spec(f"Turn on {_label(a)} and turn off {_label(b)}", {f"setting:{a}": True, f"setting:{b}": False},
                 settings=[_label(a), _label(b)])


@_template("display_two_on", "settings")
def _display_two_on(d: _Draft):
    a, b = d.rng.sample(DISPLAY_SETTINGS, 2)
    d.settings.update({a: False, b: False})
    return _spec(f"Turn on {_label(a)} and {_label(b)}", {f"setting:{a}": True, f"setting:{b}": True},
                 settings=[_label(a), _label(b)])


@_template("setting_flip", "settings")
def _setting_flip(d: _Draft):
    key = d.rng.choice(PLAIN_SETTINGS + DISPLAY_SETTINGS)
    d.settings["airplane"] = False
    return _spec(f"Switch {_label(key)} to the opposite of its current setting",
                 {f"setting:{key}": not d.settings[key]}, setting=_label(key))


@_template("setting_match", "settings")
def _setting_match(d: _Draft):
    a, b = d.rng.sample(PLAIN_SETTINGS, 2)
    d.settings.update({b: not d.settings[a], "airplane": False})
    return _spec(f"Set {_label(b)} to the same state as {_label(a)}", {f"setting:{b}": d.settings[a]},
                 setting=_label(b), reference=_label(a))


@_template("open_display_settings", "settings")
def _open_display_settings(d: _Draft):
    return _spec("Open the Display settings", {"ui:app": "settings", "ui:screen": "display"})


# ---- Contacts
@_template("add_contact", "contacts")
def _add_contact(d: _Draft):
    name, phone = d.new_name(), d.new_phone()
    return _spec(f"Add a contact named {name} with number {phone}", {f"contact:{name}": phone},
                 {"Name": [name], "Phone": [phone]}, name=name, phone=phone)


@_template("delete_contact", "contacts")
def _delete_contact(d: _Draft):
    name = d.contact()
    return _spec(f"Delete the contact {name}", {f"contact:{name}": None}, name=name)


@_template("change_number", "contacts")
def _change_number(d: _Draft):
    name, phone = d.contact(), d.new_phone()
    return _spec(f"Change {name}'s number to {phone}", {f"contact:{name}": phone}, {"Phone": [phone]},
                 name=name, phone=phone)


@_template("rename_contact", "contacts")
def _rename_contact(d: _Draft):
    old = d.contact()
    new = d.new_name()
    return _spec(f"Rename the contact {old} to {new}", {f"contact:{old}": None, f"contact:{new}": d.contacts[old]},
                 {"Name": [new]}, name=old, new_name=new)


@_template("copy_number", "contacts")
def _copy_number(d: _Draft):
    source = d.contact()
    name, phone = d.new_name(), d.contacts[source]
    return _spec(f"Add a contact named {name} with the same number as {source}", {f"contact:{name}": phone},
                 {"Name": [name], "Phone": [phone]}, lookups=[phone], name=name, source=source)


@_template("delete_two_contacts", "contacts")
def _delete_two_contacts(d: _Draft):
    a, b = d.rng.sample(sorted(d.contacts), 2)
    return _spec(f"Delete the contacts {a} and {b}", {f"contact:{a}": None, f"contact:{b}": None}, names=[a, b])


@_template("add_and_delete_contact", "contacts")
def _add_and_delete_contact(d: _Draft):
    old = d.contact()
    name, phone = d.new_name(), d.new_phone()
    return _spec(f"Add a contact named {name} with number {phone} and delete {old}",
                 {f"contact:{name}": phone, f"contact:{old}": None}, {"Name": [name], "Phone": [phone]},
                 name=name, phone=phone, old=old)


@_template("open_contact", "contacts")
def _open_contact(d: _Draft):
    name = d.contact()
    return _spec(f"Open {name}'s contact page", {"ui:app": "contacts", "ui:screen": "contact", "ui:target": name},
                 name=name)


# ---- Clock
@_template("add_alarm", "clock")
def _add_alarm(d: _Draft):
    time = d.new_time()
    return _spec(f"Set an alarm for {_say(time)}", {f"alarm:{time}": True}, _time_texts(time), time=_say(time))


@_template("add_alarm_minutes", "clock")
def _add_alarm_minutes(d: _Draft):
    time = d.new_time(("15", "30", "45"))
    return _spec(f"Set an alarm for {_say(time)}", {f"alarm:{time}": True}, _time_texts(time), time=_say(time))


@_template("alarm_off", "clock")
def _alarm_off(d: _Draft):
    time = d.alarm(on=True)
    return _spec(f"Turn off the {_say(time)} alarm", {f"alarm:{time}": False}, time=_say(time))


@_template("alarm_on", "clock")
def _alarm_on(d: _Draft):
    time = d.alarm(on=False)
    return _spec(f"Turn on the {_say(time)} alarm", {f"alarm:{time}": True}, time=_say(time))


@_template("delete_alarm", "clock")
def _delete_alarm(d: _Draft):
    time = d.alarm()
    return _spec(f"Delete the {_say(time)} alarm", {f"alarm:{time}": None}, time=_say(time))


@_template("add_alarm_off", "clock")
def _add_alarm_off(d: _Draft):
    time = d.new_time(("00", "30"))
    return _spec(f"Add an alarm for {_say(time)} and leave it switched off", {f"alarm:{time}": False},
                 _time_texts(time), time=_say(time))


@_template("all_alarms_off", "clock")
def _all_alarms_off(d: _Draft):
    first = d.alarm(on=True)
    d.alarm(on=True, exclude=[first])
    return _spec("Turn off all alarms", {f"alarm:{t}": False for t in d.alarms})


@_template("replace_alarm", "clock")
def _replace_alarm(d: _Draft):
    old = d.alarm()
    new = d.new_time(("00", "30"))
    return _spec(f"Replace the {_say(old)} alarm with one at {_say(new)}", {f"alarm:{old}": None, f"alarm:{new}": True},
                 _time_texts(new), old=_say(old), new=_say(new))


@_template("alarm_swap", "clock")
def _alarm_swap(d: _Draft):
    a = d.alarm(on=True)
    b = d.alarm(on=False, exclude=[a])
    return _spec(f"Turn off the {_say(a)} alarm and turn on the {_say(b)} alarm",
                 {f"alarm:{a}": False, f"alarm:{b}": True}, off=_say(a), on=_say(b))


@_template("earliest_alarm_on", "clock")
def _earliest_alarm_on(d: _Draft):
    d.alarm()  # at least one alarm
    earliest = min(d.alarms)
    d.alarms[earliest] = False
    return _spec("Turn on the earliest alarm", {f"alarm:{earliest}": True})


@_template("delete_off_alarms", "clock")
def _delete_off_alarms(d: _Draft):
    kept = d.alarm(on=True)
    d.alarm(on=False, exclude=[kept])
    return _spec("Delete every alarm that is switched off", {f"alarm:{t}": None for t, on in d.alarms.items() if not on})


# ---- Notes
@_template("new_note", "notes")
def _new_note(d: _Draft):
    title, body = d.new_title(), d.rng.choice(NOTE_BODIES)
    return _spec(f"Create a note titled '{title}' with the text '{body}'", {f"note:{title}": body},
                 {"Title": [title], "Body": [body]}, title=title, body=body)


@_template("new_empty_note", "notes")
def _new_empty_note(d: _Draft):
    title = d.new_title()
    return _spec(f"Create an empty note titled '{title}'", {f"note:{title}": ""}, {"Title": [title]}, title=title)


@_template("delete_note", "notes")
def _delete_note(d: _Draft):
    title = d.note()
    return _spec(f"Delete the note '{title}'", {f"note:{title}": None}, title=title)


@_template("edit_note_body", "notes")
def _edit_note_body(d: _Draft):
    title = d.note()
    body = d.rng.choice([b for b in NOTE_BODIES if b != d.notes[title]])
    return _spec(f"Change the text of the note '{title}' to '{body}'", {f"note:{title}": body}, {"Body": [body]},
                 title=title, body=body)


@_template("rename_note", "notes")
def _rename_note(d: _Draft):
    old, new = d.note(), d.new_title()
    return _spec(f"Rename the note '{old}' to '{new}'", {f"note:{old}": None, f"note:{new}": d.notes[old]},
                 {"Title": [new]}, title=old, new_title=new)


@_template("copy_note", "notes")
def _copy_note(d: _Draft):
    source, title = d.note(), d.new_title()
    body = d.notes[source]
    return _spec(f"Create a note titled '{title}' with the same text as the note '{source}'", {f"note:{title}": body},
                 {"Title": [title], "Body": [body]}, lookups=[body], title=title, source=source)


@_template("delete_two_notes", "notes")
def _delete_two_notes(d: _Draft):
    a, b = d.rng.sample(sorted(d.notes), 2)
    return _spec(f"Delete the notes '{a}' and '{b}'", {f"note:{a}": None, f"note:{b}": None}, titles=[a, b])


@_template("open_note", "notes")
def _open_note(d: _Draft):
    title = d.note()
    return _spec(f"Open the note '{title}'", {"ui:app": "notes", "ui:screen": "note", "ui:target": title}, title=title)


@_template("note_contact_number", "contacts", "notes")
def _note_contact_number(d: _Draft):
    name, title = d.contact(), d.new_title()
    phone = d.contacts[name]
    return _spec(f"Save {name}'s phone number in a new note titled '{title}'", {f"note:{title}": phone},
                 {"Title": [title], "Body": [phone]}, lookups=[phone], name=name, title=title)


# ---- Messages
@_template("send_message", "messages")
def _send_message(d: _Draft):
    name, text = d.chat_contact(), d.message()
    return _spec(f"Send '{text}' to {name}", {f"chat:{name}": d.chat_after(name, text)}, {"Message": [text]},
                 name=name, text=text)


@_template("start_chat", "messages")
def _start_chat(d: _Draft):
    name, text = d.contact(exclude=list(d.chats)), d.message()
    return _spec(f"Start a conversation with {name} and send '{text}'", {f"chat:{name}": [["me", text]]},
                 {"Message": [text]}, name=name, text=text)


@_template("send_two_messages", "messages")
def _send_two_messages(d: _Draft):
    name, first = d.chat_contact(), d.message()
    second = d.message(exclude=[first])
    return _spec(f"Send '{first}' and then '{second}' to {name}", {f"chat:{name}": d.chat_after(name, first, second)},
                 {"Message": [first, second]}, name=name, messages=[first, second])


@_template("send_to_two", "messages")
def _send_to_two(d: _Draft):
    a = d.chat_contact()
    b = d.chat_contact(exclude=[a])
    text = d.message()
    return _spec(f"Send '{text}' to both {a} and {b}",
                 {f"chat:{a}": d.chat_after(a, text), f"chat:{b}": d.chat_after(b, text)}, {"Message": [text]},
                 names=[a, b], text=text)


@_template("reply_latest", "messages")
def _reply_latest(d: _Draft):
    d.chat_contact()  # at least one conversation
    name, text = next(iter(d.chats)), d.message()
    return _spec(f"Reply '{text}' to the most recent conversation", {f"chat:{name}": d.chat_after(name, text)},
                 {"Message": [text]}, text=text)


@_template("delete_chat", "messages")
def _delete_chat(d: _Draft):
    name = d.chat_contact()
    return _spec(f"Delete the conversation with {name}", {f"chat:{name}": None}, name=name)


@_template("open_chat", "messages")
def _open_chat(d: _Draft):
    name = d.chat_contact()
    return _spec(f"Open the conversation with {name}", {"ui:app": "messages", "ui:screen": "chat", "ui:target": name},
                 name=name)


@_template("share_number", "contacts", "messages")
def _share_number(d: _Draft):
    receiver = d.chat_contact()
    name = d.contact(exclude=[receiver])
    phone = d.contacts[name]
    return _spec(f"Send {name}'s phone number to {receiver}", {f"chat:{receiver}": d.chat_after(receiver, phone)},
                 {"Message": [phone]}, lookups=[phone], name=name, receiver=receiver)


@_template("share_note", "notes", "messages")
def _share_note(d: _Draft):
    receiver, title = d.chat_contact(), d.note()
    body = d.notes[title]
    return _spec(f"Send the text of the note '{title}' to {receiver}", {f"chat:{receiver}": d.chat_after(receiver, body)},
                 {"Message": [body]}, lookups=[body], title=title, receiver=receiver)


# ---- Across apps
@_template("add_contact_and_message", "contacts", "messages")
def _add_contact_and_message(d: _Draft):
    name, phone, text = d.new_name(), d.new_phone(), d.message()
    return _spec(f"Add a contact named {name} with number {phone}, then send them '{text}'",
                 {f"contact:{name}": phone, f"chat:{name}": [["me", text]]},
                 {"Name": [name], "Phone": [phone], "Message": [text]}, name=name, phone=phone, text=text)


@_template("dnd_and_alarm", "settings", "clock")
def _dnd_and_alarm(d: _Draft):
    d.settings["dnd"] = False
    time = d.new_time()
    return _spec(f"Turn on Do not disturb and set an alarm for {_say(time)}",
                 {"setting:dnd": True, f"alarm:{time}": True}, _time_texts(time), time=_say(time))


@_template("dark_mode_and_note", "settings", "notes")
def _dark_mode_and_note(d: _Draft):
    d.settings["dark_mode"] = False
    title, body = d.new_title(), d.rng.choice(NOTE_BODIES)
    return _spec(f"Turn on Dark mode and create a note titled '{title}' with the text '{body}'",
                 {"setting:dark_mode": True, f"note:{title}": body}, {"Title": [title], "Body": [body]},
                 title=title, body=body)


@_template("delete_contact_and_chat", "contacts", "messages")
def _delete_contact_and_chat(d: _Draft):
    name = d.chat_contact()
    return _spec(f"Delete {name} from your contacts and delete your conversation with {name}",
                 {f"contact:{name}": None, f"chat:{name}": None}, name=name)


@_template("alarm_and_message", "clock", "messages")
def _alarm_and_message(d: _Draft):
    time, name, text = d.new_time(), d.chat_contact(), d.message()
    return _spec(f"Set an alarm for {_say(time)} and send '{text}' to {name}",
                 {f"alarm:{time}": True, f"chat:{name}": d.chat_after(name, text)},
                 {**_time_texts(time), "Message": [text]}, time=_say(time), name=name, text=text)


TASK_TEMPLATES: list[str] = list(_TEMPLATES)
"""Ids of all task templates (each a distinct goal structure)."""

GOAL_CHECKS: dict[str, Callable[[PhoneTask, World], bool]] = {t: _check_expectations for t in TASK_TEMPLATES}
"""Template id -> pure goal check on the final world. All templates state their goal as expected
facts, so they share one check; a goal that facts cannot express would get its own function here."""


def make_task(template: str, seed: int) -> PhoneTask:
    """The task of `template` on the world drawn from `seed` (deterministic)."""
    if template not in _TEMPLATES:
        raise ValueError(f"Unknown phone task template {template!r}")
    build, apps = _TEMPLATES[template]
    draft = _Draft(seed, random.Random(f"{template}:{seed}"))
    spec = build(draft)
    return PhoneTask(template=template, instruction=spec["instruction"], params=spec["params"], seed=seed,
                     initial=draft.to_dict(), expect=spec["expect"], free=spec["free"], texts=spec["texts"],
                     lookups=spec["lookups"], apps=list(apps))


def with_status_bar(task: PhoneTask) -> PhoneTask:
    """The same task on a phone whose screens all show a status bar of the toggles' values (the
    world, the goal and the reference solution are unchanged; only what the screens show differs)."""
    return replace(task, initial={**task.initial, "status_bar": True})


def _without_status_bar(task: PhoneTask) -> PhoneTask:
    return replace(task, initial={k: v for k, v in task.initial.items() if k != "status_bar"})


def sample_tasks(n: int, seed: int, templates: Sequence[str] | None = None) -> list[PhoneTask]:
    """`n` tasks with templates and world seeds drawn from `random.Random(seed)`."""
    rng = random.Random(seed)
    pool = list(templates) if templates else TASK_TEMPLATES
    return [make_task(rng.choice(pool), rng.randrange(2**31)) for _ in range(n)]


def split_templates(seed: int = 0, held_out_fraction: float = 0.2) -> tuple[list[str], list[str]]:
    """(train templates, held-out templates): held-out tasks have goal structures never seen in training."""
    shuffled = list(TASK_TEMPLATES)
    random.Random(seed).shuffle(shuffled)
    n_test = min(len(shuffled) - 1, max(1, round(held_out_fraction * len(shuffled))))
    test = set(shuffled[:n_test])
    return [t for t in TASK_TEMPLATES if t not in test], [t for t in TASK_TEMPLATES if t in test]


# --------------------------------------------------------------------------- environment


def _visible_lookups(task: PhoneTask, screen: _Screen) -> frozenset[str]:
    """Lookup texts shown on this screen (once seen, the agent may type them)."""
    if not task.lookups:
        return frozenset()
    shown = [e.label for e in screen.elements] + [e.value for e in screen.elements if isinstance(e.value, str)]
    return frozenset(t for t in task.lookups if any(t in s for s in shown))


def _typeable_texts(task: PhoneTask, seen: frozenset[str]) -> dict[str, list[str]]:
    hidden = set(task.lookups) - seen
    return {label: [t for t in texts if t not in hidden] for label, texts in task.texts.items()}


class PhoneEnv:
    """The phone simulator: reset to a task, step with action strings, read the screen."""

    name = "phone"

    def __init__(self, max_steps: int = 20):
        self.max_steps = max_steps
        self.task: PhoneTask | None = None
        self.steps = 0
        self.done = False
        self._world: World | None = None
        self._screen_cache: tuple[World, _Screen] | None = None
        self._seen: frozenset[str] = frozenset()

    def reset(self, seed: int | None = None, task: PhoneTask | None = None) -> str:
        """Start an episode on the home screen and return it. With a task, its initial world is
        loaded (`seed` is then ignored); without one, a task is sampled from `seed` (default 0)."""
        if task is None:
            task = sample_tasks(1, 0 if seed is None else seed)[0]
        self.task = task
        self._world = _world_from_dict(task.initial)._replace(app="home", screen="home", target="",
                                                              fields=(), pages=NO_PAGES)
        self.steps, self.done = 0, False
        self._seen = _visible_lookups(task, self._screen())
        return self.observation()

    def _require_reset(self) -> World:
        if self._world is None:
            raise RuntimeError("call reset() before using the phone")
        return self._world

    def _screen(self) -> _Screen:
        world = self._require_reset()
        if self._screen_cache is None or self._screen_cache[0] is not world:
            self._screen_cache = (world, _render(world))
        return self._screen_cache[1]

    def observation(self) -> str:
        """The current screen as text."""
        return self._screen().text()

    def step(self, action: str) -> StepResult:
        """Apply one action. Invalid actions change nothing but the step count; never raises."""
        if self.done:
            return StepResult(self.observation(), 0.0, True, {"valid": False, "message": "the episode is over"})
        self.steps += 1
        parsed = parse_action(action)
        valid, reward, done = True, 0.0, False
        if parsed is None:
            valid = False
            message = ('could not parse the action; use tap(N), type(N, "text"), scroll(up|down), back(), home(), '
                       "open_app(name) or finished()")
        elif parsed[0] == "finished":
            done = True
            reward = 1.0 if self.is_success() else 0.0
            message = "task complete" if reward else "finished, but the task is not done"
        else:
            result = _apply(self._world, self._screen(), parsed)
            if isinstance(result, str):
                valid, message = False, result
            else:
                self._world, message = result, "ok"
                self._seen |= _visible_lookups(self.task, self._screen())
        if self.steps >= self.max_steps and not done:
            done, message = True, message + " (step limit reached)"
        self.done = done
        info = {"valid": valid, "message": message, "steps": self.steps, "success": self.is_success()}
        return StepResult(self.observation(), reward, done, info)

    def full_state(self) -> dict[str, Any]:
        """Everything, JSON-serialisable: app data, current app/screen/target, fields, scroll, steps."""
        return {**_world_to_dict(self._require_reset()), "steps": self.steps, "done": self.done}

    def valid_actions(self) -> list[str]:
        """Taps on tappable ids, type(N, text) with the task's texts, possible scrolls, back/home,
        open_app for every app and finished()."""
        world, screen = self._require_reset(), self._screen()
        texts = _typeable_texts(self.task, self._seen)
        return [text for text, _ in _candidate_actions(world, screen, texts)] + ["finished()"]

    def is_success(self) -> bool:
        """Whether the task's goal holds now."""
        return GOAL_CHECKS.get(self.task.template, _check_expectations)(self.task, self._require_reset())

    def clone(self) -> PhoneEnv:
        """An independent copy (the world is immutable, so this is cheap)."""
        other = PhoneEnv(self.max_steps)
        other.task, other.steps, other.done = self.task, self.steps, self.done
        other._world, other._seen, other._screen_cache = self._world, self._seen, self._screen_cache
        return other


def state_text(env: PhoneEnv) -> str:
    """What a world model sees: the current screen."""
    return env.observation()


# --------------------------------------------------------------------------- reference solutions

MAX_PLAN_DEPTH = 14
MAX_PLAN_NODES = 200_000


def _search(task: PhoneTask, start: World, seen: frozenset[str] = frozenset()) -> list[str] | None:
    """Shortest action list from `start` to the goal (ending with finished()), or None.

    Breadth-first over the valid actions; states are the immutable World (plus which lookup texts
    were seen), equivalent to hashing the canonical full_state. Two prunings keep it fast: it
    never keeps a state that changed a fact outside the task's scope (the goal check rejects
    those, and undoing the change only costs actions), and it stays inside the task's apps (no
    template needs another; tests compare with an unpruned search).
    """
    goal = _Goal(task)
    if goal.satisfied(start):
        return ["finished()"]
    allowed_apps = set(task.apps) | {"home"}
    parents: dict[tuple[World, frozenset[str]], tuple | None] = {(start, seen): None}
    frontier = [(start, seen)]
    for _ in range(MAX_PLAN_DEPTH):
        next_frontier = []
        for node in frontier:
            world, known = node
            screen = _render(world)
            known = known | _visible_lookups(task, screen)
            for text, action in _candidate_actions(world, screen, _typeable_texts(task, known)):
                result = _apply(world, screen, action)
                if isinstance(result, str) or result.app not in allowed_apps:
                    continue
                child = (result, known)
                if child in parents:
                    continue
                data_changed = any(getattr(result, f) is not getattr(world, f) for f in DATA_FIELDS)
                if data_changed and not goal.scope_ok(_facts(result)):
                    continue
                parents[child] = (node, text)
                if (data_changed or goal.has_ui) and goal.satisfied(result):
                    path = ["finished()"]
                    while parents[child] is not None:
                        child, step = parents[child]
                        path.append(step)
                    return path[::-1]
                next_frontier.append(child)
                if len(parents) > MAX_PLAN_NODES:
                    return None
        frontier = next_frontier
    return None


@lru_cache(maxsize=4096)
def _cached_reference(template: str, seed: int) -> tuple[str, ...]:
    return tuple(_verified_reference(make_task(template, seed)))


def _verified_reference(task: PhoneTask) -> list[str]:
    env = PhoneEnv(max_steps=MAX_PLAN_DEPTH + 1)
    env.reset(task=task)
    plan = _search(task, env._world, env._seen)
    if plan is None:
        raise RuntimeError(f"no solution found for phone task {task.template}/{task.seed}: {task.instruction}")
    results = [env.step(action) for action in plan]  # replay through the public interface
    if not (all(r.info["valid"] for r in results) and results[-1].done and results[-1].reward == 1.0):
        raise RuntimeError(f"reference solution of {task.template}/{task.seed} failed on replay: {plan}")
    return plan


def reference_solution(task: PhoneTask) -> list[str]:
    """A shortest action sequence that reaches the task's goal, ending with finished() (verified by replay)."""
    # the status bar changes what the screens show, never the dynamics: the same plan solves both
    if _without_status_bar(task) == make_task(task.template, task.seed):
        return list(_cached_reference(task.template, task.seed))
    return _verified_reference(task)


# --------------------------------------------------------------------------- screen diffs

_ELEMENT_RE = re.compile(r'^\[([0-9]+)\] (\S+) ("(?:[^"\\]|\\.)*")(.*)$')
SECTION_NAMES = ("New items:", "Deleted items:", "Updated items:")


def _line_key(line: str) -> str:
    """An item's identity: 'header', '[id] kind "label"' for elements, the line itself otherwise."""
    if line.startswith("app:"):
        return "header"
    if line.startswith(STATUS_PREFIX):
        return "status"
    match = _ELEMENT_RE.match(line)
    return f"[{match[1]}] {match[2]} {match[3]}" if match else line


def _screen_items(screen: str) -> dict[str, str]:
    items: dict[str, str] = {}
    for line in screen.split("\n"):
        line = line.strip()
        if line:
            items[_line_key(line)] = line
    return items


def compute_diff(before: str, after: str) -> str:
    """The screen diff from `before` to `after` (New / Deleted / Updated items, ``None`` when empty)."""
    old, new = _screen_items(before), _screen_items(after)
    sections = (
        [line for key, line in new.items() if key not in old],
        [line for key, line in old.items() if key not in new],
        [line for key, line in new.items() if key in old and old[key] != line],
    )
    out: list[str] = []
    for name, lines in zip(SECTION_NAMES, sections):
        out.append(name)
        out.extend(lines or ["None"])
    return "\n".join(out)


def _parse_diff(diff: Any) -> tuple[list[str], list[str], list[str]] | None:
    """(new, deleted, updated) item lines, or None without all three section headers in order.
    Text before the first header is ignored (a model may reason first)."""
    if not isinstance(diff, str):
        return None
    sections: list[list[str]] = []
    for raw in diff.split("\n"):
        line = raw.strip()
        if len(sections) < 3 and line == SECTION_NAMES[len(sections)]:
            sections.append([])
        elif line in SECTION_NAMES:
            return None  # a header repeated or out of order
        elif sections and line and line != "None":
            sections[-1].append(line)
    return (sections[0], sections[1], sections[2]) if len(sections) == 3 else None


def apply_diff(before: str, diff: str) -> str | None:
    """The next screen: `before` with the diff applied (header first, then elements by id).
    None when the diff does not parse. Never raises."""
    if not isinstance(before, str):
        return None
    parsed = _parse_diff(diff)
    if parsed is None:
        return None
    new, deleted, updated = parsed
    items = _screen_items(before)
    for line in deleted:
        items.pop(_line_key(line), None)
    for line in updated + new:
        items[_line_key(line)] = line

    def order(entry: tuple[int, str]) -> tuple[int, int, str, int]:
        position, key = entry
        if key in ("header", "status"):  # the status bar's line comes right after the header
            return (0, key == "status", "", position)
        match = _ELEMENT_RE.match(items[key])
        if not match:
            return (2, 0, "", position)
        # Numeric order without int(): a model may write an id of thousands of digits, which
        # int() refuses (and would convert in quadratic time); length then digits is the same order.
        digits = match[1].lstrip("0")
        return (1, len(digits), digits, position)

    keys = sorted(enumerate(items), key=order)
    return "\n".join(items[key] for _, key in keys)


def is_no_change(diff: str) -> bool:
    """True when the diff parses and all three sections are empty."""
    parsed = _parse_diff(diff)
    return parsed is not None and not any(parsed)


# --------------------------------------------------------------------------- judging screens

_HEADER_RE = re.compile(r"^app: (.+?) \| screen: (.+?)(?: \| page \d+/\d+)?$")


def _parse_element_value(rest: str) -> Any:
    rest = rest.strip()
    if rest in ("on", "off"):
        return rest == "on"
    if rest.startswith('"'):
        try:
            return json.loads(rest)
        except ValueError:
            return rest
    return rest or None


def judge_screen(task: PhoneTask, screen_text: str) -> bool | None:
    """Goal check on a screen alone (e.g. a predicted one): True / False where the screen shows
    every expected fact / contradicts one, None when it cannot tell.

    Side effects count where the screen shows them: a fact outside the task's scope (a toggle on
    the Settings screen or in the status bar, say) shown with another value than at the start makes
    it False, as it makes the simulator's goal check fail. Side effects the screen does not show are
    not seen. (Ignoring the visible ones let WM-R1 inside a learned world model be rewarded for a
    tap on the neighbouring toggle: research/README.md, 'WM-R1 ladder', section 24.)"""
    if not isinstance(screen_text, str):
        return None
    lines = [line.strip() for line in screen_text.split("\n") if line.strip()]
    header = _HEADER_RE.match(lines[0]) if lines else None
    if header is None:
        return None
    app_title, screen = header[1], header[2]
    elements, status = [], {}
    for line in lines[1:]:
        if line.startswith(STATUS_PREFIX):  # a status bar: 'status: "Wi-Fi" on, "Bluetooth" off, ...'
            for entry in line[len(STATUS_PREFIX):].split(", "):
                label, _, value = entry.rpartition(" ")
                try:
                    label = json.loads(label)
                except ValueError:
                    continue
                if value in ("on", "off") and isinstance(label, str):
                    status[label] = value == "on"
            continue
        match = _ELEMENT_RE.match(line)
        if match:
            try:
                elements.append((match[2], json.loads(match[3]), _parse_element_value(match[4])))
            except ValueError:
                continue
    texts = [label for kind, label, _ in elements if kind == "text"]
    switches = {label: value for kind, label, value in elements if kind == "switch"}
    target = screen[len("chat with "):] if screen.startswith("chat with ") else (texts[0] if texts else "")

    def evidence(key: str, want: Any) -> bool | None:
        kind, _, name = key.partition(":")
        if key == "ui:app":
            return APP_TITLES.get(want) == app_title
        if key == "ui:screen":
            return screen.startswith("chat with ") if want == "chat" else screen == want
        if key == "ui:target":
            return target == want
        if kind == "setting" and SETTING_LABELS.get(name) in switches:
            return switches[SETTING_LABELS[name]] == want
        if kind == "setting" and SETTING_LABELS.get(name) in status:
            return status[SETTING_LABELS[name]] == want
        if kind == "alarm" and screen == "alarms" and want is not None and name in switches:
            return switches[name] == want
        if kind in ("contact", "note") and screen == kind and want is not None and texts[:1] == [name]:
            return texts[1:2] == [want]
        if kind == "chat" and screen == f"chat with {name}" and want is not None:
            shown = [f"{'Me' if sender == 'me' else sender}: {text}" for sender, text in want[-CHAT_LINES:]]
            return texts == shown
        return None

    verdicts = [evidence(key, _freeze(want)) for key, want in task.expect.items()]
    if False in verdicts:
        return False
    if any(evidence(key, start) is False for key, start in _Goal(task).fixed.items()):
        return False  # a side effect the screen shows
    return True if verdicts and all(v is True for v in verdicts) else None


# --------------------------------------------------------------------------- transitions

RANDOM_ACTION_RATE = 0.3
INVALID_ACTION_RATE = 0.05
_INVALID_ACTIONS = ("tap(0)", "open_app(camera)", "scroll(left)", "swipe(up)", 'type(0, "hello")', "press(home)",
                    "tap()", "tap(42)")


def collect_transitions(n_episodes: int, seed: int, templates: Sequence[str] | None = None,
                        max_steps: int = 20, status_bar: bool = False) -> list[Transition]:
    """Play `n_episodes` sampled tasks and record every step as a Transition.

    The policy follows a shortest plan, but with probability ~0.3 takes a random valid action
    (then re-plans from where it landed) and ~0.05 an invalid one; it gives up (finished()) when
    a random action made the task impossible. Deterministic given `seed`.
    """
    rng = random.Random(seed)
    transitions: list[Transition] = []
    for episode_index, task in enumerate(sample_tasks(n_episodes, seed, templates)):
        task = with_status_bar(task) if status_bar else task
        env = PhoneEnv(max_steps=max_steps)
        env.reset(task=task)
        plan: list[str] | None = reference_solution(task)
        step = 0
        while not env.done:
            roll = rng.random()
            if roll < INVALID_ACTION_RATE:
                action = rng.choice(_INVALID_ACTIONS)
            elif roll < INVALID_ACTION_RATE + RANDOM_ACTION_RATE:
                action = rng.choice(env.valid_actions()[:-1])  # anything but finished()
                plan = None
            else:
                if not plan:
                    plan = _search(task, env._world, env._seen) or ["finished()"]
                action = plan.pop(0)
            before = env.observation()
            env.step(action)
            after = env.observation()
            diff = compute_diff(before, after)
            transitions.append(Transition(
                env="phone", episode=f"phone-{seed}-{episode_index}", step=step, state=before, action=action,
                action_type=action_type(action), next_state=after, diff=diff, changed=not is_no_change(diff),
                task=task.instruction))
            step += 1
    return transitions


def reference_neighbourhood(n_tasks: int, seed: int, templates: Sequence[str] | None = None,
                            status_bar: bool = False) -> list[Transition]:
    """Every action an agent may try where a reference solution goes: for `n_tasks` sampled tasks,
    each valid action (finished() included) and two invalid ones from every state of the task's
    reference path, which then follows the reference action. Deterministic given `seed`.

    :func:`collect_transitions` leaves the reference path at random on ~30% of steps, once per
    state, so a world model trained on it alone sees few of the wrong taps an agent makes next to
    the right one, and judges some of them as the right one. A few tasks are enough: with every
    action from every home-screen state of hundreds of tasks, the home screen's outcomes become
    equally frequent and a cpu-sized model stopped reading the action (research/README.md,
    'WM-R1 ladder', section 19.4)."""
    rng = random.Random(seed)
    transitions: list[Transition] = []
    for episode_index, task in enumerate(sample_tasks(n_tasks, seed, templates)):
        task = with_status_bar(task) if status_bar else task
        env = PhoneEnv(max_steps=100)
        env.reset(task=task)
        path = [a for a in reference_solution(task) if a != "finished()"]
        for step, reference in enumerate(path + [None]):
            before = env.observation()
            for action in env.valid_actions() + rng.sample(_INVALID_ACTIONS, 2):
                branch = env.clone()
                branch.step(action)
                after = branch.observation()
                diff = compute_diff(before, after)
                # the id decides the train/val/test split (worldmodel.split_by_episode); "expand" is
                # the name the world models of the WM-R1 study were split by (research/README.md)
                transitions.append(Transition(
                    env="phone", episode=f"expand-{seed}-{episode_index}", step=step, state=before,
                    action=action, action_type=action_type(action), next_state=after, diff=diff,
                    changed=not is_no_change(diff), task=task.instruction))
            if reference is not None:
                env.step(reference)
    return transitions
