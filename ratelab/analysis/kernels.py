"""Compiled kernels of the error analysis: one pass per source over its sorted times.

The analysis never needs a time-merged trace: every source is limited on its own, so a chunk is
the concatenation of per-source sorted time arrays with ``starts`` (int64, one more entry than
sources) marking where each source begins. Each kernel walks one source at a time.

Both limiters call the reference's own scalar functions (compiled here), in the same order, so
the decisions are the reference's to the last bit; times are whole microseconds (ticks,
``ratelab.clock.to_ticks``), converted once for all sources by :func:`as_ticks` (the
replay's vectorised pass: converting inside the loops, twice for the trailing window's edge,
made the passes about a third slower than with float seconds), and the window is in ticks
too (``window_ticks``):

* sliding log: the trailing window is (t - W, t]; an entry leaves when
  ``sliding_log.has_left(entry, t, W)`` (t - entry >= W); a request passes by the window
  algorithms' admit rule, ``limiters.base.window_step`` (``in_window + 1 <= limit``);
* sliding window counter: ``k = fixed_window.index_of(t, W)`` and ``sliding_counter.step``
  (the counts rolled to window k, ``prev * weight + cur``, the same admit rule).

``haproxy_estimate_pass`` and ``haproxy_admission_pass`` are the same two passes with HAProxy's
counter (``limiters.haproxy.step``: periods from each source's first request, every request
counted, the blend in whole requests) in place of the calendar-aligned one.

Every request costs 1. Compiled on first use (numba's cache keeps the machine code on disk);
nothing is compiled at import time.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from ..kernel_cache import watch_limiters
from .. import clock
from ..limiters import base
from ..limiters import fixed_window as fw
from ..limiters import haproxy as hp
from ..limiters import sliding_counter as sc
from ..limiters import sliding_log as sl
from ..replay.kernels import ticks_of

CACHE = watch_limiters()  # False where numba offers no hook: compiled, never stale
for _fn in (base.window_step, fw.index_of, fw.index_near, sl.has_left, sc.roll, sc.weight,
            sc.blend, sc.step):
    register_jitable(_fn)
window_step = base.window_step
MAX_TICKS = clock.MAX_TICKS
NO_WINDOW = -(2 ** 62)  # the window number before a source's first request

# Relative-error histogram: bin 0 holds exact estimates (error 0); bins 1..N_LOG_BINS cover
# 10**LOG_LO .. 10**LOG_HI in BINS_PER_DECADE steps per decade (about 2.3% wide), the first
# and last catch everything below and above.
LOG_LO = -6.0
LOG_HI = 4.0
BINS_PER_DECADE = 100
N_LOG_BINS = int((LOG_HI - LOG_LO) * BINS_PER_DECADE)
N_BINS = N_LOG_BINS + 1

# Columns of the per-mode request counters.
REQUESTS, FALSE_ALLOW, FALSE_REJECT, EXACT_REJECT, COUNTER_REJECT = range(5)
N_COUNTS = 5


@njit(cache=CACHE, inline="always")
def _bin(rel):
    if rel <= 0.0:
        return 0
    b = int(np.floor((np.log10(rel) - LOG_LO) * BINS_PER_DECADE)) + 1
    if b < 1:
        return 1
    if b > N_LOG_BINS:
        return N_LOG_BINS
    return b


def as_ticks(time: np.ndarray) -> np.ndarray:
    """``to_ticks`` of every time (float seconds), as the int64 ticks the passes take."""
    time = np.ascontiguousarray(time, dtype=np.float64)
    ticks = np.empty(len(time), dtype=np.int64)
    ticks_of(time, ticks)
    return ticks


@njit(cache=CACHE)
def estimate_pass(ticks, starts, limit, window_ticks, counts, relsum, hist, peak, counter_rej,
                  exact_rej):
    """Estimate mode: every request counts in both the exact window and the counter.

    For each request i of a source: ``exact`` = requests of the source in (t - W, t] up to
    and including i; ``estimate`` = prev * weight + cur + 1 (the counter including i). Adds to
    ``counts`` (see the column constants), ``relsum[0]`` (sum of |estimate - exact| / exact),
    ``relsum[1]`` (the largest), ``hist``; writes per source ``peak`` (largest exact count),
    ``counter_rej`` and ``exact_rej`` (requests each side would have rejected).
    """
    n_src = len(starts) - 1
    for s in range(n_src):
        a = starts[s]
        b = starts[s + 1]
        lo = a
        kc = NO_WINDOW
        k, start = 0, MAX_TICKS  # the window of the request before (fw.index_near)
        prev = 0.0
        cur = 0.0
        pk = 0
        crej = 0
        erej = 0
        for i in range(a, b):
            t = ticks[i]
            while sl.has_left(ticks[lo], t, window_ticks):
                lo += 1
            exact = i - lo + 1
            e_ok, _, _ = window_step(i - lo, 1.0, limit, True)  # the log, counting all
            k, start = fw.index_near(t, window_ticks, k, start)
            _, c_ok, prev, cur, est = sc.step(kc, prev, cur, t, k, window_ticks, 1.0, limit, True)
            kc = k
            if exact > pk:
                pk = exact
            if not c_ok:
                crej += 1
            if not e_ok:
                erej += 1
                if c_ok:
                    counts[FALSE_ALLOW] += 1
            elif not c_ok:
                counts[FALSE_REJECT] += 1
            rel = abs(est - exact) / exact
            relsum[0] += rel
            if rel > relsum[1]:
                relsum[1] = rel
            hist[_bin(rel)] += 1
        counts[REQUESTS] += b - a
        counts[EXACT_REJECT] += erej
        counts[COUNTER_REJECT] += crej
        peak[s] = pk
        counter_rej[s] = crej
        exact_rej[s] = erej


@njit(cache=CACHE)
def admission_pass(ticks, starts, limit, window_ticks, counts, relsum, hist, counter_rej, exact_rej):
    """Admission mode: a sliding log and a counter, each counting only what it admitted.

    The two run independently on the same requests and their decisions are compared. The
    relative error is the counter's own: its estimate prev * weight + cur + 1 against the
    exact number of requests *it admitted* in (t - W, t], plus this one — how far its
    picture of its own traffic is from the truth. Same outputs as :func:`estimate_pass`
    (without ``peak``, which does not depend on the mode).
    """
    n_src = len(starts) - 1
    longest = 0
    for s in range(n_src):
        if starts[s + 1] - starts[s] > longest:
            longest = starts[s + 1] - starts[s]
    log = np.empty(longest, np.int64)  # ticks the log admitted (a queue)
    ctr = np.empty(longest, np.int64)  # ticks the counter admitted
    for s in range(n_src):
        a = starts[s]
        b = starts[s + 1]
        lh = 0
        ln = 0
        ch = 0
        cn = 0
        kc = NO_WINDOW
        k, start = 0, MAX_TICKS  # the window of the request before (fw.index_near)
        prev = 0.0
        cur = 0.0
        crej = 0
        erej = 0
        for i in range(a, b):
            t = ticks[i]
            while lh < ln and sl.has_left(log[lh], t, window_ticks):
                lh += 1
            e_ok, _, _ = window_step(ln - lh, 1.0, limit, False)
            if e_ok:
                log[ln] = t
                ln += 1
            else:
                erej += 1
            k, start = fw.index_near(t, window_ticks, k, start)
            est, c_ok, prev, cur, _ = sc.step(kc, prev, cur, t, k, window_ticks, 1.0, limit, False)
            kc = k
            while ch < cn and sl.has_left(ctr[ch], t, window_ticks):
                ch += 1
            real = (cn - ch) + 1.0
            if c_ok:
                ctr[cn] = t
                cn += 1
            else:
                crej += 1
            if not e_ok:
                if c_ok:
                    counts[FALSE_ALLOW] += 1
            elif not c_ok:
                counts[FALSE_REJECT] += 1
            rel = abs(est + 1.0 - real) / real
            relsum[0] += rel
            if rel > relsum[1]:
                relsum[1] = rel
            hist[_bin(rel)] += 1
        counts[REQUESTS] += b - a
        counts[EXACT_REJECT] += erej
        counts[COUNTER_REJECT] += crej
        counter_rej[s] = crej
        exact_rej[s] = erej


@njit(cache=CACHE)
def peak_counts(ticks, starts, window_ticks):
    """Per source, the most of its requests in any trailing window (t - W, t] (times and W in
    ticks)."""
    n_src = len(starts) - 1
    peak = np.zeros(n_src, np.int64)
    for s in range(n_src):
        a = starts[s]
        lo = a
        pk = 0
        for i in range(a, starts[s + 1]):
            t = ticks[i]
            while sl.has_left(ticks[lo], t, window_ticks):
                lo += 1
            if i - lo + 1 > pk:
                pk = i - lo + 1
        peak[s] = pk
    return peak


# ---------------------------------------------------------------- HAProxy's counter

for _fn in (hp.ms_of, hp.even, hp.counted, hp.blend, hp.step):
    register_jitable(_fn)


@njit(cache=CACHE)
def haproxy_estimate_pass(ticks, starts, limit, admits, period, expire, window_ticks, counts,
                          relsum, hist, peak, counter_rej, exact_rej):
    """:func:`estimate_pass` with HAProxy's counter: its rate including request i
    (``haproxy.step``: curr + prev x remain // period, in ms `period`, entries expiring after
    `expire` ms) against the exact count of (t - W, t], W = `window_ticks`, the same period.
    `admits` is the most the rule passes (the whole `limit`); HAProxy counts every request, as
    this mode does."""
    n_src = len(starts) - 1
    for s in range(n_src):
        a = starts[s]
        b = starts[s + 1]
        lo = a
        tick, curr, prev, touched = 0, 0, 0, hp.NO_TOUCH
        pk = 0
        crej = 0
        erej = 0
        for i in range(a, b):
            t = ticks[i]
            while sl.has_left(ticks[lo], t, window_ticks):
                lo += 1
            exact = i - lo + 1
            e_ok, _, _ = window_step(i - lo, 1.0, limit, True)  # the log, counting all
            now_ms = hp.ms_of(t)
            found, c_ok, tick, curr, prev = hp.step(tick, curr, prev, touched, now_ms, period,
                                                    expire, admits)
            touched = now_ms
            est = found + 1.0
            if exact > pk:
                pk = exact
            if not c_ok:
                crej += 1
            if not e_ok:
                erej += 1
                if c_ok:
                    counts[FALSE_ALLOW] += 1
            elif not c_ok:
                counts[FALSE_REJECT] += 1
            rel = abs(est - exact) / exact
            relsum[0] += rel
            if rel > relsum[1]:
                relsum[1] = rel
            hist[_bin(rel)] += 1
        counts[REQUESTS] += b - a
        counts[EXACT_REJECT] += erej
        counts[COUNTER_REJECT] += crej
        peak[s] = pk
        counter_rej[s] = crej
        exact_rej[s] = erej


@njit(cache=CACHE)
def haproxy_admission_pass(ticks, starts, limit, admits, period, expire, window_ticks, counts,
                           relsum, hist, counter_rej, exact_rej):
    """:func:`admission_pass` with HAProxy's counter: the exact log counts what it admitted;
    HAProxy's counter counts every request, refused or not, as HAProxy does (that is what this
    mode measures for it). The relative error is its rate including the request against the
    exact number of requests it admitted in (t - W, t], plus this one."""
    n_src = len(starts) - 1
    longest = 0
    for s in range(n_src):
        if starts[s + 1] - starts[s] > longest:
            longest = starts[s + 1] - starts[s]
    log = np.empty(longest, np.int64)  # ticks the log admitted (a queue)
    ctr = np.empty(longest, np.int64)  # ticks HAProxy's rule admitted
    for s in range(n_src):
        a = starts[s]
        b = starts[s + 1]
        lh = 0
        ln = 0
        ch = 0
        cn = 0
        tick, curr, prev, touched = 0, 0, 0, hp.NO_TOUCH
        crej = 0
        erej = 0
        for i in range(a, b):
            t = ticks[i]
            while lh < ln and sl.has_left(log[lh], t, window_ticks):
                lh += 1
            e_ok, _, _ = window_step(ln - lh, 1.0, limit, False)
            if e_ok:
                log[ln] = t
                ln += 1
            else:
                erej += 1
            now_ms = hp.ms_of(t)
            found, c_ok, tick, curr, prev = hp.step(tick, curr, prev, touched, now_ms, period,
                                                    expire, admits)
            touched = now_ms
            while ch < cn and sl.has_left(ctr[ch], t, window_ticks):
                ch += 1
            real = (cn - ch) + 1.0
            if c_ok:
                ctr[cn] = t
                cn += 1
            else:
                crej += 1
            if not e_ok:
                if c_ok:
                    counts[FALSE_ALLOW] += 1
            elif not c_ok:
                counts[FALSE_REJECT] += 1
            rel = abs(found + 1.0 - real) / real
            relsum[0] += rel
            if rel > relsum[1]:
                relsum[1] = rel
            hist[_bin(rel)] += 1
        counts[REQUESTS] += b - a
        counts[EXACT_REJECT] += erej
        counts[COUNTER_REJECT] += crej
        counter_rej[s] = crej
        exact_rej[s] = erej
