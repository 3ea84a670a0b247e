"""HAProxy's request-rate rule, step by step on made-up timelines, and its invariants.

Every row below is a behaviour measured against a real HAProxy 2.6 (tests/test_haproxy_real.py
replays such schedules and compares each rate and status the server sends back).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.limiters import HAProxyRate, SlidingWindowCounter, make
from ratelab.limiters import haproxy as hp
from timeline import Step, run


def test_the_issue_example_12_at_once_then_8_refused_1_2_s_later():
    """gt 5 per second: 5 x 200 then 7 x 429; 1.2 s later the 12 counted weigh 12 x 0.8 = 9
    (floored), so 8 more are refused: refused requests count."""
    rule = HAProxyRate(period=1, limit=5)
    first = [rule.allow("a", 100.0).allowed for _ in range(12)]
    assert first == [True] * 5 + [False] * 7
    assert [rule.allow("a", 101.2).allowed for _ in range(8)] == [False] * 8
    assert rule.inspect("a", 101.2)["rate"] == 8 + 12 * 800 // 1000


def test_the_request_is_counted_before_gt_and_ge_passes_one_fewer():
    gt, ge = HAProxyRate(period=1, limit=3), HAProxyRate(period=1, limit=3, compare="ge")
    run(gt, [Step(0, True, remaining=2), Step(0, True, remaining=1), Step(0, True, remaining=0),
             Step(0, False, remaining=0)])
    run(ge, [Step(0, True, remaining=1), Step(0, True, remaining=0), Step(0, False)])
    assert (gt.limit, ge.limit) == (3, 2)


def test_periods_start_at_the_first_request_not_on_the_calendar():
    """A key first seen at 0.9 s has its period [0.9, 1.9): at 1.5 s it is still full and
    refuses, where the calendar-aligned counter has started [1, 2) and weighs the 4 of
    [0, 1) by 0.5; at 1.95 s HAProxy's new period weighs the 5 it counted (the refused one
    too) by 0.95, the calendar counter its 4 by 0.05."""
    rule = HAProxyRate(period=1, limit=4)
    calendar = SlidingWindowCounter(limit=4, window=1, count_rejected=True)
    for _ in range(4):
        assert rule.allow("k", 0.9).allowed and calendar.allow("k", 0.9).allowed
    assert [rule.allow("k", t).allowed for t in (1.5, 1.95)] == [False, False]
    assert [calendar.allow("k", t).allowed for t in (1.5, 1.95)] == [True, True]
    assert rule.inspect("k", 1.95)["period_start"] == 1.9


def test_rotation_after_one_period_keeps_the_alignment_and_weighs_the_previous_count():
    """4 requests in [0, 1); at 1.25 s the period [1, 2) holds 1 and the previous 4 weigh
    4 x 0.75 = 3: rate 4 > 3. At 1.75 s: 2 + 4 x 0.25 = 3 passes."""
    rule = HAProxyRate(period=1, limit=3)
    run(rule, [Step(0.0, True), Step(0.0, True), Step(0.0, True), Step(0.0, False),
               Step(1.25, False), Step(1.75, True, remaining=0)])
    assert rule.inspect("k", 1.75)["period_start"] == 1.0


def test_after_two_idle_periods_the_period_restarts_at_the_request():
    """Idle for 2 periods or more: prev is 0 and the period begins at the request (2.3 s), not
    at 2.0 s: at 3.2 s it is still the same period."""
    rule = HAProxyRate(period=1, limit=2)
    run(rule, [Step(0.0, True), Step(0.0, True), Step(0.0, False), Step(2.3, True),
               Step(3.2, True), Step(3.25, False)])
    assert rule.inspect("k", 3.25)["period_start"] == 2.3


def test_a_period_begins_on_an_even_millisecond():
    """First seen at ms 1, a 2 ms period begins at ms 0: at ms 3 it has rotated once (the
    previous 3 weigh 3 x 1 // 2 = 1, so 1 + 1 = 2 passes), where from ms 1 it would not."""
    rule = HAProxyRate(period=0.002, limit=2)
    run(rule, [Step(0.001, True), Step(0.001, True), Step(0.001, False), Step(0.003, True)])
    assert rule.inspect("k", 0.003)["period_start"] == 0.002


def test_an_odd_period_starts_each_rotation_one_millisecond_early():
    rule = HAProxyRate(period=0.999, limit=10)
    rule.allow("k", 0.0)
    rule.allow("k", 1.0)   # ms 1000: elapsed 1000 >= 999, the next period at even(999) = 998
    assert rule.inspect("k", 1.0)["period_start"] == 0.998
    rule.allow("k", 1.997)  # ms 1997 = 998 + 999: rotates again, to even(1997) = 1996
    assert rule.inspect("k", 1.997)["period_start"] == 1.996


def test_an_expired_entry_restarts_as_a_new_key():
    """expire 0.5 s with a 2 s period: idle 0.6 s, the entry is gone and the rate starts at 1;
    idle 0.4 s, it is there and full."""
    rule = HAProxyRate(period=2, limit=2, expire=0.5)
    run(rule, [Step(0.0, True), Step(0.0, True), Step(0.0, False), Step(0.4, False),
               Step(1.0, True, key="k"), Step(1.0, True), Step(1.0, False)])
    assert rule.state("k").tick == 1000


def test_default_expire_is_two_periods_where_expiry_changes_nothing():
    rule = HAProxyRate(period=1.5, limit=2)
    assert (rule.expire_ms, rule.params["expire"]) == (3000, None)
    assert HAProxyRate(period=2e6, limit=2).expire_ms == hp.MAX_MS  # 24.8 days, its most


def test_an_expired_entry_reads_as_none_and_other_keys_times_change_nothing():
    rule = HAProxyRate(period=1, limit=2)
    for key in range(5):
        rule.allow(key, 0.0)
    rule.allow("late", 2.0)  # two periods on: every earlier entry has expired at 2.0
    assert rule.inspect(1, 2.0) == {"rate": 0, "period_start": None, "curr": 0, "prev": 0,
                                    "limit": 2.0, "known": False}
    # ... but a key's own next request, before its entry expires, still finds it: a later
    # time given for another key does not expire it (each key's times are its own)
    rule.allow(0, 0.0)
    assert not rule.allow(0, 0.5).allowed  # 0's third request within the period, gt 2
    alone = HAProxyRate(period=1, limit=2)
    assert [alone.allow(0, t).allowed for t in (0.0, 0.0, 0.5)] == [True, True, False]


def test_the_reading_keeps_a_lone_request_unweighted():
    """HAProxy's low-rate correction: with nothing in this period and at most 1 in the last,
    the rate reads that 1 until two periods have gone; 3 in the last fade with the weight."""
    rule = HAProxyRate(period=1, limit=5)
    rule.allow("one", 0.0)
    assert [rule.inspect("one", t)["rate"] for t in (0.5, 1.2, 1.999, 2.001)] == [1, 1, 1, 0]
    for _ in range(3):
        rule.allow("three", 0.0)
    assert [rule.inspect("three", t)["rate"] for t in (0.5, 1.2, 1.5, 1.9)] == [3, 2, 1, 0]


def test_retry_after_is_exact_and_a_request_before_it_counts():
    """gt 5: 6 at once, the 6th refused; a request passes again once 1 + 6 x remain // 1000
    <= 5, at remain 833 ms: 1.167 s. Sent before that it is refused and counted too."""
    rule = HAProxyRate(period=1, limit=5)
    for _ in range(5):
        rule.allow("k", 0.0)
    d = rule.allow("k", 0.0)
    assert not d.allowed and d.retry_after == pytest.approx(1.167)
    assert rule.peek("k", 1.167).allowed and not rule.peek("k", 1.166).allowed
    assert not rule.allow("k", 1.0).allowed  # counted: the wait moves on
    assert not rule.peek("k", 1.167).allowed


def test_reset_after_and_retry_after_stop_at_expiry():
    rule = HAProxyRate(period=10, limit=1, expire=3)
    rule.allow("k", 0.0)
    d = rule.allow("k", 0.0)
    assert (d.retry_after, d.reset_after) == (3.0, 3.0)


def test_cost_must_be_one_and_bad_parameters_are_named():
    rule = HAProxyRate(period=1, limit=3)
    with pytest.raises(ValueError, match="cost=2"):
        rule.allow("k", 0.0, cost=2)
    with pytest.raises(ValueError, match="cost=0.5: haproxy counts requests"):
        rule.allow("k", 0.0, cost=0.5)
    with pytest.raises(ValueError, match="period"):
        make("haproxy", limit=3)


def test_the_config_lines_are_the_rule_replayed():
    rule = make("haproxy", period=10, limit=100)
    assert rule.config() == (
        "# ratelab policy: haproxy period=10 limit=100\n"
        "    stick-table type ip size 1m expire 20s store http_req_rate(10s)\n"
        "    http-request track-sc0 src\n"
        "    http-request deny deny_status 429 hdr Retry-After 20 "
        "if { sc_http_req_rate(0) gt 100 }")
    odd = make("haproxy", period=0.25, limit=4, compare="ge", expire=1.5)
    text = odd.config("req.hdr(x-api-key)")
    assert "type string len 64 size 1m expire 1500ms store http_req_rate(250ms)" in text
    assert "track-sc0 req.hdr(x-api-key)" in text and "gt" not in text.split("if")[-1]
    assert "sc_http_req_rate(0) ge 4 }" in text and "Retry-After 1 " in text
    assert "compare=ge expire=1.5" in text
    with pytest.raises(ValueError, match="key"):
        rule.config(" ")


# ---------------------------------------------------------------- invariants


@st.composite
def schedules(draw, period_ms: int, max_gap_ms: int | None = None):
    """Sorted request times (ms) of one key, with ties; gaps below `max_gap_ms` when given."""
    gaps = [0, 0, 0, 1, 2, period_ms // 3, period_ms // 2, period_ms - 1, period_ms,
            period_ms + 1, 3 * period_ms // 2]
    if max_gap_ms is None:
        gaps += [2 * period_ms, 2 * period_ms + 7, 5 * period_ms]
    t = draw(st.integers(0, 5))
    out = []
    for g in draw(st.lists(st.sampled_from(gaps), min_size=1, max_size=60)):
        t += g if max_gap_ms is None else min(g, max_gap_ms)
        out.append(t)
    return out


@examples(150)
@given(data=st.data(), period_ms=st.sampled_from([2, 4, 100, 1000, 1002]),
       limit=st.integers(1, 6), expire=st.sampled_from([None, 1.0, 10.0]))
def test_never_more_than_the_limit_per_period_nor_twice_it_per_trailing_period(
        data, period_ms, limit, expire):
    """Each period admits at most `limit` (the k-th request counted in a period reads at least
    k); a trailing window of one period meets at most two of them. For an even period and
    expire of at least a period."""
    expire = None if expire is None or expire * 1000 < period_ms else expire
    rule = HAProxyRate(period=period_ms / 1000, limit=limit, expire=expire)
    times = data.draw(schedules(period_ms))
    passed = [t for t in times if rule.allow("k", t / 1000).allowed]
    for t in passed:
        assert sum(1 for s in passed if t - period_ms < s <= t) <= 2 * limit


@examples(150)
@given(data=st.data(), period_ms=st.sampled_from([250, 500, 1000, 2000]),
       limit=st.integers(1, 6))
def test_aligned_with_the_calendar_it_is_the_counter_counting_refusals_floored(
        data, period_ms, limit):
    """A key first seen at 0 with no gap of a period: HAProxy's periods are the calendar's
    windows, and its rate is the calendar-aligned counter's estimate (count_rejected: both
    count every request) floored. So HAProxy admits every request the counter admits, and
    more only where the estimate has a fraction. Times on a 1/16-s grid: every blend exact."""
    window = period_ms / 1000
    rule = HAProxyRate(period=window, limit=limit)
    counter = SlidingWindowCounter(limit=limit, window=window, count_rejected=True)
    grid = 62.5  # ms
    times = [0.0] + [grid * round(t / grid) for t in data.draw(
        schedules(period_ms, max_gap_ms=period_ms - 63))]
    times = sorted(times)
    for t in times:
        estimate = counter.inspect("k", t / 1000)["estimate"] + 1
        c, h = counter.allow("k", t / 1000).allowed, rule.allow("k", t / 1000).allowed
        assert h or not c, (t, estimate)
        if h and not c:
            assert estimate != int(estimate) and int(estimate) <= limit, (t, estimate)
