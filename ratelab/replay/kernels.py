"""The compiled replay: one numba kernel per registry algorithm.

Each kernel is the reference limiter's ``_check`` / ``_commit`` written again over arrays: the
per-key state is one record per key in an array indexed by key id (one cache line holds all a
request needs of its key — with 100 K keys that is what keeps the kernels fast), and every
floating-point operation is the reference's, in the reference's order, so that the two agree
exactly on every request (a test holds them together). A key not seen yet has -inf in its
time field (``last``, window ``index``: NEW; GCRA's ``tat`` in nanoseconds: NEW_NS) and the
kernel starts it from the reference's ``_initial(now)`` values — a sentinel rather than a
flag, to keep the records small.

A kernel replays one slice of the trace — its arguments are views of that slice's columns,
indexed from 0 — and is called again for the next slice: the state arrays carry everything
over (that is how the progress bar advances). Its outputs, per request ``i`` of the slice:

* ``allowed[i]``  the decision;
* ``counter[i]``  the limiter's own counter as the request finds it (what ``inspect`` reports
  just before the request: tokens, water level, queue, window count, log count, estimate,
  available requests, nginx excess);
* ``delay[i]``    seconds the request is held (leaky-bucket shaping and nginx only);
* with ``details``: ``remaining[i]`` and ``retry_after[i]`` as in the reference Decision.

``unit`` says the trace has no cost column (every request costs 1.0) and ``cost`` is then an
empty array. Compiled on first use (``cache=True`` keeps the machine code between runs);
importing this module compiles nothing.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from ..limiters import base, clock
from ..limiters import token_bucket as tb

EXPIRE_IDLE_MS = 60_000  # nginx deletes LRU nodes idle this long (ratelab.limiters.nginx)
NUDGES = 64  # ratelab.limiters.base.NUDGES: float steps tried past a computed retry_after
TIE = 1e-9  # ratelab.limiters.base.TIE: a bucket shortfall below this passes


def _compile_with_kernels(*functions) -> None:
    """Let the kernels call `functions` — the limiters' own scalar arithmetic, plain Python —
    by compiling them where a kernel calls them (numba's register_jitable)."""
    for fn in functions:
        register_jitable(fn)


_compile_with_kernels(clock.to_ticks, clock.seconds_until, clock.within_tie,
                      clock.ticks_to_pass, base.whole_below,
                      tb.refill, tb.ticks_short, tb.passes, tb.wait_ticks, tb.tie, tb.step)
to_ticks, seconds_until, whole_below = clock.to_ticks, clock.seconds_until, base.whole_below


def record(itemsize: int, **fields) -> np.dtype:
    """A per-key state record: `fields` (name=dtype) packed in order, padded to `itemsize`."""
    names, formats, offsets, at = [], [], [], 0
    for name, dtype in fields.items():
        dtype = np.dtype(dtype)
        at = -(-at // dtype.alignment) * dtype.alignment
        names.append(name), formats.append(dtype), offsets.append(at)
        at += dtype.itemsize
    assert at <= itemsize
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": itemsize})


def new_state(dtype: np.dtype, n_keys: int) -> np.ndarray:
    """`n_keys` records of `dtype` for keys not seen yet."""
    state = np.zeros(n_keys, dtype=dtype)
    for name, value in INITIAL.get(dtype, {}).items():
        state[name] = value
    return state


NEW = -np.inf  # the time fields of a key not seen yet
NEW_TICK = np.iinfo(np.int64).min  # the same, for a time in ticks
NEW_NS = np.iinfo(np.int64).min  # the same, for a time in whole nanoseconds
NS = 1_000_000_000
f8, i8, i4, b1 = np.float64, np.int64, np.int32, np.bool_
TOKEN_BUCKET = record(16, tokens=f8, last=i8)  # last: ticks
LEAKY_BUCKET = record(16, level=f8, last=f8)
FIXED_WINDOW = record(16, index=f8, count=f8)  # index: the window number, a whole float
SLIDING_LOG = record(32, head=i8, tail=i8, total=f8, head_time=f8)
SLIDING_LOG_LINK = record(16, next=i8, time=f8)
SLIDING_COUNTER = record(24, index=f8, prev=f8, cur=f8)
GCRA = record(8, tat=i8)  # whole nanoseconds
NGINX = record(32, excess=i8, last=i8, older=i4, newer=i4, known=b1)

# the initial field values new_state() is given, per record
INITIAL = {TOKEN_BUCKET: {"last": NEW_TICK}, LEAKY_BUCKET: {"last": NEW},
           FIXED_WINDOW: {"index": NEW}, SLIDING_LOG: {"head": -1, "tail": -1},
           SLIDING_COUNTER: {"index": NEW}, GCRA: {"tat": NEW_NS},
           NGINX: {"older": -1, "newer": -1}}


# ---------------------------------------------------------------- token bucket


@njit(cache=True)
def token_bucket(time, key, cost, unit, state, rate, capacity,
                 allowed, counter, remaining, retry_after, details):
    """TokenBucket: refill, then take `cost` tokens if they are there (token_bucket.step)."""
    for i in range(len(time)):
        s = state[key[i]]
        now = time[i]
        now_t = to_ticks(now)
        c = 1.0 if unit else cost[i]
        tokens = s.tokens
        last = s.last
        if last == NEW_TICK:  # _initial: a full bucket
            tokens = capacity
            last = now_t
        have, tokens, ok = tb.step(tokens, last, now_t, c, rate, capacity)
        counter[i] = have
        s.tokens = tokens
        s.last = now_t
        allowed[i] = ok
        if details:
            remaining[i] = whole_below(tokens + tb.tie(rate))
            retry_after[i] = 0.0 if ok else seconds_until(
                now, now_t, now_t + tb.wait_ticks(tokens, c, rate, capacity))


# ---------------------------------------------------------------- leaky bucket


@njit(cache=True)
def leaky_bucket(time, key, cost, unit, state, rate, capacity, shape,
                 allowed, counter, delay, remaining, retry_after, details):
    """LeakyBucket: drain, then pour `cost` in unless it overflows; the shaper (``shape``)
    also holds an admitted request while the water ahead of it leaks (``level / rate``)."""
    for i in range(len(time)):
        s = state[key[i]]
        now = time[i]
        c = 1.0 if unit else cost[i]
        level = s.level
        last = s.last
        if last == NEW:  # _initial: an empty bucket
            level = 0.0
            last = now
        level = max(0.0, level - max(0.0, now - last) * rate)
        counter[i] = level
        ok = level + c <= capacity + TIE
        after = level + c if ok else level
        s.level = after
        s.last = now
        allowed[i] = ok
        if shape and ok:
            delay[i] = level / rate
        if details:
            remaining[i] = math.floor(capacity - after)
            retry_after[i] = 0.0 if ok else _leaky_bucket_wait(
                now, (level + c - capacity) / rate, after, c, rate, capacity)


@njit(cache=True)
def _leaky_bucket_passes(t, last, level, c, rate, capacity):
    """LeakyBucket._level(state, t) + c <= capacity."""
    return max(0.0, level - max(0.0, t - last) * rate) + c <= capacity + TIE


@njit(cache=True)
def _leaky_bucket_wait(now, wait, level, c, rate, capacity):
    """base.earliest for the leaky bucket."""
    if _leaky_bucket_passes(now + wait, now, level, c, rate, capacity):
        return wait
    t = now + wait
    for _ in range(NUDGES):
        t = np.nextafter(t, np.inf)
        wait = t - now
        if _leaky_bucket_passes(now + wait, now, level, c, rate, capacity):
            return wait
    return wait


# ---------------------------------------------------------------- fixed window


@njit(cache=True)
def fixed_window(time, key, cost, unit, state, limit, window,
                 count_rejected, allowed, counter, remaining, retry_after, details):
    """FixedWindow: the count of the calendar window `now` falls in, against `limit`."""
    for i in range(len(time)):
        s = state[key[i]]
        now = time[i]
        c = 1.0 if unit else cost[i]
        w = np.floor(now / window)
        count = s.count if s.index == w else 0.0  # a new key's index is NEW
        counter[i] = count
        ok = count + c <= limit
        after = count + c if (ok or count_rejected) else count
        s.index = w
        s.count = after
        allowed[i] = ok
        if details:
            remaining[i] = math.floor(max(0.0, limit - after))
            retry_after[i] = 0.0 if ok else _fixed_window_wait(now, (w + 1) * window - now, w,
                                                               window)


@njit(cache=True)
def _fixed_window_wait(now, wait, w, window):
    """base.earliest for the fixed window: until now + wait lies in a later window than w."""
    if np.floor((now + wait) / window) > w:
        return wait
    t = now + wait
    for _ in range(NUDGES):
        t = np.nextafter(t, np.inf)
        wait = t - now
        if np.floor((now + wait) / window) > w:
            return wait
    return wait


# ---------------------------------------------------------------- sliding window log


@njit(cache=True)
def sliding_log(time, key, cost, unit, offset, cost_all, state, link, limit, window,
                count_rejected, allowed, counter, remaining, retry_after, details):
    """SlidingWindowLog: each key's log is a chain through the trace's own requests.

    Key k's record holds the request index of its oldest logged entry (``head``, -1: empty
    log), of its newest (``tail``), the logged cost (``total``) and the oldest entry's time
    (``head_time``); ``link[j]`` holds the index and time of the entry logged after request j.
    Entries leave from the head and join at the tail, so every request is linked and unlinked
    at most once: O(n) in all. Checking whether anything expired reads only the key's record.
    Request i of this slice is request ``offset + i`` of the trace; ``cost_all`` is the whole
    trace's cost column (the expired entries' costs).
    """
    for i in range(len(time)):
        s = state[key[i]]
        now = time[i]
        c = 1.0 if unit else cost[i]
        horizon = now - window
        expired_cost = 0.0
        j = s.head
        if j >= 0 and s.head_time <= horizon:  # the oldest entry has left (now - W, now]
            while True:
                expired_cost = expired_cost + (1.0 if unit else cost_all[j])
                if j == s.tail:
                    j = -1
                    break
                t = link[j].time
                j = link[j].next
                if t > horizon:
                    s.head_time = t
                    break
            s.head = j
            if j < 0:
                s.tail = -1
        total = s.total
        in_window = total - expired_cost
        counter[i] = in_window
        ok = in_window + c <= limit
        logged = ok or count_rejected
        after = in_window + c if logged else in_window
        # commit: the expired entries are gone; log this one
        total = total - expired_cost
        if logged:
            g = offset + i
            if j < 0:
                s.head = g
                s.head_time = now
            else:
                link[s.tail].next = g
                link[s.tail].time = now
            s.tail = g
            total = total + c
        if s.head < 0:
            total = 0.0
        s.total = total
        allowed[i] = ok
        if details:
            remaining[i] = math.floor(max(0.0, limit - after))
            if ok:
                retry_after[i] = 0.0
            else:  # entries leave oldest first: when has enough cost gone?
                need = after + c - limit
                wait = window
                j = s.head
                t = s.head_time
                while j >= 0:
                    need -= 1.0 if unit else cost_all[j]
                    if need <= 0:
                        wait = _sliding_log_wait(now, t + window - now, t, window)
                        break
                    if j == s.tail:
                        break
                    t = link[j].time
                    j = link[j].next
                retry_after[i] = wait


@njit(cache=True)
def _sliding_log_wait(now, wait, t_left, window):
    """base.earliest for the sliding log: until the entry at t_left is out, t_left <= T - W."""
    if t_left <= (now + wait) - window:
        return wait
    t = now + wait
    for _ in range(NUDGES):
        t = np.nextafter(t, np.inf)
        wait = t - now
        if t_left <= (now + wait) - window:
            return wait
    return wait


# ---------------------------------------------------------------- sliding window counter


@njit(cache=True)
def _counter_wait(w, window, limit, prev, cur, now, c):
    """SlidingWindowCounter._wait: seconds until a request of cost `c` fits."""
    if cur + c <= limit and prev > 0:
        wait = w * window + window * (1.0 - (limit - cur - c) / prev) - now
    else:
        fade = max(0.0, 1.0 - (limit - c) / cur) if cur > 0 else 0.0
        wait = (w + 1) * window + window * fade - now
    if _counter_passes(now + wait, w, window, limit, prev, cur, c):
        return wait
    t = now + wait
    for _ in range(NUDGES):
        t = np.nextafter(t, np.inf)
        wait = t - now
        if _counter_passes(now + wait, w, window, limit, prev, cur, c):
            return wait
    return wait


@njit(cache=True)
def _counter_passes(t, w, window, limit, prev, cur, c):
    """SlidingWindowCounter._estimate(state, t) + c <= limit."""
    wt = np.floor(t / window)
    p = 0.0
    q = 0.0
    if wt == w:
        p = prev
        q = cur
    elif w + 1 == wt:
        p = cur
    return p * (1.0 - (t - wt * window) / window) + q + c <= limit


@njit(cache=True)
def sliding_counter(time, key, cost, unit, state, limit,
                    window, count_rejected, allowed, counter, remaining, retry_after, details):
    """SlidingWindowCounter: prev x (1 - elapsed/W) + cur, against `limit`."""
    for i in range(len(time)):
        s = state[key[i]]
        now = time[i]
        c = 1.0 if unit else cost[i]
        w = np.floor(now / window)
        prev = 0.0
        cur = 0.0
        if s.index == w:  # a new key's index is NEW: it gets zeros
            prev = s.prev
            cur = s.cur
        elif s.index + 1 == w:
            prev = s.cur
        weight = 1.0 - (now - w * window) / window
        estimate = prev * weight + cur
        counter[i] = estimate
        ok = estimate + c <= limit
        counted = ok or count_rejected
        new_cur = cur + c if counted else cur
        s.index = w
        s.prev = prev
        s.cur = new_cur
        allowed[i] = ok
        if details:
            after = estimate + c if counted else estimate
            remaining[i] = math.floor(max(0.0, limit - after))
            retry_after[i] = 0.0 if ok else _counter_wait(w, window, limit, prev, new_cur,
                                                           now, c)


# ---------------------------------------------------------------- GCRA


@njit(cache=True)
def gcra(time, key, cost, unit, state, period_ns, tolerance_ns,
         allowed, counter, remaining, retry_after, details):
    """GCRA in whole nanoseconds: move the TAT `cost` periods on, if it stays within the DVT."""
    for i in range(len(time)):
        s = state[key[i]]
        now_ns = math.floor(time[i] * 1e9 + 0.5)
        c = 1.0 if unit else cost[i]
        tat = s.tat
        if tat == NEW_NS:  # _initial: the TAT of an idle key is now
            tat = now_ns
        ahead = max(0, tat - now_ns)
        counter[i] = (tolerance_ns - ahead) / period_ns
        new_tat = max(tat, now_ns) + round(c * period_ns)
        allow_at = new_tat - tolerance_ns
        ok = now_ns >= allow_at
        kept = new_tat if ok else tat
        s.tat = kept
        allowed[i] = ok
        if details:
            slack = now_ns - (kept - tolerance_ns)
            remaining[i] = max(0, slack) // period_ns
            retry_after[i] = 0.0 if ok else _gcra_wait(time[i], (allow_at - now_ns) / NS, kept,
                                                        c, period_ns, tolerance_ns)


@njit(cache=True)
def _gcra_passes(t, tat, c, period_ns, tolerance_ns):
    """GCRA._passes: a request of cost c at time t against the TAT."""
    t_ns = math.floor(t * 1e9 + 0.5)
    return t_ns >= max(tat, t_ns) + round(c * period_ns) - tolerance_ns


@njit(cache=True)
def _gcra_wait(now, wait, tat, c, period_ns, tolerance_ns):
    """base.earliest for GCRA."""
    if _gcra_passes(now + wait, tat, c, period_ns, tolerance_ns):
        return wait
    t = now + wait
    for _ in range(NUDGES):
        t = np.nextafter(t, np.inf)
        wait = t - now
        if _gcra_passes(now + wait, tat, c, period_ns, tolerance_ns):
            return wait
    return wait


# ---------------------------------------------------------------- nginx limit_req

_BIG = 1 << 62


@njit(cache=True)
def _drain(rate_milli, ms, ms_cap):
    """rate_milli * ms // 1000 for ms >= 0, capped at 2**62 // 1000 where int64 would overflow.

    A capped drain still exceeds any excess the compiled engine allows (burst < 10**12), so
    every comparison and max(0, ...) comes out as with the exact value.
    """
    if ms > ms_cap:
        return _BIG // 1000
    return rate_milli * ms // 1000


@njit(cache=True)
def _lru_unlink(k, state, ends):
    """Take key k out of the LRU queue (``ends``: oldest and newest key, -1 when empty)."""
    older = state[k].older
    newer = state[k].newer
    if older >= 0:
        state[older].newer = newer
    else:
        ends[0] = newer
    if newer >= 0:
        state[newer].older = older
    else:
        ends[1] = older


@njit(cache=True)
def _lru_push(k, state, ends):
    """Put key k at the newest end of the LRU queue."""
    newest = ends[1]
    state[k].older = newest
    state[k].newer = -1
    if newest >= 0:
        state[newest].newer = k
    else:
        ends[0] = k
    ends[1] = k


@njit(cache=True)
def nginx(time, key, state, ends, rate_milli, burst, delay_n, nodelay, allowed,
          counter, delay, remaining, retry_after, details):
    """NginxLimitReq: excess in thousandths, integer drain, LRU expiry of idle nodes.

    A key's record holds its node (``known``, ``excess``, ``last``) and its neighbours in the
    LRU queue of nodes (``older``, ``newer``); ``ends`` holds the queue's oldest and newest key.
    """
    burst_milli = burst * 1000
    ms_cap = _BIG // rate_milli  # rate_milli * ms fits in int64 up to here
    for i in range(len(time)):
        k = key[i]
        s = state[k]
        now_ms = math.floor(time[i] * 1000.0 + 0.5)
        if s.known:
            node_excess = s.excess
            node_last = s.last
            ms = max(0, now_ms - node_last)
            drained = node_excess - _drain(rate_milli, ms, ms_cap)
            counter[i] = max(0, drained) / 1000
            excess = max(0, drained + 1000)
            ok = excess <= burst_milli
            if ok:
                s.excess = excess
                if ms:
                    s.last = now_ms
            kept = excess if ok else node_excess
            if ends[1] != k:  # move to the newest end (where it often is already)
                _lru_unlink(k, state, ends)
                _lru_push(k, state, ends)
        else:
            counter[i] = 0.0
            node_excess = 0
            node_last = now_ms
            excess = 0
            ok = True
            kept = 0
            for _ in range(2):  # ngx_http_limit_req_expire(ctx, 1)
                h = ends[0]
                if h < 0:
                    break
                idle = abs(now_ms - state[h].last)
                if idle < EXPIRE_IDLE_MS or state[h].excess - _drain(rate_milli, idle, ms_cap) > 0:
                    break
                _lru_unlink(h, state, ends)
                state[h].known = False
            s.known = True
            s.excess = 0
            s.last = now_ms
            _lru_push(k, state, ends)
        allowed[i] = ok
        if ok and not nodelay and excess > delay_n * 1000:
            delay[i] = ((excess - delay_n * 1000) * 1000 // rate_milli) / 1000
        if details:
            remaining[i] = max(0, (burst_milli - kept) // 1000)
            if ok:
                retry_after[i] = 0.0
            else:
                need = node_excess + 1000 - burst_milli
                wait_ms = -(-need * 1000 // rate_milli)
                retry_after[i] = _nginx_wait(time[i], max(0, node_last + wait_ms - now_ms) / 1000,
                                             node_excess, node_last, rate_milli, burst_milli,
                                             ms_cap)


@njit(cache=True)
def _nginx_passes(t, excess, last, rate_milli, burst_milli, ms_cap):
    """NginxLimitReq._excess_at(node, t) <= burst: nginx's millisecond clock read at t."""
    ms = max(0, math.floor(t * 1000.0 + 0.5) - last)
    return max(0, excess - _drain(rate_milli, ms, ms_cap) + 1000) <= burst_milli


@njit(cache=True)
def _nginx_wait(now, wait, excess, last, rate_milli, burst_milli, ms_cap):
    """base.earliest for nginx."""
    if _nginx_passes(now + wait, excess, last, rate_milli, burst_milli, ms_cap):
        return wait
    t = now + wait
    for _ in range(NUDGES):
        t = np.nextafter(t, np.inf)
        wait = t - now
        if _nginx_passes(now + wait, excess, last, rate_milli, burst_milli, ms_cap):
            return wait
    return wait
