"""Worst-case arrival schedules: how far past its limit each algorithm can be pushed.

For a limit of L requests per window W, the figure of merit is the most *admitted* requests in
any trailing window (t - W, t]. Each schedule below is built to maximise it, then replayed
through the reference limiter (:mod:`ratelab.limiters`) and measured — the numbers are what
the reference does, not what the argument predicts. The arguments:

fixed window        L requests just before a boundary kW and L at kW: both windows admit all,
                    and (kW - W, kW] holds 2L. Bound 2L (no window can hold more than two
                    calendar windows' L each).
sliding log         exact: no trailing window ever holds more than L, whatever arrives.
                    The schedule is the fixed-window attack; the log admits L of the 2L.
sliding counter     L requests just before the end of window k (all admitted: window k - 1 is
                    empty), then a burst at the very end of window k + 1, at (k + 2)W - e:
                    there the previous window's L weigh L x e / W < 1, so the counter admits
                    L - 1 more, and (k + 2)W - e - W < (k + 1)W - e/2 keeps the first L inside
                    the trailing window: 2L - 1 in all. No schedule does better: each calendar
                    window admits at most L, and the last request of a full 2L would need the
                    previous window's weight to be exactly 0.
token bucket        a full bucket emptied at t0 (capacity C), then a request whenever a token
                    arrives: (t0 - e, t0 - e + W] holds C + floor(rate x (W - e)). Bound
                    C + rate x W (the bucket holds C at the window's start and gains rate x W).
gcra                the same decisions as a token bucket of capacity burst + 1, and the same
                    schedule: burst + 1 + rate x W is its bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..limiters import make
from ..limiters.base import positive, whole
from ..clock import ticks_array, window_ticks
from ..plot import COLORS, limit_line, use_style
from .kernels import peak_counts


@dataclass(frozen=True)
class Attack:
    """A schedule replayed through a reference limiter, and what it achieved.

    ``factor`` = ``admitted_max`` / ``nominal`` where nominal is what the algorithm promises
    per window (L; rate x W for the token bucket).
    """

    algorithm: str
    params: dict
    schedule: str
    window: float
    times: np.ndarray       # offered requests
    allowed: np.ndarray     # the reference's decisions
    admitted_max: int       # most admitted requests in any trailing window (t - W, t]
    window_end: float       # a t where (t - W, t] holds admitted_max
    nominal: float
    bound: float            # the analytic largest possible admitted_max

    @property
    def factor(self) -> float:
        return self.admitted_max / self.nominal

    def row(self) -> dict:
        return {"algorithm": self.algorithm, "schedule": self.schedule,
                "nominal per window": self.nominal, "bound": self.bound,
                "most admitted in a window": self.admitted_max,
                "x nominal": round(self.factor, 4),
                "window (s)": f"({self.window_end - self.window:g}, {self.window_end:g}]"}


def most_in_window(times: np.ndarray, window: float) -> tuple[int, float]:
    """The most of `times` (sorted) in any trailing window (t - W, t], and such a t."""
    times = np.ascontiguousarray(times, dtype=np.float64)
    if not len(times):
        return 0, float("nan")
    w = window_ticks(window)
    ticks = ticks_array(times)
    best = int(peak_counts(ticks, np.array([0, len(times)], np.int64), w)[0])
    lo = np.searchsorted(ticks, ticks - w, side="right")  # entries with t - entry >= W are out
    i = int(np.argmax(np.arange(len(times)) - lo + 1 == best))
    return best, float(times[i])


def replay(limiter, times: np.ndarray) -> np.ndarray:
    """The reference limiter's decision for each request of one key at `times`."""
    return np.array([limiter.allow("attacker", float(t)).allowed for t in times], dtype=bool)


def _attack(algorithm, params, schedule, window, times, nominal, bound) -> Attack:
    times = np.asarray(times, dtype=np.float64)
    allowed = replay(make(algorithm, **params), times)
    best, end = most_in_window(times[allowed], window)
    return Attack(algorithm, params, schedule, window, times, allowed, best, end, nominal,
                  bound)


def fixed_window(limit: int, window: float) -> Attack:
    """L requests in the last 1% of window 0, L at the first instant of window 1."""
    limit, window = whole("limit", limit), positive("window", window)
    eps = window / 100.0
    times = np.concatenate([window - eps + eps * np.arange(limit) / limit,
                            np.full(limit, window)])
    return _attack("fixed-window", {"limit": limit, "window": window},
                   "L just before a boundary, L at it", window, times, limit, 2 * limit)


def sliding_log(limit: int, window: float) -> Attack:
    """The fixed window's attack against the exact log: it admits only L."""
    a = fixed_window(limit, window)
    return _attack("sliding-window-log", {"limit": limit, "window": window},
                   "L just before a boundary, L at it", window, a.times, limit, limit)


def sliding_counter(limit: int, window: float) -> Attack:
    """L at the end of window 0, then 2L offered at the very end of window 1."""
    limit, window = whole("limit", limit), positive("window", window)
    eps = window / (10.0 * limit)  # previous window's weight L x eps / W = 0.1 < 1
    times = np.concatenate([np.full(limit, window - eps / 2), np.full(2 * limit, 2 * window - eps)])
    return _attack("sliding-window-counter", {"limit": limit, "window": window},
                   "L just before the end of a window, then a burst at the end of the next",
                   window, times, limit, 2 * limit - 1)


def token_bucket(capacity: int, rate: float, window: float) -> Attack:
    """Empty a full bucket at once, then take every token as it arrives (offered 4x rate)."""
    capacity = whole("capacity", capacity)
    rate, window = positive("rate", rate), positive("window", window)
    t0 = 1.0
    n = int(np.ceil(4 * rate * window)) + 1
    times = np.concatenate([np.full(capacity, t0), t0 + np.arange(1, n + 1) / (4 * rate)])
    return _attack("token-bucket", {"rate": rate, "capacity": capacity},
                   "empty the full bucket, then take each token as it comes", window, times,
                   rate * window, capacity + rate * window)


def gcra(burst: int, rate: float, window: float) -> Attack:
    """The token bucket's schedule against GCRA (burst + 1 at once, then one per period)."""
    burst = whole("burst", burst, minimum=0)
    a = token_bucket(burst + 1, rate, window)
    return _attack("gcra", {"rate": a.params["rate"], "burst": burst},
                   "take the whole burst, then each request as soon as the TAT allows",
                   window, a.times, a.nominal, a.bound)


def all_attacks(limit: int = 10, window: float = 60.0, capacity: int | None = None
                ) -> list[Attack]:
    """The schedules at one limit; token bucket and GCRA at rate L / W, capacity L."""
    capacity = limit if capacity is None else capacity
    return [fixed_window(limit, window), sliding_log(limit, window),
            sliding_counter(limit, window), token_bucket(capacity, limit / window, window),
            gcra(capacity - 1, limit / window, window)]


def table(attacks) -> pd.DataFrame:
    """One row per attack: what was promised, the bound, what the reference admitted."""
    return pd.DataFrame([a.row() for a in attacks]).set_index("algorithm")


def counter_two_bursts(limit: int, window: float, n: int = 21) -> np.ndarray:
    """Most admitted in a window by a sliding counter, over two-burst schedules.

    Burst 1 (L requests) at fraction a of window 0, burst 2 (2L offered) at fraction b of
    window 1, for a, b on an n x n grid of [0, 1) (b's last point just before the window's
    end). Entry [i, j] is the measured most-in-a-window for (a_i, b_j): the landscape the
    sliding-counter schedule sits at the top corner of.
    """
    limit, window = whole("limit", limit), positive("window", window)
    grid = np.linspace(0.0, 1.0, n)
    grid[-1] = 1.0 - 1.0 / (10.0 * limit)
    out = np.zeros((n, n), dtype=np.int64)
    for i, a in enumerate(grid):
        for j, b in enumerate(grid):
            times = np.concatenate([np.full(limit, a * window),
                                    np.full(2 * limit, (1.0 + b) * window)])
            allowed = replay(make("sliding-window-counter", limit=limit, window=window), times)
            out[i, j] = most_in_window(times[allowed], window)[0]
    return out


def trailing_count(admitted: np.ndarray, grid: np.ndarray, window: float) -> np.ndarray:
    """How many of `admitted` (sorted) lie in (t - W, t] for each t of `grid`."""
    return (np.searchsorted(admitted, grid, side="right")
            - np.searchsorted(admitted, grid - window, side="right"))


def peak_span(admitted: np.ndarray, window: float, end: float) -> tuple[float, float]:
    """The instants around `end` during which (t - W, t] holds its most: from the request that
    filled it to the first one that leaves it."""
    entering = admitted[admitted <= end].max()
    leaving = admitted[admitted > end - window].min() + window
    return float(entering), float(leaving)


ZOOM_BELOW = 0.02
"""A peak shorter than this share of its panel's time axis gets a zoomed inset."""


def plot(attacks, *, points: int = 2000):
    """One panel per attack: admitted requests in the trailing window (t - W, t] over time.

    Arrivals are marked grey along the bottom (admitted ones green); the dashed line is the
    nominal limit per window, the dotted one the analytic bound, the shaded span the fullest
    window. Panels share the count axis, so the attacks compare at a glance. A peak too brief
    to see at the panel's scale (the sliding counter's lasts a fraction of a second in a
    minute) is drawn again in an inset, zoomed on its span.
    """
    use_style()
    top = max(a.bound for a in attacks)
    fig, axes = plt.subplots(len(attacks), 1, figsize=(8, 2.1 * len(attacks)), squeeze=False,
                             sharey=True)
    for ax, a in zip(axes[:, 0], attacks):
        admitted = a.times[a.allowed]
        lo = min(a.times.min(), a.window_end - a.window) - 0.1 * a.window
        hi = max(a.times.max(), a.window_end) + 0.25 * a.window
        grid = np.union1d(np.linspace(lo, hi, points), admitted)  # the steps, exactly
        ax.step(grid, trailing_count(admitted, grid, a.window), where="post",
                color=COLORS["state"], lw=1.2, label="admitted in (t - W, t]")
        limit_line(ax, a.nominal, "nominal")
        ax.axhline(a.bound, color=COLORS["limit"], ls=":", lw=1, label="bound")
        ax.plot(a.times, np.full(len(a.times), -0.06 * top), "|", color=COLORS["arrivals"],
                ms=8, label="request sent")
        ax.plot(admitted, np.full(len(admitted), -0.06 * top), "|",
                color=COLORS["admitted"], ms=8, label="request admitted")
        ax.axvspan(a.window_end - a.window, a.window_end, color=COLORS["rejected"], alpha=0.08,
                   label="the fullest window")
        ax.set_title(f"{a.algorithm}: {a.admitted_max} admitted in one window "
                     f"({a.factor:.3g}x nominal)", loc="left")
        ax.set_ylim(-0.14 * top, 1.15 * top)
        ax.set_ylabel("requests")
        start, end = peak_span(admitted, a.window, a.window_end)
        if end - start < ZOOM_BELOW * (hi - lo):
            _zoom(ax, admitted, a, start, end, top)
    axes[-1, 0].set_xlabel("time (s)")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper center", ncol=3)
    return fig


def _zoom(ax, admitted, a: Attack, start: float, end: float, top: float) -> None:
    """An inset on `ax` showing the trailing count from a little before `start` to a little
    after `end`, with the bound, and the span it magnifies marked on `ax`."""
    width = end - start
    zlo, zhi = start - 1.5 * width, end + 1.5 * width
    grid = np.union1d(np.linspace(zlo, zhi, 200), admitted[(admitted >= zlo) & (admitted <= zhi)])
    zoom = ax.inset_axes([0.3, 0.5, 0.34, 0.44])
    zoom.step(grid, trailing_count(admitted, grid, a.window), where="post",
              color=COLORS["state"], lw=1.2)
    zoom.axhline(a.bound, color=COLORS["limit"], ls=":", lw=1)
    zoom.set(xlim=(zlo, zhi), ylim=(a.nominal - 0.3 * top, a.bound + 0.15 * top))
    zoom.set_xticks([start, end], [f"{start:g} s", f"{end:g} s"])
    zoom.set_yticks([a.nominal, a.admitted_max])
    zoom.tick_params(labelsize=9)
    zoom.text(0.03, 0.06, f"zoomed: {a.admitted_max} for {width:.2g} s", transform=zoom.transAxes,
              ha="left", va="bottom", fontsize=10)
    ax.indicate_inset_zoom(zoom, edgecolor=COLORS["limit"])
