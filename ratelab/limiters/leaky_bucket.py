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

from .base import TIE, Decision, Limiter, PerSecond, Seconds, earliest, positive

MODES = ("police", "shape")


@dataclass(frozen=True, slots=True)
class MeterState:
    """Water in the bucket — the units of work queued — as of time `last`."""

    level: float
    last: Seconds


class LeakyBucket(Limiter):
    """Keyed leaky bucket leaking `rate` units per second from a bucket of `capacity` units.

    Parameters:
        rate      units (requests) that leak out per second; finite, > 0.
        capacity  the bucket's size: the most water, or queued work, it holds (requests); > 0.
        mode      "police" (default): a meter; an admitted request passes at once.
                  "shape": a queue; an admitted request waits ``delay`` seconds, so what
                  leaves is spaced at least 1/rate apart.

    A request that would overflow the bucket is refused and changes nothing. Police admits
    exactly what a token bucket of the same rate and capacity admits.

    Edge cases: a cost above `capacity` is a ValueError (it could never fit); an unknown mode,
    a time earlier than the key's last, a non-positive rate or capacity too.

    Example: shaping a burst of four into a bucket of three.

        >>> shaper = LeakyBucket(rate=2, capacity=3, mode="shape")
        >>> [(d.allowed, d.delay) for d in [shaper.allow("a", now=0.0) for _ in range(4)]]
        [(True, 0.0), (True, 0.5), (True, 1.0), (False, 0.0)]

    Both modes keep the same meter — the water level, which for the shaper is the work queued
    ahead — so both admit the same requests; the shaper also says how long each waits:
    ``level / rate``. Keeping the level (not a "next free" time that grows by cost/rate per
    request) keeps a burst exact: 100 simultaneous requests are 100 units, not a float sum of
    100 periods that reads back as 99.00000000000001.
    """

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

    def _initial(self, now: float) -> MeterState:
        return MeterState(0.0, now)

    def _level(self, state: MeterState, now: float) -> float:
        """The water left at `now` after leaking since `state.last`."""
        return max(0.0, state.level - max(0.0, now - state.last) * self.rate)

    def _check(self, state: MeterState, now: float, cost: float):
        level = self._level(state, now)
        allowed = level + cost <= self.capacity + TIE  # a float excess below TIE is a tie
        after = level + cost if allowed else level
        new = MeterState(after, now)
        decision = Decision(
            allowed=allowed,
            limit=self.capacity,
            remaining=int(math.floor(self.capacity - after)),
            retry_after=0.0 if allowed else earliest(
                now, (level + cost - self.capacity) / self.rate,
                lambda t: self._level(new, t) + cost <= self.capacity + TIE),
            reset_after=earliest(now, after / self.rate, lambda t: self._level(new, t) == 0.0),
            # the shaper serves the queue first: `level` units ahead at `rate` per second
            delay=level / self.rate if allowed and self.mode == "shape" else 0.0,
        )
        return decision, new

    def _inspect(self, state: MeterState, now: float) -> dict:
        level = self._level(state, now)
        if self.mode == "police":
            return {"level": level, "capacity": self.capacity}
        return {"queue": level, "next_free": now + level / self.rate, "capacity": self.capacity}
