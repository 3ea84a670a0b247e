"""Swimlane diagrams read at the size shown: 10 pt text, a legend for the arrows, full width."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from ratelab.cluster.experiments import both_read_99  # noqa: E402
from ratelab.cluster.swimlane import LABEL_PT, swimlane, swimlanes  # noqa: E402


def texts(fig):
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]


def test_a_swimlane_has_10pt_text_and_a_legend_for_its_arrows():
    run = both_read_99("naive")
    ax = swimlane(run.commands, run.decisions, title="naive")
    fig = ax.figure
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in texts(fig)]
    assert sizes and min(sizes) >= LABEL_PT >= 10
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("request" in s for s in labels) and any("reply" in s for s in labels)
    styles = {h.get_linestyle() for h in ax.get_legend().legend_handles[:2]}
    assert styles == {"-", "--"}  # the reply arrows are the dashed ones, as drawn
    assert fig.get_figwidth() * fig.dpi >= 600
    plt.close(fig)


def test_runs_compared_are_stacked_at_full_width():
    runs = [both_read_99(name) for name in ("incr", "lua")]
    fig = swimlanes([(r.commands, r.decisions, f"{name}: admitted {r.admitted}")
                     for name, r in zip(("incr", "lua"), runs)])
    axes = fig.get_axes()
    assert len(axes) == 2
    for ax in axes:  # each panel at least 600 px wide at the figure's own dpi, not ~330
        assert ax.get_position().width * fig.get_figwidth() * fig.dpi >= 600
    assert axes[0].get_shared_x_axes().joined(axes[0], axes[1])
    assert sum(ax.get_legend() is not None for ax in axes) == 1
    plt.close(fig)
