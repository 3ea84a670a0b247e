"""ratelab.page: a figure embedded at its drawn size, tables escaped, a page that fetches
nothing."""

from __future__ import annotations

import base64
import re
import struct

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ratelab.page import MIN_SCALE, document, figure_html, table_html  # noqa: E402


def test_a_figure_is_its_own_png_shown_no_smaller_than_min_scale():
    fig, ax = plt.subplots(figsize=(8.0, 3.0), dpi=110)
    ax.plot([0, 1], [0, 1])
    html = figure_html(fig, 'a "line"')
    assert not plt.get_fignums()  # closed: a page keeps no figure open
    src = re.search(r'src="data:image/png;base64,([^"]+)"', html).group(1)
    png = base64.b64decode(src)
    assert png.startswith(b"\x89PNG") and struct.unpack(">II", png[16:24]) == (880, 330)
    assert 'width="880" height="330"' in html and "max-width: 880px" in html
    assert f"min-width: {round(MIN_SCALE * 880)}px" in html
    assert 'alt="a &quot;line&quot;"' in html


def test_a_table_is_escaped_and_its_index_named_in_the_corner():
    df = pd.DataFrame({"<b>policy</b>": {"x": "1 & 2"}}).rename_axis("client")
    html = table_html(df, caption="top <clients>")
    assert "<b>policy</b>" not in html and "&lt;b&gt;policy&lt;/b&gt;" in html
    assert "1 &amp; 2" in html and "<caption>top &lt;clients&gt;</caption>" in html
    assert html.count("<tr") == 2  # the header (the index's name in its corner) and one row
    assert html.startswith('<div class="table">')


def test_a_document_lists_its_sections_and_allows_no_other_source():
    text = document("What <if>", ["a line"], [("one", "One", "<p>1</p>"),
                                              ("two", "Two", "<p>2</p>")])
    assert "<title>What &lt;if&gt;</title>" in text
    assert '<a href="#one">One</a>' in text and '<section id="two"><h2>Two</h2>' in text
    assert re.search(r'Content-Security-Policy" content="default-src \'none\'; img-src data:;',
                     text)
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in text
