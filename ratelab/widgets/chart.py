"""The panels' charts: the live limiter's inline SVG, and the comparison's stacked lanes.

Both draw what they are given and decide nothing: the live chart a :class:`LiveChart` (the
requests and samples of one run), the comparison one :class:`LaneChart` per algorithm. The
live chart is drawn twice over: as inline SVG for the panel (:func:`live_svg`, hundreds of
frames a second) and on a matplotlib figure for an animation's frames (:func:`live_figure`),
the same marks in the same colours.
"""

from __future__ import annotations

import bisect
import io
import math
import re
from dataclasses import dataclass
from typing import Sequence

import matplotlib as mpl
import matplotlib.lines  # noqa: F401 -- mpl.lines for the legend handles
import numpy as np
from matplotlib.figure import Figure

from ..plot import COLORS, STYLE
from .text import num

# ---------------------------------------------------------------- the live chart (SVG)

LIVE_FIGSIZE = (7.2, 4.0)
"""The live chart's size in inches when drawn by matplotlib (an animation's frames); its
layout is fixed (no layout engine: a frame is drawn once, not measured first)."""

CHART_FONT_PX = 15
"""Text size in the chart's own units (it is 640 wide and drawn 600 to 800 px wide)."""

Sample = tuple[float, int, float]
"""(t, rolling count, the limiter's own count): one sample of the live run."""


@dataclass(frozen=True)
class LiveChart:
    """What the live chart draws: one run's requests and samples, over [t0, t1] s.

    admitted, rejected  arrival times (s, sorted) of the admitted and the refused requests.
    departures          when a shaper serves the requests it held (s, sorted).
    history, ghost      the samples of this run and of the run before the last change.
    highest             the largest rolling or own count so far (the y axis holds it).
    bound               what the dashed line at `limit` is, in the limiter's words
                        ("capacity 10", "limit 6 = burst 5 + 1"; reading.bound_name).
    """

    t0: float
    t1: float
    now: float
    limit: float
    window_s: float
    highest: float
    admitted: Sequence[float]
    rejected: Sequence[float]
    departures: Sequence[float]
    history: Sequence[Sample]
    ghost: Sequence[Sample]
    bound: str = ""

    @property
    def bound_text(self) -> str:
        """The dashed line's label: `bound`, else "limit N"."""
        return self.bound or f"limit {num(self.limit)}"


def live_svg(c: LiveChart, width: int = 640, height: int = 230) -> str:
    """The chart as an inline SVG: ticks, rolling count, own counter, limit, axis titles; and
    its legend below it, in HTML."""
    t0, t1, limit = c.t0, c.t1, c.limit
    span = t1 - t0
    top = max(2.2 * limit, c.highest * 1.1, 1.0)
    fs = CHART_FONT_PX
    pad_l, pad_r, pad_b, ticks = 70, 10, 2.6 * fs + 6, 32
    plot_h = height - pad_b - ticks

    def x(t: float) -> float:
        return pad_l + (t - t0) / span * (width - pad_l - pad_r)

    def y(v: float) -> float:
        return ticks + plot_h * (1 - v / top)

    def step_path(rows: Sequence[Sample], i: int, until: float | None = None) -> str:
        """Column `i` of `rows` as a step line over the view (held flat up to `until`)."""
        lo = max(0, bisect.bisect_left(rows, (t0,)) - 1)
        hi = bisect.bisect_right(rows, (t1, math.inf, math.inf))
        pts: list[tuple[float, float]] = []
        prev = None
        for h in rows[lo:hi]:
            if h[0] < t0:
                prev = h
                continue
            if prev is not None:
                if not pts:
                    pts.append((t0, prev[i]))
                pts.append((h[0], prev[i]))  # flat until the value changes
            pts.append((h[0], h[i]))
            prev = h
        if prev is not None and until is not None:
            pts.append((min(until, t1), prev[i]))
        return " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)

    def tick_lines(times: Sequence[float], y1: float, y2: float, color: str,
                   css: str = "") -> str:
        """A vertical tick per time in the view, from y1 to y2."""
        shown = times[bisect.bisect_left(times, t0):bisect.bisect_right(times, t1)]
        attr = f" class='{css}'" if css else ""
        return "".join(f"<line{attr} x1='{x(a):.1f}' x2='{x(a):.1f}' y1='{y1}' y2='{y2}' "
                       f"stroke='{color}'/>" for a in shown)

    marks = (tick_lines(c.admitted, 0, ticks - 3, COLORS["admitted"])
             + tick_lines(c.rejected, 0, ticks - 3, COLORS["rejected"])
             # a shaper's departures, under the arrivals: its metronome
             + tick_lines([d for d in c.departures if d <= c.now], 16, 29, COLORS["delayed"],
                          "ratelab-departure"))
    text = f"font-size='{fs}'"
    axis = "".join(
        f"<text class='ratelab-ytick' x='{pad_l - 6}' y='{y(v) + fs / 3:.1f}' {text} "
        f"text-anchor='end'>{num(v)}</text>" for v in (0, limit, 2 * limit))
    step = tick_step(span)
    first = math.ceil(t0 / step)
    xt = "".join(
        f"<text class='ratelab-xtick' x='{x(k * step):.1f}' y='{height - pad_b + fs + 2:.1f}' "
        f"{text} text-anchor='middle'>{num(round(k * step, 3))}</text>"
        f"<line x1='{x(k * step):.1f}' x2='{x(k * step):.1f}' y1='{ticks}' "
        f"y2='{ticks + plot_h}' stroke='#eee'/>"
        for k in range(first, math.floor(t1 / step + 1e-9) + 1))
    ghost = (f"<polyline class='ratelab-ghost' fill='none' stroke='{COLORS['arrivals']}' "
             f"stroke-width='2' stroke-opacity='0.6' points='{step_path(c.ghost, 1)}'/>"
             if c.ghost else "")
    return (
        f"<svg class='ratelab-chart' viewBox='0 0 {width} {height}' width='100%' "
        f"style='max-width:800px;height:auto;background:#fff' "
        f"xmlns='http://www.w3.org/2000/svg'>"
        f"<line x1='{pad_l}' x2='{pad_l}' y1='{ticks}' y2='{ticks + plot_h}' stroke='#999'/>"
        f"<line x1='{pad_l}' x2='{width - pad_r}' y1='{ticks + plot_h}' "
        f"y2='{ticks + plot_h}' stroke='#999'/>"
        f"{xt}{marks}{axis}"
        f"<line x1='{pad_l}' x2='{width - pad_r}' y1='{y(limit):.1f}' y2='{y(limit):.1f}' "
        f"stroke='{COLORS['limit']}' stroke-dasharray='5,4'/>{ghost}"
        f"<polyline fill='none' stroke='{COLORS['admitted']}' stroke-width='3' "
        f"stroke-opacity='0.8' points='{step_path(c.history, 1, c.now)}'/>"
        f"<polyline fill='none' stroke='{COLORS['estimate']}' stroke-width='1.5' "
        f"points='{step_path(c.history, 2, c.now)}'/>"
        f"<text class='ratelab-xlabel' x='{(pad_l + width - pad_r) / 2:.0f}' "
        f"y='{height - 4}' {text} text-anchor='middle'>virtual time (s)</text>"
        f"<text class='ratelab-ylabel' {text} text-anchor='middle' "
        f"transform='translate({fs + 2},{ticks + plot_h / 2:.0f}) rotate(-90)'>"
        f"requests</text>"
        f"<text class='ratelab-bound' x='{pad_l + 4}' y='{y(limit) - 4:.1f}' {text}>"
        f"{c.bound_text}</text>"
        "</svg>"
        f"<div class='ratelab-legend' style='font-size:14px;display:flex;flex-wrap:wrap;"
        f"gap:0 14px'><span style='color:{COLORS['admitted']}'>━ admitted in the trailing "
        f"{c.window_s:g} s</span><span style='color:{COLORS['estimate']}'>━ the "
        f"limiter's own count</span><span>┅ {c.bound_text}</span>"
        f"<span>ticks on top: <span style='color:{COLORS['admitted']}'>admitted</span> "
        f"<span style='color:{COLORS['rejected']}'>rejected</span>; under them "
        f"<span style='color:{COLORS['delayed']}'>served later (shaped)</span></span>"
        + (f"<span style='color:{COLORS['arrivals']}'>━ the run before the last "
           "change</span>" if c.ghost else "") + "</div>")


def live_figure(c: LiveChart, counters: str = "", fig: Figure | None = None) -> Figure:
    """The live chart on a matplotlib Figure (`fig` cleared and drawn on, else a new one): the
    marks of :func:`live_svg` — requests as ticks on a strip above (sent: admitted, rejected;
    served later by a shaper), the rolling count, the limiter's own count and the run before,
    against the dashed bound — with `counters` (a line of text) above and a cursor at
    ``c.now``."""
    t0, t1, limit = c.t0, c.t1, c.limit
    top = max(2.2 * limit, c.highest * 1.1, 1.0)
    with mpl.rc_context(COMPARE_RC):
        fig = fig if fig is not None else Figure(figsize=LIVE_FIGSIZE)
        fig.clear()
        strip, ax = fig.subplots(2, 1, sharex=True, height_ratios=[1, 4], gridspec_kw={
            "left": 0.1, "right": 0.97, "top": 0.76, "bottom": 0.13, "hspace": 0.12})
        for times, lo, kind in ((c.admitted, 0.0, "admitted"), (c.rejected, 0.0, "rejected"),
                                ([d for d in c.departures if d <= c.now], -1.0, "delayed")):
            shown = np.asarray(times, dtype=float)
            _ticks(strip, shown[(shown >= t0) & (shown <= t1)], lo, lo + 0.8, COLORS[kind])
        strip.set_ylim(-1.1, 0.9)
        strip.set_yticks([-0.6, 0.4], ["served", "sent"])
        strip.tick_params(axis="y", length=0)
        strip.tick_params(axis="x", labelbottom=False)
        strip.grid(False)
        strip.spines["left"].set_visible(False)
        lines = ((c.ghost, 1, {"color": COLORS["arrivals"], "alpha": 0.6, "lw": 2}),
                 (c.history, 1, {"color": COLORS["admitted"], "lw": 2.6, "alpha": 0.85}),
                 (c.history, 2, {"color": COLORS["estimate"], "lw": 1.4}))
        for rows, i, style in lines:
            if rows:  # this run's lines run on to now, as the panel's do
                now = [c.now] if rows is c.history else []
                ax.step([r[0] for r in rows] + now, [r[i] for r in rows] + [rows[-1][i]] * len(now),
                        where="post", **style)
        ax.axhline(limit, color=COLORS["limit"], ls="--", lw=1)
        ax.axvline(c.now, color=COLORS["state"], lw=1)
        ax.set_xlim(t0, t1)
        ax.set_ylim(0, top)
        ax.set_yticks([0, limit, 2 * limit], [num(0), num(limit), num(2 * limit)])
        ax.set_xlabel("virtual time (s)")
        ax.set_ylabel("requests")
        handles = [
            mpl.lines.Line2D([], [], color=COLORS["admitted"], lw=2.6,
                             label=f"admitted in the trailing {c.window_s:g} s"),
            mpl.lines.Line2D([], [], color=COLORS["estimate"], lw=1.4,
                             label="the limiter's own count"),
            mpl.lines.Line2D([], [], color=COLORS["limit"], ls="--", lw=1, label=c.bound_text),
            *(_tick_handle(COLORS[kind], label) for kind, label in
              (("admitted", "admitted"), ("rejected", "rejected"),
               ("delayed", "served later (shaped)"))),
        ]
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncols=3,
                   fontsize=10.5, handlelength=1.6, columnspacing=1.2)
        strip.set_title(counters, fontsize=11.5, fontweight="normal")
    return fig


def tick_step(span: float) -> float:
    """A round tick spacing that puts 4 to 10 ticks on `span` seconds."""
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600):
        if span / step <= 10:
            return float(step)
    return 10 ** math.ceil(math.log10(span / 10))


# ---------------------------------------------------------------- the comparison (matplotlib)

COMPARE_RC = {**STYLE, "font.size": 12, "axes.titlesize": 12, "axes.titleweight": "normal",
              "xtick.labelsize": 11.5, "ytick.labelsize": 11.5, "legend.fontsize": 11.5,
              "svg.fonttype": "none",
              "svg.hashsalt": "ratelab"}
"""The comparison chart's style: text of 11.5 pt and up, still 10 pt when a 700 px notebook
shrinks the 768 px chart; SVG text as <text>, ids salted so the same chart is the same SVG."""

Steps = tuple[np.ndarray, np.ndarray]
"""(t, count): a step line."""

COUNT_H = 0.5
"""How much of a lane (its height is 1) the served count's axis takes, from the lane's base."""


@dataclass(frozen=True)
class LaneChart:
    """One lane of the comparison chart: what one algorithm decided on the shared stream.

    arrived, allowed  the arrival times decided so far, and which were admitted.
    served            when a shaper served its admitted requests (None: it does not shape).
    rolling           the served count in the trailing window.
    """

    name: str
    title: str
    arrived: np.ndarray
    allowed: np.ndarray
    served: np.ndarray | None
    rolling: Steps


def lanes_figure(lanes: Sequence[LaneChart], ghosts: dict[str, Steps], *,
                 view: tuple[float, float], now: float, end_s: float, limit: int,
                 window_s: float, fig: Figure | None = None) -> Figure:
    """The lanes as a matplotlib Figure (not shown through pyplot); drawn on `fig`, cleared
    and resized, when one is given (an animation's frames).

    One Axes holds every lane, stacked: one x axis and one set of ticks to lay out, not one
    per lane, which is what keeps a frame cheap. In lane k (counted from the top) the count
    sits in [0, 0.5) above the lane's base (ticks at 0, the limit and twice the limit), the
    shaper's departures at 0.53-0.58, the arrivals at 0.60-0.67, the lane's title above them
    at 0.70, clear of the next lane's zero line at 1. `ghosts` are the served counts of
    the run before, by algorithm: faint lines, on the same scale. `now` draws a cursor unless
    the run is at its end (`end_s`).
    """
    t0, t1 = view
    w, n = window_s, len(lanes)
    peak = max([2.2 * limit] + [1.05 * float(y.max()) for _, y in
                                (lane.rolling for lane in lanes) if len(y)]
               + [1.05 * float(y.max()) for _, y in ghosts.values() if len(y)])
    with mpl.rc_context(COMPARE_RC):
        height = 1.3 + 1.05 * n
        if fig is None:
            fig = Figure(figsize=(8.0, height))
        else:
            fig.clear()
            fig.set_size_inches(8.0, height)
        ax = fig.add_axes((0.9 / 8.0, 0.62 / height, 1 - 1.2 / 8.0, 1 - 1.45 / height))
        yticks, ylabels = [], []
        for k, lane in enumerate(lanes):
            base = n - 1 - k

            def y(v, base=base):
                return base + COUNT_H * np.asarray(v, dtype=float) / peak

            arrived, allowed = lane.arrived, lane.allowed
            seen = (arrived >= t0) & (arrived <= t1)
            _ticks(ax, arrived[seen & allowed], base + 0.60, base + 0.67, COLORS["admitted"])
            _ticks(ax, arrived[seen & ~allowed], base + 0.60, base + 0.67, COLORS["rejected"])
            if lane.served is not None:
                served = lane.served[(lane.served >= t0) & (lane.served <= min(t1, now))]
                _ticks(ax, served, base + 0.53, base + 0.58, COLORS["delayed"])
            if lane.name in ghosts:
                gx, gy = ghosts[lane.name]
                ax.step(gx, y(gy), where="post", color=COLORS["arrivals"], alpha=0.7, lw=1.2)
            x, count = lane.rolling
            ax.step(x, y(count), where="post", color=COLORS["admitted"], lw=2,
                    gid=f"lane-{lane.name}")
            ax.plot([t0, t1], [y(limit)] * 2, color=COLORS["limit"], ls="--", lw=1)
            ax.axhline(base, color="#999", lw=0.8)
            ax.text(0.01, base + 0.70, lane.title, transform=ax.get_yaxis_transform(),
                    va="bottom", ha="left", gid=f"title-lane-{lane.name}")
            marks = [0, limit] + ([2 * limit] if 2 * limit <= peak else [])
            yticks += [float(y(v)) for v in marks]
            ylabels += [num(v) for v in marks]
        if t0 <= now <= t1 and now < end_s:
            ax.axvline(now, color=COLORS["state"], lw=1)
        ax.set_yticks(yticks, ylabels)
        ax.tick_params(axis="y", length=3)
        ax.grid(False)
        ax.set_xlim(t0, t1)
        ax.set_ylim(-0.05, n)
        ax.set_xlabel("time (s)", gid="x-label")
        ax.set_ylabel(f"requests served in the trailing {w:g} s", gid="y-label")
        handles = [
            mpl.lines.Line2D([], [], color=COLORS["admitted"], lw=2,
                             label=f"served in trailing {w:g} s"),
            mpl.lines.Line2D([], [], color=COLORS["limit"], ls="--", label=f"limit {limit}"),
            *(_tick_handle(COLORS[kind], label) for kind, label in
              (("admitted", "admitted"), ("rejected", "rejected"),
               ("delayed", "served later (shaped)"))),
        ]
        if ghosts:
            handles.append(mpl.lines.Line2D([], [], color=COLORS["arrivals"], alpha=0.7,
                                            label="the run before"))
        fig.legend(handles=handles, loc="upper center", ncols=3, bbox_to_anchor=(0.5, 1.0))
    return fig


def figure_svg(fig: Figure) -> str:
    """`fig` as inline SVG, scaled to the width it is given (at most its own size)."""
    buf = io.StringIO()
    with mpl.rc_context(COMPARE_RC):  # text as <text>, so it reads and scales as text
        fig.savefig(buf, format="svg")
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    width_pt = fig.get_figwidth() * 72
    return re.sub(r'<svg([^>]*?) width="[\d.]+pt" height="[\d.]+pt"',
                  lambda m: (f'<svg{m.group(1)} class="ratelab-compare-chart" width="100%" '
                             f'style="max-width:{width_pt * 4 / 3:.0f}px;height:auto"'),
                  text, count=1)


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """`fig` as a PNG of `dpi` dots per inch."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _tick_handle(color: str, label: str) -> mpl.lines.Line2D:
    """A legend entry for the vertical ticks of one colour."""
    return mpl.lines.Line2D([], [], color=color, marker="|", ls="", ms=10, mew=2, label=label)


def _ticks(ax, times: np.ndarray, lo: float, hi: float, color: str) -> None:
    """Vertical ticks at `times` from `lo` to `hi`, as ONE path (an SVG draws it in one go)."""
    if len(times) == 0:
        return
    x = np.repeat(times, 3)
    y = np.tile([lo, hi, np.nan], len(times))
    x[2::3] = np.nan
    ax.plot(x, y, color=color, lw=1, solid_capstyle="butt")
