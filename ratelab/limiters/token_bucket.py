"""Token bucket: a token count and a last-refill time, and one function.

The bucket holds at most `capacity` tokens and gains `rate` tokens per second. A request of
`cost` passes when at least `cost` tokens are there, and takes them. `rate` sets the average,
`capacity` the largest burst: an idle bucket lets `capacity` requests through at once, then
one every 1/rate seconds. A new key starts full.

Times are whole microseconds (ticks, :mod:`ratelab.clock`): the refill is computed
from the integer ticks elapsed, so it is the same at every origin, and a request arriving less
than one tick before its tokens are there passes (``TIE_TICKS``), charged in full.

The scalar functions below (:func:`refill`, :func:`passes`, :func:`wait_ticks`, ...) are the
algorithm's one arithmetic: the reference class calls them, and the compiled replay compiles
these same functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import (MAX_RATE, Decision, Limiter, PerSecond, Seconds, below, bounded, budget_args,
                   positive, whole_below)
from ..clock import TICKS_PER_S, seconds_until, tie_amount, ticks_to_pass, to_ticks


@dataclass(frozen=True, slots=True)
class BucketState:
    """A bucket's value: `tokens` as of tick `last` (whole microseconds)."""

    tokens: float
    last: int


# ---------------------------------------------------------------- the arithmetic (scalars)


def refill(tokens: float, last: int, now: int, rate: PerSecond, capacity: float) -> float:
    """The tokens a bucket holding `tokens` at tick `last` holds at tick `now` (<= capacity)."""
    return min(capacity, tokens + (now - last) * (rate / TICKS_PER_S))


def ticks_short(tokens: float, cost: float, rate: PerSecond) -> float:
    """Ticks of refill a bucket holding `tokens` needs before `cost` is there (<= 0: it is)."""
    return (cost - tokens) * TICKS_PER_S / rate


def passes(tokens: float, cost: float, rate: PerSecond) -> bool:
    """Whether `cost` can be taken from `tokens`: they are there, or will be in less than
    TIE_TICKS (``within_tie(ticks_short(...))``, with both sides multiplied by rate / 1e6:
    the shortfall in tokens against what a tie's worth of ticks refills)."""
    return cost - tokens < tie_amount(rate)


def wait_ticks(tokens: float, cost: float, rate: PerSecond, capacity: float) -> int:
    """Ticks until a bucket holding `tokens` now lets `cost` pass (0 if it does now)."""
    d = ticks_to_pass(ticks_short(tokens, cost, rate))
    while d > 0 and passes(refill(tokens, 0, d - 1, rate, capacity), cost, rate):
        d -= 1  # the closed form and refill's own float steps may differ in the last bit
    while not passes(refill(tokens, 0, d, rate, capacity), cost, rate):
        d += 1
    return d


def step(tokens: float, last: int, now: int, cost: float, rate: PerSecond,
         capacity: float) -> tuple[float, float, bool]:
    """(tokens refilled to `now`, tokens after the request, whether it passed)."""
    have = refill(tokens, last, now, rate, capacity)
    allowed = passes(have, cost, rate)
    return have, have - cost if allowed else have, allowed


def take(
    state: BucketState, now: Seconds, cost: float = 1, *, rate: PerSecond, capacity: float
) -> tuple[BucketState, bool]:
    """The bucket after a request of `cost` at `now` (seconds), and whether the request passed.

    The state passed in is not changed (it is frozen); a rejected request leaves the tokens
    as refilled to `now`.
    """
    now_t = to_ticks(now)
    _, after, allowed = step(state.tokens, state.last, now_t, cost, rate, capacity)
    return BucketState(after, now_t), allowed


# ---------------------------------------------------------------- the keyed limiter


class TokenBucket(Limiter):
    """Keyed token bucket: `rate` tokens per second into a bucket of `capacity` tokens.

    Parameters:
        rate      tokens added per second (requests per second on average); finite, > 0.
        capacity  the most tokens the bucket holds: the largest burst (requests); > 0.

    A request of `cost` passes when the bucket holds at least `cost` tokens, and takes them;
    a refused request takes nothing. A new key starts full, so an idle key lets `capacity`
    requests through at once, then one every 1/rate seconds.

    Edge cases: a request whose tokens would be there in less than one tick passes, charged in
    full (``TIE_TICKS``: the shortfall is under what a tick refills, :func:`passes`); a cost
    above `capacity` can never pass and is a ValueError; so is a time earlier than the key's
    last one, and a rate or capacity that is not a positive finite number. ``retry_after`` is the wait until the tokens are
    there; a request sent exactly then passes.

    Example: three at once, then one every half second.

        >>> bucket = TokenBucket(rate=2, capacity=3)
        >>> [bucket.allow("alice", now=0.0).allowed for _ in range(4)]
        [True, True, True, False]
        >>> bucket.peek("alice", now=0.0).retry_after
        0.5
        >>> bucket.allow("alice", now=0.5).allowed
        True
    """

    name = "token-bucket"
    reports = ("tokens", "tokens in the bucket, refilled to now (passes if >= cost, less a "
                         "tick's refill)")

    example = {"rate": 100.0, "capacity": 100.0}

    def __init__(self, rate: PerSecond, capacity: float) -> None:
        super().__init__()
        self.capacity = bounded("capacity", positive("capacity", capacity))
        self.rate = below("rate", positive("rate", rate), MAX_RATE, "2**53 per microsecond")
        self.limit = self.capacity
        self._check_refill_time(self.capacity, self.rate)

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "capacity": self.capacity}

    @property
    def rate_per_s(self) -> PerSecond:
        """The refill rate."""
        return self.rate

    @classmethod
    def budget(cls, limit: int, window_s: Seconds, shape: bool = True) -> dict:
        """``{rate: limit / window_s, capacity: limit}``."""
        limit, window_s, rate = budget_args(limit, window_s)
        return {"rate": rate, "capacity": limit}

    def _initial(self, now: float, now_t: int) -> BucketState:
        return BucketState(self.capacity, now_t)

    def _check(self, state: BucketState, now: float, now_t: int,
               cost: float) -> tuple[Decision, BucketState]:
        rate, capacity = self.rate, self.capacity
        _, tokens, allowed = step(state.tokens, state.last, now_t, cost, rate, capacity)
        return Decision(
            allowed=allowed,
            limit=capacity,
            remaining=whole_below(tokens + tie_amount(rate)),
            retry_after=0.0 if allowed else seconds_until(
                now, now_t, now_t + wait_ticks(tokens, cost, rate, capacity)),
            reset_after=seconds_until(
                now, now_t, now_t + wait_ticks(tokens, capacity, rate, capacity)),
        ), BucketState(tokens, now_t)

    def _inspect(self, state: BucketState, now: float, now_t: int) -> dict:
        return {"tokens": refill(state.tokens, state.last, now_t, self.rate, self.capacity),
                "capacity": self.capacity}
