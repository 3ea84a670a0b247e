"""Solution notebooks are the source; the committed student notebooks are built from them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ratelab.cli import main
from ratelab.exercises import NAMES, module
from ratelab.exercises.build import (build, exercises_in, one_folder_down, stub_source,
                                    student_name, student_notebook)

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "notebooks" / "exercises"
SOLUTIONS = sorted(SOURCE.glob("*-solution.ipynb"))
STUDENTS = sorted((SOURCE / "student").glob("*.ipynb"))


def test_every_exercise_has_a_solution_cell_in_one_notebook():
    found = [name for path in SOLUTIONS for name in exercises_in(json.loads(path.read_text()))]
    assert sorted(found) == sorted(NAMES)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_cells_are_the_modules_solutions_and_committed_executed(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["execution_count"], "commit the solution notebook executed"
        if "exercise" in cell.get("metadata", {}):
            assert "solution" in cell["metadata"]["tags"]
            assert "".join(cell["source"]) == module(cell["metadata"]["exercise"]).solution()
    said = ["".join("".join(o.get("text", "")) for o in c["outputs"]) for c in nb["cells"]
            if c["cell_type"] == "code" and ".check(" in "".join(c["source"])]
    assert said and all(": the public checks passed (" in t for t in said), said


def test_the_committed_student_notebooks_are_current(tmp_path):
    records = build(SOURCE, tmp_path)
    assert len(records) == len(SOLUTIONS) == len(STUDENTS)
    for r in records:
        built = Path(r["student"])
        committed = SOURCE / "student" / built.name
        assert committed.exists(), f"{built.name} is not committed (run ratelab exercises build)"
        assert committed.read_text() == built.read_text(), \
            f"{built.name} is stale: run ratelab exercises build"


def test_student_notebooks_have_stubs_and_no_solutions_or_outputs():
    for path in STUDENTS:
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            assert cell["outputs"] == [] and cell["execution_count"] is None
            text = "".join(cell["source"])
            assert "NBVAL_CHECK_OUTPUT" not in text
            if "exercise" in cell["metadata"]:
                solution = module(cell["metadata"]["exercise"]).solution()
                assert 'raise NotImplementedError("your answer here")' in text
                assert text == stub_source(solution) and text != solution


def test_stub_source_keeps_signatures_and_docstrings_only():
    source = ('import math\n\nLIMIT = 3\n\n\nclass A:\n    """Doc."""\n\n'
              '    def __init__(self, x):\n        self.x = x\n\n'
              '    def allow(self, now, cost=1):\n        return True\n\n\n'
              'def f(a,\n      b):\n    # comment\n    return a + b\n')
    assert stub_source(source) == (
        'import math\n\nLIMIT = None  # your answer here\n\nclass A:\n    """Doc."""\n\n'
        '    def __init__(self, x):\n        raise NotImplementedError("your answer here")\n\n'
        '    def allow(self, now, cost=1):\n        raise NotImplementedError("your answer here")'
        '\n\ndef f(a,\n      b):\n    raise NotImplementedError("your answer here")')
    with pytest.raises(ValueError, match="NN-topic-solution"):
        student_name(Path("buckets.ipynb"))


@pytest.mark.slow  # starts a kernel per notebook: make test, not the make check fast lane
@pytest.mark.parametrize("path", STUDENTS, ids=lambda p: p.name)
def test_a_student_notebook_runs_to_its_stubs_and_says_not_attempted(path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    said = []
    for cell in nb.cells:
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        if ".check(" in cell.source:
            said.append(text)
    assert said and all("not attempted — the stub still raises NotImplementedError" in t
                        for t in said), said


def test_the_build_command(tmp_path, capsys):
    assert main(["exercises", "build", "--out", str(tmp_path), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)["notebooks"]
    assert sorted(Path(r["student"]).name for r in records) == [p.name for p in STUDENTS]
    assert main(["exercises", "build", "--source", str(tmp_path / "nowhere")]) == 1
    assert "no *-solution.ipynb notebooks" in capsys.readouterr().err


def test_the_student_version_keeps_the_links_back_to_the_lessons():
    """student/ lies one folder below the solutions: a relative link gains one ../, nothing
    else does, and code cells are not touched by it."""
    assert one_folder_down("[01](../01-token-bucket.ipynb), [x](https://example.org/a.ipynb), "
                           "[top](#top), [root](/a), ![fig](fig.png)") == (
        "[01](../../01-token-bucket.ipynb), [x](https://example.org/a.ipynb), [top](#top), "
        "[root](/a), ![fig](../fig.png)")
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["Practice for [01](../01-a.ipynb)."]},
                    {"cell_type": "code", "metadata": {}, "source": ["s = '[01](../01-a.ipynb)'"],
                     "outputs": [], "execution_count": 1}], "metadata": {}}
    student = student_notebook(nb)
    assert student["cells"][0]["source"] == ["Practice for [01](../../01-a.ipynb)."]
    assert student["cells"][1]["source"] == ["s = '[01](../01-a.ipynb)'"]
    for path in SOLUTIONS:  # and the committed ones reach the same files
        built = student_notebook(json.loads(path.read_text()))
        for solution_cell, student_cell in zip(json.loads(path.read_text())["cells"], built["cells"]):
            if solution_cell["cell_type"] == "markdown":
                assert "".join(student_cell["source"]) == one_folder_down("".join(solution_cell["source"]))
