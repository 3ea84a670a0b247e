"""Requests from tables: CSV, TSV, JSON lines, Parquet, a pandas DataFrame or an Arrow table.

A table names its columns, so the caller says which hold what:

* ``time_col`` (default "time") and ``time_format``: epoch seconds ("s"), milliseconds
  ("ms"), microseconds ("us"), nanoseconds ("ns"), ISO 8601 text ("iso"), or a strftime form
  such as ``"%d/%b/%Y:%H:%M:%S %z"`` (no zone in the text: UTC). Left as None, a timestamp
  column is read as such, numbers as epoch seconds, and text as epoch seconds or ISO 8601,
  whichever reads more of its rows;
* ``key_col`` (default "key"): one column or several, as a list or comma-separated
  (``"ip,path"``): each distinct combination is one client, named by its values joined with
  a space, numbered in order of first appearance;
* ``cost_col`` (optional): the cost of each request, a positive number.

As with the logs, nothing is dropped quietly: a row whose time, key or cost is missing or
does not parse is **malformed** (counted, first examples kept, left out), a row the CSV
reader cannot split is malformed too, out-of-order rows are counted and sorted stably, and a
table that yields no request is an error. The tally is the same :class:`LoadReport`.

Reading is pyarrow's: its CSV and JSON readers and Parquet. A trace written by
:func:`write_parquet` (``ratelab traces convert``) keeps its key ids, names and the report of
the log it came from in the Parquet file, and reads back as the same Trace.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from .loaders import LoadReport, finish
from .trace import Trace

TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet")
"""csv / tsv: a header line, then one row per line; jsonl: one JSON object per line; parquet."""

TIME_UNITS = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
TIME_FORMATS = (*TIME_UNITS, "iso")
"""Named time formats; any text with a % in it is a strftime form."""

DEFAULT_TIME_COL, DEFAULT_KEY_COL = "time", "key"
KEY_JOIN = " "
"""Between the values of a combined key in its name (an IP and a path: "10.0.0.1 /login")."""

META_KEY = b"ratelab"
"""Parquet metadata key of a converted trace: its report and where it came from (JSON)."""


def sniff_table(path) -> str | None:
    """The table format of the file at `path` judged from its first bytes (Parquet, JSON
    lines) or its name (.csv, .tsv, optionally .gz); None when it does not look like one (or
    is the NASA-HTTP TSV, which the log loaders read)."""
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:4] == b"PAR1":
        return "parquet"
    if head[:2] == b"\x1f\x8b":
        try:
            head = gzip.GzipFile(fileobj=__import__("io").BytesIO(head)).read(1 << 12)
        except (EOFError, OSError):
            head = head[:0]  # too little to judge: the loader reports the damage
    if head.lstrip()[:1] == b"{":
        return "jsonl"
    from .loaders import NASA_TSV_HEADER

    if head.split(b"\n", 1)[0].rstrip(b"\r").split(b"\t")[:7] == \
            [h.encode() for h in NASA_TSV_HEADER]:
        return None  # the NASA-HTTP TSV: a log format of its own
    suffixes = [s for s in path.suffixes if s != ".gz"]
    if suffixes and suffixes[-1] in (".csv", ".tsv"):
        return suffixes[-1][1:]
    return None


def columns_of(key_col) -> list[str]:
    """`key_col` as a list of column names ("ip,path" or ["ip", "path"])."""
    cols = key_col.split(",") if isinstance(key_col, str) else list(key_col)
    cols = [c.strip() for c in cols]
    if not cols or not all(cols):
        raise ValueError(f"key_col must name one or more columns, got {key_col!r}")
    return cols


# ---------------------------------------------------------------- reading files


def _input(path: Path):
    """The file as a pyarrow input stream, gunzipped when it is gzip (judged by content)."""
    import pyarrow as pa

    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    raw = pa.OSFile(str(path), "rb")
    return pa.CompressedInputStream(raw, "gzip") if gz else raw


def read_file(path: Path, fmt: str, columns: list[str] | None = None):
    """(Arrow table, line number of each row or None, malformed rows [(line, text)],
    lines read, header) of a CSV, TSV, JSON-lines or Parquet file."""
    import pyarrow as pa

    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path, columns=columns)
        except (pa.ArrowInvalid, OSError) as e:
            raise ValueError(f"{path}: not a readable Parquet file ({e})") from None
        return table, None, [], table.num_rows, False
    if fmt == "jsonl":
        return _read_jsonl(path)
    import pyarrow.csv as csv

    bad: list[tuple[int | None, str]] = []

    def invalid(row) -> str:
        bad.append((row.number, row.text))
        return "skip"

    try:
        with _input(path) as stream:
            table = csv.read_csv(
                stream,
                read_options=csv.ReadOptions(use_threads=False),
                parse_options=csv.ParseOptions(delimiter="," if fmt == "csv" else "\t",
                                               invalid_row_handler=invalid),
                convert_options=csv.ConvertOptions(include_columns=columns,
                                                   strings_can_be_null=True))
    except (pa.ArrowInvalid, OSError, EOFError) as e:
        raise ValueError(f"{path}: cannot be read as {fmt} ({str(e).splitlines()[0]})") \
            from None
    rows = table.num_rows + len(bad)
    taken = np.ones(rows, bool)
    numbers = [n for n, _ in bad if n is not None]
    if len(numbers) == len(bad):
        taken[np.asarray(numbers, dtype=np.int64) - 2] = False  # number: 1 is the header
    lines = np.flatnonzero(taken)[:table.num_rows] + 2
    return table, lines, [(n or 0, t) for n, t in bad], rows + 1, True


def _read_jsonl(path: Path):
    """A JSON-lines file: pyarrow's reader, or line by line (to count the lines that are not
    JSON objects) when pyarrow refuses the file."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        with _input(path) as stream:
            table = pj.read_json(stream)
        return table, np.arange(table.num_rows) + 1, [], table.num_rows, False
    except (pa.ArrowInvalid, OSError, EOFError):
        pass
    from .loaders import GZIP_ERRORS, damaged, open_text

    records, lines, bad = [], [], []
    n = 0
    try:
        with open_text(path) as f:
            for n, line in enumerate(f, start=1):
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = None
                if isinstance(obj, dict):
                    records.append(obj)
                    lines.append(n)
                else:
                    bad.append((n, line.rstrip("\r\n")))
    except GZIP_ERRORS as e:
        raise damaged(path, e, n) from None
    names = list(dict.fromkeys(k for r in records for k in r))
    columns = {}
    for name in names:
        values = [r.get(name) for r in records]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds ("u1" and 7): as text
            columns[name] = pa.array([None if v is None else str(v) for v in values])
    return pa.table(columns), np.asarray(lines, dtype=np.int64), bad, n, False


# ---------------------------------------------------------------- columns to a trace


def _seconds(column, time_format, name: str):
    """Float epoch seconds of a time column (NaN where it does not parse)."""
    import pandas as pd
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
            return _datetime_seconds(pd.to_datetime(values, utc=True))
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            return values.to_numpy(dtype=np.float64, na_value=np.nan)
        # text: epoch seconds or ISO 8601, whichever reads more rows (a few bad ones aside)
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        iso = _datetime_seconds(pd.to_datetime(values.astype("string"), utc=True,
                                               errors="coerce", format="ISO8601"))
        return numbers if np.isfinite(numbers).sum() >= np.isfinite(iso).sum() else iso
    if time_format in TIME_UNITS:
        if pd.api.types.is_bool_dtype(values):
            raise ValueError(f"time column {name!r} holds booleans, not times")
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        return numbers / TIME_UNITS[time_format]
    text = values.astype("string")
    if time_format == "iso":
        parsed = pd.to_datetime(text, utc=True, errors="coerce", format="ISO8601")
    else:
        parsed = pd.to_datetime(text, utc=True, errors="coerce", format=time_format)
    return _datetime_seconds(parsed)


def _datetime_seconds(parsed) -> np.ndarray:
    """Epoch seconds of a pandas datetime Series (NaN for NaT), exact to the microsecond."""
    ns = parsed.dt.tz_convert("UTC").dt.tz_localize(None).astype("datetime64[ns]")
    raw = ns.to_numpy().astype("int64")
    out = (raw // 10**9).astype(np.float64) + (raw % 10**9) / 1e9
    out[ns.isna().to_numpy()] = np.nan
    return out


def _labels(column) -> tuple[np.ndarray, list[str]]:
    """(codes, text) of a key column: codes by first appearance (-1 for missing), text of
    each code."""
    import pandas as pd
    import pyarrow as pa

    values = column.to_pandas() if isinstance(column, pa.ChunkedArray) else pd.Series(column)
    if pd.api.types.is_float_dtype(values):  # 3.0 -> "3": a float column of whole ids
        whole = values.dropna()
        if (whole == np.floor(whole)).all():
            values = values.astype("Int64")
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes, [str(u) for u in uniques]


def frame_trace(frame, *, time_col: str = DEFAULT_TIME_COL, key_col=DEFAULT_KEY_COL,
                cost_col: str | None = None, time_format: str | None = None,
                source: str = "<frame>", fmt: str = "frame", lines=None, bad=(),
                lines_read: int | None = None, header: bool = False, max_examples: int = 5,
                warn: bool = True, path=None, detected: bool = False) -> Trace:
    """The Trace of a pandas DataFrame or Arrow table's rows (see the module docs).

    lines: the line number of each row in its file (default: row numbers from 1); bad: rows
    the file reader could not split, as (line, text), counted as malformed.
    """
    import pyarrow as pa

    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(
        frame, preserve_index=False)
    keys = columns_of(key_col)
    for option, name in [("time_col", time_col), *[("key_col", k) for k in keys],
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
        report.malformed_examples = list(bad)[:max_examples]
        return finish(Path(path or source), report, np.empty(0), np.empty(0, np.int32),
                      rows, [], None, max_examples=max_examples, warn=warn,
                      detected=detected)

    time = _seconds(table.column(time_col), time_format, time_col)
    good = np.isfinite(time)
    codes = []
    texts = []
    for k in keys:
        c, t = _labels(table.column(k))
        codes.append(c)
        texts.append(t)
        good &= c >= 0
    cost = None
    if cost_col is not None:
        import pandas as pd

        values = table.column(cost_col).to_pandas()
        if pd.api.types.is_bool_dtype(values):
            raise ValueError(f"cost column {cost_col!r} holds booleans, not costs")
        cost = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        good &= np.isfinite(cost) & (cost > 0)

    wrong = np.flatnonzero(~good)
    report.malformed = len(bad) + len(wrong)
    shown = [c for c in dict.fromkeys([time_col, *keys, cost_col]) if c is not None]
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
    return finish(Path(path or source), report, time[good], key, rows[good], names,
                  None if cost is None else cost[good], max_examples=max_examples, warn=warn,
                  detected=detected, meta={"key_col": keys})


def load_table(path, fmt: str, *, time_col: str | None = None, key_col=None,
               cost_col: str | None = None, time_format: str | None = None,
               progress: bool = True, warn: bool = True, max_examples: int = 5,
               detected: bool = False) -> Trace:
    """The requests of a CSV, TSV, JSON-lines or Parquet file (see the module docs).

    A Parquet file written by :func:`write_parquet` reads back as the trace it holds (its
    ids, names and report) unless other columns are asked for.
    """
    path = Path(path)
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"format must be one of {', '.join(TABLE_FORMATS)}, got {fmt!r}")
    if fmt == "parquet" and time_col is key_col is cost_col is time_format is None:
        stored = _stored(path)
        if stored is not None:
            return stored
    time_col = time_col or DEFAULT_TIME_COL
    key_col = key_col or DEFAULT_KEY_COL
    wanted = [time_col, *columns_of(key_col)] + ([cost_col] if cost_col else [])
    table, lines, bad, lines_read, header = read_file(path, fmt)
    missing = [c for c in wanted if c not in table.column_names]
    if table.num_rows and missing:
        option = ("time_col" if missing[0] == time_col else
                  "cost_col" if missing[0] == cost_col else "key_col")
        raise ValueError(f"{path}: {option} (--{option.replace('_', '-')}): no column "
                         f"{missing[0]!r}; its columns: {', '.join(table.column_names)}")
    if table.num_rows:
        table = table.select(list(dict.fromkeys(wanted)))
    return frame_trace(table, time_col=time_col, key_col=key_col, cost_col=cost_col,
                       time_format=time_format, source=path.name, fmt=fmt, lines=lines,
                       bad=bad, lines_read=lines_read, header=header,
                       max_examples=max_examples, warn=warn, path=path, detected=detected)


# ---------------------------------------------------------------- a trace as Parquet


def write_parquet(trace: Trace, path) -> Path:
    """Write `trace` to a Parquet file: columns time (s), key (the client's name), key_id
    (int32), cost (when the trace has one); its load report and source in the file's
    metadata, so that :func:`load_table` reads back the same Trace."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = np.asarray([trace.name_of(k) for k in range(trace.n_keys)], dtype=object)
    cols = {"time": pa.array(trace.time, pa.float64()),
            "key": pa.array(names[trace.key] if len(trace) else [], pa.string()),
            "key_id": pa.array(trace.key, pa.int32())}
    if trace.cost is not None:
        cols["cost"] = pa.array(trace.cost, pa.float64())
    report = trace.meta.get("report")
    meta = {"version": 1, "n_keys": trace.n_keys,
            "source": trace.meta.get("source"), "format": trace.meta.get("format"),
            "report": None if report is None else _report_dict(report)}
    table = pa.table(cols).replace_schema_metadata({META_KEY: json.dumps(meta).encode()})
    path = Path(path)
    pq.write_table(table, path, compression="zstd")
    return path


def _report_dict(report: LoadReport) -> dict:
    from dataclasses import asdict

    return asdict(report)


def _stored(path: Path) -> Trace | None:
    """The trace in a Parquet file written by write_parquet, or None for any other file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise ValueError(f"{path}: not a readable Parquet file ({e})") from None
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        return None
    meta = json.loads(raw)
    table = pq.read_table(path)
    time = table.column("time").to_numpy()
    key = table.column("key_id").to_numpy().astype(np.int32)
    names = [""] * meta["n_keys"]
    ids, first = np.unique(key, return_index=True)
    text = table.column("key").take(pa.array(first)).to_pylist()
    for k, name in zip(ids.tolist(), text):
        names[k] = name
    cost = table.column("cost").to_numpy() if "cost" in table.column_names else None
    report = meta["report"]
    if report is not None:
        report = LoadReport(**{**report,
                               "malformed_examples": [tuple(x) for x in
                                                      report["malformed_examples"]],
                               "out_of_order_examples": [tuple(x) for x in
                                                         report["out_of_order_examples"]]})
    return Trace(time, key, cost, names,
                 {"report": report, "out_of_order": 0 if report is None
                  else report.out_of_order, "source": meta["source"],
                  "format": meta["format"], "parquet": str(path)})
