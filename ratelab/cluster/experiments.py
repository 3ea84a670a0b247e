"""The measured claims: each function runs one experiment and returns plain numbers.

The CLI (``ratelab race``) and notebooks 06 and 07 call these; tests check their values.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Callable, Sequence

import numpy as np

from ..limiters.base import non_negative, positive, whole
from ..clock import to_ticks
from ..store.real import RedisStore
from ..store.sim import SimStore
from .interleave import Outcome, interleavings
from .sim import Faults, Latency, Request, Run, burst, simulate, steady
from .strategies import Strategy, make_strategy
from .threads import run_threads

RACE_WINDOW_S = 60.0
"""Races run inside one 60 s calendar window: every request falls in window 0."""


@dataclass(frozen=True)
class RaceResult:
    """One race: how many of `requests` were admitted against `limit`."""

    strategy: str
    store: str
    gateways: int
    requests: int
    limit: int
    admitted: int
    over_admitted: int
    round_trips_per_request: float

    def line(self) -> str:
        """One readable line."""
        return (f"{self.strategy}: admitted {self.admitted} of {self.requests} requests "
                f"against a limit of {self.limit} ({self.gateways} gateways, {self.store}); "
                f"over-admitted {self.over_admitted}; "
                f"{self.round_trips_per_request:.2f} round trips per request")

    def as_dict(self) -> dict:
        """The fields as a dict (for --json)."""
        return asdict(self)


def _strategy(name: str, limit: int, gateways: int, **params) -> Strategy:
    return make_strategy(name, limit=limit, window_s=RACE_WINDOW_S, gateways=gateways, **params)


def race(strategy: str, gateways: int = 4, requests: int = 200, limit: int = 100, *,
         store: str = "sim", latency: Latency = Latency("uniform", 0.0005, 0.002),
         burst_s: float = 0.05, think_s: float = 0.0, seed: int = 0, **params) -> RaceResult:
    """A burst of `requests` at `gateways` gateways, all inside one window, on a store.

    On "sim" the requests arrive at uniform random times over `burst_s` seconds and travel
    with `latency` (seeded). On a redis:// URL every gateway is a real thread with its own
    connection, all starting together, with `think_s` between a reply and the next command;
    their clock is held at 0.5 s so that every request falls in the same window.
    """
    gateways, requests, limit = whole("gateways", gateways), whole("requests", requests), \
        whole("limit", limit)
    strat = _strategy(strategy, limit, gateways, **params)
    if store == "sim":
        rng = np.random.default_rng(seed)
        run = simulate(strat, burst(requests, gateways, burst_s, rng), latency=latency,
                       seed=seed)
        admitted, rtt = run.admitted, run.round_trips_per_request()
    else:
        real = RedisStore(store)
        try:
            key = f"ratelab:race:{strategy}:{seed}"
            keys = [f"{key}:{k}" for k in ("0", "-1", "tokens", "ts", "log")]
            real.execute("DEL", *keys)
            tr = run_threads(strat, real, requests, key=key, think_s=think_s,
                             clock=lambda: 0.5)
            real.execute("DEL", *keys)
        finally:
            real.close()
        admitted, rtt = tr.admitted, tr.round_trips_per_request()
    return RaceResult(strategy, "sim" if store == "sim" else "redis", gateways, requests, limit,
                      admitted, max(0, admitted - limit), rtt)


# ---------------------------------------------------------------- the race, drawn


def both_read_99(strategy: str = "naive", latency_s: float = 0.001, gap_s: float = 0.0002) -> Run:
    """Two gateways, one place left (the counter at 99 of 100), two requests `gap_s` apart."""
    store = SimStore()
    store.execute("SET", "rl:0", "99")
    strat = _strategy(strategy, 100, 2)
    reqs = [Request(0, 0.0, 0, "alice"), Request(1, gap_s, 1, "bob")]
    return simulate(strat, reqs, store=store, latency=Latency("fixed", latency_s))


# ---------------------------------------------------------------- exhaustive interleavings


def one_place_left(strategy: str, limit: int = 100, now: float = 0.5) -> Callable[[SimStore], None]:
    """A store setup where exactly one more request fits the limit, for `strategy`'s keys."""

    def setup(store: SimStore) -> None:
        now_t = to_ticks(now)
        if strategy == "lua-token-bucket":
            store.execute("SET", "rl:tokens", "1")
            store.execute("SET", "rl:ts", now_t)
        elif strategy == "lua-sliding-log":  # scores in ticks, one a millisecond apart
            for i in range(limit - 1):
                store.execute("ZADD", "rl:log", now_t - 1000 * (i + 1), f"earlier:{i}")
        else:
            store.execute("SET", "rl:0", str(limit - 1))

    return setup


def exhaustive(strategy: str, clients: int = 2, limit: int = 100, **params) -> dict:
    """Every interleaving of `clients` requests when one place is left: how many over-admit."""
    outcomes = interleavings(lambda: _strategy(strategy, limit, clients, **params), clients,
                             setup=one_place_left(strategy, limit), counter_key="rl:0")
    bad = [o for o in outcomes if o.total_admitted > 1]
    return {"strategy": strategy, "clients": clients, "schedules": len(outcomes),
            "over_admitting": len(bad), "example": bad[0] if bad else None}


def show_schedule(outcome: Outcome) -> str:
    """A schedule as lines "client k: COMMAND -> reply"."""
    names = "ABCD"
    return "\n".join(f"{names[i]}: {what} -> {reply}" for i, what, reply in outcome.steps)


# ---------------------------------------------------------------- uneven load, sync, skew


def uneven_load(weights: Sequence[float], limit: int = 100, requests: int = 100,
                seed: int = 0) -> dict:
    """limit/N per gateway vs one shared counter, when a load balancer sends `weights` of the
    traffic to each gateway: total admitted, and requests a shared counter would have taken
    that the split rejected."""
    gateways = len(weights)
    rng = np.random.default_rng(seed)
    reqs = burst(requests, gateways, 0.05, rng, weights=weights)
    split = simulate(_strategy("local-split", limit, gateways), reqs, seed=seed)
    shared = simulate(_strategy("lua", limit, gateways), reqs, seed=seed)
    per_gw = [sum(d.allowed for d in split.decisions if d.gateway == g) for g in range(gateways)]
    sent = [sum(r.gateway == g for r in reqs) for g in range(gateways)]
    return {"weights": list(weights), "sent": sent, "split_admitted": per_gw,
            "split_total": split.admitted, "shared_total": shared.admitted,
            "unfair_rejections": shared.admitted - split.admitted}


def async_overshoot(sync_interval_s: float, gateways: int = 4, limit: int = 100,
                    rate_per_s: float = 2000.0, duration_s: float = 5.0, seed: int = 0,
                    latency: Latency = Latency("fixed", 0.001)) -> dict:
    """Local counting with a push every `sync_interval_s`: the worst and mean admissions per
    1 s window against `limit`, under steady traffic `rate_per_s` spread over gateways."""
    rng = np.random.default_rng(seed)
    reqs = steady(rate_per_s, duration_s, gateways, rng)
    strat = make_strategy("async", limit=limit, window_s=1.0, gateways=gateways,
                          sync_interval_s=positive("sync_interval_s", sync_interval_s))
    run = simulate(strat, reqs, latency=latency, seed=seed)
    per = run.admitted_per_window()
    return {"sync_interval_s": sync_interval_s, "worst_window": max(per.values()),
            "mean_over": float(np.mean([max(0, n - limit) for n in per.values()])),
            "round_trips_per_request": run.round_trips_per_request()}


def skew_error(skew_s: float, strategy: str = "lua", limit: int = 100, gateways: int = 2,
               rate_per_s: float = 400.0, duration_s: float = 10.0, seed: int = 0) -> dict:
    """Gateway 1's clock runs `skew_s` ahead (1 s windows): the share of requests counted in
    the wrong window, and admissions per true calendar window against the limit."""
    skew_s = non_negative("skew_s", skew_s)
    rng = np.random.default_rng(seed)
    reqs = steady(rate_per_s, duration_s, gateways, rng)
    skews = [0.0] + [skew_s] * (gateways - 1)
    strat = make_strategy(strategy, limit=limit, window_s=1.0, gateways=gateways)
    run = simulate(strat, reqs, skew_s=skews, latency=Latency("fixed", 0.001), seed=seed)
    wrong = sum(math.floor(r.time) != math.floor(r.time + skews[r.gateway]) for r in reqs)
    per = [n for k, n in run.admitted_per_window().items() if 0 <= k < duration_s]
    return {"skew_s": skew_s, "wrong_window": wrong / len(reqs),
            "worst_window": max(per),
            "mean_abs_error": float(np.mean([abs(n - limit) for n in per]))}


# ---------------------------------------------------------------- store faults


def outage(policy: dict[str, str], *, strategy: str = "lua", limit: int = 50,
           outage: tuple[float, float] = (2.0, 4.0), rate_per_s: float = 80.0,
           duration_s: float = 6.0, timeout_s: float = 0.05, seed: int = 0,
           endpoints: Sequence[str] = ("login", "search"), users: int = 20) -> Run:
    """Steady traffic from `users` users to `endpoints` (one counter per endpoint, 1 s
    windows), the store down during `outage`, each endpoint failing open or closed by
    `policy`. The same seed gives the same requests whatever the outage."""
    rng = np.random.default_rng(seed)
    reqs = steady(rate_per_s, duration_s, 2, rng, endpoints=endpoints)
    who = rng.integers(0, whole("users", users), len(reqs))
    reqs = [replace(r, key=r.endpoint, client=f"u{u:02d}") for r, u in zip(reqs, who)]
    faults = Faults(outages=(outage,), timeout_s=timeout_s, policy=dict(policy))
    strat = make_strategy(strategy, limit=limit, window_s=1.0, gateways=2)
    return simulate(strat, reqs, faults=faults, latency=Latency("uniform", 0.0005, 0.002),
                    seed=seed)


def outage_effect(policy: dict[str, str], outage: tuple[float, float] = (2.0, 4.0),
                  limit: int = 50, **kwargs) -> dict:
    """Per endpoint, what the outage did: admissions beyond the limit (summed over 1 s
    windows: what slipped through), and requests failed closed that a healthy store would have
    admitted (locked out) — with how many distinct users that was."""
    broken = _outage_run(policy, outage=outage, limit=limit, **kwargs)
    healthy = _outage_run(policy, outage=(-2.0, -1.0), limit=limit, **kwargs)
    out = {}
    for endpoint in sorted({d.endpoint for d in broken.decisions}):
        per: dict[int, int] = {}
        for d in broken.decisions:
            if d.endpoint == endpoint and d.allowed:
                per[math.floor(d.time)] = per.get(math.floor(d.time), 0) + 1
        locked = [b for b, h in zip(broken.decisions, healthy.decisions)
                  if b.endpoint == endpoint and b.how == "fail-closed" and h.allowed]
        out[endpoint] = {
            "policy": policy.get(endpoint, "open"),
            "requests": sum(d.endpoint == endpoint for d in broken.decisions),
            "failed_open": sum(d.endpoint == endpoint and d.how == "fail-open"
                               for d in broken.decisions),
            "failed_closed": sum(d.endpoint == endpoint and d.how == "fail-closed"
                                 for d in broken.decisions),
            "slipped_through": sum(max(0, n - limit) for n in per.values()),
            "locked_out": len(locked),
            "users_locked_out": len({b.client for b in locked}),
        }
    return out


_outage_run = outage
