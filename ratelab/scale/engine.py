"""The Dask engine: one task per part of the sources, small tallies back, added in part order.

Every analysis here limits each source on its own, so a trace cut into parts that hold whole
sources (:mod:`ratelab.scale.parts`) is analysed part by part: a task reads its part, runs
the existing compiled kernels (:func:`ratelab.analysis.error.analyse_sources`,
:func:`ratelab.replay.replay` through :func:`ratelab.whatif.tally`) and sends back a tally of
a few kilobytes; the tallies are added in part order, as the in-process engine adds them, so
both engines give the same figures. A synthetic population is generated inside the tasks, chunk
by chunk, from per-chunk seeds.

A cluster is a ``distributed.LocalCluster`` on this machine (one single-threaded worker process
per core, no dashboard) unless a scheduler address is given. Every worker must import the same
ratelab, and parts written to disk must be on storage every worker can read.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path

from ..analysis.error import ErrorTally, analyse_groups, analyse_sources, check_mode
from ..limiters.base import positive
from . import parts as P

ENGINES = ("inprocess", "dask")


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return engine


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None,
            memory_limit: str | None = None):
    """A ``distributed.Client``: of the scheduler at `scheduler`, else of a new LocalCluster
    of `workers` single-threaded processes (default: every core), closed on exit.

    An unreachable scheduler is an OSError naming it.
    """
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise OSError(f"no Dask scheduler answers at {scheduler}: {e}") from None
        try:
            yield client
        finally:
            client.close()
        return
    import dask

    n = default_workers() if workers is None else int(workers)
    if n < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    kw = {} if memory_limit is None else {"memory_limit": memory_limit}
    # the workers' stack sampler (a thread waking every 10 ms) and monitors (every 0.1-0.5 s)
    # cost CPU the kernels need; the nannies hand these settings to the workers they start
    quiet = dask.config.set({"distributed.worker.profile.enabled": False,
                             "distributed.admin.system-monitor.interval": "1s",
                             "distributed.worker.memory.monitor-interval": "1s"})
    # no dashboard; the scheduler's own small HTTP server on a free loopback port
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, **kw) as lc, \
            Client(lc) as client:
        quiet.__exit__(None, None, None)
        yield client


def _gather_in_order(futures, total, progress: bool, desc: str):
    """Each future's result, in order, as soon as it and every one before it are done.

    Every task returns (requests, result); the bar counts requests. Yields the results in
    index order, holding only those that finished ahead of an earlier one.
    """
    from distributed import as_completed

    from ..progress import bar

    index = {f.key: i for i, f in enumerate(futures)}
    done: dict[int, object] = {}
    nxt = 0
    with bar(total, desc=desc, unit="req", unit_scale=True, progress=progress) as b:
        for fut in as_completed(futures):
            i = index[fut.key]
            n, done[i] = fut.result()
            fut.release()
            b.update(n)
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1


# ---------------------------------------------------------------- the error analysis


def _chunk_tally(i, pop, plan, bounds, limit, window, modes, groups):
    c = pop.chunk(i, plan=plan, bounds=bounds)
    if groups:
        return len(c), analyse_groups(c.time, c.starts, c.behaviour, limit, window, modes)
    return len(c), analyse_sources(c.time, c.starts, limit, window, modes)


def add_groups(total: dict, part: dict) -> dict:
    """Add per-group tallies into `total` (group by group)."""
    for k, t in part.items():
        if k in total:
            total[k].add(t)
        else:
            total[k] = t
    return total


def population_tally(client, pop, limit: float, window: float, mode: str = "both", *,
                     groups: bool = False, progress: bool = True):
    """The population's ErrorTally (or per-group tallies) with every chunk made and analysed
    in a task of `client`'s cluster; the plan of all sources is sent to every worker once."""
    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    plan, bounds = pop.plan(), pop.chunk_bounds()
    plan_f, bounds_f = client.scatter([plan, bounds], broadcast=True)
    n = len(bounds) - 1
    futures = [client.submit(_chunk_tally, i, pop, plan_f, bounds_f, limit, window, modes,
                             groups, pure=False) for i in range(n)]
    total = {} if groups else ErrorTally(limit, window, modes)
    for t in _gather_in_order(futures, pop.requests, progress, "error analysis"):
        if groups:
            add_groups(total, t)
        else:
            total.add(t)
    return total


def _part_tally(path, grouped, limit, window, modes):
    p = P.read_part(path, grouped)
    return len(p), analyse_sources(p.time, p.starts, limit, window, modes)


def parts_tally(client, directory, limit: float, window: float, mode: str = "both", *,
                progress: bool = True) -> ErrorTally:
    """The ErrorTally of a trace partitioned by source in `directory`, a task per part."""
    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    meta = P.read_meta(directory)
    paths = P.part_paths(directory, meta)
    futures = [client.submit(_part_tally, str(p), meta.get("grouped", False), limit, window,
                             modes, pure=False) for p in paths]
    total = ErrorTally(limit, window, modes)
    for t in _gather_in_order(futures, meta["requests"], progress, "error analysis"):
        total.add(t)
    return total


def parts_tally_inprocess(directory, limit: float, window: float, mode: str = "both", *,
                          progress: bool = True) -> ErrorTally:
    """:func:`parts_tally` in this process, one part after the other."""
    from ..progress import bar

    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    meta = P.read_meta(directory)
    total = ErrorTally(limit, window, modes)
    with bar(meta["requests"], desc="error analysis", unit="req", unit_scale=True,
             progress=progress) as b:
        for path in P.part_paths(directory, meta):
            n, t = _part_tally(str(path), meta.get("grouped", False), limit, window, modes)
            total.add(t)
            b.update(n)
    return total


def trace_tally(trace, limit: float, window: float, mode: str = "both", *,
                engine: str = "inprocess", client=None, parts_dir=None,
                part_requests: int = P.PART_REQUESTS, progress: bool = True) -> ErrorTally:
    """The ErrorTally of a trace in memory, part by part (parts of about `part_requests`).

    engine "inprocess": the parts one after the other here; "dask": the parts written to
    Parquet under `parts_dir` (default: a temporary directory, for a LocalCluster) and
    tallied by `client`'s cluster. The same figures either way.
    """
    from ..analysis.error import by_source

    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    if trace.cost is not None:
        by_source(trace)  # refuses costs other than 1, as the one-pass analysis does
    if check_engine(engine) == "inprocess":
        total = ErrorTally(limit, window, modes)
        for p in P.split(trace, part_requests):
            total.add(analyse_sources(p.time, p.starts, limit, window, modes))
        return total
    with _parts_of(trace, parts_dir, part_requests) as directory:
        return parts_tally(client, directory, limit, window, mode, progress=progress)


@contextmanager
def _parts_of(trace, parts_dir, part_requests):
    """A directory holding `trace` partitioned by source (temporary unless `parts_dir`)."""
    if parts_dir is not None:
        P.partition_trace(trace, parts_dir, part_requests)
        yield Path(parts_dir)
        return
    with tempfile.TemporaryDirectory(prefix="ratelab-parts-") as tmp:
        P.partition_trace(trace, tmp, part_requests)
        yield Path(tmp)


# ---------------------------------------------------------------- what-if


def _part_what_if(path, grouped, policies):
    from ..whatif import tally

    trace = P.read_part(path, grouped).to_trace()
    return len(trace), tally(trace, policies)


def parts_what_if(client, directory, policies, *, progress: bool = True):
    """The WhatIfTally of a trace partitioned by source in `directory`, a task per part."""
    from ..whatif import WhatIfTally, parse_policy

    policies = tuple(p if not isinstance(p, str) else parse_policy(p) for p in policies)
    meta = P.read_meta(directory)
    futures = [client.submit(_part_what_if, str(p), meta.get("grouped", False), policies,
                             pure=False) for p in P.part_paths(directory, meta)]
    total = WhatIfTally(policies)
    for t in _gather_in_order(futures, meta["requests"], progress, "what-if"):
        total.add(t)
    return total


def what_if_dask(trace, policies, *, source: str = "", client=None,
                 scheduler: str | None = None, workers: int | None = None, parts_dir=None,
                 part_requests: int = P.PART_REQUESTS, progress: bool = False) -> dict:
    """:func:`ratelab.whatif.what_if`'s record, computed on a Dask cluster part by part.

    The cluster of `client`, else a new one (:func:`cluster` with `scheduler`, `workers`).
    """
    if scheduler is not None and parts_dir is None:
        raise ValueError("a trace sent to a Dask scheduler needs parts_dir: storage that "
                         "every worker can read (this machine's temporary directory is not)")
    with (nullcontext(client) if client is not None else cluster(scheduler, workers)) as c, \
            _parts_of(trace, parts_dir, part_requests) as directory:
        total = parts_what_if(c, directory, policies, progress=progress)
    return total.record(trace.name_of, source)
