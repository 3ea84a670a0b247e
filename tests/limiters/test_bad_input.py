"""Bad input raises ValueError naming the parameter and the value; never a silent answer."""

import math

import numpy as np

import pytest

from ratelab.limiters import NAMES, make
from test_properties import PARAMS

BAD_NUMBERS = [0, -1, math.nan, math.inf, "ten", None]


def cases():
    for name, params in PARAMS.items():
        for param in params:
            if param == "mode":
                continue
            for bad in BAD_NUMBERS:
                if bad == 0 and param == "burst":
                    continue  # burst 0 is meaningful: nginx's default
                yield name, param, bad


@pytest.mark.parametrize("name, param, bad", list(cases()))
def test_bad_parameter_is_named(name, param, bad):
    with pytest.raises(ValueError, match=param) as e:
        make(name, **{**PARAMS[name], param: bad})
    assert repr(bad) in str(e.value)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [0, -2, math.nan, math.inf])
def test_bad_cost_is_named(name, bad):
    with pytest.raises(ValueError, match="cost"):
        make(name, **PARAMS[name]).allow("k", 0.0, cost=bad)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "nginx"])
def test_a_cost_no_idle_key_could_ever_admit_is_an_error(name):
    lim = make(name, **PARAMS[name])
    with pytest.raises(ValueError, match=r"cost=4\.0 is above"):
        lim.allow("k", 0.0, cost=4)  # every PARAMS limit is 3 (gcra: burst 2 + 1)


@pytest.mark.parametrize("name", NAMES)
def test_time_running_backwards_for_a_key_is_an_error(name):
    lim = make(name, **PARAMS[name])
    lim.allow("k", 5.0)
    lim.allow("other", 1.0)  # another key's clock is its own
    with pytest.raises(ValueError, match=r"now=4\.0 is earlier than the last time 5\.0"):
        lim.allow("k", 4.0)
    with pytest.raises(ValueError, match="earlier"):
        lim.peek("k", 4.0)
    assert lim.allow("k", 5.0) is not None  # equal times are fine


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [math.nan, math.inf, "noon"])
def test_bad_time_is_named(name, bad):
    with pytest.raises(ValueError, match="now"):
        make(name, **PARAMS[name]).allow("k", bad)


def test_unknown_algorithm_and_unknown_parameter():
    with pytest.raises(ValueError, match="unknown limiter 'bucket'"):
        make("bucket")
    with pytest.raises(ValueError, match="token-bucket.*burst"):
        make("token-bucket", rate=1, burst=3)


@pytest.mark.parametrize("name", ["fixed-window", "sliding-window-log",
                                  "sliding-window-counter"])
def test_count_rejected_must_be_a_bool(name):
    with pytest.raises(ValueError, match="count_rejected"):
        make(name, **PARAMS[name], count_rejected="yes")


# ---------------------------------------------------------------- booleans, extremes


BOOLEANS = [True, False, np.bool_(True), np.bool_(False)]


@pytest.mark.parametrize("name, param", [(n, p) for n, ps in PARAMS.items() for p in ps
                                         if p != "mode"])
@pytest.mark.parametrize("flag", BOOLEANS, ids=repr)
def test_a_boolean_is_not_a_number(name, param, flag):
    """True is 1 to Python; as a rate, limit, window or burst it is a mistake, named."""
    with pytest.raises(ValueError, match=param):
        make(name, **{**PARAMS[name], param: flag})


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("flag", BOOLEANS, ids=repr)
def test_a_boolean_time_or_cost_is_refused(name, flag):
    lim = make(name, **PARAMS[name])
    with pytest.raises(ValueError, match="now"):
        lim.allow("k", flag)
    with pytest.raises(ValueError, match="cost"):
        lim.allow("k", 1.0, cost=flag)


@pytest.mark.parametrize("name, param", [("token-bucket", "capacity"),
                                         ("leaky-bucket", "capacity"),
                                         ("fixed-window", "limit"), ("sliding-window-log", "limit"),
                                         ("sliding-window-counter", "limit"), ("gcra", "burst"),
                                         ("haproxy", "limit")])
def test_a_limit_beyond_2_53_is_refused_by_name(name, param):
    """Above 2**53 a float is not a whole number and remaining would not fit 64 bits."""
    with pytest.raises(ValueError, match=param):
        make(name, **{**PARAMS[name], param: 2.0**53})


@pytest.mark.parametrize("name, params, param", [
    ("token-bucket", {"rate": 1e-300, "capacity": 3}, "rate"),   # a wait beyond 2**53 us
    ("leaky-bucket", {"rate": 1e-12, "capacity": 3}, "rate"),
    ("gcra", {"rate": 1e-300, "burst": 2}, "rate"),              # was OverflowError
    ("gcra", {"rate": 2e6, "burst": 2}, "rate"),                 # below one tick per request
    ("gcra", {"rate": 1e-3, "burst": 10**12}, "burst"),
    ("nginx", {"rate": 1e300, "burst": 2}, "rate"),              # rate_milli beyond 64 bits
    ("nginx", {"rate": 2, "burst": 10**12}, "burst"),
    ("fixed-window", {"limit": 3, "window": 1e-300}, "window"),  # was OverflowError
    ("sliding-window-counter", {"limit": 3, "window": 4e-7}, "window"),
    ("sliding-window-log", {"limit": 3, "window": 1e13}, "window"),
    ("haproxy", {"period": 1e-4, "limit": 3}, "period"),         # below HAProxy's millisecond
    ("haproxy", {"period": 0.0015, "limit": 3}, "period"),       # not a whole millisecond
    ("haproxy", {"period": 3e6, "limit": 3}, "period"),          # beyond HAProxy's timers
    ("haproxy", {"period": 1, "limit": 2**32}, "limit"),         # beyond its 32-bit counters
    ("haproxy", {"period": 1, "limit": 1, "compare": "ge"}, "limit"),  # ge 1 refuses all
    ("haproxy", {"period": 1, "limit": 3, "compare": "lt"}, "compare"),
    ("haproxy", {"period": 1, "limit": 3, "expire": 0.0005}, "expire"),
    ("haproxy", {"period": 1, "limit": 3, "expire": math.inf}, "expire"),
])
def test_extreme_parameters_are_a_value_error_naming_them(name, params, param):
    with pytest.raises(ValueError, match=param):
        make(name, **params)


@pytest.mark.parametrize("name", NAMES)
def test_a_time_beyond_int64_microseconds_is_refused_by_name(name):
    with pytest.raises(ValueError, match=r"now=1e\+300|now=5000000000000.0"):
        make(name, **PARAMS[name]).allow("k", 5e12)


@pytest.mark.parametrize("name, params", [
    ("token-bucket", {"rate": 1e6, "capacity": 2.0**52}),
    ("leaky-bucket", {"rate": 1e6, "capacity": 2.0**52}),
    ("fixed-window", {"limit": 2.0**52, "window": 1}),
    ("sliding-window-log", {"limit": 2.0**52, "window": 1}),
    ("sliding-window-counter", {"limit": 2.0**52, "window": 1}),
    ("gcra", {"rate": 1e6, "burst": 2**40}),
    ("nginx", {"rate": 1e14, "burst": 10**12 - 1}),
])
def test_huge_limits_give_the_same_remaining_in_both_engines(name, params):
    """remaining in the compiled engine is int64: at the largest limits accepted it must not
    wrap around, and must equal the reference's on every request."""
    from ratelab.replay import replay
    from ratelab.traces import Trace

    trace = Trace(np.array([0.0, 0.0, 1.0, 4e9]), np.zeros(4, dtype=np.int32))
    lim = make(name, **params)
    a = replay(lim, trace, engine="compiled", progress=False, details=True)
    b = replay(lim, trace, engine="reference", progress=False, details=True)
    assert a.remaining.tolist() == b.remaining.tolist()
    assert a.retry_after.tolist() == b.retry_after.tolist()
    assert min(a.remaining) > 2**39
