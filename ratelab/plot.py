"""One visual style for every figure in the suite.

Colours mean the same thing everywhere: arrivals grey, admitted green, rejected red, delayed /
queued amber, the limit a dashed black line, internal state (tokens, counters) blue.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.ticker import MaxNLocator

from .bursts import trailing_count

COLORS = {
    "arrivals": "#9e9e9e",
    "admitted": "#2e7d32",
    "rejected": "#c62828",
    "delayed": "#f9a825",
    "state": "#1565c0",
    "limit": "#212121",
    "estimate": "#6a1b9a",
}

#: Colours for series that are compared with each other (behaviours, strategies, parameters):
#: the Okabe-Ito palette, told apart by readers with any common colour-vision deficiency —
#: unlike neighbouring shades of one colour map.
SERIES = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")

STYLE = {
    "figure.figsize": (8.0, 3.2),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "legend.frameon": False,
    "font.size": 10,
    "legend.fontsize": 10,
}


def use_style() -> None:
    """Apply the suite's matplotlib style: text at 10 pt on PNGs of 110 dpi, light grid, no
    top/right spines."""
    mpl.rcParams.update(STYLE)


def limit_line(ax, limit: float, label: str = "limit") -> None:
    """Draw the limit as a dashed horizontal line on `ax`."""
    ax.axhline(limit, color=COLORS["limit"], linestyle="--", linewidth=1, label=label)


def nothing_to_show(ax, text: str) -> None:
    """Say on `ax` that it has nothing to show (the axes stay, 0 to 1), rather than leave a
    blank chart to be read as a broken one."""
    ax.set_ylim(0, 1)
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
            color=COLORS["limit"])


def finish_from_zero(fig, ax, top: float, nothing: str, *, whole: bool = False,
                     ncols: int = 1) -> None:
    """A report's figure finished: y from 0 to a little above `top` (on a linear axis; whole-
    number ticks if `whole`), or `nothing` said on the axes when `top` is 0; the legend under
    them, in `ncols` columns."""
    if top <= 0:
        nothing_to_show(ax, nothing)
    elif ax.get_yscale() == "linear":
        ax.set_ylim(0, top * 1.08)
        if whole:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(loc="outside lower center", ncols=ncols)


# ---------------------------------------------------------------- burst shapes


def decisions_timeline(ax, times, allowed, *, departures=None, title: str | None = None):
    """Arrivals, admitted and rejected requests on one timeline, as cumulative counts.

    A vertical jump is a burst; a slope is a rate. With `departures` (arrival + delay of the
    admitted requests, for shaping) a fourth, amber line shows when they are served.
    Returns `ax`.
    """
    times = np.asarray(times, dtype=float)
    allowed = np.asarray(allowed, dtype=bool)

    def cumulative(ts, color, label, **kw):
        ts = np.sort(ts)
        ax.step(np.concatenate([[times[0]] if len(times) else [], ts]),
                np.arange(0, len(ts) + 1)[: len(ts) + 1], where="post", color=color,
                label=f"{label} ({len(ts)})", **kw)

    cumulative(times, COLORS["arrivals"], "arrivals", linewidth=2.5)
    cumulative(times[allowed], COLORS["admitted"], "admitted", linewidth=1.8)
    cumulative(times[~allowed], COLORS["rejected"], "rejected", linewidth=1.2)
    if departures is not None:
        cumulative(np.asarray(departures, dtype=float), COLORS["delayed"], "served",
                   linewidth=1.5, linestyle=(0, (4, 2)))  # dashed: an admitted line beneath shows
    ax.set_xlabel("time (s)")
    ax.set_ylabel("requests so far")
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left")
    return ax


def state_over_time(ax, times, values, *, label: str, limit: float | None = None,
                    limit_label: str = "capacity", title: str | None = None):
    """An internal state (tokens, queue, window counter) over time, with its ceiling dashed.

    Returns `ax`.
    """
    ax.plot(times, values, color=COLORS["state"], linewidth=1.5, label=label)
    if limit is not None:
        limit_line(ax, limit, label=limit_label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(label)
    top = max(limit or 0.0, float(max(values, default=0.0)))
    ax.set_ylim(bottom=-0.03 * top)  # a state at 0 is drawn above the axis, not under it
    if title:
        ax.set_title(title)
    ax.legend(loc="upper right")
    return ax


def rolling_count(ax, times, window_s: float, limit: float, *, counter=None,
                  counter_label: str = "the limiter's own counter", title: str | None = None):
    """The trailing-window count of `times` at each of them, against the limit line.

    `counter` — (times, values) of the limiter's own count — is drawn beside it, so a window
    that the limiter thinks is within the limit and a trailing window that is not can be told
    apart at a glance. Returns `ax`.
    """
    times = np.sort(np.asarray(times, dtype=float))
    counts = trailing_count(times, window_s)
    ax.step(times, counts, where="post", color=COLORS["admitted"], linewidth=1.8,
            label=f"admitted in the trailing {window_s:g} s")
    if counter is not None:
        ax.step(counter[0], counter[1], where="post", color=COLORS["estimate"],
                linewidth=1.4, linestyle=(0, (4, 2)), label=counter_label)  # dashed: both show
    limit_line(ax, limit)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("requests")
    ax.set_ylim(bottom=-0.03 * max(limit, counts.max() if len(counts) else 0))  # 0 above the axis
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left")
    return ax
