"""The error analysis of a whole population, chunk by chunk: here, or on a Dask cluster.

Chunks of sources are independent (a source never spans two), so each chunk is generated from
its own seed, analysed, and only its :class:`ErrorTally` — a few kilobytes — is kept. Memory
stays at one chunk per process however large the population. ``engine="inprocess"`` runs the
chunks one after the other in this process (small runs); ``engine="dask"`` makes and analyses
each chunk in a task of a Dask cluster (:mod:`ratelab.scale`). Tallies are added in chunk order
either way, so the figures are the same.
"""

from __future__ import annotations

import os

from ..limiters.base import positive
from ..traces.population import Population
from .error import ErrorTally, analyse_groups, analyse_sources, check_mode


def default_workers() -> int:
    """The cores this process may use."""
    from ..scale.engine import default_workers as cores

    return cores()


def analyse_population(pop: Population, limit: float, window: float, mode: str = "both", *,
                       engine: str = "inprocess", scheduler: str | None = None,
                       workers: int | None = None, progress: bool = True) -> ErrorTally:
    """The tally of every chunk of `pop`, in this process or on a Dask cluster.

    engine     "inprocess" (default) or "dask": a LocalCluster of `workers` processes
               (default: every core), or the existing cluster at `scheduler`.
    The result depends neither on the engine nor on the order chunks finish in.
    """
    return _run(pop, limit, window, mode, engine, scheduler, workers, progress, False)


def population_groups(pop: Population, limit: float, window: float, mode: str = "both", *,
                      engine: str = "inprocess", scheduler: str | None = None,
                      workers: int | None = None, progress: bool = True) -> dict:
    """Tallies per behaviour (keyed by name) and per side of the threshold (see
    :func:`~ratelab.analysis.error.analyse_groups`): where the wrong decisions come from."""
    from ..traces.population import BEHAVIOURS

    groups = _run(pop, limit, window, mode, engine, scheduler, workers, progress, True)
    order = [*range(len(BEHAVIOURS)), "over the threshold", "never over"]
    return {(BEHAVIOURS[k] if isinstance(k, int) else k): groups[k] for k in order
            if k in groups}


def _run(pop, limit, window, mode, engine, scheduler, workers, progress, groups):
    from ..progress import bar
    from ..scale.engine import add_groups, check_engine, cluster, population_tally

    limit, window = positive("limit", limit), positive("window", window)
    modes = check_mode(mode)
    if check_engine(engine) == "dask":
        with cluster(scheduler, workers) as client:
            return population_tally(client, pop, limit, window, mode, groups=groups,
                                    progress=progress)
    if scheduler is not None or workers not in (None, 1):
        raise ValueError("scheduler and workers are for engine='dask'; the in-process "
                         "engine runs in this process")
    total = {} if groups else ErrorTally(limit, window, modes)
    with bar(pop.requests, desc="error analysis", unit="req", unit_scale=True,
             progress=progress) as b:
        for c in pop.chunks():
            if groups:
                add_groups(total, analyse_groups(c.time, c.starts, c.behaviour, limit,
                                                 window, modes))
            else:
                total.add(analyse_sources(c.time, c.starts, limit, window, modes))
            b.update(len(c))
    return total


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory (MB) of this process and of its largest finished child."""
    import resource

    scale = 1024.0 if os.uname().sysname != "Darwin" else 1024.0 * 1024.0
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale
    return {"main_mb": round(me, 1), "largest_worker_mb": round(kids, 1)}
