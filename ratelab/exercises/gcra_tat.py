"""Exercise: GCRA's theoretical arrival time (notebook 09).

Write a class ``GCRA(rate, burst)`` whose ``allow(now, cost=1)`` returns
``(allowed, retry_after)``, keeping one number per key: the TAT, the time at which the key
would be caught up. With period T = 1/rate and tolerance DVT = T x (burst + 1), a request moves
the TAT to max(TAT, now) + cost x T; it passes when that new TAT is at most DVT ahead of now
(new TAT - DVT <= now). A rejected request leaves the TAT alone, and its retry_after is how long
until it would pass: new TAT - DVT - now. An idle key's TAT is now.
"""

from __future__ import annotations

from .casekit import Shape, count, grid_times, with_costs
from .core import Field, RefLimiter, StudentLimiter, TimelineExercise
from ._limiter_kit import KINDS, verbs


class GCRA:
    """GCRA on one key: burst + 1 requests pass at once, then one per 1/rate seconds."""

    def __init__(self, rate, burst):
        self.period = 1 / rate
        self.tolerance = self.period * (burst + 1)
        self.tat = None

    def allow(self, now, cost=1):
        """(allowed, retry_after) for a request of `cost` at `now`."""
        tat = now if self.tat is None else max(self.tat, now)
        new_tat = tat + cost * self.period
        allow_at = new_tat - self.tolerance
        if allow_at <= now:
            self.tat = new_tat
            return True, 0.0
        return False, allow_at - now


class GcraExercise(TimelineExercise):
    name = "gcra_tat"
    answer = "GCRA"
    references = ("ratelab.limiters.gcra", "gcra")
    title = "GCRA's theoretical arrival time"
    notebook = "09-choosing-a-limiter"
    fields = (Field("allowed"), Field("retry_after", 2e-6))

    def reference(self, params):
        return RefLimiter("gcra", params, lambda d, lim, now: {
            "allowed": d.allowed, "retry_after": d.retry_after})

    def student(self, answer, params):
        return StudentLimiter(answer, params, ("allowed", "retry_after"), KINDS)

    def public_cases(self):
        return [
            {"name": "burst + 1 at once", "params": {"rate": 2.0, "burst": 2},
             "requests": with_costs([0, 0, 0, 0, 0.5, 0.5, 1.5])},
            {"name": "burst 0 is one per period", "params": {"rate": 4.0, "burst": 0},
             "requests": with_costs([0, 0.125, 0.25, 0.375, 0.5, 0.5])},
            {"name": "rejections leave the TAT", "params": {"rate": 1.0, "burst": 1},
             "requests": with_costs([0, 0, 0, 0, 0, 1, 1, 2])},
            {"name": "an idle key banks nothing", "params": {"rate": 4.0, "burst": 0},
             "requests": with_costs([0, 10, 10, 10, 10.25])},
            {"name": "a cost moves the TAT cost periods", "params": {"rate": 2.0, "burst": 3},
             "requests": with_costs([0, 0, 0, 1, 1.5, 3, 3, 5], [3, 1, 1, 2, 2, 4, 1, 1])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            shape = self.shape(rng)
            burst = shape.params["burst"]
            times = grid_times(rng, 50, shape.period_s / 1.4, float(rng.integers(0, 1000)))
            costs = [min(burst + 1, count(rng.choice([1, 1, 1, 2]))) for _ in times]
            out.append({"name": f"random stream {i}", "params": shape.params,
                        "requests": with_costs(times, costs)})
        return out

    @staticmethod
    def shape(rng):
        """A GCRA whose period 1/rate is a binary fraction, so every edge is an exact time."""
        rate, burst = float(rng.choice([0.5, 1, 2, 4, 8])), count(rng.choice([0, 1, 3, 5]))
        return Shape({"rate": rate, "burst": burst}, 1 / rate, burst + 1, burst + 1,
                     windowed=False)


EXERCISE = GcraExercise()
check, hint, solution = verbs(EXERCISE, GCRA, (
    "Start from max(TAT, now): a key that was idle is caught up at now, not in the past. "
    "The tolerance is (burst + 1) periods, so an idle key takes burst + 1 at once. Store the "
    "new TAT only when the request passes."))
