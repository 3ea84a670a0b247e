"""The executor: a function mapped over parts, in this process or on a Dask cluster, in order.

Every analysis that limits each source on its own can be cut into parts that hold whole
sources (:mod:`ratelab.scale.parts`, or a synthetic population's chunks): a part is analysed
alone and sends back a small result, and the results are combined in part order, so that the
figures are the same on either engine. :func:`map_parts` runs one function over the parts:
one after the other in this process (``engine="inprocess"``), or one task per part on the
cluster of a ``distributed.Client`` (``engine="dask"``), results handed back in part order
either way. What a part is, what the function computes and how the results add up belong to
the caller (:mod:`ratelab.analysis.stream`, :mod:`ratelab.whatif`): nothing here knows.

A cluster (:func:`cluster`) is a ``distributed.LocalCluster`` on this machine (one
single-threaded worker process per core, no dashboard) unless a scheduler address is given.
Every worker must import the same ratelab, and parts written to disk must be on storage every
worker can read.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterable, Iterator, Sequence

from ..progress import bar

ENGINES = ("inprocess", "dask")


def check_engine(engine: str) -> str:
    """`engine` when it is one of :data:`ENGINES`; a ValueError naming it otherwise."""
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
    # dask and distributed: a second of imports, only when a cluster is asked for
    import dask
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


def engine_client(engine: str, scheduler: str | None = None, workers: int | None = None,
                  client=None):
    """A context giving the client `engine` runs on: None in process; `client` when given,
    else a new :func:`cluster` (of `scheduler`, or of `workers` local processes)."""
    if check_engine(engine) == "inprocess" or client is not None:
        return nullcontext(client)
    return cluster(scheduler, workers)


def imap_parts(fn: Callable, parts: Iterable, engine: str = "inprocess", *, client=None,
               shared: Sequence = (), total: int | None = None, desc: str = "",
               unit: str = "req", progress: bool = True, threads: int = 1) -> Iterator:
    """``fn(part, *shared)``'s result for each of `parts`, in part order.

    `fn` returns ``(work, result)``: `work` (the part's requests, say) advances a progress bar
    of `total` such units; only `result` is yielded. engine "inprocess": the parts in this
    process, on `threads` threads (each takes the next part; at most `threads` parts are in
    hand at once, so memory grows with `threads`, not with the parts) — worth more than 1
    only where `fn` spends its time outside the interpreter's lock (numpy, numba kernels
    compiled ``nogil``); "dask": a task per part on `client`'s cluster, `shared` sent to every
    worker once. Either way each result is yielded as soon as it and every one before it are
    done (only those that finished ahead of an earlier one are held).
    """
    if check_engine(engine) == "inprocess":
        with bar(total, desc=desc, unit=unit, unit_scale=True, progress=progress) as b:
            for work, result in _in_threads(fn, parts, shared, threads):
                b.update(work)
                yield result
        return
    if client is None:
        raise ValueError("engine='dask' needs a client (see ratelab.scale.cluster)")
    shared = client.scatter(list(shared), broadcast=True) if len(shared) else []
    futures = [client.submit(fn, part, *shared, pure=False) for part in parts]
    yield from _gather_in_order(futures, total, progress, desc, unit)


def _in_threads(fn: Callable, parts: Iterable, shared: Sequence, threads: int) -> Iterator:
    """``fn(part, *shared)`` for each part, in order, on `threads` threads (1: this one)."""
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads!r}")
    if threads == 1:
        for part in parts:
            yield fn(part, *shared)
        return
    parts = iter(parts)
    with ThreadPoolExecutor(threads, thread_name_prefix="ratelab-part") as pool:
        pending: deque = deque()
        while True:
            # a part is taken only when a thread is free for it: at most `threads` in hand
            for part in itertools.islice(parts, threads - len(pending)):
                pending.append(pool.submit(fn, part, *shared))
            if not pending:
                return
            yield pending.popleft().result()


def map_parts(fn: Callable, parts: Iterable, engine: str = "inprocess", **kw) -> list:
    """:func:`imap_parts` as a list: every part's result, in part order."""
    return list(imap_parts(fn, parts, engine, **kw))


def _gather_in_order(futures, total, progress: bool, desc: str, unit: str):
    """Each future's result, in order, as soon as it and every one before it are done.

    Every task returns (work, result); the bar counts work. Yields the results in index
    order, holding only those that finished ahead of an earlier one.
    """
    # distributed: imported with the cluster that made the futures
    from distributed import as_completed

    index = {f.key: i for i, f in enumerate(futures)}
    done: dict[int, object] = {}
    nxt = 0
    with bar(total, desc=desc, unit=unit, unit_scale=True, progress=progress) as b:
        for fut in as_completed(futures):
            i = index[fut.key]
            n, done[i] = fut.result()
            fut.release()
            b.update(n)
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1
