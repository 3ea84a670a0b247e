"""The error analysis at scale: a population chunk by chunk, a trace part by part, here or on Dask.

Chunks of sources are independent (a source never spans two), so each chunk of a synthetic
population is generated from its own seed, analysed, and only its :class:`ErrorTally` — a few
kilobytes — is kept. Memory stays at one chunk per thread or process however large the
population. A trace in memory or in Parquet is cut the same way, into parts that hold whole
sources (:mod:`ratelab.scale.parts`). ``engine="inprocess"`` runs the chunks or parts in this
process, on a thread per core (the kernels and numpy let go of the interpreter's lock);
``engine="dask"`` runs each in a task of a Dask cluster.
Both go through the executor :func:`ratelab.scale.imap_parts`, and the tallies are added in
part order either way, so the figures are the same.

:func:`run_error_analysis` is the whole analysis that ``ratelab error-analysis`` runs: the
record it prints. Every function takes the `counter` compared with the exact log: the
calendar-aligned sliding window counter (default) or "haproxy" (see
:mod:`ratelab.analysis.error`).
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from functools import partial
from pathlib import Path

from ..limiters.base import positive
from ..scale import executor as X
from ..scale import parts as P
from ..traces.population import BEHAVIOURS, Population
from ..traces.trace import Trace
from .error import (COUNTERS, DEFAULT_QUANTILES, ErrorTally, analyse_groups, analyse_sources,
                    by_source, check_counter, check_mode, thresholds)

GROUP_KEYS = {"over the threshold": "over_threshold", "never over": "never_over"}
"""The record's keys for the groups of :func:`~ratelab.analysis.error.analyse_groups` that
cut across the behaviours (the behaviours' names are keys as they are)."""


# ---------------------------------------------------------------- a synthetic population


def analyse_population(pop: Population, limit: float, window: float, mode: str = "both", *,
                       engine: str = "inprocess", scheduler: str | None = None,
                       workers: int | None = None, progress: bool = True,
                       counter: str = COUNTERS[0]) -> ErrorTally:
    """The tally of every chunk of `pop`, in this process or on a Dask cluster.

    engine     "inprocess" (default) or "dask": a LocalCluster of `workers` processes
               (default: every core), or the existing cluster at `scheduler`.
    The result depends neither on the engine nor on the order chunks finish in.
    """
    return _population(pop, limit, window, mode, engine, scheduler, workers, progress, False,
                       counter)


def population_groups(pop: Population, limit: float, window: float, mode: str = "both", *,
                      engine: str = "inprocess", scheduler: str | None = None,
                      workers: int | None = None, progress: bool = True,
                      counter: str = COUNTERS[0]) -> dict:
    """Tallies per behaviour (keyed by name) and per side of the threshold (see
    :func:`~ratelab.analysis.error.analyse_groups`): where the wrong decisions come from."""
    groups = _population(pop, limit, window, mode, engine, scheduler, workers, progress, True,
                         counter)
    order = [*range(len(BEHAVIOURS)), "over the threshold", "never over"]
    return {(BEHAVIOURS[k] if isinstance(k, int) else k): groups[k] for k in order
            if k in groups}


def population_tally(client, pop: Population, limit: float, window: float,
                     mode: str = "both", *, groups: bool = False, progress: bool = True,
                     counter: str = COUNTERS[0]):
    """The population's ErrorTally (or per-group tallies) with every chunk made and analysed
    in a task of `client`'s cluster; the plan of all sources is sent to every worker once."""
    return _chunks_tally(pop, limit, window, mode, "dask", client, groups, progress, counter)


def _population(pop, limit, window, mode, engine, scheduler, workers, progress, groups,
                counter):
    limit, window = positive("limit", limit), positive("window", window)
    check_mode(mode)
    check_counter(counter, limit, window)
    if X.check_engine(engine) == "inprocess" and (scheduler is not None
                                                  or workers not in (None, 1)):
        raise ValueError("scheduler and workers are for engine='dask'; the in-process "
                         "engine runs in this process")
    with X.engine_client(engine, scheduler, workers) as client:
        return _chunks_tally(pop, limit, window, mode, engine, client, groups, progress,
                             counter)


def _chunks_tally(pop, limit, window, mode, engine, client, groups, progress, counter):
    """The tally (or per-group tallies) of `pop`'s chunks, each made and analysed by the
    executor on `engine`, added in chunk order."""
    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    check_counter(counter, limit, window)
    bounds = pop.chunk_bounds()
    tallies = X.imap_parts(partial(_chunk_tally, pop=pop, limit=limit, window=window,
                                   modes=modes, groups=groups, counter=counter),
                           range(len(bounds) - 1), engine, client=client,
                           shared=(pop.plan(), bounds), total=pop.requests,
                           desc="error analysis", progress=progress,
                           threads=X.default_workers())
    total = {} if groups else ErrorTally(limit, window, modes, counter)
    for t in tallies:
        if groups:
            add_groups(total, t)
        else:
            total.add(t)
    return total


def _chunk_tally(i, plan, bounds, *, pop, limit, window, modes, groups, counter):
    """(requests, tally) of chunk `i` of `pop` (per-group tallies with `groups`)."""
    c = pop.chunk(i, plan=plan, bounds=bounds)
    if groups:
        return len(c), analyse_groups(c.time, c.starts, c.behaviour, limit, window, modes,
                                      counter)
    return len(c), analyse_sources(c.time, c.starts, limit, window, modes, counter)


def add_groups(total: dict, part: dict) -> dict:
    """Add per-group tallies into `total` (group by group)."""
    for k, t in part.items():
        if k in total:
            total[k].add(t)
        else:
            total[k] = t
    return total


# ---------------------------------------------------------------- a trace, part by part


def parts_tally(client, directory, limit: float, window: float, mode: str = "both", *,
                progress: bool = True, counter: str = COUNTERS[0]) -> ErrorTally:
    """The ErrorTally of a trace partitioned by source in `directory`, a task per part."""
    return _parts_tally(directory, limit, window, mode, "dask", client, progress, counter)


def parts_tally_inprocess(directory, limit: float, window: float, mode: str = "both", *,
                          progress: bool = True, counter: str = COUNTERS[0]) -> ErrorTally:
    """:func:`parts_tally` in this process, a part at a time on each of its threads."""
    return _parts_tally(directory, limit, window, mode, "inprocess", None, progress, counter)


def _parts_tally(directory, limit, window, mode, engine, client, progress,
                 counter) -> ErrorTally:
    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    check_counter(counter, limit, window)
    meta = P.read_meta(directory)
    paths = [str(p) for p in P.part_paths(directory, meta)]
    fn = partial(_part_file_tally, grouped=meta.get("grouped", False), limit=limit,
                 window=window, modes=modes, counter=counter)
    return _added(ErrorTally(limit, window, modes, counter),
                  X.imap_parts(fn, paths, engine, client=client, total=meta["requests"],
                               desc="error analysis", progress=progress,
                               threads=X.default_workers()))


def _part_file_tally(path, *, grouped, limit, window, modes, counter):
    """(requests, tally) of the part at `path`."""
    return _part_tally(P.read_part(path, grouped), limit=limit, window=window, modes=modes,
                       counter=counter)


def _part_tally(part, *, limit, window, modes, counter):
    """(requests, tally) of a part in memory."""
    return len(part), analyse_sources(part.time, part.starts, limit, window, modes, counter)


def _added(total: ErrorTally, tallies) -> ErrorTally:
    for t in tallies:
        total.add(t)
    return total


def trace_tally(trace, limit: float, window: float, mode: str = "both", *,
                engine: str = "inprocess", client=None, parts_dir=None,
                part_requests: int = P.PART_REQUESTS, progress: bool = True,
                counter: str = COUNTERS[0]) -> ErrorTally:
    """The ErrorTally of a trace in memory, part by part (parts of about `part_requests`).

    engine "inprocess": the parts here, a thread per core; "dask": the parts written to
    Parquet under `parts_dir` (default: a temporary directory, for a LocalCluster) and
    tallied by `client`'s cluster. The same figures either way.
    """
    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    check_counter(counter, limit, window)
    if trace.cost is not None:
        by_source(trace)  # refuses costs other than 1, as the one-pass analysis does
    if X.check_engine(engine) == "inprocess":
        fn = partial(_part_tally, limit=limit, window=window, modes=modes, counter=counter)
        return _added(ErrorTally(limit, window, modes, counter),
                      X.imap_parts(fn, P.split(trace, part_requests), total=len(trace),
                                   desc="error analysis", progress=progress,
                                   threads=X.default_workers()))
    with P.partitioned(trace, parts_dir, part_requests) as directory:
        return parts_tally(client, directory, limit, window, mode, progress=progress,
                           counter=counter)


# ---------------------------------------------------------------- the whole analysis, a record


def run_error_analysis(data, limit: float | None = None, window: float = 60.0,
                       mode: str = "both", *, source: str | None = None,
                       quantiles=DEFAULT_QUANTILES, by_behaviour: bool = False,
                       engine: str = "inprocess", scheduler: str | None = None,
                       workers: int | None = None, parts_dir=None,
                       part_requests: int | None = None, progress: bool = True,
                       counter: str = COUNTERS[0]) -> dict:
    """The record of ``ratelab error-analysis``: `counter` (the calendar-aligned sliding window
    counter, or "haproxy") against the exact log on `data`.

    data       a :class:`Population` (streamed in chunks; `by_behaviour` also tallies each
               behaviour apart), a :class:`Trace` in memory (without `limit`: one result
               per limit at the `quantiles` of the per-source peak counts), or the path of a
               Parquet trace (partitioned by source, or shuffled once with Dask: `engine`
               "dask"); `source` names it in the record.
    engine     "inprocess" or "dask" (a LocalCluster of `workers`, or `scheduler`'s cluster);
               a trace in memory goes to the workers through `parts_dir` (default: a
               temporary directory), in parts of about `part_requests` requests.
    The figures are the same on either engine; ``run`` says how long it took where.
    """
    part_requests = P.PART_REQUESTS if part_requests is None else part_requests
    check_counter(counter, limit, positive("window", window))
    if isinstance(data, Population):
        if limit is None:
            raise ValueError("limit: a population needs one (requests per window)")
        return _population_record(data, limit, window, mode, by_behaviour, engine, scheduler,
                                  workers, progress, counter)
    if by_behaviour:
        raise ValueError("by_behaviour: a population's sources have behaviours; a trace's "
                         "do not")
    if isinstance(data, Trace):
        return _trace_record(data, "" if source is None else source, limit, window, mode,
                             quantiles, engine, scheduler, workers, parts_dir, part_requests,
                             progress, counter)
    if limit is None:
        raise ValueError("limit: a Parquet trace needs one (the peak quantiles need the trace "
                         "in memory)")
    return _parquet_record(Path(data), str(data) if source is None else source, limit, window,
                           mode, engine, scheduler, workers, parts_dir, part_requests, progress,
                           counter)


def _population_record(pop, limit, window, mode, by_behaviour, engine, scheduler, workers,
                       progress, counter) -> dict:
    start = time.perf_counter()
    run = dict(engine=engine, scheduler=scheduler, workers=workers, progress=progress,
               counter=counter)
    detail = {}
    if by_behaviour:
        groups = population_groups(pop, limit, window, mode, **run)
        tally = ErrorTally(limit, window, check_mode(mode), counter)
        for name in BEHAVIOURS:  # the behaviours partition the sources: they add up
            if name in groups:
                tally.add(groups[name])
        detail["by_behaviour"] = {
            GROUP_KEYS.get(name, name): {
                "sources": g.sources, "requests": g.requests, "sources_over_threshold": g.over,
                **{m: {"wrong_decisions_pct": g.record(m)["wrong_decisions_pct"],
                       **g.misjudged(m)} for m in g.modes}}
            for name, g in groups.items()}
    else:
        tally = analyse_population(pop, limit, window, mode, **run)
    detail["misjudged"] = {m: tally.misjudged(m) for m in tally.modes}
    wall = time.perf_counter() - start
    run_info = {"wall_s": round(wall, 2), "chunks": pop.n_chunks, "engine": engine,
                "workers": workers_at_work(engine, scheduler, workers), **peak_rss_mb()}
    return {"source": "synthetic", "population": pop.params(), **tally.to_dict(), **detail,
            "run": run_info}


def _trace_record(trace, source, limit, window, mode, quantiles, engine, scheduler, workers,
                  parts_dir, part_requests, progress, counter) -> dict:
    limits = {None: limit} if limit is not None else thresholds(trace, window,
                                                                  tuple(quantiles))
    report = trace.meta.get("report")
    results = []
    with X.engine_client(engine, scheduler, workers) as client:
        for q, lim in limits.items():
            t = trace_tally(trace, lim, window, mode, engine=engine, client=client,
                            parts_dir=parts_dir, part_requests=part_requests,
                            progress=progress, counter=counter)
            results.append({"quantile": q, **t.to_dict()})
    return {"source": source, "requests": len(trace), "sources": trace.n_keys,
            "load_report": None if report is None else report.to_dict(), "results": results}


def _parquet_record(path, source, limit, window, mode, engine, scheduler, workers, parts_dir,
                    part_requests, progress, counter) -> dict:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ratelab-parts-") as tmp:
        if X.check_engine(engine) == "inprocess":
            if not P.is_partitioned(path):
                raise ValueError(f"{path}: a trace not yet partitioned by source needs "
                                 "engine='dask' (it is shuffled once, with Dask)")
            t = parts_tally_inprocess(path, limit, window, mode, progress=progress,
                                      counter=counter)
        else:
            with X.cluster(scheduler, workers) as client:
                if not P.is_partitioned(path):
                    out = Path(parts_dir or tmp)
                    P.shuffle_parquet(path, out, client, part_requests)
                    path = out
                t = parts_tally(client, path, limit, window, mode, progress=progress,
                                counter=counter)
    # a trace shuffled into the temporary directory is gone by now: its parts are not known
    meta = P.read_meta(path) if P.is_partitioned(path) else {}
    wall = time.perf_counter() - start
    return {"source": source, "requests": t.requests, "sources": t.sources,
            "parts": meta.get("parts"), **t.to_dict(),
            "run": {"wall_s": round(wall, 2), "engine": engine,
                    "workers": workers_at_work(engine, scheduler, workers)}}


def workers_at_work(engine: str, scheduler: str | None, workers: int | None) -> int | None:
    """Threads or processes at work: in process, a thread per core; the LocalCluster's
    processes; or None for a scheduler's."""
    if engine == "inprocess":
        return X.default_workers()
    return None if scheduler else (workers or X.default_workers())


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory (MB) of this process and of its largest finished child."""
    scale = 1024.0 if os.uname().sysname != "Darwin" else 1024.0 * 1024.0
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale
    return {"main_mb": round(me, 1), "largest_worker_mb": round(kids, 1)}
