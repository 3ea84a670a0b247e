"""The two cells that end a teaching notebook with its quiz, put in by ``ratelab exercises
quizzes``.

Just before the notebook's last section, the cell that starts ``## Exercises for this lesson``
(at the very end when it has none), :func:`insert` puts

* a markdown cell, ``## Check your understanding``, with a link to the glossary;
* a code cell, checked by nbval, that shows the lesson's questions::

      # NBVAL_CHECK_OUTPUT
      from ratelab.exercises import quiz
      quiz.lesson("03")

Running it again changes nothing: cells already there (found by their ids, their heading or a
``quiz.lesson(`` call) are replaced by the same cells in the same place, and an executed quiz
cell whose source is unchanged keeps its outputs. The code cell is new and unexecuted the first
time: ``ratelab notebooks NN-name.ipynb`` executes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from .build import dumps
from .quiz import lesson_number

EXERCISES_HEADING = "## Exercises for this lesson"
"""The heading of a teaching notebook's last section; the quiz goes just before it."""
HEADING = "## Check your understanding"
MARKDOWN_ID, CODE_ID = "check-understanding", "check-understanding-quiz"
"""The two cells' ids (nbformat 4.5), fixed so that a second run finds them."""
GLOSSARY_LINK = "../docs/glossary.md"


def markdown_source() -> str:
    """The heading cell's text: what the questions are for, and where the terms are defined."""
    return (f"{HEADING}\n\n"
            "A few questions on what this notebook measured. Choose an answer to see whether "
            "it is right, and why; every term is defined in the "
            f"[glossary]({GLOSSARY_LINK}).")


def code_source(lesson: str) -> str:
    """The quiz cell's code for notebook `lesson` ("03")."""
    return ("# NBVAL_CHECK_OUTPUT\n"
            "from ratelab.exercises import quiz\n"
            f'quiz.lesson("{lesson}")')


def lines(text: str) -> list[str]:
    """`text` as a notebook stores a cell's source: lines, each but the last ending in \\n."""
    return text.splitlines(keepends=True)


def source(cell: dict) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def is_quiz_cell(cell: dict) -> bool:
    """Whether `cell` is one of the two cells :func:`insert` writes (this or an earlier one)."""
    if cell.get("id") in (MARKDOWN_ID, CODE_ID):
        return True
    text = source(cell).lstrip()
    if cell.get("cell_type") == "markdown":
        return text.startswith(HEADING)
    return cell.get("cell_type") == "code" and "quiz.lesson(" in text


def quiz_cells(lesson: str, old: list[dict]) -> list[dict]:
    """The markdown cell and the code cell; the code cell keeps the outputs of an old quiz
    cell (from `old`) with the same source."""
    code = code_source(lesson)
    kept = next((c for c in old if c.get("cell_type") == "code" and source(c) == code), None)
    return [
        {"cell_type": "markdown", "id": MARKDOWN_ID, "metadata": {},
         "source": lines(markdown_source())},
        {"cell_type": "code", "execution_count": kept["execution_count"] if kept else None,
         "id": CODE_ID, "metadata": kept.get("metadata", {}) if kept else {},
         "outputs": kept["outputs"] if kept else [], "source": lines(code)},
    ]


def with_quiz(nb: dict, lesson: str) -> tuple[dict, str]:
    """(`nb` with its quiz cells in place, where they went: "before the exercises" or "at
    the end"). `nb` itself is not changed."""
    cells = [c for c in nb["cells"] if not is_quiz_cell(c)]
    old = [c for c in nb["cells"] if is_quiz_cell(c)]
    at = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"
               and source(c).lstrip().startswith(EXERCISES_HEADING)), None)
    where = "before the exercises" if at is not None else "at the end"
    at = len(cells) if at is None else at
    return {**nb, "cells": cells[:at] + quiz_cells(lesson, old) + cells[at:]}, where


def insert(path: Path | str) -> dict:
    """Put notebook `path`'s quiz cells in (see the module's docstring) and say what changed:
    ``state`` is "inserted", "updated" or "unchanged". ValueError when the notebook has no
    quiz (its number names no bank) or is not a notebook."""
    path = Path(path)
    number = lesson_number(path.name)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        nb["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a notebook ({e})") from None
    new, where = with_quiz(nb, number)
    had = any(is_quiz_cell(c) for c in nb["cells"])
    state = "unchanged" if new == nb else "updated" if had else "inserted"
    if state != "unchanged":
        path.write_text(dumps(new), encoding="utf-8")
    at = next(i for i, c in enumerate(new["cells"]) if c.get("id") == MARKDOWN_ID)
    return {"notebook": str(path), "lesson": number, "state": state, "where": where,
            "cell": at}


__all__ = ["CODE_ID", "EXERCISES_HEADING", "HEADING", "MARKDOWN_ID", "code_source", "insert",
           "markdown_source", "with_quiz"]
