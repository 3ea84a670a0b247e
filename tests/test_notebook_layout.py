"""The notebooks are numbered, titled, committed executed, and carry checked claims."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_numbered_titled_executed_and_checked(path):
    assert re.fullmatch(r"\d\d-[a-z0-9]+(-[a-z0-9]+)*\.ipynb", path.name), "NN-kebab-title"
    nb = json.loads(path.read_text())
    cells = nb["cells"]
    assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# ")
    code = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert code and all(c["execution_count"] for c in code), "commit it executed"
    counts = [c["execution_count"] for c in code]
    assert counts == sorted(counts), "executed top to bottom in one run"
    checked = [c for c in code if "".join(c["source"]).lstrip().startswith("# NBVAL_CHECK_OUTPUT")]
    assert checked, "cells that carry a claim are marked # NBVAL_CHECK_OUTPUT"
    assert all(c["outputs"] for c in checked), "a checked cell shows its figure"


def test_numbers_are_unique():
    numbers = [p.name[:2] for p in NOTEBOOKS]
    assert len(numbers) == len(set(numbers))
