"""Exercise: the token bucket's ``take`` as a pure function (notebook 01).

Write ``take(tokens, last, now, cost, rate, capacity) -> (tokens, last, allowed)``: the bucket
held `tokens` as of time `last`; refill it to `now` (never above `capacity`), and let a request
of `cost` pass when the tokens cover it. Return the bucket as of `now` (tokens after this
request, and `now` as its new last time) and whether the request passed. No state outside the
arguments: the same arguments always give the same answer.
"""

from __future__ import annotations

from .casekit import Shape, count, grid_times, with_costs
from .core import (AnswerFailed, Field, RefLimiter, TimelineExercise, as_bool, as_fields,
                   as_number, call, show)
from ._limiter_kit import Code, Prose, source_of


def take(tokens, last, now, cost, rate, capacity):
    """The bucket after a request of `cost` at `now`: (tokens, now, allowed)."""
    tokens = min(capacity, tokens + (now - last) * rate)
    if tokens >= cost:
        return tokens - cost, now, True
    return tokens, now, False


class _Student:
    def __init__(self, answer, params):
        if not callable(answer):
            raise AnswerFailed("bad return", "the answer must be a function take(...)")
        self.answer, self.params, self.bucket = answer, params, None

    def step(self, now, cost):
        tokens, last = self.bucket or (self.params["capacity"], now)  # a new bucket is full
        args = (tokens, last, now, cost, self.params["rate"], self.params["capacity"])
        got = as_fields(call(self.answer, *args), ("tokens", "last", "allowed"), "take")
        again = as_fields(call(self.answer, *args), ("tokens", "last", "allowed"), "take")
        if again != got:
            raise AnswerFailed("rule", f"take{args} gave {tuple(got.values())}, then "
                                       f"{tuple(again.values())}: it must be a pure function "
                                       "(no state kept outside its arguments)")
        out = {"allowed": as_bool(got["allowed"], "allowed"),
               "tokens": as_number(got["tokens"], "tokens"),
               "last": as_number(got["last"], "last")}
        self.bucket = (out["tokens"], out["last"])
        return out


class TakeExercise(TimelineExercise):
    name = "token_bucket_take"
    answer = "take"
    references = ("ratelab.limiters.token_bucket", "token-bucket")
    title = "The token bucket's take, as a pure function"
    notebook = "01-token-bucket"
    fields = (Field("allowed"), Field("tokens", 1e-9), Field("last"))

    def reference(self, params):
        return RefLimiter("token-bucket", params, lambda d, lim, now: {
            "allowed": d.allowed, "tokens": lim.inspect("k", now)["tokens"], "last": now})

    def student(self, answer, params):
        return _Student(answer, params)

    def public_cases(self):
        return [
            {"name": "notebook 01's table", "params": {"rate": 2.0, "capacity": 2},
             "requests": with_costs([0.0, 0.0, 0.0, 0.5, 1.0])},
            {"name": "refill stops at capacity", "params": {"rate": 1.0, "capacity": 3},
             "requests": with_costs([0, 0, 0, 0, 10, 10, 10, 10, 10.5, 11])},
            {"name": "costs above one", "params": {"rate": 4.0, "capacity": 5},
             "requests": with_costs([0, 0, 0.25, 0.5, 0.5, 1.5], [3, 2, 1, 2, 3, 5])},
            {"name": "at Unix time 1.76e9", "params": {"rate": 8.0, "capacity": 4},
             "requests": with_costs([1.76e9 + t for t in (0, 0, 0, 0, 0, 0.125, 0.25, 0.25)])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            rate = float(rng.choice([1, 2, 4, 5, 10]))
            capacity = count(rng.choice([1, 2, 3, 5, 10]))
            times = grid_times(rng, 40, 1 / (1.5 * rate), start=float(rng.integers(0, 1000)))
            costs = [min(capacity, count(rng.choice([1, 1, 1, 2]))) for _ in times]
            out.append({"name": f"random stream {i}", "params": {"rate": rate,
                        "capacity": capacity}, "requests": with_costs(times, costs)})
        return out

    @staticmethod
    def shape(rng):
        """A bucket with a binary period 1/rate, so every refill edge is an exact time."""
        rate, capacity = float(rng.choice([1, 2, 4, 8])), count(rng.choice([1, 2, 3, 5, 10]))
        return Shape({"rate": rate, "capacity": capacity}, 1 / rate, capacity, capacity,
                     windowed=False)


EXERCISE = TakeExercise()


def check(answer, *, rng=None, cases=None, quiet=False, **options):
    """Check your take(tokens, last, now, cost, rate, capacity); prints and returns the Result."""
    return show(EXERCISE.check(answer, rng=rng, cases=cases, **options), quiet)


def hint() -> Prose:
    """A nudge towards the answer."""
    return Prose("Refill first: tokens + (now - last) x rate, but never above capacity. Then "
                 "the request passes iff the refilled tokens >= cost; only a passing request "
                 "takes them. Either way the bucket you return is as of now.")


def solution() -> Code:
    """The reference take's source (a notebook shows it highlighted; print gives the text)."""
    return source_of(take)
