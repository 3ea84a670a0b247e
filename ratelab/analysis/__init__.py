"""Analysis: the sliding window counter's approximation error, and worst-case schedules.

    >>> from ratelab.analysis import approximation_error
    >>> approximation_error(trace, limit=50, window=60, mode="both")   # doctest: +SKIP

See :mod:`ratelab.analysis.error` for the two modes, :mod:`ratelab.analysis.worst_case` for
the schedules that push each algorithm furthest past its limit.
"""

from .error import (MODES, ErrorTally, analyse_groups, analyse_sources, approximation_error,
                    by_source, groups_table,
                    format_table,
                    peak_per_source, tally, thresholds)

__all__ = ["MODES", "ErrorTally", "analyse_sources", "approximation_error", "by_source",
           "format_table", "analyse_groups", "groups_table",
           "peak_per_source", "tally", "thresholds"]
