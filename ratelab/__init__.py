"""ratelab: reference rate limiters, and the notebooks that teach and measure them.

``import ratelab`` is light: nothing is compiled at import time, and the names below load
their modules on first use (``ratelab.make`` the limiters and numpy, ``ratelab.replay``
numba), so that ``ratelab --version`` and ``ratelab --help`` need neither. Every subpackage
is reachable as an attribute all the same: ``import ratelab; ratelab.limiters.make(...)``.
"""

from __future__ import annotations

import importlib
import importlib.util

__version__ = "0.1.0"

__all__ = ["Decision", "make", "NAMES", "__version__", "replay"]

_LAZY = {"Decision": ".limiters", "make": ".limiters", "NAMES": ".limiters"}


def __getattr__(name: str):
    """Load the limiters' names (numpy) and any subpackage (``replay``: numba) on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # found directly from now on
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
