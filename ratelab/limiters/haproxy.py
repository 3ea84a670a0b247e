"""A model of HAProxy's stick-table request rate, ``http_req_rate(<period>)``, to the millisecond.

The rule this models, as a site deploys it (``ratelab haproxy-config`` prints it for a policy)::

    stick-table type ip size 1m expire 20s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 100 }

HAProxy's counter is the sliding window counter (Cloudflare's blend of two periods), with its
periods started at each key's own first request instead of the calendar. Everything below was
found by experiment against HAProxy 2.6 (Debian's 2.6.12), each request's rate read back from
the server with its own clock (``tests/test_haproxy_real.py`` holds the model to it, rate and
status, request by request).

**The entry.** Per key (a stick-table entry): ``tick``, the millisecond the current period
began; ``curr``, the requests counted since; ``prev``, the requests of the period before; and
the millisecond the entry was last touched (for expiry).

**The clock.** HAProxy reads its date once each time its event loop wakes, as whole
milliseconds, truncated (seconds x 1000 + microseconds // 1000): a request is counted at the
millisecond HAProxy handles it, at or just after its arrival. That date follows the wall
clock, except that HAProxy takes a stall of its process of over 100 ms for a clock jump and
stays behind the wall clock by it from then on. The model reads ``now`` (whole microseconds,
ticks, as every limiter here) as ``now_ms = ticks // 1000``.

**Counting** (every request that reaches the track rule, refused or not), with
``elapsed = now_ms - tick``:

* ``elapsed < period``: the request joins this period, ``curr + 1``;
* ``period <= elapsed < 2 x period``: the period rotates: ``prev = curr``, ``curr = 1``, and the
  new period begins one period after the old one;
* ``elapsed >= 2 x period``, or a new key: ``prev = 0``, ``curr = 1``, and the period begins at
  this request.

A period always begins on an *even* millisecond: HAProxy keeps a lock in the lowest bit of
``tick`` and clears it when it stores the tick, so a key first seen at an odd millisecond has
its period begin 1 ms before it, and with an odd period (999 ms) each rotation moves the
period's start 1 ms earlier than ``tick + period``: the period a rotation opens can then end
on the very millisecond of the request that opened it (``remain`` 0), and the next request of
that millisecond rotates again, weighing the burst before at nothing (13 requests at 300 ms,
``gt 3`` per 13 ms: at 325 ms, four pass).

**The rate** ``sc_http_req_rate`` reads, right after counting, is the blend in integers::

    remain = tick + period - now_ms           # ms of the period still to run, 0 .. period
    rate   = curr + prev x remain // period    # floor((curr x period + prev x remain) / period)

so the request itself is in ``curr`` when ``gt`` compares: ``gt N`` passes a fresh key's first N
requests at once and refuses the next; ``ge N`` passes N - 1. A refused request is counted all
the same: a client that keeps knocking stays out (:func:`wait_ms` says how long one that stops
waits). The same read without a request (``table_http_req_rate``, this model's ``inspect``)
rolls the counts forward: in the next period ``prev`` is the old ``curr`` and ``remain`` is
``tick + 2 x period - now_ms``; beyond it, 0; and while the current count is 0 and the previous
one at most 1, it reports the previous one unweighted (HAProxy's correction against a flapping
rate at very low rates).

**Expiry.** An entry not touched for ``expire`` ms (``now_ms - touched >= expire``) is deleted;
the key's next request starts afresh, as a new key. (HAProxy's expiry task deletes it on the
server's one clock; the model keeps it and reads it as no entry, so that a key's decisions
depend on its own requests alone, whatever other keys' times were given in between.) That changes a decision only when expire is
shorter than two periods (an entry idle that long would read 0 anyway): ``expire`` defaults to
two periods, the shortest that changes nothing.

**Not modelled:** the table's ``size`` (a full table deletes its oldest entries, or does not
track new keys at all, which then pass); HAProxy's 32-bit clock and counters — the clock wraps
every 2**32 ms (49.7 days), and a key first seen within two periods after it wraps starts its
period at the wrap, not at its request: the model leaves that out so that decisions do not
depend on where the clock starts (a trace shifted by any whole number of seconds gets the same
decisions); counts beyond 2**32 - 1 in one period; concurrent threads.

The functions below are the one arithmetic (integers, milliseconds); the reference, the
compiled replay and the error analysis call them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import (Decision, Limiter, PerSecond, Seconds, below, budget_args, positive,
                   window_remaining, window_step, whole)
from ..clock import seconds_until, to_ticks

MS_TICKS = 1000
"""Ticks per millisecond: HAProxy's clock reads whole milliseconds."""

MAX_MS = 2**31 - 1
"""The longest period or expire HAProxy's configuration takes, in ms (its timer limit, about
24.8 days)."""

MAX_LIMIT = 2**32
"""Limits must lie below this: HAProxy's counters are 32-bit."""

COMPARES = ("gt", "ge")
"""The comparisons a rule makes with the rate: deny if rate > limit (gt) or rate >= limit (ge)."""

KEY = "src"
"""What the printed lines track by default: the client's address."""

NO_TOUCH = -(2**62)
"""The last touch of an entry that does not exist: expired at every time the limiters hold."""


# ---------------------------------------------------------------- the arithmetic (integers)


def ms_of(now: int) -> int:
    """Tick `now` (whole microseconds) as HAProxy's millisecond clock reads it (truncated)."""
    return now // MS_TICKS


def even(ms: int) -> int:
    """Millisecond `ms` with its lowest bit cleared: where HAProxy stores a period's start."""
    return ms & -2


def counted(tick: int, curr: int, prev: int, touched: int, now_ms: int, period: int,
            expire: int) -> tuple[int, int, int]:
    """(tick, curr, prev) of an entry (last touched at ms `touched`) once a request at ms
    `now_ms` is counted: a new or expired entry starts a period at the request; otherwise the
    request joins the period, or the period rotates (once, or afresh after two periods)."""
    if now_ms - touched >= expire:  # deleted (or never there): a new entry
        return even(now_ms), 1, 0
    elapsed = now_ms - tick
    if elapsed < period:
        return tick, curr + 1, prev
    if elapsed < 2 * period:
        return even(tick + period), 1, curr
    return even(now_ms), 1, 0


def blend(curr: int, prev: int, remain: int, period: int) -> int:
    """curr + prev x remain // period: HAProxy's rate from the counts and the ms `remain` of
    the period still to run — the one place the estimate is written."""
    return curr + prev * remain // period


def rate(tick: int, curr: int, prev: int, now_ms: int, period: int) -> int:
    """What ``sc_http_req_rate`` reads at ms `now_ms` >= `tick` (no request counted): the counts
    rolled forward (this period, the next, or 0 beyond), blended, with HAProxy's correction
    for low rates (current count 0 and previous at most 1: the previous, unweighted)."""
    remain = tick + period - now_ms
    if remain < 0:  # the period is over: its count is the previous one now
        remain += period
        prev = curr if remain >= 0 else 0
        curr = 0
    if curr == 0 and prev <= 1:
        return prev
    return blend(curr, prev, remain, period)


def step(tick: int, curr: int, prev: int, touched: int, now_ms: int, period: int, expire: int,
         admits: int) -> tuple[int, bool, int, int, int]:
    """A request at ms `now_ms` on an entry: (the rate it finds, whether it passes, the entry's
    tick, curr and prev after it).

    The request is counted first (:func:`counted`), and the rule compares the rate that
    includes it: it passes when that is at most `admits` (the limit for ``gt``, the limit - 1
    for ``ge``). The rate it finds is that rate less itself, put through the window
    algorithms' one admit rule (``base.window_step``; counted either way, as HAProxy counts
    refused requests).
    """
    tick, curr, prev = counted(tick, curr, prev, touched, now_ms, period, expire)
    found = blend(curr, prev, tick + period - now_ms, period) - 1
    allowed, _, _ = window_step(found, 1, admits, True)
    return found, allowed, tick, curr, prev


def _last_remain(count: int, room: int, period: int) -> int:
    """The most ms `remain` at which ``count x remain // period <= room`` (count > 0)."""
    return ((room + 1) * period - 1) // count


def wait_ms(tick: int, curr: int, prev: int, now_ms: int, period: int, expire: int,
            admits: int) -> int:
    """The first ms >= `now_ms` at which a request passes, on an entry just counted at
    `now_ms` (tick, curr, prev), if no request comes in between: later in this period as prev
    fades, in the next as curr fades, two periods on, or once the entry expires."""
    at = tick + 2 * period  # both counts gone
    room = admits - curr - 1  # what prev may add in this period
    if room >= 0:
        first = now_ms if prev == 0 else tick + period - _last_remain(prev, room, period)
        if first < tick + period:
            at = max(now_ms, first)
    if at >= tick + period:  # in the next period, the one request counted anew
        start = even(tick + period)
        first = max(tick + period, start + period - _last_remain(curr, admits - 1, period))
        if first < tick + 2 * period:
            at = first
    return min(at, now_ms + expire)


def reset_ms(tick: int, curr: int, prev: int, now_ms: int, period: int, expire: int) -> int:
    """The first ms >= `now_ms` at which a fresh key's whole allowance passes at once, on an
    entry just counted at `now_ms`: when its first request reads a rate of 1 (curr >= 1 here, so
    not in this period)."""
    start = even(tick + period)
    first = max(tick + period, start + period - (period - 1) // curr)
    at = first if first < tick + 2 * period else tick + 2 * period
    return min(at, now_ms + expire)


# ---------------------------------------------------------------- the keyed limiter


@dataclass(frozen=True, slots=True)
class Entry:
    """A stick-table entry: the period that began at ms `tick` holds `curr` requests, the one
    before `prev`; `touched` is the ms of the entry's last request."""

    tick: int
    curr: int
    prev: int
    touched: int


def whole_ms(name: str, seconds: float) -> int:
    """`seconds` as whole milliseconds, or ValueError naming `name` unless it is one (HAProxy
    writes times in whole ms) from 1 ms to MAX_MS."""
    seconds = positive(name, seconds)
    ticks = to_ticks(min(seconds, 2 * MAX_MS / 1000))
    if ticks % MS_TICKS or not 1 <= ticks // MS_TICKS <= MAX_MS:
        raise ValueError(f"{name} must be a whole number of milliseconds from 0.001 s to "
                         f"{MAX_MS / 1000:g} s (HAProxy's times are), got {seconds!r}")
    return ticks // MS_TICKS


class HAProxyRate(Limiter):
    """A stick-table request-rate rule: deny when ``sc_http_req_rate(0)`` is gt (or ge) limit.

    Parameters:
        period   the rate's period, seconds (``http_req_rate(<period>)``): a whole number of
                 milliseconds.
        limit    the rule's number (``gt 100``): a whole number >= 1 (>= 2 for ``ge``).
        compare  "gt" (default: deny if rate > limit, so limit requests pass at once) or "ge"
                 (deny if rate >= limit: limit - 1 pass).
        expire   the table's ``expire``, seconds, whole milliseconds; None (default): two
                 periods, the shortest at which expiry changes no decision.

    Every request is counted, refused or not; the period starts at a key's first request (on
    an even millisecond) and keeps rotating from there; the rate is the current count plus
    the previous one weighted by the part of the period still to run, in integers (the module
    docstring is the whole specification). A refused request gets HAProxy's
    ``deny_status 429``; its ``retry_after`` is the exact wait after which a request passes if
    none is sent before (any request sent meanwhile counts too and pushes it further).

    Edge cases: HAProxy counts requests, one at a time, so a cost other than 1 is a
    ValueError, as is a time earlier than the key's last.

    Example: ``gt 5`` per second; 12 requests at once pass 5, and 1.2 s later the 12 counted
    still weigh 12 x 0.8: 8 more are refused.

        >>> rule = HAProxyRate(period=1, limit=5)
        >>> [rule.allow("a", 0.0).allowed for _ in range(12)].count(True)
        5
        >>> [rule.allow("a", 1.2).allowed for _ in range(8)].count(True)
        0
    """

    name = "haproxy"
    reports = ("rate", "sc_http_req_rate as the request finds it, before it is counted: "
                       "curr + prev x (part of the period left), floored (gt: passes if "
                       "rate + 1 <= limit)")
    example = {"period": 1.0, "limit": 100}
    server = "haproxy"
    count_rejected = True  # HAProxy counts every request the track rule sees

    def __init__(self, period: Seconds, limit: int, compare: str = "gt",
                 expire: Seconds | None = None) -> None:
        super().__init__()
        self.period_ms = whole_ms("period", period)
        self.period = self.period_ms / 1000
        if compare not in COMPARES:
            raise ValueError(f"compare must be 'gt' or 'ge', got {compare!r}")
        self.compare = compare
        self.rule_limit = int(below("limit", whole("limit", limit,
                                                    minimum=1 if compare == "gt" else 2),
                                    MAX_LIMIT, "2**32 (HAProxy's counters are 32-bit)", limit))
        self.admits = self.rule_limit if compare == "gt" else self.rule_limit - 1
        self.limit = float(self.admits)
        self.expire_ms = (min(2 * self.period_ms, MAX_MS) if expire is None
                          else whole_ms("expire", expire))
        self.expire = None if expire is None else self.expire_ms / 1000

    @property
    def params(self) -> dict:
        return {"period": self.period, "limit": self.rule_limit, "compare": self.compare,
                "expire": self.expire}

    @property
    def window_s(self) -> Seconds:  # type: ignore[override]
        """The period, seconds."""
        return self.period

    @property
    def rate_per_s(self) -> PerSecond:
        """The requests a period admits, per second."""
        return self.admits / self.period

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict:
        """``{period: window_s, limit}``: ``gt limit`` over a period of `window_s`."""
        limit, window_s, _ = budget_args(limit, window_s)
        return {"period": window_s, "limit": limit}

    @property
    def max_cost(self) -> float:
        return 1.0  # HAProxy counts requests, one at a time

    def checked(self, key, now, cost):
        now, now_t, cost = super().checked(key, now, cost)
        if cost != 1.0:
            raise ValueError(f"cost={cost!r}: haproxy counts requests, one at a time "
                             "(cost must be 1)")
        return now, now_t, cost

    def _initial(self, now: float, now_t: int) -> Entry:
        return Entry(0, 0, 0, NO_TOUCH)  # no entry: expired at any time

    def _live(self, entry: Entry, now_ms: int) -> Entry:
        """`entry`, or no entry once it has expired at `now_ms`."""
        return entry if now_ms - entry.touched < self.expire_ms else self._initial(0.0, 0)

    def _check(self, entry: Entry, now: float, now_t: int, cost: float):
        now_ms, p, e = ms_of(now_t), self.period_ms, self.expire_ms
        _, allowed, tick, curr, prev = step(entry.tick, entry.curr, entry.prev, entry.touched,
                                            now_ms, p, e, self.admits)
        after = blend(curr, prev, tick + p - now_ms, p)
        retry = 0.0 if allowed else seconds_until(
            now, now_t, max(now_t, wait_ms(tick, curr, prev, now_ms, p, e, self.admits)
                            * MS_TICKS))
        reset = seconds_until(now, now_t, max(now_t, reset_ms(tick, curr, prev, now_ms, p, e)
                                              * MS_TICKS))
        return Decision(allowed=allowed, limit=self.limit,
                        remaining=window_remaining(after, self.admits), retry_after=retry,
                        reset_after=reset), Entry(tick, curr, prev, now_ms)

    def _inspect(self, entry: Entry, now: float, now_t: int) -> dict:
        now_ms = ms_of(now_t)
        entry = self._live(entry, now_ms)
        known = entry.touched != NO_TOUCH
        return {"rate": rate(entry.tick, entry.curr, entry.prev, now_ms, self.period_ms)
                if known else 0,
                "period_start": entry.tick / 1000 if known else None,
                "curr": entry.curr, "prev": entry.prev, "limit": self.limit, "known": known}

    def config(self, key: str | None = None) -> str:
        """The HAProxy lines that deploy this rule in a frontend, `key` the sample expression
        tracked (``src``: the client's address; ``req.hdr(x-api-key)``, ...):
        :func:`config_lines`."""
        return config_lines(self, KEY if key is None else key)


def time_text(ms: int) -> str:
    """`ms` as HAProxy writes a time: whole seconds as ``10s``, else milliseconds ``1500ms``."""
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def config_lines(rule: HAProxyRate, key: str = KEY) -> str:
    """The stick table, the track rule and the deny rule of `rule`, for a frontend (HAProxy 2.2
    or later), with a comment naming the policy.

    The deny answers 429 with a Retry-After of two periods (whole seconds, rounded up): a
    client that waits that long without sending always passes, and any shorter constant can
    be too early (the exact wait, the model's ``retry_after``, is not something a HAProxy rule
    can compute). ValueError naming `key` when it is empty.
    """
    if not isinstance(key, str) or not key.strip():
        raise ValueError(f"key must be a HAProxy sample expression, e.g. src or "
                         f"req.hdr(x-api-key), got {key!r}")
    key = key.strip()
    kind = "ip" if key == "src" else "string len 64"
    retry = math.ceil(2 * rule.period_ms / 1000)
    policy = f"haproxy period={rule.period:g} limit={rule.rule_limit}"
    policy += "" if rule.compare == "gt" else " compare=ge"
    policy += "" if rule.expire is None else f" expire={rule.expire:g}"
    return "\n".join([
        f"# ratelab policy: {policy}",
        f"    stick-table type {kind} size 1m expire {time_text(rule.expire_ms)} "
        f"store http_req_rate({time_text(rule.period_ms)})",
        f"    http-request track-sc0 {key}",
        f"    http-request deny deny_status 429 hdr Retry-After {retry} "
        f"if {{ sc_http_req_rate(0) {rule.compare} {rule.rule_limit} }}",
    ])
