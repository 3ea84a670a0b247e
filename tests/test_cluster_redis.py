"""The same strategy code on a real redis-server, with real threads (loopback only)."""

from __future__ import annotations

import pytest

from ratelab.cluster import make_strategy, script
from ratelab.cluster.experiments import race
from ratelab.cluster.threads import run_threads
from ratelab.store import RedisStore, SimStore

pytestmark = pytest.mark.service


def test_naive_over_admits_under_real_concurrency_and_lua_never_does(redis_url):
    """16 threads, 200 requests, limit 100, 2 ms between a reply and the next command.
    The naive strategy must over-admit in at least one of three attempts (it nearly always
    does in the first); the Lua script must never admit more than the limit."""
    naive = []
    for attempt in range(3):
        r = race("naive", gateways=16, requests=200, limit=100, store=redis_url,
                 think_s=0.002, seed=attempt)
        naive.append(r.admitted)
        if r.admitted > 100:
            break
    assert max(naive) > 100, naive
    for attempt in range(3):
        for name in ("lua", "incr", "lua-token-bucket", "lua-sliding-log"):
            r = race(name, gateways=16, requests=200, limit=100, store=redis_url,
                     think_s=0.002, seed=attempt)
            assert r.admitted == 100, (name, attempt, r)


def test_watch_with_retries_holds_the_limit_on_a_real_redis(redis_url):
    r = race("watch", gateways=8, requests=120, limit=60, store=redis_url, think_s=0.001,
             max_retries=1000)
    assert r.admitted == 60 and r.round_trips_per_request > 3


def test_the_lua_scripts_are_the_same_text_on_both_stores(redis_url):
    real, sim = RedisStore(redis_url), SimStore()
    for name in ("fixed_window", "sliding_window", "sliding_log", "token_bucket"):
        text = script(name)
        assert real.execute("SCRIPT", "LOAD", text) == sim.execute("SCRIPT", "LOAD", text)
    real.close()


@pytest.mark.parametrize("name", ["naive", "incr", "lua", "lua-sliding", "lua-token-bucket",
                                  "lua-sliding-log", "watch"])
def test_one_gateway_in_sequence_decides_the_same_on_both_stores(redis_url, name):
    """Requests one at a time at made-up times: every decision and the live state must match."""
    times = [0.0, 0.1, 0.2, 0.3, 0.35, 0.9, 1.0, 1.05, 1.5, 1.95, 2.0, 2.01]
    real, sim = RedisStore(redis_url), SimStore()
    real.execute("FLUSHALL")
    out = {}
    for label, store in (("redis", real), ("sim", sim)):
        strategy = make_strategy(name, limit=3, window_s=1.0)
        strategy.setup(store.connect("setup"))
        conn = store.connect("g0")
        decisions = []
        for t in times:
            if label == "sim":
                store.set_time(t)
            clock = iter([t])
            run = run_threads(strategy, _OneConn(conn), 1, key="seq", clock=lambda: next(clock))
            decisions.append(run.admitted)
        # (earlier windows' keys have expired in virtual time, not yet in real time)
        counters = [store.execute("GET", k) for k in ("seq:2", "seq:tokens", "seq:ts")]
        counters.append(store.execute("ZRANGE", "seq:log", 0, -1, "WITHSCORES"))
        out[label] = (decisions, counters)
    real.close()
    assert out["redis"] == out["sim"]
    assert 0 < sum(out["sim"][0]) < len(times)    # some admitted, some not


class _OneConn:
    """A store view that hands out one existing connection (and never closes it)."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def connect(self, name):
        return self

    def execute(self, *args):
        return self.conn.execute(*args)

    def close(self):
        pass


def test_a_paused_redis_gets_every_request_one_decision_by_policy(redis_url):
    """CLIENT PAUSE holds every client for 300 ms; with a 50 ms timeout the threads decide by
    policy, and admitted + failed-closed must add up to the requests exactly."""
    store = RedisStore(redis_url, timeout_s=0.05)
    lua = make_strategy("lua", limit=100, window_s=60, gateways=4)
    lua.setup(store)
    store.execute("CLIENT", "PAUSE", 300, "ALL")
    r = run_threads(lua, store, 40, key="paused", fail_open=False, clock=lambda: 0.5,
                    setup=False)
    assert r.errors and r.admitted + len(r.errors) == 40
    store.close()


def test_per_gateway_counters_leak_on_real_threads_too(redis_url):
    r = race("local", gateways=4, requests=800, limit=100, store=redis_url)
    assert (r.admitted, r.round_trips_per_request) == (400, 0.0)


def test_async_sync_on_real_threads_holds_near_the_limit_when_syncing_every_request(redis_url):
    r = race("async", gateways=4, requests=400, limit=100, store=redis_url, think_s=0.001,
             sync_interval_s=1e-6)
    assert 100 <= r.admitted <= 100 + 4 and r.round_trips_per_request > 0.9
