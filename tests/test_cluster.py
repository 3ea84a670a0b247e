"""Gateways on a simulated network: reproducible runs, the race and its fixes, exhaustive
interleavings, and the measured weaknesses of each strategy."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.cluster import Latency, Request, burst, make_strategy, simulate, STRATEGIES
from ratelab.cluster.experiments import (async_overshoot, both_read_99, exhaustive, race,
                                         skew_error, uneven_load)
from ratelab.cluster.interleave import interleavings
from ratelab.store import SimStore


# ---------------------------------------------------------------- the network


def test_latency_kinds_are_seeded_and_shaped():
    rng = np.random.default_rng(1)
    assert Latency("fixed", 0.002).sample(rng) == 0.002
    u = [Latency("uniform", 0.001, 0.003).sample(rng) for _ in range(2000)]
    assert 0.001 <= min(u) and max(u) <= 0.003 and abs(np.mean(u) - 0.002) < 1e-4
    ln = [Latency("lognormal", 0.001, 0.5).sample(rng) for _ in range(4000)]
    assert abs(np.median(ln) - 0.001) < 1e-4 and max(ln) > 0.003   # a long right tail
    a = [Latency("uniform", 0, 1).sample(np.random.default_rng(7)) for _ in range(3)]
    b = [Latency("uniform", 0, 1).sample(np.random.default_rng(7)) for _ in range(3)]
    assert a == b
    assert Latency.parse("uniform:0.001,0.002") == Latency("uniform", 0.001, 0.002)


@pytest.mark.parametrize("bad,match", [
    (lambda: Latency("gamma"), "latency kind"),
    (lambda: Latency("uniform", 2, 1), "b >= a"),
    (lambda: Latency("fixed", -1), "latency a"),
    (lambda: Latency.parse("fixed:x"), "latency must look like"),
    (lambda: make_strategy("magic"), "strategy must be one of"),
    (lambda: make_strategy("lua", limit=0), "limit"),
    (lambda: make_strategy("async", sync_interval_s=0), "sync_interval_s"),
])
def test_bad_input_names_the_parameter(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()


def test_same_seed_same_run_and_arrival_order_is_execution_order():
    def go(seed):
        reqs = burst(60, 3, 0.01, np.random.default_rng(seed))
        run = simulate(make_strategy("naive", limit=40, window_s=60, gateways=3), reqs,
                       latency=Latency("lognormal", 0.001, 0.6), seed=seed)
        return run

    a, b = go(3), go(3)
    assert [vars(c) for c in a.commands] == [vars(c) for c in b.commands]
    assert [vars(c) for c in a.commands] != [vars(c) for c in go(4).commands]
    by_arrival = sorted(a.commands, key=lambda c: c.arrived)
    assert [c.executed for c in by_arrival] == sorted(c.executed for c in a.commands)
    assert all(c.sent < c.arrived == c.executed < c.replied for c in a.commands)


# ---------------------------------------------------------------- the race, drawn


def test_both_read_99_and_the_counter_ends_at_101():
    run = both_read_99("naive")
    steps = [(c.who, c.what, c.reply) for c in sorted(run.commands, key=lambda c: c.executed)]
    assert steps == [("g0", "GET rl:0", "99"), ("g1", "GET rl:0", "99"),
                     ("g0", "INCR rl:0", "100"), ("g1", "INCR rl:0", "101")]
    assert [d.allowed for d in run.decisions] == [True, True]
    assert run.store.execute("GET", "rl:0") == "101"


@pytest.mark.parametrize("name", ["incr", "lua", "watch"])
def test_the_same_timing_with_an_atomic_strategy_admits_one(name):
    run = both_read_99(name)
    assert sum(d.allowed for d in run.decisions) == 1


# ---------------------------------------------------------------- exhaustive interleavings


@pytest.mark.parametrize("name,clients,schedules,bad", [
    ("naive", 2, 6, 4),       # only A,A,B,B and B,B,A,A are safe
    ("naive", 3, 66, 60),
    ("incr", 2, 2, 0), ("incr", 3, 6, 0),
    ("lua", 2, 2, 0), ("lua", 3, 6, 0),
    ("lua-sliding", 3, 6, 0), ("lua-token-bucket", 3, 6, 0), ("lua-sliding-log", 3, 6, 0),
    ("watch", 2, 20, 0),
])
def test_exhaustive_interleaving_counts(name, clients, schedules, bad):
    r = exhaustive(name, clients)
    assert (r["schedules"], r["over_admitting"]) == (schedules, bad)
    if bad:
        ex = r["example"]                   # each admitted request read 99 and INCRed
        assert ex.total_admitted >= 2 and ex.counter == str(99 + ex.total_admitted)


def test_interleavings_cover_every_order_once():
    outs = interleavings(lambda: make_strategy("naive", limit=100, window_s=60), 2,
                         setup=lambda s: s.execute("SET", "rl:0", "5"), counter_key="rl:0")
    assert sorted(o.schedule for o in outs) == sorted(
        {(0, 0, 1, 1), (0, 1, 0, 1), (0, 1, 1, 0), (1, 0, 0, 1), (1, 0, 1, 0), (1, 1, 0, 0)})
    assert {o.counter for o in outs} == {"7"}   # room for both: every order counts both


# ---------------------------------------------------------------- strategies, measured


@pytest.mark.parametrize("name,admitted,rtt", [
    ("local", 200, 0.0),           # 4 gateways x 100 > 200 requests: nothing is stopped
    ("local-split", 100, 0.0),
    ("incr", 100, 1.005),          # 200 INCRs + one PEXPIRE
    ("lua", 100, 1.0), ("lua-sliding", 100, 1.0), ("lua-token-bucket", 100, 1.0),
    ("lua-sliding-log", 100, 1.0),
])
def test_race_admitted_and_round_trips(name, admitted, rtt):
    r = race(name, gateways=4, requests=200, limit=100, seed=0)
    assert r.admitted == admitted
    assert r.round_trips_per_request == pytest.approx(rtt)


def test_per_instance_counters_leak_n_times_the_limit():
    r = race("local", gateways=10, requests=2000, limit=100, seed=0)
    assert r.admitted == 1000 and r.over_admitted == 900


def test_naive_over_admits_in_a_burst_and_counts_its_round_trips():
    r = race("naive", gateways=4, requests=200, limit=100, seed=0)
    assert r.admitted > 100
    # GET for each request, INCR for each admitted one, one PEXPIRE
    assert r.round_trips_per_request == pytest.approx((200 + r.admitted + 1) / 200)


def test_watch_never_over_admits_but_retries():
    s = make_strategy("watch", limit=20, window_s=60, gateways=4, max_retries=50)
    run = simulate(s, burst(40, 4, 0.02, np.random.default_rng(2)),
                   latency=Latency("uniform", 0.0005, 0.002), seed=2)
    assert run.admitted == 20 and s.retries > 0 and s.gave_up == 0
    assert run.round_trips_per_request() > 3


def test_local_split_is_unfair_when_load_is_uneven():
    even = uneven_load([1, 1, 1, 1])
    skewed = uneven_load([7, 1, 1, 1])
    assert skewed["shared_total"] == 100
    assert skewed["split_admitted"][0] == 25 and skewed["sent"][0] > 25
    assert skewed["unfair_rejections"] > even["unfair_rejections"]
    assert skewed["unfair_rejections"] == 100 - skewed["split_total"]


def test_async_sync_overshoots_more_with_longer_intervals():
    worst = [async_overshoot(i, duration_s=2.0)["worst_window"] for i in (0.01, 0.1, 0.5)]
    assert 100 < worst[0] < worst[1] < worst[2]


def test_clock_skew_on_a_one_second_window():
    zero, small, large = (skew_error(s, duration_s=5.0) for s in (0.0, 0.1, 0.4))
    assert zero["wrong_window"] == 0 and zero["worst_window"] == 100
    assert 0 < small["wrong_window"] < large["wrong_window"]
    # gateway 1 sees each window 0.4 s early: about half its requests (a fifth of all)
    assert large["wrong_window"] == pytest.approx(0.2, abs=0.03)
    assert 100 < small["worst_window"] < large["worst_window"]


# ---------------------------------------------------------------- properties


@examples(20)
@given(seed=st.integers(0, 10_000), gateways=st.integers(1, 6), n=st.integers(1, 80),
       name=st.sampled_from(["incr", "lua", "lua-sliding", "watch", "local-split"]),
       kind=st.sampled_from(["fixed", "uniform", "lognormal"]))
def test_atomic_strategies_never_over_admit_and_decide_each_request_once(seed, gateways, n,
                                                                         name, kind):
    latency = {"fixed": Latency("fixed", 0.001), "uniform": Latency("uniform", 0, 0.003),
               "lognormal": Latency("lognormal", 0.001, 0.8)}[kind]
    limit = 10
    reqs = burst(n, gateways, 0.01, np.random.default_rng(seed))
    params = {"max_retries": 1000} if name == "watch" else {}
    run = simulate(make_strategy(name, limit=limit, window_s=60, gateways=gateways, **params),
                   reqs, latency=latency, seed=seed)
    assert [d.request for d in run.decisions] == list(range(n))
    assert run.admitted <= limit
    if name != "local-split":
        assert run.admitted == min(n, limit)


def test_every_registered_strategy_runs_on_the_simulator():
    for name in STRATEGIES:
        run = simulate(make_strategy(name, limit=5, window_s=1.0, gateways=2),
                       [Request(i, i * 0.1, i % 2) for i in range(30)], seed=0)
        assert len(run.decisions) == 30 and run.admitted >= 5, name


def test_lua_strategy_falls_back_to_eval_when_the_store_forgot_its_scripts():
    from ratelab.store import StoreError

    store = SimStore()                      # no SCRIPT LOAD: EVALSHA meets NOSCRIPT
    program = make_strategy("lua", limit=3, window_s=1.0).decide(0, "rl", 0.0)
    sent = [next(program)]
    with pytest.raises(StoreError, match="NOSCRIPT") as e:
        store.execute(*sent[0])
    sent.append(program.throw(e.value))
    with pytest.raises(StopIteration) as done:
        program.send(store.execute(*sent[1]))
    assert [c[0] for c in sent] == ["EVALSHA", "EVAL"] and done.value.value is True


def test_an_error_reply_in_a_gateway_thread_reaches_the_caller():
    """A program that meets an error reply it does not handle (WRONGTYPE here) must not end
    its thread silently, leaving that gateway's requests without a decision."""
    from ratelab.cluster.threads import run_threads
    from ratelab.store import StoreError

    store = SimStore()
    store.execute("HSET", "rl:0", "f", "v")            # the counter's key holds a hash
    with pytest.raises(StoreError, match="WRONGTYPE"):
        run_threads(make_strategy("naive", limit=5, window_s=60.0, gateways=1), store, 3,
                    clock=lambda: 0.5)


@pytest.mark.parametrize("name", ["naive", "incr", "lua", "watch"])
def test_a_window_counter_outlives_the_window_on_a_gateway_whose_clock_lags(name):
    """Gateway 1 runs 0.4 s ahead: at true 0.7 s it counts in window 1 and creates its
    counter. Gateway 0 counts in window 1 until true 2 s; the counter must not expire under
    it (a TTL of one window from the first hit did, at 1.7 s, and window 1 admitted 3 of 2)."""
    reqs = [Request(0, 0.7, 1), Request(1, 1.8, 0), Request(2, 1.85, 0)]
    run = simulate(make_strategy(name, limit=2, window_s=1.0, gateways=2), reqs,
                   skew_s=[0.0, 0.4], latency=Latency("fixed", 0.001))
    assert [d.allowed for d in run.decisions] == [True, True, False]


class _DownStore:
    """A store whose every command finds it unreachable."""

    def connect(self, name):
        return self

    def execute(self, *args):
        from ratelab.store import StoreUnavailable

        raise StoreUnavailable("connection refused")

    def close(self):
        pass


def test_a_failed_background_push_on_real_threads_goes_to_the_program():
    """Async sync decides locally; a push that meets a store that is down must reach the sync
    program (which keeps its count to push later), not be taken for the request's decision."""
    import itertools

    from ratelab.cluster.threads import run_threads

    s = make_strategy("async", limit=5, window_s=60.0, gateways=1, sync_interval_s=0.1)
    run = run_threads(s, _DownStore(), 3, clock=lambda: 0.5, setup=False,
                      sync_clock=itertools.count(0.0, 1.0).__next__)
    assert (run.admitted, run.errors) == (3, [])
    assert next(s.sync(0, 0.5))[0] == ("INCRBY", "rl:0", 3)     # nothing admitted was lost


def test_watch_counts_retries_not_failed_attempts():
    """max_retries=2: three attempts whose EXEC is aborted, two retries between them."""
    s = make_strategy("watch", limit=5, window_s=60.0, max_retries=2)
    program = s.decide(0, "rl", 0.5)
    sent = [next(program)]
    with pytest.raises(StopIteration) as done:
        while True:
            cmd = sent[-1]
            reply = (["OK", "QUEUED", "QUEUED", None] if isinstance(cmd, list)
                     else {"WATCH": "OK", "GET": "1"}[cmd[0]])
            sent.append(program.send(reply))
    assert done.value.value is False
    assert sum(isinstance(c, list) for c in sent) == 3
    assert (s.retries, s.gave_up) == (2, 1)


def test_async_sync_refuses_a_second_key_instead_of_mixing_their_counts():
    """Async sync keeps one counter per gateway; a request for another key would silently
    overwrite the first key's pending count (and push to the wrong counter)."""
    reqs = [Request(0, 0.0, 0, key="login"), Request(1, 0.01, 0, key="search")]
    with pytest.raises(ValueError, match="one key"):
        simulate(make_strategy("async", limit=5, window_s=1.0), reqs)
