"""Leaky bucket, in its two readings: a meter that polices, and a queue that shapes.

* ``mode="police"`` (the bucket as a meter): each request pours `cost` units of water into a
  bucket of `capacity` that leaks `rate` units per second; a request that would overflow it is
  dropped. It admits exactly what a token bucket of the same rate and capacity admits (the
  water is the capacity minus the tokens), and passes admitted requests on at once.
* ``mode="shape"`` (the bucket as a queue): admitted requests wait in a FIFO of at most
  `capacity` units and leave at `rate`, so whatever comes in, what goes out is a metronome:
  departures at least 1/rate apart (cost/rate for a request of `cost`). A request that finds
  the queue full is dropped. The Decision's `delay` is the time the request waits in the queue.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Decision, Limiter, PerSecond, Seconds, positive

MODES = ("police", "shape")


@dataclass(frozen=True, slots=True)
class MeterState:
    """Water in the bucket, as of time `last`."""

    level: float
    last: Seconds


@dataclass(frozen=True, slots=True)
class QueueState:
    """The earliest time the next admitted request can leave (the queue is empty before)."""

    next_free: Seconds


class LeakyBucket(Limiter):
    """Keyed leaky bucket leaking `rate` units per second from a bucket of `capacity` units."""

    name = "leaky-bucket"

    def __init__(self, rate: PerSecond, capacity: float, mode: str = "police") -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.rate = positive("rate", rate)
        self.capacity = positive("capacity", capacity)
        self.mode = mode
        self.limit = self.capacity

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "capacity": self.capacity, "mode": self.mode}

    def _initial(self, now: float):
        return MeterState(0.0, now) if self.mode == "police" else QueueState(now)

    def _check(self, state, now: float, cost: float):
        if self.mode == "police":
            return self._police(state, now, cost)
        return self._shape(state, now, cost)

    def _police(self, state: MeterState, now: float, cost: float):
        level = max(0.0, state.level - max(0.0, now - state.last) * self.rate)
        allowed = level + cost <= self.capacity
        after = level + cost if allowed else level
        decision = Decision(
            allowed=allowed,
            limit=self.capacity,
            remaining=int(math.floor(self.capacity - after)),
            retry_after=0.0 if allowed else (level + cost - self.capacity) / self.rate,
            reset_after=after / self.rate,
        )
        return decision, MeterState(after, now)

    def _shape(self, state: QueueState, now: float, cost: float):
        start = max(now, state.next_free)
        backlog = self._units(start - now)  # units queued ahead of this request
        allowed = backlog + cost <= self.capacity
        next_free = start + cost / self.rate if allowed else state.next_free
        after = self._units(max(now, next_free) - now)
        decision = Decision(
            allowed=allowed,
            limit=self.capacity,
            remaining=int(math.floor(self.capacity - after)),
            retry_after=0.0 if allowed else (backlog + cost - self.capacity) / self.rate,
            reset_after=after / self.rate,
            delay=start - now if allowed else 0.0,
        )
        return decision, QueueState(next_free)

    def _units(self, seconds: float) -> float:
        """The queued units that `seconds` of work ahead stand for, to a billionth of a unit.

        ``next_free`` grows by cost / rate per request, and float sums drift: 100 requests of
        1/50 s read back as 99.00000000000001 units, which would turn away the 100th request
        of a queue of 100. Rounding to 1e-9 units removes the drift and nothing else.
        """
        return round(seconds * self.rate, 9)

    def _inspect(self, state, now: float) -> dict:
        if self.mode == "police":
            level = max(0.0, state.level - max(0.0, now - state.last) * self.rate)
            return {"level": level, "capacity": self.capacity}
        backlog = self._units(max(0.0, state.next_free - now))
        return {"queue": backlog, "next_free": max(now, state.next_free),
                "capacity": self.capacity}
