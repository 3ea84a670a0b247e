"""Exercise: the shaper's departure times (notebook 02).

Write ``departures(arrivals, rate, capacity) -> list``: requests arrive at the sorted times
`arrivals` at a leaky bucket used as a queue. It serves one request every 1/rate seconds, in
order, and holds at most `capacity` requests' worth of work (the one being served counts until
its 1/rate is up). For each arrival give the time it leaves the queue (starts being served), or
None when it finds the queue full and is dropped. An idle shaper serves an arrival at once.
"""

from __future__ import annotations

from .casekit import Shape, count, grid_times, with_costs
from .core import AnswerFailed, Field, RefLimiter, TimelineExercise, as_number, call
from ._limiter_kit import verbs


def departures(arrivals, rate, capacity):
    """Each arrival's departure time from the shaper, in order, or None when it is dropped."""
    out, level, last = [], 0.0, None
    for t in arrivals:
        if last is not None:
            level = max(0.0, level - (t - last) * rate)  # work drained since the last arrival
        last = t
        if level + 1 <= capacity:
            out.append(t + level / rate)  # wait behind the work already queued
            level += 1
        else:
            out.append(None)
    return out


class ShaperExercise(TimelineExercise):
    name = "shaper_departures"
    answer = "departures"
    references = ("ratelab.limiters.leaky_bucket", "leaky-bucket")
    title = "The shaper's departure times"
    notebook = "02-leaky-bucket"
    fields = (Field("departure", 2e-6),)

    def reference(self, params):
        return RefLimiter("leaky-bucket", {**params, "mode": "shape"}, lambda d, lim, now: {
            "departure": now + d.delay if d.allowed else None})

    def answers(self, answer, case, steps):
        times = [t for t, _ in case["requests"]]
        p = case["params"]
        if not callable(answer):
            raise AnswerFailed("bad return", "the answer must be a function departures(...)")
        got = call(answer, list(times), p["rate"], p["capacity"])
        try:
            got = list(got)
        except TypeError:
            raise AnswerFailed("bad return", f"departures returned {type(got).__name__}; "
                                             "expected a list") from None
        return [{"departure": as_number(g, "a departure", optional=True)} for g in got]

    def public_cases(self):
        return [
            {"name": "a burst of 5 at rate 4", "params": {"rate": 4.0, "capacity": 10},
             "requests": with_costs([0.0] * 5)},
            {"name": "a full queue drops", "params": {"rate": 2.0, "capacity": 3},
             "requests": with_costs([0, 0, 0, 0, 0.5, 0.5, 2, 5])},
            {"name": "idle gaps", "params": {"rate": 8.0, "capacity": 4},
             "requests": with_costs([0, 0, 1, 1, 1, 1.0625, 3])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            rate = float(rng.choice([2, 4, 8]))
            capacity = count(rng.choice([1, 2, 4, 8]))
            times = grid_times(rng, 50, 1 / (1.3 * rate))
            out.append({"name": f"random stream {i}", "params": {"rate": rate,
                        "capacity": capacity}, "requests": with_costs(times)})
        return out

    cost_kind = False  # its answer takes no cost

    @staticmethod
    def shape(rng):
        """A shaper whose period 1/rate is a binary fraction: each drain edge is exact."""
        rate, capacity = float(rng.choice([1, 2, 4, 8])), count(rng.choice([1, 2, 4, 8]))
        return Shape({"rate": rate, "capacity": capacity}, 1 / rate, capacity, windowed=False)


EXERCISE = ShaperExercise()
check, hint, solution = verbs(EXERCISE, departures, (
    "Keep the work queued ahead (the water level): it drains at rate per second between "
    "arrivals, never below 0. An arrival leaves after level / rate seconds; it is dropped "
    "when level + 1 would exceed capacity."))
