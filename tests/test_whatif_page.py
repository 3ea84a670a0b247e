"""What-if's figures, tables and page (ratelab.whatif.figures, ratelab.whatif.page, --report),
read back from the matplotlib objects and the HTML, on the hand-made trace of test_whatif."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from figure_checks import defects  # noqa: E402
from ratelab.cli import main  # noqa: E402
from ratelab.plot import SERIES, STYLE  # noqa: E402
from ratelab.traces import Trace  # noqa: E402
from ratelab.whatif import figures as F  # noqa: E402
from ratelab.whatif import what_if  # noqa: E402
from ratelab.whatif.page import SECTIONS, page  # noqa: E402
from test_whatif import BUCKET, HAND, SHAPER, WINDOW  # noqa: E402

NOTHING = "token-bucket rate=100 capacity=100"  # limits no one in HAND
SMALL = ["what-if", "--dataset", "nasa-1995-07-clf-sample", "--policy",
         "token-bucket rate=0.2 capacity=5", "--no-progress"]


@pytest.fixture(autouse=True)
def no_figures_left():
    yield
    plt.close("all")


def bars(fig, color: str) -> list[tuple[float, float, float]]:
    """(left, right, height) of the bars of one colour, left to right."""
    (ax,) = fig.get_axes()
    rgba = matplotlib.colors.to_rgba(color)
    return sorted((p.get_x(), p.get_x() + p.get_width(), p.get_height()) for p in ax.patches
                  if isinstance(p, Rectangle) and p is not ax.patch
                  and np.allclose(p.get_facecolor(), rgba))


def test_limited_by_hour_draws_each_policy_inside_the_hours_it_counts():
    fig = F.limited_by_hour(what_if(HAND, [BUCKET, WINDOW]))
    assert defects(fig) == []
    bucket, window = bars(fig, SERIES[0]), bars(fig, SERIES[1])
    # the bucket limits 3 of A's 5 at 0 s and 2 of C's 4 at 7200 s; the window the same
    assert [h for _, _, h in bucket] == [3, 0, 2] == [h for _, _, h in window]
    for hour, (left, right, _) in enumerate(bucket):  # a numeric axis: hour h is [h, h + 1)
        assert hour <= left < right <= hour + 1
    assert all(b[0] >= a[1] - 1e-9 for a, b in zip(bucket, window))  # side by side
    assert fig.get_axes()[0].get_xlabel() == "hours from 0 s"


def test_a_log_of_dates_is_drawn_on_a_time_axis():
    t0 = 809_740_800.0  # 1995-08-30 00:00 UTC
    shifted = Trace(HAND.time + t0, HAND.key, key_names=HAND.key_names)
    fig = F.limited_by_hour(what_if(shifted, [BUCKET]))
    (ax,) = fig.get_axes()
    first = mdates.date2num(np.datetime64(int(t0), "s"))
    left, right, height = bars(fig, SERIES[0])[0]
    assert first <= left < right <= first + 1 / 24 and height == 3
    assert ax.get_xlabel() == "hour (UTC)" and defects(fig) == []


def test_the_backend_figure_shows_the_busiest_second_offered_and_admitted():
    fig = F.backend_by_hour(what_if(HAND, [BUCKET, SHAPER]))
    (ax,) = fig.get_axes()
    lines = {line.get_label().split(" (")[0]: line.get_ydata() for line in ax.get_lines()}
    assert list(lines["offered"][:3]) == [5, 1, 4]
    assert list(lines[f"{BUCKET}: admitted"][:3]) == [2, 1, 2]
    assert list(lines[f"{SHAPER}: admitted"][:3]) == [1, 1, 1]
    assert defects(fig) == []


def test_retry_after_keeps_its_gaps_on_a_numeric_axis():
    fig = F.retry_after(what_if(HAND, [BUCKET, WINDOW]))
    # the bucket says 1 s five times, the window 60 s five times: 59 empty seconds between
    ((left, right, n),) = bars(fig, SERIES[0])
    assert 0.5 <= left < right <= 1.5 and n == 5
    ((left, right, n),) = bars(fig, SERIES[1])
    assert 59.5 <= left < right <= 60.5 and n == 5
    assert fig.get_axes()[0].get_xlim()[0] == 0 and defects(fig) == []


def test_long_retry_afters_are_binned_by_whole_minutes():
    fig = F.retry_after(what_if(HAND, ["fixed-window limit=2 window=3600"]))
    # A's 3 and C's 2 refusals wait for the next hour: 3600 s, binned in 60 s
    ((left, right, n),) = bars(fig, SERIES[0])
    assert 3540.5 <= left < right <= 3600.5 and n == 5
    assert fig.get_axes()[0].get_xlabel() == "Retry-After (s), in bins of 60 s"
    assert defects(fig) == []
    # a day's window: A's 3 wait 86400 s, C's 2 wait 79200 s; 60 bins need 1440 s: 30 minutes
    fig = F.retry_after(what_if(HAND, ["fixed-window limit=2 window=86400"]))
    assert [n for _, _, n in bars(fig, SERIES[0])] == [2, 3]
    assert fig.get_axes()[0].get_xlabel() == "Retry-After (s), in bins of 1800 s"


def test_a_policy_that_limits_no_one_shows_dashes_not_nan():
    record = what_if(HAND, [NOTHING])
    for table in (F.summary(record), F.worst_minute(record), F.retry_after_stats(record),
                  F.backend(record)):
        assert table.notna().all().all()
        assert not table.map(lambda v: "nan" in str(v).lower()).any().any()
    assert F.summary(record).loc["worst minute", NOTHING] == "-"
    assert F.retry_after_stats(record).loc["median (s)", NOTHING] == "-"
    assert len(F.top_clients(record)) == 0
    for draw in (F.limited_by_hour, F.retry_after):
        fig = draw(record)
        assert defects(fig) == []
        (ax,) = fig.get_axes()
        assert any(t.get_text().startswith("no ") for t in ax.texts)  # said, not left blank


def test_tables_put_the_policies_side_by_side():
    record = what_if(HAND, [BUCKET, WINDOW])
    s = F.summary(record)
    assert list(s.columns) == [BUCKET, WINDOW]
    assert s.loc["requests limited", BUCKET] == "5" and s.loc["clients limited", WINDOW] == "2"
    top = F.top_clients(record)
    assert list(top.loc[BUCKET].index) == ["A", "C"]
    assert top.loc[(BUCKET, "A"), "requests limited"] == "3"
    assert F.retry_after_stats(record).loc["longest (s)", WINDOW] == "60"


def test_figures_are_drawn_in_the_suites_style_whatever_the_callers():
    with matplotlib.rc_context({"font.size": 30, "axes.grid": False}):
        fig = F.limited_by_hour(what_if(HAND, [BUCKET]))
    (ax,) = fig.get_axes()
    assert ax.title.get_fontsize() == STYLE["axes.titlesize"]
    assert ax.xaxis.label.get_fontsize() == STYLE["font.size"]
    assert fig.dpi == STYLE["figure.dpi"]


def test_the_page_has_every_section_and_fetches_nothing():
    text = page(what_if(HAND, [BUCKET, NOTHING], source="hand"))
    for anchor in SECTIONS:
        assert f'<section id="{anchor}">' in text
    assert text.count("<img ") == 3
    links = re.findall(r'(?:src|href)="([^"]*)"', text)
    assert links and all(u.startswith(("data:image/png;base64,", "#")) for u in links)
    assert "default-src 'none'" in text
    assert "nan" not in re.sub(r'src="[^"]*"', "", text).lower()


def test_cli_report_writes_the_page(tmp_path, capsys):
    out = tmp_path / "out.html"
    assert main([*SMALL, "--report", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.out.lstrip().startswith("{")  # the record is printed as before
    assert f"--report: wrote {out}" in captured.err
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'id="load-report"' in text
    assert out.stat().st_size < 400_000  # three PNGs at 110 dpi: about 130 KB here
    assert "NASA_access_log_Jul95_first1000.clf.gz" in text  # its load report


@pytest.mark.parametrize("where, words", [
    ("{tmp}", "is a folder"),
    ("{tmp}/none/out.html", "there is no folder"),
    ("{tmp}/a-file/out.html", "there is no folder"),
    ("{tmp}/" + "x" * 300 + ".html", "cannot write"),  # longer than any file system takes
])
def test_cli_report_to_a_path_it_cannot_write_is_one_line_before_any_work(
        tmp_path, capsys, where, words):
    (tmp_path / "a-file").write_text("")
    assert main([*SMALL, "--report", where.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report" in err[0] and words in err[0], err


def test_cli_report_that_cannot_be_written_exits_1_naming_it(tmp_path, capsys):
    path = tmp_path / "out.html"
    path.symlink_to(tmp_path / "gone" / "out.html")  # its folder vanished after the check
    assert main([*SMALL, "--report", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report: cannot write" in err[0] and "Traceback" not in err[0]
