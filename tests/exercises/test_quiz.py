"""Questions that check understanding: what a check says to each answer, and every bank's rules.

The first half drives the question types on made-up questions (table-driven); the second loads
every lesson's bank and holds it to the rules a learner relies on: three to five questions,
every choice explained, exactly the right choices accepted, short answers that accept their
forms and refuse the rest, and choices whose length does not give the answer away.
"""

from __future__ import annotations

import importlib
import sys
import types
from itertools import combinations
from pathlib import Path

import pytest

from ratelab.exercises import quiz
from ratelab.exercises.quiz import (BankError, Choice, MultipleChoice, Number, Quiz, Words,
                                    normal)

WHY = "because the notebook measured it that way"  # long enough for the rules


def bank(*questions, lesson="99"):
    """`questions` as a loaded bank (numbered, checked; choices in their drawn order)."""
    return Quiz(lesson, f"{lesson}-made-up", list(questions))


def single(shuffle=False):
    return MultipleChoice("Which knob moves the average?", terms=("refill rate",),
                          shuffle=shuffle,
                          choices=(Choice("The rate.", WHY, right=True),
                                   Choice("The capacity.", "it is paid out once, at the start"),
                                   Choice("Neither.", "a flood gets the rate on average, not more")))


def several():
    return MultipleChoice("Which fixes hold the limit?", terms=("INCR",), shuffle=False,
                          choices=(Choice("INCR first.", WHY, right=True),
                                   Choice("A Lua script.", WHY + " too", right=True),
                                   Choice("GET then INCR.", "another GET falls between the two")))


def number():
    return Number("How many pass?", terms=("capacity",), value=119, tolerance=1, unit="requests",
                  why="capacity once, then the rate for the whole run",
                  mistakes={100: "that is the refill alone, without the stored tokens"},
                  otherwise="split it into what passes at once and what refills")


def words():
    return Words("Which reading makes a metronome?", terms=("shaping",),
                 accepted=("shaping", "shaper"), why="a shaper sends one request every 1/rate",
                 mistakes={"policing": "a policer keeps the input's bursts as they came"},
                 otherwise="one reading is a meter, the other a queue")


# ---------------------------------------------------------------- the question types


@pytest.mark.parametrize("answer, verdict, says", [
    ("a", "right", "(a) is right: " + WHY),
    ("A", "right", "(a) is right"),
    ("(a)", "right", "(a) is right"),
    (["a"], "right", "(a) is right"),
    ("b", "wrong", "(b) is wrong: it is paid out once"),
    ("c", "wrong", "(c) is wrong: a flood gets the rate"),
    ("ab", "wrong", "one answer is right, and you chose 2. (a) is right"),
    ("e", "not answered", "'e' is not a choice here: answer with a letter from a to c"),
    (None, "not answered", "nothing chosen yet: choose one answer"),
    ("", "not answered", "nothing chosen yet"),
    (2, "not answered", "2 is not a letter"),
])
def test_a_single_answer_question_says_why_each_choice_is_right_or_wrong(answer, verdict, says):
    q = bank(single(), number(), words())[0]
    found = q.verdict(answer)
    assert (found.verdict, found.question) == (verdict, "99.1")
    assert says in found.message, found.message
    assert found.ok is (verdict == "right")


@pytest.mark.parametrize("answer, verdict, says", [
    ("ab", "right", "(a) is right: " + WHY + " (b) is right: " + WHY + " too"),
    ("b, a", "right", "(a) is right"),
    ({"a", "b"}, "right", "(b) is right"),
    ("a", "wrong", "(a) is right: " + WHY + " One more choice is right too."),
    ("ac", "wrong", "(c) is wrong: another GET falls between the two"),
    ("abc", "wrong", "(c) is wrong"),
])
def test_several_right_answers_must_all_be_chosen(answer, verdict, says):
    q = bank(several(), number(), words())[0]
    found = q.verdict(answer)
    assert found.verdict == verdict and says in found.message, found.message
    assert "choose every answer that is right" in q.asks()
    if answer == "a":  # a missing right choice is counted, never named
        assert "Lua" not in found.message


@pytest.mark.parametrize("answer, verdict, says", [
    (119, "right", "capacity once"),
    ("120", "right", "capacity once"),
    ("118.0 requests", "right", "capacity once"),
    ("1,19", "not answered", "is not a number"),
    (121, "wrong", "split it into"),
    (100, "wrong", "that is the refill alone"),
    ("100.5", "wrong", "that is the refill alone"),
    ("a hundred", "not answered", "'a hundred' is not a number: the answer is a number, in "
                                  "requests"),
    (float("nan"), "not answered", "not a finite number"),
    (True, "not answered", "is not a number"),
    (None, "not answered", "nothing written yet"),
])
def test_a_number_is_right_within_its_tolerance_and_a_likely_mistake_is_explained(
        answer, verdict, says):
    q = bank(number(), single(), words())[0]
    found = q.verdict(answer)
    assert found.verdict == verdict and says in found.message, (answer, found)


def test_a_number_reads_thousands_separators():
    q = Number("How many?", terms=("x",), value=47748, why=WHY, otherwise=WHY)
    assert q.verdict("47,748").ok and q.verdict("47748 requests").ok
    assert not q.verdict("47,749").ok


@pytest.mark.parametrize("answer, verdict, says", [
    ("shaping", "right", "a shaper sends"),
    ("Shaping.", "right", "a shaper sends"),
    ("the  shaper", "right", "a shaper sends"),
    ("policing", "wrong", "a policer keeps"),
    ("Policing!", "wrong", "a policer keeps"),
    ("police", "wrong", "one reading is a meter"),
    ("   ", "not answered", "nothing written yet"),
    (3, "not answered", "3 is not words"),
])
def test_words_are_right_in_any_accepted_form(answer, verdict, says):
    q = bank(words(), single(), number())[0]
    found = q.verdict(answer)
    assert found.verdict == verdict and says in found.message, (answer, found)


def test_normal_form():
    assert normal("The Sliding-Window_log.") == "sliding window log"
    assert normal("  an  `INCR`  ") == "incr"
    assert normal("theory") == "theory"  # a leading article is a word, not a prefix


def test_check_prints_the_verdict_and_returns_it(capsys):
    q = bank(single(), number(), words())[0]
    found = q.check("b")
    assert capsys.readouterr().out == f"{found.text()}\n"
    assert found.text().startswith("question 99.1: wrong — (b) is wrong")
    assert q.check("a", quiet=True).ok and capsys.readouterr().out == ""
    assert found.as_dict()["verdict"] == "wrong" and repr(found) == found.text()


def test_hint_and_solution_show_as_text_and_give_the_answer_only_in_the_solution():
    q, n, w = bank(single(), number(), words())
    assert "refill rate" in q.hint() and "The rate." not in q.hint()
    assert q.solution() == f"question 99.1: (a) The rate. — {WHY}"
    assert n.solution().startswith("question 99.2: 119 requests (within 1) — capacity once")
    assert w.solution().startswith("question 99.3: shaping (also: shaper) — a shaper")
    assert type(q.hint()).__name__ == "Prose"  # shown as text, not as a quoted repr
    slack = Number("How long?", terms=("x",), value=0.25, tolerance=1e-6, unit="s", why=WHY,
                   otherwise=WHY)
    assert slack.answer_text() == "0.25 s"  # a float's slack is not a tolerance worth saying


def test_choices_are_shown_in_an_order_drawn_from_the_questions_place():
    first = [c.text for c in bank(single(shuffle=True), number(), words())[0].choices]
    again = [c.text for c in bank(single(shuffle=True), number(), words())[0].choices]
    elsewhere = [[c.text for c in bank(number(), single(shuffle=True), words(),
                                       lesson=f"{n:02d}")[1].choices] for n in range(20)]
    assert first == again  # the same every run
    assert sorted(first) == sorted(c.text for c in single().choices)
    assert len({tuple(order) for order in elsewhere}) > 1  # not one fixed order everywhere
    kept = bank(single(shuffle=False), number(), words())[0]
    assert [c.text for c in kept.choices] == [c.text for c in single().choices]


# ---------------------------------------------------------------- a bank's rules


@pytest.mark.parametrize("broken, says", [
    (MultipleChoice("Q?", terms=("x",), choices=(Choice("A", WHY), Choice("B", WHY))),
     "no choice is right"),
    (MultipleChoice("Q?", terms=("x",), choices=(Choice("A", WHY, right=True),
                                                 Choice("B", "wrong")),),
     "choice (b) does not say why it is wrong"),
    (MultipleChoice("Q?", terms=("x",), choices=(Choice("A", WHY, right=True),)),
     "it has 1 choices"),
    (MultipleChoice("Q?", terms=("x",), choices=(Choice("A", WHY, right=True),
                                                 Choice("a", WHY))),
     "two choices read the same"),
    (MultipleChoice("Q?", terms=(), choices=(Choice("A", WHY, right=True), Choice("B", WHY))),
     "names no glossary term"),
    (Number("Q?", terms=("x",), value=3, why=WHY, otherwise="no"), "otherwise= does not explain"),
    (Number("Q?", terms=("x",), value=3, tolerance=1, why=WHY, otherwise=WHY,
            mistakes={4: WHY}), "the mistake 4 is accepted as right"),
    (Number("Q?", terms=("x",), why=WHY, otherwise=WHY), "its value is not a finite number"),
    (Words("Q?", terms=("x",), accepted=("shaping",), why=WHY, otherwise=WHY,
           mistakes={"Shaping": WHY}), "the mistake 'Shaping' is accepted as right"),
    (Words("Q?", terms=("x",), accepted=(), why=WHY, otherwise=WHY), "it accepts no answer"),
])
def test_a_malformed_question_is_refused_naming_the_lesson_and_the_question(broken, says):
    with pytest.raises(BankError, match="question 2") as caught:
        bank(single(), broken, number(), lesson="07")
    assert says in str(caught.value) and "notebook 07" in str(caught.value)


@pytest.mark.parametrize("count", [2, 6])
def test_a_bank_holds_three_to_five_questions(count):
    with pytest.raises(BankError, match=f"has {count} questions; a lesson asks 3 to 5"):
        bank(*[single() for _ in range(count)])


def test_an_unknown_lesson_is_named_with_the_ones_that_exist():
    with pytest.raises(ValueError, match=r"no quiz for notebook '99'; quizzes exist for 00, 01"):
        quiz.lesson("99")
    with pytest.raises(ValueError, match="no quiz for notebook 'windows'"):
        quiz.lesson("windows")
    with pytest.raises(ValueError, match="questions 1 to 5, not 6"):
        quiz.question("03", 6)
    assert quiz.lesson(3).lesson == quiz.lesson("03-windows.ipynb").lesson == "03"


def test_a_bank_module_that_breaks_the_contract_is_named(monkeypatch):
    package = importlib.import_module(quiz.BANKS)
    monkeypatch.setattr(package, "LESSONS", (*package.LESSONS, "42"))
    fake = types.ModuleType(f"{quiz.BANKS}.lesson42")
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    with pytest.raises(BankError, match=r"notebook 42 \(ratelab.exercises.quizzes.lesson42\) "
                                        "defines no NOTEBOOK"):
        quiz.lesson("42")
    fake.NOTEBOOK, fake.questions = "41-elsewhere", lambda: [single(), number(), words()]
    with pytest.raises(BankError, match="names notebook '41-elsewhere', not one numbered 42"):
        quiz.lesson("42")
    fake.NOTEBOOK = "42-answer"
    assert len(quiz.lesson("42")) == 3


# ---------------------------------------------------------------- every lesson's bank

LESSONS = quiz.lessons()


@pytest.fixture(scope="module")
def banks() -> dict:
    return {lesson: quiz.lesson(lesson) for lesson in LESSONS}


def test_every_teaching_notebook_has_a_bank():
    notebooks = sorted(p.name for p in (Path(__file__).resolve().parents[2] / "notebooks")
                       .glob("[0-9][0-9]-*.ipynb"))
    assert [n[:2] for n in notebooks] == list(LESSONS)
    for name in notebooks:
        assert importlib.import_module(f"{quiz.BANKS}.lesson{name[:2]}").NOTEBOOK == name[:-6]


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_bank_asks_three_to_five_explained_questions(banks, lesson):
    questions = banks[lesson]
    assert 3 <= len(questions) <= 5
    assert any(q.kind == "multiple choice" for q in questions)
    for q in questions:
        assert q.name.startswith(f"{lesson}.") and q.terms
        if q.kind == "multiple choice":
            assert all(len(c.why.split()) >= quiz.MIN_WHY_WORDS for c in q.choices)
            assert 1 <= len(q.right) < len(q.choices)


@pytest.mark.parametrize("lesson", LESSONS)
def test_exactly_the_right_choices_are_accepted(banks, lesson):
    """Every non-empty set of choices: right iff it is the set of right ones, and every
    chosen choice's own explanation is what the learner reads."""
    for q in (q for q in banks[lesson] if q.kind == "multiple choice"):
        for size in range(1, len(q.choices) + 1):
            for chosen in combinations(q.letters, size):
                found = q.verdict("".join(chosen))
                assert found.ok is (frozenset(chosen) == q.right), (q.name, chosen)
                for k in chosen:
                    choice = q.choices[q.letters.index(k)]
                    assert f"({k}) is {'right' if choice.right else 'wrong'}: {choice.why}" \
                        in found.message


@pytest.mark.parametrize("lesson", LESSONS)
def test_short_answers_accept_their_forms_and_refuse_the_rest(banks, lesson):
    for q in (q for q in banks[lesson] if q.kind in ("number", "words")):
        if q.kind == "number":
            right = [q.value, q.value - q.tolerance, q.value + q.tolerance, f"{q.value:g} {q.unit}"]
            wrong = [q.value + q.tolerance + 1, q.value - 2 * q.tolerance - 1, -q.value - 1]
            assert f"{q.value:g}" not in q.prompt.replace(",", ""), \
                f"{q.name}: the prompt gives the answer away"
        else:
            right = list(q.accepted) + [form.upper() for form in q.accepted]
            wrong = ["", "no idea", *q.mistakes]
        assert all(q.verdict(a).ok for a in right), (q.name, right)
        assert not any(q.verdict(a).ok for a in wrong), (q.name, wrong)
        for mistake, why in q.mistakes.items():
            found = q.verdict(mistake)
            assert (found.verdict, found.message) == ("wrong", why), (q.name, mistake)
        assert q.verdict("not the answer at all").verdict in ("wrong", "not answered")


def test_the_right_choice_is_not_given_away_by_its_length(banks):
    """A learner who always picks the longest choice must not do well: across the banks, the
    right choice of a one-answer question is the strictly longest in at most a third of them."""
    singles = [q for b in banks.values() for q in b if q.kind == "multiple choice"
               and not q.several]
    longest = [q.name for q in singles
               if min(len(c.text) for c in q.choices if c.right)
               > max(len(c.text) for c in q.choices if not c.right)]
    assert len(singles) >= 30
    assert len(longest) <= len(singles) / 3, longest


def test_the_right_letter_varies(banks):
    letters = [min(q.right) for b in banks.values() for q in b if q.kind == "multiple choice"]
    assert max(letters.count(k) for k in set(letters)) <= len(letters) / 2
