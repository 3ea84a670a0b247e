"""The worst-case schedules really exceed the limit, by the factor reported, under the
reference limiters (measured again here from scratch, not taken from the Attack)."""

from __future__ import annotations

import numpy as np
import pytest

from ratelab.analysis import worst_case
from ratelab.limiters import make


def most_admitted(name, params, times, window):
    """Replay `times` through a fresh reference limiter; most admitted in any (t - W, t]."""
    lim = make(name, **params)
    admitted = [t for t in times if lim.allow("k", float(t)).allowed]
    a = np.array(admitted)
    return max(int(np.sum((a > t - window) & (a <= t))) for t in a)


@pytest.mark.parametrize("limit, window", [(1, 1.0), (7, 1.0), (10, 60.0), (100, 0.5)])
def test_fixed_window_admits_twice_the_limit(limit, window):
    a = worst_case.fixed_window(limit, window)
    assert most_admitted("fixed-window", a.params, a.times, window) == 2 * limit
    assert a.admitted_max == 2 * limit and a.factor == 2.0


@pytest.mark.parametrize("limit, window", [(1, 1.0), (7, 1.0), (10, 60.0)])
def test_sliding_log_never_exceeds_the_limit(limit, window):
    a = worst_case.sliding_log(limit, window)
    assert most_admitted("sliding-window-log", a.params, a.times, window) == limit
    assert a.factor == 1.0


@pytest.mark.parametrize("limit, window", [(2, 1.0), (7, 1.0), (10, 60.0), (100, 0.5)])
def test_sliding_counter_reaches_two_limits_less_one(limit, window):
    a = worst_case.sliding_counter(limit, window)
    assert most_admitted("sliding-window-counter", a.params, a.times, window) == 2 * limit - 1
    assert a.factor == pytest.approx((2 * limit - 1) / limit)


def test_no_two_burst_schedule_beats_the_counter_schedule():
    grid = worst_case.counter_two_bursts(5, 1.0, n=11)
    assert grid.max() == 2 * 5 - 1
    assert grid.min() == 5


@pytest.mark.parametrize("capacity, rate, window", [(10, 10 / 60, 60.0), (3, 7.0, 1.0),
                                                    (5, 2.0, 10.0)])
def test_token_bucket_reaches_capacity_plus_rate_times_window(capacity, rate, window):
    a = worst_case.token_bucket(capacity, rate, window)
    got = most_admitted("token-bucket", a.params, a.times, window)
    assert got == a.admitted_max
    # C + rate x W is the bound; the half-open window misses the last token by an instant
    assert capacity + rate * window - 1 <= got <= capacity + rate * window


def test_table_lists_the_four_algorithms():
    df = worst_case.table(worst_case.all_attacks(10, 60.0))
    assert df["x nominal"].to_dict() == {"fixed-window": 2.0, "sliding-window-log": 1.0,
                                         "sliding-window-counter": 1.9, "token-bucket": 1.9,
                                         "gcra": 1.9}


@pytest.mark.parametrize("burst, rate, window", [(9, 10 / 60, 60.0), (2, 7.0, 1.0)])
def test_gcra_is_the_token_bucket_of_capacity_burst_plus_one(burst, rate, window):
    a = worst_case.gcra(burst, rate, window)
    got = most_admitted("gcra", a.params, a.times, window)
    assert got == a.admitted_max == worst_case.token_bucket(burst + 1, rate, window).admitted_max


def test_a_brief_peak_gets_a_zoomed_inset_and_a_long_one_does_not():
    """The counter's peak lasts from its last burst until its first batch leaves (0.3 s of a
    minute's axis): its panel alone carries an inset, whose view holds the whole peak."""
    import matplotlib  # drawing only in this test of the module; Agg: no display needed

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use(), as matplotlib asks

    attacks = worst_case.all_attacks(limit=10, window=60.0)
    spans = {a.algorithm: worst_case.peak_span(a.times[a.allowed], a.window, a.window_end)
             for a in attacks}
    assert spans["sliding-window-counter"] == pytest.approx((119.4, 119.7))
    assert spans["token-bucket"] == pytest.approx((55.0, 61.0))
    fig = worst_case.plot(attacks)
    try:
        insets = {a.algorithm: ax.child_axes for ax, a in zip(fig.axes, attacks)}
        assert [name for name, children in insets.items() if children] == ["sliding-window-counter"]
        (zoom,) = insets["sliding-window-counter"]
        lo, hi = zoom.get_xlim()
        assert lo < 119.4 and 119.7 < hi and hi - lo < 2.0
    finally:
        plt.close(fig)
