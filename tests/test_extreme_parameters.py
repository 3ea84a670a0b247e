"""Parameters at any magnitude: refused with a ValueError naming them, or replayed alike.

A parameter whose arithmetic would overflow somewhere — a float that becomes infinite, an
integer beyond 64 bits, a count beyond 2**53 — must be refused when the limiter is made, by
name; every parameter that is accepted must give the same decisions, delays, readings,
remaining and finite waits in both engines, with no numpy warning on the way. The property
draws every numeric parameter from 1e-300 to 1e300; the table names each algorithm's
overflowing parameters.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from budget import examples

from ratelab.limiters import NAMES, make
from ratelab.replay import replay
from ratelab.traces import Trace

# times at the origin, at Unix times of this century and near the largest the limiters hold
TIMES = np.array([0.0, 0.0, 0.0, 1e-6, 0.5, 1.0, 1.0, 2.0, 1e3, 1.7e9, 1.7e9, 1.7e9 + 1e-6,
                  4e12, 4.6e12])
KEYS = np.array([0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0], dtype=np.int32)

magnitudes = st.builds(lambda m, e: m * 10.0 ** e, st.sampled_from([1.0, 2.5, 7.3]),
                       st.integers(-300, 300))
edges = st.sampled_from([2.0 ** 52, 2.0 ** 53 - 1, 2.0 ** 61 / 1e6, 2.0 ** 62 / 1e6, 9e21,
                         1e15, 1e6, 4e-7, 6e-7])
numbers = st.one_of(magnitudes, edges)
wholes = st.one_of(st.integers(0, 10), st.integers(0, 2 ** 62),
                   st.sampled_from([10 ** 12 - 1, 10 ** 12, 2 ** 53 - 2, 2 ** 53]))

PARAMS = {
    "token-bucket": st.fixed_dictionaries({"rate": numbers, "capacity": numbers}),
    "leaky-bucket": st.fixed_dictionaries({"rate": numbers, "capacity": numbers,
                                           "mode": st.sampled_from(["police", "shape"])}),
    **{name: st.fixed_dictionaries({"limit": numbers, "window": numbers,
                                    "count_rejected": st.booleans()})
       for name in ("fixed-window", "sliding-window-log", "sliding-window-counter")},
    "gcra": st.fixed_dictionaries({"rate": numbers, "burst": wholes}),
    "nginx": st.fixed_dictionaries({"rate": numbers, "burst": wholes,
                                    "nodelay": st.booleans()}),
    "haproxy": st.fixed_dictionaries({"period": numbers, "limit": wholes,
                                      "compare": st.sampled_from(["gt", "ge"]),
                                      "expire": st.one_of(st.none(), numbers)}),
}


def replayed_alike(limiter) -> None:
    """Both engines replay TIMES alike, every wait finite, no numpy warning."""
    cost = None if limiter.max_cost >= 1 else np.full(len(TIMES), limiter.max_cost)
    trace = Trace(TIMES, KEYS, cost)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        a = replay(limiter, trace, engine="reference", progress=False, details=True)
        b = replay(limiter, trace, engine="compiled", progress=False, details=True)
    for field in ("allowed", "delay", "counter", "remaining", "retry_after"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), (limiter, field)
    assert np.all(np.isfinite(a.retry_after) & (a.retry_after >= 0)), limiter
    assert np.all(np.isfinite(a.delay) & (a.delay >= 0)), limiter


@pytest.mark.parametrize("name", NAMES)
def test_parameters_of_any_magnitude_are_refused_by_name_or_replayed_alike(name):
    @examples(60, suppress_health_check=[HealthCheck.too_slow])
    @given(params=PARAMS[name])
    def check(params):
        try:
            limiter = make(name, **params)
        except ValueError as e:
            assert any(p in str(e) for p in params), str(e)
            return
        replayed_alike(limiter)

    check()


@pytest.mark.parametrize("name, params, param", [
    ("token-bucket", {"rate": 1e300, "capacity": 3}, "rate"),  # remaining beyond 64 bits
    ("token-bucket", {"rate": 1e22, "capacity": 3}, "rate"),
    ("leaky-bucket", {"rate": 1e300, "capacity": 3}, "rate"),
    ("leaky-bucket", {"rate": 1e300, "capacity": 3, "mode": "shape"}, "rate"),
    ("token-bucket", {"rate": 1, "capacity": 1e300}, "capacity"),
    ("leaky-bucket", {"rate": 1, "capacity": 1e300}, "capacity"),
    ("gcra", {"rate": 1e300, "burst": 2}, "rate"),
    ("gcra", {"rate": 1, "burst": 2 ** 62}, "burst"),
    ("nginx", {"rate": 1e300, "burst": 2}, "rate"),
    ("nginx", {"rate": 1, "burst": 2 ** 62}, "burst"),
    # a time and two windows after it beyond 64 bits: the counter's reset wrapped around
    ("sliding-window-counter", {"limit": 3, "window": 4.6e12}, "window"),
    ("fixed-window", {"limit": 3, "window": 2.4e12}, "window"),
    ("sliding-window-log", {"limit": 3, "window": 1e300}, "window"),
    ("fixed-window", {"limit": 1e300, "window": 1}, "limit"),
    ("sliding-window-log", {"limit": 1e300, "window": 1}, "limit"),
    ("sliding-window-counter", {"limit": 1e300, "window": 1}, "limit"),
])
def test_an_overflowing_parameter_is_a_value_error_naming_it(name, params, param):
    with pytest.raises(ValueError, match=rf"^{param}\b") as e:
        make(name, **params)
    assert repr(params[param]) in str(e.value)


@pytest.mark.parametrize("name, params", [
    ("token-bucket", {"rate": 9e21, "capacity": 3}),
    ("leaky-bucket", {"rate": 9e21, "capacity": 3, "mode": "shape"}),
    ("sliding-window-counter", {"limit": 3, "window": 2.3e12}),
    ("fixed-window", {"limit": 3, "window": 2.3e12}),
    ("sliding-window-log", {"limit": 3, "window": 2.3e12}),
    ("nginx", {"rate": 9.9e14, "burst": 10 ** 12 - 1}),
])
def test_just_below_each_bound_both_engines_agree(name, params):
    replayed_alike(make(name, **params))


def test_the_bounds_are_where_their_arithmetic_stops_fitting():
    from ratelab.clock import MAX_TICKS, MAX_WINDOW_TICKS, TICKS_PER_S, tie_amount
    from ratelab.limiters.base import LARGEST, MAX_RATE

    assert tie_amount(math.nextafter(MAX_RATE, 0)) < LARGEST
    assert MAX_TICKS + 2 * MAX_WINDOW_TICKS == 2 ** 63  # a time and two windows: 64 bits
    assert MAX_WINDOW_TICKS / TICKS_PER_S > 2e12  # about 73,000 years
