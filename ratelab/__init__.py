"""ratelab: reference rate limiters, and the notebooks that teach and measure them.

``import ratelab`` is light: nothing is compiled at import time.
"""

from __future__ import annotations

from .limiters import NAMES, Decision, make

__version__ = "0.1.0"

__all__ = ["Decision", "make", "NAMES", "__version__"]
