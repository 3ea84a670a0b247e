"""Questions that check understanding: multiple choice and short answers, every answer explained.

Each teaching notebook ends with three to five conceptual questions, kept in
:mod:`ratelab.exercises.quizzes` (one module per notebook). A question is one of:

* :class:`MultipleChoice`: choices (a), (b), ... of which one or several are right, and every
  choice says why it is right or why it is wrong;
* :class:`Number`: a number, right within a tolerance; the wrong numbers a learner is likely to
  reach say what went wrong;
* :class:`Words`: a word or phrase, right in any of its accepted forms.

From code, as the exercises are used (check, hint, solution):

    >>> from ratelab.exercises import quiz
    >>> q = quiz.question("03", 1)      # notebook 03's first question
    >>> q.check("a")                    # prints the verdict and why; returns a Verdict
    >>> q.hint()                        # what to look at again
    >>> q.solution()                    # the right answer, and why

A verdict is "right", "wrong" or "not answered" (nothing chosen, or something that is not an
answer to this question, such as a letter it has no choice for).

In a notebook, ``quiz.lesson("03")`` shows the questions (:mod:`.quizview`): where a kernel runs
them, as widgets that explain an answer once it is chosen; in the stored notebook and on the
website, as HTML in which every choice keeps its verdict folded until it is clicked, and every
short answer its answer behind "show the answer". Its plain text, which nbval compares, is the
questions alone.
"""

from __future__ import annotations

import importlib
import math
import numbers
import random
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ._limiter_kit import Prose
from .predict import read_number

VERDICTS = ("right", "wrong", "not answered")
LETTERS = "abcdef"
MIN_QUESTIONS, MAX_QUESTIONS = 3, 5
"""How many questions a lesson's bank holds."""
MIN_WHY_WORDS = 6
"""The fewest words an explanation may have: a reason, not a bare "wrong"."""
BANKS = "ratelab.exercises.quizzes"
"""The package of question banks: one module ``lessonNN`` per teaching notebook."""


class BankError(ValueError):
    """A question bank that breaks the rules; the message names the lesson and the question."""


# ---------------------------------------------------------------- verdicts


@dataclass
class Verdict:
    """What a check found: the verdict word, why, and the answer as it was read."""

    question: str                  # "03.2": notebook 03, question 2
    verdict: str                   # one of VERDICTS
    message: str                   # why, in sentences a learner acts on
    answer: Any = None

    @property
    def ok(self) -> bool:
        return self.verdict == "right"

    def text(self) -> str:
        """The verdict as a learner reads it."""
        return f"question {self.question}: {self.verdict} — {self.message}"

    def as_dict(self) -> dict:
        return {"question": self.question, "verdict": self.verdict, "message": self.message,
                "answer": self.answer}

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:  # IPython shows the text, not a dataclass
        p.text(self.text())


# ---------------------------------------------------------------- questions


@dataclass(frozen=True)
class Choice:
    """One choice of a multiple-choice question, and why it is right or wrong."""

    text: str
    why: str
    right: bool = False


@dataclass
class Question:
    """What every question has: the prompt, the glossary terms it tests, and where it lives.

    ``lesson`` and ``number`` are set when its bank is loaded (:class:`Quiz`).
    """

    prompt: str
    terms: tuple[str, ...]
    lesson: str = field(default="", kw_only=True)
    number: int = field(default=0, kw_only=True)

    kind = ""

    @property
    def name(self) -> str:
        """"03.2": the notebook and the question's number in it."""
        return f"{self.lesson}.{self.number}"

    def verdict(self, answer: Any) -> Verdict:
        """The verdict on `answer`, without printing it."""
        raise NotImplementedError

    def check(self, answer: Any, *, quiet: bool = False) -> Verdict:
        """Check your answer; prints the verdict and why (unless `quiet`) and returns it."""
        found = self.verdict(answer)
        if not quiet:
            print(found.text())
        return found

    def hint(self) -> Prose:
        """What to look at again: the terms the question is about, and where they are taught."""
        return Prose(f"question {self.name}: look again at what notebook {self.lesson} shows "
                     f"about {_listed(self.terms)} (the glossary, docs/glossary.md, defines "
                     f"{'it' if len(self.terms) == 1 else 'them'}).")

    def solution(self) -> Prose:
        """The right answer and why."""
        return Prose(f"question {self.name}: {self.answer_text()} — {self.why_right()}")

    def answer_text(self) -> str:
        """The right answer, in words."""
        raise NotImplementedError

    def why_right(self) -> str:
        """Why the right answer is right."""
        raise NotImplementedError

    def asks(self) -> str:
        """What kind of answer the question wants, in words ("choose one answer")."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """What breaks the bank's rules in this question (empty when nothing does)."""
        found = []
        if not self.prompt.strip():
            found.append("its prompt is empty")
        if not self.terms or not all(isinstance(t, str) and t.strip() for t in self.terms):
            found.append("it names no glossary term (terms=...)")
        return found


@dataclass
class MultipleChoice(Question):
    """Choices (a), (b), ...: one or several are right, and each says why.

    A bank may list the choices in any order (the right one first, say): a :class:`Quiz`
    shows them in an order drawn from the question's place ("03.2"), the same every run,
    unless ``shuffle=False`` keeps the bank's order (choices that read as a scale)."""

    choices: tuple[Choice, ...] = ()
    shuffle: bool = True
    kind = "multiple choice"

    def shuffled(self) -> None:
        """Put the choices in the order drawn from the question's name (see the class)."""
        if self.shuffle:
            order = list(self.choices)
            random.Random(f"ratelab quiz {self.name}").shuffle(order)
            self.choices = tuple(order)

    @property
    def letters(self) -> str:
        return LETTERS[:len(self.choices)]

    @property
    def right(self) -> frozenset[str]:
        """The letters of the right choices."""
        return frozenset(k for k, c in zip(self.letters, self.choices) if c.right)

    @property
    def several(self) -> bool:
        """Whether more than one choice is right."""
        return len(self.right) > 1

    def asks(self) -> str:
        return "choose every answer that is right" if self.several else "choose one answer"

    def read(self, answer: Any) -> tuple[frozenset[str] | None, str]:
        """(the letters chosen, "") or (None, why it is not an answer)."""
        if answer is None or (isinstance(answer, (str, list, tuple, set, frozenset))
                              and not answer):
            return None, f"nothing chosen yet: {self.asks()}, by its letter ('a')"
        parts = [answer] if isinstance(answer, str) else answer
        if not isinstance(parts, Iterable) or not all(isinstance(p, str) for p in parts):
            return None, (f"{answer!r} is not a letter: answer with the letter of a choice, "
                          f"{self.letters[0]} to {self.letters[-1]}")
        letters = set("".join(re.sub(r"[\s,;()]", "", p).lower() for p in parts))
        unknown = sorted(letters - set(self.letters))
        if unknown or not letters:
            return None, (f"{', '.join(map(repr, unknown)) or repr(answer)} is not a choice "
                          f"here: answer with a letter from {self.letters[0]} to "
                          f"{self.letters[-1]}")
        return frozenset(letters), ""

    def verdict(self, answer: Any) -> Verdict:
        chosen, trouble = self.read(answer)
        if chosen is None:
            return Verdict(self.name, "not answered", trouble, answer)
        said = " ".join(self._said(k) for k in sorted(chosen))
        if chosen == self.right:
            return Verdict(self.name, "right", said, "".join(sorted(chosen)))
        if len(chosen) > 1 and not self.several:
            said = f"one answer is right, and you chose {len(chosen)}. {said}"
        missed = len(self.right - chosen)
        if missed and chosen <= self.right:
            said += (f" {'One more choice is' if missed == 1 else f'{missed} more choices are'}"
                     " right too.")
        return Verdict(self.name, "wrong", said, "".join(sorted(chosen)))

    def _said(self, letter: str) -> str:
        choice = self.choices[self.letters.index(letter)]
        return f"({letter}) is {'right' if choice.right else 'wrong'}: {choice.why}"

    def answer_text(self) -> str:
        right = [f"({k}) {c.text}" for k, c in zip(self.letters, self.choices) if c.right]
        return " and ".join(right)

    def why_right(self) -> str:
        return " ".join(c.why for c in self.choices if c.right)

    def problems(self) -> list[str]:
        found = super().problems()
        if not 2 <= len(self.choices) <= len(LETTERS):
            found.append(f"it has {len(self.choices)} choices (2 to {len(LETTERS)})")
        if not self.right:
            found.append("no choice is right")
        texts = [c.text.strip().lower() for c in self.choices]
        if len(set(texts)) != len(texts):
            found.append("two choices read the same")
        for k, c in zip(self.letters, self.choices):
            if not c.text.strip():
                found.append(f"choice ({k}) is empty")
            if len(c.why.split()) < MIN_WHY_WORDS:
                found.append(f"choice ({k}) does not say why it is "
                             f"{'right' if c.right else 'wrong'} (why={c.why!r})")
        return found


@dataclass
class ShortAnswer(Question):
    """A question answered by writing: the answer's reason, likely mistakes and the rest.

    `mistakes` maps a wrong answer a learner is likely to give to what went wrong; `otherwise`
    is said to any other wrong answer (a nudge, never the answer)."""

    why: str = ""
    mistakes: dict = field(default_factory=dict)
    otherwise: str = ""

    def read(self, answer: Any) -> tuple[Any, str]:
        """(the answer as compared, "") or (None, why it is not an answer)."""
        raise NotImplementedError

    def matches(self, given: Any, expected: Any) -> bool:
        raise NotImplementedError

    def accepts(self, given: Any) -> bool:
        raise NotImplementedError

    def verdict(self, answer: Any) -> Verdict:
        given, trouble = self.read(answer)
        if given is None:
            return Verdict(self.name, "not answered", trouble, answer)
        if self.accepts(given):
            return Verdict(self.name, "right", self.why, given)
        for wrong, why in self.mistakes.items():
            if self.matches(given, self.read(wrong)[0]):
                return Verdict(self.name, "wrong", why, given)
        return Verdict(self.name, "wrong", self.otherwise, given)

    def why_right(self) -> str:
        return self.why

    def problems(self) -> list[str]:
        found = super().problems()
        for name, text in (("why", self.why), ("otherwise", self.otherwise)):
            if len(text.split()) < MIN_WHY_WORDS:
                found.append(f"{name}= does not explain ({text!r})")
        for wrong, why in self.mistakes.items():
            given, trouble = self.read(wrong)
            if given is None:
                found.append(f"the mistake {wrong!r} is not an answer ({trouble})")
            elif self.accepts(given):
                found.append(f"the mistake {wrong!r} is accepted as right")
            if len(str(why).split()) < MIN_WHY_WORDS:
                found.append(f"the mistake {wrong!r} does not say what went wrong")
        return found


@dataclass
class Number(ShortAnswer):
    """A number, right within `tolerance` of `value`; `unit` is what it counts ("s")."""

    value: float = math.nan
    tolerance: float = 0.0
    unit: str = ""
    kind = "number"

    def asks(self) -> str:
        return f"a number{f', in {self.unit}' if self.unit else ''}"

    def read(self, answer: Any) -> tuple[float | None, str]:
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            return None, f"nothing written yet: the answer is {self.asks()}"
        value = read_number(answer)
        if value is None:
            number = isinstance(answer, numbers.Real) and not isinstance(answer, bool)
            return None, (f"{answer!r} is not a {'finite ' if number else ''}number: the "
                          f"answer is {self.asks()}")
        return value, ""

    def matches(self, given: float, expected: float) -> bool:
        return abs(given - expected) <= self.tolerance + 1e-9 * max(1.0, abs(expected))

    def accepts(self, given: float) -> bool:
        return self.matches(given, self.value)

    def answer_text(self) -> str:
        # a tolerance worth saying lets another answer through; a float's slack is not
        shown = self.tolerance >= 1 or self.tolerance >= 0.05 * abs(self.value) > 0
        within = f" (within {_number(self.tolerance)})" if shown else ""
        return f"{_number(self.value)}{f' {self.unit}' if self.unit else ''}{within}"

    def problems(self) -> list[str]:
        found = super().problems()
        if not math.isfinite(self.value):
            found.append(f"its value is not a finite number ({self.value!r})")
        if not (math.isfinite(self.tolerance) and self.tolerance >= 0):
            found.append(f"its tolerance must be 0 or more ({self.tolerance!r})")
        return found


@dataclass
class Words(ShortAnswer):
    """A word or phrase: right in any of the `accepted` forms (case, hyphens and a leading
    article aside: "Sliding-window log" is "sliding window log")."""

    accepted: tuple[str, ...] = ()
    kind = "words"

    def asks(self) -> str:
        return "a word or a short phrase"

    def read(self, answer: Any) -> tuple[str | None, str]:
        if not isinstance(answer, str) and answer is not None:
            return None, f"{answer!r} is not words: the answer is {self.asks()}"
        text = normal(answer or "")
        return (text, "") if text else (None, f"nothing written yet: the answer is {self.asks()}")

    def matches(self, given: str, expected: str) -> bool:
        return given == expected

    def accepts(self, given: str) -> bool:
        return given in {normal(a) for a in self.accepted}

    def answer_text(self) -> str:
        others = self.accepted[1:]
        return self.accepted[0] + (f" (also: {', '.join(others)})" if others else "")

    def problems(self) -> list[str]:
        found = super().problems()
        if not self.accepted or not all(normal(a) for a in self.accepted):
            found.append("it accepts no answer (accepted=...)")
        return found


def normal(text: str) -> str:
    """`text` as answers are compared: lower case, hyphens, underscores and slashes as spaces,
    punctuation and a leading article dropped, one space between words."""
    text = re.sub(r"[-_/]", " ", text.lower())
    text = re.sub(r"[.,;:!?'\"`()\[\]]", "", text)
    text = " ".join(text.split())
    return re.sub(r"^(a|an|the) ", "", text)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _listed(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------- a lesson's questions


class Quiz(Sequence[Question]):
    """A teaching notebook's questions, numbered from 1, checked against the bank's rules.

    In a notebook it displays itself (:mod:`.quizview`); ``str()`` is the questions as text."""

    def __init__(self, lesson: str, notebook: str, questions: Sequence[Question]) -> None:
        self.lesson, self.notebook = lesson, notebook
        self.questions = list(questions)
        where = f"the quiz of notebook {lesson} ({BANKS}.lesson{lesson})"
        if not MIN_QUESTIONS <= len(self.questions) <= MAX_QUESTIONS:
            raise BankError(f"{where} has {len(self.questions)} questions; a lesson asks "
                            f"{MIN_QUESTIONS} to {MAX_QUESTIONS}")
        for number, q in enumerate(self.questions, 1):
            if not isinstance(q, Question):
                raise BankError(f"{where}, question {number}: {q!r} is not a Question")
            q.lesson, q.number = lesson, number
            trouble = q.problems()  # before the choices move: letters as the bank lists them
            if trouble:
                raise BankError(f"{where}, question {number}: {'; '.join(trouble)}")
            if isinstance(q, MultipleChoice):
                q.shuffled()

    def __getitem__(self, i):
        return self.questions[i]

    def __len__(self) -> int:
        return len(self.questions)

    def text(self) -> str:
        """The questions and their choices, no verdict: what nbval compares."""
        from .quizview import plain_text  # the views import this module: not at its top

        return plain_text(self)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The widgets where a kernel runs them, beside the HTML and the text everywhere."""
        from .quizview import bundle  # the views import this module: not at its top

        return bundle(self)


def lessons() -> tuple[str, ...]:
    """The notebooks that have a quiz: "00", "01", ... (one bank module each)."""
    banks = importlib.import_module(BANKS)
    return banks.LESSONS


def lesson_number(lesson: str | int) -> str:
    """`lesson` as a bank names it ("03" from 3, "3", "03" or "03-windows.ipynb"); ValueError
    naming the notebooks that have a quiz when it has none."""
    text = str(lesson).strip()
    match = re.match(r"^(\d{1,2})(?:-[\w-]*(?:\.ipynb)?)?$", text.rsplit("/", 1)[-1])
    number = f"{int(match.group(1)):02d}" if match else text
    if number not in lessons():
        raise ValueError(f"no quiz for notebook {lesson!r}; quizzes exist for "
                         f"{', '.join(lessons())}")
    return number


def lesson(lesson: str | int) -> Quiz:
    """Notebook `lesson`'s questions ("03"): in a notebook, shown to answer by clicking."""
    number = lesson_number(lesson)
    name = f"{BANKS}.lesson{number}"
    bank = importlib.import_module(name)
    for needed in ("NOTEBOOK", "questions"):
        if not hasattr(bank, needed):
            raise BankError(f"the quiz of notebook {number} ({name}) defines no {needed}")
    if not str(bank.NOTEBOOK).startswith(f"{number}-"):
        raise BankError(f"the quiz of notebook {number} ({name}) names notebook "
                        f"{bank.NOTEBOOK!r}, not one numbered {number}")
    return Quiz(number, bank.NOTEBOOK, bank.questions())


def question(lesson_: str | int, number: int) -> Question:
    """Question `number` (from 1) of notebook `lesson_`'s quiz."""
    quiz = lesson(lesson_)
    if not 1 <= number <= len(quiz):
        raise ValueError(f"notebook {quiz.lesson}'s quiz has questions 1 to {len(quiz)}, "
                         f"not {number!r}")
    return quiz[number - 1]


__all__ = ["BankError", "Choice", "MultipleChoice", "Number", "Question", "Quiz", "VERDICTS",
           "Verdict", "Words", "lesson", "lessons", "question"]
