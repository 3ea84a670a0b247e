"""Reading a limiter's state: one table, keyed by the field the limiter reports.

Every limiter declares the ``inspect()`` field it reports as its counter
(``Limiter.reports[0]``: a token bucket "tokens", GCRA "available", nginx "excess", the
windows "count", the sliding counter "estimate", the leaky bucket "level" or "queue" by mode).
:data:`READINGS` says, per field, what the panels call it, how much of the allowance is in use
and how much room the gauge shows. A limiter whose field is not in the table is refused where
the panel is built (:func:`reading_of`), never read as some default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..limiters import Limiter

Info = dict[str, Any]
"""What ``Limiter.inspect(key, now)`` returns."""


def of(name: str) -> Callable[[Info], float]:
    """The ceiling read from the ``inspect()`` field `name`."""
    return lambda info: float(info[name])


@dataclass(frozen=True)
class Reading:
    """How the panels read one reported field.

    field        the ``inspect()`` field (``Limiter.reports[0]``).
    label        what the in-use figure is called ("tokens spent").
    explanation  one line saying what that figure is.
    gauge        what the gauge shows ("tokens left").
    ceiling      the most there can be, from the same ``inspect()`` (capacity, limit ...).
    left         the field counts what is left (tokens, available), not what is used.
    """

    field: str
    label: str
    explanation: str
    gauge: str
    ceiling: Callable[[Info], float]
    left: bool = False

    def in_use(self, info: Info) -> float:
        """How much of the allowance is in use: 0 on an idle limiter."""
        value = float(info[self.field])
        return self.ceiling(info) - value if self.left else value

    def room(self, info: Info) -> tuple[float, float]:
        """(room left, ceiling): how many more requests would pass now; 0 room = refused.

        Every algorithm is read the same way round, so the bars of a token bucket and a leaky
        bucket point the same way: full is an idle limiter, empty is one that refuses.
        """
        ceiling, value = self.ceiling(info), float(info[self.field])
        return (value if self.left else ceiling - value), ceiling


# In this order :func:`own_count` looks for a field when it is not told the limiter: the
# sliding counter's estimate before any count.
READINGS: dict[str, Reading] = {r.field: r for r in (
    Reading("estimate", "estimate",
            "the counter's estimate: previous window x its weight + this window",
            "left in this window (estimate)", of("limit")),
    Reading("count", "window count", "requests the limiter counts in its window now",
            "left in this window", of("limit")),
    Reading("tokens", "tokens spent", "capacity - tokens: how much of the bucket is used up",
            "tokens left", of("capacity"), left=True),
    Reading("level", "water", "the water in the bucket: requests poured in and not yet leaked",
            "room in the bucket", of("capacity")),
    Reading("queue", "queued", "requests waiting in the queue", "free places in the queue",
            of("capacity")),
    Reading("excess", "excess",
            "nginx's excess: requests beyond the steady rate, not yet drained",
            "room in the burst", lambda info: max(1.0, float(info["burst"]))),  # burst 0: one
    Reading("rate", "rate",
            "HAProxy's rate: this period's count + the previous one's x the part of the "
            "period left, floored; refused requests count", "left before the rule denies",
            of("limit")),
    Reading("available", "ahead", "requests GCRA is ahead of schedule: limit - available",
            "available now", of("limit"), left=True),
)}


def reading_of(limiter: Limiter) -> Reading:
    """The table's reading of the field `limiter` reports; ValueError naming it if none."""
    field = limiter.reports[0]
    try:
        return READINGS[field]
    except KeyError:
        raise ValueError(
            f"{type(limiter).__name__} reports {field!r}, which the widgets cannot read: "
            f"add it to READINGS in ratelab/widgets/reading.py (known: "
            f"{', '.join(READINGS)})") from None


def own_count(info: Info, limiter: Limiter | None = None) -> float:
    """The limiter's own idea of how much of its allowance is in use, from ``inspect``.

    Window counters report their count (the sliding counter its estimate); a token bucket the
    tokens spent (capacity - tokens); a leaky bucket its water or queue; GCRA how far its TAT
    is ahead, in requests; nginx its excess. With `limiter`, the field is the one it declares
    (``limiter.reports``); without, the first of READINGS' fields that `info` has (ValueError
    when it has none).
    """
    if limiter is not None:
        return reading_of(limiter).in_use(info)
    for field, reading in READINGS.items():
        if field in info:
            return reading.in_use(info)
    raise ValueError(f"no field the widgets can read in {sorted(info)}; known: "
                     f"{', '.join(READINGS)}")


def bound_name(limiter: Limiter) -> str:
    """What ``limiter.limit`` is, in the words of its own knobs: "capacity 10" for a bucket
    (the most it holds, not a count per window: a token bucket admits its capacity plus what
    refills in any second), "limit 6 = burst 5 + 1" for GCRA and nginx (the burst is what
    passes beyond the first request), "limit 10" for a window."""
    params = limiter.params
    limit = f"{float(limiter.limit):g}"
    if "capacity" in params:
        return f"capacity {limit}"
    if "burst" in params:
        return f"limit {limit} = burst {params['burst']} + 1"
    return f"limit {limit}"


def gauge_style(room: float, ceiling: float) -> str:
    """The bar's colour: green with room, amber when under half is left, red when refusing."""
    if room < 1.0:
        return "danger"
    return "warning" if room < ceiling / 2 else "success"
