"""What a quiz shows: HTML that keeps every verdict folded until clicked, plain text with no
answer (what nbval compares, the same every run), and widgets that explain an answer only once
the learner has given one."""

from __future__ import annotations

import html
import re

import pytest

from ratelab.exercises import quiz
from ratelab.exercises.quizview import (WIDGET_CLASS, QuizView, bundle, inline, plain_text,
                                        static_html, widget_trees)

LESSONS = quiz.lessons()
DETAILS = re.compile(r"<details\b.*?</details>", re.S)


def unfolded(page: str) -> str:
    """What a reader sees of `page` before clicking anything: the HTML without its <details>."""
    return DETAILS.sub("", page)


def text_of(page: str) -> str:
    """The words of `page`: inline code as its text, other tags as spaces."""
    return html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"</?code>", "", page)))


def said(q) -> list[str]:
    """Everything that would give question `q`'s answer away: every choice's explanation, a
    short answer's answer, its reason and what each likely mistake is told."""
    if q.kind == "multiple choice":
        return [c.why for c in q.choices]
    return [q.answer_text(), q.why, *q.mistakes.values()]


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_stored_html_keeps_every_verdict_folded_until_clicked(lesson):
    qz = quiz.lesson(lesson)
    page = static_html(qz)
    seen = text_of(unfolded(page))
    assert "ratelab-verdict" not in unfolded(page)
    assert "Right." not in seen and "Wrong." not in seen
    flat = " ".join(seen.split())
    for q in qz:
        assert " ".join(q.prompt.replace("`", "").split()) in flat  # the question is shown
        for text in said(q):
            words = " ".join(text.replace("`", "").split())
            assert words not in flat, f"{q.name} shows {words!r} before a click"
    folded = DETAILS.findall(page)
    choices = sum(len(q.choices) for q in qz if q.kind == "multiple choice")
    answers = sum(1 for q in qz if q.kind != "multiple choice")
    assert len(folded) == choices + answers  # one <details> per choice, one per short answer


def test_a_folded_choice_names_the_choice_and_says_right_or_wrong_and_why():
    qz = quiz.lesson("03")
    page = static_html(qz)
    q = next(q for q in qz if q.kind == "multiple choice")
    for k, c in zip(q.letters, q.choices):
        found = [d for d in DETAILS.findall(page)
                 if f"<summary style=\"cursor:pointer\">({k}) {html.escape(c.text)}" in d]
        assert found, (k, c.text)
        verdict = "Right." if c.right else "Wrong."
        assert verdict in found[0] and inline(c.why)[1:] in found[0]
    short = next(q for q in qz if q.kind == "number")
    answer = [d for d in DETAILS.findall(page) if "show the answer" in d and
              html.escape(short.answer_text()) in d]
    assert len(answer) == 1 and all(inline(m) in answer[0] for m in short.mistakes.values())


def test_the_html_loads_nothing_and_runs_nothing():
    pages = " ".join(static_html(quiz.lesson(lesson)) for lesson in LESSONS)
    assert "<script" not in pages and "src=" not in pages and "http" not in pages
    assert "<input" not in pages and "id=" not in pages  # nothing to keep unique per run


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_plain_text_is_the_questions_alone(lesson):
    qz = quiz.lesson(lesson)
    text = plain_text(qz)
    assert text.startswith(f"Check your understanding: notebook {lesson}, {len(qz)} questions.")
    for q in qz:
        assert f"{q.number}. {q.prompt} ({q.asks()})" in text
        for text_given in said(q):
            assert text_given not in text, f"{q.name}: the plain text gives {text_given!r} away"
        if q.kind == "multiple choice":
            assert all(f"   ({k}) {c.text}" in text for k, c in zip(q.letters, q.choices))
    assert str(qz) == repr(qz) == text


def test_the_bundle_is_the_same_every_time_and_holds_no_model_id_in_its_text():
    first, again = bundle(quiz.lesson("05"), widgets=True), bundle(quiz.lesson("05"),
                                                                    widgets=True)
    view = "application/vnd.jupyter.widget-view+json"
    assert first[view]["model_id"] != again[view]["model_id"]  # a new widget each time
    for mime in ("text/plain", "text/html"):
        assert first[mime] == again[mime]
        assert first[view]["model_id"] not in first[mime]
    without = bundle(quiz.lesson("05"), widgets=False)
    assert set(without) == {"text/plain", "text/html"}  # outside a kernel: no widget
    assert quiz.lesson("05")._repr_mimebundle_() == without  # (pytest runs no kernel)


def test_the_widget_says_nothing_until_an_answer_is_chosen():
    qz = quiz.lesson("06")
    view = QuizView(qz)
    assert WIDGET_CLASS in view.widget._dom_classes
    assert all(v.out.outputs == () for v in view.views)
    one = next(v for v in view.views if v.question.kind == "multiple choice"
               and not v.question.several)
    q = one.question
    toggles = {t.description: t for t in one.toggles}
    right, wrong = min(q.right), min(set(q.letters) - q.right)
    toggles[wrong].value = True  # choosing is enough for a one-answer question
    (shown,) = one.out.outputs
    assert shown["data"]["text/plain"] == q.verdict(wrong).text()
    assert f'#c62828">({wrong}) is wrong:</b>' in shown["data"]["text/html"]  # in red
    toggles[right].value = True  # a second choice replaces the first, and its feedback too
    assert [t.value for t in one.toggles] == [k == right for k in q.letters]
    (shown,) = one.out.outputs
    assert shown["data"]["text/plain"] == q.verdict(right).text()
    assert f'#2e7d32">({right}) is right:</b>' in shown["data"]["text/html"]  # in green
    assert "Right." not in shown["data"]["text/html"]  # said once, not twice
    assert all(v.out.outputs == () for v in view.views if v is not one)  # the others wait


def test_several_answers_are_checked_when_the_learner_presses_check():
    view = QuizView(quiz.lesson("06"))
    many = next(v for v in view.views if v.question.several)
    q = many.question
    for t in many.toggles:
        t.value = t.description in q.right
    assert many.out.outputs == ()  # nothing said while the learner is still choosing
    many.check_button.click()
    (shown,) = many.out.outputs
    assert shown["data"]["text/plain"] == q.verdict("".join(sorted(q.right))).text()
    many.toggles[0].value = not many.toggles[0].value
    many.check_button.click()
    (shown,) = many.out.outputs
    assert "wrong" in shown["data"]["text/plain"]
    assert "Wrong.</b>" in shown["data"]["text/html"]  # the verdict first: the choices differ


def test_a_short_answer_is_checked_from_its_text_box():
    view = QuizView(quiz.lesson("03"))
    short = next(v for v in view.views if v.question.kind == "number")
    short.check_button.click()
    (shown,) = short.out.outputs
    assert "not answered" in shown["data"]["text/plain"]
    short.text_box.value = f" {short.question.value:g} "
    short.check_button.click()
    (shown,) = short.out.outputs
    assert shown["data"]["text/plain"].startswith(f"question {short.question.name}: right")


def test_a_quizs_saved_widget_models_are_found_from_its_root():
    state = {
        "root": {"_model_name": "VBoxModel", "_dom_classes": [WIDGET_CLASS],
                 "children": ["IPY_MODEL_aa", "IPY_MODEL_bb"], "layout": "IPY_MODEL_cc"},
        "aa": {"_model_name": "HTMLModel", "layout": "IPY_MODEL_dd"},
        "bb": {"_model_name": "OutputModel", "outputs": []},
        "cc": {"_model_name": "LayoutModel"},
        "dd": {"_model_name": "LayoutModel"},
        "other": {"_model_name": "VBoxModel", "_dom_classes": ["ratelab-live"],
                  "children": ["IPY_MODEL_ee"]},
        "ee": {"_model_name": "ButtonModel", "layout": "IPY_MODEL_ff"},
        "ff": {"_model_name": "LayoutModel"},
    }
    assert widget_trees(state) == {"root", "aa", "bb", "cc", "dd"}
    assert widget_trees(state, "nothing-has-this") == set()
