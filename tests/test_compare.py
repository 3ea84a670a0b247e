"""The comparison panel: every algorithm on one seeded stream, headless (no browser, no kernel)."""

import base64
import html
import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ratelab.bursts import trailing_count
from ratelab.limiters import NAMES, make
from ratelab.widgets import PRESETS, SHAPERS, Compare, budget_params, preset_stream
from ratelab.widgets.compare import PLAY_INTERVAL_MS


def decided(compare):
    """Per lane, the allowed mask and the delays, as the panel recorded them."""
    return {lane.name: (np.array(lane.allowed, dtype=bool), np.array(lane.delay))
            for lane in compare.lanes}


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_algorithm_on_every_preset_decides_as_its_limiter_does(preset, request,
                                                                     monkeypatch):
    if preset == "trace":  # a recorded minute: needs the traces (skips without them)
        monkeypatch.setenv("RATELAB_DATA", str(request.getfixturevalue("data_dir")))
    c = Compare(preset=preset)
    f = c.run()
    assert list(f.index) == list(NAMES)
    assert c.t == c.end_s and c._next == len(c.times) > 0
    for name, (allowed, delay) in decided(c).items():
        fresh = make(name, **budget_params(name, 10, 1.0, shape=True))
        want = [fresh.allow("client", float(t)) for t in c.times]
        assert allowed.tolist() == [d.allowed for d in want], name
        row = f.loc[name]
        assert (row.admitted, row.rejected) == (allowed.sum(), (~allowed).sum())
        peak = int(trailing_count(c.times[allowed], 1.0).max()) if allowed.any() else 0
        assert row.max_admitted_in_window == peak, name
        if name in SHAPERS:
            assert not math.isnan(row.p95_delay_s)
            assert row.p95_delay_s == pytest.approx(np.percentile(delay[allowed], 95), abs=1e-4)
        else:
            assert math.isnan(row.p95_delay_s) and not delay.any()
        status = 200 if want[-1].allowed else 429
        assert row.last_status == status
        assert ("Retry-After" in row.last_headers) == (status == 429)
        assert "X-RateLimit-Limit: 10" in row.last_headers
    # the sliding log never lets more than the limit into a trailing window, on any stream
    assert f.loc["sliding-window-log", "max_admitted_in_window"] <= 10


def test_one_budget_for_every_algorithm():
    for name in NAMES:
        lim = make(name, **budget_params(name, 12, 2.0))
        assert lim.rate_per_s == pytest.approx(6.0), name
        assert lim.limit == 12
    with pytest.raises(ValueError, match="limit"):
        budget_params("gcra", 0, 1.0)
    with pytest.raises(ValueError, match="window_s"):
        budget_params("gcra", 5, -1)


def test_the_boundary_exploit_is_a_number():
    f = Compare(preset="boundary").run()
    assert f.loc["fixed-window", "max_admitted_in_window"] == 20  # twice the limit
    assert f.loc["sliding-window-log", "max_admitted_in_window"] == 10
    assert f.loc["sliding-window-counter", "max_admitted_in_window"] <= 10


def test_shapers_serve_at_the_rate():
    f = Compare(preset="flood").run()
    for name in SHAPERS:  # 30/s offered, admitted ones queued and served 10/s
        assert f.loc[name, "max_served_in_window"] <= 11
        assert f.loc[name, "p95_delay_s"] == pytest.approx(0.9, abs=0.01)
    police = Compare(preset="flood", shape=False).run()
    assert police[["p95_delay_s"]].isna().all().all()


def test_the_numbers_read_as_counts():
    from ratelab.widgets.text import num as _num

    assert [_num(v) for v in (10.0, 9.999999999, 9.55, 4.5, 0.0)] == ["10", "10", "9.55",
                                                                     "4.5", "0"]


def test_streams_are_seeded_and_the_presets_keep_their_promise():
    a = preset_stream("poisson", 10, 1.0, seed=3)
    assert np.array_equal(a, preset_stream("poisson", 10, 1.0, seed=3))
    assert not np.array_equal(a, preset_stream("poisson", 10, 1.0, seed=4))
    assert len(preset_stream("flood", 10, 1.0)) == 300  # 3 x 10/s for 10 s
    b = preset_stream("burst", 10, 1.0)
    assert int(trailing_count(b, 0.2).max()) >= 30  # 3 x the limit in 0.2 s
    with pytest.raises(ValueError, match="preset"):
        preset_stream("tsunami", 10, 1.0)


def test_a_knob_change_reruns_to_the_same_instant_and_keeps_the_run_before():
    c = Compare(preset="poisson")
    c.step(4.0)
    before = c.frame()
    after = c.set(limit=5)
    assert c.t == 4.0 and c.previous.equals(before)
    assert after.loc["fixed-window", "admitted"] < before.loc["fixed-window", "admitted"]
    assert set(c._ghosts) == set(NAMES)
    assert "limit 10 → 5" in c.message and "t = 4 s" in c.message
    assert "the run before" in c.svg()  # the faint copy is on the chart, in the legend
    with pytest.raises(ValueError, match="window_s"):
        c.set(window_s=0)
    assert c.window_s == 1.0 and c.limit == 5 and c.t == 4.0  # a refused change changes nothing
    with pytest.raises(ValueError, match="knob"):
        c.set(colour="red")


def test_any_subset_of_algorithms():
    c = Compare(["gcra", "fixed-window"], preset="boundary")
    assert list(c.run().index) == ["gcra", "fixed-window"]
    with pytest.raises(ValueError, match="algorithms"):
        Compare(["leaky-window"])
    with pytest.raises(ValueError, match="algorithms"):
        Compare([])


SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(svg: str, group: str) -> list[str]:
    """The text of every <text> inside the groups whose id starts with `group`."""
    root = ET.fromstring(svg)
    return [t.text for g in root.iter(f"{SVG}g") if g.get("id", "").startswith(group)
            for t in g.iter(f"{SVG}text")]


def test_the_chart_has_lanes_axis_titles_and_ticks_that_follow_the_view():
    c = Compare(["token-bucket", "fixed-window", "leaky-bucket"], preset="burst")
    c.run()
    svg = c.svg()
    assert re.findall(r'<g id="lane-([a-z-]+)"', svg) == ["token-bucket", "fixed-window",
                                                          "leaky-bucket"]
    assert len(re.findall(r'<g id="title-lane-', svg)) == 3
    assert "time (s)" in svg and "requests served in the trailing 1 s" in svg
    ticks = svg_texts(svg, "xtick")
    assert c.view == (3.5, 5.5) and "4.00" in ticks  # zoomed on the burst at t = 4 s
    c.zoom(0, 10)
    wide = svg_texts(c.svg(), "xtick")
    assert wide != ticks and "10" in wide
    # user units are points (576 wide, drawn at most 768 px): 11.5 pt, still 10 pt at 670 px
    assert 'viewBox="0 0 576 ' in svg and "max-width:768px" in svg
    sizes = [float(s) for s in re.findall(r"font-size: ([\d.]+)px", svg)]
    assert len(sizes) > 20 and min(sizes) >= 11.5
    assert svg.count("stroke: #f9a825") > 0  # the shaper's departures, in amber


def test_the_snapshot_is_a_real_png():
    c = Compare(["gcra"], preset="flood")
    c.run()
    png = c.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    bundle = c._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"])[:4] == b"\x89PNG"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    c.close()


def test_the_controls_show_what_runs_and_a_preset_button_runs_it():
    c = Compare(preset="gentle")
    w = c.widget
    c.set(limit=7, window_s=2.0)
    assert (c.limit_slider.value, c.window_slider.value) == (7, 2.0)
    c.preset_buttons["flood"].value = True
    assert c.preset == "flood" and c.t == c.end_s
    assert "preset flood" in c.message
    assert [n for n, b in c.preset_buttons.items() if b.value] == ["flood"]
    c.preset_buttons["flood"].value = False  # pressing the running preset again: still on
    assert c.preset_buttons["flood"].value and c.preset == "flood"
    assert "<svg" in c.chart.value and "ratelab-compare-chart" in c.chart.value
    assert "most admitted in any 2 s" in c.table.value
    c.algorithm_boxes["nginx"].value = False
    assert "nginx" not in c.algorithms and c.t == c.end_s and "lanes: − nginx" in c.message
    c.limit_slider.value = 0 + 3
    assert c.limit == 3 and "limit 7 → 3" in c.message
    c.window_slider.value = 2.0  # unchanged: nothing happens
    assert c.limit == 3
    assert all(b.description for b in (c.play_button, c.step_button, c.run_button))
    c.close()
    assert w.comm is None or not w.comm


def test_play_steps_and_pausing_says_where_it_stopped():
    c = Compare(preset="poisson", frame_s=0.5)
    c.widget  # noqa: B018
    c.play_button.value = True
    assert c.play.playing and c.play_button.description.endswith("pause")
    c.play.value = 1
    c.play.value = 2
    assert c.t == 1.0
    c.play_button.value = False
    assert "paused at t = 1 s" in c.message and "paused at t = 1 s" in c.status.value
    c.close()


def test_play_after_rewinding_shows_the_run_it_plays():
    """The burst preset zooms the chart on 3.5-5.5 s; after 'back to t = 0', play drew into
    that empty stretch for 3.5 s of play (it looked dead). Play now shows the whole run."""
    c = Compare(preset="burst")
    c.widget  # noqa: B018
    c.run()
    assert c.view == (3.5, 5.5)
    c.rewind()
    c.play_button.value = True
    assert c.view == (0.0, c.end_s) and "the whole run" in c.message
    c.play.value = 1
    assert c.t == c.frame_s and svg_texts(c.chart.value, "xtick")[0] == "0"
    c.play_button.value = False
    c.zoom(3.0, 6.0)
    c.play_button.value = True  # at 0.25 s, outside 3-6 s again: the whole run
    assert c.view == (0.0, c.end_s)
    c.play_button.value = False
    c.close()


def test_play_runs_at_real_time_in_frames_the_kernel_can_draw():
    c = Compare(preset="burst")
    assert c.frame_s * 1000 == PLAY_INTERVAL_MS  # virtual time at real time
    assert 1000 / PLAY_INTERVAL_MS >= 4  # frames a second (1.25 once)


def test_the_table_keeps_one_line_per_algorithm_and_folds_the_headers_away():
    c = Compare(preset="boundary")
    c.widget  # noqa: B018
    c.run()
    table, folded = c.table.value.split("<details")
    cells = re.findall(r"<td class='ratelab-headers'>([^<]*)</td>", table)
    assert len(cells) == len(c.algorithms)
    assert "200" in cells and "429, retry in 1 s" in cells
    assert "RateLimit-Policy" not in table and "X-RateLimit" not in table  # 4 lines a row, once
    for name in c.algorithms:  # every last response's headers, folded under the table
        headers = c.frame().loc[name, "last_headers"]
        assert all(html.escape(h) in folded for h in headers.split("; ")), name
    c.close()
