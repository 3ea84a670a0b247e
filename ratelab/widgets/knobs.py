"""The knobs: one control per limiter parameter, and the layouts the panels share."""

from __future__ import annotations

import html
import inspect
from typing import Any

import ipywidgets as W

from ..limiters import REGISTRY

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
              "help": "requests allowed at once beyond the first one: the limit is burst + 1 "
                      "(GCRA and nginx count the request itself, then the burst)"},
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
    "period": {"kind": "float", "min": 0.5, "max": 10.0, "step": 0.5, "value": 1.0,
               "description": "period (s)",
               "help": "HAProxy's http_req_rate(period): periods start at each client's "
                       "first request, and refused requests count too"},
    "compare": {"kind": "choice", "options": ("gt", "ge"), "value": "gt",
                "description": "compare",
                "help": "gt: deny when the rate, this request included, is above the limit; "
                        "ge: when it is at or above it (one request fewer passes)"},
    "expire": {"kind": "float", "min": 0.5, "max": 20.0, "step": 0.5, "value": 2.0,
               "description": "expire (s)",
               "help": "the stick table forgets a client idle this long: its next request "
                       "starts afresh (no effect from two periods up)"},
}

SLIDER_PX = {"min_width": 240, "description": 0, "readout": 60}
"""A slider's least width in px, its label's and its readout's: 1.8 px of track per step or
more. Its name is above it (:func:`labelled`), not beside it: a notebook 350 px wide (an
800 px window with the file browser open) holds it with its readout."""


def knob_names(name: str) -> list[str]:
    """The constructor parameters of registry algorithm `name`, in order."""
    sig = inspect.signature(REGISTRY[name].__init__)
    return [p for p in sig.parameters if p != "self"]


def default_params(name: str) -> dict[str, Any]:
    """The knob settings the panel starts `name` with."""
    return {p: KNOBS[p]["value"] for p in knob_names(name) if p in KNOBS}


def control(param: str, value: Any) -> W.Widget:
    """The control for limiter parameter `param` (a KNOBS name), set to `value`."""
    spec = KNOBS[param]
    style = {"description_width": f"{SLIDER_PX['description']}px"}
    if spec["kind"] in ("float", "int"):  # named above it by labelled()
        common = {"description": "", "style": style, "tooltip": spec["help"],
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


def labelled(param: str, control: W.Widget) -> W.Widget:
    """`control` as a panel shows it: a slider under its name, which beside it took 150 px
    that a narrow notebook does not have; a checkbox or a menu carries its own name."""
    if not isinstance(control, (W.FloatSlider, W.IntSlider)):
        return control
    spec = KNOBS[param]
    name = W.HTML(f"<span style='font-size:14px' title='{html.escape(spec['help'])}'>"
                  f"{html.escape(spec['description'])}</span>", layout=W.Layout(width="auto"))
    return W.VBox([name, control], layout=W.Layout(
        width="100%", min_width=f"{SLIDER_PX['min_width']}px", max_width="480px"))


def row_layout() -> W.Layout:
    """A row of controls that wraps instead of cutting them off (one per panel: a panel's
    close closes its layouts)."""
    return W.Layout(display="flex", flex_flow="row wrap", align_items="center", width="100%")


def fit_layout() -> W.Layout:
    """A button as wide as its label, never narrower."""
    return W.Layout(width="auto", min_width="fit-content")


def button(description: str, on_click, layout: W.Layout, **options) -> W.Button:
    """A Button that calls `on_click()` (no argument) when pressed; `options` as W.Button's."""
    b = W.Button(description=description, layout=layout, **options)
    b.on_click(lambda _: on_click())
    return b


def player(toggle: W.ToggleButton, interval_ms: int, on_tick, on_playing) -> W.Play:
    """A hidden Play widget that `toggle` starts and stops: `on_tick` observes its frames,
    `on_playing` its start and stop."""
    play = W.Play(interval=interval_ms, max=10**9, show_repeat=False,
                  layout=W.Layout(display="none"))
    W.link((toggle, "value"), (play, "playing"))
    play.observe(on_tick, names="value")
    play.observe(on_playing, names="playing")
    return play


def close_all(widget: W.Widget) -> None:
    """Close `widget`, its children, and their layout and style models."""
    for child in getattr(widget, "children", ()):
        close_all(child)
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
        if isinstance(part, W.Widget):
            part.close()
    widget.close()
