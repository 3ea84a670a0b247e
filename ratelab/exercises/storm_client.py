"""Exercise: the client that gets through a retry storm with the fewest attempts (notebook 08).

Write ``retry_delay(attempt, view, rng) -> seconds``: what a client waits after its attempt
number `attempt` (1 = the first try) was refused, given `view` — what it read from the 429
(:class:`ratelab.http.View`: ``view.retry_after_s``, ``view.remaining``, ``view.reset_s``) —
and a seeded ``numpy`` Generator `rng` for any randomness. Many clients behave alike against a
token bucket during a surge (:func:`ratelab.clients.simulate`); each job tries at most 10 times.

Passing means: every job gets through before the run ends, no slower on average than the
reference client plus a second, with at most 1.25 x the reference's attempts per job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..clients import Behaviour, Server, poisson_demand, simulate
from ..limiters import make
from .casekit import count
from .core import AnswerFailed, Exercise, Failure, Mismatch, as_number, call
from ._limiter_kit import verbs

ATTEMPTS_SLACK = 1.25
"""An answer may make this many times the reference's attempts per job."""

LATENCY_SLACK_S = 1.0
"""Seconds an answer's mean job latency may exceed the reference's (after doubling it)."""


RATE_PER_CLIENT = 0.6
"""Jobs per second each client of a random case starts, outside the surge."""

BASE_LOAD = 0.8
"""The most of the server's rate a random case's clients ask for outside the surge: above 1
the queue only grows, and even the reference client leaves jobs undone."""


def retry_delay(attempt, view, rng):
    """Seconds to wait before trying again, after attempt number `attempt` was refused."""
    said = view.retry_after_s if view.retry_after_s is not None else 1.0
    return said + rng.uniform(0, min(8.0, 2.0 ** attempt))


def _behaviour(fn, label):
    @dataclass(frozen=True, kw_only=True)
    class Answer(Behaviour):
        @property
        def label(self) -> str:
            return label

        def retry_delay(self, attempt, view, rng) -> float:
            wait = as_number(call(fn, attempt, view, rng), "retry_delay's answer")
            if wait < 0 or not math.isfinite(wait):
                raise AnswerFailed("bad return", f"retry_delay returned {wait!r}: a wait in "
                                                 "seconds must be finite and >= 0")
            return wait

    return Answer(max_attempts=10)


def _run(fn, label, case):
    times, clients = poisson_demand(case["clients"], case["rate_per_client"], case["duration_s"],
                                    np.random.default_rng(case["seed"]),
                                    surge=tuple(case["surge"]))
    server = Server(make("token-bucket", rate=case["rate"], capacity=case["rate"]))
    return simulate(_behaviour(fn, label), server, times, clients,
                    np.random.default_rng(case["seed"] + 1), horizon_s=case["horizon_s"])


class StormExercise(Exercise):
    name = "storm_client"
    answer = "retry_delay"
    references = ("ratelab.clients",)
    title = "A client that gets through a retry storm"
    notebook = "08-saying-no"
    random_count = 2

    def public_cases(self):
        return [{"name": "surge x3 for 5 s", "seed": 1, "clients": 20, "rate_per_client": 0.6,
                 "duration_s": 20.0, "surge": [5.0, 10.0, 3.0], "rate": 20.0,
                 "horizon_s": 45.0}]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            seed, rate = int(rng.integers(0, 2**31)), float(rng.choice([10.0, 20.0]))
            most = int(BASE_LOAD * rate / RATE_PER_CLIENT)  # the server keeps up between surges
            out.append(self.case(f"random surge {i}", seed, clients=rng.integers(8, most + 1),
                                 surge=[5.0, float(rng.uniform(7, 10)), float(rng.uniform(2, 3))],
                                 rate=rate))
        return out

    @staticmethod
    def case(name, seed, *, clients, surge, rate, rate_per_client=RATE_PER_CLIENT,
             horizon_s=50.0):
        """A storm case: `clients` clients at `rate_per_client`, a `surge` [start, end,
        factor], a token bucket of `rate` per second (and as many at once)."""
        return {"name": name, "seed": int(seed), "clients": count(clients),
                "rate_per_client": float(rate_per_client), "duration_s": 20.0,
                "surge": [float(x) for x in surge], "rate": float(rate),
                "horizon_s": float(horizon_s)}

    def instructor_cases(self, rng):
        """More random surges, then a long surge, a surge from the start, a server with
        little to spare and many clients (one client's API has no key to vary)."""
        def seed():
            return rng.integers(0, 2**31)

        return self.random_cases(rng, self.random_count) + [
            self.case("long surge", seed(), clients=20, surge=[4.0, 14.0, 2.5], rate=20.0,
                      horizon_s=70.0),
            self.case("surge from the start", seed(), clients=20, surge=[0.0, 5.0, 3.0],
                      rate=20.0),
            self.case("little to spare", seed(), clients=15, surge=[5.0, 9.0, 2.0],
                      rate=10.0, horizon_s=60.0),
            self.case("many clients", seed(), clients=60, rate_per_client=0.25,
                      surge=[5.0, 9.0, 3.0], rate=20.0, horizon_s=60.0),
        ]

    def run_case(self, answer, case, **options):
        if not callable(answer):
            raise AnswerFailed("bad return", "the answer must be a function retry_delay(...)")
        ref = _run(retry_delay, "reference", case)
        mine = _run(answer, "yours", case)
        jobs = len(ref.job_time)
        r, m = ref.summary(), mine.summary()
        done = ~np.isnan(mine.job_done)
        lat = lambda res: float(np.nanmean(res.job_done - res.job_time))  # noqa: E731
        budget = ATTEMPTS_SLACK * len(ref.attempt_time)
        problem = field = None
        if not done.all():
            j = int(np.flatnonzero(~done)[0])
            why = "gave up after 10 attempts" if mine.job_gave_up[j] else "was not done by the end"
            problem, field = (f"{int((~done).sum())} of {jobs} jobs did not get through; the "
                              f"first, job {j}, {why}"), "succeeded"
        elif len(mine.attempt_time) > budget:
            j = int(np.bincount(mine.attempt_job, minlength=jobs).argmax())
            problem, field = (f"{len(mine.attempt_time)} attempts for {jobs} jobs; the reference "
                              f"needed {len(ref.attempt_time)} (allowed: {budget:.0f}); job {j} "
                              "tried most often"), "attempts"
        elif lat(mine) > 2 * lat(ref) + LATENCY_SLACK_S:
            j = int(np.nanargmax(mine.job_done - mine.job_time))
            problem, field = (f"jobs took {lat(mine):.2f} s on average; the reference "
                              f"{lat(ref):.2f} s (allowed: {2 * lat(ref) + LATENCY_SLACK_S:.2f})"
                              f"; job {j} took longest"), "latency"
        if problem:
            tries = mine.attempt_job == j
            t, ok = mine.attempt_time[tries], mine.attempt_ok[tries]
            table = (f"{'':18}{'yours':>10}{'reference':>12}\n"
                     f"{'attempts':18}{len(mine.attempt_time):>10}{len(ref.attempt_time):>12}\n"
                     f"{'succeeded':18}{m['succeeded']:>10.3f}{r['succeeded']:>12.3f}\n"
                     f"{'mean latency (s)':18}{lat(mine):>10.2f}{lat(ref):>12.2f}\n"
                     f"job {j} arrived at t={mine.job_time[j]:.3f}; its attempts: "
                     + ", ".join(f"{x:.3f} {'ok' if o else '429'}" for x, o in zip(t[:8], ok[:8]))
                     + (" ..." if len(t) > 8 else ""))
            raise Mismatch(Failure(case["name"], "disagrees",
                                   f"in case {case['name']!r}: {problem}", index=j,
                                   time=float(mine.job_time[j]), field=field, timeline=table))
        return len(mine.attempt_time)


EXERCISE = StormExercise()
check, hint, solution = verbs(EXERCISE, retry_delay, (
    "The server tells you when to come back (view.retry_after_s) — but every refused client "
    "hears the same thing and comes back together. Spread them: add random jitter, and let "
    "it grow with each refusal."))
