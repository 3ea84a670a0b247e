"""A model of nginx's limit_req (ngx_http_limit_req_module), to the thousandth of a request.

nginx keeps, per key, an ``excess`` in thousandths of a request and the millisecond of the
last update. On each request, with ``ms`` milliseconds since then:

    excess = max(0, excess - rate_milli * ms // 1000 + 1000)
    reject (nginx: 503, or limit_req_status) if excess > burst * 1000, leaving state unchanged
    else store excess (and now, if ms > 0)

where ``rate_milli`` is the rate in thousandths of a request per second (10r/s -> 10000;
30r/m -> 500, truncated as nginx does). A key seen for the first time gets a new node with
excess 0. Either way an idle key takes burst + 1 requests at once: with ``nodelay`` this is a
token bucket of capacity burst + 1 — exactly, when the rate is a whole number per second.
Below that the integer drain loses its remainder on every update (``rate_milli * ms // 1000``
with ``last`` moved on), so closely spaced requests drain less than the rate says.

Delays: an admitted request with excess above ``delay * 1000`` waits
``(excess - delay * 1000) * 1000 // rate_milli`` ms. ``nodelay`` never waits; the default
``delay=0`` delays every request in the burst; ``delay=N`` passes the first N at once.

Nodes are kept in an LRU queue. When a new key arrives, nginx first looks at the (up to two)
least recently used nodes and deletes each that has been idle for at least 60 s and whose
excess has drained to zero (``ngx_http_limit_req_expire``). A deleted key that comes back is
new again. The model does the same; it ignores the zone's memory limit (a zone that fills up
forces more deletions in nginx).

Times are rounded to the millisecond, as nginx reads its clock in milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Decision, Limiter, PerSecond, earliest, positive, whole

EXPIRE_IDLE_MS = 60_000


def to_ms(now: float) -> int:
    """`now` (seconds) as nginx's millisecond clock reads it."""
    return math.floor(now * 1000.0 + 0.5)


@dataclass(frozen=True, slots=True)
class Node:
    """nginx's per-key node: excess (thousandths of a request) as of millisecond `last`."""

    excess: int
    last: int


class NginxLimitReq(Limiter):
    """limit_req with rate (per second), burst, and nodelay or delay=N.

    Parameters:
        rate     requests per second (nginx's ``rate=``, kept in thousandths as nginx keeps
                 it: 30r/m is 0.5); at least 0.001.
        burst    requests queued beyond the rate (whole number >= 0; nginx's ``burst=``).
        nodelay  False (default): requests within the burst are delayed to the rate. True:
                 they pass at once (``nodelay``).
        delay    requests of the burst passed at once before delaying starts (whole number
                 >= 0; nginx's ``delay=N``); 0 with nodelay=False is plain ``burst=``.

    An idle key takes burst + 1 requests at once (some delayed, per the options above); a
    refused request (nginx answers 503, or limit_req_status) leaves the state unchanged. The
    Decision's ``delay`` is the seconds nginx would hold the request.

    Edge cases: the rate is truncated to thousandths of a request per second, as nginx does;
    nginx counts requests one at a time, so a cost above 1 is a ValueError, as is a time
    earlier than the key's last.

    Example: rate 1/s, burst 2, without and with nodelay.

        >>> limit_req = NginxLimitReq(rate=1, burst=2)
        >>> [(d.allowed, d.delay) for d in [limit_req.allow("a", 0.0) for _ in range(4)]]
        [(True, 0.0), (True, 1.0), (True, 2.0), (False, 0.0)]
        >>> fast = NginxLimitReq(rate=1, burst=2, nodelay=True)
        >>> [(d.allowed, d.delay) for d in [fast.allow("a", 0.0) for _ in range(4)]]
        [(True, 0.0), (True, 0.0), (True, 0.0), (False, 0.0)]
    """

    name = "nginx"

    def __init__(self, rate: PerSecond, burst: int = 0, nodelay: bool = False,
                 delay: int = 0) -> None:
        super().__init__()
        self.rate = positive("rate", rate)
        self.rate_milli = math.floor(self.rate * 1000 + 1e-9)
        if self.rate_milli < 1:
            raise ValueError(f"rate must be at least 0.001 per second for nginx, got {rate!r}")
        self.burst = whole("burst", burst, minimum=0)
        self.delay = whole("delay", delay, minimum=0)
        if not isinstance(nodelay, bool):
            raise ValueError(f"nodelay must be True or False, got {nodelay!r}")
        if nodelay and delay:
            raise ValueError("nodelay and delay are exclusive (nginx: \"delay\" and \"nodelay\" "
                             f"cannot be combined), got delay={delay!r}")
        if self.delay > self.burst:
            raise ValueError(f"delay={delay!r} is above burst={burst!r}: nginx treats it as "
                             "nodelay; say nodelay=True")
        self.nodelay = nodelay
        self.limit = self.burst + 1

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "burst": self.burst, "nodelay": self.nodelay,
                "delay": self.delay}

    @property
    def max_cost(self) -> float:
        return 1.0  # nginx counts requests, one at a time

    def _arguments(self, key, now, cost):
        now, cost = super()._arguments(key, now, cost)
        if cost != 1.0:  # below 1 would otherwise pass silently as a whole request
            raise ValueError(f"cost={cost!r}: nginx counts requests, one at a time "
                             "(cost must be 1)")
        return now, cost

    def _initial(self, now: float) -> None:
        return None  # no node yet

    def _check(self, node: Node | None, now: float, cost: float):
        now_ms = to_ms(now)
        if node is None:
            excess, allowed, new = 0, True, Node(0, now_ms)
        else:
            ms = max(0, now_ms - node.last)
            excess = max(0, node.excess - self.rate_milli * ms // 1000 + 1000)
            allowed = excess <= self.burst * 1000
            if allowed:
                new = Node(excess, now_ms if ms else node.last)
            else:
                new = node
        kept = new.excess
        decision = Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=max(0, (self.burst * 1000 - kept) // 1000),
            retry_after=0.0 if allowed else self._wait(node, now, now_ms),
            reset_after=self._reset(new, now, now_ms),
            delay=self._delay_ms(excess) / 1000 if allowed else 0.0,
        )
        return decision, new

    def _delay_ms(self, excess: int) -> int:
        """How long nginx holds an admitted request whose excess is `excess`."""
        if self.nodelay or excess <= self.delay * 1000:
            return 0
        return (excess - self.delay * 1000) * 1000 // self.rate_milli

    def _wait(self, node: Node, now: float, now_ms: int) -> float:
        """Seconds until the node has drained enough for one more request."""
        need = node.excess + 1000 - self.burst * 1000  # thousandths to drain
        ms = -(-need * 1000 // self.rate_milli)  # ceil: rate_milli * ms // 1000 >= need
        # now + wait must read as that millisecond or later on nginx's clock (to_ms rounds)
        return earliest(now, max(0, node.last + ms - now_ms) / 1000,
                        lambda t: self._excess_at(node, t) <= self.burst * 1000)

    def _excess_at(self, node: Node, t: float) -> int:
        """The excess a request at `t` would find, its own 1000 added (as _check computes it)."""
        ms = max(0, to_ms(t) - node.last)
        return max(0, node.excess - self.rate_milli * ms // 1000 + 1000)

    def _reset(self, node: Node, now: float, now_ms: int) -> float:
        """Seconds until `node` takes burst + 1 requests at once again.

        The first of them must find the excess at 0 *after* nginx adds its own 1000, so the
        node must drain ``excess + 1000``, not just ``excess``: a node drained to 0 takes only
        burst more (a new node starts at 0 with its first request already counted).
        """
        ms = -(-(node.excess + 1000) * 1000 // self.rate_milli)  # ceil, as in _wait
        return earliest(now, max(0, node.last + ms - now_ms) / 1000,
                        lambda t: node.excess - self.rate_milli * max(0, to_ms(t) - node.last)
                        // 1000 + 1000 <= 0)

    def _commit(self, key, new: Node, now: float) -> None:
        if key in self._state:
            del self._state[key]  # re-inserted below: moves to the LRU head
        else:
            self._expire(to_ms(now))
        super()._commit(key, new, now)

    def _expire(self, now_ms: int) -> None:
        """Delete up to two LRU nodes idle >= 60 s with no excess left (nginx's expire(ctx, 1))."""
        for _ in range(2):
            if not self._state:
                return
            key = next(iter(self._state))
            node = self._state[key]
            ms = abs(now_ms - node.last)
            if ms < EXPIRE_IDLE_MS or node.excess - self.rate_milli * ms // 1000 > 0:
                return
            del self._state[key]
            self._last.pop(key, None)

    def _inspect(self, node: Node | None, now: float) -> dict:
        if node is None:
            return {"excess": 0.0, "burst": self.burst, "known": False}
        ms = max(0, to_ms(now) - node.last)
        drained = max(0, node.excess - self.rate_milli * ms // 1000)
        return {"excess": drained / 1000, "burst": self.burst, "known": True}
