"""The GUI agent: turn parsing, imagined calls, transition sources, batched rollouts."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmkit.envs import phone
from wmkit.wm_r1 import agent as ag

# --------------------------------------------------------------------------- parsing


def test_parse_action_turn():
    turn = ag.parse_turn('Thought: find "Location". Action: tap(4)')
    assert turn == ag.ParsedTurn("action", "tap(4)", 'find "Location".')


def test_parse_imagined_turn_and_quotes():
    assert ag.parse_turn("Thought: check. call_wm(action='tap(2)')") .kind == "imagine"
    turn = ag.parse_turn('Thought: x call_wm(action="type(1, \'hi\')")')
    assert turn.kind == "imagine" and turn.action == "type(1, 'hi')"


def test_final_action_wins_over_call_wm():
    turn = ag.parse_turn("Thought: call_wm(action='tap(1)') then\nAction: back()")
    assert turn.kind == "action" and turn.action == "back()"


@pytest.mark.parametrize("text", ["", "Thought: tap(3)", "Action: fly()", "call_wm(action='jump()')",
                                  "Action:", None, 42, "Thought: call_wm(tap(1))"])
def test_garbage_is_invalid(text):
    assert ag.parse_turn(text).kind == "invalid"


def test_format_turn_round_trip():
    for action in ("tap(3)", 'type(2, "Ana")', "scroll(down)", "open_app(clock)", "finished()"):
        assert ag.parse_turn(ag.format_turn("t.", action=action)).action == action
        if action != "finished()":
            assert ag.parse_turn(ag.format_turn("t.", imagine=action)) == ag.ParsedTurn("imagine", action, "t.")
    with pytest.raises(ValueError):
        ag.format_turn("t.")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parse_turn_never_raises(text):
    turn = ag.parse_turn(text)
    assert turn.kind in ("action", "imagine", "invalid")
    if turn.kind != "invalid":
        assert phone.parse_action(turn.action) is not None


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["Thought: ", "Action: ", "call_wm(action='", "')", "tap(", "3)", "\n", '"', "finished()"]),
       st.lists(st.sampled_from(["Thought: ", "Action: ", "call_wm(action='", "')", "tap(", "3)", "\n", "'", "x"]),
                max_size=12))
def test_parse_turn_never_raises_on_near_misses(first, rest):
    ag.parse_turn(first + "".join(rest))


# --------------------------------------------------------------------------- a scripted policy

class CharTokenizer:
    """One token per character; token 0 is the end of a turn."""

    eos_token_id = 0
    pad_token_id = 1

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) + 2 for c in text]}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i - 2) for i in ids if i > 1)


class ScriptedPolicy(ag.Policy):
    """Plays a fixed list of turns per task instruction (then repeats the last one)."""

    def __init__(self, scripts: dict[str, list[str]]):
        self.tokenizer = CharTokenizer()
        self.scripts = scripts
        self.eos = 0

    def turns(self, contexts, num_samples=1):
        out = []
        for context in contexts:
            text = self.tokenizer.decode(context)
            instruction = text.split("\n", 1)[0][len("Task: "):]
            k = text.count("Thought:")
            script = self.scripts[instruction]
            turn = script[min(k, len(script) - 1)]
            out.append([self.encode(turn) + [0] for _ in range(num_samples)])
        return out


def _task(template="setting_on", seed=1):
    return phone.make_task(template, seed)


def _reference_script(task, imagine_first=0):
    screens = []
    env = phone.PhoneEnv()
    screens.append(env.reset(task=task))
    turns = [ag.format_turn("x.", imagine="tap(1)")] * imagine_first
    for action in phone.reference_solution(task):
        turns.append(ag.format_turn("go.", action=action))
    return turns


def test_simulator_rollout_reference_succeeds():
    task = _task()
    policy = ScriptedPolicy({task.instruction: _reference_script(task)})
    source = ag.SimulatorSource()
    [ep] = ag.run_episodes(policy, [task], source, config=ag.AgentConfig(max_steps=8))
    assert ep.success and ep.finished and ep.steps == len(phone.reference_solution(task))
    assert ep.wm_calls == 0 and ep.invalid == 0
    assert source.transitions == ep.steps - 1  # finished() is judged, not stepped
    assert len(ep.completion_ids) == len(ep.env_mask) and ep.env_mask[-1] == 1


class RaisingEnv(phone.PhoneEnv):
    def step(self, action):
        raise AssertionError("the simulator must not be stepped")


def oracle_transition(task, screen, action):
    """A scripted oracle: replays the task's reference prefix that leads to `screen`."""
    env = phone.PhoneEnv()
    current = env.reset(task=task)
    for ref in phone.reference_solution(task):
        if current == screen:
            break
        current = env.step(ref).observation
    return env.step(action).observation if current == screen else screen


def test_imagined_calls_do_not_advance_steps_and_are_masked():
    task = _task()
    reference = phone.reference_solution(task)
    policy = ScriptedPolicy({task.instruction: _reference_script(task, imagine_first=2)})
    asked = []

    def predictor(pairs):
        asked.extend(pairs)
        return [phone.compute_diff(s, s) for s, _ in pairs]  # "no change"
    imaginer = ag.WorldModelSource(predictor)
    source = ag.ScriptedSource(oracle_transition, lambda t, s: phone.judge_screen(t, s) is True)
    [ep] = ag.run_episodes(policy, [task], source, imaginer=imaginer, config=ag.AgentConfig(max_steps=8))
    assert ep.wm_calls == 2 and ep.steps == len(reference) and ep.success
    assert imaginer.queries == 2 and imaginer.predictions == 1  # the second call hits the cache
    text = policy.tokenizer.decode([t for t, m in zip(ep.completion_ids, ep.env_mask) if m == 0])
    assert text.count(ag.IMAGINED_NOTE) == 2
    agent_text = policy.tokenizer.decode([t for t, m in zip(ep.completion_ids, ep.env_mask) if m == 1])
    assert "Screen:" not in agent_text and agent_text.count("Thought:") == 2 + len(reference)


def test_too_many_imagined_calls_fail_a_step():
    task = _task()
    script = [ag.format_turn("x.", imagine="tap(1)")] * 6 + [ag.format_turn("d.", action="finished()")]
    policy = ScriptedPolicy({task.instruction: script})
    imaginer = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs])
    [ep] = ag.run_episodes(policy, [task], ag.SimulatorSource(), imaginer=imaginer,
                           config=ag.AgentConfig(max_steps=8, max_wm_calls=5))
    assert ep.wm_calls == 5 and ep.invalid == 1 and ep.steps == 2 and ep.finished


def test_imagine_off_makes_call_wm_a_failed_step():
    task = _task()
    policy = ScriptedPolicy({task.instruction: [ag.format_turn("x.", imagine="tap(1)")]})
    imaginer = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs])
    [ep] = ag.run_episodes(policy, [task], ag.SimulatorSource(), imaginer=imaginer,
                           config=ag.AgentConfig(max_steps=3, imagine=False))
    assert ep.wm_calls == 0 and ep.invalid == 3 and ep.truncated and not ep.success


def test_invalid_turns_fail_steps_and_keep_the_screen():
    task = _task()
    policy = ScriptedPolicy({task.instruction: ["Thought: hmm", "Action: fly()"]})
    source = ag.SimulatorSource()
    [ep] = ag.run_episodes(policy, [task], source, config=ag.AgentConfig(max_steps=4))
    assert ep.steps == 4 and ep.invalid == 4 and source.transitions == 0
    assert ep.final_screen == ag.initial_screen(task)


def test_world_model_source_never_steps_the_simulator(monkeypatch):
    monkeypatch.setattr(phone.PhoneEnv, "step", RaisingEnv.step)
    tasks = [_task("setting_on", s) for s in range(3)] + [_task("alarm_off", 2)]
    scripts = {}
    for t in tasks:
        scripts.setdefault(t.instruction, [ag.format_turn("a.", action="tap(1)"),
                                           ag.format_turn("b.", imagine="tap(2)"),
                                           ag.format_turn("c.", action="finished()")])
    policy = ScriptedPolicy(scripts)
    wm = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs])
    episodes = ag.run_episodes(policy, tasks, ag.WorldModelSource(wm.predictor, cache=wm.cache), imaginer=wm)
    assert all(e.finished and e.steps == 2 and e.wm_calls == 1 for e in episodes)


class RandomTapPolicy(ScriptedPolicy):
    """Taps a random element each turn, drawn from torch's global stream like a sampling policy."""

    def __init__(self):
        super().__init__({})

    def turns(self, contexts, num_samples=1):
        import torch

        return [[self.encode(ag.format_turn("x.", action=f"tap({int(torch.randint(1, 6, ()))})")) + [0]
                 for _ in range(num_samples)] for _ in contexts]


def test_a_learned_world_models_predictions_do_not_move_the_policys_sampling(tiny_lm):
    """Sampled episodes inside a learned world model are the same whether its predictions come
    from the model (cache misses) or from the cache: predicting must not reseed the policy's stream."""
    import torch

    model, tok, _ = tiny_lm
    source = ag.WorldModelSource(ag.world_model_predictor(model, tok, max_new_tokens=4))
    tasks = [_task("setting_on", s) for s in range(3)]
    played = []
    for _ in range(2):  # the first pass fills the cache; the second predicts nothing
        torch.manual_seed(7)
        episodes = ag.run_episodes(RandomTapPolicy(), tasks, source.episode_source(),
                                   config=ag.AgentConfig(max_steps=4))
        played.append([e.actions for e in episodes])
    assert source.cache and played[0] == played[1]
    assert len({a for actions in played[0] for a in actions}) > 1  # the policy did draw


def test_world_model_success_is_judged_on_the_predicted_screen():
    task = _task()
    env = phone.PhoneEnv()
    env.reset(task=task)
    screens = [env.observation()]
    for action in phone.reference_solution(task)[:-1]:
        screens.append(env.step(action).observation)
    truth = dict(zip(zip(screens, phone.reference_solution(task)), screens[1:]))

    def predictor(pairs):  # a perfect world model on the reference path, "no change" elsewhere
        return [phone.compute_diff(s, truth.get((s, a), s)) for s, a in pairs]
    policy = ScriptedPolicy({task.instruction: _reference_script(task)})
    [ep] = ag.run_episodes(policy, [task], ag.WorldModelSource(predictor))
    assert ep.success
    judge_calls = []
    source = ag.WorldModelSource(predictor, judge=lambda t, s: judge_calls.append(s) or False)
    [ep] = ag.run_episodes(policy, [task], source)
    assert not ep.success and judge_calls == [screens[-1]]


def test_batched_rollouts_keep_episodes_apart():
    tasks = [_task("setting_on", 1), _task("alarm_off", 3), _task("open_note", 4)]
    policy = ScriptedPolicy({t.instruction: _reference_script(t) for t in tasks})
    source = ag.SimulatorSource()
    episodes = ag.run_episodes(policy, tasks, source, config=ag.AgentConfig(max_steps=8))
    assert [e.success for e in episodes] == [True, True, True]
    assert source.step_calls == max(len(phone.reference_solution(t)) for t in tasks) - 1
    summary = ag.summarize_episodes(episodes)
    assert summary["success"] == 1.0 and summary["n"] == 3


def test_best_of_k_picks_the_candidate_the_world_model_likes():
    task = _task()
    env = phone.PhoneEnv()
    screen = env.reset(task=task)
    good = phone.reference_solution(task)[0]
    env2 = env.clone()
    after = env2.step(good).observation
    chosen = ag._pick_best(None, ag.WorldModelSource(
        lambda pairs: [phone.compute_diff(s, after if a == good else s) for s, a in pairs]),
        task, screen, ["back()", "back()", good])
    # The judge is myopic: the imagined Settings screen shows the switch still off (False), while
    # back() on the home screen shows nothing either way (None), so back() wins.
    assert chosen == "back()"
    goal_screen = env2.step(phone.reference_solution(task)[1]).observation
    done = ag._pick_best(None, ag.WorldModelSource(
        lambda pairs: [phone.compute_diff(s, screen if a == "back()" else s) for s, a in pairs]),
        task, goal_screen, ["back()", "back()", "finished()"])
    assert done == "finished()"  # on the goal screen, finishing is judged on that screen: True


# --------------------------------------------------------------------------- reference thoughts

CONTACTS_SCREEN = ('app: Contacts | screen: contacts\n[1] button "Add contact"\n[2] item "Bob"\n'
                   '[3] item "Finn"\n[4] item "Hugo"\n[5] button "Back"')


def test_describe_action_names_the_index_of_the_tapped_item_only_when_asked():
    # Hand-checked: tap(3) on this screen touches "Finn", whose line starts with [3].
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)") == 'find "Finn".'
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)", thought_index=True) == 'find "Finn" at [3].'
    assert ag.describe_action(CONTACTS_SCREEN, "tap(4)", thought_index=True) == 'find "Hugo" at [4].'
    # Only taps carry the index; other actions' thoughts are unchanged.
    assert ag.describe_action(CONTACTS_SCREEN, "scroll(down)", thought_index=True) == "scroll."
    assert ag.describe_action(CONTACTS_SCREEN, "tap(9)", thought_index=True) == "tap."  # not on screen


def test_indexed_thought_parses_and_names_the_tapped_item_on_the_current_screen():
    thought = ag.describe_action(CONTACTS_SCREEN, "tap(2)", thought_index=True)
    turn = ag.parse_turn(ag.format_turn(thought, action="tap(2)"))
    assert turn == ag.ParsedTurn("action", "tap(2)", 'find "Bob" at [2].')
    # The index in the thought is the index of the named item's line on the screen.
    index = turn.thought.rsplit("[", 1)[1].rstrip("].")
    assert f'[{index}] item "Bob"' in CONTACTS_SCREEN
    # Truncated or malformed indexed thoughts never raise.
    for text in ('Thought: find "Bob" at [', 'Thought: find "Bob" at [2]. Action:', 'Thought: find "Bob" at [2',
                 'Thought: find "Bob" at [2]. Action: tap(', 'Thought: find "Bob" at [2]. call_wm(action=\'tap(2'):
        assert ag.parse_turn(text).kind == "invalid"


# --------------------------------------------------------------------------- the agent's view of a screen

VIEW_SCREEN_ENV = ('app: Messages | screen: conversations | page 1/2\n'
                   '[1] button "New message"\n'
                   '[2] item "Ines" "ok"\n'
                   '[3] item "Nora"\n'
                   '[4] switch "Wi-Fi" on\n'
                   '[5] switch "07:30" off\n'
                   '[6] field "Message" ""\n'
                   '[7] text "Say \\"hi\\" [2]"\n'
                   'None\n'
                   '[8 button "broken"')
# Hand-written: each element's index moves right behind its label, the value (if any) after it;
# the header, the non-element line "None" and the malformed "[8 button" line stay as they are.
VIEW_SCREEN_AGENT = ('app: Messages | screen: conversations | page 1/2\n'
                     'button "New message" [1]\n'
                     'item "Ines" [2] "ok"\n'
                     'item "Nora" [3]\n'
                     'switch "Wi-Fi" [4] on\n'
                     'switch "07:30" [5] off\n'
                     'field "Message" [6] ""\n'
                     'text "Say \\"hi\\" [2]" [7]\n'
                     'None\n'
                     '[8 button "broken"')


def test_index_after_label_view_of_a_hand_written_screen():
    assert ag.agent_screen(VIEW_SCREEN_ENV, "index_after_label") == VIEW_SCREEN_AGENT
    assert ag.env_screen(VIEW_SCREEN_AGENT, "index_after_label") == VIEW_SCREEN_ENV
    assert ag.agent_screen(VIEW_SCREEN_ENV) == VIEW_SCREEN_ENV == ag.agent_screen(VIEW_SCREEN_ENV, "env")


def test_unknown_screen_view_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown screen_view 'label_first'.*'env', 'index_after_label'"):
        ag.agent_screen(CONTACTS_SCREEN, "label_first")
    with pytest.raises(ValueError, match="Unknown screen_view"):
        ag.prompt_text(_task(), CONTACTS_SCREEN, "label_first")
    with pytest.raises(ValueError, match="Unknown screen_view"):
        ag.describe_action(CONTACTS_SCREEN, "tap(3)", True, "label_first")
    task = _task()
    with pytest.raises(ValueError, match="Unknown screen_view"):
        ag.run_episodes(ScriptedPolicy({task.instruction: _reference_script(task)}), [task], ag.SimulatorSource(),
                        config=ag.AgentConfig(screen_view="label_first"))


def _real_screens():
    """Every screen along the reference solutions of a few tasks of each kind of app."""
    screens = []
    for template in ("open_contact", "open_chat", "open_note", "setting_on", "alarm_off", "add_contact"):
        for seed in range(3):
            task = phone.make_task(template, seed)
            env = phone.PhoneEnv()
            screens.append(env.reset(task=task))
            for action in phone.reference_solution(task)[:-1]:
                screens.append(env.step(action).observation)
    return screens


def test_view_round_trips_and_keeps_the_environments_indices_on_real_screens():
    import re

    element = re.compile(r'^\[(\d+)\] (\S+) ("(?:[^"\\]|\\.)*")(.*)$')
    viewed = re.compile(r'^(\S+) ("(?:[^"\\]|\\.)*") \[(\d+)\](.*)$')
    checked = 0
    for screen in _real_screens():
        view = ag.agent_screen(screen, "index_after_label")
        assert ag.env_screen(view, "index_after_label") == screen
        for env_line, view_line in zip(screen.split("\n"), view.split("\n"), strict=True):
            m = element.match(env_line)
            if not m:
                assert view_line == env_line  # the header
                continue
            v = viewed.match(view_line)
            assert v is not None and v[3] == m[1]  # the same index, now after the label
            assert (v[1], v[2], v[4]) == (m[2], m[3], m[4])  # kind, label, value unchanged
            checked += 1
    assert checked > 100


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_screen_view_never_raises_and_only_rewrites_element_lines(text):
    view = ag.agent_screen(text, "index_after_label")
    assert view.count("\n") == text.count("\n")
    for before, after in zip(text.split("\n"), view.split("\n")):
        assert after == before or (before.startswith("[") and sorted(after) == sorted(before))


def test_thought_follows_the_view_when_both_options_are_on():
    # Hand-checked on CONTACTS_SCREEN: tap(3) touches "Finn"; its view line is 'item "Finn" [3]'.
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)", True, "index_after_label") == 'find "Finn" [3].'
    assert 'item "Finn" [3]' in ag.agent_screen(CONTACTS_SCREEN, "index_after_label")
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)", False, "index_after_label") == 'find "Finn".'
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)", True, "env") == 'find "Finn" at [3].'
    assert ag.describe_action(CONTACTS_SCREEN, "scroll(down)", True, "index_after_label") == "scroll."
    # the turn parses; malformed or truncated turns of this form are invalid, never an exception
    turn = ag.parse_turn(ag.format_turn('find "Finn" [3].', action="tap(3)"))
    assert turn == ag.ParsedTurn("action", "tap(3)", 'find "Finn" [3].')
    for text in ('Thought: find "Finn" [', 'Thought: find "Finn" [3]. Action:', 'Thought: find "Finn" [3',
                 'Thought: find "Finn" [3]. Action: tap(', 'Thought: find "Finn" [3]. call_wm(action=\'tap(3'):
        assert ag.parse_turn(text).kind == "invalid"


# Hand-written: each element's index goes inside its label's quotes, after the label's last
# character (a label that ends in digits, "07:30", keeps them: the view always adds " <index>");
# the value (if any) after it; the header, "None" and the malformed "[8 button" line unchanged.
IN_LABEL_SCREEN_AGENT = ('app: Messages | screen: conversations | page 1/2\n'
                         'button "New message 1"\n'
                         'item "Ines 2" "ok"\n'
                         'item "Nora 3"\n'
                         'switch "Wi-Fi 4" on\n'
                         'switch "07:30 5" off\n'
                         'field "Message 6" ""\n'
                         'text "Say \\"hi\\" [2] 7"\n'
                         'None\n'
                         '[8 button "broken"')


def test_index_in_label_view_of_a_hand_written_screen():
    assert ag.agent_screen(VIEW_SCREEN_ENV, "index_in_label") == IN_LABEL_SCREEN_AGENT
    assert ag.env_screen(IN_LABEL_SCREEN_AGENT, "index_in_label") == VIEW_SCREEN_ENV
    # a label that ends in digits and an empty label round-trip too
    screen = 'app: Notes | screen: notes | page 1/1\n[1] item "Trip 2"\n[12] item ""\n[3] item "x 40" "y 5"'
    view = ag.agent_screen(screen, "index_in_label")
    assert view.split("\n")[1:] == ['item "Trip 2 1"', 'item " 12"', 'item "x 40 3" "y 5"']
    assert ag.env_screen(view, "index_in_label") == screen
    assert "'index_in_label'" in str(pytest.raises(ValueError, ag.check_screen_view, "inlabel").value)


def test_index_in_label_view_round_trips_on_real_screens():
    import re

    element = re.compile(r'^\[(\d+)\] (\S+) "((?:[^"\\]|\\.)*)"(.*)$')
    checked = 0
    for screen in _real_screens():
        view = ag.agent_screen(screen, "index_in_label")
        assert ag.env_screen(view, "index_in_label") == screen
        for env_line, view_line in zip(screen.split("\n"), view.split("\n"), strict=True):
            m = element.match(env_line)
            if not m:
                assert view_line == env_line  # the header
                continue
            assert view_line == f'{m[2]} "{m[3]} {m[1]}"{m[4]}'  # kind, label + index, value
            checked += 1
    assert checked > 100


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_index_in_label_view_never_raises_and_only_rewrites_element_lines(text):
    view = ag.agent_screen(text, "index_in_label")
    back = ag.env_screen(text, "index_in_label")  # the inverse never raises on any text either
    assert view.count("\n") == text.count("\n") == back.count("\n")
    for before, after in zip(text.split("\n"), view.split("\n")):
        assert after == before or (before.startswith("[") and ag.env_screen(after, "index_in_label") == before)


def test_thought_follows_the_index_in_label_view():
    # Hand-checked on CONTACTS_SCREEN: tap(3) touches "Finn"; its view line is 'item "Finn 3"'.
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)", True, "index_in_label") == 'find "Finn 3".'
    assert 'item "Finn 3"\n' in ag.agent_screen(CONTACTS_SCREEN, "index_in_label")
    assert ag.describe_action(CONTACTS_SCREEN, "tap(3)", False, "index_in_label") == 'find "Finn".'
    assert ag.describe_action(CONTACTS_SCREEN, "scroll(down)", True, "index_in_label") == "scroll."
    turn = ag.parse_turn(ag.format_turn('find "Finn 3".', action="tap(3)"))
    assert turn == ag.ParsedTurn("action", "tap(3)", 'find "Finn 3".')
    for text in ('Thought: find "Finn 3', 'Thought: find "Finn 3". Action:', 'Thought: find "Finn 3". Action: tap(',
                 'Thought: find "Finn 3". call_wm(action=\'tap(3'):
        assert ag.parse_turn(text).kind == "invalid"


def test_rollout_shows_the_agent_its_view_of_real_and_imagined_screens_only():
    task = phone.make_task("open_contact", 2)
    reference = phone.reference_solution(task)
    turns = [ag.format_turn("x.", imagine=reference[0])] + _reference_script(task)
    policy = ScriptedPolicy({task.instruction: turns})
    asked = []

    def predictor(pairs):  # a perfect world model; it must be asked in the phone's own format
        asked.extend(pairs)
        return [phone.compute_diff(s, oracle_transition(task, s, a)) for s, a in pairs]
    source = ag.SimulatorSource()
    [ep] = ag.run_episodes(policy, [task], source, imaginer=ag.WorldModelSource(predictor),
                           config=ag.AgentConfig(max_steps=8, screen_view="index_after_label"))
    assert ep.success and ep.wm_calls == 1
    assert asked and all(s.split("\n")[1].startswith("[1] ") for s, _ in asked)
    assert source.screens[0].split("\n")[1].startswith("[1] ")  # the source keeps the phone's format
    assert 'app "Contacts" [2]' in ep.prompt and "[2] app" not in ep.prompt
    seen = policy.tokenizer.decode([t for t, m in zip(ep.completion_ids, ep.env_mask) if m == 0])
    assert ag.IMAGINED_NOTE in seen and 'button "Add contact" [1]' in seen
    assert not any(line.startswith("[") for line in seen.split("\n"))
