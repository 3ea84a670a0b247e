"""The comparison panel: several algorithms on ONE seeded stream at one budget, side by side.

Every lane gets the same requests (:func:`preset_stream`, one of :data:`PRESETS`) at the same
budget (each limiter class's ``budget(limit, window_s)``); time is virtual, and a knob change
runs the same stream again to the same instant, keeping the run before as a faint line.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import html
import math
from typing import Any, Sequence

import ipywidgets as W
import numpy as np
import pandas as pd
from IPython.display import Image
from matplotlib.figure import Figure

from .. import datasets
from ..http import Policy, respond
from ..limiters import NAMES, REGISTRY, Decision, Limiter, make
from ..limiters.base import positive, whole
from ..metrics import max_in_window, rolling_count
from ..plot import COLORS
from ..traces import generators as gen
from .chart import LaneChart, figure_png, figure_svg, lanes_figure
from .clocks import Clock, frames_per_s
from .knobs import button, close_all, fit_layout, player, row_layout
from .panel import Panel
from .text import knob_change, num, val

PRESETS: dict[str, str] = {
    "gentle": "well-paced clients at half the budget (every gap 0.9 to 1.1 x 1 / rate)",
    "poisson": "random, independent arrivals (Poisson) at exactly the budget's rate",
    "on-off": "bursts at 3 x the rate, on 1 s and off 2 s on average: the budget in the long run",
    "flood": "a steady flood at 3 x the budget's rate, one request every 1 / (3 x rate) s",
    "burst": "gentle traffic at half the rate, and 3 x the window's limit in 0.2 s at t = 4 s",
    "boundary": "the limit in the last tenth of a window before the boundary near t = 4 s, and "
                "the limit again in the first tenth after it (buckets have no boundary: to "
                "them it is one burst of 2 x limit)",
    "trace": "the busiest minute of NASA-HTTP, 1 Aug 1995 (recorded; all clients as one key, "
             "whole-second timestamps)",
}
TRACE_DATASET = "nasa-1995-08-01"
EVENT_S = 4.0
"""When the burst and boundary presets strike (s into the run)."""

PLAY_INTERVAL_MS = 250
"""How often the comparison panel's play button asks for a frame: 4 a second, each
``frame_s`` (0.25 s) of virtual time on, so play runs at real time. A frame of all eight
lanes (step and SVG) takes about 95 ms of kernel time (``Compare(preset="burst")``'s
``measure_fps``: 10.6 a second on the 2-core machine); ticks faster than the kernel draws
would queue up. (It was 800 ms per 0.4 s: 1.25 frames a second,
at half speed.)"""

SHAPERS = tuple(name for name, cls in REGISTRY.items() if cls.can_shape)
"""The registry algorithms that can hold a request and serve it later instead of refusing it
(those whose class declares ``can_shape``)."""


def budget_params(name: str, limit: int, window_s: float, shape: bool = True) -> dict[str, Any]:
    """The parameters that give registry algorithm `name` a budget of `limit` per `window_s`."""
    return REGISTRY[name].budget(limit, window_s, shape)


@functools.lru_cache(maxsize=1)
def busiest_trace_minute() -> np.ndarray:
    """Arrival times (s from 0) of the busiest minute of the recorded NASA trace, all clients."""
    trace = datasets.load(TRACE_DATASET, progress=False, warn=False)
    peak = max_in_window(trace, 60.0)
    time = trace.time[(trace.time > peak.start_s) & (trace.time <= peak.end_s)]
    return time - peak.start_s


def event_boundary_s(window_s: float) -> float:
    """The window boundary the boundary preset strikes at: the one nearest EVENT_S (>= 1 W)."""
    return max(1, round(EVENT_S / window_s)) * window_s


def preset_stream(preset: str, limit: int, window_s: float, *, duration_s: float = 10.0,
                  seed: int = 0) -> np.ndarray:
    """The arrival times (s, sorted) of `preset` against a budget of `limit` per `window_s`.

    Seeded: the same arguments give the same stream. The trace preset is one recorded minute
    (its length is 60 s whatever `duration_s` says).
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    rate = whole("limit", limit) / positive("window_s", window_s)
    duration = positive("duration_s", duration_s)
    rng = np.random.default_rng(seed)
    if preset == "gentle":
        times = gen.gentle(rate / 2, duration, rng).time
    elif preset == "poisson":
        times = gen.poisson(rate, duration, rng).time
    elif preset == "on-off":
        times = gen.on_off(3 * rate, 1.0, 2.0, duration, rng).time
    elif preset == "flood":
        times = gen.flood(3 * rate, duration).time
    elif preset == "burst":
        times = np.concatenate([gen.gentle(rate / 2, duration, rng).time,
                                gen.burst(3 * limit, start_s=EVENT_S, spread_s=0.2).time])
    elif preset == "boundary":
        times = gen.boundary_attack(limit, window_s, boundary_s=event_boundary_s(window_s),
                                    spread_s=window_s / 10).time
    else:
        times = busiest_trace_minute()
    return np.sort(np.asarray(times, dtype=np.float64), kind="stable")


def _event_view(preset: str, window_s: float, end_s: float) -> tuple[float, float]:
    """The stretch of time a preset is about: its burst or boundary, zoomed; else the run."""
    if preset == "burst":
        return max(0.0, EVENT_S - window_s / 2), EVENT_S + 1.5 * window_s
    if preset == "boundary":
        boundary = event_boundary_s(window_s)
        return boundary - window_s, boundary + window_s
    return 0.0, end_s


@dataclasses.dataclass
class Lane:
    """One algorithm's run on the shared stream: its limiter and every decision so far."""

    name: str
    limiter: Limiter
    allowed: list[bool] = dataclasses.field(default_factory=list)
    delay: list[float] = dataclasses.field(default_factory=list)
    last: Decision | None = None
    last_t: float = 0.0

    def served(self, times: np.ndarray) -> np.ndarray:
        """When each admitted request was served (arrival + delay), in arrival order, on the
        stream `times` this lane decided (its first len(allowed) requests)."""
        allowed = np.asarray(self.allowed, dtype=bool)
        return times[:len(self.allowed)][allowed] + np.asarray(self.delay)[allowed]


class Compare(Panel):
    """Several algorithms on ONE seeded stream at one budget, in lanes that share a time axis.

    `algorithms` are registry names (default every one, HAProxy's rule included); the budget is `limit` requests per
    `window_s` for every one of them (each class's ``budget``); `preset` picks the traffic
    (:data:`PRESETS`), drawn from `seed`; `shape` lets the algorithms that can (SHAPERS)
    queue instead of refuse. Time is virtual: ``step(dt)`` and ``run()`` move it; nothing reads
    the wall clock. ``frame()`` is what the table shows, per algorithm. ``set(...)`` changes a
    knob: the same stream is run again to the same instant, and the run before stays on the
    chart as a faint grey line (and in ``previous``).
    """

    KEY = "client"
    ERRORS = (ValueError, OSError)  # OSError: the recorded trace cannot be read
    FIELDS = ("algorithms", "preset", "limit", "window_s", "shape", "seed", "duration_s")

    def __init__(self, algorithms: Sequence[str] = NAMES, *, preset: str = "burst",
                 limit: int = 10, window_s: float = 1.0, shape: bool = True, seed: int = 0,
                 duration_s: float = 10.0, frame_s: float = 0.25) -> None:
        self.settings: dict[str, Any] = {}
        self.previous: pd.DataFrame | None = None
        self._ghosts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.message = ""
        self.frames = 0
        self.frame_s = positive("frame_s", frame_s)
        self._building = False
        self._widget: W.Widget | None = None
        self._configure(dict(algorithms=tuple(algorithms), preset=preset, limit=limit,
                             window_s=window_s, shape=shape, seed=seed, duration_s=duration_s))
        self.view = _event_view(self.preset, self.window_s, self.end_s)

    # -- settings ------------------------------------------------------------------------

    algorithms = property(lambda self: self.settings["algorithms"])
    preset = property(lambda self: self.settings["preset"])
    limit = property(lambda self: self.settings["limit"])
    window_s = property(lambda self: self.settings["window_s"])

    @property
    def end_s(self) -> float:
        """Where the stream ends: the preset's duration (one minute for the trace)."""
        return 60.0 if self.preset == "trace" else float(self.settings["duration_s"])

    def _configure(self, settings: dict[str, Any]) -> None:
        """Check `settings`, build the stream and one fresh limiter per lane; t goes to 0."""
        algorithms = tuple(settings["algorithms"])
        if not algorithms:
            raise ValueError("algorithms must name at least one registry algorithm")
        for a in algorithms:
            if a not in REGISTRY:
                raise ValueError(f"algorithms: {a!r} is not one of {', '.join(NAMES)}")
        if len(set(algorithms)) != len(algorithms):
            raise ValueError(f"algorithms must not repeat a name, got {algorithms!r}")
        limit = whole("limit", settings["limit"])
        window_s = positive("window_s", settings["window_s"])
        seed = whole("seed", settings["seed"], minimum=0)
        times = preset_stream(settings["preset"], limit, window_s,
                              duration_s=settings["duration_s"], seed=seed)
        shape = bool(settings["shape"])
        lanes = [Lane(a, make(a, **REGISTRY[a].budget(limit, window_s, shape)))
                 for a in algorithms]
        self.settings = {**settings, "algorithms": algorithms, "limit": limit,
                         "window_s": window_s, "seed": seed, "shape": shape,
                         "duration_s": positive("duration_s", settings["duration_s"])}
        self.times = times
        self.lanes = lanes
        self.t = 0.0
        self._next = 0

    def set(self, **changes: Any) -> pd.DataFrame:
        """Change knobs (any of FIELDS), run the same stream again to the same instant.

        The run before is kept: ``previous`` (its frame) and a faint line per lane. Returns
        the new frame. Bad values raise ValueError naming the knob, and change nothing.
        """
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise ValueError(f"unknown knob {sorted(unknown)[0]!r}; choose from "
                             f"{', '.join(self.FIELDS)}")
        old_settings, old_lanes, old_t, old_times = (self.settings, self.lanes, self.t,
                                                     self.times)
        old_frame = self.frame()
        try:
            self._configure({**self.settings, **changes})
        except (ValueError, OSError):
            self.settings, self.lanes, self.t, self.times = (old_settings, old_lanes, old_t,
                                                             old_times)
            self._next = int(np.searchsorted(self.times, self.t, side="right"))
            raise
        self._ghosts = {lane.name: self._rolling(lane, old_times, old_t) for lane in old_lanes}
        self.previous = old_frame
        said = [knob_change(k, old_settings[k], self.settings[k]) for k in changes
                if old_settings[k] != self.settings[k]]
        if "preset" in changes or "window_s" in changes:
            self.view = _event_view(self.preset, self.window_s, self.end_s)
        self._advance(min(old_t, self.end_s))
        self.message = (f"{'; '.join(said) or 'nothing changed'}: the same seeded stream ran "
                        f"again to t = {self.t:g} s. Grey: the run before.")
        self.redraw()
        return self.frame()

    # -- time ------------------------------------------------------------------------------

    def step(self, dt: float) -> pd.DataFrame:
        """Move virtual time on by `dt` s (not past the end), deciding what arrives; the frame."""
        if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt >= 0):
            raise ValueError(f"dt must be a finite number of seconds >= 0, got {dt!r}")
        self._advance(min(self.t + dt, self.end_s))
        self.redraw()
        return self.frame()

    def run(self) -> pd.DataFrame:
        """Play the whole stream to its end; the frame."""
        return self.step(self.end_s - self.t)

    def rewind(self) -> None:
        """Back to t = 0 with fresh limiters (the same stream, the same settings)."""
        self._configure(self.settings)
        self.message = "back at t = 0: the same stream, fresh limiters"
        self.redraw()

    def _advance(self, until: float) -> None:
        times, i = self.times, self._next
        j = int(np.searchsorted(times, until, side="right"))
        for k in range(i, j):
            at = float(times[k])
            for lane in self.lanes:
                d = lane.limiter.allow(self.KEY, at)
                lane.allowed.append(d.allowed)
                lane.delay.append(d.delay if d.allowed else 0.0)
                lane.last, lane.last_t = d, at
        self._next = j
        self.t = max(self.t, until)

    # -- what it shows -----------------------------------------------------------------------

    def frame(self) -> pd.DataFrame:
        """Per algorithm: admitted, rejected, the most admitted in any trailing window, ...

        Columns: admitted, rejected; max_admitted_in_window — the most requests admitted in
        any trailing window_s (the boundary exploit as a number: a fixed window reaches
        2 x limit); max_served_in_window — the same counted when requests are served
        (arrival + delay: a shaper spreads them); p95_delay_s — the 95th percentile of the
        delay of admitted requests, for lanes that shape (NaN otherwise); last_status and
        last_headers — the HTTP response to the last decision (ratelab.http).
        """
        arrived = self.times[:self._next]
        rows = []
        for lane in self.lanes:
            allowed = np.asarray(lane.allowed, dtype=bool)
            served = np.sort(lane.served(self.times))
            delays = np.asarray(lane.delay)[allowed]
            if lane.last is None:
                status, headers = None, ""
            else:
                r = respond(lane.last, Policy.of(lane.limiter), now=lane.last_t)
                status = r.status
                headers = "; ".join(f"{k}: {v}" for k, v in r.headers.items())
            rows.append({
                "algorithm": lane.name,
                "admitted": int(allowed.sum()),
                "rejected": int((~allowed).sum()),
                "max_admitted_in_window": int(max_in_window(arrived, self.window_s,
                                                            allowed=allowed).count),
                "max_served_in_window": int(max_in_window(served, self.window_s).count),
                "p95_delay_s": (round(float(np.percentile(delays, 95)), 4)
                                if lane.limiter.shapes and len(delays) else math.nan),
                "last_status": status,
                "last_headers": headers,
            })
        return pd.DataFrame(rows).set_index("algorithm")

    def _rolling(self, lane: Lane, times: np.ndarray, until: float):
        """(t, count) steps of the served count in the trailing window, up to `until`."""
        served = np.sort(lane.served(times))
        served = served[served <= until]
        at = np.unique(np.concatenate([[0.0], served, served + self.window_s, [until]]))
        at = at[at <= until]
        return at, rolling_count(served, self.window_s, at=at).to_numpy()

    # -- drawing -------------------------------------------------------------------------------

    def figure(self, fig: Figure | None = None) -> Figure:
        """The lanes as a matplotlib Figure (not shown through pyplot): chart.lanes_figure;
        drawn on `fig` when given (an animation's frames)."""
        arrived = self.times[:self._next]
        lanes = [LaneChart(
            name=lane.name,
            title=f"{lane.name}  ({_params_text(lane.limiter.params)})",
            arrived=arrived, allowed=np.asarray(lane.allowed, dtype=bool),
            served=lane.served(self.times) if lane.limiter.shapes else None,
            rolling=self._rolling(lane, self.times, self.t)) for lane in self.lanes]
        return lanes_figure(lanes, self._ghosts, view=self.view, now=self.t, end_s=self.end_s,
                            limit=self.limit, window_s=self.window_s, fig=fig)

    def svg(self) -> str:
        """The chart as inline SVG, scaled to the width it is given (at most its own size)."""
        return figure_svg(self.figure())

    def png(self, dpi: int = 110) -> bytes:
        """The chart as a PNG (the snapshot a notebook keeps for readers without a kernel)."""
        return figure_png(self.figure(), dpi)

    def snapshot(self) -> Image:
        """The chart as an IPython Image: end a cell with it to keep a picture in the notebook."""
        return Image(self.png())

    def zoom(self, t0: float | None = None, t1: float | None = None) -> None:
        """Show [t0, t1] s; no arguments: the busiest trailing window of arrivals, with margins."""
        if t0 is None and t1 is None:
            if len(self.times) == 0:
                t0, t1 = 0.0, self.end_s
            else:
                peak = max_in_window(self.times, self.window_s)
                t0, t1 = peak.start_s - self.window_s, peak.end_s + 1.5 * self.window_s
        t0 = max(0.0, float(t0 if t0 is not None else self.view[0]))
        t1 = min(self.end_s, float(t1 if t1 is not None else self.view[1]))
        if not (math.isfinite(t0) and math.isfinite(t1) and t1 > t0):
            raise ValueError(f"zoom needs t0 < t1 within [0, {self.end_s:g}], got {t0!r}, {t1!r}")
        self.view = (t0, t1)
        self.redraw()

    # -- the widget ------------------------------------------------------------------------

    @property
    def widget(self) -> W.Widget:
        """The panel (built on first use, so a Compare used only from code makes no widgets)."""
        if self._widget is None:
            self._build_widgets()
            self.redraw()
        return self._widget

    def redraw(self) -> None:
        """Draw the chart, the table and the status line into the panel (if it is built)."""
        if self._widget is None:
            return
        self.frames += 1
        self._sync_controls()
        self.chart.value = self.svg()
        self.table.value = self._table_html()
        playing = "playing" if self.play.playing else "paused"
        where = (f"t = {num(round(self.t, 3))} s of {num(self.end_s)} s ({playing}); "
                 f"{self._next} of {len(self.times)} requests sent")
        note = f" — {html.escape(self.message)}" if self.message else ""
        self.status.value = f"<div class='ratelab-compare-status'>{where}{note}</div>"

    def _table_html(self) -> str:
        f = self.frame()
        prev = self.previous
        cols = [("admitted", "admitted"), ("rejected", "rejected"),
                ("max_admitted_in_window", f"most admitted in any {self.window_s:g} s"),
                ("max_served_in_window", f"most served in any {self.window_s:g} s"),
                ("p95_delay_s", "p95 delay (s)"), ("last_headers", "last response")]
        head = "".join(f"<th>{html.escape(h)}</th>" for _, h in cols)
        rows = []
        for name, row in f.iterrows():
            cells = []
            for c, _ in cols:
                v = row[c]
                if c == "last_headers":  # the status and the wait; the headers fold away
                    wait = _headers(v).get("Retry-After")
                    text = f"{row['last_status'] or '–'}" + (f", retry in {wait} s" * bool(wait))
                    cells.append(f"<td class='ratelab-headers'>{html.escape(text)}</td>")
                    continue
                shown = "–" if isinstance(v, float) and math.isnan(v) else num(v)
                was = ""
                if prev is not None and name in prev.index and c != "p95_delay_s":
                    pv = prev.loc[name, c]
                    if pv != v:
                        was = f" <span style='color:{COLORS['arrivals']}'>(was {num(pv)})</span>"
                cells.append(f"<td class='ratelab-{c.replace('_', '-')}'>{shown}{was}</td>")
            rows.append(f"<tr><th>{html.escape(name)}</th>{''.join(cells)}</tr>")
        headers = "".join(
            f"<tr><th>{html.escape(name)}</th><td style='text-align:left'>"
            + "<br>".join(html.escape(f"{k}: {v}") for k, v in _headers(h).items())
            + "</td></tr>" for name, h in f["last_headers"].items())
        return ("<table class='ratelab-compare-table' style='font-size:14px'>"
                f"<tr><th>algorithm</th>{head}</tr>{''.join(rows)}</table>"
                "<details style='font-size:13.5px'><summary>the headers of each last "
                "response</summary><table class='ratelab-compare-headers'>"
                f"{headers}</table></details>"
                "<div style='font-size:13.5px'>Same budget for every lane: "
                f"{self.limit} requests per {self.window_s:g} s (a long-run rate of "
                f"{num(self.limit / self.window_s)}/s). <i>Most admitted in any "
                f"{self.window_s:g} s</i> counts admitted requests in every trailing window "
                f"(t − {self.window_s:g}, t]; above {self.limit} the algorithm let a burst "
                "through (the fixed window's boundary exploit). <i>Served</i> counts them "
                "when they leave a shaper's queue. <i>Last response</i>: the status a server "
                "would send for the last request, and its Retry-After; its headers unfold "
                "above (ratelab.http).</div>")

    def _build_widgets(self) -> None:
        wrap, auto = row_layout(), fit_layout()
        self.algorithm_boxes = {
            n: W.ToggleButton(value=n in self.algorithms, description=n, layout=auto,
                              tooltip=f"show a lane for {n}")
            for n in NAMES}
        for n, b in self.algorithm_boxes.items():
            b.observe(self._on_control, names="value")
        # one button per preset in a row that wraps (a ToggleButtons group would not)
        self.preset_buttons = {
            name: W.ToggleButton(value=name == self.preset, description=name, tooltip=text,
                                 button_style="info", layout=auto)
            for name, text in PRESETS.items()}
        for b in self.preset_buttons.values():
            b.observe(self._on_preset, names="value")
        slider = {"style": {"description_width": "150px"}, "continuous_update": False}
        self.limit_slider = W.IntSlider(value=self.limit, min=1, max=40,
                                        description="limit per window", **slider,
                                        layout=_slider_layout())
        self.window_slider = W.FloatSlider(value=self.window_s, min=0.5, max=5.0, step=0.5,
                                           description="window (s)", **slider,
                                           readout_format=".1f", layout=_slider_layout())
        self.shape_box = W.Checkbox(value=self.settings["shape"], indent=False,
                                    description="shapers queue (leaky bucket, nginx delay)",
                                    layout=auto)
        self.seed_box = W.BoundedIntText(value=self.settings["seed"], min=0, max=10**6,
                                         description="seed", layout=W.Layout(width="150px"))
        for c in (self.limit_slider, self.window_slider, self.shape_box, self.seed_box):
            c.observe(self._on_control, names="value")
        self.play_button = W.ToggleButton(value=False, description="▶ play", layout=auto,
                                          tooltip=f"play: {self.frame_s:g} s of virtual time "
                                                  "per frame; press again to pause")
        self.play = player(self.play_button, PLAY_INTERVAL_MS, self._on_tick, self._on_playing)
        self.step_button = button(f"step {self.frame_s:g} s",
                                  lambda: self._safely(self.step, self.frame_s), auto,
                                  tooltip="move virtual time on by one frame")
        self.run_button = button("run to the end", lambda: self._safely(self.run), auto,
                                 tooltip="decide every remaining request now")
        self.rewind_button = button("back to t = 0", lambda: self._safely(self.rewind), auto,
                                    tooltip="the same stream again, fresh limiters")
        self.zoom_button = button("zoom to the busiest window", lambda: self._safely(self.zoom),
                                  auto, tooltip="show the busiest trailing window of arrivals")
        self.whole_button = button("whole run", lambda: self._safely(self.zoom, 0.0, self.end_s),
                                   auto, tooltip="show the run from 0 to its end")
        self.status = W.HTML(layout=W.Layout(width="100%"))
        self.chart = W.HTML(layout=W.Layout(width="100%"))
        self.table = W.HTML(layout=W.Layout(width="100%", overflow="auto"))
        help_text = W.HTML(
            "<div style='font-size:13.5px'>One seeded stream goes to every lane at once. "
            "Green ticks: admitted; red: rejected; amber: when a shaper serves a request it "
            "held back. The green line counts what was served in the trailing window against "
            "the limit (dashed). A knob change runs the same stream again to the same "
            "instant; the grey line is the run before.</div>")
        self._widget = W.VBox(
            [W.HBox(list(self.algorithm_boxes.values()), layout=wrap),
             W.HBox([W.HTML("<b style='font-size:14px'>traffic:</b>&nbsp;"),
                     *self.preset_buttons.values()], layout=wrap),
             W.HBox([self.limit_slider, self.window_slider, self.shape_box, self.seed_box],
                    layout=wrap),
             W.HBox([self.play_button, self.step_button, self.run_button, self.rewind_button,
                     self.zoom_button, self.whole_button, self.play], layout=wrap),
             self.status, self.chart, self.table, help_text],
            layout=W.Layout(border="1px solid #ddd", padding="6px", width="100%"))
        self._widget.add_class("ratelab-compare")

    def _sync_controls(self) -> None:
        """Set every control to what the panel runs (they never show a value it does not use)."""
        with self._quietly():
            for n, b in self.algorithm_boxes.items():
                b.value = n in self.algorithms
            for name, b in self.preset_buttons.items():
                b.value = name == self.preset
            self.limit_slider.value = self.limit
            self.window_slider.value = self.window_s
            self.shape_box.value = self.settings["shape"]
            self.seed_box.value = self.settings["seed"]

    def _on_control(self, change) -> None:
        if self._building:
            return
        chosen = tuple(n for n, b in self.algorithm_boxes.items() if b.value)
        self._safely(self.set, algorithms=chosen, limit=self.limit_slider.value,
                     window_s=self.window_slider.value, shape=self.shape_box.value,
                     seed=self.seed_box.value)

    def _on_preset(self, change) -> None:
        if self._building:
            return
        name = change["owner"].description
        if change["new"] and name != self.preset:
            self._safely(self._choose_preset, name)
        else:  # the pressed preset stays pressed: it is what runs
            self._sync_controls()

    def _choose_preset(self, preset: str) -> None:
        self.set(preset=preset)
        self.run()
        self.message = f"preset {preset}: {PRESETS[preset]}. Ran to the end."
        self.redraw()

    def _on_tick(self, change) -> None:
        if not self.play.playing:  # a tick that arrives after pause is not played
            return
        if self.t >= self.end_s:
            self.play.playing = False
            return
        self._safely(self.step, self.frame_s)

    def _on_playing(self, change) -> None:
        self.play_button.description = "❚❚ pause" if change["new"] else "▶ play"
        self.message = "playing"
        if change["new"] and self.t >= self.end_s:
            self._configure(self.settings)  # at the end, play starts the run again
        if change["new"] and not self.view[0] <= self.t < self.view[1]:
            # the view was zoomed elsewhere (a preset's event, then 'back to t = 0'): play
            # would draw nothing there until time reached it, so it shows the whole run
            self.message = (f"playing the whole run (the chart was on {num(self.view[0])}–"
                            f"{num(self.view[1])} s)")
            self.view = (0.0, self.end_s)
        if not change["new"]:
            self.message = (f"paused at t = {num(round(self.t, 3))} s: press play to go on, "
                            "'back to t = 0' to start again")
        self.redraw()

    def measure_fps(self, frames: int = 20, clock: Clock | None = None) -> float:
        """Frames per second of step + a full redraw, on a copy of this panel (a benchmark)."""
        probe = Compare(self.algorithms, **{k: v for k, v in self.settings.items()
                                            if k != "algorithms"}, frame_s=self.frame_s)
        probe.widget  # noqa: B018 -- build it: the redraw is what is timed
        try:
            return frames_per_s(lambda: probe.step(self.end_s / frames), frames, clock)
        finally:
            probe.close()

    def close(self) -> None:
        """Close the panel's widgets, if any were made."""
        if self._widget is not None:
            self.play.playing = False
            close_all(self._widget)
            self._widget = None

    def _repr_mimebundle_(self, **kwargs):
        """The live panel where widgets run, and a PNG of the chart for every other reader."""
        bundle, data = self._bundle(**kwargs)
        data["image/png"] = base64.b64encode(self.png()).decode("ascii")
        return bundle


def _headers(joined: str) -> dict[str, str]:
    """A frame's ``last_headers`` ("Name: value; Name: value") as a dict."""
    return dict(h.split(": ", 1) for h in joined.split("; ") if ": " in h)


def _slider_layout() -> W.Layout:
    return W.Layout(width="100%", max_width="460px", min_width="300px")


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} {val(v)}" for k, v in params.items()
                     if k != "count_rejected" and v is not None)  # haproxy's expire: None
