"""The live limiter: pick an algorithm, turn its knobs, throw traffic at it and watch.

:class:`LiveLimiter` is an ipywidgets panel over one reference limiter and one key. Time in it
is *virtual*: it moves only when the play button runs (each tick advances it by the real time
elapsed on the panel's clock, times the speed), when ``step(dt)`` is called, or when a button
plays a scenario (a flood, a boundary attack). Everything drawn comes from the limiter itself:
its internal state through ``inspect(key, now)``, its decisions through ``allow``.

    >>> live = LiveLimiter("fixed-window", limit=10, window=1.0)
    >>> live.flood()["accepted"]
    10

Drawn live: a gauge of the internal state (tokens, water, queue, window count, excess), the
accepted / rejected counters, and a chart of the last seconds: admitted (green ticks) and
rejected (red ticks) requests, the rolling count of what got through in the trailing window
(green line) against the limiter's own counter (purple) and the limit (dashed).

The same API the buttons use is there for code and tests: ``step(dt)``, ``flood()``,
``time_boundary()``, ``gentle(on)``, ``reset()``, ``state``. ``measure_fps()`` times the
redraw (a benchmark; nothing asserts on it).
"""

from __future__ import annotations

import bisect
import html
import math
from typing import Any, Iterable

import ipywidgets as W

from ..clock import to_ticks
from ..limiters import NAMES, REGISTRY, make
from ..limiters.base import positive, whole
from ..plot import COLORS
from .chart import LiveChart, live_svg
from .clocks import Clock, ManualClock, MonotonicClock, frames_per_s
from .knobs import (KNOBS, button, close_all, control, default_params, fit_layout, knob_names,
                    labelled, player, row_layout)
from .panel import Panel
from .reading import bound_name, gauge_style, reading_of
from .text import field_value, knob_change, num, val

PLAY_INTERVAL_MS = 40
"""How often the play button asks for a frame (25 a second)."""

NO_WINDOW_S = 1.0
"""The trailing window the rolling count uses for a limiter without a window (a bucket)."""

VIEWS = ("follow", "last burst", "whole run")
"""What the live chart shows: the last span_s seconds, the last flood or boundary train
zoomed in, or everything since t = 0."""


class LiveLimiter(Panel):
    """An ipywidgets panel driving one reference limiter in virtual time.

    `algorithm` is a registry name (``ratelab.limiters.NAMES``); `params` override the knobs'
    starting values. `clock` is what the play button reads real time from (inject a
    :class:`ManualClock` to drive it by hand). `span_s` is how many seconds of virtual time the
    chart shows while following; `speed` how many virtual seconds pass per real second while
    playing. Every request sent is kept: a knob or algorithm change replays them on the new
    limiter (virtual time stays where it is), and the chart can show the whole run.
    """

    KEY = "client"

    def __init__(self, algorithm: str = "token-bucket", *, clock: Clock | None = None,
                 span_s: float = 6.0, speed: float = 1.0, **params: Any) -> None:
        if algorithm not in REGISTRY:
            raise ValueError(f"algorithm must be one of {', '.join(NAMES)}, got {algorithm!r}")
        self.clock = clock or MonotonicClock()
        self.span_s = float(span_s)
        self.frames = 0
        self.message = ""
        self.view = "follow"
        self.burst_span: tuple[float, float] | None = None
        self._last_tick: float | None = None
        self._gentle = False
        self._building = False
        self._ghost: list[tuple[float, int, float]] = []
        self._arrivals: list[float] = []
        self._build_widgets(algorithm, speed)
        self._configure(algorithm, {**default_params(algorithm), **params})
        self.reset()

    # -- the programmatic API --------------------------------------------------------

    @property
    def state(self) -> dict[str, Any]:
        """Where the panel stands: virtual time, counters, rolling and own counts, inspect."""
        info = self.limiter.inspect(self.KEY, self.t)
        return {
            "algorithm": self.algorithm,
            "params": dict(self.limiter.params),
            "t": self.t,
            "arrivals": self.accepted + self.rejected,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "rolling": self.rolling_now(),
            "max_rolling": self.max_rolling,
            "own": self.reading.in_use(info),
            "max_own": self.max_own,
            "window_s": self.window_s,
            "limit": float(self.limiter.limit),
            "inspect": info,
            "frames": self.frames,
        }

    def step(self, dt: float) -> dict[str, Any]:
        """Advance virtual time by `dt` seconds (serving the gentle stream), redraw; the state."""
        if not (dt >= 0 and math.isfinite(dt)):
            raise ValueError(f"dt must be a finite number of seconds >= 0, got {dt!r}")
        self._advance(self.t + dt)
        self.redraw()
        return self.state

    def flood(self, n: int | None = None, spread_s: float = 0.2) -> dict[str, Any]:
        """Fire `n` requests (default 3 x the limit) over the next `spread_s` s; the state.

        The chart zooms in on the flood ("last burst"), so 0.2 s is not a sliver of 6 s.
        """
        n = int(3 * math.ceil(self.limiter.limit)) if n is None else int(n)
        start = self.t
        self._send(start + spread_s * i / n for i in range(n))
        self._advance(start + spread_s)
        self._zoom_on(start, start + spread_s, f"flood: {n} requests in {spread_s:g} s")
        return self.state

    def time_boundary(self, lead_s: float | None = None) -> dict[str, Any]:
        """The boundary exploit: `limit` requests just before a window boundary, `limit` after.

        Only for algorithms that count in windows (ValueError otherwise: a bucket has no
        boundary). The boundary is chosen so that the whole window before it lies ahead of
        now (nothing already sent counts against it); `lead_s` defaults to a tenth of the
        window. Against a fixed window all 2 x limit pass; the rolling count shows it.
        """
        if self.limiter.window_s is None:
            raise ValueError(f"{self.algorithm} has no window boundary to time: it refills "
                             "continuously (try flood)")
        w = self.window_s
        lead = w / 10 if lead_s is None else float(lead_s)
        limit = int(math.floor(self.limiter.limit))
        boundary = (math.floor(self.t / w) + 2) * w
        self._send(start + lead * k / limit  # `limit` before the boundary, `limit` after
                   for start in (boundary - lead, boundary) for k in range(limit))
        self._advance(boundary + lead)
        self._zoom_on(boundary - lead, boundary + lead,
                      f"boundary train: {limit} before t = {boundary:g} s, {limit} after")
        return self.state

    def gentle(self, on: bool = True) -> None:
        """Switch the gentle stream (half the sustained rate, evenly spaced) on or off."""
        self._gentle = bool(on)
        self._next_gentle = self.t if self._gentle else math.inf
        if self.gentle_button.value != self._gentle:
            self.gentle_button.value = self._gentle

    def show(self, view: str) -> None:
        """Choose what the chart shows: one of VIEWS."""
        if view not in VIEWS:
            raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
        if view == "last burst" and self.burst_span is None:
            raise ValueError("no burst yet: press flood or time the boundary first")
        self.view = view
        self.redraw()

    def reset(self) -> dict[str, Any]:
        """Forget the limiter's state, the requests sent and the counters; time goes back to 0."""
        self.limiter.reset()
        self._arrivals = []
        self._ghost = []
        self.burst_span = None
        self.view = "follow"
        self._restart()
        self.message = ""
        self.redraw()
        return self.state

    def tick(self) -> dict[str, Any]:
        """One play tick: advance by the clock's elapsed time since the last tick x speed."""
        now = self.clock.now()
        last = now if self._last_tick is None else self._last_tick
        self._last_tick = now
        dt = min(max(0.0, now - last), 0.5) * self.speed.value  # a stall is not a time jump
        return self.step(dt)

    def measure_fps(self, frames: int = 100, dt: float = 0.05, clock: Clock | None = None,
                    ) -> float:
        """Frames per second of ``step`` + redraw with the gentle stream on (a benchmark).

        Runs on a copy of this panel's settings so the panel itself is untouched; times with
        `clock` (default: the real monotonic clock). `frames` must be a whole number >= 1 and
        `dt` a positive number of seconds (ValueError naming them otherwise).
        """
        frames, dt = whole("frames", frames), positive("dt", dt)
        probe = LiveLimiter(self.algorithm, clock=ManualClock(), span_s=self.span_s,
                            **self.limiter.params)
        probe.gentle(True)
        try:
            return frames_per_s(lambda: probe.step(dt), frames, clock)
        finally:
            probe.close()

    def close(self) -> None:
        """Close the panel's widgets (a panel used only from code leaves nothing behind)."""
        self.play.playing = False
        close_all(self.widget)

    def rolling_now(self) -> int:
        """Admitted requests in the trailing window (t - W, t], in whole microseconds as the
        limiters count time."""
        cut = to_ticks(self.t) - to_ticks(self.window_s)
        return len(self._admitted) - bisect.bisect_right(self._admitted, cut, key=to_ticks)

    # -- the machinery ---------------------------------------------------------------

    def _restart(self) -> None:
        """Virtual time to 0 and empty counters (the limiter is fresh; arrivals are kept)."""
        self.t = 0.0
        self.accepted = self.rejected = 0
        self.max_rolling = 0
        self.max_own = 0.0
        self.last_delay = 0.0
        self._admitted: list[float] = []
        self._rejected_times: list[float] = []
        self._departures: list[float] = []
        self._history: list[tuple[float, int, float]] = []
        self._next_gentle = 0.0 if self._gentle else math.inf
        self._sample(self.t)

    def _configure(self, algorithm: str, params: dict[str, Any]) -> None:
        """Build the limiter (ValueError if the knobs disagree); set every control to it."""
        limiter = make(algorithm, **params)
        self.reading = reading_of(limiter)
        self.algorithm = algorithm
        self.limiter = limiter
        window_s = limiter.window_s
        self.window_s = NO_WINDOW_S if window_s is None else window_s
        with self._quietly():
            self.algorithm_box.value = algorithm
            if list(self.knobs) != [p for p in knob_names(algorithm) if p in KNOBS]:
                self._make_knobs(algorithm, params)  # a new algorithm: its own knobs
            for p, c in self.knobs.items():  # the controls show what runs, always
                c.value = limiter.params[p]
            boundary = window_s is not None
            self.boundary_button.disabled = not boundary
            self.boundary_button.tooltip = (
                "the limit just before a window boundary and the limit just after" if boundary
                else f"{algorithm} has no window boundary: it refills continuously")
            self.knob_help.value = self._knob_help()

    def _replay(self, what: str) -> None:
        """Run every request sent so far through the (new) limiter, back to the same instant."""
        until, arrivals, gentle = self.t, list(self._arrivals), self._next_gentle
        self._ghost = list(self._history)
        self.limiter.reset()
        self._restart()
        self._next_gentle = math.inf  # the gentle stream's requests are among the arrivals
        for at in arrivals:
            self._advance(at)
            self._request(at, record=False)
        self._advance(until)
        self._next_gentle = gentle
        self.message = (f"{what}: the {len(arrivals)} requests sent so far were replayed on "
                        f"the new limiter, up to t = {num(round(until, 3))} s. The grey line "
                        "is the run before.")

    def _advance(self, until: float) -> None:
        """Move virtual time to `until`, serving the gentle stream's arrivals on the way.

        The rolling count and the limiter's state are sampled on the way too — on a grid of
        span_s / 240 and at each instant an admitted request leaves the trailing window — so
        the chart shows them falling between requests, not only when the next one comes.
        """
        if until <= self.t:
            return
        res = self.span_s / 240
        marks = [self.t + res * k for k in range(1, int((until - self.t) / res) + 1)]
        first = bisect.bisect_right(self._admitted, self.t - self.window_s)
        marks += [a + self.window_s for a in self._admitted[first:]
                  if self.t < a + self.window_s < until]
        marks = sorted(m for m in marks if m < until) + [until]
        gap = 1.0 / (0.5 * self.limiter.rate_per_s) if self._gentle else math.inf
        for mark in marks:
            while self._next_gentle <= mark:
                self.t = max(self.t, self._next_gentle)
                self._request(self.t)
                self._next_gentle += gap
            self.t = max(self.t, mark)
            self._sample(self.t)

    def _send(self, times: Iterable[float]) -> None:
        """One request at each of `times` (ascending), virtual time moved on to each."""
        for at in times:
            self._advance(at)
            self._request(self.t)

    def _request(self, at: float, record: bool = True) -> None:
        if record:
            self._arrivals.append(at)
        d = self.limiter.allow(self.KEY, at)
        if d.allowed:
            self.accepted += 1
            self._admitted.append(at)
            self.last_delay = d.delay
            if d.delay > 0:  # a shaper holds it: it leaves at + delay (FIFO: in order)
                bisect.insort(self._departures, at + d.delay)
        else:
            self.rejected += 1
            self._rejected_times.append(at)
        self._sample(at)

    def _sample(self, at: float) -> None:
        rolling = self.rolling_now()
        own = self.reading.in_use(self.limiter.inspect(self.KEY, at))
        self.max_rolling = max(self.max_rolling, rolling)
        self.max_own = max(self.max_own, own)
        self._history.append((at, rolling, own))

    def _zoom_on(self, t0: float, t1: float, what: str) -> None:
        self.burst_span = (t0, t1)
        self.view = "last burst"
        self.message = (f"{what}; the chart zooms in on it ('follow' and 'whole run' "
                        "zoom out)")
        self.redraw()

    def _chart_range(self) -> tuple[float, float]:
        """The stretch of virtual time the chart shows, from the view."""
        if self.view == "whole run":
            return 0.0, max(self.t, self.span_s)
        if self.view == "last burst" and self.burst_span is not None:
            b0, b1 = self.burst_span
            pad = max(0.5 * self.window_s, 2 * (b1 - b0))
            return max(0.0, b0 - pad), b1 + pad + self.window_s
        t0 = max(0.0, self.t - self.span_s)  # follow: fills from the left, then scrolls
        return t0, t0 + self.span_s

    # -- widgets -----------------------------------------------------------------------

    def _build_widgets(self, algorithm: str, speed: float) -> None:
        wrap, fit = row_layout(), fit_layout()
        self.algorithm_box = W.Dropdown(options=NAMES, value=algorithm, description="algorithm",
                                        tooltip="the rate-limiting algorithm to drive",
                                        layout=W.Layout(width="auto", min_width="300px"))
        self.algorithm_box.observe(self._on_algorithm, names="value")
        self.knob_box = W.HBox(layout=wrap)
        self.knob_help = W.HTML(layout=W.Layout(width="100%"))
        self.knobs: dict[str, W.Widget] = {}
        self.gentle_button = W.ToggleButton(description="gentle stream", icon="tint", layout=fit,
                                            tooltip="half the sustained rate, evenly spaced")
        self.gentle_button.observe(lambda ch: self._safely(self.gentle, ch["new"]), names="value")
        self.flood_button = button("flood", lambda: self._safely(self.flood), fit, icon="bolt",
                                   button_style="danger", tooltip="3 x the limit in 0.2 s")
        self.boundary_button = button("time the boundary",
                                      lambda: self._safely(self.time_boundary), fit,
                                      icon="clock-o", button_style="warning")
        self.reset_button = button("reset", lambda: self._safely(self.reset), fit, icon="refresh",
                                   tooltip="forget everything: time back to 0")
        self.play_button = W.ToggleButton(description="play", icon="play", layout=fit,
                                          tooltip="run virtual time at `speed` x real time; "
                                                  "press again to pause")
        self.play = player(self.play_button, PLAY_INTERVAL_MS, self._on_play_value,
                           self._on_playing)
        self.speed = W.FloatSlider(value=speed, min=0.25, max=4.0, step=0.25,
                                   description="speed (x real time)",
                                   style={"description_width": "initial"},
                                   layout=W.Layout(width="auto", min_width="300px"))
        self.view_buttons = W.ToggleButtons(
            options=list(VIEWS), value="follow", description="chart",
            tooltips=[f"the last {self.span_s:g} s", "zoomed on the last flood or boundary "
                      "train", "everything since t = 0"],
            style={"button_width": "auto"}, layout=W.Layout(width="auto"))
        self.view_buttons.observe(self._on_view, names="value")
        self.gauge_bar = W.FloatProgress(min=0.0, max=1.0, bar_style="success",
                                         layout=W.Layout(width="260px"))
        self.gauge_label = W.HTML(layout=W.Layout(width="auto"))
        self.counters = W.HTML(layout=W.Layout(width="100%"))
        self.chart = W.HTML(layout=W.Layout(width="100%"))
        self.details = W.HTML(layout=W.Layout(width="100%"))
        self.widget = W.VBox(
            [W.HBox([self.algorithm_box, self.knob_box], layout=wrap),
             self.knob_help,
             W.HBox([self.gentle_button, self.flood_button, self.boundary_button,
                     self.reset_button, self.play_button, self.speed, self.play], layout=wrap),
             W.HBox([self.gauge_label, self.gauge_bar], layout=wrap),
             self.counters, self.view_buttons,
             self.chart, self.details],
            layout=W.Layout(border="1px solid #ddd", padding="6px", width="100%"))
        self.widget.add_class("ratelab-live")

    def _make_knobs(self, algorithm: str, params: dict[str, Any]) -> None:
        for c in self.knob_box.children:
            close_all(c)
        self.knobs = {}
        for p in knob_names(algorithm):
            if p not in KNOBS:
                continue
            c = control(p, params.get(p, KNOBS[p]["value"]))
            c.observe(self._on_knob, names="value")
            self.knobs[p] = c
        self.knob_box.children = tuple(labelled(p, c) for p, c in self.knobs.items())

    def _knob_help(self) -> str:
        lines = "".join(f"<li><b>{html.escape(KNOBS[p]['description'])}</b>: "
                        f"{html.escape(KNOBS[p]['help'])}</li>" for p in self.knobs)
        return (f"<ul class='ratelab-knob-help' style='font-size:14px;margin:2px 0'>{lines}"
                "</ul>")

    def _on_algorithm(self, change) -> None:
        if self._building:
            return
        old = self.algorithm
        new = change["new"]
        # the knobs the two algorithms share keep their values: the controls never lie
        shared = {p: c.value for p, c in self.knobs.items() if p in knob_names(new)}
        try:
            try:
                self._configure(new, {**default_params(new), **shared})
            except ValueError:
                self._configure(new, default_params(new))
            self._replay(f"algorithm {old} → {new}")
            self.redraw()
        except ValueError as e:  # an algorithm whose knobs the panel cannot set: say so
            self.message = str(e)
            with self._quietly():
                self.algorithm_box.value = self.algorithm
            self.redraw()

    def _on_knob(self, change) -> None:
        if self._building:
            return
        params = {p: c.value for p, c in self.knobs.items()}
        changed = next((p for p, c in self.knobs.items() if c is change["owner"]), "a knob")
        old = self.limiter.params
        try:
            self._configure(self.algorithm, params)
        except ValueError as e:  # e.g. nginx delay above burst: say so, keep the old limiter
            self._configure(self.algorithm, old)  # and put the control back where it was
            self.message = str(e)
            self.redraw()
            return
        self._replay(knob_change(changed, old[changed], change["new"]))
        self.redraw()

    def _on_play_value(self, change) -> None:
        if self.play.playing:  # a tick that arrives after pause is not played
            self._safely(self.tick)

    def _on_playing(self, change) -> None:
        self._last_tick = None  # a pause is not elapsed time
        self.play_button.description = "pause" if change["new"] else "play"
        self.play_button.icon = "pause" if change["new"] else "play"
        if change["new"]:
            self.view = "follow"
            self.message = "playing"
        else:
            self.message = (f"paused at t = {num(round(self.t, 2))} s: press play to go on, "
                            "reset to start over")
        self.redraw()

    def _on_view(self, change) -> None:
        if self._building:
            return
        self._safely(self.show, change["new"])

    def _repr_mimebundle_(self, **kwargs):
        """The live panel where widgets run; elsewhere (a web page, a notebook viewer) its
        counters and chart as HTML — or, while nothing has been sent, what the panel is: an
        empty chart at t = 0 and counters at 0 would show nothing."""
        bundle, data = self._bundle(**kwargs)
        if self._arrivals or self.t > 0:
            data["text/html"] = (f"<div class='ratelab-live-snapshot'>{self.gauge_label.value}"
                                 f"{self.counters.value}{self.chart.value}</div>")
        else:
            knobs = ", ".join(f"{p} {val(v)}" for p, v in self.limiter.params.items())
            data["text/html"] = (
                "<div class='ratelab-live-snapshot' style='font-size:14px'><b>The live "
                f"limiter</b> ({html.escape(self.algorithm)}: {html.escape(knobs)}), a panel "
                "that runs in a notebook with a kernel (JupyterLab): its buttons send a "
                "gentle stream, a flood or a train timed on a window boundary, and its chart "
                "and counters follow. Nothing has been sent to it yet. "
                "<code>ratelab.widgets.animate</code> records a run of it that plays "
                "without a kernel.</div>")
        return bundle

    # -- drawing -----------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw the current state into the widgets (one frame)."""
        self.frames += 1
        info = self.limiter.inspect(self.KEY, self.t)
        room, ceiling = self.reading.room(info)
        with self.gauge_bar.hold_sync():  # one message for all three
            self.gauge_bar.max = max(ceiling, 1e-9)
            self.gauge_bar.value = min(max(room, 0.0), self.gauge_bar.max)
            self.gauge_bar.bar_style = gauge_style(room, ceiling)
        self.gauge_label.value = (f"<span class='ratelab-gauge' style='font-size:14px'>"
                                  f"<b>{self.reading.gauge}</b> {num(room)} of {num(ceiling)} "
                                  "(the bar empties as the limiter nears refusing)</span>")
        self.counters.value = self._counters_html(info)
        with self._quietly():
            self.view_buttons.value = self.view
        self.chart.value = self._chart_svg()
        fields = " · ".join(f"{k} = {field_value(v)}" for k, v in info.items())
        note = (f"<div class='ratelab-message' style='font-size:14px'>"
                f"{html.escape(self.message)}</div>") if self.message else ""
        self.details.value = (f"{note}<div class='ratelab-inspect' "
                              f"style='font-family:monospace;font-size:13.5px'>"
                              f"inspect(key, {self.t:.3f}): {html.escape(fields)}</div>")

    def _counters_html(self, info: dict[str, Any]) -> str:
        def cell(name: str, value: Any, color: str, title: str) -> str:
            return (f"<span title='{html.escape(title)}' style='margin-right:14px;"
                    f"color:{color};white-space:nowrap'>{name} "
                    f"<b class='ratelab-{name.replace(' ', '-')}'>{value}</b></span>")

        own = self.reading.in_use(info)
        own_name, own_help = self.reading.label, self.reading.explanation
        w = f"{self.window_s:g} s"
        return ("<div class='ratelab-counters' style='font-size:14px;display:flex;"
                "flex-wrap:wrap'>"
                + cell("t", f"{num(round(self.t, 2))} s", COLORS["limit"], "virtual time")
                + cell("accepted", self.accepted, COLORS["admitted"], "requests admitted")
                + cell("rejected", self.rejected, COLORS["rejected"], "requests refused")
                + cell("rolling", self.rolling_now(), COLORS["admitted"],
                       f"admitted in the trailing {w} (t − {w}, t]")
                + cell("max rolling", self.max_rolling, COLORS["admitted"],
                       f"the most admitted in any trailing {w} so far")
                + cell("own", num(own), COLORS["estimate"], f"{own_name}: {own_help}")
                + cell("max own", num(self.max_own), COLORS["estimate"],
                       f"the largest {own_name} so far")
                + "</div>"
                f"<div style='font-size:14px;color:{COLORS['estimate']}'>own = {own_name}: "
                f"{html.escape(own_help)}. Rolling = what really got through in the trailing "
                f"{w}.</div>")

    def chart_at(self, at: float | None = None,
                 view: tuple[float, float] | None = None) -> LiveChart:
        """What the chart shows (a :class:`~ratelab.widgets.chart.LiveChart`): the run as it
        stood at virtual time `at` (default: now; at most now), over `view` (default: the
        panel's view). Nothing after `at` is in it, so the charts of a run at successive
        instants are its frames (``ratelab.widgets.animate``)."""
        at = self.t if at is None else min(float(at), self.t)
        t0, t1 = self._chart_range() if view is None else view

        def until(times: list[float]) -> list[float]:
            return times[:bisect.bisect_right(times, at)]

        history = self._history[:bisect.bisect_right(self._history, (at, math.inf, math.inf))]
        highest = (max(self.max_rolling, self.max_own) if at >= self.t
                   else max((max(r, o) for _, r, o in history), default=0.0))
        return LiveChart(
            t0=t0, t1=t1, now=at, limit=float(self.limiter.limit), window_s=self.window_s,
            highest=highest, admitted=until(self._admitted), rejected=until(self._rejected_times),
            departures=until(self._departures), history=history, ghost=self._ghost,
            bound=bound_name(self.limiter))

    def counters_line(self, at: float | None = None) -> str:
        """The counters at virtual time `at` (default now) as one line of text."""
        c = self.chart_at(at)
        rolling = [r for _, r, _ in c.history] or [0]
        return (f"t = {c.now:.2f} s   accepted {len(c.admitted)}   rejected {len(c.rejected)}"
                f"   rolling {rolling[-1]}   max rolling {max(rolling)}")

    def _chart_svg(self) -> str:
        """The chart of the view (chart.live_svg), with its legend."""
        return live_svg(self.chart_at())


# ---------------------------------------------------------------- ratelab fps


def measure_all_fps(frames: int = 200, dt: float = 0.05) -> dict:
    """Per registry algorithm, the frames per second of step + redraw: a record.

    Keys: ``frames``, ``dt_s`` and ``results``, one ``{"algorithm", "frames_per_s"}`` per
    algorithm (``ratelab fps``; real time, so the figures vary run to run).
    """
    frames, dt = whole("frames", frames), positive("dt", dt)
    return {"frames": frames, "dt_s": dt, "results": [
        {"algorithm": name, "frames_per_s": LiveLimiter(name).measure_fps(frames=frames, dt=dt)}
        for name in NAMES]}
