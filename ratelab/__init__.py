"""ratelab: reference rate limiters, and the notebooks that teach and measure them.

``import ratelab`` is light: nothing is compiled at import time.
"""

from __future__ import annotations

import importlib

from .limiters import NAMES, Decision, make

__version__ = "0.1.0"

__all__ = ["Decision", "make", "NAMES", "__version__", "replay"]


def __getattr__(name: str):
    """Load ``ratelab.replay`` on first use (it pulls in numba), keeping ``import ratelab`` quick."""
    if name == "replay":
        return importlib.import_module(".replay", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
