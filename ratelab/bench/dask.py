"""``ratelab bench-dask``: the Dask engine measured, beyond memory and against in-process.

``beyond-memory``
    writes a synthetic population (default 1 billion requests from 675,000 sources: the
    Cloudflare-sized population scaled up 2.5x) to Parquet partitioned by source, each chunk
    made and written in a Dask task, then runs the error analysis, both modes, on the Parquet
    trace through Dask. Reports wall times and the peak resident memory of the whole process
    tree (this process, the cluster's nannies and workers), sampled every 0.2 s with psutil.
``engines``
    the same population analysed by the in-process engine and by Dask, in one run: wall times,
    their ratio, and whether every figure is identical.

Both print the load average beside their figures: on a shared machine the wall times depend
on it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

class TreeRss:
    """The peak resident memory of this process and all its descendants together, sampled."""

    def __init__(self, every_s: float = 0.2) -> None:
        import psutil

        self._me = psutil.Process()
        self.every_s = every_s
        self.peak_mb = 0.0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> float:
        import psutil

        total, n = 0, 0
        for p in [self._me, *self._me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
                n += 1
            except psutil.Error:  # a process that ended between listing and reading
                pass
        mb = total / 2**20
        if mb > self.peak_mb:
            self.peak_mb, self.peak_processes = mb, n
        return mb

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every_s)

    def __enter__(self) -> "TreeRss":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def _chunk_to_parquet(i, pop, plan, bounds, directory):
    import numpy as np

    from .parts import write_part

    c = pop.chunk(i, plan=plan, bounds=bounds)
    n = write_part(directory, i, np.repeat(c.keys, np.diff(c.starts)), c.time)
    return n, n


def write_population(client, pop, directory, progress: bool = True) -> dict:
    """Write `pop` to `directory` partitioned by source (a part per chunk), in Dask tasks."""
    from .engine import _gather_in_order
    from .parts import write_meta

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    plan, bounds = pop.plan(), pop.chunk_bounds()
    plan_f, bounds_f = client.scatter([plan, bounds], broadcast=True)
    futures = [client.submit(_chunk_to_parquet, i, pop, plan_f, bounds_f, str(directory),
                             pure=False) for i in range(len(bounds) - 1)]
    n = sum(_gather_in_order(futures, pop.requests, progress, "write Parquet"))
    return write_meta(directory, parts=len(bounds) - 1, requests=int(n), keys=pop.sources,
                      part_requests=pop.chunk_requests, grouped=True,
                      population=pop.params())


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def beyond_memory(directory, pop, limit: float, window: float, workers: int,
                  memory_limit: str | None, progress: bool = True, log=print) -> dict:
    """Write `pop` to Parquet under `directory` (reused when it holds this population), then
    tally both modes on it through Dask; wall times and the tree's peak RSS."""
    from .engine import cluster, parts_tally
    from .parts import META, read_meta

    directory = Path(directory)
    out = {"requests": pop.requests, "sources": pop.sources, "directory": str(directory),
           "workers": workers, "memory_limit_per_worker": memory_limit,
           "load_average_before": _load()}
    with TreeRss() as rss, cluster(None, workers, memory_limit) as client:
        t0 = time.perf_counter()
        reuse = (directory / META).is_file() and \
            read_meta(directory).get("population") == pop.params()
        if not reuse:
            write_population(client, pop, directory, progress)
        out["write_s"] = None if reuse else round(time.perf_counter() - t0, 1)
        out["written_requests"] = read_meta(directory)["requests"]
        out["parquet_bytes"] = sum(f.stat().st_size for f in directory.glob("*.parquet"))
        out["load_average_after_write"] = _load()
        log(f"Parquet: {out['written_requests']:,} requests in "
            f"{out['parquet_bytes'] / 2**30:.1f} GiB"
            + ("" if reuse else f", written in {out['write_s']} s"))
        t1 = time.perf_counter()
        tally = parts_tally(client, directory, limit, window, "both", progress=progress)
        out["analysis_s"] = round(time.perf_counter() - t1, 1)
    out.update(peak_tree_rss_mb=round(rss.peak_mb, 1), processes_at_peak=rss.peak_processes,
               load_average_after=_load(), figures=tally.to_dict())
    return out


def engines(pop, limit: float, window: float, workers: int, progress: bool = True,
            log=print) -> dict:
    """The population's tally on the in-process engine, then on Dask: walls and sameness."""
    from ..analysis.stream import analyse_population

    out = {"requests": pop.requests, "sources": pop.sources, "workers": workers,
           "load_average_before": _load()}
    t0 = time.perf_counter()
    a = analyse_population(pop, limit, window, "both", progress=progress)
    inprocess_s = time.perf_counter() - t0
    out["inprocess_s"] = round(inprocess_s, 1)
    out["load_average_after_inprocess"] = _load()
    log(f"in-process: {out['inprocess_s']} s")
    t1 = time.perf_counter()
    b = analyse_population(pop, limit, window, "both", engine="dask", workers=workers,
                           progress=progress)
    dask_s = time.perf_counter() - t1
    out["dask_s"] = round(dask_s, 1)
    out["load_average_after"] = _load()
    # from the unrounded walls: a tiny population takes well under the 0.1 s shown
    out["dask_over_inprocess"] = round(dask_s / inprocess_s, 3)
    out["identical"] = a.to_dict() == b.to_dict()
    out["figures"] = a.to_dict()
    log(f"dask: {out['dask_s']} s ({out['dask_over_inprocess']}x); identical: "
        f"{out['identical']}")
    return out


# ---------------------------------------------------------------- the command

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
    from ..analysis.cli import window_s
    from ..cli_support import HelpFormatter, add_debug, command, count, positive, seed
    from ..traces.population import Population

    p = sub.add_parser(
        "bench-dask", help="measure the Dask engine: beyond memory, and against in-process",
        description=__doc__.split("\n", 2)[2],
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
    """Run the benchmark; its record (exit 1 when the engines' figures differ)."""
    from ..cli_support import EnvironmentFailure, UsageError, flags
    from ..traces.population import Population
    from .engine import default_workers

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
            from dask.utils import parse_bytes

            parse_bytes(args.memory_limit)
        except (ValueError, TypeError):
            raise UsageError("--memory-limit", f"--memory-limit: {args.memory_limit!r} is not "
                                               "a size Dask reads (1.2GB, 800MiB)") from None
        try:
            out = beyond_memory(directory, pop, args.limit, args.window, workers,
                                args.memory_limit, not args.no_progress, log)
        except PermissionError as e:
            raise EnvironmentFailure(f"--dir: {e}", "choose a directory you can write") \
                from None
    else:
        out = engines(pop, args.limit, args.window, workers, not args.no_progress, log)
    record = {"bench": args.bench, "command": reproduce(args), "cpus": os.cpu_count(), **out}
    return record, (0 if record.get("identical", True) else 1)


def render_bench_dask(record: dict) -> str:
    """The record for people: one line per measurement, then each mode's headline figures."""
    from ..cli_support import cell, table

    def text(v) -> str:
        return " ".join(cell(x) for x in v) if isinstance(v, list) else cell(v)

    lines = [f"{k:28} {text(v)}" for k, v in record.items() if k != "figures"]
    modes = [{"mode": m, "requests": f["requests"], "wrong_decisions_pct":
              f["wrong_decisions_pct"], "false_negatives": f["false_negatives"],
              "false_positives": f["false_positives"]}
             for m, f in record["figures"]["modes"].items()]
    return "\n".join(lines) + "\n\n" + table(modes)
