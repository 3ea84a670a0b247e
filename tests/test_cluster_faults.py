"""Store faults: outages and stalls, fail-open vs fail-closed per endpoint, exactly one
decision per request, and counting that resumes when the store is back."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.cluster import Faults, Latency, Request, make_strategy, simulate, steady
from ratelab.cluster.experiments import outage


def test_fail_open_admits_and_fail_closed_rejects_during_an_outage():
    run = outage({"login": "closed", "search": "open"}, limit=30, rate_per_s=80,
                 outage=(2.0, 4.0), duration_s=6.0)
    during = [d for d in run.decisions if 2.0 <= d.time < 4.0 - 0.01]
    assert during and all(d.how.startswith("fail") for d in during)
    assert all(d.allowed for d in during if d.endpoint == "search")
    assert not any(d.allowed for d in during if d.endpoint == "login")
    assert {d.how for d in run.decisions if d.time < 2.0 - 0.01} == {"store"}


def test_counting_resumes_when_the_store_returns():
    run = outage({"login": "closed", "search": "open"}, limit=30, rate_per_s=80,
                 outage=(2.0, 4.0), duration_s=6.0)
    per = Counter((d.endpoint, int(d.time)) for d in run.decisions if d.allowed)
    for endpoint in ("login", "search"):
        # demand (~40/s per endpoint) is above the limit: every whole window outside the
        # outage admits exactly the limit
        assert [per[endpoint, k] for k in (0, 1, 4, 5)] == [30] * 4, endpoint
    sent = Counter((d.endpoint, int(d.time)) for d in run.decisions)
    assert per["search", 2] == sent["search", 2] > 0   # fail-open lets everything through
    assert per["login", 2] == per["login", 3] == 0


def test_a_stall_makes_gateways_give_up_but_the_late_commands_still_count():
    # The store stalls 0.2 s from t=1; gateways wait 0.05 s, then fail open.
    reqs = [Request(i, 1.0 + i * 0.01, i % 2) for i in range(5)]
    faults = Faults(stalls=((1.0, 1.05, 0.2),), timeout_s=0.05, default="open")
    run = simulate(make_strategy("incr", limit=3, window_s=10.0, gateways=2), reqs,
                   faults=faults, latency=Latency("fixed", 0.001))
    assert [d.how for d in run.decisions] == ["fail-open"] * 5
    assert all(c.late for c in run.commands) and len(run.commands) == 5
    assert run.store.execute("GET", "rl:0") == "5"    # all five INCRs ran, late


@examples(25)
@given(seed=st.integers(0, 10_000),
       name=st.sampled_from(["naive", "incr", "lua", "lua-token-bucket", "watch", "async"]),
       start=st.floats(0.0, 1.5), length=st.floats(0.01, 1.0), stall=st.floats(0.0, 0.3),
       timeout=st.floats(0.002, 0.1))
def test_every_request_gets_exactly_one_decision(seed, name, start, length, stall, timeout):
    rng = np.random.default_rng(seed)
    reqs = steady(100, 2.0, 3, rng, endpoints=("a", "b"))
    faults = Faults(outages=((start, start + length),), stalls=((start / 2, start, stall),),
                    timeout_s=timeout, policy={"a": "open", "b": "closed"})
    run = simulate(make_strategy(name, limit=20, window_s=0.5, gateways=3), reqs,
                   faults=faults, latency=Latency("lognormal", 0.001, 0.7), seed=seed)
    assert [d.request for d in run.decisions] == [r.id for r in reqs]   # none lost or doubled
    for d in run.decisions:
        if d.how == "fail-open":
            assert d.allowed and d.endpoint == "a"
        if d.how == "fail-closed":
            assert not d.allowed and d.endpoint == "b"
        assert d.decided >= d.time
    ran = sorted((c for c in run.commands if c.executed is not None), key=lambda c: c.arrived)
    assert all(a.executed <= b.executed for a, b in zip(ran, ran[1:]))   # arrival order


def test_bad_fault_settings():
    with pytest.raises(ValueError, match="policy must be 'open' or 'closed'"):
        Faults(policy={"x": "maybe"})
    with pytest.raises(ValueError, match="timeout_s"):
        Faults(timeout_s=0)


def test_a_failed_push_across_a_window_boundary_keeps_the_new_windows_count():
    """Async sync pushes window 0's count; the gateway moves on to window 1 and admits three
    there while the push travels; the push fails. Those three must still count."""
    from ratelab.store import StoreUnavailable

    s = make_strategy("async", limit=4, window_s=1.0, gateways=1, sync_interval_s=0.1)

    def decide(now: float) -> bool:
        with pytest.raises(StopIteration) as done:
            next(s.decide(0, "rl", now))
        return done.value.value

    assert decide(0.95)
    push = s.sync(0, 0.98)
    assert next(push)[0] == ("INCRBY", "rl:0", 1)
    assert [decide(t) for t in (1.01, 1.02, 1.03)] == [True] * 3
    with pytest.raises(StopIteration):
        push.throw(StoreUnavailable("connection refused"))
    assert [decide(1.04), decide(1.05)] == [True, False]    # 3 + 1 is the limit of 4


def test_a_stalled_store_still_runs_commands_in_arrival_order():
    """The store is one queue (one Redis thread): a command that arrives after a stall ended
    waits behind the commands the stall is still holding, and never overtakes them."""
    reqs = [Request(0, 1.0, 0), Request(1, 1.06, 1), Request(2, 1.3, 0)]
    faults = Faults(stalls=((1.0, 1.05, 0.2),), timeout_s=1.0)
    run = simulate(make_strategy("incr", limit=5, window_s=10.0, gateways=2), reqs,
                   faults=faults, latency=Latency("fixed", 0.001))
    by_arrival = sorted((c for c in run.commands if c.what.startswith("INCR")),
                        key=lambda c: c.arrived)
    assert [c.reply for c in by_arrival] == ["1", "2", "3"]
    assert [round(c.executed, 3) for c in by_arrival] == [1.201, 1.201, 1.301]
