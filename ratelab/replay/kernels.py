"""The compiled replay: one numba kernel per registry algorithm.

Each kernel is the reference limiter's ``_check`` / ``_commit`` over arrays, and it does not
repeat the reference's arithmetic: it calls the same scalar functions the reference calls
(``ratelab.limiters.token_bucket.step``, ``sliding_counter.estimate``, ``nginx.drain`` ...),
which numba compiles here (``register_jitable``). What stays here is the loop and the state
layout: the per-key state is one record per key in an array indexed by key id (one cache line
holds all a request needs of its key — with 100 K keys that is what keeps the kernels fast).
Times are whole microseconds (ticks, ``ratelab.clock``), converted from the trace's
float seconds by the same ``to_ticks``, in a pass of their own (:func:`ticks_of`) before the
kernel runs: that loop has no branch and the compiler turns it into vector instructions (about
1 ns a request), where converting inside a kernel's loop cost the token bucket about 3 ns a
request of its 5 to 9. A key not seen yet has the least int64 in its window
``index`` (NEW_TICK, a window no time falls in, so its counts read as 0) — a sentinel rather
than a flag, to keep the records small. The buckets and GCRA need not even test for a new key:
it holds a full bucket (empty, for the leaky one) last refilled at LONG_AGO, before any time
the limiters hold, or a TAT of LONG_AGO, and the algorithm's own arithmetic takes that to
exactly the reference's ``_initial(now, now_t)`` at any ``now``: a refill beyond capacity is
capped to capacity, a leak below empty stops at 0, and a TAT in the past reads as now
(``max(tat, now)``; GCRA's first request of a key always passes, a cost above burst + 1
being refused before the replay starts, so that TAT is never kept). The test cost about a
tenth of their time.

Two habits keep the loops fast on traffic like ``ratelab bench``'s (100 K keys, 37% of the
requests refused, in no order a processor can predict): a kernel asks for the record of the
request AHEAD places on before it needs it (:data:`AHEAD`, :func:`prefetch`), and it writes
what a refused request leaves (its state, its delay) with a select rather than a branch on
the decision — a mispredicted branch cost the leaky-bucket shaper 1.5 times the rest of its
work.

A kernel replays one slice of the trace — its arguments are views of that slice's columns,
indexed from 0, with ``ticks`` the slice's times in ticks and ``time`` the same in seconds
(read only for ``retry_after``) — and is called again for the next slice: the state arrays
carry everything over (that is how the progress bar advances). Its outputs, per request ``i`` of the slice:

* ``allowed[i]``  the decision;
* ``counter[i]``  the limiter's own counter as the request finds it (what ``inspect`` reports
  just before the request: the limiter's ``reports`` field);
* ``delay[i]``    seconds the request is held (leaky-bucket shaping, and nginx in a pass after
  its kernel: :func:`nginx_delays`);
* ``remaining[i]`` and ``retry_after[i]`` as in the reference Decision, unless both are None
  (no details asked for).

``cost`` is None when the trace has no cost column (every request costs 1.0). Passing None
rather than a flag lets numba compile each combination on its own and leave out, at compile
time, the code of what is absent (``if remaining is not None`` on a None argument is pruned):
the loop without details then keeps its pointers and constants in registers instead of
spilling them for the waits' code (measured: about a tenth of the token bucket's time).
Compiled on first use (numba's cache keeps the machine code between runs; numba checks
only this file for that, so :func:`ratelab.kernel_cache.watch_limiters` adds the limiters'
sources to what it checks); importing this module compiles nothing.
"""

from __future__ import annotations


import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable

from ..kernel_cache import watch_limiters
from .. import clock
from ..limiters import base
from ..limiters import fixed_window as fw
from ..limiters import gcra as gc
from ..limiters import haproxy as hp
from ..limiters import leaky_bucket as lb
from ..limiters import nginx as ng
from ..limiters import sliding_counter as sc
from ..limiters import sliding_log as sl
from ..limiters import token_bucket as tb


CACHE = watch_limiters()  # False where numba offers no hook: compiled, never stale


def _compile_with_kernels(*functions) -> None:
    """Let the kernels call `functions` — the limiters' own scalar arithmetic, plain Python —
    by compiling them where a kernel calls them (numba's register_jitable)."""
    for fn in functions:
        register_jitable(fn)


_compile_with_kernels(
    clock.to_ticks, clock.seconds_until,
    clock.ticks_to_pass, clock.tie_amount, base.whole_below, base.window_step,
    base.window_remaining,
    tb.refill, tb.ticks_short, tb.passes, tb.wait_ticks, tb.step,
    lb.level_at, lb.ticks_over, lb.passes, lb.wait_ticks, lb.step,
    fw.index_of, fw.index_near, fw.count_in, fw.step, sl.has_left,
    sc.roll, sc.weight, sc.blend, sc.estimate, sc.step, sc.wait_ticks, sc.reset_tick,
    gc.advance, gc.allow_at, gc.available,
    ng.ms_of, ng.after_ms, ng.drain, ng.excess_left, ng.drained, ng.with_request, ng.can_expire,
    ng.delay_ms, ng.ms_to_drain, ng.retry_tick)
_compile_with_kernels(hp.ms_of, hp.even, hp.counted, hp.blend, hp.rate, hp.step, hp._last_remain,
                      hp.wait_ms, hp.reset_ms)
to_ticks, seconds_until, whole_below = clock.to_ticks, clock.seconds_until, base.whole_below
MAX_TICKS = clock.MAX_TICKS


AHEAD = 16
"""How many requests ahead a kernel asks for the state record a key will need.

With 100 K keys the records do not fit the core's own cache, and the record a request needs
is a random one: its load took most of a fast kernel's time while the processor waited on it.
Asked for AHEAD requests early (:func:`prefetch`), it is there when the request comes
(measured on ``ratelab bench``'s trace, the kernels alone: the sliding window counter 1.3x
faster, nginx 1.3x, the token bucket 1.1x). Each kernel's loop starts with
``prefetch(state, key[min(i + AHEAD, last)])``, ``last`` the slice's last request: written
out in each loop, because a function taking the arrays would count references to them on
every call (numba's reference counting), which cost more than the prefetch saved."""


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the processor to bring ``array[index]`` into its cache, for writing, and go on.

    LLVM's ``prefetch`` intrinsic: a hint that loads nothing into a register, never faults
    and changes no value, so a kernel's results are the same with or without it.
    """
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0])
        address = cgutils.get_item_pointer(context, builder, array_type, data, [args[1]],
                                           wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_pointer],
            ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]))
        # write, keep in every cache level, data
        builder.call(fn, [builder.bitcast(address, byte_pointer), ir.Constant(i32, 1),
                          ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(cache=CACHE, nogil=True)  # the error analysis converts parts on several threads
def ticks_of(time, out):
    """Write ``to_ticks(time[i])`` into ``out[i]`` for every i: the kernels' ``ticks``.

    The times must lie within +-MAX_TICKS ticks (``replay.core.check_times``): beyond, the
    float-to-integer conversion has no defined result.
    """
    for i in range(len(time)):
        out[i] = to_ticks(time[i])


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


def new_state(dtype: np.dtype, n_keys: int, **values) -> np.ndarray:
    """`n_keys` records of `dtype` for keys not seen yet (INITIAL, and `values` by name)."""
    state = np.zeros(n_keys, dtype=dtype)
    for name, value in {**INITIAL.get(dtype, {}), **values}.items():
        state[name] = value
    return state


NEW_TICK = np.iinfo(np.int64).min  # the window index of a key not seen yet
LONG_AGO = -MAX_TICKS  # a tick before every time the limiters hold (new buckets, GCRA)
f8, i8, i4, b1 = np.float64, np.int64, np.int32, np.bool_
TOKEN_BUCKET = record(16, tokens=f8, last=i8)  # last: ticks
LEAKY_BUCKET = record(16, level=f8, last=i8)
FIXED_WINDOW = record(16, index=i8, count=f8)  # index: the window number
SLIDING_LOG = record(24, head=i8, tail=i8, total=f8)  # head, tail: slots of the flat log
SLIDING_COUNTER = record(24, index=i8, prev=f8, cur=f8)
GCRA = record(8, tat=i8)  # ticks
NGINX = record(32, excess=i8, last=i8, older=i4, newer=i4, known=b1)  # last: milliseconds
HAPROXY = record(32, tick=i8, curr=i8, prev=i8, touched=i8)  # milliseconds

# the initial field values new_state() is given, per record
INITIAL = {TOKEN_BUCKET: {"last": LONG_AGO}, LEAKY_BUCKET: {"last": LONG_AGO},
           FIXED_WINDOW: {"index": NEW_TICK},
           SLIDING_COUNTER: {"index": NEW_TICK}, GCRA: {"tat": LONG_AGO},
           NGINX: {"older": -1, "newer": -1}, HAPROXY: {"touched": hp.NO_TOUCH}}


# ---------------------------------------------------------------- token bucket


@njit(cache=CACHE)
def token_bucket(time, ticks, key, cost, state, rate, capacity,
                 allowed, counter, remaining, retry_after):
    """TokenBucket: refill, then take `cost` tokens if they are there (token_bucket.step)."""
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        s = state[key[i]]
        now_t = ticks[i]
        c = 1.0 if cost is None else cost[i]
        have, tokens, ok = tb.step(s.tokens, s.last, now_t, c, rate, capacity)
        counter[i] = have
        s.tokens = tokens
        s.last = now_t
        allowed[i] = ok
        if remaining is not None:
            remaining[i] = whole_below(tokens + clock.tie_amount(rate))
            retry_after[i] = 0.0 if ok else seconds_until(
                time[i], now_t, now_t + tb.wait_ticks(tokens, c, rate, capacity))


# ---------------------------------------------------------------- leaky bucket


@njit(cache=CACHE)
def leaky_bucket(time, ticks, key, cost, state, rate, capacity, shape,
                 allowed, counter, delay, remaining, retry_after):
    """LeakyBucket: drain, then pour `cost` in unless it overflows; the shaper (``shape``)
    also holds an admitted request while the water ahead of it leaks (``level / rate``)."""
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        s = state[key[i]]
        now_t = ticks[i]
        c = 1.0 if cost is None else cost[i]
        level, after, ok = lb.step(s.level, s.last, now_t, c, rate, capacity)
        counter[i] = level
        s.level = after
        s.last = now_t
        allowed[i] = ok
        if shape:  # a select, not a branch on ok: 37% of the bench's requests are refused,
            delay[i] = level / rate if ok else 0.0  # and a mispredicted branch cost 2.5x
        if remaining is not None:
            remaining[i] = whole_below(capacity - after + clock.tie_amount(rate))
            retry_after[i] = 0.0 if ok else seconds_until(
                time[i], now_t, now_t + lb.wait_ticks(after, c, rate, capacity))


# ---------------------------------------------------------------- fixed window


@njit(cache=CACHE)
def fixed_window(time, ticks, key, cost, state, limit, window_ticks,
                 count_rejected, allowed, counter, remaining, retry_after):
    """FixedWindow: the count of the calendar window `now` falls in, against `limit`
    (``window_ticks``)."""
    k, start = 0, MAX_TICKS  # the window of the request before (fw.index_near)
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        s = state[key[i]]
        now_t = ticks[i]
        c = 1.0 if cost is None else cost[i]
        k, start = fw.index_near(now_t, window_ticks, k, start)
        # a new key's index is NEW_TICK: its count reads as 0
        count, ok, after = fw.step(s.index, s.count, k, c, limit, count_rejected)
        counter[i] = count
        s.index = k
        s.count = after
        allowed[i] = ok
        if remaining is not None:
            remaining[i] = base.window_remaining(after, limit)
            retry_after[i] = 0.0 if ok else seconds_until(time[i], now_t, (k + 1) * window_ticks)


# ---------------------------------------------------------------- sliding window log


@njit(cache=CACHE)
def log_layout(key, state):
    """Give every key its stretch of the sliding log's flat array: as many slots as the key
    has requests in `key` (the whole trace's), one stretch after the other; an empty log
    (``head == tail``) at the stretch's start."""
    counts = np.zeros(len(state), np.int64)
    for i in range(len(key)):
        counts[key[i]] += 1
    at = 0
    for k in range(len(state)):
        state[k].head = at
        state[k].tail = at
        at += counts[k]


@njit(cache=CACHE)
def sliding_log(time, ticks, key, cost, state, log, log_cost, limit, window_ticks,
                count_rejected, allowed, counter, remaining, retry_after):
    """SlidingWindowLog: each key's log is a queue in its own stretch of one flat array.

    ``log`` holds ticks, ``log_cost`` the same entries' costs (None: every request costs 1).
    Key k's log is ``log[head:tail]``, oldest first, and ``total`` its cost; its stretch has
    a slot for each of its requests in the trace (:func:`log_layout`), so entries never move:
    they leave at the head and join at the tail, each request written and passed over at
    most once — O(n) in all. A request's record, the log's head and its tail are the three
    places it reads; the records are fetched ahead (AHEAD) and so are the log
    ends of the request AHEAD // 2 places on (where that record has arrived by then).

    ``log`` has one slot more than the trace has requests, so that ``log[head]`` may be read
    before knowing whether the log is empty (the slot read then is free, or the next key's;
    its value is not used), and the new entry is written at ``tail`` before knowing whether
    the request is logged (the slot is free: the key has had fewer logged requests than it
    has requests, this one included). Neither is a branch on the data: the counts of expired
    entries and refused requests are not predictable.
    """
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        nearer = state[key[min(i + AHEAD // 2, last)]]  # fetched AHEAD // 2 requests ago
        prefetch(log, nearer.head)
        prefetch(log, nearer.tail)
        s = state[key[i]]
        now_t = ticks[i]
        c = 1.0 if cost is None else cost[i]
        head = s.head
        tail = s.tail
        # entries that have left (now - W, now]: most often none or the oldest alone
        h = head + ((head < tail) & sl.has_left(log[head], now_t, window_ticks))
        if h > head:
            while h < tail and sl.has_left(log[h], now_t, window_ticks):
                h += 1
        if cost is None:
            in_window = float(tail - h)
        else:
            expired_cost = 0.0
            for e in range(head, h):
                expired_cost = expired_cost + log_cost[e]
            in_window = s.total - expired_cost
        counter[i] = in_window
        ok, logged, after = base.window_step(in_window, c, limit, count_rejected)
        # commit: the expired entries are gone; this one is logged if `logged`
        log[tail] = now_t
        if log_cost is not None:
            log_cost[tail] = c
            # as the reference commits: less the expired, plus this one; 0 once empty
            s.total = in_window + c if logged else (0.0 if h == tail else in_window)
        s.head = h
        tail = tail + 1 if logged else tail
        s.tail = tail
        allowed[i] = ok
        if remaining is not None:
            remaining[i] = base.window_remaining(after, limit)
            if ok:
                retry_after[i] = 0.0
            else:  # entries leave oldest first: when has enough cost gone?
                need = after + c - limit
                wait = window_ticks / clock.TICKS_PER_S
                for e in range(h, tail):
                    need -= 1.0 if log_cost is None else log_cost[e]
                    if need <= 0:
                        wait = seconds_until(time[i], now_t, log[e] + window_ticks)
                        break
                retry_after[i] = wait


# ---------------------------------------------------------------- sliding window counter


@njit(cache=CACHE)
def sliding_counter(time, ticks, key, cost, state, limit,
                    window_ticks, count_rejected, allowed, counter, remaining, retry_after):
    """SlidingWindowCounter: prev x (1 - elapsed/W) + cur, against `limit`."""
    k, start = 0, MAX_TICKS  # the window of the request before (fw.index_near)
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        s = state[key[i]]
        now_t = ticks[i]
        c = 1.0 if cost is None else cost[i]
        k, start = fw.index_near(now_t, window_ticks, k, start)
        # a new key's index is NEW_TICK: its counts read as zeros
        estimate, ok, prev, new_cur, after = sc.step(s.index, s.prev, s.cur, now_t, k, window_ticks,
                                                     c, limit, count_rejected)
        counter[i] = estimate
        s.index = k
        s.prev = prev
        s.cur = new_cur
        allowed[i] = ok
        if remaining is not None:
            remaining[i] = base.window_remaining(after, limit)
            retry_after[i] = 0.0 if ok else seconds_until(
                time[i], now_t, sc.wait_ticks(k, prev, new_cur, now_t, window_ticks, limit, c))


# ---------------------------------------------------------------- GCRA


@njit(cache=CACHE)
def gcra(time, ticks, key, cost, state, period, tolerance,
         allowed, counter, remaining, retry_after):
    """GCRA in whole ticks: move the TAT `cost` periods on, if it stays within the DVT."""
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        s = state[key[i]]
        now_t = ticks[i]
        c = 1.0 if cost is None else cost[i]
        tat = s.tat  # a new key's: LONG_AGO, which reads as now (max(tat, now))
        counter[i] = gc.available(tat, now_t, period, tolerance)
        at = gc.allow_at(tat, now_t, c, period, tolerance)
        ok = now_t >= at
        kept = gc.advance(tat, now_t, c, period) if ok else tat
        s.tat = kept
        allowed[i] = ok
        if remaining is not None:
            slack = now_t - (kept - tolerance)
            remaining[i] = max(0, slack) // period
            retry_after[i] = 0.0 if ok else seconds_until(time[i], now_t, at)


# ---------------------------------------------------------------- nginx limit_req


@njit(cache=CACHE)
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


@njit(cache=CACHE)
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


@njit(cache=CACHE)
def ms_of_ticks(ticks, out):
    """Write ``nginx.ms_of(ticks[i])`` into ``out[i]`` for every i: nginx's milliseconds, in
    a pass of their own (as :func:`ticks_of`), out of the kernel's loop."""
    for i in range(len(ticks)):
        out[i] = ng.ms_of(ticks[i])


@njit(cache=CACHE)
def nginx_delays(found, delay, delay_n, nodelay, rate_milli):
    """Write the delay of each request into ``delay``, in seconds, from ``found``: the excess
    an admitted request found (``nginx.delay_ms``; 0 for a refused one, which is not held).

    A pass of its own, after the kernel: the delay's integer division by the rate took a
    third of the kernel's time inside its loop, and takes about 3 ns a request here.
    """
    for i in range(len(found)):
        delay[i] = ng.delay_ms(found[i], delay_n, nodelay, rate_milli) / 1000


@njit(cache=CACHE)
def nginx(time, ticks, ms, key, state, ends, rate_milli, ms_cap, burst, allowed, counter,
          found, remaining, retry_after):
    """NginxLimitReq: excess in thousandths, integer drain, LRU expiry of idle nodes.

    A key's record holds its node (``known``, ``excess``, ``last``) and its neighbours in the
    LRU queue of nodes (``older``, ``newer``); ``ends`` holds the queue's oldest and newest key.
    ``ms`` are the requests' milliseconds (:func:`ms_of_ticks`); ``found[i]`` receives the
    excess an admitted request finds, 0 for a refused one, from which :func:`nginx_delays`
    computes the delays. A refused request leaves the node as it was: the node is written
    either way, with a select rather than a branch on the decision.
    """
    burst_milli = burst * 1000
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ms)):
        prefetch(state, key[min(i + AHEAD, last)])
        k = key[i]
        s = state[k]
        now_ms = ms[i]
        if s.known:
            node_excess = s.excess
            node_last = s.last
            left = ng.excess_left(node_excess, node_last, now_ms, rate_milli, ms_cap)
            counter[i] = ng.drained(left) / 1000
            excess = ng.with_request(left)
            ok = excess <= burst_milli
            s.excess = excess if ok else node_excess
            s.last = max(now_ms, node_last) if ok else node_last
            if ends[1] != k:  # move to the newest end (where it often is already)
                _lru_unlink(k, state, ends)
                _lru_push(k, state, ends)
        else:
            counter[i] = 0.0
            node_excess = 0
            node_last = now_ms
            excess = 0
            ok = True
            for _ in range(2):  # ngx_http_limit_req_expire(ctx, 1)
                h = ends[0]
                if h < 0 or not ng.can_expire(state[h].excess, state[h].last, now_ms,
                                              rate_milli, ms_cap):
                    break
                _lru_unlink(h, state, ends)
                state[h].known = False
            s.known = True
            s.excess = 0
            s.last = now_ms
            _lru_push(k, state, ends)
        allowed[i] = ok
        found[i] = excess if ok else 0
        if remaining is not None:
            now_t = ticks[i]
            remaining[i] = max(0, (burst_milli - s.excess) // 1000)
            retry_after[i] = 0.0 if ok else seconds_until(
                time[i], now_t, ng.retry_tick(now_t, node_excess, node_last, burst, rate_milli))


# ---------------------------------------------------------------- HAProxy http_req_rate


@njit(cache=CACHE)
def haproxy(time, ticks, key, state, period, expire, admits, allowed, counter, remaining,
            retry_after):
    """HAProxyRate: a stick-table entry per key (``tick``, ``curr``, ``prev``, ``touched``, all
    milliseconds but the counts), counted on every request (haproxy.step). A key not seen yet
    was touched at NO_TOUCH: expired at any time, so its first request starts it afresh, as
    the reference's. Entries are never deleted here: an expired one reads as a new one."""
    last = len(key) - 1  # the slice's last request (AHEAD)
    for i in range(len(ticks)):
        prefetch(state, key[min(i + AHEAD, last)])
        s = state[key[i]]
        now_t = ticks[i]
        now_ms = hp.ms_of(now_t)
        if now_ms - s.touched < expire:  # the rate as the request finds it
            counter[i] = hp.rate(s.tick, s.curr, s.prev, now_ms, period)
        else:
            counter[i] = 0.0
        _, ok, tick, curr, prev = hp.step(s.tick, s.curr, s.prev, s.touched, now_ms, period,
                                          expire, admits)
        s.tick = tick
        s.curr = curr
        s.prev = prev
        s.touched = now_ms
        allowed[i] = ok
        if remaining is not None:
            remaining[i] = base.window_remaining(hp.blend(curr, prev, tick + period - now_ms,
                                                          period), admits)
            retry_after[i] = 0.0 if ok else seconds_until(
                time[i], now_t, max(now_t, hp.wait_ms(tick, curr, prev, now_ms, period, expire,
                                                      admits) * hp.MS_TICKS))
