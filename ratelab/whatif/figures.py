"""A what-if record drawn and tabled: the same figures and tables in notebook 10 and on the
page ``ratelab what-if --report`` writes (:mod:`ratelab.whatif.page`).

Every function takes the record :func:`ratelab.whatif.what_if` returns (``ratelab what-if
--json`` prints it, so a saved record draws the same), with the candidate policies side by
side: one colour each (:data:`ratelab.plot.SERIES`), in the order given. Figures are drawn in
the suite's style (:data:`ratelab.plot.STYLE`) whatever the caller's settings, on numeric time
and Retry-After axes (an hour or a second with nothing in it keeps its place). Tables hold
text, ready to read: counts with thousands separators, "-" where there is nothing (a policy
that limits no one has no worst minute and no Retry-After), never NaN.

    >>> record = what_if(trace, ["token-bucket rate=1 capacity=10",   # doctest: +SKIP
    ...                          "gcra rate=0.2 burst=20"])
    >>> fig = limited_by_hour(record)                                  # doctest: +SKIP
    >>> summary(record)                                                # doctest: +SKIP
"""

from __future__ import annotations

import functools
import math

import matplotlib as mpl
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ..plot import COLORS, SERIES, STYLE, finish_from_zero, nothing_to_show

__all__ = ["limited_by_hour", "backend_by_hour", "retry_after", "summary", "top_clients",
           "worst_minute", "backend", "retry_after_stats", "when"]

DATES_FROM_S = 1e8
"""Times from this many seconds on (March 1973) are dates, as a log's are; smaller ones are
seconds from 0 (a generated trace), drawn and written as such."""

MAX_BARS = 240
"""Above this many bars (hours times policies) a by-hour figure draws each policy as a step
line instead: bars would be under two pixels wide."""

RETRY_AFTER_BINS = 60
"""At most this many Retry-After bars per policy; longer Retry-Afters are binned, each bin
the shortest of :data:`BIN_S` that needs no more bins than this."""

BIN_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
         86400)
"""Widths of a Retry-After bin a reader counts in (seconds, minutes, hours, a day)."""

DASHES = ("-", (0, (5, 2)), (0, (2, 1.5)), (0, (6, 2, 1.5, 2)), (0, (1, 1)))
"""Line styles of the policies' lines, so that lines drawn on top of each other still show."""


# ---------------------------------------------------------------- reading a record


def when(s: float | None, *, seconds: bool = False) -> str:
    """An instant of the record: a UTC date and time to the minute (`seconds`: to the second)
    for a date, else seconds from 0; "-" for none."""
    if s is None:
        return "-"
    if s < DATES_FROM_S:
        return f"{s:,.0f} s"
    text = str(np.datetime64(int(s), "s")).replace("T", " ")
    return (text if seconds else text[:-3]) + " UTC"


def _dates(record: dict) -> bool:
    return record["first_s"] is not None and record["first_s"] >= DATES_FROM_S


def _count(n) -> str:
    return "-" if n is None else f"{n:,}"


def _pct(x) -> str:
    return "-" if x is None else f"{x:.3g}%"


def _color(i: int) -> str:
    return SERIES[i % len(SERIES)]


# ---------------------------------------------------------------- figures


def _styled(draw):
    """`draw`, run in the suite's style (every text, tick and line it makes)."""
    @functools.wraps(draw)
    def styled(*args, **kwargs):
        with mpl.rc_context(STYLE):
            return draw(*args, **kwargs)
    return styled


def _figure(rows: int):
    """A figure and its axes, room left under them for a legend of `rows` lines."""
    return plt.subplots(figsize=(8.0, 3.0 + 0.22 * rows), layout="constrained")


def _hour_axis(record: dict):
    """(x of each hour's start, an hour in x's units, a function that labels the x axis)."""
    starts = np.array([h["hour_start_s"] for h in record["policies"][0]["by_hour"]], float)
    if _dates(record):
        def label(ax):
            locator = mdates.AutoDateLocator(minticks=3, maxticks=9)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
            ax.set_xlabel("hour (UTC)")
        return mdates.date2num(starts.astype("datetime64[s]")), 1.0 / 24.0, label

    def label(ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("hours from 0 s")
    return starts / 3600.0, 1.0, label


def _hourly(ax, x, hour: float, values: list[np.ndarray], labels: list[str], bars: bool):
    """Each policy's `values` per hour: grouped bars inside each hour, or step lines."""
    n = len(values)
    for i, (y, label) in enumerate(zip(values, labels)):
        if bars:
            width = 0.85 * hour / n
            ax.bar(x + 0.075 * hour + (i + 0.5) * width, y, width=width, color=_color(i),
                   label=label)
        else:
            ax.step(np.append(x, x[-1] + hour), np.append(y, y[-1]), where="post",
                    color=_color(i), linestyle=DASHES[i % len(DASHES)], linewidth=1.5,
                    label=label)


@_styled
def limited_by_hour(record: dict):
    """Requests each policy would have limited, per calendar hour (a figure): grouped bars,
    one colour per policy, each inside the hour it counts (step lines for many hours)."""
    pols = record["policies"]
    fig, ax = _figure(len(pols))
    if not record["requests"]:
        nothing_to_show(ax, "no requests")
        return fig
    x, hour, label = _hour_axis(record)
    values = [np.array([h["requests_limited"] for h in p["by_hour"]]) for p in pols]
    labels = [f"{p['policy']} ({p['requests_limited']:,} in all)" for p in pols]
    _hourly(ax, x, hour, values, labels, bars=len(x) * len(pols) <= MAX_BARS)
    label(ax)
    ax.set_xlim(x[0], x[-1] + hour)
    ax.set_ylabel("requests limited")
    ax.set_title("limited requests by hour")
    finish_from_zero(fig, ax, max(v.max() for v in values), "no request limited by any policy",
                     whole=True)
    return fig


@_styled
def backend_by_hour(record: dict):
    """What the backend would have received: the busiest second of each calendar hour, as
    offered (grey, thick) and as each policy admits it (at each request's departure)."""
    pols = record["policies"]
    fig, ax = _figure(len(pols) + 1)
    if not record["requests"]:
        nothing_to_show(ax, "no requests")
        return fig
    x, hour, label = _hour_axis(record)
    edges = np.append(x, x[-1] + hour)
    offered = np.array([h["peak_per_second"] for h in pols[0]["by_hour"]])
    ax.step(edges, np.append(offered, offered[-1]), where="post", color=COLORS["arrivals"],
            linewidth=4, label=f"offered (busiest second: "
                               f"{record['offered']['peak_per_second']:,})")
    for i, p in enumerate(pols):
        y = np.array([h["peak_per_second_admitted"] for h in p["by_hour"]])
        ax.step(edges, np.append(y, y[-1]), where="post", color=_color(i), linewidth=1.5,
                linestyle=DASHES[i % len(DASHES)],
                label=f"{p['policy']}: admitted (busiest second: "
                      f"{p['backend']['peak_per_second']:,})")
    label(ax)
    ax.set_xlim(x[0], x[-1] + hour)
    ax.set_ylabel("requests in its busiest second")
    ax.set_title("what the backend would have received, hour by hour")
    finish_from_zero(fig, ax, float(offered.max()), "no requests", whole=True)
    return fig


@_styled
def retry_after(record: dict):
    """The Retry-After each policy's 429s would have carried (a figure): how many 429s said
    each whole number of seconds, on a numeric axis from 0, grouped bars per policy (binned
    in bins of whole seconds, minutes or hours where the longest is over
    :data:`RETRY_AFTER_BINS` s)."""
    pols = record["policies"]
    fig, ax = _figure(len(pols))
    hists = [{h["retry_after_s"]: h["responses_429"] for h in p["retry_after"]["histogram"]}
             for p in pols]
    longest = max((max(h) for h in hists if h), default=0)
    ax.set_title("Retry-After sent")
    ax.set_ylabel("429 responses")
    if not longest:
        ax.set_xlabel("Retry-After (s)")
        ax.set_xlim(0, 10)
        for i, p in enumerate(pols):  # an empty bar each: the legend still names the policy
            ax.bar([0.0], [0.0], width=0.5, color=_color(i), label=f"{p['policy']} (no 429s)")
        finish_from_zero(fig, ax, 0, "no 429s from any policy", whole=True)
        return fig
    need = longest / RETRY_AFTER_BINS
    step = next((b for b in BIN_S if b >= need), 86400 * math.ceil(need / 86400))
    bins = math.ceil(longest / step)
    width = 0.85 * step / len(pols)
    top = 0
    for i, (p, hist) in enumerate(zip(pols, hists)):
        counts = np.zeros(bins, np.int64)  # bin k: step*k + 1 ... step*(k + 1) seconds
        for v, n in hist.items():
            counts[(v - 1) // step] += n
        starts = np.arange(bins) * step + 0.5  # the bin's left edge on the axis
        shown = counts > 0
        n429 = p["retry_after"]["responses_429"]
        ax.bar(starts[shown] + 0.075 * step + (i + 0.5) * width, counts[shown], width=width,
               color=_color(i),
               label=f"{p['policy']} ({n429:,} 429s)" if n429 else f"{p['policy']} (no 429s)")
        top = max(top, int(counts.max()))
    ax.set_xlim(0, bins * step + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("Retry-After (s)" + (f", in bins of {step} s" if step > 1 else ""))
    finish_from_zero(fig, ax, top, "no 429s", whole=True)
    return fig


# ---------------------------------------------------------------- tables


def summary(record: dict) -> pd.DataFrame:
    """The policies side by side (one column each): requests and clients limited, the worst
    minute, the 429s and their Retry-After, the backend's busiest second and minute."""
    out = {}
    for p in record["policies"]:
        w, r, b = p["worst_minute"], p["retry_after"], p["backend"]
        out[p["policy"]] = {
            "requests limited": _count(p["requests_limited"]),
            "requests limited (%)": _pct(p["requests_limited_pct"]),
            "clients limited": _count(p["clients_limited"]),
            "clients limited (%)": _pct(p["clients_limited_pct"]),
            "worst minute": "-" if w is None else when(w["minute_start_s"]),
            "limited in the worst minute": "0" if w is None else _count(w["requests_limited"]),
            "429s": _count(r["responses_429"]),
            "Retry-After median (s)": _count(r["p50_s"]),
            "longest Retry-After (s)": _count(r["max_s"]),
            "backend: busiest second": _count(b["peak_per_second"]),
            "backend: busiest minute": _count(b["peak_per_minute"]),
        }
    return pd.DataFrame(out)


def top_clients(record: dict, n: int = 10) -> pd.DataFrame:
    """The `n` clients each policy hit hardest (most requests limited first), one row each,
    indexed by (policy, client); a policy that limits no one has no row."""
    rows = {(p["policy"], c["client"]): {
        "requests": _count(c["requests"]), "requests limited": _count(c["requests_limited"]),
        "limited (%)": _pct(c["requests_limited_pct"])}
        for p in record["policies"] for c in p["top_clients"][:n]}
    index = pd.MultiIndex.from_tuples(list(rows), names=["policy", "client"])
    return pd.DataFrame(list(rows.values()), index=index,
                        columns=["requests", "requests limited", "limited (%)"])


def worst_minute(record: dict) -> pd.DataFrame:
    """Each policy's worst minute (the calendar minute with most requests limited): when,
    the requests in it, how many limited and from how many clients; "-" for none."""
    out = {}
    for p in record["policies"]:
        w = p["worst_minute"] or {}
        out[p["policy"]] = {"minute": when(w.get("minute_start_s")),
                            "requests": _count(w.get("requests")),
                            "requests limited": _count(w.get("requests_limited", 0)),
                            "clients limited": _count(w.get("clients_limited", 0))}
    return pd.DataFrame(out)


def backend(record: dict) -> pd.DataFrame:
    """What the backend would have received, as offered and under each policy: requests,
    the busiest calendar second and minute, and when they began."""
    o = record["offered"]
    out = {"offered": {"requests": _count(record["requests"]), "delayed (shaped)": "-",
                       **_peak_rows(o)}}
    for p in record["policies"]:
        b = p["backend"]
        out[p["policy"]] = {"requests": _count(b["requests_admitted"]),
                            "delayed (shaped)": _count(b["requests_delayed"]),
                            **_peak_rows(b)}
    return pd.DataFrame(out)


def _peak_rows(peaks: dict) -> dict:
    return {"busiest second": _count(peaks["peak_per_second"]),
            "busiest second began": when(peaks["peak_second_start_s"], seconds=True),
            "busiest minute": _count(peaks["peak_per_minute"]),
            "busiest minute began": when(peaks["peak_minute_start_s"])}


def retry_after_stats(record: dict) -> pd.DataFrame:
    """Each policy's 429s and their Retry-After in whole seconds: least, median, 90th and
    99th percentiles, mean, longest; "-" without a 429."""
    out = {}
    for p in record["policies"]:
        r = p["retry_after"]
        out[p["policy"]] = {"429s": _count(r["responses_429"]),
                            "least (s)": _count(r["min_s"]), "median (s)": _count(r["p50_s"]),
                            "90th percentile (s)": _count(r["p90_s"]),
                            "99th percentile (s)": _count(r["p99_s"]),
                            "mean (s)": "-" if r["mean_s"] is None else f"{r['mean_s']:.3g}",
                            "longest (s)": _count(r["max_s"])}
    return pd.DataFrame(out)
