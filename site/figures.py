"""A Sphinx extension: a figure wider than the text column is shown as tiles that wrap.

A notebook figure of three panels side by side is up to 1,600 px wide; the page's text column
is about 690 px on a desktop, so the browser shrank such a figure until its labels were 6 px
(05's three panels). When Sphinx reads a page, each figure in a cell's output that is wider
than :data:`WIDE` px is cut at its white gutters — the blank
columns between panels, and between a legend's entries — into tiles no wider than
:data:`FITS` px (:func:`tiles`), written beside the original PNG; the page shows them in rows
that wrap (``_static/ratelab.css``), each at its drawn size where the column holds it. A
figure with no gutter to cut at (one wide panel) is left whole. Nothing is redrawn and the
notebooks are not touched: the tiles are pieces of the stored PNG.

How a figure is cut (:func:`tiles`): its rows of ink are the bands between blank rows; the
tallest band (the panels) is cut at the widest gutters that leave pieces of at most FITS px,
and the bands close above and below it that keep those gutters blank (titles, tick labels,
axis labels) are cut with it. What is left above and below (a legend, a title) is cut the same way
on its own. So the panels stay whole with their titles and labels, and a legend's entries wrap.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from docutils import nodes

FITS = 690
"""No tile is wider than this (px), the desktop text column, when the figure can be cut so."""

SMALLEST = 0.6
"""On a desktop a figure is shown at no less than this of its drawn size: its 10-point labels
(about 14 px at the notebooks' 100 dpi) at 8 px or more."""

WIDE = round(FITS / SMALLEST)
"""A figure wider than this (px) is tiled: in the column it would be shown below SMALLEST.
(Narrower ones are not: a pair of panels that share a y axis keeps its tick labels on the
left panel only, and stacked they would leave the right one without numbers.)"""

GUTTER = 12
"""A blank run of columns at least this wide (px) may be cut: between panels, a legend's
entries (matplotlib's 2 em between entries) — not a marker and its label (0.8 em)."""

WHITE = 250
"""A pixel at least this light on every channel (0–255) is blank paper."""

Box = tuple[int, int, int, int]
"""(left, top, right, bottom) of a tile in the figure, in px."""


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The [start, end) runs of True in a 1-d boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def gutters(blank_columns: np.ndarray) -> list[tuple[int, int]]:
    """The [start, end) runs of blank columns at least GUTTER wide, not at the edges."""
    width = len(blank_columns)
    return [(s, e) for s, e in runs(blank_columns) if e - s >= GUTTER and s > 0 and e < width]


def cuts(blank_columns: np.ndarray) -> list[tuple[int, int]]:
    """The gutters to cut a strip at, left to right (its blank columns `blank_columns`): the
    widest within reach (ties: the rightmost), so that no piece is wider than FITS. Empty
    when the strip fits, or when it cannot be cut so."""
    width, found = len(blank_columns), gutters(blank_columns)
    out, at = [], 0
    while width - at > FITS:
        reach = [g for g in found if at < (g[0] + g[1]) // 2 <= at + FITS]
        if not reach:
            return []
        widest = max(e - s for s, e in reach)
        gutter = max((g for g in reach if g[1] - g[0] >= widest - 3), key=lambda g: g[0])
        out.append(gutter)  # about as wide as the widest: the rightmost
        at = (gutter[0] + gutter[1]) // 2
    return out


NARROWEST = 4
"""A title or a label above or below the panels may narrow a gutter to this (px) and still be
cut with them."""

APART = 20
"""A band of ink this far (px, blank rows) or farther from the panels is not theirs: a legend
or a figure's title, cut on its own (a panel's title and tick labels are a few px away)."""


def within(blank_columns: np.ndarray, gutter: tuple[int, int]) -> int | None:
    """Where to cut inside `gutter` on rows whose blank columns are `blank_columns`: the middle
    of the widest blank run there, if it is NARROWEST px or more; else None."""
    s, e = gutter
    found = [(b - a, (s + a + s + b) // 2) for a, b in runs(blank_columns[s:e])]
    widest = max(found, default=(0, None))
    return widest[1] if widest[0] >= NARROWEST else None


def tiles(image: np.ndarray) -> list[list[Box]]:
    """The rows of tiles a figure (an RGB(A) array, height x width) is shown as, top to
    bottom; ``[[the whole figure]]`` when it is not wider than WIDE or has no gutter."""
    height, width = image.shape[:2]
    whole = [[(0, 0, width, height)]]
    if width <= WIDE:
        return whole
    blank = (image[..., :3] >= WHITE).all(axis=2)
    bands = runs(~blank.all(axis=1))
    if not bands:
        return whole
    core = max(range(len(bands)), key=lambda i: bands[i][1] - bands[i][0])
    panel_gutters = cuts(blank[slice(*bands[core])].all(axis=0))
    if not panel_gutters:
        return whole

    def cut_at(lo: int, hi: int) -> list[int] | None:
        """Where rows [lo, hi) are cut along the panels' gutters; None if one is inked over."""
        columns = blank[lo:hi].all(axis=0)
        at = [within(columns, g) for g in panel_gutters]
        return None if None in at else at

    first = last = core
    while (first > 0 and bands[first][0] - bands[first - 1][1] < APART
           and cut_at(bands[first - 1][0], bands[last][1])):
        first -= 1
    while (last < len(bands) - 1 and bands[last + 1][0] - bands[last][1] < APART
           and cut_at(bands[first][0], bands[last + 1][1])):
        last += 1
    top = (bands[first - 1][1] + bands[first][0]) // 2 if first > 0 else 0
    bottom = (bands[last][1] + bands[last + 1][0]) // 2 if last < len(bands) - 1 else height
    rows = []
    for lo, hi, at in ((0, top, None), (top, bottom, cut_at(top, bottom)),
                       (bottom, height, None)):
        if hi <= lo or blank[lo:hi].all():
            continue
        if at is None:  # a legend or a title: cut at its own gutters, if it is too wide
            at = [(s + e) // 2 for s, e in cuts(blank[lo:hi].all(axis=0))]
        edges = [0, *at, width]
        rows.append([(x0, lo, x1, hi) for x0, x1 in zip(edges, edges[1:])])
    return rows


# ------------------------------------------------------------------ the Sphinx side


def tile_files(path: Path) -> list[list[Path]] | None:
    """Cut the PNG at `path` into tiles written beside it (``NAME.tile-R-C.png``); the rows of
    their paths, or None when it is shown whole."""
    from PIL import Image  # matplotlib's dependency; imported on the first figure only

    with Image.open(path) as im:
        if im.width <= WIDE:  # most figures: shown whole, never decoded
            return None
        rgb = im.convert("RGB")
    rows = tiles(np.asarray(rgb))
    if len(rows) == 1 and len(rows[0]) == 1:
        return None
    out = []
    for r, row in enumerate(rows):
        out.append([])
        for c, box in enumerate(row):
            tile = path.with_name(f"{path.stem}.tile-{r}-{c}.png")
            if not tile.exists():
                rgb.crop(box).save(tile, optimize=True)
            out[-1].append(tile)
    return out


def tile_figures(app, doctree) -> None:
    """Replace each wide figure of a cell's output by its rows of tiles (before Sphinx
    collects the page's images, so the tiles are copied like any figure)."""
    for image in list(doctree.findall(nodes.image)):
        uri = image.get("uri", "")
        if not uri.endswith(".png") or "://" in uri:
            continue
        _, path = app.env.relfn2path(uri, app.env.docname)  # "/x" is the source folder's x
        if not Path(path).is_file():
            continue
        rows = tile_files(Path(path))
        if rows is None:
            continue
        alt = image.get("alt", "figure")
        tiled = nodes.container(classes=["ratelab-tiles"])
        n, k = sum(len(row) for row in rows), 0
        for row in rows:
            line = nodes.container(classes=["ratelab-tile-row"])
            for tile in row:
                k += 1
                line += nodes.image(uri=uri[:-len(Path(uri).name)] + tile.name,
                                    alt=f"{alt} (part {k} of {n})")
            tiled += line
        image.replace_self(tiled)


def setup(app):
    app.connect("doctree-read", tile_figures, priority=400)  # before the image collector
    return {"parallel_read_safe": True, "parallel_write_safe": True}
