"""``ratelab error-analysis``: the sliding window counter against the exact log, as a table.

    ratelab error-analysis --synthetic --sources 270000 --requests 400000000 \\
        --limit 100 --window 60 --mode both
    ratelab error-analysis --dataset epa-http --window 60          # limits at peak quantiles
    ratelab error-analysis --trace access.log.gz --format clf --limit 300 --json
    ratelab error-analysis --synthetic --engine dask --scheduler tcp://scheduler:8786 ...
    ratelab error-analysis --parquet trace-parts/ --engine dask --limit 100 --window 60
    ratelab error-analysis --dataset epa-http --window 60 --counter haproxy
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import fields
from pathlib import Path

from .. import datasets
from ..analysis import calibrate
from ..analysis.calibrate import CLOUDFLARE_2017, LABELS, SPACE
from ..analysis.error import (COUNTERS, DEFAULT_QUANTILES, check_counter, format_table,
                              record_table)
from ..analysis.stream import run_error_analysis
from ..scale.parts import is_partitioned
from ..traces.population import Population
from .engine import add_engine_options
from .page import add_report, write_report
from .support import (EnvironmentFailure, UsageError, choices_help, command, count, flags,
                      non_negative_number, non_negative_seconds, positive, quantile,
                      seconds, seed, share, show, whole, words)
from .traces import add_input_options, read_input

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
    "bot_volume": "volume multiplier of bots",
    "app_volume": "volume multiplier of apps",
    "app_shape": "shape of an app's burst: 1 an even rate, above 1 starts hard and tails off, "
                 "below 1 builds up",
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


POPULATION_TYPES = {
    "sources": count, "requests": count, "chunk_requests": count, "seed": seed,
    "human": share, "app": share, "bot": share, "abuser": share, "bot_aligned": share,
    "human_duty": share, "volume_sigma": non_negative_number(), "bot_jitter_s":
    non_negative_seconds, "abuser_volume": positive, "bot_volume": positive,
    "app_volume": positive, "app_shape": positive, "page_requests": positive,
}
"""Each population option's type (a field ending in _s is a positive number of seconds)."""

MIN_WINDOW_S = 1e-6
"""The shortest --window taken: a microsecond (a shorter one is below the resolution of any
log's timestamps, and its reciprocal overflows the arithmetic)."""


def window_s(text: str) -> float:
    """A type: a window in seconds, at least MIN_WINDOW_S."""
    x = seconds(text)
    if x < MIN_WINDOW_S:
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_WINDOW_S:g} s (a microsecond), got {text!r}")
    return x


window_s.unit = "s"


def add(sub) -> None:
    """Add the ``error-analysis`` subcommand."""
    p = command(
        sub, "error-analysis", run=run, render=None,
        help="compare the sliding window counter with the exact log (Cloudflare-style table)",
        description="Compare the sliding window counter with the exact sliding log on the "
                    "same requests, per source, and print the Cloudflare-style table: "
                    "wrong decisions, false allows and rejects, the estimate's relative "
                    "error, false negatives and positives. --counter haproxy puts HAProxy's "
                    "counter (http_req_rate, compared gt the limit) in the calendar-aligned "
                    "counter's place.\n\n"
                    "modes:\n"
                    "  estimate   every request counts; the counter's estimate against the "
                    "exact\n             trailing count, as a monitoring system sees it\n"
                    "  admission  rejected requests do not count; the exact log and the "
                    "counter\n             each decide, and their decisions are compared\n"
                    "  both       the two, side by side",
        example="ratelab error-analysis --synthetic --sources 2700 --requests 4000000 "
                "--limit 100 --window 60\n"
                "ratelab error-analysis --dataset epa-http --window 60 --json\n"
                "ratelab error-analysis --trace access.log.gz --format clf --limit 300")
    p.add_argument("--json", action="store_true",
                   help="print the record as JSON instead of tables (keys: see docs/cli.md)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--synthetic", action="store_true",
                      help="a generated population, streamed in chunks of sources")
    what.add_argument("--trace", metavar="FILE",
                      help="an HTTP log or a table (plain, or gzip, bzip2, xz or zstd)")
    what.add_argument("--dataset", metavar="NAME", choices=_dataset_names(),
                      help="a recorded trace: " + ", ".join(_dataset_names()))
    what.add_argument("--parquet", metavar="PATH",
                      help="a trace in Parquet (columns time, key[, cost]), or a directory "
                           "partitioned by source (ratelab-parts.json); needs --limit")
    add_input_options(p, "--trace")
    p.add_argument("--limit", type=positive, default=None,
                   help="requests allowed per window per source (default: 100 with "
                        "--synthetic; for a trace, limits at the --quantiles of the "
                        "per-source peak counts)")
    p.add_argument("--window", type=window_s, default=60.0,
                   help="the limiter's window: its length")
    p.add_argument("--mode", choices=("estimate", "admission", "both"), default="both",
                   help="estimate, admission or both (see modes above)")
    p.add_argument("--counter", choices=COUNTERS, default=COUNTERS[0],
                   help=choices_help("the counter compared with the exact log", {
                       "sliding-window-counter": "Cloudflare's, its windows on the calendar",
                       "haproxy": "HAProxy's http_req_rate, its periods from each source's "
                                  "first request, every request counted (whole limit, window "
                                  "in whole ms)"}))
    p.add_argument("--quantiles", type=quantile, nargs="+", default=None,
                   help="for a trace without --limit: limits at these quantiles of the "
                        "per-source peak count in a window (default: "
                        + " ".join(f"{q:g}" for q in DEFAULT_QUANTILES) + ")")
    add_engine_options(
        p, runs="where the analysis runs",
        inprocess="chunks in this process, a thread per core",
        dask="one task per chunk or partition of sources on a Dask cluster",
        parts_dir="with --engine dask on a trace: where to write it partitioned by source, "
                  "storage every worker reads (default: a temporary directory)")
    p.add_argument("--part-requests", type=count, default=None,
                   help="requests per partition of a trace (default: --chunk-requests)")
    p.add_argument("--by-behaviour", action="store_true",
                   help="with --synthetic: also tally each behaviour apart (about 3x the work) "
                        "and say how far over the threshold each misjudged source ran")
    add_report(p, "the table, the wrong decisions and the error's distribution drawn, the "
                  "load report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("population (with --synthetic; see ratelab.traces.population)")
    defaults = Population()
    for f in fields(Population):
        default = getattr(defaults, f.name)
        kind = POPULATION_TYPES.get(f.name, seconds if f.name.endswith("_s") else positive)
        unit = getattr(kind, "unit", "")
        g.add_argument(f"--{f.name.replace('_', '-')}", dest=f"pop_{f.name}", type=kind,
                       default=argparse.SUPPRESS, metavar=type(default).__name__.upper(),
                       help=f"{POPULATION_HELP.get(f.name, f.name)} (default: "
                            f"{show(default)}{' ' + unit if unit else ''})")


def _dataset_names() -> tuple[str, ...]:
    return datasets.NAMES


def run(args) -> dict:
    """Run the analysis the arguments describe
    (:func:`ratelab.analysis.stream.run_error_analysis`); print the table(s), or return the
    record."""
    given = [f"--{f.name.replace('_', '-')}" for f in fields(Population)
             if hasattr(args, f"pop_{f.name}")]
    if not args.synthetic:
        if given:
            raise UsageError(given[0], "applies to --synthetic only")
    _check_engine_args(args)
    if not args.trace:
        for name in ("format", "pattern", "columns", "time_col", "time_format", "key_col",
                     "cost_col", "reader"):
            if getattr(args, name) not in (None, "auto"):
                flag = "--" + name.replace("_", "-")
                raise UsageError(flag, "applies to --trace only (a dataset knows its format)")
    if args.quantiles is not None and (args.synthetic or args.limit is not None):
        raise UsageError("--quantiles", "applies to a trace without --limit only")
    if args.quantiles is None:
        args.quantiles = list(DEFAULT_QUANTILES)
    defaults = Population()
    for f in fields(Population):
        if not hasattr(args, f"pop_{f.name}"):
            setattr(args, f"pop_{f.name}", getattr(defaults, f.name))
    # the population's parameters are flags of --synthetic only: a trace's load error ("no
    # requests read") must not be taken for a --requests mistake
    population_flags = ({f.name: f"--{f.name.replace('_', '-')}" for f in fields(Population)}
                        if args.synthetic else {})
    with flags(limit="--limit", window="--window", workers="--workers", **population_flags):
        check_counter(args.counter, args.limit, args.window)  # before a trace is read
        data, source, limit = _data(args)
        out = run_error_analysis(
            data, limit, args.window, args.mode, source=source, quantiles=args.quantiles,
            by_behaviour=args.synthetic and args.by_behaviour, engine=args.engine,
            scheduler=args.scheduler, workers=args.workers, parts_dir=args.parts_dir,
            part_requests=_part_requests(args), progress=not args.no_progress,
            counter=args.counter)
    if args.report is not None:
        from ..analysis.page import write_page  # here: matplotlib, for a page only
        write_report(args, write_page, {"command": reproduce(args), **out})
    if args.json:
        return {"command": reproduce(args), **out}
    _render(args, out)
    return None


def _data(args):
    """(what to analyse, its name, the limit) from the arguments: a population, the path of a
    Parquet trace (checked), or a trace loaded (its summary printed unless --json)."""
    if args.synthetic:
        pop = Population(**{f.name: getattr(args, f"pop_{f.name}") for f in fields(Population)})
        return pop, "synthetic", SYNTHETIC_LIMIT if args.limit is None else args.limit
    if args.parquet:
        if args.limit is None:
            raise UsageError("--parquet", "needs --limit (the peak quantiles need the trace in "
                                          "memory)")
        path = Path(args.parquet)
        if not path.exists():
            raise EnvironmentFailure(f"--parquet: no such file or directory: {path}",
                                     "check the path")
        if args.engine == "inprocess" and not is_partitioned(path):
            raise UsageError("--parquet", "a trace not yet partitioned by source needs "
                                          "--engine dask (it is shuffled once, with Dask)")
        return args.parquet, args.parquet, args.limit
    trace, name = _load(args)
    if not args.json:
        print(f"{name}: {len(trace):,} requests, {trace.n_keys:,} sources over "
              f"{trace.duration:,.0f} s")
        report = trace.meta.get("report")
        if report is not None:
            print(report)
    return trace, name, args.limit


def _render(args, record: dict) -> None:
    """Print the record's tables (stdout) and how long it took (stderr)."""
    if args.synthetic:
        pop, run = record["population"], record["run"]
        requests = next(iter(record["modes"].values()))["requests"]
        print(f"synthetic population: {pop['sources']:,} sources, {requests:,} requests "
              f"over {pop['duration_s']:g} s (seed {pop['seed']}); limit {record['limit']:g} "
              f"per {record['window_s']:g} s; counter {record['counter']}")
        print(format_table(record_table(record)))
        print(f"\n{run['wall_s']} s wall, {run['chunks']} chunks on "
              f"{run['workers']} processes ({run['engine']}); peak RSS "
              f"{run['main_mb']} MB (this process)", file=sys.stderr)
    elif args.parquet:
        print(f"{record['source']}: {record['requests']:,} requests, {record['sources']:,} "
              f"sources; limit {record['limit']:g} per {record['window_s']:g} s; counter "
              f"{record['counter']}")
        print(format_table(record_table(record)))
        print(f"\n{record['run']['wall_s']:.2f} s wall ({args.engine})", file=sys.stderr)
    else:
        for r in record["results"]:
            head = f"{r['counter']}: limit {r['limit']:g} per {r['window_s']:g} s"
            if r["quantile"] is not None:
                head += f" = the {100 * r['quantile']:g}th percentile of per-source peak counts"
            print(f"\n{head}\n{format_table(record_table(r))}")


def reproduce(args) -> str:
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
        for name in ("time_col", "time_format", "key_col", "cost_col"):
            if getattr(args, name) is not None:
                words += [f"--{name.replace('_', '-')}", getattr(args, name)]
    if args.synthetic:
        words += ["--limit", _number(SYNTHETIC_LIMIT if args.limit is None else args.limit)]
    elif args.limit is not None:
        words += ["--limit", _number(args.limit)]
    else:
        words += ["--quantiles", *(_number(q) for q in args.quantiles)]
    words += ["--window", _number(args.window), "--mode", args.mode]
    if args.counter != COUNTERS[0]:
        words += ["--counter", args.counter]
    if args.synthetic and getattr(args, "by_behaviour", False):
        words.append("--by-behaviour")
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


def _check_engine_args(args) -> None:
    if args.engine != "dask":
        for flag, value in (("--scheduler", args.scheduler), ("--workers", args.workers),
                            ("--parts-dir", args.parts_dir)):
            if value is not None:
                raise UsageError(flag, f"{flag} needs --engine dask")
    if args.scheduler and not args.synthetic and args.parts_dir is None and not (
            args.parquet and is_partitioned(args.parquet)):
        raise UsageError("--scheduler", "with a trace needs --parts-dir: storage every worker "
                                        "can read, where the trace is written partitioned "
                                        "by source")


def _part_requests(args) -> int:
    return args.part_requests or getattr(args, "pop_chunk_requests",
                                         Population().chunk_requests)


def _load(args):
    """The trace to analyse; a missing file is an environment failure naming the option."""
    try:
        return _read(args)
    except FileNotFoundError as e:
        flag = "--dataset" if args.dataset else "--trace"
        if e.filename is None:  # the message says what to do
            raise EnvironmentFailure(f"{flag}: {e}") from None
        raise EnvironmentFailure(f"{flag}: no such file {e.filename}", "check the path") from None


def _read(args):
    if args.dataset:
        trace = datasets.load(args.dataset, progress=not args.no_progress, warn=False)
        return trace, args.dataset
    return read_input(args.trace, args, "--trace", progress=not args.no_progress), args.trace


def add_calibrate(sub) -> None:
    """Add the ``cloudflare-mix`` subcommand: the search of :mod:`ratelab.analysis.calibrate`."""
    p = command(
        sub, "cloudflare-mix", run=run_calibrate, render=render_calibrate,
        help="search the population for traffic on which the counter's error matches "
             "Cloudflare's four published figures",
        description="A seeded search over the synthetic population's parameters (limit 100 "
                    "per 60 s, estimate mode) for a mix on which the share of wrong decisions, "
                    "the mean |estimate - real| / real, the false negatives and the false "
                    "positives all land near Cloudflare's 2017 figures; then the winner at "
                    "a larger scale (the confirming run), and each parameter varied alone "
                    "around it (the neighbourhood). data/cloudflare-mix.json is the record of "
                    "the command it holds (its command; run.wall_s says how long it took "
                    "there).",
        example="ratelab cloudflare-mix --trials 200 --refine 200 --finalists 3 --polish 60 "
                "--seed 1 --confirm-sources 270000 --confirm-requests 400000000 "
                "--vary-scale-up 10 "
                "--json > mix.json\n"
                "ratelab cloudflare-mix --trials 4 --refine 0 --finalists 1 --confirm-sources 0 "
                "--no-neighbourhood")
    p.add_argument("--trials", type=count, default=50, help="random mixes at the small scale")
    p.add_argument("--refine", type=whole(0), default=30,
                   help="steps of the (1+1) evolution strategy from the best random mix")
    p.add_argument("--finalists", type=count, default=3,
                   help="best mixes re-run at --scale-up times the size")
    p.add_argument("--scale-up", type=count, default=10,
                   help="size factor of the finalists' runs")
    p.add_argument("--polish", type=whole(0), default=0,
                   help="steps of the (1+1) evolution strategy from the best finalist, at the "
                        "finalists' size (the winner is the best of finalists and polished)")
    p.add_argument("--start", metavar="FILE", default=None,
                   help="polish from the mix in this JSON file (a record of this command: its "
                        "winner; or the parameters themselves) instead of searching: no "
                        "trials, refine or finalists; the mix runs once at --scale-up times "
                        "the size and --polish steps go on from it there (default: search "
                        "from scratch)")
    p.add_argument("--sources", type=count, default=2_700, help="sources at the small scale")
    p.add_argument("--requests", type=count, default=4_000_000,
                   help="requests at the small scale")
    p.add_argument("--seed", type=seed, default=0, help="seed of the search")
    p.add_argument("--confirm-sources", type=whole(0), default=27_000,
                   help="sources of the one confirming run (0: no confirming run; 270000 "
                        "with --confirm-requests 400000000 is Cloudflare's full scale)")
    p.add_argument("--confirm-requests", type=count, default=40_000_000,
                   help="requests of the one confirming run")
    p.add_argument("--confirm-seeds", type=count, default=1,
                   help="population seeds of the confirming run: 0 (the search's) and the "
                        "next N-1 (the record's confirmed_reseeded), so that the record shows "
                        "whether the figures hold on other draws of the same mix")
    p.add_argument("--vary", type=words(tuple(SPACE)), default=None,
                   help="searched parameters to halve and double around the winner, joined "
                        "by commas (default: every searched one: " + ", ".join(SPACE) + ")")
    p.add_argument("--vary-scale-up", type=count, default=1,
                   help="size factor of the neighbourhood's runs, over --sources and "
                        "--requests (default: 1, the trials' size)")
    p.add_argument("--no-neighbourhood", action="store_true",
                   help="skip varying each parameter alone around the winner")
    p.add_argument("--workers", type=count, default=None,
                   help="processes for the runs at --scale-up times the size (finalists and "
                        "polish), the confirming run and the neighbourhood (default: this one; "
                        "more run them on a local Dask cluster of that many; the figures are "
                        "the same); the small-scale trials run in one")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_calibrate(args) -> dict:
    """Run the search the arguments describe: the record (:func:`calibrate.run_calibration`'s:
    the search, the confirming run, the neighbourhood) and the command that repeats it."""
    if args.vary is not None and args.no_neighbourhood:
        raise UsageError("--vary", "does nothing with --no-neighbourhood")
    if args.vary_scale_up != 1 and args.no_neighbourhood:
        raise UsageError("--vary-scale-up", "does nothing with --no-neighbourhood")
    if not args.confirm_sources:
        for flag, given in (("--confirm-requests", args.confirm_requests
                             != args._parser.get_default("confirm_requests")),
                            ("--confirm-seeds", args.confirm_seeds != 1)):
            if given:
                raise UsageError(flag, "applies to the confirming run; --confirm-sources 0 "
                                       "skips it")
    begin = None
    if args.start is not None:
        for flag in ("trials", "refine", "finalists"):
            if getattr(args, flag) != args._parser.get_default(flag):
                raise UsageError(f"--{flag}", "does nothing with --start (it polishes the "
                                              "mix it reads, with no search before)")
        try:
            begin = calibrate.read_start(args.start)
        except FileNotFoundError:
            raise EnvironmentFailure(f"--start: no such file {args.start}",
                                     "check the path") from None
        except ValueError as e:  # also a file that is not JSON
            raise UsageError("--start", f"{args.start}: {e}") from None
    record = calibrate.run_calibration(
        trials=args.trials, refine=args.refine, finalists=args.finalists,
        scale_up=args.scale_up, polish=args.polish, sources=args.sources,
        requests=args.requests, seed=args.seed, start=begin,
        confirm_sources=args.confirm_sources, confirm_requests=args.confirm_requests,
        confirm_seeds=args.confirm_seeds, vary=args.vary, vary_scale_up=args.vary_scale_up,
        neighbours=not args.no_neighbourhood, workers=args.workers,
        progress=not args.no_progress)
    words_ = ["ratelab", "cloudflare-mix"]
    if args.start is not None:
        words_ += ["--start", shlex.quote(args.start)]
    for flag in ("trials", "refine", "finalists", "scale_up", "polish", "sources", "requests",
                 "seed", "confirm_sources", "confirm_requests"):
        if args.start is not None and flag in ("trials", "refine", "finalists"):
            continue
        words_ += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    if args.confirm_sources and args.confirm_seeds != 1:
        words_ += ["--confirm-seeds", str(args.confirm_seeds)]
    if args.no_neighbourhood:
        words_.append("--no-neighbourhood")
    else:
        words_ += ["--vary-scale-up", str(args.vary_scale_up)]
        if args.vary:
            words_ += ["--vary", ",".join(args.vary)]
    words_.append("--json")
    return {"command": " ".join(words_), **record}


def render_calibrate(record: dict) -> str:
    """The record for people: the winner, its figures beside Cloudflare's, the reseeded runs."""
    winner = record["winner"]
    final = record.get("confirmed") or calibrate.best_run(record)
    lines = ["winner: " + " ".join(f"--{k.replace('_', '-')} {v:g}" for k, v in winner.items()),
             f"at {final['sources']:,} sources, {final['requests']:,} requests (estimate mode):"]
    for k, want in CLOUDFLARE_2017.items():
        if k not in ("requests", "sources"):
            lines.append(f"  {LABELS[k]:48} {final['figures'][k]:>12.4g}   Cloudflare {want:g}")
    lines.append(f"  loss {final['distance']['loss']:.3f}; {record['run']['wall_s']} s wall")
    for run in record.get("confirmed_reseeded", []):
        f = run["figures"]
        lines.append(f"  population seed {run['seed']}: wrong {f['wrong_decisions_pct']:.4g}%, "
                     f"mean {f['mean_relative_error_pct']:.4g}%, false negatives "
                     f"{f['false_negatives']}, false positives {f['false_positives']}, "
                     f"loss {run['distance']['loss']:.3f}")
    return "\n".join(lines)
