"""Exercises with instant checks: one module per exercise, each with check(), hint(), solution().

    >>> from ratelab.exercises import token_bucket_take as ex
    >>> ex.check(my_take)        # prints the verdict, returns a Result

A check runs the answer beside the reference limiter on the suite's own timelines and on seeded
random streams, and prints "the public checks passed", "not attempted" or "wrong" with the
first disagreeing request as a short timeline. :func:`module` gives each name's module.

The teaching notebooks' predict-then-run questions use :func:`reveal`
(``ratelab.exercises.predict``): the reader writes a number, the next cell measures it and says
how close it was. Each teaching notebook ends with a few questions that check understanding,
:mod:`quiz` (``quiz.lesson("03")``; ``quiz.question("03", 1).check("b")`` from code), whose
banks are in ``ratelab.exercises.quizzes``.
"""

from __future__ import annotations

import importlib

from . import quiz
from .core import Result
from .predict import reveal

NAMES = (
    "token_bucket_take",
    "shaper_departures",
    "fixed_window",
    "boundary_attack",
    "sliding_log",
    "counter_estimate",
    "lua_counter",
    "fail_policy",
    "gcra_tat",
    "nginx_burst",
    "headers",
    "storm_client",
    "choose_limiter",
)


def module(name: str):
    """The module of exercise `name` (ValueError naming the exercises when unknown)."""
    if name not in NAMES:
        raise ValueError(f"unknown exercise {name!r}; choose one of {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{name}")


__all__ = ["NAMES", "module", "quiz", "Result", "reveal"]
