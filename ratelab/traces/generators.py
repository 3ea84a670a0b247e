"""Every synthetic workload, seeded: Poisson, on/off bursts, cron bots, floods, gentle streams,
a client exactly at the rate, one burst, and the boundary attack.

Every generator makes one source or many at once: a parameter given as an array holds one value
per source (scalars are shared), ``n_sources`` repeats scalar parameters, and source ``i`` gets
key id ``key_offset + i``. The work is done in numpy over all sources together, so a chunk of
ten thousand sources costs a few array operations, not ten thousand Python loops.

Each returns a :class:`~ratelab.traces.Trace` whose requests lie in
``[start_s, start_s + duration_s)``, sorted by time (ties kept in key order), named
``"<kind> <id>"`` and with the parameters in ``trace.meta``. Randomness comes only from the
``rng`` passed in (``np.random.default_rng(seed)``): the same seed gives the same trace.
:mod:`ratelab.bursts` offers the one-source ones as plain arrays of times (``trace.time``), and
:mod:`ratelab.traces.population` builds its behaviours from the on/off periods and ticks here.

    >>> import numpy as np
    >>> t = poisson(rate_per_s=2.0, duration_s=60, rng=np.random.default_rng(1), n_sources=3)
    >>> t.n_keys, t.meta["generator"]
    (3, 'poisson')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..limiters.base import non_negative, positive, whole
from ..limiters.fixed_window import window_start
from .trace import Trace

__all__ = ["poisson", "on_off", "periodic", "flood", "gentle", "stream", "burst",
           "boundary_attack", "SourceNames", "to_trace"]


# ---------------------------------------------------------------- names and the Trace


@dataclass(frozen=True)
class SourceNames(Sequence):
    """The names ``"<prefix> 0"``, ``"<prefix> 1"``, … of `n` sources, made on demand.

    A sequence of `n` strings that costs nothing to hold, so a trace of a million generated
    sources still knows how many keys it has and what each is called.
    """

    prefix: str
    n: int

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        i = int(i)
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(f"source {i} out of range(0, {self.n})")
        return f"{self.prefix} {i}"


def to_trace(time: np.ndarray, key: np.ndarray, n_keys: int, kind: str, **meta) -> Trace:
    """A Trace of (time, key) columns in any order: sorted stably by time, then by key.

    Ties in time are broken by key id, so the result does not depend on the order the
    columns were built in. ``meta`` lands in ``trace.meta`` with ``generator=kind``. With
    ``start_s`` and ``duration_s`` in it, a time that placing on the clock rounds up to the
    span's end (a request 0.5 s into a span of 0.5000000000000001 s starting at -3 lands on
    -2.5, the end) is left out: the span is half-open, [start, start + duration).
    """
    time = np.asarray(time, dtype=np.float64)
    key = np.asarray(key, dtype=np.int32)
    if "start_s" in meta and "duration_s" in meta:
        inside = time < meta["start_s"] + meta["duration_s"]
        if not inside.all():
            time, key = time[inside], key[inside]
    order = np.argsort(time)  # fast; decides ties arbitrarily, so ties are settled below
    if len(time) > 1 and np.any(np.diff(time[order]) == 0):
        order = np.lexsort((key, time))
    return Trace(time[order], key[order], None, SourceNames(kind, n_keys),
                 {"generator": kind, **meta})


# ---------------------------------------------------------------- parameter checks


def _per_source(name: str, value, n: int, *, positive: bool = False) -> np.ndarray:
    """`value` broadcast to `n` sources; ValueError naming `name` unless finite and >= 0 (> 0)."""
    a = np.asarray(value, dtype=np.float64)
    if a.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-D array, got shape {a.shape}")
    scalar = a.ndim == 0
    a = np.broadcast_to(a, (n,))
    ok = np.isfinite(a) & ((a > 0) if positive else (a >= 0))
    if not ok.all():
        i = int(np.argmax(~ok))
        what = "positive" if positive else "non-negative"
        got = f"{a[i]!r}" if scalar else f"{name}[{i}] = {a[i]!r}"
        raise ValueError(f"{name} must be {what} and finite, got {got}")
    return a


def _count_sources(n_sources: int | None, **params) -> int:
    """How many sources the array parameters (or `n_sources`) describe."""
    sizes = {k: np.size(v) for k, v in params.items() if np.ndim(v) == 1}
    lengths = set(sizes.values())
    if n_sources is not None:
        if isinstance(n_sources, bool) or int(n_sources) != n_sources or n_sources < 0:
            raise ValueError(f"n_sources must be a whole number >= 0, got {n_sources!r}")
        lengths.add(int(n_sources))
    if len(lengths) > 1:
        raise ValueError(f"per-source parameters disagree on the number of sources: {sizes}"
                         + (f", n_sources={n_sources}" if n_sources is not None else ""))
    return lengths.pop() if lengths else 1


def _span(start_s, duration_s) -> tuple[float, float]:
    start = float(start_s)
    if not np.isfinite(start):
        raise ValueError(f"start_s must be finite, got {start_s!r}")
    duration = float(_per_source("duration_s", duration_s, 1, positive=True)[0])
    return start, duration


def _key_offset(key_offset) -> int:
    if isinstance(key_offset, bool) or int(key_offset) != key_offset or key_offset < 0:
        raise ValueError(f"key_offset must be a whole number >= 0, got {key_offset!r}")
    return int(key_offset)


def _segment_index(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments of the given lengths laid end to end: (segment of each item, index in it)."""
    counts = np.asarray(counts, dtype=np.int64)
    seg = np.repeat(np.arange(len(counts)), counts)
    starts = np.cumsum(counts) - counts
    return seg, np.arange(int(counts.sum()), dtype=np.int64) - starts[seg]


def _segment_cumsum(values: np.ndarray, counts: np.ndarray, *, exact: bool = False
                    ) -> np.ndarray:
    """Running sums of `values` that restart at each segment (segments of the given lengths).

    By default one running sum over all segments, less the sum before each segment: one pass,
    but a segment's sums carry the rounding of everything before it (at a running total of
    1e9 s, about 1e-7 s). ``exact=True`` sums each segment on its own, as a loop would (one
    row per segment, padded), so a sum depends only on its own segment's values. The two differ
    in the last bits, so each generator keeps the one its traces were made with: the
    population's on/off periods are exact, ``on_off`` and ``gentle`` the default.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if exact:
        seg, index = _segment_index(counts)
        rows = np.zeros((len(counts), int(counts.max()) if len(counts) else 0))
        rows[seg, index] = values
        np.add.accumulate(rows, axis=1, out=rows)
        return rows[seg, index]
    total = np.cumsum(values)
    ends = np.cumsum(counts)
    before = np.concatenate(([0.0], total))[ends - counts]
    return total - np.repeat(before, counts)


def _on_periods(on: np.ndarray, off: np.ndarray, duration: float, rng: np.random.Generator,
                *, exact_sums: bool = False):
    """(source, begin, end) of every on period inside [0, duration) of on/off sources, grouped
    by source (each source's in time order).

    On and off periods are exponential with per-source means `on` and `off`; a source starts
    on with probability on / (on + off), as if it had been running for ever, else with an off
    period. `exact_sums`: how cycle lengths are added up (see :func:`_segment_cumsum`).
    """
    n = len(on)
    starts_on = rng.random(n) < on / (on + off)
    clock = np.where(starts_on, 0.0, rng.exponential(off))
    srcs, begins, ends = [np.empty(0, np.int64)], [np.empty(0)], [np.empty(0)]
    active = np.flatnonzero(clock < duration)
    while len(active):  # usually one round: enough cycles for nearly every source at once
        a_on, a_off = on[active], off[active]
        left = duration - clock[active]
        cycles = np.ceil(left / (a_on + a_off) * 1.25 + 4).astype(np.int64)
        seg, _ = _segment_index(cycles)
        on_len = rng.exponential(a_on[seg])
        off_len = rng.exponential(a_off[seg])
        cycle_end = clock[active][seg] + _segment_cumsum(on_len + off_len, cycles,
                                                         exact=exact_sums)
        on_begin = cycle_end - off_len - on_len
        keep = on_begin < duration
        srcs.append(active[seg[keep]])
        begins.append(on_begin[keep])
        ends.append(np.minimum(on_begin[keep] + on_len[keep], duration))
        last = np.cumsum(cycles) - 1
        clock[active] = cycle_end[last]
        active = active[clock[active] < duration]
    src, begin, end = (np.concatenate(x) for x in (srcs, begins, ends))
    by_source = np.argsort(src, kind="stable")  # rounds keep each source's time order
    return src[by_source], begin[by_source], end[by_source]


# ---------------------------------------------------------------- the sources


def poisson(rate_per_s, duration_s, rng: np.random.Generator, *, start_s: float = 0.0,
            n_sources: int | None = None, key_offset: int = 0) -> Trace:
    """Independent Poisson arrivals at `rate_per_s` per source (rate 0 gives no requests).

    Exact: each source's count is Poisson(rate x duration) and, given the count, the times are
    independent and uniform over the span.
    """
    n = _count_sources(n_sources, rate_per_s=rate_per_s)
    start, duration = _span(start_s, duration_s)
    rate = _per_source("rate_per_s", rate_per_s, n)
    off = _key_offset(key_offset)
    counts = rng.poisson(rate * duration)
    time = start + rng.random(int(counts.sum())) * duration
    key = off + np.repeat(np.arange(n, dtype=np.int32), counts)
    return to_trace(time, key, off + n, "poisson", rate_per_s=rate_per_s,
                    duration_s=duration, start_s=start, n_sources=n)


def on_off(rate_on_per_s, mean_on_s, mean_off_s, duration_s, rng: np.random.Generator, *,
           start_s: float = 0.0, n_sources: int | None = None, key_offset: int = 0) -> Trace:
    """Bursty sources: Poisson at `rate_on_per_s` while on, silent while off.

    On and off periods are exponential with means `mean_on_s` and `mean_off_s`; each source
    starts on with probability mean_on / (mean_on + mean_off), as if it had been running for
    ever. The long-run rate is rate_on x mean_on / (mean_on + mean_off).
    """
    n = _count_sources(n_sources, rate_on_per_s=rate_on_per_s, mean_on_s=mean_on_s,
                       mean_off_s=mean_off_s)
    start, duration = _span(start_s, duration_s)
    rate = _per_source("rate_on_per_s", rate_on_per_s, n)
    on = _per_source("mean_on_s", mean_on_s, n, positive=True)
    off = _per_source("mean_off_s", mean_off_s, n, positive=True)
    koff = _key_offset(key_offset)
    src, begin, end = _on_periods(on, off, duration, rng)  # requests come source by source
    counts = rng.poisson(rate[src] * (end - begin))
    period = np.repeat(np.arange(len(src)), counts)
    time = start + begin[period] + rng.random(len(period)) * (end - begin)[period]
    key = koff + src[period].astype(np.int32)
    return to_trace(time, key, koff + n, "on-off", rate_on_per_s=rate_on_per_s,
                    mean_on_s=mean_on_s, mean_off_s=mean_off_s, duration_s=duration,
                    start_s=start, n_sources=n)


def _ticks(period: np.ndarray, phase: np.ndarray, duration: float, per_tick: int = 1):
    """(source, tick time) for ticks phase + k·period < duration, each repeated per_tick times,
    grouped by source in time order."""
    # one tick more than the division says, then keep those inside: the division and the
    # tick times round differently (1/3 + 2·(1/3) is 1.0 although (1 - 1/3) / (1/3) > 2)
    counts = np.where(phase < duration, np.ceil((duration - phase) / period) + 1, 0)
    seg, k = _segment_index(counts.astype(np.int64))
    time = phase[seg] + k * period[seg]
    inside = time < duration
    return np.repeat(seg[inside], per_tick), np.repeat(time[inside], per_tick)


def periodic(period_s, duration_s, rng: np.random.Generator, *, jitter_s=0.0, phase_s=None,
             per_tick: int = 1, start_s: float = 0.0, n_sources: int | None = None,
             key_offset: int = 0) -> Trace:
    """Cron-like bots: `per_tick` requests every `period_s`, each late by U[0, `jitter_s`).

    Ticks fall at start + phase + k·period; the phase is drawn uniformly in [0, period) per
    source unless `phase_s` is given. A job never runs early, so the jitter only delays;
    requests delayed past the end of the span are not part of it.
    """
    n = _count_sources(n_sources, period_s=period_s, jitter_s=jitter_s,
                       **({} if phase_s is None else {"phase_s": phase_s}))
    start, duration = _span(start_s, duration_s)
    period = _per_source("period_s", period_s, n, positive=True)
    jitter = _per_source("jitter_s", jitter_s, n)
    if isinstance(per_tick, bool) or int(per_tick) != per_tick or per_tick < 1:
        raise ValueError(f"per_tick must be a whole number >= 1, got {per_tick!r}")
    phase = (rng.random(n) * period if phase_s is None
             else _per_source("phase_s", phase_s, n))
    src, tick = _ticks(period, phase, duration, int(per_tick))
    time = tick + rng.random(len(tick)) * jitter[src]
    inside = time < duration
    koff = _key_offset(key_offset)
    return to_trace(start + time[inside], koff + src[inside], koff + n, "periodic",
                    period_s=period_s, jitter_s=jitter_s, per_tick=int(per_tick),
                    duration_s=duration, start_s=start, n_sources=n)


def flood(rate_per_s, duration_s, *, start_s: float = 0.0, phase_s=0.0,
          n_sources: int | None = None, key_offset: int = 0) -> Trace:
    """Abusive sources that send evenly and without pause: one request every 1/`rate_per_s`.

    Deterministic (no rng): requests at start + phase + k / rate while inside the span.
    """
    n = _count_sources(n_sources, rate_per_s=rate_per_s, phase_s=phase_s)
    start, duration = _span(start_s, duration_s)
    rate = _per_source("rate_per_s", rate_per_s, n, positive=True)
    phase = _per_source("phase_s", phase_s, n)
    src, time = _ticks(1.0 / rate, phase, duration, 1)
    koff = _key_offset(key_offset)
    return to_trace(start + time, koff + src, koff + n, "flood", rate_per_s=rate_per_s,
                    duration_s=duration, start_s=start, n_sources=n)


def gentle(rate_per_s, duration_s, rng: np.random.Generator, *, jitter: float = 0.1,
           start_s: float = 0.0, n_sources: int | None = None, key_offset: int = 0) -> Trace:
    """Well-behaved clients pacing themselves at about `rate_per_s`.

    Gaps are 1/rate times U[1 − jitter, 1 + jitter] (0 <= jitter < 1), so the mean rate is
    `rate_per_s` and no gap is shorter than (1 − jitter)/rate; the first request comes after a
    uniform phase in [0, 1/rate).
    """
    n = _count_sources(n_sources, rate_per_s=rate_per_s)
    start, duration = _span(start_s, duration_s)
    rate = _per_source("rate_per_s", rate_per_s, n, positive=True)
    j = float(jitter)
    if not 0 <= j < 1:
        raise ValueError(f"jitter must be in [0, 1), got {jitter!r}")
    gap = 1.0 / rate
    # at most this many requests fit: the first after >= 0, every other after >= (1 - j)·gap
    counts = (np.floor(duration / ((1 - j) * gap)) + 1).astype(np.int64)
    seg, k = _segment_index(counts)
    gaps = gap[seg] * np.where(k == 0, rng.random(len(seg)),
                               rng.uniform(1 - j, 1 + j, len(seg)))
    time = _segment_cumsum(gaps, counts)
    inside = time < duration
    koff = _key_offset(key_offset)
    return to_trace(start + time[inside], koff + seg[inside], koff + n, "gentle",
                    rate_per_s=rate_per_s, jitter=j, duration_s=duration, start_s=start,
                    n_sources=n)


COUNT_SLACK = 1e-9
"""What a span's count of evenly spaced requests may lose to rounding in :func:`stream`
(0.29 s x 100 per second is 28.999999999999996 in floats, and holds 29 requests)."""


def stream(rate_per_s, duration_s, *, start_s: float = 0.0, key_offset: int = 0) -> Trace:
    """One client sending exactly at `rate_per_s`: the k-th request at start + k / rate.

    Every k with k < duration x rate (up to COUNT_SLACK) is sent, so a span of a whole number
    of gaps holds exactly that many; duration 0 (or less) holds none. Deterministic (no rng).
    :func:`flood` is the many-source version, each source at its own phase (its times,
    start + phase + k x (1 / rate), can differ from these in the last bit).
    """
    rate = positive("rate_per_s", rate_per_s)
    start = float(start_s)
    if not np.isfinite(start):
        raise ValueError(f"start_s must be finite, got {start_s!r}")
    n = int(np.floor(float(duration_s) * rate + COUNT_SLACK))
    time = start + np.arange(max(0, n)) / rate
    koff = _key_offset(key_offset)
    return to_trace(time, np.full(len(time), koff), koff + 1, "stream", rate_per_s=rate,
                    duration_s=float(duration_s), start_s=start, n_sources=1)


def burst(n: int, *, start_s: float = 0.0, spread_s: float = 0.0,
          rng: np.random.Generator | None = None, key_offset: int = 0) -> Trace:
    """One source's `n` requests in [start_s, start_s + spread_s): evenly, the k-th at
    start + k x spread / n (spread 0: all at once), or, given `rng`, at independent uniform
    times (sorted)."""
    n = whole("n", n, minimum=0)
    spread = non_negative("spread_s", spread_s)
    start = float(start_s)
    if not np.isfinite(start):
        raise ValueError(f"start_s must be finite, got {start_s!r}")
    if rng is not None:
        time = start + rng.random(n) * spread
    else:
        time = start + np.arange(n) * (spread / n) if n else np.zeros(0)
    koff = _key_offset(key_offset)
    return to_trace(time, np.full(n, koff), koff + 1, "burst", n=n, start_s=start,
                    spread_s=spread, random=rng is not None, n_sources=1)


def boundary_attack(limit: int, window_s: float, *, boundary_s: float | None = None,
                    spread_s: float | None = None, key_offset: int = 0) -> Trace:
    """The fixed window's worst case: `limit` requests just before a boundary, `limit` after.

    One source sends `limit` requests evenly in [boundary − spread, boundary) — the end of
    window [boundary − W, boundary) — and `limit` more evenly in [boundary, boundary + spread),
    the start of the next. A fixed window of `limit` per `window_s` admits all 2 x limit, though
    they arrive within 2 x spread seconds. `boundary_s` defaults to `window_s` (the first
    boundary after 0) and must be a multiple of it; `spread_s` defaults to window_s / 60 (one
    second of a minute) and must not exceed `window_s`. The boundary is where a fixed window
    (``floor(t / window_s)``) starts its window, which in floating point can be a few units
    of the last place after boundary_s. Deterministic.
    """
    if isinstance(limit, bool) or int(limit) != limit or limit < 1:
        raise ValueError(f"limit must be a whole number >= 1, got {limit!r}")
    w = float(_per_source("window_s", window_s, 1, positive=True)[0])
    b = w if boundary_s is None else float(boundary_s)
    if not np.isfinite(b) or abs(b / w - round(b / w)) > 1e-9:
        raise ValueError(f"boundary_s must be a multiple of window_s={w!r}, got {boundary_s!r}")
    k = round(b / w)
    b = window_start(k, w)
    s = w / 60 if spread_s is None else float(spread_s)
    if not (np.isfinite(s) and 0 < s <= w):
        raise ValueError(f"spread_s must be in (0, window_s={w!r}], got {spread_s!r}")
    limit = int(limit)
    i = np.arange(limit)
    before = b - s * (limit - i) / limit  # last one at b - s/limit < b
    before = np.maximum(before, window_start(k - 1, w))  # spread_s = window_s: not in k - 2
    after = b + s * i / limit             # first one exactly at the boundary
    koff = _key_offset(key_offset)
    time = np.concatenate([before, after])
    return to_trace(time, np.full(len(time), koff), koff + 1, "boundary-attack", limit=limit,
                    window_s=w, boundary_s=b, spread_s=s, n_sources=1)
