"""Analysis: the sliding window counter's approximation error (the calendar-aligned counter's,
or HAProxy's), and worst-case schedules.

    >>> from ratelab.analysis import approximation_error
    >>> approximation_error(trace, limit=50, window=60, mode="both")   # doctest: +SKIP

See :mod:`ratelab.analysis.error` for the two modes, :mod:`ratelab.analysis.stream` for the
analysis of a population or a trace part by part (here or on Dask, :func:`run_error_analysis`
the whole of ``ratelab error-analysis``), :mod:`ratelab.analysis.worst_case` for the schedules
that push each algorithm furthest past its limit.
"""

from .error import (COUNTERS, MODES, ErrorTally, analyse_groups, analyse_sources,
                    approximation_error, by_source, format_table, groups_table, peak_per_source,
                    record_table, side_by_side, tally, thresholds)
from .stream import analyse_population, run_error_analysis, trace_tally

__all__ = ["MODES", "COUNTERS", "ErrorTally", "analyse_groups", "analyse_sources",
           "approximation_error", "by_source", "format_table", "groups_table", "peak_per_source",
           "record_table", "side_by_side", "tally", "thresholds", "analyse_population",
           "run_error_analysis", "trace_tally"]
