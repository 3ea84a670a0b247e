"""``ratelab what-if``: a log replayed through candidate policies, reported side by side.

    ratelab what-if --dataset epa-http --policy "token-bucket rate=1 capacity=10" \\
        --policy "sliding-window-counter limit=60 window=60"
    ratelab what-if --trace access.log.gz --policy "gcra rate=5 burst=20" --json
    ratelab what-if --trace access.log.gz --policy "..." --engine dask \\
        --scheduler tcp://h:8786 --parts-dir /shared/parts
"""

from __future__ import annotations

import argparse
import json
import sys

from . import TOP_CLIENTS

KEYS = ("ip", "host")  # what the loaders key a log by today: the client's host or IP

EXAMPLE = """example:
  ratelab what-if --dataset epa-http --policy "token-bucket rate=1 capacity=10" \\
      --policy "sliding-window-counter limit=60 window=60"
"""


def add_what_if(sub) -> None:
    """Add the ``what-if`` subcommand."""
    p = sub.add_parser(
        "what-if", help="replay a log through candidate policies and compare what each limits",
        description="Replay a log through each candidate policy (every client limited on its "
                    "own) and report side by side: requests and clients limited, by hour; "
                    "the clients hit hardest; the worst minute; the backend's busiest "
                    "calendar second and minute; the 429s and their Retry-After.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--trace", metavar="FILE", help="an HTTP log (gzip or plain)")
    what.add_argument("--dataset", metavar="NAME", help="a recorded trace of the registry")
    p.add_argument("--format", choices=("auto", "clf", "epa", "nasa-tsv"), default="auto",
                   help="log format of --trace (default: auto, judged from the first line)")
    p.add_argument("--policy", action="append", required=True, metavar="POLICY",
                   help="a registry algorithm and its parameters, e.g. \"token-bucket rate=10 "
                        "capacity=50\" (rates per second, windows in seconds); repeat to "
                        "compare (see `ratelab limiters`)")
    p.add_argument("--key", default="ip", metavar="KEY",
                   help="what a client is: ip (the log's host column; default)")
    p.add_argument("--engine", choices=("inprocess", "dask"), default="inprocess",
                   help="inprocess (default) or dask: clients partitioned to Parquet, one "
                        "task per partition")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --engine dask: an existing Dask scheduler (tcp://host:8786); "
                        "default: a LocalCluster on this machine")
    p.add_argument("--workers", type=int, default=None,
                   help="with --engine dask and no --scheduler: LocalCluster worker "
                        "processes (default: every core)")
    p.add_argument("--parts-dir", metavar="DIR", default=None,
                   help="with --engine dask: where the log is written partitioned by client "
                        "(storage every worker reads; needed with --scheduler; default: a "
                        "temporary directory)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Load the trace, tally every policy, print the tables or the JSON."""
    from . import parse_policy, tally

    if args.key not in KEYS:
        raise ValueError(f"--key: {args.key!r} is not a column these logs are keyed by; "
                         f"choose one of {', '.join(KEYS)}")
    for flag, value in (("--scheduler", args.scheduler), ("--workers", args.workers),
                        ("--parts-dir", args.parts_dir)):
        if value is not None and args.engine != "dask":
            raise ValueError(f"{flag} needs --engine dask")
    if args.scheduler and args.parts_dir is None:
        raise ValueError("--scheduler needs --parts-dir: storage every worker can read, "
                         "where the log is written partitioned by client")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    try:
        policies = [parse_policy(p) for p in args.policy]
    except ValueError as e:
        raise ValueError(f"--policy: {e}") from None
    try:
        trace, name = _load(args)
        if args.engine == "dask":
            from ..scale import what_if_dask

            record = what_if_dask(trace, policies, source=name, scheduler=args.scheduler,
                                  workers=args.workers, parts_dir=args.parts_dir)
        else:
            record = tally(trace, policies, progress=not args.no_progress).record(
                trace.name_of, name)
    except OSError as e:  # a missing file, a scheduler that does not answer
        print(f"ratelab: error: {e}", file=sys.stderr)
        return 1
    record["engine"] = args.engine
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        print(render(record))
    return 0


def _load(args):
    """(trace, name); a missing file or dataset is an OSError naming the flag."""
    flag = "--dataset" if args.dataset else "--trace"
    try:
        if args.dataset:
            from .. import datasets

            return datasets.load(args.dataset, progress=not args.no_progress,
                                 warn=False), args.dataset
        from ..traces.loaders import load_log

        return load_log(args.trace, args.format, progress=not args.no_progress,
                        warn=False), args.trace
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{flag}: {e}") from None


# ---------------------------------------------------------------- rendering


def _when(s: float | None) -> str:
    """An instant: a UTC date and time for epoch seconds, else seconds from 0."""
    import numpy as np

    if s is None:
        return "-"
    if s >= 1e8:
        return str(np.datetime64(int(s), "s")).replace("T", " ")
    return f"{s:,.0f} s"


def _pct(x) -> str:
    return "-" if x is None else f"{x:.3g}%"


def render(record: dict) -> str:
    """The record as terminal tables: the comparison, then by hour, top clients, Retry-After."""
    import pandas as pd

    pols = record["policies"]
    names = [f"[{i + 1}]" for i in range(len(pols))]
    off = record["offered"]
    lines = [f"{record['source']}: {record['requests']:,} requests from "
             f"{record['clients']:,} clients, {_when(record['first_s'])} to "
             f"{_when(record['last_s'])} (UTC); offered peak {off['peak_per_second']:,}/s "
             f"({_when(off['peak_second_start_s'])}), {off['peak_per_minute']:,}/min "
             f"({_when(off['peak_minute_start_s'])})", ""]
    lines += [f"{n} {p['policy']}" for n, p in zip(names, pols)] + [""]
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
        hist = p["retry_after"]["histogram_s"]
        if hist:
            lines += [f"{n} Retry-After (s): 429s", "  " + ", ".join(
                f"{v}: {c:,}" for v, c in hist.items()), ""]
    return "\n".join(lines).rstrip()
