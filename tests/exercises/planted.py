"""Planted answers: plausible wrong implementations, and right ones written unlike the reference.

Each wrong answer is a mistake students make; WRONG lists it with where its checker must point:
the case, and the failing request's index and field (None where the check is not per request).
WRONG_INSTRUCTOR lists the mistakes only the instructor's cases catch (:meth:`instructor_cases`),
with the kind of case that must catch them. RIGHT holds, per exercise, a correct answer built
differently (another data structure, integer time, exact fractions) that must pass; RIGHT_INT
more of them, written for whole-number counts (``[now] * cost``, ``[None] * limit``,
``range(cost)``, integer arithmetic), most of which a float limit or cost would break.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from fractions import Fraction

from ratelab.cluster.strategies import window_key

US = 1_000_000  # microseconds per second, for the integer-time answers


def us(t) -> int:
    return round(t * US)


# ================================================================ token_bucket_take


def take_uncapped(tokens, last, now, cost, rate, capacity):
    tokens = tokens + (now - last) * rate  # refill not capped at capacity
    return (tokens - cost, now, True) if tokens >= cost else (tokens, now, False)


def take_rejected_spend(tokens, last, now, cost, rate, capacity):
    tokens = min(capacity, tokens + (now - last) * rate) - cost  # spends even when refused
    return tokens, now, tokens >= 0


def take_strict(tokens, last, now, cost, rate, capacity):
    tokens = min(capacity, tokens + (now - last) * rate)
    return (tokens - cost, now, True) if tokens > cost else (tokens, now, False)


def take_stale_last(tokens, last, now, cost, rate, capacity):
    refilled = min(capacity, tokens + (now - last) * rate)
    return (refilled - cost, now, True) if refilled >= cost else (refilled, last, False)


def take_integer(tokens, last, now, cost, rate, capacity):
    """Right: micro-tokens and microseconds, all integers."""
    cap, have, need = us(capacity), us(tokens), us(cost)
    have = min(cap, have + (us(now) - us(last)) * us(rate) // US)
    if have >= need:
        return (have - need) / US, now, True
    return have / US, now, False


def take_per_unit(tokens, last, now, cost, rate, capacity):
    """Right, integer-minded: the cost is taken one token at a time (range(cost))."""
    tokens = min(capacity, tokens + (now - last) * rate)
    if tokens < cost:
        return tokens, now, False
    for _ in range(cost):
        tokens -= 1
    return tokens, now, True


# ================================================================ shaper_departures


def departures_no_idle(arrivals, rate, capacity):
    out, free = [], None
    for t in arrivals:  # the next slot follows the last one even after an idle gap
        free = t if free is None else free + 1 / rate
        out.append(free)
    return out


def departures_unbounded(arrivals, rate, capacity):
    out, free = [], -math.inf
    for t in arrivals:  # never drops: the queue has no capacity
        free = max(t, free)
        out.append(free)
        free += 1 / rate
    return out


def departures_off_by_one(arrivals, rate, capacity):
    out, level, last = [], 0.0, None
    for t in arrivals:
        level = 0.0 if last is None else max(0.0, level - (t - last) * rate)
        last = t
        if level + 1 < capacity:  # drops one early: a full queue is level + 1 == capacity
            out.append(t + level / rate)
            level += 1
        else:
            out.append(None)
    return out


def departures_queue(arrivals, rate, capacity):
    """Right: a deque of the departure times of the requests still in the system."""
    period, queue, out = 1 / rate, deque(), []
    for t in arrivals:
        while queue and queue[0] + period <= t:  # served and gone
            queue.popleft()
        if len(queue) + 1 <= capacity:
            start = max(t, queue[-1] + period) if queue else t
            queue.append(start)
            out.append(start)
        else:
            out.append(None)
    return out


def departures_ring(arrivals, rate, capacity):
    """Right, integer-minded: a ring of `capacity` slots ([None] * capacity) holding when each
    of the last admitted requests is done; the oldest must be done for a new one to fit."""
    period, ring, oldest, busy_until, out = 1 / rate, [None] * capacity, 0, None, []
    for t in arrivals:
        if ring[oldest] is not None and ring[oldest] > t:
            out.append(None)
            continue
        start = t if busy_until is None else max(t, busy_until)
        busy_until = start + period
        ring[oldest] = busy_until
        oldest = (oldest + 1) % capacity
        out.append(start)
    return out


# ================================================================ fixed_window


class FixedFromFirst:
    """Wrong: the window starts at the first request, not on the calendar."""

    def __init__(self, limit, window):
        self.limit, self.window, self.start, self.count = limit, window, None, 0

    def allow(self, now, cost=1):
        if self.start is None or now >= self.start + self.window:
            self.start, self.count = now, 0
        ok = self.count + cost <= self.limit
        self.count += cost if ok else 0
        return ok, max(0, math.floor(self.limit - self.count)), \
            0.0 if ok else self.start + self.window - now


class FixedCountsRejected:
    def __init__(self, limit, window):
        self.limit, self.window, self.k, self.count = limit, window, None, 0

    def allow(self, now, cost=1):
        k = math.floor(now / self.window)
        if k != self.k:
            self.k, self.count = k, 0
        ok = self.count + cost <= self.limit
        self.count += cost  # counts the rejected ones too
        return ok, max(0, math.floor(self.limit - self.count)), \
            0.0 if ok else (k + 1) * self.window - now


class FixedStrict(FixedCountsRejected):
    def allow(self, now, cost=1):
        k = math.floor(now / self.window)
        if k != self.k:
            self.k, self.count = k, 0
        ok = self.count + cost < self.limit  # the limit itself is refused
        self.count += cost if ok else 0
        return ok, max(0, math.floor(self.limit - self.count)), \
            0.0 if ok else (k + 1) * self.window - now


class FixedFullWindowRetry(FixedCountsRejected):
    def allow(self, now, cost=1):
        k = math.floor(now / self.window)
        if k != self.k:
            self.k, self.count = k, 0
        ok = self.count + cost <= self.limit
        self.count += cost if ok else 0
        return ok, max(0, math.floor(self.limit - self.count)), 0.0 if ok else self.window


class FixedDict:
    """Right: a dict of counts per window index, integer microseconds."""

    def __init__(self, limit, window):
        self.limit, self.w, self.counts = limit, us(window), {}

    def allow(self, now, cost=1):
        k = us(now) // self.w
        used = self.counts.get(k, 0)
        ok = used + cost <= self.limit
        if ok:
            self.counts = {k: used + cost}
        left = self.limit - self.counts.get(k, 0)
        return ok, max(0, int(left)), 0.0 if ok else ((k + 1) * self.w - us(now)) / US


class FixedSlots:
    """Right, integer-minded: a window's `limit` slots ([None] * limit), filled cost by cost."""

    def __init__(self, limit, window):
        self.limit, self.window, self.k, self.slots = limit, window, None, [None] * limit

    def allow(self, now, cost=1):
        k = math.floor(now / self.window)
        if k != self.k:
            self.k, self.slots = k, [None] * self.limit
        free = self.slots.count(None)
        if free < cost:
            return False, free, (k + 1) * self.window - now
        for _ in range(cost):
            self.slots[self.slots.index(None)] = now
        return True, free - cost, 0.0


# ================================================================ sliding_log


class LogClosed:
    """Wrong: the window [now - W, now] keeps a request exactly W old."""

    def __init__(self, limit, window):
        self.limit, self.window, self.log = limit, window, deque()

    def _expire(self, now):
        while self.log and self.log[0][0] < now - self.window:
            self.log.popleft()

    def _admit(self, ok, now, cost):
        if ok:
            self.log.append((now, cost))

    def _used(self):
        return sum(c for _, c in self.log)

    def _passes(self, used, cost):
        return used + cost <= self.limit

    def allow(self, now, cost=1):
        self._expire(now)
        used = self._used()
        ok = self._passes(used, cost)
        self._admit(ok, now, cost)
        used = self._used()
        if ok:
            return True, max(0, math.floor(self.limit - used)), 0.0
        need = used + cost - self.limit
        for t, c in self.log:
            need -= c
            if need <= 0:
                return False, max(0, math.floor(self.limit - used)), self._retry(t, now)

    def _retry(self, t, now):
        return t + self.window - now


class LogRight(LogClosed):
    def _expire(self, now):
        while self.log and self.log[0][0] <= now - self.window:
            self.log.popleft()


class LogCountsRejected(LogRight):
    def _admit(self, ok, now, cost):
        self.log.append((now, cost))  # logs refused requests too


class LogNotCountedPlain(LogRight):
    def _passes(self, used, cost):
        return used <= self.limit  # the current request is not counted


class LogRetryFromNewest(LogRight):
    def _retry(self, t, now):
        return self.log[-1][0] + self.window - now  # waits for the newest, not the oldest


class LogBisect:
    """Right: integer microsecond times in a sorted list, trimmed with bisect."""

    def __init__(self, limit, window):
        self.limit, self.w, self.times, self.costs = limit, us(window), [], []

    def allow(self, now, cost=1):
        t = us(now)
        cut = bisect.bisect_right(self.times, t - self.w)  # entries <= t - W have left
        del self.times[:cut], self.costs[:cut]
        used = sum(self.costs)
        if used + cost <= self.limit:
            self.times.append(t)
            self.costs.append(cost)
            return True, max(0, int(self.limit - used - cost)), 0.0
        need, i = used + cost - self.limit, 0
        while need > 0:
            need -= self.costs[i]
            i += 1
        return False, max(0, int(self.limit - used)), (self.times[i - 1] + self.w - t) / US


class LogUnits:
    """Right, integer-minded: one entry per unit of cost ([now] * cost) in a deque that holds
    at most `limit` (deque(maxlen=limit))."""

    def __init__(self, limit, window):
        self.limit, self.window, self.units = limit, window, deque(maxlen=limit)

    def allow(self, now, cost=1):
        while self.units and self.units[0] <= now - self.window:
            self.units.popleft()
        used = len(self.units)
        if used + cost <= self.limit:
            self.units.extend([now] * cost)
            return True, self.limit - used - cost, 0.0
        return False, self.limit - used, self.units[used + cost - self.limit - 1] \
            + self.window - now


class LogRing:
    """Right, integer-minded: a ring of the last `limit` admitted units ([None] * limit); a
    request of `cost` fits when the `cost` oldest of them have left the window."""

    def __init__(self, limit, window):
        self.limit, self.window, self.ring, self.oldest = limit, window, [None] * limit, 0

    def _unit(self, i):
        return self.ring[(self.oldest + i) % self.limit]

    def allow(self, now, cost=1):
        inside = [t for t in self.ring if t is not None and t > now - self.window]
        last = self._unit(cost - 1)  # the cost-th oldest unit
        if last is None or last <= now - self.window:
            for _ in range(cost):
                self.ring[self.oldest] = now
                self.oldest = (self.oldest + 1) % self.limit
            return True, self.limit - len(inside) - cost, 0.0
        return False, self.limit - len(inside), last + self.window - now


class LogIsClose(LogRight):
    """Wrong: an entry leaves when it is *close to* W old (math.isclose, relative 1e-9): at
    Unix times that is within 1.76 s, so entries still inside the window are dropped."""

    def _expire(self, now):
        edge = now - self.window
        while self.log and (self.log[0][0] <= edge or math.isclose(self.log[0][0], edge)):
            self.log.popleft()


class LogExpiresOne(LogRight):
    """Wrong: drops at most one old entry per request (if, not while)."""

    def _expire(self, now):
        if self.log and self.log[0][0] <= now - self.window:
            self.log.popleft()


# ================================================================ counter_estimate


class CounterBase:
    def __init__(self, limit, window):
        self.limit, self.window, self.k, self.prev, self.cur = limit, window, None, 0, 0
        self.origin = None

    def index(self, now):
        return math.floor(now / self.window)

    def start(self, k):
        return k * self.window

    def roll(self, k):
        if self.k is None or k > self.k + 1:
            self.prev, self.cur = 0, 0
        elif k == self.k + 1:
            self.prev, self.cur = self.cur, 0
        self.k = k

    def weight(self, now):
        return 1 - (now - self.start(self.k)) / self.window

    def allow(self, now, cost=1):
        self.roll(self.index(now))
        estimate = self.prev * self.weight(now) + self.cur
        ok = estimate + cost <= self.limit
        self.cur += cost if ok else 0
        return ok, estimate


class CounterReversed(CounterBase):
    def weight(self, now):
        return (now - self.start(self.k)) / self.window  # the weights swapped


class CounterFromFirst(CounterBase):
    def index(self, now):  # windows counted from the first request: calendar alignment lost
        if self.origin is None:
            self.origin = now
        return math.floor((now - self.origin) / self.window)

    def start(self, k):
        return self.origin + k * self.window


class CounterNeverForgets(CounterBase):
    def roll(self, k):
        if self.k is not None and k != self.k:
            self.prev, self.cur = self.cur, 0  # even when windows were skipped
        self.k = k


class CounterIgnoresCost(CounterBase):
    """Wrong: every request counts as one, whatever its cost."""

    def allow(self, now, cost=1):
        return super().allow(now, 1)


class CounterTicks:
    """Right, integer-minded: counts are ints and the test is done in whole microseconds,
    prev x (W - elapsed) + (cur + cost) x W <= limit x W, with no division."""

    def __init__(self, limit, window):
        self.limit, self.w, self.k, self.prev, self.cur = limit, us(window), None, 0, 0

    def allow(self, now, cost=1):
        t = us(now)
        k = t // self.w
        if self.k is None or k > self.k + 1:
            self.prev, self.cur = 0, 0
        elif k == self.k + 1:
            self.prev, self.cur = self.cur, 0
        self.k = k
        weighted = self.prev * (self.w - (t - k * self.w)) + self.cur * self.w
        ok = weighted + cost * self.w <= self.limit * self.w
        self.cur += cost if ok else 0
        return ok, weighted / self.w


class CounterFraction:
    """Right: exact fractions for time and weight, a dict of counts per window."""

    def __init__(self, limit, window):
        self.limit, self.w, self.counts = limit, Fraction(window), {}

    def allow(self, now, cost=1):
        t = Fraction(now)
        k = math.floor(t / self.w)
        estimate = self.counts.get(k - 1, 0) * (1 - (t - k * self.w) / self.w) \
            + self.counts.get(k, 0)
        ok = estimate + cost <= self.limit
        if ok:
            self.counts[k] = self.counts.get(k, 0) + cost
        self.counts = {j: n for j, n in self.counts.items() if j >= k - 1}
        return ok, estimate


# ================================================================ lua_counter

SET_SCRIPT = """
local count = tonumber(redis.call("GET", KEYS[1]) or "0")
if count + 1 > tonumber(ARGV[1]) then return 0 end
redis.call("SET", KEYS[1], count + 1)
return 1
"""

INCR_FIRST_SCRIPT = """
local count = redis.call("INCR", KEYS[1])
if count == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
if count > tonumber(ARGV[1]) then return 0 end
return 1
"""

GET_SCRIPT = 'return tonumber(redis.call("GET", KEYS[1]) or "0")'

INCR_DECR_SCRIPT = """
local count = redis.call("INCR", KEYS[1])
if count == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
if count > tonumber(ARGV[1]) then
  redis.call("DECR", KEYS[1])
  return 0
end
return 1
"""


def lua_naive(key, now, limit, window_s):
    k = window_key(key, now, window_s)
    count = int((yield ("GET", k)) or 0)  # GET, then INCR: two round trips
    if count + 1 > limit:
        return False
    if (yield ("INCR", k)) == 1:
        yield ("PEXPIRE", k, int(2000 * window_s))
    return True


def lua_get_then_set(key, now, limit, window_s):
    """A script that GETs then SETs: atomic, but SET drops the counter's expiry."""
    return (yield ("EVAL", SET_SCRIPT, 1, window_key(key, now, window_s), limit)) == 1


def lua_script_reads_gateway_writes(key, now, limit, window_s):
    k = window_key(key, now, window_s)
    count = yield ("EVAL", GET_SCRIPT, 1, k)  # the script only reads...
    if count + 1 > limit:
        return False
    if (yield ("INCR", k)) == 1:  # ...and the gateway writes in a second round trip
        yield ("PEXPIRE", k, int(2000 * window_s))
    return True


def lua_incr_first(key, now, limit, window_s):
    k = window_key(key, now, window_s)
    return (yield ("EVAL", INCR_FIRST_SCRIPT, 1, k, limit, int(2000 * window_s))) == 1


def lua_incr_decr(key, now, limit, window_s):
    """Right: INCR first, and DECR back when over the limit — all inside one script."""
    k = window_key(key, now, window_s)
    return (yield ("EVAL", INCR_DECR_SCRIPT, 1, k, limit, int(2000 * window_s))) == 1


# ================================================================ boundary_attack


def attack_one_side(limit, window_s, boundary):
    step = window_s / 20 / limit
    return [boundary - window_s / 10 + i * step for i in range(2 * limit)]


def attack_just_short(limit, window_s, boundary):
    step = window_s / 10 / limit
    before = [boundary - window_s / 10 + i * step for i in range(limit)]
    # "just after" the boundary, but a hair before it: still the old window
    return before + [boundary - window_s * 1e-6] * limit


def attack_too_wide(limit, window_s, boundary):
    before = [boundary - window_s + i * window_s / 10 / limit for i in range(limit)]
    after = [boundary + window_s / 2 + i * window_s / 10 / limit for i in range(limit)]
    return before + after


def attack_integer(limit, window_s, boundary):
    """Right: both halves within a microsecond grid around the boundary, from integers."""
    b, w = us(boundary), us(window_s)
    left = [(b - w // 4 + i) / US for i in range(limit)]
    right = [(b + 1 + i) / US for i in range(limit)]  # a microsecond after it
    return left + right


# ================================================================ gcra_tat


class GcraBase:
    def __init__(self, rate, burst):
        self.T, self.burst, self.tat = 1 / rate, burst, None

    def tolerance(self):
        return self.T * (self.burst + 1)

    def base(self, now):
        return now if self.tat is None else max(self.tat, now)

    def allow(self, now, cost=1):
        new = self.base(now) + cost * self.T
        at = new - self.tolerance()
        if at <= now:
            self.tat = new
            return True, 0.0
        self.rejected(new)
        return False, at - now

    def rejected(self, new):
        pass


class GcraMovesOnReject(GcraBase):
    def rejected(self, new):
        self.tat = new  # a refused request pushes the TAT on


class GcraShortTolerance(GcraBase):
    def tolerance(self):
        return self.T * self.burst  # off by one: burst, not burst + 1


class GcraNoMax(GcraBase):
    def base(self, now):
        return now if self.tat is None else self.tat  # forgets max(TAT, now): idle time banks


class GcraIgnoresCost(GcraBase):
    """Wrong: every request moves the TAT one period, whatever its cost."""

    def allow(self, now, cost=1):
        return super().allow(now, 1)


class GcraChecksOne(GcraBase):
    """Wrong: the test moves the TAT one period, as if the cost were 1; admitted, it charges
    the cost in full."""

    def allow(self, now, cost=1):
        base = self.base(now)
        at = base + self.T - self.tolerance()
        if at <= now:
            self.tat = base + cost * self.T
            return True, 0.0
        return False, at - now


class GcraIsClose(GcraBase):
    """Wrong: a request passes when its allow time is *close to* now (math.isclose, relative
    1e-9): at Unix times that admits requests up to 1.76 s early."""

    def allow(self, now, cost=1):
        new = self.base(now) + cost * self.T
        at = new - self.tolerance()
        if at <= now or math.isclose(at, now):
            self.tat = new
            return True, 0.0
        return False, at - now


class GcraPerUnit(GcraBase):
    """Right, integer-minded: each unit of cost moves the TAT one period (range(cost)), in
    whole microseconds."""

    def __init__(self, rate, burst):
        super().__init__(rate, burst)
        self.period = int(US / rate)  # whole microseconds, truncated as the reference does

    def allow(self, now, cost=1):
        t = us(now)
        new = t if self.tat is None else max(self.tat, t)
        for _ in range(cost):
            new += self.period
        at = new - self.period * (self.burst + 1)
        if at <= t:
            self.tat = new
            return True, 0.0
        return False, (at - t) / US


class GcraNanos:
    """Right: the TAT in integer nanoseconds, the whole seconds split off before scaling."""

    def __init__(self, rate, burst):
        self.T = round(1e9 / rate)
        self.dvt, self.tat = self.T * (burst + 1), None

    def allow(self, now, cost=1):
        whole = math.floor(now)
        t = whole * 10**9 + round((now - whole) * 1e9)
        new = max(self.tat if self.tat is not None else t, t) + round(cost * self.T)
        if new - self.dvt <= t:
            self.tat = new
            return {"allowed": True, "retry_after": 0}
        return {"allowed": False, "retry_after": (new - self.dvt - t) / 1e9}


# ================================================================ nginx_burst


class NginxBase:
    def __init__(self, rate, burst, delay=0, nodelay=False):
        self.rate, self.burst, self.nodelay = rate, burst, nodelay
        self.delay, self.excess, self.last = burst if nodelay else delay, None, None

    def first(self):
        return 0.0

    def free(self):
        return self.delay

    def allow(self, now):
        if self.excess is None:
            excess = self.first()
        else:
            excess = max(0.0, self.excess - self.rate * (now - self.last) + 1)
        if excess > self.burst:
            return self.refused(excess, now)
        self.excess, self.last = excess, now
        return True, (excess - self.free()) / self.rate if excess > self.free() else 0.0

    def refused(self, excess, now):
        return False, 0.0


class NginxFirstCounts(NginxBase):
    def first(self):
        return 1.0  # a new key's first request counted


class NginxIgnoresDelay(NginxBase):
    def free(self):
        return self.burst if self.nodelay else 0  # delay=N forgotten


class NginxIgnoresNodelay(NginxBase):
    def free(self):
        return self.delay if not self.nodelay else 0  # nodelay forgotten


class NginxRejectedCount(NginxBase):
    def refused(self, excess, now):
        self.excess, self.last = excess, now  # a refusal raises the excess
        return False, 0.0


class NginxNoFloor(NginxBase):
    """Wrong: the excess drains below zero, so a long idle gap banks extra requests."""

    def allow(self, now):
        if self.excess is None:
            self.excess, self.last = 0.0, now
            return True, 0.0
        excess = self.excess - self.rate * (now - self.last) + 1
        if excess > self.burst:
            return False, 0.0
        self.excess, self.last = excess, now
        return True, (excess - self.free()) / self.rate if excess > self.free() else 0.0


class NginxMilli:
    """Right: nginx's own integers, thousandths of a request and whole milliseconds."""

    def __init__(self, rate, burst, delay=0, nodelay=False):
        self.rate, self.burst = round(rate * 1000), burst * 1000
        self.free = self.burst if nodelay else delay * 1000
        self.excess, self.last = None, None

    def allow(self, now):
        ms = math.floor(now * 1000 + 0.5)
        if self.excess is None:
            self.excess, self.last = 0, ms
            return True, 0.0
        excess = max(0, self.excess - self.rate * (ms - self.last) // 1000 + 1000)
        if excess > self.burst:
            return False, 0.0
        self.excess, self.last = excess, ms
        return True, ((excess - self.free) * 1000 // self.rate) / 1000 if excess > self.free \
            else 0.0


# ================================================================ headers


def _headers(decision, quota, window_s, *, up, retry_always=False, t_reset=False):
    out = {}
    if not decision.allowed or retry_always:
        out["Retry-After"] = str(up(decision.retry_after))
    wait = decision.reset_after if (decision.allowed or t_reset) else decision.retry_after
    out["RateLimit-Policy"] = f'"default";q={quota};w={window_s}'
    out["RateLimit"] = f'"default";r={max(0, decision.remaining)};t={math.ceil(wait - 1e-9)}'
    return out


def headers_round_down(decision, quota, window_s):
    return _headers(decision, quota, window_s, up=int)


def headers_retry_always(decision, quota, window_s):
    return _headers(decision, quota, window_s, up=lambda s: math.ceil(s - 1e-9),
                    retry_always=True)


def headers_t_is_reset(decision, quota, window_s):
    return _headers(decision, quota, window_s, up=lambda s: math.ceil(s - 1e-9), t_reset=True)


def headers_list(decision, quota, window_s):
    """Right: assembled from a list of (name, value), rounding up with -(-x // 1)."""
    def up(s):
        return max(0, int(-(-round(s, 9) // 1)))

    wait = decision.reset_after if decision.allowed else decision.retry_after
    fields = [("RateLimit-Policy", '"default";' + ";".join([f"q={quota}", f"w={window_s}"])),
              ("RateLimit", '"default";' + ";".join([f"r={max(0, decision.remaining)}",
                                                     f"t={up(wait)}"]))]
    if not decision.allowed:
        fields.insert(0, ("retry-after", str(up(decision.retry_after))))
    return dict(fields)


# ================================================================ storm_client


def storm_immediate(attempt, view, rng):
    return 0.0


def storm_retry_after_only(attempt, view, rng):
    return view.retry_after_s  # everyone refused together comes back together


def storm_exponential(attempt, view, rng):
    return 0.1 * 2 ** (attempt - 1)  # backoff without jitter


def storm_sleepy(attempt, view, rng):
    return 30.0  # few attempts, but far too slow


def storm_scaled_jitter(attempt, view, rng):
    """Right: scale the server's wait by a random factor that grows with each refusal."""
    return (view.retry_after_s or 1.0) * rng.uniform(1, 1 + attempt)


# ================================================================ fail_policy


def fail_all_open(requirements):
    return {e: "open" for e in requirements}


def fail_all_closed(requirements):
    return {e: "closed" for e in requirements}


def fail_reversed(requirements):
    return {e: "open" if "limit" in need else "closed" for e, need in requirements.items()}


def fail_login_closed(requirements):
    """Wrong: the answer to notebook 07's two endpoints, by name: login closed, the rest open."""
    return {e: "closed" if e == "login" else "open" for e in requirements}


def fail_by_words(requirements):
    """Right: a lockout is the cost a 'never lock out' endpoint cannot pay."""
    policy = {}
    for endpoint, need in sorted(requirements.items()):
        policy[endpoint] = "open" if need.endswith("lock out") else "closed"
    return policy


# ================================================================ choose_limiter


def choose_full_rate(mu, max_wait_s, max_mean_wait_s, demand):
    return "token-bucket", {"rate": mu, "capacity": 10}  # utilisation 1


def choose_generous(mu, max_wait_s, max_mean_wait_s, demand):
    return "token-bucket", {"rate": demand, "capacity": 300}  # a burst the timeout cannot take


def choose_burst_plus_ten(mu, max_wait_s, max_mean_wait_s, demand):
    return "gcra", {"rate": demand, "burst": math.floor(max_wait_s * mu) + 10}


def choose_gcra(mu, max_wait_s, max_mean_wait_s, demand):
    """Right: GCRA, with the rate halfway between the demand and the curve's limit."""
    s = 1 / mu
    rho_max = 2 * max_mean_wait_s / (s + 2 * max_mean_wait_s)
    rate = (demand + rho_max * mu) / 2
    return "gcra", {"rate": rate, "burst": math.floor(max_wait_s * mu)}


# ================================================================ the tables

# (exercise, answer, case, index, field): where the timeline must point
WRONG = [
    ("token_bucket_take", take_uncapped, "refill stops at capacity", 4, "tokens"),
    ("token_bucket_take", take_rejected_spend, "notebook 01's table", 2, "tokens"),
    ("token_bucket_take", take_strict, "notebook 01's table", 1, "allowed"),
    ("token_bucket_take", take_stale_last, "refill stops at capacity", 8, "last"),
    ("shaper_departures", departures_no_idle, "a full queue drops", 3, "departure"),
    ("shaper_departures", departures_unbounded, "a full queue drops", 3, "departure"),
    ("shaper_departures", departures_off_by_one, "a full queue drops", 2, "departure"),
    ("fixed_window", FixedFromFirst, "first request mid-window", 3, "retry_after"),
    ("fixed_window", FixedCountsRejected, "costs", 1, "remaining"),
    ("fixed_window", FixedStrict, "first request mid-window", 2, "allowed"),
    ("fixed_window", FixedFullWindowRetry, "first request mid-window", 3, "retry_after"),
    ("sliding_log", LogClosed, "exactly one window later", 3, "allowed"),
    ("sliding_log", LogCountsRejected, "exactly one window later", 2, "retry_after"),
    ("sliding_log", LogNotCountedPlain, "exactly one window later", 2, "allowed"),
    ("sliding_log", LogRetryFromNewest, "exactly one window later", 2, "retry_after"),
    ("sliding_log", LogExpiresOne, "a long gap empties the log", 3, "remaining"),
    ("counter_estimate", CounterReversed, "the 86 example (prev 80, cur 30, 30% in)", 80,
     "estimate"),
    ("counter_estimate", CounterFromFirst, "calendar windows, late start", 3, "estimate"),
    ("counter_estimate", CounterNeverForgets, "a skipped window forgets", 5, "estimate"),
    ("counter_estimate", CounterIgnoresCost, "costs count in full", 1, "allowed"),
    ("lua_counter", lua_naive, "three gateways, one place left", None, "admitted"),
    ("lua_counter", lua_get_then_set, "one gateway, limit 3", 0, "counter"),
    ("lua_counter", lua_script_reads_gateway_writes, "three gateways, one place left", None,
     "admitted"),
    ("lua_counter", lua_incr_first, "one gateway, limit 3", 3, "counter"),
    ("boundary_attack", attack_one_side, "100 per second at t = 1", None, "max_in_window"),
    ("boundary_attack", attack_just_short, "100 per second at t = 1", None, "max_in_window"),
    ("boundary_attack", attack_too_wide, "100 per second at t = 1", None, "max_in_window"),
    ("gcra_tat", GcraMovesOnReject, "burst + 1 at once", 4, "allowed"),
    ("gcra_tat", GcraShortTolerance, "burst + 1 at once", 2, "allowed"),
    ("gcra_tat", GcraNoMax, "an idle key banks nothing", 2, "allowed"),
    ("gcra_tat", GcraIgnoresCost, "a cost moves the TAT cost periods", 2, "allowed"),
    ("gcra_tat", GcraChecksOne, "a cost moves the TAT cost periods", 4, "allowed"),
    ("nginx_burst", NginxFirstCounts, "burst=8 (notebook 02)", 0, "delay"),
    ("nginx_burst", NginxIgnoresDelay, "burst=8 delay=4", 1, "delay"),
    ("nginx_burst", NginxIgnoresNodelay, "burst=8 nodelay", 1, "delay"),
    ("nginx_burst", NginxRejectedCount, "draining", 4, "allowed"),
    ("nginx_burst", NginxNoFloor, "an idle key drains to 0, not below", 4, "delay"),
    ("headers", headers_round_down, "notebook 08's bucket at t = 100", 20, "Retry-After"),
    ("headers", headers_retry_always, "notebook 08's bucket at t = 100", 0, "Retry-After"),
    ("headers", headers_t_is_reset, "notebook 08's bucket at t = 100", 20, "RateLimit"),
    ("storm_client", storm_immediate, "surge x3 for 5 s", None, "succeeded"),
    ("storm_client", storm_retry_after_only, "surge x3 for 5 s", None, "succeeded"),
    ("storm_client", storm_exponential, "surge x3 for 5 s", None, "attempts"),
    ("storm_client", storm_sleepy, "surge x3 for 5 s", None, "latency"),
    ("fail_policy", fail_all_open, "notebook 07's two endpoints, 2 s outage", None, "login"),
    ("fail_policy", fail_all_closed, "notebook 07's two endpoints, 2 s outage", None, "search"),
    ("fail_policy", fail_reversed, "notebook 07's two endpoints, 2 s outage", None, "login"),
    ("fail_policy", fail_login_closed, "random outage 0", None, "login"),
    ("choose_limiter", choose_full_rate, "100/s service, 2 s timeout", None, "mean wait"),
    ("choose_limiter", choose_generous, "100/s service, 2 s timeout", None, "worst wait"),
    ("choose_limiter", choose_burst_plus_ten, "100/s service, 2 s timeout", None,
     "worst wait"),
]

# (exercise, answer, kind, field): the kind of instructor case (its name without the number)
# that catches the mistake, for every seed the tests draw, and the field it shows.
WRONG_INSTRUCTOR = [
    ("sliding_log", LogIsClose, "Unix time", None),
    ("gcra_tat", GcraIsClose, "Unix time", "allowed"),
]

# (exercise, answer, breaks on floats): True where the code repeats or sizes something by a
# count (a float limit or cost raises TypeError there), False where it only computes with ints.
RIGHT_INT = [
    ("token_bucket_take", take_per_unit, True),
    ("shaper_departures", departures_ring, True),
    ("fixed_window", FixedSlots, True),
    ("sliding_log", LogUnits, True),
    ("sliding_log", LogRing, True),
    ("counter_estimate", CounterTicks, False),
    ("gcra_tat", GcraPerUnit, True),
]

RIGHT = {
    "token_bucket_take": take_integer,
    "shaper_departures": departures_queue,
    "fixed_window": FixedDict,
    "sliding_log": LogBisect,
    "counter_estimate": CounterFraction,
    "lua_counter": lua_incr_decr,
    "boundary_attack": attack_integer,
    "gcra_tat": GcraNanos,
    "nginx_burst": NginxMilli,
    "headers": headers_list,
    "storm_client": storm_scaled_jitter,
    "fail_policy": fail_by_words,
    "choose_limiter": choose_gcra,
}
