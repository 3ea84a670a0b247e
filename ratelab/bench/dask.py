"""The Dask engine measured, beyond memory and against in-process (``ratelab bench-dask``).

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
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import psutil

from ..analysis.stream import analyse_population, parts_tally
from ..scale.executor import cluster, imap_parts
from ..scale.parts import META, read_meta, write_meta, write_part


class TreeRss:
    """The peak resident memory of this process and all its descendants together, sampled."""

    def __init__(self, every_s: float = 0.2) -> None:
        self._me = psutil.Process()
        self.every_s = every_s
        self.peak_mb = 0.0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> float:
        """The tree's resident memory now (MB); the peak is kept."""
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


def _chunk_to_parquet(i, plan, bounds, *, pop, directory):
    """(requests, requests) of chunk `i` of `pop`, written as part `i` under `directory`."""
    c = pop.chunk(i, plan=plan, bounds=bounds)
    n = write_part(directory, i, np.repeat(c.keys, np.diff(c.starts)), c.time)
    return n, n


def write_population(client, pop, directory, progress: bool = True) -> dict:
    """Write `pop` to `directory` partitioned by source (a part per chunk), in Dask tasks."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    plan, bounds = pop.plan(), pop.chunk_bounds()
    n = sum(imap_parts(partial(_chunk_to_parquet, pop=pop, directory=str(directory)),
                       range(len(bounds) - 1), "dask", client=client, shared=(plan, bounds),
                       total=pop.requests, desc="write Parquet", progress=progress))
    return write_meta(directory, parts=len(bounds) - 1, requests=int(n), keys=pop.sources,
                      part_requests=pop.chunk_requests, grouped=True,
                      population=pop.params())


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def beyond_memory(directory, pop, limit: float, window: float, workers: int,
                  memory_limit: str | None, progress: bool = True, log=print) -> dict:
    """Write `pop` to Parquet under `directory` (reused when it holds this population), then
    tally both modes on it through Dask; wall times and the tree's peak RSS."""
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
