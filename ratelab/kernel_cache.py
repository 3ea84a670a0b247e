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

A cache miss is never silent: inside :func:`announcing` (every ``ratelab`` command but those
given ``--no-progress``), the first compile writes one line on stderr, updated in place on a
terminal with the kernels done, and a last line with the count and seconds. It listens to
numba's documented event API (``numba.core.event``), which reports compiles, not cache loads.
``ratelab compile`` (:mod:`ratelab.cli.compile`) compiles a first command's kernels ahead.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import warnings
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, TextIO

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
    listen()
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


# ---------------------------------------------------------------- saying that numba compiles

CLEAR_LINE = "\r\x1b[K"  # back to the line's start, and erase it (a terminal)


class _Notice:
    """What :func:`announcing` writes while numba compiles: a first line saying so, then, on a
    terminal, the same line updated with each kernel done; at the end, what it took."""

    def __init__(self, stream: TextIO, prog: str):
        self.stream, self.prog = stream, prog
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.depth = 0  # a kernel compiles the kernels it calls inside its own compile event
        self.done = 0
        self.began: float | None = None
        self.current = ""

    def start(self, name: str) -> None:
        if self.depth == 0:
            if self.began is None:
                self.began = time.perf_counter()
                self._write(f"{self.prog}: compiling numba kernels, once (later runs load them "
                            "from the cache; `ratelab compile` compiles them all ahead)",
                            end="" if self.tty else "\n")
            self.current = name
        self.depth += 1

    def end(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.done += 1
            if self.tty:
                self._write(f"{CLEAR_LINE}{self.prog}: compiling numba kernels, once: "
                            f"{self.done} done ({self.current}), {self._elapsed():.0f} s",
                            end="")

    def close(self, finished: bool = True) -> None:
        if self.began is None:
            return
        if not finished:  # an error or an interrupt: its own line says what happened
            if self.tty:
                self._write("")
        else:
            self._write(f"{CLEAR_LINE if self.tty else ''}{self.prog}: compiled "
                        f"{self.done} numba kernel{'s' * (self.done != 1)} in "
                        f"{self._elapsed():.0f} s; cached for later runs")

    def _elapsed(self) -> float:
        return time.perf_counter() - (self.began or time.perf_counter())

    def _write(self, text: str, end: str = "\n") -> None:
        print(text, end=end, file=self.stream, flush=True)


_NOTICE: list[_Notice] = []  # the notice being written, while inside announcing()
_listening = False


def listen() -> None:
    """Tell :func:`announcing` when numba compiles: called by each module that defines kernels,
    as it loads (numba is imported by then). Registers one listener, once, through numba's
    event API (``numba.core.event``, documented); it does nothing outside announcing()."""
    global _listening
    if _listening:
        return
    from numba.core import event  # numba: only when a kernel module is loaded

    class Listener(event.Listener):
        def on_start(self, ev):
            if _NOTICE:
                dispatcher = ev.data.get("dispatcher")
                _NOTICE[-1].start(getattr(getattr(dispatcher, "py_func", None), "__name__",
                                          "kernel"))

        def on_end(self, ev):
            if _NOTICE and _NOTICE[-1].depth:
                _NOTICE[-1].end()

    event.register("numba:compile", Listener())
    _listening = True


@contextmanager
def announcing(stream: TextIO | None = None, prog: str = "ratelab") -> Iterator[_Notice]:
    """While inside, say on `stream` (stderr) when numba compiles a kernel: a cache miss,
    tens of seconds on a first run, is never silent. A kernel loaded from the cache says
    nothing. Yields the notice, whose ``done`` counts the kernels compiled so far; nested
    uses share the outer one."""
    if _NOTICE:
        yield _NOTICE[-1]
        return
    notice = _Notice(sys.stderr if stream is None else stream, prog)
    _NOTICE.append(notice)
    try:
        yield notice
    except BaseException:
        _NOTICE.pop().close(finished=False)
        raise
    _NOTICE.pop().close()
