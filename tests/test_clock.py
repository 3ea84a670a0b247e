"""to_ticks: float seconds to whole microseconds, exactly, and its numpy twin bit for bit."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.clock import (MAX_TICKS, TICKS_PER_S, check_ticks, seconds_until,
                                    ticks_array, to_ticks, window_ticks)


def exact_ticks(t: float) -> int:
    """The nearest whole microsecond to the float t, in exact rational arithmetic
    (half-way: to the even one)."""
    return round(Fraction(t) * TICKS_PER_S)


@pytest.mark.parametrize("t", [0.0, 0.1, 0.3, 1 / 3, -0.3, -7.25, 1e6 + 0.1, 8.1e8 + 0.7,
                               1.758e9, 1.758e9 + 0.1, 1.758e9 + 1 / 7, 4e9, 4e9 + 0.3,
                               4e9 + 0.0000005, 2**33 + 0.5, -1.758e9 - 0.1])
def test_to_ticks_is_the_nearest_microsecond(t):
    assert to_ticks(t) == exact_ticks(t)
    assert ticks_array(np.array([t]))[0] == exact_ticks(t)


def test_half_way_fractions_go_to_the_even_tick():
    # 2**-7 s is 7,812.5 us exactly: its odd multiples are half-way between two ticks, and
    # exact in binary up to 2**45 s
    halves = [k * 2**-7 for k in range(1, 80, 2)]
    times = [s + h for s in (0.0, 1e6, 1.758e9, 4e9, -1.758e9) for h in halves]
    for t in times:
        assert (to_ticks(t) * 2) % 4 == 0 or to_ticks(t) % 2 == 0, t  # the even one
        assert to_ticks(t) == exact_ticks(t), t
    assert ticks_array(np.array(times)).tolist() == [exact_ticks(t) for t in times]
    assert to_ticks(4e9 + 2**-7) == 4_000_000_000_007_812  # 7,812.5: to the even tick
    assert to_ticks(4e9 + 3 * 2**-7) == 4_000_000_000_023_438  # 23,437.5


def test_rounding_twice_would_miss():
    """round(t * 1e6) rounds the product first: at 1.758e9 + 1/7 it can land a tick off."""
    misses = [t for t in (1.758e9 + i / 7 for i in range(2000))
              if round(t * 1e6) != exact_ticks(t)]
    assert misses, "the double rounding this module avoids should show up here"
    assert all(to_ticks(t) == exact_ticks(t) for t in misses)


@examples(500)
@given(st.floats(min_value=-4.6e12, max_value=4.6e12, allow_nan=False))
def test_to_ticks_and_its_twin_agree_everywhere(t):
    assert to_ticks(t) == exact_ticks(t) == int(ticks_array(np.array([t]))[0])


def test_times_beyond_int64_ticks_are_refused_by_name():
    with pytest.raises(ValueError, match="now=5000000000000.0 is beyond"):
        check_ticks(5e12)
    with pytest.raises(ValueError, match="time"):
        ticks_array(np.array([0.0, -5e12]))
    assert check_ticks(4.6e12) == 4_600_000_000_000_000_000 < MAX_TICKS


def test_a_window_below_half_a_microsecond_is_refused():
    with pytest.raises(ValueError, match="window=4e-07"):
        window_ticks(4e-7)
    assert window_ticks(6e-7) == 1


@pytest.mark.parametrize("now", [0.0, 0.3, 1.758e9 + 0.3, 4e9 + 1 / 7, 1.5e10 + 0.3])
def test_a_wait_added_to_now_reads_as_the_target_tick(now):
    now_t = to_ticks(now)
    for d in range(1, 3000, 7):
        wait = seconds_until(now, now_t, now_t + d)
        assert to_ticks(now + wait) >= now_t + d
        assert wait >= d / TICKS_PER_S or math.isclose(wait, d / TICKS_PER_S)


HALVES = [s + k * 2**-7 for s in (0.0, 1e6, 1.758e9, 4e9, -1.758e9) for k in range(1, 80, 2)]
SEVENTHS = [1.758e9 + i / 7 for i in range(2000)]  # where rounding twice misses (above)


def compiled_ticks(times) -> list[int]:
    """The replay's compiled pass (``ratelab.replay.kernels.ticks_of``) over `times`."""
    from ratelab.replay.kernels import ticks_of

    t = np.array(times, dtype=np.float64)
    out = np.empty(len(t), dtype=np.int64)
    ticks_of(t, out)
    return out.tolist()


def test_the_compiled_pass_is_the_nearest_microsecond_half_way_and_all():
    times = HALVES + SEVENTHS + [-4.6e12, 4.6e12, 4.611686018427e12, -0.3, 0.0]
    assert compiled_ticks(times) == [exact_ticks(t) for t in times]


@examples(300)
@given(st.lists(st.floats(-4.6e12, 4.6e12, allow_nan=False), max_size=70))
def test_the_compiled_pass_is_to_ticks_at_every_magnitude(times):
    """The kernels' vectorised conversion gives to_ticks's ticks on every element, in the
    vector loop's body and in its tail (lists up to 70 long: a vector step takes 16)."""
    assert compiled_ticks(times) == [to_ticks(t) for t in times]
