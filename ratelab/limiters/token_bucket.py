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
    """Keyed token bucket: `rate` tokens per second into a bucket of `capacity` tokens."""

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
