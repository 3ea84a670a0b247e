"""Work that outgrows one process: traces partitioned by source, and an executor over parts.

* :mod:`ratelab.scale.parts` — a trace partitioned by source in Parquet (each part holds
  whole sources), written from memory or shuffled from a Parquet trace by Dask;
* :mod:`ratelab.scale.executor` — :func:`map_parts`: a function over parts, in this process or
  one task per part on a Dask cluster (a LocalCluster by default, or an existing scheduler),
  results in part order;
* :mod:`ratelab.scale.merge` — :func:`add_fields`: the parts' tallies (dataclasses) added
  field by field, as each field's metadata says.

It knows nothing of what the parts are analysed for: the error analysis
(:mod:`ratelab.analysis.stream`) and the what-if (:mod:`ratelab.whatif`) call it.
"""

from .executor import (ENGINES, check_engine, cluster, default_workers, engine_client,
                       imap_parts, map_parts)
from .merge import add_fields
from .parts import (PART_REQUESTS, is_partitioned, partition_trace, partitioned, read_meta,
                    read_part, shuffle_parquet)

__all__ = ["ENGINES", "check_engine", "cluster", "default_workers", "engine_client",
           "imap_parts", "map_parts", "add_fields", "PART_REQUESTS", "is_partitioned",
           "partition_trace", "partitioned", "read_meta", "read_part", "shuffle_parquet"]
