"""Progress bars for long work: a tqdm bar that appears only once the work has run ~1 s.

Every loop that may run longer than a second (loading a log, replaying a trace, a population
analysis) takes ``progress: bool = True`` and wraps its work in :func:`bar` or :func:`track`.
Quick calls show nothing; slow ones show a bar — a widget in a notebook, text in a terminal
(``tqdm.auto`` picks). ``progress=False`` turns it off, as a notebook cell whose output is
checked must (a bar is not deterministic output).

    >>> with bar(total=3, desc="work", progress=False) as b:
    ...     for _ in range(3):
    ...         b.update(1)
"""

from __future__ import annotations

from typing import Iterable, Iterator, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

DELAY_S = 1.0
"""Seconds of work before a bar is shown at all."""


class Clamped(tqdm):
    """A tqdm bar (tqdm.auto's class) whose count never passes its total.

    A total is often an estimate (a population's requests are drawn at random around the
    number asked for; a file's size is compressed bytes): past it, tqdm shows a count above
    100% and drops the percentage. Here the bar stops at its total instead.

    One class for every bar: tqdm keeps its monitor thread on the class, so a class made per
    bar started a thread per bar, each left waiting on tqdm's lock (thousands in one test
    run of the replay's property tests).
    """

    def update(self, n=1):
        if self.total is not None and n > 0:
            n = min(n, max(0, self.total - self.n))
        return super().update(n)


def bar(total: float | None = None, *, desc: str | None = None, unit: str = "it",
        unit_scale: bool = False, progress: bool = True, delay_s: float | None = None):
    """A tqdm bar (tqdm.auto) shown only after `delay_s` seconds (default DELAY_S); a silent
    one if not `progress`.

    Use it as a context manager and call ``update(n)``; `total` may be None when unknown. The
    count never passes `total` (updates beyond it are dropped), so the bar never overshoots.
    """
    delay = DELAY_S if delay_s is None else delay_s
    return Clamped(total=total, desc=desc, unit=unit, unit_scale=unit_scale,
                   disable=not progress, delay=delay, leave=False, dynamic_ncols=True)


def track(items: Iterable[T], *, total: float | None = None, desc: str | None = None,
          unit: str = "it", progress: bool = True,
          delay_s: float | None = None) -> Iterator[T]:
    """The items of `items`, one by one, with a bar that appears after `delay_s` seconds."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with bar(total, desc=desc, unit=unit, progress=progress, delay_s=delay_s) as b:
        for item in items:
            yield item
            b.update(1)
