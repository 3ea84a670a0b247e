"""Bad input raises ValueError naming the parameter and the value; never a silent answer."""

import math

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
