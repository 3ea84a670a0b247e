"""How far the sliding window counter is from the exact sliding log, on the same requests.

Cloudflare (2017, "How we built rate limiting capable of scaling to millions of domains")
reported for 400 million requests from 270,000 sources: 0.003% of requests wrongly allowed or
rate limited, an average difference of 6% between the real and the approximate rate, 3 sources
allowed despite running above the threshold (by less than 15%), none limited below it. They did
not publish the method; here it is, in two named modes:

``estimate``
    every request counts, in the exact trailing window and in the counter (as a monitoring
    counter counts every matching request). Per request, the exact count of (t - W, t] and the
    counter's estimate ``prev * weight + cur``, both including the request, are compared; a
    decision is "wrong" when ``estimate <= limit`` and ``exact <= limit`` disagree.
``admission``
    rejected requests do not count: a sliding log and a sliding window counter (both
    ``count_rejected=False``) run independently on the same requests and their decisions are
    compared. The relative error is the counter's estimate against the exact count of what the
    counter itself admitted (plus the request).

``counter="haproxy"`` puts HAProxy's stick-table counter (:mod:`ratelab.limiters.haproxy`,
``http_req_rate(<window>)`` compared ``gt limit``) in the calendar-aligned counter's place, in
both modes: its periods start at each source's first request, its blend is in whole requests,
and it counts every request, refused or not — in admission mode too, since that is what HAProxy
does (the exact log still counts only what it admitted). The window must then be a whole number
of milliseconds and the limit a whole number, as HAProxy's are.

A source is *over the threshold* when some trailing window (t - W, t] holds more than `limit`
of its requests (then the exact log rejects at least one in either mode). A *false negative*
is a source over the threshold that the counter never limited; a *false positive* a source the
counter limited that never went over.

:class:`ErrorTally` accumulates the counts of any number of chunks of sources (tallies add),
so that a population too large for memory is analysed chunk by chunk, in parallel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..clock import window_ticks
from ..limiters import haproxy
from ..limiters.base import positive
from ..scale.merge import add_fields
from . import kernels

MODES = ("estimate", "admission")
COUNTERS = ("sliding-window-counter", "haproxy")
"""The counters compared with the exact log: the calendar-aligned sliding window counter
(Cloudflare's), and HAProxy's (periods from each source's first request)."""
PERCENTILES = (50.0, 99.0, 99.9)
DEFAULT_QUANTILES = (0.9, 0.99, 0.999)
"""Quantiles of the per-source peak counts where :func:`thresholds` puts limits by default."""

KEYS = {
    "requests": "requests",
    "sources": "sources",
    "wrong decisions (%)": "wrong_decisions_pct",
    "false allows (%)": "false_allows_pct",
    "false rejects (%)": "false_rejects_pct",
    "false allows": "false_allows",
    "false rejects": "false_rejects",
    "rejected by the exact log (%)": "rejected_by_exact_log_pct",
    "rejected by the counter (%)": "rejected_by_counter_pct",
    "mean |estimate - real| / real (%)": "mean_relative_error_pct",
    **{f"p{q:g} |estimate - real| / real (%)": f"p{q:g}_relative_error_pct".replace(".", "_")
       for q in PERCENTILES},
    "max |estimate - real| / real (%)": "max_relative_error_pct",
    "sources over the threshold": "sources_over_threshold",
    "sources limited by the counter": "sources_limited",
    "over the threshold, never limited (false negatives)": "false_negatives",
    "false negatives: most above the threshold (%)": "worst_false_negative_over_pct",
    "limited, never over the threshold (false positives)": "false_positives",
}
"""The table's row labels (as people read them) -> the record's snake_case keys (as JSON and
code read them): ``ErrorTally.summary`` uses the labels, ``ErrorTally.record`` the keys."""


MISJUDGED_BANDS_PCT = ((0.0, 5.0), (5.0, 15.0), (15.0, 30.0), (30.0, np.inf))
"""Bands of ``ErrorTally.misjudged``: how far above the threshold (%) a false negative ran."""


def check_mode(mode: str) -> tuple[str, ...]:
    """The modes that `mode` names: "estimate", "admission" or "both"."""
    if mode == "both":
        return MODES
    if mode in MODES:
        return (mode,)
    raise ValueError(f"mode must be 'estimate', 'admission' or 'both', got {mode!r}")


def check_counter(counter: str, limit: float | None = None, window: float | None = None) -> str:
    """`counter` if it is one of COUNTERS, else ValueError naming it; for "haproxy", ValueError
    naming `limit` or `window` unless they are a whole number and whole milliseconds."""
    if counter not in COUNTERS:
        raise ValueError(f"counter must be one of {', '.join(COUNTERS)}, got {counter!r}")
    if counter == "haproxy":
        if window is not None:
            haproxy.whole_ms("window", window)
        if limit is not None:
            haproxy_rule(limit, 1.0)
    return counter


def haproxy_rule(limit: float, window: float) -> haproxy.HAProxyRate:
    """The HAProxy rule ``gt limit`` over a period of `window` (default expire: two periods,
    where expiry changes no decision); ValueError naming limit or window."""
    if limit != int(limit):
        raise ValueError(f"limit must be a whole number for HAProxy's counter (its rule "
                         f"compares a whole rate), got {limit!r}")
    return haproxy.HAProxyRate(period=haproxy.whole_ms("window", window) / 1000,
                               limit=int(limit))


def by_source(trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trace regrouped source by source: (time, starts, keys).

    ``time[starts[j]:starts[j+1]]`` are the sorted times of source ``keys[j]``; sources with no
    request are left out. Every request costs 1: a trace whose cost column holds anything else
    is refused (the comparison counts requests, as Cloudflare's does).
    """
    if trace.cost is not None and not np.all(trace.cost == 1.0):
        raise ValueError("trace: the error analysis counts requests (cost 1 each); this "
                         "trace has other costs")
    order = np.argsort(trace.key, kind="stable")  # stable: each source's times stay sorted
    counts = np.bincount(trace.key, minlength=trace.n_keys)
    keys = np.flatnonzero(counts)
    starts = np.zeros(len(keys) + 1, np.int64)
    np.cumsum(counts[keys], out=starts[1:])
    return np.ascontiguousarray(trace.time[order]), starts, keys.astype(np.int32)


def _sum_and_max(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """[sum, max] of two [sum, max] pairs (``ModeTally.relsum``), in place."""
    mine[0] += theirs[0]
    mine[1] = max(mine[1], theirs[1])
    return mine


@dataclass
class ModeTally:
    """The counts of one mode over the requests analysed so far; tallies of disjoint sources
    add, field by field (each field's ``add`` rule: :func:`ratelab.scale.add_fields`)."""

    counts: np.ndarray = field(default_factory=lambda: np.zeros(kernels.N_COUNTS, np.int64))
    relsum: np.ndarray = field(default_factory=lambda: np.zeros(2),  # sum, max
                               metadata={"add": _sum_and_max})
    hist: np.ndarray = field(default_factory=lambda: np.zeros(kernels.N_BINS, np.int64))
    # per-source outcomes, kept only where they matter for the table
    false_negative_peaks: list = field(default_factory=list,  # peak counts of FN sources
                                       metadata={"add": "extend"})
    false_positive_peaks: list = field(default_factory=list,  # peak counts of FP sources
                                       metadata={"add": "extend"})
    false_positives: int = 0
    limited: int = 0  # sources the counter limited at least once

    def add(self, other: "ModeTally") -> "ModeTally":
        """Add the tally of other sources in the same mode."""
        return add_fields(self, other)


@dataclass
class ErrorTally:
    """Counts of the comparison, per mode, that add up over chunks of sources."""

    limit: float = field(metadata={"add": "same"})
    window: float = field(metadata={"add": "same"})
    modes: tuple[str, ...] = field(metadata={"add": "same"})
    counter: str = field(default="sliding-window-counter", metadata={"add": "same"})
    sources: int = 0
    over: int = 0  # sources over the threshold
    peak_max: int = field(default=0, metadata={"add": "max"})
    per_mode: dict = field(default_factory=dict)  # mode -> ModeTally, added mode by mode

    def __post_init__(self) -> None:
        for m in self.modes:
            self.per_mode.setdefault(m, ModeTally())

    def add(self, other: "ErrorTally") -> "ErrorTally":
        """Add another tally of the same limit, window and modes (disjoint sources)."""
        return add_fields(self, other)

    # -- reading -----------------------------------------------------------------------

    @property
    def requests(self) -> int:
        return int(self.per_mode[self.modes[0]].counts[kernels.REQUESTS])

    def percentile(self, mode: str, q: float) -> float:
        """The q-th percentile of |estimate - real| / real, to the histogram's ~2.3%."""
        hist = self.per_mode[mode].hist
        total = hist.sum()
        if total == 0:
            return float("nan")
        rank = np.searchsorted(np.cumsum(hist), q / 100.0 * total, side="left")
        if rank == 0:
            return 0.0
        # the bin's geometric middle
        return float(10.0 ** (kernels.LOG_LO + (rank - 0.5) / kernels.BINS_PER_DECADE))

    def summary(self, mode: str) -> dict:
        """The table's column for `mode`, as a dict of plain numbers."""
        t = self.per_mode[mode]
        n = int(t.counts[kernels.REQUESTS])
        fa = int(t.counts[kernels.FALSE_ALLOW])
        fr = int(t.counts[kernels.FALSE_REJECT])
        pct = (lambda x: 100.0 * x / n) if n else (lambda x: float("nan"))
        fn = np.asarray(t.false_negative_peaks, dtype=float)
        return {
            "requests": n,
            "sources": self.sources,
            "wrong decisions (%)": pct(fa + fr),
            "false allows (%)": pct(fa),
            "false rejects (%)": pct(fr),
            "false allows": fa,
            "false rejects": fr,
            "rejected by the exact log (%)": pct(int(t.counts[kernels.EXACT_REJECT])),
            "rejected by the counter (%)": pct(int(t.counts[kernels.COUNTER_REJECT])),
            "mean |estimate - real| / real (%)": 100.0 * t.relsum[0] / n if n else np.nan,
            **{f"p{q:g} |estimate - real| / real (%)": 100.0 * self.percentile(mode, q)
               for q in PERCENTILES},
            "max |estimate - real| / real (%)": 100.0 * t.relsum[1],
            "sources over the threshold": self.over,
            "sources limited by the counter": t.limited,
            "over the threshold, never limited (false negatives)": len(fn),
            "false negatives: most above the threshold (%)":
                100.0 * (fn.max() / self.limit - 1.0) if len(fn) else 0.0,
            "limited, never over the threshold (false positives)": t.false_positives,
        }

    def record(self, mode: str) -> dict:
        """The figures of `mode` with snake_case keys (:data:`KEYS`), plain numbers, NaN as
        None: what ``ratelab error-analysis --json`` prints."""
        return _plain({KEYS[k]: v for k, v in self.summary(mode).items()})
    def misjudged(self, mode: str) -> dict:
        """The misjudged sources of `mode`: how far above the threshold the false negatives
        ran (how many in each band of % over: ``from_pct`` < over <= ``to_pct``, ``to_pct``
        None for the last, open band) and how close to it the false positives came (their
        peak count in a window, as % of the threshold: min, median, max; None without one).
        Snake_case keys with units, as the rest of the record (:data:`KEYS`)."""
        t = self.per_mode[mode]
        over = 100.0 * (np.asarray(t.false_negative_peaks, dtype=float) / self.limit - 1.0)
        fp = 100.0 * np.asarray(t.false_positive_peaks, dtype=float) / self.limit
        return {
            "false_negatives": len(over),
            "false_negatives_by_over_pct": [
                {"from_pct": float(lo), "to_pct": None if hi == np.inf else float(hi),
                 "false_negatives": int(np.count_nonzero((over > lo) & (over <= hi)))}
                for lo, hi in MISJUDGED_BANDS_PCT],
            "false_positives": len(fp),
            "false_positive_peak_pct": (
                {"min": float(fp.min()), "median": float(np.median(fp)), "max": float(fp.max())}
                if len(fp) else None),
        }

    def headline(self) -> dict:
        """The figures Cloudflare quoted, on one line: sources over the threshold, % wrong per
        mode, false negatives (and how far over the worst ran) and false positives — the last
        three in the first mode tallied."""
        out = {"limit": self.limit, "over": self.over}
        for m in self.modes:
            out[f"wrong, {m} (%)"] = self.summary(m)["wrong decisions (%)"]
        s = self.summary(self.modes[0])
        out["false neg."] = s["over the threshold, never limited (false negatives)"]
        out["worst false neg. (% over)"] = s["false negatives: most above the threshold (%)"]
        out["false pos."] = s["limited, never over the threshold (false positives)"]
        return out

    def table(self) -> pd.DataFrame:
        """The Cloudflare-style table: one row per figure, one column per mode (float64: counts
        are whole numbers; :func:`format_table` shows them so)."""
        df = pd.DataFrame({m: pd.Series(self.summary(m), dtype=float) for m in self.modes})
        df.index.name = f"limit {self.limit:g} per {self.window:g} s"
        return df

    def to_dict(self) -> dict:
        """Parameters and every mode's figures (snake_case keys, see :data:`KEYS`), for JSON."""
        return {"counter": self.counter, "limit": self.limit, "window_s": self.window,
                "modes": {m: self.record(m) for m in self.modes}}


def record_table(figures: dict) -> pd.DataFrame:
    """The table of :meth:`ErrorTally.table` from the tally's record (:meth:`ErrorTally.to_dict`,
    as ``ratelab error-analysis --json`` prints it): the same rows, columns and numbers."""
    label = {key: text for text, key in KEYS.items()}
    # a record written before the keys were snake_case holds the labels themselves
    df = pd.DataFrame({m: pd.Series({label.get(k, k): v for k, v in fig.items()}, dtype=float)
                       for m, fig in figures["modes"].items()})
    df.index.name = f"limit {figures['limit']:g} per {figures['window_s']:g} s"
    return df


def side_by_side(records) -> pd.DataFrame:
    """The tables of several records (:func:`record_table`), one column per (counter, mode):
    the calendar-aligned counter and HAProxy's on the same traffic, side by side. A record
    written before records named their counter is the calendar-aligned counter's."""
    df = pd.concat({r.get("counter", COUNTERS[0]): record_table(r) for r in records}, axis=1)
    df.columns.names = ["counter", "mode"]
    return df


def groups_table(groups: dict, names=None) -> pd.DataFrame:
    """Where the wrong decisions are: one row per group of sources."""
    rows = {}
    total = {m: sum(int(t.per_mode[m].counts[kernels.FALSE_ALLOW]
                        + t.per_mode[m].counts[kernels.FALSE_REJECT])
                    for k, t in groups.items() if k not in ("over the threshold", "never over"))
             for m in next(iter(groups.values())).modes}
    requests = sum(t.requests for k, t in groups.items()
                   if k not in ("over the threshold", "never over"))
    for key, t in groups.items():
        name = names[key] if names is not None and key in names else str(key)
        row = {"sources": t.sources, "requests (%)": 100.0 * t.requests / requests,
               "over the threshold": t.over}
        for m in t.modes:
            c = t.per_mode[m].counts
            wrong = int(c[kernels.FALSE_ALLOW] + c[kernels.FALSE_REJECT])
            row[f"wrong, {m}"] = wrong
            row[f"share of all wrong, {m} (%)"] = 100.0 * wrong / total[m] if total[m] else 0.0
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def format_table(df) -> str:
    """The table as text: counts (rows not in %) with thousands separators, others to 4
    figures."""
    return formatted(df).to_string()


def formatted(df, missing: str = "nan") -> pd.DataFrame:
    """The table's cells as text, as :func:`format_table` prints them (`missing` for a
    figure that is not a number)."""
    def cell(v, label):
        if isinstance(v, (int, np.integer)):
            return f"{int(v):,}"
        v = float(v)
        if not np.isfinite(v):
            return missing
        if not str(label).endswith("(%)") and v == int(v):
            return f"{int(v):,}"
        return f"{v:.4g}"
    return df.apply(lambda row: row.map(lambda v: cell(v, row.name)), axis=1)


def _plain(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        v = v.item() if hasattr(v, "item") else v
        out[k] = None if isinstance(v, float) and not np.isfinite(v) else v
    return out


def analyse_sources(time: np.ndarray, starts: np.ndarray, limit: float, window: float,
                    modes: tuple[str, ...] = MODES,
                    counter: str = "sliding-window-counter") -> ErrorTally:
    """The tally of sources given as concatenated sorted times and their `starts`, `counter`
    against the exact log."""
    limit = positive("limit", limit)
    window = positive("window", window)
    rule = haproxy_rule(limit, window) if check_counter(counter) == "haproxy" else None
    ticks = kernels.as_ticks(time)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    n_src = len(starts) - 1
    tally = ErrorTally(limit, window, modes, counter, sources=n_src)
    # the estimate pass writes the peaks as it goes; without it first, count them up front
    wt = window_ticks(window)
    peak = kernels.peak_counts(ticks, starts, wt) if modes[0] != "estimate" else None
    counter_rule = kernels.CALENDAR if rule is None else \
        (int(rule.admits), int(rule.period_ms), int(rule.expire_ms))
    for m in modes:
        t = tally.per_mode[m]
        crej = np.zeros(n_src, np.int64)
        erej = np.zeros(n_src, np.int64)
        if m == "estimate":
            est_peak = np.zeros(n_src, np.int64)
            kernels.estimate_pass(ticks, starts, limit, wt, t.counts, t.relsum, t.hist,
                                  kernels.bin_table(), est_peak, crej, erej, counter_rule)
            peak = est_peak if peak is None else peak
        else:
            kernels.admission_pass(ticks, starts, limit, wt, t.counts, t.relsum, t.hist,
                                   kernels.bin_table(), crej, erej, counter_rule)
        over = peak > limit
        limited = crej > 0
        t.false_negative_peaks = peak[over & ~limited].tolist()
        t.false_positive_peaks = peak[limited & ~over].tolist()
        t.false_positives = len(t.false_positive_peaks)
        t.limited = int(np.count_nonzero(limited))
    tally.over = int(np.count_nonzero(peak > limit))
    tally.peak_max = int(peak.max()) if n_src else 0
    return tally


def select_sources(time: np.ndarray, starts: np.ndarray, which: np.ndarray):
    """(time, starts) of the sources where boolean `which` is True, in the same order."""
    counts = np.diff(starts)
    which = np.asarray(which, dtype=bool)
    sub = np.zeros(int(which.sum()) + 1, np.int64)
    np.cumsum(counts[which], out=sub[1:])
    return time[np.repeat(which, counts)], sub


def analyse_groups(time: np.ndarray, starts: np.ndarray, labels: np.ndarray, limit: float,
                   window: float, modes: tuple[str, ...] = MODES,
                   counter: str = "sliding-window-counter") -> dict:
    """One tally per distinct label (one label per source), plus the split by threshold.

    Keys: each label, then "over the threshold" and "never over" (by the source's peak count
    in a trailing window). The tallies of the labels add up to the tally of all sources, and
    so do the two threshold groups.
    """
    window = positive("window", window)
    labels = np.asarray(labels)
    peak = kernels.peak_counts(kernels.as_ticks(time),
                               np.ascontiguousarray(starts, dtype=np.int64),
                               window_ticks(window))
    groups = [(lab, labels == lab) for lab in np.unique(labels)]
    groups += [("over the threshold", peak > limit), ("never over", peak <= limit)]
    return {(lab.item() if hasattr(lab, "item") else lab):
            analyse_sources(*select_sources(time, starts, sel), limit, window, modes, counter)
            for lab, sel in groups}


def tally(trace, limit: float, window: float, mode: str = "both",
          counter: str = "sliding-window-counter") -> ErrorTally:
    """The :class:`ErrorTally` of a whole trace (every key a source)."""
    modes = check_mode(mode)
    time, starts, _ = by_source(trace)
    return analyse_sources(time, starts, limit, window, modes, counter)


def approximation_error(trace, limit: float, window: float, mode: str = "both",
                        counter: str = "sliding-window-counter"):
    """The Cloudflare-style table comparing the sliding window counter with the exact log.

    `limit` requests per `window` seconds, per source (key) of `trace`; `mode` is
    "estimate", "admission" or "both" (see the module docstring); `counter` the
    calendar-aligned counter (default) or "haproxy", HAProxy's. Rows: requests, sources,
    % wrong decisions (false allows and false rejects apart), mean and percentiles of
    |estimate - real| / real, sources over the threshold never limited (false negatives, with
    how far above they ran) and sources limited that never went over (false positives).
    """
    return tally(trace, limit, window, mode, counter).table()


def peak_per_source(trace, window: float) -> pd.Series:
    """The most requests each source sent in any trailing window of `window` s."""
    window = positive("window", window)
    time, starts, keys = by_source(trace)
    peak = kernels.peak_counts(kernels.as_ticks(time), starts, window_ticks(window))
    return pd.Series(peak, index=[trace.name_of(k) for k in keys], name="peak")


def thresholds(trace, window: float, quantiles=DEFAULT_QUANTILES) -> dict[float, float]:
    """Limits at the given quantiles of the per-source peak count in a `window`.

    A limit equal to a quantile q of the peaks leaves about (1 - q) of the sources over it.
    Values are whole requests (at least 1).
    """
    peak = peak_per_source(trace, window).to_numpy()
    return {q: float(max(1.0, np.floor(np.quantile(peak, q)))) for q in quantiles}
