"""Invariants of the reference limiters, each stated once and searched by hypothesis.

Times are drawn on a dyadic grid (multiples of 1/16 s) and rates are powers of two where two
algorithms are compared decision by decision: there every sum is exact in binary floating
point, so "equal in exact arithmetic" can be asserted as "equal on every request".
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.limiters import (GCRA, FixedWindow, LeakyBucket, NginxLimitReq, SlidingWindowCounter,
                              SlidingWindowLog, TokenBucket, make)

EXAMPLES = examples(250)
TICK = 1 / 16


@st.composite
def schedules(draw, max_len=60, keys=3, max_cost=1):
    """Sorted (time, key, cost) requests on a 1/16-s grid, with many ties."""
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 8, 16, 40]), min_size=1,
                         max_size=max_len))
    out, tick = [], draw(st.integers(0, 32))
    for g in gaps:
        tick += g
        out.append((tick * TICK, draw(st.integers(0, keys - 1)),
                    draw(st.integers(1, max_cost))))
    return out


def admitted(limiter, schedule):
    """[(time, key, cost, Decision)] for every request of `schedule`."""
    return [(t, k, c, limiter.allow(k, t, c)) for t, k, c in schedule]


def per_key(rows, key):
    return [(t, c) for t, k, c, d in rows if k == key and d.allowed]


@EXAMPLES
@given(schedules(max_cost=3), st.sampled_from([0.5, 1, 2, 3, 10]), st.integers(3, 8))
def test_token_bucket_admits_at_most_capacity_plus_rate_times_span(schedule, rate, capacity):
    rows = admitted(TokenBucket(rate, capacity), schedule)
    for key in range(3):
        got = per_key(rows, key)
        for i, (ti, _) in enumerate(got):
            total = 0
            for tj, cj in got[i:]:
                total += cj
                assert total <= capacity + rate * (tj - ti) + 1e-9


@EXAMPLES
@given(schedules(max_cost=2), st.integers(2, 6), st.sampled_from([0.5, 1.0, 2.5]),
       st.booleans())
def test_sliding_log_never_exceeds_the_limit_in_any_trailing_window(schedule, limit, window,
                                                                    count_rejected):
    rows = admitted(SlidingWindowLog(limit, window, count_rejected), schedule)
    for key in range(3):
        got = per_key(rows, key)
        for t, _ in got:
            assert sum(c for s, c in got if t - window < s <= t) <= limit


@EXAMPLES
@given(schedules(), st.integers(1, 6), st.sampled_from([0.5, 1.0, 2.0]), st.booleans())
def test_fixed_window_limit_per_calendar_window_and_2x_per_trailing_window(
        schedule, limit, window, count_rejected):
    rows = admitted(FixedWindow(limit, window, count_rejected), schedule)
    for key in range(3):
        got = [t for t, _ in per_key(rows, key)]
        for t in got:
            k = t // window
            assert sum(1 for s in got if s // window == k) <= limit
            assert sum(1 for s in got if t - window < s <= t) <= 2 * limit


@EXAMPLES
@given(schedules(max_cost=2), st.sampled_from([1, 2, 4, 8]), st.integers(2, 6))
def test_shaped_leaky_bucket_departures_are_spaced_by_at_least_cost_over_rate(schedule, rate,
                                                                             capacity):
    rows = admitted(LeakyBucket(rate, capacity, mode="shape"), schedule)
    for key in range(3):
        departures = [(t + d.delay, c) for t, k, c, d in rows if k == key and d.allowed]
        for (a, ca), (b, _) in zip(departures, departures[1:]):
            assert b - a >= ca / rate - 1e-9


@EXAMPLES
@given(schedules(max_cost=2), st.sampled_from([0.25, 0.5, 1, 2, 4]), st.integers(1, 6))
def test_gcra_decides_exactly_like_a_token_bucket_of_burst_plus_one(schedule, rate, burst):
    gcra, bucket = GCRA(rate, burst), TokenBucket(rate, burst + 1)
    for t, k, c in schedule:
        assert gcra.allow(k, t, c).allowed == bucket.allow(k, t, c).allowed, (t, k, c)


@EXAMPLES
@given(schedules(), st.integers(1, 5), st.integers(0, 6))
def test_nginx_nodelay_decides_like_a_token_bucket_of_burst_plus_one_at_whole_rates(
        schedule, rate, burst):
    """Holds exactly for whole requests per second on whole milliseconds (1/16 s is 62.5 ms,
    so the grid here is 1/8 s); below 1 r/s it does not (see test_gcra_nginx.py)."""
    nginx, bucket = NginxLimitReq(rate, burst, nodelay=True), TokenBucket(rate, burst + 1)
    for t, k, c in schedule:
        t = 2 * t  # multiples of 1/8 s: whole milliseconds, exact in binary
        assert nginx.allow(k, t).allowed == bucket.allow(k, t).allowed, (t, k)


@EXAMPLES
@given(schedules(), st.integers(1, 6), st.sampled_from([0.5, 1.0, 2.0]))
def test_sliding_counter_stays_within_2x_and_its_estimate_within_the_limit(schedule, limit,
                                                                         window):
    c = SlidingWindowCounter(limit, window)
    rows = admitted(c, schedule)
    for key in range(3):
        got = [t for t, _ in per_key(rows, key)]
        for t in got:
            assert sum(1 for s in got if t - window < s <= t) <= 2 * limit
            assert c.inspect(key, schedule[-1][0])["estimate"] <= limit + 1e-9


PARAMS = {
    "token-bucket": {"rate": 2, "capacity": 3},
    "leaky-bucket": {"rate": 2, "capacity": 3, "mode": "shape"},
    "fixed-window": {"limit": 3, "window": 1},
    "sliding-window-log": {"limit": 3, "window": 1},
    "sliding-window-counter": {"limit": 3, "window": 1},
    "gcra": {"rate": 2, "burst": 2},
    "nginx": {"rate": 2, "burst": 2},
    "haproxy": {"period": 1, "limit": 3},
}


@EXAMPLES
@given(schedules(), st.sampled_from(sorted(PARAMS)))
def test_peek_answers_like_allow_and_changes_nothing(schedule, name):
    lim, twin = make(name, **PARAMS[name]), make(name, **PARAMS[name])
    for t, k, _ in schedule:
        seen = lim.peek(k, t)
        assert lim.peek(k, t) == seen           # peeking twice: same answer
        assert lim.allow(k, t) == seen == twin.allow(k, t)
