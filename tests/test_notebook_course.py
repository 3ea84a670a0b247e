"""The notebooks read as a course: numbered sections, each lesson pointing at its exercises and
each exercise notebook pointing back, and a syllabus whose times add up.

Read from the stored notebooks and ``notebooks/README.md`` (nothing is executed: fast lane).

- **Sections.** A lesson's ``##`` headings are numbered ``## 1. …``, ``## 2. …`` in order, except
  its closing "What we saw", "Check your understanding" and "Exercises for this lesson".
- **Lesson -> exercises.** Every lesson's last cell is markdown headed exactly
  ``## Exercises for this lesson``; it links at least one student exercise notebook
  (``exercises/student/NN-topic.ipynb``), and every relative link in it exists. Quizzes and
  anything else go before it: it stays the last cell.
- **Exercises -> lessons.** Every exercise notebook, the solution and its generated student
  version, links back to the lessons it practises (``../NN-….ipynb`` from the solutions,
  ``../../NN-….ipynb`` from the student folder), and the links hold both ways: a lesson links an
  exercise notebook exactly when that notebook links back to the lesson.
- **Syllabus.** ``notebooks/README.md`` has an entry ``### NN title (T min …)`` for every
  numbered notebook, and its course plan puts each notebook in one week, with the week's hours
  the sum of its notebooks' times.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
EXERCISES = NOTEBOOKS / "exercises"
SOLUTIONS = sorted(EXERCISES.glob("*-solution.ipynb"))
STUDENTS = sorted((EXERCISES / "student").glob("*.ipynb"))
LAST_HEADING = "## Exercises for this lesson"
CLOSING = {"What we saw", "Check your understanding", "Exercises for this lesson"}

LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"])


def relative_links(markdown: str) -> list[str]:
    """The link targets of `markdown` that are files beside it (no scheme, no bare anchor),
    anchors stripped."""
    targets = [m.group(1) for m in LINK.finditer(markdown)]
    return [t.split("#")[0] for t in targets
            if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def headings(nb_cells: list[dict]) -> list[str]:
    """The level-2 headings of a notebook's markdown cells, in order."""
    return [line[3:].strip() for c in nb_cells if c["cell_type"] == "markdown"
            for line in text(c).splitlines() if line.startswith("## ")]


def section_problems(titles: list[str]) -> list[str]:
    """Why a list of ## headings is not numbered 1, 2, 3 … (closing headings aside)."""
    body = [t for t in titles if t not in CLOSING]
    numbers = [re.match(r"(\d+)\. \S", t) for t in body]
    problems = [f"unnumbered: '## {t}'" for t, m in zip(body, numbers) if not m]
    found = [int(m.group(1)) for m in numbers if m]
    if not problems and found != list(range(1, len(found) + 1)):
        problems.append(f"numbered {found}, not 1 to {len(found)} in order")
    return problems


def exercise_links(path: Path) -> set[str]:
    """The student exercise notebooks a lesson's last cell links (names)."""
    return {Path(t).name for t in relative_links(text(cells(path)[-1]))
            if t.startswith("exercises/student/")}


def lessons_linked_from(path: Path) -> list[Path]:
    """The lessons an exercise notebook's markdown links, resolved from its folder: every link
    to an ``NN-….ipynb`` outside the exercises' folder, whether or not it exists."""
    found = []
    for cell in cells(path):
        if cell["cell_type"] == "markdown":
            for target in relative_links(text(cell)):
                resolved = (path.parent / target).resolve()
                if re.fullmatch(r"\d\d-.+\.ipynb", resolved.name) \
                        and EXERCISES.resolve() not in resolved.parents:
                    found.append(resolved)
    return found


# ---------------------------------------------------------------- sections


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_sections_are_numbered_in_order(path):
    problems = section_problems(headings(cells(path)))
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_section_check_can_fail():
    assert section_problems(["1. Why", "2. How", "What we saw", "Exercises for this lesson"]) == []
    assert section_problems(["1. Why", "How", "What we saw"]) == ["unnumbered: '## How'"]
    assert section_problems(["1. Why", "3. How"]) == ["numbered [1, 3], not 1 to 2 in order"]


# ---------------------------------------------------------------- lesson -> exercises


def closing_problems(path: Path) -> list[str]:
    """Why a lesson's last cell is not its exercises cell (empty when it is)."""
    last = cells(path)[-1]
    source = text(last)
    if last["cell_type"] != "markdown" or source.splitlines()[:1] != [LAST_HEADING]:
        return [f"the last cell does not start with '{LAST_HEADING}'"]
    problems = [] if exercise_links(path) else ["the last cell links no exercises/student/ notebook"]
    missing = [t for t in relative_links(source) if not (path.parent / t).exists()]
    return problems + ([f"links to files that do not exist: {missing}"] if missing else [])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_lesson_ends_with_its_exercises(path):
    problems = closing_problems(path)
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_closing_check_can_fail(tmp_path):
    def lesson(*sources):
        path = tmp_path / "01-x.ipynb"
        path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [s]}
                                              for s in sources]}))
        return path

    (tmp_path / "exercises" / "student").mkdir(parents=True)
    (tmp_path / "exercises" / "student" / "01-x.ipynb").write_text("{}")
    good = f"{LAST_HEADING}\n\n[the exercises](exercises/student/01-x.ipynb), " \
           "[a guide](https://example.org/a.md), [top](#top)"
    assert closing_problems(lesson("# 01", good)) == []
    assert closing_problems(lesson(good, "## What we saw")) == [
        f"the last cell does not start with '{LAST_HEADING}'"]
    assert closing_problems(lesson(good.replace("01-x", "02-y"))) == [
        "links to files that do not exist: ['exercises/student/02-y.ipynb']"]
    assert closing_problems(lesson(f"{LAST_HEADING}\n\nTry [what-if](docs/x.md).")) == [
        "the last cell links no exercises/student/ notebook",
        "links to files that do not exist: ['docs/x.md']"]


# ---------------------------------------------------------------- exercises -> lessons


def back_link_problems(path: Path) -> list[str]:
    """Why an exercise notebook does not link back to existing lessons (empty when it does)."""
    found = lessons_linked_from(path)
    if not found:
        return ["no link back to the lessons it practises"]
    missing = [str(p) for p in found if not p.exists() or p.parent != NOTEBOOKS.resolve()]
    return [f"links lessons that do not exist: {missing}"] if missing else []


@pytest.mark.parametrize("path", SOLUTIONS + STUDENTS, ids=lambda p: p.parent.name + "/" + p.name)
def test_each_exercise_notebook_links_back_to_existing_lessons(path):
    problems = back_link_problems(path)
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_back_link_check_can_fail(tmp_path):
    def exercises(source):
        path = tmp_path / "01-x-solution.ipynb"
        path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [source]}]}))
        return path

    assert back_link_problems(exercises("Practice, [online](https://example.org/01-a.ipynb).")) == [
        "no link back to the lessons it practises"]
    (problem,) = back_link_problems(exercises("Practice for [01](../01-token-bucket.ipynb)."))
    assert problem.startswith("links lessons that do not exist") and "01-token-bucket" in problem
    assert back_link_problems(SOLUTIONS[0]) == []


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.name)
def test_the_student_version_links_the_same_lessons(solution):
    student = EXERCISES / "student" / solution.name.replace("-solution", "")
    assert sorted(lessons_linked_from(student)) == sorted(lessons_linked_from(solution))


def test_the_links_hold_both_ways():
    forward = {(lesson.name, x) for lesson in LESSONS for x in exercise_links(lesson)}
    back = {(lesson.name, student.name) for student in STUDENTS
            for lesson in lessons_linked_from(student)}
    assert forward == back, (
        f"lessons linking an exercise notebook that does not link back: {sorted(forward - back)}; "
        f"exercise notebooks linking a lesson that does not link them: {sorted(back - forward)}")


# ---------------------------------------------------------------- the syllabus

SYLLABUS = NOTEBOOKS / "README.md"
ENTRY = re.compile(r"^### (\d\d) .*\((\d+) min(?: \+ (\d+) min[^)]*)?\)\s*$", re.MULTILINE)
HOURS = re.compile(r"(?:(\d+) h)?\s*(?:(\d+) min)?")


def minutes(cell: str) -> int:
    """'3 h 10 min' -> 190 (ValueError for anything else)."""
    m = HOURS.fullmatch(cell.strip())
    if not m or not (m.group(1) or m.group(2)):
        raise ValueError(f"not a time: {cell!r}")
    return 60 * int(m.group(1) or 0) + int(m.group(2) or 0)


def syllabus() -> tuple[dict[str, tuple[int, int]], list[dict[str, str]]]:
    """The README's entries {NN: (reading min, exercise min)} and its course plan's rows."""
    readme = SYLLABUS.read_text()
    entries = {m.group(1): (int(m.group(2)), int(m.group(3) or 0)) for m in ENTRY.finditer(readme)}
    plan = readme.split("## A three-week course", 1)[1]
    lines = [ln for ln in plan.splitlines() if ln.startswith("|")]
    header = [h.strip() for h in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]
    return entries, rows


def numbers(cell: str) -> list[str]:
    return re.findall(r"\b\d\d\b", cell)


def test_every_notebook_has_a_syllabus_entry():
    entries, _ = syllabus()
    assert sorted(entries) == [p.name[:2] for p in LESSONS]


def test_the_course_plan_adds_up():
    entries, rows = syllabus()
    placed = [n for row in rows for n in numbers(row["read"]) + numbers(row["optional"])]
    assert sorted(placed) == [p.name[:2] for p in LESSONS], "each notebook in exactly one week"
    for row in rows:
        read = numbers(row["read"])
        assert minutes(row["notebooks"]) == sum(entries[n][0] for n in read), row
        assert minutes(row["exercises"]) == sum(entries[n][1] for n in read), row
        assert minutes(row["optional time"] or "0 min") == sum(entries[n][0] for n in numbers(row["optional"]))


def test_the_time_parser_can_fail():
    assert minutes("3 h 10 min") == 190 and minutes("45 min") == 45 and minutes("2 h") == 120
    with pytest.raises(ValueError):
        minutes("about 4 hours")
