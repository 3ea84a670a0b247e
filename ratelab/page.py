"""One self-contained HTML page: figures embedded as PNG, tables, and a style of its own.

A page built here fetches nothing: its figures are PNG data in the page itself, its style is
inline, and its Content-Security-Policy forbids every other source, so a browser opening it
from a file sends no request. It reads on a phone (390 px) and on a desktop (1280 px):

* a figure is shown at its drawn size where it fits, never below :data:`MIN_SCALE` of it — on
  a narrow screen its box scrolls sideways instead, and the page itself does not;
* a table scrolls sideways in its box; figures and tables that compare candidates stand side
  by side where there is room (:func:`side_by_side`) and one under the other where there is not.

    >>> sections = [("summary", "Summary", table_html(df)),             # doctest: +SKIP
    ...             ("when", "When", figure_html(fig, "requests by hour"))]
    >>> write("out.html", document("What if", ["47,748 requests"], sections))  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import html
import io
import struct
from pathlib import Path

import matplotlib.pyplot as plt

MIN_SCALE = 0.7
"""The smallest a figure is shown, as a share of its drawn width: text drawn at 10 pt on a
110 dpi PNG (15 px) stays above 10 px; below it, the figure's box scrolls."""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
"""The page's Content-Security-Policy: images from the page's own data, its inline style,
nothing else (no script, font, frame or request of any kind)."""

STYLE = """
:root { color-scheme: light; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #212121;
       margin: 0 auto; max-width: 72rem; padding: 0 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 1.2rem 0 0.3rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid #ddd; }
h3 { font-size: 1rem; margin: 1rem 0 0.3rem; overflow-wrap: anywhere; }
p, li { max-width: 48rem; }
.meta { color: #555; margin: 0.1rem 0; overflow-wrap: anywhere; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; padding: 0; list-style: none; }
.figure { overflow-x: auto; margin: 0.5rem 0 1rem; }
.figure img { display: block; width: 100%; height: auto; }
.table { overflow-x: auto; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.9rem; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #e0e0e0; vertical-align: top; }
td { text-align: right; white-space: nowrap; }
th { text-align: left; font-weight: 600; }
tbody th { white-space: nowrap; position: sticky; left: 0; background: #fff; }
@media (max-width: 40rem) { tbody th { white-space: normal; min-width: 7rem; } }
thead th { border-bottom: 2px solid #bbb; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
code { overflow-wrap: anywhere; }
.side { display: grid; gap: 0 1.5rem;
        grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); }
.side > div { min-width: 0; }
.load-report td { text-align: left; white-space: normal; overflow-wrap: anywhere; }
.warning { color: #c62828; }
"""


def figure_html(fig, alt: str) -> str:
    """The matplotlib figure `fig` as a PNG inside the page (at the figure's dpi), in a box
    that scrolls when the screen is narrower than :data:`MIN_SCALE` of it; `fig` is closed
    (pyplot forgets it)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi)
    plt.close(fig)
    data = buf.getvalue()
    width, height = struct.unpack(">II", data[16:24])  # the PNG's IHDR: width, height
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return (f'<div class="figure"><img src="{src}" alt="{html.escape(alt)}" width="{width}" '
            f'height="{height}" style="max-width: {width}px; '
            f'min-width: {round(MIN_SCALE * width)}px"></div>')


def table_html(df, caption: str = "") -> str:
    """A pandas DataFrame as a table in a box that scrolls sideways (every cell escaped; the
    index's name in the header's corner, not on a row of its own)."""
    if df.index.nlevels == 1 and df.index.name is not None and df.columns.name is None:
        df = df.rename_axis(index=None, columns=df.index.name)
    table = df.to_html(border=0, escape=True, na_rep="-")
    if caption:
        table = table.replace(">", f"><caption>{html.escape(caption)}</caption>", 1)
    return f'<div class="table">{table}</div>'


def side_by_side(parts: list[tuple[str, str]]) -> str:
    """(title, HTML) of each candidate, side by side where there is room."""
    cells = "".join(f"<div><h3>{html.escape(title)}</h3>{body}</div>" for title, body in parts)
    return f'<div class="side">{cells}</div>'


def paragraph(text: str, cls: str = "") -> str:
    """`text` (plain, escaped) as a paragraph."""
    attr = f' class="{cls}"' if cls else ""
    return f"<p{attr}>{html.escape(text)}</p>"


def document(title: str, meta: list[str], sections: list[tuple[str, str, str]]) -> str:
    """The whole page: `title`, lines of `meta` under it, a list of the sections, then each
    section (anchor, heading, HTML) in turn."""
    e = html.escape
    nav = "".join(f'<li><a href="#{e(a)}">{e(h)}</a></li>' for a, h, _ in sections)
    body = "\n".join(f'<section id="{e(a)}"><h2>{e(h)}</h2>\n{part}</section>'
                     for a, h, part in sections)
    lines = "".join(paragraph(m, "meta") for m in meta)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{e(title)}</title>\n<style>{STYLE}</style></head>\n"
            f"<body><header><h1>{e(title)}</h1>{lines}<nav><ul>{nav}</ul></nav></header>\n"
            f"{body}\n</body></html>\n")


def write(path, text: str) -> int:
    """Write the page `text` to `path` (UTF-8); its size in bytes."""
    data = text.encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)
