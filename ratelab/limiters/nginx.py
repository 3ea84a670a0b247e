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

Times are rounded to the millisecond, as nginx reads its clock in milliseconds: the model takes
``now`` to whole microseconds (ticks, as every limiter here) and reads the millisecond from
the tick, half up. The functions below are the one arithmetic; the compiled replay compiles
them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Decision, Limiter, PerSecond, Seconds, below, budget_args, positive, whole
from ..clock import seconds_until

KEY = "$binary_remote_addr"
"""What the printed lines limit by default: the client's address."""

ZONE = "ratelab"
"""The shared memory zone the printed lines name."""

ZONE_SIZE = "10m"
"""Its size: about 160,000 addresses (nginx keeps a node of 64 bytes per key)."""

EXPIRE_IDLE_MS = 60_000
"""nginx deletes a least-recently-used node idle this long (ms) whose excess has drained."""

BIG = 1 << 62
"""Above this a product of integers would not fit 64 bits; a drain that large is capped."""

MAX_BURST = 10**12
"""Bursts must lie below this, so that any excess (at most burst x 1000 + 1000) stays below a
capped drain, BIG // 1000: every comparison comes out as with the exact drain."""


@dataclass(frozen=True, slots=True)
class Node:
    """nginx's per-key node: excess (thousandths of a request) as of millisecond `last`."""

    excess: int
    last: int


# ---------------------------------------------------------------- the arithmetic (integers)


def ms_of(now: int) -> int:
    """Tick `now` (whole microseconds) as nginx's millisecond clock reads it (half up)."""
    return (now + 500) // 1000


def after_ms(now: int, last: int, ms: int) -> int:
    """The tick `ms` milliseconds after node time `last`, counted in whole milliseconds from
    the millisecond that tick `now` reads (never before `now`)."""
    return now + max(0, last + ms - ms_of(now)) * 1000


def ms_cap(rate_milli: int) -> int:
    """The most milliseconds whose drain ``rate_milli * ms`` fits 64 bits."""
    return BIG // rate_milli


def drain(rate_milli: int, ms: int, cap: int) -> int:
    """Thousandths of a request drained in `ms` >= 0 milliseconds: rate_milli x ms // 1000,
    capped at BIG // 1000 beyond `cap` milliseconds (see MAX_BURST)."""
    if ms > cap:
        return BIG // 1000
    return rate_milli * ms // 1000


def excess_left(excess: int, last: int, now_ms: int, rate_milli: int, cap: int) -> int:
    """The node's excess less what drains from ms `last` to `now_ms` (below 0 when it has
    drained for longer than it needed): :func:`drained` and :func:`with_request` of it."""
    return excess - drain(rate_milli, max(0, now_ms - last), cap)


def drained(left: int) -> int:
    """The node's excess drained to now, without a new request (at least 0)."""
    return max(0, left)


def with_request(left: int) -> int:
    """The excess a request finds on a node, its own 1000 added (nginx's
    ``excess = excess - rate * ms / 1000 + 1000``, at least 0)."""
    return max(0, left + 1000)


def can_expire(excess: int, last: int, now_ms: int, rate_milli: int, cap: int) -> bool:
    """Whether nginx's expire would delete this node at `now_ms`: idle >= 60 s and drained."""
    idle = abs(now_ms - last)
    return idle >= EXPIRE_IDLE_MS and excess - drain(rate_milli, idle, cap) <= 0


def delay_ms(excess: int, delay: int, nodelay: bool, rate_milli: int) -> int:
    """How long nginx holds an admitted request whose excess is `excess` (ms)."""
    if nodelay or excess <= delay * 1000:
        return 0
    return (excess - delay * 1000) * 1000 // rate_milli


def ms_to_drain(amount: int, rate_milli: int) -> int:
    """The least ms with rate_milli x ms // 1000 >= `amount` (0 when amount <= 0)."""
    return max(0, -(-amount * 1000 // rate_milli))


def retry_tick(now: int, excess: int, last: int, burst: int, rate_milli: int) -> int:
    """The tick, from `now`, at which a node (`excess` at ms `last`) admits one more request."""
    return after_ms(now, last, ms_to_drain(excess + 1000 - burst * 1000, rate_milli))


def reset_tick(now: int, excess: int, last: int, rate_milli: int) -> int:
    """The tick, from `now`, at which the node takes burst + 1 requests at once again.

    The first of them must find the excess at 0 *after* nginx adds its own 1000, so the node
    must drain ``excess + 1000``, not just ``excess``: a node drained to 0 takes only burst
    more (a new node starts at 0 with its first request already counted).
    """
    return after_ms(now, last, ms_to_drain(excess + 1000, rate_milli))


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
    reports = ("excess", "nginx's excess drained to now, in requests (0 for a new node); nginx "
                         "adds 1 and passes if that is <= burst")

    can_shape = True
    example = {"rate": 100.0, "burst": 100}
    server = "nginx"

    def __init__(self, rate: PerSecond, burst: int = 0, nodelay: bool = False,
                 delay: int = 0) -> None:
        super().__init__()
        self.rate = below("rate", positive("rate", rate), 1e15,
                          "1e15 per second for nginx (in thousandths, 64 bits)")
        self.rate_milli = int(self.rate * 1000 + 1e-9)
        if self.rate_milli < 1:
            raise ValueError(f"rate must be at least 0.001 per second for nginx, got {rate!r}")
        self.ms_cap = ms_cap(self.rate_milli)
        self.burst = below("burst", whole("burst", burst, minimum=0), MAX_BURST,
                           "10**12 for nginx")
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
    def shapes(self) -> bool:  # type: ignore[override]
        """Whether requests of the burst are delayed (without nodelay)."""
        return not self.nodelay

    @property
    def rate_per_s(self) -> PerSecond:
        """nginx's rate=, per second."""
        return self.rate

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict:
        """``{rate: limit / window_s, burst: limit - 1, nodelay: not shape}``."""
        limit, window_s, rate = budget_args(limit, window_s)
        return {"rate": rate, "burst": limit - 1, "nodelay": not shape}

    @property
    def max_cost(self) -> float:
        return 1.0  # nginx counts requests, one at a time

    def checked(self, key, now, cost):
        now, now_t, cost = super().checked(key, now, cost)
        if cost != 1.0:  # below 1 would otherwise pass silently as a whole request
            raise ValueError(f"cost={cost!r}: nginx counts requests, one at a time "
                             "(cost must be 1)")
        return now, now_t, cost

    def _initial(self, now: float, now_t: int) -> None:
        return None  # no node yet

    def _check(self, node: Node | None, now: float, now_t: int, cost: float):
        now_ms = ms_of(now_t)
        rm, cap = self.rate_milli, self.ms_cap
        if node is None:
            excess, allowed, new = 0, True, Node(0, now_ms)
        else:
            excess = with_request(excess_left(node.excess, node.last, now_ms, rm, cap))
            allowed = excess <= self.burst * 1000
            if allowed:
                new = Node(excess, now_ms if now_ms > node.last else node.last)
            else:
                new = node
        return Decision(
            allowed=allowed,
            limit=self.limit,
            remaining=max(0, (self.burst * 1000 - new.excess) // 1000),
            retry_after=0.0 if allowed else seconds_until(
                now, now_t, retry_tick(now_t, node.excess, node.last, self.burst, rm)),
            reset_after=seconds_until(now, now_t, reset_tick(now_t, new.excess, new.last, rm)),
            delay=delay_ms(excess, self.delay, self.nodelay, rm) / 1000 if allowed else 0.0,
        ), new

    def _commit(self, key, new: Node, now: float, now_t: int) -> None:
        if key in self._state:
            del self._state[key]  # re-inserted below: moves to the LRU head
        else:
            self._expire(ms_of(now_t))
        super()._commit(key, new, now, now_t)

    def _expire(self, now_ms: int) -> None:
        """Delete up to two LRU nodes idle >= 60 s with no excess left (nginx's expire(ctx, 1))."""
        for _ in range(2):
            if not self._state:
                return
            key = next(iter(self._state))
            node = self._state[key]
            if not can_expire(node.excess, node.last, now_ms, self.rate_milli, self.ms_cap):
                return
            del self._state[key]
            self._last.pop(key, None)

    def config(self, key: str | None = None, zone: str = ZONE) -> str:
        """The nginx lines that deploy this limit_req, `key` the variable it limits by
        (``$binary_remote_addr``: the client's address; ``$http_x_api_key`` ...):
        :func:`config_lines`."""
        return config_lines(self, KEY if key is None else key, zone)

    def _inspect(self, node: Node | None, now: float, now_t: int) -> dict:
        if node is None:
            return {"excess": 0.0, "burst": self.burst, "known": False}
        now_ms = ms_of(now_t)
        return {"excess": drained(excess_left(node.excess, node.last, now_ms, self.rate_milli,
                                              self.ms_cap)) / 1000,
                "burst": self.burst, "known": True}


def rate_text(rate_milli: int) -> str:
    """nginx's ``rate=`` for a rate of `rate_milli` thousandths of a request per second:
    ``Nr/s``, or ``Nr/m`` where nginx's own arithmetic (N x 1000 // 60) gives it back exactly;
    ValueError naming rate when neither does."""
    if rate_milli % 1000 == 0:
        return f"{rate_milli // 1000}r/s"
    per_min = -(-rate_milli * 60 // 1000)
    if per_min * 1000 // 60 == rate_milli:
        return f"{per_min}r/m"
    raise ValueError(f"rate={rate_milli / 1000:g}: nginx writes a rate as whole requests per "
                     "second or per minute, and neither gives this one (nginx would keep "
                     f"{per_min}r/m as {per_min * 1000 // 60 / 1000:g}/s)")


def config_lines(limit_req: NginxLimitReq, key: str = KEY, zone: str = ZONE) -> str:
    """The limit_req_zone line (http block) and the limit_req line (server or location) of
    `limit_req`, with ``limit_req_status 429`` and a comment naming the policy. ValueError
    naming `key` or `zone` when they are not an nginx variable and a zone name, or rate when
    nginx cannot write it (:func:`rate_text`)."""
    if not isinstance(key, str) or not key.startswith("$") or len(key.split()) != 1:
        raise ValueError(f"key must be an nginx variable, e.g. $binary_remote_addr or "
                         f"$http_x_api_key, got {key!r}")
    if not isinstance(zone, str) or not zone.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"zone must be a name of letters, digits, - and _, got {zone!r}")
    rate = rate_text(limit_req.rate_milli)
    options = [f"burst={limit_req.burst}"] if limit_req.burst else []
    options += ["nodelay"] if limit_req.nodelay else []
    options += [f"delay={limit_req.delay}"] if limit_req.delay else []
    policy = f"nginx rate={limit_req.rate:g} burst={limit_req.burst}"
    policy += " nodelay=true" if limit_req.nodelay else ""
    policy += f" delay={limit_req.delay}" if limit_req.delay else ""
    return "\n".join([
        f"# ratelab policy: {policy}",
        "# in the http block:",
        f"    limit_req_zone {key} zone={zone}:{ZONE_SIZE} rate={rate};",
        "    limit_req_status 429;",
        "# in the server or location block:",
        f"    limit_req {' '.join([f'zone={zone}', *options])};",
    ])
