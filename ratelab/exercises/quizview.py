"""How a quiz shows itself: plain text, HTML that works without a kernel, and live widgets.

A displayed :class:`~ratelab.exercises.quiz.Quiz` is one mime bundle (:func:`bundle`):

* ``text/plain`` (:func:`plain_text`): the questions and their choices, no verdict and no
  answer — the same every run, which nbval compares;
* ``text/html`` (:func:`static_html`): what the stored notebook and the website show. Every
  choice is a ``<details>`` whose summary is the choice and whose body says "Right." or
  "Wrong." and why; a short answer keeps its answer behind a collapsed "show the answer". No
  script, nothing loaded from elsewhere: a browser folds and unfolds it by itself, and
  JupyterLab's sanitizer keeps ``<details>``, so an untrusted notebook shows it too;
* where a kernel runs the cell, the widget view (:class:`QuizView`): toggle buttons for the
  choices (or a text box), a "check" button and an output that stays empty until the learner
  answers; a single-answer question explains the choice as soon as it is made.

The widgets' root carries the class :data:`WIDGET_CLASS`; ``ratelab notebooks`` leaves their
models out of the saved notebook (a kernel that could answer them is gone by then).

This module reads questions by their attributes (``kind``, ``choices``, ``asks()``, ...), so
that it does not import :mod:`.quiz`, which imports it.
"""

from __future__ import annotations

import html
import re
from typing import Any

WIDGET_CLASS = "ratelab-quiz"
"""The CSS class of a quiz's root widget (and of its HTML)."""
RIGHT_COLOR, WRONG_COLOR, MUTED_COLOR = "#2e7d32", "#c62828", "#555555"
HEADING = "Check your understanding"


# ---------------------------------------------------------------- text


def plain_text(quiz) -> str:
    """The quiz as text: a heading line, then each question with its choices."""
    lines = [f"{HEADING}: notebook {quiz.lesson}, {len(quiz)} questions. Run this cell in "
             "Jupyter to answer them here, or from code: "
             f'quiz.question("{quiz.lesson}", N).check(answer).']
    for q in quiz:
        lines += ["", f"{q.number}. {q.prompt} ({q.asks()})"]
        if q.kind == "multiple choice":
            lines += [f"   ({k}) {c.text}" for k, c in zip(q.letters, q.choices)]
    return "\n".join(lines)


# ---------------------------------------------------------------- HTML, no kernel needed


def inline(text: str) -> str:
    """`text` as HTML: escaped, and `code` in backticks as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def verdict_html(word: str, why: str) -> str:
    """"Right." or "Wrong." in its colour, then why (the body of a folded choice)."""
    color = RIGHT_COLOR if word == "right" else WRONG_COLOR if word == "wrong" else MUTED_COLOR
    label = {"right": "Right.", "wrong": "Wrong."}.get(word, "Not answered:")
    return (f'<p class="ratelab-verdict" style="margin:0.3em 0 0.6em 1.5em">'
            f'<b style="color:{color}">{label}</b> {inline(why[:1].upper() + why[1:])}</p>')


def question_html(q) -> str:
    """One question: its prompt, then its folded choices or its folded answer."""
    head = (f'<p class="ratelab-quiz-prompt" style="margin:0.9em 0 0.3em 0"><b>{q.number}.</b> '
            f'{inline(q.prompt)} <i style="color:{MUTED_COLOR}">({html.escape(q.asks())})</i></p>')
    if q.kind == "multiple choice":
        body = "".join(
            f'<details class="ratelab-choice"><summary style="cursor:pointer">'
            f'({k}) {inline(c.text)}</summary>'
            f'{verdict_html("right" if c.right else "wrong", c.why)}</details>'
            for k, c in zip(q.letters, q.choices))
    else:
        mistakes = "".join(f'<p style="margin:0.3em 0 0.3em 1.5em">If you answered '
                           f'<b>{html.escape(str(wrong))}</b>: {inline(why)}</p>'
                           for wrong, why in q.mistakes.items())
        body = (f'<details class="ratelab-answer"><summary style="cursor:pointer">show the '
                f'answer</summary><p class="ratelab-verdict" style="margin:0.3em 0 0.3em '
                f'1.5em"><b>{html.escape(q.answer_text())}</b>: {inline(q.why)}</p>'
                f'{mistakes}</details>')
    return f'<div class="ratelab-quiz-question">{head}{body}</div>'


def static_html(quiz) -> str:
    """The quiz as HTML for a reader without a kernel: nothing answered until clicked."""
    intro = (f'<p><b>{HEADING}</b> (notebook {quiz.lesson}). Click a choice to see whether it '
             'is right, and why; open "show the answer" once you have your own. With a '
             "kernel, run this cell to answer with buttons instead.</p>")
    return (f'<div class="{WIDGET_CLASS}">{intro}'
            + "".join(question_html(q) for q in quiz) + "</div>")


# ---------------------------------------------------------------- widgets, with a kernel


class Feedback:
    """A verdict as the widget's output shows it: HTML, and its text for plain readers."""

    def __init__(self, verdict) -> None:
        self.verdict = verdict

    def __repr__(self) -> str:
        return self.verdict.text()

    def _repr_html_(self) -> str:
        """The message with each choice's "(b) is wrong:" in its colour, led by the verdict
        unless one such choice already says it ("Wrong. (b) is wrong: ..." says it twice)."""
        v = self.verdict
        marks = CHOICE_SAID.findall(v.message)
        if len(marks) == 1 and marks[0][1] == v.verdict:
            return (f'<p class="ratelab-verdict" style="margin:0.3em 0 0.6em 1.5em">'
                    f"{CHOICE_SAID.sub(_coloured, inline(v.message))}</p>")
        html_ = verdict_html(v.verdict, v.message)
        return CHOICE_SAID.sub(_coloured, html_)


CHOICE_SAID = re.compile(r"\(([a-f])\) is (right|wrong):")
"""How a verdict's message names a choice and what it is."""


def _coloured(match: re.Match) -> str:
    color = RIGHT_COLOR if match[2] == "right" else WRONG_COLOR
    return f'<b style="color:{color}">{match[0]}</b>'


class QuestionView:
    """One question's widgets: its choices (or a text box), "check", and the feedback."""

    def __init__(self, q) -> None:
        import ipywidgets as W  # 0.3 s to import: only where a kernel shows a quiz

        self.question = q
        self.out = W.Output()
        self.check_button = W.Button(description="check", tooltip="check your answer",
                                     layout=W.Layout(width="6em"))
        self.check_button.on_click(lambda _: self.feedback())
        self.toggles: list = []
        self.text_box = None
        prompt = W.HTML(f"<b>{q.number}.</b> {inline(q.prompt)} "
                        f'<i style="color:{MUTED_COLOR}">({html.escape(q.asks())})</i>')
        if q.kind == "multiple choice":
            rows = []
            for k, c in zip(q.letters, q.choices):
                toggle = W.ToggleButton(value=False, description=k, tooltip=f"choose ({k})",
                                        layout=W.Layout(width="3em", flex="0 0 auto"))
                toggle.observe(self._on_toggle, names="value")
                self.toggles.append(toggle)
                rows.append(W.HBox([toggle, W.HTML(inline(c.text),
                                                   layout=W.Layout(flex="1 1 auto"))]))
            answer = W.VBox(rows)
        else:
            self.text_box = W.Text(value="", placeholder="your answer",
                                   layout=W.Layout(width="16em"))
            answer = self.text_box
        self.box = W.VBox([prompt, answer, self.check_button, self.out],
                          layout=W.Layout(margin="0 0 1em 0"))
        self._quiet = False

    def answer(self) -> Any:
        """What the learner has chosen or written so far (None: nothing yet)."""
        if self.toggles:
            chosen = "".join(t.description for t in self.toggles if t.value)
            return chosen or None
        return self.text_box.value.strip() or None

    def feedback(self) -> None:
        """Show the verdict on the current answer, in place of the one before."""
        self.out.outputs = ()
        self.out.append_display_data(Feedback(self.question.verdict(self.answer())))

    def _on_toggle(self, change) -> None:
        if self._quiet or self.question.several:
            return  # several answers: the learner chooses them all, then presses check
        if change["new"]:
            self._quiet = True
            try:
                for t in self.toggles:
                    if t is not change["owner"]:
                        t.value = False
            finally:
                self._quiet = False
            self.feedback()  # one answer: explain it as soon as it is chosen


class QuizView:
    """A quiz's widgets: a heading, then one :class:`QuestionView` per question."""

    def __init__(self, quiz) -> None:
        import ipywidgets as W  # as in QuestionView

        self.quiz = quiz
        self.views = [QuestionView(q) for q in quiz]
        heading = W.HTML(f"<b>{HEADING}</b> (notebook {quiz.lesson}): choose an answer, then "
                         "press check; each answer is explained.")
        self.widget = W.VBox([heading] + [v.box for v in self.views])
        self.widget.add_class(WIDGET_CLASS)


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (where a widget can answer its buttons)."""
    try:
        from IPython import get_ipython  # only in a notebook or an IPython shell
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def bundle(quiz, *, widgets: bool | None = None) -> dict:
    """The quiz's mime bundle: text and HTML always, and the widget view when `widgets` (by
    default: when this runs in a kernel)."""
    data = {}
    if in_kernel() if widgets is None else widgets:
        quiz.view = QuizView(quiz)  # kept on the quiz: its callbacks live as long as it does
        found = quiz.view.widget._repr_mimebundle_()
        data.update(found[0] if isinstance(found, tuple) else found)
    data["text/plain"] = plain_text(quiz)
    data["text/html"] = static_html(quiz)
    return data


def widget_trees(state: dict, dom_class: str = WIDGET_CLASS) -> set[str]:
    """The ids of the widget models in `state` (a notebook's saved widget state: model id ->
    its state) that belong to a widget of class `dom_class`: its root and every model it
    reaches (children, layouts, styles)."""
    refs = {mid: set(re.findall(r"IPY_MODEL_([0-9a-f]+)", repr(s))) for mid, s in state.items()}
    todo = [mid for mid, s in state.items()
            if isinstance(s, dict) and dom_class in (s.get("_dom_classes") or ())]
    found: set[str] = set()
    while todo:
        mid = todo.pop()
        if mid in found or mid not in state:
            continue
        found.add(mid)
        todo.extend(refs[mid])
    return found


__all__ = ["Feedback", "QuestionView", "QuizView", "WIDGET_CLASS", "bundle", "plain_text",
           "static_html", "widget_trees"]
