"""The token-bucket cases of Go's golang.org/x/time/rate (rate_test.go), as our table tests.

Go's ``Limiter(r, b)`` is our ``TokenBucket(rate=r, capacity=b)``: ``AllowN(t, n)`` is
``allow(key, t, cost=n).allowed``, and the delay of a reservation made where AllowN fails is
our ``retry_after`` on that request. The cases are written from what the Go tests assert, on
their time step ``d = 100 ms`` and at two origins, t0 = 0 and t0 = 1.758e9 (Unix time today),
where the answers must be the same.

Documented differences (what Go does, and what we do instead):

* time going backwards for a key (TestLimiterJumpBackwards, TestReserveJumpBack): Go treats
  the earlier time as "now" and carries on; we raise ValueError (sort the trace first);
* a cost above the capacity (``AllowN(t, 4)`` with burst 3): Go answers false; we raise
  ValueError, since no wait would ever make it pass;
* a cost of 0 (``AllowN(t9, 0)``): Go answers true; we raise ValueError (cost must be > 0);
* burst 0 and ``rate.Inf``: Go refuses everything / admits everything; we refuse the
  parameters by name (capacity and rate must be positive and finite);
* reservations: Go's ReserveN takes the tokens in advance (the bucket goes negative) and says
  when to act; we reserve nothing — a refused request changes no state, and ``retry_after``
  says how long until it would pass, which is the delay Go's reservation reports for it;
* time: Go counts nanoseconds; we count whole microseconds and a request less than one tick
  early passes (``clock.TIE_TICKS``), so a client exactly at the rate passes at any origin.
"""

from __future__ import annotations

import pytest

from ratelab.limiters import TokenBucket
from timeline import Step, run

D = 0.1  # Go's d = 100 * time.Millisecond
ORIGINS = [0.0, 1.758e9]


def at(t0: float, k: float) -> float:
    """Go's t_k = t0 + k x d."""
    return t0 + k * D


@pytest.mark.parametrize("t0", ORIGINS)
def test_burst_1(t0):
    """TestLimiterBurst1: NewLimiter(10, 1), AllowN table (n=2 at t2 is our ValueError)."""
    run(TokenBucket(rate=10, capacity=1), [
        Step(at(t0, 0), True), Step(at(t0, 0), False, retry_after=0.1),
        Step(at(t0, 0), False),
        Step(at(t0, 1), True), Step(at(t0, 1), False), Step(at(t0, 1), False),
        Step(at(t0, 2), True), Step(at(t0, 2), False, retry_after=0.1),
    ])


@pytest.mark.parametrize("t0", ORIGINS)
def test_burst_3(t0):
    """TestLimiterBurst3: NewLimiter(10, 3), AllowN table (n=4 and n=0 are our ValueErrors)."""
    run(TokenBucket(rate=10, capacity=3), [
        Step(at(t0, 0), True, cost=2, remaining=1),
        Step(at(t0, 0), False, cost=2, retry_after=0.1),
        Step(at(t0, 0), True, cost=1, remaining=0),
        Step(at(t0, 0), False, cost=1, retry_after=0.1),
        Step(at(t0, 2), True), Step(at(t0, 3), True),
        Step(at(t0, 4), True), Step(at(t0, 4), True),
        Step(at(t0, 4), False, retry_after=0.1), Step(at(t0, 4), False),
        Step(at(t0, 9), True, cost=3, remaining=0, reset_after=0.3),
    ])


@pytest.mark.parametrize("t0", ORIGINS)
def test_cost_above_burst_and_cost_zero_are_errors(t0):
    b = TokenBucket(rate=10, capacity=3)
    with pytest.raises(ValueError, match="cost=4.0 is above"):
        b.allow("k", at(t0, 1), cost=4)
    with pytest.raises(ValueError, match="cost"):
        b.allow("k", at(t0, 9), cost=0)


@pytest.mark.parametrize("t0", ORIGINS)
def test_jump_backwards_is_an_error(t0):
    """TestLimiterJumpBackwards: Go carries on from the earlier time; we refuse it."""
    b = TokenBucket(rate=10, capacity=3)
    assert b.allow("k", at(t0, 1)).allowed
    with pytest.raises(ValueError, match="earlier"):
        b.allow("k", at(t0, 0))


@pytest.mark.parametrize("t0", ORIGINS)
def test_simultaneous_requests(t0):
    """TestSimultaneousRequests: limit 1, burst 5, 15 requests at one instant: 5 pass."""
    b = TokenBucket(rate=1, capacity=5)
    assert sum(b.allow("k", t0).allowed for _ in range(15)) == 5


@pytest.mark.parametrize("t0", ORIGINS)
def test_simple_reserve_delays_as_retry_after(t0):
    """TestSimpleReserve: NewLimiter(10, 2): ReserveN(t0, 2) acts at t0; the next ReserveN(t0,
    2) at t2 (0.2 s later: our retry_after); ReserveN(t3, 2) at t4."""
    run(TokenBucket(rate=10, capacity=2), [
        Step(at(t0, 0), True, cost=2),
        Step(at(t0, 0), False, cost=2, retry_after=0.2),
        Step(at(t0, 2), True, cost=2),  # acting when the reservation said
        Step(at(t0, 3), False, cost=2, retry_after=0.1),
        Step(at(t0, 4), True, cost=2),
    ])


@pytest.mark.parametrize("t0", ORIGINS)
def test_mix(t0):
    """TestMix: NewLimiter(10, 2): ReserveN(t0, 3) fails (n > burst: our ValueError);
    ReserveN(t1, 2) acts at t1; ReserveN(t1, 1) at t2 (our retry_after 0.1)."""
    b = TokenBucket(rate=10, capacity=2)
    with pytest.raises(ValueError, match="cost=3.0 is above"):
        b.allow("k", at(t0, 0), cost=3)
    run(b, [
        Step(at(t0, 1), True, cost=2),
        Step(at(t0, 1), False, cost=1, retry_after=0.1),
        Step(at(t0, 2), True, cost=1),
    ])


@pytest.mark.parametrize("t0", ORIGINS)
def test_a_client_at_exactly_the_rate(t0):
    """Limiter(10, 1), AllowN(t0 + i/10, 1): every one of 1,001 passes, as in Go."""
    b = TokenBucket(rate=10, capacity=1)
    assert all(b.allow("k", t0 + i / 10).allowed for i in range(1001))


@pytest.mark.parametrize("params", [{"rate": 10, "capacity": 0}, {"rate": float("inf"),
                                                                  "capacity": 1}])
def test_burst_0_and_infinite_rate_are_refused_by_name(params):
    with pytest.raises(ValueError, match="capacity" if params["capacity"] == 0 else "rate"):
        TokenBucket(**params)
