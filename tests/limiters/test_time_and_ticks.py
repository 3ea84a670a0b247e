"""``time_and_ticks`` converts a request's time once: what ``finite_time`` and ``to_ticks``
give, and the same errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ratelab.clock import MAX_TICKS, TICKS_PER_S, to_ticks
from ratelab.limiters.base import finite_time, time_and_ticks


@given(st.floats(min_value=-MAX_TICKS / TICKS_PER_S, max_value=MAX_TICKS / TICKS_PER_S,
                 exclude_min=True, exclude_max=True))
def test_time_and_ticks_converts_once(now):
    assert time_and_ticks(now) == (finite_time(now), to_ticks(now))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 2.0**62, True, "x", None])
def test_time_and_ticks_raises_as_finite_time(bad):
    with pytest.raises(ValueError) as expected:
        finite_time(bad)
    with pytest.raises(ValueError) as got:
        time_and_ticks(bad)
    assert str(got.value) == str(expected.value)
