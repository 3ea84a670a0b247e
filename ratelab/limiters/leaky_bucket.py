"""Leaky bucket, in its two readings: a meter that polices, and a queue that shapes.

* ``mode="police"`` (the bucket as a meter): each request pours `cost` units of water into a
  bucket of `capacity` that leaks `rate` units per second; a request that would overflow it is
  dropped. It admits exactly what a token bucket of the same rate and capacity admits (the
  water is the capacity minus the tokens), and passes admitted requests on at once.
* ``mode="shape"`` (the bucket as a queue): admitted requests wait in a FIFO of at most
  `capacity` units and leave at `rate`, so whatever comes in, what goes out is a metronome:
  departures at least 1/rate apart (cost/rate for a request of `cost`). A request that finds
  the queue full is dropped. The Decision's `delay` is the time the request waits in the queue.

Times are whole microseconds (ticks): the leak is computed from the integer ticks elapsed, and
a request that would fit in less than one tick passes (``clock.TIE_TICKS``), poured in full.
The scalar functions below are the one arithmetic; the compiled replay compiles them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import (MAX_RATE, Decision, Limiter, PerSecond, Seconds, below, bounded, budget_args,
                   positive, whole_below)
from ..clock import TICKS_PER_S, seconds_until, tie_amount, ticks_to_pass

MODES = ("police", "shape")


@dataclass(frozen=True, slots=True)
class MeterState:
    """Water in the bucket — the units of work queued — as of tick `last`."""

    level: float
    last: int


# ---------------------------------------------------------------- the arithmetic (scalars)


def level_at(level: float, last: int, now: int, rate: PerSecond) -> float:
    """The water left at tick `now` of `level` at tick `last`, leaking `rate` per second."""
    return max(0.0, level - (now - last) * (rate / TICKS_PER_S))


def ticks_over(level: float, cost: float, rate: PerSecond, capacity: float) -> float:
    """Ticks of leak needed before `cost` fits on top of `level` (<= 0: it fits now)."""
    return (level + cost - capacity) * TICKS_PER_S / rate


def passes(level: float, cost: float, rate: PerSecond, capacity: float) -> bool:
    """Whether `cost` fits on top of `level`, or will in less than TIE_TICKS
    (``within_tie(ticks_over(...))``, with both sides multiplied by rate / 1e6: the overflow
    in units of cost against what a tie's worth of ticks leaks)."""
    return level + cost - capacity < tie_amount(rate)


def wait_ticks(level: float, cost: float, rate: PerSecond, capacity: float) -> int:
    """Ticks until `cost` fits on top of `level` (0 if it does now)."""
    d = ticks_to_pass(ticks_over(level, cost, rate, capacity))
    while d > 0 and passes(level_at(level, 0, d - 1, rate), cost, rate, capacity):
        d -= 1  # the closed form and the leak's own float steps may differ in the last bit
    while not passes(level_at(level, 0, d, rate), cost, rate, capacity):
        d += 1
    return d


def step(level: float, last: int, now: int, cost: float, rate: PerSecond,
         capacity: float) -> tuple[float, float, bool]:
    """(water at `now` before the request, water after it, whether it passed)."""
    have = level_at(level, last, now, rate)
    allowed = passes(have, cost, rate, capacity)
    return have, have + cost if allowed else have, allowed


# ---------------------------------------------------------------- the keyed limiter


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
    REPORTS = {
        "police": ("level", "water in the bucket, drained to now "
                            "(passes if level + cost <= capacity)"),
        "shape": ("queue", "cost units queued ahead of the request, the meter's level "
                           "(passes if queue + cost <= capacity; waits queue / rate)"),
    }

    can_shape = True
    example = {"rate": 100.0, "capacity": 100.0}

    def __init__(self, rate: PerSecond, capacity: float, mode: str = "police") -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.capacity = bounded("capacity", positive("capacity", capacity))
        self.rate = below("rate", positive("rate", rate), MAX_RATE, "2**53 per microsecond")
        self.mode = mode
        self.limit = self.capacity
        self._check_refill_time(self.capacity, self.rate)

    @property
    def reports(self) -> tuple[str, str]:  # type: ignore[override]
        """What this mode reports as its counter (REPORTS[mode])."""
        return self.REPORTS[self.mode]

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "capacity": self.capacity, "mode": self.mode}

    @property
    def shapes(self) -> bool:  # type: ignore[override]
        """Whether this bucket queues (mode "shape") rather than polices."""
        return self.mode == "shape"

    @property
    def rate_per_s(self) -> PerSecond:
        """The leak rate."""
        return self.rate

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict:
        """``{rate: limit / window_s, capacity: limit, mode: "shape" or "police"}``."""
        limit, window_s, rate = budget_args(limit, window_s)
        return {"rate": rate, "capacity": limit, "mode": "shape" if shape else "police"}

    def _initial(self, now: float, now_t: int) -> MeterState:
        return MeterState(0.0, now_t)

    def _check(self, state: MeterState, now: float, now_t: int, cost: float):
        rate, capacity = self.rate, self.capacity
        level, after, allowed = step(state.level, state.last, now_t, cost, rate, capacity)
        return Decision(
            allowed=allowed,
            limit=capacity,
            remaining=whole_below(capacity - after + tie_amount(rate)),
            retry_after=0.0 if allowed else seconds_until(
                now, now_t, now_t + wait_ticks(after, cost, rate, capacity)),
            reset_after=seconds_until(
                now, now_t, now_t + wait_ticks(after, capacity, rate, capacity)),
            # the shaper serves the queue first: `level` units ahead at `rate` per second
            delay=level / rate if allowed and self.shapes else 0.0,
        ), MeterState(after, now_t)

    def _inspect(self, state: MeterState, now: float, now_t: int) -> dict:
        level = level_at(state.level, state.last, now_t, self.rate)
        if not self.shapes:
            return {"level": level, "capacity": self.capacity}
        return {"queue": level, "next_free": now + level / self.rate, "capacity": self.capacity}
