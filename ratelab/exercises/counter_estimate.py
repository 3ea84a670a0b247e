"""Exercise: the sliding counter's estimate (notebooks 03 and 05).

Write a class ``SlidingCounter(limit, window)`` whose ``allow(now, cost=1)`` returns
``(allowed, estimate)``. It keeps two counts: `cur` for the calendar window [kW, (k+1)W) that
`now` falls in, and `prev` for the window before it (0 when that window saw nothing, or when
more than one window has passed). The estimate of the trailing window, before this request, is

    prev x (1 - elapsed / W) + cur,   elapsed = now - kW

and the request passes when estimate + cost <= limit; a rejected request is not counted. The
worked example: prev 80, cur 30, 30% into the window -> 80 x 0.7 + 30 = 86.
"""

from __future__ import annotations

import math

from .casekit import Shape, count, grid_times, with_costs
from .core import Field, RefLimiter, StudentLimiter, TimelineExercise
from ._limiter_kit import KINDS, verbs


class SlidingCounter:
    """The sliding counter on one key: its decisions and its estimate of the trailing window."""

    def __init__(self, limit, window):
        self.limit, self.window = limit, window
        self.index, self.prev, self.cur = None, 0, 0

    def allow(self, now, cost=1):
        """(allowed, estimate) for a request of `cost` at `now`: the estimate before it."""
        k = math.floor(now / self.window)
        if self.index is None or k > self.index + 1:
            self.prev, self.cur = 0, 0           # nothing in the last two windows
        elif k == self.index + 1:
            self.prev, self.cur = self.cur, 0    # the current window became the previous one
        self.index = k
        weight = 1 - (now - k * self.window) / self.window
        estimate = self.prev * weight + self.cur
        allowed = estimate + cost <= self.limit
        if allowed:
            self.cur += cost
        return allowed, estimate


class CounterExercise(TimelineExercise):
    name = "counter_estimate"
    answer = "SlidingCounter"
    references = ("ratelab.limiters.sliding_counter", "sliding-window-counter")
    title = "The sliding counter's estimate"
    notebook = "05-sliding-counter-error"
    fields = (Field("allowed"), Field("estimate", 1e-9))

    def reference(self, params):
        lim = {"before": None}

        def state(now):
            lim["before"] = ref.limiter.inspect("k", now)
            return lim["before"]

        ref = RefLimiter("sliding-window-counter", params, lambda d, l, now: {
            "allowed": d.allowed, "estimate": lim["before"]["estimate"]})
        ref.state = state
        return ref

    def student(self, answer, params):
        return StudentLimiter(answer, params, ("allowed", "estimate"), KINDS)

    def public_cases(self):
        times = [i / 80 for i in range(80)] + [1 + i / 100 for i in range(30)] + [1.3]
        return [
            {"name": "the 86 example (prev 80, cur 30, 30% in)",
             "params": {"limit": 100, "window": 1.0}, "requests": with_costs(times)},
            {"name": "a skipped window forgets", "params": {"limit": 3, "window": 1.0},
             "requests": with_costs([0, 0, 0, 1.5, 1.5, 3.25, 3.25, 3.25, 3.75])},
            {"name": "calendar windows, late start", "params": {"limit": 4, "window": 2.0},
             "requests": with_costs([1.5, 1.5, 1.5, 2.5, 2.5, 3, 3.5, 5])},
            {"name": "costs count in full", "params": {"limit": 6, "window": 1.0},
             "requests": with_costs([0, 0.25, 0.5, 1, 1.5, 1.75, 2.5, 2.5],
                                    [4, 3, 2, 2, 3, 2, 6, 1])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            shape = self.shape(rng)
            limit = shape.params["limit"]
            times = grid_times(rng, 60, shape.period_s / (1.3 * limit),
                               start=float(rng.integers(0, 100)))
            costs = [min(limit, count(rng.choice([1, 1, 1, 2]))) for _ in times]
            out.append({"name": f"random stream {i}", "params": shape.params,
                        "requests": with_costs(times, costs)})
        return out

    @staticmethod
    def shape(rng):
        """A counter with a binary window, so the weights at every edge are exact."""
        limit, window = count(rng.choice([2, 3, 5, 10])), float(rng.choice([0.5, 1, 2, 4]))
        return Shape({"limit": limit, "window": window}, window, limit, limit)


EXERCISE = CounterExercise()
check, hint, solution = verbs(EXERCISE, SlidingCounter, (
    "The previous window's weight is the share of it still inside (now - W, now]: "
    "1 - elapsed / W — large at the start of the current window, 0 at its end. When now moves "
    "one window on, cur becomes prev; two or more windows on, both are 0. Windows are "
    "calendar-aligned (k = floor(now / W))."), imports='import math')
