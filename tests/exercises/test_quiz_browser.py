"""A quiz in JupyterLab, in headless Chromium: the stored notebook shows the folded HTML, and a
run cell shows buttons that explain a choice once it is made.

A notebook of one quiz cell is executed the way ``ratelab notebooks`` executes the lessons,
then opened in JupyterLab. Opened, it is not trusted (nobody ran it here), so JupyterLab shows
its HTML: every choice a ``<details>``, no verdict in sight until one is clicked. Run, the cell
shows the widgets; clicking a choice's button shows its verdict, and the other questions stay
silent.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from ratelab.cli.execute import Executor
from ratelab.exercises import quiz
from ratelab.exercises.quizcells import code_source

from services import jupyterlab
from test_browser import KERNEL_IDLE, browser  # noqa: F401 (a fixture: Debian's chromium)

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "quiz.ipynb"
LESSON = "02"


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on a folder holding an executed notebook of notebook 02's quiz."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A quiz"),
                nbformat.v4.new_code_cell(code_source(LESSON))]
    Executor(nb, timeout=120, kernel_name="python3",
             resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(nb, tmp_path / NOTEBOOK)
    with jupyterlab(tmp_path, NOTEBOOK) as url:
        yield url, nb


def test_a_quiz_in_jupyterlab_folded_when_stored_and_answered_when_run(lab, browser):  # noqa: F811
    from playwright.sync_api import expect

    url, nb = lab
    assert "widgets" not in nb.metadata  # the executed notebook keeps no quiz widget state
    questions = quiz.lesson(LESSON)
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(url)
    page.wait_for_function(KERNEL_IDLE, timeout=90_000)

    stored = page.locator(".jp-OutputArea-output div.ratelab-quiz").first
    expect(stored).to_be_visible()
    choices = sum(len(q.choices) for q in questions if q.kind == "multiple choice")
    assert stored.locator("details").count() == choices + sum(
        1 for q in questions if q.kind != "multiple choice")
    verdict = stored.locator(".ratelab-verdict").first
    expect(verdict).to_be_hidden()  # folded until clicked
    stored.locator("summary").first.click()
    expect(verdict).to_be_visible()
    assert verdict.inner_text().startswith(("Right.", "Wrong."))

    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    live = page.locator(".jupyter-widgets.ratelab-quiz").first
    expect(live).to_be_visible(timeout=120_000)
    page.wait_for_function(KERNEL_IDLE, timeout=120_000)
    first = questions[0]
    assert first.kind == "multiple choice" and not first.several
    wrong = min(set(first.letters) - first.right)
    outputs = live.locator(".widget-output")
    assert outputs.count() == len(questions)
    assert all(outputs.nth(i).inner_text().strip() == "" for i in range(len(questions)))
    live.locator("button.jupyter-button").filter(has_text=re.compile(f"^{wrong}$")).first.click()
    expect(outputs.first).to_contain_text(f"({wrong}) is wrong:")
    assert first.verdict(wrong).message[:40] in outputs.first.inner_text()
    assert all(outputs.nth(i).inner_text().strip() == "" for i in range(1, len(questions)))
    shots = ROOT / "artifacts" / "browser"
    shots.mkdir(parents=True, exist_ok=True)
    live.screenshot(path=str(shots / "quiz-02.png"))
