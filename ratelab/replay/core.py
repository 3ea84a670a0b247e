"""replay(limiter, trace): every request of a trace through a limiter, decision by decision.

Two engines give the same answer:

* ``engine="reference"`` asks the reference limiter itself, one ``allow()`` per request — the
  specification, at Python speed;
* ``engine="compiled"`` (the default) runs a numba kernel per algorithm
  (:mod:`ratelab.replay.kernels`) that calls the reference's own scalar arithmetic over arrays,
  tens of millions of requests per second.

Both start from a fresh copy of the limiter (``limiter.clone()``): the limiter passed in gives
the algorithm and its parameters and is left untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..limiters import (GCRA, FixedWindow, HAProxyRate, LeakyBucket, Limiter,
                        NginxLimitReq, SlidingWindowCounter, SlidingWindowLog, TokenBucket)
from ..clock import MAX_TICKS, TICKS_PER_S, check_ticks, ticks_array
from ..limiters.leaky_bucket import MODES
from ..progress import bar
from ..traces import Trace

ENGINES = ("compiled", "reference")
CHUNK = 1 << 20  # requests per kernel call: the progress bar moves between calls
REFERENCE_CHUNK = 1 << 13

def counter_kind(limiter: Limiter) -> str:
    """The COUNTERS entry of `limiter` ("leaky-bucket/police", "gcra", ...)."""
    if isinstance(limiter, LeakyBucket):
        return f"leaky-bucket/{limiter.mode}"
    return limiter.name


# What `counter` holds, per algorithm: the limiter's own reading just before the request, the
# same number ``limiter.inspect(key, now)[field]`` reports at that instant. Each limiter
# declares it (its ``reports`` attribute); this table only gathers the declarations.
COUNTERS: dict[str, tuple[str, str]] = {
    **{cls.name: cls.reports for cls in (TokenBucket, FixedWindow, SlidingWindowLog,
                                         SlidingWindowCounter, GCRA, NginxLimitReq,
                                         HAProxyRate)},
    **{f"leaky-bucket/{mode}": LeakyBucket.REPORTS[mode] for mode in MODES},
}


@dataclass(frozen=True, eq=False)
class ReplayResult:
    """The decisions of one replay, one entry per request of the trace.

    allowed      bool, whether the request passed.
    delay        seconds an admitted request is held before it is served (leaky-bucket shaping
                 and nginx; 0 elsewhere and for rejected requests).
    counter      the limiter's own counter as the request found it — what the limiter
                 *reports*; see ``counter_name`` / ``counter_doc`` and ``COUNTERS``. What the
                 backend *experiences* is what passed: ``allowed`` (at ``time + delay``).
    remaining    whole requests of cost 1 still passing after this one (``details=True``).
    retry_after  seconds until a request of this cost would pass, 0 when allowed
                 (``details=True``).
    """

    allowed: np.ndarray
    delay: np.ndarray
    counter: np.ndarray
    counter_name: str
    counter_doc: str
    limiter: Limiter
    engine: str
    trace: Trace = field(repr=False)
    remaining: np.ndarray | None = None
    retry_after: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.allowed)

    @property
    def n_allowed(self) -> int:
        """How many requests passed."""
        return int(np.count_nonzero(self.allowed))

    @property
    def n_rejected(self) -> int:
        """How many requests were rejected."""
        return len(self) - self.n_allowed

    @property
    def departures(self) -> np.ndarray:
        """When each admitted request is served (time + delay), in trace order."""
        return self.trace.time[self.allowed] + self.delay[self.allowed]

    def same_as(self, other: "ReplayResult") -> bool:
        """Whether `other` made exactly the same decisions, delays and counter readings."""
        fields = ["allowed", "delay", "counter"]
        if self.remaining is not None and other.remaining is not None:
            fields += ["remaining", "retry_after"]
        return all(np.array_equal(getattr(self, f), getattr(other, f)) for f in fields)

    def to_dataframe(self):
        """The trace's columns with allowed, delay and counter (and details) beside them."""
        df = self.trace.to_dataframe()
        df["allowed"] = self.allowed
        df["delay"] = self.delay
        df[self.counter_name] = self.counter
        if self.remaining is not None:
            df["remaining"] = self.remaining
            df["retry_after"] = self.retry_after
        return df

    def __repr__(self) -> str:
        return (f"ReplayResult({self.limiter!r}, {len(self):,} requests, "
                f"{self.n_allowed:,} allowed, {self.n_rejected:,} rejected, "
                f"engine={self.engine!r})")


def replay(limiter: Limiter, trace: Trace, *, engine: str = "compiled", progress: bool = True,
           details: bool = False) -> ReplayResult:
    """The decision for every request of `trace` by a fresh copy of `limiter`.

    engine    "compiled" (numba kernels; default) or "reference" (the limiter's own allow()).
              Both give exactly the same result.
    progress  show a progress bar (tqdm.auto) when the replay takes over a second.
    details   also fill ``remaining`` and ``retry_after`` (more time and memory).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if not isinstance(limiter, Limiter):
        raise ValueError(f"limiter must be a ratelab limiter (see ratelab.make), got {limiter!r}")
    if not isinstance(trace, Trace):
        raise ValueError(f"trace must be a ratelab.traces.Trace, got {type(trace).__name__}")
    check_costs(limiter, trace)
    check_times(trace)
    name, doc = limiter.reports
    n = len(trace)
    out = {
        "allowed": np.zeros(n, dtype=np.bool_),
        "delay": np.zeros(n, dtype=np.float64),
        "counter": np.zeros(n, dtype=np.float64),
        "remaining": np.zeros(n if details else 0, dtype=np.int64),
        "retry_after": np.zeros(n if details else 0, dtype=np.float64),
    }
    run = _reference if engine == "reference" else _compiled
    chunk = REFERENCE_CHUNK if engine == "reference" else CHUNK
    with _bar(n, f"replay {counter_kind(limiter)}", progress) as bar:
        step = run(limiter.clone(), trace, out, details)
        for start in range(0, n, chunk):
            stop = min(n, start + chunk)
            step(start, stop)
            bar.update(stop - start)
    return ReplayResult(
        allowed=out["allowed"], delay=out["delay"], counter=out["counter"],
        counter_name=name, counter_doc=doc, limiter=limiter.clone(), engine=engine, trace=trace,
        remaining=out["remaining"] if details else None,
        retry_after=out["retry_after"] if details else None,
    )


def check_times(trace: Trace) -> None:
    """ValueError, as the reference raises it, when a time lies beyond what the limiters hold
    (+-2**62 microseconds).

    A Trace's times are sorted, so its first and last are its least and greatest, and the
    first time beyond the upper bound is found by bisection: no pass over the column (a min
    and a max of 10 M times cost about a tenth of a token-bucket replay).
    """
    limit = MAX_TICKS / TICKS_PER_S
    time = trace.time
    if len(time) and time[0] <= -limit:
        check_ticks(float(time[0]))
    if len(time) and time[-1] >= limit:
        check_ticks(float(time[np.searchsorted(time, limit)]))


def check_costs(limiter: Limiter, trace: Trace) -> None:
    """ValueError, as the reference raises it, when a request costs more than can ever pass."""
    if trace.cost is None:
        if len(trace) and 1.0 > limiter.max_cost:
            raise ValueError(f"cost=1 is above what {limiter.name} can ever admit "
                             f"({limiter.max_cost!r}): such a request would be rejected forever")
        return
    if isinstance(limiter, (NginxLimitReq, HAProxyRate)):  # requests, not costs: the kernel
        other = np.flatnonzero(trace.cost != 1.0)             # reads no cost
        if len(other):
            i = int(other[0])
            raise ValueError(f"cost[{i}]={float(trace.cost[i])!r}: {limiter.name} counts "
                             f"requests, one at a time (cost must be 1; {len(other):,} "
                             "requests differ)")
    over = np.flatnonzero(trace.cost > limiter.max_cost)
    if len(over):
        i = int(over[0])
        raise ValueError(f"cost[{i}]={float(trace.cost[i])!r} is above what {limiter.name} can "
                         f"ever admit ({limiter.max_cost!r}): such a request would be rejected "
                         f"forever ({len(over):,} requests like it)")


def _bar(total: int, desc: str, progress: bool):
    """A tqdm.auto bar that shows itself once the replay has run a second."""
    return bar(total, desc=desc, unit="req", unit_scale=True, progress=progress)


# ---------------------------------------------------------------- the reference engine


def _reference(lim: Limiter, trace: Trace, out: dict, details: bool) -> Callable[[int, int], None]:
    """A function replaying requests [start, stop) through the reference limiter `lim`.

    Each request is what ``lim.allow(key, time, cost)`` does, after the checks ``replay``
    has made for the whole trace (times sorted and in range, costs admissible): the limiter's
    own ``decide`` and ``commit``, preceded by its ``reading`` for the counter. The times
    are converted to ticks in one vectorised pass (``clock.ticks_array``, bit for bit
    ``to_ticks``).
    """
    field_name = lim.reports[0] or None
    times = trace.time.tolist()
    ticks = ticks_array(trace.time).tolist()
    keys = trace.key.tolist()
    costs = trace.cost.tolist() if trace.cost is not None else None
    allowed, delay, counter = out["allowed"], out["delay"], out["counter"]
    remaining, retry_after = out["remaining"], out["retry_after"]

    def step(start: int, stop: int) -> None:
        for i in range(start, stop):
            k, t, t_t = keys[i], times[i], ticks[i]
            if field_name is not None:  # the state as the request finds it
                counter[i] = lim.reading(k, t, t_t)[field_name]
            d, change = lim.decide(k, t, t_t, 1.0 if costs is None else costs[i])
            lim.commit(k, change, t, t_t)
            allowed[i] = d.allowed
            delay[i] = d.delay
            if details:
                remaining[i] = d.remaining
                retry_after[i] = d.retry_after

    return step


# ---------------------------------------------------------------- the compiled engine


def _compiled(lim: Limiter, trace: Trace, out: dict, details: bool) -> Callable[[int, int], None]:
    """A function replaying requests [start, stop) through the kernel for `lim`'s algorithm.

    Each call hands the kernel views of that slice of the columns (a kernel indexes from 0, so
    that numba knows no index is negative); the per-key state carries over between calls.
    """
    from . import kernels as K  # numba compiles them: imported when a replay first runs

    builder = _BUILDERS.get(type(lim))
    if builder is None:
        raise ValueError(f"no compiled kernel for {type(lim).__name__}; "
                         "use engine='reference'")
    ticks = np.empty(min(CHUNK, len(trace)), dtype=np.int64)  # one slice's times in ticks

    def views(a: int, b: int) -> tuple:
        """(time, ticks, key, cost), (allowed, counter), delay, (remaining, retry_after) of
        requests [a, b), their ticks converted into the one buffer: cost None without a cost
        column, remaining and retry_after None without details."""
        K.ticks_of(trace.time[a:b], ticks[:b - a])
        return ((trace.time[a:b], ticks[:b - a], trace.key[a:b],
                 None if trace.cost is None else trace.cost[a:b]),
                (out["allowed"][a:b], out["counter"][a:b]), out["delay"][a:b],
                (out["remaining"][a:b], out["retry_after"][a:b]) if details else (None, None))

    return builder(K, lim, trace, views)


def _token_bucket(K, lim: TokenBucket, trace, views):
    state = K.new_state(K.TOKEN_BUCKET, trace.n_keys, tokens=lim.capacity)  # full

    def step(a: int, b: int) -> None:
        common, outs, _, tail = views(a, b)
        K.token_bucket(*common, state, lim.rate, lim.capacity, *outs, *tail)
    return step


def _leaky_bucket(K, lim: LeakyBucket, trace, views):
    state = K.new_state(K.LEAKY_BUCKET, trace.n_keys)
    shape = lim.mode == "shape"

    def step(a: int, b: int) -> None:
        common, outs, delay, tail = views(a, b)
        K.leaky_bucket(*common, state, lim.rate, lim.capacity, shape, *outs, delay, *tail)
    return step


def _fixed_window(K, lim: FixedWindow, trace, views):
    state = K.new_state(K.FIXED_WINDOW, trace.n_keys)

    def step(a: int, b: int) -> None:
        common, outs, _, tail = views(a, b)
        K.fixed_window(*common, state, lim.limit, lim.window_ticks, lim.count_rejected, *outs,
                       *tail)
    return step


def _sliding_log(K, lim: SlidingWindowLog, trace, views):
    state = K.new_state(K.SLIDING_LOG, trace.n_keys)
    K.log_layout(trace.key, state)  # each key's stretch of the log
    log = np.empty(len(trace) + 1, dtype=np.int64)  # one slot more: see K.sliding_log
    log_cost = None if trace.cost is None else np.empty(len(trace) + 1, dtype=np.float64)

    def step(a: int, b: int) -> None:
        common, outs, _, tail = views(a, b)
        K.sliding_log(*common, state, log, log_cost, lim.limit, lim.window_ticks,
                      lim.count_rejected, *outs, *tail)
    return step


def _sliding_counter(K, lim: SlidingWindowCounter, trace, views):
    state = K.new_state(K.SLIDING_COUNTER, trace.n_keys)

    def step(a: int, b: int) -> None:
        common, outs, _, tail = views(a, b)
        K.sliding_counter(*common, state, lim.limit, lim.window_ticks, lim.count_rejected,
                          *outs, *tail)
    return step


def _gcra(K, lim: GCRA, trace, views):
    state = K.new_state(K.GCRA, trace.n_keys)

    def step(a: int, b: int) -> None:
        common, outs, _, tail = views(a, b)
        K.gcra(*common, state, lim.period_ticks, lim.tolerance_ticks, *outs, *tail)
    return step


def _nginx(K, lim: NginxLimitReq, trace, views):
    state = K.new_state(K.NGINX, trace.n_keys)
    ends = np.full(2, -1, dtype=np.int64)  # the LRU queue's oldest and newest key
    ms = np.empty(min(CHUNK, len(trace)), dtype=np.int64)  # one slice's milliseconds
    found = np.empty(min(CHUNK, len(trace)), dtype=np.int64)  # the excess each found

    def step(a: int, b: int) -> None:
        (time, ticks, key, _), outs, delay, tail = views(a, b)
        K.ms_of_ticks(ticks, ms[:b - a])
        K.nginx(time, ticks, ms[:b - a], key, state, ends, lim.rate_milli, lim.ms_cap,
                lim.burst, *outs, found[:b - a], *tail)
        K.nginx_delays(found[:b - a], delay, lim.delay, lim.nodelay, lim.rate_milli)
    return step


def _haproxy(K, lim: HAProxyRate, trace, views):
    state = K.new_state(K.HAPROXY, trace.n_keys)

    def step(a: int, b: int) -> None:
        (time, ticks, key, _), outs, _, tail = views(a, b)
        K.haproxy(time, ticks, key, state, lim.period_ms, lim.expire_ms, lim.admits, *outs,
                  *tail)
    return step


_BUILDERS = {
    TokenBucket: _token_bucket,
    LeakyBucket: _leaky_bucket,
    FixedWindow: _fixed_window,
    SlidingWindowLog: _sliding_log,
    SlidingWindowCounter: _sliding_counter,
    GCRA: _gcra,
    NginxLimitReq: _nginx,
    HAProxyRate: _haproxy,
}
