"""Each Lua script against its reference limiter, request by request.

The same schedule goes through the script (on SimStore, and on a real redis-server in the
tests marked ``service``) and through the reference limiter of ``ratelab.limiters``; every
Decision must be equal — allowed, remaining, retry_after, reset_after — at epoch origins as at
0. Hand-made tables first (bursts, clients exactly at the rate or exactly at the limit per
window, window boundaries, costs above 1), then schedules drawn by hypothesis.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from budget import examples

from ratelab.cluster.scripts import (SCRIPTED, ScriptedFixedWindow, ScriptedSlidingLog,
                                     ScriptedTokenBucket, run_program)
from ratelab.limiters import make
from ratelab.store import RedisStore, SimStore
from ratelab.store.errors import StoreError

ORIGINS = [0.0, 8.1e8, 1.758e9, 4e9]
"""Where the schedules start: 0, and Unix times of 1995, 2025 and 2096."""

_prefixes = itertools.count()


def run_both(name: str, params: dict, schedule, conn, origin: float = 0.0, store=None):
    """Run `schedule` ((seconds after `origin`, key, cost) rows, in time order) through the
    script of `name` on `conn` and through its reference; the two lists of Decisions. With a
    SimStore `store`, its clock follows the schedule, so keys expire as they would."""
    scripted, reference = SCRIPTED[name](**params), make(name, **params)
    prefix = f"t{next(_prefixes)}"   # a fresh key space on a shared server
    got, want = [], []
    for dt, key, cost in schedule:
        now = origin + dt
        if store is not None:
            store.set_time(dt)
        got.append(scripted.allow(conn, f"{prefix}:{key}", now, cost))
        want.append(reference.allow(key, now, cost))
    return got, want


def assert_same(name, params, schedule, got, want, origin):
    """Every Decision equal; the first that differs is named with its step."""
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, (f"{name} {params} at origin {origin:g}, step {i} "
                        f"{schedule[i]}: script {g} != reference {w}")
    assert len(got) == len(want) == len(schedule)


# ---------------------------------------------------------------- the tables

AT_RATE = [(i / 10, "a", 1) for i in range(1001)]
"""A client sending exactly 10 per second for 100 s."""

SEVENTHS = [(i / 7, "a", 1) for i in range(300)]
"""Exactly 7 per second: pass points that are not whole microseconds (1/7 s)."""

BURSTS = ([(0.0, "a", 1)] * 5 + [(0.5, "a", 1)] * 3 + [(0.999999, "a", 1), (1.0, "a", 1),
          (1.000001, "a", 1)] + [(1.5, "b", 1)] * 4 + [(2.0, "a", 1)] * 6
          + [(9.75, "a", 1), (10.0, "a", 1), (10.0, "b", 1)])
"""Bursts on two keys, times a microsecond either side of a boundary, a long idle gap."""

COSTS = [(0.0, "a", 3), (0.0, "a", 2), (0.2, "a", 2), (0.4, "a", 1), (0.9, "a", 3),
         (1.0, "a", 3), (1.0, "a", 1), (1.3, "a", 2), (2.6, "a", 3), (2.6, "b", 4)]
"""Costs above 1: partly spent allowances, a cost that fits only once enough has left."""

EXACT_LIMIT = [(i / 10, "a", 1) for i in range(1001)]
"""Exactly the limit per window (10 per 1 s, at i/10): the log and fixed window admit all."""

TABLES = [
    ("token-bucket", {"rate": 10, "capacity": 1}, AT_RATE, True),
    ("token-bucket", {"rate": 7, "capacity": 1}, SEVENTHS, True),
    ("token-bucket", {"rate": 2, "capacity": 3}, BURSTS, None),
    ("token-bucket", {"rate": 2.5, "capacity": 4}, COSTS, None),
    ("token-bucket", {"rate": 0.3, "capacity": 4.5}, COSTS, None),
    ("fixed-window", {"limit": 10, "window": 1.0}, EXACT_LIMIT, True),
    ("fixed-window", {"limit": 3, "window": 1.0}, BURSTS, None),
    ("fixed-window", {"limit": 4, "window": 0.25}, COSTS, None),
    ("fixed-window", {"limit": 5.5, "window": 1.0, "count_rejected": True}, COSTS, None),
    ("sliding-window-log", {"limit": 10, "window": 1.0}, EXACT_LIMIT, True),
    ("sliding-window-log", {"limit": 3, "window": 1.0}, BURSTS, None),
    ("sliding-window-log", {"limit": 4, "window": 1.0}, COSTS, None),
    ("sliding-window-log", {"limit": 5, "window": 1.0, "count_rejected": True}, COSTS, None),
    ("sliding-window-log", {"limit": 7, "window": 1 / 7}, SEVENTHS, True),
    ("sliding-window-counter", {"limit": 10, "window": 1.0}, EXACT_LIMIT, None),
    ("sliding-window-counter", {"limit": 3, "window": 1.0}, BURSTS, None),
    ("sliding-window-counter", {"limit": 4, "window": 1.0}, COSTS, None),
    ("sliding-window-counter", {"limit": 4.5, "window": 0.5, "count_rejected": True}, COSTS,
     None),
]
"""(algorithm, parameters, schedule, whether every request must pass)."""


def check_table(name, params, schedule, all_pass, conn, origin, store=None):
    got, want = run_both(name, params, schedule, conn, origin, store)
    assert_same(name, params, schedule, got, want, origin)
    admitted = sum(d.allowed for d in got)
    if all_pass:
        assert admitted == len(schedule), f"{name} {params} at {origin:g}: {admitted} admitted"
    else:
        assert 0 < admitted < len(schedule)   # the table exercises both answers
    return [(d.allowed, d.remaining) for d in got]


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("name,params,schedule,all_pass", TABLES,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(TABLES)])
def test_each_script_decides_as_its_reference_on_simstore(name, params, schedule, all_pass,
                                                          origin):
    store = SimStore()
    check_table(name, params, schedule, all_pass, store.connect(), origin, store)


def test_the_sliding_counter_script_refuses_about_one_in_ten_at_exactly_the_limit():
    """The counter's lesson survives the port: on traffic exactly at the limit its estimate
    refuses some requests (the reference refuses the same ones), at every origin alike."""
    per_origin = set()
    for origin in ORIGINS:
        got, want = run_both("sliding-window-counter", {"limit": 10, "window": 1.0},
                             EXACT_LIMIT, SimStore().connect(), origin)
        assert got == want
        per_origin.add(tuple(d.allowed for d in got))
    assert len(per_origin) == 1
    refused = len(EXACT_LIMIT) - sum(next(iter(per_origin)))
    assert 50 <= refused <= 150, refused


# ---------------------------------------------------------------- drawn schedules

PARAMS = {
    "token-bucket": st.fixed_dictionaries({
        "rate": st.sampled_from([0.5, 1, 2, 3, 7, 10, 100, 1000 / 3]),
        "capacity": st.sampled_from([1, 2, 3, 5, 10])}),
    **{name: st.fixed_dictionaries({
        "limit": st.sampled_from([1, 2, 3, 5, 10]),
        "window": st.sampled_from([0.1, 0.25, 1.0, 1 / 3, 10.0]),
        "count_rejected": st.booleans()})
       for name in ("fixed-window", "sliding-window-log", "sliding-window-counter")},
}

GAPS = st.one_of(st.just(0.0), st.sampled_from([1e-6, 0.1, 1 / 7, 0.25, 1.0]),
                 st.integers(0, 2_000_000).map(lambda us: us / 1e6),
                 st.floats(0, 3, allow_nan=False))
"""Gaps between requests: ties, a microsecond, rate-like steps, whole microseconds, any."""


@st.composite
def schedules(draw, name):
    params = draw(PARAMS[name])
    top = params.get("capacity", params.get("limit"))
    costs = st.integers(1, int(top)) if name == "sliding-window-log" else \
        st.sampled_from([c for c in (1, 2, 0.5, 1.5, 3) if c <= top])
    rows, t = [], 0.0
    for gap, key, cost in draw(st.lists(st.tuples(GAPS, st.sampled_from("ab"), costs),
                                        min_size=1, max_size=40)):
        t += gap
        rows.append((t, key, cost))
    return params, rows


@pytest.mark.parametrize("name", sorted(SCRIPTED))
@given(data=st.data())
@examples(60, suppress_health_check=[HealthCheck.too_slow])
def test_drawn_schedules_decide_as_the_reference_at_every_origin(name, data):
    params, schedule = data.draw(schedules(name))
    origin = data.draw(st.sampled_from(ORIGINS))
    store = SimStore()
    got, want = run_both(name, params, schedule, store.connect(), origin, store)
    assert_same(name, params, schedule, got, want, origin)


@pytest.mark.parametrize("name", sorted(SCRIPTED))
@given(data=st.data())
@examples(40, suppress_health_check=[HealthCheck.too_slow])
def test_a_script_decides_the_same_when_the_schedule_is_shifted(name, data):
    """Times in whole microseconds, shifted by up to 4e9 s (for the windows, by whole windows:
    they are calendar-aligned): the script's answers (allowed, remaining, and the waits in
    microseconds) do not move."""
    params, schedule = data.draw(schedules(name))
    schedule = [(round(t * 1e6) / 1e6, key, cost) for t, key, cost in schedule]
    ticks = data.draw(st.sampled_from([round(o * 1e6) for o in ORIGINS[1:]])
                      | st.integers(1, 4 * 10**15))
    if "window" in params:
        ticks -= ticks % make(name, **params).window_ticks
    shift = ticks / 1e6

    def answers(origin):
        got, _ = run_both(name, params, schedule, SimStore().connect(), origin)
        return [(d.allowed, d.remaining, round(d.retry_after * 1e6), round(d.reset_after * 1e6))
                for d in got]

    assert answers(shift) == answers(0.0)


# ---------------------------------------------------------------- what is refused


@pytest.mark.parametrize("make_it,word", [
    (lambda: ScriptedTokenBucket(rate=0, capacity=1), "rate"),
    (lambda: ScriptedTokenBucket(rate=True, capacity=1), "rate"),
    (lambda: ScriptedFixedWindow(limit=10, window=2.0**51 / 1e6), "window"),
    (lambda: ScriptedSlidingLog(limit=2, window=-1), "window"),
])
def test_parameters_are_refused_by_name(make_it, word):
    with pytest.raises(ValueError, match=word):
        make_it()


@pytest.mark.parametrize("now,cost,word", [
    (4.6e9, 1, "now"),          # beyond 2**52 microseconds: a double would not hold the ticks
    (-4.6e9, 1, "now"),
    (float("nan"), 1, "now"),
    (0.0, 0, "cost"),
    (0.0, 11, "cost"),          # above the limit: never admitted
    (0.0, 1.5, "cost"),         # the log holds one entry per unit of cost
])
def test_requests_the_scripts_cannot_hold_are_refused_by_name(now, cost, word):
    log = ScriptedSlidingLog(limit=10, window=1.0)
    with pytest.raises(ValueError, match=word):
        log.allow(SimStore().connect(), "k", now, cost)


@pytest.mark.parametrize("name", sorted(SCRIPTED))
def test_a_script_answers_an_error_for_times_that_are_not_whole_ticks(name):
    scripted = SCRIPTED[name](**{"token-bucket": {"rate": 1, "capacity": 1}}.get(
        name, {"limit": 2, "window": 1.0}))
    keys, args = scripted.arguments("k", 5, 1, "m")
    args[2] = "5.5"
    conn = SimStore().connect()
    with pytest.raises(StoreError, match="now"):
        run_program(scripted._eval(keys, args), conn)


# ---------------------------------------------------------------- on a real redis-server


@pytest.fixture(scope="module")
def real(redis_url):
    store = RedisStore(redis_url)
    conn = store.connect("lua-references")
    yield conn
    conn.close()
    store.close()


@pytest.mark.service
@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("name,params,schedule,all_pass", TABLES,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(TABLES)])
def test_each_script_decides_as_its_reference_on_redis(real, name, params, schedule, all_pass,
                                                       origin):
    on_redis = check_table(name, params, schedule, all_pass, real, origin)
    store = SimStore()
    assert on_redis == check_table(name, params, schedule, all_pass, store.connect(), origin,
                                   store)


@pytest.mark.service
@pytest.mark.parametrize("name", sorted(SCRIPTED))
@given(data=st.data())
@examples(25, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_drawn_schedules_decide_as_the_reference_on_redis(real, name, data):
    params, schedule = data.draw(schedules(name))
    origin = data.draw(st.sampled_from(ORIGINS))
    got, want = run_both(name, params, schedule, real, origin)
    assert_same(name, params, schedule, got, want, origin)


@pytest.mark.service
def test_a_whole_count_is_stored_as_an_integer_on_redis(real):
    """The fixed window's counter holds "3" after three requests, as INCR would leave it, and
    the token bucket's refill time is the integer tick."""
    prefix = f"t{next(_prefixes)}"
    window = ScriptedFixedWindow(limit=5, window=1.0)
    for _ in range(3):
        window.allow(real, prefix, 1.758e9 + 0.25)
    assert real.execute("GET", f"{prefix}:1758000000") == "3"
    ScriptedTokenBucket(rate=10, capacity=1).allow(real, prefix, 1.758e9 + 0.1)
    assert real.execute("GET", f"{prefix}:ts") == "1758000000100000"
