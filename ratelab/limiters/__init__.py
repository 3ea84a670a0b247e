"""The reference limiters: readable, pure Python, time passed in, one module per algorithm.

    >>> from ratelab.limiters import make
    >>> bucket = make("token-bucket", rate=1, capacity=2)
    >>> [bucket.allow("alice", now=0.0).allowed for _ in range(3)]
    [True, True, False]

Every limiter answers ``allow(key, now, cost=1)`` and ``peek(key, now, cost=1)`` with a
:class:`Decision`, and shows its internal state with ``inspect(key, now)``.
"""

from __future__ import annotations

from .base import Decision, Limiter
from .concurrency import ConcurrencyLimiter, Lease
from .fixed_window import FixedWindow
from .gcra import GCRA
from .haproxy import HAProxyRate
from .leaky_bucket import LeakyBucket
from .multi import MultiDecision, MultiKeyLimiter
from .nginx import NginxLimitReq
from .params import registry_doc
from .registry import NAMES, REGISTRY
from .sliding_counter import SlidingWindowCounter
from .sliding_log import SlidingWindowLog
from .token_bucket import BucketState, TokenBucket, take



def make(name: str, **params) -> Limiter:
    """A new limiter of the registry algorithm `name`, built with `params`.

    A name that is not in the registry, or a missing or unknown parameter, is a ValueError
    naming it; each class checks its values (rate > 0 ...). The names, their parameters
    (plain type and unit; defaults after =) and an example of each follow, read from the
    classes' signatures (``ratelab limiters`` prints the same list).
    """
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown limiter {name!r}; choose one of {', '.join(NAMES)}") from None
    try:
        return cls(**params)
    except TypeError as e:  # a missing or unknown parameter
        raise ValueError(f"{name}: {e}") from None


make.__doc__ += "\n" + registry_doc() + "\n"

__all__ = ["Decision", "Limiter", "make", "NAMES", "REGISTRY", "TokenBucket", "BucketState",
           "take", "LeakyBucket", "FixedWindow", "SlidingWindowLog", "SlidingWindowCounter",
           "GCRA", "NginxLimitReq", "HAProxyRate",
           # not in the registry: they answer other questions than allow(key, now, cost)
           "MultiKeyLimiter", "MultiDecision", "ConcurrencyLimiter", "Lease"]
