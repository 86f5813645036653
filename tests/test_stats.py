"""The kit's one verdict rule (wmkit.stats.verdict), on hand-computed cases."""
import math

import pytest

from wmkit import stats

T2 = 4.302652729749464  # t(0.975, 2 dof)


@pytest.mark.parametrize("values, direction, threshold, expected", [
    # [1, 2, 3]: mean 2, s 1, half-width 4.3027/√3 = 2.4841 -> [-0.484, +4.484] covers 0
    ([1.0, 2.0, 3.0], "higher", 0.0, "inconclusive"),
    ([-1.0, -2.0, -3.0], "lower", 0.0, "inconclusive"),
    # [0.9, 1.0, 1.1]: mean 1, s 0.1, half 0.2484 -> [0.752, 1.248]
    ([1.0, 1.1, 0.9], "higher", 0.0, "reproduced"),
    ([-1.0, -1.1, -0.9], "lower", 0.0, "reproduced"),
    ([-1.0, -1.1, -0.9], "higher", 0.0, "contradicted"),
    ([1.0, 1.1, 0.9], "lower", 0.0, "contradicted"),
    ([3.0, 3.2, 2.8], "higher", 1.0, "reproduced"),  # a ratio that must exceed 1: [2.503, 3.497]
    ([0.9, 0.8, 0.7], "higher", 1.0, "inconclusive"),  # s 0.1: [0.552, 1.048] reaches 1
    ([0.5, 0.6, 0.7], "higher", 1.0, "contradicted"),  # [0.352, 0.848]
])
def test_four_outcomes(values, direction, threshold, expected):
    assert stats.verdict(values, direction, threshold).verdict == expected


def test_hand_computed_interval_edges():
    # [0, 1]: mean 0.5, s 1/√2, t(0.975, 1) = 12.706 -> half 6.353: [-5.853, 6.853]
    v = stats.verdict([0.0, 1.0])
    assert v.verdict == "inconclusive" and v.summary["ci_low"] == pytest.approx(-5.8531, abs=1e-3)
    # [2, 4, 6], threshold 1: s 2, interval 4 ∓ 2·T2/√3 = [-0.968, 8.968] covers 1
    assert stats.verdict([2.0, 4.0, 6.0], "higher", 1.0).verdict == "inconclusive"
    # just clear: [1, 1.2, 1.4] mean 1.2 s 0.2 half 0.4968 -> [0.703, 1.697] > 0.7 reproduced, > 0.71 not
    assert stats.verdict([1.0, 1.2, 1.4], "higher", 0.7).verdict == "reproduced"
    assert stats.verdict([1.0, 1.2, 1.4], "higher", 0.71).verdict == "inconclusive"
    # the interval touching the threshold covers it
    s = stats.summarize([1.0, 1.2, 1.4])
    assert stats.verdict(s, "higher", s["ci_low"]).verdict == "inconclusive"
    assert stats.verdict(s, "lower", s["ci_low"] - 1e-9).verdict == "contradicted"


@pytest.mark.parametrize("values, why", [
    ([], "no value"),
    ([None, float("nan")], "no value"),
    ([0.3], "one seed"),  # one seed: no interval, whatever its sign
    ([-0.3, None], "one seed"),
    ([0.0, 0.0], "zero-width"),  # identical seeds: not evidence either way
    ([0.25, 0.25, 0.25], "zero-width"),
    ([0.82 - 0.80, 0.83 - 0.81, 0.84 - 0.82], "zero-width"),  # equal up to rounding (std ~1e-16)
])
def test_not_measured(values, why):
    v = stats.verdict(values)
    assert v.verdict == "not measured" and why in v.reason


def test_precondition_failure_is_not_measured_with_its_reason():
    v = stats.verdict([1.0, 1.1, 0.9], not_measured="RL did not change the model")
    assert v.verdict == "not measured" and v.reason == "RL did not change the model"
    assert v.summary["n"] == 3  # the numbers are kept, only the verdict is withheld
    assert stats.verdict([1.0, 1.1, 0.9], not_measured=None).verdict == "reproduced"


def test_verdict_accepts_a_summary_and_carries_it():
    s = stats.summarize([1.0, 2.0, 3.0])
    v = stats.verdict(s)
    assert v.summary == s and str(v) == "inconclusive" and v.text.startswith("inconclusive: the 95% interval")
    assert v.to_dict()["verdict"] == "inconclusive" and set(stats.VERDICTS) == {
        "reproduced", "smaller than the paper's effect", "inconclusive", "contradicted", "not measured"}


# The paper's effect in the kit's units splits an interval that covers the line in two: clear of the
# paper's effect on the line's side ("smaller"), or reaching it ("inconclusive"). Hand cases, T2 = 4.3027:
# [0.01, 0.02, 0.03]: mean 0.02, s 0.01, half 0.02484 -> [-0.0048, +0.0448]
# [0.0, 0.1, 0.2]:    mean 0.1,  s 0.1,  half 0.2484  -> [-0.148, +0.348]
# [0.9, 1.0, 1.1]:    mean 1.0,  s 0.1                -> [+0.752, +1.248]
@pytest.mark.parametrize("values, direction, paper_effect, expected", [
    ([0.01, 0.02, 0.03], "higher", 0.10, "smaller than the paper's effect"),  # covers 0, below +0.10
    ([0.01, 0.02, 0.03], "higher", 0.0448, "inconclusive"),  # the upper end touches the paper's effect
    ([0.01, 0.02, 0.03], "higher", 0.046, "smaller than the paper's effect"),  # just clear of it
    ([0.01, 0.02, 0.03], "higher", None, "inconclusive"),  # no paper effect: no "smaller"
    ([0.0, 0.1, 0.2], "higher", 0.30, "inconclusive"),  # a wide interval reaches the paper's effect
    ([-0.01, -0.02, -0.03], "lower", -0.387, "smaller than the paper's effect"),  # [-0.045, +0.005] above -0.387
    ([0.9, 1.0, 1.1], "higher", 2.0, "reproduced"),  # the direction holds: the size only qualifies it
    ([0.9, 1.0, 1.1], "higher", 0.5, "reproduced"),
    ([-1.0, -1.1, -0.9], "higher", 0.5, "contradicted"),  # wholly on the other side: contradicted first
])
def test_smaller_than_the_papers_effect(values, direction, paper_effect, expected):
    v = stats.verdict(values, direction, 0.0, paper_effect=paper_effect)
    assert v.verdict == expected and v.paper_effect == paper_effect


def test_reproduced_short_of_the_papers_size_says_so_and_a_paper_effect_on_the_wrong_side_is_refused():
    v = stats.verdict([0.9, 1.0, 1.1], paper_effect=2.0)
    assert v.verdict == "reproduced" and "smaller than the paper's +2.000" in v.reason
    assert "smaller" not in stats.verdict([0.9, 1.0, 1.1], paper_effect=1.2).reason  # 1.248 reaches 1.2
    with pytest.raises(ValueError, match="paper's side"):
        stats.verdict([0.9, 1.0, 1.1], "lower", 0.0, paper_effect=0.3)
    assert stats.verdict([0.3], paper_effect=1.0).verdict == "not measured"  # one seed, as before


@pytest.mark.parametrize("effect_over_sd, seeds", [(0.5, 34), (0.8, 15), (1.0, 10)])
def test_seeds_for_power_match_the_textbook_paired_t_values(effect_over_sd, seeds):
    # two-sided 95% paired t, 80% power: the values of Cohen's tables (and G*Power)
    assert stats.seeds_for_power(effect_over_sd * 0.2, 0.2) == seeds
    assert stats.paired_t_power(effect_over_sd, 1.0, seeds) >= 0.8 > stats.paired_t_power(effect_over_sd, 1.0, seeds - 1)


def test_power_grows_with_seeds_and_effect_and_the_minimum_holds():
    assert stats.paired_t_power(1.0, 1.0, 5) < stats.paired_t_power(1.0, 1.0, 10) < stats.paired_t_power(1.0, 1.0, 20)
    assert stats.paired_t_power(0.5, 1.0, 10) < stats.paired_t_power(1.0, 1.0, 10)
    assert stats.paired_t_power(-1.0, 1.0, 10) == stats.paired_t_power(1.0, 1.0, 10)  # either direction
    assert stats.seeds_for_power(10.0, 1.0) == 3  # a huge effect still needs the minimum of 3
    # n = 3 at effect/sd 3: t(0.975, 2) = 4.303 against a shift of 3·√3 = 5.196 -> power about 0.6
    assert 0.5 < stats.paired_t_power(3.0, 1.0, 3) < 0.8 and stats.seeds_for_power(3.0, 1.0) == 4
    with pytest.raises(ValueError):
        stats.seeds_for_power(0.0, 1.0)


def test_verdict_rejects_unknown_direction():
    with pytest.raises(ValueError):
        stats.verdict([1.0, 2.0], "up")


def test_paired_differences():
    assert stats.differences([0.5, 0.7, None], [0.25, 0.5, 0.1]) == pytest.approx([0.25, 0.2, None])
    assert stats.differences([0.5, 0.7], 0.5) == pytest.approx([0.0, 0.2])
    with pytest.raises(ValueError):
        stats.differences([1.0], [1.0, 2.0])
    # after − before per seed: +0.1, +0.2, +0.3 -> mean 0.2, s 0.1, [-0.048, +0.448]: inconclusive
    d = stats.differences([0.6, 0.7, 0.8], [0.5, 0.5, 0.5])
    assert stats.verdict(d).verdict == "inconclusive"
    assert stats.verdict(d).summary["ci_low"] == pytest.approx(0.2 - 0.1 * T2 / math.sqrt(3))


def test_describe():
    assert stats.describe(stats.summarize([])) == "—"
    assert stats.describe(stats.summarize([0.3])) == "+0.300 (n=1)"
    assert stats.describe(stats.summarize([1.0, 2.0, 3.0, None])) == "+2.000 ± 1.000 [-0.484, +4.484] (n=3/4)"


def test_all_of():
    rep, inc, con, nm = (stats.verdict(v) for v in ([1.0, 1.1, 0.9], [1.0, 2.0, 3.0], [-1.0, -1.1, -0.9], [0.3]))
    assert stats.all_of([rep, rep])[0] == "reproduced"
    assert stats.all_of([rep, inc])[0] == "inconclusive"
    assert stats.all_of([rep, inc, con])[0] == "contradicted"
    assert stats.all_of([rep, nm])[0] == "not measured"
    assert stats.all_of([])[0] == "not measured"


def test_notebook_05_verdict_exercise_uses_the_rule(capsys):
    from wmkit import exercises

    # 0.10, 0.30, 0.20: mean 0.2, s 0.1, 95% interval [-0.048, +0.448] covers 0
    assert exercises.check_verdict_answer("inconclusive", [0.10, 0.30, 0.20]) is True
    assert exercises.check_verdict_answer("reproduced", [0.10, 0.30, 0.20]) is False
    assert exercises.check_verdict_answer("not measured", [0.3]) is True
    assert exercises.check_verdict_answer(None, [0.3]) is None


def test_notebook_01_verdict_uses_the_rule_on_paired_transitions():
    from wmkit.core.build import baseline_verdicts

    def entry(changed, partial):
        return {"changed": sum(changed) / len(changed), "partial_changed": sum(partial) / len(partial),
                "changed_items": changed, "partial_changed_items": partial}

    n = 86
    one_right = [1.0] + [0.0] * (n - 1)  # 1 of 86 changed transitions exact: not evidence of anything
    evaluation = {"phone": {
        "model_greedy": entry(one_right, [0.4 + 0.01 * (i % 7) for i in range(n)]),
        "no_change": entry([0.0] * n, [0.1 + 0.01 * (i % 5) for i in range(n)]),
        "most_frequent": entry([0.0] * n, [0.2 + 0.01 * (i % 3) for i in range(n)]),
    }}
    verdicts = baseline_verdicts(evaluation, "phone")
    assert verdicts["changed"]["verdict"] == "inconclusive"  # the old rule said "beats both baselines"
    assert verdicts["partial_changed"]["verdict"] == "reproduced"
    same = {"phone": {m: entry([0.0] * n, [0.1] * n) for m in ("model_greedy", "no_change", "most_frequent")}}
    assert baseline_verdicts(same, "phone")["changed"]["verdict"] == "not measured"


def test_interval_is_scipys_t_interval_and_a_point_for_identical_seeds():
    import math
    import statistics

    from scipy import stats as scipy_stats

    values = [0.41, 0.47, 0.39, 0.52]
    s = stats.summarize(values)
    half = scipy_stats.t.ppf(0.975, 3) * statistics.stdev(values) / math.sqrt(4)
    assert math.isclose(s["ci_low"], statistics.fmean(values) - half, abs_tol=1e-12)
    assert math.isclose(s["ci_high"], statistics.fmean(values) + half, abs_tol=1e-12)
    same = stats.summarize([0.5, 0.5, 0.5])
    assert same["ci_low"] == same["ci_high"] == 0.5


def test_an_at_least_zero_claim_names_zero_as_its_line():
    # Claims "at least 0" use threshold -1e-9 so that 0 counts; the reason says 0, not -1e-09.
    assert stats.verdict([-0.05, 0.0, 0.04], "higher", -1e-9).reason.endswith("covers 0")
    assert "above 0, the paper's side" in stats.verdict([0.1, 0.2, 0.15], "higher", -1e-9).reason
    assert stats.verdict([0.5, 2.0, 1.2], "higher", 1.0).reason.endswith("covers 1")


def test_a_rate_gets_an_interval_inside_its_bounds_and_no_sign():
    values = [0.50, 0.74, 0.98]  # mean 0.74, t-interval [0.14, 1.34]
    raw = stats.summarize(values)
    assert raw["ci_high"] > 1  # what the clipping is for
    rate = stats.summarize(values, bounds=(0, 1))
    assert rate["ci_low"] == pytest.approx(raw["ci_low"]) and rate["ci_high"] == 1.0
    text = stats.describe(rate, 2)
    assert text.startswith("0.74 ± 0.24 [0.14, 1.00]") and "clipped to [0, 1]" in text and "+" not in text
    assert stats.verdict(rate, "higher", 0.5).verdict == stats.verdict(raw, "higher", 0.5).verdict
    assert stats.describe(raw, 2) == "+0.74 ± 0.24 [+0.14, +1.34] (n=3)"  # differences keep their signs
