"""The floor under every reader: what a load found (:class:`LoadReport`), the damaged-line
bookkeeping, opening a log, and the reference parser of one line of each log format.

Nothing here builds a Trace; the readers above it — the reference line-by-line reader and the
compiled one (:mod:`ratelab.traces.fastclf`), the table readers (:mod:`ratelab.traces.tables`)
— fill a report with the same rules, and :func:`ratelab.traces.trace.finish` completes it:

* a line that does not parse is **malformed**: counted, its first few examples kept (line
  number and text), and left out of the trace (:func:`read_line`, the one place a log line is
  judged and counted);
* a request earlier than the one on the line before is **out of order**: counted, its first
  few examples kept, and the trace is sorted stably (ties keep file order).
"""

from __future__ import annotations

import bz2
import calendar
import gzip
import html
import io
import lzma
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

__all__ = ["LoadReport", "OUT_OF_ORDER_WARN_PCT", "describe", "describe_html", "LoadWarning",
           "NoRequestsError", "FORMATS", "TABLE_FORMATS", "GZIP_ERRORS", "COMPRESSIONS",
           "UNREAD_CONTAINERS", "compression_of", "decompressing", "damaged",
           "refuse_container", "nothing_read", "open_text", "detect_format",
           "sniff_format", "is_tsv_header", "line_parser", "read_line", "zone_offset_s"]

FORMATS = ("clf", "epa", "nasa-tsv")
"""clf: Common Log Format or Combined; epa: ITA EPA-HTTP; nasa-tsv: the NASA-HTTP TSV."""

TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet", "regex")
"""csv / tsv: a header line, then one row per line; jsonl: one JSON object per line; parquet
(read by :mod:`ratelab.traces.tables`); regex: any line format, each line matched by a regular
expression whose named groups are the columns (``pattern``)."""

NASA_TSV_HEADER = ["host", "logname", "time", "method", "url", "response", "bytes"]


# ---------------------------------------------------------------- the report


class LoadWarning(UserWarning):
    """A log had malformed lines or out-of-order timestamps (the text says how many)."""


OUT_OF_ORDER_WARN_PCT = 1.0
"""Above this share of requests out of order, a report warns that the times may not be a
timeline: a log goes backwards by a few requests where workers write in turn, not by many."""


@dataclass
class LoadReport:
    """What a loader found in a log: lines, requests, clients, and every irregularity counted.

    lines          lines read, header and blank lines included
    requests       lines parsed into requests (the trace's length)
    malformed      lines that did not parse (blank lines among them), left out of the trace
    dropped        why they were left out: reason -> lines (the counts sum to `malformed`)
    out_of_order   requests earlier than the request on the line before them
    time_zone      how the times were placed on UTC (a zone assumed is said so)
    *_examples     the first few: (line number, text) and (line number, time, time before)
    """

    source: str
    format: str
    lines: int = 0
    requests: int = 0
    clients: int = 0
    header: bool = False
    malformed: int = 0
    malformed_examples: list[tuple[int, str]] = field(default_factory=list)
    out_of_order: int = 0
    out_of_order_examples: list[tuple[int, float, float]] = field(default_factory=list)
    first_time: float | None = None
    last_time: float | None = None
    dropped: dict[str, int] = field(default_factory=dict)
    time_zone: str = ""

    @property
    def clean(self) -> bool:
        """True when no line was malformed and no request was out of order."""
        return self.malformed == 0 and self.out_of_order == 0

    @property
    def out_of_order_pct(self) -> float:
        """Requests out of order, in percent of the requests read."""
        return 100.0 * self.out_of_order / self.requests if self.requests else 0.0

    @property
    def warnings(self) -> list[str]:
        """What a reader of the figures must know before trusting them (one line each)."""
        out = []
        if self.out_of_order_pct > OUT_OF_ORDER_WARN_PCT:
            out.append(f"{self.out_of_order_pct:.1f}% of the requests are earlier than the "
                       "line before them: the times may not be a timeline (a shuffled, "
                       "merged or re-stamped log?); they were sorted, which is right only if "
                       "each time is true")
        return out

    def add_malformed(self, line_no: int, text: str, max_examples: int) -> None:
        """Count line `line_no` as malformed, keeping it (without its line break) among the
        first `max_examples` examples."""
        self.malformed += 1
        if len(self.malformed_examples) < max_examples:
            self.malformed_examples.append((line_no, text.rstrip("\r\n")))

    def complete_dropped(self, reason: str) -> None:
        """Give `reason` to the malformed lines that have none yet (a line reader knows one
        reason only: the line is not of its format)."""
        rest = self.malformed - sum(self.dropped.values())
        if rest > 0:
            self.dropped = {**self.dropped, reason: self.dropped.get(reason, 0) + rest}

    def __str__(self) -> str:
        return describe(self.to_dict())

    def _repr_pretty_(self, p, cycle) -> None:  # IPython's plain text: the report, as printed
        p.text(str(self))

    def _repr_html_(self) -> str:  # a notebook shows the report as a table
        return describe_html(self.to_dict())

    def brief(self) -> str:
        """One line: what was read and what was irregular (the detail is in ``str(report)``)."""
        irregular = [f"{n:,} {what}" for n, what in
                     [(self.malformed, "malformed lines left out"),
                      (self.out_of_order, "requests out of order (sorted stably)")] if n]
        return (f"{self.source}: {self.requests:,} requests from {self.clients:,} clients; "
                + ", ".join(irregular) + " (trace.meta['report'] has the detail)")

    def to_dict(self) -> dict:
        """The report as a --json record: plain values, the examples as objects."""
        return {
            "source": self.source, "format": self.format, "lines": self.lines,
            "requests": self.requests, "clients": self.clients, "header": self.header,
            "malformed": self.malformed, "dropped": dict(self.dropped),
            "malformed_examples": [{"line": n, "text": text}
                                   for n, text in self.malformed_examples],
            "out_of_order": self.out_of_order,
            "out_of_order_pct": round(self.out_of_order_pct, 4),
            "out_of_order_examples": [{"line": n, "time_s": t, "previous_s": before}
                                      for n, t, before in self.out_of_order_examples],
            "time_zone": self.time_zone, "first_s": self.first_time,
            "last_s": self.last_time, "warnings": self.warnings}


def describe(report: dict) -> str:
    """A load report's record (:meth:`LoadReport.to_dict`, as in every --json) as text: what
    every command prints above its figures."""
    r = report
    out = [f"{r['source']} ({r['format']}): {r['requests']:,} requests from "
           f"{r['clients']:,} clients in {r['lines']:,} lines"]
    if r["time_zone"]:
        out.append(f"  times: {r['time_zone']}")
    if r["malformed"]:
        why = ", ".join(f"{n:,} {reason}" for reason, n in r["dropped"].items())
        out.append(f"  {r['malformed']:,} malformed lines left out"
                   f"{f' ({why})' if why else ''}, first:")
        out += [f"    line {x['line']}: {x['text'][:120]!r}" for x in r["malformed_examples"]]
    if r["out_of_order"]:
        out.append(f"  {r['out_of_order']:,} requests out of order "
                   f"({r['out_of_order_pct']:.2g}%, sorted stably), first:")
        out += [f"    line {x['line']}: {_utc(x['time_s'])}, "
                f"{x['previous_s'] - x['time_s']:g} s before the line above"
                for x in r["out_of_order_examples"]]
    out += [f"  warning: {w}" for w in r["warnings"]]
    return "\n".join(out)


def describe_html(report: dict) -> str:
    """A load report's record as an HTML fragment (a ``<div class="load-report">``): the same
    facts as :func:`describe`, what was read in a table, then what was left out or sorted,
    with the first examples, and the warnings. Every text from the log is escaped."""
    r, e = report, html.escape
    rows = [("source", f"{r['source']} ({r['format']})"), ("lines", f"{r['lines']:,}"),
            ("requests", f"{r['requests']:,}"), ("clients", f"{r['clients']:,}"),
            ("malformed lines left out", f"{r['malformed']:,}"),
            ("requests out of order (sorted stably)",
             f"{r['out_of_order']:,} ({r['out_of_order_pct']:.2g}%)")]
    if r["time_zone"]:
        rows.append(("times", r["time_zone"]))
    if r["first_s"] is not None:
        rows.append(("from / to", f"{_utc(r['first_s'])} / {_utc(r['last_s'])}"))
    out = ['<div class="load-report"><table>']
    out += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows]
    out.append("</table>")
    if r["malformed"]:
        why = ", ".join(f"{n:,} {reason}" for reason, n in r["dropped"].items())
        out.append(f"<p>{r['malformed']:,} malformed lines left out"
                   f"{e(f' ({why})') if why else ''}; the first:</p><ul>")
        out += [f"<li>line {x['line']}: <code>{e(x['text'][:120])}</code></li>"
                for x in r["malformed_examples"]]
        out.append("</ul>")
    if r["out_of_order"]:
        out.append(f"<p>{r['out_of_order']:,} requests out of order, the first:</p><ul>")
        out += [f"<li>line {x['line']}: {_utc(x['time_s'])}, "
                f"{x['previous_s'] - x['time_s']:g} s before the line above</li>"
                for x in r["out_of_order_examples"]]
        out.append("</ul>")
    out += [f'<p class="warning">warning: {e(w)}</p>' for w in r["warnings"]]
    out.append("</div>")
    return "\n".join(out)


def _utc(t: float) -> str:
    """Seconds since the epoch as 'YYYY-MM-DD HH:MM:SS UTC'."""
    return str(np.datetime64(int(t), "s")).replace("T", " ") + " UTC"


def read_line(report: LoadReport, line_no: int, line: str, parse, fmt: str,
              max_examples: int) -> tuple[str, float] | None:
    """(host, time) of line `line_no` as `parse` reads it, or None when it is no request: the
    NASA TSV's header on line 1 (``report.header`` set) or a malformed line (counted in
    `report`). Both readers judge every line they do not read themselves here."""
    if line_no == 1 and fmt == "nasa-tsv" and is_tsv_header(line):
        report.header = True
        return None
    got = parse(line)
    if got is None:
        report.add_malformed(line_no, line, max_examples)
    return got


# ---------------------------------------------------------------- errors


class NoRequestsError(ValueError):
    """A file from which no request could be read (empty, binary, wrong format, …)."""

    def __init__(self, path, report: LoadReport, detected: bool) -> None:
        self.path, self.report = Path(path), report
        super().__init__(nothing_read(path, report, detected))


def nothing_read(path, report: LoadReport, detected: bool) -> str:
    """One line saying a file gave no requests: what was read and what to try."""
    how = f"{report.format} (judged from its first lines)" if detected else report.format
    if report.lines == 0:
        what = "it is empty (0 lines)"
    else:
        what = f"{report.lines:,} lines, {report.malformed:,} malformed"
        if report.malformed_examples:
            n, text = report.malformed_examples[0]
            what += f", first malformed line {n}: {text[:80]!r}"
            if "\x00" in text:
                what += " (NUL bytes: a binary file?)"
    why = max(report.dropped, key=report.dropped.get) if report.dropped else ""
    if report.format == "regex" and why == "lines that do not match the pattern":
        todo = ("Check the pattern: it must match a whole line (fullmatch), its named groups "
                "giving the time and the client")
    elif why == "unreadable time":  # a table whose time column did not parse as asked
        todo = ("Give the time column's form with time_format: s, ms, us, ns, iso or a "
                "strftime form such as %d/%m/%Y %H:%M:%S (or another column with time_col)")
    elif why == "missing key":
        todo = "Name the column of clients with key_col"
    else:
        todo = (f"Try another format (--format, or format= in Python): "
                f"{', '.join(FORMATS + TABLE_FORMATS)}")
    return f"{path}: no requests read as {how}: {what}. {todo}"


def damaged(path, error: BaseException, lines: int = 0) -> ValueError:
    """The ValueError for a file whose gzip stream cannot be read to its end."""
    after = f" after {lines:,} lines" if lines else ""
    try:
        with open(path, "rb") as f:
            kind = compression_of(f.read(8)) or "compressed"
    except OSError:
        kind = "compressed"
    if isinstance(error, EOFError):
        return ValueError(f"{path}: truncated {kind} file: the compressed stream ends before "
                          f"its end marker{after} (an interrupted copy or download?)")
    return ValueError(f"{path}: damaged {kind} file{after} ({error})")


GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError, OSError)
"""What reading a compressed stream raises where it is truncated or damaged (any of the
compressions read: an OSError from bz2 or pyarrow's zstd among them)."""

COMPRESSIONS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
                (b"\x28\xb5\x2f\xfd", "zstd"))
"""The compressions every reader opens, by their first bytes: gzip, bzip2 and xz through the
standard library, zstd through pyarrow."""

UNREAD_CONTAINERS = {  # first bytes -> (what the file is, the command that opens it)
    b"PK\x03\x04": ("a zip archive", "unzip {}"),
    b"7z\xbc\xaf\x27\x1c": ("a 7-Zip archive", "7z x {}"),
}


def compression_of(head: bytes) -> str | None:
    """The compression a file's first bytes say (see COMPRESSIONS), or None."""
    return next((kind for magic, kind in COMPRESSIONS if head.startswith(magic)), None)


def decompressing(raw, kind: str | None):
    """A binary stream of `raw`'s content, decompressed as `kind` says (None: `raw` itself)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    if kind == "xz":
        return lzma.LZMAFile(raw)
    if kind == "zstd":
        import pyarrow as pa  # a heavy dependency: only for a zstd file

        return pa.CompressedInputStream(pa.PythonFile(raw, mode="r"), "zstd")
    return raw


def refuse_container(path) -> None:
    """A ValueError naming `path` when it is compressed or archived in a form the readers do
    not open (they read plain and gzip files), with the command that opens it."""
    with open(path, "rb") as f:
        head = f.read(8)
    for magic, (what, opener) in UNREAD_CONTAINERS.items():
        if head.startswith(magic):
            raise ValueError(f"{path} is {what}: ratelab reads plain files and gzip, bzip2, xz "
                             f"or zstd ones; open it first ({opener.format(Path(path).name)})")


# ---------------------------------------------------------------- opening files


@contextmanager
def open_text(path) -> Iterator[io.TextIOBase]:
    """The file at `path` as text (latin-1, so every byte reads), decompressed if it is gzip,
    bzip2, xz or zstd (judged by content).

    The text stream's ``raw`` attribute is the file on disk (its ``tell()`` is how far the
    reading has gone, for a progress bar).
    """
    with open(path, "rb") as raw:
        binary = decompressing(raw, compression_of(raw.peek(8)[:8]))
        text = io.TextIOWrapper(binary, encoding="latin-1", newline="")
        text.raw_file = raw  # type: ignore[attr-defined]
        try:
            yield text
        finally:
            text.close()


def is_tsv_header(line: str) -> bool:
    """Whether `line` is the NASA-HTTP TSV's header (the column names)."""
    return line.rstrip("\r\n").split("\t")[:7] == NASA_TSV_HEADER


def detect_format(first_line: str) -> str:
    """The format of a log, judged by its first line: "nasa-tsv", "epa" or "clf"."""
    if is_tsv_header(first_line) or "\t" in first_line:
        return "nasa-tsv"
    if _EPA.match(first_line):
        return "epa"
    return "clf"


def sniff_format(path, lines: int = 20) -> str:
    """The format most of the first `lines` non-blank lines look like (the first on a tie)."""
    votes: dict[str, int] = {}
    with open_text(path) as f:
        for line in f:
            if line.strip():
                fmt = detect_format(line)
                votes[fmt] = votes.get(fmt, 0) + 1
                if sum(votes.values()) == lines:
                    break
    return max(votes, key=votes.get) if votes else "clf"


# ---------------------------------------------------------------- one line of each format

# host ident authuser [01/Jul/1995:00:00:01 -0400] "request" status bytes [anything]
# The request may hold quotes (the shortest string that lets the rest match is taken);
# Combined's referer and user agent, or any other trailing fields, are read past, not parsed.
_CLF = re.compile(r'(\S+) \S+ \S+ \[(\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d) ([+-]\d{4})\] '
                  r'"(.*?)" (\d{3}) (\d+|-)(?:\s.*)?$')
# host [DD:HH:MM:SS] "request" status [bytes]  (some lines have no bytes field)
_EPA = re.compile(r'(\S+) \[(\d\d):(\d\d):(\d\d):(\d\d)\] "(.*)" (\d{3})(?: (\d+|-))?\s*$')

_MONTHS = {m: i for i, m in enumerate(calendar.month_abbr) if m}


ZONE_MAX_MIN = 14 * 60
"""The largest UTC offset in use, in minutes (UTC+14:00, the Line Islands; UTC−12:00 the
most negative). A zone beyond it, or with 60 minutes or more, cannot exist: the line is
malformed."""


def zone_offset_s(zone: str) -> int | None:
    """A CLF zone ("+0130", "-0400") in seconds east of UTC, or None when none can exist."""
    hours, minutes = int(zone[1:3]), int(zone[3:5])
    if minutes > 59 or hours * 60 + minutes > ZONE_MAX_MIN:
        return None
    return (-1 if zone[0] == "-" else 1) * (hours * 3600 + minutes * 60)


class _ClfClock:
    """Seconds since the epoch for CLF stamps, with each day and zone worked out once."""

    def __init__(self) -> None:
        self.days: dict[str, int] = {}
        self.zones: dict[str, int] = {}

    def __call__(self, stamp: str, zone: str) -> float | None:
        day = self.days.get(stamp[:11])
        if day is None:
            try:
                d, mon, y = stamp[:11].split("/")
                day = calendar.timegm((int(y), _MONTHS[mon], int(d), 0, 0, 0))
                if not 1 <= int(d) <= calendar.monthrange(int(y), _MONTHS[mon])[1]:
                    return None
            except (KeyError, ValueError):
                return None
            self.days[stamp[:11]] = day
        off = self.zones.get(zone)
        if off is None:
            off = zone_offset_s(zone)
            if off is None:
                return None
            self.zones[zone] = off
        h, m, s = int(stamp[12:14]), int(stamp[15:17]), int(stamp[18:20])
        if h > 23 or m > 59 or s > 60:
            return None
        return float(day + h * 3600 + m * 60 + s - off)


def _clf_parser() -> Callable[[str], tuple[str, float] | None]:
    clock = _ClfClock()
    last = ["", "", 0.0]  # stamp, zone and time of the line before: logs repeat seconds

    def parse(line: str):
        m = _CLF.match(line)
        if m is None:
            return None
        host, stamp, zone = m.group(1, 2, 3)
        if stamp == last[0] and zone == last[1]:
            return host, last[2]
        t = clock(stamp, zone)
        if t is None:
            return None
        last[:] = stamp, zone, t
        return host, t

    return parse


def _epa_month(year: int, month: int, utc_offset_s: float) -> tuple[float, int]:
    """(time of the EPA log's day 0 — the day before the month's first — in seconds since
    the epoch, days of the month): an EPA line's time is base + day * 86400 + h:m:s."""
    base = calendar.timegm((year, month, 1, 0, 0, 0)) - utc_offset_s - 86400
    return base, calendar.monthrange(year, month)[1]


def _epa_parser(year: int, month: int, utc_offset_s: float):
    base, days = _epa_month(year, month, utc_offset_s)

    def parse(line: str):
        m = _EPA.match(line)
        if m is None:
            return None
        d, h, mi, s = int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
        if not (1 <= d <= days and h <= 23 and mi <= 59 and s <= 60):
            return None
        return m.group(1), float(base + d * 86400 + h * 3600 + mi * 60 + s)

    return parse


def _nasa_tsv_parser():
    def parse(line: str):
        f = line.rstrip("\r\n").split("\t")
        if len(f) < 7 or any(f[7:]) or not f[0]:
            return None
        try:
            t = int(f[2])
            int(f[5])
            if f[6] != "-":  # no bytes sent (a 304): "-", as in CLF
                int(f[6])
        except ValueError:
            return None
        return f[0], float(t)

    return parse


def line_parser(fmt: str, epa_year: int = 1995, epa_month: int = 8,
                epa_utc_offset_s: float = -4 * 3600.0):
    """The reference parser of one line of `fmt` ("clf", "epa", "nasa-tsv"): line -> (host,
    time) or None. The EPA format has only the day of the month: its month, year and UTC
    offset complete it."""
    if fmt == "clf":
        return _clf_parser()
    if fmt == "epa":
        return _epa_parser(epa_year, epa_month, epa_utc_offset_s)
    if fmt == "nasa-tsv":
        return _nasa_tsv_parser()
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
