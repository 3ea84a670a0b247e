"""Requests from table files: CSV, TSV, JSON lines, Parquet.

A table names its columns, so the caller says which hold what (``time_col``, ``time_format``,
``key_col``, ``cost_col``: see :mod:`ratelab.traces.frames`, which reads the columns, for a
DataFrame or an Arrow table too).

As with the logs, nothing is dropped quietly: a row whose time, key or cost is missing or
does not parse is **malformed** (counted, first examples kept, left out), a row the CSV
reader cannot split is malformed too, out-of-order rows are counted and sorted stably, and a
table that yields no request is an error. The tally is the same :class:`LoadReport`.

Reading is pyarrow's: its CSV and JSON readers and Parquet. A trace written by
:func:`write_parquet` (``ratelab traces convert``) keeps its key ids, names and the report of
the log it came from in the Parquet file, and reads back as the same Trace.
"""

from __future__ import annotations

import lzma
import re
import io
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .frames import DEFAULT_KEY_COL, DEFAULT_TIME_COL, TIME_FORMATS, columns_of, read_frame
from .report import (GZIP_ERRORS, NASA_TSV_HEADER, TABLE_FORMATS, LoadReport, compression_of,
                     damaged, decompressing, open_text)
from .trace import Trace, finish

__all__ = ["TABLE_FORMATS", "TIME_FORMATS", "load_table", "sniff_table", "read_file",
           "frame_trace", "write_parquet"]

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
    kind = compression_of(head)
    if kind is not None:
        try:
            head = decompressing(io.BytesIO(head), kind).read(1 << 12)
        except GZIP_ERRORS:
            head = head[:0]  # too little to judge: the loader reports the damage
    if head.lstrip()[:1] == b"{":
        return "jsonl"
    if head.split(b"\n", 1)[0].rstrip(b"\r").split(b"\t")[:7] == \
            [h.encode() for h in NASA_TSV_HEADER]:
        return None  # the NASA-HTTP TSV: a log format of its own
    suffixes = [s for s in path.suffixes if s not in (".gz", ".bz2", ".xz", ".zst")]
    if suffixes and suffixes[-1] in (".csv", ".tsv"):
        return suffixes[-1][1:]
    return None


# ---------------------------------------------------------------- reading files


def _input(path: Path):
    """The file as a pyarrow input stream, decompressed when it is gzip, bzip2, xz or zstd
    (judged by content)."""
    import pyarrow as pa  # heavy: imported where a table is read

    with open(path, "rb") as f:
        kind = compression_of(f.read(8))
    if kind == "xz":  # not one of pyarrow's codecs: the standard library's reader
        return pa.PythonFile(lzma.open(path), mode="r")
    raw = pa.OSFile(str(path), "rb")
    codec = {"gzip": "gzip", "bzip2": "bz2", "zstd": "zstd"}.get(kind)
    return pa.CompressedInputStream(raw, codec) if codec else raw


def read_file(path: Path, fmt: str, columns: list[str] | None = None,
              names: list[str] | None = None, pattern: str | None = None):
    """(Arrow table, line number of each row or None, malformed rows [(line, text)],
    lines read, header) of a CSV, TSV, JSON-lines or Parquet file. `names`: a CSV or TSV
    has no header line, and these are its columns' names, in order."""
    import pyarrow as pa  # heavy: imported where a table is read

    if fmt == "parquet":
        import pyarrow.parquet as pq  # heavy: imported where a table is read

        try:
            table = pq.read_table(path, columns=columns)
        except (pa.ArrowInvalid, OSError) as e:
            raise ValueError(f"{path}: not a readable Parquet file ({e})") from None
        return table, None, [], table.num_rows, False
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "regex":
        return _read_regex(path, compile_pattern(pattern))
    import pyarrow.csv as csv  # heavy: imported where a table is read

    try:
        with _input(path) as stream:
            head = stream.read(1 << 16)
    except (OSError, EOFError):
        head = b""  # a damaged gzip stream: the read below names it
    if b"\x00" in head:  # pyarrow would hand our row callback bytes it cannot decode
        raise ValueError(f"{path}: cannot be read as {fmt}: NUL bytes in its first "
                         f"{len(head):,} bytes (a binary file?)")
    bad: list[tuple[int | None, str]] = []

    def invalid(row) -> str:
        bad.append((row.number, row.text))
        return "skip"

    try:
        with _input(path) as stream:
            table = csv.read_csv(
                stream,
                read_options=csv.ReadOptions(use_threads=False, column_names=names),
                parse_options=csv.ParseOptions(delimiter="," if fmt == "csv" else "\t",
                                               invalid_row_handler=invalid),
                convert_options=csv.ConvertOptions(include_columns=columns,
                                                   strings_can_be_null=True))
    except (pa.ArrowInvalid, OSError, EOFError) as e:
        raise ValueError(f"{path}: cannot be read as {fmt} ({str(e).splitlines()[0]})") \
            from None
    rows = table.num_rows + len(bad)
    first = 1 if names else 2  # the line of the first row: after the header, if any
    taken = np.ones(rows, bool)
    numbers = [n for n, _ in bad if n is not None]
    if len(numbers) == len(bad):
        taken[np.asarray(numbers, dtype=np.int64) - first] = False
    lines = np.flatnonzero(taken)[:table.num_rows] + first
    return table, lines, [(n or 0, t) for n, t in bad], rows + first - 1, not names


def compile_pattern(pattern: str | None) -> re.Pattern:
    """`pattern` compiled; a ValueError naming ``pattern`` unless it is a regular expression
    with a named group ``time`` and at least one other."""
    if not pattern:
        raise ValueError("pattern: --format regex reads each line with a regular expression: "
                         "give it, with named groups such as (?P<time>...) and (?P<host>...)")
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        raise ValueError(f"pattern: not a regular expression ({e}): {pattern!r}") from None
    groups = set(compiled.groupindex)
    if "time" not in groups or len(groups) < 2:
        raise ValueError(f"pattern: needs a named group (?P<time>...) and one for the client "
                         f"such as (?P<host>...); it has {sorted(groups) or 'none'}")
    return compiled


def _read_regex(path: Path, pattern: re.Pattern):
    """A log of any line format: each line matched whole by `pattern` (trailing spaces and the
    line break aside); its named groups are the columns, a line that does not match is a row
    the reader could not split."""
    import pyarrow as pa  # heavy: imported where a table is read

    names = list(pattern.groupindex)
    values: dict[str, list] = {n: [] for n in names}
    lines, bad = [], []
    n = 0
    try:
        with open_text(path) as f:
            for n, line in enumerate(f, start=1):
                text = line.rstrip("\r\n")
                m = pattern.fullmatch(text.rstrip())
                if m is None:
                    bad.append((n, text))
                    continue
                for name in names:
                    values[name].append(m.group(name))
                lines.append(n)
    except GZIP_ERRORS as e:
        raise damaged(path, e, n) from None
    table = pa.table({name: pa.array(v, pa.string()) for name, v in values.items()})
    return table, np.asarray(lines, dtype=np.int64), bad, n, False


def _read_jsonl(path: Path):
    """A JSON-lines file: pyarrow's reader, or line by line (to count the lines that are not
    JSON objects) when pyarrow refuses the file."""
    import pyarrow as pa  # heavy: imported where a table is read
    import pyarrow.json as pj  # heavy: imported where a table is read

    try:
        with _input(path) as stream:
            table = pj.read_json(stream)
        return table, np.arange(table.num_rows) + 1, [], table.num_rows, False
    except (pa.ArrowInvalid, OSError, EOFError):
        pass
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


def frame_trace(frame, *, warn: bool = True, path=None, detected: bool = False,
                max_examples: int = 5, source: str = "<frame>", **options) -> Trace:
    """The Trace of a pandas DataFrame or Arrow table's rows: :func:`~.frames.read_frame`'s
    arrays (its `options`: columns, time format, line numbers, rows the file reader could
    not split), finished as every reader's are."""
    parts = read_frame(frame, source=source, max_examples=max_examples, **options)
    return finish(Path(path or source), *parts, max_examples=max_examples, warn=warn,
                  detected=detected)


def _looks_like_data(header: list[str]) -> bool:
    """Whether a header line holds a number among its names, as a first data row would."""
    return any(re.fullmatch(r"[-+]?\d[\d.,:/ ]*|.*\d\d.*[/:].*", h) for h in header)


def load_table(path, fmt: str, *, time_col: str | None = None, key_col=None,
               cost_col: str | None = None, time_format: str | None = None,
               columns=None, pattern: str | None = None, progress: bool = True,
               warn: bool = True, max_examples: int = 5, detected: bool = False) -> Trace:
    """The requests of a CSV, TSV, JSON-lines or Parquet file (see the module docs).

    `columns` (a list, or names joined by commas): a CSV or TSV without a header line, and
    the names of its columns in order, by which the other options name them. `pattern`
    (format "regex"): the regular expression each line must match, its named groups the
    columns; the client is its ``host`` group (or ``key``) unless `key_col` says otherwise.
    A Parquet file written by :func:`write_parquet` reads back as the trace it holds (its
    ids, names and report) unless other columns are asked for.
    """
    path = Path(path)
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"format must be one of {', '.join(TABLE_FORMATS)}, got {fmt!r}")
    names = None
    if columns is not None:
        names = columns_of(columns)
        if fmt not in ("csv", "tsv"):
            raise ValueError(f"columns= names the columns of a CSV or TSV without a header; "
                             f"{path.name} is read as {fmt}, which names its own")
        if len(set(names)) < len(names):
            raise ValueError(f"columns= gives a name twice: {','.join(names)}")
    if pattern is not None and fmt != "regex":
        raise ValueError(f"pattern: applies to format regex; {path.name} is read as {fmt}")
    if fmt == "regex" and key_col is None:
        groups = compile_pattern(pattern).groupindex
        key_col = "host" if "host" in groups else DEFAULT_KEY_COL
    if fmt == "parquet" and time_col is key_col is cost_col is time_format is None:
        stored = _stored(path)
        if stored is not None:
            return stored
    time_col = time_col or DEFAULT_TIME_COL
    key_col = key_col or DEFAULT_KEY_COL
    times = columns_of(time_col)
    wanted = [*times, *columns_of(key_col)] + ([cost_col] if cost_col else [])
    table, lines, bad, lines_read, header = read_file(path, fmt, names=names, pattern=pattern)

    def option_of(name: str) -> str:
        return "time_col" if name in times else "cost_col" if name == cost_col else "key_col"

    missing = [c for c in wanted if c not in table.column_names]
    if table.num_rows and missing:
        raise ValueError(f"{option_of(missing[0])}: {path} has no column {missing[0]!r} "
                         f"(its columns: {', '.join(table.column_names)}"
                         + ("; a file without a header line: name its columns with columns=)"
                            if names is None and fmt in ("csv", "tsv") and _looks_like_data(
                                table.column_names) else ")"))
    names = table.column_names
    twice = [c for c in dict.fromkeys(wanted) if names.count(c) > 1]
    if twice:
        where = "; ".join(f"{c!r} is columns "
                          + " and ".join(str(i + 1) for i, n in enumerate(names) if n == c)
                          for c in twice)
        raise ValueError(f"{option_of(twice[0])}: {path} names a column it reads more than "
                         f"once ({where}): rename one in the header, or read another column")
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
    import pyarrow as pa  # heavy: imported where a table is read
    import pyarrow.parquet as pq  # heavy: imported where a table is read

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
    return asdict(report)


def _stored(path: Path) -> Trace | None:
    """The trace in a Parquet file written by write_parquet, or None for any other file."""
    import pyarrow as pa  # heavy: imported where a table is read
    import pyarrow.parquet as pq  # heavy: imported where a table is read

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
