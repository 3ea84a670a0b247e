"""ratelab.widgets.animate: a panel's run recorded as matplotlib's JavaScript animation.

The recordings are checked as a reader gets them: the frames embedded in the HTML are decoded
and compared, and each frame's figure is held to the checks every notebook figure passes
(tests/figure_checks.py). Small runs at a low resolution, so that the fast lane stays fast;
the notebook's own recordings are played in chromium by tests/test_site.py.
"""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
from PIL import Image

import figure_checks
from ratelab.plot import COLORS
from ratelab.widgets import Compare, LiveLimiter, ManualClock, animate
from ratelab.widgets import animation
from ratelab.widgets.chart import live_figure

FRAME = re.compile(r'frames\[\d+\] = "data:image/png;base64,([^"]*)"')


def frames_of(html: str) -> list[np.ndarray]:
    """The frames a recording holds, decoded (RGB arrays, in order)."""
    return [np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
            for data in FRAME.findall(html)]


def flooded(algorithm: str = "fixed-window", **params) -> LiveLimiter:
    """A panel that sat quiet for 0.3 s, then was flooded, then left 0.3 s to drain."""
    live = LiveLimiter(algorithm, clock=ManualClock(), **params)
    live.step(0.3)
    live.flood()
    live.step(0.3)
    return live


def test_frames_come_every_step_and_four_times_as_often_where_requests_crowd():
    times = animation.frame_times(0.0, 1.0, 0.25, [0.55, 0.56, 0.57, 0.58, 0.9])
    assert times == pytest.approx([0, 0.25, 0.5, 0.5625, 0.625, 0.6875, 0.75, 1.0])
    assert animation.frame_times(0.0, 0.6, 0.25, []) == pytest.approx([0, 0.25, 0.5, 0.6])


def test_a_live_recording_shows_the_run_frame_by_frame():
    live = flooded()
    html = animate(live, dpi=40).data
    frames = frames_of(html)
    arrivals = live.chart_at().admitted + live.chart_at().rejected
    assert len(frames) == len(animation.frame_times(0.0, live.t, animation.FRAME_S,
                                                    sorted(arrivals)))
    assert len({f.tobytes() for f in frames}) == len(frames)  # each frame shows a new instant
    assert "Nothing" not in html and "anim-slider" in html and 'value="once"' in html
    assert live.state["accepted"] == 10 and live.t == pytest.approx(0.8)  # left as it was
    assert animate(live, dpi=40).data == html  # the same run, the same text


def test_a_frame_is_the_panel_at_that_instant():
    live = flooded()
    before, during = live.chart_at(0.29), live.chart_at(0.45)
    assert before.admitted == [] and before.now == 0.29
    assert 0 < len(during.admitted) + len(during.rejected) < 30  # the flood half-sent
    assert all(t <= 0.45 for t in during.admitted + during.rejected)
    assert live.counters_line(0.8) == ("t = 0.80 s   accepted 10   rejected 20   rolling 10   "
                                       "max rolling 10")
    for at in (0.0, 0.3, 0.45, 0.8):  # what every notebook figure is held to
        fig = live_figure(live.chart_at(at, (0.0, 0.8)), live.counters_line(at))
        assert figure_checks.defects(fig) == [], at


def test_a_comparison_recording_plays_its_view_and_leaves_the_panel_alone():
    c = Compare(["fixed-window", "sliding-window-log"], preset="burst")
    c.run()
    decided = [list(lane.allowed) for lane in c.lanes]
    html = animate(c, dpi=30).data
    frames = frames_of(html)
    view = c.view
    assert len(frames) == len(animation.frame_times(view[0], view[1], animation.FRAME_S,
                                                    c.times.tolist()))
    assert len({f.tobytes() for f in frames}) == len(frames)
    assert c.t == c.end_s and [list(lane.allowed) for lane in c.lanes] == decided


def inks(kind: str) -> np.ndarray:
    """The colour of `kind` (ratelab.plot.COLORS) and its blends with white (a thin line's
    anti-aliased edge), as RGB rows."""
    ink = np.array([int(COLORS[kind][i:i + 2], 16) for i in (1, 3, 5)])
    return np.array([np.round(ink + (255 - ink) * a) for a in (0, 0.25, 0.5, 0.75)])


def shows(frame: np.ndarray, kind: str) -> bool:
    """Whether some pixel of `frame` is the colour of `kind` or one of its blends."""
    pixels = np.unique(frame.reshape(-1, 3), axis=0).astype(int)
    return bool((np.abs(pixels[:, None, :] - inks(kind)[None]).sum(axis=2) == 0).any())


def test_frames_keep_the_suites_colours():
    """Each frame is re-encoded with a small palette: the amber of a shaper's departures and
    the red of a refusal stay amber and red (a palette chosen by pixel count lost them)."""
    shaper = frames_of(animate(flooded("leaky-bucket", rate=10, capacity=10, mode="shape"))
                       .data)[-1]
    policer = frames_of(animate(flooded()).data)[-1]
    assert shows(shaper, "delayed") and shows(shaper, "admitted") and shows(shaper, "estimate")
    assert shows(policer, "rejected")


def test_a_recording_too_heavy_is_refused_by_name():
    with pytest.raises(ValueError, match="embed_limit_mb"):
        animate(flooded(), dpi=40, embed_limit_mb=0.01)
    with pytest.raises(ValueError, match="frame_s"):
        animate(flooded(), frame_s=0)
    with pytest.raises(TypeError, match="LiveLimiter or a Compare"):
        animate("fixed-window")
