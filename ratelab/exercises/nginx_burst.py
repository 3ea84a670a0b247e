"""Exercise: nginx's limit_req burst and delay (notebook 02).

Write a class ``LimitReq(rate, burst, delay=0, nodelay=False)`` whose ``allow(now)`` returns
``(allowed, delay_s)`` as nginx's ``limit_req rate=... burst=... [delay=N | nodelay]`` decides
a request at `now` (seconds; nginx reads its clock in whole milliseconds). nginx keeps an
*excess* per key: a new key's first request finds and leaves excess 0; each later request
computes excess = max(0, excess - rate x elapsed + 1). The request is rejected (state unchanged)
when excess > burst; else the excess is stored and the request waits (excess - delay) / rate
seconds when excess > delay (0 when it is not, or with nodelay). Times here are on a 1/8 s grid
with whole rates, so every step is exact; nginx counts in thousandths of a request and whole ms.
"""

from __future__ import annotations

from .casekit import Shape, count, grid_times, with_costs
from .core import Field, RefLimiter, StudentLimiter, TimelineExercise
from ._limiter_kit import KINDS, verbs

NGINX_GRID_S = 1 / 8
"""nginx's cases lie on a 1/8 s grid: whole milliseconds (nginx's clock) and binary fractions."""


class LimitReq:
    """nginx's limit_req on one key: whether each request passes and how long it is held."""

    def __init__(self, rate, burst, delay=0, nodelay=False):
        self.rate, self.burst, self.nodelay = rate, burst, nodelay
        self.delay = burst if nodelay else delay
        self.excess, self.last = None, None

    def allow(self, now):
        """(allowed, delay_s) for a request at `now`."""
        if self.excess is None:                  # a new key: excess 0, and it stays 0
            self.excess, self.last = 0.0, now
            return True, 0.0
        excess = max(0.0, self.excess - self.rate * (now - self.last) + 1)
        if excess > self.burst:
            return False, 0.0                    # rejected: nothing changes
        self.excess, self.last = excess, now
        wait = (excess - self.delay) / self.rate if excess > self.delay else 0.0
        return True, wait


class NginxExercise(TimelineExercise):
    name = "nginx_burst"
    answer = "LimitReq"
    references = ("ratelab.limiters.nginx", "nginx")
    title = "nginx's burst, delay and nodelay"
    notebook = "02-leaky-bucket"
    fields = (Field("allowed"), Field("delay", 1.5e-3))  # nginx truncates delays to whole ms

    def reference(self, params):
        ref = RefLimiter("nginx", params, lambda d, lim, now: {
            "allowed": d.allowed, "delay": d.delay})
        ref.state = lambda now: _worded(ref.limiter.inspect("k", now))
        return ref

    def student(self, answer, params):
        return StudentLimiter(answer, params, ("allowed", "delay"), KINDS, with_cost=False)

    def public_cases(self):
        twelve = with_costs([0.0] * 12)
        return [
            {"name": "burst=8 (notebook 02)", "params": {"rate": 5.0, "burst": 8},
             "requests": twelve},
            {"name": "burst=8 nodelay", "params": {"rate": 5.0, "burst": 8, "nodelay": True},
             "requests": twelve},
            {"name": "burst=8 delay=4", "params": {"rate": 5.0, "burst": 8, "delay": 4},
             "requests": twelve},
            {"name": "draining", "params": {"rate": 2.0, "burst": 2},
             "requests": with_costs([0, 0, 0, 0, 0.5, 0.5, 0.625, 3])},
            {"name": "an idle key drains to 0, not below", "params": {"rate": 2.0, "burst": 2},
             "requests": with_costs([0, 0, 0, 10, 10, 10, 10])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            rate = float(rng.choice([1, 2, 4, 5, 10]))
            params = self.modes(rng, rate, count(rng.choice([0, 2, 5, 8])))
            times = grid_times(rng, 50, 1 / (1.4 * rate), grid_s=NGINX_GRID_S)
            out.append({"name": f"random stream {i}", "params": params,
                        "requests": with_costs(times)})
        return out

    @staticmethod
    def modes(rng, rate, burst):
        """limit_req's params for `rate` and `burst`: plain, nodelay or delay=N, drawn."""
        mode = rng.choice(["delay", "nodelay", "plain"])
        params = {"rate": rate, "burst": burst}
        if mode == "nodelay":
            params["nodelay"] = True
        elif mode == "delay" and burst:
            params["delay"] = count(rng.integers(1, burst + 1))
        return params

    cost_kind = False  # its answer takes no cost

    def shape(self, rng):
        """limit_req with 1/rate a whole number of nginx's grid steps, so edges are exact."""
        rate, burst = float(rng.choice([1, 2, 4])), count(rng.choice([0, 2, 5, 8]))
        return Shape(self.modes(rng, rate, burst), 1 / rate, burst + 1, windowed=False,
                     grid_s=NGINX_GRID_S)


def _worded(state: dict) -> dict:
    """The reference's state with yes/no for its flags (a timeline shows booleans as
    pass / REJECT)."""
    return {k: ("yes" if v else "no") if isinstance(v, bool) else v for k, v in state.items()}


EXERCISE = NginxExercise()
check, hint, solution = verbs(EXERCISE, LimitReq, (
    "burst decides how many pass; delay and nodelay only decide how long they wait. The "
    "first request of a key leaves excess 0; each later one adds 1 after draining "
    "rate x elapsed. With delay=N the first N of the excess pass at once: wait "
    "(excess - N) / rate. A rejected request changes nothing."))
