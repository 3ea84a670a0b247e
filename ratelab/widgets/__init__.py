"""The notebook panels: drive one limiter live, or compare them all on one stream.

    >>> from ratelab.widgets import Compare, LiveLimiter, ManualClock
    >>> LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock()).flood()["accepted"]
    10

:class:`LiveLimiter` (:mod:`.live`) is one reference limiter in virtual time, with its knobs,
a gauge and a live chart; :class:`Compare` (:mod:`.compare`) runs several algorithms on one
seeded stream (:data:`PRESETS`) at one budget. What they share: the clocks (:mod:`.clocks`),
the knobs (:mod:`.knobs`), the reading of a limiter's state (:mod:`.reading`, one table keyed
by the field each limiter reports) and the charts (:mod:`.chart`). :func:`animate`
(:mod:`.animation`) records either panel's run as an animation that plays without a kernel.
"""

from __future__ import annotations

from .animation import animate
from .chart import CHART_FONT_PX
from .clocks import Clock, ManualClock, MonotonicClock
from .compare import (EVENT_S, PRESETS, SHAPERS, TRACE_DATASET, Compare, Lane, budget_params,
                      busiest_trace_minute, preset_stream)
from .knobs import KNOBS, SLIDER_PX, default_params, knob_names
from .live import VIEWS, LiveLimiter, measure_all_fps
from .reading import READINGS, Reading, gauge_style, own_count, reading_of

__all__ = ["LiveLimiter", "Compare", "animate", "Lane", "PRESETS", "SHAPERS", "EVENT_S",
           "TRACE_DATASET", "budget_params", "preset_stream", "busiest_trace_minute",
           "measure_all_fps", "Clock", "ManualClock", "MonotonicClock", "KNOBS", "SLIDER_PX",
           "VIEWS", "CHART_FONT_PX", "default_params", "knob_names", "READINGS", "Reading",
           "reading_of", "own_count", "gauge_style"]
