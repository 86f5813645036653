"""The result card: three lines computed from a report's rows, a figure fitted to them, one line without a report."""
import matplotlib

matplotlib.use("Agg")

import pytest

from wmkit.bench import cards
from wmkit.bench.claims import PAPER_SCALE_NOTES
from wmkit.bench.runner import forest_limits


def _row(id_, verdict, mean, low, high, paper="RLVR-World", kind="paper claim", measures=None,
         experiment="exp", reason=None):
    return {"id": id_, "paper": paper, "claim": id_, "kind": kind, "measures": measures, "experiment": experiment,
            "kit_label": "Δ exact accuracy", "direction": "higher", "threshold": 0.0, "seeds": [0, 1, 2],
            "kit": {"n": 3, "values": [mean] * 3, "mean": mean, "ci_low": low, "ci_high": high},
            "verdict": verdict, "verdict_reason": reason or f"interval [{low:+.3f}, {high:+.3f}]"}


def _report(rows):
    return {"rows": rows, "code": "abc123", "commit": "0123456789abcdef", "created": "2026-12-03T10:00:00+00:00",
            "machine": {"cpu_model": "Test CPU", "cpu_count": 2}}


REPORT = _report([
    _row("rlvr.up", "reproduced", 0.15, 0.12, 0.18),
    _row("rlvr.up_greedy", "inconclusive", 0.05, -0.02, 0.12, measures="rlvr.up"),  # a sub-row: no vote
    _row("rlvr.down", "contradicted", -0.3, -0.4, -0.1, reason="lies below 0"),
    _row("rlvr.flat", "inconclusive", 0.01, -0.05, 0.07),
    _row("rlvr.control", "reproduced", 0.5, 0.4, 0.6, kind="kit control"),  # not a paper claim
    _row("wmrl.other", "reproduced", 0.2, 0.1, 0.3, paper="WMRL"),
])


def test_three_lines_count_one_verdict_per_paper_claim():
    card = cards.result_card("RLVR-World", REPORT)
    assert card.lines == [
        "Reproduces: 1 of 3 paper claims of RLVR-World: rlvr.up.",
        "Does not reproduce: contradicted 1 (rlvr.down); inconclusive 1 (rlvr.flat).",
        "Why: " + PAPER_SCALE_NOTES["RLVR-World"][0].upper() + PAPER_SCALE_NOTES["RLVR-World"][1:] + "."
        " Inconclusive: each 95% interval over its seeds covers the line it must clear."
        " Contradicted: rlvr.down, lies below 0.",
    ]
    assert [r["id"] for r in card.rows] == ["rlvr.up", "rlvr.down", "rlvr.flat"]
    assert "abc123" in card.footer and "2026-12-03" in card.footer and "Test CPU" in card.footer
    assert "3 seeds per claim" in card.footer
    any_version = cards.result_card("RLVR-World", {**REPORT, "code": "any"})
    assert "each experiment's newest records, of any library version" in any_version.footer


def test_a_sub_row_whose_primary_is_not_read_counts_as_a_claim_of_its_own():
    only_sub = cards.result_card("RLVR-World", _report(REPORT["rows"][1:2]))
    assert only_sub.lines[:2] == ["Reproduces: 0 of 1 paper claims of RLVR-World.",
                                  "Does not reproduce: contradicted 0; inconclusive 1 (rlvr.up_greedy)."]
    assert cards.result_card("RLVR-World", REPORT, experiments=["other"]).lines[0].startswith("Reproduces: no ")


def test_a_paper_with_no_rows_says_so_in_three_lines():
    card = cards.result_card("WM-R1", REPORT)
    assert card.lines == ["Reproduces: no paper claim of WM-R1 is in this report.",
                          "Does not reproduce: nothing to judge.",
                          "Why: the report has no row for these claims."]
    assert card.figure() is None


def test_a_missing_report_is_one_line_and_no_error(tmp_path):
    card = cards.result_card("RLVR-World", tmp_path / "bench.json")
    assert len(card.lines) == 1 and card.lines[0].startswith("No result card")
    assert card.figure() is None
    card.show()  # prints the line, draws nothing


def test_no_published_report_is_one_line(monkeypatch):
    monkeypatch.setattr(cards, "shipped_report", lambda profile: (None, "no executed/cpu/bench.json"))
    card = cards.result_card("RLVR-World")
    assert card.lines == ["No result card: no published benchmark report to read (no executed/cpu/bench.json)."]


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_the_figure_limits_come_from_the_data(scale):
    rows = [_row("rlvr.a", "reproduced", 0.15 * scale, 0.12 * scale, 0.18 * scale),
            _row("rlvr.b", "contradicted", -0.3 * scale, -0.4 * scale, -0.1 * scale)]
    fig = cards.result_card("RLVR-World", _report(rows)).figure()
    (ax,) = fig.axes
    assert ax.get_xlim() == pytest.approx(forest_limits([0.15 * scale, 0.12 * scale, 0.18 * scale, 0.0,
                                                         -0.3 * scale, -0.4 * scale, -0.1 * scale, 0.0]))
    low, high = ax.get_xlim()
    assert low < -0.4 * scale and high > 0.18 * scale and high - low < 0.9 * scale


def test_each_unit_gets_its_own_panel():
    rows = [_row("rlvr.a", "reproduced", 0.15, 0.12, 0.18), {**_row("rlvr.b", "inconclusive", 3.0, -1.0, 7.0),
                                                             "kit_label": "calls/episode, first − last"}]
    fig = cards.result_card("RLVR-World", _report(rows)).figure()
    assert len(fig.axes) == 2
    assert fig.axes[1].get_xlim()[1] > 7.0 > fig.axes[0].get_xlim()[1]


def test_beside_the_records_shows_the_cards_verdict_and_your_seeds_without_a_verdict(tmp_path):
    """One claim, one verdict (the report's); the notebook's run per seed beside the record of that seed."""
    import json

    record = tmp_path / "seed0.json"
    record.write_text(json.dumps({"result": {"runs": [{"after": {"changed": {"sampled": 0.30}}}],
                                             "before": {"changed": {"sampled": 0.10}}}}))
    row = _row("rlvr.regime_changed", "reproduced", 0.15, 0.12, 0.18)
    row.update(seeds=[0, 1], records=[str(record), str(tmp_path / "gone.json")],
               kit={**row["kit"], "n": 2, "of": 2, "std": 0.02})
    mine = {0: {"runs": [{"after": {"changed": {"sampled": 0.12}}}], "before": {"changed": {"sampled": 0.10}}},
            7: {"runs": [{"after": {"changed": {"sampled": 0.05}}}], "before": {"changed": {"sampled": 0.10}}}}
    beside = cards.beside_the_records(mine, ["rlvr.regime_changed"], "smoke", report=_report([row]))
    text = str(beside)
    assert "card (cpu, seeds 0-1): reproduced" in text
    assert "your run (smoke), seed 0: +0.020 | the record of seed 0 (cpu): +0.200" in text
    assert "your run (smoke), seed 7: -0.050 | no cpu record of seed 7" in text
    your_lines = [line for line in beside.lines if "your run" in line]
    assert not any(v in line for line in your_lines for v in ("reproduced", "inconclusive", "contradicted"))
    [shown] = beside.rows
    assert shown["yours"] == {0: pytest.approx(0.02), 7: pytest.approx(-0.05)} and shown["records"] == {0: pytest.approx(0.2)}
    assert shown["card"]["verdict"] == "reproduced"


def test_beside_the_records_without_a_report_still_shows_the_run(tmp_path):
    beside = cards.beside_the_records({0: {}}, ["rlvr.regime_changed"], "cpu", report=tmp_path / "missing.json")
    assert "card: no row for this claim" in str(beside) and "your run (cpu), seed 0: —" in str(beside)
    with pytest.raises(ValueError):
        cards.beside_the_records({}, ["no.such.claim"], "cpu", report=_report([]))


def test_beside_the_records_falls_back_to_an_exploratory_record_without_its_verdict(tmp_path):
    """A report whose counted rows await their confirmatory run: the card says so, the exploratory rows'
    numbers are shown as not counted, and the notebook's seed stands beside the exploratory record."""
    import json

    record = tmp_path / "seed0.json"
    record.write_text(json.dumps({"result": {"runs": [{"after": {"changed": {"sampled": 0.30}}}],
                                             "before": {"changed": {"sampled": 0.10}}}}))
    pending = {**_row("rlvr.regime_changed", "not measured", 0.0, 0.0, 0.0), "seeds": [], "records": [],
               "kit": {"n": 0}, "reason": "awaiting its confirmatory design"}
    explored = _row("rlvr.regime_changed", "reproduced", 0.15, 0.12, 0.18)
    explored.update(seeds=[0], records=[str(record)], kit={**explored["kit"], "n": 1, "of": 1, "std": 0.0})
    report = {**_report([pending]), "exploratory": {"rows": [explored]}}
    mine = {0: {"runs": [{"after": {"changed": {"sampled": 0.12}}}], "before": {"changed": {"sampled": 0.10}}}}
    beside = cards.beside_the_records(mine, ["rlvr.regime_changed"], "cpu", report=report)
    text = str(beside)
    assert "card (cpu, no seeds yet): not measured" in text and "awaiting" in text
    assert "exploratory records, not counted (seed 0)" in text and "reproduced" not in text
    assert "the exploratory record of seed 0 (cpu): +0.200" in text
    assert beside.rows[0]["record_sections"] == {0: "exploratory"}
    # the card's footer does not count a claim still to be run as "0 seeds per claim"
    footer = cards.result_card(["RLVR-World"], report=report).footer
    assert footer.endswith("no claim has a seed recorded yet.") and "0 seeds" not in footer, footer
