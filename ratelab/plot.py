"""One visual style for every figure in the suite.

Colours mean the same thing everywhere: arrivals grey, admitted green, rejected red, delayed /
queued amber, the limit a dashed black line, internal state (tokens, counters) blue.
"""

from __future__ import annotations

COLORS = {
    "arrivals": "#9e9e9e",
    "admitted": "#2e7d32",
    "rejected": "#c62828",
    "delayed": "#f9a825",
    "state": "#1565c0",
    "limit": "#212121",
    "estimate": "#6a1b9a",
}

STYLE = {
    "figure.figsize": (8.0, 3.2),
    "figure.dpi": 80,
    "savefig.dpi": 80,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "legend.frameon": False,
    "font.size": 9,
}


def use_style() -> None:
    """Apply the suite's matplotlib style (modest PNGs, light grid, no top/right spines)."""
    import matplotlib as mpl

    mpl.rcParams.update(STYLE)


def limit_line(ax, limit: float, label: str = "limit") -> None:
    """Draw the limit as a dashed horizontal line on `ax`."""
    ax.axhline(limit, color=COLORS["limit"], linestyle="--", linewidth=1, label=label)
