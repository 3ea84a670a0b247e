"""Metrics on made-up timelines with hand-computed answers, and against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab import metrics as m
from ratelab.traces import Trace
from ratelab.traces.generators import boundary_attack

# A made-up timeline: key 0 (a) and key 1 (b).
#   t:   0   1   1   2   5   6   6.5  10  11
#   key: a   a   b   a   b   a   a    b   a
T = np.array([0, 1, 1, 2, 5, 6, 6.5, 10, 11], dtype=float)
K = np.array([0, 0, 1, 0, 1, 0, 0, 1, 0])
TRACE = Trace(T, K, key_names=["a", "b"])


@pytest.mark.parametrize("w, count, end, first, last", [
    (1, 2, 1.0, 1, 2),    # (0, 1] = {1, 1}: the request at 0 sits on the open edge
    (2, 3, 1.0, 0, 2),    # (-1, 1] = {0, 1, 1}; (0, 2] and (4.5, 6.5] tie later
    (5, 4, 2.0, 0, 3),    # (-3, 2] = {0, 1, 1, 2}; (0, 5] and (1.5, 6.5] tie later
    (6, 6, 6.5, 1, 6),    # (0.5, 6.5] = {1, 1, 2, 5, 6, 6.5}; (0, 6] has only 5
    (100, 9, 11.0, 0, 8),
])
def test_max_in_window_by_hand(w, count, end, first, last):
    got = m.max_in_window(T, w)
    assert (got.count, got.end_s, got.first, got.last) == (count, end, first, last)


def test_window_max_reads_back():
    assert str(m.max_in_window(T, 6)) == "6 requests in (0.5, 6.5] (window 6 s)"


def test_max_in_window_with_allowed_and_weights():
    allowed = np.array([1, 1, 0, 1, 1, 1, 1, 1, 1], bool)
    got = m.max_in_window(TRACE, 2, allowed=allowed)
    assert (got.count, got.end_s) == (3, 6.5)  # (−1, 1] holds 0 and one 1; (4.5, 6.5]: 3
    w = np.array([1, 1, 1, 1, 10, 1, 1, 1, 1])
    got = m.max_in_window(TRACE, 2, weights=w)
    assert (got.count, got.end_s) == (12.0, 6.5)  # (4.5, 6.5]: 10 + 1 + 1


def test_boundary_attack_doubles_the_limit_in_a_trailing_window():
    t = boundary_attack(100, 60.0)
    assert m.max_in_window(t, 60.0).count == 200
    assert list(m.window_counts(t, 60.0)) == [100, 100]


def test_max_in_window_per_key_by_hand():
    df = m.max_in_window_per_key(TRACE, 2)
    assert list(df.index) == [0, 1] and list(df["name"]) == ["a", "b"]
    # a: 0, 1, 2, 6, 6.5, 11 -> (0, 2] = {1, 2}: 2 first at t=1 ((-1, 1] = {0, 1})
    # b: 1, 5, 10 -> 1 each
    assert list(df["max_in_window"]) == [2, 1]
    assert list(df["end_s"]) == [1.0, 1.0]
    df = m.max_in_window_per_key(TRACE, 5)
    # a: (-3, 2] = {0, 1, 2} -> 3 (first; (1.5, 6.5] ties later); b: (0, 5] = {1, 5} -> 2
    assert list(df["max_in_window"]) == [3, 2] and list(df["end_s"]) == [2.0, 5.0]


def test_rolling_count_by_hand():
    s = m.rolling_count(T, 2, at=[0, 0.5, 1, 2, 3, 6.5, 12, 13])
    assert list(s) == [1, 1, 3, 3, 1, 3, 1, 0]  # 6.5: (4.5, 6.5] = {5, 6, 6.5}
    assert list(s.index) == [0, 0.5, 1, 2, 3, 6.5, 12, 13]
    grid = m.rolling_count(T, 10)
    # the last instant is 11: (1, 11] leaves out the two requests at 1
    assert len(grid) == 12 and grid.index[1] == 1.0 and grid.iloc[-1] == 6


def test_window_counts_are_calendar_aligned():
    s = m.window_counts(T, 5)
    assert dict(s) == {0.0: 4, 5.0: 3, 10.0: 2}


def test_spacing_overall_per_key_and_with_delay():
    np.testing.assert_array_equal(m.spacing(T), np.diff(T))
    np.testing.assert_array_equal(m.spacing(TRACE, per_key=True),
                                  [1, 1, 4, 0.5, 4.5, 4, 5])  # a's gaps, then b's
    delay = np.array([0, 0, 0, 1, 0, 0, 0, 0, 0], float)  # the request at 2 leaves at 3
    np.testing.assert_array_equal(m.spacing(T[:4], delay=delay[:4]), [1, 0, 2])
    with pytest.raises(ValueError, match="per_key"):
        m.spacing(T, per_key=True)


def test_per_key_summary_by_hand():
    allowed = np.array([1, 1, 1, 0, 1, 1, 0, 1, 0], bool)
    df = m.per_key_summary(TRACE, allowed=allowed, window_s=2,
                           delay=np.where(allowed, 0.5, 0.0))
    a, b = df.loc[0], df.loc[1]
    assert list(df.index) == [0, 1]  # a has more requests
    assert (a["name"], a["requests"], a["first_s"], a["last_s"]) == ("a", 6, 0.0, 11.0)
    assert a["rate_per_s"] == pytest.approx(5 / 11)
    assert (a["min_gap_s"], a["median_gap_s"]) == (0.5, 1.0)  # gaps 1, 1, 4, 0.5, 4.5
    assert (a["admitted"], a["rejected"], a["rejected_frac"]) == (3, 3, 0.5)
    assert a["max_in_window"] == 2  # admitted a: 0, 1, 6
    assert a["mean_delay_s"] == pytest.approx(0.25)
    assert (b["requests"], b["admitted"], b["min_gap_s"]) == (3, 3, 4.0)


def test_bad_input():
    with pytest.raises(ValueError, match="window_s"):
        m.max_in_window(T, 0)
    with pytest.raises(ValueError, match="sorted"):
        m.max_in_window([2.0, 1.0], 1)
    with pytest.raises(ValueError, match="allowed"):
        m.max_in_window(T, 1, allowed=[True])
    assert m.max_in_window([], 1).count == 0


# ---------------------------------------------------------------- against brute force


def brute_max(times, w):
    """(count, end) over every request time t of |{s : t − w < s <= t}|, earliest on ties."""
    best = (0, None)
    for t in times:
        c = sum(1 for s in times if t - w < s <= t)
        if c > best[0]:
            best = (c, t)
    return best


# Times on a coarse grid so that ties and requests exactly on a window's edge are common.
times_st = st.lists(st.integers(0, 40), max_size=40).map(lambda xs: np.sort(np.array(xs)) / 4)
window_st = st.sampled_from([0.25, 0.5, 1.0, 1.25, 3.0, 10.0])


@examples(150)
@given(times_st, window_st)
def test_max_in_window_equals_brute_force(times, w):
    got = m.max_in_window(times, w)
    count, end = brute_max(times, w)
    assert got.count == count
    if count:
        assert got.end_s == end
        assert got.last - got.first + 1 == count


@examples(100)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3)), max_size=40), window_st)
def test_per_key_equals_brute_force(rows, w):
    rows.sort(key=lambda r: r[0])
    time = np.array([r[0] / 4 for r in rows])
    key = np.array([r[1] for r in rows], dtype=np.int32)
    trace = Trace(time, key)
    df = m.max_in_window_per_key(trace, w)
    for k in np.unique(key):
        count, end = brute_max(time[key == k], w)
        assert df.loc[k, "max_in_window"] == count and df.loc[k, "end_s"] == end
    assert len(df) == len(np.unique(key))


@examples(100)
@given(times_st, window_st, st.lists(st.integers(-4, 44), max_size=10))
def test_rolling_count_equals_brute_force(times, w, at):
    at = np.array(at) / 4
    got = m.rolling_count(times, w, at=at)
    want = [sum(1 for s in times if t - w < s <= t) for t in at]
    assert list(got) == want
