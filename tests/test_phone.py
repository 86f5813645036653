"""The phone simulator: dynamics, invalid actions, tasks, reference solutions and screen diffs."""
from __future__ import annotations

import json
import pickle
import random
from collections import deque
from dataclasses import asdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmkit.envs import phone
from wmkit.envs.base import StepResult, Transition
from wmkit.envs.phone import PhoneEnv, apply_diff, compute_diff, is_no_change

ALARMS_SCREEN = """app: Clock | screen: alarms
[1] button "Add alarm"
[2] switch "07:00" on
[3] switch "08:30" off
[4] button "Back\""""

NEW_ALARM_SCREEN = """app: Clock | screen: new alarm
[1] button "Add alarm"
[2] switch "07:00" on
[3] switch "08:30" off
[4] button "Back"
[5] button "Save\""""

EXAMPLE_DIFF = """New items:
[5] button "Save"
Deleted items:
None
Updated items:
app: Clock | screen: new alarm"""


def world_only(state: dict) -> dict:
    """full_state without the step counter (which every action, valid or not, advances)."""
    return {k: v for k, v in state.items() if k not in ("steps", "done")}


def replay(task, actions):
    env = PhoneEnv()
    env.reset(task=task)
    return env, [env.step(a) for a in actions]


@pytest.fixture(scope="module")
def transitions():
    return phone.collect_transitions(60, seed=11)


# --------------------------------------------------------------------------- basics

def test_templates_are_many_and_unique():
    assert len(phone.TASK_TEMPLATES) >= 50
    assert len(set(phone.TASK_TEMPLATES)) == len(phone.TASK_TEMPLATES)
    assert {app for t in phone.TASK_TEMPLATES for app in phone.make_task(t, 0).apps} == set(phone.APPS)


def test_reset_shows_home_and_is_deterministic():
    first, second = PhoneEnv(), PhoneEnv()
    assert first.reset(seed=3) == second.reset(seed=3)
    assert first.full_state() == second.full_state()
    assert first.observation().splitlines()[0] == "app: Home | screen: home"
    assert first.name == "phone"
    worlds = {json.dumps(world_only(_state(s)), sort_keys=True) for s in range(6)}
    assert len(worlds) > 1  # seeds draw different contents


def _state(seed):
    env = PhoneEnv()
    env.reset(seed=seed)
    return env.full_state()


def test_make_task_is_deterministic_and_serialisable():
    for template in phone.TASK_TEMPLATES:
        task = phone.make_task(template, 5)
        assert task == phone.make_task(template, 5)
        assert task.instruction and task.template == template and task.seed == 5
        assert json.loads(json.dumps(asdict(task))) == asdict(task)
        assert pickle.loads(pickle.dumps(task)) == task
        assert phone.GOAL_CHECKS[template] is not None
    assert phone.sample_tasks(5, seed=2) == phone.sample_tasks(5, seed=2)
    with pytest.raises(ValueError):
        phone.make_task("no_such_template", 0)


def test_full_state_is_json_and_complete():
    env = PhoneEnv()
    env.reset(task=phone.make_task("add_contact", 1))
    env.step("open_app(contacts)")
    env.step("tap(1)")
    env.step('type(1, "Zed")')
    state = env.full_state()
    assert json.loads(json.dumps(state)) == state
    for key in ("settings", "contacts", "alarms", "notes", "chats", "app", "screen", "fields", "scroll", "steps"):
        assert key in state
    assert state["fields"] == {"Name": "Zed", "Phone": ""} and state["steps"] == 3


def test_screens_are_short_and_numbered():
    for transition in phone.collect_transitions(30, seed=4):
        lines = transition.state.split("\n")
        assert len(lines) <= 12
        assert lines[0].startswith("app: ")
        assert [line.split("]")[0] for line in lines[1:]] == [f"[{i}" for i in range(1, len(lines))]


# --------------------------------------------------------------------------- dynamics

def test_toggle_setting_and_airplane_side_effect():
    task = phone.make_task("airplane_on", 0)
    env = PhoneEnv()
    env.reset(task=task)
    env.step("open_app(settings)")
    assert env.step("tap(1)").observation.split("\n")[1] in ('[1] switch "Wi-Fi" on', '[1] switch "Wi-Fi" off')
    env.step("tap(3)")  # airplane mode on switches the radios off
    settings_now = env.full_state()["settings"]
    assert settings_now["airplane"] and not settings_now["wifi"] and not settings_now["bluetooth"]


def test_scroll_hides_and_reveals_rows():
    task = next(t for t in (phone.make_task("delete_contact", s) for s in range(50)) if len(t.initial["contacts"]) > 5)
    names = [c["name"] for c in task.initial["contacts"]]
    env = PhoneEnv()
    env.reset(task=task)
    first_page = env.step("open_app(contacts)").observation
    assert "page 1/2" in first_page.split("\n")[0]
    assert all(f'"{n}"' in first_page for n in names[:5])
    assert not any(f'"{n}"' in first_page for n in names[5:])  # hidden behind the page
    assert "scroll(down)" in env.valid_actions() and "scroll(up)" not in env.valid_actions()
    second_page = env.step("scroll(down)").observation
    assert all(f'"{n}"' in second_page for n in names[5:])
    assert not any(f'"{n}"' in second_page for n in names[:5])
    assert env.step("scroll(down)").info["valid"] is False
    assert env.step("scroll(up)").observation == first_page


def test_element_ids_change_with_the_screen_and_forms_keep_typed_text():
    env = PhoneEnv()
    env.reset(task=phone.make_task("add_alarm", 2))
    env.step("open_app(clock)")
    screen = env.step("tap(1)").observation
    assert screen.split("\n")[:3] == ["app: Clock | screen: new alarm", '[1] field "Hour" ""', '[2] field "Minute" "00"']
    assert env.step('type(1, "6")').observation.split("\n")[1] == '[1] field "Hour" "6"'
    after_save = env.step("tap(3)").observation
    assert after_save.split("\n")[0].startswith("app: Clock | screen: alarms")
    assert env.full_state()["fields"] == {}
    assert any(a["time"] == "06:00" and a["on"] for a in env.full_state()["alarms"])


def test_clone_is_independent():
    env = PhoneEnv()
    env.reset(task=phone.make_task("setting_on", 0))
    copy = env.clone()
    copy.step("open_app(settings)")
    assert env.observation().startswith("app: Home") and copy.observation().startswith("app: Settings")
    assert env.full_state()["steps"] == 0 and copy.full_state()["steps"] == 1


def test_finished_ends_and_max_steps_ends():
    env = PhoneEnv()
    env.reset(task=phone.make_task("setting_on", 0))
    result = env.step("finished()")
    assert isinstance(result, StepResult) and result.done and result.reward == 0.0
    assert env.step("home()").info["valid"] is False  # over
    short = PhoneEnv(max_steps=3)
    short.reset(task=phone.make_task("setting_on", 0))
    results = [short.step(a) for a in ("open_app(clock)", "garbage", "home()")]
    assert [r.done for r in results] == [False, False, True]
    assert all(r.reward == 0.0 for r in results)


# --------------------------------------------------------------------------- invalid actions

@pytest.mark.parametrize("action", [
    "tap(99)", "tap(0)", "tap(-1)", "tap()", "tap(one)", 'type(2, "x")', 'type(1, "unclosed)', "scroll(down)",
    "scroll(left)", "back()", "home()", "open_app(camera)", "open_app()", "swipe(up)", "", "finished", "tap 1",
])
def test_invalid_actions_on_home_change_nothing(action):
    env = PhoneEnv()
    screen = env.reset(task=phone.make_task("add_contact", 0))
    before = world_only(env.full_state())
    result = env.step(action)
    assert result.info["valid"] is False and result.info["message"]
    assert result.observation == screen and world_only(env.full_state()) == before
    assert phone.action_type(action) in ("invalid", "tap", "type", "scroll", "back", "home", "open_app")


def test_impossible_taps_and_saves_are_invalid():
    env = PhoneEnv()
    env.reset(task=phone.make_task("add_contact", 0))
    env.step("open_app(contacts)")
    env.step("tap(1)")  # new contact form
    before = world_only(env.full_state())
    for action in ("tap(1)", "tap(3)", 'type(3, "x")'):  # tap a field, save an empty form, type into a button
        result = env.step(action)
        assert result.info["valid"] is False, action
        assert world_only(env.full_state()) == before
    env.step('type(1, "Zed")')
    env.step('type(2, "12ab")')
    assert "digits" in env.step("tap(3)").info["message"]


def test_lenient_parsing():
    assert phone.parse_action("  tap( 3 ) ") == ("tap", 3)
    assert phone.parse_action("type(2, 'see you')") == ("type", 2, "see you")
    assert phone.parse_action('type(2,"say "hi"")') == ("type", 2, 'say "hi"')
    assert phone.parse_action("scroll(\"DOWN\")") == ("scroll", "down")
    assert phone.parse_action("open_app('Clock')") == ("open_app", "clock")
    assert phone.parse_action("`finished()`") == ("finished",)
    assert phone.parse_action(None) is None and phone.parse_action("tap(1") is None
    for action, kind in [("tap(1)", "tap"), ('type(1, "a")', "type"), ("scroll(up)", "scroll"), ("back()", "back"),
                         ("home()", "home"), ("open_app(notes)", "open_app"), ("finished()", "finished"),
                         ("jump()", "invalid")]:
        assert phone.action_type(action) == kind


# Actions that look like actions: a known verb with random arguments.
action_like = st.builds("{}({})".format, st.sampled_from(["tap", "type", "scroll", "open_app", "back", "home"]),
                        st.one_of(st.integers(-2, 12).map(str), st.text(max_size=12),
                                  st.tuples(st.integers(0, 9), st.text(max_size=8)).map(lambda a: f'{a[0]}, "{a[1]}"')))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5), st.lists(st.one_of(st.text(max_size=30), action_like), min_size=1, max_size=6))
def test_fuzzed_actions_never_raise_and_invalid_ones_change_nothing(prefix_steps, actions):
    task = phone.make_task(phone.TASK_TEMPLATES[prefix_steps * 7 % len(phone.TASK_TEMPLATES)], prefix_steps)
    env = PhoneEnv(max_steps=100)
    env.reset(task=task)
    for action in phone.reference_solution(task)[:prefix_steps]:  # start somewhere inside an app
        if action != "finished()":
            env.step(action)
    for action in actions:
        screen, state = env.observation(), world_only(env.full_state())
        result = env.step(action)
        assert isinstance(result.observation, str) and isinstance(result.info["valid"], bool)
        if not result.info["valid"]:
            assert result.observation == screen and world_only(env.full_state()) == state


# --------------------------------------------------------------------------- tasks and references

@pytest.mark.parametrize("template", phone.TASK_TEMPLATES)
def test_reference_solutions_replay_to_success(template):
    for seed in range(3):
        task = phone.make_task(template, seed)
        reference = phone.reference_solution(task)
        assert reference[-1] == "finished()" and 2 <= len(reference) <= 11
        env, results = replay(task, reference)
        assert all(r.info["valid"] for r in results)
        assert results[-1].done and results[-1].reward == 1.0
        assert phone.judge_success(task, env.full_state())
        # never done earlier: no prefix of the reference already reaches the goal
        prefix_env = PhoneEnv()
        prefix_env.reset(task=task)
        assert not prefix_env.is_success()
        for action in reference[:-2]:
            prefix_env.step(action)
            assert not prefix_env.is_success()


def _brute_force_optimum(task, depth_limit):
    """Plain BFS over valid_actions() with no pruning, states hashed by their full_state JSON:
    the number of actions before finished() of a shortest solution, or None beyond depth_limit."""
    env = PhoneEnv(max_steps=100)
    env.reset(task=task)
    key = lambda e: json.dumps(world_only(e.full_state()), sort_keys=True)
    seen, queue = {key(env)}, deque([(env, 0)])
    while queue:
        node, depth = queue.popleft()
        if node.is_success():
            return depth
        if depth == depth_limit:
            continue
        for action in node.valid_actions()[:-1]:
            child = node.clone()
            if child.step(action).info["valid"] and key(child) not in seen:
                seen.add(key(child))
                queue.append((child, depth + 1))
    return None


@pytest.mark.parametrize("template", ["setting_on", "display_setting_off", "airplane_keep_wifi", "alarm_off",
                                      "delete_contact", "open_note", "delete_chat", "send_message", "add_alarm"])
def test_reference_is_as_short_as_unpruned_search(template):
    task = phone.make_task(template, 1)
    reference = phone.reference_solution(task)
    assert _brute_force_optimum(task, len(reference) - 1) == len(reference) - 1


def test_lookup_texts_are_offered_only_after_being_seen():
    task = phone.make_task("copy_number", 0)
    phone_number = task.lookups[0]
    env = PhoneEnv()
    env.reset(task=task)
    env.step("open_app(contacts)")
    env.step("tap(1)")  # straight to the form: the number was never shown
    assert not any(phone_number in a for a in env.valid_actions())
    env, _ = replay(task, phone.reference_solution(task)[:-4])
    assert any(phone_number in a for a in env.valid_actions())


def test_goal_check_rejects_collateral_changes():
    task = phone.make_task("setting_on", 0)
    env, _ = replay(task, phone.reference_solution(task)[:-1])
    assert env.is_success()
    state = env.full_state()
    state["notes"] = state["notes"][1:]  # also deleted a note: not what was asked
    assert not phone.judge_success(task, state)
    assert not phone.judge_success(task, {"garbage": 1})


def test_judge_screen():
    task = phone.make_task("setting_on", 0)
    env = PhoneEnv()
    home = env.reset(task=task)
    assert phone.judge_screen(task, home) is None  # the home screen shows no settings
    settings_screen = env.step("open_app(settings)").observation
    assert phone.judge_screen(task, settings_screen) is False
    env, _ = replay(task, phone.reference_solution(task)[:-1])
    assert phone.judge_screen(task, env.observation()) is True
    nav = phone.make_task("open_chat", 0)
    env, _ = replay(nav, phone.reference_solution(nav)[:-1])
    assert phone.judge_screen(nav, env.observation()) is True
    assert phone.judge_screen(nav, "garbage") is None and phone.judge_screen(nav, None) is None


def test_status_bar_shows_the_toggles_and_changes_nothing_else():
    task = phone.make_task("setting_flip", 5)
    shown = phone.with_status_bar(task)
    plain_env, status_env = PhoneEnv(), PhoneEnv()
    plain_home, status_home = plain_env.reset(task=task), status_env.reset(task=shown)
    # home screens differ between worlds only with the bar: it is what reveals the hidden toggles
    assert plain_home == PhoneEnv().reset(task=phone.make_task("setting_on", 0))
    settings = task.initial["settings"]
    line = "status: " + ", ".join(f'"{label}" {"on" if settings.get(key, False) else "off"}'
                                  for key, label in phone.SETTING_LABELS.items())
    assert status_home.split("\n") == [plain_home.split("\n")[0], line, *plain_home.split("\n")[1:]]
    plan = phone.reference_solution(shown)
    assert plan == phone.reference_solution(task)  # same dynamics, same plan
    before, diffs = status_home, []
    for action in plan:
        plain, status = plain_env.step(action), status_env.step(action)
        assert [ln for ln in status.observation.split("\n") if not ln.startswith("status: ")] == \
            plain.observation.split("\n")
        assert (status.reward, status.info["valid"]) == (plain.reward, plain.info["valid"])
        diffs.append(compute_diff(before, status.observation))
        assert apply_diff(before, diffs[-1]) == status.observation
        before = status.observation
    assert status.reward == 1.0 and status_env.full_state()["status_bar"] is True
    assert phone.judge_success(shown, status_env.full_state()) and "status_bar" not in plain_env.full_state()
    # the flip's tap updates the switch and the bar's line (one item, keyed as the status line)
    updated = diffs[-2].split("Updated items:\n")[1].split("\n")
    assert len(updated) == 2 and updated[0].startswith("status: ") and " switch " in updated[1]


def test_judge_screen_reads_the_status_bar():
    task = phone.with_status_bar(phone.make_task("setting_on", 0))
    env = PhoneEnv()
    home = env.reset(task=task)
    assert phone.judge_screen(task, home) is False  # the bar shows the toggle still off
    env, _ = replay(task, phone.reference_solution(task)[:-1])
    after = env.step("home()").observation  # back home: only the bar shows the setting now
    assert phone.judge_screen(task, after) is True
    assert phone.judge_screen(phone.make_task("setting_on", 0), after.replace("status: ", "status:")) is None


def test_judge_screen_sees_a_side_effect_the_screen_shows():
    # "Turn off Location", solved, then one more tap on a toggle the task does not name: the
    # simulator calls it a failure (nothing outside the task may change), and so must the screen
    task = next(t for t in (phone.with_status_bar(phone.make_task("setting_off", s)) for s in range(50))
                if t.params.get("setting") == "Location")
    plan = [a for a in phone.reference_solution(task) if a != "finished()"]
    env, _ = replay(task, plan)
    assert env.is_success() and phone.judge_screen(task, env.observation()) is True
    [bluetooth] = [line.split("]")[0][1:] for line in env.observation().split("\n") if 'switch "Bluetooth"' in line]
    env.step(f"tap({bluetooth})")
    assert not env.is_success()
    assert phone.judge_screen(task, env.observation()) is False
    # home again: the status bar still shows the flipped toggle
    assert phone.judge_screen(task, env.step("home()").observation) is False


def test_judge_screen_never_calls_a_real_failure_a_success_on_the_status_bar_phone():
    # every toggle is on every screen of the status-bar phone, so a screen judged a success is one
    # the simulator judges a success: the reference path, then 0-2 random actions, on the
    # settings templates (the agent's favourite mistake is one more tap after the right one)
    rng = random.Random(0)
    judged_success, real_failures_after_the_goal = 0, 0
    for seed in range(150):
        task = phone.with_status_bar(phone.make_task(rng.choice(["setting_on", "setting_off", "setting_flip",
                                                                 "setting_match"]), seed))
        env, _ = replay(task, [a for a in phone.reference_solution(task) if a != "finished()"])
        for _ in range(rng.randint(0, 2)):
            env.step(rng.choice([a for a in env.valid_actions() if a != "finished()"]))
        screen = env.observation()
        if phone.judge_screen(task, screen) is True:
            assert env.is_success(), (task.instruction, screen)
            judged_success += 1
        else:
            real_failures_after_the_goal += not env.is_success()
    assert judged_success >= 30 and real_failures_after_the_goal >= 10


def test_split_templates_is_disjoint_and_deterministic():
    train, test = phone.split_templates(seed=0)
    assert set(train).isdisjoint(test) and set(train) | set(test) == set(phone.TASK_TEMPLATES)
    assert len(test) == round(0.2 * len(phone.TASK_TEMPLATES))
    assert phone.split_templates(seed=0) == (train, test) and phone.split_templates(seed=1) != (train, test)
    assert {t.template for t in phone.sample_tasks(20, 0, templates=test)} <= set(test)


# --------------------------------------------------------------------------- screen diffs

def test_diff_format_example_exactly():
    assert compute_diff(ALARMS_SCREEN, NEW_ALARM_SCREEN) == EXAMPLE_DIFF
    assert apply_diff(ALARMS_SCREEN, EXAMPLE_DIFF) == NEW_ALARM_SCREEN


def test_diff_sections_updated_deleted_and_no_change():
    after = ALARMS_SCREEN.replace('"08:30" off', '"08:30" on').replace('[1] button "Add alarm"\n', "")
    assert compute_diff(ALARMS_SCREEN, after) == (
        'New items:\nNone\nDeleted items:\n[1] button "Add alarm"\nUpdated items:\n[3] switch "08:30" on')
    same = compute_diff(ALARMS_SCREEN, ALARMS_SCREEN)
    assert same == "New items:\nNone\nDeleted items:\nNone\nUpdated items:\nNone"
    assert is_no_change(same) and not is_no_change(EXAMPLE_DIFF) and not is_no_change("garbage")
    assert apply_diff(ALARMS_SCREEN, same) == ALARMS_SCREEN


def test_apply_diff_rejects_unparseable_diffs():
    assert apply_diff(ALARMS_SCREEN, "") is None
    assert apply_diff(ALARMS_SCREEN, "New items:\n[5] button \"Save\"") is None  # sections missing
    assert apply_diff(ALARMS_SCREEN, "Updated items:\nNone\nNew items:\nNone\nDeleted items:\nNone") is None
    assert apply_diff(ALARMS_SCREEN, None) is None and apply_diff(None, EXAMPLE_DIFF) is None
    assert apply_diff(ALARMS_SCREEN, "Let me think.\n" + EXAMPLE_DIFF) == NEW_ALARM_SCREEN  # preamble ignored


def test_round_trip_on_collected_transitions(transitions):
    for t in transitions:
        assert apply_diff(t.state, t.diff) == t.next_state
        assert t.changed == (t.state != t.next_state)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_apply_diff_never_raises_on_garbage(before, diff):
    assert apply_diff(before, diff) is None or isinstance(apply_diff(before, diff), str)
    is_no_change(diff)
    phone.action_type(diff)
    phone.judge_screen(phone.make_task("setting_on", 0), before)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from(["New items:", "Deleted items:", "Updated items:", "None", "app: Clock | screen: x",
                     '[2] switch "07:00" off', '[9] button "Zap"', "[x] nonsense", ""]),
    st.builds('[{}] {} "{}"{}'.format, st.integers(0, 12), st.sampled_from(["button", "switch", "item", "x"]),
              st.text(max_size=8), st.sampled_from(["", " on", " off", ' "a"', ' "'])),
    st.text(max_size=20),
), max_size=12))
def test_apply_diff_never_raises_on_structured_garbage(lines):
    result = apply_diff(ALARMS_SCREEN, "\n".join(lines))
    assert result is None or isinstance(result, str)


# --------------------------------------------------------------------------- transitions

def test_collect_transitions_is_deterministic_with_a_healthy_mix(transitions):
    again = phone.collect_transitions(60, seed=11)
    assert [t.to_dict() for t in transitions] == [t.to_dict() for t in again]
    assert phone.collect_transitions(10, seed=12) != phone.collect_transitions(10, seed=11)[:10]
    assert all(isinstance(t, Transition) and t.env == "phone" for t in transitions)
    changed_share = sum(t.changed for t in transitions) / len(transitions)
    assert 0.7 <= changed_share <= 0.95
    kinds = {t.action_type for t in transitions}
    assert {"tap", "type", "open_app", "finished", "invalid"} <= kinds
    episodes = {t.episode for t in transitions}
    assert len(episodes) == 60 and all(e.startswith("phone-11-") for e in episodes)
    for episode in episodes:
        steps = [t.step for t in transitions if t.episode == episode]
        assert steps == list(range(len(steps))) and len(steps) <= 20
    assert all(t.task for t in transitions)


def test_collect_transitions_respects_templates():
    some = ["alarm_on", "delete_note"]
    tasks = {t.task for t in phone.collect_transitions(8, seed=1, templates=some)}
    assert tasks == {task.instruction for task in phone.sample_tasks(8, 1, templates=some)}
    assert all(task.template in some for task in phone.sample_tasks(8, 1, templates=some))


def test_state_text_is_the_screen():
    env = PhoneEnv()
    env.reset(seed=0)
    assert phone.state_text(env) == env.observation()
