"""``ratelab bench-dask beyond-memory | engines``: the benchmarks of :mod:`ratelab.bench.dask`.

    ratelab bench-dask engines --sources 270000 --requests 400000000 --workers 2 --json
    ratelab bench-dask beyond-memory --dir /var/tmp/ratelab-1e9 --requests 1000000000
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..bench import dask as dask_bench
from ..scale import default_workers
from ..traces.population import Population
from .analysis import window_s
from .support import (EnvironmentFailure, HelpFormatter, UsageError, add_debug, cell, command,
                      count, flags, positive, seed, table)

BENCHES = {
    "beyond-memory": (675_000, 1_000_000_000,
                      "write a population to Parquet and analyse it through Dask",
                      "ratelab bench-dask beyond-memory --dir /var/tmp/ratelab-1e9 "
                      "--requests 1000000000"),
    "engines": (270_000, 400_000_000,
                "the same population on the in-process engine and on Dask",
                "ratelab bench-dask engines --sources 270000 --requests 400000000"),
}
"""Each benchmark: its default sources and requests, what it does, an example."""


def add_bench_dask(sub) -> None:
    """Add ``ratelab bench-dask beyond-memory | engines``."""
    p = sub.add_parser(
        "bench-dask", help="measure the Dask engine: beyond memory, and against in-process",
        description=dask_bench.__doc__.split("\n", 2)[2],
        epilog="example:\n" + "\n".join(f"  {b[3]}" for b in BENCHES.values()),
        formatter_class=HelpFormatter)
    add_debug(p)
    p.set_defaults(_parser=p)
    which = p.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for name, (sources, requests, text, example) in BENCHES.items():
        q = command(which, name, run=run_bench_dask, render=render_bench_dask, help=text,
                    description=f"{text[0].upper()}{text[1:]}: wall times"
                                + (" and the peak resident memory of the whole process tree"
                                   if name == "beyond-memory" else
                                   ", their ratio, and whether every figure is identical")
                                + ", with the load average beside them.",
                    example=example)
        q.add_argument("--sources", type=count, default=sources,
                       help="sources in the population")
        q.add_argument("--requests", type=count, default=requests,
                       help="requests in the population")
        q.add_argument("--seed", type=seed, default=0, help="seed of the population")
        q.add_argument("--chunk-requests", type=count, default=Population().chunk_requests,
                       help="requests per chunk (and per Parquet part)")
        q.add_argument("--limit", type=positive, default=100.0,
                       help="requests allowed per window per source")
        q.add_argument("--window", type=window_s, default=60.0, help="the limiter's window")
        q.add_argument("--workers", type=count, default=None,
                       help="LocalCluster worker processes (default: every core)")
        q.add_argument("--no-progress", action="store_true", help="no progress bars")
        if name == "beyond-memory":
            q.add_argument("--dir", required=True, metavar="DIR",
                           help="where the Parquet trace is written; reused when it holds "
                                "the same population (default: none, give one)")
            q.add_argument("--memory-limit", default="1.2GB", metavar="SIZE",
                           help="Dask's memory limit per worker, as Dask reads it (1.2GB, "
                                "800MiB)")


def reproduce(args) -> str:
    """The command line that reproduces this benchmark."""
    words = ["ratelab", "bench-dask", args.bench, "--sources", str(args.sources),
             "--requests", str(args.requests), "--seed", str(args.seed),
             "--chunk-requests", str(args.chunk_requests), "--limit", f"{args.limit:g}",
             "--window", f"{args.window:g}"]
    if args.workers is not None:
        words += ["--workers", str(args.workers)]
    if args.bench == "beyond-memory":
        words += ["--dir", str(args.dir), "--memory-limit", args.memory_limit]
    return " ".join(words)


def run_bench_dask(args):
    """Run the benchmark (:func:`ratelab.bench.dask.beyond_memory` or
    :func:`~ratelab.bench.dask.engines`); its record (exit 1 when the engines' figures differ)."""
    workers = args.workers or default_workers()
    with flags(sources="--sources", requests="--requests", seed="--seed",
               chunk_requests="--chunk-requests"):
        pop = Population(sources=args.sources, requests=args.requests, seed=args.seed,
                         chunk_requests=args.chunk_requests)
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    if args.bench == "beyond-memory":
        directory = Path(args.dir)
        if directory.exists() and not directory.is_dir():
            raise UsageError("--dir", f"--dir: {directory} is a file, not a directory")
        try:
            # dask: a second of imports, kept off the parser's path (`ratelab --help`)
            from dask.utils import parse_bytes

            parse_bytes(args.memory_limit)
        except (ValueError, TypeError):
            raise UsageError("--memory-limit", f"--memory-limit: {args.memory_limit!r} is not "
                                               "a size Dask reads (1.2GB, 800MiB)") from None
        try:
            out = dask_bench.beyond_memory(directory, pop, args.limit, args.window, workers,
                                           args.memory_limit, not args.no_progress, log)
        except PermissionError as e:
            raise EnvironmentFailure(f"--dir: {e}", "choose a directory you can write") \
                from None
    else:
        out = dask_bench.engines(pop, args.limit, args.window, workers, not args.no_progress,
                                 log)
    record = {"bench": args.bench, "command": reproduce(args), "cpus": os.cpu_count(), **out}
    return record, (0 if record.get("identical", True) else 1)


def render_bench_dask(record: dict) -> str:
    """The record for people: one line per measurement, then each mode's headline figures."""
    def text(v) -> str:
        return " ".join(cell(x) for x in v) if isinstance(v, list) else cell(v)

    lines = [f"{k:28} {text(v)}" for k, v in record.items() if k != "figures"]
    modes = [{"mode": m, "requests": f["requests"], "wrong_decisions_pct":
              f["wrong_decisions_pct"], "false_negatives": f["false_negatives"],
              "false_positives": f["false_positives"]}
             for m, f in record["figures"]["modes"].items()]
    return "\n".join(lines) + "\n\n" + table(modes)
