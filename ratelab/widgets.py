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

import base64
import bisect
import dataclasses
import functools
import html
import inspect as pyinspect
import io
import math
import re
import time
from collections import deque
from typing import Any, Protocol, Sequence

import ipywidgets as W
import matplotlib as mpl
import matplotlib.lines  # noqa: F401 -- mpl.lines for the legend handles
import numpy as np
import pandas as pd

from .limiters import NAMES, REGISTRY, Decision, Limiter, make
from .limiters.base import positive, whole
from .clock import to_ticks
from .plot import COLORS, STYLE

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
# (tests/test_widgets.py checks it against ratelab.limiters.NAMES). `help` says what the knob
# does (its tooltip and the line under the knobs), never only its name again.
KNOBS: dict[str, dict[str, Any]] = {
    "rate": {"kind": "float", "min": 0.5, "max": 50.0, "step": 0.5, "value": 5.0,
             "description": "rate (/s)",
             "help": "requests per second let through in the long run (the refill or leak)"},
    "capacity": {"kind": "int", "min": 1, "max": 100, "value": 10,
                 "description": "capacity (requests)",
                 "help": "the most the bucket holds: the largest burst it admits at once"},
    "limit": {"kind": "int", "min": 1, "max": 100, "value": 10,
              "description": "limit (requests)",
              "help": "requests allowed per window"},
    "window": {"kind": "float", "min": 0.5, "max": 10.0, "step": 0.5, "value": 1.0,
               "description": "window (s)", "help": "the window's length in seconds"},
    "burst": {"kind": "int", "min": 0, "max": 50, "value": 5, "description": "burst (requests)",
              "help": "requests allowed beyond the steady rate at once"},
    "delay": {"kind": "int", "min": 0, "max": 50, "value": 0, "description": "delay=N",
              "help": "nginx: the first N requests of a burst pass at once, the rest of the "
                      "burst are held back to the rate"},
    "mode": {"kind": "choice", "options": ("police", "shape"), "value": "police",
             "description": "mode",
             "help": "police: refuse what overflows the bucket; shape: queue it and serve it "
                     "later, evenly at the rate (a delay instead of a refusal)"},
    "count_rejected": {"kind": "bool", "value": False, "description": "count rejected",
                       "help": "refused requests count toward the window too (as a Redis "
                               "INCR-first counter does): a client that keeps retrying stays "
                               "locked out until it pauses"},
    "nodelay": {"kind": "bool", "value": False, "description": "nodelay",
                "help": "nginx: serve the whole burst at once instead of holding it back"},
}

SLIDER_PX = {"min_width": 380, "description": 150, "readout": 60}
"""A slider's width in px, its label's and its readout's: at least 2 px of track per step."""


def knob_names(name: str) -> list[str]:
    """The constructor parameters of registry algorithm `name`, in order."""
    sig = pyinspect.signature(REGISTRY[name].__init__)
    return [p for p in sig.parameters if p != "self"]


def default_params(name: str) -> dict[str, Any]:
    """The knob settings the panel starts `name` with."""
    return {p: KNOBS[p]["value"] for p in knob_names(name) if p in KNOBS}


def _control(param: str, value: Any) -> W.Widget:
    spec = KNOBS[param]
    style = {"description_width": f"{SLIDER_PX['description']}px"}
    if spec["kind"] in ("float", "int"):
        common = {"description": spec["description"], "style": style,
                  "description_allow_html": False, "tooltip": spec["help"],
                  "layout": W.Layout(width="100%", min_width=f"{SLIDER_PX['min_width']}px",
                                     max_width="480px"),
                  "continuous_update": False}
    if spec["kind"] == "float":
        return W.FloatSlider(value=float(value), min=spec["min"], max=spec["max"],
                             step=spec["step"], readout_format=".1f", **common)
    if spec["kind"] == "int":
        return W.IntSlider(value=int(value), min=spec["min"], max=spec["max"], **common)
    if spec["kind"] == "choice":
        return W.Dropdown(value=value, options=spec["options"], description=spec["description"],
                          tooltip=spec["help"], style=style,
                          layout=W.Layout(width="auto", min_width="260px"))
    return W.Checkbox(value=bool(value), description=spec["description"], indent=False,
                      tooltip=spec["help"], layout=W.Layout(width="auto"))


# ---------------------------------------------------------------- reading a limiter


# How much of the allowance is in use, from the field a limiter reports (``Limiter.reports``):
# a token bucket has spent capacity - tokens, GCRA limit - available; the rest count up.
IN_USE = {"tokens": lambda info: float(info["capacity"]) - float(info["tokens"]),
          "available": lambda info: float(info["limit"]) - float(info["available"])}


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


def own_label(info: dict[str, Any]) -> tuple[str, str]:
    """(short name, one-line explanation) of what :func:`own_count` reads for this state."""
    if "estimate" in info:
        return "estimate", "the counter's estimate: previous window x its weight + this window"
    if "count" in info:
        return "window count", "requests the limiter counts in its window now"
    if "tokens" in info:
        return "tokens spent", "capacity - tokens: how much of the bucket is used up"
    if "level" in info:
        return "water", "the water in the bucket: requests poured in and not yet leaked"
    if "queue" in info:
        return "queued", "requests waiting in the queue"
    if "excess" in info:
        return "excess", "nginx's excess: requests beyond the steady rate, not yet drained"
    if "available" in info:
        return "ahead", "requests GCRA is ahead of schedule: limit - available"
    return "state", "the limiter's own count"


def gauge(info: dict[str, Any], limiter: Limiter) -> tuple[str, float, float]:
    """(label, room left, ceiling): how many more requests would pass now; empty = refused.

    Every algorithm is read the same way round, so the bars of a token bucket and a leaky
    bucket point the same way: full is an idle limiter, empty is one that refuses.
    """
    if "tokens" in info:
        return "tokens left", float(info["tokens"]), float(info["capacity"])
    if "level" in info:
        cap = float(info["capacity"])
        return "room in the bucket", cap - float(info["level"]), cap
    if "queue" in info:
        cap = float(info["capacity"])
        return "free places in the queue", cap - float(info["queue"]), cap
    if "estimate" in info:
        lim = float(info["limit"])
        return "left in this window (estimate)", lim - float(info["estimate"]), lim
    if "count" in info:
        lim = float(info["limit"])
        return "left in this window", lim - float(info["count"]), lim
    if "available" in info:
        return "available now", float(info["available"]), float(info["limit"])
    if "excess" in info:
        room = max(1.0, float(info["burst"]))
        return "room in the burst", room - float(info["excess"]), room
    return "state", float(limiter.limit), float(limiter.limit)


def gauge_style(room: float, ceiling: float) -> str:
    """The bar's colour: green with room, amber when under half is left, red when refusing."""
    if room < 1.0:
        return "danger"
    return "warning" if room < ceiling / 2 else "success"


def has_boundary(limiter: Limiter) -> bool:
    """Whether the limiter counts in windows, so that timing a window boundary means something."""
    return hasattr(limiter, "window")


def rolling_window(limiter: Limiter) -> float:
    """The trailing window the rolling count uses: the limiter's window, else one second."""
    return float(getattr(limiter, "window", 1.0))


def sustained_rate(limiter: Limiter) -> float:
    """Requests per second the limiter lets through in the long run."""
    if hasattr(limiter, "rate"):
        return float(limiter.rate)
    return float(limiter.limit) / rolling_window(limiter)


def _num(v: float) -> str:
    """A count as a count (10, not 10.00); a fraction with up to two decimals (9.55)."""
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    return f"{v:.2f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------- the panel

VIEWS = ("follow", "last burst", "whole run")
"""What the live chart shows: the last span_s seconds, the last flood or boundary train
zoomed in, or everything since t = 0."""

CHART_FONT_PX = 15
"""Text size in the chart's own units (it is 640 wide and drawn 600 to 800 px wide)."""


class LiveLimiter:
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
        """Fire `n` requests (default 3 x the limit) over the next `spread_s` s; the state.

        The chart zooms in on the flood ("last burst"), so 0.2 s is not a sliver of 6 s.
        """
        n = int(3 * math.ceil(self.limiter.limit)) if n is None else int(n)
        start = self.t
        for i in range(n):
            self._advance(start + spread_s * i / n)
            self._request(self.t)
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
        if not has_boundary(self.limiter):
            raise ValueError(f"{self.algorithm} has no window boundary to time: it refills "
                             "continuously (try flood)")
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
        self.algorithm = algorithm
        self.limiter = limiter
        self.window_s = rolling_window(limiter)
        self._building = True
        try:
            self.algorithm_box.value = algorithm
            if list(self.knobs) != [p for p in knob_names(algorithm) if p in KNOBS]:
                self._make_knobs(algorithm, params)  # a new algorithm: its own knobs
            for p, control in self.knobs.items():  # the controls show what runs, always
                control.value = limiter.params[p]
            boundary = has_boundary(limiter)
            self.boundary_button.disabled = not boundary
            self.boundary_button.tooltip = (
                "the limit just before a window boundary and the limit just after" if boundary
                else f"{algorithm} has no window boundary: it refills continuously")
            self.knob_help.value = self._knob_help()
        finally:
            self._building = False

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
                        f"the new limiter, up to t = {_num(round(until, 3))} s. The grey line "
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
        gap = 1.0 / (0.5 * sustained_rate(self.limiter)) if self._gentle else math.inf
        for mark in marks:
            while self._next_gentle <= mark:
                self.t = max(self.t, self._next_gentle)
                self._request(self.t)
                self._next_gentle += gap
            self.t = max(self.t, mark)
            self._sample(self.t)

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
        own = own_count(self.limiter.inspect(self.KEY, at), self.limiter) or 0.0
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
        wrap = W.Layout(display="flex", flex_flow="row wrap", align_items="center",
                        width="100%")
        fit = W.Layout(width="auto", min_width="fit-content")
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
        self.flood_button = W.Button(description="flood", icon="bolt", button_style="danger",
                                     layout=fit, tooltip="3 x the limit in 0.2 s")
        self.flood_button.on_click(lambda _: self._safely(self.flood))
        self.boundary_button = W.Button(description="time the boundary", icon="clock-o",
                                        button_style="warning", layout=fit)
        self.boundary_button.on_click(lambda _: self._safely(self.time_boundary))
        self.reset_button = W.Button(description="reset", icon="refresh", layout=fit,
                                     tooltip="forget everything: time back to 0")
        self.reset_button.on_click(lambda _: self._safely(self.reset))
        self.play_button = W.ToggleButton(description="play", icon="play", layout=fit,
                                          tooltip="run virtual time at `speed` x real time; "
                                                  "press again to pause")
        self.play = W.Play(interval=40, max=10**9, show_repeat=False,
                           layout=W.Layout(display="none"))
        W.link((self.play_button, "value"), (self.play, "playing"))
        self.play.observe(self._on_play_value, names="value")
        self.play.observe(self._on_playing, names="playing")
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
        changed = next((p for p, c in self.knobs.items() if c is change["owner"]), "a knob")
        old = self.limiter.params
        try:
            self._configure(self.algorithm, params)
        except ValueError as e:  # e.g. nginx delay above burst: say so, keep the old limiter
            self._configure(self.algorithm, old)  # and put the control back where it was
            self.message = str(e)
            self.redraw()
            return
        self._replay(f"{changed} {_val(old[changed])} → {_val(change['new'])}")
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
            self.message = (f"paused at t = {_num(round(self.t, 2))} s: press play to go on, "
                            "reset to start over")
        self.redraw()

    def _on_view(self, change) -> None:
        if self._building:
            return
        self._safely(self.show, change["new"])

    def _safely(self, action, *args) -> None:
        try:
            self.message = ""
            action(*args)
        except ValueError as e:
            self.message = str(e)
            self.redraw()

    def _repr_mimebundle_(self, **kwargs):
        """The live panel where widgets run; the counters and the chart as HTML elsewhere."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/html"] = (f"<div class='ratelab-live-snapshot'>{self.gauge_label.value}"
                             f"{self.counters.value}{self.chart.value}</div>")
        return bundle

    # -- drawing -----------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw the current state into the widgets (one frame)."""
        self.frames += 1
        info = self.limiter.inspect(self.KEY, self.t)
        label, room, ceiling = gauge(info, self.limiter)
        with self.gauge_bar.hold_sync():  # one message for all three
            self.gauge_bar.max = max(ceiling, 1e-9)
            self.gauge_bar.value = min(max(room, 0.0), self.gauge_bar.max)
            self.gauge_bar.bar_style = gauge_style(room, ceiling)
        self.gauge_label.value = (f"<span class='ratelab-gauge' style='font-size:14px'>"
                                  f"<b>{label}</b> {_num(room)} of {_num(ceiling)} "
                                  "(the bar empties as the limiter nears refusing)</span>")
        self.counters.value = self._counters_html(info)
        self._building = True
        try:
            self.view_buttons.value = self.view
        finally:
            self._building = False
        self.chart.value = self._chart_svg()
        fields = " · ".join(f"{k} = {_fmt(v)}" for k, v in info.items())
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

        own = own_count(info, self.limiter) or 0.0
        own_name, own_help = own_label(info)
        w = f"{self.window_s:g} s"
        return ("<div class='ratelab-counters' style='font-size:14px;display:flex;"
                "flex-wrap:wrap'>"
                + cell("t", f"{_num(round(self.t, 2))} s", COLORS["limit"], "virtual time")
                + cell("accepted", self.accepted, COLORS["admitted"], "requests admitted")
                + cell("rejected", self.rejected, COLORS["rejected"], "requests refused")
                + cell("rolling", self.rolling_now(), COLORS["admitted"],
                       f"admitted in the trailing {w} (t − {w}, t]")
                + cell("max rolling", self.max_rolling, COLORS["admitted"],
                       f"the most admitted in any trailing {w} so far")
                + cell("own", _num(own), COLORS["estimate"], f"{own_name}: {own_help}")
                + cell("max own", _num(self.max_own), COLORS["estimate"],
                       f"the largest {own_name} so far")
                + "</div>"
                f"<div style='font-size:14px;color:{COLORS['estimate']}'>own = {own_name}: "
                f"{html.escape(own_help)}. Rolling = what really got through in the trailing "
                f"{w}.</div>")

    def _chart_svg(self, width: int = 640, height: int = 230) -> str:
        """The chart as an inline SVG: ticks, rolling count, own counter, limit, axis titles."""
        t0, t1 = self._chart_range()
        span = t1 - t0
        limit = float(self.limiter.limit)
        top = max(2.2 * limit, self.max_rolling * 1.1, self.max_own * 1.1, 1.0)
        fs = CHART_FONT_PX
        pad_l, pad_r, pad_b, ticks = 70, 10, 2.6 * fs + 6, 32
        plot_h = height - pad_b - ticks

        def x(t: float) -> float:
            return pad_l + (t - t0) / span * (width - pad_l - pad_r)

        def y(v: float) -> float:
            return ticks + plot_h * (1 - v / top)

        def step_path(rows, i: int) -> str:
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
            if prev is not None and rows is self._history:
                pts.append((min(self.t, t1), prev[i]))
            return " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)

        def in_view(times: list[float]) -> list[float]:
            return times[bisect.bisect_left(times, t0):bisect.bisect_right(times, t1)]

        marks = "".join(
            f"<line x1='{x(a):.1f}' x2='{x(a):.1f}' y1='0' y2='{ticks - 3}' "
            f"stroke='{COLORS['admitted']}'/>" for a in in_view(self._admitted))
        marks += "".join(
            f"<line x1='{x(r):.1f}' x2='{x(r):.1f}' y1='0' y2='{ticks - 3}' "
            f"stroke='{COLORS['rejected']}'/>" for r in in_view(self._rejected_times))
        marks += "".join(  # a shaper's departures, under the arrivals: its metronome
            f"<line class='ratelab-departure' x1='{x(d):.1f}' x2='{x(d):.1f}' y1='16' y2='29' "
            f"stroke='{COLORS['delayed']}'/>" for d in in_view(self._departures) if d <= self.t)
        text = f"font-size='{fs}'"
        axis = "".join(
            f"<text class='ratelab-ytick' x='{pad_l - 6}' y='{y(v) + fs / 3:.1f}' {text} "
            f"text-anchor='end'>{_num(v)}</text>" for v in (0, limit, 2 * limit))
        step = _tick_step(span)
        first = math.ceil(t0 / step)
        xt = "".join(
            f"<text class='ratelab-xtick' x='{x(k * step):.1f}' y='{height - pad_b + fs + 2:.1f}' "
            f"{text} text-anchor='middle'>{_num(round(k * step, 3))}</text>"
            f"<line x1='{x(k * step):.1f}' x2='{x(k * step):.1f}' y1='{ticks}' "
            f"y2='{ticks + plot_h}' stroke='#eee'/>"
            for k in range(first, math.floor(t1 / step + 1e-9) + 1))
        ghost = (f"<polyline class='ratelab-ghost' fill='none' stroke='{COLORS['arrivals']}' "
                 f"stroke-width='2' stroke-opacity='0.6' points='{step_path(self._ghost, 1)}'/>"
                 if self._ghost else "")
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
            f"stroke-opacity='0.8' points='{step_path(self._history, 1)}'/>"
            f"<polyline fill='none' stroke='{COLORS['estimate']}' stroke-width='1.5' "
            f"points='{step_path(self._history, 2)}'/>"
            f"<text class='ratelab-xlabel' x='{(pad_l + width - pad_r) / 2:.0f}' "
            f"y='{height - 4}' {text} text-anchor='middle'>virtual time (s)</text>"
            f"<text class='ratelab-ylabel' {text} text-anchor='middle' "
            f"transform='translate({fs + 2},{ticks + plot_h / 2:.0f}) rotate(-90)'>"
            f"requests</text>"
            f"<text x='{pad_l + 4}' y='{y(limit) - 4:.1f}' {text}>limit {_num(limit)}</text>"
            "</svg>"
            f"<div class='ratelab-legend' style='font-size:14px;display:flex;flex-wrap:wrap;"
            f"gap:0 14px'><span style='color:{COLORS['admitted']}'>━ admitted in the trailing "
            f"{self.window_s:g} s</span><span style='color:{COLORS['estimate']}'>━ the "
            f"limiter's own count</span><span>┅ the limit</span>"
            f"<span>ticks on top: <span style='color:{COLORS['admitted']}'>admitted</span> "
            f"<span style='color:{COLORS['rejected']}'>rejected</span>; under them "
            f"<span style='color:{COLORS['delayed']}'>served later (shaped)</span></span>"
            + (f"<span style='color:{COLORS['arrivals']}'>━ the run before the last "
               "change</span>" if self._ghost else "") + "</div>")


def _val(v: Any) -> str:
    """A knob's value as a learner reads it: 10, 4.5, shape, True."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _num(v)
    return str(v)


def _tick_step(span: float) -> float:
    """A round tick spacing that puts 4 to 10 ticks on `span` seconds."""
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600):
        if span / step <= 10:
            return float(step)
    return 10 ** math.ceil(math.log10(span / 10))


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


def measure_all_fps(frames: int = 200, dt: float = 0.05) -> dict:
    """Per registry algorithm, the frames per second of step + redraw: a record.

    Keys: ``frames``, ``dt_s`` and ``results``, one ``{"algorithm", "frames_per_s"}`` per
    algorithm (``ratelab fps``; real time, so the figures vary run to run).
    """
    frames, dt = whole("frames", frames), positive("dt", dt)
    return {"frames": frames, "dt_s": dt, "results": [
        {"algorithm": name, "frames_per_s": LiveLimiter(name).measure_fps(frames=frames, dt=dt)}
        for name in NAMES]}


# ---------------------------------------------------------------- the comparison panel

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

PLAY_INTERVAL_MS = 800
"""How often the comparison panel's play button asks for a frame: a seven-lane matplotlib
frame takes a few hundred ms of kernel time, and ticks faster than that would queue up."""

SHAPERS = ("leaky-bucket", "nginx")
"""The registry algorithms that can hold a request and serve it later instead of refusing it."""


def budget_params(name: str, limit: int, window_s: float, shape: bool = True) -> dict[str, Any]:
    """The parameters that give registry algorithm `name` one budget: `limit` per `window_s`.

    Every algorithm then lets through limit / window_s requests per second in the long run and
    at most `limit` at once: windows count to `limit` per `window_s`; buckets refill at
    limit / window_s with room for `limit`; GCRA and nginx take limit - 1 beyond the first.
    `shape` makes the leaky bucket a queue (mode "shape") and lets nginx delay (no nodelay).
    """
    limit = whole("limit", limit)
    window_s = positive("window_s", window_s)
    rate = limit / window_s
    by_name = {
        "token-bucket": {"rate": rate, "capacity": limit},
        "leaky-bucket": {"rate": rate, "capacity": limit, "mode": "shape" if shape else "police"},
        "fixed-window": {"limit": limit, "window": window_s},
        "sliding-window-log": {"limit": limit, "window": window_s},
        "sliding-window-counter": {"limit": limit, "window": window_s},
        "gcra": {"rate": rate, "burst": limit - 1},
        "nginx": {"rate": rate, "burst": limit - 1, "nodelay": not shape},
    }
    if name not in by_name:
        raise ValueError(f"algorithm must be one of {', '.join(by_name)}, got {name!r}")
    return by_name[name]


@functools.lru_cache(maxsize=1)
def busiest_trace_minute() -> np.ndarray:
    """Arrival times (s from 0) of the busiest minute of the recorded NASA trace, all clients."""
    from . import datasets
    from .metrics import max_in_window

    trace = datasets.load(TRACE_DATASET, progress=False, warn=False)
    peak = max_in_window(trace, 60.0)
    time = trace.time[(trace.time > peak.start_s) & (trace.time <= peak.end_s)]
    return time - peak.start_s


def preset_stream(preset: str, limit: int, window_s: float, *, duration_s: float = 10.0,
                  seed: int = 0) -> np.ndarray:
    """The arrival times (s, sorted) of `preset` against a budget of `limit` per `window_s`.

    Seeded: the same arguments give the same stream. The trace preset is one recorded minute
    (its length is 60 s whatever `duration_s` says).
    """
    from .bursts import burst
    from .traces import generators as gen

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
                                burst(3 * limit, EVENT_S, 0.2)])
    elif preset == "boundary":
        boundary = max(1, round(EVENT_S / window_s)) * window_s
        times = gen.boundary_attack(limit, window_s, boundary_s=boundary,
                                    spread_s=window_s / 10).time
    else:
        times = busiest_trace_minute()
    return np.sort(np.asarray(times, dtype=np.float64), kind="stable")


def _event_view(preset: str, window_s: float, end_s: float) -> tuple[float, float]:
    """The stretch of time a preset is about: its burst or boundary, zoomed; else the run."""
    if preset == "burst":
        return max(0.0, EVENT_S - window_s / 2), EVENT_S + 1.5 * window_s
    if preset == "boundary":
        boundary = max(1, round(EVENT_S / window_s)) * window_s
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

    @property
    def shapes(self) -> bool:
        """Whether this lane's limiter holds requests back (delays them) instead of refusing."""
        p = self.limiter.params
        return p.get("mode") == "shape" or (self.name == "nginx" and not p.get("nodelay"))


class Compare:
    """Several algorithms on ONE seeded stream at one budget, in lanes that share a time axis.

    `algorithms` are registry names (default all seven); the budget is `limit` requests per
    `window_s` for every one of them (:func:`budget_params`); `preset` picks the traffic
    (:data:`PRESETS`), drawn from `seed`; `shape` lets the leaky bucket and nginx queue
    instead of refuse. Time is virtual: ``step(dt)`` and ``run()`` move it; nothing reads
    the wall clock. ``frame()`` is what the table shows, per algorithm. ``set(...)`` changes a
    knob: the same stream is run again to the same instant, and the run before stays on the
    chart as a faint grey line (and in ``previous``).
    """

    KEY = "client"
    # text of 11.5 pt and up: still 10 pt when a 700 px notebook shrinks the 768 px chart
    _RC = {**STYLE, "font.size": 12, "axes.titlesize": 12, "axes.titleweight": "normal",
           "xtick.labelsize": 11.5, "ytick.labelsize": 11.5, "legend.fontsize": 11.5,
           "svg.fonttype": "none",
           "svg.hashsalt": "ratelab"}
    FIELDS = ("algorithms", "preset", "limit", "window_s", "shape", "seed", "duration_s")

    def __init__(self, algorithms: Sequence[str] = NAMES, *, preset: str = "burst",
                 limit: int = 10, window_s: float = 1.0, shape: bool = True, seed: int = 0,
                 duration_s: float = 10.0, frame_s: float = 0.4) -> None:
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
        lanes = [Lane(a, make(a, **budget_params(a, limit, window_s, bool(settings["shape"]))))
                 for a in algorithms]
        self.settings = {**settings, "algorithms": algorithms, "limit": limit,
                         "window_s": window_s, "seed": seed, "shape": bool(settings["shape"]),
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
        said = [_change(k, old_settings[k], self.settings[k]) for k in changes
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
        from .http import Policy, respond
        from .metrics import max_in_window

        arrived = self.times[:self._next]
        rows = []
        for lane in self.lanes:
            allowed = np.asarray(lane.allowed, dtype=bool)
            served = np.sort(arrived[allowed] + np.asarray(lane.delay)[allowed])
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
                                if lane.shapes and len(delays) else math.nan),
                "last_status": status,
                "last_headers": headers,
            })
        return pd.DataFrame(rows).set_index("algorithm")

    def _rolling(self, lane: Lane, times: np.ndarray, until: float):
        """(t, count) steps of the served count in the trailing window, up to `until`."""
        from .metrics import rolling_count

        arrived = times[:len(lane.allowed)]
        allowed = np.asarray(lane.allowed, dtype=bool)
        served = np.sort(arrived[allowed] + np.asarray(lane.delay)[allowed])
        served = served[served <= until]
        at = np.unique(np.concatenate([[0.0], served, served + self.window_s, [until]]))
        at = at[at <= until]
        return at, rolling_count(served, self.window_s, at=at).to_numpy()

    # -- drawing -------------------------------------------------------------------------------

    def figure(self):
        """The lanes as a matplotlib Figure (not shown through pyplot).

        One Axes holds every lane, stacked: one x axis and one set of ticks to lay out, not
        seven, which is what keeps a frame cheap. In lane k (counted from the top) the count
        sits in [0, 0.6) above the lane's base, the shaper's departures at 0.62-0.68, the
        arrivals at 0.70-0.78, the lane's title above them.
        """
        from matplotlib.figure import Figure

        t0, t1 = self.view
        limit, w, n = self.limit, self.window_s, len(self.lanes)
        arrived = self.times[:self._next]
        series = {lane.name: self._rolling(lane, self.times, self.t) for lane in self.lanes}
        peak = max([2.2 * limit] + [1.05 * float(y.max()) for _, y in series.values() if len(y)]
                   + [1.05 * float(y.max()) for _, y in self._ghosts.values() if len(y)])
        with mpl.rc_context(self._RC):
            height = 1.3 + 1.05 * n
            fig = Figure(figsize=(8.0, height))
            ax = fig.add_axes((0.9 / 8.0, 0.62 / height, 1 - 1.05 / 8.0, 1 - 1.45 / height))
            yticks, ylabels = [], []
            for k, lane in enumerate(self.lanes):
                base = n - 1 - k

                def y(v, base=base):
                    return base + 0.6 * np.asarray(v, dtype=float) / peak

                allowed = np.asarray(lane.allowed, dtype=bool)
                seen = (arrived >= t0) & (arrived <= t1)
                _ticks(ax, arrived[seen & allowed], base + 0.70, base + 0.78, COLORS["admitted"])
                _ticks(ax, arrived[seen & ~allowed], base + 0.70, base + 0.78,
                       COLORS["rejected"])
                if lane.shapes:
                    served = arrived[allowed] + np.asarray(lane.delay)[allowed]
                    served = served[(served >= t0) & (served <= min(t1, self.t))]
                    _ticks(ax, served, base + 0.62, base + 0.68, COLORS["delayed"])
                if lane.name in self._ghosts:
                    gx, gy = self._ghosts[lane.name]
                    ax.step(gx, y(gy), where="post", color=COLORS["arrivals"], alpha=0.7,
                            lw=1.2)
                x, count = series[lane.name]
                ax.step(x, y(count), where="post", color=COLORS["admitted"], lw=2,
                        gid=f"lane-{lane.name}")
                ax.plot([t0, t1], [y(limit)] * 2, color=COLORS["limit"], ls="--", lw=1)
                ax.axhline(base, color="#999", lw=0.8)
                ax.text(0.01, base + 0.80, f"{lane.name}  ({_params_text(lane.limiter.params)})",
                        transform=ax.get_yaxis_transform(), va="bottom", ha="left",
                        gid=f"title-lane-{lane.name}")
                yticks += [base, float(y(limit))]
                ylabels += ["0", _num(limit)]
            if t0 <= self.t <= t1 and self.t < self.end_s:
                ax.axvline(self.t, color=COLORS["state"], lw=1)
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
                mpl.lines.Line2D([], [], color=COLORS["admitted"], marker="|", ls="",
                                 ms=10, mew=2, label="admitted"),
                mpl.lines.Line2D([], [], color=COLORS["rejected"], marker="|", ls="",
                                 ms=10, mew=2, label="rejected"),
                mpl.lines.Line2D([], [], color=COLORS["delayed"], marker="|", ls="",
                                 ms=10, mew=2, label="served later (shaped)"),
            ]
            if self._ghosts:
                handles.append(mpl.lines.Line2D([], [], color=COLORS["arrivals"], alpha=0.7,
                                                label="the run before"))
            fig.legend(handles=handles, loc="upper center", ncols=3, bbox_to_anchor=(0.5, 1.0))
        return fig

    def svg(self) -> str:
        """The chart as inline SVG, scaled to the width it is given (at most its own size)."""
        buf = io.StringIO()
        fig = self.figure()
        with mpl.rc_context(self._RC):  # text as <text>, so it reads and scales as text
            fig.savefig(buf, format="svg")
        text = buf.getvalue()
        text = text[text.index("<svg"):]
        width_pt = fig.get_figwidth() * 72
        text = re.sub(r'<svg([^>]*?) width="[\d.]+pt" height="[\d.]+pt"',
                      lambda m: (f'<svg{m.group(1)} class="ratelab-compare-chart" width="100%" '
                                 f'style="max-width:{width_pt * 4 / 3:.0f}px;height:auto"'),
                      text, count=1)
        return text

    def png(self, dpi: int = 110) -> bytes:
        """The chart as a PNG (the snapshot a notebook keeps for readers without a kernel)."""
        buf = io.BytesIO()
        self.figure().savefig(buf, format="png", dpi=dpi)
        return buf.getvalue()

    def snapshot(self):
        """The chart as an IPython Image: end a cell with it to keep a picture in the notebook."""
        from IPython.display import Image

        return Image(self.png())

    def zoom(self, t0: float | None = None, t1: float | None = None) -> None:
        """Show [t0, t1] s; no arguments: the busiest trailing window of arrivals, with margins."""
        from .metrics import max_in_window

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
        where = (f"t = {_num(round(self.t, 3))} s of {_num(self.end_s)} s ({playing}); "
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
                if c == "last_headers":
                    text = f"{row['last_status'] or ''} {v}".strip()
                    cells.append(f"<td class='ratelab-headers'>{html.escape(text)}</td>")
                    continue
                shown = "–" if isinstance(v, float) and math.isnan(v) else _num(v)
                was = ""
                if prev is not None and name in prev.index and c != "p95_delay_s":
                    pv = prev.loc[name, c]
                    if pv != v:
                        was = f" <span style='color:{COLORS['arrivals']}'>(was {_num(pv)})</span>"
                cells.append(f"<td class='ratelab-{c.replace('_', '-')}'>{shown}{was}</td>")
            rows.append(f"<tr><th>{html.escape(name)}</th>{''.join(cells)}</tr>")
        return ("<table class='ratelab-compare-table' style='font-size:14px'>"
                f"<tr><th>algorithm</th>{head}</tr>{''.join(rows)}</table>"
                "<div style='font-size:13.5px'>Same budget for every lane: "
                f"{self.limit} requests per {self.window_s:g} s (a long-run rate of "
                f"{_num(self.limit / self.window_s)}/s). <i>Most admitted in any "
                f"{self.window_s:g} s</i> counts admitted requests in every trailing window "
                f"(t − {self.window_s:g}, t]; above {self.limit} the algorithm let a burst "
                "through (the fixed window's boundary exploit). <i>Served</i> counts them "
                "when they leave a shaper's queue. <i>Last response</i>: the status and "
                "headers a server would send for the last request (ratelab.http).</div>")

    def _build_widgets(self) -> None:
        wrap = W.Layout(display="flex", flex_flow="row wrap", align_items="center",
                        width="100%")
        auto = W.Layout(width="auto", min_width="fit-content")
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
        style = {"description_width": "150px"}
        self.limit_slider = W.IntSlider(value=self.limit, min=1, max=40,
                                        description="limit per window", style=style,
                                        continuous_update=False,
                                        layout=W.Layout(width="100%", max_width="460px",
                                                        min_width="300px"))
        self.window_slider = W.FloatSlider(value=self.window_s, min=0.5, max=5.0, step=0.5,
                                           description="window (s)", style=style,
                                           continuous_update=False, readout_format=".1f",
                                           layout=W.Layout(width="100%", max_width="460px",
                                                           min_width="300px"))
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
        self.play = W.Play(interval=PLAY_INTERVAL_MS, max=10**9, show_repeat=False,
                           layout=W.Layout(display="none"))
        W.link((self.play_button, "value"), (self.play, "playing"))
        self.play.observe(self._on_tick, names="value")
        self.play.observe(self._on_playing, names="playing")
        self.step_button = W.Button(description=f"step {self.frame_s:g} s", layout=auto,
                                    tooltip="move virtual time on by one frame")
        self.step_button.on_click(lambda _: self._safely(self.step, self.frame_s))
        self.run_button = W.Button(description="run to the end", layout=auto,
                                   tooltip="decide every remaining request now")
        self.run_button.on_click(lambda _: self._safely(self.run))
        self.rewind_button = W.Button(description="back to t = 0", layout=auto,
                                      tooltip="the same stream again, fresh limiters")
        self.rewind_button.on_click(lambda _: self._safely(self.rewind))
        self.zoom_button = W.Button(description="zoom to the busiest window", layout=auto,
                                    tooltip="show the busiest trailing window of arrivals")
        self.zoom_button.on_click(lambda _: self._safely(self.zoom))
        self.whole_button = W.Button(description="whole run", layout=auto,
                                     tooltip="show the run from 0 to its end")
        self.whole_button.on_click(lambda _: self._safely(self.zoom, 0.0, self.end_s))
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
        self._building = True
        try:
            for n, b in self.algorithm_boxes.items():
                b.value = n in self.algorithms
            for name, b in self.preset_buttons.items():
                b.value = name == self.preset
            self.limit_slider.value = self.limit
            self.window_slider.value = self.window_s
            self.shape_box.value = self.settings["shape"]
            self.seed_box.value = self.settings["seed"]
        finally:
            self._building = False

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
        if change["new"] and self.t >= self.end_s:
            self._configure(self.settings)  # at the end, play starts the run again
        self.message = ("playing" if change["new"] else
                        f"paused at t = {_num(round(self.t, 3))} s: press play to go on, "
                        "'back to t = 0' to start again")
        self.redraw()

    def _safely(self, action, *args, **kwargs) -> None:
        try:
            self.message = ""
            action(*args, **kwargs)
        except (ValueError, OSError) as e:
            self.message = str(e)
            self.redraw()

    def measure_fps(self, frames: int = 20, clock: Clock | None = None) -> float:
        """Frames per second of step + a full redraw, on a copy of this panel (a benchmark)."""
        clock = clock or MonotonicClock()
        probe = Compare(self.algorithms, **{k: v for k, v in self.settings.items()
                                            if k != "algorithms"}, frame_s=self.frame_s)
        probe.widget  # noqa: B018 -- build it: the redraw is what is timed
        try:
            start = clock.now()
            for _ in range(frames):
                probe.step(self.end_s / frames)
            elapsed = clock.now() - start
        finally:
            probe.close()
        return frames / elapsed if elapsed > 0 else math.inf

    def close(self) -> None:
        """Close the panel's widgets, if any were made."""
        if self._widget is not None:
            self.play.playing = False
            _close_all(self._widget)
            self._widget = None

    def _repr_mimebundle_(self, **kwargs):
        """The live panel where widgets run, and a PNG of the chart for every other reader."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["image/png"] = base64.b64encode(self.png()).decode("ascii")
        return bundle


def _change(knob: str, old: Any, new: Any) -> str:
    """A knob change in words: "limit 10 → 5", "lanes: − nginx"."""
    if knob == "algorithms":
        gone = [f"− {a}" for a in old if a not in new]
        added = [f"+ {a}" for a in new if a not in old]
        return "lanes: " + ", ".join(gone + added)
    return f"{knob} {_val(old)} → {_val(new)}"


def _ticks(ax, times: np.ndarray, lo: float, hi: float, color: str) -> None:
    """Vertical ticks at `times` from `lo` to `hi`, as ONE path (an SVG draws it in one go)."""
    if len(times) == 0:
        return
    x = np.repeat(times, 3)
    y = np.tile([lo, hi, np.nan], len(times))
    x[2::3] = np.nan
    ax.plot(x, y, color=color, lw=1, solid_capstyle="butt")


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} {_val(v)}" for k, v in params.items() if k != "count_rejected")
