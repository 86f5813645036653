"""tutorials/course.md agrees with the kit: every checker and concept question it names exists, every
notebook's concept questions are in its session, every session has a reading and a homework, and the
glossary defines the kit's words."""
import re
from pathlib import Path

from wmkit import exercises

COURSE = (Path(__file__).resolve().parents[1] / "tutorials" / "course.md").read_text()
SESSIONS = re.split(r"^## Session ", COURSE, flags=re.MULTILINE)[1:]


def test_every_checker_named_exists_and_every_checker_is_named():
    named = set(re.findall(r"`(check_\w+)`", COURSE))
    checkers = {n for n in dir(exercises) if n.startswith("check_")}
    assert named <= checkers, named - checkers
    assert checkers - {"check_concept"} <= named, checkers - named


def test_each_session_has_a_reading_a_homework_and_its_notebooks_concept_questions():
    assert len(SESSIONS) == 6
    for session in SESSIONS:
        number = re.search(r"\(notebook (\d\d)\)", session).group(1)
        assert "**Reading:**" in session and "**Homework:**" in session, number
        listed = set(re.findall(r"`(\d\d\.\w+)`", session))
        asked = {q for q in exercises.CONCEPTS if q.startswith(number + ".")}
        assert listed == asked, (number, listed ^ asked)


def test_the_glossary_defines_the_kits_words():
    glossary = COURSE[COURSE.index("## Glossary"):COURSE.index("## For the instructor")]
    for word in ("changed / unchanged", "working level", "rung", "anchor", "card", "record", "verdict",
                 "your run", "pass@k", "precondition"):
        assert f"**{word}" in glossary or word in glossary, word


def test_the_instructor_page_covers_seed_cpu_kind_and_design():
    page = COURSE[COURSE.index("## For the instructor"):]
    for cause in ("**The profile.**", "**The seed.**", "**The CPU kind.**", "**The design.**", "**The code version.**"):
        assert cause in page


def test_no_measured_number_is_typed_into_the_course():
    """The page promises none: times and results live in the notebooks' tables and the executed copies."""
    assert not re.search(r"\b\d+(?:\.\d+)?\s?(?:min(?:utes)?|s|h|hours)\b(?! \|)", COURSE.split("| min |")[0])
    assert not re.search(r"\d\.\d{2,}", COURSE)
