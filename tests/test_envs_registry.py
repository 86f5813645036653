"""An environment is one registered object: prompt, metric and task reward read from the registry."""
from __future__ import annotations

import json
import types

import pytest

from wmkit import envs
from wmkit.core import worldmodel as wmod
from wmkit.core.build import tokenizer_corpus
from wmkit.envs.base import Environment, Transition
from wmkit.rewards.screen import screen_diff_f1
from wmkit.rewards.text_similarity import rouge_l_f1
from wmkit.rewards.textgame import textgame_binary_reward, textgame_task_specific_reward
from wmkit.core import world_model_rl as rl

# The kit's prompts as they were written before the registry: every recorded tokenizer holds them.
KIT_PROMPTS = {
    "textgame": "Predict the text game's state change as JSON.",
    "phone": "Predict the phone screen's change.",
    "twx": "Predict the text game's next observation.",
}


# ------------------------------------------------------------------ a dummy environment

def _counter_module() -> types.ModuleType:
    """A one-number world: "inc" adds one, anything else changes nothing; the diff is the next state."""
    m = types.ModuleType("counter_env")
    m.state_text = str
    m.compute_diff = lambda before, after: after
    m.apply_diff = lambda before, diff: diff.strip() or None if isinstance(diff, str) else None
    m.is_no_change = lambda diff: False
    m.action_type = lambda action: action.split()[0] if action.split() else ""

    def collect_transitions(n_episodes, seed):
        out = []
        for e in range(n_episodes):
            state = str(seed + e)
            for step, action in enumerate(["inc", "look", "inc"]):
                nxt = str(int(state) + 1) if action == "inc" else state
                out.append(Transition(env="counter", episode=f"c{seed}-{e}", step=step, state=state,
                                      action=action, action_type=action, next_state=nxt, diff=nxt,
                                      changed=nxt != state))
                state = nxt
        return out

    m.collect_transitions = collect_transitions
    return m


def _off_by_one(t: Transition, prediction: str) -> float:
    """1 if right, 0.5 if off by one, else 0 (a metric no kit environment has)."""
    try:
        error = abs(int(prediction.strip()) - int(t.next_state))
    except ValueError:
        return 0.0
    return 1.0 if error == 0 else 0.5 if error == 1 else 0.0


def _counter(**fields) -> Environment:
    declared = {"name": "counter", "module": _counter_module(), "system_prompt": "Predict the next count.",
                "metric_name": "off_by_one", "metric": _off_by_one,
                "task_reward": lambda t, p: 2 * _off_by_one(t, p)}
    return Environment(**{**declared, **fields})


@pytest.fixture
def counter():
    env = envs.register_environment(_counter())
    try:
        yield env
    finally:
        envs.unregister_environment("counter")


# ------------------------------------------------------------------ the kit's environments

def test_kit_environments_registered_with_their_prompts():
    assert list(envs.ENVIRONMENTS)[:3] == list(envs.KIT_ENVIRONMENTS) == ["textgame", "phone", "twx"]
    assert {k: wmod.SYSTEM_PROMPTS[k] for k in KIT_PROMPTS} == KIT_PROMPTS
    assert envs.tokenizer_prompts([]) == list(KIT_PROMPTS.values())
    assert wmod.prompt_messages("phone", "s", "a")[0] == {"role": "system", "content": KIT_PROMPTS["phone"]}
    assert envs.get_env_module("textgame").__name__ == "wmkit.envs.textgame"


def test_partial_credit_and_task_reward_match_the_old_formulas(small_splits):
    """Regression: the registry gives what the if-chains gave (text game task-specific reward on
    state/next state, screen F1 on the diff, ROUGE-L on the next observation for twx)."""
    train = small_splits["train"]
    samples = ([t for t in train if t.env == "textgame" and t.changed][:2]
               + [t for t in train if t.env == "textgame" and not t.changed][:1]
               + [t for t in train if t.env == "phone"][:3]
               + [Transition(env="twx", episode="w", step=0, state="x", action="look", action_type="look",
                             next_state="You win.", diff="You win.", changed=True)])
    old = {
        "textgame": ("task_specific", lambda t, p: textgame_task_specific_reward(p, t.state, t.next_state)),
        "phone": ("f1", lambda t, p: screen_diff_f1(p, t.diff)),
        "twx": ("rouge_l", lambda t, p: rouge_l_f1(p, t.next_state)),
    }
    for t in samples:
        for p in (t.diff, t.diff[: len(t.diff) // 2], "garbage {", "New items:\nNone", "You lose."):
            name, formula = old[t.env]
            expected = formula(t, p)
            assert wmod.partial_credit(t, p) == (name, expected)
            assert rl._task_reward(t.env, p, t.state, t.next_state, t.diff) == expected
            if t.env == "textgame":
                assert rl._exact_reward(t.env, p, t.state, t.next_state) == textgame_binary_reward(
                    p, t.state, t.next_state)
    tg_changed, tg_unchanged, ph = samples[0], samples[2], samples[3]
    assert wmod.partial_credit(tg_changed, tg_changed.diff) == ("task_specific", pytest.approx(1.3))
    assert wmod.partial_credit(tg_unchanged, tg_unchanged.diff) == ("task_specific", pytest.approx(0.3))
    assert wmod.partial_credit(ph, ph.diff) == ("f1", 1.0)
    assert wmod.partial_credit(samples[-1], "You lose.") == ("rouge_l", pytest.approx(0.5))


# ------------------------------------------------------------------ registering one

def test_a_registered_environment_brings_its_own_metric_and_prompt(counter):
    data = wmod.collect_transitions(["counter"], 2, seed=5)
    assert [t.next_state for t in data[:3]] == ["6", "6", "7"]
    t = data[0]
    assert wmod.prompt_messages("counter", t.state, t.action)[0]["content"] == "Predict the next count."
    assert wmod.partial_credit(t, "7") == ("off_by_one", 0.5)
    assert wmod.is_exact("counter", t.state, "6", t.next_state)
    assert rl.task_specific_reward(["6", "7", "9"], env=["counter"] * 3, state=[t.state] * 3,
                                   next_state=[t.next_state] * 3, diff=[t.diff] * 3) == [2.0, 1.0, 0.0]
    assert rl.binary_reward(["6", "7"], env=["counter"] * 2, state=[t.state] * 2,
                            next_state=[t.next_state] * 2) == [1.0, 0.0]
    summary = wmod.summarize(data, [[x.next_state] for x in data])
    assert summary.partial_metric == "off_by_one" and summary.partial == 1.0 and summary.overall == 1.0
    assert "counter" in envs.SYSTEM_PROMPTS and "counter" in envs.ENVIRONMENTS


def test_a_metric_alone_is_also_the_task_reward():
    envs.register_environment(_counter(task_reward=None))
    try:
        assert rl._task_reward("counter", "7", "6", "7", "7") == 1.0
        assert rl._task_reward("counter", "8", "6", "7", "7") == 0.5
    finally:
        envs.unregister_environment("counter")


@pytest.mark.parametrize("missing, words", [
    ({"metric": None}, r"metric \(partial credit"),
    ({"metric_name": ""}, "metric_name"),
    ({"system_prompt": ""}, "system_prompt"),
    ({"system_prompt": " ", "metric": None}, "system_prompt .*; .*metric"),
    ({"module": types.ModuleType("empty")}, "helpers compute_diff, apply_diff, action_type, collect_transitions"),
    ({"module": "wmkit.envs.no_such_env"}, "importable module"),
    ({"task_reward": "rouge"}, "task_reward as a function"),
    ({"judge": 123}, r"judge as a function state -> \(reward, done\), not int 123 \(or None\)"),
    ({"metric": lambda t: 1.0}, r"metric as a function \(transition, prediction\) -> float; <lambda>\(t\) cannot take 2"),
    ({"binary_reward": lambda: 1.0}, "binary_reward as a function .* cannot take 2"),
    ({"judge": lambda state, extra: (0.0, False)}, r"judge as a function state -> \(reward, done\); <lambda>\(state, extra\) cannot take 1"),
    ({"reference_solution": "solve"}, "reference_solution as a function, not str"),
])
def test_registration_without_what_the_kit_needs_fails_at_once(missing, words):
    with pytest.raises(ValueError, match=f"'counter' cannot be registered: it lacks .*{words}"):
        envs.register_environment(_counter(**missing))
    assert "counter" not in envs.ENVIRONMENTS


def test_names_are_checked(counter):
    with pytest.raises(ValueError, match="already registered; pass replace=True"):
        envs.register_environment(_counter())
    envs.register_environment(_counter(system_prompt="Predict the count."), replace=True)
    assert envs.SYSTEM_PROMPTS["counter"] == "Predict the count."
    for kit_name in ("phone", "Phone ", "TEXTGAME"):
        with pytest.raises(ValueError, match="the name of the kit's own environment .*never replaced, not even "
                                             r"with replace=True"):
            envs.register_environment(_counter(name=kit_name), replace=True)
    with pytest.raises(ValueError, match="stays registered"):
        envs.unregister_environment("textgame")
    with pytest.raises(TypeError):
        envs.register_environment({"name": "x"})


def test_names_compare_without_case_and_surrounding_spaces():
    """'Counter' and 'counter ' are one environment, known by the spelling it was registered with."""
    envs.register_environment(_counter(name=" Counter "))
    try:
        assert "Counter" in envs.ENVIRONMENTS and envs.get_environment("counter ").name == "Counter"
        with pytest.raises(ValueError, match=r"'counter' is already registered as 'Counter' \(names compare"):
            envs.register_environment(_counter())
        # the module writes env="counter": its transitions carry the registered spelling
        data = wmod.collect_transitions(["COUNTER"], 1, seed=0)
        assert {t.env for t in data} == {"Counter"}
        assert wmod.partial_credit(data[0], data[0].next_state) == ("off_by_one", 1.0)
        assert envs.SYSTEM_PROMPTS["counter"] == "Predict the next count."
        assert envs.tokenizer_prompts(["counter", "Counter"])[3:] == ["Predict the next count."]
        envs.register_environment(_counter(name="counter", system_prompt="Count."), replace=True)
        # replaced under the new spelling (other tests' environments may be registered beside it)
        assert envs.registered_name("COUNTER") == "counter" and "Counter" not in envs.ENVIRONMENTS
        assert envs.SYSTEM_PROMPTS["COUNTER"] == "Count."
    finally:
        envs.unregister_environment("COUNTER")
    assert envs.registered_name("counter") is None


def test_an_environment_whose_data_carries_another_name_fails_when_collected():
    envs.register_environment(_counter(name="tally"))  # the module writes Transition.env="counter"
    try:
        with pytest.raises(ValueError, match=r"environment 'tally': its collect_transitions wrote "
                                             r"Transition.env='counter', not the name it is registered under"):
            wmod.collect_transitions(["tally"], 1, seed=0)
    finally:
        envs.unregister_environment("tally")


# ------------------------------------------------------------------ a user's function that raises

def _strict_json(t: Transition, prediction: str) -> float:
    """A metric that trusts its input: JSON or bust."""
    return float(json.loads(prediction)["count"] == int(t.next_state))


@pytest.fixture
def strict():
    """The counter world with a metric, task reward and judge that raise on anything but JSON."""
    envs.reset_failed_calls()
    env = envs.register_environment(_counter(
        name="strict", metric=_strict_json, task_reward=_strict_json, binary_reward=lambda t, p: "yes",
        judge=lambda state: (json.loads(state)["count"], False)))
    try:
        yield env
    finally:
        envs.unregister_environment("strict")
        envs.reset_failed_calls()


def _strict_data() -> list[Transition]:
    return [Transition(**{**t.to_dict(), "env": "strict"}) for t in _counter_module().collect_transitions(2, 0)]


def test_a_metric_that_raises_is_a_failed_prediction_with_one_warning(strict):
    data = _strict_data()
    junk = '{"count": 1, "cou' + "n" * 200
    with pytest.warns(envs.EnvironmentFunctionWarning) as caught:
        summary = wmod.summarize(data, [['{"count": %s}' % t.next_state, junk] for t in data])
    assert summary.partial == 0.5 and summary.overall == 0.0  # the junk half scored 0, the run went on
    assert len(caught) == 1  # one warning per function, not one per failure
    message = str(caught[0].message)
    assert message.startswith("environment 'strict': metric test_envs_registry._strict_json raised JSONDecodeError: ")
    assert "on the prediction '{\"count\": 1, \"cou" in message and "(217 characters)" in message
    assert envs.failed_calls() == {"strict: metric test_envs_registry._strict_json": len(data)}
    # a judge that raises pays 0 and does not end the episode; a reward that returns no number scores 0
    with pytest.warns(envs.EnvironmentFunctionWarning, match="judge .* on the state 'not json'"):
        assert strict.judge_state("not json") == (0.0, False)
    assert strict.judge_state('{"count": 2}') == (2.0, False)
    with pytest.warns(envs.EnvironmentFunctionWarning, match=r"binary_reward .*TypeError: returned 'yes', not a number"):
        assert strict.binary(data[0], "1") == 0.0


def test_a_task_reward_that_raises_pays_zero_inside_the_reward_function_trl_calls(strict):
    t = _strict_data()[0]
    columns = {"env": ["strict"] * 3, "state": [t.state] * 3, "next_state": [t.next_state] * 3,
               "diff": [t.diff] * 3, "changed": [t.changed] * 3}
    with pytest.warns(envs.EnvironmentFunctionWarning, match="task_reward"):
        rewards = rl.task_specific_reward(['{"count": %s}' % t.next_state, "{oops", "{"], **columns)
    assert rewards == [1.0, 0.0, 0.0]
    assert envs.failed_calls()["strict: task_reward test_envs_registry._strict_json"] == 2


def test_the_kits_own_metrics_are_called_as_they_are(monkeypatch, small_splits):
    """No guard around the kit's own rewards: they never raise on text (tests/test_fuzz_parsers.py),
    and a bug in them must surface, not score 0."""
    def broken(t, prediction):
        raise RuntimeError("a bug in the kit")

    monkeypatch.setitem(envs.ENVIRONMENTS, "phone", envs.get_environment("phone").__class__(
        **{**envs.get_environment("phone").__dict__, "metric": broken}))
    t = next(t for t in small_splits["train"] if t.env == "phone")
    with pytest.raises(RuntimeError, match="a bug in the kit"):
        wmod.partial_credit(t, "junk")


def test_rewards_see_the_transition_as_collected(counter):
    """TRL passes rl_dataset's columns to the rewards: a registered metric gets the real action,
    episode and step, not blanks."""
    seen = []
    envs.register_environment(_counter(task_reward=lambda t, p: seen.append(t) or 0.0), replace=True)
    t = wmod.collect_transitions(["counter"], 1, seed=3)[0]

    class Template:
        @staticmethod
        def apply_chat_template(messages, tokenize, add_generation_prompt):
            return str(messages)

    row = rl.rl_dataset(Template(), [t]).to_list()[0]
    rl.task_specific_reward(["4"], **{k: [v] for k, v in row.items() if k != "prompt"})
    assert seen == [t]


def test_an_unknown_environment_is_one_clear_error_everywhere():
    t = Transition(env="household", episode="h", step=0, state="s", action="a", action_type="a",
                   next_state="s2", diff="s2", changed=True)
    expected = "Unknown environment 'household': choose one of textgame, phone, twx"
    for call in (lambda: wmod.partial_credit(t, "x"), lambda: wmod.prompt_messages("household", "s", "a"),
                 lambda: rl._task_reward("household", "x", "s", "s2", "s2"),
                 lambda: rl.binary_reward(["x"], ["household"], ["s"], ["s2"]),
                 lambda: envs.get_env_module("household"), lambda: tokenizer_corpus([t])):
        with pytest.raises(ValueError, match=expected):
            call()


# ------------------------------------------------------------------ tokenizers

def _vocab_and_merges(texts: list[str]) -> tuple[dict, list]:
    from wmkit.core.models import train_tokenizer
    from wmkit.profiles import get_profile

    tok = train_tokenizer(texts, get_profile("smoke").world_model.model.vocab_size)
    model = json.loads(tok.backend_tokenizer.to_str())["model"]
    return model["vocab"], model["merges"]


def test_registering_an_environment_changes_no_other_tokenizer(small_splits):
    train = small_splits["train"]
    textgame = [t for t in train if t.env == "textgame"]
    before = {"textgame": tokenizer_corpus(textgame), "both": tokenizer_corpus(train)}
    trained_before = {k: _vocab_and_merges(v) for k, v in before.items()}
    envs.register_environment(_counter())
    try:
        after = {"textgame": tokenizer_corpus(textgame), "both": tokenizer_corpus(train)}
        assert after == before
        assert {k: _vocab_and_merges(v) for k, v in after.items()} == trained_before
        # A model built for the new environment does learn its prompt's text.
        counter_data = wmod.collect_transitions(["counter"], 1, seed=0)
        assert "Predict the next count." in tokenizer_corpus(counter_data)
        assert "Predict the next count." not in tokenizer_corpus(train)
    finally:
        envs.unregister_environment("counter")
