"""Sliding window counter: two integers that approximate the sliding log.

Each key keeps the count of the current calendar window [kW, (k+1)W) and of the previous one.
At `elapsed` seconds into the current window the trailing count is estimated as

    prev x (1 - elapsed / W) + cur

— as if the previous window's requests had been spread evenly over it. A request passes when
the estimate including it is within `limit`. Worked example: prev 80, cur 30, 30% into the
window -> 80 x 0.7 + 30 = 86, under a limit of 100.

``count_rejected=True`` counts rejected requests in `cur` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Decision, WindowLimiter, earliest
from .fixed_window import window_index


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

    def _initial(self, now: float) -> CounterState:
        return CounterState(window_index(now, self.window), 0.0, 0.0)

    def _roll(self, state: CounterState, now: float) -> CounterState:
        """The counts as seen from the window `now` falls in."""
        k = window_index(now, self.window)
        if k == state.index:
            return state
        if k == state.index + 1:
            return CounterState(k, state.cur, 0.0)
        return CounterState(k, 0.0, 0.0)

    def _weight(self, k: int, now: float) -> float:
        """The share of the previous window still inside (now - W, now]."""
        return 1.0 - (now - k * self.window) / self.window

    def _check(self, state: CounterState, now: float, cost: float):
        s = self._roll(state, now)
        estimate = s.prev * self._weight(s.index, now) + s.cur
        allowed = estimate + cost <= self.limit
        counted = allowed or self.count_rejected
        cur = s.cur + cost if counted else s.cur
        after = estimate + cost if counted else estimate
        decision = Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=int(math.floor(max(0.0, self.limit - after))),
            retry_after=0.0 if allowed else self._wait(s.index, s.prev, cur, now, cost),
            reset_after=self._reset(s.index, s.prev, cur, now),
        )
        return decision, CounterState(s.index, s.prev, cur)

    def _wait(self, k: int, prev: float, cur: float, now: float, cost: float) -> float:
        """Seconds until a request of `cost` fits, if nothing else arrives."""
        w = self.window
        if cur + cost <= self.limit and prev > 0:  # within this window, as prev fades
            wait = k * w + w * (1.0 - (self.limit - cur - cost) / prev) - now
        else:
            fade = max(0.0, 1.0 - (self.limit - cost) / cur) if cur > 0 else 0.0
            wait = (k + 1) * w + w * fade - now  # in the next window, as cur fades
        state = CounterState(k, prev, cur)
        return earliest(now, wait, lambda t: self._estimate(state, t) + cost <= self.limit)

    def _estimate(self, state: CounterState, now: float) -> float:
        """prev x weight + cur as `_check` computes it at `now`."""
        s = self._roll(state, now)
        return s.prev * self._weight(s.index, now) + s.cur

    def _reset(self, k: int, prev: float, cur: float, now: float) -> float:
        """Seconds until the estimate is back to zero (both counts have rolled out)."""
        if cur <= 0 and prev <= 0:
            return 0.0
        gone = k + 2 if cur > 0 else k + 1  # the first window that sees neither count
        return earliest(now, gone * self.window - now,
                        lambda t: window_index(t, self.window) >= gone)

    def _inspect(self, state: CounterState, now: float) -> dict:
        s = self._roll(state, now)
        weight = self._weight(s.index, now)
        return {"window_start": s.index * self.window, "prev": s.prev, "cur": s.cur,
                "weight": weight, "estimate": s.prev * weight + s.cur, "limit": self.limit}
