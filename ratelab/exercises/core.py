"""The checker core: run a student's answer beside the reference and say what went wrong first.

Every exercise states a contract (what the student writes, what it returns) and a list of
*cases*: the suite's own timelines (public, the same every run) and seeded random streams
(`rng` passed in). A case is a JSON-able dict, so an instructor can keep more of them in a file.

:func:`run_check` plays every case and returns a :class:`Result`; ``check`` in each exercise
prints it. The verdict is one of three words:

* ``passed``: "the public checks passed" — never "correct", since grading uses more cases;
* ``not attempted``: the stub is untouched (it raises NotImplementedError before answering);
* ``wrong``: with the first disagreeing request as a short timeline (time, cost, what the
  reference decided against what the answer gave, and the reference's state just before).

A student's code that raises, runs too long or returns the wrong type gets ``wrong`` with that
reason in words, never a traceback.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..limiters import make
from . import proxy
from .casekit import timeline_kinds
from .errors import AnswerFailed

VERDICTS = ("passed", "not attempted", "wrong")

CASE_TIME_LIMIT_S = 20.0
"""Seconds one case may run before the answer is called stuck (a loop)."""

TIME_TOLERANCE_S = 2e-6
"""Seconds: how far a time an answer gives (retry_after, a departure) may sit from the
reference's. Float seconds and integer ticks round differently by up to a microsecond."""

TIMELINE_ROWS = 5
"""How many requests the timeline shows: the disagreeing one and those just before it."""


@dataclass
class Failure:
    """The first thing that went wrong: where, which field, expected against got."""

    case: str
    kind: str                      # "disagrees", "raised", "timeout", "bad return", "rule"
    message: str                   # one line a student can act on
    index: int | None = None       # which request of the case (0-based), if per request
    time: float | None = None
    field: str | None = None
    expected: Any = None
    got: Any = None
    timeline: str = ""             # the short table, already formatted

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Result:
    """What a check found: the verdict, how many cases passed, and the first failure."""

    exercise: str
    verdict: str
    cases: int = 0
    cases_passed: int = 0
    requests: int = 0
    failure: Failure | None = None
    note: str = ""

    @property
    def score(self) -> float:
        """The share of cases passed (0 when not attempted)."""
        return self.cases_passed / self.cases if self.cases else 0.0

    @property
    def ok(self) -> bool:
        return self.verdict == "passed"

    def text(self) -> str:
        """The verdict as a student reads it."""
        if self.verdict == "passed":
            head = (f"{self.exercise}: the public checks passed ({self.cases} cases, "
                    f"{self.requests} requests). Grading runs more cases than these.")
            return head + (f"\n{self.note}" if self.note else "")
        if self.verdict == "not attempted":
            return (f"{self.exercise}: not attempted — the stub still raises "
                    "NotImplementedError. Replace its body with your answer.")
        f = self.failure
        lines = [f"{self.exercise}: wrong — {f.message}"]
        if f.timeline:
            lines += ["", f.timeline]
        lines.append(f"({self.cases_passed} of {self.cases} cases passed; "
                     "hint() gives a nudge, solution() the reference answer)")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"exercise": self.exercise, "verdict": self.verdict, "score": self.score,
                "cases": self.cases, "cases_passed": self.cases_passed,
                "requests": self.requests, "note": self.note,
                "failure": self.failure.as_dict() if self.failure else None}

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:  # IPython shows the text, not a dataclass
        p.text(self.text())


# ---------------------------------------------------------------- calling student code


def call(fn: Callable, *args, **kwargs):
    """fn(*args, **kwargs). An answer is reached through a port (:mod:`.proxy`), which already
    turns what the student's code raised into NotImplementedError or AnswerFailed."""
    return fn(*args, **kwargs)


# ---------------------------------------------------------------- answers' return values


def as_fields(value: Any, names: Sequence[str], what: str) -> dict:
    """The answer's return value as {name: value}: from a tuple in `names` order, a mapping,
    an object with those attributes (a Decision), or a bare bool when one field is asked."""
    if len(names) == 1 and not isinstance(value, (tuple, list, Mapping)) \
            and not all(hasattr(value, n) for n in names):
        return {names[0]: value}
    if isinstance(value, Mapping):
        missing = [n for n in names if n not in value]
        if missing:
            raise AnswerFailed("bad return", f"{what} returned a mapping without "
                                             f"{', '.join(missing)} (keys: {list(value)[:6]})")
        return {n: value[n] for n in names}
    if isinstance(value, (tuple, list)):
        if len(value) != len(names):
            raise AnswerFailed("bad return", f"{what} returned {len(value)} values; expected "
                                             f"{len(names)}: ({', '.join(names)})")
        return dict(zip(names, value))
    if all(hasattr(value, n) for n in names):
        return {n: getattr(value, n) for n in names}
    raise AnswerFailed("bad return", f"{what} returned {_short(value)}; expected "
                                     f"({', '.join(names)})")


def _short(value: Any) -> str:
    if isinstance(value, proxy.Answer):
        return repr(value)  # the type and repr the answers' side gave
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


def as_bool(value: Any, name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise AnswerFailed("bad return", f"{name} must be True or False, got {_short(value)}")


def as_number(value: Any, name: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise AnswerFailed("bad return", f"{name} must be a number, got {_short(value)}")
    x = float(value)
    if math.isnan(x):
        raise AnswerFailed("bad return", f"{name} is NaN")
    return x


def as_whole(value: Any, name: str) -> int:
    x = as_number(value, name)
    if x != int(x):
        raise AnswerFailed("bad return", f"{name} must be a whole number, got {value!r}")
    return int(x)


# ---------------------------------------------------------------- comparing


@dataclass(frozen=True)
class Field:
    """One field an answer is compared on: exactly (tolerance None) or within `tolerance`."""

    name: str
    tolerance: float | None = None

    def same(self, expected: Any, got: Any) -> bool:
        if self.tolerance is None or expected is None or got is None:
            return expected == got
        if isinstance(expected, float) and math.isinf(expected):
            return expected == got
        return abs(float(expected) - float(got)) <= self.tolerance


def fmt(value: Any) -> str:
    """A value as the timeline shows it."""
    if isinstance(value, bool) or value is None:
        return {True: "pass", False: "REJECT", None: "-"}[value]
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.10g}"
    if isinstance(value, dict):
        return " ".join(f"{k}={fmt(v)}" for k, v in value.items())
    return str(value)


@dataclass
class Step:
    """One request of a timeline: its time, cost, the reference's state before, and the
    expected and given fields."""

    time: float
    cost: float
    before: dict
    expected: dict
    got: dict | None = None


def timeline(steps: Sequence[Step], fields: Sequence[Field], bad: int, bad_field: str,
             state_label: str = "reference state just before request") -> str:
    """The short table: the last TIMELINE_ROWS requests up to the disagreeing one."""
    lo = max(0, bad - TIMELINE_ROWS + 1)
    head = ["#", "time", "cost"] + [f"{f.name}: expected / yours" for f in fields]
    rows = []
    for i in range(lo, bad + 1):
        s = steps[i]
        cells = [str(i), fmt(s.time), fmt(s.cost)]
        for f in fields:
            e = fmt(s.expected.get(f.name))
            g = fmt(s.got.get(f.name)) if s.got else "?"
            mark = "  <-- differs" if i == bad and f.name == bad_field else ""
            cells.append(f"{e} / {g}{mark}")
        rows.append(cells)
    widths = [max(len(r[c]) for r in [head] + rows) for c in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    out = [line(head)] + [line(r) for r in rows]
    before = steps[bad].before
    if before:
        out.append(f"{state_label} {bad}: {fmt(before)}")
    return "\n".join(out)


# ---------------------------------------------------------------- the runner


class Exercise:
    """Base of an exercise's checker.

    Subclasses set ``name``, ``title``, ``notebook`` (the teaching notebook it practises) and
    implement ``public_cases()``, ``random_cases(rng, n)`` and ``run_case(answer, case)``, which
    returns how many requests it checked or raises :class:`Mismatch`.
    """

    name = ""
    answer = ""        # the name the student's answer goes by (a function or a class)
    title = ""
    notebook = ""
    random_count = 6
    runs_here = False
    """Whether part of the answer runs in the checker's process (a Lua script the student
    wrote, run by the simulated store): the grader then checks it in a child it can kill."""
    references: tuple[str, ...] = ()
    """What an answer must not use: dotted names of the package's modules and objects that
    compute this exercise's answer, and registry names of its limiter (``"gcra"``). The
    exercise's own module (its solution) is always one."""

    def public_cases(self) -> list[dict]:
        raise NotImplementedError

    def random_cases(self, rng: np.random.Generator, n: int) -> list[dict]:
        raise NotImplementedError

    def run_case(self, answer: Any, case: dict) -> int:
        raise NotImplementedError

    def cases(self, rng: np.random.Generator | None = None) -> list[dict]:
        """The public cases, then `random_count` seeded random ones (seed 0 unless given)."""
        rng = np.random.default_rng(0) if rng is None else rng
        return self.public_cases() + self.random_cases(rng, self.random_count)

    def instructor_cases(self, rng: np.random.Generator) -> list[dict]:
        """The cases only the grader runs, drawn from `rng` (by default twice the random
        cases a check draws; exercises add kinds their public cases lack)."""
        return self.random_cases(rng, 2 * self.random_count)

    def check(self, answer: Any, *, rng: np.random.Generator | None = None,
              cases: Iterable[dict] | None = None, time_limit_s: float = CASE_TIME_LIMIT_S,
              **options) -> Result:
        """Run `answer` on every case (the public ones and `rng`'s random ones, or `cases`).

        `answer` is the learner's own object, or the grader's stand-in for a sandboxed one
        (:mod:`.proxy`): either way every call goes through the same port."""
        todo = list(self.cases(rng) if cases is None else cases)
        answer = proxy.local(answer, self.answer or self.name)
        result = Result(self.name, "passed", cases=len(todo))
        answered = False
        for case in todo:
            answer.budget.start(time_limit_s)
            try:
                n = self.run_case(answer, case, **options)
                result.requests += n
                result.cases_passed += 1
                answered = True
            except NotImplementedError:
                if not answered and result.failure is None:
                    return Result(self.name, "not attempted", cases=len(todo))
                self._fail(result, Failure(case.get("name", "?"), "raised",
                                           "your code raised NotImplementedError (unfinished?)"))
            except Mismatch as m:
                answered = True
                self._fail(result, m.failure)
            except AnswerFailed as e:
                self._fail(result, Failure(case.get("name", "?"), e.kind,
                                           f"{e.message} — in case {case.get('name', '?')!r}"))
                if e.kind == "timeout":
                    break  # a loop would cost the time limit again on every case
            except KeyboardInterrupt:
                raise
        return result

    @staticmethod
    def _fail(result: Result, failure: Failure) -> None:
        result.verdict = "wrong"
        if result.failure is None:
            result.failure = failure


class Mismatch(Exception):
    """The answer disagreed with the reference; carries the Failure to report."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class TimelineExercise(Exercise):
    """An exercise whose answer decides requests one by one, compared field by field.

    Subclasses implement ``reference(params)`` -> an object with ``step(now, cost) -> dict``
    and ``state(now) -> dict`` (the reference's state before the request, from ``inspect``),
    and ``student(answer, params)`` -> an object with ``step(now, cost) -> dict``; or
    ``answers(answer, case)`` -> the list of given dicts at once (batch answers).
    """

    fields: tuple[Field, ...] = ()
    cost_kind = True
    """Whether the instructor's cases include the costs kind (False where the answer takes
    no cost)."""

    def reference(self, params: dict):
        raise NotImplementedError

    def student(self, answer: Any, params: dict):
        raise NotImplementedError

    state_label = "reference state just before request"

    def shape(self, rng: np.random.Generator):
        """A case's parameters and periods (:class:`.casekit.Shape`), drawn from `rng`; the
        timeline kinds of the instructor's cases are built on it."""
        raise NotImplementedError

    def instructor_cases(self, rng: np.random.Generator) -> list[dict]:
        """More random streams, then the kinds the public cases lack: window edges, Unix-epoch
        times, long idle gaps and (where the answer takes one) costs up to the limit. The
        answer holds one key: there is no many-keys case."""
        return self.random_cases(rng, self.random_count) + timeline_kinds(
            rng, self.shape, costs=self.cost_kind)

    def answers(self, answer: Any, case: dict, steps: list) -> list[dict] | None:
        """All the answer's dicts for a case at once (None: ask request by request)."""
        return None

    def run_case(self, answer: Any, case: dict, **options) -> int:
        params, requests = case["params"], case["requests"]
        ref = self.reference(params)
        steps: list[Step] = []
        for now, cost in requests:
            before = ref.state(now)
            steps.append(Step(now, cost, before, ref.step(now, cost)))
        batch = self.answers(answer, case, steps)
        if batch is not None and len(batch) != len(steps):
            raise AnswerFailed("bad return", f"your answer gave {len(batch)} results for "
                                             f"{len(steps)} requests")
        mine = None if batch is not None else self.student(answer, params)
        for i, s in enumerate(steps):
            s.got = batch[i] if batch is not None else mine.step(s.time, s.cost)
            for f in self.fields:
                if not f.same(s.expected[f.name], s.got.get(f.name)):
                    raise Mismatch(Failure(
                        case["name"], "disagrees",
                        f"in case {case['name']!r} ({fmt(params)}), request {i} at "
                        f"t={fmt(s.time)}: {f.name} should be {fmt(s.expected[f.name])}, "
                        f"yours is {fmt(s.got.get(f.name))}",
                        index=i, time=s.time, field=f.name, expected=s.expected[f.name],
                        got=s.got.get(f.name),
                        timeline=timeline(steps, self.fields, i, f.name, self.state_label)))
        return len(steps)


def show(result: Result, quiet: bool = False) -> Result:
    """Print `result` (unless `quiet`) and return it."""
    if not quiet:
        print(result.text())
    return result


# ---------------------------------------------------------------- limiter-shaped answers


class RefLimiter:
    """A registry limiter on one key, seen through the public API: ``state`` is ``inspect``
    before the request, ``step`` is ``allow`` turned into the exercise's fields."""

    def __init__(self, name: str, params: dict, fields: Callable[[Any, Any, float], dict]) -> None:
        self.limiter = make(name, **params)
        self.fields = fields

    def state(self, now: float) -> dict:
        return self.limiter.inspect("k", now)

    def step(self, now: float, cost: float) -> dict:
        return self.fields(self.limiter.allow("k", now, cost), self.limiter, now)


class StudentLimiter:
    """The student's class, built with the case's params; ``allow(now, cost)`` per request."""

    def __init__(self, cls: Any, params: dict, names: Sequence[str],
                 kinds: Mapping[str, Callable[[Any, str], Any]], *, with_cost: bool = True) -> None:
        if not callable(cls):
            raise AnswerFailed("bad return", f"the answer must be a class, got {_short(cls)}")
        self.obj = proxy.construct(cls, **params)
        if isinstance(self.obj, proxy.AnswerObject):
            self.obj.fields = tuple(names)  # a Decision-like return is read by these names
        if not callable(getattr(self.obj, "allow", None)):
            raise AnswerFailed("bad return", "your class has no allow(now, cost) method")
        self.names, self.kinds, self.with_cost = names, kinds, with_cost

    def step(self, now: float, cost: float) -> dict:
        out = call(self.obj.allow, now, cost) if self.with_cost else call(self.obj.allow, now)
        got = as_fields(out, self.names, "allow")
        return {n: self.kinds[n](got[n], n) for n in self.names}
