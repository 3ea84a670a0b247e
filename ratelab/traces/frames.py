"""Requests from a table's columns (a pandas DataFrame or an Arrow table) as a reader's arrays.

A table names its columns, so the caller says which hold what:

* ``time_col`` (default "time"; a date and a time of day in two columns: ``"date,time"``,
  joined with a space) and ``time_format``: epoch seconds ("s"), milliseconds
  ("ms"), microseconds ("us"), nanoseconds ("ns"), ISO 8601 text ("iso"), or a strftime form
  such as ``"%d/%b/%Y:%H:%M:%S %z"`` (no zone in the text: UTC). Left as None, a timestamp
  column is read as such, numbers as epoch seconds, and text as epoch seconds or ISO 8601,
  whichever reads more of its rows;
* ``key_col`` (default "key"): one column or several, as a list or comma-separated
  (``"ip,path"``): each distinct combination is one client, named by its values joined with
  a space, numbered in order of first appearance;
* ``cost_col`` (optional): the cost of each request, a positive number.

A row whose time, key or cost is missing or does not parse is **malformed** (counted, first
examples kept, left out). :func:`read_frame` gives what a reader gives
:func:`ratelab.traces.trace.finish` — the report and the columns in row order — so that
``Trace.from_frame`` and the file readers of :mod:`ratelab.traces.tables` build the same Trace.
pandas and pyarrow are imported where a table is read, not with the package.
"""

from __future__ import annotations

import numpy as np

from .report import LoadReport

TIME_UNITS = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
TIME_FORMATS = (*TIME_UNITS, "iso")
"""Named time formats; any text with a % in it is a strftime form."""

LATEST_S = 7_258_118_400.0
"""2200-01-01 UTC in epoch seconds: a later time in a log is no time a server wrote. When
most of a column is later, its numbers are not seconds (milliseconds read as seconds land in
the year 50,000): refused, naming ``--time-format``; a few such rows are malformed."""

DEFAULT_TIME_COL, DEFAULT_KEY_COL = "time", "key"
KEY_JOIN = " "
"""Between the values of a combined key in its name (an IP and a path: "10.0.0.1 /login")."""


def columns_of(key_col) -> list[str]:
    """`key_col` as a list of column names ("ip,path" or ["ip", "path"])."""
    cols = key_col.split(",") if isinstance(key_col, str) else list(key_col)
    cols = [c.strip() for c in cols]
    if not cols or not all(cols):
        raise ValueError(f"key_col must name one or more columns, got {key_col!r}")
    return cols



UTC_EPOCH = "UTC (epoch numbers)"
ASSUMED_UTC = "UTC assumed: the times name no zone"


def _seconds(column, time_format, name: str) -> tuple[np.ndarray, str]:
    """(float epoch seconds of a time column, NaN where it does not parse; how its times were
    placed on UTC, for the report)."""
    import pandas as pd  # heavy dependencies: imported where a table is read
    import pyarrow as pa

    if time_format is not None and time_format not in TIME_FORMATS \
            and "%" not in str(time_format):
        raise ValueError(f"time_format must be one of {', '.join(TIME_FORMATS)} or a "
                         f"strftime form (with %), got {time_format!r}")
    if isinstance(column, pa.ChunkedArray):
        kind = column.type
        values = column.to_pandas()
    else:
        values = pd.Series(column)
        kind = None
    if time_format is None:
        if (kind is not None and (pa.types.is_timestamp(kind) or pa.types.is_date(kind))) \
                or pd.api.types.is_datetime64_any_dtype(values):
            # a zone is the column type's (Arrow's or pandas'); a date or naive time has none
            tz = getattr(kind, "tz", None) or getattr(values.dtype, "tz", None)
            zone = f"each time's own zone (a timestamp column in {tz})" if tz else ASSUMED_UTC
            return _datetime_seconds(pd.to_datetime(values, utc=True)), zone
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            return values.to_numpy(dtype=np.float64, na_value=np.nan), UTC_EPOCH
        # text: epoch seconds or ISO 8601, whichever reads more rows (a few bad ones aside)
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        text = values.astype("string")
        iso = _iso_seconds(text)
        if np.isfinite(numbers).sum() >= np.isfinite(iso).sum():
            return numbers, UTC_EPOCH
        return iso, _text_zone(text)
    if time_format in TIME_UNITS:
        if pd.api.types.is_bool_dtype(values):
            raise ValueError(f"time column {name!r} holds booleans, not times")
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        return numbers / TIME_UNITS[time_format], UTC_EPOCH
    text = values.astype("string")
    if time_format == "iso":
        return _iso_seconds(text), _text_zone(text)
    parsed = _parsed(text, time_format)
    zone = "each time's own offset (%z)" if "%z" in time_format or "%Z" in time_format \
        else ASSUMED_UTC + f" (the form {time_format!r} has no %z)"
    return _datetime_seconds(parsed), zone


def _parsed(text, form: str | None):
    """pandas datetimes of `text` in `form` (None: ISO 8601), NaT where a value does not
    parse or lies beyond what pandas' nanoseconds hold (years 1677-2262)."""
    import pandas as pd  # a heavy dependency: imported where a table is read

    form = "ISO8601" if form is None else form
    try:
        return pd.to_datetime(text, utc=True, errors="coerce", format=form)
    except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime):
        # one value out of bounds fails the whole column in pandas: parse one by one
        def one(value):
            try:
                return pd.to_datetime(value, utc=True, format=form)
            except (OverflowError, ValueError, TypeError, pd.errors.OutOfBoundsDatetime):
                return pd.NaT
        return pd.to_datetime(pd.Series([one(v) for v in text], dtype=object), utc=True)


def _iso_seconds(text) -> np.ndarray:
    return _datetime_seconds(_parsed(text, None))


_ZONED = r"(?:[zZ]|[+-]\d\d(?::?\d\d)?)$"


def _text_zone(text) -> str:
    """How ISO texts were placed on UTC: by their own offsets, or UTC assumed where none."""
    zoned = text.str.strip().str.contains(_ZONED, regex=True).fillna(False)
    if zoned.all():
        return "each time's own offset"
    if not zoned.any():
        return ASSUMED_UTC
    return f"each time's own offset; UTC assumed for the {int((~zoned).sum()):,} that name none"


def _datetime_seconds(parsed) -> np.ndarray:
    """Epoch seconds of a pandas datetime Series (NaN for NaT), exact to the microsecond, in
    whatever unit pandas chose for it (a year such as 1000 holds in seconds, not in ns)."""
    naive = parsed.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[np.datetime_data(naive.dtype)[0]]
    raw = naive.astype("int64")
    out = (raw // per).astype(np.float64) + (raw % per) / per
    out[np.isnat(naive)] = np.nan
    return out


def _labels(column) -> tuple[np.ndarray, list[str]]:
    """(codes, text) of a key column: codes by first appearance (-1 for missing), text of
    each code."""
    import pandas as pd  # heavy dependencies: imported where a table is read
    import pyarrow as pa

    values = column.to_pandas() if isinstance(column, pa.ChunkedArray) else pd.Series(column)
    if pd.api.types.is_float_dtype(values):  # 3.0 -> "3": a float column of whole ids
        whole = values.dropna()
        if (whole == np.floor(whole)).all():
            values = values.astype("Int64")
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes, [str(u) for u in uniques]


def _time_column(table, names: list[str]):
    """The time column `names` name; several (a date and a time of day) are joined, in
    order, with a space: "30/Apr/1998" and "21:30:17" read as "30/Apr/1998 21:30:17"."""
    import pyarrow as pa  # heavy dependencies: imported where a table is read
    import pyarrow.compute as pc

    if len(names) == 1:
        return table.column(names[0])
    parts = [pc.cast(table.column(n), pa.string()) for n in names]
    return pc.binary_join_element_wise(*parts, " ")


def _dropped(reasons, unsplit: int, fmt: str = "") -> dict[str, int]:
    """Lines left out by reason, each row counted once, under the first reason that holds."""
    split = "lines that do not match the pattern" if fmt == "regex" else \
        "rows the reader could not split"
    out = {split: unsplit} if unsplit else {}
    taken = None
    for why, mask in reasons:
        mask = mask if taken is None else mask & ~taken
        if mask.any():
            out[why] = int(mask.sum())
        taken = mask if taken is None else taken | mask
    return out


def read_frame(frame, *, time_col: str = DEFAULT_TIME_COL, key_col=DEFAULT_KEY_COL,
               cost_col: str | None = None, time_format: str | None = None,
               source: str = "<frame>", fmt: str = "frame", lines=None, bad=(),
               lines_read: int | None = None, header: bool = False, max_examples: int = 5):
    """(report, time, key, line numbers, key names, cost or None, meta) of the rows of a pandas
    DataFrame or Arrow table (see the module docs), in row order: the arguments of
    :func:`ratelab.traces.trace.finish`.

    lines: the line number of each row in its file (default: row numbers from 1); bad: rows
    the file reader could not split, as (line, text), counted as malformed.
    """
    import pyarrow as pa  # a heavy dependency: imported where a table is read

    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(
        frame, preserve_index=False)
    keys = columns_of(key_col)
    times = columns_of(time_col)
    for option, name in [*[("time_col", t) for t in times], *[("key_col", k) for k in keys],
                         ("cost_col", cost_col)]:
        if name is not None and name not in table.column_names:
            raise ValueError(f"{option}: no column {name!r} in {source} (its columns: "
                             f"{', '.join(table.column_names) or 'none'})")
    n = table.num_rows
    rows = np.arange(1, n + 1) if lines is None else np.asarray(lines, dtype=np.int64)
    report = LoadReport(source=source, format=fmt, header=header,
                        lines=n + len(bad) if lines_read is None else lines_read)
    if n == 0:
        report.malformed = len(bad)
        report.dropped = _dropped([], len(bad), fmt)
        report.malformed_examples = list(bad)[:max_examples]
        return report, np.empty(0), np.empty(0, np.int32), rows, [], None, {}

    time, report.time_zone = _seconds(_time_column(table, times), time_format, time_col)
    readable = np.isfinite(time)
    late = readable & (time >= LATEST_S)
    if late.any() and np.median(time[readable]) >= LATEST_S:
        unit = next((u for u, per in TIME_UNITS.items() if np.median(time[readable]) / per
                     < LATEST_S), "ns")
        raise ValueError(
            f"time column {time_col!r} of {source}: most times are past the year 2200 (the "
            f"median is {np.median(time[readable]):.4g} s) as "
            f"{'epoch seconds' if time_format in (None, 's') else repr(time_format)}: "
            f"give their unit with time_format {unit}")
    good = readable & ~late
    reasons = [("unreadable time", ~readable), ("time past the year 2200", late)]
    codes = []
    texts = []
    keyed = np.ones(n, dtype=bool)
    for k in keys:
        c, t = _labels(table.column(k))
        codes.append(c)
        texts.append(t)
        keyed &= c >= 0
    reasons.append(("missing key", ~keyed))
    good &= keyed
    cost = None
    if cost_col is not None:
        import pandas as pd  # a heavy dependency: imported where a table is read

        values = table.column(cost_col).to_pandas()
        if pd.api.types.is_bool_dtype(values):
            raise ValueError(f"cost column {cost_col!r} holds booleans, not costs")
        cost = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        reasons += [("unreadable cost", ~np.isfinite(cost)),
                    ("zero or negative cost", np.isfinite(cost) & (cost <= 0))]
        good &= np.isfinite(cost) & (cost > 0)

    wrong = np.flatnonzero(~good)
    report.malformed = len(bad) + len(wrong)
    report.dropped = _dropped(reasons, len(bad), fmt)
    shown = [c for c in dict.fromkeys([*times, *keys, cost_col]) if c is not None]
    examples = list(bad) + [
        (int(rows[i]), " ".join(f"{c}={table.column(c)[int(i)].as_py()!r}" for c in shown))
        for i in wrong[:max_examples]]
    report.malformed_examples = sorted(examples)[:max_examples]

    combo = codes[0][good].astype(np.int64)
    for c, t in zip(codes[1:], texts[1:]):
        combo = combo * len(t) + c[good]
    _, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # number clients by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    key = rank[inverse.ravel()].astype(np.int32)
    at = np.flatnonzero(good)[first[order]]
    names = [KEY_JOIN.join(t[c[i]] for c, t in zip(codes, texts)) for i in at.tolist()]
    return (report, time[good], key, rows[good], names,
            None if cost is None else cost[good], {"key_col": keys})
