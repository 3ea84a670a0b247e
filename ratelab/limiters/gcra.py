"""GCRA, the generic cell rate algorithm: one theoretical arrival time (TAT) per key.

Requests are expected one every `period` = 1/rate seconds. The key stores only the time at
which it would be "caught up" (the TAT). A request of `cost` moves the TAT `cost` periods
later; it passes if the new TAT lies no more than the delay variation tolerance
DVT = period x (burst + 1) ahead of now. Rejected requests leave the TAT alone. This is the
form of redis-cell's CL.THROTTLE: an idle key takes burst + 1 requests at once, then one per
period — the same decisions as a token bucket of capacity burst + 1, with one float per key.
"""

from __future__ import annotations

import math

from .base import Decision, Limiter, PerSecond, non_negative, positive

TIE = 1e-9  # in periods: float error below this is a tie, and a tie is admitted


class GCRA(Limiter):
    """Keyed GCRA: `rate` per second on average, `burst` more at once (burst + 1 in all)."""

    name = "gcra"

    def __init__(self, rate: PerSecond, burst: float) -> None:
        super().__init__()
        self.rate = positive("rate", rate)
        self.burst = non_negative("burst", burst)
        self.period = 1.0 / self.rate
        self.tolerance = self.period * (self.burst + 1)  # the DVT
        self.limit = self.burst + 1

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "burst": self.burst}

    def _initial(self, now: float) -> float:
        return now  # the TAT of an idle key is "now"

    def _check(self, tat: float, now: float, cost: float):
        new_tat = max(tat, now) + cost * self.period
        allow_at = new_tat - self.tolerance
        # TATs are sums of periods (0.1 + 0.1 + ... is not exact): forgive a billionth of a
        # period, or a full burst of burst + 1 at rate 10 would admit only burst
        allowed = allow_at - now <= TIE * self.period
        kept = new_tat if allowed else tat
        slack = now - (kept - self.tolerance)  # how far ahead of the TAT limit we are
        decision = Decision(
            allowed=allowed,
            limit=self.limit,
            # + 1e-9: a slack of exactly 4 periods must not read 3.999... after rounding
            remaining=int(math.floor(max(0.0, slack) / self.period + 1e-9)),
            retry_after=0.0 if allowed else allow_at - now,
            reset_after=max(0.0, kept - now),
        )
        return decision, kept

    def _inspect(self, tat: float, now: float) -> dict:
        ahead = max(0.0, tat - now)
        return {"tat": max(tat, now), "ahead": ahead,
                "available": (self.tolerance - ahead) / self.period, "limit": self.limit}
