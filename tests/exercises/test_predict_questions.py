"""Every teaching notebook asks the reader to predict at least twice, and measures each answer.

A question is three cells: markdown that starts with "**Predict.**" and says what will be
measured, a code cell ``guess_NAME = None  # ...``, and a checked code cell that computes the
answer with the package and calls ``reveal(guess_NAME, ...)``. The committed notebooks are run
with every guess left at None, so each reveal's plain text says "no prediction written ...
measured X" (nbval checks it); the question must not give X away, and what the notebook and
the website show of the stored output — its HTML — asks for a prediction and keeps X in a
collapsed "show the measured value". A code cell right after it that prints X too (a table of
the same run) is folded as well: tagged ``hide-output`` (the website collapses it behind "Show
code cell output") and ``jupyter.outputs_hidden`` (JupyterLab opens it collapsed).
"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TOOL_NOTEBOOKS = {"10-your-own-logs.ipynb"}  # analysis tools, not lessons: questions optional
NUMBERED = sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
TEACHING = [p for p in NUMBERED if p.name not in TOOL_NOTEBOOKS]
GUESS = re.compile(r"^(guess_\w+) = None\b")
MEASURED = re.compile(r"measured (-?\d[\d.]*)")


def source(cell) -> str:
    return "".join(cell["source"])


def text_output(cell) -> str:
    """What a cell's outputs say in plain text (printed, or a displayed value's text/plain)."""
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in cell.get("outputs", []))


def shown_output(cell) -> str:
    """What a notebook or the website shows of a cell's outputs: a displayed value's HTML
    where it has one, without what a collapsed <details> holds."""
    shown = []
    for o in cell.get("outputs", []):
        data = o.get("data", {})
        text = "".join(data.get("text/html", "")) or "".join(data.get("text/plain", "")) \
            or "".join(o.get("text", ""))
        shown.append(re.sub(r"<details>.*?</details>", "", text, flags=re.S))
    return "".join(shown)


def gives_away(number: str, question: str) -> bool:
    """Whether `question` contains `number` as a number of its own (14 in "14 s", not in "140")."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?!\d|\.\d)", question) is not None


def questions(cells):
    """(question markdown, guess variable, measuring cell) for each question in `cells`."""
    found = []
    for i, cell in enumerate(cells):
        match = GUESS.match(source(cell)) if cell["cell_type"] == "code" else None
        if match:
            later = [c for c in cells[i + 1:] if c["cell_type"] == "code"]
            found.append((source(cells[i - 1]) if i else "", match.group(1), later[0] if later else None))
    return found


def test_the_teaching_notebooks_are_found():
    assert len(TEACHING) >= 10 and all(p.name[:2] < "10" for p in TEACHING[:10])


@pytest.mark.parametrize("path", NUMBERED, ids=lambda p: p.name)
def test_each_teaching_notebook_asks_two_measured_questions(path):
    """At least two in a lesson; a tool notebook's questions, if it has any, keep the same rules."""
    cells = json.loads(path.read_text())["cells"]
    asked = questions(cells)
    want = 0 if path.name in TOOL_NOTEBOOKS else 2
    assert len(asked) >= want, f"{path.name}: {len(asked)} predict-then-run questions, want at least {want}"
    for question, guess, measure in asked:
        assert question.startswith("**Predict.**"), f"{guess}: the cell before states the question"
        assert measure is not None, f"{guess}: no cell measures it"
        code = source(measure)
        assert code.startswith("# NBVAL_CHECK_OUTPUT"), f"{guess}: the measuring cell is checked"
        assert f"reveal({guess}," in code, f"{guess}: the next code cell reveals it"
        assert not re.search(rf"reveal\({guess},\s*-?[\d.]+\s*[,)]", code), f"{guess}: typed-in answer"
        out = text_output(measure)
        assert out.startswith("no prediction written"), f"{guess}: committed with the guess left at None"
        measured = MEASURED.search(out)
        assert measured, f"{guess}: the reveal says what was measured: {out!r}"
        number = measured.group(1).rstrip(".")
        assert not gives_away(number, question), f"{guess}: the question gives the answer ({number}) away"
        seen = shown_output(measure)
        assert "Your prediction?" in seen and "show the measured value" not in seen, \
            f"{guess}: the stored reveal asks for a prediction, the value folded away: {seen!r}"
        assert not gives_away(number, re.sub(r"<[^>]+>", " ", seen)), \
            f"{guess}: the stored output shows the measured {number} before a prediction"
        for after in printing_after(cells, measure, number):
            assert folded(after), (f"{guess}: the cell after its reveal prints the measured "
                                   f"{number}; fold its output: {source(after)[:60]!r}")


def printing_after(cells, measure, number) -> list:
    """The code cells straight after `measure` (up to the next markdown) that print `number`."""
    found = []
    for cell in cells[cells.index(measure) + 1:]:
        if cell["cell_type"] != "code":
            break
        if gives_away(number, text_output(cell)):
            found.append(cell)
    return found


def folded(cell) -> bool:
    """Whether a cell's outputs open collapsed, in JupyterLab and on the website."""
    meta = cell.get("metadata", {})
    return ("hide-output" in meta.get("tags", [])
            and meta.get("jupyter", {}).get("outputs_hidden") is True)


def test_the_scan_catches_a_question_that_gives_its_answer_away():
    cells = [{"cell_type": "markdown", "source": ["**Predict.** It admits 14 (guess)."]},
             {"cell_type": "code", "source": ["guess_x = None  # n"], "outputs": []},
             {"cell_type": "code", "source": ["# NBVAL_CHECK_OUTPUT\nreveal(guess_x, f())"],
              "outputs": [{"text": "no prediction written (...): measured 14 requests\n"}]}]
    (question, guess, measure), = questions(cells)
    assert gives_away(MEASURED.search(text_output(measure)).group(1), question)
    assert not any(gives_away("14", q) for q in ("100 or 140", "1.4 s", "0.14", "14.5"))
    assert gives_away("14", "at most 14.") and gives_away("0.8", "wait 0.8 s")
    table = {"cell_type": "code", "source": ["run()"], "metadata": {},
             "outputs": [{"text": "admitted 14 of 20\n"}]}
    assert printing_after([*cells, table], measure, "14") == [table] and not folded(table)
    table["metadata"] = {"tags": ["hide-output"], "jupyter": {"outputs_hidden": True}}
    assert folded(table)
