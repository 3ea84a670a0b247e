"""Token bucket: a token count and a last-refill time, and one function.

The bucket holds at most `capacity` tokens and gains `rate` tokens per second. A request of
`cost` passes when at least `cost` tokens are there, and takes them. `rate` sets the average,
`capacity` the largest burst: an idle bucket lets `capacity` requests through at once, then
one every 1/rate seconds. A new key starts full.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import TIE, Decision, Limiter, PerSecond, Seconds, earliest, positive


@dataclass(frozen=True, slots=True)
class BucketState:
    """A bucket's value: `tokens` as of time `last`."""

    tokens: float
    last: Seconds


def refill(state: BucketState, now: Seconds, *, rate: PerSecond, capacity: float) -> float:
    """The tokens the bucket holds at `now` (never more than `capacity`)."""
    elapsed = max(0.0, now - state.last)
    return min(capacity, state.tokens + elapsed * rate)


def take(
    state: BucketState, now: Seconds, cost: float = 1, *, rate: PerSecond, capacity: float
) -> tuple[BucketState, bool]:
    """The bucket after a request of `cost` at `now`, and whether the request passed.

    The state passed in is not changed (it is frozen); a rejected request leaves the tokens
    as refilled to `now`.
    """
    tokens = refill(state, now, rate=rate, capacity=capacity)
    allowed = tokens + TIE >= cost  # a float shortfall below TIE is a tie, and passes
    return BucketState(tokens - cost if allowed else tokens, now), allowed


class TokenBucket(Limiter):
    """Keyed token bucket: `rate` tokens per second into a bucket of `capacity` tokens.

    Parameters:
        rate      tokens added per second (requests per second on average); finite, > 0.
        capacity  the most tokens the bucket holds: the largest burst (requests); > 0.

    A request of `cost` passes when the bucket holds at least `cost` tokens, and takes them;
    a refused request takes nothing. A new key starts full, so an idle key lets `capacity`
    requests through at once, then one every 1/rate seconds.

    Edge cases: a shortfall below a billionth of a token is a tie and passes (float refill
    from real timestamps lands a rounding step short); a cost above `capacity` can never pass
    and is a ValueError; so is a time earlier than the key's last one, and a rate or capacity
    that is not a positive finite number. ``retry_after`` is the wait until the tokens are
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

    def __init__(self, rate: PerSecond, capacity: float) -> None:
        super().__init__()
        self.rate = positive("rate", rate)
        self.capacity = positive("capacity", capacity)
        self.limit = self.capacity

    @property
    def params(self) -> dict:
        return {"rate": self.rate, "capacity": self.capacity}

    def _initial(self, now: float) -> BucketState:
        return BucketState(self.capacity, now)

    def _check(self, state: BucketState, now: float, cost: float) -> tuple[Decision, BucketState]:
        new, allowed = take(state, now, cost, rate=self.rate, capacity=self.capacity)
        tokens = new.tokens
        retry = 0.0 if allowed else earliest(
            now, (cost - tokens) / self.rate,
            lambda t: refill(new, t, rate=self.rate, capacity=self.capacity) + TIE >= cost)
        decision = Decision(
            allowed=allowed,
            limit=self.capacity,
            remaining=int(math.floor(tokens)),
            retry_after=retry,
            reset_after=earliest(
                now, (self.capacity - tokens) / self.rate,
                lambda t: refill(new, t, rate=self.rate, capacity=self.capacity) >= self.capacity),
        )
        return decision, new

    def _inspect(self, state: BucketState, now: float) -> dict:
        return {"tokens": refill(state, now, rate=self.rate, capacity=self.capacity),
                "capacity": self.capacity}
