"""Concurrency limiter: at most `max_in_flight` requests of a key in progress at once.

A rate limiter counts *starts* per unit of time; a concurrency limiter counts requests that
have started and not yet finished. They trip on different workloads: a flood of cheap, fast
requests trips the rate limit long before more than a few are in flight; a trickle of slow,
expensive ones (reports, exports, long polls) piles up in flight while the rate stays low.
Stripe runs both, a requests-per-second limiter and a concurrent-requests limiter.

The verbs are ``acquire(key, now)`` — a Decision and, when allowed, a :class:`Lease` — and
``release(lease, now)``. A lease forgotten by a crashed worker would hold its slot forever, so
``lease_s`` (optional) bounds a lease's life: a lease older than ``lease_s`` no longer counts
(as a Redis sorted set of start times trimmed by age does). ``peek`` answers without taking a
slot.

What a refusal can say is limited: nobody knows when a request in flight will finish. Without
``lease_s`` the Decision's retry_after and reset_after are ``math.inf`` (unknown; ratelab.http
then sends no Retry-After); with it they are the time until the oldest / the newest lease
expires, an upper bound.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from .base import Decision, Seconds, finite_time, positive, whole


@dataclass(frozen=True, slots=True)
class Lease:
    """A slot held by one request: its key, a serial number, and when it started."""

    key: Hashable
    serial: int
    start: Seconds


class ConcurrencyLimiter:
    """Keyed limit on requests in flight: at most `max_in_flight` leases per key."""

    name = "concurrency"

    def __init__(self, max_in_flight: int, lease_s: Seconds | None = None) -> None:
        self.max_in_flight = whole("max_in_flight", max_in_flight)
        self.lease_s = None if lease_s is None else positive("lease_s", lease_s)
        self.limit = float(self.max_in_flight)
        self._leases: dict[Hashable, dict[int, float]] = {}
        self._last: dict[Hashable, float] = {}
        self._serial = itertools.count()

    @property
    def params(self) -> dict:
        return {"max_in_flight": self.max_in_flight, "lease_s": self.lease_s}

    def _time(self, key: Hashable, now) -> float:
        now = finite_time(now)
        last = self._last.get(key)
        if last is not None and now < last:
            raise ValueError(f"now={now!r} is earlier than the last time {last!r} seen for key "
                             f"{key!r}: time must not run backwards for a key")
        return now

    def _live(self, key: Hashable, now: float) -> dict[int, float]:
        """The key's leases still counting at `now` (expired ones dropped)."""
        leases = self._leases.setdefault(key, {})
        if self.lease_s is not None:
            for serial in [s for s, t in leases.items() if t + self.lease_s <= now]:
                del leases[serial]
        return leases

    def _decision(self, leases: dict[int, float], now: float, taking: bool) -> Decision:
        n = len(leases)
        allowed = n < self.max_in_flight
        after = n + 1 if (allowed and taking) else n
        if self.lease_s is None:
            retry = math.inf
            reset = math.inf if after else 0.0
        else:
            starts = sorted(leases.values()) + ([now] if allowed and taking else [])
            retry = starts[0] + self.lease_s - now if starts else 0.0
            reset = starts[-1] + self.lease_s - now if starts else 0.0
        return Decision(allowed=allowed, limit=self.limit, remaining=self.max_in_flight - after,
                        retry_after=0.0 if allowed else retry, reset_after=reset)

    def acquire(self, key: Hashable, now: Seconds) -> tuple[Decision, Lease | None]:
        """Take a slot for `key` at `now` if one is free: the Decision and the Lease (or None)."""
        now = self._time(key, now)
        leases = self._live(key, now)
        decision = self._decision(leases, now, taking=True)
        self._last[key] = now
        if not decision.allowed:
            return decision, None
        lease = Lease(key, next(self._serial), now)
        leases[lease.serial] = now
        return decision, lease

    def peek(self, key: Hashable, now: Seconds) -> Decision:
        """What `acquire` would answer, taking nothing."""
        now = self._time(key, now)
        return self._decision(dict(self._live(key, now)), now, taking=True)

    def release(self, lease: Lease, now: Seconds) -> bool:
        """Give `lease`'s slot back at `now`: True, or False when it had already expired.

        Releasing a lease twice, or one this limiter never gave, is a ValueError.
        """
        if not isinstance(lease, Lease):
            raise ValueError(f"lease must be a Lease from acquire(), got {lease!r}")
        now = self._time(lease.key, now)
        if now < lease.start:
            raise ValueError(f"now={now!r} is before the lease started ({lease.start!r})")
        leases = self._live(lease.key, now)
        self._last[lease.key] = now
        if lease.serial in leases:
            del leases[lease.serial]
            return True
        if self.lease_s is not None and lease.start + self.lease_s <= now:
            return False
        raise ValueError(f"lease {lease!r} was already released or is not from this limiter")

    def in_flight(self, key: Hashable, now: Seconds) -> int:
        """How many leases of `key` count at `now`."""
        return len(self._live(key, self._time(key, now)))

    def reset(self, key: Hashable | None = None) -> None:
        """Forget one key's leases, or every key's."""
        if key is None:
            self._leases.clear()
            self._last.clear()
        else:
            self._leases.pop(key, None)
            self._last.pop(key, None)

    def __repr__(self) -> str:
        return f"ConcurrencyLimiter(max_in_flight={self.max_in_flight}, lease_s={self.lease_s})"


def replay_concurrency(limiter: ConcurrencyLimiter, times: Sequence[float],
                       durations: Sequence[float], key: Hashable = "k") -> np.ndarray:
    """Admitted mask for requests starting at `times` and lasting `durations` seconds.

    Admitted requests release their slot at start + duration. A release and an arrival at the
    same instant: the release comes first (the slot is free at that moment).
    """
    times = np.asarray(times, dtype=float)
    durations = np.asarray(durations, dtype=float)
    if times.shape != durations.shape:
        raise ValueError(f"times and durations must have the same length, "
                         f"got {times.shape} and {durations.shape}")
    if np.any(np.diff(times) < 0):
        raise ValueError("times must be sorted (out-of-order timestamps found)")
    if np.any(~np.isfinite(durations)) or np.any(durations < 0):
        raise ValueError("durations must be finite and >= 0")
    admitted = np.zeros(len(times), dtype=bool)
    ends: list[tuple[float, int, Lease]] = []
    for i, (t, d) in enumerate(zip(times, durations)):
        while ends and ends[0][0] <= t:
            end, _, lease = heapq.heappop(ends)
            limiter.release(lease, end)
        decision, lease = limiter.acquire(key, t)
        if decision.allowed:
            admitted[i] = True
            heapq.heappush(ends, (t + d, i, lease))
    return admitted


def max_in_flight(times: Sequence[float], durations: Sequence[float]) -> int:
    """The most requests in progress at once, were every one served (a release at t frees t)."""
    times = np.asarray(times, dtype=float)
    ends = times + np.asarray(durations, dtype=float)
    events = sorted([(t, 1) for t in times] + [(e, -1) for e in ends], key=lambda ev: (ev[0], ev[1]))
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak
