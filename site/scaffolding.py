"""A Sphinx extension: the notebooks' test scaffolding stays out of the website.

A code cell whose output nbval checks starts with a ``# NBVAL_CHECK_OUTPUT`` line (and a few
carry ``# NBVAL_SKIP`` or ``# NBVAL_IGNORE_OUTPUT``): a marker for the test run, nothing a
reader should see. Each notebook's first cell also says ``%matplotlib inline``, an instruction
to the kernel that a page does not run (and that search showed as the start of every
lesson's snippet). When Sphinx reads a notebook, before myst-nb renders it, every line that is
only such a marker or that magic is taken out of the code cells' source. The notebooks
themselves keep them; the outputs are not touched.
"""

from __future__ import annotations

import json
import re

MARKER = re.compile(r"^[ \t]*(# NBVAL_[A-Z_]+|%matplotlib inline)[ \t]*$")


def without_markers(source: str) -> str:
    """`source` (a code cell's) without its nbval marker lines and ``%matplotlib inline``."""
    return "".join(line for line in source.splitlines(keepends=True)
                   if not MARKER.match(line))


def strip_notebook(text: str) -> str:
    """A notebook's JSON text with the marker lines out of every code cell."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            cell["source"] = without_markers(source)
    return json.dumps(nb, ensure_ascii=False)


def source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".ipynb") and (
            "NBVAL_" in source[0] or "%matplotlib inline" in source[0]):
        source[0] = strip_notebook(source[0])


def setup(app):
    app.connect("source-read", source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
