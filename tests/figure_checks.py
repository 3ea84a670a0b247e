"""Checks on a drawn matplotlib figure, read from its objects (never its pixels).

:func:`defects` lists what makes a figure show nothing, or show it unreadably:

- **data outside the limits**: a data artist — a line, a bar (a ``Rectangle`` patch), a scatter
  (a collection's offsets), a fill or ``vlines`` (a collection's paths), an image — none of whose
  finite points lies inside its axes' view (each point is taken to axes coordinates through
  the artist's own transform, so ``axhline`` and log scales are handled as drawn). Markers
  must have a point inside; a line, bar, fill or image passes when the box its points span
  meets the view (a segment may cross the view between two points outside it);
- **bars thinner than half a pixel**: bar patches in view, but all of them narrower (or, for
  horizontal bars, shorter) than 0.5 px at the figure's dpi — drawn, and invisible;
- **overlapping tick labels**: two non-empty major tick labels of one axis, at ticks inside the
  view, whose window extents (after a draw) overlap by more than a pixel each way.

:func:`install` is what every notebook kernel runs first under nbval (``conftest.py`` at the
root of the checkout): from then on a cell that draws a figure with a defect fails.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.axes import Axes
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

INSIDE = 1e-6
"""Slack, in axes fractions, for a point on the frame (a bar starting on the axis)."""

OVERLAP_PX = 1.0
"""Tick labels may touch: they overlap when their extents share more than this, each way."""


def _axes_points(ax: Axes, transform, xy) -> np.ndarray:
    """Points `xy` (in `transform`'s input space) in `ax`'s axes coordinates, finite only."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    xy = xy[np.isfinite(xy).all(axis=1)]
    if not len(xy):
        return xy
    with np.errstate(all="ignore"):
        out = (transform + ax.transAxes.inverted()).transform(xy)
    return out[np.isfinite(out).all(axis=1)]


def _data_artists(ax: Axes):
    """(name, points in axes coordinates, discrete) for each visible data artist of `ax`.

    Discrete artists (a scatter's markers, a line drawn as markers only) show only their
    points; the others (a line, a bar, a fill, an image) also show what lies between them."""
    for line in ax.lines:
        if line.get_visible():
            markers_only = line.get_linestyle() in ("None", "none", "", " ")
            yield (f"line {line.get_label()!r}",
                   _axes_points(ax, line.get_transform(), line.get_xydata()), markers_only)
    for patch in _bars(ax):
        yield ("bar", _axes_points(ax, patch.get_transform(),
                                   [(0, 0), (1, 0), (0, 1), (1, 1)]), False)
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        offsets = coll.get_offsets()
        if offsets is not None and len(offsets) and np.any(np.asarray(offsets) != 0):
            yield (f"markers {coll.get_label()!r}",
                   _axes_points(ax, coll.get_offset_transform(), offsets), True)
        else:
            verts = [p.vertices for p in coll.get_paths() if len(p.vertices)]
            if verts:
                yield (f"collection {coll.get_label()!r}",
                       _axes_points(ax, coll.get_transform(), np.concatenate(verts)), False)
    for image in ax.images:
        if image.get_visible() and isinstance(image, AxesImage):
            x0, x1, y0, y1 = image.get_extent()
            yield "image", _axes_points(ax, ax.transData, [(x0, y0), (x1, y1)]), False


def _inside(points: np.ndarray) -> np.ndarray:
    return ((points >= -INSIDE) & (points <= 1 + INSIDE)).all(axis=1)


def _crosses(points: np.ndarray) -> bool:
    """Whether the segment or box the points span meets the view (a bar wider than the view)."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    return bool((lo <= 1 + INSIDE).all() and (hi >= -INSIDE).all())


def _bars(ax: Axes) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible()
            and p is not ax.patch]


def _renderer(fig):
    return fig._get_renderer() if hasattr(fig, "_get_renderer") else fig.canvas.get_renderer()


def _tick_labels(ax: Axes, which: str):
    """(text, extent) of the non-empty major tick labels of one axis at ticks in view."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    lo, hi = sorted(axis.get_view_interval())
    span = (hi - lo) or 1.0
    out = []
    for loc, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels()):
        if not (label.get_visible() and label.get_text().strip()):
            continue
        if not (lo - 1e-9 * span <= loc <= hi + 1e-9 * span):
            continue
        out.append((label.get_text(), label.get_window_extent(_renderer(ax.figure))))
    return out


def _overlaps(a, b) -> bool:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > OVERLAP_PX and h > OVERLAP_PX


def axes_defects(ax: Axes) -> list[str]:
    """What makes one drawn Axes show nothing or show it unreadably (empty when none)."""
    if not ax.get_visible() or not ax.axison:
        return []
    out = []
    for name, points, discrete in _data_artists(ax):
        if not len(points) or _inside(points).any() or (not discrete and _crosses(points)):
            continue
        out.append(f"{name}: all its data lie outside the axes' limits "
                   f"(x {_fmt(ax.get_xlim())}, y {_fmt(ax.get_ylim())})")
    bars = _bars(ax)
    if bars:
        in_view = []
        frame = ax.get_window_extent(_renderer(ax.figure))
        for bar in bars:
            box = bar.get_window_extent(_renderer(ax.figure))
            if box.x1 >= frame.x0 and box.x0 <= frame.x1 and box.y1 >= frame.y0 and box.y0 <= frame.y1:
                in_view.append(box)
        if in_view and all(min(b.width, b.height if b.height > 0 else math.inf) < 0.5
                           for b in in_view):
            out.append(f"{len(in_view)} bars in view, every one under half a pixel across "
                       f"(x {_fmt(ax.get_xlim())}, y {_fmt(ax.get_ylim())})")
    for which in ("x", "y"):
        labels = _tick_labels(ax, which)
        labels.sort(key=lambda t: (t[1].x0, t[1].y0) if which == "x" else (t[1].y0, t[1].x0))
        clashes = [(a[0], b[0]) for a, b in zip(labels, labels[1:]) if _overlaps(a[1], b[1])]
        if clashes:
            shown = ", ".join(f"{a!r}/{b!r}" for a, b in clashes[:3])
            out.append(f"{len(clashes)} overlapping {which} tick labels ({shown}"
                       f"{', …' if len(clashes) > 3 else ''})")
    return out


def _fmt(lim) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in lim) + "]"


def defects(fig) -> list[str]:
    """Every defect of every Axes of a figure, each prefixed with the axes' title."""
    if fig.canvas is not None:
        fig.draw_without_rendering()
    out = []
    for ax in fig.get_axes():
        title = ax.get_title() or ax.get_title(loc="left") or ax.get_ylabel() or "untitled axes"
        out.extend(f"axes {title!r}: {d}" for d in axes_defects(ax))
    return out


class FigureDefect(AssertionError):
    """A figure a cell drew shows nothing, or shows it unreadably."""


def install() -> None:
    """In a kernel: make every cell fail that draws a figure with a defect.

    Three pieces, all IPython's or matplotlib's own hooks: ``FigureCanvasBase.print_figure``
    is wrapped, so a figure turned into a PNG or SVG during the cell (``savefig``, a widget's
    snapshot, ``plt.show()``) is checked; an AST transformer ends every cell with a call that
    checks the pyplot figures still open (those the inline backend will show once the cell
    is done), keeping the cell's last expression as the value it shows; and ``pre_run_cell``
    starts each cell's list afresh (the inline backend prints the last cell's figures after it).
    The call raises :class:`FigureDefect` listing every defect, so the cell errors.
    """
    import ast

    import matplotlib.pyplot as plt
    from IPython import get_ipython
    from matplotlib.backend_bases import FigureCanvasBase

    shell = get_ipython()
    found: list[str] = []
    original = FigureCanvasBase.print_figure

    def print_figure(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        found.extend(defects(self.figure))
        return result

    def check() -> None:
        for number in plt.get_fignums():
            found.extend(defects(plt.figure(number)))
        if found:
            message = "\n".join(dict.fromkeys(found))
            found.clear()
            raise FigureDefect(message)

    class CheckAtTheEnd(ast.NodeTransformer):
        def visit_Module(self, node):
            body = list(node.body)
            tail = []
            if body and isinstance(body[-1], ast.Expr):
                last = body.pop()
                body.append(ast.Assign(targets=[ast.Name("_figure_check_last", ast.Store())],
                                       value=last.value))
                tail = [ast.Expr(ast.Name("_figure_check_last", ast.Load()))]
            call = ast.Expr(ast.Call(ast.Name("_figure_check", ast.Load()), [], []))
            node.body = body + [call] + tail
            return ast.fix_missing_locations(node)

    FigureCanvasBase.print_figure = print_figure
    shell.user_ns["_figure_check"] = check
    shell.user_ns_hidden["_figure_check"] = check
    shell.ast_transformers.append(CheckAtTheEnd())
    shell.events.register("pre_run_cell", lambda info: found.clear())
