import pytest

from ratelab.limiters import BucketState, TokenBucket, take
from timeline import Step, run


def test_a_burst_drains_the_bucket_then_the_rate_takes_over():
    run(TokenBucket(rate=2, capacity=3), [
        Step(0.0, True, remaining=2, reset_after=0.5),
        Step(0.0, True, remaining=1),
        Step(0.0, True, remaining=0, reset_after=1.5),
        Step(0.0, False, retry_after=0.5),
        Step(0.25, False, retry_after=0.25),   # half a token back
        Step(0.5, True, remaining=0),          # one token back
        Step(10.0, True, remaining=2),         # refilled, but never above capacity
    ])


def test_cost_takes_several_tokens_and_keys_are_independent():
    run(TokenBucket(rate=1, capacity=5), [
        Step(0.0, True, cost=4, remaining=1),
        Step(0.0, False, cost=2, retry_after=1.0),
        Step(0.0, True, key="other", cost=5, remaining=0),
        Step(1.0, True, cost=2, remaining=0),
    ])


def test_the_pure_form_is_a_value_and_a_function():
    s0 = BucketState(tokens=1.0, last=0)  # last: whole microseconds (ticks)
    s1, ok1 = take(s0, 0.0, rate=1, capacity=2)
    s2, ok2 = take(s1, 0.0, rate=1, capacity=2)
    assert (ok1, ok2) == (True, False)
    assert s0 == BucketState(1.0, 0)  # the input is untouched
    assert s2 == BucketState(0.0, 0)
    s3, ok3 = take(s2, 1.5, rate=1, capacity=2)
    assert ok3 and s3 == BucketState(0.5, 1_500_000)


def test_peek_consumes_nothing_and_inspect_shows_tokens():
    b = TokenBucket(rate=1, capacity=2)
    assert b.peek("k", 0.0).allowed and b.peek("k", 0.0).remaining == 1
    assert b.inspect("k", 0.0)["tokens"] == 2
    b.allow("k", 0.0)
    assert b.inspect("k", 0.5)["tokens"] == pytest.approx(1.5)


def test_the_burst_of_300():
    b = TokenBucket(rate=10, capacity=300)
    admitted = sum(b.allow("k", 0.0).allowed for _ in range(1000))
    assert admitted == 300
    assert sum(b.allow("k", 1.0).allowed for _ in range(1000)) == 10


def test_inspect_works_for_limits_below_one_request():
    b = TokenBucket(rate=1, capacity=0.5)
    assert b.allow("k", 0.0, cost=0.25).allowed
    assert b.inspect("k", 0.0)["tokens"] == pytest.approx(0.25)


@pytest.mark.parametrize("name, params", [
    ("token-bucket", {"rate": 10, "capacity": 1}),
    ("leaky-bucket", {"rate": 10, "capacity": 1, "mode": "police"}),
    ("leaky-bucket", {"rate": 10, "capacity": 1, "mode": "shape"}),
    ("token-bucket", {"rate": 3, "capacity": 2}),
])
def test_a_client_sending_at_exactly_the_rate_always_passes(name, params):
    """Times i / rate in floats refill a rounding step short of a token (0.9999999999999996):
    that shortfall is a tie, and a tie passes."""
    from ratelab.limiters import make

    lim = make(name, **params)
    rate = params["rate"]
    assert all(lim.allow("k", i / rate).allowed for i in range(2000))
