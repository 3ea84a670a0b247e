"""The error analysis's page (ratelab.analysis.page, ``error-analysis --report``): its figures
read back from the matplotlib objects, its sections and tables from the HTML."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from figure_checks import defects  # noqa: E402
from ratelab.analysis.page import SECTIONS, page, relative_error, wrong_decisions  # noqa: E402
from ratelab.cli import main  # noqa: E402

NASA = ["error-analysis", "--dataset", "nasa-1995-07-clf-sample", "--no-progress"]


@pytest.fixture(autouse=True)
def no_figures_left():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def record():
    """The record of the shipped NASA sample at three peak quantiles (two give limit 12)."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main([*NASA, "--json"]) == 0
    return json.loads(buf.getvalue())


def heights(fig) -> list[float]:
    (ax,) = fig.get_axes()
    return [p.get_height() for p in ax.patches if isinstance(p, Rectangle) and p is not ax.patch]


def test_wrong_decisions_stack_false_allows_under_false_rejects(record):
    fig = wrong_decisions(record)
    assert defects(fig) == []
    first = record["results"][0]["modes"]
    got = heights(fig)
    # per mode: a false-allow bar per limit, a false-reject bar stacked on each
    for mode in ("estimate", "admission"):
        for key in ("false_allows_pct", "false_rejects_pct"):
            assert np.isclose(got, first[mode][key]).any(), (mode, key)
    labels = [t.get_text() for t in fig.get_axes()[0].get_xticklabels()]
    assert labels == ["limit 9 (p90)", "limit 12 (p99)", "limit 12 (p99.9)"]


def test_the_error_distribution_shows_every_statistic_of_every_limit_and_mode(record):
    fig = relative_error(record)
    assert defects(fig) == []
    est = record["results"][0]["modes"]["estimate"]
    got = heights(fig)
    assert len(got) == 5 * 3 * 2  # 5 statistics, 3 limits, 2 modes
    for key in ("mean_relative_error_pct", "p99_relative_error_pct", "max_relative_error_pct"):
        assert np.isclose(got, est[key]).any(), key
    (ax,) = fig.get_axes()
    assert ax.get_yscale() == "symlog" and ax.get_ylim()[0] == 0  # a median of 0 is shown


def test_the_page_has_every_section_and_every_limit(record):
    text = page(record)
    for anchor in SECTIONS:
        assert f'<section id="{anchor}">' in text
    for r in record["results"]:
        assert f"limit {r['limit']:g} per 60 s (the {100 * r['quantile']:g}th percentile" in text
    assert record["command"] in text and "NASA_access_log_Jul95_first1000.clf.gz" in text
    links = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert all(u.startswith(("data:image/png;base64,", "#")) for u in links)


def test_nothing_wrong_is_said_on_the_figures():
    r = {"limit": 100.0, "window_s": 60.0, "modes": {"estimate": {
        k: 0 for k in ("false_allows_pct", "false_rejects_pct", "mean_relative_error_pct",
                       "p50_relative_error_pct", "p99_relative_error_pct",
                       "p99_9_relative_error_pct", "max_relative_error_pct")}}}
    for draw in (wrong_decisions, relative_error):
        fig = draw(r)
        (ax,) = fig.get_axes()
        assert defects(fig) == [] and [t.get_text() for t in ax.texts]
        assert np.allclose(heights(fig), 0)


def test_cli_report_of_a_synthetic_population(tmp_path, capsys):
    out = tmp_path / "ea.html"
    assert main(["error-analysis", "--synthetic", "--sources", "40", "--requests", "2000",
                 "--no-progress", "--report", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"--report: wrote {out}" in err
    text = out.read_text(encoding="utf-8")
    assert "A synthetic population: no log was read" in text
    assert "ratelab error-analysis --synthetic --sources 40 --requests 2000" in text


def test_cli_report_to_a_folder_is_one_line(tmp_path, capsys):
    assert main([*NASA, "--report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report" in err[0] and "is a folder" in err[0]


def test_the_page_names_the_counter_it_measured(record):
    """A HAProxy run's page says HAProxy's counter (it once said the sliding window counter
    whatever --counter was)."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main([*NASA, "--counter", "haproxy", "--json"]) == 0
    haproxy = page(json.loads(buf.getvalue()))
    assert "HAProxy&#x27;s counter" in haproxy or "HAProxy's counter" in haproxy
    assert "HAProxy" not in page(record) and "calendar-aligned" in page(record)
