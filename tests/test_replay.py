"""replay(): the compiled engine equals the reference engine on every request.

The reference limiters are the specification; the numba kernels repeat their arithmetic. These
tests hold the two together on random traces (hypothesis: many keys, ties, times exactly on
window boundaries, dyadic and awkward rates, costs), on a made-up timeline per algorithm, and
on the recorded traces.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from budget import examples

import ratelab
from ratelab.limiters import make
from ratelab.replay import COUNTERS, counter_kind, replay
from ratelab.traces import Trace

FIELDS = ("allowed", "delay", "counter", "remaining", "retry_after")

# Rates and windows: dyadic ones (exact in binary, so times land exactly on boundaries) and
# awkward ones (0.3, 100/60) whose rounding the two engines must share.
RATES = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 0.3, 0.7, 3.0, 100 / 60, 7.0, 1000.0]
WINDOWS = [0.125, 0.25, 0.5, 1.0, 2.0, 60.0, 0.3, 0.1]
LIMITS = [1.0, 2.0, 3.0, 5.0, 2.5, 0.5]
GAPS = [0.0, 0.0, 0.0, 1 / 1024, 0.125, 0.25, 0.5, 1.0, 2.0, 0.1, 0.3, 0.001, 0.0005, 60.0,
        61.0, 150.0]
COSTS = [1.0, 1.0, 0.5, 0.25, 2.0, 1.5, 0.1, 0.3, 0.7, 3.0]
STARTS = [0.0, 0.0, 1000.0, 1_700_000_000.0, -7.25]

ALGORITHMS = {
    "token-bucket": st.fixed_dictionaries(
        {"rate": st.sampled_from(RATES), "capacity": st.sampled_from(LIMITS + [10.0])}),
    "leaky-bucket/police": st.fixed_dictionaries(
        {"rate": st.sampled_from(RATES), "capacity": st.sampled_from(LIMITS + [10.0]),
         "mode": st.just("police")}),
    "leaky-bucket/shape": st.fixed_dictionaries(
        {"rate": st.sampled_from(RATES), "capacity": st.sampled_from(LIMITS + [10.0]),
         "mode": st.just("shape")}),
    **{name: st.fixed_dictionaries(
        {"limit": st.sampled_from(LIMITS), "window": st.sampled_from(WINDOWS),
         "count_rejected": st.booleans()})
       for name in ("fixed-window", "sliding-window-log", "sliding-window-counter")},
    "gcra": st.fixed_dictionaries(
        {"rate": st.sampled_from(RATES), "burst": st.sampled_from([0, 1, 2, 4, 7, 99])}),
    # nginx: rates below 1/60 per s (0.01, 0.005) make the LRU expiry of idle nodes visible
    "nginx": st.sampled_from(RATES + [0.01, 0.005, 0.3333]).flatmap(
        lambda rate: st.integers(0, 5).flatmap(
            lambda burst: st.sampled_from(
                [{"nodelay": True}] + [{"delay": d} for d in range(burst + 1)]).map(
                lambda extra: {"rate": rate, "burst": burst, **extra}))),
    # haproxy: 1 and 2 ms periods and 999 ms (odd: each rotation starts 1 ms early); expiry
    # shorter than, equal to and beyond two periods
    "haproxy": st.fixed_dictionaries(
        {"period": st.sampled_from([0.001, 0.002, 0.125, 0.25, 0.999, 1.0, 2.0, 60.0, 0.3]),
         "limit": st.sampled_from([2, 3, 5, 1]), "compare": st.sampled_from(["gt", "ge"]),
         "expire": st.sampled_from([None, 0.001, 0.3, 1.0, 120.0])}).filter(
        lambda p: p["compare"] == "gt" or p["limit"] >= 2),
}
REQUESTS_ONLY = ("nginx", "haproxy")
"""The algorithms that count requests one at a time: a cost column of ones, or none."""


def algorithm_of(kind: str) -> str:
    return kind.split("/")[0]


@st.composite
def traces(draw, max_cost: float, whole: bool = False) -> Trace:
    """Random traces: 1 to 40 keys, ties, dyadic gaps landing on boundaries, long idle gaps."""
    n = draw(st.integers(0, 150))
    n_keys = draw(st.sampled_from([1, 2, 3, 5, 12, 40]))
    gaps = draw(st.lists(st.sampled_from(GAPS), min_size=n, max_size=n))
    start = draw(st.sampled_from(STARTS))
    time = start + np.cumsum(np.array(gaps, dtype=np.float64))
    key = np.array(draw(st.lists(st.integers(0, n_keys - 1), min_size=n, max_size=n)),
                   dtype=np.int32)
    cost = None
    if whole:  # nginx and haproxy count requests: a cost column of ones, or none
        cost = np.ones(n) if draw(st.booleans()) else None
    elif max_cost < 1 or draw(st.booleans()):  # below 1 only a cost column can pass
        cost = np.minimum(draw(st.lists(st.sampled_from(COSTS), min_size=n, max_size=n)),
                          max_cost)
    return Trace(time, key, cost, [f"k{i}" for i in range(n_keys)])


def both(limiter, trace, **kw):
    """The compiled and the reference results for one limiter and trace."""
    return (replay(limiter, trace, engine="compiled", progress=False, **kw),
            replay(limiter, trace, engine="reference", progress=False, **kw))


def assert_same(compiled, reference, fields=FIELDS) -> None:
    """Equal on every request, or an error naming the first differing request."""
    for f in fields:
        a, b = getattr(compiled, f), getattr(reference, f)
        if not np.array_equal(a, b):
            i = int(np.flatnonzero(a != b)[0])
            t, k = compiled.trace.time[i], compiled.trace.key[i]
            raise AssertionError(f"{f} differs at request {i} (t={t!r}, key={k}): "
                                 f"compiled {a[i]!r}, reference {b[i]!r}")


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(ALGORITHMS))
def test_compiled_equals_reference_on_random_traces(kind):
    """Every decision, delay, counter reading, remaining and retry_after is the reference's."""

    @examples(200, suppress_health_check=[HealthCheck.too_slow])
    @given(params=ALGORITHMS[kind], data=st.data())
    def check(params, data):
        limiter = make(algorithm_of(kind), **params)
        trace = data.draw(traces(limiter.max_cost, whole=limiter.name in REQUESTS_ONLY))
        compiled, reference = both(limiter, trace, details=True)
        assert_same(compiled, reference)
        lean = replay(limiter, trace, progress=False)  # details=False: the same three columns
        assert_same(lean, reference, ("allowed", "delay", "counter"))

    check()


# ---------------------------------------------------------------- a made-up timeline

# (algorithm, params, [(t, key)], expected allowed, expected counter, expected delay)
TIMELINE = [
    ("token-bucket", {"rate": 1, "capacity": 2},
     [(0, 0), (0, 0), (0, 0), (0.5, 0), (1.0, 0), (1.0, 1)],
     [1, 1, 0, 0, 1, 1], [2, 1, 0, 0.5, 1.0, 2], None),
    ("leaky-bucket", {"rate": 1, "capacity": 2, "mode": "police"},
     [(0, 0), (0, 0), (0, 0), (1.5, 0)],
     [1, 1, 0, 1], [0, 1, 2, 0.5], None),
    ("leaky-bucket", {"rate": 2, "capacity": 2, "mode": "shape"},
     [(0, 0), (0, 0), (0, 0), (0.5, 0), (1.0, 0)],
     [1, 1, 0, 1, 1], [0, 1, 2, 1, 1], [0, 0.5, 0, 0.5, 0.5]),
    # the window [1, 2) starts empty: the request at t=1 exactly is in the new window
    ("fixed-window", {"limit": 2, "window": 1},
     [(0, 0), (0.5, 0), (0.99, 0), (1.0, 0), (1.0, 1)],
     [1, 1, 0, 1, 1], [0, 1, 2, 0, 0], None),
    ("fixed-window", {"limit": 2, "window": 1, "count_rejected": True},
     [(0, 0), (0.5, 0), (0.6, 0), (0.7, 0), (1.0, 0)],
     [1, 1, 0, 0, 1], [0, 1, 2, 3, 0], None),
    # (t - W, t] is half-open: the entry at t=0 has left the window at t=1
    ("sliding-window-log", {"limit": 2, "window": 1},
     [(0, 0), (0.5, 0), (0.75, 0), (1.0, 0), (1.25, 0)],
     [1, 1, 0, 1, 0], [0, 1, 2, 1, 2], None),
    ("sliding-window-log", {"limit": 2, "window": 1, "count_rejected": True},
     [(0, 0), (0.5, 0), (0.75, 0), (1.0, 0), (1.5, 0)],
     [1, 1, 0, 0, 0], [0, 1, 2, 2, 2], None),
    # 2 in [0,1); at t=1.25: 2 x 0.75 = 1.5, + 1 is over; at t=1.5: 2 x 0.5 = 1, + 1 fits;
    # at t=2.75 the one request of [1,2) weighs 0.25
    ("sliding-window-counter", {"limit": 2, "window": 1},
     [(0, 0), (0.5, 0), (1.25, 0), (1.5, 0), (2.75, 0)],
     [1, 1, 0, 1, 1], [0, 1, 1.5, 1.0, 0.25], None),
    ("gcra", {"rate": 1, "burst": 1},
     [(0, 0), (0, 0), (0, 0), (0.5, 0), (1.0, 0)],
     [1, 1, 0, 0, 1], [2, 1, 0, 0.5, 1], None),
    # nginx, 1 r/s burst 2 (delay): excess 0, 1, 2 thousand, held 0, 1, 2 s; the 4th is over,
    # and so is the 5th: 2000 - 500 drained + 1000 > 2000
    ("nginx", {"rate": 1, "burst": 2},
     [(0, 0), (0, 0), (0, 0), (0, 0), (0.5, 0)],
     [1, 1, 1, 0, 0], [0, 0, 1, 2, 1.5], [0, 1, 2, 0, 0]),
    # nginx LRU expiry: rate 0.01/s drains only 600 thousandths in 60 s; key 1's arrival at
    # t=60 deletes key 0's idle node, so key 0 comes back new (excess 0) and passes
    ("nginx", {"rate": 0.01, "burst": 0},
     [(0, 0), (60, 1), (61, 0)],
     [1, 1, 1], [0, 0, 0], [0, 0, 0]),
    # ... while without a new key in between the node stays: 1000 - 610 = 390 > 0, rejected
    ("nginx", {"rate": 0.01, "burst": 0},
     [(0, 0), (61, 0)],
     [1, 0], [0, 0], [0, 0]),
    # nginx expires only after 60 s idle: at 59.999 s key 0 is kept
    ("nginx", {"rate": 0.01, "burst": 0},
     [(0, 0), (59.999, 1), (61, 0)],
     [1, 1, 0], [0, 0, 0], [0, 0, 0]),
    # haproxy gt 2 per second: the refused third request counts; at 1.2 s the period rotates
    # (prev 3, weight 0.8: 1 + 2 = 3 > 2, counted), at 1.9 s 2 + 3 x 0.1 floored = 2 passes;
    # after two idle periods it starts afresh. The counter is the rate before the request.
    ("haproxy", {"period": 1, "limit": 2},
     [(0.0005, 0), (0.0005, 0), (0.0005, 0), (1.2, 0), (1.9, 0), (5, 0)],
     [1, 1, 0, 0, 1, 1], [0, 1, 2, 2, 1, 0], None),
    # a period of 2 ms from a key first seen at ms 1 begins at ms 0 (even): at ms 3 it has
    # rotated once (prev 3, 1 ms of 2 left: 1 + 3 // 2 = 2), where from ms 1 it would not have
    ("haproxy", {"period": 0.002, "limit": 2},
     [(0.001, 0), (0.001, 0), (0.001, 0), (0.003, 0)],
     [1, 1, 0, 1], [0, 1, 2, 1], None),
]


@pytest.mark.parametrize("engine", ["compiled", "reference"])
@pytest.mark.parametrize("row", TIMELINE, ids=[f"{r[0]}-{i}" for i, r in enumerate(TIMELINE)])
def test_timeline(row, engine):
    name, params, requests, allowed, counter, delay = row
    trace = Trace(np.array([t for t, _ in requests], dtype=float),
                  np.array([k for _, k in requests], dtype=np.int32))
    result = replay(make(name, **params), trace, engine=engine, progress=False)
    for i, (t, k) in enumerate(requests):
        step = f"request {i} (t={t}, key={k})"
        assert result.allowed[i] == bool(allowed[i]), f"{step}: allowed"
        assert result.counter[i] == pytest.approx(counter[i]), f"{step}: {result.counter_name}"
        if delay is not None:
            assert result.delay[i] == pytest.approx(delay[i]), f"{step}: delay"


# ---------------------------------------------------------------- the recorded traces


def recorded(data_dir, name: str, monkeypatch) -> Trace:
    """A recorded trace, read by the dataset registry's loader from `data_dir`."""
    from ratelab.datasets import load

    monkeypatch.setenv("RATELAB_DATA", str(data_dir))
    return load(name, progress=False, warn=False)


RECORDED_LIMITERS = [
    ("token-bucket", {"rate": 0.2, "capacity": 5}),
    ("leaky-bucket", {"rate": 0.2, "capacity": 5}),
    ("leaky-bucket", {"rate": 0.5, "capacity": 5, "mode": "shape"}),
    ("fixed-window", {"limit": 10, "window": 60}),
    ("fixed-window", {"limit": 10, "window": 60, "count_rejected": True}),
    ("sliding-window-log", {"limit": 10, "window": 60}),
    ("sliding-window-log", {"limit": 10, "window": 60, "count_rejected": True}),
    ("sliding-window-counter", {"limit": 10, "window": 60}),
    ("sliding-window-counter", {"limit": 10, "window": 60, "count_rejected": True}),
    ("gcra", {"rate": 0.2, "burst": 4}),
    ("nginx", {"rate": 0.2, "burst": 4}),
    ("nginx", {"rate": 0.01, "burst": 2, "nodelay": True}),
    ("haproxy", {"period": 60, "limit": 10}),
    ("haproxy", {"period": 10, "limit": 5, "compare": "ge", "expire": 5}),
]


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["epa-http", "nasa-1995-08-01"])
def test_compiled_equals_reference_on_recorded_traces(data_dir, dataset, monkeypatch):
    trace = recorded(data_dir, dataset, monkeypatch)
    assert len(trace) > 30_000
    for name, params in RECORDED_LIMITERS:
        compiled, reference = both(make(name, **params), trace, details=True)
        assert_same(compiled, reference)
        # not a vacuous comparison: these limits reject part of the busiest hosts' requests
        assert 0 < compiled.n_rejected < len(trace), (name, params, compiled.n_rejected)


# ---------------------------------------------------------------- the interface


def test_ratelab_replay_is_lazy_and_callable():
    code = ("import sys, ratelab; assert 'numba' not in sys.modules; "
            "assert 'ratelab.replay' not in sys.modules; "
            "import ratelab.replay; assert callable(ratelab.replay); "
            "assert 'numba' not in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
    trace = Trace(np.array([0.0, 0.0]), np.array([0, 0], dtype=np.int32))
    via_package = ratelab.replay(make("gcra", rate=1, burst=0), trace, progress=False)
    assert via_package.allowed.tolist() == [True, False]


def test_result_names_its_counter_and_leaves_the_limiter_alone():
    limiter = make("sliding-window-counter", limit=1, window=1)
    trace = Trace(np.array([0.0, 0.5, 1.5]), np.array([0, 0, 0], dtype=np.int32))
    result = ratelab.replay(limiter, trace, progress=False)
    assert result.counter_name == "estimate"
    assert result.counter.tolist() == [0.0, 1.0, 0.5]
    assert result.allowed.tolist() == [True, False, False]  # 1 x 0.5 + 0 + 1 > 1
    assert (result.n_allowed, result.n_rejected) == (1, 2)
    assert limiter.inspect(0, 0.5)["estimate"] == 0.0  # replay used a fresh copy
    assert result.departures.tolist() == [0.0]
    df = result.to_dataframe()
    assert list(df["allowed"]) == [True, False, False] and list(df["estimate"]) == [0, 1, 0.5]


def test_every_registry_algorithm_has_a_counter():
    for name in ratelab.NAMES:
        modes = ["police", "shape"] if name == "leaky-bucket" else [None]
        for mode in modes:
            params = {"mode": mode} if mode else {}
            limiter = make(name, **{**default_params(name), **params})
            assert counter_kind(limiter) in COUNTERS


def default_params(name: str) -> dict:
    if name in ("token-bucket", "leaky-bucket"):
        return {"rate": 1, "capacity": 2}
    if name in ("gcra", "nginx"):
        return {"rate": 1, "burst": 1}
    if name == "haproxy":
        return {"period": 1, "limit": 2}
    return {"limit": 2, "window": 1}


@pytest.mark.parametrize("name, params, start, gap", [
    ("token-bucket", {"rate": 9.5, "capacity": 1}, 1000.3, 0.05),
    ("leaky-bucket", {"rate": 7, "capacity": 1}, 1000.3, 0.05),
    ("fixed-window", {"limit": 1, "window": 0.7}, 1000.3, 0.05),
    ("sliding-window-log", {"limit": 3, "window": 0.7}, 1000.3, 0.03),
    ("sliding-window-counter", {"limit": 3, "window": 0.3}, 1000.3, 0.05),
    ("gcra", {"rate": 3, "burst": 0}, 1.7e9 + 0.3, 0.05),
    ("nginx", {"rate": 7, "burst": 1}, 1.0, 0.0505),  # times on half milliseconds
    ("haproxy", {"period": 0.7, "limit": 3}, 1.7e9 + 0.3, 0.0505),
])
def test_retry_after_nudged_past_float_rounding_as_the_reference_does(name, params, start, gap):
    """Requests paced at about the limit, at awkward times: many a closed-form wait falls an
    ulp short there, and the kernels must step it up exactly as clock.seconds_until does."""
    n = 3000
    time = start + np.arange(n) * gap + np.repeat([0.0, 1e-3], n // 2)
    trace = Trace(time, (np.arange(n) % 2).astype(np.int32))
    compiled, reference = both(make(name, **params), trace, details=True)
    assert_same(compiled, reference)
    lim = make(name, **params)
    for t, k, ok, r in zip(time, trace.key, reference.allowed, reference.retry_after):
        if not ok:
            assert lim.peek(int(k), t + r).allowed, (t, k, r)
        lim.allow(int(k), t)
    assert reference.n_rejected > 0


@pytest.mark.parametrize("engine", ["compiled", "reference"])
@pytest.mark.parametrize("name, params", [("nginx", {"rate": 1, "burst": 1}),
                                          ("haproxy", {"period": 1, "limit": 2})])
def test_nginx_refuses_a_cost_column_other_than_one(engine, name, params):
    """nginx and haproxy count requests: a cost of 0.5 must not pass as one request, in
    either engine."""
    trace = Trace(np.array([0.0, 1.0, 2.0]), np.zeros(3, dtype=np.int32),
                  np.array([1.0, 0.5, 1.0]))
    with pytest.raises(ValueError, match=rf"cost\[1\]=0.5: {name} counts requests"):
        replay(make(name, **params), trace, engine=engine, progress=False)
    ones = Trace(trace.time, trace.key, np.ones(3))
    assert replay(make(name, **params), ones, engine=engine,
                  progress=False).allowed.tolist() == [True, True, True]


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_bad_input_names_the_problem(engine):
    trace = Trace(np.array([0.0, 1.0]), np.array([0, 1], dtype=np.int32), np.array([1.0, 3.0]))
    with pytest.raises(ValueError, match=r"cost\[1\]=3.0 is above"):
        replay(make("token-bucket", rate=1, capacity=2), trace, engine=engine, progress=False)
    with pytest.raises(ValueError, match="engine must be one of"):
        replay(make("gcra", rate=1, burst=1), trace, engine="fast")
    with pytest.raises(ValueError, match="limiter must be"):
        replay("gcra", trace)


@pytest.mark.parametrize("name, params", [("gcra", {"rate": 1, "burst": 0}),
                                          ("nginx", {"rate": 1, "burst": 0}),
                                          ("nginx", {"rate": 1e14, "burst": 10**11}),
                                          ("haproxy", {"period": 1, "limit": 1}),
                                          ("token-bucket", {"rate": 1, "capacity": 1})])
def test_engines_agree_at_huge_times_and_both_refuse_beyond_int64_ticks(name, params):
    """Times are whole microseconds in both engines: at 5e9 s and at 4e12 s they agree (the
    compiled GCRA refused times beyond 4e9 s when it counted nanoseconds); beyond 2**62
    microseconds both refuse with the same error."""
    lim = make(name, **params)
    for t in (5e9, 4e12):
        trace = Trace(np.array([t, t, t + 0.5, t + 1.0]), np.zeros(4, dtype=np.int32))
        compiled, reference = both(lim, trace, details=True)
        assert_same(compiled, reference)
    trace = Trace(np.array([5e12]), np.zeros(1, dtype=np.int32))
    for engine in ("compiled", "reference"):
        with pytest.raises(ValueError, match=r"now=5000000000000.0 is beyond"):
            replay(lim, trace, engine=engine, progress=False)


@pytest.mark.parametrize("times, bad", [([-5e12, -4e12, 1.0, 5e12], "-5000000000000.0"),
                                        ([1.0, 4.7e12, 5e12, 6e12], "4700000000000.0"),
                                        ([-6e12, -5e12, 2.0], "-6000000000000.0")])
@pytest.mark.parametrize("name", ["token-bucket", "fixed-window", "gcra", "nginx", "haproxy"])
def test_both_engines_refuse_the_first_time_beyond_int64_ticks(name, times, bad):
    """The compiled engine reads only a trace's ends (its times are sorted) and bisects for
    the first time beyond the bound: the error names the request the reference stops at."""
    lim = make(name, **{"token-bucket": {"rate": 1, "capacity": 5}, "fixed-window":
                        {"limit": 5, "window": 1}, "gcra": {"rate": 1, "burst": 4},
                        "nginx": {"rate": 1, "burst": 4},
                        "haproxy": {"period": 1, "limit": 4}}[name])
    trace = Trace(np.array(times), np.zeros(len(times), dtype=np.int32))
    for engine in ("compiled", "reference"):
        with pytest.raises(ValueError, match=rf"now={bad} is beyond"):
            replay(lim, trace, engine=engine, progress=False)


def test_progress_bar_appears_only_when_asked(capsys):
    trace = Trace(np.arange(5000, dtype=float), np.zeros(5000, dtype=np.int32))
    import ratelab.replay.core as core

    old = core._bar
    seen = {}

    def spy(total, desc, progress):
        seen["args"] = (total, progress)
        return old(total, desc, progress)

    core._bar = spy
    try:
        replay(make("gcra", rate=1, burst=1), trace, progress=False)
        assert seen["args"] == (5000, False)
        replay(make("gcra", rate=1, burst=1), trace)
        assert seen["args"] == (5000, True)
    finally:
        core._bar = old
