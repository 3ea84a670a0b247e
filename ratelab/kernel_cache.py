"""numba's on-disk cache for the compiled kernels, told which sources they are made of.

The kernels (:mod:`ratelab.replay.kernels`, :mod:`ratelab.analysis.kernels`) compile the
limiters' own scalar functions (``ratelab/limiters/*.py``). numba's cache (``cache=True``)
checks only the file a kernel is written in, so after an edit to a limiter it would load a
kernel compiled from the old arithmetic. :func:`watch_limiters` adds the limiters' sources to
the stamp numba compares, for the kernel modules only, so such an edit recompiles them.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_KERNEL_FILES = {str(_PACKAGE / "replay" / "kernels.py"), str(_PACKAGE / "analysis" / "kernels.py"),
                 str(_PACKAGE / "metrics.py")}


@lru_cache(maxsize=1)
def limiters_digest() -> str:
    """A digest of every ``ratelab/limiters/*.py`` source and of ``ratelab/clock.py`` (the
    kernels compile the ticks arithmetic too)."""
    h = hashlib.sha256()
    for path in [*sorted((_PACKAGE / "limiters").glob("*.py")), _PACKAGE / "clock.py"]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _watching(locator):
    """`locator` (a numba cache locator class) for the kernel files, with the limiters'
    digest in its source stamp."""

    class Watching(locator):
        def get_source_stamp(self):
            return (super().get_source_stamp(), limiters_digest())

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.realpath(py_file) not in _KERNEL_FILES:
                return None
            return super().from_function(py_func, py_file)

    Watching.__name__ = f"Watching{locator.__name__}"
    return Watching


def watch_limiters() -> None:
    """Make numba's cache of the kernel modules depend on the limiters' sources too."""
    from numba.core import caching  # numba: only when a kernel module is loaded

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if classes is None:  # another numba: its cache keeps checking the kernel files only
        return
    if any(getattr(c, "__name__", "").startswith("Watching") for c in classes):
        return
    classes[:0] = [_watching(caching.UserProvidedCacheLocator),
                   _watching(caching.InTreeCacheLocator)]
