"""Exercise: Retry-After and RateLimit headers for a Decision (notebook 08).

Write ``headers(decision, quota, window_s) -> dict`` of the response headers a server sends
for a limiter's Decision under a policy named "default" of `quota` requests per `window_s`:

* ``Retry-After`` on refusals only: decision.retry_after in whole seconds, rounded *up* (a
  client that waits exactly that long must never be early);
* ``RateLimit-Policy``: ``"default";q=<quota>;w=<window_s>``;
* ``RateLimit``: ``"default";r=<remaining>;t=<seconds>``, r never below 0, t in whole seconds
  rounded up: on a refusal the wait Retry-After states, otherwise until the allowance is fully
  back (decision.reset_after).
"""

from __future__ import annotations

import math

from .. import http
from ..limiters import make
from .casekit import Shape, count, with_costs
from .core import AnswerFailed, Field, TimelineExercise, call
from ._limiter_kit import verbs


def headers(decision, quota, window_s):
    """The response headers for `decision`, as {header name: value}."""
    def up(seconds):
        return max(0, math.ceil(seconds - 1e-9))  # whole seconds, never early

    out = {}
    wait = decision.reset_after if decision.allowed else decision.retry_after
    if not decision.allowed:
        out["Retry-After"] = str(up(decision.retry_after))
    out["RateLimit-Policy"] = f'"default";q={quota};w={window_s}'
    out["RateLimit"] = f'"default";r={max(0, decision.remaining)};t={up(wait)}'
    return out


def _read(h: dict) -> dict:
    """What a client reads from headers: Retry-After, and the parsed RateLimit fields."""
    if not isinstance(h, dict):
        raise AnswerFailed("bad return", f"headers returned {type(h).__name__}; expected a dict")
    lower = {str(k).lower(): v for k, v in h.items()}
    out = {"Retry-After": lower.get("retry-after")}
    try:
        items = http.parse_ratelimit_policy(str(lower.get("ratelimit-policy", "")))
        out["RateLimit-Policy"] = ";".join(f"{p.name} q={p.quota} w={p.window_s}" for p in items)
        items = http.parse_ratelimit(str(lower.get("ratelimit", "")))
        out["RateLimit"] = ";".join(f"{i.name} r={i.remaining} t={i.reset_s}" for i in items)
    except ValueError as e:
        raise AnswerFailed("bad return", f"a header does not parse: {e}") from None
    if out["Retry-After"] is not None:
        out["Retry-After"] = str(out["Retry-After"]).strip()
    return out


class _Ref:
    def __init__(self, params):
        self.params = params
        self.limiter = make(params["limiter"], **params["limiter_params"])
        self.decision = None

    def state(self, now):
        return {}

    def step(self, now, cost):
        d = self.limiter.allow("k", now, cost)
        policy = http.Policy("default", self.params["quota"], self.params["window_s"])
        expected = _read(dict(http.respond(d, policy, x_headers=False).headers))
        expected["decision"] = d
        return expected


class HeadersExercise(TimelineExercise):
    name = "headers"
    answer = "headers"
    references = ("ratelab.http.respond",)
    title = "Retry-After and RateLimit for a Decision"
    notebook = "08-saying-no"
    fields = (Field("Retry-After"), Field("RateLimit"), Field("RateLimit-Policy"))
    state_label = "the Decision of request"

    def reference(self, params):
        return _Ref(params)

    def answers(self, answer, case, steps):
        p = case["params"]
        out = []
        for s in steps:
            d = s.expected.pop("decision")
            s.before = {"allowed": d.allowed, "remaining": d.remaining,
                        "retry_after": d.retry_after, "reset_after": d.reset_after}
            out.append(_read(call(answer, d, p["quota"], p["window_s"])))
        return out

    def public_cases(self):
        bucket = {"limiter": "token-bucket", "limiter_params": {"rate": 5.0, "capacity": 20},
                  "quota": 20, "window_s": 4}
        window = {"limiter": "fixed-window", "limiter_params": {"limit": 3, "window": 10.0},
                  "quota": 3, "window_s": 10}
        return [
            {"name": "notebook 08's bucket at t = 100", "params": bucket,
             "requests": with_costs([100.0] * 21 + [100.1, 100.2])},
            {"name": "a fixed window", "params": window,
             "requests": with_costs([0.5, 1, 2, 3, 8, 9.9, 10, 10.5, 10.5, 10.5])},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            if i % 2:
                rate, cap = float(rng.choice([0.3, 1, 2.5])), count(rng.choice([1, 3, 10]))
                params = self.bucket(rate, cap)
                gap = 1 / (1.5 * rate)
            else:
                limit, w = count(rng.choice([2, 5])), count(rng.choice([1, 7, 60]))
                params = self.window(limit, w)
                gap = w / (1.5 * limit)
            times = 1000 + rng.exponential(gap, 40).cumsum()
            out.append({"name": f"random decisions {i}", "params": params,
                        "requests": with_costs(times)})
        return out

    @staticmethod
    def bucket(rate, capacity):
        """A token bucket's case params: its quota the capacity, its window the refill time."""
        return {"limiter": "token-bucket", "limiter_params": {"rate": rate, "capacity": capacity},
                "quota": capacity, "window_s": max(1, math.ceil(capacity / rate))}

    @staticmethod
    def window(limit, window_s):
        """A fixed window's case params (whole seconds, as the header states them)."""
        return {"limiter": "fixed-window", "limiter_params": {"limit": limit,
                "window": float(window_s)}, "quota": limit, "window_s": window_s}

    def shape(self, rng):
        """A fixed window of whole seconds or a token bucket of binary period, drawn."""
        if rng.integers(0, 2):
            rate, cap = float(rng.choice([0.5, 1, 2, 4])), count(rng.choice([1, 3, 10]))
            return Shape(self.bucket(rate, cap), 1 / rate, cap, cap, windowed=False)
        limit, w = count(rng.choice([2, 5])), count(rng.choice([1, 7, 60]))
        return Shape(self.window(limit, w), float(w), limit, limit)


EXERCISE = HeadersExercise()
check, hint, solution = verbs(EXERCISE, headers, (
    "Round waits up (math.ceil), never down or to nearest: a client told 0 when 0.2 s are "
    "needed comes back early and is refused again. No Retry-After on a response that "
    "passed. On a refusal RateLimit's t is the same wait as Retry-After."), imports='import math')
