"""ConcurrencyLimiter: at most N in flight; leases, expiry, and the replay beside a rate limit."""

import math

import numpy as np
import pytest

from ratelab.http import Policy, respond
from ratelab.limiters import ConcurrencyLimiter
from ratelab.limiters.concurrency import max_in_flight, replay_concurrency


def test_a_timeline_of_acquires_and_releases():
    c = ConcurrencyLimiter(max_in_flight=2)
    d1, a = c.acquire("k", 0.0)
    d2, b = c.acquire("k", 0.1)
    d3, none = c.acquire("k", 0.2)
    assert (d1.allowed, d1.remaining, d2.remaining) == (True, 1, 0)
    assert not d3.allowed and none is None and d3.retry_after == math.inf
    assert c.acquire("other", 0.2)[0].allowed  # keys are separate
    assert c.release(a, 0.5) is True
    assert c.in_flight("k", 0.5) == 1
    assert c.peek("k", 0.5).allowed and c.in_flight("k", 0.5) == 1  # peek takes nothing
    with pytest.raises(ValueError, match="already released"):
        c.release(a, 0.6)
    # a refusal with an unknown wait sends no Retry-After
    assert respond(d3, Policy("slots", 2, 1)).header("Retry-After") is None


def test_leases_expire_after_lease_s():
    c = ConcurrencyLimiter(max_in_flight=1, lease_s=30)
    _, lost = c.acquire("k", 0.0)  # the worker crashes and never releases
    d = c.acquire("k", 10.0)[0]
    assert not d.allowed and d.retry_after == pytest.approx(20.0)
    assert c.acquire("k", 30.0)[0].allowed  # the lost lease stopped counting
    assert c.release(lost, 31.0) is False


@pytest.mark.parametrize("kw, match", [({"max_in_flight": 0}, "max_in_flight"),
                                       ({"max_in_flight": 2.5}, "max_in_flight"),
                                       ({"max_in_flight": 1, "lease_s": 0}, "lease_s")])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        ConcurrencyLimiter(**kw)


def test_time_must_not_run_backwards():
    c = ConcurrencyLimiter(1)
    c.acquire("k", 5.0)
    with pytest.raises(ValueError, match="backwards"):
        c.acquire("k", 4.0)


def test_replay_counts_in_flight_exactly():
    # requests lasting 1 s: at 1.0 the first ends as the fourth starts (a release at t frees
    # t); at 1.2 four overlap
    times, durations = [0.0, 0.4, 0.8, 1.0, 1.2], [1.0] * 5
    assert max_in_flight(times, durations) == 4
    assert max_in_flight(times[:4], durations[:4]) == 3
    assert replay_concurrency(ConcurrencyLimiter(2), times, durations).tolist() == [
        True, True, False, True, False]
    with pytest.raises(ValueError, match="sorted"):
        replay_concurrency(ConcurrencyLimiter(2), [1.0, 0.0], [1.0, 1.0])


def test_replay_never_exceeds_the_limit():
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.exponential(0.1, 500))
    durations = rng.exponential(1.0, 500)
    admitted = replay_concurrency(ConcurrencyLimiter(4), times, durations)
    assert max_in_flight(times[admitted], durations[admitted]) <= 4
    assert 0 < admitted.sum() < 500


from hypothesis import given, strategies as st  # noqa: E402


@given(st.lists(st.tuples(st.floats(0, 2), st.booleans(), st.integers(0, 5)), max_size=60),
       st.integers(1, 4), st.one_of(st.none(), st.floats(0.5, 5)))
def test_acquire_admits_exactly_while_slots_are_free(ops, n, lease_s):
    c = ConcurrencyLimiter(n, lease_s=lease_s)
    held, t = [], 0.0
    for dt, take, pick in ops:
        t += dt
        held = [lease for lease in held if lease_s is None or lease.start + lease_s > t]
        if take or not held:
            decision, lease = c.acquire("k", t)
            assert decision.allowed == (len(held) < n)
            if lease is not None:
                held.append(lease)
        else:
            assert c.release(held.pop(pick % len(held)), t) is True
        assert c.in_flight("k", t) == len(held) <= n
