"""Building the exercises' cases: request times on an exact grid, whole-number costs, and the
instructor's kinds of input.

A case is a JSON-able dict. Times and rates are floats; what counts requests (a limit, a
capacity, a burst, a cost) is an ``int``, so an answer that repeats a list ``cost`` times or
sizes one by ``limit`` is handed what it expects (JSON keeps an int an int).

The instructor's cases differ from the public ones in kind, not only in seed
(:func:`timeline_kinds`):

* **boundary edges**: requests exactly on the period's edges k x P (P the window, or 1/rate)
  and one grid step either side, where ``<`` and ``<=`` part;
* **Unix time**: the same at Unix-time magnitudes (1.76e9 s and on), where float seconds are
  good to 2.4e-7 s;
* **long idle**: bursts separated by one period, two, a full refill, and a million periods;
* **costs**: costs above 1 up to the most one request may cost (cost == limit / capacity).

Every time lies on a grid of binary fractions of a second (:data:`GRID_S`), so float arithmetic
on them is exact and an answer in plain floats meets the reference at its ties.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

GRID_S = 1 / 64
"""Random streams put requests on a 1/64 s grid: binary fractions (and whole microseconds), so
float arithmetic on them is exact and a plain float answer meets the reference at its ties."""

UNIX_S = 1.76e9
"""Seconds: where the Unix-time cases start (late 2025), a whole number of seconds divisible by
2**9, so every grid time after it is exact and the period edges of a binary period fall on it."""

DAY_S = 86_400
"""Seconds in a day: the Unix-time cases start within one after :data:`UNIX_S`."""

FAR_PERIODS = 10**6
"""The longest idle gap of the long-idle kind, in periods."""

PER_KIND = 2
"""How many cases of each kind an exercise's instructor cases hold."""


# ---------------------------------------------------------------- values


def count(value) -> int:
    """`value` as an int: a whole number of requests (ValueError for a fraction)."""
    if isinstance(value, (bool, np.bool_)) or float(value) != int(value):
        raise ValueError(f"a count must be a whole number, got {value!r}")
    return int(value)


def on_grid(t: float, grid_s: float = GRID_S) -> float:
    """`t` rounded to the nearest multiple of `grid_s`."""
    return float(round(t / grid_s) * grid_s)


def grid_times(rng: np.random.Generator, n: int, mean_gap_s: float, start: float = 0.0,
               grid_s: float = GRID_S) -> list[float]:
    """`n` sorted request times from `start`: gaps drawn exponential with `mean_gap_s`,
    rounded to `grid_s` (so bursts at one instant happen too)."""
    gaps = np.round(rng.exponential(mean_gap_s, n) / grid_s) * grid_s
    return [float(start + t) for t in np.cumsum(gaps)]


def with_costs(times: Sequence[float], costs: Sequence[int] | None = None) -> list[list]:
    """[[time, cost], ...]: times as floats, costs as ints (1 unless given)."""
    costs = [1] * len(times) if costs is None else costs
    return [[float(t), count(c)] for t, c in zip(times, costs)]


def unix_start(rng: np.random.Generator, grid_s: float = GRID_S) -> float:
    """A time on the grid within a day after :data:`UNIX_S`."""
    steps = float(rng.integers(0, round(1 / grid_s)))  # a fraction of a second, on the grid
    return UNIX_S + float(rng.integers(0, DAY_S)) + steps * grid_s


def costs_up_to(rng: np.random.Generator, n: int, top: int) -> list[int]:
    """`n` costs from 1 to `top`, mostly small, the first of them `top` itself."""
    drawn = [int(min(top, rng.choice([1, 1, 2, 3, top]))) for _ in range(n - 1)]
    return [int(top)] + drawn


# ---------------------------------------------------------------- the kinds


@dataclass(frozen=True)
class Shape:
    """One drawn limiter of an exercise, as the kinds need to know it.

    params     the case's params (what the answer is built with);
    period_s   the window, or 1/rate: the edges lie at its multiples;
    holds      requests of cost 1 it admits at once from idle (limit, capacity, burst + 1);
    top_cost   the most one request may cost (1 where the answer takes no cost);
    windowed   True for calendar or trailing windows (each edge is filled past the limit),
               False for buckets (drained once, then one request per edge);
    grid_s     the step either side of an edge (the exercise's time grid).
    """

    params: dict
    period_s: float
    holds: int
    top_cost: int = 1
    windowed: bool = True
    grid_s: float = GRID_S


def edge_times(shape: Shape, first: int, edges: int, offset_s: float = 0.0) -> list[float]:
    """Times on `edges` consecutive period edges from k = `first`: at k x P - g, k x P and
    k x P + g (g one grid step); a window gets holds + 1 at each, a bucket is drained at the
    first edge and then gets one at each (so each k x P is exactly when it refills). A bucket
    has no calendar: `offset_s` moves its edges off the multiples of P."""
    p, g = shape.period_s, shape.grid_s
    fill = shape.holds + 1 if shape.windowed else 1
    times = [] if shape.windowed else [first * p + offset_s] * (shape.holds + 1)
    for k in range(first + (0 if shape.windowed else 1), first + edges):
        t = k * p + offset_s
        times += [t - g] * fill + [t] * fill + [t + g] * fill
    return times


def idle_times(rng: np.random.Generator, shape: Shape, start: float) -> list[float]:
    """Bursts of holds + 1 from `start`, separated by idle gaps of one period, two, a full
    refill (holds periods, plus one) and :data:`FAR_PERIODS`, in a drawn order."""
    gaps = [1, 2, shape.holds + 1, FAR_PERIODS]
    order = [int(i) for i in rng.permutation(len(gaps))]
    times, t = [start] * (shape.holds + 1), start
    for i in order:
        t += gaps[i] * shape.period_s
        times += [t] * (shape.holds + 1)
    return times


def _case(name: str, shape: Shape, times: Sequence[float], costs=None) -> dict:
    """A timeline case on `shape`'s params: `times` with `costs` (1 each unless given)."""
    return {"name": name, "params": dict(shape.params), "requests": with_costs(times, costs)}


def boundary_case(rng: np.random.Generator, shape: Shape, name: str) -> dict:
    """Requests on a few consecutive period edges at a small origin."""
    first = int(rng.integers(1, 1000))
    return _case(name, shape, edge_times(shape, first, int(rng.integers(3, 6))))


def unix_case(rng: np.random.Generator, shape: Shape, name: str, edges: bool) -> dict:
    """At Unix-time magnitudes: period edges (`edges`) or a random stream, costs included."""
    p, g = shape.period_s, shape.grid_s
    if edges:  # more edges than at a small origin: each is a chance for float rounding to show
        first = math.floor(UNIX_S / p) + int(rng.integers(0, int(DAY_S // p)))
        offset = 0.0 if shape.windowed else float(rng.integers(0, round(1 / g))) * g
        return _case(name, shape, edge_times(shape, first, int(rng.integers(10, 16)), offset))
    times = grid_times(rng, 50, p / (1.4 * shape.holds), unix_start(rng, g), g)
    return _case(name, shape, times, costs_up_to(rng, len(times), shape.top_cost))


def idle_case(rng: np.random.Generator, shape: Shape, name: str) -> dict:
    """Bursts after long idle gaps (:func:`idle_times`), from a grid time."""
    start = on_grid(float(rng.integers(0, 1000)) + float(rng.uniform(0, 1)), shape.grid_s)
    return _case(name, shape, idle_times(rng, shape, start))


def costs_case(rng: np.random.Generator, shape: Shape, name: str) -> dict:
    """A random stream whose costs run from 1 to top_cost, opening with one of top_cost."""
    mean = (1 + shape.top_cost) / 2
    times = grid_times(rng, 50, mean * shape.period_s / (1.4 * shape.holds),
                       float(rng.integers(0, 1000)), shape.grid_s)
    return _case(name, shape, times, costs_up_to(rng, len(times), shape.top_cost))


def timeline_kinds(rng: np.random.Generator, draw: Callable[[np.random.Generator], Shape],
                   per_kind: int = PER_KIND, costs: bool = True) -> list[dict]:
    """`per_kind` cases of each kind (boundary edges, Unix time, long idle, and with `costs`
    costs above 1), each on a limiter `draw` draws from `rng`."""
    out = []
    for i in range(per_kind):
        out.append(boundary_case(rng, draw(rng), f"boundary edges {i}"))
    for i in range(per_kind):
        out.append(unix_case(rng, draw(rng), f"Unix time {i}", edges=i % 2 == 0))
    for i in range(per_kind):
        out.append(idle_case(rng, draw(rng), f"long idle {i}"))
    for i in range(per_kind if costs else 0):
        out.append(costs_case(rng, costly(rng, draw), f"costs {i}"))
    return out


def costly(rng: np.random.Generator, draw: Callable[[np.random.Generator], Shape],
           tries: int = 100) -> Shape:
    """The first limiter `draw` draws on which a request may cost more than 1."""
    for _ in range(tries):
        shape = draw(rng)
        if shape.top_cost > 1:
            return shape
    raise ValueError("the exercise draws no limiter on which a cost above 1 is allowed")
