"""The burst-shape plot helpers draw what they are given, in the suite's colours."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from ratelab import plot  # noqa: E402


@pytest.fixture
def ax():
    plot.use_style()
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def lines_by_label(ax):
    return {line.get_label().split(" (")[0]: line for line in ax.get_lines()}


def test_decisions_timeline_counts_each_kind(ax):
    times = np.array([0.0, 0.0, 0.0, 1.0, 2.0])
    allowed = np.array([True, True, False, True, False])
    plot.decisions_timeline(ax, times, allowed, departures=[0.0, 0.5, 1.0])
    lines = lines_by_label(ax)
    assert set(lines) == {"arrivals", "admitted", "rejected", "served"}
    assert lines["arrivals"].get_ydata()[-1] == 5
    assert lines["admitted"].get_ydata()[-1] == 3
    assert lines["rejected"].get_ydata()[-1] == 2
    assert to_hex(lines["rejected"].get_color()) == plot.COLORS["rejected"]
    assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == [
        "arrivals (5)", "admitted (3)", "rejected (2)"]


def test_state_over_time_draws_the_ceiling(ax):
    plot.state_over_time(ax, [0, 1, 2], [5, 2, 4], label="tokens", limit=5)
    lines = lines_by_label(ax)
    assert list(lines["tokens"].get_ydata()) == [5, 2, 4]
    assert list(lines["capacity"].get_ydata()) == [5, 5]
    assert lines["capacity"].get_linestyle() == "--"


def test_rolling_count_is_the_trailing_count(ax):
    admitted = [0.0, 0.25, 0.5, 1.125, 1.25]
    plot.rolling_count(ax, admitted, window_s=1.0, limit=2, counter=([0, 1], [3, 2]))
    lines = lines_by_label(ax)
    rolling = lines["admitted in the trailing 1 s"]
    # (0.125, 1.125] holds 0.25, 0.5, 1.125; (0.25, 1.25] no longer holds 0.25
    assert list(rolling.get_ydata()) == [1, 2, 3, 3, 3]
    assert list(lines["the limiter's own counter"].get_ydata()) == [3, 2]
    assert list(lines["limit"].get_ydata()) == [2, 2]
