"""Fixed window, sliding log and sliding counter on made-up timelines and the lessons' examples."""

import pytest

from ratelab.limiters import FixedWindow, SlidingWindowCounter, SlidingWindowLog
from timeline import Step, run


# ------------------------------------------------------------------ fixed window

def test_fixed_window_counts_per_calendar_window():
    run(FixedWindow(limit=2, window=10), [
        Step(3.0, True, remaining=1, reset_after=7.0),
        Step(9.0, True, remaining=0),
        Step(9.9, False, retry_after=0.1),
        Step(10.0, True, remaining=1),        # a new window starts at 10, not at 13
        Step(19.999, True),
        Step(19.999, False),
    ])


def test_fixed_window_boundary_exploit_lets_200_through_in_two_seconds():
    """The lesson: 100/min, 100 requests at 59 s and 100 more at 61 s all pass."""
    w = FixedWindow(limit=100, window=60)
    first = sum(w.allow("k", 59.0).allowed for _ in range(100))
    second = sum(w.allow("k", 61.0).allowed for _ in range(100))
    assert (first, second) == (100, 100)
    assert not w.allow("k", 61.0).allowed


def test_fixed_window_count_rejected_keeps_a_hammering_client_counted():
    plain, incr_first = FixedWindow(2, 10), FixedWindow(2, 10, count_rejected=True)
    for t in (0, 0, 0, 1):
        plain.allow("k", t)
        incr_first.allow("k", t)
    assert plain.inspect("k", 1)["count"] == 2
    assert incr_first.inspect("k", 1)["count"] == 4
    assert incr_first.allow("k", 10).allowed  # still fresh in the next window


# ------------------------------------------------------------------ sliding log

def test_sliding_log_is_exact_over_the_half_open_window():
    run(SlidingWindowLog(limit=2, window=10), [
        Step(0.0, True),
        Step(5.0, True, remaining=0, reset_after=10.0),
        Step(9.0, False, retry_after=1.0),    # 0 leaves the window (t-10, t] at t = 10
        Step(10.0, True),                     # (0, 10]: 0 is out, 5 and 10 are in
        Step(14.0, False, retry_after=1.0),
        Step(15.0, True),
    ])


def test_sliding_log_catches_the_boundary_exploit():
    log = SlidingWindowLog(limit=100, window=60)
    first = sum(log.allow("k", 59.0).allowed for _ in range(100))
    second = sum(log.allow("k", 61.0).allowed for _ in range(100))
    assert (first, second) == (100, 0)
    assert log.allow("k", 119.0).allowed  # 59 left the window (59, 119]


def test_sliding_log_keeps_one_timestamp_per_admitted_request():
    log = SlidingWindowLog(limit=5, window=1)
    for t in (0.0, 0.1, 0.2, 0.2, 0.3, 0.3, 0.3):
        log.allow("k", t)
    assert log.inspect("k", 0.3)["log"] == [0.0, 0.1, 0.2, 0.2, 0.3]
    assert log.inspect("k", 1.15)["log"] == [0.2, 0.2, 0.3]


def test_sliding_log_retry_after_with_costs_and_count_rejected():
    log = SlidingWindowLog(limit=4, window=10, count_rejected=True)
    run(log, [
        Step(0.0, True, cost=2),
        Step(1.0, True, cost=2),
        Step(2.0, False, cost=2, retry_after=9.0),  # its own 2 are logged: 0 and 1 must go
    ])
    assert log.inspect("k", 2.0)["count"] == 6


# ------------------------------------------------------------------ sliding counter

def test_sliding_counter_worked_example_86():
    """prev 80, cur 30, 30% into the window: 80 x 0.7 + 30 = 86, accepted at limit 100."""
    c = SlidingWindowCounter(limit=100, window=60)
    for _ in range(80):
        assert c.allow("k", 10.0).allowed
    for _ in range(30):
        assert c.allow("k", 78.0).allowed
    state = c.inspect("k", 78.0)  # 18 s = 30% into [60, 120)
    assert (state["prev"], state["cur"]) == (80, 30)
    assert state["estimate"] == pytest.approx(86)
    d = c.allow("k", 78.0)
    assert d.allowed and d.remaining == 13  # 100 - 87


def test_sliding_counter_cloudflare_example_49_5():
    """42 x 0.75 + 18 = 49.5 under a limit of 50 passes; the next request (50.5) does not."""
    c = SlidingWindowCounter(limit=50, window=60)
    for _ in range(42):
        c.allow("k", 30.0)
    assert all(c.allow("k", 75.0).allowed for _ in range(17))  # 15 s into [60, 120)
    assert c.inspect("k", 75.0)["estimate"] == pytest.approx(42 * 0.75 + 17)
    assert c.allow("k", 75.0).allowed                  # 42 x 0.75 + 18 = 49.5
    assert c.inspect("k", 75.0)["estimate"] == pytest.approx(49.5)
    d = c.allow("k", 75.0)                             # 50.5 > 50
    assert not d.allowed
    # it passes once 0.5 more of the previous window has faded: 42 x (1 - e/60) <= 31
    assert d.retry_after == pytest.approx(60 * (1 - 31 / 42) - 15)


def test_sliding_counter_timeline():
    c = SlidingWindowCounter(limit=4, window=10)
    for t in (1.0, 2.0, 3.0, 4.0):
        assert c.allow("k", t).allowed
    d = c.allow("k", 5.0)
    assert not d.allowed and d.retry_after == pytest.approx(7.5)  # at 12.5: 4 x 0.75 + 1 = 4
    assert not c.allow("k", 12.4).allowed
    assert c.allow("k", 12.5).allowed
    assert c.inspect("k", 25.0)["estimate"] == pytest.approx(1 * 0.5)  # prev = the one at 12.5
    assert c.inspect("k", 35.0)["estimate"] == 0  # two windows later everything is forgotten


def test_sliding_counter_caps_the_boundary_exploit_below_2x():
    c = SlidingWindowCounter(limit=100, window=60)
    first = sum(c.allow("k", 59.0).allowed for _ in range(100))
    second = sum(c.allow("k", 61.0).allowed for _ in range(100))
    assert first == 100
    assert second == 1  # 100 x (59/60) + n + 1 <= 100 only for n = 0
