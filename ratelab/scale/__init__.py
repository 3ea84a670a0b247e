"""Analyses that outgrow one process: traces partitioned by source, and a Dask engine.

* :mod:`ratelab.scale.parts` — a trace partitioned by source in Parquet (each part holds
  whole sources), written from memory or shuffled from a Parquet trace by Dask;
* :mod:`ratelab.scale.engine` — the error analysis and the what-if report on a Dask cluster
  (a LocalCluster by default, or an existing scheduler), one task per part, tallies added
  in part order: the same figures as the in-process engine.
"""

from .engine import (ENGINES, check_engine, cluster, parts_tally, parts_what_if,
                     population_tally, trace_tally, what_if_dask)
from .parts import PART_REQUESTS, partition_trace, read_meta, read_part, shuffle_parquet

__all__ = ["ENGINES", "check_engine", "cluster", "parts_tally", "parts_what_if",
           "population_tally", "trace_tally", "what_if_dask", "PART_REQUESTS",
           "partition_trace", "read_meta", "read_part", "shuffle_parquet"]
