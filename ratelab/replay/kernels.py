"""The compiled replay: one numba kernel per registry algorithm.

Each kernel is the reference limiter's ``_check`` / ``_commit`` written again over arrays: the
per-key state lives in arrays indexed by key id, and every floating-point operation is the
reference's, in the reference's order, so that the two agree exactly on every request (a test
holds them together). Where the reference builds a fresh key with ``_initial(now)``, the kernel
keeps a ``seen`` flag per key and starts from the same values.

A kernel replays requests ``start`` to ``stop`` of the trace and can be called again for the
next slice: the state arrays carry everything over (that is how the progress bar advances).
Its outputs, per request ``i``:

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

EXPIRE_IDLE_MS = 60_000  # nginx deletes LRU nodes idle this long (ratelab.limiters.nginx)


# ---------------------------------------------------------------- token bucket


@njit(cache=True)
def token_bucket(time, key, cost, unit, start, stop, seen, tokens_s, last_s, rate, capacity,
                 allowed, counter, remaining, retry_after, details):
    """TokenBucket: refill, then take `cost` tokens if they are there."""
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        if seen[k]:
            tokens = tokens_s[k]
            last = last_s[k]
        else:
            seen[k] = True
            tokens = capacity
            last = now
        elapsed = max(0.0, now - last)
        tokens = min(capacity, tokens + elapsed * rate)
        counter[i] = tokens
        ok = tokens >= c
        if ok:
            tokens = tokens - c
        tokens_s[k] = tokens
        last_s[k] = now
        allowed[i] = ok
        if details:
            remaining[i] = math.floor(tokens)
            retry_after[i] = 0.0 if ok else (c - tokens) / rate


# ---------------------------------------------------------------- leaky bucket


@njit(cache=True)
def leaky_police(time, key, cost, unit, start, stop, seen, level_s, last_s, rate, capacity,
                 allowed, counter, remaining, retry_after, details):
    """LeakyBucket(mode="police"): drain, then pour `cost` in unless it overflows."""
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        if seen[k]:
            level = level_s[k]
            last = last_s[k]
        else:
            seen[k] = True
            level = 0.0
            last = now
        level = max(0.0, level - max(0.0, now - last) * rate)
        counter[i] = level
        ok = level + c <= capacity
        after = level + c if ok else level
        level_s[k] = after
        last_s[k] = now
        allowed[i] = ok
        if details:
            remaining[i] = math.floor(capacity - after)
            retry_after[i] = 0.0 if ok else (level + c - capacity) / rate


@njit(cache=True)
def leaky_shape(time, key, cost, unit, start, stop, seen, next_free_s, rate, capacity,
                allowed, counter, delay, remaining, retry_after, details):
    """LeakyBucket(mode="shape"): queue the request behind the backlog, unless it is full."""
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        if seen[k]:
            next_free = next_free_s[k]
        else:
            seen[k] = True
            next_free = now
        counter[i] = max(0.0, next_free - now) * rate
        begin = max(now, next_free)
        backlog = (begin - now) * rate
        ok = backlog + c <= capacity
        new_free = begin + c / rate if ok else next_free
        next_free_s[k] = new_free
        allowed[i] = ok
        if ok:
            delay[i] = begin - now
        if details:
            after = (max(now, new_free) - now) * rate
            remaining[i] = math.floor(capacity - after)
            retry_after[i] = 0.0 if ok else (backlog + c - capacity) / rate


# ---------------------------------------------------------------- fixed window


@njit(cache=True)
def fixed_window(time, key, cost, unit, start, stop, seen, index_s, count_s, limit, window,
                 count_rejected, allowed, counter, remaining, retry_after, details):
    """FixedWindow: the count of the calendar window `now` falls in, against `limit`."""
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        w = math.floor(now / window)
        count = count_s[k] if (seen[k] and index_s[k] == w) else 0.0
        seen[k] = True
        counter[i] = count
        ok = count + c <= limit
        after = count + c if (ok or count_rejected) else count
        index_s[k] = w
        count_s[k] = after
        allowed[i] = ok
        if details:
            remaining[i] = math.floor(max(0.0, limit - after))
            retry_after[i] = 0.0 if ok else (w + 1) * window - now


# ---------------------------------------------------------------- sliding window log


@njit(cache=True)
def sliding_log(time, key, cost, unit, start, stop, head_s, tail_s, total_s, nxt, limit,
                window, count_rejected, allowed, counter, remaining, retry_after, details):
    """SlidingWindowLog: each key's log is a chain through the trace's own requests.

    ``head_s[k]`` is the request index of key k's oldest logged entry (-1: empty log),
    ``tail_s[k]`` its newest, ``nxt[j]`` the entry logged after request j. Entries leave from
    the head and join at the tail, so every request is linked and unlinked at most once: O(n).
    """
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        horizon = now - window
        expired_cost = 0.0
        j = head_s[k]
        while j >= 0 and time[j] <= horizon:
            expired_cost = expired_cost + (1.0 if unit else cost[j])
            j = nxt[j]
        total = total_s[k]
        in_window = total - expired_cost
        counter[i] = in_window
        ok = in_window + c <= limit
        logged = ok or count_rejected
        after = in_window + c if logged else in_window
        # commit: drop the expired entries, log this one
        head_s[k] = j
        if j < 0:
            tail_s[k] = -1
        total = total - expired_cost
        if logged:
            nxt[i] = -1
            if head_s[k] < 0:
                head_s[k] = i
            else:
                nxt[tail_s[k]] = i
            tail_s[k] = i
            total = total + c
        if head_s[k] < 0:
            total = 0.0
        total_s[k] = total
        allowed[i] = ok
        if details:
            remaining[i] = math.floor(max(0.0, limit - after))
            if ok:
                retry_after[i] = 0.0
            else:  # entries leave oldest first: when has enough cost gone?
                need = after + c - limit
                wait = window
                j = head_s[k]
                while j >= 0:
                    need -= 1.0 if unit else cost[j]
                    if need <= 0:
                        wait = time[j] + window - now
                        break
                    j = nxt[j]
                retry_after[i] = wait


# ---------------------------------------------------------------- sliding window counter


@njit(cache=True)
def _counter_wait(w, window, limit, prev, cur, now, c):
    """SlidingWindowCounter._wait: seconds until a request of cost `c` fits."""
    if cur + c <= limit and prev > 0:
        return w * window + window * (1.0 - (limit - cur - c) / prev) - now
    fade = max(0.0, 1.0 - (limit - c) / cur) if cur > 0 else 0.0
    return (w + 1) * window + window * fade - now


@njit(cache=True)
def sliding_counter(time, key, cost, unit, start, stop, seen, index_s, prev_s, cur_s, limit,
                    window, count_rejected, allowed, counter, remaining, retry_after, details):
    """SlidingWindowCounter: prev x (1 - elapsed/W) + cur, against `limit`."""
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        w = math.floor(now / window)
        prev = 0.0
        cur = 0.0
        if seen[k]:
            if index_s[k] == w:
                prev = prev_s[k]
                cur = cur_s[k]
            elif index_s[k] + 1 == w:
                prev = cur_s[k]
        seen[k] = True
        weight = 1.0 - (now - w * window) / window
        estimate = prev * weight + cur
        counter[i] = estimate
        ok = estimate + c <= limit
        counted = ok or count_rejected
        new_cur = cur + c if counted else cur
        index_s[k] = w
        prev_s[k] = prev
        cur_s[k] = new_cur
        allowed[i] = ok
        if details:
            after = estimate + c if counted else estimate
            remaining[i] = math.floor(max(0.0, limit - after))
            retry_after[i] = 0.0 if ok else _counter_wait(w, window, limit, prev, new_cur,
                                                           now, c)


# ---------------------------------------------------------------- GCRA


@njit(cache=True)
def gcra(time, key, cost, unit, start, stop, seen, tat_s, period, tolerance,
         allowed, counter, remaining, retry_after, details):
    """GCRA: move the theoretical arrival time `cost` periods on, if it stays within the DVT."""
    for i in range(start, stop):
        k = key[i]
        now = time[i]
        c = 1.0 if unit else cost[i]
        if seen[k]:
            tat = tat_s[k]
        else:
            seen[k] = True
            tat = now
        counter[i] = (tolerance - max(0.0, tat - now)) / period
        new_tat = max(tat, now) + c * period
        allow_at = new_tat - tolerance
        ok = now >= allow_at
        kept = new_tat if ok else tat
        tat_s[k] = kept
        allowed[i] = ok
        if details:
            slack = now - (kept - tolerance)
            remaining[i] = math.floor(max(0.0, slack) / period + 1e-9)
            retry_after[i] = 0.0 if ok else allow_at - now


# ---------------------------------------------------------------- nginx limit_req

_BIG = 1 << 62


@njit(cache=True)
def _less_drain(x, rate_milli, ms):
    """x - rate_milli * ms // 1000 (ms >= 0), or -1 when the drain is beyond int64 anyway."""
    if ms > 0 and rate_milli > _BIG // ms:
        return -1  # the drain exceeds 4.6e15 thousandths: x (< that) is drained to nothing
    return x - rate_milli * ms // 1000


@njit(cache=True)
def _lru_unlink(k, lru_prev, lru_next, ends):
    p = lru_prev[k]
    n = lru_next[k]
    if p >= 0:
        lru_next[p] = n
    else:
        ends[0] = n
    if n >= 0:
        lru_prev[n] = p
    else:
        ends[1] = p


@njit(cache=True)
def _lru_push(k, lru_prev, lru_next, ends):
    tail = ends[1]
    lru_prev[k] = tail
    lru_next[k] = -1
    if tail >= 0:
        lru_next[tail] = k
    else:
        ends[0] = k
    ends[1] = k


@njit(cache=True)
def nginx(time, key, start, stop, known, excess_s, last_s, lru_prev, lru_next, ends,
          rate_milli, burst, delay_n, nodelay, allowed, counter, delay, remaining, retry_after,
          details):
    """NginxLimitReq: excess in thousandths, integer drain, LRU expiry of idle nodes.

    ``ends`` holds the LRU queue's oldest and newest key (-1 when empty); ``lru_prev`` and
    ``lru_next`` link the keys that have a node, oldest first.
    """
    burst_milli = burst * 1000
    for i in range(start, stop):
        k = key[i]
        now_ms = math.floor(time[i] * 1000.0 + 0.5)
        if known[k]:
            node_excess = excess_s[k]
            node_last = last_s[k]
            ms = max(0, now_ms - node_last)
            counter[i] = max(0, _less_drain(node_excess, rate_milli, ms)) / 1000
            excess = max(0, _less_drain(node_excess + 1000, rate_milli, ms))
            ok = excess <= burst_milli
            if ok:
                excess_s[k] = excess
                if ms:
                    last_s[k] = now_ms
            kept = excess if ok else node_excess
            _lru_unlink(k, lru_prev, lru_next, ends)
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
                idle = abs(now_ms - last_s[h])
                if idle < EXPIRE_IDLE_MS or _less_drain(excess_s[h], rate_milli, idle) > 0:
                    break
                _lru_unlink(h, lru_prev, lru_next, ends)
                known[h] = False
            known[k] = True
            excess_s[k] = 0
            last_s[k] = now_ms
        _lru_push(k, lru_prev, lru_next, ends)
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
                retry_after[i] = max(0, node_last + wait_ms - now_ms) / 1000


def empty_state(n_keys: int, *dtypes) -> tuple[np.ndarray, ...]:
    """Zeroed per-key arrays, one per dtype."""
    return tuple(np.zeros(n_keys, dtype=d) for d in dtypes)
