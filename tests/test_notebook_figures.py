"""Every figure the notebooks draw shows its data, with readable tick labels.

How the figures are collected: nbval already executes every notebook (``make test``). Right
after it starts a notebook's kernel, ``conftest.py`` at the root of the checkout runs
:func:`figure_checks.install` in it, which wraps ``FigureCanvasBase.print_figure`` (the call
every figure goes through when it becomes a PNG or SVG: ``savefig``, a widget's snapshot,
``plt.show()``) and ends every cell, by an IPython AST transformer, with a check of the pyplot
figures still open (those the inline backend shows once the cell is done). A figure with a
defect makes its cell raise :class:`figure_checks.FigureDefect`, so nbval fails that cell and
prints the defects; no notebook is executed twice for it. The checks are on the matplotlib
objects, never the pixels: a data artist with all its data outside its axes' limits, bars all
under half a pixel across, and overlapping tick labels (window extents after a draw).

Here, in the fast lane: each check on a made-up figure that must fail and on one that must pass,
and the kernel hook itself in an IPython shell, failing a cell that draws a defective figure.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import figure_checks  # noqa: E402


# ---------------------------------------------------------------- the checks, on made-up figures


def drawn(fig):
    found = figure_checks.defects(fig)
    plt.close(fig)
    return found


def test_data_inside_the_limits_passes():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 3, 2])
    ax.bar([0, 1, 2], [1, 2, 3])
    ax.scatter([0.5], [2])
    ax.axhline(2)
    ax.set_yscale("log")
    assert drawn(fig) == []


def test_a_line_outside_the_limits_fails():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="inside")
    ax.plot([0, 1], [5, 6], label="above")
    ax.set_ylim(0, 1)
    found = drawn(fig)
    assert len(found) == 1 and "line 'above'" in found[0] and "outside" in found[0]


def test_a_line_crossing_the_view_passes():
    fig, ax = plt.subplots()
    ax.plot([-10, 10], [-10, 10])
    ax.set(xlim=(-1, 1), ylim=(-1, 1))
    assert drawn(fig) == []


def test_markers_outside_the_limits_fail():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.scatter([-5, 5], [0.5, 0.5], label="dots")
    ax.set_xlim(0, 1)
    found = drawn(fig)
    assert len(found) == 1 and "markers 'dots'" in found[0]


def test_stacked_tick_labels_fail():
    fig, ax = plt.subplots()
    ax.bar(range(10), range(10))
    ax.set_xticks([0, 0.001, 0.002], ["first label", "second label", "third"])
    found = drawn(fig)
    assert len(found) == 1 and "2 overlapping x tick labels" in found[0]


def test_invisible_bars_fail():
    """pandas 3 draws a datetime-indexed bar chart at its periods' ordinals; set_xticks at
    0..n-1 then stretches the view from 0 to there: bars in view, a hundred-thousandth wide."""
    index = pd.date_range("1995-08-30", periods=24, freq="h")
    frame = pd.DataFrame({"a": np.arange(24), "b": np.arange(24)[::-1]}, index=index)
    ax = frame.plot.bar(figsize=(9, 3.5), width=0.8)
    ax.set_xticks(range(len(frame)), [t.strftime("%H:00") for t in frame.index])
    found = drawn(ax.figure)
    assert any("under half a pixel" in d for d in found), found
    assert any("overlapping x tick labels" in d for d in found), found


def test_the_same_chart_by_position_passes():
    index = pd.date_range("1995-08-30", periods=24, freq="h")
    frame = pd.DataFrame({"a": np.arange(24), "b": np.arange(24)[::-1]}, index=index)
    frame.index = [t.strftime("%H") for t in frame.index]
    ax = frame.plot.bar(figsize=(9, 3.5), width=0.8, rot=0)
    assert drawn(ax.figure) == []


@pytest.fixture
def shell():
    """An IPython shell with the figure checks installed (the kernel's, without the kernel)."""
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.backend_bases import FigureCanvasBase

    original = FigureCanvasBase.print_figure
    sh = InteractiveShell.instance()
    sh.run_cell("import matplotlib.pyplot as plt")
    figure_checks.install()
    try:
        yield sh
    finally:
        FigureCanvasBase.print_figure = original
        sh.ast_transformers.clear()
        plt.close("all")
        InteractiveShell.clear_instance()


BROKEN = "fig, ax = plt.subplots()\nax.plot([0, 1], [5, 6], label='above')\nax.set_ylim(0, 1)\n"


def test_a_cell_drawing_a_defective_figure_fails(shell):
    result = shell.run_cell(BROKEN + "fig")
    assert isinstance(result.error_in_exec, figure_checks.FigureDefect)
    assert "line 'above': all its data lie outside" in str(result.error_in_exec)


def test_a_figure_saved_during_a_cell_is_checked_too(shell):
    result = shell.run_cell(BROKEN + "import io; fig.savefig(io.BytesIO()); plt.close(fig)")
    assert isinstance(result.error_in_exec, figure_checks.FigureDefect)


def test_a_good_cell_keeps_its_value(shell):
    result = shell.run_cell("fig, ax = plt.subplots()\nax.plot([0, 1], [0, 1])\n6 * 7")
    assert result.error_in_exec is None and result.result == 42
    plt.close("all")
