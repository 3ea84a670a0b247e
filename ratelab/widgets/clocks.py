"""The clocks a panel reads real time from: the monotonic one, or one moved by hand."""

from __future__ import annotations

import math
import time
from typing import Callable, Protocol


class Clock(Protocol):
    """Anything with ``now()`` in seconds: the play loop reads real time only through it."""

    def now(self) -> float: ...


class MonotonicClock:
    """The real, monotonic clock (``time.monotonic``)."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told to: ``advance(dt)``. For tests and replays."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = float(t)

    def now(self) -> float:
        return self.t

    def advance(self, dt: float) -> float:
        """Move the clock `dt` seconds on; returns the new time."""
        self.t += dt
        return self.t


def frames_per_s(frame: Callable[[], object], frames: int, clock: Clock | None = None) -> float:
    """Calls of `frame` per second, timed over `frames` calls on `clock` (default: the real
    monotonic clock); inf when the clock did not move."""
    clock = clock or MonotonicClock()
    start = clock.now()
    for _ in range(frames):
        frame()
    elapsed = clock.now() - start
    return frames / elapsed if elapsed > 0 else math.inf
