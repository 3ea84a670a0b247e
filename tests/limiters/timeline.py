"""Run a limiter along a made-up timeline of rows and name the first step that disagrees."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Step:
    """At time `t`, `key` asks for `cost`; we expect `ok`, and optionally more fields."""

    t: float
    ok: bool
    key: str = "k"
    cost: float = 1
    remaining: int | None = None
    retry_after: float | None = None
    reset_after: float | None = None
    delay: float | None = None


def run(limiter, steps: list[Step]) -> None:
    """Feed `steps` to `limiter.allow`; assert each Decision, naming the step that fails."""
    for i, s in enumerate(steps):
        d = limiter.allow(s.key, s.t, s.cost)
        where = f"step {i} (t={s.t}, key={s.key}, cost={s.cost}): {d}"
        assert d.allowed is s.ok, where
        for name in ("remaining", "retry_after", "reset_after", "delay"):
            want = getattr(s, name)
            if want is not None:
                assert math.isclose(getattr(d, name), want, abs_tol=1e-9), f"{name} at {where}"
