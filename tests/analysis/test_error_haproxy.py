"""The error analysis with HAProxy's counter in the calendar-aligned counter's place: by hand,
against the reference limiters, and refusing what HAProxy cannot express."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.analysis import record_table, side_by_side, tally
from ratelab.limiters import HAProxyRate, SlidingWindowLog
from ratelab.traces import Trace

# One source, gt 2 per 1 s, first seen at 0.5 s. Estimate mode (every request counts):
#   t     exact in (t-1, t]   HAProxy: period, rate with the request    decisions (exact, HAProxy)
#   0.5   1                   [0.5, 1.5): 1                             pass, pass
#   1.0   2                   2                                         pass, pass
#   1.4   3                   3                                         REJECT, REJECT
#   1.6   2 (1.0, 1.4, 1.6)   [1.5, 2.5): 1 + 3 x 0.9 floored = 3       REJECT, REJECT  (exact 3)
#   2.45  2 (1.6, 2.45)       2 + 3 x 0.05 floored = 2                  pass, pass
# exact at 1.6: (0.6, 1.6] holds 1.0, 1.4, 1.6: 3. Relative errors all 0.
# The calendar-aligned counter, by contrast, at 1.4: prev 1 (0.5) x 0.6 + cur 1 + 1 = 2.6 > 2.
TIMES = [0.5, 1.0, 1.4, 1.6, 2.45]


def one_source(times=TIMES) -> Trace:
    return Trace.from_arrays(times, [0] * len(times))


def test_hand_worked_estimate_mode():
    s = tally(one_source(), 2, 1.0, "estimate", "haproxy").summary("estimate")
    assert (s["false allows"], s["false rejects"]) == (0, 0)
    assert s["rejected by the counter (%)"] == pytest.approx(100 * 2 / 5)
    assert s["mean |estimate - real| / real (%)"] == 0.0
    calendar = tally(one_source(), 2, 1.0, "estimate").summary("estimate")
    assert calendar["rejected by the counter (%)"] != s["rejected by the counter (%)"]


def test_refused_requests_keep_a_flood_out_in_admission_mode():
    """20 requests a second for 3 s against 5 per second: the exact log admits 5 in every
    trailing second, HAProxy's rule 5 in its first second and then nothing — every request
    it refused still counts. Its counter's picture of what it admitted is far off."""
    times = list(np.arange(60) / 20)
    s = tally(one_source(times), 5, 1.0, "admission", "haproxy").summary("admission")
    assert s["rejected by the counter (%)"] == pytest.approx(100 * 55 / 60)
    assert s["rejected by the exact log (%)"] == pytest.approx(100 * 45 / 60)
    assert s["false rejects"] == 10
    assert s["max |estimate - real| / real (%)"] > 1000


def reference(trace: Trace, limit: int, window: float, mode: str):
    """(exact, HAProxy) decisions by the reference limiters, request by request: the log counts
    every request in estimate mode, its admitted ones in admission mode; HAProxy counts every
    request in both (its rule does)."""
    log = SlidingWindowLog(limit, window, count_rejected=mode == "estimate")
    rule = HAProxyRate(period=window, limit=limit)
    pairs = [(log.allow(int(k), float(t)).allowed, rule.allow(int(k), float(t)).allowed)
             for t, k in zip(trace.time, trace.key)]
    exact, counter = (np.array(x) for x in zip(*pairs))
    return exact, counter


times_st = st.lists(st.tuples(st.integers(0, 80).map(lambda x: x / 8), st.integers(0, 3)),
                    min_size=1, max_size=120)


@examples(150)
@given(times_st, st.integers(1, 6), st.sampled_from([1.0, 2.0, 2.5, 0.999]),
       st.sampled_from(["estimate", "admission"]))
def test_both_modes_are_the_reference_limiters(reqs, limit, window, mode):
    reqs.sort(key=lambda r: r[0])
    trace = Trace.from_arrays([r[0] for r in reqs], [r[1] for r in reqs])
    exact, counter = reference(trace, limit, window, mode)
    s = tally(trace, limit, window, mode, "haproxy").summary(mode)
    assert s["false allows"] == int(np.sum(counter & ~exact))
    assert s["false rejects"] == int(np.sum(~counter & exact))
    assert s["rejected by the counter (%)"] == pytest.approx(100 * np.mean(~counter))
    assert s["rejected by the exact log (%)"] == pytest.approx(100 * np.mean(~exact))


@examples(100)
@given(times_st, st.integers(1, 6), st.sampled_from([1.0, 2.0, 0.999]))
def test_estimate_mode_errors_are_the_rule_s_own_rate(reqs, limit, window):
    """The estimate is the rate HAProxy's rule compared (sc_http_req_rate, the request in it):
    the reference's reading right after the request."""
    reqs.sort(key=lambda r: r[0])
    trace = Trace.from_arrays([r[0] for r in reqs], [r[1] for r in reqs])
    rule, errors, seen = HAProxyRate(period=window, limit=limit), [], {}
    for t, k in zip(trace.time, trace.key):
        rule.allow(int(k), float(t))
        rate = rule.inspect(int(k), float(t))["rate"]
        seen.setdefault(int(k), []).append(t)  # the request itself, and its ties before it
        exact = sum(1 for x in seen[int(k)] if x > t - window)
        errors.append(abs(rate - exact) / exact)
    s = tally(trace, limit, window, "estimate", "haproxy").summary("estimate")
    want = np.array(errors)
    assert s["max |estimate - real| / real (%)"] == pytest.approx(100 * want.max())
    assert s["mean |estimate - real| / real (%)"] == pytest.approx(100 * want.mean())


def test_on_a_recorded_trace_both_modes_are_the_reference_limiters(data_dir):
    from ratelab import datasets

    trace = datasets.load("nasa-1995-08-01", progress=False, warn=False)
    for mode in ("estimate", "admission"):
        exact, counter = reference(trace, 8, 60.0, mode)
        s = tally(trace, 8, 60.0, mode, "haproxy").summary(mode)
        assert s["false allows"] == int(np.sum(counter & ~exact)) > 0
        assert s["false rejects"] == int(np.sum(~counter & exact)) > 0


def test_records_name_their_counter_and_sit_side_by_side():
    trace = one_source()
    records = [tally(trace, 2, 1.0, "both", c).to_dict()
               for c in ("sliding-window-counter", "haproxy")]
    assert [r["counter"] for r in records] == ["sliding-window-counter", "haproxy"]
    df = side_by_side(records)
    assert list(df.columns) == [(c, m) for c in ("sliding-window-counter", "haproxy")
                                for m in ("estimate", "admission")]
    assert df[("haproxy", "estimate")].equals(record_table(records[1])["estimate"])
    old = {k: v for k, v in records[0].items() if k != "counter"}  # a record from before
    assert list(side_by_side([old]).columns.levels[0]) == ["sliding-window-counter"]


@pytest.mark.parametrize("limit, window, counter, name", [
    (2.5, 1.0, "haproxy", "limit"),
    (2, 0.0005, "haproxy", "window"),
    (2, 1.0, "cloudflare", "counter"),
])
def test_what_haproxy_cannot_express_is_an_error_naming_it(limit, window, counter, name):
    with pytest.raises(ValueError, match=name):
        tally(one_source(), limit, window, "both", counter)


def test_the_command_line_takes_the_counter(capsys):
    import json

    from ratelab.cli import main

    small = ["error-analysis", "--synthetic", "--sources", "40", "--requests", "4000",
             "--limit", "20", "--no-progress"]
    assert main(small + ["--counter", "haproxy", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["counter"] == "haproxy" and rec["command"].endswith("--counter haproxy")
    assert main(small + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counter"] == "sliding-window-counter"
    assert main(small + ["--counter", "haproxy", "--window", "0.0005"]) == 2
    assert "--window must be a whole number of milliseconds" in capsys.readouterr().err


def test_the_full_scale_records_sit_side_by_side(data_dir):
    """The recorded runs at Cloudflare's scale: HAProxy's beside the calendar-aligned
    counter's, the same population (the same requests), HAProxy's wrong less often in
    estimate mode."""
    import json

    records = [json.loads((data_dir / f"error-analysis-full-scale{name}.json").read_text())
               for name in ("", "-haproxy")]
    df = side_by_side(records)
    wrong = df.loc["wrong decisions (%)"]
    assert wrong["haproxy", "estimate"] < wrong["sliding-window-counter", "estimate"]
    assert df.loc["requests"].nunique() == 1
    assert records[1]["command"] == records[0]["command"] + " --counter haproxy"
