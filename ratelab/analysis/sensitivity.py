"""How the counter's error depends on the traffic: a sweep over source kinds and load.

Each point is a population of identical-kind sources at one *load* — mean rate as a share of
the threshold, rate / (limit / W) — built with :mod:`ratelab.traces.generators` and compared
with :func:`ratelab.analysis.tally` in both modes. Kinds:

poisson     independent arrivals at the mean rate (the friendliest case for the counter, whose
            estimate assumes the previous window's requests were spread evenly);
bursty      on/off: Poisson at 4x the mean rate while on (mean on W/2, mean off 3W/2);
periodic    one request every 1 / rate seconds, late by up to 10% of the period, random phase;
boundary    calendar-aligned bursts: each window's load x limit requests all arrive in the
            last 1/60 of the window, just before the boundary (cron jobs at :59, clients
            that wait for a fixed window to reset) — the timing the counter's "spread evenly"
            assumption gets most wrong.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..limiters.base import positive, whole
from ..plot import COLORS, SERIES, use_style
from ..traces import generators
from .error import tally

KINDS = ("poisson", "bursty", "periodic", "boundary")
LOADS = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)


def sources(kind: str, load: float, limit: float, window: float, n_sources: int,
            duration_s: float, rng: np.random.Generator):
    """A trace of `n_sources` sources of `kind` at mean rate load x limit / window."""
    rate = positive("load", load) * limit / window
    if kind == "poisson":
        return generators.poisson(rate, duration_s, rng, n_sources=n_sources)
    if kind == "bursty":
        on, off = window / 2, 3 * window / 2
        return generators.on_off(rate * (on + off) / on, on, off, duration_s, rng,
                                 n_sources=n_sources)
    if kind == "periodic":
        period = 1.0 / rate
        return generators.periodic(period, duration_s, rng, jitter_s=0.1 * period,
                                   n_sources=n_sources)
    if kind == "boundary":
        spread = window / 60
        per_tick = max(1, int(round(load * limit)))
        return generators.periodic(window, duration_s, rng, jitter_s=spread,
                                   phase_s=window - spread, per_tick=per_tick,
                                   n_sources=n_sources)
    raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def sweep(kinds=KINDS, loads=LOADS, *, limit: float = 20, window: float = 60.0,
          n_sources: int = 100, duration_s: float = 1800.0, seed: int = 0):
    """One row per (kind, load, mode): % wrong decisions, false allows/rejects, mean error.

    Seeded: point (kind i, load j) uses ``SeedSequence(seed, spawn_key=(i, j))``.
    """
    limit, window = positive("limit", limit), positive("window", window)
    n_sources = whole("n_sources", n_sources)
    rows = []
    for i, kind in enumerate(kinds):
        for j, load in enumerate(loads):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, j)))
            trace = sources(kind, load, limit, window, n_sources, duration_s, rng)
            t = tally(trace, limit, window, "both")
            for mode in t.modes:
                s = t.summary(mode)
                rows.append({"kind": kind, "load": load, "mode": mode,
                             "requests": s["requests"],
                             "wrong (%)": s["wrong decisions (%)"],
                             "false allows (%)": s["false allows (%)"],
                             "false rejects (%)": s["false rejects (%)"],
                             "mean error (%)": s["mean |estimate - real| / real (%)"],
                             "over": s["sources over the threshold"],
                             "false negatives":
                                 s["over the threshold, never limited (false negatives)"],
                             "false positives":
                                 s["limited, never over the threshold (false positives)"]})
    return pd.DataFrame(rows)


def plot(df, *, column: str = "wrong (%)"):
    """Two panels (estimate, admission): `column` against load, one line per kind.

    A log axis has no 0, so loads where a kind made no error at all are not drawn on it: they
    are marked in a strip of their own below each panel ("exactly 0"), one row per kind. A
    point with no drawn neighbour (a kind wrong at one load only, as periodic sources at the
    threshold in estimate mode) has no line leading to it, so it is drawn large and on top.
    """
    use_style()
    modes = list(dict.fromkeys(df["mode"]))
    fig, axes = plt.subplots(2, len(modes), figsize=(10, 4.6), sharex=True, sharey="row",
                             squeeze=False, gridspec_kw={"height_ratios": (4, 1.1)})
    colors = dict(zip(KINDS, SERIES))
    markers = dict(zip(KINDS, "os^D"))
    for col, mode in enumerate(modes):
        ax, strip = axes[0][col], axes[1][col]
        for row, (kind, g) in enumerate(df[df["mode"] == mode].groupby("kind", sort=False)):
            y = g[column].to_numpy(dtype=float)
            load = g["load"].to_numpy(dtype=float)
            some = y > 0
            ax.plot(load, np.where(some, y, np.nan), marker=markers.get(kind), ms=4,
                    color=colors.get(kind), label=kind)
            alone = some & ~np.r_[False, some[:-1]] & ~np.r_[some[1:], False]
            if alone.any():  # no line leads to it: drawn big, on top
                ax.plot(load[alone], y[alone], markers.get(kind, "o"), ms=9, mec="white",
                        color=colors.get(kind), zorder=4)
            strip.plot(load[~some], np.full((~some).sum(), row), markers.get(kind, "o"),
                       ms=5, mfc="white", color=colors.get(kind))
        for a in (ax, strip):
            a.axvline(1.0, color=COLORS["limit"], ls="--", lw=1,
                      label="mean rate = threshold" if a is ax else None)
        ax.set_yscale("log")
        ax.set_title(f"{mode} mode")
        strip.set_yticks(range(len(KINDS)), KINDS)
        strip.set_ylim(-0.7, len(KINDS) - 0.3)
        strip.set_xlabel("mean rate / threshold")
        strip.grid(False, axis="y")
    axes[0][0].set_ylabel(column)
    axes[1][0].set_ylabel("exactly 0", rotation=0, ha="right", va="center")
    axes[0][-1].legend(loc="lower right")
    fig.tight_layout()
    return fig
