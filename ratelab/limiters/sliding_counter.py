"""Sliding window counter: two integers that approximate the sliding log.

Each key keeps the count of the current calendar window [kW, (k+1)W) and of the previous one.
At `elapsed` seconds into the current window the trailing count is estimated as

    prev x (1 - elapsed / W) + cur

— as if the previous window's requests had been spread evenly over it. A request passes when
the estimate including it is within `limit`. Worked example: prev 80, cur 30, 30% into the
window -> 80 x 0.7 + 30 = 86, under a limit of 100.

Windows and `elapsed` are whole microseconds (ticks), so the estimate is the same at every
origin. On traffic at exactly the limit it refuses about one request in ten, by design: the
estimate counts the previous window's requests as spread evenly, and the requests of a steady
client are not (notebook 05 shows it).

``count_rejected=True`` counts rejected requests in `cur` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Decision, WindowLimiter, window_remaining, window_step
from ..clock import TICKS_PER_S, seconds_until
from .fixed_window import index_of


# ---------------------------------------------------------------- the arithmetic (scalars)


def roll(index: int, prev: float, cur: float, k: int) -> tuple[float, float]:
    """(prev, cur) of a state of window `index` as seen from window `k` (>= index)."""
    if k == index:
        return prev, cur
    if k == index + 1:
        return cur, 0.0
    return 0.0, 0.0


def weight(now: int, k: int, window_ticks: int) -> float:
    """The share of the previous window still inside (now - W, now], at tick `now` of
    window `k`."""
    return 1.0 - (now - k * window_ticks) / window_ticks


def blend(prev: float, cur: float, now: int, k: int, window_ticks: int) -> float:
    """prev x weight + cur: the estimate at tick `now` of window `k`, from the counts of
    window `k` (cur) and of the one before it (prev) — the one place the estimate is written."""
    return prev * weight(now, k, window_ticks) + cur


def estimate(index: int, prev: float, cur: float, now: int, window_ticks: int) -> float:
    """prev x weight + cur, for a state of window `index`, at tick `now`."""
    k = index_of(now, window_ticks)
    p, c = roll(index, prev, cur, k)
    return blend(p, c, now, k, window_ticks)


def step(index: int, prev: float, cur: float, now: int, k: int, window_ticks: int, cost: float,
         limit: float, count_rejected: bool) -> tuple[float, bool, float, float, float]:
    """A request of `cost` at tick `now`, in window `k`, on the counts (prev, cur) of window
    `index`: (the estimate it finds, whether it passes, prev and cur after it, the estimate
    after it).

    The counts are rolled to window `k` (:func:`roll`), blended (:func:`blend`), and the
    estimate goes through the window algorithms' admit rule (``base.window_step``); a counted
    request adds its cost to cur. The reference, the compiled replay and both passes of the
    error analysis take their decisions here.
    """
    prev, cur = roll(index, prev, cur, k)
    found = blend(prev, cur, now, k, window_ticks)
    allowed, counted, after = window_step(found, cost, limit, count_rejected)
    return found, allowed, prev, cur + cost if counted else cur, after


def wait_ticks(k: int, prev: float, cur: float, now: int, window_ticks: int, limit: float,
               cost: float) -> int:
    """The first tick at which a request of `cost` fits, if nothing else arrives (counts of
    window `k`)."""
    if cur + cost <= limit and prev > 0:  # within this window, as prev fades
        at = k * window_ticks + math.ceil(window_ticks * (1.0 - (limit - cur - cost) / prev))
    else:
        fade = max(0.0, 1.0 - (limit - cost) / cur) if cur > 0 else 0.0
        # in the next window, as cur fades
        at = (k + 1) * window_ticks + math.ceil(window_ticks * fade)
    t = max(now, at)
    while t > now and estimate(k, prev, cur, t - 1, window_ticks) + cost <= limit:
        t -= 1  # the closed form and the estimate's own float steps may differ in the last bit
    while estimate(k, prev, cur, t, window_ticks) + cost > limit:
        t += 1
    return t


def reset_tick(k: int, prev: float, cur: float) -> int:
    """The first window that sees neither count (k + 2 if cur holds any, k + 1 if only prev
    does), or k when both are empty."""
    if cur <= 0 and prev <= 0:
        return k
    return k + 2 if cur > 0 else k + 1


# ---------------------------------------------------------------- the keyed limiter


@dataclass(frozen=True, slots=True)
class CounterState:
    """Counts of window `index` (cur) and of the window before it (prev)."""

    index: int
    prev: float
    cur: float


class SlidingWindowCounter(WindowLimiter):
    """Keyed sliding window counter: estimate prev x (1 - elapsed/W) + cur against `limit`.

    Parameters:
        limit           requests (cost units) allowed per window, estimated; finite, > 0.
        window          the window's length, seconds; finite, > 0 (calendar-aligned).
        count_rejected  False (default): refused requests are not counted. True: they are.

    Two counts per key (this window's and the previous one's); a request passes when the
    estimate including it is within `limit`.

    Edge cases: the estimate assumes the previous window's requests were spread evenly, so
    it can admit more than `limit` in a trailing window (a burst at the end of the previous
    window) or fewer (on traffic exactly at the limit it refuses about one request in ten).
    A cost above `limit` is a ValueError, as is a time earlier than the key's last.

    Example: eight requests in [0, 10), then at 13 s the estimate is 8 x 0.7 = 5.6.

        >>> counter = SlidingWindowCounter(limit=10, window=10)
        >>> for _ in range(8):
        ...     _ = counter.allow("a", now=5)
        >>> [counter.allow("a", now=13).allowed for _ in range(5)]
        [True, True, True, True, False]
    """

    name = "sliding-window-counter"
    reports = ("estimate", "prev x (1 - elapsed/W) + cur (passes if estimate + cost <= limit)")

    def _initial(self, now: float, now_t: int) -> CounterState:
        return CounterState(index_of(now_t, self.window_ticks), 0.0, 0.0)

    def _check(self, state: CounterState, now: float, now_t: int, cost: float):
        w = self.window_ticks
        k = index_of(now_t, w)
        _, allowed, prev, cur, after = step(state.index, state.prev, state.cur, now_t, k, w,
                                            cost, self.limit, self.count_rejected)
        gone = reset_tick(k, prev, cur)
        return Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=window_remaining(after, self.limit),
            retry_after=0.0 if allowed else seconds_until(
                now, now_t, wait_ticks(k, prev, cur, now_t, w, self.limit, cost)),
            reset_after=seconds_until(now, now_t, gone * w) if gone > k else 0.0,
        ), CounterState(k, prev, cur)

    def _inspect(self, state: CounterState, now: float, now_t: int) -> dict:
        w = self.window_ticks
        k = index_of(now_t, w)
        prev, cur = roll(state.index, state.prev, state.cur, k)
        return {"window_start": k * w / TICKS_PER_S, "prev": prev, "cur": cur,
                "weight": weight(now_t, k, w), "estimate": blend(prev, cur, now_t, k, w),
                "limit": self.limit}
