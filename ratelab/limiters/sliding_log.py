"""Sliding window log: the exact answer, at one timestamp per request.

The log holds the time (and cost) of every admitted request of the last `window` seconds. A
request at `now` passes when the cost logged in the trailing window (now - W, now], plus its
own, is within `limit`. No trailing window ever holds more than `limit` — the price is memory
proportional to the limit, per key.

Times are whole microseconds (ticks): an entry logged at tick t has left the trailing window
of tick `now` when ``now - t >= window_ticks`` (:func:`has_left`), exact at every origin.

``count_rejected=True`` logs rejected requests too (a client that keeps knocking stays out).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .base import Decision, WindowLimiter, window_remaining, window_step
from ..clock import TICKS_PER_S, seconds_until


def has_left(entry: int, now: int, window_ticks: int) -> bool:
    """Whether an entry logged at tick `entry` is out of the trailing window (now - W, now]."""
    return now - entry >= window_ticks


@dataclass(slots=True)
class Log:
    """(tick, cost) of logged requests, oldest first, and their total cost."""

    entries: deque = field(default_factory=deque)
    total: float = 0.0


@dataclass(frozen=True, slots=True)
class LogChange:
    """What a request does to the log: drop the `expired` oldest entries, append `entry`."""

    log: Log
    expired: int
    expired_cost: float
    entry: tuple[int, float] | None


class SlidingWindowLog(WindowLimiter):
    """Keyed exact sliding window: at most `limit` in any window (t - `window`, t].

    Parameters:
        limit           requests (cost units) allowed in any trailing window; finite, > 0.
        window          the trailing window's length, seconds; finite, > 0.
        count_rejected  False (default): only admitted requests are logged. True: refused
                        ones too (a client that keeps knocking stays out).

    A request at `now` passes when the cost logged in (now - window, now], plus its own, is
    within `limit`. Exact, at the price of one entry per logged request per key.

    Edge cases: the window is half-open, so a request exactly `window` seconds old no longer
    counts. A cost above `limit` is a ValueError, as is a time earlier than the key's last.
    ``retry_after`` is the time until enough of the log has aged out.

    Example: two per 10 s, trailing.

        >>> log = SlidingWindowLog(limit=2, window=10)
        >>> [log.allow("a", now=t).allowed for t in (1, 2, 3, 11, 12)]
        [True, True, False, True, True]
    """

    name = "sliding-window-log"
    reports = ("count", "cost logged in the trailing window (now - W, now] "
                        "(passes if count + cost <= limit)")

    def _initial(self, now: float, now_t: int) -> Log:
        return Log()

    def _expired(self, log: Log, now: int) -> tuple[int, float]:
        """How many of the oldest entries have left (now - W, now] at tick `now`, and their
        cost."""
        n, cost = 0, 0.0
        for t, c in log.entries:
            if not has_left(t, now, self.window_ticks):
                break
            n, cost = n + 1, cost + c
        return n, cost

    def _check(self, log: Log, now: float, now_t: int, cost: float):
        expired, expired_cost = self._expired(log, now_t)
        in_window = log.total - expired_cost
        allowed, logged, after = window_step(in_window, cost, self.limit, self.count_rejected)
        if logged:
            newest = now_t
        else:
            newest = log.entries[-1][0] if len(log.entries) > expired else None
        return Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=window_remaining(after, self.limit),
            retry_after=0.0 if allowed else self._wait(log, expired, after, now, now_t, cost),
            reset_after=0.0 if newest is None else seconds_until(
                now, now_t, newest + self.window_ticks),
        ), LogChange(log, expired, expired_cost, (now_t, cost) if logged else None)

    def _wait(self, log: Log, expired: int, logged: float, now: float, now_t: int,
              cost: float) -> float:
        """Seconds until enough logged cost leaves the window for `cost` to fit.

        `logged` is the cost in the window after this request (its own included when
        rejected requests count); the retry needs `cost` more; entries leave oldest first.
        """
        need = logged + cost - self.limit
        entries = list(log.entries)[expired:] + ([(now_t, cost)] if self.count_rejected else [])
        for t, c in entries:
            need -= c
            if need <= 0:  # when t has left (T - W, T]: T - t >= W
                return seconds_until(now, now_t, t + self.window_ticks)
        return self.window  # unreachable while cost <= limit

    def _commit(self, key, change: LogChange, now: float, now_t: int) -> None:
        log = change.log
        for _ in range(change.expired):
            log.entries.popleft()
        log.total -= change.expired_cost
        if change.entry is not None:
            log.entries.append(change.entry)
            log.total += change.entry[1]
        if not log.entries:
            log.total = 0.0  # no drift from float sums
        super()._commit(key, log, now, now_t)

    def _inspect(self, log: Log, now: float, now_t: int) -> dict:
        expired, expired_cost = self._expired(log, now_t)
        times = [t / TICKS_PER_S for t, _ in list(log.entries)[expired:]]
        return {"log": times, "count": log.total - expired_cost, "limit": self.limit}
