"""Multi-key limits: one request checked against several limiters (per IP, per user, per key).

Real APIs limit on several identities at once and refuse a request when *any* of them is
exhausted. The question that is easy to get wrong is what a refusal costs the limits that
would have passed. Two policies, named by ``charge``:

* ``"if-all-pass"`` (the default): peek every limiter first, and commit only when all pass.
  A request refused by the per-user limit then spends none of the per-IP allowance, so one
  noisy user cannot drain the budget of the users sharing their IP with refused requests.
  When a request is refused, each limiter whose own policy counts rejected requests
  (``count_rejected=True``, a Redis INCR-first counter) records it, as it would alone; the
  others are left as they were.
* ``"each"``: call ``allow`` on every limiter independently, as a chain of separate
  middlewares does. A limiter that passes is charged even when another one refuses — the
  refused request still spends the allowances it passed.

The failure modes multi-key limits exist to show live in the keys, not in the code: one NAT'd
IP carries many users (the per-IP limit refuses well-behaved users because of their
neighbours), and one API key is shared by a customer's whole fleet (every device competes for
one allowance). ``notebooks/09-choosing-a-limiter.ipynb`` measures both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Mapping

from .base import Decision, Limiter, Seconds

CHARGES = ("if-all-pass", "each")


@dataclass(frozen=True, slots=True)
class MultiDecision:
    """The answer over every dimension.

    allowed     whether every dimension admits the request.
    decisions   each dimension's own Decision, as if it alone decided: a dimension that
                passes counts this request in its remaining and reset_after, even when
                "if-all-pass" then leaves it uncharged (so it reads conservatively).
    blocked_by  the dimensions that refused, in the order the limits were given.
    """

    allowed: bool
    decisions: Mapping[str, Decision]
    blocked_by: tuple[str, ...]

    @property
    def decision(self) -> Decision:
        """One Decision for the whole request: the tightest remaining, the longest waits."""
        ds = list(self.decisions.values())
        tight = min(ds, key=lambda d: d.remaining)
        refusing = [self.decisions[name] for name in self.blocked_by]
        return Decision(
            allowed=self.allowed,
            limit=tight.limit,
            remaining=tight.remaining,
            retry_after=max((d.retry_after for d in refusing), default=0.0),
            reset_after=max(d.reset_after for d in ds),
            delay=max(d.delay for d in ds),
        )


class MultiKeyLimiter:
    """Several limiters, one per dimension ("ip", "user", "api_key" ...); all must admit."""

    def __init__(self, limits: Mapping[str, Limiter], charge: str = "if-all-pass") -> None:
        if not limits:
            raise ValueError(f"limits must name at least one dimension, got {limits!r}")
        if charge not in CHARGES:
            raise ValueError(f"charge must be one of {CHARGES}, got {charge!r}")
        seen: set[int] = set()
        for name, limiter in limits.items():
            if not isinstance(limiter, Limiter):
                raise ValueError(f"limits[{name!r}] must be a Limiter, got {limiter!r}")
            if id(limiter) in seen:
                raise ValueError(f"limits[{name!r}] is the same limiter object as another "
                                 "dimension: give each dimension its own limiter")
            seen.add(id(limiter))
        self.limits = dict(limits)
        self.charge = charge

    def _keys(self, keys: Mapping[str, Hashable]) -> dict[str, Hashable]:
        missing = [name for name in self.limits if name not in keys]
        extra = [name for name in keys if name not in self.limits]
        if missing or extra:
            raise ValueError(f"keys must name exactly the dimensions {list(self.limits)}, "
                             f"got {dict(keys)!r}")
        return {name: keys[name] for name in self.limits}

    def peek(self, keys: Mapping[str, Hashable], now: Seconds, cost: float = 1) -> MultiDecision:
        """What `allow` would answer for `keys` ({dimension: key}), changing nothing."""
        keys = self._keys(keys)
        decisions = {name: self.limits[name].peek(k, now, cost) for name, k in keys.items()}
        return _combine(decisions)

    def allow(self, keys: Mapping[str, Hashable], now: Seconds, cost: float = 1) -> MultiDecision:
        """Decide the request from `keys` ({dimension: key}) at `now`, and charge per `charge`."""
        keys = self._keys(keys)
        if self.charge == "each":
            return _combine({name: self.limits[name].allow(k, now, cost)
                             for name, k in keys.items()})
        answer = self.peek(keys, now, cost)  # every check (time order, cost) happens here
        for name, k in keys.items():
            limiter = self.limits[name]
            if answer.allowed or getattr(limiter, "count_rejected", False):
                limiter.allow(k, now, cost)
        return answer

    def reset(self) -> None:
        """Forget every dimension's state."""
        for limiter in self.limits.values():
            limiter.reset()

    def __repr__(self) -> str:
        return f"MultiKeyLimiter({self.limits!r}, charge={self.charge!r})"


def _combine(decisions: dict[str, Decision]) -> MultiDecision:
    blocked = tuple(name for name, d in decisions.items() if not d.allowed)
    return MultiDecision(not blocked, decisions, blocked)


def refused_share(outcomes, dimension: str | None = None) -> float:
    """The share of `outcomes` (MultiDecisions) refused — by `dimension`, when given."""
    outcomes = list(outcomes)
    if not outcomes:
        return math.nan
    if dimension is None:
        return sum(not o.allowed for o in outcomes) / len(outcomes)
    return sum(dimension in o.blocked_by for o in outcomes) / len(outcomes)
