"""Every notebook run under nbval checks the figures it draws (tests/figure_checks.py).

Right after nbval starts a notebook's kernel — the way nbval itself sets up coverage in it —
the kernel runs ``figure_checks.install()``: from then on a cell that draws a figure whose data
lie outside its axes, whose bars are invisible or whose tick labels overlap fails, and nbval
reports that cell with the defects. The notebooks are executed once, for nbval; the figures
are checked on the way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent / "tests"
INSTALL = (f"import sys as _s; _s.path.insert(0, {str(TESTS)!r}); import figure_checks as _f; "
           f"_s.path.remove({str(TESTS)!r}); _f.install(); del _s, _f")
"""Run in each notebook's kernel before its first cell; it leaves no name behind."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield
    notebook = item.parent
    kernel = getattr(notebook, "kernel", None)
    if kernel is None or getattr(notebook, "_figure_checks", False):
        return
    notebook._figure_checks = True
    msg_id = kernel.execute_cell_input(INSTALL, allow_stdin=False)
    kernel.await_idle(msg_id, 60)
    while (reply := kernel.get_message(stream="shell", timeout=60))["parent_header"].get(
            "msg_id") != msg_id:
        continue
    content = reply["content"]
    assert content["status"] == "ok", f"the figure checks did not install: {content}"
