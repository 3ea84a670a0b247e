"""Exercise: the sliding log's trailing window (notebook 03).

Write a class ``SlidingLog(limit, window)`` whose ``allow(now, cost=1)`` returns
``(allowed, remaining, retry_after)``. It logs the time and cost of every admitted request; a
request at `now` passes when the cost logged in the trailing window (now - W, now] — half-open:
a request exactly W ago has left it — plus its own cost is within `limit`. Rejected requests are
not logged. `remaining`: requests of cost 1 that would still fit now, after this one;
`retry_after`: 0 when allowed, else the seconds until enough logged cost has left the window.
"""

from __future__ import annotations

import math
from collections import deque

from .casekit import Shape, count, grid_times, with_costs
from .core import Field, RefLimiter, StudentLimiter, TimelineExercise
from ._limiter_kit import KINDS, verbs
from .fixed_window import NAMES, decision_fields


class SlidingLog:
    """At most `limit` in any trailing window (t - W, t]."""

    def __init__(self, limit, window):
        self.limit, self.window = limit, window
        self.log = deque()  # (time, cost) of admitted requests, oldest first

    def allow(self, now, cost=1):
        """(allowed, remaining, retry_after) for a request of `cost` at `now`."""
        while self.log and self.log[0][0] <= now - self.window:  # left (now - W, now]
            self.log.popleft()
        used = sum(c for _, c in self.log)
        allowed = used + cost <= self.limit
        if allowed:
            self.log.append((now, cost))
            used += cost
            return True, max(0, math.floor(self.limit - used)), 0.0
        need = used + cost - self.limit  # logged cost that must leave first
        for t, c in self.log:
            need -= c
            if need <= 0:
                return False, max(0, math.floor(self.limit - used)), t + self.window - now


class SlidingLogExercise(TimelineExercise):
    name = "sliding_log"
    answer = "SlidingLog"
    references = ("ratelab.limiters.sliding_log", "sliding-window-log")
    title = "The sliding log's trailing window"
    notebook = "03-windows"
    fields = (Field("allowed"), Field("remaining"), Field("retry_after", 2e-6))

    def reference(self, params):
        return RefLimiter("sliding-window-log", params, decision_fields)

    def student(self, answer, params):
        return StudentLimiter(answer, params, NAMES, KINDS)

    def public_cases(self):
        return [
            {"name": "exactly one window later", "params": {"limit": 2, "window": 1.0},
             "requests": with_costs([0, 0.5, 0.75, 1.0, 1.0, 1.5, 1.5])},
            {"name": "notebook 05's five requests", "params": {"limit": 2, "window": 1.0},
             "requests": with_costs([0.5, 1.0, 1.5, 2.0, 2.5])},
            {"name": "costs leave oldest first", "params": {"limit": 4, "window": 2.0},
             "requests": with_costs([0, 0.5, 1, 1.5, 2, 2.5], [1, 2, 1, 3, 2, 4])},
            {"name": "a long gap empties the log", "params": {"limit": 3, "window": 1.0},
             "requests": with_costs([0, 0, 0, 5, 5, 5, 5])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            limit = count(rng.choice([1, 2, 3, 5, 10]))
            window = float(rng.choice([0.5, 1, 2]))
            times = grid_times(rng, 50, window / (1.5 * limit), start=float(rng.integers(0, 100)))
            costs = [min(limit, count(rng.choice([1, 1, 1, 2]))) for _ in times]
            out.append({"name": f"random stream {i}", "params": {"limit": limit, "window": window},
                        "requests": with_costs(times, costs)})
        return out

    @staticmethod
    def shape(rng):
        """A log of binary window, so every edge (an entry leaving at t + W) is an exact time."""
        limit, window = count(rng.choice([2, 3, 5, 10])), float(rng.choice([0.5, 1, 2, 4]))
        return Shape({"limit": limit, "window": window}, window, limit, limit)


EXERCISE = SlidingLogExercise()
check, hint, solution = verbs(EXERCISE, SlidingLog, (
    "The window is (now - W, now]: an entry at exactly now - W has left it (drop entries "
    "with t <= now - W). Count the cost still in the window plus this request's. Only an "
    "admitted request goes in the log. To retry, walk the log oldest first until enough cost "
    "would be gone: that entry leaves at t + W."),
    imports="import math\nfrom collections import deque")
