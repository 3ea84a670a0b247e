"""The error analysis's record as one self-contained HTML page (``ratelab error-analysis
--report out.html``): the Cloudflare-style table of each limit, the wrong decisions and the
distribution of the counter's error drawn, and the load report (what was read from the log).

The figures take the record :func:`ratelab.analysis.stream.run_error_analysis` returns
(``--json`` prints it): a trace's, with a result per limit, or a synthetic population's or a
Parquet trace's, with one. They are drawn in the suite's style; the page is built by
:mod:`ratelab.page` (nothing fetched, readable on a phone and a desktop).

    >>> write_page(run_error_analysis(trace, window=60), "out.html")   # doctest: +SKIP
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from .. import __version__
from ..page import document, figure_html, paragraph, table_html, write
from ..plot import SERIES, STYLE, finish_from_zero
from ..traces.report import describe_html
from .error import formatted, record_table

SECTIONS = ("table", "wrong-decisions", "error-distribution", "load-report")
"""The page's sections, by anchor, in order (``out.html#table``)."""

STATISTICS = (("mean", "mean_relative_error_pct"), ("median", "p50_relative_error_pct"),
              ("99th percentile", "p99_relative_error_pct"),
              ("99.9th percentile", "p99_9_relative_error_pct"),
              ("largest", "max_relative_error_pct"))
"""The record's figures of |estimate - real| / real, by the name the figure gives them."""


def results(record: dict) -> list[tuple[str, dict]]:
    """(heading, figures) of each limit the record analysed: a trace's results, or the one
    limit of a synthetic population or a Parquet trace (figures: ``limit``, ``window_s``,
    ``modes``)."""
    if "results" not in record:
        return [(f"limit {record['limit']:g} per {record['window_s']:g} s", record)]
    out = []
    for r in record["results"]:
        head = f"limit {r['limit']:g} per {r['window_s']:g} s"
        if r["quantile"] is not None:
            head += f" (the {100 * r['quantile']:g}th percentile of per-source peaks)"
        out.append((head, r))
    return out


def _name(figures: dict) -> str:
    """A limit's short name: "limit 12", and the peak quantile that set it ("limit 12
    (p99.9)"), which tells apart two quantiles that gave the same limit."""
    q = figures.get("quantile")
    return f"limit {figures['limit']:g}" + ("" if q is None else f" (p{100 * q:g})")


def _series(record: dict):
    """(label, limit's index, mode, that mode's figures) of every limit and mode."""
    several = len(results(record)) > 1
    for i, (_, r) in enumerate(results(record)):
        for mode, fig in r["modes"].items():
            yield (f"{_name(r)}, {mode}" if several else mode), i, mode, fig


def wrong_decisions(record: dict):
    """Wrong decisions (% of requests) for each limit, a bar per mode: false allows
    (solid) under false rejects (hatched)."""
    with mpl.rc_context(STYLE):
        res = results(record)
        modes = list(res[0][1]["modes"])
        fig, ax = plt.subplots(figsize=(8.0, 3.4), layout="constrained")
        width = 0.8 / len(modes)
        top = 0.0
        for j, mode in enumerate(modes):
            x = np.arange(len(res)) - 0.4 + (j + 0.5) * width
            fa = np.array([r["modes"][mode]["false_allows_pct"] or 0.0 for _, r in res])
            fr = np.array([r["modes"][mode]["false_rejects_pct"] or 0.0 for _, r in res])
            color = SERIES[j % len(SERIES)]
            ax.bar(x, fa, width=width, color=color, label=f"{mode}: false allows")
            ax.bar(x, fr, width=width, bottom=fa, color="white", edgecolor=color, hatch="///",
                   label=f"{mode}: false rejects")
            top = max(top, float((fa + fr).max()))
        ax.set_xticks(np.arange(len(res)), [_name(r) for _, r in res])
        ax.set_xlim(-0.6, len(res) - 0.4)
        ax.set_ylabel("requests (%)")
        ax.set_title(f"wrong decisions, window {res[0][1]['window_s']:g} s")
        finish_from_zero(fig, ax, top, "no wrong decision", ncols=2)
    return fig


def relative_error(record: dict):
    """How far the counter's estimate is from the exact count, |estimate - real| / real (%):
    its mean, median, 99th and 99.9th percentiles and largest, a bar per limit and mode (a
    symmetric-log axis: 0 is shown, and so are errors a thousand times larger)."""
    with mpl.rc_context(STYLE):
        series = list(_series(record))
        fig, ax = plt.subplots(figsize=(8.0, 3.2 + 0.22 * len(series)), layout="constrained")
        width = 0.8 / len(series)
        top = 0.0
        for k, (label, _, _, figures) in enumerate(series):
            values = np.array([figures[key] or 0.0 for _, key in STATISTICS])
            ax.bar(np.arange(len(STATISTICS)) - 0.4 + (k + 0.5) * width, values, width=width,
                   color=SERIES[k % len(SERIES)], label=label)
            top = max(top, float(values.max()))
        ax.set_xticks(np.arange(len(STATISTICS)), [name for name, _ in STATISTICS])
        ax.set_xlim(-0.6, len(STATISTICS) - 0.4)
        ax.set_ylabel("|estimate - real| / real (%)")
        ax.set_title("the counter's error, request by request")
        if top > 0:
            ax.set_yscale("symlog", linthresh=1.0, linscale=0.5)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_ylim(0, top * 1.5)
        finish_from_zero(fig, ax, top, "every estimate exact", ncols=2)
    return fig


COUNTER_NAMES = {None: "the sliding window counter",
                 "sliding-window-counter": "the sliding window counter (calendar-aligned)",
                 "haproxy": "HAProxy's counter (periods from each source's first request, "
                            "every request counted)"}
"""How the page names the counter a record measured (``counter`` in the record, or in each of
its results; older records have none, and measured the calendar-aligned counter)."""


def page(record: dict) -> str:
    """The page of an error analysis's record, as HTML text."""
    res = results(record)
    requests = record.get("requests", next(iter(res[0][1]["modes"].values()))["requests"])
    sources = record.get("sources", next(iter(res[0][1]["modes"].values()))["sources"])
    meta = [f"{record['source']}: {requests:,} requests from {sources:,} sources",
            f"{COUNTER_NAMES.get(res[0][1].get('counter'), COUNTER_NAMES[None])} against "
            "the exact sliding log, each source limited on its own",
            f"ratelab {__version__} error-analysis"]
    if record.get("command"):
        meta.insert(2, record["command"])
    tables = "".join(table_html(formatted(record_table(r), missing="-").rename_axis(None),
                                caption=head) for head, r in res)
    parts = [
        ("table", "The table", tables + paragraph(
            "estimate: every request counts, and the counter's estimate is compared with the "
            "exact trailing count; admission: rejected requests do not count, and the two "
            "limiters' decisions are compared. A false negative is a source over the "
            "threshold that the counter never limited; a false positive, one it limited that "
            "never went over.")),
        ("wrong-decisions", "Wrong decisions",
         figure_html(wrong_decisions(record), "wrong decisions per limit and mode")),
        ("error-distribution", "The error's distribution",
         figure_html(relative_error(record), "the counter's relative error: mean, "
                                             "percentiles and largest")
         + table_html(_statistics(record))),
        ("load-report", "The load report", _load_report(record)),
    ]
    return document(f"Error analysis: {record['source']}", meta, parts)


def _statistics(record: dict) -> pd.DataFrame:
    return pd.DataFrame({label: {name: "-" if figures[key] is None else f"{figures[key]:.4g}"
                                 for name, key in STATISTICS}
                         for label, _, _, figures in _series(record)}).rename_axis(
        "|estimate - real| / real (%)")


def _load_report(record: dict) -> str:
    if record.get("load_report") is not None:
        return describe_html(record["load_report"])
    if "population" in record:
        pop = pd.DataFrame({"value": {k: f"{v:g}" if isinstance(v, float) else str(v)
                                      for k, v in record["population"].items()}})
        return paragraph("A synthetic population: no log was read. Its parameters:") + \
            table_html(pop.rename_axis("parameter"))
    return paragraph("No load report: a Parquet trace written before it had one.")


def write_page(record: dict, path) -> int:
    """Write the page of `record` to `path`; its size in bytes."""
    return write(path, page(record))
