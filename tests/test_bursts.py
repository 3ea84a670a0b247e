"""Schedules, trailing counts and play(): table-driven on made-up timelines, and properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.bursts import (boundary_attack, burst, max_in_window, play, poisson, spacing,
                            stream, trailing_count)
from ratelab.limiters import make
from ratelab.clock import to_ticks


def test_burst_and_stream_times():
    assert burst(4, at=1.0, spread_s=0.4).tolist() == pytest.approx([1.0, 1.1, 1.2, 1.3])
    assert burst(3).tolist() == [0.0, 0.0, 0.0]
    assert len(burst(0)) == 0
    assert stream(4, 0.0, 1.0).tolist() == pytest.approx([0.0, 0.25, 0.5, 0.75])
    assert len(stream(100, 0, 60)) == 6000


@pytest.mark.parametrize("bad, call", [
    ("n", lambda: burst(-1)), ("spread_s", lambda: burst(3, spread_s=-1)),
    ("rate_per_s", lambda: stream(0, 0, 1)), ("limit", lambda: boundary_attack(0, 1, 1)),
    ("window_s", lambda: trailing_count([1.0], 0)),
])
def test_bad_input_names_the_parameter(bad, call):
    with pytest.raises(ValueError, match=bad):
        call()


def test_boundary_attack_passes_whole_where_k_times_w_falls_short_in_floats():
    """96034 x 0.1 is in window 96033 as floor(t / 0.1) computes it in floats; the limiters
    count windows in whole microseconds, where it is exactly the start of window 96034. The
    second half must start where the fixed window starts its window, or half of it is
    refused."""
    from ratelab.limiters.fixed_window import window_index

    t = boundary_attack(limit=5, window_s=0.1, boundary=96034 * 0.1, lead_s=0.05)
    assert [window_index(x, 0.1) for x in t] == [96033] * 5 + [96034] * 5
    assert play(make("fixed-window", limit=5, window=0.1), t).allowed.all()


@pytest.mark.parametrize("kwargs, word", [({"lead_s": 1.5}, "lead_s"),
                                          ({"boundary": float("nan")}, "boundary")])
def test_boundary_attack_refuses_what_would_not_straddle_one_boundary(kwargs, word):
    """A lead longer than the window spreads each half over two windows: not the attack."""
    with pytest.raises(ValueError, match=word):
        boundary_attack(**{"limit": 3, "window_s": 1.0, "boundary": 2.0, **kwargs})


def test_boundary_attack_straddles_the_boundary():
    t = boundary_attack(limit=4, window_s=1.0, boundary=2.0, lead_s=0.2)
    assert t.tolist() == pytest.approx([1.8, 1.85, 1.9, 1.95, 2.0, 2.05, 2.1, 2.15])


# (times, window, expected count at each time) — half-open windows (t - W, t]
TRAILING = [
    ([0.0, 0.5, 1.0, 1.5], 1.0, [1, 2, 2, 2]),  # at 1.0 the request at 0.0 has left
    ([0.0, 0.0, 0.0], 1.0, [3, 3, 3]),  # ties all count
    ([0.0, 0.999, 1.0], 1.0, [1, 2, 2]),
    ([0.0, 2.0, 2.0, 2.5, 10.0], 0.5, [1, 2, 2, 1, 1]),  # at 2.5, 2.0 is outside (2.0, 2.5]
]


@pytest.mark.parametrize("times, window, want", TRAILING)
def test_trailing_count(times, window, want):
    assert trailing_count(np.array(times), window).tolist() == want


@examples(60)
@given(st.lists(st.floats(0, 20, allow_nan=False), max_size=60), st.floats(0.1, 5))
def test_trailing_count_matches_brute_force(times, window):
    times = np.sort(np.array(times))
    # in whole microseconds, as the limiters count time: s is in (t - W, t] on the tick grid
    tick, w = (lambda x: to_ticks(x)), to_ticks(window)
    brute = [sum(1 for s in times if tick(t) - w < tick(s) <= tick(t)) for t in times]
    assert trailing_count(times, window).tolist() == brute
    assert max_in_window(times, window) == (max(brute) if brute else 0)


def test_spacing_sorts_first():
    assert spacing(np.array([0.3, 0.1, 0.0])).tolist() == pytest.approx([0.1, 0.2])


def test_poisson_is_seeded():
    a = poisson(10, 0, 5, np.random.default_rng(1))
    b = poisson(10, 0, 5, np.random.default_rng(1))
    assert a.tolist() == b.tolist() and np.all(np.diff(a) >= 0) and 20 < len(a) < 80


def test_play_records_decisions_and_samples_state():
    run = play(make("token-bucket", rate=2, capacity=2), [0.0, 0.0, 0.0, 0.5], sample_s=0.25)
    assert run.allowed.tolist() == [True, True, False, True]
    assert run.sample_times.tolist() == [0.0, 0.25, 0.5]
    # state sampled after the requests of the same instant: 0 at 0.0, half a token at 0.25,
    # and at 0.5 the refilled token already taken by the request at 0.5
    assert run.state("tokens").tolist() == pytest.approx([0.0, 0.5, 0.0])
    assert run.admitted.tolist() == [0.0, 0.0, 0.5]
    assert run.rejected.tolist() == [0.0]


def test_play_departures_add_the_delay():
    run = play(make("leaky-bucket", rate=5, capacity=3, mode="shape"), burst(4))
    assert run.allowed.tolist() == [True, True, True, False]
    assert run.departures.tolist() == pytest.approx([0.0, 0.2, 0.4])


def test_play_rejects_unsorted_times():
    with pytest.raises(ValueError, match="sorted"):
        play(make("token-bucket", rate=1, capacity=1), [1.0, 0.5])


def test_fixed_window_boundary_attack_doubles_the_rolling_count():
    run = play(make("fixed-window", limit=50, window=1.0), boundary_attack(50, 1.0, 3.0))
    assert run.allowed.all()
    assert max_in_window(run.admitted, 1.0) == 100
    log = play(make("sliding-window-log", limit=50, window=1.0), boundary_attack(50, 1.0, 3.0))
    assert max_in_window(log.admitted, 1.0) == 50
