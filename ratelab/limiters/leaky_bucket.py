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
TIE = 1e-9  # request units: float error below this is a tie


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
        backlog = (start - now) * self.rate  # units queued ahead of this request
        # next_free is a sum of cost / rate steps (not exact in floats): a backlog within a
        # billionth of a unit of the capacity is a tie, and a tie is admitted
        allowed = backlog + cost <= self.capacity + TIE
        next_free = start + cost / self.rate if allowed else state.next_free
        after = (max(now, next_free) - now) * self.rate
        decision = Decision(
            allowed=allowed,
            limit=self.capacity,
            remaining=max(0, int(math.floor(self.capacity - after + TIE))),
            retry_after=0.0 if allowed else (backlog + cost - self.capacity) / self.rate,
            reset_after=after / self.rate,
            delay=start - now if allowed else 0.0,
        )
        return decision, QueueState(next_free)

    def _inspect(self, state, now: float) -> dict:
        if self.mode == "police":
            level = max(0.0, state.level - max(0.0, now - state.last) * self.rate)
            return {"level": level, "capacity": self.capacity}
        backlog = max(0.0, state.next_free - now) * self.rate
        return {"queue": backlog, "next_free": max(now, state.next_free),
                "capacity": self.capacity}
