"""Trace: a request log as columns — time (sorted seconds), key (int32 source id), cost.

Columnar so that millions of requests replay fast; a key is a small integer and
``key_names[key]`` says who it was (a host name, an IP, "source 17"). :func:`finish` makes the
Trace of what a reader read (the loaders, the tables, ``Trace.from_frame``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .frames import read_frame
from .report import LoadReport, LoadWarning, NoRequestsError


KEY_MAX = np.iinfo(np.int32).max


def _key_ids(key) -> np.ndarray:
    """`key` as an array of whole numbers that int32 holds; ValueError naming key otherwise.

    A cast alone would wrap 2**32 + 1 to 1 and truncate 1.5 to 1: two sources made one.
    """
    key = np.asarray(key)
    if key.dtype == np.int32 or key.size == 0 or key.dtype.kind == "b":
        return key
    if key.dtype.kind == "f":
        bad = ~np.isfinite(key) | (key != np.floor(key))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"key must be whole numbers, got key[{i}] = {key[i]!r}")
    if key.dtype.kind in "iuf" and key.max() > KEY_MAX:
        i = int(np.argmax(key))
        raise ValueError(f"key must be at most {KEY_MAX} (int32), got key[{i}] = {key[i]!r}")
    return key


@dataclass(frozen=True)
class Trace:
    """Requests in time order: ``time[i]`` (s), ``key[i]`` (source id), ``cost[i]`` (or all 1).

    Times must be finite and sorted (ties allowed); keys must lie in [0, n_keys). Build one
    from unsorted data with :meth:`from_arrays` (``sort=True``), which sorts stably and says
    how many requests were out of order.
    """

    time: np.ndarray
    key: np.ndarray
    cost: np.ndarray | None = None
    key_names: Sequence[str] | None = None
    meta: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        time = np.ascontiguousarray(self.time, dtype=np.float64)
        key = np.ascontiguousarray(_key_ids(self.key), dtype=np.int32)
        object.__setattr__(self, "time", time)
        object.__setattr__(self, "key", key)
        if time.ndim != 1 or key.shape != time.shape:
            raise ValueError(f"time and key must be 1-D of one length, got {time.shape} "
                             f"and {key.shape}")
        if self.cost is not None:
            cost = np.ascontiguousarray(self.cost, dtype=np.float64)
            if cost.shape != time.shape:
                raise ValueError(f"cost must have the length of time ({len(time)}), "
                                 f"got {cost.shape}")
            bad = ~(np.isfinite(cost) & (cost > 0))
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"cost must be positive and finite: cost[{i}] = {cost[i]!r}")
            object.__setattr__(self, "cost", cost)
        if len(time):
            if not np.isfinite(time).all():
                i = int(np.argmax(~np.isfinite(time)))
                raise ValueError(f"time must be finite: time[{i}] = {time[i]!r}")
            back = np.flatnonzero(np.diff(time) < 0)
            if len(back):
                i = int(back[0]) + 1
                raise ValueError(
                    f"time must be sorted: time[{i}] = {time[i]!r} < time[{i - 1}] = "
                    f"{time[i - 1]!r} ({len(back)} requests out of order; "
                    "use Trace.from_arrays(..., sort=True))")
            if key.min() < 0:
                raise ValueError(f"key must be >= 0, got {int(key.min())}")
            if self.key_names is not None and key.max() >= len(self.key_names):
                raise ValueError(f"key {int(key.max())} has no name: key_names has "
                                 f"{len(self.key_names)} entries")

    # -- building ----------------------------------------------------------------------

    @classmethod
    def from_arrays(cls, time, key, cost=None, key_names=None, *, sort: bool = False,
                    meta: dict | None = None) -> "Trace":
        """A Trace from columns; with ``sort=True`` sorted stably by time.

        ``meta["out_of_order"]`` counts the requests that were earlier than the one before
        them (0 when already sorted).
        """
        time = np.asarray(time, dtype=np.float64)
        key = _key_ids(key)
        meta = dict(meta or {})
        back = int(np.count_nonzero(np.diff(time) < 0)) if len(time) > 1 else 0
        meta.setdefault("out_of_order", back)
        if sort and back:
            order = np.argsort(time, kind="stable")
            time, key = time[order], key[order]
            cost = None if cost is None else np.asarray(cost, dtype=np.float64)[order]
        return cls(time, key, cost, key_names, meta)

    @classmethod
    def from_labels(cls, time, labels: Iterable, cost=None, *, sort: bool = False,
                    meta: dict | None = None) -> "Trace":
        """A Trace whose keys are numbered from arbitrary labels, in order of first appearance."""
        labels = np.asarray(list(labels) if not isinstance(labels, np.ndarray) else labels)
        names, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # number keys by first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        key = rank[inverse.ravel()]
        return cls.from_arrays(time, key, cost, [str(n) for n in names[order]], sort=sort,
                               meta=meta)

    @classmethod
    def from_dataframe(cls, df, time: str = "time", key: str = "key",
                       cost: str | None = None, *, sort: bool = False) -> "Trace":
        """A Trace from a DataFrame's columns; string keys are numbered by first appearance."""
        c = None if cost is None else df[cost].to_numpy()
        k = df[key].to_numpy()
        if np.issubdtype(k.dtype, np.integer):
            return cls.from_arrays(df[time].to_numpy(), k, c, sort=sort)
        return cls.from_labels(df[time].to_numpy(), k, c, sort=sort)

    @classmethod
    def from_frame(cls, frame, time: str = "time", key="key", cost: str | None = None, *,
                   time_format: str | None = None, warn: bool = True,
                   max_examples: int = 5) -> "Trace":
        """A Trace from a pandas DataFrame or an Arrow table, sorted stably by time.

        time          the time column; time_format says how to read it: "s", "ms", "us",
                      "ns" (epoch), "iso", a strftime form, or None (timestamps as such,
                      numbers as epoch seconds, text as ISO 8601)
        key           the client column, or several ("ip,path" or ["ip", "path"]): each
                      distinct combination is a client, named by its values joined by a space
        cost          the cost column (positive numbers), or None for cost 1

        Rows whose time, key or cost is missing or unreadable are counted as malformed and
        left out; out-of-order rows are counted; both are in ``meta["report"]`` (a
        LoadReport) and warned about. No readable row at all is a ValueError.
        """
        parts = read_frame(frame, time_col=time, key_col=key, cost_col=cost,
                           time_format=time_format, max_examples=max_examples)
        return finish(Path("<frame>"), *parts, max_examples=max_examples, warn=warn,
                      detected=False)

    # -- reading -----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.time)

    @property
    def n_keys(self) -> int:
        """How many key ids the trace can hold (len(key_names), else max key + 1)."""
        if self.key_names is not None:
            return len(self.key_names)
        return int(self.key.max()) + 1 if len(self.key) else 0

    @property
    def costs(self) -> np.ndarray:
        """The cost column, all ones when the trace has none."""
        return np.ones(len(self), dtype=np.float64) if self.cost is None else self.cost

    @property
    def duration(self) -> float:
        """Seconds from the first request to the last (0 for fewer than two)."""
        return float(self.time[-1] - self.time[0]) if len(self) > 1 else 0.0

    def name_of(self, key: int) -> str:
        """The label of key id `key` (its number when the trace has no names)."""
        return str(self.key_names[key]) if self.key_names is not None else str(key)

    def to_dataframe(self):
        """The trace as a DataFrame with columns time, key, name (when named), cost."""
        import pandas as pd  # a heavy dependency: imported where a frame is made

        df = pd.DataFrame({"time": self.time, "key": self.key})
        if self.key_names is not None:
            df["name"] = np.asarray(self.key_names, dtype=object)[self.key]
        df["cost"] = self.costs
        return df

    # -- slicing -----------------------------------------------------------------------

    def _take(self, index) -> "Trace":
        cost = None if self.cost is None else self.cost[index]
        return Trace(self.time[index], self.key[index], cost, self.key_names, dict(self.meta))

    def between(self, start: float, end: float) -> "Trace":
        """The requests with start <= time < end."""
        lo, hi = np.searchsorted(self.time, [start, end], side="left")
        return self._take(slice(lo, hi))

    def for_keys(self, keys) -> "Trace":
        """The requests of the given key ids (ids and names unchanged)."""
        return self._take(np.isin(self.key, np.asarray(keys, dtype=np.int32)))

    def head(self, n: int) -> "Trace":
        """The first `n` requests."""
        return self._take(slice(0, n))

    def shifted(self, offset: float) -> "Trace":
        """The same requests, `offset` seconds later (so a trace can start at 0)."""
        return Trace(self.time + offset, self.key, self.cost, self.key_names, dict(self.meta))

    def __repr__(self) -> str:
        return (f"Trace({len(self):,} requests, {self.n_keys:,} keys, "
                f"{self.duration:,.1f} s)")


def merge(traces: Sequence[Trace]) -> Trace:
    """One trace from several whose key ids are disjoint, sorted stably by time.

    When every trace has key names, the result names each key after the trace it came from
    (so generated sources numbered with ``key_offset`` keep their names).
    """
    used = [np.unique(t.key) for t in traces]
    ids, counts = np.unique(np.concatenate(used or [np.empty(0, np.int32)]), return_counts=True)
    if np.any(counts > 1):
        k = int(ids[np.argmax(counts > 1)])
        both = [n for n, u in enumerate(used) if k in u][:2]
        raise ValueError(f"traces {both[0]} and {both[1]} both use key id {k}: merge needs "
                         "disjoint ids (give generators a key_offset)")
    time = np.concatenate([t.time for t in traces])
    key = np.concatenate([t.key for t in traces])
    cost = (None if all(t.cost is None for t in traces)
            else np.concatenate([t.costs for t in traces]))
    order = np.argsort(time, kind="stable")
    names = None
    if traces and all(t.key_names is not None for t in traces):
        # An id no request uses is named by the shortest name list that reaches it (traces
        # numbered with key_offset own the ids just below their length); a used id by its trace.
        names, done = [], 0
        for t in sorted(traces, key=lambda t: t.n_keys):
            names += [t.name_of(k) for k in range(done, t.n_keys)]
            done = max(done, t.n_keys)
        for t in traces:
            for k in np.unique(t.key).tolist():
                names[k] = t.name_of(k)
    return Trace(time[order], key[order], None if cost is None else cost[order], names)


def finish(path: Path, report: LoadReport, time: np.ndarray, key: np.ndarray,
           line_no: np.ndarray, names, cost: np.ndarray | None, meta: dict | None = None, *,
           max_examples: int, warn: bool, detected: bool) -> Trace:
    """The Trace of requests read in file order: out-of-order requests counted (examples by
    line number) and sorted stably, the report completed, warned about, and kept in meta.

    NoRequestsError when there is no request at all.
    """
    report.complete_dropped(f"not a line of the {report.format} format")
    if len(time) == 0:
        raise NoRequestsError(path, report, detected)
    back = np.flatnonzero(np.diff(time) < 0) + 1
    report.out_of_order = len(back)
    report.out_of_order_examples = [(int(line_no[i]), float(time[i]), float(time[i - 1]))
                                    for i in back[:max_examples]]
    if len(back):
        order = np.argsort(time, kind="stable")
        time, key = time[order], key[order]
        cost = None if cost is None else cost[order]
    report.requests, report.clients = len(time), len(names)
    report.first_time, report.last_time = float(time[0]), float(time[-1])
    if warn and not report.clean:
        warnings.warn(report.brief(), LoadWarning, stacklevel=3)
    # the arrays are the reader's own: not copied again (only where a dtype differs)
    return Trace(np.asarray(time, dtype=np.float64), np.asarray(key, dtype=np.int32),
                 None if cost is None else np.asarray(cost, dtype=np.float64), list(names),
                 {"report": report, "out_of_order": report.out_of_order, "source": str(path),
                  "format": report.format, **(meta or {})})
