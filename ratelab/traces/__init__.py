"""Request traces: the Trace columns, generators, loaders for real logs.

Floors, each importing only from below: ``report`` (LoadReport, the damaged-line bookkeeping,
opening files, the reference line parsers) -> ``frames`` (a table's columns) -> ``trace``
(Trace, merge, finish) -> ``tables`` (CSV, TSV, JSON lines, Parquet) and ``fastscan`` /
``fastclf`` (the compiled log reader) -> ``loaders`` (load_log: the dispatcher). Beside them:
``generators`` (every synthetic workload) and ``population`` (a CDN-scale population built
from the generators' on/off periods and ticks).
"""

from . import generators
from .trace import Trace, merge

__all__ = ["Trace", "merge", "generators"]
