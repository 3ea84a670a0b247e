"""Time inside the limiters: whole microseconds ("ticks"), so that decisions do not depend on
where the clock starts.

Callers pass ``now`` in float seconds, usually Unix time. A float second at 1.76e9 is only good
to about 2.4e-7 s, so arithmetic on raw float times (``now - last``, ``now - window``) lands a
rounding step away from the exact answer, and by a different step at every origin: a client
sending exactly 10 requests per second through a token bucket was refused 4 times in 10 at
T0 = 1.758e9 and never at T0 = 0. Every limiter therefore converts ``now`` once, with
:func:`to_ticks`, to the nearest whole microsecond, and keeps every time of its state as an
integer number of ticks. Each decision then depends only on differences of ticks, which are
exact: the same trace shifted by any whole number of ticks gets the same decisions.

Everything here is plain Python on scalars (ints, floats), so that the compiled kernels compile
these same functions (:mod:`ratelab.replay.kernels`, whose ``ticks_of`` converts a trace's
times with :func:`to_ticks` in one vectorised pass); :func:`ticks_array` is the numpy twin of
:func:`to_ticks` for whole traces and gives the same ticks bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

TICKS_PER_S = 1_000_000
"""Ticks per second: a tick is one microsecond."""

TIE_TICKS = 1
"""The one tolerance: a request arriving less than one tick before it would pass, passes.

Each input time is rounded to the nearest tick, so a client sending at exactly the rate has
gaps that are off by at most one tick (a float at 1.76e9 s is good to 2.4e-7 s, at 4e9 to
4.8e-7 s: finer than half a tick up to 2**33 s). The buckets' pass points are real numbers of
ticks (1/7 s is 142,857.14 ticks); without the tie such a client would be refused whenever the
rounding of its time fell on the wrong side. The tie does not compound: a request admitted
early is charged in full (tokens may go below zero by at most rate x 1 tick), so a client early
by 0.9 tick every time is refused once its gain reaches a tick."""

FLOAT_SLACK_TICKS = 2**-10
"""The float noise a computed shortfall may carry, in ticks. A bucket's shortfall is computed
in floating point (``(cost - tokens) * 1e6 / rate``), and when the exact answer is one whole
tick its last bit falls either way; a shortfall is therefore a tie only when it is below
TIE_TICKS - FLOAT_SLACK_TICKS, so that a request exactly one whole tick early is refused on
every input, as it should be (real ties are at most about 0.74 tick)."""

MAX_TICKS = 2**62
"""Times must lie strictly within +-2**62 ticks (about 146,000 years either side of 1970), so
that the difference of any two of them fits a signed 64-bit integer."""

NUDGES = 64
"""How many float steps :func:`seconds_until` tries past a computed wait (at most two are
needed below 2**34 s)."""


def to_ticks(t: float) -> int:
    """`t` seconds as the nearest whole number of ticks (half-way: to the even tick).

    Exact: the whole seconds and the fraction are split first (``t - floor(t)`` is exact in
    floating point), so only the fraction is scaled and rounded, once. ``round(t * 1e6)``
    would round twice (the product, then the result) and can miss by a tick.
    """
    s = math.floor(t)
    return s * TICKS_PER_S + round((t - s) * 1e6)


def within_tie(short_ticks: float) -> bool:
    """Whether a request short of passing by `short_ticks` (<= 0: not short) passes: it
    arrived less than TIE_TICKS before it would pass."""
    return short_ticks < TIE_TICKS - FLOAT_SLACK_TICKS


def ticks_to_pass(short_ticks: float) -> int:
    """The least whole d >= 0 with ``within_tie(short_ticks - d)``: ticks to wait."""
    return max(0, math.floor(short_ticks - (TIE_TICKS - FLOAT_SLACK_TICKS)) + 1)


def tie_amount(rate: float) -> float:
    """What `rate` (per second) adds in a tie's worth of ticks: a shortfall of less than this
    passes. ``remaining`` counts with it."""
    return rate * (TIE_TICKS - FLOAT_SLACK_TICKS) / TICKS_PER_S


def ticks_array(times) -> np.ndarray:
    """:func:`to_ticks` of every element of `times`, as int64, bit for bit the same.

    ValueError naming ``time`` when an element is not finite or lies beyond ``MAX_TICKS``.
    """
    t = np.asarray(times, dtype=np.float64)
    if t.size and not (np.isfinite(t).all() and np.abs(t).max() < MAX_TICKS / TICKS_PER_S):
        raise ValueError(f"time must be finite and within +-{MAX_TICKS / TICKS_PER_S:.3g} s "
                         "(2**62 microseconds)")
    s = np.floor(t)
    return s.astype(np.int64) * TICKS_PER_S + np.rint((t - s) * 1e6).astype(np.int64)


def check_ticks(now: float, name: str = "now") -> int:
    """The ticks of `now`, or ValueError naming `name` when they lie beyond ``MAX_TICKS``."""
    if not abs(now) < MAX_TICKS / TICKS_PER_S:
        raise ValueError(f"{name}={now!r} is beyond the times the limiters hold "
                         f"(+-{MAX_TICKS / TICKS_PER_S:.4g} s, 2**62 microseconds)")
    return to_ticks(now)


MAX_WINDOW_TICKS = MAX_TICKS // 2
"""Windows must be shorter than this (2**61 ticks, about 73,000 years), so that a time and the
start of the window after next (the sliding window counter's reset) fit a signed 64-bit
integer: beyond, the compiled engine's integers wrapped around where the reference's did not."""


def window_ticks(window: float, name: str = "window") -> int:
    """A window of `window` seconds (positive, checked by the caller) in whole ticks, or
    ValueError naming `name` when that is 0 ticks or MAX_WINDOW_TICKS or more."""
    if not abs(window) < MAX_WINDOW_TICKS / TICKS_PER_S:
        raise ValueError(f"{name}={window!r} is too long: windows must be below "
                         f"{MAX_WINDOW_TICKS / TICKS_PER_S:.4g} s (2**61 microseconds)")
    w = to_ticks(window)
    if w < 1:
        raise ValueError(f"{name}={window!r} is below half a microsecond: the limiters count "
                         "time in whole microseconds")
    return w


def seconds_until(now: float, now_ticks: int, target: int) -> float:
    """The least float wait w >= (target - now_ticks) ticks for which ``now + w`` reads as
    tick `target` or later.

    The wait is computed from ticks, so it is the same at every origin; a client adds it to its
    own float `now`, and that sum is rounded again. Below 2**33 s with `now` a whole tick the
    sum reads back as `target` exactly; elsewhere it can read a tick short, and this steps
    ``now + w`` up one float at a time until it does not — the guard that a request sent at
    exactly now + retry_after passes. The one stepping loop for every limiter.
    """
    wait = (target - now_ticks) / TICKS_PER_S
    if wait <= 0.0:
        return 0.0
    t = now + wait
    nudges = 0
    while to_ticks(t) < target and nudges < NUDGES:  # most often not once
        t = np.nextafter(t, np.inf)
        wait = t - now
        nudges += 1
    return wait
