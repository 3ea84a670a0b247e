"""numba's on-disk cache for the compiled kernels, told which sources they are made of.

The kernels (:mod:`ratelab.replay.kernels`, :mod:`ratelab.analysis.kernels`,
:mod:`ratelab.metrics`) compile the limiters' own scalar functions (``ratelab/limiters/*.py``,
``ratelab/clock.py``). numba's cache (``cache=True``) checks only the file a kernel is written
in — it tracks no dependency, and since numba 0.68 it compares that file's contents, so
neither an edit elsewhere nor a new modification time reaches it — and after an edit to a
limiter it would load a kernel compiled from the old arithmetic.

numba offers no public way to add a source to that check, so :func:`watch` adds one through
its cache locators (``numba.core.caching``, not a public API): for the kernel files only, the
stamp numba compares also holds a digest of the sources they compile. This is the one private
API of numba the package relies on besides the CLF reader's, and only because the cache is
what keeps every command after the first fast. Measured on a fresh copy of the package
(2026-12-03, the 2-core VM): ``ratelab error-analysis --trace
data/NASA_access_log_Aug95_first1000.clf.gz`` took 45 s the first time and 2.7 s the next;
the replay kernels ``ratelab bench --requests 100000`` uses compiled in 5.6 s, and loaded from
the cache in 0.4 s. Where a numba release no longer has the hook, :func:`watch` says so in
a warning and returns False, and the kernels are compiled in each process instead (correct,
slower) — never loaded stale.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Callable

_PACKAGE = Path(__file__).resolve().parent
KERNEL_FILES = (_PACKAGE / "replay" / "kernels.py", _PACKAGE / "analysis" / "kernels.py",
                _PACKAGE / "metrics.py")

_WATCHED: dict[str, Callable[[], str]] = {}  # kernel file (real path) -> digest of its sources


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
    """`locator` (a numba cache locator class) with the digest of a watched file's sources in
    its source stamp; unchanged for every other file."""

    class Watching(locator):
        def get_source_stamp(self):
            stamp = super().get_source_stamp()
            digest = _WATCHED.get(os.path.realpath(getattr(self, "_py_file", "")))
            return stamp if digest is None else (stamp, digest())

    Watching.__name__ = f"Watching{locator.__name__}"
    return Watching


def _install() -> bool:
    """Make every locator in numba's list a watching one, once; False if this numba has none.

    Every one, not the first few: where the package's folder is not writable, numba falls
    through to the next locator (a cache in the user's home), and that one must compare the
    digest as well, or it would load a kernel compiled from older limiters."""
    from numba.core import caching  # numba: only when a kernel module is loaded

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or not classes or not all(
            isinstance(c, type) and hasattr(c, "get_source_stamp") for c in classes):
        return False
    classes[:] = [c if c.__name__.startswith("Watching") else _watching(c) for c in classes]
    return True


def watch(files, digest: Callable[[], str]) -> bool:
    """Make numba's cache of the kernels in `files` depend on `digest()` too. Returns whether
    the kernels may be cached (``njit(cache=...)``): False, with a warning, when this numba
    offers no hook for it."""
    for f in files:
        _WATCHED[os.path.realpath(f)] = digest
    if _install():
        return True
    import numba  # its version, for the warning

    warnings.warn(f"numba {numba.__version__} has no cache locators to extend: ratelab's "
                  "kernels are compiled in every process instead of cached", RuntimeWarning,
                  stacklevel=2)
    return False


def watch_limiters() -> bool:
    """:func:`watch` for the package's kernel files and the limiters' sources: whether the
    kernels may be cached."""
    return watch(KERNEL_FILES, limiters_digest)
