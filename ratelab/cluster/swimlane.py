"""Swimlane diagrams: each gateway a lane, the store a lane, each command a pair of arrows."""

from __future__ import annotations

from typing import Sequence

from ..plot import COLORS, use_style
from .sim import CommandRecord, DecisionRecord


def swimlane(commands: Sequence[CommandRecord], decisions: Sequence[DecisionRecord] = (),
             ax=None, title: str = "", unit_s: float = 1e-3):
    """Draw `commands` (sent -> executed at the store -> replied) on lanes; return the axes.

    Times are shown in units of `unit_s` (default milliseconds). Each command is labelled at
    the store with what it was and the reply; each decision is marked on its gateway's lane.
    """
    import matplotlib.pyplot as plt

    use_style()
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 1.2 + 0.9 * (1 + len({c.who for c in commands}))))
    lanes = sorted({c.who for c in commands} | {f"g{d.gateway}" for d in decisions})
    y = {who: len(lanes) - i for i, who in enumerate(lanes)}
    y_store = 0
    palette = [COLORS["state"], COLORS["estimate"], COLORS["delayed"], COLORS["arrivals"]]
    colour = {who: palette[i % len(palette)] for i, who in enumerate(lanes)}
    for c in commands:
        at = c.executed if c.executed is not None else c.arrived
        ax.annotate("", xy=(at / unit_s, y_store), xytext=(c.sent / unit_s, y[c.who]),
                    arrowprops=dict(arrowstyle="->", color=colour[c.who], lw=1.2))
        if c.replied is not None:
            ax.annotate("", xy=(c.replied / unit_s, y[c.who]), xytext=(at / unit_s, y_store),
                        arrowprops=dict(arrowstyle="->", color=colour[c.who], lw=1.0,
                                        linestyle="--"))
        ax.plot([at / unit_s], [y_store], "o", color=colour[c.who], ms=4)
        side = 1 if lanes.index(c.who) % 2 == 0 else -1
        ax.annotate(f"{c.what} → {c.reply}", (at / unit_s, y_store),
                    xytext=(0, -14 if side > 0 else -26), textcoords="offset points",
                    ha="center", fontsize=7, color=colour[c.who])
    for d in decisions:
        mark = COLORS["admitted"] if d.allowed else COLORS["rejected"]
        ax.plot([d.decided / unit_s], [y[f"g{d.gateway}"]], "s", color=mark, ms=7)
        ax.annotate("admit" if d.allowed else "reject", (d.decided / unit_s, y[f"g{d.gateway}"]),
                    xytext=(6, 4), textcoords="offset points", fontsize=7, color=mark)
    times = [t for c in commands for t in (c.sent, c.arrived, c.executed, c.replied)
             if t is not None] + [d.decided for d in decisions]
    if times:
        lo, hi = min(times) / unit_s, max(times) / unit_s
        pad = 0.08 * (hi - lo or 1.0)
        ax.set_xlim(lo - pad, hi + 2 * pad)
    ax.set_yticks([y_store, *y.values()], ["store", *y.keys()])
    ax.set_ylim(-1.0, len(lanes) + 0.6)
    ax.set_xlabel("time (ms)" if unit_s == 1e-3 else f"time (x {unit_s} s)")
    if title:
        ax.set_title(title)
    return ax
