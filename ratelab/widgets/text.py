"""How numbers and knob values read on the panels: 10, not 10.00; 4.5; shape."""

from __future__ import annotations

import math
from typing import Any


def num(v: float) -> str:
    """A count as a count (10, not 10.00); a fraction with up to two decimals (9.55)."""
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    return f"{v:.2f}".rstrip("0").rstrip(".")


def val(v: Any) -> str:
    """A knob's value as a learner reads it: 10, 4.5, shape, True."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return num(v)
    return str(v)


def field_value(v: Any) -> str:
    """An ``inspect()`` field as the panel prints it: floats to 3 decimals, logs by length."""
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return f"[{len(v)} entries]"
    return str(v)


def knob_change(knob: str, old: Any, new: Any) -> str:
    """A knob change in words: "limit 10 → 5", "lanes: − nginx"."""
    if knob == "algorithms":
        gone = [f"− {a}" for a in old if a not in new]
        added = [f"+ {a}" for a in new if a not in old]
        return "lanes: " + ", ".join(gone + added)
    return f"{knob} {val(old)} → {val(new)}"
