"""Swimlane diagrams: each gateway a lane, the store a lane, each command a pair of arrows."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

from ..plot import COLORS, use_style
from .sim import CommandRecord, DecisionRecord

LABEL_PT = 10
"""Text on a swimlane: 10 pt, readable at the size a notebook shows the figure."""

WIDTH_IN = 10.0
"""A swimlane panel's width: one panel across the page, never two squeezed side by side."""


def swimlane(commands: Sequence[CommandRecord], decisions: Sequence[DecisionRecord] = (),
             ax=None, title: str = "", unit_s: float = 1e-3, legend: bool = True):
    """Draw `commands` (sent -> executed at the store -> replied) on lanes; return the axes.

    Times are shown in units of `unit_s` (default milliseconds). Each command is labelled at
    the store with what it was and the reply; each decision is marked on its gateway's lane.
    A legend (below the panel) tells the request arrows from the reply arrows.
    """
    use_style()
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH_IN, lane_height(commands, decisions)))
    lanes = sorted({c.who for c in commands} | {f"g{d.gateway}" for d in decisions})
    y = {who: len(lanes) - i for i, who in enumerate(lanes)}
    y_store = 0
    palette = [COLORS["state"], COLORS["estimate"], COLORS["delayed"], COLORS["arrivals"]]
    colour = {who: palette[i % len(palette)] for i, who in enumerate(lanes)}
    for c in commands:
        at = c.executed if c.executed is not None else c.arrived
        ax.annotate("", xy=(at / unit_s, y_store), xytext=(c.sent / unit_s, y[c.who]),
                    arrowprops=dict(arrowstyle="->", color=colour[c.who], lw=1.4))
        if c.replied is not None:
            ax.annotate("", xy=(c.replied / unit_s, y[c.who]), xytext=(at / unit_s, y_store),
                        arrowprops=dict(arrowstyle="->", color=colour[c.who], lw=1.2,
                                        linestyle="--"))
        ax.plot([at / unit_s], [y_store], "o", color=colour[c.who], ms=5)
        side = 1 if lanes.index(c.who) % 2 == 0 else -1
        ax.annotate(f"{c.what} → {c.reply}", (at / unit_s, y_store),
                    xytext=(0, -16 if side > 0 else -31), textcoords="offset points",
                    ha="center", fontsize=LABEL_PT, color=colour[c.who])
    for d in decisions:
        mark = COLORS["admitted"] if d.allowed else COLORS["rejected"]
        ax.plot([d.decided / unit_s], [y[f"g{d.gateway}"]], "s", color=mark, ms=8)
        ax.annotate("admit" if d.allowed else "reject", (d.decided / unit_s, y[f"g{d.gateway}"]),
                    xytext=(6, 5), textcoords="offset points", fontsize=LABEL_PT, color=mark)
    times = [t for c in commands for t in (c.sent, c.arrived, c.executed, c.replied)
             if t is not None] + [d.decided for d in decisions]
    if times:
        lo, hi = min(times) / unit_s, max(times) / unit_s
        pad = 0.08 * (hi - lo or 1.0)
        ax.set_xlim(lo - pad, hi + 2 * pad)
    ax.set_yticks([y_store, *y.values()], ["store", *y.keys()])
    ax.tick_params(labelsize=LABEL_PT)
    ax.set_ylim(-0.75, len(lanes) + 0.6)  # below the store: its two rows of labels, no more
    ax.set_xlabel("time (ms)" if unit_s == 1e-3 else f"time (x {unit_s} s)", fontsize=LABEL_PT)
    if title:
        ax.set_title(title, fontsize=LABEL_PT + 1)
    if legend:  # right under the time axis's label (about 36 pt below the panel), not further
        ax.legend(handles=legend_handles(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=offset_copy(ax.transAxes, fig=ax.figure, y=-36, units="points"),
                  ncols=5, fontsize=LABEL_PT, frameon=False)
    return ax


def legend_handles() -> list:
    """Proxies for the legend: request and reply arrows, execution at the store, decisions."""
    grey = COLORS["limit"]
    return [
        Line2D([], [], color=grey, lw=1.4, label="request: gateway → store"),
        Line2D([], [], color=grey, lw=1.2, ls="--", label="reply: store → gateway"),
        Line2D([], [], color=grey, marker="o", ls="", ms=5, label="executed at the store"),
        Line2D([], [], color=COLORS["admitted"], marker="s", ls="", ms=8, label="admitted"),
        Line2D([], [], color=COLORS["rejected"], marker="s", ls="", ms=8, label="rejected"),
    ]


def lane_height(commands: Sequence[CommandRecord], decisions: Sequence[DecisionRecord] = ()
                ) -> float:
    """Inches for one swimlane panel: room for every lane, the labels and the legend."""
    lanes = {c.who for c in commands} | {f"g{d.gateway}" for d in decisions}
    return 1.6 + 0.9 * (1 + len(lanes))


def swimlanes(runs: Sequence[tuple[Sequence[CommandRecord], Sequence[DecisionRecord], str]],
              unit_s: float = 1e-3):
    """Several runs' swimlanes stacked, full width, on one shared time axis; the Figure.

    `runs` are (commands, decisions, title) triples. Use this, not side-by-side axes, to
    compare runs: each panel keeps the full width, so its labels stay readable.
    """
    use_style()
    heights = [lane_height(c, d) for c, d, _ in runs]
    fig, axes = plt.subplots(len(runs), 1, figsize=(WIDTH_IN, sum(heights)), sharex=True,
                             gridspec_kw={"height_ratios": heights, "hspace": 0.45},
                             squeeze=False)
    for i, (ax, (commands, decisions, title)) in enumerate(zip(axes[:, 0], runs)):
        swimlane(commands, decisions, ax=ax, title=title, unit_s=unit_s,
                 legend=i == len(runs) - 1)
        if i < len(runs) - 1:
            ax.set_xlabel("")
            ax.tick_params(labelbottom=True)
    return fig
