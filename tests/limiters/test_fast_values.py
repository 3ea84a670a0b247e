"""The values the limiters build the fast way (slots set directly) equal the constructors'.

``base.decision``, ``token_bucket.bucket_state`` and ``leaky_bucket.meter_state`` skip the
frozen dataclasses' ``__init__`` for speed; they must build exactly the value it builds: equal,
same hash, same repr, and still frozen. ``time_and_ticks`` converts once what ``finite_time``
and ``to_ticks`` gave before.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ratelab.limiters.base import Decision, decision, finite_time, time_and_ticks
from ratelab.clock import MAX_TICKS, TICKS_PER_S, to_ticks
from ratelab.limiters.leaky_bucket import MeterState, meter_state
from ratelab.limiters.token_bucket import BucketState, bucket_state

floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
ticks = st.integers(min_value=-(2**62) + 1, max_value=2**62 - 1)


def same(a, b) -> None:
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    assert type(a) is type(b)
    first = dataclasses.fields(a)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(a, first, getattr(b, first))


@given(st.booleans(), floats, st.integers(min_value=0, max_value=2**53), floats, floats,
       st.one_of(st.none(), floats))
def test_decision_is_the_constructors_value(allowed, limit, remaining, retry, reset, delay):
    if delay is None:
        same(decision(allowed, limit, remaining, retry, reset), Decision(
            allowed=allowed, limit=limit, remaining=remaining, retry_after=retry,
            reset_after=reset))
    else:
        same(decision(allowed=allowed, limit=limit, remaining=remaining, retry_after=retry,
                      reset_after=reset, delay=delay),
             Decision(allowed, limit, remaining, retry, reset, delay))


@given(floats, ticks)
def test_states_are_the_constructors_values(amount, last):
    same(bucket_state(amount, last), BucketState(amount, last))
    same(meter_state(amount, last), MeterState(amount, last))


@given(st.floats(min_value=-MAX_TICKS / TICKS_PER_S, max_value=MAX_TICKS / TICKS_PER_S,
                 exclude_min=True, exclude_max=True))
def test_time_and_ticks_converts_once_as_before(now):
    assert time_and_ticks(now) == (finite_time(now), to_ticks(now))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 2.0**62, True, "x", None])
def test_time_and_ticks_raises_as_finite_time(bad):
    with pytest.raises(ValueError) as expected:
        finite_time(bad)
    with pytest.raises(ValueError) as got:
        time_and_ticks(bad)
    assert str(got.value) == str(expected.value)
