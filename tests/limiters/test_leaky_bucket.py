import pytest

from ratelab.limiters import LeakyBucket, TokenBucket
from timeline import Step, run


def test_policing_drops_on_a_full_bucket():
    run(LeakyBucket(rate=1, capacity=2, mode="police"), [
        Step(0.0, True, remaining=1, delay=0.0),
        Step(0.0, True, remaining=0, reset_after=2.0),
        Step(0.0, False, retry_after=1.0),
        Step(1.0, True),
        Step(1.0, False),
    ])


def test_shaping_queues_and_releases_a_metronome():
    run(LeakyBucket(rate=4, capacity=3, mode="shape"), [
        Step(0.0, True, delay=0.0),
        Step(0.0, True, delay=0.25),
        Step(0.0, True, delay=0.5, remaining=0),
        Step(0.0, False, retry_after=0.25),   # queue full
        Step(0.25, True, delay=0.5),          # one left, one more fits
        Step(2.0, True, delay=0.0),           # idle again: served at once
    ])


def test_shaped_departures_are_exactly_one_period_apart_under_a_flood():
    b = LeakyBucket(rate=10, capacity=50, mode="shape")
    departures = []
    for i in range(200):
        t = i * 0.01  # 100/s offered against 10/s
        d = b.allow("k", t)
        if d.allowed:
            departures.append(t + d.delay)
    gaps = [b - a for a, b in zip(departures, departures[1:])]
    assert min(gaps) == pytest.approx(0.1)
    assert max(gaps) == pytest.approx(0.1)


def test_inspect_shows_the_queue():
    b = LeakyBucket(rate=2, capacity=5, mode="shape")
    for _ in range(4):
        b.allow("k", 0.0)
    assert b.inspect("k", 0.0)["queue"] == pytest.approx(4)
    assert b.inspect("k", 1.0)["queue"] == pytest.approx(2)
    b2 = LeakyBucket(rate=2, capacity=5)
    b2.allow("k", 0.0, cost=3)
    assert b2.inspect("k", 0.5)["level"] == pytest.approx(2)


def test_policing_admits_what_a_token_bucket_admits():
    leaky, bucket = LeakyBucket(rate=3, capacity=4), TokenBucket(rate=3, capacity=4)
    times = [0, 0, 0, 0, 0, 0.1, 0.2, 0.5, 0.5, 0.5, 1, 1, 1, 1, 1, 1, 3]
    assert [leaky.allow("k", t).allowed for t in times] == \
        [bucket.allow("k", t).allowed for t in times]


def test_mode_must_be_known():
    with pytest.raises(ValueError, match="mode"):
        LeakyBucket(rate=1, capacity=1, mode="drip")


@pytest.mark.parametrize("rate, capacity", [(50, 100), (10, 20), (3, 7), (0.3, 4)])
def test_a_shaper_of_capacity_c_takes_exactly_c_simultaneous_requests(rate, capacity):
    b = LeakyBucket(rate=rate, capacity=capacity, mode="shape")
    decisions = [b.allow("k", 7.0) for _ in range(capacity + 3)]
    assert sum(d.allowed for d in decisions) == capacity
    assert decisions[capacity - 1].remaining == 0
    assert decisions[capacity - 1].delay == pytest.approx((capacity - 1) / rate)


def test_shaping_and_policing_admit_the_same_requests():
    import numpy as np

    times = np.sort(np.random.default_rng(7).uniform(0, 20, 400))
    shape, police = LeakyBucket(4, 6, mode="shape"), LeakyBucket(4, 6, mode="police")
    assert [shape.allow("k", t).allowed for t in times] == \
        [police.allow("k", t).allowed for t in times]
