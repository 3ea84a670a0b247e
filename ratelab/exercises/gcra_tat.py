"""Exercise: GCRA's theoretical arrival time (notebook 09).

Write a class ``GCRA(rate, burst)`` whose ``allow(now, cost=1)`` returns
``(allowed, retry_after)``, keeping one number per key: the TAT, the time at which the key
would be caught up. With period T = 1/rate and tolerance DVT = T x (burst + 1), a request moves
the TAT to max(TAT, now) + cost x T; it passes when that new TAT is at most DVT ahead of now
(new TAT - DVT <= now). A rejected request leaves the TAT alone, and its retry_after is how long
until it would pass: new TAT - DVT - now. An idle key's TAT is now.
"""

from __future__ import annotations

from .core import Field, RefLimiter, StudentLimiter, TimelineExercise, grid_times, with_costs
from ._limiter_kit import KINDS, verbs


class GCRA:
    """One TAT per key: burst + 1 at once, then one per 1/rate seconds."""

    def __init__(self, rate, burst):
        self.period = 1 / rate
        self.tolerance = self.period * (burst + 1)
        self.tat = None

    def allow(self, now, cost=1):
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
            {"name": "burst + 1 at once", "params": {"rate": 2, "burst": 2},
             "requests": with_costs([0, 0, 0, 0, 0.5, 0.5, 1.5])},
            {"name": "burst 0 is one per period", "params": {"rate": 4, "burst": 0},
             "requests": with_costs([0, 0.125, 0.25, 0.375, 0.5, 0.5])},
            {"name": "rejections leave the TAT", "params": {"rate": 1, "burst": 1},
             "requests": with_costs([0, 0, 0, 0, 0, 1, 1, 2])},
            {"name": "an idle key banks nothing", "params": {"rate": 4, "burst": 0},
             "requests": with_costs([0, 10, 10, 10, 10.25])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            rate = float(rng.choice([0.5, 1, 2, 4, 8]))
            burst = int(rng.choice([0, 1, 3, 5]))
            times = grid_times(rng, 50, 1 / (1.4 * rate), start=float(rng.integers(0, 1000)))
            out.append({"name": f"random stream {i}", "params": {"rate": rate, "burst": burst},
                        "requests": with_costs(times)})
        return out


EXERCISE = GcraExercise()
check, hint, solution = verbs(EXERCISE, GCRA, (
    "Start from max(TAT, now): a key that was idle is caught up at now, not in the past. "
    "The tolerance is (burst + 1) periods, so an idle key takes burst + 1 at once. Store the "
    "new TAT only when the request passes."))
