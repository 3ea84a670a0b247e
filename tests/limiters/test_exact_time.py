"""Decisions do not depend on where the clock starts, and a client at exactly the rate passes.

Every limiter counts time in whole microseconds (ticks, ``ratelab.clock``), so the
same trace shifted by any whole number of seconds (calendar windows: whole windows) gets the
same decisions. Times lie on a grid the shift keeps exact in floating point: multiples of
2**-10 s for the decisions, and of 2**-6 s (15,625 ticks, a whole number of both) where
retry_after and reset_after are compared too — those are float waits a client adds to its own
`now`, and below 2**33 s such a sum reads back as the tick it was computed for.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.limiters import NAMES, make

ORIGINS = [0.0, 1e6, 8.1e8, 1.758e9, 4e9]
CALENDAR = {"fixed-window", "sliding-window-counter"}

PARAMS = {
    "token-bucket": [{"rate": 10, "capacity": 1}, {"rate": 7, "capacity": 3},
                     {"rate": 0.3, "capacity": 2.5}, {"rate": 100 / 60, "capacity": 100}],
    "leaky-bucket": [{"rate": 10, "capacity": 1}, {"rate": 7, "capacity": 3, "mode": "shape"},
                     {"rate": 0.3, "capacity": 2.5, "mode": "shape"}],
    "fixed-window": [{"limit": 3, "window": 1}, {"limit": 2.5, "window": 0.25,
                                                  "count_rejected": True}],
    "sliding-window-log": [{"limit": 3, "window": 1}, {"limit": 4, "window": 0.3},
                           {"limit": 2.5, "window": 0.7, "count_rejected": True}],
    "sliding-window-counter": [{"limit": 3, "window": 1}, {"limit": 5, "window": 2},
                               {"limit": 4, "window": 0.25, "count_rejected": True}],
    "gcra": [{"rate": 10, "burst": 0}, {"rate": 7, "burst": 2}, {"rate": 0.3, "burst": 4}],
    "nginx": [{"rate": 10, "burst": 0}, {"rate": 7, "burst": 2, "nodelay": True},
              {"rate": 0.3, "burst": 3, "delay": 1}],
    "haproxy": [{"period": 1, "limit": 3}, {"period": 0.25, "limit": 4, "compare": "ge"},
                {"period": 0.999, "limit": 2, "expire": 0.5}],
}
CASES = [(n, p) for n in NAMES for p in PARAMS[n]]
IDS = [f"{n}-{i}" for n in NAMES for i in range(len(PARAMS[n]))]


def test_every_registry_algorithm_is_covered():
    assert set(PARAMS) == set(NAMES)


@st.composite
def schedules(draw, grid: float, max_cost: float):
    """(time, key, cost) requests, sorted, on multiples of `grid` seconds, with ties."""
    tick = draw(st.integers(-2**12, 2**12))
    out = []
    for _ in range(draw(st.integers(1, 40))):
        tick += draw(st.sampled_from([0, 0, 1, 3, 64, 100, 1024, 4096, 65536]))
        cost = 1 if max_cost < 2 else draw(st.sampled_from([1, 1, 2, 0.5]))
        out.append((tick * grid, draw(st.sampled_from("ab")), min(cost, max_cost)))
    return out


def offset_of(name: str, params: dict, whole: int) -> float:
    """`whole` seconds, or for calendar windows `whole` windows."""
    return whole * params["window"] if name in CALENDAR else float(whole)


def decisions(name, params, schedule, offset, fields):
    lim = make(name, **params)
    return [tuple(getattr(lim.allow(k, t + offset, c), f) for f in fields)
            for t, k, c in schedule]


@pytest.mark.parametrize("name, params", CASES, ids=IDS)
@examples(40)
@given(data=st.data())
def test_decisions_are_the_same_at_every_origin(name, params, data):
    lim = make(name, **params)
    schedule = data.draw(schedules(2**-10, lim.max_cost))
    offset = offset_of(name, params, data.draw(st.integers(0, 10**10)))
    if name in CALENDAR:
        offset = offset_of(name, params, data.draw(st.integers(0, int(1e10 / params["window"]))))
    fields = ("allowed", "remaining", "delay")
    assert decisions(name, params, schedule, offset, fields) == \
        decisions(name, params, schedule, 0.0, fields)


@pytest.mark.parametrize("name, params", CASES, ids=IDS)
@examples(40)
@given(data=st.data())
def test_every_field_is_the_same_at_every_origin(name, params, data):
    lim = make(name, **params)
    schedule = data.draw(schedules(2**-6, lim.max_cost))
    whole = data.draw(st.integers(0, 8 * 10**9))
    offset = offset_of(name, params, whole if name not in CALENDAR else
                       int(whole / params["window"]))
    fields = ("allowed", "remaining", "retry_after", "reset_after", "delay")
    assert decisions(name, params, schedule, offset, fields) == \
        decisions(name, params, schedule, 0.0, fields)


# ---------------------------------------------------------------- exactly at the rate


def at_the_rate(name, params, origin, per_s, n=1001):
    """How many of `n` requests sent at origin + i / per_s pass."""
    lim = make(name, **params)
    return sum(lim.allow("k", origin + i / per_s).allowed for i in range(n))


AT_THE_RATE = [(name, capacity, rate)
               for name in ["token-bucket", "leaky-bucket/police", "leaky-bucket/shape", "gcra",
                            "nginx"]
               for capacity in [1, 3] for rate in [10, 7, 3, 100 / 60]
               if not (name == "nginx" and capacity == 1 and 1000 % rate)]
"""Every bucket at every rate and capacity, except nginx with no burst at a rate whose period
is not a whole number of milliseconds: there nginx's own arithmetic refuses some requests
(test_nginx_burst_0_at_a_rate_not_whole_ms pins how many at 7 r/s)."""


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("name, capacity, rate", AT_THE_RATE)
def test_a_client_at_exactly_the_rate_always_passes(name, capacity, rate, origin):
    algorithm, _, mode = name.partition("/")
    if algorithm in ("token-bucket", "leaky-bucket"):
        params = {"rate": rate, "capacity": capacity, **({"mode": mode} if mode else {})}
    else:
        params = {"rate": rate, "burst": capacity - 1}
    assert at_the_rate(algorithm, params, origin, rate) == 1001


def test_nginx_burst_0_at_a_rate_not_whole_ms():
    """nginx drains rate x ms // 1000 per update: 1/7 s is 142 or 143 ms, and 142 ms drains
    994 of the 1000 thousandths a request adds, so with no burst to absorb it one request in
    seven is refused — nginx's own arithmetic, the same at every origin."""
    counts = {at_the_rate("nginx", {"rate": 7, "burst": 0}, t0, 7) for t0 in ORIGINS}
    assert counts == {858}


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("name", ["sliding-window-log", "fixed-window"])
@pytest.mark.parametrize("limit, window", [(10, 1), (7, 1), (100, 60), (3, 0.3)])
def test_exactly_the_limit_per_window_always_passes(name, limit, window, origin):
    assert at_the_rate(name, {"limit": limit, "window": window}, origin, limit / window) == 1001


@pytest.mark.parametrize("limit, window, refused", [(10, 1, 99), (7, 1, 143)])
def test_the_counter_refuses_about_one_in_ten_at_the_limit_at_every_origin(limit, window,
                                                                           refused):
    """The documented exception: at exactly the limit the counter's estimate spreads the
    previous window evenly and refuses about one request per window (one in ten at 10 per
    second, one in seven at 7) — identically everywhere."""
    counts = {at_the_rate("sliding-window-counter", {"limit": limit, "window": window}, t0,
                          limit / window) for t0 in ORIGINS}
    assert counts == {1001 - refused}


@pytest.mark.parametrize("name", ["token-bucket", "leaky-bucket"])
def test_the_tie_does_not_compound(name):
    """A client 0.4 tick early every time passes once (its time rounds to the tick it should
    be), and is refused the next time, when its gain, charged in full, reaches a tick."""
    lim = make(name, rate=10, capacity=1)
    t0, gap = 1000.0, 0.1 - 0.4e-6
    answers = [lim.allow("k", t0 + i * gap).allowed for i in range(50)]
    assert answers[:3] == [True, True, False]
    assert 30 <= sum(answers) < 50
