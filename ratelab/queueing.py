"""The utilisation curve: what the downstream pays for the load a limiter lets through.

One FIFO server, service time S on average, arrivals at rate lambda; utilisation
rho = lambda x S. The mean wait in the queue (before service starts) in closed form:

* M/M/1 (Poisson arrivals, exponential service):  Wq = S x rho / (1 - rho)
* M/D/1 (Poisson arrivals, constant service):     Wq = S x rho / (2 (1 - rho))
* M/G/1 (Pollaczek-Khinchine), service squared coefficient of variation c2:
                                                  Wq = S x rho (1 + c2) / (2 (1 - rho))

All three blow up as rho -> 1: at 90% utilisation an M/M/1 queue waits 9 service times.
:func:`simulate` checks them on seeded arrivals with Lindley's recursion, vectorised:
``W[n+1] = max(0, W[n] + S[n] - (a[n+1] - a[n]))``.

And the question a token bucket asks of the service behind it: a bucket of `capacity` lets
`capacity` requests through at once, then `rate` per second. Behind it, a server doing
`service_per_s` requests per second (constant service) sees the burst as a queue that peaks at
`capacity` and drains at ``service_per_s - rate`` per second, if that is positive. The last
request of the burst waits ``(capacity - 1) / service_per_s`` seconds. :func:`burst_verdict`
answers "can it swallow it?" against a timeout and a queue limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .limiters.base import non_negative, positive, whole

SERVICES = ("exponential", "deterministic")


def _rho(rho) -> float:
    r = non_negative("rho", rho)
    if r >= 1:
        raise ValueError(f"rho must be below 1 for a stable queue, got {rho!r}")
    return r


def mg1_wait_s(rho: float, service_s: float, scv: float) -> float:
    """Mean wait in queue of M/G/1 (Pollaczek-Khinchine), service SCV `scv`; rho in [0, 1)."""
    rho, s, c2 = _rho(rho), positive("service_s", service_s), non_negative("scv", scv)
    return s * rho * (1.0 + c2) / (2.0 * (1.0 - rho))


def mm1_wait_s(rho: float, service_s: float) -> float:
    """Mean wait in queue of M/M/1: S rho / (1 - rho) (rho = 0 waits 0)."""
    return mg1_wait_s(rho, service_s, 1.0)


def md1_wait_s(rho: float, service_s: float) -> float:
    """Mean wait in queue of M/D/1: S rho / (2 (1 - rho)), half of M/M/1's."""
    return mg1_wait_s(rho, service_s, 0.0)


def lindley_waits(arrivals: Sequence[float], services: Sequence[float]) -> np.ndarray:
    """Each customer's wait in queue at a FIFO single server (arrivals sorted, seconds)."""
    a = np.asarray(arrivals, dtype=float)
    s = np.asarray(services, dtype=float)
    if a.shape != s.shape:
        raise ValueError(f"arrivals and services must have the same length, "
                         f"got {a.shape} and {s.shape}")
    if len(a) == 0:
        return np.zeros(0)
    gaps = np.diff(a)
    if np.any(gaps < 0):
        raise ValueError("arrivals must be sorted (out-of-order timestamps found)")
    if np.any(s < 0) or not np.all(np.isfinite(s)):
        raise ValueError("services must be finite and >= 0")
    c = np.concatenate([[0.0], np.cumsum(s[:-1] - gaps)])  # C[n] = sum_{j<n} (S_j - gap_j)
    return c - np.minimum(np.minimum.accumulate(c), 0.0)


def simulate(rho: float, service_s: float, n: int, rng: np.random.Generator,
             service: str = "exponential") -> np.ndarray:
    """Waits of `n` customers of a seeded M/M/1 or M/D/1 queue at utilisation `rho`."""
    rho, service_s = _rho(rho), positive("service_s", service_s)
    if service not in SERVICES:
        raise ValueError(f"service must be one of {SERVICES}, got {service!r}")
    if rho == 0:
        return np.zeros(n)
    arrivals = np.cumsum(rng.exponential(service_s / rho, n))
    if service == "exponential":
        services = rng.exponential(service_s, n)
    else:
        services = np.full(n, service_s)
    return lindley_waits(arrivals, services)


def mean_wait_s(waits: np.ndarray, warmup: float = 0.1) -> float:
    """The mean of `waits` after dropping the first `warmup` share (the queue starts empty)."""
    start = int(len(waits) * non_negative("warmup", warmup))
    return float(np.mean(waits[start:]))


@dataclass(frozen=True, slots=True)
class BurstVerdict:
    """What a token-bucket burst does to a constant-rate server behind the limiter.

    peak_queue     requests waiting at the worst moment (the burst itself).
    worst_wait_s   the wait of the burst's last request: (burst - 1) / service_per_s.
    drain_s        seconds until the queue is empty again (inf if the rate is not below the
                   service rate: the queue never drains).
    utilisation    rate / service_per_s, the load after the burst.
    swallowed      whether worst_wait_s <= max_wait_s and peak_queue <= queue_limit and the
                   queue drains.
    reason         why not, in words ("" when swallowed).
    """

    peak_queue: int
    worst_wait_s: float
    drain_s: float
    utilisation: float
    swallowed: bool
    reason: str


def burst_verdict(burst: int, rate_per_s: float, service_per_s: float, *,
                  max_wait_s: float = math.inf, queue_limit: float = math.inf) -> BurstVerdict:
    """Can a server doing `service_per_s` swallow `burst` at once, then `rate_per_s` for good?

    The arrivals are those of a saturated token bucket (burst = capacity, then its rate);
    service is constant. The queue peaks when the burst lands (the first request is served
    at once, so `burst - 1` wait) and then drains at service_per_s - rate_per_s.
    """
    burst = whole("burst", burst)
    rate = positive("rate_per_s", rate_per_s)
    mu = positive("service_per_s", service_per_s)
    max_wait_s = positive("max_wait_s", max_wait_s) if math.isfinite(max_wait_s) else math.inf
    queue_limit = positive("queue_limit", queue_limit) if math.isfinite(queue_limit) else math.inf
    peak = burst - 1
    worst = peak / mu
    drain = burst / (mu - rate) if mu > rate else math.inf
    reasons = []
    if not math.isfinite(drain):
        reasons.append(f"the rate {rate:g}/s is not below the service rate {mu:g}/s: "
                       "the queue never drains")
    if peak > queue_limit:
        reasons.append(f"the queue peaks at {peak} > queue_limit {queue_limit:g}")
    if worst > max_wait_s:
        reasons.append(f"the last of the burst waits {worst:.3g} s > max_wait_s {max_wait_s:g}")
    return BurstVerdict(peak, worst, drain, rate / mu, not reasons, "; ".join(reasons))


def largest_burst(rate_per_s: float, service_per_s: float, *, max_wait_s: float = math.inf,
                  queue_limit: float = math.inf) -> float:
    """The largest burst :func:`burst_verdict` calls swallowed (inf when nothing bounds it; 0
    when the queue never drains)."""
    rate, mu = positive("rate_per_s", rate_per_s), positive("service_per_s", service_per_s)
    if mu <= rate:
        return 0
    wait = max_wait_s if max_wait_s == math.inf else non_negative("max_wait_s", max_wait_s)
    queue = queue_limit if queue_limit == math.inf else non_negative("queue_limit", queue_limit)
    bound = min(wait * mu, queue)
    return math.inf if math.isinf(bound) else math.floor(bound + 1e-9) + 1


def saturated_bucket_arrivals(capacity: int, rate_per_s: float, duration_s: float) -> np.ndarray:
    """Admission times of a full token bucket fed more than it admits: `capacity` at 0, then
    one every 1/rate seconds until `duration_s` (the worst case the bucket allows)."""
    capacity = whole("capacity", capacity)
    rate = positive("rate_per_s", rate_per_s)
    steady = np.arange(1, int(math.floor(positive("duration_s", duration_s) * rate)) + 1) / rate
    return np.concatenate([np.zeros(capacity), steady])


def burst_report(burst: int, rate_per_s: float, service_per_s: float, *,
                 max_wait_s: float = math.inf, queue_limit: float = math.inf) -> dict:
    """:func:`burst_verdict` and :func:`largest_burst` as one record (``ratelab burst``).

    Keys: the inputs (``burst``, ``rate_per_s``, ``service_per_s``, ``max_wait_s``,
    ``queue_limit``; None for no bound), the verdict's fields (``swallowed``,
    ``peak_queue``, ``worst_wait_s``, ``drain_s``: None when the queue never drains,
    ``utilisation``, ``reason``) and ``largest_burst`` (None when any burst fits).
    """
    v = burst_verdict(burst, rate_per_s, service_per_s, max_wait_s=max_wait_s,
                      queue_limit=queue_limit)
    fits = largest_burst(rate_per_s, service_per_s, max_wait_s=max_wait_s,
                         queue_limit=queue_limit)
    bound = lambda x: None if math.isinf(x) else x  # noqa: E731
    return {"burst": int(burst), "rate_per_s": float(rate_per_s),
            "service_per_s": float(service_per_s), "max_wait_s": bound(float(max_wait_s)),
            "queue_limit": bound(float(queue_limit)), "swallowed": v.swallowed,
            "peak_queue": v.peak_queue, "worst_wait_s": v.worst_wait_s,
            "drain_s": bound(v.drain_s), "utilisation": v.utilisation, "reason": v.reason,
            "largest_burst": bound(fits)}
