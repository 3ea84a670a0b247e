"""``ratelab what-if``: a log replayed through candidate policies, reported side by side.

    ratelab what-if --dataset epa-http --policy "token-bucket rate=1 capacity=10" \\
        --policy "sliding-window-counter limit=60 window=60"
    ratelab what-if --trace access.log.gz --policy "gcra rate=5 burst=20" --json
    ratelab what-if --trace access.log.gz --policy "..." --engine dask \\
        --scheduler tcp://h:8786 --parts-dir /shared/parts
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from .. import datasets
from ..traces.report import describe
from ..whatif import TOP_CLIENTS, parse_policy, what_if
from .engine import add_engine_options
from .page import add_report, write_report
from .support import EnvironmentFailure, UsageError, command
from .traces import COLUMN_FLAGS, add_input_options, read_input



def _dataset_names() -> tuple[str, ...]:
    return datasets.NAMES


def add_what_if(sub) -> None:
    """Add the ``what-if`` subcommand."""
    p = command(
        sub, "what-if", run=run, render=render,
        help="replay a log through candidate policies and compare what each limits",
        description="Replay a log or table through each candidate policy (every client "
                    "limited on its own) and report side by side: requests and clients "
                    "limited, by hour; the clients hit hardest; the worst minute; the "
                    "backend's busiest calendar second and minute; the 429s and their "
                    "Retry-After.\n\n"
                    "A client is the log's client (its host or IP column) for a log; for a "
                    "table, the --key-col column, or several joined (--key-col user, "
                    "--key-col api_key, --key-col ip,path).",
        example='ratelab what-if --dataset epa-http --policy "token-bucket rate=1 capacity=10" '
                '--policy "sliding-window-counter limit=60 window=60"\n'
                'ratelab what-if --trace events.csv --key-col ip,path --time-format ms '
                '--policy "gcra rate=5 burst=20" --json')
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--trace", metavar="FILE",
                      help="an HTTP log or a table (csv, tsv, jsonl, parquet, regex; plain, "
                           "or gzip, bzip2, xz or zstd)")
    what.add_argument("--dataset", metavar="NAME", choices=_dataset_names(),
                      help="a recorded trace: " + ", ".join(_dataset_names()))
    add_input_options(p, "--trace")
    p.add_argument("--policy", action="append", required=True, metavar="POLICY",
                   help="a registry algorithm and its parameters, e.g. \"token-bucket rate=10 "
                        "capacity=50\" (rates per second, windows in seconds); repeat to "
                        "compare (see `ratelab limiters`) (default: none, give at least one)")
    add_engine_options(
        p, runs="where the replay runs",
        inprocess="every client one after the other in this process",
        dask="clients partitioned to Parquet, one task per partition on a Dask cluster",
        parts_dir="with --engine dask: where the log is written partitioned by client, storage "
                  "every worker reads; needed with --scheduler (default: a temporary directory)")
    add_report(p, "the policies side by side in figures and tables")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def check(args) -> None:
    """Refuse options that do not apply in the mode chosen (UsageError naming the flag)."""
    for flag, value in (("--scheduler", args.scheduler), ("--workers", args.workers),
                        ("--parts-dir", args.parts_dir)):
        if value is not None and args.engine != "dask":
            raise UsageError(flag, f"{flag} needs --engine dask")
    if args.scheduler and args.workers is not None:
        raise UsageError("--workers", "--workers sizes a LocalCluster; it does not apply "
                                      "with --scheduler")
    if args.scheduler and args.parts_dir is None:
        raise UsageError("--scheduler", "--scheduler needs --parts-dir: storage every worker "
                                        "can read, where the log is written partitioned by "
                                        "client")
    if args.dataset:
        for name in ("format", "reader", *COLUMN_FLAGS):
            if getattr(args, name) not in (None, "auto"):
                flag = COLUMN_FLAGS.get(name, "--" + name)
                raise UsageError(flag, f"{flag} applies to --trace only (a dataset knows its "
                                       "format and its client)")


def run(args) -> dict:
    """Load the trace and tally every policy (:func:`ratelab.whatif.what_if`); the what-if
    record (plus ``engine``)."""
    check(args)
    policies = []
    for text in args.policy:
        try:
            policies.append(parse_policy(text))
        except ValueError as e:
            raise UsageError("--policy", str(e)) from None
    trace, name = _load(args)
    try:
        record = what_if(trace, policies, source=name, engine=args.engine,
                         scheduler=args.scheduler, workers=args.workers,
                         parts_dir=args.parts_dir, progress=not args.no_progress)
    except OSError as e:  # a scheduler that does not answer, a --parts-dir not writable
        if args.engine != "dask":
            raise
        what = "--scheduler" if args.scheduler and "scheduler" in str(e) else "--parts-dir"
        raise EnvironmentFailure(
            f"{what}: {e}", "start the scheduler (dask scheduler --port 8786) or check "
                            "--scheduler" if what == "--scheduler" else
                            "check that --parts-dir is a writable directory") from None
    record["engine"] = args.engine
    if args.report is not None:
        from ..whatif.page import write_page  # here: matplotlib, for a page only
        write_report(args, write_page, record)
    return record


def _load(args):
    """(trace, name): a dataset, or --trace read with the shared reading options. A missing
    file or dataset is an EnvironmentFailure; a column option the file does not take is a
    UsageError naming it."""
    if args.dataset:
        try:
            return datasets.load(args.dataset, progress=not args.no_progress,
                                 warn=False), args.dataset
        except FileNotFoundError as e:
            raise EnvironmentFailure(f"--dataset {args.dataset}: {e}",
                                     "see `ratelab datasets list`") from None
    try:
        return read_input(args.trace, args, "--trace", progress=not args.no_progress), \
            args.trace
    except FileNotFoundError as e:
        raise EnvironmentFailure(str(e), "check the path") from None
    except ValueError as e:
        raise UsageError("--trace", str(e)) from None


# ---------------------------------------------------------------- rendering


def _when(s: float | None) -> str:
    """An instant: a UTC date and time for epoch seconds, else seconds from 0."""
    if s is None:
        return "-"
    if s >= 1e8:
        return str(np.datetime64(int(s), "s")).replace("T", " ")
    return f"{s:,.0f} s"


def _pct(x) -> str:
    return "-" if x is None else f"{x:.3g}%"


def render(record: dict) -> str:
    """The record as terminal tables: the comparison, then by hour, top clients, Retry-After."""
    pols = record["policies"]
    names = [f"[{i + 1}]" for i in range(len(pols))]
    off = record["offered"]
    lines = [f"{record['source']}: {record['requests']:,} requests from "
             f"{record['clients']:,} clients, {_when(record['first_s'])} to "
             f"{_when(record['last_s'])} (UTC); offered peak {off['peak_per_second']:,}/s "
             f"({_when(off['peak_second_start_s'])}), {off['peak_per_minute']:,}/min "
             f"({_when(off['peak_minute_start_s'])})", ""]
    if record.get("load_report") is not None:  # what was read, and what was left out
        lines += [describe(record["load_report"]), ""]
    lines += [f"{n} {p['policy']}" for n, p in zip(names, pols)] + [""]
    for n, p in zip(names, pols):  # what deploys the rule just replayed
        if p.get("config"):
            lines += [f"{n} in {p['server']}, limiting by the client's address:",
                      p["config"], ""]
    rows = {}
    for n, p in zip(names, pols):
        b, r, w = p["backend"], p["retry_after"], p["worst_minute"]
        rows[n] = {
            "requests limited": f"{p['requests_limited']:,} ({_pct(p['requests_limited_pct'])})",
            "clients limited": f"{p['clients_limited']:,} ({_pct(p['clients_limited_pct'])})",
            "worst minute (UTC)": "-" if w is None else _when(w["minute_start_s"]),
            "  limited in it": "-" if w is None else
            f"{w['requests_limited']:,} of {w['requests']:,} ({w['clients_limited']} clients)",
            "backend: admitted": f"{b['requests_admitted']:,}",
            "backend: delayed (shaped)": f"{b['requests_delayed']:,}",
            "backend: peak per second": f"{b['peak_per_second']:,}",
            "backend: peak per minute": f"{b['peak_per_minute']:,}",
            "429s": f"{r['responses_429']:,}",
            "Retry-After min/p50/p90/max (s)": "-" if not r["responses_429"] else
            f"{r['min_s']}/{r['p50_s']}/{r['p90_s']}/{r['max_s']}",
            "Retry-After mean (s)": "-" if r["mean_s"] is None else f"{r['mean_s']:.3g}",
        }
    lines += [pd.DataFrame(rows).to_string(), ""]
    hours = {}
    for n, p in zip(names, pols):
        for h in p["by_hour"]:
            row = hours.setdefault(_when(h["hour_start_s"]), {
                "requests": f"{h['requests']:,}", "clients": f"{h['clients']:,}"})
            row[f"{n} limited"] = f"{h['requests_limited']:,}"
            row[f"{n} clients"] = f"{h['clients_limited']:,}"
    lines += ["by hour (UTC): requests and clients limited",
              pd.DataFrame.from_dict(hours, orient="index").to_string(), ""]
    for n, p in zip(names, pols):
        if p["top_clients"]:
            top = pd.DataFrame(p["top_clients"]).set_index("client")
            top["requests_limited_pct"] = top["requests_limited_pct"].map(lambda x: f"{x:.3g}")
            lines += [f"{n} top {TOP_CLIENTS} clients hit", top.to_string(), ""]
        hist = p["retry_after"]["histogram"]
        if hist:
            lines += [f"{n} Retry-After (s): 429s", "  " + ", ".join(
                f"{h['retry_after_s']}: {h['responses_429']:,}" for h in hist), ""]
    return "\n".join(lines).rstrip()
