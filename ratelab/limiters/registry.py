"""The registry: every algorithm ``make(name, ...)`` builds, keyed by its ``name``."""

from __future__ import annotations

from .base import Limiter
from .fixed_window import FixedWindow
from .gcra import GCRA
from .haproxy import HAProxyRate
from .leaky_bucket import LeakyBucket
from .nginx import NginxLimitReq
from .sliding_counter import SlidingWindowCounter
from .sliding_log import SlidingWindowLog
from .token_bucket import TokenBucket

REGISTRY: dict[str, type[Limiter]] = {
    cls.name: cls
    for cls in (TokenBucket, LeakyBucket, FixedWindow, SlidingWindowLog, SlidingWindowCounter,
                GCRA, NginxLimitReq, HAProxyRate)
}
NAMES: tuple[str, ...] = tuple(REGISTRY)
