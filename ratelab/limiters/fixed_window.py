"""Fixed window: one counter per calendar window [kW, (k+1)W).

A request passes when the window's count including it is within `limit`; the counter starts
again at zero when the next window begins. Cheap (one integer per key) and exact per window,
but blind across the boundary: `limit` requests at the end of one window and `limit` more at
the start of the next pass within a moment of each other — up to 2 x limit in any trailing
window of length W.

Windows are counted in whole microseconds (ticks): window k holds the ticks
[k x W, (k+1) x W) with W = ``window_ticks``, so the boundaries are exact at every origin.

``count_rejected=True`` counts rejected requests too, as a Redis ``INCR``-first counter does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Decision, Seconds, WindowLimiter, window_remaining, window_step
from ..clock import TICKS_PER_S, seconds_until, to_ticks


# ---------------------------------------------------------------- the arithmetic (scalars)


def index_of(now: int, window_ticks: int) -> int:
    """The calendar window tick `now` falls in: k with k x window <= now < (k+1) x window."""
    return now // window_ticks


def index_near(now: int, window_ticks: int, k: int, start: int) -> tuple[int, int]:
    """(index_of(now, window), the first tick of that window), reusing window `k` (first tick
    `start`) when `now` still falls in it.

    The compiled kernels walk times in order, so most requests fall in the window of the one
    before: they divide once per window instead of once per request. Start from
    ``(0, MAX_TICKS)``, a window no time falls in.
    """
    if start <= now < start + window_ticks:
        return k, start
    k = index_of(now, window_ticks)
    return k, k * window_ticks


def window_index(now: Seconds, window_s: Seconds) -> int:
    """The calendar window the time `now` (seconds) falls in, for a window of `window_s` seconds."""
    return index_of(to_ticks(now), to_ticks(window_s))


def window_start(k: int, window_s: Seconds) -> float:
    """The time (seconds, a float) at which calendar window k starts.

    Window k starts at tick k x W exactly: this is the float nearest that instant, which reads
    as that tick up to Unix times of this century (a float is finer than half a tick below
    2**33 s); beyond, it steps up to the first float that :func:`window_index` puts in window
    k. Boundary attacks start their second half here.
    """
    t = k * to_ticks(window_s) / TICKS_PER_S
    while window_index(t, window_s) < k:
        t = math.nextafter(t, math.inf)
    return t


def count_in(index: int, count: float, k: int) -> float:
    """The count a state of window `index` holds for window `k` (0 once k has moved on)."""
    return count if index == k else 0.0


def step(index: int, count: float, k: int, cost: float, limit: float,
         count_rejected: bool) -> tuple[float, bool, float]:
    """A request of `cost` in window `k` on a counter holding `count` for window `index`:
    (the count it finds, whether it passes, the count after it) — :func:`count_in`, then the
    window algorithms' admit rule (``base.window_step``)."""
    found = count_in(index, count, k)
    allowed, _, after = window_step(found, cost, limit, count_rejected)
    return found, allowed, after


# ---------------------------------------------------------------- the keyed limiter


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
    reports = ("count", "cost counted in the current calendar window "
                        "(passes if count + cost <= limit)")

    def _initial(self, now: float, now_t: int) -> WindowState:
        return WindowState(index_of(now_t, self.window_ticks), 0.0)

    def _check(self, state: WindowState, now: float, now_t: int, cost: float):
        k = index_of(now_t, self.window_ticks)
        _, allowed, after = step(state.index, state.count, k, cost, self.limit,
                                 self.count_rejected)
        next_window = seconds_until(now, now_t, (k + 1) * self.window_ticks)
        return Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=window_remaining(after, self.limit),
            retry_after=0.0 if allowed else next_window,  # the next window starts empty
            reset_after=0.0 if after <= 0 else next_window,
        ), WindowState(k, after)

    def _inspect(self, state: WindowState, now: float, now_t: int) -> dict:
        k = index_of(now_t, self.window_ticks)
        return {"window_start": k * self.window_ticks / TICKS_PER_S,
                "count": count_in(state.index, state.count, k), "limit": self.limit}
