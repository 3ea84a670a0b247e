"""Exercise: the boundary attack on a fixed window (notebooks 03 and 04).

Write ``attack(limit, window_s, boundary) -> list of send times``: a schedule that gets
2 x limit requests through a calendar-aligned fixed window of `limit` per `window_s` seconds,
with all of them inside one trailing window of `window_s` (so some rolling window holds twice
the limit). `boundary` is a window boundary (a multiple of `window_s`); send sorted times.
"""

from __future__ import annotations

import numpy as np

from ..limiters import make
from ..metrics import max_in_window
from .casekit import UNIX_S, count
from .core import AnswerFailed, Exercise, Failure, Mismatch, as_number, call, fmt
from ._limiter_kit import verbs


def attack(limit, window_s, boundary):
    """Sorted send times: 2 x `limit` of them pass the fixed window, within one `window_s`."""
    step = window_s / 10 / limit
    before = [boundary - window_s / 10 + i * step for i in range(limit)]
    # half a step after the boundary, not on it: in floats k x W can fall just short of window k
    after = [boundary + (i + 0.5) * step for i in range(limit)]
    return before + after


class BoundaryExercise(Exercise):
    name = "boundary_attack"
    answer = "attack"
    references = ("ratelab.bursts.boundary_attack", "ratelab.traces.generators.boundary_attack")
    title = "The boundary attack on a fixed window"
    notebook = "03-windows"

    def public_cases(self):
        return [{"name": "100 per second at t = 1", "limit": 100, "window_s": 1.0,
                 "boundary": 1.0},
                {"name": "10 per minute at t = 600", "limit": 10, "window_s": 60.0,
                 "boundary": 600.0}]

    def random_cases(self, rng, n):
        return [{"name": f"random {i}", "limit": count(rng.integers(1, 50)),
                 "window_s": float(rng.choice([0.1, 1.0, 10.0, 60.0])),
                 "boundary": None, "k": int(rng.integers(1, 10_000_000))} for i in range(n)]

    def instructor_cases(self, rng):
        """More random boundaries, then boundaries at Unix times, a limit of one and limits
        in the hundreds (one attacker: no many-keys case)."""
        def case(name, limit, window_s, k):
            return {"name": name, "limit": count(limit), "window_s": float(window_s),
                    "boundary": None, "k": int(k)}

        out = self.random_cases(rng, self.random_count)
        for i in range(2):
            w = float(rng.choice([1.0, 10.0, 60.0]))
            out.append(case(f"Unix time {i}", rng.integers(1, 50), w,
                            UNIX_S // w + rng.integers(0, 100_000)))
        for i in range(2):
            out.append(case(f"limit of one {i}", 1, rng.choice([0.1, 1.0, 60.0]),
                            rng.integers(1, 10_000_000)))
        for i in range(2):
            out.append(case(f"large limit {i}", rng.integers(200, 1000), rng.choice([1.0, 10.0]),
                            rng.integers(1, 10_000_000)))
        return out

    def run_case(self, answer, case, **options):
        limit, w = case["limit"], case["window_s"]
        boundary = case["boundary"] if case["boundary"] is not None else case["k"] * w
        if not callable(answer):
            raise AnswerFailed("bad return", "the answer must be a function attack(...)")
        sends = call(answer, limit, w, boundary)
        try:
            times = [as_number(t, "a send time") for t in sends]
        except TypeError:
            raise AnswerFailed("bad return", f"attack returned {type(sends).__name__}; "
                                             "expected a list of times") from None
        if len(times) > 10 * limit:
            raise AnswerFailed("rule", f"{len(times)} sends for a limit of {limit}: an attack "
                                       f"gets 2 x limit through with 2 x limit sends")
        if any(b < a for a, b in zip(times, times[1:])):
            raise AnswerFailed("rule", "the send times must be sorted")
        fixed = make("fixed-window", limit=limit, window=w)
        allowed = np.array([fixed.allow("attacker", t).allowed for t in times], dtype=bool)
        ok = np.asarray(times)[allowed]
        peak = max_in_window(ok, w)
        if peak.count < 2 * limit:
            per_window = {}
            for t in ok:
                k = int(np.floor(t / w))
                per_window[k] = per_window.get(k, 0) + 1
            raise Mismatch(Failure(
                case["name"], "disagrees",
                f"in case {case['name']!r} (limit {limit} per {fmt(w)} s, boundary "
                f"{fmt(boundary)}): the busiest trailing {fmt(w)} s held {peak.count} admitted "
                f"requests; the attack needs {2 * limit}",
                field="max_in_window", expected=2 * limit, got=int(peak.count),
                timeline="admitted per calendar window k (start k x W): " + ", ".join(
                    f"k={k}: {n}" for k, n in sorted(per_window.items())[:6])
                + f"; {int((~allowed).sum())} of {len(times)} sends rejected"))
        return len(times)


EXERCISE = BoundaryExercise()
check, hint, solution = verbs(EXERCISE, attack, (
    "A fixed window only counts inside [kW, (k+1)W). Send the limit just before the "
    "boundary and the limit again at or just after it — all within one window's length."))
