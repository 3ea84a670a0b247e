"""Fixed window: one counter per calendar window [kW, (k+1)W).

A request passes when the window's count including it is within `limit`; the counter starts
again at zero when the next window begins. Cheap (one integer per key) and exact per window,
but blind across the boundary: `limit` requests at the end of one window and `limit` more at
the start of the next pass within a moment of each other — up to 2 x limit in any trailing
window of length W.

``count_rejected=True`` counts rejected requests too, as a Redis ``INCR``-first counter does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Decision, Seconds, WindowLimiter, earliest


def window_index(now: Seconds, window: Seconds) -> int:
    """The calendar window `now` falls in: k with kW <= now < (k+1)W."""
    return math.floor(now / window)


def window_start(k: int, window: Seconds) -> float:
    """The first time that falls in calendar window k (window_index(t) == k).

    In floating point that is not always k x W: 96034 x 0.1 / 0.1 falls just short of 96034,
    so 96034 x 0.1 is still in window 96033. Boundary attacks start their second half here.
    """
    t = k * window
    while math.floor(t / window) < k:
        t = math.nextafter(t, math.inf)
    while math.floor(math.nextafter(t, -math.inf) / window) >= k:
        t = math.nextafter(t, -math.inf)
    return t


@dataclass(frozen=True, slots=True)
class WindowState:
    """The count in window number `index`."""

    index: int
    count: float


class FixedWindow(WindowLimiter):
    """Keyed fixed-window counter: at most `limit` per calendar window of `window` seconds.

    Parameters:
        limit           requests (cost units) allowed per window; finite, > 0.
        window          the window's length, seconds; finite, > 0. Windows are aligned to the
                        calendar: [kW, (k+1)W), the same for every key.
        count_rejected  False (default): refused requests are not counted. True: they are,
                        as a Redis INCR-first counter counts them.

    A request passes when the window's count including it is within `limit`.

    Edge cases: `limit` at the end of one window and `limit` more at the start of the next
    pass together — up to 2 x limit in a trailing window of length W. A cost above `limit`
    is a ValueError, as is a time earlier than the key's last. ``retry_after`` of a refused
    request is the time to the next window's start.

    Example: two per 10 s; the third waits for the next window.

        >>> counter = FixedWindow(limit=2, window=10)
        >>> [counter.allow("a", now=t).allowed for t in (1, 2, 3)]
        [True, True, False]
        >>> counter.peek("a", now=3).retry_after
        7.0
        >>> counter.allow("a", now=10).allowed
        True
    """

    name = "fixed-window"

    def _initial(self, now: float) -> WindowState:
        return WindowState(window_index(now, self.window), 0.0)

    def _count(self, state: WindowState, k: int) -> float:
        return state.count if state.index == k else 0.0

    def _check(self, state: WindowState, now: float, cost: float):
        k = window_index(now, self.window)
        count = self._count(state, k)
        allowed = count + cost <= self.limit
        after = count + cost if (allowed or self.count_rejected) else count
        window_end = (k + 1) * self.window - now
        retry = 0.0 if allowed else earliest(  # the next window starts empty
            now, window_end, lambda t: window_index(t, self.window) > k)
        decision = Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=int(math.floor(max(0.0, self.limit - after))),
            retry_after=retry,
            reset_after=0.0 if after <= 0 else earliest(
                now, window_end, lambda t: window_index(t, self.window) > k),
        )
        return decision, WindowState(k, after)

    def _inspect(self, state: WindowState, now: float) -> dict:
        k = window_index(now, self.window)
        return {"window_start": k * self.window, "count": self._count(state, k),
                "limit": self.limit}
