"""Loading a log or a table into a Trace: :func:`load_log` judges the format and hands the file
to its reader.

Logs — Common Log Format (and Combined), ITA EPA-HTTP, NASA TSV — are read by the compiled
reader (:mod:`ratelab.traces.fastclf`) or the reference one here (line by line, each line
through the parser of :mod:`ratelab.traces.report`); tables — CSV, TSV, JSON lines, Parquet —
by :mod:`ratelab.traces.tables`. Each reads a file (gzip or plain: it looks at the first bytes,
not the name) into a :class:`~ratelab.traces.Trace` keyed by client host, times in float
seconds since the Unix epoch. Nothing is dropped quietly:

* a line that does not parse is **malformed**: counted, its first few examples kept (line number
  and text), and left out of the trace;
* a request earlier than the one on the line before is **out of order**: counted, its first
  few examples kept, and the trace is sorted stably (ties keep file order).

The tally is a :class:`LoadReport` in ``trace.meta["report"]``; when anything was malformed or
out of order the loader also warns (:class:`LoadWarning`) with the same text.

    >>> trace = load_log("NASA_access_log_Jul95.gz")          # doctest: +SKIP
    >>> print(trace.meta["report"])                          # doctest: +SKIP
"""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import numpy as np

from ..progress import bar
from .report import (FORMATS, GZIP_ERRORS, TABLE_FORMATS, LoadReport, LoadWarning,
                     NoRequestsError, _epa_month, damaged, detect_format, line_parser,
                     open_text, read_line, refuse_container, sniff_format)
from .tables import load_table, sniff_table
from .trace import Trace, finish

__all__ = ["load_log", "LoadReport", "LoadWarning", "NoRequestsError", "FORMATS", "ENGINES",
           "detect_format", "open_text"]

ENGINES = ("auto", "fast", "reference")
"""fast: the compiled reader (ratelab.traces.fastclf: CLF, EPA and NASA TSV); reference: line
by line, readable. auto: the fast one. Both give the same trace and report."""


def load_log(path, format: str = "auto", *, engine: str = "auto", progress: bool = True,
             warn: bool = True, max_examples: int = 5, epa_year: int = 1995,
             epa_month: int = 8, epa_utc_offset_h: float = -4.0, **columns) -> Trace:
    """The requests of the file at `path` as a Trace keyed by client (names in key_names).

    format        "clf" (Common or Combined; "common" and "combined" say the same), "epa",
                  "nasa-tsv", a table ("csv", "tsv", "jsonl", "parquet": see
                  :func:`ratelab.traces.tables.load_table`, which takes `columns`:
                  time_col, key_col, cost_col, time_format), or "auto" (judged from the
                  first bytes and lines)
    engine        "fast", "reference" or "auto" (see ENGINES): the same trace either way
    progress      show a bar when loading takes over a second
    warn          warn (LoadWarning) when lines were malformed or out of order
    epa_*         the EPA format has only the day of the month: its month, year and UTC offset
                  (August 1995, EDT = UTC−4)

    Times are float seconds since the Unix epoch. The report is ``trace.meta["report"]``.
    A file that yields no request (empty, binary, another format) is a
    :class:`NoRequestsError` (a ValueError) saying what was read and what to try; a damaged
    or truncated gzip file is a ValueError naming it.
    """
    path = Path(path)
    format = {"combined": "clf", "common": "clf"}.get(format, format)
    if format not in FORMATS + TABLE_FORMATS + ("auto",):
        raise ValueError(f"format must be one of {', '.join(FORMATS + TABLE_FORMATS)} or "
                         f"'auto', got {format!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if not path.is_file():
        raise FileNotFoundError(f"no log file at {path}")
    refuse_container(path)
    if max_examples < 0:
        raise ValueError(f"max_examples must be >= 0, got {max_examples!r}")
    unknown = set(columns) - {"time_col", "key_col", "cost_col", "time_format", "columns",
                              "pattern"}
    if unknown:
        raise TypeError(f"load_log() got unexpected keyword arguments {sorted(unknown)}")
    columns = {k: v for k, v in columns.items() if v is not None}
    table = format in TABLE_FORMATS or (format == "auto" and sniff_table(path))
    if columns and not table:
        given = ", ".join("columns=" if c == "columns" else c for c in sorted(columns))
        raise ValueError(f"{given}: column options apply to tables "
                         f"({', '.join(TABLE_FORMATS)}); {path} is read as "
                         f"{format if format != 'auto' else 'a log'} (give --format)")
    if table:
        fmt = format if format != "auto" else sniff_table(path)
        return load_table(path, fmt, progress=progress, warn=warn, max_examples=max_examples,
                          detected=format == "auto", **columns)

    try:
        fmt = sniff_format(path) if format == "auto" else format
    except GZIP_ERRORS as e:
        raise damaged(path, e) from None
    report = LoadReport(source=path.name, format=fmt, time_zone=_line_zone(fmt, epa_utc_offset_h))
    offset_s = epa_utc_offset_h * 3600
    parse = line_parser(fmt, epa_year, epa_month, offset_s)
    if engine != "reference":
        from . import fastclf  # numba: the compiled reader is imported when first used

        base, days = _epa_month(epa_year, epa_month, offset_s)
        time, key, line_no, names = fastclf.read_log(path, fmt, parse, report, max_examples,
                                                     progress, base, days)
    else:
        time, key, line_no, names = _read_lines(path, fmt, parse, report, max_examples,
                                                progress)
    return finish(path, report, time, key, line_no, names, None, max_examples=max_examples,
                  warn=warn, detected=format == "auto")


def _line_zone(fmt: str, epa_utc_offset_h: float) -> str:
    """How a log format's times are placed on UTC, for the report."""
    if fmt == "clf":
        return "each line's own zone offset (as in [01/Aug/1995:00:00:01 -0400])"
    if fmt == "epa":
        return (f"UTC{epa_utc_offset_h:+g} h assumed: the EPA log's times name no zone "
                "(epa_utc_offset_h)")
    return "UTC (epoch seconds)"


def _read_lines(path: Path, fmt: str, parse, report: LoadReport, max_examples: int,
                progress: bool):
    """The reference reader: each line through `parse`, in order. Fills `report`'s lines and
    malformed tallies; returns times, key ids, line numbers and key names (file order)."""
    times = array("d")
    keys = array("i")
    line_no = array("q")
    hosts: dict[str, int] = {}
    size = os.path.getsize(path)
    n = 0
    try:
        with open_text(path) as f, bar(size, desc=path.name, unit="B", unit_scale=True,
                                       progress=progress) as b:
            raw = f.raw_file  # type: ignore[attr-defined]
            for n, line in enumerate(f, start=1):
                got = read_line(report, n, line, parse, fmt, max_examples)
                if got is None:
                    continue
                host, t = got
                times.append(t)
                keys.append(hosts.setdefault(host, len(hosts)))
                line_no.append(n)
                if n % 16384 == 0:
                    b.update(raw.tell() - b.n)
            b.update(size - b.n)
    except GZIP_ERRORS as e:
        raise damaged(path, e, n) from None
    report.lines = n
    return (np.frombuffer(times, dtype=np.float64), np.frombuffer(keys, dtype=np.int32),
            np.frombuffer(line_no, dtype=np.int64), list(hosts))
