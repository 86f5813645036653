"""Checkers for the notebooks' exercises: each prints a verdict and returns True/False/None.

None means "not answered yet" (the answer is still None), so executing a notebook top to
bottom never fails on an exercise a reader has not done.

Every checker follows the same contract, so a student learns it once:

* it never raises on what a student may type: text, None, a list where a number was asked,
  NaN — a wrong *type* gets a message that says what form was expected and what was given;
* a wrong answer gets "expected <what>, given <value>" and, when it matches one of the typical
  mistakes the checker knows, that mistake by name (e.g. "population std") — never the answer;
* words are compared case- and separator-insensitively ("Reproduced", "not_measured");
* a number may be rounded to 3 decimals (:data:`DECIMALS`): 0.021 for 1/48 is right;
* it never raises on the notebook's state it reads either (an empty split, one value where an
  interval needs two, a table without its rows): it says it cannot check, and returns None.

Open exercises have checkers too: they check the part that can be measured (a number read off
the run, a count, a comparison) and leave the explanation to the student.
"""
from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wmkit.core.grpo_step import LOSS_TYPES, advantages_by_hand, clipped_loss_by_hand
from wmkit.envs import phone
from wmkit.envs.base import Transition
from wmkit.rewards.wm_r1 import composite_rewards, wm_call_rewards
from wmkit.stats import VERDICTS, summarize, t_quantile, verdict
from wmkit.video.model import l1_distance
from wmkit.wmrl.experiment import CONTROLLED_WM, run_arms
from wmkit.wmrl.method import fuse_estimates, rollout_weight
from wmkit.wmrl.problems import ControlledBandit, HandmadeWorldModel

# ---------------------------------------------------------------- reading answers


def _number(answer: Any) -> float | None:
    """A finite number from an int/float/numpy scalar or a numeric string; None otherwise.

    Booleans are not numbers here (``True == 1`` would pass a checker by accident)."""
    if isinstance(answer, bool) or answer is None:
        return None
    if isinstance(answer, str):
        try:
            value = float(answer.strip().replace(",", "."))
        except ValueError:
            return None
    else:
        try:
            value = float(answer)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float's range
            return None
    return value if math.isfinite(value) else None


def _integer(answer: Any) -> int | None:
    """An integer (2, 2.0, "2"), never a rounded non-integer (2.5 is not an integer answer)."""
    value = _number(answer)
    if value is None or value != int(value):
        return None
    return int(value)


def _numbers(answer: Any, count: int) -> list[float] | None:
    """Exactly `count` finite numbers from a list/tuple/array; None otherwise."""
    if isinstance(answer, (str, bytes, Mapping)) or answer is None:
        return None
    try:
        items = list(answer)
    except TypeError:
        return None
    values = [_number(a) for a in items]
    if len(values) != count or any(v is None for v in values):
        return None
    return values


def _word(answer: Any) -> str | None:
    """Lower case, separators as single spaces: "Not_Measured " -> "not measured"."""
    if not isinstance(answer, str):
        return None
    return " ".join(answer.strip().lower().replace("_", " ").replace("-", " ").split())


def _boolean(answer: Any) -> bool | None:
    """True/False, numpy booleans, or the words true/false/yes/no in any case."""
    if isinstance(answer, bool):
        return answer
    if type(answer).__name__ == "bool_":  # numpy.bool_
        return bool(answer)
    word = _word(answer)
    return {"true": True, "yes": True, "false": False, "no": False}.get(word) if word else None


def _show(answer: Any) -> str:
    text = repr(answer)
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------- reporting


def _not_answered() -> None:
    print("not answered yet")


def _cannot_read(answer: Any, expected_form: str) -> bool:
    print(f"cannot check {_show(answer)} ({type(answer).__name__}): expected {expected_form}")
    return False


def _judge(ok: bool, answer: Any, expected: str, mistakes: Sequence[tuple[bool, str]] = (),
           hint: str = "") -> bool:
    """Print the verdict. `mistakes`: (does the answer match it, its name and why it is wrong);
    the first that matches is named. `hint` is a direction, never the answer."""
    if ok:
        print(f"correct: {_show(answer)}")
        return True
    print(f"not yet: expected {expected}; given {_show(answer)}")
    for matched, diagnosis in mistakes:
        if matched:
            print(f"  typical mistake — {diagnosis}")
            break
    else:
        if hint:
            print(f"  hint: {hint}")
    return False


def _close(a: float | None, b: float, tol: float) -> bool:
    return a is not None and abs(a - b) <= tol


DECIMALS = 3
"""A numeric answer may be rounded to this many decimals (every checker of a single number uses it)."""


def _rounded(a: float | None, b: float) -> bool:
    """`a` is `b` rounded to :data:`DECIMALS` decimals, or closer (the same rule for every checker)."""
    return _close(a, b, 0.5 * 10 ** -DECIMALS + 1e-9)


def _cannot_check(reason: str) -> None:
    """The notebook's state the checker reads cannot be used: say so; None (it is not the answer's fault)."""
    print(f"cannot check yet: {reason}")


class _Unreadable(Exception):
    """An answer not in the form its checker reads (the message is that form)."""


def _read(answer: Any, expected_form: str, reader: Callable[..., Any] = _number, *args: Any) -> Any:
    """``reader(answer, *args)``; None raises :class:`_Unreadable`, which :func:`_state_checked` prints
    with :func:`_cannot_read`."""
    value = reader(answer, *args)
    if value is None:
        raise _Unreadable(expected_form)
    return value


def _state_checked(checker: Callable[..., bool | None]) -> Callable[..., bool | None]:
    """Wrap a checker (its first argument: the answer): an answer of None is "not answered yet", one
    :func:`_read` cannot read says the form it expected (False), and notebook state the checker cannot
    read (a table without its rows, a record of another shape) gets a message and None instead of an
    exception: the contract's last point."""

    @functools.wraps(checker)
    def checked(*args: Any, **kwargs: Any) -> bool | None:
        answer = args[0] if args else kwargs.get("answer", ...)
        if answer is None:
            return _not_answered()
        try:
            return checker(*args, **kwargs)
        except _Unreadable as err:
            return _cannot_read(answer, str(err))
        except Exception as err:  # noqa: BLE001 - any input a notebook can pass; the message names it
            return _cannot_check(f"{checker.__name__} could not read the inputs it was given "
                                 f"({type(err).__name__}: {str(err)[:80]}); run the cells above it first")

    return checked


# ---------------------------------------------------------------- notebook 01


@_state_checked
def check_no_change_on_changed(answer: Any) -> bool | None:
    """Exercise (01): the exact-match accuracy of 'predict no change' on changed transitions."""
    value = _read(answer, "a number in [0, 1] (an accuracy)")
    return _judge(_close(value, 0.0, 1e-9), answer, "the accuracy of 'no change' on changed transitions, in [0, 1]",
                  [(_close(value, 1.0, 1e-9), "1 is its accuracy on *unchanged* transitions, where nothing happens"),
                   (0 < value < 1, "a value between 0 and 1 mixes in unchanged transitions (the overall accuracy)")],
                  "on a changed transition the true next state differs from the current one.")


@_state_checked
def check_changed_share(answer: Any, train: Sequence[Transition], env: str) -> bool | None:
    """Exercise (01): the share of changed transitions of `env` in the training split."""
    value = _read(answer, "a number in [0, 1] (a share)")
    items = [t for t in train if t.env == env]
    if not items:
        return _cannot_check(f"the split given has no {env!r} transitions (is it splits['train']?)")
    truth = sum(t.changed for t in items) / len(items)
    all_envs = sum(t.changed for t in train) / len(train)
    return _judge(_rounded(value, truth), answer, f"the share of changed transitions among {env}'s training transitions",
                  [(_rounded(value, 1 - truth), "that is the share of *unchanged* transitions"),
                   (_rounded(value, all_envs) and not _rounded(all_envs, truth),
                    f"that counts every environment's transitions, not only {env}'s"),
                   (_close(value, 100 * truth, 0.1), "a percentage: give a fraction in [0, 1]")],
                  f"count t.changed over the transitions with t.env == {env!r}, divide by how many there are.")


@_state_checked
def check_applied_screen(answer: Any, before: str, diff: str) -> bool | None:
    """Exercise (01): apply a screen diff by hand (write the next screen as text)."""
    if not isinstance(answer, str):
        return _cannot_read(answer, "the next screen as one string (lines separated by \\n)")
    truth = (phone.apply_diff(before, diff) or "").strip()
    given = answer.strip()
    given_lines, truth_lines = given.split("\n"), truth.split("\n")
    missing = [line for line in truth_lines if line not in given_lines]
    extra = [line for line in given_lines if line not in truth_lines]
    ok = _judge(given == truth, "<your screen>" if len(answer) > 80 else answer,
                f"the screen after the diff ({len(truth_lines)} lines)",
                [(given == before.strip(), "that is the screen *before* the action: the diff is not applied"),
                 (given == diff.strip(), "that is the diff itself, not the screen it leads to"),
                 (sorted(given_lines) == sorted(truth_lines),
                  "the right lines in the wrong order: the header first, then elements in id order")],
                "remove deleted lines, replace updated ones, add new ones.")
    if not ok and (missing or extra):  # counts only: a missing line itself would be part of the answer
        print(f"  {len(missing)} line(s) missing, {len(extra)} line(s) that should not be there")
    return ok


@_state_checked
def check_changed_hits(answer: Any, evaluation: Mapping[str, Any], env: str = "phone") -> bool | None:
    """Exercise (01): how many of `env`'s changed test transitions did the greedy model get exactly right?"""
    value = _read(answer, "a whole number (a count of transitions)", _integer)
    greedy = evaluation[env]["model_greedy"]
    truth = round(greedy["changed"] * greedy["n_changed"])
    overall = round(greedy["overall"] * greedy["n"])
    return _judge(value == truth, answer, f"a count out of {greedy['n_changed']} changed {env} test transitions",
                  [(overall != truth and value == overall, "that counts every test transition, unchanged ones too"),
                   (value == greedy["n_changed"], ("that is how many changed transitions there are, not how many "
                                                  "the model got right"))],
                  "the exact-match accuracy on changed transitions times their number.")


# ---------------------------------------------------------------- notebook 02


@_state_checked
def check_group_advantage(answer: Any, rewards: Sequence[float], index: int = 0) -> bool | None:
    """Exercise (02): TRL's group-relative advantage of completion `index` (sample std, n − 1)."""
    value = _read(answer, "a number (an advantage)")
    if len(rewards) < 2:
        return _cannot_check("a group needs at least two rewards for a standard deviation")
    centred = rewards[index] - statistics.fmean(rewards)
    truth = centred / (statistics.stdev(rewards) + 1e-4)
    return _judge(_rounded(value, truth), answer, f"the advantage of completion {index}",
                  [(_rounded(value, centred / (statistics.pstdev(rewards) + 1e-4)),
                    "population std (dividing by n): TRL's torch.std divides by n − 1"),
                   (_rounded(value, centred), "the centred reward, not yet divided by the group's std")],
                  "subtract the group mean, divide by the group's standard deviation.")


@_state_checked
def check_max_unchanged_task_reward(answer: Any) -> bool | None:
    """Exercise (02): the largest task-specific reward on an unchanged transition."""
    value = _read(answer, "a number (a reward)")
    return _judge(_rounded(value, 0.3), answer, "the largest task-specific reward of an unchanged transition",
                  [(_rounded(value, 1.3), ("that is the largest reward over *all* transitions; reread which of the "
                                           "reward's terms exist when nothing changes (section 2)")),
                   (_rounded(value, 0.2), "that is one term alone; every term that exists adds its largest value")],
                  "add the largest value of each term that exists when nothing changes.")


@_state_checked
def check_group_spread(answer: Any, p: float, group_size: int) -> bool | None:
    """Exercise (02): the chance that a group of `group_size` samples, each right with
    probability `p`, holds both a right and a wrong one (so a binary reward gives it a gradient)."""
    value = _read(answer, "a number in [0, 1] (a probability)")
    from wmkit.rlvr_world.regime import group_signal_probability  # here: it imports torch (2 s)

    truth = group_signal_probability(p, group_size)
    return _judge(_rounded(value, truth), answer, "the probability that a group is mixed",
                  [(_rounded(value, (1 - p) ** group_size), "that is the chance that all are wrong"),
                   (_rounded(value, 1 - (1 - p) ** group_size),
                    "'at least one right' still counts the all-right groups, which teach nothing either")],
                  "a group teaches nothing when all G are right or all are wrong.")


def smallest_group_for_signal(shares: Sequence[float], target: float = 0.5, largest: int = 64) -> int | None:
    """The smallest G (2..`largest`) whose expected share of groups with signal, averaged over
    transitions with per-sample success `shares`, reaches `target`; None if no G does."""
    from wmkit.rlvr_world.regime import group_signal_probability  # here: it imports torch (2 s)

    for g in range(2, largest + 1):
        if statistics.fmean(group_signal_probability(p, g) for p in shares) >= target:
            return g
    return None


@_state_checked
def check_group_size_for_signal(answer: Any, shares: Sequence[float], target: float = 0.5,
                                largest: int = 64) -> bool | None:
    """Exercise (02): the smallest group size G ≤ `largest` that gives at least `target` of the
    groups a gradient, from the MLE model's per-transition shares of exact samples; "none" when
    no G does (transitions never sampled right stay without signal at any G)."""
    try:
        given_shares = None if isinstance(shares, (str, bytes, Mapping)) else _numbers(shares, len(list(shares)))
    except TypeError:  # not a sequence at all
        given_shares = None
    if not given_shares or any(not 0 <= p <= 1 for p in given_shares):
        print(f"cannot check: `shares` should be a non-empty list of per-transition shares in [0, 1]; "
              f"given {_show(shares)}")
        return None
    shares = given_shares
    truth = smallest_group_for_signal(shares, target, largest)
    word = _word(answer)
    value = None if word in ("none", "no g", "never") else _integer(answer)
    if value is None and word not in ("none", "no g", "never"):
        return _cannot_read(answer, f'a whole number G (2..{largest}) or "none"')
    mean_share = statistics.fmean(shares)
    from_mean = smallest_group_for_signal([mean_share], target, largest)
    # the same words whatever the truth: "expected G = none" would give the answer away
    expected = f'a whole number G ≤ {largest}, or "none" (the average over transitions of 1 − p^G − (1 − p)^G)'
    return _judge(value == truth, answer, expected,
                  [(value is not None and value == from_mean and from_mean != truth,
                    ("that G is right for the *average* p; the share of groups with signal is the average of "
                     "the formula over transitions, and transitions the model never samples right add 0 at any G")),
                   (value is not None and truth is not None and value == truth - 1,
                    "one too small: that G stays just below the target")],
                  "evaluate the formula for each transition's p, average, and raise G until it reaches the target.")


@_state_checked
def check_which_reward_rose(answer: Any, result: Mapping[str, Any] | None) -> bool | None:
    """Exercise (02): after your run with reward="task_specific" (`result`, from
    regime.level_experiment), which rose over the MLE model: "sampled exact", "task reward",
    "both" or "neither" (a mean gain over seeds above 0 counts as rising)."""
    if result is None:
        print("cannot check yet: set EXERCISE_5_RESULT to what regime.level_experiment returned for your run")
        return None
    word = _word(answer)
    names = {"sampled exact": "sampled", "exact": "sampled", "task reward": "reward",
             "task specific": "reward", "task specific reward": "reward", "both": "both", "neither": "neither"}
    if word not in names:
        return _cannot_read(answer, '"sampled exact", "task reward", "both" or "neither"')
    try:
        rose = {key: result["gain"][key]["mean"] > 0 for key in ("sampled", "reward")}
    except (KeyError, TypeError):
        print("cannot check: `result` should be what regime.level_experiment returned for your run")
        return False
    truth = ("both" if all(rose.values()) else "neither" if not any(rose.values())
             else "sampled" if rose["sampled"] else "reward")
    given = names[word]
    return _judge(given == truth, answer, "what your run's mean gains over seeds say",
                  [(given == "both" and truth == "reward",
                    ("partial credit can rise while exact match does not: more properties right is not the whole "
                     "state right"))],
                  "read result['gain']['sampled'] and result['gain']['reward'].")


@_state_checked
def check_token_weight_ratio(answer: Any, lengths: Sequence[int] = (10, 30), loss_type: str = "grpo") -> bool | None:
    """Exercise (02): under `loss_type`, how many times more gradient weight does one token of the
    shorter completion get than one token of the longer one (same |advantage|)?"""
    value = _read(answer, "a number (a ratio)")
    short, long_ = min(lengths), max(lengths)
    # "grpo": each sequence's token losses are averaged over its own length, so a token weighs 1/|o_i|;
    # "dapo" (and "dr_grpo"): one normaliser for every token of the batch, so all tokens weigh the same.
    truth = long_ / short if loss_type == "grpo" else 1.0
    return _judge(_rounded(value, truth), answer, f"the weight ratio under loss_type={loss_type!r}",
                  [(_rounded(value, short / long_) and not _rounded(truth, short / long_),
                    "inverted: the shorter completion's tokens weigh more"),
                   (loss_type == "grpo" and _rounded(value, 1.0),
                    "that is 'dapo': 'grpo' averages each completion over its own length first")],
                  "write each token's weight in the loss: 1/|o_i| per sequence, or 1/Σ|o_i| for the batch.")


def _failed_share(acting: Mapping[str, Any], arm: str, mode: str) -> float | None:
    """The share of failed steps of `arm` (`mode`: "greedy" or "sampled") in an agent's `acting`
    (:func:`wmkit.rwml.agent.run_rwml_agent_seed`), or None when it has none (no step taken)."""
    return _number(acting[arm][mode]["invalid_share"])


@_state_checked
def check_failed_step_difference(answer: Any, acting: Mapping[str, Any] | None) -> bool | None:
    """Exercise (02, read off a run): the measure of ``rwml.invalid_actions`` in one seed of the
    agent that predicts and acts: the RWML model's share of failed steps, sampled at T = 1, minus its
    warm-up's (`acting`: that seed's ``acting``, :func:`wmkit.rwml.agent.run_rwml_agent_seed`)."""
    value = _read(answer, "a number (a difference of two shares, in -1..1)")
    if acting is None:
        return _cannot_check("no run of the agent here and no record of one: set RUN_RWML_AGENT = True (or run "
                             "the benchmark's rwml_agent) and run the section again")
    if not isinstance(acting, Mapping):
        return _cannot_check(f"`acting` should be one seed's result['acting'], not {_show(acting)}")
    shares = {(arm, mode): _failed_share(acting, arm, mode) for arm in ("rwml", "warm") for mode in ("greedy", "sampled")}
    if shares[("rwml", "sampled")] is None or shares[("warm", "sampled")] is None:
        print("cannot be checked on this run: a sampled agent took no step (its share of failed steps is undefined)")
        return None
    right = shares[("rwml", "sampled")] - shares[("warm", "sampled")]
    greedy = (None if shares[("rwml", "greedy")] is None or shares[("warm", "greedy")] is None
              else shares[("rwml", "greedy")] - shares[("warm", "greedy")])
    success = _number(acting["rwml"]["sampled"]["success"] - acting["warm"]["sampled"]["success"])
    return _judge(_rounded(value, right), answer, "the RWML model's sampled share of failed steps minus the "
                  "warm-up's",
                  [(greedy is not None and _rounded(value, greedy),
                    "that is the greedy agents' difference; the claim reads the agents sampled at T = 1"),
                   (right != 0 and _rounded(value, -right), "the sign is inverted: RWML's share minus the warm-up's"),
                   (success is not None and _rounded(value, success), "that is a difference of success, not of failed steps"),
                   (_rounded(value, shares[("rwml", "sampled")]), "that is the RWML model's share alone, not a difference")],
                  "read acting['rwml']['sampled'] and acting['warm']['sampled']: failed steps over all steps.")


# ---------------------------------------------------------------- notebooks 02, 03, 04, 06: GRPO by hand vs TRL


def _grpo_record_parts(record: Any) -> tuple[list[float], list[float], list[dict]] | None:
    """(rewards, TRL's advantages, passes) of a `wmkit.core.grpo_step.record_grpo_step` result, or
    None after saying what `record` should be."""
    try:
        rewards = [float(r) for r in record["rewards"]]
        advantages = [float(a) for a in record["advantages"]]
        passes = list(record["passes"])
        assert len(rewards) == len(advantages) >= 2 and len(passes) == 2
        return rewards, advantages, passes
    except (KeyError, TypeError, ValueError, AssertionError):
        print("cannot check: `record` should be what wmkit.core.grpo_step.record_grpo_step returned")
        return None


def _close_all(values: Sequence[float] | None, truth: Sequence[float], tol: float) -> bool:
    return values is not None and len(values) == len(truth) and all(abs(v - t) <= tol for v, t in zip(values, truth))


@_state_checked
def check_grpo_advantages_by_hand(answer: Any, record: Any) -> bool | None:
    """Exercise (02, 03, 04, 06): the advantages of the recorded group, computed by hand from
    ``record["rewards"]`` (in that order), against those TRL logged (``record["advantages"]``)."""
    parts = _grpo_record_parts(record)
    if parts is None:
        return False
    rewards, truth, _ = parts
    values = _read(answer, f"{len(rewards)} numbers, one advantage per reward of record['rewards']", _numbers, len(rewards))
    mean = statistics.fmean(rewards)
    centred = [r - mean for r in rewards]
    population = [c / (statistics.pstdev(rewards) + 1e-4) for c in centred]
    scaled = record.get("scale_rewards", "group") != "none"
    return _judge(_close_all(values, truth, 1e-3), answer,
                  f"the {len(rewards)} advantages TRL logged for this group (scale_rewards={record.get('scale_rewards')!r})",
                  [(scaled and _close_all(values, population, 1e-3),
                    ("population std (dividing by n, numpy's default np.std): TRL divides by n − 1 "
                     "(np.std(r, ddof=1)); WMRL's official code, `wmrl.method.grpo_advantages`, does use n")),
                   (scaled and _close_all(values, centred, 1e-3),
                    "the centred rewards, not yet divided by the group's std (that is scale_rewards='none')"),
                   (_close_all(values, [-t for t in truth], 1e-3), "the sign: a reward above the group mean gets a positive advantage")],
                  "subtract the group's mean reward; then divide by its standard deviation plus 1e-4.")


@_state_checked
def check_grpo_clipped_loss_by_hand(answer: Any, record: Any) -> bool | None:
    """Exercise (02, 03, 04, 06): the loss of the record's *second* pass (after one optimizer step, so the
    ratios are not 1), computed by hand from ``record["passes"][1]`` (its rewards, old and new
    log-probabilities and mask), against the loss TRL computed."""
    parts = _grpo_record_parts(record)
    if parts is None:
        return False
    value = _read(answer, "a number (the loss of record['passes'][1])")
    first, second = parts[2]
    truth = float(second["loss"])
    loss_type, epsilon = record.get("loss_type", "dapo"), float(record.get("epsilon", 0.2))
    scale = record.get("scale_rewards", "group")
    length = record.get("max_completion_length")

    def loss(p: Mapping[str, Any], *, lt: str = loss_type, clip: bool = True, population: bool = False,
             pessimistic: bool = True) -> float:
        a = advantages_by_hand(p["rewards"], scale)
        if population and scale != "none":
            r = [float(x) for x in p["rewards"]]
            a = a * (statistics.stdev(r) + 1e-4) / (statistics.pstdev(r) + 1e-4)
        return clipped_loss_by_hand(p["old_logps"], p["new_logps"], p["mask"], a, epsilon, lt, length, clip, pessimistic)

    tol = 1e-4 + 1e-3 * abs(truth)
    mistakes = [(_close(value, loss(second, clip=False), tol),
                 "no clipping: PPO's clip keeps min(ρ·A, clip(ρ, 1 − ε, 1 + ε)·A), and after a step some ρ left [1 − ε, 1 + ε]"),
                (_close(value, -truth, tol) and abs(truth) > tol,
                 "the sign: the loss is minus the clipped surrogate (descending the loss climbs the objective)"),
                (_close(value, loss(second, population=True), tol),
                 "population std in the advantages (np.std's default): TRL divides by n − 1")]
    mistakes += [(_close(value, loss(second, lt=other), tol) and not _close(loss(second, lt=other), truth, tol),
                  f"that is the {other!r} aggregation; this run's loss_type is {loss_type!r}"
                  + (" (one weight per token of the batch: sum over tokens / number of tokens)"
                     if loss_type in ("dapo", "bnpo") else " (each completion averaged over its own tokens, then the mean)"
                     if loss_type == "grpo" else " (sum over tokens / (G · max_completion_length))"))
                 for other in LOSS_TYPES if other != loss_type and not (other == "dr_grpo" and length is None)]
    mistakes += [(_close(value, float(first["loss"]), tol),
                  "that is the first pass's loss, where every ratio is 1; the exercise asks for passes[1]"),
                 (_close(value, loss(second, pessimistic=False), tol), "max instead of min: the clip is pessimistic, it keeps the smaller objective")]
    return _judge(_close(value, truth, tol), answer, f"the loss TRL computed on the second pass (loss_type={loss_type!r}, ε={epsilon:g})",
                  mistakes, "ρ = exp(new − old) per token; −min(ρ·A, clip(ρ, 1 − ε, 1 + ε)·A); then aggregate as the loss_type says.")


# ---------------------------------------------------------------- notebook 03


@_state_checked
def check_group_rewards(answer: Any, successes: Sequence[float], lengths: Sequence[float],
                        calls: Sequence[float], max_steps: int) -> bool | None:
    """Exercise (03): the composite rewards of one group, computed by hand."""
    values = _read(answer, f"a list of {len(successes)} numbers, one reward per rollout", _numbers, len(successes))

    def matches(rewards: Sequence[float]) -> bool:
        return _close_all(values, rewards, 1e-3)

    truth = composite_rewards(successes, lengths, calls, max_steps=max_steps)
    return _judge(matches(truth), answer, f"{len(truth)} composite rewards R = R_succ + 0.5·R_L + 0.1·R_WM",
                  [(matches(composite_rewards(successes, lengths, calls, max_steps=max_steps, beta=1.0, gamma=1.0)),
                    "the weights are missing: R_L counts 0.5 and R_WM 0.1"),
                   (matches(composite_rewards(successes, lengths, calls, max_steps=max_steps, gamma=0.0)),
                    "the world-model-call term R_WM is missing")],
                  "p, L_ref and the budget first; then λ = (len − budget)/budget per rollout; the same for the "
                  "calls with n_max = 5.")


@_state_checked
def check_call_term(answer: Any, successes: Sequence[float], calls: Sequence[float], n_max: int = 5) -> bool | None:
    """Exercise (03): the world-model-call term R_WM of one group, computed by hand."""
    values = _read(answer, f"a list of {len(calls)} numbers, one R_WM per rollout", _numbers, len(calls))

    def matches(rewards: Sequence[float]) -> bool:
        return _close_all(values, rewards, 1e-3)

    truth = wm_call_rewards(successes, calls, n_max=n_max)
    flags = [bool(s) for s in successes]
    budget_max = max(1.0, float(max(calls)))
    as_successes = [max(-0.5 * (c - n_max) / n_max + 0.5, 0.1) for c in calls]
    group_max_budget = [(max(-0.5 * (c - budget_max) / budget_max + 0.5, 0.1) if f
                         else min(0.9 * (c - budget_max) / budget_max - 0.1, -0.1)) for f, c in zip(flags, calls)]
    no_clip = [0.9 * (c - n_max) / n_max - 0.1 for c in calls]
    return _judge(matches(truth), answer, f"R_WM of {len(truth)} rollouts (n_max = {n_max})",
                  [(matches(as_successes), "these rollouts failed: a failure's shape is min(0.9λ − 0.1, −0.1)"),
                   (not any(flags) and matches(group_max_budget),
                    "with no success the budget is n_max, not the group's most calls (N_ref only counts with p > 0)"),
                   (matches(no_clip), "a failure's R_WM is capped at −0.1 (min with −0.1)")],
                  "p = share of successes; budget = p·N_ref + (1 − p)·n_max; λ = (calls − budget)/budget.")


DIRECTIONS = {"more": "more", "up": "more", "more calls": "more", "increase": "more", "higher": "more",
              "fewer": "fewer", "less": "fewer", "down": "fewer", "fewer calls": "fewer", "decrease": "fewer",
              "lower": "fewer", "neither": "neither", "none": "neither", "no change": "neither"}
"""Words :func:`check_call_direction` reads, to one of "more", "fewer", "neither"."""


@_state_checked
def check_call_direction(answer: Any, successes: Sequence[float], calls: Sequence[float], n_max: int = 5) -> bool | None:
    """Exercise (03): which way GRPO's call term moves the imagined calls of this group: "more",
    "fewer" or "neither" (the rollout with the larger R_WM gets the larger advantage, other
    terms equal)."""
    word = DIRECTIONS.get(_word(answer) or "")
    if word is None:
        return _cannot_read(answer, '"more", "fewer" or "neither"')
    rewards = wm_call_rewards(successes, calls, n_max=n_max)
    most, fewest = max(range(len(calls)), key=lambda i: calls[i]), min(range(len(calls)), key=lambda i: calls[i])
    gap = rewards[most] - rewards[fewest]
    truth = "more" if gap > 1e-12 else "fewer" if gap < -1e-12 else "neither"
    return _judge(word == truth, answer, "the direction of the calls the group's R_WM rewards",
                  [(word != truth and word != "neither",
                    ("compare the R_WM of the rollout with the most calls with that of the one with the fewest: "
                     "GRPO raises the probability of the rollout with the larger reward, even when both are negative")),
                   (word == "neither", "the two rollouts' R_WM differ, so their advantages differ")],
                  "GRPO pushes toward the rollout whose reward is larger.")


@_state_checked
def check_turn_kind(answer: Any, text: str) -> bool | None:
    """Exercise (03): what kind of turn a text is ('action', 'imagine' or 'invalid')."""
    from wmkit.wm_r1 import agent as ag  # here: it imports torch (2 s), this module does not

    if not isinstance(text, str):
        return _cannot_check(f"`text` should be the turn's text (a string), not {_show(text)}")
    choices = ("action", "imagine", "invalid")
    word = _word(answer)
    word = {"imagined": "imagine", "imagination": "imagine", "final action": "action"}.get(word, word)
    if word not in choices:
        return _cannot_read(answer, f"one of {', '.join(map(repr, choices))}")
    truth = ag.parse_turn(text).kind
    # (truth, given) -> why the given kind is wrong, without naming the right one
    diagnoses = {
        ("imagine", "action"): "call_wm(...) inside a thought is not an Action: line",
        ("imagine", "invalid"): "call_wm(...) with an action that parses is not a failure",
        ("action", "imagine"): "reread the order in which parse_turn looks at a turn's lines",
        ("invalid", "action"): "does the Action: line's action parse as a phone action?",
        ("invalid", "imagine"): "does the action inside call_wm(...) parse as a phone action?",
    }
    return _judge(word == truth, answer, "the kind parse_turn gives this text",
                  [(True, diagnoses[(truth, word)])] if (truth, word) in diagnoses else [],
                  "an Action: line wins; call_wm(...) without one is imagined; anything else fails.")


@_state_checked
def check_no_signal(answer: Any) -> bool | None:
    """Exercise (03): does a group in which every rollout failed with the same length teach GRPO anything?"""
    value = _read(answer, "True or False", _boolean)
    return _judge(value is False, answer, "whether the group gives GRPO a gradient (True/False)",
                  [(value is True, ("equal lengths and equal calls give equal rewards, so every advantage "
                                   "(r − mean)/(std + ε) is 0: the penalties are the same for all"))])


@_state_checked
def check_break_even_latency(answer: Any, throughput: Sequence[Mapping[str, Any]]) -> bool | None:
    """Exercise (03): the device latency (s per batched simulator step) at which world-model
    transitions and simulator transitions take the same time per agent step, from the throughput rows.

    A simulator step costs ``seconds/agent_steps + L·batched_step_calls/agent_steps``; a
    world-model step ``seconds/agent_steps``. Negative means the world model is faster even on
    an instant device."""
    value = _read(answer, "a number of seconds")
    rows = {row["transitions"]: row for row in throughput or [] if isinstance(row, Mapping)}
    if not {"simulator", "world_model"} <= set(rows):
        return _cannot_check("`throughput` should be section 11's table: one row of simulator and one of "
                             f"world-model transitions; given {_show(throughput)}")
    sim, wm = rows["simulator"], rows["world_model"]
    if not sim["batched_step_calls"] or not sim["agent_steps"] or not wm["agent_steps"]:
        print("cannot be checked on this run: the simulator was never stepped (every action failed to parse, "
              "as an untrained `smoke` policy does); run at `cpu`")
        return None
    wm_per_step = wm["seconds"] / wm["agent_steps"]
    sim_per_step = (sim["seconds"] - sim["device_latency_s"] * sim["batched_step_calls"]) / sim["agent_steps"]
    truth = (wm_per_step - sim_per_step) * sim["agent_steps"] / max(1, sim["batched_step_calls"])
    tol = max(0.1 * abs(truth), 1e-3)
    return _judge(_close(value, truth, tol), answer, "the break-even latency in seconds per batched device step (±10%)",
                  [(_close(value, wm_per_step - sim_per_step, tol) and sim["batched_step_calls"] != sim["agent_steps"],
                    ("that is per agent step; one device step serves a whole batch of episodes "
                    "(agent_steps / batched_step_calls of them)")),
                   (_close(value, wm["seconds"] / max(sim["seconds"], 1e-9), tol),
                    "a ratio of the two times is not a latency")],
                  "write both times per agent step, add L·(batched calls / agent steps) to the simulator's, solve.")


# ---------------------------------------------------------------- notebook 03: the ablations where WM-R1 learns


@_state_checked
def check_imagined_calls_measure(answer: Any, result: Mapping[str, Any] | None) -> bool | None:
    """Exercise (03): the value the claim ``wm_r1.imagined_calls`` reads in one seed of
    ``wm_r1_learned_ablations`` (`result`): WM-R1's sampled (T = 1) success − the arm without
    ``call_wm``'s. Greedy agents make no call when they are judged, so only the sampled difference
    shows imagination at work when the agent acts; the claim's own fields give the truth."""
    from wmkit.bench.claims import CLAIMS, claim_value  # here: the claims import every paper's registry

    if result is None:
        print("cannot check yet: ABLATION_RESULT is None (no record shipped and none run here); set "
              "RUN_ABLATIONS = True and run section 10")
        return None
    value = _read(answer, "a number (a difference of two success rates)")
    claim = next(c for c in CLAIMS if c.id == "wm_r1.imagined_calls")
    truth = claim_value(claim, result)
    if truth is None:
        return _cannot_check("`result` has no sampled success for both arms: it should be one seed of "
                             f"wm_r1_learned_ablations; given {_show(result)}")
    arms = result["arms"]
    greedy = arms["wm_r1"]["greedy"]["success"] - arms["no_imagine"]["greedy"]["success"]
    against_start = arms["wm_r1"]["sampled"]["success"] - result["start"]["sampled"]["success"]
    against_best = arms["wm_r1"]["sampled"]["success"] - arms["best_of_k"]["success"]
    return _judge(_rounded(value, truth), answer,
                  "WM-R1 − the arm without call_wm, success in the mode whose agents call when judged",
                  [(_rounded(value, greedy), ("that is the greedy difference: a greedy agent makes no call when "
                                              "it is judged, so it shows what training did, not imagining at work")),
                   (_rounded(value, -truth), "the sign: the claim reads WM-R1 minus the arm without call_wm"),
                   (_rounded(value, against_start), "that is WM-R1 against its start, not the arm without call_wm"),
                   (_rounded(value, against_best), "that is WM-R1 against best-of-K, the vs_simulation claim's arm"),
                   (_rounded(value, 100 * truth) and truth != 0, "a percentage: success rates here are shares")],
                  "read result['arms'][arm][mode]['success'] for both arms, in the mode whose agents call.")


# ---------------------------------------------------------------- notebook 04


@_state_checked
def check_affine_answer(answer: Any) -> bool | None:
    """Exercise (04): every reward of a group becomes 5·r + 1; by what *factor* is each GRPO advantage
    multiplied (ignoring ε)? Asked as a factor, so that "unchanged" has one number."""
    value = _read(answer, "a number (the factor that multiplies each advantage)")
    return _judge(_rounded(value, 1.0), answer, "the factor new advantage / old advantage (ignoring ε)",
                  [(_rounded(value, 5.0) or _rounded(value, 6.0),
                    "the ×5 scales the std by 5 too, and the standardization divides by the std"),
                   (_rounded(value, 0.0), ("a factor of 0 would make every advantage 0: the question asks what "
                                           "multiplies each advantage, not by how much it moves")),
                   (_rounded(value, 0.2), "the ×5 scales the centred reward by 5 as well as the std")],
                  "write the new mean and the new std of the group in terms of the old ones.")


@_state_checked
def check_fused_variance(answer: Any, v_e: float, v_wm: float) -> bool | None:
    """Exercise (04): the variance of the inverse-variance fusion of two estimates."""
    value = _read(answer, "a number (a variance)")
    truth = fuse_estimates(0.0, v_e, 0.0, v_wm)[1]
    # checked first: with V_WM = 3·V_E the plain average's variance (V_E + V_WM)/4 *is* V_E, and
    # "just use the anchors" must not be called "the plain average"
    return _judge(_rounded(value, truth), answer, "the variance of the fused estimate",
                  [(_rounded(value, min(v_e, v_wm)),
                    ("that is the better estimate used alone; adding an independent unbiased estimate, however "
                     "noisy, lowers the variance below either")),
                   (_rounded(value, max(v_e, v_wm)), "that is the noisier estimate used alone"),
                   (_rounded(value, 1 / v_e + 1 / v_wm), "that is the fused *precision*; the variance is its inverse"),
                   (_rounded(value, (v_e + v_wm) / 2), "the average of the two variances is no variance of any combination"),
                   (_rounded(value, v_e + v_wm), ("variances add for a sum of independent estimates, not for their "
                                                  "weighted mean")),
                   (_rounded(value, (v_e + v_wm) / 4), ("that is the variance of the plain average of the two "
                                                        "estimates, which weights them equally"))],
                  "precisions (1/variance) add.")


@_state_checked
def check_rollout_weight(answer: Any, n_anchor: int, n_wm: int, v_e: float, v_wm: float) -> bool | None:
    """Exercise (04): the weight on each anchor rollout that makes the per-rollout sum the fused
    estimator, given the variances ``v_e``, ``v_wm`` of the two *group means*."""
    value = _read(answer, "a number (a weight)")
    truth = rollout_weight(n_anchor * v_e, n_wm * v_wm)  # per-rollout variances σ² = n·V
    tol = max(0.5 * 10 ** -DECIMALS, 1e-3 * truth)
    return _judge(_close(value, truth, tol), answer, "the weight w on each anchor rollout",
                  [(_close(value, v_wm / v_e, tol), ("V_WM/V_E is the ratio of the group means' variances; per rollout "
                                                    "the weight is the ratio of one rollout's variances")),
                   (_close(value, v_e / v_wm, tol) or _close(value, n_anchor * v_e / (n_wm * v_wm), tol),
                    "upside down: the clean anchors get the larger weight"),
                   (_close(value, (n_anchor / n_wm) * v_wm / v_e, tol), ("the rollout counts are upside down: "
                                                                        "σ² = n·V for a mean of n rollouts"))],
                  "write each group mean's variance as σ²/n and match the per-rollout sum to the fused estimator.")


def strong_distortion_differences(sizes: Any, seeds: Sequence[int] = (0, 1, 2, 3, 4)) -> list[float]:
    """Per seed: final J of 'debias only' minus final J of 'no correction', on the controlled
    problem with the world model's distortion turned up to r³ (a few seconds per seed)."""
    differences = []
    for seed in seeds:
        env = ControlledBandit(seed=seed)
        wm = HandmadeWorldModel(env, seed=seed, **{**CONTROLLED_WM, "exponent": 3.0})
        logs = run_arms(env, {"handmade": wm}, sizes.bandit,
                        {"none": {"arm": "wmrl", "debias": False, "denoise": False},
                         "debias": {"arm": "wmrl", "debias": True, "denoise": False}}, seed)
        differences.append(logs["debias"].final_value - logs["none"].final_value)
    return differences


@_state_checked
def check_strong_distortion_answer(answer: Any, sizes: Any, seeds: Sequence[int] = (0, 1, 2, 3, 4),
                                   differences: Sequence[float] | None = None) -> bool | None:
    """Exercise (04): with f(r) = r³, the verdict over `seeds` of the claim "debias only ends
    closer to J* than no correction" (one of the verdicts of :data:`wmkit.stats.VERDICTS`).

    One seed's answer flips with the seed, so the question is asked over seeds: the checker runs
    both arms on each seed (or takes the per-seed `differences`) and applies the kit's rule."""
    word = _word(answer)
    if word not in VERDICTS:
        return _cannot_read(answer, f"one of the verdicts {', '.join(map(repr, VERDICTS))}")
    if differences is None:
        differences = strong_distortion_differences(sizes, seeds)
    differences = [_number(d) for d in differences]
    if sum(d is not None for d in differences) < 2:
        return _cannot_check("a verdict over seeds needs the differences of at least two seeds")
    judged = verdict(differences, "higher", 0.0)
    print("final J, debias only − no correction, per seed:",
          ", ".join("—" if d is None else f"{d:+.4f}" for d in differences))
    ok = _judge(word == judged.verdict, answer, "the verdict of these seeds by the kit's rule",
                  [(word == "reproduced" and judged.verdict == "inconclusive",
                    "some seeds favour debiasing, but the interval over seeds covers 0"),
                   (word == "reproduced" and judged.verdict == "contradicted",
                    ("r³ squeezes the bottom half of the real range into a sliver that the noise drowns: "
                    "no monotone map can recover it"))],
                  "compute the 95% t-interval of the per-seed differences and see where 0 lies.")
    if ok:  # the rule's reason only once the reader has found the verdict, so it never gives it away
        print(f"  the kit's rule: {judged.reason}")
    return ok


@_state_checked
def check_sweep_crossing(answer: Any, arms: Mapping[str, Any], fractions: Sequence[float]) -> bool | None:
    """Exercise (04): the smallest anchor fraction of check 4's sweep at which WMRL's mean final gap
    is below anchors-only's ("none" if there is none)."""
    value = None if _word(answer) == "none" else _number(answer)
    if value is None and _word(answer) != "none":
        return _cannot_read(answer, "one of the sweep's fractions or 'none'")
    fractions = [float(f) for f in fractions]
    missing = [f for f in fractions for arm in ("WMRL", "anchors only") if f"{arm} @{f:g}" not in (arms or {})]
    if not fractions or missing:
        return _cannot_check("`arms` should hold check 4's sweep (the arms 'WMRL @f' and 'anchors only @f' of "
                             "every fraction f); run check 4 first")
    crossing = [f for f in fractions
                if arms[f"WMRL @{f:g}"]["final_gap"]["mean"] < arms[f"anchors only @{f:g}"]["final_gap"]["mean"]]
    truth = min(crossing) if crossing else None
    ok = (truth is None and value is None) or (truth is not None and _close(value, truth, 1e-9))
    return _judge(ok, answer, f"a fraction of the sweep {list(fractions)}, or 'none'",
                  [(value is not None and truth is not None and value == max(crossing),
                    "the largest such fraction; the question asks for the smallest"),
                   (value is not None and value not in fractions, "not one of the sweep's fractions")],
                  "compare the two arms' mean final gaps at each fraction; smaller gap is better.")


# ---------------------------------------------------------------- notebook 05


@_state_checked
def check_interval_answer(answer: Any, values: Sequence[float]) -> bool | None:
    """Exercise (05): the 95% t-interval of `values`, as (low, high)."""
    pair = _read(answer, "two numbers: (low, high)", _numbers, 2)
    values = [v for v in (_number(v) for v in (values or [])) if v is not None]
    s = summarize(values)
    if s["ci_low"] is None or s["std"] == 0:
        return _cannot_check("an interval needs at least two values that differ; one value has no spread")
    n, mean = len(values), statistics.fmean(values)

    def interval_is(half: float) -> bool:
        return _rounded(min(pair), mean - half) and _rounded(max(pair), mean + half)

    t = t_quantile(0.95, n - 1)
    ok = _rounded(pair[0], s["ci_low"]) and _rounded(pair[1], s["ci_high"])
    return _judge(ok, answer, "(low, high) of the 95% t-interval",
                  [(interval_is(t * s["std"] / math.sqrt(n)), "the numbers are right but in the wrong order: (low, high)"),
                   (interval_is(t * statistics.pstdev(values) / math.sqrt(n)),
                    "population std (dividing by n): the kit's std divides by n − 1"),
                   (interval_is(1.96 * s["std"] / math.sqrt(n)),
                    f"z = 1.96 is for many seeds; with {n} the t quantile with {n - 1} degrees of freedom is wider"),
                   (interval_is(t * s["std"]), "the half-width divides the std by √n")],
                  "mean ± t·s/√n with the sample std s and t(0.975, n − 1).")


@_state_checked
def check_verdict_answer(answer: Any, values: Sequence[float], direction: str = "higher",
                         threshold: float = 0.0) -> bool | None:
    """Exercise (05): the verdict of a claim whose per-seed values are `values`."""
    word = _word(answer)
    if word not in VERDICTS:
        return _cannot_read(answer, f"one of the verdicts {', '.join(map(repr, VERDICTS))}")
    judged = verdict(values, direction, threshold)  # None (a seed without a value) is left out
    truth = judged.verdict
    mean = judged.summary["mean"] if judged.summary.get("mean") is not None else threshold
    paper_side = (mean > threshold) if direction == "higher" else (mean < threshold)
    return _judge(word == truth, answer, "the verdict by the kit's rule",
                  [(word == "reproduced" and truth == "inconclusive" and paper_side,
                    "the mean is on the paper's side, but the interval crosses the line"),
                   (word in ("inconclusive", "reproduced", "contradicted") and truth == "not measured",
                    "one value, or identical values, give no interval: nothing was measured"),
                   (word == "contradicted" and truth == "inconclusive",
                    "contradicted needs the whole interval on the other side")],
                  "where is the 95% interval: wholly on the paper's side, across the line, wholly on the "
                  "other side — or is there no interval at all?")


def seeds_needed(mean: float, std: float, threshold: float = 0.0, quantile: Callable[[int], float] | None = None,
                 max_seeds: int = 10_000) -> int | None:
    """Smallest n ≥ 2 whose 95% half-width ``q(n)·std/√n`` is below ``|mean − threshold|``,
    with ``q(n) = t(0.975, n − 1)`` by default; None when no n up to `max_seeds` does."""
    quantile = quantile or (lambda n: t_quantile(0.95, n - 1))
    gap = abs(mean - threshold)
    for n in range(2, max_seeds + 1):
        if quantile(n) * std / math.sqrt(n) < gap:
            return n
    return None


@_state_checked
def check_seeds_needed(answer: Any, mean: float, std: float, threshold: float = 0.0) -> bool | None:
    """Exercise (05): how many seeds would make an interval with this mean and std clear the line?"""
    never = _word(answer) in ("none", "never", "no n")
    value = None if never else _integer(answer)
    if value is None and not never:
        return _cannot_read(answer, 'a whole number of seeds, or "none" if no number of seeds does')
    truth = seeds_needed(mean, std, threshold)
    with_z = seeds_needed(mean, std, threshold, quantile=lambda n: 1.96)
    ok = value == truth  # "none" (value None) is right exactly when no n clears the line
    return _judge(ok, answer, 'the smallest number of seeds whose interval clears the line (or "none")',
                  [(never and truth is not None, "some number of seeds does clear the line: the mean is off it"),
                   (value is not None and truth is None and mean == threshold,
                    "the mean sits on the line: no interval around it can lie wholly on one side"),
                   (value == with_z and with_z != truth,
                    "z = 1.96 instead of t(0.975, n − 1): with few seeds the t quantile is larger"),
                   (truth is not None and value == truth - 1,
                    "one short: at that n the half-width t·s/√n is not yet below |mean|")],
                  "try n = 2, 3, ...: the half-width is t(0.975, n − 1)·s/√n; stop when it is below |mean − line|.")


@_state_checked
def check_missing_record_verdict(answer: Any) -> bool | None:
    """Exercise (05): the verdict of a row whose run record was deleted."""
    word = _word(answer)
    if word not in VERDICTS:
        return _cannot_read(answer, f"one of the verdicts {', '.join(map(repr, VERDICTS))}")
    return _judge(word == "not measured", answer, "the verdict of a row without its run record",
                  [(word == "inconclusive", ("inconclusive needs an interval that covers the line; without a "
                                            "record there is no number at all")),
                   (word in ("reproduced", "contradicted"),
                    "the table shows a number only while the record that made it exists")])


# ---------------------------------------------------------------- notebook 06


@_state_checked
def check_red_pixel_l1(answer: Any) -> bool | None:
    """Exercise (06): the L1 reward distance between a black 4x4 RGB frame and the same frame with one
    pixel pure red (255, 0, 0), pixels scaled to 0..1 (`wmkit.video.model.l1_distance`)."""
    import numpy as np

    value = _read(answer, "a number (the mean absolute difference, in 0..1)")
    black = np.zeros((4, 4, 3), np.uint8)
    red = black.copy()
    red[0, 0, 0] = 255
    right = l1_distance(black, red)
    return _judge(_rounded(value, right), answer, "the mean over all 48 values (16 pixels x 3 channels)",
                  [(_rounded(value, 1 / 16), "the pixel is wrong in one channel of three, not wholly wrong"),
                   (_close(value, 255 * right, 1e-2), "the pixels were not scaled to 0..1 (divide by 255)"),
                   (_rounded(value, 1 / 3), "that is the pixel's own error; the mean runs over every pixel")],
                  "count the values that differ and by how much, then divide by how many values there are.")


@_state_checked
def check_completion_budget(answer: Any, grid_cells: int = 8) -> bool | None:
    """Exercise (06): `max_completion_length` GRPO needs for a `grid_cells` x `grid_cells` MiniGrid frame
    with one code per cell (patch = tile size): every code plus the end-of-frame token."""
    value = _read(answer, "a whole number of tokens", _integer)
    right = grid_cells * grid_cells + 1
    return _judge(value == right, answer, f"the tokens of one {grid_cells}x{grid_cells} frame's completion",
                  [(value == right - 1, ("a completion must also be able to stop: look at what section 3's "
                                         "example completion ends with")),
                   (value == grid_cells * grid_cells * 64 + 1 or value == grid_cells * 8 * grid_cells * 8,
                    "one code per *cell* (an 8x8 patch), not per pixel")],
                  "one code per grid cell, then the end-of-frame token.")


@_state_checked
def check_zero_signal_share(answer: Any, zero_std_share: Sequence[float]) -> bool | None:
    """Exercise (06, read off the run): the mean share of GRPO groups whose rewards were all equal
    (no advantage, no gradient) over the logged steps of one RL run (`zero_std_share`)."""
    value = _read(answer, "a number in [0, 1] (a share of groups)")
    if zero_std_share is None or isinstance(zero_std_share, (str, bytes, Mapping)):
        return _cannot_check("`zero_std_share` should be the run's curve, runs[0]['arms']['all']['zero_std_share']")
    values = [float(v) for v in zero_std_share]  # a list or a numpy array (`not array` would raise)
    if not values:
        print("the run logged no steps: nothing to check against")
        return None
    right = statistics.fmean(values)
    return _judge(_rounded(value, right), answer, "the mean of the run's logged frac_reward_zero_std",
                  [(_rounded(value, 1 - right), "that is the share of groups *with* a signal")],
                  "the run's `zero_std_share` curve holds one value per logged step.")


# ---------------------------------------------------------------- concept questions (every notebook)


@dataclass(frozen=True)
class Concept:
    """A multiple-choice question on one section's idea, written in the notebook's markdown as
    ``question (a) … (b) …`` (tests/test_exercises_solutions.py checks the two agree)."""

    question: str
    choices: dict[str, str]
    """letter -> the choice's text."""
    answer: str
    why_not: dict[str, str]
    """wrong letter -> what is wrong with it, without naming the right one."""


CONCEPTS: dict[str, Concept] = {
    "01.split": Concept(
        "Why is the data split by episode rather than by transition?",
        {"a": "so that the test set is larger", "b": "because episodes differ in length",
         "c": "transitions of one episode share states, so a transition split lets test states into training",
         "d": "it makes training faster"},
        "c", {"a": "the split's size can be the same either way",
              "b": "length does not decide what the model may have seen",
              "d": "the split changes what is tested, not how fast training runs"}),
    "01.changed": Concept(
        "A world model is exact on 85% of all test transitions. What do you look at first?",
        {"a": "its training loss", "b": "its accuracy on changed transitions, beside 'no change'",
         "c": "its sampled accuracy", "d": "its partial credit on unchanged transitions"},
        "b", {"a": "a low loss can still come from copying the state",
              "c": "sampling cannot tell you whether 85% is more than copying gives",
              "d": "on unchanged transitions 'no change' is exact by construction"}),
    "01.compound": Concept(
        "Why does exactness fall with the rollout horizon k?",
        {"a": "the prompt grows too long", "b": "sampling noise averages out over steps",
         "c": "the model forgets the action", "d": "a state with one wrong field is fed back, and every later step starts from it"},
        "d", {"a": "each step's prompt holds one state, not the history",
              "b": "noise does not average out when each prediction is the next input",
              "c": "the action is in every step's prompt"}),
    "02.zero_group": Concept(
        "A group's four rewards are all 0.3. What does GRPO's update do with it?",
        {"a": "raises all four samples a little", "b": "lowers all four", "c": "nothing: every advantage is 0",
         "d": "it depends on ε"},
        "c", {"a": "the advantage is the reward minus the group's mean",
              "b": "the advantage is the reward minus the group's mean",
              "d": "the clip only acts on a non-zero advantage"}),
    "02.signal": Concept(
        "On the largest world RL barely moves the model, though the verifier is right. Why?",
        {"a": "the model almost never samples the exact next state, so groups have no reward spread",
         "b": "the learning rate is too small", "c": "the verifier is too lenient", "d": "the KL term pulls it back"},
        "a", {"b": "a larger step on zero advantages is still zero",
              "c": "this section's reward is exact match, the strictest",
              "d": "the KL term only acts once something moves the model"}),
    "02.sharpen": Concept(
        "If RL only sharpens what the MLE model already samples, what happens to pass@k at large k?",
        {"a": "it rises with pass@1", "b": "it becomes 1", "c": "it equals pass@1",
         "d": "it stays at the MLE model's, or falls below it"},
        "d", {"a": "many samples already found what RL makes more likely",
              "b": "transitions the model never samples right stay wrong",
              "c": "pass@k never falls below pass@1"}),
    "02.verifier": Concept(
        "RL with a lenient check (names not checked) gains on that check, not on exact match. What did it learn?",
        {"a": "the game's dynamics", "b": "to copy the state", "c": "nothing",
         "d": "predictions the check accepts and exact match rejects"},
        "d", {"a": "learned dynamics would raise exact match too",
              "b": "copying would lower the check's reward on changed transitions",
              "c": "its reward on the check rose"}),
    "03.judge": Concept(
        "While WM-R1 trains, where does the success reward come from?",
        {"a": "the real simulator", "b": "the world model's judgment of its own predicted final screen",
         "c": "the SFT data", "d": "a human label"},
        "b", {"a": "the simulator only evaluates the trained agent",
              "c": "the reference episodes only make the start",
              "d": "no label is asked for during training"}),
    "03.ladder": Concept(
        "Why train inside a noisy oracle whose error p is a dial?",
        {"a": "it is faster than a learned world model",
         "b": "to see how success depends on fidelity, apart from any one world model",
         "c": "the paper does", "d": "notebook 01's model cannot predict screens"},
        "b", {"a": "speed is not what the ladder measures",
              "c": "the paper trains in a learned world model",
              "d": "it can; how well is what the ladder puts on one axis"}),
    "03.precision": Concept(
        "A world model judges 95% of failures and all successes right, but 10% of episodes succeed. "
        "Why are many judged successes false?",
        {"a": "GRPO overfits", "b": "the model is biased towards success",
         "c": "5% of the 90% failures is a large share of the judged successes",
         "d": "precision does not depend on how often episodes succeed"},
        "c", {"a": "the judging happens before any update",
              "b": "95% and 100% right are nearly symmetric errors",
              "d": "write precision as s·a / (s·a + (1 − s)(1 − b)) and vary s"}),
    "04.affine": Concept(
        "Why must a debiasing map be non-affine to change GRPO's update?",
        {"a": "isotonic maps are non-affine", "b": "affine maps are not monotone",
         "c": "anchors are affine", "d": "GRPO standardizes each group, which removes any positive scale and shift"},
        "d", {"a": "that says what the map is, not why an affine one would not matter",
              "b": "an affine map with a positive slope is monotone",
              "c": "anchors are real executions, not a map"}),
    "04.floor": Concept(
        "Why does pure world-model RL have a floor that more steps do not lower?",
        {"a": "the world model's bias is in every update, whatever the step",
         "b": "the step size is too large", "c": "the policy is too small", "d": "there are too few seeds"},
        "a", {"b": "a smaller step reaches the same floor, slower",
              "c": "the controlled problem's optimum is in the policy's reach",
              "d": "more seeds narrow the interval around the floor, not the floor"}),
    "04.anchors_only": Concept(
        "What does the 'anchors only' control tell you that real execution does not?",
        {"a": "the world model's bias", "b": "whether the world-model groups add anything beyond the anchors' real gradient",
         "c": "the cost of real execution", "d": "the optimum J*"},
        "b", {"a": "anchors only uses no world model at all",
              "c": "real execution's cost is measured in its own arm",
              "d": "J* is known from the problem, not from an arm"}),
    "05.smaller": Concept(
        "Over its seeds a claim's 95% interval is [−0.02, +0.05]; the paper's effect in the kit's units is "
        "+0.45. What is its verdict?",
        {"a": "reproduced", "b": "contradicted", "c": "smaller than the paper's effect", "d": "inconclusive"},
        "c", {"a": "the interval covers 0, so the direction is not established",
              "b": "the interval reaches above 0 as well as below it",
              "d": "more seeds could not bring it up to the paper's size: the interval already stops far short of it"}),
    "05.confirmatory": Concept(
        "Why does the headline count only records made on confirmatory seeds?",
        {"a": "there are more of them",
         "b": "a regime or seed count chosen on some seeds, then judged on the same seeds, has no known error rate",
         "c": "they were run on a faster machine", "d": "exploratory records come from an older library"},
        "b", {"a": "how many seeds there are does not decide which ones may be counted",
              "c": "the machine changes the time a run takes, not what its verdict means",
              "d": "both kinds of record are made at the same library version"}),
    "05.acted": Concept(
        "RL left a model's parameters unchanged; its arm is 0.04 below the control on every seed. What is the verdict?",
        {"a": "contradicted", "b": "reproduced", "c": "inconclusive", "d": "not measured: the method did not act"},
        "d", {"a": "a difference the method did not cause cannot speak against the method",
              "b": "nothing the method did can make a difference here, whichever side it lies on",
              "c": "more seeds would not make an unchanged model say anything about the method"}),
    "06.codebook": Concept(
        "Why does the tokenizer's error not count against the world model here?",
        {"a": "the world model predicts pixels", "b": "L1 ignores it",
         "c": "the codebook rebuilds MiniGrid's test frames exactly", "d": "it is subtracted from the reward"},
        "c", {"a": "it predicts codes, decoded by the codebook",
              "b": "L1 compares decoded pixels, error and all",
              "d": "no term of the reward removes it"}),
    "06.hack": Concept(
        "Under −L1 alone, why is erasing the agent cheaper than drawing it in the wrong cell?",
        {"a": "the agent is red", "b": "an erased agent is wrong in one cell, a misplaced one in two",
         "c": "L1 ignores colour", "d": "erasing is never cheaper"},
        "b", {"a": "its colour does not change how many values differ",
              "c": "L1 averages every channel of every pixel",
              "d": "count the cells that differ from the truth in each case"}),
    "06.std": Concept(
        "How can one garbage sample drown the differences between a group's good frames?",
        {"a": "its reward is 0", "b": "the clip removes the others",
         "c": "GRPO divides by the group's std, which the garbage inflates", "d": "the KL term"},
        "c", {"a": "what matters is how far it is from the others, not its value",
              "b": "the clip acts on ratios, not on rewards",
              "d": "the video runs use β = 0"}),
}
"""The concept questions, by id "<notebook>.<name>" (:func:`check_concept`)."""


def _letter(answer: Any) -> str | None:
    """'b', 'B', '(b)', 'b)', 'b.' -> 'b'; anything else None."""
    word = _word(answer)
    if not word:
        return None
    word = word.strip("().: ")
    return word if len(word) == 1 and word.isalpha() else None


@_state_checked
def check_concept(answer: Any, question: str) -> bool | None:
    """A concept question of :data:`CONCEPTS`: the letter of the choice the student picks."""
    if question not in CONCEPTS:
        return _cannot_check(f"no concept question {question!r}; there are {', '.join(CONCEPTS)}")
    concept = CONCEPTS[question]
    letter = _letter(answer)
    if letter not in concept.choices:
        return _cannot_read(answer, f"one letter of {', '.join(concept.choices)}")
    return _judge(letter == concept.answer, answer, f"the letter of the choice that answers {question!r}",
                  [(letter != concept.answer, concept.why_not.get(letter, "reread the section before the question"))])
