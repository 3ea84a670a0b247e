"""Exercise: choose a limiter and its parameters for a stated downstream (notebook 09).

A service behind the limiter serves `service_per_s` requests per second (constant service
time). Its callers give up after `max_wait_s` seconds in its queue; at steady load its mean
queueing wait must stay under `max_mean_wait_s`; and the clients need `demand_per_s`
sustained. Write ``choose(service_per_s, max_wait_s, max_mean_wait_s, demand_per_s)`` returning
``(name, params)`` for :func:`ratelab.limiters.make`.

The check floods your limiter from idle (three times the service rate for 30 s) and sends the
worst it admits to the service: it measures the longest queueing wait (Lindley's recursion, no
request may wait beyond `max_wait_s`) and the sustained rate it lets through, which must meet
the demand and keep the M/D/1 utilisation curve's mean wait
(:func:`ratelab.queueing.md1_wait_s`) under `max_mean_wait_s`. Then it sends two floods either
side of a window boundary, where a fixed window admits twice its limit at once.
"""

from __future__ import annotations

import math

import numpy as np

from ..limiters import make
from ..queueing import lindley_waits, md1_wait_s
from .core import AnswerFailed, Exercise, Failure, Mismatch, call
from ._limiter_kit import verbs

FLOOD = 3.0
"""The flood's rate, in multiples of the service rate."""

FLOOD_S = 30.0
"""How long the flood lasts (s); the sustained rate is measured over its second half."""


def choose(service_per_s, max_wait_s, max_mean_wait_s, demand_per_s):
    """(name, params) of a limiter for make() that keeps the service within its limits."""
    from ratelab.queueing import largest_burst  # in the answer, so that it stands alone

    service_s = 1 / service_per_s
    # M/D/1: Wq = S rho / (2 (1 - rho)) <= w  <=>  rho <= 2w / (S + 2w)
    rho = 2 * max_mean_wait_s / (service_s + 2 * max_mean_wait_s)
    rate = rho * service_per_s
    capacity = largest_burst(rate, service_per_s, max_wait_s=max_wait_s)
    return "token-bucket", {"rate": rate, "capacity": int(capacity)}


def _admitted(limiter, times):
    return np.array([t for t in times if limiter.allow("downstream", float(t)).allowed])


class ChooseExercise(Exercise):
    name = "choose_limiter"
    answer = "choose"
    title = "Choose a limiter for a stated downstream"
    notebook = "09-choosing-a-limiter"
    random_count = 3

    def public_cases(self):
        return [{"name": "100/s service, 2 s timeout", "service_per_s": 100.0,
                 "max_wait_s": 2.0, "max_mean_wait_s": 0.02, "demand_per_s": 60.0},
                {"name": "20/s service, 0.5 s timeout", "service_per_s": 20.0,
                 "max_wait_s": 0.5, "max_mean_wait_s": 0.1, "demand_per_s": 12.0}]

    def random_cases(self, rng, n):
        return [self.case(f"random service {i}", float(rng.choice([10.0, 25.0, 50.0, 200.0])),
                          float(rng.uniform(0.2, 3.0)), float(rng.uniform(0.5, 3.0)),
                          float(rng.uniform(0.5, 0.9))) for i in range(n)]

    @staticmethod
    def case(name, mu, max_wait_s, wait_services, demand_share):
        """A downstream of `mu` per second: its mean wait `wait_services` service times, and
        a demand of `demand_share` of the utilisation that wait allows."""
        mean_w = wait_services / mu
        rho = 2 * mean_w / (1 / mu + 2 * mean_w)
        return {"name": name, "service_per_s": mu, "max_wait_s": max_wait_s,
                "max_mean_wait_s": mean_w, "demand_per_s": round(demand_share * rho * mu, 3)}

    def instructor_cases(self, rng):
        """More random services, then a demand close to what the curve allows, a timeout of
        a few service times, and a service far faster and one far slower (one downstream:
        no many-keys case)."""
        out = self.random_cases(rng, self.random_count)
        mu = float(rng.choice([25.0, 100.0]))
        out.append(self.case("demand near the curve", mu, float(rng.uniform(0.5, 2.0)),
                             float(rng.uniform(0.5, 3.0)), 0.97))
        out.append(self.case("timeout of a few services", mu, float(rng.integers(3, 8)) / mu,
                             float(rng.uniform(0.5, 3.0)), float(rng.uniform(0.5, 0.9))))
        out.append(self.case("fast service", float(rng.choice([1000.0, 2000.0])),
                             float(rng.uniform(0.05, 0.5)), float(rng.uniform(0.5, 3.0)),
                             float(rng.uniform(0.5, 0.9))))
        out.append(self.case("slow service", float(rng.choice([2.0, 4.0])),
                             float(rng.uniform(2.0, 10.0)), float(rng.uniform(0.5, 3.0)),
                             float(rng.uniform(0.5, 0.9))))
        return out

    def run_case(self, answer, case, **options):
        mu, w = case["service_per_s"], case["max_wait_s"]
        mean_w, demand = case["max_mean_wait_s"], case["demand_per_s"]
        if not callable(answer):
            raise AnswerFailed("bad return", "the answer must be a function choose(...)")
        got = call(answer, mu, w, mean_w, demand)
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and isinstance(got[1], dict)):
            raise AnswerFailed("bad return", f"choose must return (name, params), got {got!r}")
        name, params = got
        try:
            limiter = make(name, **params)
        except ValueError as e:
            raise AnswerFailed("bad return", f"make({name!r}, **{params!r}) failed: {e}") from None
        flood = np.arange(0.0, FLOOD_S, 1 / (FLOOD * mu))
        ok = _admitted(limiter, flood)
        half = FLOOD_S / 2
        count = int(np.sum(ok >= half))
        sustained = count / (FLOOD_S - half)
        # a count over a span is good to one request either way: the doubt goes to the answer
        rho = max(0, count - 1) / (FLOOD_S - half) / mu
        shown = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in params.items())
        label = f"{name}({shown})"
        mean = md1_wait_s(rho, 1 / mu) if rho < 1 else math.inf
        window = getattr(limiter, "window", 1.0)
        edge = math.ceil(FLOOD_S / window + 1) * window
        second = limiter.clone()
        pair = np.concatenate([np.arange(edge - window / 2, edge, 1 / (FLOOD * mu)),
                               np.arange(edge, edge + window / 2, 1 / (FLOOD * mu))])
        ok2 = _admitted(second, pair)
        checks = [
            ("sustained", (count + 1) / (FLOOD_S - half) >= demand,
             f"{label} lets {sustained:g}/s through a flood; the clients need {demand:g}/s"),
            ("mean wait", mean <= mean_w * (1 + 1e-9),
             f"{label} runs the service at utilisation {rho:.3f}: the curve's mean wait "
             f"is {mean:.4g} s > {mean_w:.4g} s"),
        ]
        burst = np.zeros(int(math.ceil(10 * mu * w)))
        ok3 = _admitted(limiter.clone(), burst)
        for what, admitted in (("a burst at one instant", ok3), ("a flood from idle", ok),
                               ("floods either side of a window boundary", ok2)):
            waits = lindley_waits(admitted, np.full(len(admitted), 1 / mu)) if len(admitted) \
                else np.zeros(1)
            worst = int(np.argmax(waits))
            checks.append(("worst wait", waits[worst] <= w + 1e-9,
                           f"in {what}, {label} admits {len(admitted)} requests; the one at "
                           f"t={admitted[worst]:.4g} s waits {waits[worst]:.3g} s in the "
                           f"service's queue > max_wait_s {w:g}"))
        for field, passed, message in checks:
            if not passed:
                raise Mismatch(Failure(case["name"], "disagrees",
                                       f"in case {case['name']!r}: {message}", field=field,
                                       timeline=(f"downstream: {mu:g}/s, timeout {w:g} s, mean "
                                                 f"wait under {mean_w:.4g} s, demand "
                                                 f"{demand:g}/s\nyour limiter under the flood: "
                                                 f"{sustained:g}/s sustained, utilisation "
                                                 f"{rho:.3f}")))
        return len(flood) + len(pair) + len(burst)


EXERCISE = ChooseExercise()
check, hint, solution = verbs(EXERCISE, choose, (
    "Two knobs, two constraints. The rate sets the utilisation: solve the M/D/1 curve "
    "S rho / (2 (1 - rho)) <= max_mean_wait_s for rho. The burst sets the worst wait: the "
    "last of a burst of b waits (b - 1) / service_per_s (ratelab.queueing.largest_burst)."))
