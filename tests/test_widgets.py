"""The LiveLimiter panel, driven through its programmatic API on a clock moved by hand."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratelab.bursts import trailing_count
from ratelab.limiters import NAMES, make
from ratelab.widgets import (KNOBS, LiveLimiter, ManualClock, default_params, knob_names,
                             own_count)


def test_every_registry_algorithm_has_a_control_for_every_knob():
    for name in NAMES:
        assert set(knob_names(name)) <= set(KNOBS), name
        make(name, **default_params(name))  # the starting knobs make a valid limiter


def test_the_dropdown_offers_every_algorithm():
    live = LiveLimiter(clock=ManualClock())
    assert tuple(live.algorithm_box.options) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_choosing_an_algorithm_builds_its_knobs_and_limiter(name):
    live = LiveLimiter(clock=ManualClock())
    live.algorithm_box.value = name
    assert live.algorithm == name and live.limiter.name == name
    assert list(live.knobs) == [p for p in knob_names(name) if p in KNOBS]


def test_a_knob_rebuilds_the_limiter_and_resets():
    live = LiveLimiter("token-bucket", rate=10, capacity=10, clock=ManualClock())
    live.flood()
    live.knobs["capacity"].value = 30
    assert live.limiter.params == {"rate": 10.0, "capacity": 30.0}
    assert live.state["accepted"] == 0 and live.state["t"] == 0.0
    assert live.flood(n=40)["accepted"] == 31  # 30 at once, one refilled by 0.1 s at 10/s


def test_an_invalid_knob_combination_is_reported_and_the_old_limiter_kept():
    live = LiveLimiter("nginx", rate=5, burst=2, clock=ManualClock())
    live.knobs["delay"].value = 4  # delay above burst: nginx refuses it
    assert "delay" in live.message
    assert live.limiter.params["delay"] == 0
    assert "delay" in live.details.value


# (algorithm, params, accepted, rejected) of a flood of 3 x limit over 0.2 s from t = 0
FLOODS = [
    ("fixed-window", dict(limit=10, window=1.0), 10, 20),
    ("sliding-window-log", dict(limit=10, window=1.0), 10, 20),
    ("token-bucket", dict(rate=10, capacity=10), 11, 19),  # 10 at once + 1 refilled by 0.1 s
    ("token-bucket", dict(rate=5, capacity=10), 10, 20),  # the next token comes at 0.2 s: late
    ("gcra", dict(rate=10, burst=5), 7, 11),  # burst + 1 at once + 1 refilled
    ("nginx", dict(rate=10, burst=5, nodelay=True), 7, 11),
]


@pytest.mark.parametrize("name, params, accepted, rejected", FLOODS)
def test_flood_counts(name, params, accepted, rejected):
    s = LiveLimiter(name, clock=ManualClock(), **params).flood()
    assert (s["accepted"], s["rejected"]) == (accepted, rejected)
    assert s["t"] == pytest.approx(0.2)


def test_time_the_boundary_shows_the_fixed_window_exploit():
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    live.flood()
    s = live.time_boundary()
    assert (s["accepted"], s["rejected"]) == (30, 20)
    assert s["max_rolling"] == 20  # twice the limit in a trailing second
    assert s["max_own"] == 10  # while the limiter's counter never passed the limit
    assert s["t"] == pytest.approx(2.1)  # the boundary at 2.0: its window [1, 2) was empty


def test_the_sliding_log_holds_the_boundary():
    s = LiveLimiter("sliding-window-log", limit=10, window=1.0, clock=ManualClock()).time_boundary()
    assert (s["accepted"], s["rejected"], s["max_rolling"]) == (10, 10, 10)


def test_step_serves_the_gentle_stream_in_virtual_time():
    live = LiveLimiter("token-bucket", rate=4, capacity=4, clock=ManualClock())
    live.gentle(True)
    for _ in range(4):
        s = live.step(0.25)
    assert s["t"] == pytest.approx(1.0)
    assert (s["accepted"], s["rejected"]) == (3, 0)  # 2/s: at 0, 0.5 and 1.0
    assert live.gentle_button.value is True
    with pytest.raises(ValueError, match="dt"):
        live.step(-1)


def test_play_ticks_follow_the_injected_clock():
    clock = ManualClock(100.0)
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=clock)
    live.speed.value = 2.0
    live.tick()  # the first tick only starts the clock
    clock.advance(0.25)
    assert live.tick()["t"] == pytest.approx(0.5)
    clock.advance(30.0)  # a stall is clamped, not a jump: 0.5 s real at most
    assert live.tick()["t"] == pytest.approx(1.5)
    live.play.playing = True  # pressing play again forgets the pause
    clock.advance(10.0)
    assert live.tick()["t"] == pytest.approx(1.5)


def test_the_play_widget_drives_ticks():
    clock = ManualClock()
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=clock)
    live.play.value = 1
    clock.advance(0.1)
    live.play.value = 2
    assert live.state["t"] == pytest.approx(0.1)


def test_reset_forgets_everything():
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    live.flood()
    live.reset_button.click()
    s = live.state
    assert (s["t"], s["accepted"], s["rejected"], s["max_rolling"]) == (0.0, 0, 0, 0)
    assert live.limiter.inspect("client", 0.0)["count"] == 0


def test_the_page_shows_the_counters_and_the_internal_state():
    live = LiveLimiter("token-bucket", rate=10, capacity=10, clock=ManualClock())
    live.flood_button.click()
    html = live.counters.value
    assert re.search(r"class='ratelab-accepted'>11<", html)
    assert re.search(r"class='ratelab-rejected'>19<", html)
    assert "tokens" in live.gauge_label.value
    assert live.gauge_bar.max == 10 and live.gauge_bar.value == pytest.approx(1.0)  # 10 - 11 + 2
    assert live.chart.value.startswith("<svg") and live.chart.value.count("<line") >= 30
    assert "inspect(key, 0.200)" in live.details.value


@pytest.mark.parametrize("info, want", [
    ({"tokens": 3.0, "capacity": 10.0}, 7.0),
    ({"count": 4.0, "limit": 10.0}, 4.0),
    ({"estimate": 86.0, "count": 30, "limit": 100}, 86.0),
    ({"level": 2.5, "capacity": 5}, 2.5),
    ({"available": 1.5, "limit": 6.0}, 4.5),
    ({"excess": 2.0, "burst": 5}, 2.0),
])
def test_own_count_reads_each_algorithm(info, want):
    assert own_count(info) == want


def test_measure_fps_uses_the_clock_it_is_given():
    class TenMsPerCall:
        def __init__(self):
            self.t = 0.0

        def now(self):
            self.t += 0.01
            return self.t

    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    # two clock reads (start, end) 10 ms apart: 20 frames in 0.01 s
    assert live.measure_fps(frames=20, clock=TenMsPerCall()) == pytest.approx(2000)
    assert live.state["accepted"] == 0  # measured on a copy: the panel is untouched


def test_unknown_algorithm_is_a_value_error():
    with pytest.raises(ValueError, match="algorithm"):
        LiveLimiter("leaky-window")


def test_an_algorithm_the_panel_cannot_build_is_reported(monkeypatch):
    import ratelab.widgets as widgets

    live = LiveLimiter("gcra", clock=ManualClock())
    monkeypatch.setattr(widgets, "default_params", lambda name: {})  # no knobs: make() fails
    live.algorithm_box.value = "token-bucket"
    assert "token-bucket" in live.message
    assert live.algorithm == "gcra" and live.algorithm_box.value == "gcra"


ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("step"), st.floats(0.0, 2.0)),
    st.tuples(st.just("flood"), st.integers(1, 40)),
    st.tuples(st.just("boundary"), st.none()),
    st.tuples(st.just("gentle"), st.booleans()),
), max_size=8)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(NAMES), ACTIONS)
def test_the_panel_reports_exactly_what_its_limiter_decided(name, actions):
    live = LiveLimiter(name, clock=ManualClock())
    log = []
    allow = live.limiter.allow

    def logged(key, now, cost=1):
        d = allow(key, now, cost)
        log.append((now, d.allowed))
        return d

    live.limiter.allow = logged
    for action, arg in actions:
        if action == "step":
            live.step(arg)
        elif action == "flood":
            live.flood(n=arg)
        elif action == "boundary":
            live.time_boundary()
        else:
            live.gentle(arg)
    s = live.state
    times = np.array([t for t, _ in log])
    allowed = np.array([ok for _, ok in log], dtype=bool)
    assert np.all(np.diff(times) >= 0)  # virtual time never runs backwards
    assert (s["accepted"], s["rejected"]) == (int(allowed.sum()), int((~allowed).sum()))
    fresh = make(name, **live.limiter.params)  # the same requests on a fresh limiter
    assert [fresh.allow("client", t).allowed for t in times] == allowed.tolist()
    admitted = times[allowed]
    assert s["rolling"] == int(np.sum(admitted > s["t"] - s["window_s"]))
    assert s["max_rolling"] == (int(trailing_count(admitted, s["window_s"]).max())
                                if len(admitted) else 0)


def test_close_leaves_no_widgets_behind():
    import ipywidgets

    before = len(ipywidgets.widgets.widget._instances)
    live = LiveLimiter("nginx", clock=ManualClock())
    live.algorithm_box.value = "token-bucket"  # the nginx knobs are closed, new ones made
    live.knobs["rate"].value = 7.0  # a knob change keeps the knobs
    assert live.limiter.params["rate"] == 7.0
    live.measure_fps(frames=3)
    live.close()
    assert len(ipywidgets.widgets.widget._instances) == before
