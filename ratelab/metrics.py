"""What a trace, or a limiter's decisions on it, look like from the outside.

* :func:`max_in_window` — the most requests in any trailing window (t − w, t], and where;
* :func:`max_in_window_per_key` — the same for every key, as a DataFrame;
* :func:`rolling_count` — the count in the trailing window at many instants, for plots;
* :func:`window_counts` — counts per calendar window [kW, (k+1)W), as a fixed window sees them;
* :func:`spacing` — the gaps between successive departures (arrival + delay), overall or per key;
* :func:`per_key_summary` — one row per key: requests, admitted, rates, gaps, peak window.

Windows follow the limiters exactly: times and windows are taken to whole microseconds (ticks,
``ratelab.clock``), and a request at tick s is inside the trailing window that ends at
tick t when t − w < s <= t (``sliding_log.has_left``), as the sliding log decides it; calendar
windows are ``fixed_window.index_of``. Arguments take a Trace or a sorted array of times; ``allowed`` (a mask,
e.g. a replay's decisions) restricts the count to admitted requests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .limiters.base import positive
from .clock import TICKS_PER_S, ticks_array, window_ticks
from .kernel_cache import watch_limiters
from .limiters.fixed_window import index_of
from .limiters.sliding_log import has_left
from .traces.trace import Trace

__all__ = ["WindowMax", "max_in_window", "max_in_window_per_key", "rolling_count",
           "window_counts", "spacing", "per_key_summary", "trailing_start"]


# ---------------------------------------------------------------- inputs


def _columns(data, allowed=None, weights=None):
    """(time, key or None, weights or None) of the requests selected by `allowed`."""
    if isinstance(data, Trace):
        time, key = data.time, data.key
    else:
        time, key = np.asarray(data, dtype=np.float64), None
        if time.ndim != 1:
            raise ValueError(f"times must be 1-D, got shape {time.shape}")
        if len(time) and not np.isfinite(time).all():
            raise ValueError("times must be finite")
        if np.any(np.diff(time) < 0):
            raise ValueError("times must be sorted (Trace.from_arrays(..., sort=True) sorts)")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != time.shape:
            raise ValueError(f"weights must have one value per request ({len(time)}), "
                             f"got shape {weights.shape}")
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        if allowed.shape != time.shape:
            raise ValueError(f"allowed must have one value per request ({len(time)}), "
                             f"got shape {allowed.shape}")
        time = time[allowed]
        key = None if key is None else key[allowed]
        weights = None if weights is None else weights[allowed]
    return time, key, weights


def trailing_start(time: np.ndarray, window_s: float, group: np.ndarray | None = None):
    """For each request i, the first index j whose request is inside (time[i] − w, time[i]].

    `time` must be sorted; with `group`, the arrays must be sorted by (group, time) and j stays
    inside i's group. Requests j..i are exactly those in the trailing window ending at time[i].
    One two-pointer pass (compiled with numba on first use).
    """
    ticks = ticks_array(time)
    w = window_ticks(window_s, "window_s")
    if group is None:
        return _two_pointer(ticks, np.zeros(1, np.int32), w, False)
    group = np.ascontiguousarray(group, dtype=np.int32)
    return _two_pointer(ticks, group, w, True)


def _compiled(fn):
    """`fn` compiled by numba the first time it is called (so importing ratelab stays quick)."""
    compiled = None

    def call(*args):
        nonlocal compiled
        if compiled is None:
            # numba, compiled on first call: import ratelab stays quick
            from numba import njit
            from numba.extending import register_jitable

            cache = watch_limiters()
            register_jitable(has_left)
            compiled = njit(cache=cache, nogil=True)(fn)
        return compiled(*args)

    call.__doc__ = fn.__doc__
    return call


@_compiled
def _two_pointer(ticks, group, window, grouped):
    """Left ends j[i] of the trailing windows (ticks); the left pointer only moves forward."""
    n = len(ticks)
    j = np.empty(n, dtype=np.int64)
    left = 0
    for i in range(n):
        if grouped and i > 0 and group[i] != group[i - 1]:
            left = i  # a new group starts: its window cannot reach back into the last one
        while has_left(ticks[left], ticks[i], window):  # as the sliding log decides it
            left += 1
        j[i] = left
    return j


def _window_sums(time, window_s, weights, group=None):
    """Count (or weight) in the trailing window ending at each request, and its first index."""
    j = trailing_start(time, window_s, group)
    i = np.arange(len(time))
    if weights is None:
        return i + 1 - j, j
    c = np.concatenate(([0.0], np.cumsum(weights)))
    return c[i + 1] - c[j], j


# ---------------------------------------------------------------- the peak window


@dataclass(frozen=True)
class WindowMax:
    """The busiest trailing window: `count` requests in (end_s − window_s, end_s].

    first, last  indices (in the times given, after `allowed`) of its first and last requests
    """

    count: float
    window_s: float
    end_s: float
    first: int
    last: int

    @property
    def start_s(self) -> float:
        """The window's open left end: end_s − window_s (not itself inside)."""
        return self.end_s - self.window_s

    def __str__(self) -> str:
        text = (f"{self.count:.10g} requests in ({self.start_s:.10g}, {self.end_s:.10g}] "
                f"(window {self.window_s:.10g} s)")
        if self.end_s >= 1e8:  # seconds since the epoch (a recorded log): say when, too
            text += f", ending {np.datetime64(round(self.end_s * 1e3), 'ms')} UTC"
        return text


def max_in_window(data, window_s: float, *, allowed=None, weights=None) -> WindowMax:
    """The most requests (or `weights`) in any trailing window of `window_s` s, and where.

    `data` is a Trace or sorted times; every key counts together. The busiest window always
    ends on a request; among equal peaks the earliest is given. No requests: count 0.
    """
    w = positive("window_s", window_s)
    time, _, weights = _columns(data, allowed, weights)
    if len(time) == 0:
        return WindowMax(0, w, float("nan"), 0, -1)
    sums, j = _window_sums(time, w, weights)
    i = int(np.argmax(sums))
    count = int(sums[i]) if weights is None else float(sums[i])
    return WindowMax(count, w, float(time[i]), int(j[i]), i)


def _key_major(trace: Trace, allowed, weights):
    time, key, weights = _columns(trace, allowed, weights)
    order = np.argsort(key, kind="stable")  # by key, in time order within each key
    return time[order], key[order], None if weights is None else weights[order], order


def max_in_window_per_key(trace: Trace, window_s: float, *, allowed=None, weights=None):
    """Per key: the most of its requests in any trailing window of `window_s`, and when.

    A DataFrame indexed by key with columns name, max_in_window, end_s (the window's right
    end; the earliest such), for the keys that have requests (after `allowed`).
    """
    import pandas as pd  # ~0.3 s: only the functions that return a Series need it

    w = positive("window_s", window_s)
    time, key, weights, _ = _key_major(trace, allowed, weights)
    sums, _ = _window_sums(time, w, weights, key)
    df = pd.DataFrame({"key": key, "sum": sums, "end_s": time})
    best = df.loc[df.groupby("key", sort=True)["sum"].idxmax()].set_index("key")
    out = pd.DataFrame({"name": [trace.name_of(k) for k in best.index],
                        "max_in_window": best["sum"].to_numpy(),
                        "end_s": best["end_s"].to_numpy()}, index=best.index)
    if weights is None:
        out["max_in_window"] = out["max_in_window"].astype(np.int64)
    return out


# ---------------------------------------------------------------- series for plots


def rolling_count(data, window_s: float, *, at=None, step_s: float | None = None,
                  allowed=None, weights=None):
    """The count (or weight) in the trailing window (t − w, t] at each instant t, as a Series.

    `at` gives the instants; otherwise a grid every `step_s` (default window_s / 10) from the
    first request to the last. Every key counts together.
    """
    import pandas as pd  # ~0.3 s: only the functions that return a Series need it

    w = positive("window_s", window_s)
    time, _, weights = _columns(data, allowed, weights)
    if at is None:
        step = w / 10 if step_s is None else positive("step_s", step_s)
        if len(time) == 0:
            at = np.empty(0)
        else:
            at = time[0] + step * np.arange(int(np.floor((time[-1] - time[0]) / step)) + 1)
    at = np.asarray(at, dtype=np.float64)
    ticks, at_ticks, wt = ticks_array(time), ticks_array(at), window_ticks(w, "window_s")
    hi = np.searchsorted(ticks, at_ticks, side="right")
    lo = np.searchsorted(ticks, at_ticks - wt, side="right")  # at - s >= W: out
    if weights is None:
        values = hi - lo
    else:
        c = np.concatenate(([0.0], np.cumsum(weights)))
        values = c[hi] - c[lo]
    return pd.Series(values, index=pd.Index(at, name="time_s"),
                     name=f"in trailing {w:g} s")


def window_counts(data, window_s: float, *, allowed=None, weights=None):
    """Requests (or weight) per calendar window [kW, (k+1)W), as a Series indexed by k·W.

    Only windows holding requests appear.
    """
    import pandas as pd  # ~0.3 s: only the functions that return a Series need it

    w = positive("window_s", window_s)
    time, _, weights = _columns(data, allowed, weights)
    wt = window_ticks(w, "window_s")
    k = index_of(ticks_array(time), wt)  # calendar windows, as the fixed window counts them
    ks, inverse = np.unique(k, return_inverse=True)
    sums = np.bincount(inverse, weights=weights, minlength=len(ks))
    if weights is None:
        sums = sums.astype(np.int64)
    return pd.Series(sums, index=pd.Index(ks * wt / TICKS_PER_S, name="window_start_s"),
                     name=f"in window of {w:g} s")


# ---------------------------------------------------------------- spacing


def spacing(data, *, delay=None, allowed=None, per_key: bool = False) -> np.ndarray:
    """Gaps (s) between successive departures, departure = arrival + `delay` (0 if None).

    Over all requests together, or with ``per_key=True`` between successive departures of
    the same key (a Trace is needed then). A shaper's output shows here as even gaps.
    """
    if per_key and not isinstance(data, Trace):
        raise ValueError("per_key=True needs a Trace (it has the keys)")
    time, key, delay = _columns(data, allowed, delay)
    depart = time if delay is None else time + delay
    if not per_key:
        return np.diff(np.sort(depart, kind="stable"))
    order = np.lexsort((depart, key))
    d, k = depart[order], key[order]
    same = k[1:] == k[:-1]
    return np.diff(d)[same]


# ---------------------------------------------------------------- per-key table


def per_key_summary(trace: Trace, *, allowed=None, delay=None, window_s: float | None = None):
    """One row per key with requests: what it sent and, with `allowed`, what got through.

    Columns: name, requests, cost, first_s, last_s, rate_per_s ((requests − 1) / (last −
    first): one over the mean gap; NaN for a single request or a single instant), min_gap_s,
    median_gap_s; with `allowed`: admitted, rejected, rejected_frac; with `delay`:
    mean_delay_s, max_delay_s; with `window_s`: max_in_window (of the admitted requests when
    `allowed` is given). Sorted by requests, most first.
    """
    import pandas as pd  # ~0.3 s: only the functions that return a Series need it

    n = len(trace)
    df = pd.DataFrame({"key": trace.key, "time": trace.time, "cost": trace.costs})
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        if allowed.shape != (n,):
            raise ValueError(f"allowed must have one value per request ({n}), "
                             f"got shape {allowed.shape}")
        df["admitted"] = allowed
    if delay is not None:
        delay = np.asarray(delay, dtype=np.float64)
        if delay.shape != (n,):
            raise ValueError(f"delay must have one value per request ({n}), "
                             f"got shape {delay.shape}")
        df["delay"] = delay
    g = df.groupby("key", sort=True)
    out = pd.DataFrame({"requests": g.size(), "cost": g["cost"].sum(),
                        "first_s": g["time"].min(), "last_s": g["time"].max()})
    span = out["last_s"] - out["first_s"]
    out["rate_per_s"] = np.where(out["requests"] > 1, (out["requests"] - 1) / span.where(
        span > 0, np.nan), np.nan)
    order = np.argsort(trace.key, kind="stable")
    k, t = trace.key[order], trace.time[order]
    same = k[1:] == k[:-1]
    gaps = pd.Series(np.diff(t)[same]).groupby(k[1:][same])
    out["min_gap_s"] = gaps.min()
    out["median_gap_s"] = gaps.median()
    if allowed is not None:
        out["admitted"] = g["admitted"].sum().astype(np.int64)
        out["rejected"] = out["requests"] - out["admitted"]
        out["rejected_frac"] = out["rejected"] / out["requests"]
    if delay is not None:
        out["mean_delay_s"] = g["delay"].mean()
        out["max_delay_s"] = g["delay"].max()
    if window_s is not None:
        peak = max_in_window_per_key(trace, window_s, allowed=allowed)["max_in_window"]
        out["max_in_window"] = peak.reindex(out.index, fill_value=0).astype(np.int64)
    out.insert(0, "name", [trace.name_of(k) for k in out.index])
    out.index.name = "key"
    return out.sort_values("requests", ascending=False, kind="stable")
