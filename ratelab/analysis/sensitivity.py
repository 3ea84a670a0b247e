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

import numpy as np

from ..limiters.base import positive, whole
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
    import pandas as pd

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


def plot(df, *, column: str = "wrong (%)", floor: float = 1e-4):
    """Two panels (estimate, admission): `column` against load, one line per kind.

    Zeros are drawn at `floor` on the log axis (marked hollow), so "no error at all" stays
    visible.
    """
    import matplotlib.pyplot as plt

    from ..plot import use_style

    use_style()
    modes = list(dict.fromkeys(df["mode"]))
    fig, axes = plt.subplots(1, len(modes), figsize=(9, 3.4), sharey=True, squeeze=False)
    colors = dict(zip(KINDS, ("#1565c0", "#f9a825", "#2e7d32", "#c62828")))
    for ax, mode in zip(axes[0], modes):
        for kind, g in df[df["mode"] == mode].groupby("kind", sort=False):
            y = g[column].to_numpy(dtype=float)
            ax.plot(g["load"], np.maximum(y, floor), marker="o", ms=3,
                    color=colors.get(kind), label=kind)
            zero = y <= 0
            ax.plot(g["load"][zero], np.full(zero.sum(), floor), "o", ms=6, mfc="white",
                    color=colors.get(kind))
        ax.axvline(1.0, color="#212121", ls="--", lw=1)
        ax.set_yscale("log")
        ax.set_title(f"{mode} mode")
        ax.set_xlabel("mean rate / threshold")
    axes[0][0].set_ylabel(f"{column} (hollow: 0)")
    axes[0][-1].legend(loc="lower right")
    fig.tight_layout()
    return fig
