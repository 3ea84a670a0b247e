"""The approximation error, on timelines worked out by hand and against the references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.analysis import approximation_error, by_source, tally
from ratelab.analysis.error import check_mode
from ratelab.limiters import SlidingWindowCounter, SlidingWindowLog
from ratelab.traces import Trace

# Source 0, limit 2 per 1 s. Estimate mode (every request counts), by hand:
#   t    exact in (t-1, t]   counter prev*w + cur + 1        decisions (exact, counter)
#   0.5  1                   0 + 0 + 1 = 1                   pass, pass
#   1.0  2 (0.5, 1.0)        1*1.0 + 0 + 1 = 2               pass, pass
#   1.5  2 (1.0, 1.5)        1*0.5 + 1 + 1 = 2.5             pass, REJECT -> false reject
#   2.0  2 (1.5, 2.0)        2*1.0 + 0 + 1 = 3               pass, REJECT -> false reject
#   2.5  2 (2.0, 2.5)        2*0.5 + 1 + 1 = 3               pass, REJECT -> false reject
#   |est - exact| / exact = 0, 0, .25, .5, .5: mean .25, max .5
# Admission mode (only admitted requests count): the log admits all five (never more than 2
# in (t-1, t]); the counter rejects 1.5 (estimate 2.5), admits 2.0 (prev is now 1: only 1.0
# was admitted in window 1) and rejects 2.5 (1*0.5 + 1 + 1). Its estimate against the exact
# count of what it admitted, plus the request: 1/1, 2/2, 2.5/2, 2/1, 2.5/2 -> errors
# 0, 0, .25, 1, .25: mean .3, max 1.
A = [0.5, 1.0, 1.5, 2.0, 2.5]
# Source 1: two at the end of window 0, one late in window 1. At 1.8 the exact window
# (0.8, 1.8] holds 3 > 2 but the counter sees 2 * 0.2 + 0 + 1 = 1.4: a false allow, in both
# modes; error |1.4 - 3| / 3. Source 1 runs 50% above the limit and is never limited.
B = [0.9, 0.95, 1.8]


def two_sources() -> Trace:
    return Trace.from_arrays(A + B, [0] * len(A) + [1] * len(B), sort=True)


@pytest.mark.parametrize("mode, fa, fr, mean, maximum", [
    ("estimate", 1, 3, (0 + 0 + .25 + .5 + .5 + 0 + 0 + 1.6 / 3) / 8, 0.5 + 1 / 30),
    ("admission", 1, 2, (0 + 0 + .25 + 1 + .25 + 0 + 0 + 1.6 / 3) / 8, 1.0),
])
def test_hand_worked_counts(mode, fa, fr, mean, maximum):
    s = tally(two_sources(), limit=2, window=1.0, mode=mode).summary(mode)
    assert s["requests"] == 8 and s["sources"] == 2
    assert (s["false allows"], s["false rejects"]) == (fa, fr)
    assert s["wrong decisions (%)"] == pytest.approx(100 * (fa + fr) / 8)
    assert s["mean |estimate - real| / real (%)"] == pytest.approx(100 * mean)
    assert s["max |estimate - real| / real (%)"] == pytest.approx(100 * maximum)
    # source 1 is over the threshold and never limited; source 0 is limited, never over
    assert s["sources over the threshold"] == 1
    assert s["over the threshold, never limited (false negatives)"] == 1
    assert s["false negatives: most above the threshold (%)"] == pytest.approx(50.0)
    assert s["limited, never over the threshold (false positives)"] == 1


def test_table_has_both_modes_and_the_cloudflare_rows():
    df = approximation_error(two_sources(), limit=2, window=1.0, mode="both")
    assert list(df.columns) == ["estimate", "admission"]
    assert df.loc["false rejects", "estimate"] == 3
    assert df.loc["false rejects", "admission"] == 2
    assert df.loc["requests", "admission"] == 8


@pytest.mark.parametrize("times, limit, fr, fa", [
    ([0.0, 1.0], 1, 1, 0),            # half-open: 0.0 is out of (0, 1]; the counter rejects
    ([1.0, 1.0, 1.0], 2, 0, 0),       # ties: the third is over for both
    ([0.25, 0.5, 0.75], 3, 0, 0),     # one window, never over
    ([0.998, 0.999, 1.99], 2, 0, 1),  # (0.99, 1.99] holds 3; counter 2 * 0.01 + 0 + 1
])
def test_edges_in_estimate_mode(times, limit, fr, fa):
    t = tally(Trace(np.array(times), np.zeros(len(times), np.int32)), limit, 1.0, "estimate")
    s = t.summary("estimate")
    assert (s["false rejects"], s["false allows"]) == (fr, fa)


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="mode"):
        check_mode("exact")
    with pytest.raises(ValueError, match="limit"):
        tally(two_sources(), 0, 1.0)
    with pytest.raises(ValueError, match="window"):
        tally(two_sources(), 2, float("nan"))
    with pytest.raises(ValueError, match="cost"):
        tally(Trace(np.array([0.0, 1.0]), np.zeros(2, np.int32), np.array([1.0, 2.0])), 2, 1)


def test_tallies_of_parts_add_up_to_the_whole():
    rng = np.random.default_rng(3)
    n = 4000
    trace = Trace.from_arrays(np.sort(rng.uniform(0, 600, n)), rng.integers(0, 40, n))
    whole = tally(trace, 8, 30.0)
    a = tally(trace.for_keys(range(0, 20)), 8, 30.0)
    b = tally(trace.for_keys(range(20, 40)), 8, 30.0)
    parts = a.add(b)
    for mode in ("estimate", "admission"):
        w, p = whole.summary(mode), parts.summary(mode)
        for k in w:
            assert w[k] == pytest.approx(p[k]), k


# ---------------------------------------------------------------- against the references


def reference_decisions(trace: Trace, limit: float, window: float):
    """Admission mode by the reference limiters, one request at a time."""
    log = SlidingWindowLog(limit, window)
    ctr = SlidingWindowCounter(limit, window)
    exact = np.array([log.allow(int(k), float(t)).allowed for t, k in zip(trace.time, trace.key)])
    approx = np.array([ctr.allow(int(k), float(t)).allowed for t, k in zip(trace.time, trace.key)])
    return exact, approx


times_st = st.lists(
    st.tuples(st.integers(0, 40).map(lambda x: x / 4),  # quarter seconds: boundary hits, ties
              st.integers(0, 3)),
    min_size=1, max_size=120)


@examples(150)
@given(times_st, st.integers(1, 6), st.sampled_from([1.0, 2.0, 2.5]))
def test_admission_mode_is_the_reference_limiters(reqs, limit, window):
    reqs.sort(key=lambda r: r[0])
    trace = Trace.from_arrays([r[0] for r in reqs], [r[1] for r in reqs])
    exact, approx = reference_decisions(trace, limit, window)
    s = tally(trace, limit, window, "admission").summary("admission")
    assert s["false allows"] == int(np.sum(approx & ~exact))
    assert s["false rejects"] == int(np.sum(~approx & exact))
    assert s["rejected by the counter (%)"] == pytest.approx(100 * np.mean(~approx))
    assert s["rejected by the exact log (%)"] == pytest.approx(100 * np.mean(~exact))


def direct_estimate(trace: Trace, limit: float, window: float) -> dict:
    """Estimate mode computed request by request with numpy, without the kernels."""
    fa = fr = 0
    errors = []
    peaks = []
    for key in np.unique(trace.key):
        t = trace.time[trace.key == key]
        i = np.arange(len(t))
        exact = i - np.searchsorted(t, t - window, side="right") + 1
        k = np.floor(t / window)
        first_of_window = np.searchsorted(k, k, side="left")
        cur_before = i - first_of_window
        prev = (np.searchsorted(k, k - 1, side="right")
                - np.searchsorted(k, k - 1, side="left"))
        est = prev * (1.0 - (t - k * window) / window) + cur_before + 1.0
        c_ok, e_ok = est <= limit, exact <= limit
        fa += int(np.sum(c_ok & ~e_ok))
        fr += int(np.sum(~c_ok & e_ok))
        errors.append(np.abs(est - exact) / exact)
        peaks.append(exact.max())
    errors = np.concatenate(errors)
    return {"false allows": fa, "false rejects": fr, "mean": errors.mean(),
            "max": errors.max(), "over": int(np.sum(np.array(peaks) > limit))}


@examples(100)
@given(times_st, st.integers(1, 6), st.sampled_from([1.0, 2.0, 2.5]))
def test_estimate_mode_is_the_direct_computation(reqs, limit, window):
    reqs.sort(key=lambda r: r[0])
    trace = Trace.from_arrays([r[0] for r in reqs], [r[1] for r in reqs])
    want = direct_estimate(trace, limit, window)
    s = tally(trace, limit, window, "estimate").summary("estimate")
    assert (s["false allows"], s["false rejects"]) == (want["false allows"],
                                                       want["false rejects"])
    assert s["mean |estimate - real| / real (%)"] == pytest.approx(100 * want["mean"])
    assert s["sources over the threshold"] == want["over"]


def test_by_source_groups_sorted_times():
    trace = two_sources()
    time, starts, keys = by_source(trace)
    assert keys.tolist() == [0, 1]
    assert time[starts[0]:starts[1]].tolist() == A
    assert time[starts[1]:starts[2]].tolist() == B


# ---------------------------------------------------------------- on the recorded traces


@pytest.mark.parametrize("name", ["epa-http", "nasa-1995-08-01"])
@pytest.mark.parametrize("window, quantile", [(60.0, 0.9), (60.0, 0.99), (10.0, 0.99)])
def test_estimate_mode_on_recorded_traces_is_the_direct_computation(data_dir, name, window,
                                                                     quantile):
    from ratelab import datasets
    from ratelab.analysis import thresholds

    trace = datasets.load(name, progress=False, warn=False)
    limit = thresholds(trace, window, (quantile,))[quantile]
    want = direct_estimate(trace, limit, window)
    s = tally(trace, limit, window, "estimate").summary("estimate")
    assert s["requests"] == len(trace)
    assert want["false allows"] + want["false rejects"] > 0  # the comparison has teeth
    assert (s["false allows"], s["false rejects"]) == (want["false allows"],
                                                       want["false rejects"])
    assert s["mean |estimate - real| / real (%)"] == pytest.approx(100 * want["mean"], rel=1e-12)
    assert s["max |estimate - real| / real (%)"] == pytest.approx(100 * want["max"], rel=1e-12)
    assert s["sources over the threshold"] == want["over"]


def test_admission_mode_on_a_recorded_trace_is_the_reference_limiters(data_dir):
    from ratelab import datasets

    trace = datasets.load("nasa-1995-08-01", progress=False, warn=False)
    exact, approx = reference_decisions(trace, 8, 60.0)
    s = tally(trace, 8, 60.0, "admission").summary("admission")
    assert s["false allows"] == int(np.sum(approx & ~exact)) > 0
    assert s["false rejects"] == int(np.sum(~approx & exact)) > 0


def test_groups_add_up_to_the_whole_and_wrong_decisions_need_a_source_over():
    from ratelab.analysis import analyse_groups, groups_table

    rng = np.random.default_rng(5)
    n = 6000
    trace = Trace.from_arrays(np.sort(rng.uniform(0, 600, n)), rng.integers(0, 30, n))
    time, starts, keys = by_source(trace)
    labels = keys % 3
    groups = analyse_groups(time, starts, labels, 9, 30.0)
    whole = tally(trace, 9, 30.0)
    for mode in ("estimate", "admission"):
        w = whole.summary(mode)
        for split in ([0, 1, 2], ["over the threshold", "never over"]):
            assert sum(groups[g].summary(mode)["false allows"] for g in split) == w["false allows"]
            assert sum(groups[g].requests for g in split) == w["requests"]
        # a source that never exceeds the limit can be wrongly rejected, never wrongly allowed
        assert groups["never over"].summary(mode)["false allows"] == 0
    df = groups_table(groups)
    assert df.loc["over the threshold", "sources"] == whole.over
    assert df.loc[["0", "1", "2"], "share of all wrong, admission (%)"].sum() == pytest.approx(100)


def test_headline_is_the_summary_on_one_line():
    h = tally(two_sources(), 2, 1.0).headline()
    assert h == {"limit": 2.0, "over": 1, "wrong, estimate (%)": 50.0,
                 "wrong, admission (%)": 37.5, "false neg.": 1,
                 "worst false neg. (% over)": 50.0, "false pos.": 1}


def test_modes_in_either_order_give_the_same_tallies():
    """analyse_sources takes the modes as a tuple: admission first must not lose the peaks."""
    from ratelab.analysis import analyse_sources

    time, starts, _ = by_source(two_sources())
    forward = analyse_sources(time, starts, 2, 1.0, ("estimate", "admission"))
    backward = analyse_sources(time, starts, 2, 1.0, ("admission", "estimate"))
    assert backward.over == forward.over == 1
    for mode in ("estimate", "admission"):
        assert backward.summary(mode) == forward.summary(mode)
