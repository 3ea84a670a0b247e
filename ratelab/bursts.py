"""Burst shapes: schedules of request times, and a limiter played over them.

A schedule is a sorted array of request times (seconds): the times of one source of
:mod:`ratelab.traces.generators` (``burst``, ``stream``, ``poisson``, ``boundary_attack``).
:func:`play` asks a reference limiter about every request in order — time is an argument, so
the same schedule always gives the same decisions — and samples the limiter's internal state
(``inspect``) on a regular grid as well, so a plot can show the bucket refilling between
requests.

    >>> from ratelab.limiters import make
    >>> run = play(make("token-bucket", rate=1, capacity=2), burst(3))
    >>> run.allowed.tolist()
    [True, True, False]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

import numpy as np

from . import metrics
from .limiters import Limiter
from .limiters.base import finite_time, positive
from .traces import generators


# ---------------------------------------------------------------- schedules
# The workloads are :mod:`ratelab.traces.generators`'; these are their times, under the
# argument names the notebooks use (a span as start and stop, `at`, `lead_s`).


def burst(n: int, at: float = 0.0, spread_s: float = 0.0) -> np.ndarray:
    """`n` request times starting at `at`, evenly spread over `spread_s` (0: all at once)."""
    return generators.burst(n, start_s=at, spread_s=spread_s).time


def stream(rate_per_s: float, start: float, stop: float) -> np.ndarray:
    """Evenly spaced request times, `rate_per_s` of them per second, in [start, stop)."""
    return generators.stream(rate_per_s, stop - start, start_s=start).time


def boundary_attack(limit: int, window_s: float, boundary: float,
                    lead_s: float | None = None) -> np.ndarray:
    """`limit` requests in the `lead_s` before `boundary` and `limit` more in the `lead_s` after.

    Against a fixed window of `limit` per `window_s` whose window ends at `boundary` (a
    multiple of `window_s`), all 2 x `limit` pass: each window sees only `limit`. `lead_s`
    defaults to a tenth of the window and must not exceed it.
    :func:`ratelab.traces.generators.boundary_attack` makes them (its ``spread_s``).
    """
    window_s = positive("window_s", window_s)
    lead_s = window_s / 10 if lead_s is None else positive("lead_s", lead_s)
    if lead_s > window_s:
        raise ValueError(f"lead_s must be at most window_s={window_s!r}, got {lead_s!r}")
    boundary = finite_time(boundary, "boundary")
    return generators.boundary_attack(limit, window_s, boundary_s=boundary,
                                      spread_s=lead_s).time


def poisson(rate_per_s: float, start: float, stop: float, rng: np.random.Generator) -> np.ndarray:
    """Poisson arrivals at `rate_per_s` (> 0) in [start, stop), drawn from the generator `rng`."""
    rate_per_s = positive("rate_per_s", rate_per_s)
    return generators.poisson(rate_per_s, stop - start, rng, start_s=start).time


# ---------------------------------------------------------------- counting
# Adapters of ratelab.metrics for schedules, kept because their contracts differ: a plain array
# at the requests themselves (rolling_count: a Series on a grid), the count alone
# (max_in_window: a WindowMax), and times in any order (metrics.spacing refuses unsorted ones).


def trailing_count(times: np.ndarray, window_s: float, at: np.ndarray | None = None) -> np.ndarray:
    """How many of `times` fall in the trailing window (t - window_s, t], for each t in `at`.

    `times` must be sorted; `at` defaults to `times` itself (the count each request sees,
    itself included). The counting is ``ratelab.metrics.rolling_count``'s.
    """
    times = np.asarray(times, dtype=float)
    return metrics.rolling_count(times, window_s, at=times if at is None else at).to_numpy()


def max_in_window(times: np.ndarray, window_s: float) -> int:
    """The most of `times` (sorted) that any trailing window (t - window_s, t] holds."""
    return metrics.max_in_window(times, window_s).count


def spacing(times: np.ndarray) -> np.ndarray:
    """The gaps between consecutive times (sorted first)."""
    return metrics.spacing(np.sort(np.asarray(times, dtype=float)))


# ---------------------------------------------------------------- playing a limiter


@dataclass
class Played:
    """A schedule played through a limiter: per request, and the state sampled over time."""

    times: np.ndarray
    allowed: np.ndarray
    delay: np.ndarray
    retry_after: np.ndarray
    sample_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    samples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def admitted(self) -> np.ndarray:
        """Times of the admitted requests."""
        return self.times[self.allowed]

    @property
    def rejected(self) -> np.ndarray:
        """Times of the rejected requests."""
        return self.times[~self.allowed]

    @property
    def departures(self) -> np.ndarray:
        """When admitted requests are served: arrival plus delay (shaping, nginx)."""
        return np.sort(self.times[self.allowed] + self.delay[self.allowed])

    def state(self, field_name: str) -> np.ndarray:
        """One field of the sampled internal state (``tokens``, ``queue``, ``count`` ...)."""
        return np.array([float(s[field_name]) for s in self.samples])


def play(limiter: Limiter, times, key: Hashable = "client", *, sample_s: float | None = None,
         until: float | None = None) -> Played:
    """Ask `limiter` about a request at each of `times` (sorted) for `key`, in order.

    With `sample_s`, the key's internal state is also read (``inspect``) every `sample_s`
    seconds from the first request to `until` (default: the last request), between requests
    and just after the requests of the same instant.
    """
    times = np.asarray(times, dtype=float)
    if len(times) and np.any(np.diff(times) < 0):
        raise ValueError("times must be sorted (a schedule runs forwards in time)")
    n = len(times)
    allowed = np.zeros(n, dtype=bool)
    delay = np.zeros(n)
    retry = np.zeros(n)
    grid = np.zeros(0)
    if sample_s is not None and n:
        end = times[-1] if until is None else until
        grid = np.arange(times[0], end + 1e-12, positive("sample_s", sample_s))
    samples, g = [], 0
    for i, t in enumerate(times):
        while g < len(grid) and grid[g] < t:
            samples.append(limiter.inspect(key, grid[g]))
            g += 1
        d = limiter.allow(key, t)
        allowed[i], delay[i], retry[i] = d.allowed, d.delay, d.retry_after
    for t in grid[g:]:
        samples.append(limiter.inspect(key, t))
    return Played(times, allowed, delay, retry, grid, samples)
