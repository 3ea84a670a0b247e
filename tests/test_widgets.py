"""The LiveLimiter panel, driven through its programmatic API on a clock moved by hand."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from budget import examples

from ratelab.bursts import trailing_count
from ratelab.limiters import NAMES, make
from ratelab.plot import COLORS
from ratelab.clock import ticks_array, to_ticks
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


def test_a_knob_replays_what_was_sent_and_says_so():
    live = LiveLimiter("token-bucket", rate=10, capacity=10, clock=ManualClock())
    live.flood()
    live.knobs["capacity"].value = 30
    assert live.limiter.params == {"rate": 10.0, "capacity": 30.0}
    s = live.state
    # the same 30 requests, replayed on the new bucket at the same instant: all pass now
    assert (s["t"], s["accepted"], s["rejected"]) == (pytest.approx(0.2), 30, 0)
    assert "capacity 10 → 30" in live.message and "replayed" in live.message
    assert "replayed" in live.details.value
    assert "ratelab-ghost" in live.chart.value  # the run before, faintly
    # 2 tokens refilled during the first 0.2 s, and 1 more during the next flood
    assert live.flood(n=40)["accepted"] == 30 + 3


def test_an_invalid_knob_combination_is_reported_and_the_old_limiter_kept():
    live = LiveLimiter("nginx", rate=5, burst=2, clock=ManualClock())
    live.knobs["delay"].value = 4  # delay above burst: nginx refuses it
    assert "delay" in live.message
    assert live.limiter.params["delay"] == 0
    assert live.knobs["delay"].value == 0  # the slider goes back: it shows what runs
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


def test_time_the_boundary_is_not_offered_where_there_is_no_boundary():
    for name in NAMES:
        live = LiveLimiter(name, clock=ManualClock())
        windowed = live.limiter.window_s is not None
        assert live.boundary_button.disabled is (not windowed), name
        if not windowed:
            assert "no window boundary" in live.boundary_button.tooltip
            with pytest.raises(ValueError, match="no window boundary"):
                live.time_boundary()
        live.close()


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
    live.play.playing = True
    live.play.value = 1
    clock.advance(0.1)
    live.play.value = 2
    assert live.state["t"] == pytest.approx(0.1)
    live.play.playing = False
    clock.advance(0.1)
    live.play.value = 3  # a tick that arrives after the pause: not played, message kept
    assert live.state["t"] == pytest.approx(0.1) and "paused at t = 0.1 s" in live.message


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
    assert re.search(r"class='ratelab-max-own'>10<", html)  # 9.9999... tokens spent: 10
    window = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    window.flood()
    assert re.search(r"class='ratelab-max-own'>10<", window.counters.value)  # not 10.00
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


def test_a_field_the_widgets_cannot_read_is_refused_by_name(monkeypatch):
    from ratelab.limiters import REGISTRY

    monkeypatch.setattr(REGISTRY["fixed-window"], "reports", ("backlog", "a made-up field"))
    with pytest.raises(ValueError, match="FixedWindow reports 'backlog'"):
        LiveLimiter("fixed-window", clock=ManualClock())
    with pytest.raises(ValueError, match="no field"):
        own_count({"backlog": 3.0})


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
    import ratelab.widgets.live as widgets

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


@examples(40)
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
            if hasattr(live.limiter, "window"):
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
    cut = to_ticks(s["t"]) - to_ticks(s["window_s"])  # trailing windows on the tick grid
    assert s["rolling"] == int(np.sum(ticks_array(admitted) > cut))
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


# ---------------------------------------------------------------- what a learner reads


def test_the_controls_never_lie_after_an_algorithm_switch():
    live = LiveLimiter("fixed-window", clock=ManualClock())
    live.knobs["limit"].value = 29
    live.knobs["window"].value = 4.5
    for name in ("sliding-window-log", "fixed-window", "token-bucket", "gcra", "fixed-window"):
        live.algorithm_box.value = name
        shown = {p: c.value for p, c in live.knobs.items()}
        assert shown == pytest.approx(live.limiter.params), name
        assert live.state["limit"] == live.limiter.limit
    # the knobs both windows share kept their values through the switches
    assert (live.limiter.limit, live.limiter.window) == (10, 1.0) or \
        (live.limiter.limit, live.limiter.window) == (29, 4.5)
    live.algorithm_box.value = "sliding-window-log"
    live.knobs["limit"].value = 29
    live.algorithm_box.value = "fixed-window"
    assert live.knobs["limit"].value == 29 and live.limiter.limit == 29


def test_an_algorithm_switch_replays_the_requests_on_the_new_limiter():
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    live.time_boundary()
    assert live.state["accepted"] == 20
    live.algorithm_box.value = "sliding-window-log"
    s = live.state
    assert (s["t"], s["accepted"], s["rejected"]) == (pytest.approx(2.1), 10, 10)
    assert "fixed-window → sliding-window-log" in live.message


def test_the_panel_wraps_instead_of_cutting_below_800_px():
    live = LiveLimiter("nginx", clock=ManualClock())
    rows = [c for c in live.widget.children if isinstance(c, type(live.knob_box))]
    assert rows and all(r.layout.flex_flow == "row wrap" for r in rows)
    buttons = (live.flood_button, live.boundary_button, live.reset_button, live.gentle_button,
               live.play_button)
    assert all(b.layout.min_width == "fit-content" for b in buttons)  # labels never cut
    svg = live.chart.value
    assert "viewBox='0 0 640 230'" in svg and "width='100%'" in svg  # scales to the panel
    assert "height:auto" in svg


def test_the_chart_has_axis_titles_units_and_10pt_text():
    live = LiveLimiter("fixed-window", clock=ManualClock())
    live.step(2.0)
    svg = live.chart.value
    assert "virtual time (s)" in svg and ">requests</text>" in svg
    sizes = [float(v) for v in re.findall(r"font-size='([\d.]+)'", svg)]
    # 15 units in a 640-wide view drawn at least 600 px wide: 14 px, above 10 pt (13.3 px)
    assert sizes and min(sizes) * 600 / 640 >= 13.3
    assert "ratelab-legend" in svg and "flex-wrap" in svg  # the legend sits below, in HTML
    assert "admitted in the trailing 1 s" not in svg.split("</svg>")[0]


def test_a_flood_is_zoomed_so_it_can_be_read():
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    live.step(3.0)
    live.flood()
    t0, t1 = live._chart_range()
    assert live.view == "last burst" and t1 - t0 <= 2.5  # not 0.2 s of a 6 s axis
    xs = [float(x) for x in re.findall(r"<line x1='([\d.]+)' x2='[\d.]+' y1='0'",
                                       live.chart.value)]
    assert max(xs) - min(xs) >= 0.08 * (640 - 80)  # the 30 ticks span >= 8 % of the plot
    live.show("follow")
    assert live._chart_range() == (0.0, 6.0)
    with pytest.raises(ValueError, match="view"):
        live.show("sideways")


def test_history_does_not_scroll_off():
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    live.flood()
    live.step(10.0)
    live.show("whole run")
    assert live._chart_range() == (0.0, pytest.approx(10.2))
    assert live.chart.value.count(f"stroke='{COLORS['rejected']}'") == 20  # still drawn
    assert live.state["max_rolling"] == 10


def test_play_and_pause_are_labelled_and_pausing_says_where():
    live = LiveLimiter("fixed-window", clock=ManualClock())
    assert live.play_button.description == "play" and live.play_button.tooltip
    live.play_button.value = True
    assert live.play.playing and live.play_button.description == "pause"
    live.step(1.5)
    live.play_button.value = False
    assert not live.play.playing
    assert "paused at t = 1.5 s" in live.message and "paused" in live.details.value


def test_the_own_count_is_explained_per_algorithm():
    for name, words in [("token-bucket", "tokens spent"), ("leaky-bucket", "water"),
                        ("fixed-window", "window count"), ("gcra", "ahead"),
                        ("nginx", "excess"), ("sliding-window-counter", "estimate")]:
        live = LiveLimiter(name, clock=ManualClock())
        assert f"own = {words}" in live.counters.value, name
        live.close()


def test_bucket_gauges_point_the_same_way():
    before, after = {}, {}
    for name in ("token-bucket", "leaky-bucket", "fixed-window", "gcra", "nginx"):
        live = LiveLimiter(name, clock=ManualClock())
        before[name] = (live.gauge_bar.value / live.gauge_bar.max, live.gauge_bar.bar_style)
        live.flood()
        after[name] = (live.gauge_bar.value / live.gauge_bar.max, live.gauge_bar.bar_style)
        live.close()
    assert all(v == (1.0, "success") for v in before.values()), before  # idle: full, green
    assert all(f <= 0.2 and style in ("danger", "warning") for f, style in after.values()), after


def test_every_knob_is_explained_not_just_named():
    for name in NAMES:
        live = LiveLimiter(name, clock=ManualClock())
        for p, control in live.knobs.items():
            assert control.tooltip and control.tooltip != control.description, p
            assert KNOBS[p]["help"] in live.knob_help.value.replace("&#x27;", "'"), p
        live.close()
    assert "queue" in KNOBS["mode"]["help"] and "retrying" in KNOBS["count_rejected"]["help"]


def test_sliders_have_room_for_every_step():
    from ratelab.widgets import SLIDER_PX

    live = LiveLimiter("token-bucket", clock=ManualClock())
    track = SLIDER_PX["min_width"] - SLIDER_PX["description"] - SLIDER_PX["readout"]
    for p, spec in KNOBS.items():
        if spec["kind"] in ("int", "float"):
            steps = (spec["max"] - spec["min"]) / spec.get("step", 1)
            assert track / steps >= 1.7, p  # no 10 → 29 in one small drag
    assert live.knobs["capacity"].layout.min_width == f"{SLIDER_PX['min_width']}px"
    assert SLIDER_PX["min_width"] <= 250  # a notebook 350 px wide holds it and its readout
    named = [box for box in live.knob_box.children if live.knobs["capacity"] in
             getattr(box, "children", ())]
    assert len(named) == 1 and KNOBS["capacity"]["description"] in named[0].children[0].value


def test_a_static_reader_gets_the_counters_and_chart():
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    live.flood()
    bundle = live._repr_mimebundle_()
    assert "<svg" in bundle["text/html"] and "ratelab-accepted'>10<" in bundle["text/html"]


def test_a_shapers_departures_are_drawn():
    live = LiveLimiter("leaky-bucket", rate=10, capacity=10, mode="shape", clock=ManualClock())
    live.flood()
    live.step(2.0)
    fresh = make("leaky-bucket", rate=10, capacity=10, mode="shape")
    ds = [fresh.allow("client", t) for t in live._arrivals]
    delayed = sorted(t + d.delay for t, d in zip(live._arrivals, ds) if d.allowed and d.delay > 0)
    assert len(delayed) >= 9 and live._departures == pytest.approx(delayed)
    drawn = re.findall(r"class='ratelab-departure' x1='([\d.]+)'", live.chart.value)
    assert len(drawn) == len(delayed)
    gaps = np.diff([float(x) for x in drawn])
    assert np.allclose(gaps, gaps[0], atol=0.2)  # evenly spaced: the shaper's metronome


@pytest.mark.parametrize("name, params, bound", [
    ("token-bucket", {"rate": 13.5, "capacity": 10}, "capacity 10"),
    ("leaky-bucket", {"rate": 5, "capacity": 8}, "capacity 8"),
    ("gcra", {"rate": 5, "burst": 5}, "limit 6 = burst 5 + 1"),
    ("nginx", {"rate": 5, "burst": 3}, "limit 4 = burst 3 + 1"),
    ("fixed-window", {"limit": 10, "window": 1.0}, "limit 10"),
])
def test_the_dashed_line_says_what_it_is(name, params, bound):
    """A token bucket's dashed line is its capacity, not a limit per window (a bucket admits
    its capacity and what refills: more than it in a second); GCRA's and nginx's limit is the
    burst + 1 that inspect reports, which a slider saying "burst 5" did not explain."""
    live = LiveLimiter(name, clock=ManualClock(), **params)
    live.flood()
    assert re.search(rf"class=.ratelab-bound.[^>]*>{re.escape(bound)}</text>", live.chart.value)
    assert f"┅ {bound}<" in live.chart.value  # and the legend
    if "burst" in params:
        assert live.state["inspect"].get("limit", live.limiter.limit) == params["burst"] + 1
        assert "burst + 1" in KNOBS["burst"]["help"]
    live.close()


def test_a_panel_nothing_was_sent_to_says_what_it_is_to_a_static_reader():
    """A web page of the notebook shows the panel's stored HTML: at t = 0 that was an empty
    chart and counters at 0; now it says what the panel is, and that it needs a kernel."""
    live = LiveLimiter("fixed-window", limit=10, window=1.0, clock=ManualClock())
    fresh = live._repr_mimebundle_()["text/html"]
    assert "<svg" not in fresh and "Nothing has been sent to it yet" in fresh
    assert "fixed-window: limit 10, window 1" in fresh and "kernel" in fresh
    live.step(0.5)  # time moved: the chart says something (the gentle stream is off)
    assert "<svg" in live._repr_mimebundle_()["text/html"]
    live.close()
