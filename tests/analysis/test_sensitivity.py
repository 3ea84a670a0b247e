"""The sensitivity sweep: each kind of source is what it says, and the sweep's figures are
the tally's."""

from __future__ import annotations

import numpy as np
import pytest

from ratelab.analysis import sensitivity, tally


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("kind", sensitivity.KINDS)
def test_mean_rate_is_load_times_threshold(kind):
    trace = sensitivity.sources(kind, 0.5, 20, 60.0, 50, 3600.0, rng())
    per_source_per_window = len(trace) / 50 / (3600.0 / 60.0)
    assert per_source_per_window == pytest.approx(10.0, rel=0.08)


def test_boundary_sources_send_in_the_last_sixtieth_of_each_window():
    trace = sensitivity.sources("boundary", 0.9, 20, 60.0, 10, 600.0, rng())
    phase = trace.time % 60.0
    assert np.all(phase >= 59.0)
    assert np.bincount(np.floor(trace.time / 60.0).astype(int) * 10 + trace.key).max() == 18


def test_sweep_rows_are_the_tally_of_the_same_traces():
    df = sensitivity.sweep(kinds=("poisson", "boundary"), loads=(0.5, 1.1), n_sources=20,
                           duration_s=600.0, seed=4)
    assert len(df) == 2 * 2 * 2
    trace = sensitivity.sources("boundary", 1.1, 20, 60.0, 20, 600.0,
                                np.random.default_rng(np.random.SeedSequence(4, spawn_key=(1, 1))))
    want = tally(trace, 20, 60.0).summary("admission")
    row = df[(df["kind"] == "boundary") & (df["load"] == 1.1) & (df["mode"] == "admission")]
    assert row["wrong (%)"].item() == pytest.approx(want["wrong decisions (%)"])
    assert row["requests"].item() == want["requests"] == len(trace)


def test_boundary_bursts_fool_the_counter_where_even_traffic_does_not():
    df = sensitivity.sweep(kinds=("periodic", "boundary"), loads=(0.9,), n_sources=30,
                           duration_s=1200.0)
    wrong = df[df["mode"] == "estimate"].set_index("kind")["false allows (%)"]
    assert wrong["periodic"] == 0 and wrong["boundary"] > 1


def test_unknown_kind_is_named():
    with pytest.raises(ValueError, match="kind"):
        sensitivity.sources("zipf", 1.0, 20, 60.0, 1, 60.0, rng())


def test_a_kind_wrong_at_one_load_only_is_drawn_large_and_on_top():
    """A lone point has no line leading to it: the plot draws it again, big, above the others
    (periodic sources at the threshold sat hidden under the boundary marker)."""
    import matplotlib  # drawing only in this test of the module; Agg: no display needed

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use(), as matplotlib asks
    import pandas as pd  # the sweep's frame, built by hand

    rows = [{"kind": kind, "load": load, "mode": "estimate", "wrong (%)": wrong}
            for kind, wrongs in {"periodic": [0, 48.0, 0], "boundary": [10.0, 48.3, 60.0]}.items()
            for load, wrong in zip((0.5, 1.0, 2.0), wrongs)]
    fig = sensitivity.plot(pd.DataFrame(rows))
    try:
        big = [line for line in fig.axes[0].lines if line.get_markersize() >= 9]
        assert [list(line.get_xdata()) for line in big] == [[1.0]]
        assert big[0].get_zorder() > max(line.get_zorder() for line in fig.axes[0].lines
                                          if line not in big)
    finally:
        plt.close(fig)
