"""The error analysis of a whole population, chunk by chunk, on every core.

Chunks of sources are independent (a source never spans two), so each worker process generates
a chunk from its own seed, analyses it and sends back only its :class:`ErrorTally` — a few
kilobytes. Memory stays at one chunk per worker however large the population.
"""

from __future__ import annotations

import multiprocessing as mp
import os

from ..limiters.base import positive
from ..traces.population import Population
from .error import ErrorTally, analyse_groups, analyse_sources, check_mode

_job: dict = {}


def _setup(pop: Population, limit: float, window: float, modes: tuple[str, ...]) -> None:
    """Per worker: the plan of all sources, computed once."""
    _job.update(pop=pop, limit=limit, window=window, modes=modes, plan=pop.plan(),
                bounds=pop.chunk_bounds())


def _work(i: int) -> tuple[int, ErrorTally]:
    c = _job["pop"].chunk(i, plan=_job["plan"], bounds=_job["bounds"])
    return len(c), analyse_sources(c.time, c.starts, _job["limit"], _job["window"],
                                   _job["modes"])


def _work_groups(i: int) -> tuple[int, dict]:
    c = _job["pop"].chunk(i, plan=_job["plan"], bounds=_job["bounds"])
    return len(c), analyse_groups(c.time, c.starts, c.behaviour, _job["limit"],
                                  _job["window"], _job["modes"])


def _warm(modes) -> None:
    """Compile (or load from the on-disk cache) every kernel once, before forking."""
    small = Population(sources=8, requests=2000, seed=0, chunk_requests=1000)
    for c in small.chunks():
        analyse_sources(c.time, c.starts, 5.0, 60.0, modes)


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def analyse_population(pop: Population, limit: float, window: float, mode: str = "both", *,
                       workers: int | None = None, progress: bool = True) -> ErrorTally:
    """The tally of every chunk of `pop`, `workers` processes at a time (default: all cores).

    The result does not depend on `workers` or on the order chunks finish in.
    """
    return _run(pop, limit, window, mode, workers, progress, _work, ErrorTally(
        positive("limit", limit), positive("window", window), check_mode(mode)))


def population_groups(pop: Population, limit: float, window: float, mode: str = "both", *,
                      workers: int | None = None, progress: bool = True) -> dict:
    """Tallies per behaviour (keyed by name) and per side of the threshold (see
    :func:`~ratelab.analysis.error.analyse_groups`): where the wrong decisions come from."""
    from ..traces.population import BEHAVIOURS

    groups = _run(pop, limit, window, mode, workers, progress, _work_groups, {})
    order = [*range(len(BEHAVIOURS)), "over the threshold", "never over"]
    return {(BEHAVIOURS[k] if isinstance(k, int) else k): groups[k] for k in order
            if k in groups}


def _add_groups(total: dict, part: dict) -> dict:
    for k, t in part.items():
        if k in total:
            total[k].add(t)
        else:
            total[k] = t
    return total


def _run(pop, limit, window, mode, workers, progress, work, total):
    from ..progress import bar as progress_bar

    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    n_chunks = pop.n_chunks
    results: dict = {}
    # the total is the requests asked for; the drawn ones differ a little: the bar stops at it
    with progress_bar(pop.requests, desc="error analysis", unit="req", unit_scale=True,
                      progress=progress, delay_s=0) as bar:
        if workers == 1 or n_chunks == 1:
            _setup(pop, limit, window, modes)
            for i in range(n_chunks):
                n, t = work(i)
                results[i] = t
                bar.update(n)
        else:
            _warm(modes)
            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            pool = (ctx or mp).Pool(workers, initializer=_setup,
                                    initargs=(pop, limit, window, modes))
            with pool:
                for i, (n, t) in zip(range(n_chunks), pool.imap(work, range(n_chunks))):
                    results[i] = t
                    bar.update(n)
    for i in range(n_chunks):  # add in chunk order: the same sums whatever finished first
        if isinstance(total, dict):
            _add_groups(total, results[i])
        else:
            total.add(results[i])
    return total


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory (MB) of this process and of its largest finished child."""
    import resource

    scale = 1024.0 if os.uname().sysname != "Darwin" else 1024.0 * 1024.0
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale
    return {"main_mb": round(me, 1), "largest_worker_mb": round(kids, 1)}
