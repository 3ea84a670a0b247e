"""What every limiter shares: the Decision, the keyed base class, and input checks.

A limiter is asked one question, "may this request of `cost` units from `key` pass at time
`now`?", and answers with a :class:`Decision`. Time is always an argument (seconds, float);
nothing here reads a clock.

Every algorithm is written in the same two steps (compute, then commit):

* ``_check(state, now, now_t, cost) -> (Decision, new_state)`` computes the answer and the
  state the key *would* have, and changes nothing (``now`` in seconds, ``now_t`` the same
  instant in whole microseconds, converted once per request by :func:`time_and_ticks`);
* ``allow`` is :meth:`Limiter.decide` (``_check`` on the key's state) then
  :meth:`Limiter.commit` (store ``new_state``); ``peek`` is ``decide`` alone.

So ``peek`` is exactly ``allow`` without consequences, and a rejected request changes the state
only when the algorithm's ``count_rejected`` policy says it should.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Hashable

import numpy as np

from ..clock import TICKS_PER_S, check_ticks, to_ticks, window_ticks

Seconds = float
"""A duration or an instant, in seconds."""

PerSecond = float
"""A rate, in requests (cost units) per second."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to one request, with what a client should be told about it.

    allowed      whether the request passes.
    limit        the most the limiter admits at once (capacity, limit, burst + 1 ...).
    remaining    whole requests of cost 1 that would still pass at this instant, after this one.
    retry_after  seconds until a request of this cost would pass; 0 when allowed. A request
                 sent at exactly now + retry_after passes (float rounding included).
    reset_after  seconds until the full allowance is back (0 when it already is).
    delay        seconds the request is held before it is served (shaping, nginx); else 0.
    """

    allowed: bool
    limit: float
    remaining: int
    retry_after: Seconds
    reset_after: Seconds
    delay: Seconds = 0.0


# ---------------------------------------------------------------- input checks

LARGEST = 2**53
"""Capacities, limits and bursts must lie below 2**53: above it floats are not whole numbers
and ``remaining`` would not fit the compiled engine's 64-bit integers."""


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))



def positive(name: str, value: Any) -> float:
    """`value` as a float, or ValueError naming `name` unless it is finite and > 0."""
    if _is_bool(value):
        raise ValueError(f"{name} must be a positive number, not a boolean, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return x


def non_negative(name: str, value: Any) -> float:
    """`value` as a float, or ValueError naming `name` unless it is finite and >= 0."""
    if _is_bool(value):
        raise ValueError(f"{name} must be a non-negative number, not a boolean, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}") from None
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return x


def whole(name: str, value: Any, *, minimum: int = 1) -> int:
    """`value` as an int, or ValueError naming `name` unless it is a whole number >= minimum."""
    if _is_bool(value):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}") from None
    if not math.isfinite(x) or x != int(x) or x < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(below(name, x, LARGEST, "2**53", value))


MAX_RATE = LARGEST * TICKS_PER_S
"""Bucket rates must lie below this (9.007e21 per second): what a bucket refills in one tick
(``clock.tie_amount``, which ``remaining`` counts) then stays below 2**53, a whole number of
requests that fits the compiled engine's 64-bit integers. At rate=1e300 it would not."""


def below(name: str, x: float, bound: float, what: str, given: Any = None) -> float:
    """`x`, or ValueError naming `name` unless it lies below `bound` — the one guard against a
    parameter whose arithmetic would overflow; `what` says the bound in words, `given` the
    value as the caller wrote it (default: `x`)."""
    if not x < bound:
        raise ValueError(f"{name} must be below {what} ({bound:.4g}), "
                         f"got {x if given is None else given!r}")
    return x


def bounded(name: str, x: float) -> float:
    """`x`, or ValueError naming `name` unless it lies below LARGEST (2**53)."""
    return below(name, x, LARGEST, "2**53")


def slow_enough(name: str, per_s: float, amount: float) -> None:
    """ValueError naming `name` when `amount` / `per_s` seconds is 2**53 ticks or more: such a
    wait does not fit a whole number of microseconds (rate far too slow for its capacity)."""
    if amount * TICKS_PER_S / per_s >= LARGEST:
        raise ValueError(f"{name}={per_s!r} is too slow: {amount!r} at that rate takes "
                         f"2**53 microseconds (285 years) or more")


def whole_below(x: float) -> int:
    """How many whole k >= 1 satisfy k < x: the requests of cost 1 that pass one after another
    when each needs its cost to be below `x` minus what the ones before it took."""
    return max(0, math.ceil(x) - 1)


def window_step(count: float, cost: float, limit: float,
                count_rejected: bool) -> tuple[bool, bool, float]:
    """The window algorithms' one admit rule, for a request of `cost` that finds `count` in its
    window (the fixed window's count, the log's logged cost, the counter's estimate):
    (whether it passes, whether it is counted, the count after it).

    It passes when ``count + cost <= limit``. It is counted when it passes, or when
    `count_rejected` says refused requests count too; the count after it is then
    ``count + cost``, else ``count``. The three window limiters, their compiled replays and the
    error analysis's passes all decide with this function.
    """
    allowed = count + cost <= limit
    counted = allowed or count_rejected
    return allowed, counted, count + cost if counted else count


def window_remaining(after: float, limit: float) -> int:
    """Whole requests of cost 1 that still fit a window holding `after`: floor(limit - after),
    and 0 when it holds the limit or more."""
    return int(math.floor(max(0.0, limit - after)))


def finite_time(now: Any, name: str = "now") -> float:
    """`now` as a float, or ValueError naming `name` unless it is a finite number of seconds
    within the range the limiters hold (+-2**62 microseconds)."""
    if _is_bool(now):
        raise ValueError(f"{name} must be a time in seconds, not a boolean, got {now!r}")
    try:
        t = float(now)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a time in seconds, got {now!r}") from None
    if not math.isfinite(t):
        raise ValueError(f"{name} must be a finite time in seconds, got {now!r}")
    check_ticks(t, name)
    return t


def time_and_ticks(now: Any, name: str = "now") -> tuple[float, int]:
    """(`now` as float seconds, the same instant in ticks), checked as :func:`finite_time`
    checks it: the one conversion to ticks a request needs."""
    now = finite_time(now, name)
    return now, to_ticks(now)


# ---------------------------------------------------------------- the keyed limiter


class Limiter:
    """Base of the reference limiters: per-key state, checks, and the verbs.

    Subclasses set ``name`` and ``limit`` and implement ``_initial(now, now_t)``,
    ``_check(state, now, now_t, cost)`` and ``_inspect(state, now, now_t)`` (``now_t``: the
    time `now` in ticks, converted once); they may override ``max_cost``.

    Time must not run backwards for a key: a ``now`` earlier than the last time that key was
    seen raises ValueError (we reject rather than clamp, so that an unsorted trace is a loud
    error and never a silently wrong count). Equal times are fine — ties are common in logs.
    """

    name: str = ""
    limit: float = 0.0
    reports: tuple[str, str] = ("", "")
    """What the limiter reports as its counter: (the ``inspect()`` field, what it means). The
    compiled replay's ``counter`` column and the widgets read this one declaration."""

    window_s: Seconds | None = None
    """The window in seconds (the window algorithms); None for an algorithm without a window
    (buckets, GCRA, nginx). A caller that needs a window checks ``window_s is None`` and says
    so in its error."""

    can_shape: bool = False
    """Whether the algorithm can hold a request back and serve it later (leaky bucket, nginx)."""

    shapes: bool = False
    """Whether this instance holds requests back with a delay instead of refusing them."""

    example: dict[str, Any] = {}
    """Settings of the required parameters that admit about 100 requests per second: the
    command line's defaults (``ratelab storm --limiter NAME`` without ``--param``)."""

    server: str | None = None
    """The server whose rule this algorithm models ("nginx", "haproxy"), whose configuration
    lines ``config(key)`` prints; None for the others."""

    @property
    def rate_per_s(self) -> PerSecond:
        """The long-run rate admitted, in cost units per second."""
        raise NotImplementedError(f"{type(self).__name__} declares no rate_per_s")

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict[str, Any]:
        """The constructor parameters that give this algorithm a budget of `limit` requests
        per `window_s` seconds (`shape`: hold requests back where the algorithm can)."""
        raise NotImplementedError(f"{cls.__name__} declares no budget")

    def __init__(self) -> None:
        self._state: dict[Hashable, Any] = {}
        self._last: dict[Hashable, float] = {}

    # -- the verbs -------------------------------------------------------------------

    def allow(self, key: Hashable, now: Seconds, cost: float = 1) -> Decision:
        """Decide the request and record it: the Decision for `cost` units of `key` at `now`."""
        now, now_t, cost = self.checked(key, now, cost)
        answer, change = self.decide(key, now, now_t, cost)
        self.commit(key, change, now, now_t)
        return answer

    def peek(self, key: Hashable, now: Seconds, cost: float = 1) -> Decision:
        """The Decision `allow` would return, without consuming anything."""
        now, now_t, cost = self.checked(key, now, cost)
        return self.decide(key, now, now_t, cost)[0]

    def inspect(self, key: Hashable, now: Seconds) -> dict[str, Any]:
        """The key's internal state as it stands at `now` (tokens, queue, counters, log)."""
        now, now_t = self._time(key, now)
        return self.reading(key, now, now_t)

    # -- the steps of allow, unchecked -----------------------------------------------
    # allow() is decide() then commit(), after checking its arguments. A caller that has
    # checked them already — the reference replay checks a whole trace at once — calls the
    # steps itself. `now_t` is `now` in ticks (clock.to_ticks), converted by the caller.

    def decide(self, key: Hashable, now: Seconds, now_t: int,
               cost: float) -> tuple[Decision, Any]:
        """(the Decision for `cost` units of `key` at `now`, the change :meth:`commit` makes
        of it); changes nothing."""
        return self._check(self._current(key, now, now_t), now, now_t, cost)

    def commit(self, key: Hashable, change: Any, now: Seconds, now_t: int) -> None:
        """Keep for `key` the change that :meth:`decide` returned for a request at `now`."""
        self._commit(key, change, now, now_t)

    def reading(self, key: Hashable, now: Seconds, now_t: int) -> dict[str, Any]:
        """What :meth:`inspect` reports, without its checks."""
        return self._inspect(self._current(key, now, now_t), now, now_t)

    def state(self, key: Hashable) -> Any:
        """What the limiter keeps for `key` (None when it keeps nothing yet): the per-client
        memory whose size notebook 03 weighs. Read it; never change it."""
        return self._state.get(key)

    def reset(self, key: Hashable | None = None) -> None:
        """Forget one key's state, or every key's when `key` is None."""
        if key is None:
            self._state.clear()
            self._last.clear()
        else:
            self._state.pop(key, None)
            self._last.pop(key, None)

    @property
    def params(self) -> dict[str, Any]:
        """The constructor arguments, so that ``make(self.name, **self.params)`` copies it."""
        raise NotImplementedError

    def clone(self) -> "Limiter":
        """A fresh limiter with the same parameters and no state."""
        return type(self)(**self.params)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    # -- for subclasses ----------------------------------------------------------------

    @property
    def max_cost(self) -> float:
        """The largest cost a request can have and still pass on an idle key."""
        return self.limit

    def _check_refill_time(self, amount: float, rate: float) -> None:
        slow_enough("rate", rate, amount)

    # The hooks take the request's time twice: `now` in seconds and `now_t`, the same instant
    # in whole ticks (time_and_ticks), so that a decision converts it once.

    def _initial(self, now: float, now_t: int) -> Any:
        raise NotImplementedError

    def _check(self, state: Any, now: float, now_t: int, cost: float) -> tuple[Decision, Any]:
        raise NotImplementedError

    def _inspect(self, state: Any, now: float, now_t: int) -> dict[str, Any]:
        raise NotImplementedError

    def _current(self, key: Hashable, now: float, now_t: int) -> Any:
        state = self._state.get(key)
        return self._initial(now, now_t) if state is None else state

    def _commit(self, key: Hashable, new_state: Any, now: float, now_t: int) -> None:
        self._state[key] = new_state
        self._last[key] = now

    # -- checks ------------------------------------------------------------------------

    def _time(self, key: Hashable, now: Any) -> tuple[float, int]:
        """(`now` as a float, its ticks), checked finite and not earlier than the key's last
        time."""
        now, now_t = time_and_ticks(now)
        last = self._last.get(key)
        if last is not None and now < last:
            raise ValueError(
                f"now={now!r} is earlier than the last time {last!r} seen for key {key!r}: "
                "time must not run backwards for a key (sort the trace first)"
            )
        return now, now_t

    def checked(self, key: Hashable, now: Any, cost: Any) -> tuple[float, int, float]:
        """(now, its ticks, cost) of a request, checked as :meth:`allow` checks them:
        ValueError naming what is wrong (a time that is not finite or runs backwards for
        `key`, a cost that is not positive or above what can ever pass)."""
        now, now_t = self._time(key, now)
        cost = positive("cost", cost)
        if cost > self.max_cost:
            raise ValueError(
                f"cost={cost!r} is above what {self.name} can ever admit "
                f"({self.max_cost!r}): such a request would be rejected forever"
            )
        return now, now_t, cost


def budget_args(limit: Any, window_s: Any) -> tuple[int, float, PerSecond]:
    """(limit, window_s, limit / window_s) for ``budget``, checked: ValueError naming `limit`
    unless it is a whole number >= 1, naming `window_s` unless it is positive and finite."""
    limit, window_s = whole("limit", limit), positive("window_s", window_s)
    return limit, window_s, limit / window_s


def check_count_rejected(value: Any) -> bool:
    """`value` if it is a bool, else ValueError naming count_rejected."""
    if not isinstance(value, bool):
        raise ValueError(f"count_rejected must be True or False, got {value!r}")
    return value


class WindowLimiter(Limiter):
    """The window algorithms' shared knobs: `limit` per `window` seconds, `count_rejected`."""

    example = {"limit": 100.0, "window": 1.0}

    def __init__(self, limit: float, window: Seconds, count_rejected: bool = False) -> None:
        super().__init__()
        self.limit = bounded("limit", positive("limit", limit))
        self.window = positive("window", window)
        self.window_ticks = window_ticks(self.window)
        self.count_rejected = check_count_rejected(count_rejected)

    @property
    def params(self) -> dict:
        return {"limit": self.limit, "window": self.window,
                "count_rejected": self.count_rejected}

    @property
    def window_s(self) -> Seconds:  # type: ignore[override]
        """The window, seconds (the constructor's ``window``)."""
        return self.window

    @property
    def rate_per_s(self) -> PerSecond:
        """limit / window_s."""
        return self.limit / self.window

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict[str, Any]:
        """``{limit, window}``: `limit` per calendar or trailing window of `window_s`."""
        limit, window_s, _ = budget_args(limit, window_s)
        return {"limit": limit, "window": window_s}
