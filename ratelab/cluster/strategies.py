"""Distributed limiter strategies, written once and run on any store by any driver.

A strategy answers "may this request pass?" with a *program*: a generator that yields the
commands it wants to send and receives their replies, then returns True or False. It never
touches a socket or a clock, so the same program runs

* in virtual time over a simulated network (:func:`ratelab.cluster.sim.simulate`),
* step by step in every possible interleaving (:mod:`ratelab.cluster.interleave`),
* on real threads against a real Redis (:mod:`ratelab.cluster.threads`).

What a program yields:

* a tuple, ``("INCR", key)``: one command, one round trip; the reply is sent back in, and an
  error reply is raised inside the program (:class:`~ratelab.store.StoreError`);
* a list of tuples: a pipeline — one round trip, the commands run in order, the reply is the
  list of replies (errors as elements, as EXEC gives them).

The time a program sees is the gateway's clock (``now``, seconds), which may be skewed.
All fixed windows are calendar-aligned, [kW, (k+1)W); admit iff count + cost <= limit.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Generator

from ..limiters.base import positive, whole
from ..clock import to_ticks, window_ticks
from ..limiters.fixed_window import index_of
from ..store.errors import StoreUnavailable
from ..store.protocol import Connection
from .scripts import (ScriptedFixedWindow, ScriptedLimiter, ScriptedSlidingCounter,
                      ScriptedSlidingLog, ScriptedTokenBucket, script, window_ttl_ms)

Program = Generator[Any, Any, bool]


def window_key(key: str, now: float, window_s: float) -> str:
    """The counter of the calendar window holding `now`: "key:k" for [kW, (k+1)W), counted
    in whole microseconds as the reference limiters count it (exact at any origin)."""
    return f"{key}:{index_of(to_ticks(now), window_ticks(window_s))}"


class Strategy:
    """Base: a limit per calendar window, shared by `gateways` gateways.

    Subclasses implement ``decide(gateway, key, now)`` (a program). Those that keep state at
    the gateway and sync it in the background set ``sync_interval_s`` and implement ``sync``.
    """

    name = ""
    counts_rejected = False
    sync_interval_s: float | None = None

    def __init__(self, limit: int = 100, window_s: float = 1.0, gateways: int = 1) -> None:
        self.limit = whole("limit", limit)
        self.window_s = positive("window_s", window_s)
        self.gateways = whole("gateways", gateways)

    def setup(self, conn: Connection) -> None:
        """Prepare the store once before a run (load scripts); default: nothing."""

    def decide(self, gateway: int, key: str, now: float) -> Program:
        """A program that returns whether this request passes."""
        raise NotImplementedError

    def sync(self, gateway: int, now: float) -> Program:
        """A background program run every ``sync_interval_s`` (only for syncing strategies)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(limit={self.limit}, window_s={self.window_s})"


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


def _window_ttl_ms(window_s: float) -> int:
    """How long a calendar window's counter lives from its first hit (scripts.WINDOW_TTL_WINDOWS
    windows), in milliseconds."""
    return window_ttl_ms(window_ticks(window_s))


class LocalCounters(Strategy):
    """Each gateway counts alone against the full limit: N gateways admit up to N x limit."""

    name = "local"

    def __init__(self, limit=100, window_s=1.0, gateways=1) -> None:
        super().__init__(limit, window_s, gateways)
        self._counts: dict[tuple[int, str], int] = {}

    def local_limit(self, gateway: int) -> int:
        """What one gateway may admit per window."""
        return self.limit

    def decide(self, gateway, key, now):
        wkey = (gateway, window_key(key, now, self.window_s))
        count = self._counts.get(wkey, 0)
        if count + 1 > self.local_limit(gateway):
            return False
        self._counts[wkey] = count + 1
        return True
        yield  # a program that sends nothing


class LocalSplit(LocalCounters):
    """Each gateway counts alone against limit / N: never over, but unfair when load is uneven
    (one busy gateway rejects while the others' shares go unused). The remainder of
    limit / N goes to the first gateways, so the shares add up to the limit."""

    name = "local-split"

    def local_limit(self, gateway: int) -> int:
        base, extra = divmod(self.limit, self.gateways)
        return base + (1 if gateway < extra else 0)


class Naive(Strategy):
    """Check, then act: GET the count, compare, INCR. Two gateways can both read 99."""

    name = "naive"

    def decide(self, gateway, key, now):
        wkey = window_key(key, now, self.window_s)
        count = int((yield ("GET", wkey)) or 0)
        if count + 1 > self.limit:
            return False
        if (yield ("INCR", wkey)) == 1:
            yield ("PEXPIRE", wkey, _window_ttl_ms(self.window_s))
        return True


class IncrFirst(Strategy):
    """INCR, then check the count it returns: atomic, so never over; rejected requests count."""

    name = "incr"
    counts_rejected = True

    def decide(self, gateway, key, now):
        wkey = window_key(key, now, self.window_s)
        count = yield ("INCR", wkey)
        if count == 1:
            yield ("PEXPIRE", wkey, _window_ttl_ms(self.window_s))
        return count <= self.limit


class _Lua(Strategy):
    """A strategy whose whole decision is one Lua script (:mod:`.scripts`): EVALSHA, one
    round trip, and the script's reference decision."""

    def __init__(self, limit=100, window_s=1.0, gateways=1) -> None:
        super().__init__(limit, window_s, gateways)
        self.limiter = self._scripted()
        self.source, self.sha = self.limiter.source, self.limiter.sha

    def _scripted(self) -> ScriptedLimiter:
        raise NotImplementedError

    def setup(self, conn: Connection) -> None:
        self.limiter.load(conn)

    def decide(self, gateway, key, now):
        decision = yield from self.limiter.program(key, now, 1, self._member(gateway))
        return decision.allowed

    def _member(self, gateway: int) -> str | None:
        return None


class LuaFixedWindow(_Lua):
    """Fixed window in one Lua script: read, compare and increment atomically."""

    name = "lua"

    def _scripted(self):
        return ScriptedFixedWindow(limit=self.limit, window=self.window_s)


class LuaSlidingWindow(_Lua):
    """Sliding window counter in one Lua script (previous window weighted by its overlap)."""

    name = "lua-sliding"

    def _scripted(self):
        return ScriptedSlidingCounter(limit=self.limit, window=self.window_s)


class LuaTokenBucket(_Lua):
    """Token bucket in one Lua script over two keys (tokens, last refill), as Stripe's:
    capacity = limit, refilled at limit per window."""

    name = "lua-token-bucket"

    def _scripted(self):
        return ScriptedTokenBucket(rate=self.limit / self.window_s, capacity=self.limit)


class LuaSlidingLog(_Lua):
    """Sliding window log in one Lua script over a sorted set (ZREMRANGEBYSCORE, ZCARD, ZADD):
    exact trailing window (now - W, now]; each admitted request is one entry."""

    name = "lua-sliding-log"

    def __init__(self, limit=100, window_s=1.0, gateways=1) -> None:
        super().__init__(limit, window_s, gateways)
        self._ids = itertools.count()

    def _scripted(self):
        return ScriptedSlidingLog(limit=self.limit, window=self.window_s)

    def _member(self, gateway):
        return f"{gateway}:{next(self._ids)}"


class WatchMulti(Strategy):
    """Optimistic: WATCH the counter, GET it, then MULTI / INCR / PEXPIRE / EXEC in one
    pipeline; EXEC returns nil when another client wrote the key first, and we retry.
    When the `max_retries` retries (counted in ``retries``) fail too, the request is rejected
    (counted in ``gave_up``)."""

    name = "watch"

    def __init__(self, limit=100, window_s=1.0, gateways=1, max_retries: int = 10) -> None:
        super().__init__(limit, window_s, gateways)
        self.max_retries = whole("max_retries", max_retries, minimum=0)
        self.retries = 0
        self.gave_up = 0

    def decide(self, gateway, key, now):
        wkey = window_key(key, now, self.window_s)
        for attempt in range(self.max_retries + 1):
            yield ("WATCH", wkey)
            count = int((yield ("GET", wkey)) or 0)
            if count + 1 > self.limit:
                yield ("UNWATCH",)
                return False
            replies = yield [("MULTI",), ("INCR", wkey),
                             ("PEXPIRE", wkey, _window_ttl_ms(self.window_s)), ("EXEC",)]
            if replies[-1] is not None:
                return True
            if attempt < self.max_retries:
                self.retries += 1
        self.gave_up += 1
        return False


class AsyncSync(Strategy):
    """Count locally, push the local count to the shared counter every `sync_interval_s`
    (INCRBY, which also returns everyone's total). A gateway admits while its last known
    total plus what it admitted since stays within the limit — so between syncs every gateway
    spends the same remaining allowance, and bursts overshoot."""

    name = "async"

    def __init__(self, limit=100, window_s=1.0, gateways=1, sync_interval_s: float = 0.1) -> None:
        super().__init__(limit, window_s, gateways)
        self.sync_interval_s = positive("sync_interval_s", sync_interval_s)
        self._known: dict[int, tuple[str, int]] = {}     # gateway -> (window key, total)
        self._pending: dict[int, tuple[str, int]] = {}   # gateway -> (window key, not pushed)
        self.key: str | None = None                       # the one key it limits

    def decide(self, gateway, key, now):
        if self.key is not None and key != self.key:
            raise ValueError(f"async sync limits one key ({self.key!r}); got key {key!r}")
        self.key = key
        wkey = window_key(key, now, self.window_s)
        known = self._known.get(gateway, (wkey, 0))
        pending = self._pending.get(gateway, (wkey, 0))
        total = (known[1] if known[0] == wkey else 0) + (pending[1] if pending[0] == wkey else 0)
        if total + 1 > self.limit:
            return False
        self._pending[gateway] = (wkey, (pending[1] if pending[0] == wkey else 0) + 1)
        return True
        yield  # decided locally: no round trip

    def sync(self, gateway, now):
        wkey = window_key(self.key or "rl", now, self.window_s)
        pkey, n = self._pending.pop(gateway, (wkey, 0))
        try:
            replies = yield [("INCRBY", pkey, n), ("PEXPIRE", pkey, _ms(2 * self.window_s))]
        except StoreUnavailable:
            replies = [None]
        total = replies[0]
        if isinstance(total, int):
            # Requests admitted while the reply travelled stay pending for the next push.
            self._known[gateway] = (pkey, total)
        else:  # the push failed: keep the count to push next time
            key_now, more = self._pending.get(gateway, (pkey, 0))
            if key_now == pkey:
                self._pending[gateway] = (pkey, n + more)
            # else the gateway has moved on to a new window while the push travelled: what it
            # admitted there stays pending; the old window's count no longer decides anything
        return True


STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls
    for cls in (LocalCounters, LocalSplit, Naive, IncrFirst, LuaFixedWindow, LuaSlidingWindow,
                LuaSlidingLog, LuaTokenBucket, WatchMulti, AsyncSync)
}


def make_strategy(name: str, **params) -> Strategy:
    """The strategy registered as `name`, built with `params` (ValueError names unknown ones)."""
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {name!r}")
    return STRATEGIES[name](**params)
