"""README.md's results are generated (wmkit.bench.readme): its marked blocks must equal what the
published report (executed/cpu/bench.json) and the executed notebooks give, so a number edited by
hand, or a report published without `make readme`, fails here. Only the markers are relied on: the
rest of the README may move around them."""
import json
import re
from pathlib import Path

import pytest

from wmkit.bench import readme

REPO = Path(__file__).resolve().parents[1]


def test_the_readme_has_each_pair_of_markers_once_in_order():
    text = (REPO / "README.md").read_text()
    for name in readme.BLOCKS:
        start, end = readme.markers(name)
        assert text.count(start) == 1 and text.count(end) == 1, name
        assert text.index(start) < text.index(end), name


def test_the_readme_blocks_equal_the_generators_output():
    text = (REPO / "README.md").read_text()
    assert readme.render(text, readme.generated_blocks(REPO)) == text, (
        "README.md's generated blocks differ from the data: run `python -m wmkit readme` (make readme)")


def test_one_number_changed_by_hand_is_caught_and_rewritten():
    text = (REPO / "README.md").read_text()
    start, end = readme.markers("results")
    block = text[text.index(start):text.index(end)]
    # a kit number where the block has one, else a count of the headline (before any confirmatory run)
    number = re.search(r"\+0\.\d{3}", block) or re.search(r"not measured \d+", block)
    edited = text.replace(block, block.replace(number.group(), "+0.999" if number.group()[0] == "+" else
                                               "not measured 999", 1))
    assert edited != text
    blocks = readme.generated_blocks(REPO)
    assert readme.render(edited, blocks) != edited  # the check fails
    assert readme.render(edited, blocks) == text  # and the generator puts the number back


def test_the_results_block_lists_primary_paper_claims_then_limitations_and_controls():
    report = json.loads((REPO / "executed" / "cpu" / "bench.json").read_text())
    block = readme.results_block(report)
    for line in report["headline"]["text"]:
        assert f"* {line}" in block
    first, second = block.split("Counted apart")
    primaries = [r for r in report["rows"] if not r.get("measures")]
    for row in primaries:
        assert row["claim"].replace("|", "/") in (first if row["kind"] == "paper claim" else second)
    for row in report["rows"]:
        if row.get("measures") and row["claim"] not in {r["claim"] for r in primaries}:
            assert row["claim"].replace("|", "/") not in block  # sub-rows are counted, not listed
    assert report["commit"][:12] in block and "(executed/cpu/benchmark_report.md)" in block


def test_notebook_times_come_from_papermill_and_the_targets(tmp_path):
    for name, seconds in (("01_a.ipynb", 61.4), ("05_b.ipynb", 400.0)):
        (tmp_path / name).write_text(json.dumps({"metadata": {"papermill": {
            "duration": seconds, "end_time": "2026-12-01T12:00:00+00:00"}}}))
    (tmp_path / "06_c.ipynb").write_text(json.dumps({"metadata": {}}))
    block = readme.notebook_times_block(tmp_path, "cpu")
    assert "| [`01_a.ipynb`](executed/cpu/01_a.ipynb) | 1 min 01 s | 10 min | yes | 2026-12-01 |" in block
    assert "| 6 min 40 s | 5 min | no |" in block and "| not recorded | 10 min |" in block


def test_missing_or_doubled_markers_are_an_error():
    with pytest.raises(ValueError, match="must each appear once"):
        readme.render("no markers here", {"results": "x"})
    start, end = readme.markers("results")
    with pytest.raises(ValueError, match="must each appear once"):
        readme.render(f"{start}\n{end}\n{start}\n{end}", {"results": "x"})
    assert readme.render(f"a\n{start}\nold\n{end}\nb", {"results": "new"}) == f"a\n{start}\nnew\n{end}\nb"
