"""A shaping leaky bucket of capacity C holds exactly C simultaneous requests, whatever the rate.

``next_free`` grows by 1/rate per admitted request and float sums drift (100 x 0.02 is not
2.0): before the fix, a shaper of capacity 100 at 50/s turned away the 100th of 100
simultaneous requests and reported one request too few remaining.
"""

import pytest

from ratelab.limiters import make


@pytest.mark.parametrize("rate", [50, 3, 7, 10, 0.3, 1000])
@pytest.mark.parametrize("capacity", [1, 10, 100, 250])
def test_a_full_queue_takes_exactly_capacity(rate, capacity):
    shaper = make("leaky-bucket", rate=rate, capacity=capacity, mode="shape")
    decisions = [shaper.allow("k", 0.0) for _ in range(capacity + 1)]
    assert [d.allowed for d in decisions] == [True] * capacity + [False]
    assert [d.remaining for d in decisions[:capacity]] == list(range(capacity - 1, -1, -1))
    assert decisions[-1].retry_after == pytest.approx(1 / rate)


def test_the_queue_length_reads_whole():
    shaper = make("leaky-bucket", rate=50, capacity=100, mode="shape")
    for _ in range(99):
        shaper.allow("k", 0.0)
    assert shaper.inspect("k", 0.0)["queue"] == 99.0
    assert shaper.inspect("k", 0.5)["queue"] == 74.0
