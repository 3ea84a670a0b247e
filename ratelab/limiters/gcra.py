"""GCRA, the generic cell rate algorithm: one theoretical arrival time (TAT) per key.

Requests are expected one every `period` = 1/rate seconds. The key stores only the time at
which it would be "caught up" (the TAT). A request of `cost` moves the TAT `cost` periods
later; it passes if the new TAT lies no more than the delay variation tolerance
DVT = period x (burst + 1) ahead of now. Rejected requests leave the TAT alone. This is the
form of redis-cell's CL.THROTTLE: an idle key takes burst + 1 requests at once, then one per
period — the same decisions as a token bucket of capacity burst + 1, with one integer per key.
"""

from __future__ import annotations

from .base import Decision, Limiter, PerSecond, Seconds, bounded, budget_args, positive, whole
from ..clock import TICKS_PER_S, TIE_TICKS, seconds_until


# ---------------------------------------------------------------- the arithmetic (integers)


def advance(tat: int, now: int, cost: float, period: int) -> int:
    """The TAT after a request of `cost` at tick `now` (whole ticks)."""
    return max(tat, now) + round(cost * period)


def allow_at(tat: int, now: int, cost: float, period: int, tolerance: int) -> int:
    """The first tick at which a request of `cost` passes against `tat`, as seen at `now`."""
    return advance(tat, now, cost, period) - tolerance - TIE_TICKS + 1


def available(tat: int, now: int, period: int, tolerance: int) -> float:
    """Requests of cost 1 the TAT leaves room for at `now`: (DVT - ahead) / period."""
    return (tolerance - max(0, tat - now)) / period


class GCRA(Limiter):
    """Keyed GCRA: `rate` per second on average, `burst` more at once (burst + 1 in all).

    Parameters:
        rate   requests per second on average (one every 1/rate seconds); finite, > 0.
        burst  requests allowed beyond the one on schedule (whole number >= 0): an idle key
               takes burst + 1 at once. burst=0 spaces every request 1/rate apart.

    The same decisions as a token bucket of capacity burst + 1, with one integer per key.
    Refused requests leave the key unchanged.

    Edge cases: a cost above burst + 1 is a ValueError, as is a time earlier than the key's
    last, a non-whole or negative burst, or a non-positive rate.

    Example: three at once, then one a second.

        >>> gcra = GCRA(rate=1, burst=2)
        >>> [gcra.allow("a", now=0.0).allowed for _ in range(4)]
        [True, True, True, False]
        >>> gcra.peek("a", now=0.0).retry_after
        1.0

    Kept in whole microseconds (ticks), as redis-cell keeps whole nanoseconds: the period is
    ``1e6 / rate`` truncated (rate 3 -> 333,333 ticks) and a TAT is a sum of whole periods, so
    a burst of burst + 1 at one instant is exact at any rate, and every decision is the same at
    every origin — in float seconds, 0.1 added 20 times is not 2.0.
    """

    name = "gcra"
    reports = ("available", "requests of cost 1 the TAT leaves room for, (DVT - ahead) / period "
                            "in whole microseconds (passes if available >= cost, to the tick)")

    example = {"rate": 100.0, "burst": 100}

    def __init__(self, rate: PerSecond, burst: int) -> None:
        super().__init__()
        self.rate = positive("rate", rate)
        self.burst = whole("burst", burst, minimum=0)
        period = TICKS_PER_S / self.rate
        if period < 1:
            raise ValueError(f"rate must be at most 1e6 per second (one request per "
                             f"microsecond), got {rate!r}")
        if period * (self.burst + 1) >= 2**53:
            raise ValueError(f"rate={rate!r} with burst={burst!r}: the tolerance, (burst + 1) "
                             "periods, must be below 2**53 microseconds (285 years)")
        self.period_ticks = int(period)
        self.tolerance_ticks = self.period_ticks * (self.burst + 1)  # the DVT
        self.limit = bounded("burst", self.burst + 1)

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "burst": self.burst}

    @property
    def rate_per_s(self) -> PerSecond:
        """The emission rate, one request per period."""
        return self.rate

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict:
        """``{rate: limit / window_s, burst: limit - 1}`` (burst + 1 at once)."""
        limit, window_s, rate = budget_args(limit, window_s)
        return {"rate": rate, "burst": limit - 1}

    def _initial(self, now: float, now_t: int) -> int:
        return now_t  # the TAT of an idle key is "now"

    def _check(self, tat: int, now: float, now_t: int, cost: float):
        p, tol = self.period_ticks, self.tolerance_ticks
        at = allow_at(tat, now_t, cost, p, tol)
        allowed = now_t >= at
        kept = advance(tat, now_t, cost, p) if allowed else tat
        slack = now_t - (kept - tol)  # ticks ahead of the TAT limit
        return Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=max(0, slack) // p,
            retry_after=0.0 if allowed else seconds_until(now, now_t, at),
            reset_after=seconds_until(now, now_t, kept),
        ), kept

    def _inspect(self, tat: int, now: float, now_t: int) -> dict:
        ahead = max(0, tat - now_t)
        return {"tat": max(tat, now_t) / TICKS_PER_S, "ahead": ahead / TICKS_PER_S,
                "available": available(tat, now_t, self.period_ticks, self.tolerance_ticks),
                "limit": self.limit}
