"""Exercise: a calendar-aligned fixed window (notebook 03).

Write a class ``FixedWindow(limit, window)`` whose ``allow(now, cost=1)`` returns
``(allowed, remaining, retry_after)``. Windows are calendar-aligned: [kW, (k+1)W), whatever the
time of the first request. A request passes when the window's count plus its cost is within
`limit`; rejected requests are not counted. `remaining` is how many requests of cost 1 would
still pass in this window after this one (never below 0); `retry_after` is 0 when allowed, else
the seconds until the next window begins.
"""

from __future__ import annotations

import math

from .casekit import Shape, count, grid_times, with_costs
from .core import Field, RefLimiter, StudentLimiter, TimelineExercise
from ._limiter_kit import KINDS, verbs


class FixedWindow:
    """At most `limit` per calendar window [kW, (k+1)W)."""

    def __init__(self, limit, window):
        self.limit, self.window = limit, window
        self.index, self.count = None, 0

    def allow(self, now, cost=1):
        """(allowed, remaining, retry_after) for a request of `cost` at `now`."""
        k = math.floor(now / self.window)
        if k != self.index:
            self.index, self.count = k, 0
        allowed = self.count + cost <= self.limit
        if allowed:
            self.count += cost
        retry_after = 0.0 if allowed else (k + 1) * self.window - now
        return allowed, max(0, math.floor(self.limit - self.count)), retry_after


NAMES = ("allowed", "remaining", "retry_after")


def decision_fields(d, lim, now):
    return {"allowed": d.allowed, "remaining": d.remaining, "retry_after": d.retry_after}


class FixedWindowExercise(TimelineExercise):
    name = "fixed_window"
    answer = "FixedWindow"
    references = ("ratelab.limiters.fixed_window", "fixed-window")
    title = "A calendar-aligned fixed window"
    notebook = "03-windows"
    fields = (Field("allowed"), Field("remaining"), Field("retry_after", 2e-6))
    algorithm = "fixed-window"

    def reference(self, params):
        return RefLimiter(self.algorithm, params, decision_fields)

    def student(self, answer, params):
        return StudentLimiter(answer, params, NAMES, KINDS)

    def public_cases(self):
        return [
            {"name": "first request mid-window", "params": {"limit": 3, "window": 1.0},
             "requests": with_costs([0.75, 0.75, 0.75, 0.75, 1.0, 1.0, 1.5])},
            {"name": "the boundary is calendar time", "params": {"limit": 2, "window": 10.0},
             "requests": with_costs([7, 8, 9, 9.5, 10, 10, 10, 19.75, 20])},
            {"name": "costs", "params": {"limit": 5, "window": 2.0},
             "requests": with_costs([0, 0.5, 1, 1.5, 2, 2], [3, 3, 2, 1, 5, 1])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            shape = self.shape(rng, limits=(1, 2, 3, 5, 10))
            limit = shape.params["limit"]
            times = grid_times(rng, 50, shape.period_s / (1.5 * limit),
                               start=float(rng.integers(0, 100)) + float(rng.integers(0, 8)) / 8)
            costs = [min(limit, count(rng.choice([1, 1, 1, 2]))) for _ in times]
            out.append({"name": f"random stream {i}", "params": shape.params,
                        "requests": with_costs(times, costs)})
        return out

    @staticmethod
    def shape(rng, limits=(2, 3, 5, 10)):
        """A window of binary length, so every edge k x W is an exact time."""
        limit, window = count(rng.choice(limits)), float(rng.choice([0.5, 1, 2, 4]))
        return Shape({"limit": limit, "window": window}, window, limit, limit)


EXERCISE = FixedWindowExercise()
check, hint, solution = verbs(EXERCISE, FixedWindow, (
    "The window a time falls in is k = floor(now / window): it starts at k x window, not at "
    "the first request. Start counting again when k changes. Count only what passes; the "
    "next window begins at (k + 1) x window."), imports='import math')
