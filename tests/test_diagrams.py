"""wmkit.diagrams: each notebook's loop drawn by code, and shown before the notebook's method code."""
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from wmkit import diagrams

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("number", list(diagrams.NOTEBOOK_DIAGRAMS))
def test_each_notebook_diagram_draws_its_boxes_and_arrows(number):
    diagram = diagrams.NOTEBOOK_DIAGRAMS[number]
    fig = diagrams.notebook_diagram(number)
    ax = fig.axes[0]
    texts = {t.get_text() for t in ax.texts}
    assert all(box.text in texts for box in diagram.boxes)
    assert len(ax.patches) == len(diagram.boxes) + len(diagram.arrows)
    assert ax.get_title().startswith(number)
    # every box is inside the drawing
    assert all(0 <= b.x - b.width / 2 and b.x + b.width / 2 <= 1.001 and 0 <= b.y - b.height / 2 for b in diagram.boxes)
    plt.close(fig)


def test_a_diagram_with_a_dangling_arrow_or_an_unknown_kind_is_refused():
    boxes = [diagrams.Box("a", "A", 0.2, 0.5), diagrams.Box("b", "B", 0.8, 0.5)]
    with pytest.raises(ValueError, match="do not exist"):
        diagrams.Diagram("t", boxes, [diagrams.Arrow("a", "c")]).check()
    with pytest.raises(ValueError, match="kinds"):
        diagrams.Diagram("t", [diagrams.Box("a", "A", 0.2, 0.5, "robot")], []).check()
    with pytest.raises(ValueError, match="no diagram"):
        diagrams.notebook_diagram("07")


@pytest.mark.parametrize("number", ["01", "02", "03", "04", "06"])
def test_the_notebook_shows_its_diagram_before_its_method(number):
    """The loop comes before the notebook's second section (its first method code)."""
    source = next((REPO / "notebooks").glob(f"{number}_*.py")).read_text()
    call = source.find(f'diagrams.notebook_diagram("{number}")')
    second = re.search(r"^# ## 2\. ", source, re.MULTILINE)
    assert call != -1 and second and call < second.start()
