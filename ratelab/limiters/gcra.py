"""GCRA, the generic cell rate algorithm: one theoretical arrival time (TAT) per key.

Requests are expected one every `period` = 1/rate seconds. The key stores only the time at
which it would be "caught up" (the TAT). A request of `cost` moves the TAT `cost` periods
later; it passes if the new TAT lies no more than the delay variation tolerance
DVT = period x (burst + 1) ahead of now. Rejected requests leave the TAT alone. This is the
form of redis-cell's CL.THROTTLE: an idle key takes burst + 1 requests at once, then one per
period — the same decisions as a token bucket of capacity burst + 1, with one integer per key.
"""

from __future__ import annotations

import math

from .base import Decision, Limiter, PerSecond, earliest, positive, whole


NS = 1_000_000_000


def to_ns(now: float) -> int:
    """`now` (seconds) in whole nanoseconds, the unit redis-cell counts in."""
    return math.floor(now * 1e9 + 0.5)


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

    Kept in whole nanoseconds, as redis-cell keeps it: the period is ``1e9 / rate`` truncated
    (rate 3 -> 333,333,333 ns) and a TAT is a sum of whole periods, so a burst of burst + 1
    at one instant is exact at any rate — in float seconds, 0.1 added 20 times is not 2.0.
    """

    name = "gcra"

    def __init__(self, rate: PerSecond, burst: int) -> None:
        super().__init__()
        self.rate = positive("rate", rate)
        self.burst = whole("burst", burst, minimum=0)
        self.period_ns = int(NS / self.rate)
        if self.period_ns < 1:
            raise ValueError(f"rate must be at most 1e9 per second, got {rate!r}")
        self.tolerance_ns = self.period_ns * (self.burst + 1)  # the DVT
        self.limit = self.burst + 1

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "burst": self.burst}

    def _initial(self, now: float) -> int:
        return to_ns(now)  # the TAT of an idle key is "now"

    def _check(self, tat: int, now: float, cost: float):
        now_ns = to_ns(now)
        new_tat = max(tat, now_ns) + round(cost * self.period_ns)
        allow_at = new_tat - self.tolerance_ns
        allowed = now_ns >= allow_at
        kept = new_tat if allowed else tat
        slack = now_ns - (kept - self.tolerance_ns)  # ns ahead of the TAT limit
        decision = Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=max(0, slack) // self.period_ns,
            retry_after=0.0 if allowed else earliest(
                now, (allow_at - now_ns) / NS, lambda t: self._passes(kept, t, cost)),
            reset_after=earliest(now, max(0, kept - now_ns) / NS, lambda t: to_ns(t) >= kept),
        )
        return decision, kept

    def _passes(self, tat: int, now: float, cost: float) -> bool:
        """Whether a request of `cost` at `now` passes against `tat` (as `_check` decides)."""
        now_ns = to_ns(now)
        return now_ns >= max(tat, now_ns) + round(cost * self.period_ns) - self.tolerance_ns

    def _inspect(self, tat: int, now: float) -> dict:
        now_ns = to_ns(now)
        ahead = max(0, tat - now_ns)
        return {"tat": max(tat, now_ns) / NS, "ahead": ahead / NS,
                "available": (self.tolerance_ns - ahead) / self.period_ns, "limit": self.limit}
