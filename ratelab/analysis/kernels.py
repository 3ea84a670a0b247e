"""Compiled kernels of the error analysis: one pass per source over its sorted times.

The analysis never needs a time-merged trace: every source is limited on its own, so a chunk is
the concatenation of per-source sorted time arrays with ``starts`` (int64, one more entry than
sources) marking where each source begins. Each kernel walks one source at a time.

The limiters call the reference's own scalar functions (compiled here), in the same order, so
the decisions are the reference's to the last bit; times are whole microseconds (ticks,
``ratelab.clock.to_ticks``), converted once for all sources by :func:`as_ticks` (the
replay's vectorised pass: converting inside the loops, twice for the trailing window's edge,
made the passes about a third slower than with float seconds), and the window is in ticks
too (``window_ticks``):

* sliding log: the trailing window is (t - W, t]; an entry leaves when
  ``sliding_log.has_left(entry, t, W)`` (t - entry >= W); a request passes by the window
  algorithms' admit rule, ``limiters.base.window_step`` (``in_window + 1 <= limit``);
* sliding window counter: ``k = fixed_window.index_of(t, W)`` and ``sliding_counter.step``
  (the counts rolled to window k, ``prev * weight + cur``, the same admit rule);
* HAProxy's counter, when the passes are given its `rule` (admits, period and expire in ms):
  ``haproxy.step`` on the millisecond clock ``haproxy.ms_of(t)`` (periods from each source's
  first request, every request counted, the blend in whole requests). The branch between the
  two counters is the same for every request of a pass.

Every request costs 1. Compiled on first use (numba's cache keeps the machine code on disk);
nothing is compiled at import time.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, register_jitable

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
            sc.blend, sc.step, hp.ms_of, hp.even, hp.counted, hp.blend, hp.step):
    register_jitable(_fn)
window_step = base.window_step
MAX_TICKS = clock.MAX_TICKS
NO_WINDOW = -(2 ** 62)  # the window number before a source's first request

CALENDAR = (0, 0, 0)
"""The `rule` that asks the passes for the calendar-aligned counter; a HAProxy rule is
(admits, period, expire), its whole numbers of requests and milliseconds (period > 0)."""

# Relative-error histogram: bin 0 holds exact estimates (error 0); bins 1..N_LOG_BINS cover
# 10**LOG_LO .. 10**LOG_HI in BINS_PER_DECADE steps per decade (about 2.3% wide), the first
# and last catch everything below and above.
LOG_LO = -6.0
LOG_HI = 4.0
BINS_PER_DECADE = 100
N_LOG_BINS = int((LOG_HI - LOG_LO) * BINS_PER_DECADE)
N_BINS = N_LOG_BINS + 1  # a bin number fits an int16

# Columns of the per-mode request counters.
REQUESTS, FALSE_ALLOW, FALSE_REJECT, EXACT_REJECT, COUNTER_REJECT = range(5)
N_COUNTS = 5


SUB_BITS = 7
SUB_BINS = 1 << SUB_BITS
"""Slices per binade (a factor of 2) of the table that finds a bin without a logarithm, cut by
the top SUB_BITS bits of a float's fraction: each spans under half a bin, so at most one bin
edge falls inside it (:func:`bin_table`)."""
FIRST_BINADE = math.frexp(10.0 ** LOG_LO)[1] - 1  # binades below: bin 1
LAST_BINADE = math.frexp(10.0 ** LOG_HI)[1]  # above: bin N_LOG_BINS


def bin_of(rel: float) -> int:
    """The histogram bin of a relative error `rel` >= 0 — the definition: 0 for an exact
    estimate, else ``floor((log10(rel) - LOG_LO) * BINS_PER_DECADE) + 1`` within
    1..N_LOG_BINS. The passes find the same bin with :func:`bin_table`'s table."""
    if rel <= 0.0:
        return 0
    return min(N_LOG_BINS, max(1, math.floor((math.log10(rel) - LOG_LO) * BINS_PER_DECADE) + 1))


@lru_cache(maxsize=1)
def bin_table() -> tuple[np.ndarray, np.ndarray]:
    """(edges, first): the bins of :func:`bin_of` as a table, for :func:`_bin`.

    ``edges[b]`` is the least float whose bin is b or more (b = 2..N_LOG_BINS; ``edges[1]``
    is 0 and ``edges[N_LOG_BINS + 1]`` infinity); ``first[j]`` the bin of the first float of
    slice j, the binades from FIRST_BINADE to LAST_BINADE cut in SUB_BINS equal slices. A
    logarithm per request was half the estimate pass's time; a look-up and one comparison are
    not. Checked when built: one edge at most in each slice, and bin_of of the slices'
    floats, below and above the table, as the table gives them.
    """
    edges = np.empty(N_LOG_BINS + 2)
    edges[:2], edges[-1] = 0.0, math.inf
    for b in range(2, N_LOG_BINS + 1):
        x = 10.0 ** (LOG_LO + (b - 1) / BINS_PER_DECADE)  # within a few floats of the edge
        while bin_of(x) >= b:
            x = math.nextafter(x, 0.0)
        while bin_of(x) < b:
            x = math.nextafter(x, math.inf)
        edges[b] = x
    binades = LAST_BINADE - FIRST_BINADE + 1
    starts = np.ldexp(0.5 + np.arange(SUB_BINS) / (2 * SUB_BINS),
                      np.arange(FIRST_BINADE, LAST_BINADE + 1)[:, None]).ravel()
    first = (np.searchsorted(edges[2:-1], starts, side="right") + 1).astype(np.int64)
    ends = np.append(starts[1:], 2.0 ** LAST_BINADE)
    inside = np.searchsorted(edges[2:-1], ends, side="left") + 1  # the bin just below the end
    assert len(first) == binades * SUB_BINS and np.all(inside - first <= 1)
    assert all(bin_of(x) == b for x, b in zip(starts, first))
    assert bin_of(math.ldexp(1.0, FIRST_BINADE - 1)) == 1
    assert bin_of(math.ldexp(1.0, LAST_BINADE)) == N_LOG_BINS
    return edges, first


@intrinsic
def float_bits(typingctx, x):
    """The 64 bits of float `x` as an int64 (a reinterpretation: sign, exponent, fraction)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@njit(cache=CACHE, inline="always")
def _bin(rel, bins):
    """:func:`bin_of` from the table `bins` (:func:`bin_table`): the slice from the float's
    exponent and top fraction bits, then one comparison with the edge above its first bin."""
    if rel <= 0.0:
        return 0
    edges, first = bins
    bits = float_bits(rel)
    binade = (bits >> 52) - 1022  # math.frexp's exponent (subnormals: far below the table)
    if binade < FIRST_BINADE:
        return 1
    if binade > LAST_BINADE:
        return N_LOG_BINS
    b = first[(binade - FIRST_BINADE) * SUB_BINS + ((bits >> (52 - SUB_BITS)) & (SUB_BINS - 1))]
    return b + (rel >= edges[b + 1])


def as_ticks(time: np.ndarray) -> np.ndarray:
    """``to_ticks`` of every time (float seconds), as the int64 ticks the passes take."""
    time = np.ascontiguousarray(time, dtype=np.float64)
    ticks = np.empty(len(time), dtype=np.int64)
    ticks_of(time, ticks)
    return ticks


@njit(cache=CACHE, nogil=True)
def _longest(starts):
    """The most requests of any one source."""
    longest = 0
    for s in range(len(starts) - 1):
        longest = max(longest, starts[s + 1] - starts[s])
    return longest


@njit(cache=CACHE, nogil=True)
def _count_bins(hist, found, n):
    """Add the first `n` bins of `found` to `hist`.

    The passes note each request's bin and count a source's bins after it, in a loop of
    their own: counted as found, consecutive requests in the same bin (the common case) made
    each increment wait on a load whose address came late, and the counting took 40% of the
    estimate pass.
    """
    for j in range(n):
        hist[found[j]] += 1


@njit(cache=CACHE, nogil=True)
def estimate_pass(ticks, starts, limit, window_ticks, counts, relsum, hist, bins, peak,
                  counter_rej, exact_rej, rule=CALENDAR):
    """Estimate mode: every request counts in both the exact window and the counter.

    For each request i of a source: ``exact`` = requests of the source in (t - W, t] up to
    and including i; ``estimate`` = prev * weight + cur + 1 (the counter including i; with a
    HAProxy `rule`, its rate including i: curr + prev x remain // period). Adds to
    ``counts`` (see the column constants), ``relsum[0]`` (sum of |estimate - exact| / exact),
    ``relsum[1]`` (the largest), ``hist`` (its bins found with ``bins``, :func:`bin_table`);
    writes per source ``peak`` (largest exact count),
    ``counter_rej`` and ``exact_rej`` (requests each side would have rejected).
    """
    n_src = len(starts) - 1
    admits, period, expire = rule
    found = np.empty(_longest(starts), np.int16)  # a source's bins (_count_bins)
    for s in range(n_src):
        a = starts[s]
        b = starts[s + 1]
        lo = a
        kc = NO_WINDOW
        k, start = 0, MAX_TICKS  # the window of the request before (fw.index_near)
        prev = 0.0
        cur = 0.0
        tick, curr, hprev, touched = 0, 0, 0, hp.NO_TOUCH  # HAProxy's entry
        pk = 0
        crej = 0
        erej = 0
        fa = 0
        fr = 0
        rsum = relsum[0]  # added to in the same order as before: the same sum to the bit
        rmax = relsum[1]
        for i in range(a, b):
            t = ticks[i]
            lo += sl.has_left(ticks[lo], t, window_ticks)  # most often none or one has left:
            while sl.has_left(ticks[lo], t, window_ticks):  # that one without a branch
                lo += 1
            exact = i - lo + 1
            e_ok, _, _ = window_step(i - lo, 1.0, limit, True)  # the log, counting all
            if period:
                now_ms = hp.ms_of(t)
                seen, c_ok, tick, curr, hprev = hp.step(tick, curr, hprev, touched, now_ms,
                                                        period, expire, admits)
                touched = now_ms
                est = seen + 1.0
            else:
                k, start = fw.index_near(t, window_ticks, k, start)
                _, c_ok, prev, cur, est = sc.step(kc, prev, cur, t, k, window_ticks, 1.0, limit,
                                                  True)
                kc = k
            pk = max(pk, exact)
            crej += not c_ok  # counts, not branches: the decisions are not predictable
            erej += not e_ok
            fa += c_ok & (not e_ok)
            fr += e_ok & (not c_ok)
            rel = abs(est - exact) / exact
            rsum += rel
            rmax = max(rmax, rel)
            found[i - a] = _bin(rel, bins)
        _count_bins(hist, found, b - a)
        relsum[0] = rsum
        relsum[1] = rmax
        counts[FALSE_ALLOW] += fa
        counts[FALSE_REJECT] += fr
        counts[REQUESTS] += b - a
        counts[EXACT_REJECT] += erej
        counts[COUNTER_REJECT] += crej
        peak[s] = pk
        counter_rej[s] = crej
        exact_rej[s] = erej


@njit(cache=CACHE, nogil=True)
def admission_pass(ticks, starts, limit, window_ticks, counts, relsum, hist, bins, counter_rej,
                   exact_rej, rule=CALENDAR):
    """Admission mode: a sliding log and a counter, each counting only what it admitted.

    The two run independently on the same requests and their decisions are compared. The
    relative error is the counter's own: its estimate prev * weight + cur + 1 against the
    exact number of requests *it admitted* in (t - W, t], plus this one — how far its
    picture of its own traffic is from the truth. Same outputs as :func:`estimate_pass`
    (without ``peak``, which does not depend on the mode).

    HAProxy's counter (a `rule`) counts every request, refused or not, as HAProxy does: that is
    what this mode measures for it; its estimate is its rate including the request.
    """
    n_src = len(starts) - 1
    admits, period, expire = rule
    longest = _longest(starts)
    log = np.empty(longest, np.int64)  # ticks the log admitted (a queue)
    ctr = np.empty(longest, np.int64)  # ticks the counter admitted
    found = np.empty(longest, np.int16)  # a source's bins (_count_bins)
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
        tick, curr, hprev, touched = 0, 0, 0, hp.NO_TOUCH  # HAProxy's entry
        crej = 0
        erej = 0
        fa = 0
        fr = 0
        rsum = relsum[0]  # added to in the same order as before: the same sum to the bit
        rmax = relsum[1]
        for i in range(a, b):
            t = ticks[i]
            # most often none or one entry has left: that one without a branch (log[lh] is
            # in the queue's room even when the queue is empty; its value is then unused)
            lh += (lh < ln) & sl.has_left(log[lh], t, window_ticks)
            while lh < ln and sl.has_left(log[lh], t, window_ticks):
                lh += 1
            e_ok, _, _ = window_step(ln - lh, 1.0, limit, False)
            # written whether or not admitted (slot ln is free: fewer than i - a + 1 entries
            # were admitted before), kept only if admitted: no branch on the decision
            log[ln] = t
            ln += e_ok
            erej += not e_ok
            if period:
                now_ms = hp.ms_of(t)
                est, c_ok, tick, curr, hprev = hp.step(tick, curr, hprev, touched, now_ms, period,
                                                       expire, admits)
                touched = now_ms
            else:
                k, start = fw.index_near(t, window_ticks, k, start)
                est, c_ok, prev, cur, _ = sc.step(kc, prev, cur, t, k, window_ticks, 1.0, limit,
                                                  False)
                kc = k
            ch += (ch < cn) & sl.has_left(ctr[ch], t, window_ticks)
            while ch < cn and sl.has_left(ctr[ch], t, window_ticks):
                ch += 1
            real = (cn - ch) + 1.0
            ctr[cn] = t
            cn += c_ok
            crej += not c_ok
            fa += c_ok & (not e_ok)
            fr += e_ok & (not c_ok)
            rel = abs(est + 1.0 - real) / real
            rsum += rel
            rmax = max(rmax, rel)
            found[i - a] = _bin(rel, bins)
        _count_bins(hist, found, b - a)
        relsum[0] = rsum
        relsum[1] = rmax
        counts[FALSE_ALLOW] += fa
        counts[FALSE_REJECT] += fr
        counts[REQUESTS] += b - a
        counts[EXACT_REJECT] += erej
        counts[COUNTER_REJECT] += crej
        counter_rej[s] = crej
        exact_rej[s] = erej


@njit(cache=CACHE, nogil=True)
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
