"""The Lua scripts as limiters: each script, run on a store, decides as its reference does.

Four algorithms are also written as Lua scripts (``ratelab/cluster/lua/``), so that a decision
is one atomic round trip to a shared store: the token bucket, the fixed window, the sliding
window log and the sliding window counter. Each script computes on the reference's grid —
time in whole microseconds (ticks, :mod:`ratelab.clock`), sent as an integer — with
the reference's decision rule and arithmetic, and reports the reference's Decision fields
(``remaining``; ``retry_after`` and ``reset_after`` in ticks, turned into seconds here exactly
as the reference turns its own). A test holds every script to its reference, request by
request, at epoch origins, on SimStore and on redis-server.

A Redis script's numbers are doubles: integers are exact below 2**53. Times are therefore held
within +-2**52 ticks (about 4.5e9 s, the year 2112) and windows below 2**51 ticks, so that no
sum or product of them a script forms (now - last, (k + 2) x window, t + window) leaves the
exact range; beyond, a ValueError names the parameter, as the reference refuses what it cannot
represent. The scripts guard their own arguments too (an error reply names them).

    >>> from ratelab.store import SimStore
    >>> bucket = ScriptedTokenBucket(rate=2, capacity=3)
    >>> conn = SimStore().connect()
    >>> [bucket.allow(conn, "alice", now=1.758e9).allowed for _ in range(4)]
    [True, True, True, False]
    >>> bucket.allow(conn, "alice", now=1.758e9 + 0.5).allowed
    True

Where a script departs from its reference, by design: a time earlier than the key's last is
not refused (gateways' clocks differ; the token bucket counts it as no time elapsed and stores
it as the refill time, as Stripe's script does; the window scripts count it in its own window),
and a key's state expires (PX) once it no longer matters.
"""

from __future__ import annotations

import hashlib
import itertools
from importlib import resources
from typing import Any, Generator, Hashable

from ..limiters.base import Decision, Limiter
from ..clock import FLOAT_SLACK_TICKS, TICKS_PER_S, TIE_TICKS, seconds_until
from ..limiters.fixed_window import FixedWindow, index_of
from ..limiters.sliding_counter import SlidingWindowCounter
from ..limiters.sliding_log import SlidingWindowLog
from ..limiters.token_bucket import TokenBucket
from ..store.errors import StoreError
from ..store.protocol import Connection

SCRIPT_MAX_TICKS = 2**52
"""Times sent to a script lie strictly within +-2**52 ticks (about 4.5e9 s): every difference
and every window boundary a script forms then stays below 2**53, where doubles are exact."""

SCRIPT_MAX_WINDOW_TICKS = 2**51
"""Windows sent to a script lie below 2**51 ticks (about 71 years), for the same reason."""

WINDOW_TTL_WINDOWS = 2
"""A window's counter lives two windows from its last write. One is not enough when clocks
differ: a gateway whose clock runs ahead writes window k's counter early, and it would expire
while gateways behind it still count in window k."""


def _prelude() -> str:
    """The constants of :mod:`ratelab.clock`, as Lua, put before every script."""
    return ("-- from ratelab.clock\n"
            f"local TICKS_PER_S = {TICKS_PER_S}\n"
            f"local TIE_TICKS = {TIE_TICKS!r}\n"
            f"local FLOAT_SLACK_TICKS = {FLOAT_SLACK_TICKS!r}\n")


def script(name: str) -> str:
    """The text of the Lua script `name` (fixed_window, sliding_window, sliding_log,
    token_bucket) as it is loaded: the clock's constants, then the script."""
    text = resources.files("ratelab.cluster").joinpath("lua", f"{name}.lua").read_text()
    return _prelude() + text


def window_ttl_ms(window_ticks: int) -> int:
    """How long a window's counter lives from its last write, in whole milliseconds (>= 1)."""
    return max(1, -(-WINDOW_TTL_WINDOWS * window_ticks // (TICKS_PER_S // 1000)))


Program = Generator[Any, Any, Decision]


def run_program(program: Generator, conn: Connection) -> Any:
    """Run a program (it yields commands, receives replies) on `conn` alone; its value. An
    error reply is raised inside the program, which may handle it."""
    try:
        cmd = next(program)
        while True:
            try:
                reply = conn.execute(*cmd)
            except StoreError as e:
                cmd = program.throw(e)
            else:
                cmd = program.send(reply)
    except StopIteration as stop:
        return stop.value


class ScriptedLimiter:
    """A reference limiter's algorithm as a Lua script on a store.

    Built with the reference's parameters (checked by the reference's own constructor), it
    answers a request with the Decision the reference gives, computed by the script: as a
    program (:meth:`program`, for the cluster's drivers) or at once on a connection
    (:meth:`allow`). Subclasses name the script and the reference, the keys and the arguments.
    """

    script_name = ""
    reference_class: type[Limiter] = Limiter

    def __init__(self, **params) -> None:
        self.reference = self.reference_class(**params)
        window = getattr(self.reference, "window_ticks", None)
        if window is not None and window >= SCRIPT_MAX_WINDOW_TICKS:
            raise ValueError(f"window={self.reference.window!r} is too long for a Lua script "
                             f"(below 2**51 microseconds, {SCRIPT_MAX_WINDOW_TICKS / 1e6:.4g} s)")
        self.source = script(self.script_name)
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()

    @property
    def params(self) -> dict:
        return self.reference.params

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def load(self, conn: Connection) -> None:
        """SCRIPT LOAD the script (EVALSHA then finds it)."""
        loaded = conn.execute("SCRIPT", "LOAD", self.source)
        assert loaded == self.sha, (loaded, self.sha)

    def program(self, key: Hashable, now: float, cost: float = 1,
                member: str | None = None) -> Program:
        """A program deciding one request of `cost` for `key` at `now` (seconds): it yields
        one EVALSHA (and an EVAL if the store lost the script) and returns the Decision.

        ValueError names a bad `now` or `cost` (as the reference's), or a time beyond
        +-2**52 microseconds."""
        now, now_t, cost = self.reference.checked(key, now, cost)
        if not abs(now_t) < SCRIPT_MAX_TICKS:
            raise ValueError(f"now={now!r} is beyond the times a Lua script holds exactly "
                             f"(+-2**52 microseconds, {SCRIPT_MAX_TICKS / 1e6:.4g} s)")
        keys, args = self.arguments(str(key), now_t, cost, member)
        reply = yield from self._eval(keys, args)
        allowed, remaining, retry_ticks, reset_ticks = reply
        return Decision(
            allowed=allowed == 1,
            limit=self.reference.limit,
            remaining=int(remaining),
            retry_after=seconds_until(now, now_t, now_t + int(retry_ticks)),
            reset_after=seconds_until(now, now_t, now_t + int(reset_ticks)),
        )

    def allow(self, conn: Connection, key: Hashable, now: float, cost: float = 1,
              member: str | None = None) -> Decision:
        """Decide a request on `conn` now: the Decision of :meth:`program`."""
        return run_program(self.program(key, now, cost, member), conn)

    def arguments(self, key: str, now: int, cost: float,
                  member: str | None) -> tuple[list[str], list[Any]]:
        """(KEYS, ARGV) of the script for a request at tick `now`."""
        raise NotImplementedError

    def _eval(self, keys: list[str], args: list[Any]):
        """EVALSHA, falling back to EVAL (one more round trip) when the store lost the script."""
        try:
            return (yield ("EVALSHA", self.sha, len(keys), *keys, *args))
        except StoreError as e:
            if e.code != "NOSCRIPT":
                raise
        return (yield ("EVAL", self.source, len(keys), *keys, *args))


def _number(x: float) -> str:
    """A float parameter as text a script reads back as the same double."""
    return repr(float(x))


class ScriptedTokenBucket(ScriptedLimiter):
    """token_bucket.lua as :class:`~ratelab.limiters.token_bucket.TokenBucket`
    (`rate` tokens per second, `capacity`): keys "key:tokens" and "key:ts"."""

    script_name = "token_bucket"
    reference_class = TokenBucket

    def arguments(self, key, now, cost, member):
        r = self.reference
        return ([f"{key}:tokens", f"{key}:ts"],
                [_number(r.rate), _number(r.capacity), now, _number(cost)])


class _ScriptedWindow(ScriptedLimiter):
    def _window_args(self, now: int, cost: float) -> list[Any]:
        r = self.reference
        return [_number(r.limit), r.window_ticks, now, _number(cost)]


class ScriptedFixedWindow(_ScriptedWindow):
    """fixed_window.lua as :class:`~ratelab.limiters.fixed_window.FixedWindow`: key "key:k"
    for the calendar window k holding `now`."""

    script_name = "fixed_window"
    reference_class = FixedWindow

    def arguments(self, key, now, cost, member):
        r = self.reference
        return ([f"{key}:{index_of(now, r.window_ticks)}"],
                self._window_args(now, cost) + [window_ttl_ms(r.window_ticks),
                                                int(r.count_rejected)])


class ScriptedSlidingCounter(_ScriptedWindow):
    """sliding_window.lua as :class:`~ratelab.limiters.sliding_counter.SlidingWindowCounter`:
    keys "key:k" and "key:k-1"."""

    script_name = "sliding_window"
    reference_class = SlidingWindowCounter

    def arguments(self, key, now, cost, member):
        r = self.reference
        k = index_of(now, r.window_ticks)
        return ([f"{key}:{k}", f"{key}:{k - 1}"],
                self._window_args(now, cost) + [window_ttl_ms(r.window_ticks),
                                                int(r.count_rejected)])


class ScriptedSlidingLog(_ScriptedWindow):
    """sliding_log.lua as :class:`~ratelab.limiters.sliding_log.SlidingWindowLog`: key
    "key:log", one sorted-set entry per unit of cost, so costs are whole numbers.

    Each request's entries are named `member` (":1", ":2", ... per unit of cost); without one,
    a number counted by this object. Names must not repeat within a log: two objects writing
    one log need members of their own (the cluster's strategies prefix the gateway)."""

    script_name = "sliding_log"
    reference_class = SlidingWindowLog

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._ids = itertools.count()

    def program(self, key, now, cost=1, member=None):
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost != int(cost):
            raise ValueError(f"cost must be a whole number for the sliding log script (one "
                             f"entry per unit), got {cost!r}")
        return (yield from super().program(key, now, cost, member))

    def arguments(self, key, now, cost, member):
        name = str(next(self._ids)) if member is None else member
        return ([f"{key}:log"],
                self._window_args(now, cost)[:3] + [int(cost), name,
                                                    int(self.reference.count_rejected)])


SCRIPTED: dict[str, type[ScriptedLimiter]] = {
    cls.reference_class.name: cls
    for cls in (ScriptedTokenBucket, ScriptedFixedWindow, ScriptedSlidingLog,
                ScriptedSlidingCounter)
}
"""The registry names of the algorithms that have a Lua script, and their scripted class."""
