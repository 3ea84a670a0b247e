"""``ratelab traces convert`` and ``ratelab bench ingest``, and the options that say how to read
a log or a table (``--format``, ``--time-col`` …), shared by every command that reads one.

    ratelab traces convert access.log.gz access.parquet
    ratelab traces convert events.csv events.parquet --time-col ts --time-format ms \\
        --key-col ip,path
    ratelab bench ingest --lines 2000000 --json
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from .support import (EnvironmentFailure, HelpFormatter, UsageError, add_debug, command,
                           count, seed)

from ..traces.loaders import ENGINES, FORMATS, load_log
from ..traces.report import describe
from ..traces.tables import TABLE_FORMATS, TIME_FORMATS, write_parquet


def add_input_options(p: argparse.ArgumentParser, what: str = "the file") -> None:
    """Add --format, --pattern, --columns, --time-col, --key-col, --cost-col, --time-format
    and --reader to `p`."""
    g = p.add_argument_group(f"how to read {what}")
    g.add_argument("--format", choices=("auto", "common", "combined") + FORMATS + TABLE_FORMATS,
                   default="auto",
                   help="clf (Common or Combined, nginx and Apache defaults), epa, nasa-tsv, "
                        "a table: csv, tsv, jsonl, parquet, or regex: any line format, read "
                        "with --pattern (default: auto, judged from the first bytes and "
                        "lines; csv/tsv also from the name)")
    g.add_argument("--pattern", metavar="REGEX", default=None,
                   help="with --format regex: the regular expression each line must match, "
                        "its named groups the columns: (?P<time>...) and the client's "
                        "(?P<host>...) (or another named by --key-col), optionally "
                        "(?P<cost>...) with --cost-col cost (see docs/traces.md) (default: "
                        "none)")
    g.add_argument("--columns", metavar="NAME[,NAME...]", default=None,
                   help="csv, tsv: the file has no header line; these are its columns' names, "
                        "in order, by which the other options name them (default: the header)")
    g.add_argument("--time-col", metavar="COL[,COL]", default=None,
                   help="tables: the column of request times, or a date and a time of day in "
                        "two columns (date,time: joined with a space) (default: time)")
    g.add_argument("--time-format", metavar="FMT", default=None,
                   help=f"tables: how --time-col reads: {', '.join(TIME_FORMATS)} (epoch "
                        "seconds, milliseconds, microseconds, nanoseconds; ISO 8601) or a "
                        "strftime form such as '%d/%b/%Y:%H:%M:%S %z' (default: "
                        "timestamps as such, numbers as epoch seconds, text as epoch seconds "
                        "or ISO 8601, whichever reads more rows)")
    g.add_argument("--key-col", metavar="COL[,COL...]", default=None,
                   help="tables: the client column, or several joined by commas (ip,path: "
                        "one client per IP and path) (default: key)")
    g.add_argument("--cost-col", metavar="COL", default=None,
                   help="tables: the cost of each request, a positive number (default: none, "
                        "every request costs 1)")
    g.add_argument("--reader", choices=ENGINES, default="auto",
                   help="fast: the compiled reader of CLF, EPA and NASA TSV logs; reference: "
                        "line by line; the same trace either way (default: auto, the fast one)")


COLUMN_FLAGS = {"time_col": "--time-col", "key_col": "--key-col", "cost_col": "--cost-col",
                "time_format": "--time-format", "columns": "--columns", "pattern": "--pattern"}
"""The reading options of tables, by the parameter the readers' messages name."""


def _named(param: str) -> str:
    """The pattern of `param` named in a reader's message: the word itself, or for
    ``columns`` (a word messages use in its plain sense too) ``columns=``."""
    return "columns=" if param == "columns" else rf"(?<![\w-]){param}(?![\w-])"


def read_input(path, args, option: str = "--trace", progress: bool = True):
    """The trace of the file at `path`, read as `args` say. A message about a column option
    is a UsageError naming its flag (the parameter named in it replaced by the flag); any other
    file that cannot be read (damaged, nothing in it) a ValueError naming `option`."""
    try:
        return load_log(path, args.format, engine=args.reader, progress=progress, warn=False,
                        time_col=args.time_col, key_col=args.key_col,
                        cost_col=args.cost_col, time_format=args.time_format,
                        columns=args.columns, pattern=args.pattern)
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{option}: {e}") from None
    except ValueError as e:
        message = str(e)
        named = {m.start(): param for param in COLUMN_FLAGS
                 for m in re.finditer(_named(param), message)}
        if not named:
            raise ValueError(f"{option}: {message}") from None
        for param, flag in COLUMN_FLAGS.items():
            message = re.sub(_named(param), flag, message.replace(f"{param} ({flag})", flag))
        raise UsageError(COLUMN_FLAGS[named[min(named)]], message) from None  # the first named


# ---------------------------------------------------------------- ratelab traces


def add_traces(sub) -> None:
    """Add ``ratelab traces convert``."""
    p = sub.add_parser("traces", help="convert a log or table to Parquet, read once",
                       description="Work with request traces read from logs and tables.",
                       epilog="example:\n  ratelab traces convert access.log.gz access.parquet",
                       formatter_class=HelpFormatter)
    add_debug(p)
    p.set_defaults(_parser=p)
    actions = p.add_subparsers(dest="traces_command", metavar="ACTION", required=True)
    c = command(
        actions, "convert", run=run_convert, render=render_convert,
        help="read a log or table once and write it, sorted, as Parquet",
        description="Read LOG (a log or a table; plain, gzip, bzip2, xz or zstd) once, sort "
                    "it stably by time "
                    "and write it to OUT as Parquet (columns time in epoch seconds, key, "
                    "key_id, cost), with the load report (lines, malformed lines, requests "
                    "out of order) in the file's metadata. `--trace OUT` then reads the same "
                    "trace back at Parquet speed. A missing LOG exits 1; a LOG that is empty "
                    "or not a log exits 2, naming it.",
        example="ratelab traces convert access.log.gz access.parquet\n"
                "ratelab traces convert events.csv events.parquet --time-col ts "
                "--time-format ms --key-col ip,path")
    c.add_argument("log", metavar="LOG", help="the log or table to read")
    c.add_argument("out", metavar="OUT", help="the Parquet file to write (name ends in .parquet)")
    add_input_options(c, "LOG")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")


def convert(log, out, args=None, progress: bool = True) -> dict:
    """Read `log` and write it to `out` as Parquet; a record of what was read and written.

    A ValueError naming LOG for a file that is empty or not a log, naming OUT for an OUT
    whose name does not end in .parquet; FileNotFoundError for a missing `log`."""
    out = Path(out)
    if out.suffix != ".parquet":
        raise ValueError(f"OUT: {out} should end in .parquet")
    if args is None:
        args = argparse.Namespace(format="auto", reader="auto", time_col=None, key_col=None,
                                  cost_col=None, time_format=None, columns=None,
                                  pattern=None)
    trace = read_input(log, args, "LOG", progress=progress)
    write_parquet(trace, out)
    report = trace.meta["report"]
    return {"log": str(log), "out": str(out), "format": report.format,
            "lines": report.lines, "requests": len(trace), "clients": trace.n_keys,
            "malformed_lines": report.malformed, "out_of_order": report.out_of_order,
            "out_bytes": out.stat().st_size, "load_report": report.to_dict()}


def run_convert(args) -> dict:
    if Path(args.out).suffix != ".parquet":
        raise UsageError("OUT", f"{args.out} should end in .parquet (the file to write)")
    if Path(args.log).is_dir():
        raise UsageError("LOG", f"{args.log} is a folder, not a log or a table")
    try:
        return convert(args.log, args.out, args, progress=not args.no_progress)
    except IsADirectoryError as e:
        raise EnvironmentFailure(f"OUT: {e.filename} is a folder", "name a file") from None


def render_convert(record: dict) -> str:
    return (f"{describe(record['load_report'])}\nwrote {record['out']}: "
            f"{record['requests']:,} requests, "
            f"{record['clients']:,} clients, {record['out_bytes'] / 1e6:,.1f} MB")
# ---------------------------------------------------------------- ratelab bench ingest


def add_bench_ingest(actions) -> None:
    """Add ``ratelab bench ingest`` to the actions (subparsers) of ``ratelab bench``."""
    p = command(
        actions, "ingest", run=run_bench_ingest, render=render_bench_ingest,
        help="lines/s reading a gzip CLF log: decompression, fast and reference",
        description="Time decompression alone (the floor), the fast CLF reader and the "
                    "reference reader on a gzip CLF log, interleaved, --repeat rounds; report "
                    "lines per second (wall and CPU) and each reader's ratio to the floor, and "
                    "check that both readers give the same trace and report (exit 1 if they "
                    "differ). Without --log, a seeded log is generated first (requests of a "
                    "synthetic population as Common Log Format lines, a few broken on purpose).",
        example="ratelab bench ingest --lines 2000000 --seed 0 --repeat 2 --json")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="a gzip CLF log to time (default: generate one)")
    p.add_argument("--lines", type=count, default=2_000_000,
                   help="lines of the generated log (not with --log)")
    p.add_argument("--seed", type=seed, default=0,
                   help="seed of the generated log (not with --log)")
    p.add_argument("--keep", metavar="FILE", default=None,
                   help="save the generated log here (default: a temporary file, removed; "
                        "not with --log)")
    p.add_argument("--repeat", type=count, default=2,
                   help="rounds of floor, fast, reference (figures: the best)")
    p.add_argument("--no-reference", action="store_true",
                   help="skip the reference reader (slow: about 15x the floor)")


def run_bench_ingest(args):
    from ..bench import ingest as ingest_bench  # pyarrow and numba: 0.6 s off `ratelab --help`

    if args.log is not None:
        given = [f for f, v in (("--lines", args.lines != 2_000_000), ("--seed", args.seed != 0),
                                ("--keep", args.keep is not None)) if v]
        if given:
            raise UsageError(given[0], "applies to the generated log only, not with --log")
        if not Path(args.log).is_file():
            raise EnvironmentFailure(f"--log: no file at {args.log}", "check the path")
    if args.keep is not None and Path(args.keep).is_dir():
        raise UsageError("--keep", f"{args.keep} is a folder; name the file to write")
    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    with tempfile.TemporaryDirectory() as tmp:
        log = args.log
        made = None
        if log is None:
            log = args.keep or str(Path(tmp) / "bench.log.gz")
            say(f"writing a {args.lines:,}-line gzip CLF log (seed {args.seed}) to {log} ...")
            made = ingest_bench.write_clf_log(log, args.lines, args.seed)
        figures = ingest_bench.run(log, args.repeat, with_reference=not args.no_reference,
                                   log_fn=say)
    figures["generated"] = made
    figures["command"] = "ratelab bench ingest " + (
        f"--log {args.log}" if args.log else f"--lines {args.lines} --seed {args.seed}") + \
        f" --repeat {args.repeat}" + (" --no-reference" if args.no_reference else "")
    if figures["same"] is False:
        print("ratelab bench ingest: the fast and reference readers gave different traces",
              file=sys.stderr)
    return figures, 0 if figures["same"] is not False else 1


def render_bench_ingest(figures: dict) -> str:
    from ..bench.ingest import table  # as above: only when the bench ran

    return "\n" + table(figures)
