"""The lessons show the decision, not the plumbing: no notebook reads a private name.

Code a learner reads in a lesson — the cells that print the package's source ("as the package
writes it") and every other — uses the package's public names only: the scalar arithmetic
(``take``, ``step``, ``passes``, ``blend``, ``advance`` …), the limiters' methods, and
``Limiter.state`` for what a limiter keeps. A name with a leading underscore reached through
an attribute or imported from a module is private, and fails here (dunders aside).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob(
    "[0-9][0-9]-*.ipynb"))
PRIVATE = re.compile(r"\.(_[A-Za-z]\w*)|\bimport\s+(_[A-Za-z]\w*)|\bimport\s+\(?[^)\n]*,\s*"
                     r"(_[A-Za-z]\w*)")


def private_names(code: str) -> list[str]:
    """The private names `code` reaches (``obj._x``, ``from m import _x``), dunders aside."""
    names = [next(g for g in m.groups() if g) for m in PRIVATE.finditer(code)]
    return [n for n in names if not (n.startswith("__") and n.endswith("__"))]


def test_the_scan_sees_a_private_name():
    assert private_names("print(inspect.getsource(LeakyBucket._check))") == ["_check"]
    assert private_names('log = lim._state["client"]') == ["_state"]
    assert private_names("from ratelab.traces.report import _utc") == ["_utc"]
    assert private_names("x.__class__; lim.state('a'); a._1") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_notebook_reads_a_private_name(path):
    cells = json.loads(path.read_text())["cells"]
    found = [(i, name) for i, c in enumerate(cells) if c["cell_type"] == "code"
             for name in private_names("".join(c["source"]))]
    assert not found, f"{path.name}: private names read in code cells: {found}"
