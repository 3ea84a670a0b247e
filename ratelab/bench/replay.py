"""``ratelab bench``: decisions per second of the compiled replay, the reference, and `limits`.

The benchmark builds a seeded trace — by default 10 M requests from 100 K keys over an hour,
key popularity Zipf-like (the k-th busiest key sends in proportion to 1/k), times uniform — and
replays it through every registry algorithm:

* **compiled**: ``replay(engine="compiled")`` on the whole trace. Each kernel is compiled (or
  loaded from numba's cache) on a small warm-up replay first, so compile time is not counted;
  the figure is the best of ``--repeat`` runs, on one core.
* **reference**: ``replay(engine="reference")`` — the reference limiter's own ``allow()`` per
  request, plus the ``inspect()`` that reads its counter — on the first ``--slice`` requests.
  The compiled engine's result on the same slice is compared with it, request by request
  (column ``same``).
* **limits**: the `limits` library's memory storage (fixed window, moving window, sliding window
  counter) on the same slice, one ``hit(item, key)`` per request. `limits` reads the wall clock
  itself (``time.time()``), so it is driven as a real server would drive it: requests are fed
  as fast as it takes them and its windows see the current time, not the trace's timestamps.
  Its decisions therefore differ from ours (its share of admitted requests is reported); the
  work per request — one decision on a keyed counter or log — is the same.

Every limit is 100 requests per 60 s (token bucket and GCRA: 100/60 per s with a burst of
100; nginx: the same rate, burst 99; HAProxy's rule: `gt 100` per 60 s period). Decisions per second are counted per second of CPU time
of this process (``time.process_time``: one core, and immune to other programs taking turns on
a shared machine); the JSON output also has the wall-clock figures and the load average before
and after. Peak memory is the process's peak resident set size (``resource.getrusage``).
"""

from __future__ import annotations

import os
import resource
import sys
import time
from dataclasses import dataclass

import numpy as np

from ..limiters import make
from ..replay import replay
from ..traces import Trace

LIMIT, WINDOW_S = 100, 60.0
RATE_PER_S = LIMIT / WINDOW_S

# (label, registry name, params, the limits strategy doing the same work)
ALGORITHMS: list[tuple[str, str, dict, str | None]] = [
    ("token-bucket", "token-bucket", {"rate": RATE_PER_S, "capacity": LIMIT}, None),
    ("leaky-bucket/police", "leaky-bucket", {"rate": RATE_PER_S, "capacity": LIMIT}, None),
    ("leaky-bucket/shape", "leaky-bucket",
     {"rate": RATE_PER_S, "capacity": LIMIT, "mode": "shape"}, None),
    ("fixed-window", "fixed-window", {"limit": LIMIT, "window": WINDOW_S}, "fixed-window"),
    ("sliding-window-log", "sliding-window-log", {"limit": LIMIT, "window": WINDOW_S},
     "moving-window"),
    ("sliding-window-counter", "sliding-window-counter", {"limit": LIMIT, "window": WINDOW_S},
     "sliding-window-counter"),
    ("gcra", "gcra", {"rate": RATE_PER_S, "burst": LIMIT - 1}, None),
    ("nginx", "nginx", {"rate": RATE_PER_S, "burst": LIMIT - 1}, None),
    ("haproxy", "haproxy", {"period": WINDOW_S, "limit": LIMIT}, None),
]


def bench_trace(n_requests: int, n_keys: int, rng: np.random.Generator,
                duration_s: float | None = None) -> Trace:
    """`n_requests` from `n_keys` keys, Zipf-like popularity, uniform times, sorted.

    The duration defaults to an hour per 10 M requests (about 2,800 requests per second in
    all), so a smaller trace keeps the same load per key and window.
    """
    if duration_s is None:
        duration_s = 3600.0 * n_requests / 10_000_000
    time_s = np.sort(rng.uniform(0.0, duration_s, n_requests))
    weight = 1.0 / np.arange(1, n_keys + 1)
    rank = rng.choice(n_keys, size=n_requests, p=weight / weight.sum())
    ids = rng.permutation(n_keys).astype(np.int32)  # the busiest key is not key 0
    return Trace(time_s, ids[rank], key_names=[f"client-{i}" for i in range(n_keys)])


class Clock:
    """CPU seconds (this process) and wall seconds since it was made."""

    def __init__(self) -> None:
        self.cpu, self.wall = time.process_time(), time.perf_counter()

    def elapsed(self) -> tuple[float, float]:
        return time.process_time() - self.cpu, time.perf_counter() - self.wall


@dataclass
class Row:
    """One algorithm's figures (decisions per CPU second; None where not measured)."""

    algorithm: str
    compiled_per_s: float
    compiled_per_wall_s: float
    compile_s: float
    rejected_share: float
    reference_per_s: float | None = None
    reference_per_wall_s: float | None = None
    same: bool | None = None
    limits_strategy: str | None = None
    limits_per_s: float | None = None
    limits_per_wall_s: float | None = None
    limits_allowed_share: float | None = None

    @property
    def vs_reference(self) -> float | None:
        return self.compiled_per_s / self.reference_per_s if self.reference_per_s else None

    @property
    def vs_limits(self) -> float | None:
        return self.compiled_per_s / self.limits_per_s if self.limits_per_s else None

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["vs_reference"] = self.vs_reference
        d["vs_limits"] = self.vs_limits
        return d


def peak_rss_mb() -> float:
    """The process's peak resident set size so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


def time_compiled(limiter, trace: Trace, repeat: int) -> tuple[float, float, float, object]:
    """(best CPU s, best wall s over `repeat` replays, wall s of the warm-up, a result)."""
    clock = Clock()
    replay(limiter, trace.head(10_000), progress=False)  # compile or load from cache
    warm = clock.elapsed()[1]
    best_cpu = best_wall = float("inf")
    result = None
    for _ in range(repeat):
        result = None  # free the previous result's arrays first
        clock = Clock()
        result = replay(limiter, trace, progress=False)
        cpu, wall = clock.elapsed()
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    return best_cpu, best_wall, warm, result


def time_limits(strategy: str, keys: list[str]) -> tuple[float, float, float]:
    """(decisions per CPU s, per wall s, share admitted) of `limits`' memory storage."""
    # limits is the bench extra, optional: imported only when it is timed
    from limits import RateLimitItemPerMinute
    from limits.storage import MemoryStorage
    from limits.strategies import (FixedWindowRateLimiter, MovingWindowRateLimiter,
                                   SlidingWindowCounterRateLimiter)

    cls = {"fixed-window": FixedWindowRateLimiter, "moving-window": MovingWindowRateLimiter,
           "sliding-window-counter": SlidingWindowCounterRateLimiter}[strategy]
    storage = MemoryStorage()
    limiter, item = cls(storage), RateLimitItemPerMinute(LIMIT)
    hit = limiter.hit
    clock = Clock()
    allowed = sum(1 for k in keys if hit(item, k))  # hit() reads time.time() itself
    cpu, wall = clock.elapsed()
    storage.timer.cancel()
    return len(keys) / cpu, len(keys) / wall, allowed / max(1, len(keys))


def run(n_requests: int, n_keys: int, slice_n: int, seed: int, repeat: int,
        with_reference: bool = True, with_limits: bool = True, log=print) -> dict:
    """Build the trace, time every engine, and return the figures as a dict."""
    load_before = os.getloadavg()
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    trace = bench_trace(n_requests, n_keys, rng)
    log(f"trace: {len(trace):,} requests, {trace.n_keys:,} keys, {trace.duration:,.0f} s "
        f"(built in {time.perf_counter() - t0:.1f} s)")
    part = trace.head(min(slice_n, len(trace)))
    keys = [str(k) for k in part.key.tolist()] if with_limits else []
    rows = []
    for label, name, params, strategy in ALGORITHMS:
        limiter = make(name, **params)
        cpu, wall, warm, result = time_compiled(limiter, trace, repeat)
        row = Row(label, len(trace) / cpu, len(trace) / wall, warm,
                  result.n_rejected / max(1, len(trace)), limits_strategy=strategy)
        del result
        log(f"{label:24} compiled {row.compiled_per_s / 1e6:7.1f} M/s")
        rows.append(row)
    rss_compiled = peak_rss_mb()
    for row, (label, name, params, strategy) in zip(rows, ALGORITHMS):
        limiter = make(name, **params)
        if with_reference:
            clock = Clock()
            ref = replay(limiter, part, engine="reference", progress=False)
            cpu, wall = clock.elapsed()
            row.reference_per_s, row.reference_per_wall_s = len(part) / cpu, len(part) / wall
            row.same = replay(limiter, part, progress=False).same_as(ref)
            log(f"{label:24} reference {row.reference_per_s / 1e3:7.1f} k/s  same: {row.same}")
        if with_limits and strategy:
            row.limits_per_s, row.limits_per_wall_s, row.limits_allowed_share = \
                time_limits(strategy, keys)
            log(f"{label:24} limits {strategy} {row.limits_per_s / 1e3:7.1f} k/s")
    return {
        "requests": len(trace), "keys": trace.n_keys, "duration_s": trace.duration,
        "slice": len(part), "seed": seed, "repeat": repeat,
        "limit": LIMIT, "window_s": WINDOW_S,
        "results": [r.as_dict() for r in rows],
        "peak_rss_mb_after_compiled": rss_compiled,
        "peak_rss_mb": peak_rss_mb(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before[0],
        "load_average_after": os.getloadavg()[0],
    }


def table(figures: dict) -> str:
    """The figures as a plain-text table."""
    def num(x, scale, fmt):
        width = int(fmt.split(".")[0])
        return "-".rjust(width) if x is None else format(x / scale, fmt)

    lines = [
        f"{figures['requests']:,} requests, {figures['keys']:,} keys, "
        f"{figures['duration_s']:,.0f} s; limit {figures['limit']} per "
        f"{figures['window_s']:g} s; reference and limits on "
        f"the first {figures['slice']:,} requests; decisions per CPU second",
        "",
        f"{'algorithm':24} {'compiled M/s':>12} {'reference k/s':>13} {'x ref':>7} "
        f"{'same':>5}  {'limits strategy':24} {'limits k/s':>10} {'x limits':>8}",
    ]
    for r in figures["results"]:
        same = "-" if r["same"] is None else ("yes" if r["same"] else "NO")
        lines.append(
            f"{r['algorithm']:24} {num(r['compiled_per_s'], 1e6, '12.1f')} "
            f"{num(r['reference_per_s'], 1e3, '13.1f')} {num(r['vs_reference'], 1, '7.0f')} "
            f"{same:>5}  {r['limits_strategy'] or '-':24} {num(r['limits_per_s'], 1e3, '10.1f')} "
            f"{num(r['vs_limits'], 1, '8.0f')}")
    lines += [
        "",
        f"peak RSS: {figures['peak_rss_mb_after_compiled']:,.0f} MiB after the compiled "
        f"replays, {figures['peak_rss_mb']:,.0f} MiB in all; load average "
        f"{figures['load_average_before']:.2f} before, {figures['load_average_after']:.2f} "
        f"after, {figures['cpus']} CPUs",
    ]
    return "\n".join(lines)
