"""WorldModelEnv: any registered environment's world model as an agent's environment."""
import pytest

from wmkit.core import world_model_env as wme
from wmkit.envs import get_environment, register_environment, unregister_environment
from wmkit.envs.base import Environment


@pytest.fixture
def judged_textgame():
    """The text game registered again under another name, with a judge that ends the episode on
    any state containing 'lamp' and pays 1 there."""
    base = get_environment("textgame")
    name = "textgame_judged"
    register_environment(Environment(name=name, module=base.module, system_prompt=base.system_prompt,
                                     metric_name=base.metric_name, metric=base.metric,
                                     judge=lambda state: (1.0, True) if "lamp" in state else (0.0, False)),
                         replace=True)
    yield name
    unregister_environment(name)


def test_an_environment_without_a_judge_is_refused_with_one_clear_line():
    with pytest.raises(ValueError, match="declares no judge"):
        wme.WorldModelEnv("textgame", model=None, tokenizer=None, max_new_tokens=8)


def test_a_step_applies_the_prediction_and_judges_the_predicted_state(judged_textgame, monkeypatch):
    predictions = iter(["}{ garbage", "PREDICTED"])
    monkeypatch.setattr(wme, "predict_diffs", lambda *a, **k: [[next(predictions)]])
    # stand-in for apply_diff: only the second prediction parses, into a state with a lamp
    monkeypatch.setattr(wme, "predicted_next_state",
                        lambda env, state, diff: "room with a lamp" if diff == "PREDICTED" else None)
    env = wme.WorldModelEnv(judged_textgame, model=None, tokenizer=None, max_new_tokens=8)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("look")
    env.reset("dark room")
    first = env.step("look")
    assert (first.state, first.reward, first.done, first.parsed) == ("dark room", 0.0, False, False)
    second = env.step("light lamp")
    assert (second.state, second.reward, second.done, second.parsed) == ("room with a lamp", 1.0, True, True)
    assert env.steps == 2 and env.unparsed == 1


def test_it_plays_a_real_tiny_model_without_raising(judged_textgame, tiny_lm, small_splits):
    model, tokenizer, _ = tiny_lm
    start = next(t.state for t in small_splits["test"] if t.env == "textgame")
    env = wme.WorldModelEnv(judged_textgame, model, tokenizer, max_new_tokens=16, temperature=1.0, seed=3)
    env.reset(start)
    steps = [env.step("look") for _ in range(2)]
    assert all(isinstance(s.state, str) and s.reward in (0.0, 1.0) for s in steps)
    assert env.unparsed == sum(not s.parsed for s in steps)
