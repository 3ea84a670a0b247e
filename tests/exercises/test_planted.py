"""The checkers catch planted wrong answers where they go wrong, and pass right ones."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import planted
from ratelab.exercises import NAMES, module


def wrong_id(row) -> str:
    return f"{row[0]}-{row[1].__name__}"


def _first_per_exercise_fast(rows):
    """Each exercise's first planted answer runs in the make check lane; the rest of the
    library is marked slow and runs in make test."""
    seen = set()
    for row in rows:
        yield row if row[0] not in seen else pytest.param(row, marks=pytest.mark.slow)
        seen.add(row[0])


def test_the_library_is_big_enough_and_covers_every_exercise():
    per_exercise = Counter(row[0] for row in planted.WRONG)
    assert len(planted.WRONG) >= 25
    assert set(per_exercise) == set(NAMES)
    assert min(per_exercise.values()) >= 2
    assert set(planted.RIGHT) == set(NAMES)


@pytest.mark.parametrize("row", list(_first_per_exercise_fast(planted.WRONG)), ids=wrong_id)
def test_a_wrong_answer_gets_wrong_pointing_at_its_mistake(row):
    name, answer, case, index, field = row
    result = module(name).EXERCISE.check(answer)
    assert result.verdict == "wrong", result.text()
    f = result.failure
    assert (f.case, f.field) == (case, field), result.text()
    if index is not None:
        assert f.index == index, result.text()
        assert "<-- differs" in f.timeline or "<--" in f.timeline
    assert f.timeline, "a wrong verdict shows the timeline (or the schedule) that failed"
    text = result.text()
    assert text.startswith(f"{name}: wrong") and f.message in text
    assert "Traceback" not in text


INSTRUCTOR_SEEDS = [0] + [pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2, 3)]
"""The seeds of the instructor's cases the tests draw (one in the make check lane)."""


def graded(name: str, seed: int) -> list[dict]:
    """The cases a grade runs: the public and random ones, then the instructor's of `seed`."""
    ex = module(name).EXERCISE
    return ex.cases() + ex.instructor_cases(np.random.default_rng(seed))


@pytest.mark.parametrize("seed", INSTRUCTOR_SEEDS)
@pytest.mark.parametrize("row", planted.WRONG_INSTRUCTOR, ids=lambda r: f"{r[0]}-{r[1].__name__}")
def test_a_mistake_the_public_cases_miss_is_caught_by_the_instructors(row, seed):
    name, answer, kind, field = row
    assert module(name).EXERCISE.check(answer).verdict == "passed", "the public cases miss it"
    result = module(name).EXERCISE.check(answer, cases=graded(name, seed))
    assert result.verdict == "wrong", result.text()
    f = result.failure
    assert f.case.startswith(kind + " "), result.text()
    assert field is None or f.field == field, result.text()
    assert f.index is not None and "<-- differs" in f.timeline, result.text()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, pytest.param(7, marks=pytest.mark.slow)])
def test_a_right_answer_written_differently_passes(name, seed):
    result = module(name).EXERCISE.check(planted.RIGHT[name], rng=np.random.default_rng(seed))
    assert result.verdict == "passed", result.text()
    assert result.cases_passed == result.cases > 0


@pytest.mark.parametrize("seed", INSTRUCTOR_SEEDS)
@pytest.mark.parametrize("name", NAMES)
def test_the_reference_and_a_right_answer_pass_the_instructors_cases(name, seed):
    m = module(name)
    for answer in (getattr(m, m.EXERCISE.answer), planted.RIGHT[name]):
        result = m.EXERCISE.check(answer, cases=graded(name, seed))
        assert result.verdict == "passed", result.text()


@pytest.mark.parametrize("row", planted.RIGHT_INT, ids=lambda r: f"{r[0]}-{r[1].__name__}")
def test_a_right_answer_written_for_whole_counts_passes(row):
    name, answer, _ = row
    result = module(name).EXERCISE.check(answer, cases=graded(name, 0))
    assert result.verdict == "passed", result.text()


@pytest.mark.parametrize("name", NAMES)
def test_the_printed_solution_runs_and_passes(name):
    m = module(name)
    namespace: dict = {}
    exec(m.solution(), namespace)
    result = m.check(namespace[m.EXERCISE.answer], rng=np.random.default_rng(3), quiet=True)
    assert result.verdict == "passed", result.text()
    assert "the public checks passed" in result.text() and "correct" not in result.text()


@pytest.mark.parametrize("name", NAMES)
def test_solution_shows_highlighted_code_and_hint_plain_text(name):
    from IPython.core.formatters import DisplayFormatter

    shown = module(name).solution()
    source = str(shown)
    assert isinstance(shown, str) and shown == source and "\n" in source.strip()
    data, _ = DisplayFormatter().format(shown)
    markdown = data["text/markdown"]
    assert markdown.startswith("```python\n") and markdown.rstrip().endswith("```")
    assert source.rstrip() in markdown
    assert data["text/plain"] == source  # the plain view is the code, not its escaped repr
    assert shown.replace("def ", "def  ") != source  # str methods still work
    nudge = module(name).hint()
    assert DisplayFormatter().format(nudge)[0]["text/plain"] == str(nudge) != repr(nudge)


def _stub(*args, **kwargs):
    raise NotImplementedError("your answer here")


class _StubClass:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError


@pytest.mark.parametrize("name", NAMES)
def test_an_untouched_stub_is_not_attempted(name):
    m = module(name)
    stub = _StubClass if m.EXERCISE.answer[:1].isupper() else _stub
    result = m.check(stub, quiet=True)
    assert result.verdict == "not attempted"
    assert result.score == 0 and "NotImplementedError" in result.text()


def test_code_that_raises_loops_or_returns_the_wrong_type_gets_a_clear_verdict():
    from ratelab.exercises import fixed_window as ex

    class Raises:
        def __init__(self, limit, window):
            self.log = {}

        def allow(self, now, cost=1):
            return self.log[now]  # KeyError on the first request

    class Loops(ex.FixedWindow):
        def allow(self, now, cost=1):
            while True:
                pass

    class Bool(ex.FixedWindow):
        def allow(self, now, cost=1):
            return super().allow(now, cost)[0]

    class Half(ex.FixedWindow):
        def allow(self, now, cost=1):
            allowed, remaining, retry = super().allow(now, cost)
            return allowed, remaining  # forgot retry_after

    raised = ex.check(Raises, quiet=True)
    assert raised.verdict == "wrong" and raised.failure.kind == "raised"
    assert "KeyError" in raised.text() and "self.log[now]" in raised.text()
    looped = ex.check(Loops, quiet=True, time_limit_s=0.5)
    assert looped.verdict == "wrong" and looped.failure.kind == "timeout"
    assert "more than 0.5 s" in looped.text()
    for cls in (Bool, Half):
        bad = ex.check(cls, quiet=True)
        assert bad.verdict == "wrong" and bad.failure.kind == "bad return", bad.text()
        assert "(allowed, remaining, retry_after)" in bad.text()


def test_a_take_that_keeps_state_outside_its_arguments_is_not_pure():
    from ratelab.exercises import token_bucket_take as ex

    calls = []

    def impure(tokens, last, now, cost, rate, capacity):
        calls.append(now)
        return ex.take(tokens, last, now, cost, rate, capacity + (len(calls) % 2))

    result = ex.check(impure, quiet=True)
    assert result.verdict == "wrong" and result.failure.kind == "rule"
    assert "pure function" in result.text()


def test_the_timeline_shows_the_reference_state_before_the_failing_request():
    from ratelab.exercises import sliding_log as ex

    result = ex.check(planted.LogClosed, quiet=True)
    timeline = result.failure.timeline
    # at t = 1 the request at 0 has left (0, 1]: the reference's log holds only 0.5
    assert timeline.endswith("reference state just before request 3: log=[0.5] count=1 limit=2")
    rows = timeline.splitlines()
    assert rows[-2].startswith("3  1 ") and "pass / REJECT  <-- differs" in rows[-2]


def test_check_prints_and_returns_the_result(capsys):
    from ratelab.exercises import gcra_tat as ex

    result = ex.check(ex.GCRA)
    assert "gcra_tat: the public checks passed" in capsys.readouterr().out
    assert result.as_dict()["verdict"] == "passed" and result.score == 1.0


@pytest.mark.service
def test_the_lua_counter_on_a_real_redis(redis_url):
    from ratelab.exercises import lua_counter as ex

    sim_only = ex.check(ex.decide, quiet=True)
    both = ex.check(ex.decide, redis_url=redis_url, quiet=True)
    assert both.verdict == "passed", both.text()
    assert both.requests > sim_only.requests  # the sequential cases ran twice
    wrong = ex.check(planted.lua_get_then_set, redis_url=redis_url, quiet=True)
    assert wrong.verdict == "wrong" and wrong.failure.field == "counter"


@pytest.mark.service
def test_the_lua_counter_checks_on_a_real_redis_alone_catch_a_lost_expiry(redis_url):
    """The SimStore cases skipped: the real Redis run alone still says no expiry."""
    from ratelab.exercises import lua_counter as ex

    case = ex.EXERCISE.public_cases()[0]
    with pytest.raises(Exception) as raised:
        from ratelab.store import RedisStore

        store = RedisStore(redis_url)
        try:
            ex.EXERCISE._sequential(planted.lua_get_then_set, case, store, "redis",
                                    "ratelab-test:expiry", real=True)
        finally:
            store.execute("DEL", "ratelab-test:expiry:0")
            store.close()
    assert "no expiry" in str(raised.value)


def test_nginx_timeline_words_its_flags_as_yes_or_no_not_as_verdicts():
    result = module("nginx_burst").EXERCISE.check(planted.NginxNoFloor)
    state = result.failure.timeline.splitlines()[-1]
    assert state.endswith("excess=0 burst=2 known=yes"), result.text()
