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

import html
import inspect as pyinspect
import math
import time
from collections import deque
from typing import Any, Protocol

import ipywidgets as W

from .limiters import NAMES, REGISTRY, Limiter, make
from .plot import COLORS

# ---------------------------------------------------------------- clocks


class Clock(Protocol):
    """Anything with ``now()`` in seconds: the play loop reads real time only through it."""

    def now(self) -> float: ...


class MonotonicClock:
    """The real, monotonic clock (``time.monotonic``)."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told to: ``advance(dt)``. For tests and replays."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = float(t)

    def now(self) -> float:
        return self.t

    def advance(self, dt: float) -> float:
        """Move the clock `dt` seconds on; returns the new time."""
        self.t += dt
        return self.t


# ---------------------------------------------------------------- knobs

# One control per parameter name; every registry algorithm's parameters must be here
# (tests/test_widgets.py checks it against ratelab.limiters.NAMES).
KNOBS: dict[str, dict[str, Any]] = {
    "rate": {"kind": "float", "min": 0.5, "max": 50.0, "step": 0.5, "value": 5.0,
             "description": "rate /s"},
    "capacity": {"kind": "int", "min": 1, "max": 100, "value": 10, "description": "capacity"},
    "limit": {"kind": "int", "min": 1, "max": 100, "value": 10, "description": "limit"},
    "window": {"kind": "float", "min": 0.5, "max": 10.0, "step": 0.5, "value": 1.0,
               "description": "window s"},
    "burst": {"kind": "int", "min": 0, "max": 50, "value": 5, "description": "burst"},
    "delay": {"kind": "int", "min": 0, "max": 50, "value": 0, "description": "delay=N"},
    "mode": {"kind": "choice", "options": ("police", "shape"), "value": "police",
             "description": "mode"},
    "count_rejected": {"kind": "bool", "value": False, "description": "count rejected"},
    "nodelay": {"kind": "bool", "value": False, "description": "nodelay"},
}


def knob_names(name: str) -> list[str]:
    """The constructor parameters of registry algorithm `name`, in order."""
    sig = pyinspect.signature(REGISTRY[name].__init__)
    return [p for p in sig.parameters if p != "self"]


def default_params(name: str) -> dict[str, Any]:
    """The knob settings the panel starts `name` with."""
    return {p: KNOBS[p]["value"] for p in knob_names(name) if p in KNOBS}


def _control(param: str, value: Any) -> W.Widget:
    spec = KNOBS[param]
    style = {"description_width": "initial"}
    if spec["kind"] in ("float", "int"):
        common = {"description": spec["description"], "style": style,
                  "layout": W.Layout(width="220px"), "continuous_update": False}
    if spec["kind"] == "float":
        return W.FloatSlider(value=float(value), min=spec["min"], max=spec["max"],
                             step=spec["step"], **common)
    if spec["kind"] == "int":
        return W.IntSlider(value=int(value), min=spec["min"], max=spec["max"], **common)
    if spec["kind"] == "choice":
        return W.Dropdown(value=value, options=spec["options"], description=spec["description"],
                          style=style, layout=W.Layout(width="180px"))
    return W.Checkbox(value=bool(value), description=spec["description"], indent=False,
                      layout=W.Layout(width="140px"))


# ---------------------------------------------------------------- reading a limiter


# How much of the allowance is in use, from the field a limiter reports (``Limiter.reports``):
# a token bucket has spent capacity - tokens, GCRA limit - available; the rest count up.
IN_USE = {"tokens": lambda info: float(info["capacity"]) - float(info["tokens"]),
          "available": lambda info: float(info["limit"]) - float(info["available"])}
GAUGE_LABELS = {"level": "water", "count": "window count"}


def own_count(info: dict[str, Any], limiter: Limiter | None = None) -> float | None:
    """The limiter's own idea of how much of its allowance is in use, from ``inspect``.

    Window counters report their count (the sliding counter its estimate); a token bucket the
    tokens spent (capacity - tokens); a leaky bucket its water or queue; GCRA how far its TAT
    is ahead, in requests; nginx its excess. With `limiter`, the field is the one it declares
    (``limiter.reports``); without, it is found among the fields `info` has.
    """
    field = limiter.reports[0] if limiter is not None else ""
    if field in info:
        return IN_USE.get(field, lambda i: float(i[field]))(info)
    if "estimate" in info:
        return float(info["estimate"])
    if "count" in info:
        return float(info["count"])
    if "tokens" in info:
        return float(info["capacity"]) - float(info["tokens"])
    for field in ("level", "queue", "excess"):
        if field in info:
            return float(info[field])
    if "available" in info:
        return float(info["limit"]) - float(info["available"])
    return None


def gauge(info: dict[str, Any], limiter: Limiter) -> tuple[str, float, float]:
    """(label, value, ceiling) of the state worth watching: the field the limiter reports
    (tokens, water, queue, count ...)."""
    field = limiter.reports[0]
    if field in info:
        ceiling = (max(1.0, float(info["burst"])) if field == "excess" else
                   float(info.get("capacity", info.get("limit", limiter.limit))))
        return GAUGE_LABELS.get(field, field), float(info[field]), ceiling
    if "tokens" in info:
        return "tokens", float(info["tokens"]), float(info["capacity"])
    if "level" in info:
        return "water", float(info["level"]), float(info["capacity"])
    if "queue" in info:
        return "queue", float(info["queue"]), float(info["capacity"])
    if "estimate" in info:
        return "estimate", float(info["estimate"]), float(info["limit"])
    if "count" in info:
        return "window count", float(info["count"]), float(info["limit"])
    if "available" in info:
        return "available", float(info["available"]), float(info["limit"])
    if "excess" in info:
        return "excess", float(info["excess"]), max(1.0, float(info["burst"]))
    return "state", 0.0, float(limiter.limit)


def rolling_window(limiter: Limiter) -> float:
    """The trailing window the rolling count uses: the limiter's window, else one second."""
    return float(getattr(limiter, "window", 1.0))


def sustained_rate(limiter: Limiter) -> float:
    """Requests per second the limiter lets through in the long run."""
    if hasattr(limiter, "rate"):
        return float(limiter.rate)
    return float(limiter.limit) / rolling_window(limiter)


# ---------------------------------------------------------------- the panel


class LiveLimiter:
    """An ipywidgets panel driving one reference limiter in virtual time.

    `algorithm` is a registry name (``ratelab.limiters.NAMES``); `params` override the knobs'
    starting values. `clock` is what the play button reads real time from (inject a
    :class:`ManualClock` to drive it by hand). `span_s` is how many seconds of virtual time the
    chart shows; `speed` how many virtual seconds pass per real second while playing.
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
        self._last_tick: float | None = None
        self._gentle = False
        self._building = False
        self._build_widgets(algorithm, speed)
        self._configure(algorithm, {**default_params(algorithm), **params})
        self.redraw()

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
            "own": own_count(info, self.limiter),
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
        """Fire `n` requests (default 3 x the limit) over the next `spread_s` s; the state."""
        n = int(3 * math.ceil(self.limiter.limit)) if n is None else int(n)
        start = self.t
        for i in range(n):
            self._advance(start + spread_s * i / n)
            self._request(self.t)
        self._advance(start + spread_s)
        self.redraw()
        return self.state

    def time_boundary(self, lead_s: float | None = None) -> dict[str, Any]:
        """The boundary exploit: `limit` requests just before a window boundary, `limit` after.

        The boundary is chosen so that the whole window before it lies ahead of now (nothing
        already sent counts against it); `lead_s` defaults to a tenth of the window. Against a
        fixed window all 2 x limit pass; the rolling count shows it. Returns the state.
        """
        w = self.window_s
        lead = w / 10 if lead_s is None else float(lead_s)
        limit = int(math.floor(self.limiter.limit))
        boundary = (math.floor(self.t / w) + 2) * w
        for k in range(limit):
            self._advance(boundary - lead + lead * k / limit)
            self._request(self.t)
        for k in range(limit):
            self._advance(boundary + lead * k / limit)
            self._request(self.t)
        self._advance(boundary + lead)
        self.redraw()
        return self.state

    def gentle(self, on: bool = True) -> None:
        """Switch the gentle stream (half the sustained rate, evenly spaced) on or off."""
        self._gentle = bool(on)
        self._next_gentle = self.t if self._gentle else math.inf
        if self.gentle_button.value != self._gentle:
            self.gentle_button.value = self._gentle

    def reset(self) -> dict[str, Any]:
        """Forget the limiter's state and the counters; virtual time goes back to 0."""
        self.limiter.reset()
        self.t = 0.0
        self.accepted = self.rejected = 0
        self.max_rolling = 0
        self.max_own = 0.0
        self.last_delay = 0.0
        self._admitted: deque[float] = deque()
        self._rejected_times: deque[float] = deque()
        self._history: deque[tuple[float, int, float]] = deque()
        self._next_gentle = 0.0 if self._gentle else math.inf
        self._sample(self.t)
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
        `clock` (default: the real monotonic clock).
        """
        clock = clock or MonotonicClock()
        probe = LiveLimiter(self.algorithm, clock=ManualClock(), span_s=self.span_s,
                            **self.limiter.params)
        probe.gentle(True)
        try:
            start = clock.now()
            for _ in range(frames):
                probe.step(dt)
            elapsed = clock.now() - start
        finally:
            probe.close()
        return frames / elapsed if elapsed > 0 else math.inf

    def close(self) -> None:
        """Close the panel's widgets (a panel used only from code leaves nothing behind)."""
        self.play.playing = False
        _close_all(self.widget)

    def rolling_now(self) -> int:
        """Admitted requests in the trailing window (t - W, t]."""
        self._trim(self.t)
        return sum(1 for a in self._admitted if a > self.t - self.window_s)

    # -- the machinery ---------------------------------------------------------------

    def _configure(self, algorithm: str, params: dict[str, Any]) -> None:
        """Build the limiter (ValueError if the knobs disagree) and reset the counters."""
        limiter = make(algorithm, **params)
        self.algorithm = algorithm
        self.limiter = limiter
        self.window_s = rolling_window(limiter)
        self._building = True
        try:
            self.algorithm_box.value = algorithm
            if set(self.knobs) != {p for p in knob_names(algorithm) if p in KNOBS}:
                self._make_knobs(algorithm, params)  # a new algorithm: its own knobs
        finally:
            self._building = False
        self.reset()

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
        marks += [a + self.window_s for a in self._admitted if self.t < a + self.window_s < until]
        marks = sorted(m for m in marks if m < until) + [until]
        gap = 1.0 / (0.5 * sustained_rate(self.limiter)) if self._gentle else math.inf
        for mark in marks:
            while self._next_gentle <= mark:
                self.t = max(self.t, self._next_gentle)
                self._request(self.t)
                self._next_gentle += gap
            self.t = max(self.t, mark)
            self._sample(self.t)

    def _request(self, at: float) -> None:
        d = self.limiter.allow(self.KEY, at)
        if d.allowed:
            self.accepted += 1
            self._admitted.append(at)
            self.last_delay = d.delay
        else:
            self.rejected += 1
            self._rejected_times.append(at)
        self._sample(at)

    def _sample(self, at: float) -> None:
        rolling = self.rolling_now()
        own = own_count(self.limiter.inspect(self.KEY, at), self.limiter) or 0.0
        self.max_rolling = max(self.max_rolling, rolling)
        self.max_own = max(self.max_own, own)
        self._history.append((at, rolling, own))

    def _trim(self, now: float) -> None:
        horizon = now - max(self.span_s, self.window_s)
        for q in (self._admitted, self._rejected_times):
            while q and q[0] <= horizon:
                q.popleft()
        while len(self._history) > 1 and self._history[1][0] <= now - self.span_s:
            self._history.popleft()

    # -- widgets -----------------------------------------------------------------------

    def _build_widgets(self, algorithm: str, speed: float) -> None:
        self.algorithm_box = W.Dropdown(options=NAMES, value=algorithm, description="algorithm",
                                        layout=W.Layout(width="280px"))
        self.algorithm_box.observe(self._on_algorithm, names="value")
        self.knob_box = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.knobs: dict[str, W.Widget] = {}
        auto = W.Layout(width="auto")
        self.gentle_button = W.ToggleButton(description="gentle stream", icon="tint", layout=auto,
                                            tooltip="half the sustained rate, evenly spaced")
        self.gentle_button.observe(lambda ch: self._safely(self.gentle, ch["new"]), names="value")
        self.flood_button = W.Button(description="flood", icon="bolt", button_style="danger",
                                     layout=auto,
                                     tooltip="3 x the limit in 0.2 s")
        self.flood_button.on_click(lambda _: self._safely(self.flood))
        self.boundary_button = W.Button(description="time the boundary", icon="clock-o",
                                        button_style="warning", layout=auto,
                                        tooltip="limit just before a window boundary, limit after")
        self.boundary_button.on_click(lambda _: self._safely(self.time_boundary))
        self.reset_button = W.Button(description="reset", icon="refresh", layout=auto)
        self.reset_button.on_click(lambda _: self._safely(self.reset))
        self.play = W.Play(interval=40, max=10**9, description="play", show_repeat=False)
        self.play.observe(lambda _: self._safely(self.tick), names="value")
        self.play.observe(self._on_playing, names="playing")
        self.speed = W.FloatSlider(value=speed, min=0.25, max=4.0, step=0.25,
                                   description="speed x", layout=W.Layout(width="220px"))
        self.gauge_bar = W.FloatProgress(min=0.0, max=1.0, bar_style="info",
                                         layout=W.Layout(width="260px"))
        self.gauge_label = W.HTML(layout=W.Layout(width="220px"))
        self.counters = W.HTML()
        self.chart = W.HTML()
        self.details = W.HTML()
        self.widget = W.VBox(
            [W.HBox([self.algorithm_box, self.knob_box]),
             W.HBox([self.gentle_button, self.flood_button, self.boundary_button,
                     self.reset_button, self.play, self.speed]),
             W.HBox([self.gauge_label, self.gauge_bar]),
             self.counters,
             self.chart, self.details],
            layout=W.Layout(border="1px solid #ddd", padding="6px"))
        self.widget.add_class("ratelab-live")

    def _make_knobs(self, algorithm: str, params: dict[str, Any]) -> None:
        for control in self.knobs.values():
            _close_all(control)
        self.knobs = {}
        for p in knob_names(algorithm):
            if p not in KNOBS:
                continue
            c = _control(p, params.get(p, KNOBS[p]["value"]))
            c.observe(self._on_knob, names="value")
            self.knobs[p] = c
        self.knob_box.children = tuple(self.knobs.values())

    def _on_algorithm(self, change) -> None:
        if self._building:
            return
        try:
            self._configure(change["new"], default_params(change["new"]))
            self.message = ""
        except ValueError as e:  # an algorithm whose knobs the panel cannot set: say so
            self.message = str(e)
            self._building = True
            try:
                self.algorithm_box.value = self.algorithm
            finally:
                self._building = False
            self.redraw()

    def _on_knob(self, change) -> None:
        if self._building:
            return
        params = {p: c.value for p, c in self.knobs.items()}
        try:
            self._configure(self.algorithm, params)
        except ValueError as e:  # e.g. nginx delay above burst: say so, keep the old limiter
            self.message = str(e)
            self.redraw()

    def _on_playing(self, change) -> None:
        self._last_tick = None  # a pause is not elapsed time

    def _safely(self, action, *args) -> None:
        try:
            self.message = ""
            action(*args)
        except ValueError as e:
            self.message = str(e)
            self.redraw()

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # -- drawing -----------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw the current state into the widgets (one frame)."""
        self.frames += 1
        self._trim(self.t)
        info = self.limiter.inspect(self.KEY, self.t)
        label, value, ceiling = gauge(info, self.limiter)
        with self.gauge_bar.hold_sync():  # one message for both
            self.gauge_bar.max = max(ceiling, 1e-9)
            self.gauge_bar.value = min(max(value, 0.0), self.gauge_bar.max)
        self.gauge_label.value = (f"<span class='ratelab-gauge'><b>{label}</b> "
                                  f"{value:.2f} / {ceiling:g}</span>")
        self.counters.value = self._counters_html()
        self.chart.value = self._chart_svg()
        fields = " · ".join(f"{k} = {_fmt(v)}" for k, v in info.items())
        note = (f"<div class='ratelab-message' style='color:{COLORS['rejected']}'>"
                f"{html.escape(self.message)}</div>") if self.message else ""
        self.details.value = (f"<div class='ratelab-inspect' style='font-family:monospace'>"
                              f"inspect(key, {self.t:.3f}): {html.escape(fields)}</div>{note}")

    def _counters_html(self) -> str:
        def cell(name: str, value: Any, color: str) -> str:
            return (f"<span style='margin-left:14px;color:{color}'>{name} "
                    f"<b class='ratelab-{name.replace(' ', '-')}'>{value}</b></span>")

        own = own_count(self.limiter.inspect(self.KEY, self.t), self.limiter) or 0.0
        return ("<span class='ratelab-counters'>"
                + cell("t", f"{self.t:.2f}", COLORS["limit"])
                + cell("accepted", self.accepted, COLORS["admitted"])
                + cell("rejected", self.rejected, COLORS["rejected"])
                + cell("rolling", self.rolling_now(), COLORS["admitted"])
                + cell("max rolling", self.max_rolling, COLORS["admitted"])
                + cell("own", f"{own:.2f}", COLORS["estimate"])
                + cell("max own", f"{self.max_own:.2f}", COLORS["estimate"])
                + "</span>")

    def _chart_svg(self, width: int = 640, height: int = 180) -> str:
        """The last `span_s` seconds as an inline SVG: ticks, rolling count, own counter, limit."""
        t0 = max(0.0, self.t - self.span_s)  # the chart fills from the left, then scrolls
        t1 = t0 + self.span_s
        limit = float(self.limiter.limit)
        top = max(2.2 * limit, self.max_rolling * 1.1, self.max_own * 1.1, 1.0)
        pad_l, pad_b, ticks = 34, 18, 14
        plot_h = height - pad_b - ticks

        def x(t: float) -> float:
            return pad_l + (t - t0) / self.span_s * (width - pad_l - 4)

        def y(v: float) -> float:
            return ticks + plot_h * (1 - v / top)

        def step_path(i: int) -> str:
            pts: list[tuple[float, float]] = []
            prev = None
            for h in self._history:
                if h[0] < t0:
                    prev = h
                    continue
                if prev is not None:
                    if not pts:
                        pts.append((t0, prev[i]))
                    pts.append((h[0], prev[i]))  # flat until the value changes
                pts.append((h[0], h[i]))
                prev = h
            if prev is not None:
                pts.append((self.t, prev[i]))
            return " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)

        marks = "".join(
            f"<line x1='{x(a):.1f}' x2='{x(a):.1f}' y1='0' y2='{ticks - 3}' "
            f"stroke='{COLORS['admitted']}'/>" for a in self._admitted if a >= t0)
        marks += "".join(
            f"<line x1='{x(r):.1f}' x2='{x(r):.1f}' y1='0' y2='{ticks - 3}' "
            f"stroke='{COLORS['rejected']}'/>" for r in self._rejected_times if r >= t0)
        axis = "".join(
            f"<text x='{pad_l - 4}' y='{y(v) + 3:.1f}' font-size='9' text-anchor='end'>{v:g}</text>"
            for v in (0, limit, 2 * limit))
        xt = "".join(
            f"<text x='{x(s):.1f}' y='{height - 4}' font-size='9' text-anchor='middle'>{s:g}</text>"
            for s in range(math.ceil(t0), math.floor(t1) + 1))
        return (
            f"<svg class='ratelab-chart' width='{width}' height='{height}' "
            f"xmlns='http://www.w3.org/2000/svg' style='background:#fff'>"
            f"{marks}{axis}{xt}"
            f"<line x1='{pad_l}' x2='{width - 4}' y1='{y(limit):.1f}' y2='{y(limit):.1f}' "
            f"stroke='{COLORS['limit']}' stroke-dasharray='5,4'/>"
            f"<polyline fill='none' stroke='{COLORS['admitted']}' stroke-width='3' "
            f"stroke-opacity='0.8' points='{step_path(1)}'/>"
            f"<polyline fill='none' stroke='{COLORS['estimate']}' stroke-width='1.5' "
            f"points='{step_path(2)}'/>"
            f"<text x='{pad_l + 4}' y='{ticks + 10}' font-size='10' fill='{COLORS['admitted']}'>"
            f"admitted in the trailing {self.window_s:g} s</text>"
            f"<text x='{pad_l + 4}' y='{ticks + 22}' font-size='10' fill='{COLORS['estimate']}'>"
            f"the limiter's own counter</text>"
            f"<text x='{width - 8}' y='{ticks + 10}' font-size='10' text-anchor='end'>"
            f"ticks: <tspan fill='{COLORS['admitted']}'>admitted</tspan> "
            f"<tspan fill='{COLORS['rejected']}'>rejected</tspan></text>"
            f"<text x='{pad_l + 4}' y='{y(limit) - 3:.1f}' font-size='10'>"
            f"limit {limit:g}</text></svg>")


def _close_all(widget: W.Widget) -> None:
    """Close `widget`, its children, and their layout and style models."""
    for child in getattr(widget, "children", ()):
        _close_all(child)
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
        if isinstance(part, W.Widget):
            part.close()
    widget.close()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return f"[{len(v)} entries]"
    return str(v)


# ---------------------------------------------------------------- ratelab fps


def add_fps(sub) -> None:
    p = sub.add_parser("fps", help="measure the live limiter's redraw rate (frames per second)")
    p.add_argument("--frames", type=int, default=200, help="frames to draw per algorithm")
    p.add_argument("--dt", type=float, default=0.05, help="virtual seconds per frame")
    p.set_defaults(func=run_fps)


def run_fps(args) -> int:
    """Print, per registry algorithm, the frames per second of step + redraw."""
    for name in NAMES:
        fps = LiveLimiter(name).measure_fps(frames=args.frames, dt=args.dt)
        print(f"{name:24} {fps:8.0f} frames/s")
    return 0
