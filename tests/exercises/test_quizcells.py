"""The two cells that end a teaching notebook with its quiz: put in once, in the right place,
and a second run changes nothing. Every test works on a copy of a committed notebook."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ratelab.cli import main
from ratelab.exercises.quizcells import (CODE_ID, EXERCISES_HEADING, HEADING, MARKDOWN_ID,
                                         code_source, insert)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def copy(tmp_path: Path, name: str = "03-windows.ipynb", exercises: bool = False) -> Path:
    """A copy of a committed notebook as it was before its quiz: without its quiz cells and its
    closing "## Exercises for this lesson" cell, or with a made-up one when `exercises`."""
    target = tmp_path / name
    nb = json.loads((NOTEBOOKS / name).read_text())
    nb["cells"] = [c for c in nb["cells"] if c.get("id") not in (MARKDOWN_ID, CODE_ID)
                   and not text(c).startswith(EXERCISES_HEADING)]
    if exercises:
        nb["cells"].append({"cell_type": "markdown", "id": "exercises", "metadata": {},
                            "source": [f"{EXERCISES_HEADING}\n", "\n", "Practise in ..."]})
    target.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return target


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"])


def test_the_quiz_goes_just_before_the_exercises_and_a_second_run_changes_nothing(tmp_path):
    path = copy(tmp_path, exercises=True)
    before = cells(path)
    record = insert(path)
    after = cells(path)
    assert record == {"notebook": str(path), "lesson": "03", "state": "inserted",
                      "where": "before the exercises", "cell": len(before) - 1}
    assert len(after) == len(before) + 2
    heading, code, last = after[-3:]
    assert (heading["id"], code["id"]) == (MARKDOWN_ID, CODE_ID)
    assert text(heading).startswith(HEADING) and "](../docs/glossary.md)" in text(heading)
    assert text(code) == ('# NBVAL_CHECK_OUTPUT\nfrom ratelab.exercises import quiz\n'
                          'quiz.lesson("03")')
    assert code["outputs"] == [] and code["execution_count"] is None
    assert text(last).startswith(EXERCISES_HEADING)
    assert after[:-3] == before[:-1]  # nothing else moved or changed
    written = path.read_text()
    again = insert(path)
    assert again["state"] == "unchanged" and path.read_text() == written


def test_without_an_exercises_cell_the_quiz_goes_at_the_end(tmp_path):
    path = copy(tmp_path, "07-when-the-store-fails.ipynb")
    n = len(cells(path))
    record = insert(path)
    assert (record["where"], record["cell"], record["lesson"]) == ("at the end", n, "07")
    assert [c.get("id") for c in cells(path)[-2:]] == [MARKDOWN_ID, CODE_ID]
    assert 'quiz.lesson("07")' in text(cells(path)[-1])


def test_an_executed_quiz_cell_keeps_its_outputs(tmp_path):
    path = copy(tmp_path, exercises=True)
    insert(path)
    nb = json.loads(path.read_text())
    code = next(c for c in nb["cells"] if c.get("id") == CODE_ID)
    code["execution_count"] = 44
    code["outputs"] = [{"output_type": "execute_result", "execution_count": 44, "metadata": {},
                        "data": {"text/plain": ["Check your understanding: ..."]}}]
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert insert(path)["state"] == "unchanged"
    kept = next(c for c in cells(path) if c.get("id") == CODE_ID)
    assert kept["execution_count"] == 44 and kept["outputs"] == code["outputs"]


def test_old_quiz_cells_are_replaced_in_place_not_doubled(tmp_path):
    path = copy(tmp_path, exercises=True)
    nb = json.loads(path.read_text())
    stale = [{"cell_type": "markdown", "id": "x1", "metadata": {},
              "source": [f"{HEADING}\n", "\n", "Old words."]},
             {"cell_type": "code", "id": "x2", "metadata": {}, "execution_count": 3,
              "outputs": [{"output_type": "stream", "name": "stdout", "text": ["old\n"]}],
              "source": ["from ratelab.exercises import quiz\n", 'quiz.lesson("02")']}]
    nb["cells"][5:5] = stale  # somewhere in the middle, with the wrong lesson
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    record = insert(path)
    after = cells(path)
    assert record["state"] == "updated" and record["where"] == "before the exercises"
    quiz_cells = [c for c in after if HEADING in text(c) or "quiz.lesson(" in text(c)]
    assert [c["id"] for c in quiz_cells] == [MARKDOWN_ID, CODE_ID]
    assert text(quiz_cells[1]) == code_source("03") and quiz_cells[1]["outputs"] == []
    assert "Old words." not in path.read_text()
    assert text(after[-1]).startswith(EXERCISES_HEADING)


def test_a_notebook_without_a_quiz_or_not_a_notebook_is_named(tmp_path):
    other = tmp_path / "98-new-lesson.ipynb"
    shutil.copyfile(NOTEBOOKS / "03-windows.ipynb", other)
    with pytest.raises(ValueError, match="no quiz for notebook '98-new-lesson.ipynb'"):
        insert(other)
    broken = tmp_path / "03-windows.ipynb"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="03-windows.ipynb is not a notebook"):
        insert(broken)
    assert broken.read_text() == "{not json"


def test_the_command_puts_the_cells_in_and_says_what_changed(tmp_path, capsys):
    path = copy(tmp_path, "01-token-bucket.ipynb")
    assert main(["exercises", "quizzes", str(path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [(r["lesson"], r["state"]) for r in record["notebooks"]] == [("01", "inserted")]
    assert main(["exercises", "quizzes", str(path)]) == 0
    out = capsys.readouterr().out
    assert "unchanged" in out and "ratelab notebooks" not in out
    other = tmp_path / "12-no-bank.ipynb"
    shutil.copyfile(path, other)
    assert main(["exercises", "quizzes", str(other)]) == 2
    assert "NOTEBOOK: no quiz for notebook '12-no-bank.ipynb'" in capsys.readouterr().err
