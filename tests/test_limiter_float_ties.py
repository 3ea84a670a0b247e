"""A full burst is admitted whole, whatever the rate: float sums of periods are not exact.

At rate 10 the period is 0.1, and 0.1 added 20 times is 2.0000000000000004, not 2.0: without
a tolerance GCRA (burst 19) and the shaping leaky bucket (capacity 20) refused the 20th
request of a burst at t = 0, while a token bucket of capacity 20 admitted it.
"""

import pytest

from ratelab.limiters import make


@pytest.mark.parametrize("rate", [0.3, 3, 7, 10, 30, 100, 1000])
@pytest.mark.parametrize("name, params", [("gcra", {"burst": 19}),
                                          ("leaky-bucket", {"capacity": 20, "mode": "shape"}),
                                          ("token-bucket", {"capacity": 20})])
def test_an_idle_key_takes_a_whole_burst_and_no_more(name, params, rate):
    limiter = make(name, rate=rate, **params)
    answers = [limiter.allow("k", 0.0) for _ in range(21)]
    assert [a.allowed for a in answers] == [True] * 20 + [False]
    assert answers[19].remaining == 0 and answers[18].remaining == 1


@pytest.mark.parametrize("rate", [3, 10, 100])
def test_after_the_burst_one_per_period(rate):
    gcra, shaper = make("gcra", rate=rate, burst=19), make("leaky-bucket", rate=rate, capacity=20,
                                                             mode="shape")
    for limiter in (gcra, shaper):
        assert all(limiter.allow("k", 0.0).allowed for _ in range(20))
        assert not limiter.allow("k", 0.5 / rate).allowed  # half a period later: still full
        assert limiter.allow("k", 1.0 / rate).allowed      # one period later: one more
