"""ratelab.clients: retry behaviours, and the simulation of many clients against one server."""

import math

import numpy as np
import pytest

from ratelab.clients import (ExponentialBackoff, FixedDelay, FullJitter, HonourRetryAfter,
                             Immediate, PaceByRemaining, Server, WaitForReset, batch_demand,
                             poisson_demand, simulate, wave_height)
from ratelab.http import View
from ratelab.limiters import make

RNG = np.random.default_rng


def view(**kw):
    return View(status=kw.pop("status", 429), **{"retry_after_s": None, "remaining": None,
                                                "reset_s": None, **kw})


def test_exponential_backoff_doubles_up_to_the_cap():
    b = ExponentialBackoff(base_s=0.1, cap_s=1.0)
    assert [b.retry_delay(n, view(), RNG(0)) for n in range(1, 7)] == pytest.approx(
        [0.1, 0.2, 0.4, 0.8, 1.0, 1.0])


def test_full_jitter_is_uniform_below_the_backoff():
    b = FullJitter(base_s=0.1, cap_s=1.0)
    rng = RNG(5)
    draws = np.array([b.retry_delay(3, view(), rng) for _ in range(4000)])
    assert draws.min() >= 0 and draws.max() < 0.4
    assert draws.mean() == pytest.approx(0.2, rel=0.05)  # half the ceiling, not the ceiling


def test_header_driven_behaviours_read_the_view():
    v = view(retry_after_s=3.0, remaining=4, reset_s=10.0, x_reset_s=7.5)
    assert HonourRetryAfter().retry_delay(1, v, RNG(0)) == 3.0
    assert 3.0 <= HonourRetryAfter(jitter_s=2).retry_delay(1, v, RNG(0)) < 5.0
    assert WaitForReset().retry_delay(1, v, RNG(0)) == 7.5
    assert PaceByRemaining().pause(v) == 2.0  # 10 s spread over 4 + 1
    assert PaceByRemaining().pause(view(remaining=0, reset_s=6.0)) == 6.0
    fallback = HonourRetryAfter(fallback=FixedDelay(delay_s=0.5))
    assert fallback.retry_delay(1, view(), RNG(0)) == 0.5
    assert Immediate().retry_delay(4, v, RNG(0)) == 0.0


@pytest.mark.parametrize("make_it, match", [
    (lambda: FixedDelay(delay_s=0), "delay_s"), (lambda: Immediate(max_attempts=0), "max_attempts"),
    (lambda: ExponentialBackoff(factor=0.5), "factor"), (lambda: HonourRetryAfter(jitter_s=-1), "jitter_s"),
    (lambda: Server(make("gcra", rate=1, burst=0), scope="user"), "scope"),
])
def test_bad_parameters(make_it, match):
    with pytest.raises(ValueError, match=match):
        make_it()


def test_a_made_up_timeline_against_a_fixed_window():
    # limit 2 per 10 s; three jobs at t=0; the third is told Retry-After: 10 and comes back
    server = Server(make("fixed-window", limit=2, window=10))
    r = simulate(HonourRetryAfter(), server, [0.0, 0.0, 0.0], [0, 1, 2], RNG(0), rtt_s=0.05,
                 horizon_s=30)
    assert r.attempt_time.tolist() == pytest.approx([0.0, 0.0, 0.0, 10.05])
    assert r.attempt_ok.tolist() == [True, True, False, True]
    assert r.job_done.tolist() == pytest.approx([0.05, 0.05, 10.1])
    s = r.summary()
    assert (s["retries_per_success"], s["load_multiplier"]) == (pytest.approx(1 / 3), 4 / 3)


def test_wait_for_reset_wakes_everyone_at_the_boundary():
    server = Server(make("fixed-window", limit=1, window=10), epoch_s=1_700_000_000)
    r = simulate(WaitForReset(), server, [1.0, 2.0, 3.5], [0, 1, 2], RNG(0), horizon_s=15)
    retries = r.attempt_time[r.attempt_number == 2]
    assert retries.tolist() == pytest.approx([10.0, 10.0])  # both at the reset instant


def test_immediate_gives_up_after_max_attempts():
    server = Server(make("token-bucket", rate=0.01, capacity=1))
    r = simulate(Immediate(max_attempts=3), server, [0.0, 0.0], [0, 1], RNG(0), rtt_s=0.1,
                 horizon_s=5)
    assert r.attempt_time.tolist() == pytest.approx([0.0, 0.0, 0.1, 0.2])
    assert r.job_gave_up.tolist() == [False, True]


def test_pacing_alone_on_its_key_is_never_refused():
    times, clients = batch_demand(5, 25, 20, 60, RNG(3))
    server = Server(make("token-bucket", rate=2, capacity=10), scope="client")
    paced = simulate(PaceByRemaining(), server, times, clients, RNG(1), horizon_s=80)
    assert paced.attempt_ok.all() and len(paced.attempt_ok) > 200
    server = Server(make("token-bucket", rate=2, capacity=10), scope="client")
    eager = simulate(FullJitter(), server, times, clients, RNG(1), horizon_s=80)
    assert (~eager.attempt_ok).sum() > 50  # the same demand, sent at once, is refused


def test_accounting_is_consistent_and_seeded():
    times, clients = poisson_demand(20, 1.0, 20, RNG(2), surge=(5, 10, 3))
    runs = [simulate(FullJitter(), Server(make("gcra", rate=30, burst=10)), times, clients, RNG(9),
                     horizon_s=40) for _ in range(2)]
    a, b = runs
    assert np.array_equal(a.attempt_time, b.attempt_time)  # same seed, same run
    assert a.attempt_ok.sum() == (~np.isnan(a.job_done)).sum()  # one success per done job
    frame = a.over_time(1.0)
    assert frame["offered"].sum() == len(a.attempt_time)
    assert frame["demand"].sum() == len(times)
    assert (frame["accepted"] <= frame["offered"]).all()


def test_demand_generators():
    t, c = poisson_demand(10, 1.0, 100, RNG(0), surge=(20, 40, 4.0))
    in_surge = ((t >= 20) & (t < 40)).sum() / 20
    assert in_surge == pytest.approx(40, rel=0.2) and (t[t < 20].size / 20) == pytest.approx(10, rel=0.25)
    assert np.all(np.diff(t) >= 0) and set(np.unique(c)) <= set(range(10))
    with pytest.raises(ValueError, match="surge"):
        poisson_demand(10, 1.0, 100, RNG(0), surge=(50, 40, 2))
    t, c = batch_demand(3, 4, 10, 30, RNG(1))
    assert len(t) == 3 * 3 * 4 and np.all(np.diff(t) >= 0)


def test_wave_height():
    flat = np.arange(0, 10, 0.1)
    assert wave_height(flat, 1.0, 0, 10) == pytest.approx(1.0)
    spiky = np.concatenate([flat, np.zeros(90)])
    assert wave_height(spiky, 1.0, 0, 10) == pytest.approx(100 / 19)
    assert math.isnan(wave_height(np.array([]), 1.0, 0, 10))
