"""Replay a trace through a limiter: ``ratelab.replay(limiter, trace)``.

    >>> import numpy as np, ratelab
    >>> from ratelab.traces import Trace
    >>> trace = Trace(time=np.array([0.0, 0.1, 0.2, 1.0]), key=np.zeros(4, dtype=np.int32))
    >>> result = ratelab.replay(ratelab.make("fixed-window", limit=2, window=1), trace)
    >>> result.allowed.tolist(), result.counter.tolist()
    ([True, True, False, True], [0.0, 1.0, 2.0, 0.0])

The compiled engine (numba, the default) and the reference engine (the limiter's own
``allow()``) agree exactly on every request. This package is itself callable, so that
``ratelab.replay(...)`` works however it was imported.
"""

from __future__ import annotations

import sys
import types

from .core import COUNTERS, ENGINES, ReplayResult, counter_kind, replay

__all__ = ["replay", "ReplayResult", "COUNTERS", "ENGINES", "counter_kind"]


class _CallableModule(types.ModuleType):
    """The ratelab.replay package, callable as ratelab.replay.replay."""

    def __call__(self, *args, **kwargs) -> ReplayResult:
        return replay(*args, **kwargs)


# A module's class may be set to a subclass of types.ModuleType: the language reference's way
# to customise a module ("Customizing module attribute access", Python 3.5 and later), not a
# private detail. Whichever of ``import ratelab.replay`` and ``ratelab.replay`` comes first,
# the name is then this package, and calling it replays.
sys.modules[__name__].__class__ = _CallableModule
