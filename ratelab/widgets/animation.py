"""Recordings of the panels that play without a kernel: matplotlib's JavaScript animation.

A panel needs a running kernel; a web page of the notebook (or a notebook opened without
one) has only what was stored. :func:`animate` records a panel's run frame by frame — the
live limiter's chart as it stood at each instant, the comparison's lanes as its stream is
decided — as matplotlib's JavaScript animation (a ``FuncAnimation`` written by its
``HTMLWriter``, the frames embedded as PNG): an image with play, pause, step buttons and a
slider to scrub, which runs in any browser with no kernel. (Its buttons' icons are Font
Awesome's, which the player links from a CDN; the course website uses its own copy.)

The frames are drawn from the panel's own data by the panels' drawing code
(:func:`~ratelab.widgets.chart.live_figure` from ``LiveLimiter.chart_at``,
:func:`~ratelab.widgets.chart.lanes_figure` through ``Compare.figure``), so the recording
shows what the panel shows. The panel itself is left as it is.

What a recording weighs is chosen, not left to chance (:func:`frame_times`, :func:`slim`):

- a frame every `frame_s` virtual seconds where little happens, and four times as many where
  :data:`CROWD` requests or more arrive within one step (a flood plays in slow motion);
- frames at :data:`DPI`, each re-encoded with the suite's own colours (:func:`palette`: a chart
  has a handful of colours and their anti-aliased edges; a third of the bytes, the same
  picture);
- a recording heavier than `embed_limit_mb` raises ValueError naming it, where matplotlib
  would silently drop the frames past its limit.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import io
import math
import re
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import matplotlib as mpl
from IPython.display import HTML
from matplotlib.animation import FuncAnimation, HTMLWriter
from matplotlib.figure import Figure
import numpy as np
from PIL import Image

from ..limiters.base import positive
from ..plot import COLORS as PLOT_COLORS
from .chart import COMPARE_RC, LIVE_FIGSIZE, live_figure
from .compare import Compare
from .live import LiveLimiter

DPI = 80
"""Dots per inch of a frame: the live chart is 576 x 320 px, the comparison's eight lanes 640 x 692."""

FPS = 5
"""Frames a second when played (the player's + and - buttons change it)."""

EMBED_LIMIT_MB = 1.0
"""The most a recording may weigh as stored (its page's HTML, in MB)."""

FRAME_S = 0.25
"""Virtual seconds between two frames where little happens."""

CROWD = 4
"""Requests arriving within one step that make it a crowded one, drawn in four frames."""

def palette() -> Image.Image:
    """The palette a frame is re-encoded with: the suite's colours (``ratelab.plot.COLORS``)
    and their blends with the white paper (a thin line's anti-aliased edge), and 24 greys
    (text, axes, grid). A frame is drawn in nothing else, so each pixel keeps its meaning."""
    inks = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in PLOT_COLORS.values()]
    shades = [tuple(round(v + (255 - v) * a) for v in ink)
              for ink in inks for a in (0.0, 0.25, 0.5, 0.75)]
    greys = [(v, v, v) for v in np.linspace(0, 255, 24).round().astype(int).tolist()]
    image = Image.new("P", (1, 1))
    image.putpalette([v for rgb in shades + greys for v in rgb])
    return image


def animate(panel: LiveLimiter | Compare, *, frame_s: float = FRAME_S, fps: int = FPS,
            dpi: int = DPI, embed_limit_mb: float = EMBED_LIMIT_MB) -> HTML:
    """A recording of `panel`'s run that plays with no kernel (an IPython HTML object: end a
    cell with it).

    A :class:`LiveLimiter`: what it did from t = 0 to now, over the whole run, its counters
    above the chart. A :class:`Compare`: its stream decided afresh, lane by lane, over the
    stretch of time its chart shows (its ``view``). One frame every `frame_s` virtual seconds,
    four where requests crowd (:func:`frame_times`); `fps` sets the playing speed, `dpi` the
    frames' resolution; a recording heavier than `embed_limit_mb` raises ValueError.
    """
    step = positive("frame_s", frame_s)
    if isinstance(panel, LiveLimiter):
        arrivals = sorted(panel.chart_at().admitted + panel.chart_at().rejected)
        times = frame_times(0.0, panel.t, step, arrivals)
        view = (0.0, max(panel.t, step))
        fig = Figure(figsize=LIVE_FIGSIZE)

        def draw(at: float) -> None:
            live_figure(panel.chart_at(at, view), panel.counters_line(at), fig)
    elif isinstance(panel, Compare):
        probe = Compare(panel.algorithms, frame_s=panel.frame_s,
                        **{k: v for k, v in panel.settings.items() if k != "algorithms"})
        probe.view = panel.view
        times = frame_times(panel.view[0], min(panel.view[1], panel.end_s), step,
                            probe.times.tolist())
        fig = Figure()

        def draw(at: float) -> None:
            probe.step(at - probe.t)
            probe.figure(fig)
    else:
        raise TypeError(f"animate takes a LiveLimiter or a Compare, got {type(panel).__name__}")
    return HTML(record(fig, draw, times, fps=fps, dpi=dpi, embed_limit_mb=embed_limit_mb))


def frame_times(t0: float, t1: float, step: float, arrivals: Sequence[float]) -> list[float]:
    """The instants of the frames from t0 to t1 (both in): every `step` seconds, and every
    step / 4 within a step into which CROWD or more of `arrivals` (sorted) fall."""
    n = max(1, math.ceil((t1 - t0) / step - 1e-9))
    grid = [min(t0 + k * step, t1) for k in range(n + 1)]
    out = []
    for a, b in zip(grid, grid[1:]):
        crowded = bisect.bisect_right(arrivals, b) - bisect.bisect_right(arrivals, a) >= CROWD
        parts = 4 if crowded else 1
        out += [a + (b - a) * i / parts for i in range(parts)]
    return out + [t1]


FRAME = re.compile(r'(frames\[\d+\] = "data:image/png;base64,)([^"]*)(")')
"""A frame in matplotlib's HTML: its base64 PNG, with backslash-newlines every 76 characters."""


def slim(html: str) -> str:
    """`html` (an HTMLWriter page) with every frame re-encoded with the :func:`palette`."""
    inks = palette()

    def one(match: re.Match) -> str:
        png = base64.b64decode(match.group(2).replace("\\\n", ""))
        with Image.open(io.BytesIO(png)) as im:
            paletted = im.convert("RGB").quantize(palette=inks, dither=Image.Dither.NONE)
        out = io.BytesIO()
        paletted.save(out, format="PNG", optimize=True)
        return match.group(1) + base64.b64encode(out.getvalue()).decode("ascii") + match.group(3)

    return FRAME.sub(one, html)


def record(fig: Figure, draw: Callable[[float], None], times: list[float], *, fps: int,
           dpi: int, embed_limit_mb: float) -> str:
    """`fig` drawn by `draw(t)` for each of `times`, as matplotlib's JavaScript animation
    (HTML), slimmed. Its element ids are a digest of the frames, so the same recording is the
    same text (a re-executed notebook does not change)."""
    if not (isinstance(fps, int) and fps >= 1):
        raise ValueError(f"fps must be a whole number >= 1, got {fps!r}")
    limit = positive("embed_limit_mb", embed_limit_mb)
    animation = FuncAnimation(fig, lambda k: draw(times[k]), frames=len(times),
                              interval=1000 / fps, repeat=False)
    writer = HTMLWriter(fps=fps, embed_frames=True, default_mode="once",
                        embed_limit=math.inf)  # the limit is applied below, to what is kept
    with tempfile.TemporaryDirectory() as folder, mpl.rc_context(COMPARE_RC):
        path = Path(folder) / "animation.html"
        animation.save(str(path), writer=writer, dpi=dpi)
        text = slim(path.read_text(encoding="utf-8"))
    if len(text) > limit * 2**20:
        raise ValueError(f"the recording of {len(times)} frames weighs "
                         f"{len(text) / 2**20:.2f} MB, more than embed_limit_mb={limit:g} "
                         "(fewer frames: a larger frame_s; or a lower dpi)")
    old = re.search(r'id="_anim_img([0-9a-f]+)"', text).group(1)
    return text.replace(old, hashlib.sha1(text.replace(old, "").encode()).hexdigest()[:32])
