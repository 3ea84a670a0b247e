"""``ratelab error-analysis``: the sliding window counter against the exact log, as a table.

    ratelab error-analysis --synthetic --sources 270000 --requests 400000000 \\
        --limit 100 --window 60 --mode both
    ratelab error-analysis --dataset epa-http --window 60          # limits at peak quantiles
    ratelab error-analysis --trace access.log.gz --format clf --limit 300 --json
    ratelab error-analysis --synthetic --engine dask --scheduler tcp://scheduler:8786 ...
    ratelab error-analysis --parquet trace-parts/ --engine dask --limit 100 --window 60
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import fields

from ..traces.population import Population

DEFAULT_QUANTILES = (0.9, 0.99, 0.999)
SYNTHETIC_LIMIT = 100.0
POPULATION_HELP = {
    "sources": "number of sources",
    "requests": "total requests (volumes are scaled to add up to it)",
    "duration_s": "seconds the population spans",
    "seed": "seed of the plan and of every chunk",
    "volume_sigma": "sigma of the lognormal per-source volume",
    "human": "share of sources browsing (sessions of page views)",
    "app": "share of bursty application sources (on/off)",
    "bot": "share of periodic bots",
    "abuser": "share of abusive sources (floods in attack periods)",
    "abuser_volume": "volume multiplier of abusive sources",
    "page_requests": "mean requests per page view",
    "object_gap_s": "mean gap between requests of one page",
    "session_s": "mean browsing session",
    "human_duty": "share of time a human source is in a session",
    "app_on_s": "mean on period of an app", "app_off_s": "mean off period of an app",
    "bot_jitter_s": "bots are late by up to this",
    "bot_aligned": "share of bots firing on the calendar grid (cron at :00)",
    "abuser_on_s": "mean attack period", "abuser_off_s": "mean pause between attacks",
    "chunk_requests": "about this many requests per chunk (memory per worker)",
}


def add(sub) -> None:
    """Add the ``error-analysis`` subcommand."""
    p = sub.add_parser(
        "error-analysis",
        help="compare the sliding window counter with the exact log (Cloudflare-style table)",
        description="Compare the sliding window counter with the exact sliding log on the "
                    "same requests, per source, in estimate mode (every request counts), "
                    "admission mode (rejected requests do not count) or both.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--synthetic", action="store_true",
                      help="a generated population, streamed in chunks of sources")
    what.add_argument("--trace", metavar="FILE", help="an HTTP log (gzip or plain)")
    what.add_argument("--dataset", metavar="NAME", help="a recorded trace of the registry")
    what.add_argument("--parquet", metavar="PATH",
                      help="a trace in Parquet (columns time, key[, cost]), or a directory "
                           "partitioned by source (ratelab-parts.json); needs --limit")
    p.add_argument("--format", choices=("auto", "clf", "epa", "nasa-tsv"), default="auto",
                   help="log format of --trace")
    p.add_argument("--limit", type=float, default=None,
                   help="requests allowed per window per source (synthetic default 100; for "
                        "a trace, default: the --quantiles of per-source peak counts)")
    p.add_argument("--window", type=float, default=60.0, help="window length in seconds")
    p.add_argument("--mode", choices=("estimate", "admission", "both"), default="both")
    p.add_argument("--quantiles", type=float, nargs="+", default=list(DEFAULT_QUANTILES),
                   help="for a trace without --limit: limits at these quantiles of the "
                        "per-source peak count in a window")
    p.add_argument("--engine", choices=("inprocess", "dask"), default="inprocess",
                   help="inprocess: chunks one after the other in this process; dask: one "
                        "task per chunk or partition of sources on a Dask cluster")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --engine dask: an existing scheduler (tcp://host:8786); "
                        "default: a LocalCluster on this machine")
    p.add_argument("--workers", type=int, default=None,
                   help="with --engine dask and no --scheduler: LocalCluster worker "
                        "processes (default: every core)")
    p.add_argument("--parts-dir", metavar="DIR", default=None,
                   help="with --engine dask on a trace: where to write it partitioned by "
                        "source (storage every worker reads; default: a temporary directory)")
    p.add_argument("--part-requests", type=int, default=None, metavar="N",
                   help="requests per partition of a trace (default: --chunk-requests)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("population (with --synthetic; see ratelab.traces.population)")
    defaults = Population()
    for f in fields(Population):
        kind = int if isinstance(getattr(defaults, f.name), int) else float
        g.add_argument(f"--{f.name.replace('_', '-')}", dest=f"pop_{f.name}", type=kind,
                       default=getattr(defaults, f.name), metavar=kind.__name__.upper(),
                       help=POPULATION_HELP.get(f.name, ""))
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the analysis the arguments describe and print the table(s) or JSON."""
    _check_engine_args(args)
    try:
        if args.synthetic:
            out = _synthetic(args)
        elif args.parquet:
            out = _parquet(args)
        else:
            out = _recorded(args)
    except OSError as e:  # a scheduler that does not answer, a file that cannot be read
        print(f"ratelab: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        out = {"command": command(args), **out}
        print(json.dumps(out, indent=2))
    return 0


def command(args) -> str:
    """The command line that reproduces this analysis (defaults left out)."""
    words = ["ratelab", "error-analysis"]
    if args.synthetic:
        words.append("--synthetic")
        defaults = Population()
        for f in fields(Population):
            v = getattr(args, f"pop_{f.name}")
            if f.name in ("sources", "requests") or v != getattr(defaults, f.name):
                words += [f"--{f.name.replace('_', '-')}", _number(v)]
    elif args.dataset:
        words += ["--dataset", args.dataset]
    elif args.parquet:
        words += ["--parquet", args.parquet]
    else:
        words += ["--trace", args.trace, "--format", args.format]
    if args.synthetic:
        words += ["--limit", _number(SYNTHETIC_LIMIT if args.limit is None else args.limit)]
    elif args.limit is not None:
        words += ["--limit", _number(args.limit)]
    else:
        words += ["--quantiles", *(_number(q) for q in args.quantiles)]
    words += ["--window", _number(args.window), "--mode", args.mode]
    if args.engine != "inprocess":
        words += ["--engine", args.engine]
    if args.scheduler:
        words += ["--scheduler", args.scheduler]
    elif args.workers:
        words += ["--workers", str(args.workers)]
    if args.part_requests and not args.synthetic:
        words += ["--part-requests", str(args.part_requests)]
    return " ".join(shlex.quote(w) for w in words)


def _number(v) -> str:
    """`v` as short as it reads (100, 0.25) but never rounded: it must parse back to `v`."""
    if not isinstance(v, float):
        return str(v)
    short = f"{v:g}"
    return short if float(short) == v else repr(v)


def _synthetic(args) -> dict:
    from .error import format_table
    from .stream import analyse_population, peak_rss_mb

    pop = Population(**{f.name: getattr(args, f"pop_{f.name}") for f in fields(Population)})
    limit = SYNTHETIC_LIMIT if args.limit is None else args.limit
    start = time.perf_counter()
    tally = analyse_population(pop, limit, args.window, args.mode, engine=args.engine,
                               scheduler=args.scheduler, workers=args.workers,
                               progress=not args.no_progress)
    wall = time.perf_counter() - start
    run_info = {"wall_s": round(wall, 2), "chunks": pop.n_chunks, "engine": args.engine,
                "workers": _workers(args), **peak_rss_mb()}
    if not args.json:
        print(f"synthetic population: {pop.sources:,} sources, {tally.requests:,} requests "
              f"over {pop.duration_s:g} s (seed {pop.seed}); limit {limit:g} per "
              f"{args.window:g} s")
        print(format_table(tally.table()))
        print(f"\n{run_info['wall_s']} s wall, {run_info['chunks']} chunks on "
              f"{run_info['workers']} processes ({args.engine}); peak RSS "
              f"{run_info['main_mb']} MB (this process)", file=sys.stderr)
    return {"source": "synthetic", "population": pop.params(), **tally.to_dict(),
            "run": run_info}


def _workers(args):
    """Processes at work: 1 in process, the LocalCluster's, or None for a scheduler's."""
    from .stream import default_workers

    if args.engine == "inprocess":
        return 1
    return None if args.scheduler else (args.workers or default_workers())


def _check_engine_args(args) -> None:
    if args.engine != "dask":
        for flag, value in (("--scheduler", args.scheduler), ("--workers", args.workers),
                            ("--parts-dir", args.parts_dir)):
            if value is not None:
                raise ValueError(f"{flag} needs --engine dask")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    if args.part_requests is not None and args.part_requests < 1:
        raise ValueError(f"--part-requests must be at least 1, got {args.part_requests}")
    if args.scheduler and not args.synthetic and args.parts_dir is None and not (
            args.parquet and _partitioned(args.parquet)):
        raise ValueError("--scheduler with a trace needs --parts-dir: storage every worker "
                         "can read, where the trace is written partitioned by source")


def _partitioned(path) -> bool:
    from pathlib import Path

    from ..scale.parts import META

    return (Path(path) / META).is_file()


def _part_requests(args) -> int:
    return args.part_requests or args.pop_chunk_requests


def _parquet(args) -> dict:
    """A Parquet trace: partitioned by source (shuffled once with Dask if it is not yet)."""
    import tempfile
    from pathlib import Path

    from ..scale import engine as E
    from ..scale import parts as P
    from .error import format_table

    if args.limit is None:
        raise ValueError("--parquet needs --limit (the peak quantiles need the trace in "
                         "memory)")
    path = Path(args.parquet)
    if not path.exists():
        raise FileNotFoundError(f"--parquet: no such file or directory: {path}")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ratelab-parts-") as tmp:
        if args.engine == "inprocess":
            if not _partitioned(path):
                raise ValueError("--parquet: a trace not yet partitioned by source needs "
                                 "--engine dask (it is shuffled once, with Dask)")
            t = E.parts_tally_inprocess(path, args.limit, args.window, args.mode,
                                        progress=not args.no_progress)
        else:
            with E.cluster(args.scheduler, args.workers) as client:
                if not _partitioned(path):
                    out = Path(args.parts_dir or tmp)
                    P.shuffle_parquet(path, out, client, _part_requests(args))
                    path = out
                t = E.parts_tally(client, path, args.limit, args.window, args.mode,
                                  progress=not args.no_progress)
    meta = P.read_meta(path) if _partitioned(path) else {}
    wall = time.perf_counter() - start
    if not args.json:
        print(f"{args.parquet}: {t.requests:,} requests, {t.sources:,} sources; limit "
              f"{args.limit:g} per {args.window:g} s")
        print(format_table(t.table()))
        print(f"\n{wall:.2f} s wall ({args.engine})", file=sys.stderr)
    return {"source": args.parquet, "requests": t.requests, "sources": t.sources,
            "parts": meta.get("parts"), **t.to_dict(),
            "run": {"wall_s": round(wall, 2), "engine": args.engine,
                    "workers": _workers(args)}}


def _load(args):
    """The trace to analyse; a missing file is a ValueError (reported without a traceback)."""
    try:
        return _read(args)
    except FileNotFoundError as e:
        raise ValueError(f"{'--dataset' if args.dataset else '--trace'}: {e}") from None


def _read(args):
    if args.dataset:
        from .. import datasets

        trace = datasets.load(args.dataset, progress=not args.no_progress, warn=False)
        return trace, args.dataset
    from ..traces.loaders import load_log

    trace = load_log(args.trace, args.format, progress=not args.no_progress, warn=False)
    return trace, args.trace


def _recorded(args) -> dict:
    from ..scale import engine as E
    from .error import thresholds

    trace, name = _load(args)
    for q in args.quantiles:
        if not 0 < q < 1:
            raise ValueError(f"quantiles must lie in (0, 1), got {q!r}")
    if args.limit is not None:
        limits = {None: args.limit}
    else:
        limits = thresholds(trace, args.window, tuple(args.quantiles))
    report = trace.meta.get("report")
    results = []
    if not args.json:
        print(f"{name}: {len(trace):,} requests, {trace.n_keys:,} sources over "
              f"{trace.duration:,.0f} s")
        if report is not None:
            print(report)
    with (E.cluster(args.scheduler, args.workers) if args.engine == "dask"
          else _no_cluster()) as client:
        for q, limit in limits.items():
            t = E.trace_tally(trace, limit, args.window, args.mode, engine=args.engine,
                              client=client, parts_dir=args.parts_dir,
                              part_requests=_part_requests(args),
                              progress=not args.no_progress)
            _print_result(args, results, q, limit, t)
    return {"source": name, "requests": len(trace), "sources": trace.n_keys,
            "load_report": None if report is None else str(report), "results": results}


def _no_cluster():
    from contextlib import nullcontext

    return nullcontext(None)


def _print_result(args, results, q, limit, t) -> None:
    from .error import format_table

    results.append({"quantile": q, **t.to_dict()})
    if not args.json:
        head = (f"limit {limit:g} per {args.window:g} s" if q is None else
                f"limit {limit:g} per {args.window:g} s = the {100 * q:g}th percentile "
                "of per-source peak counts")
        print(f"\n{head}\n{format_table(t.table())}")
