"""The log loaders on hand-made files: formats, gzip, malformed lines, disorder, clocks."""

from __future__ import annotations

import calendar
import gzip
import warnings

import numpy as np
import pytest

from ratelab.traces.loaders import LoadWarning, NoRequestsError, detect_format, load_log


def utc(*ymdhms):
    return float(calendar.timegm(ymdhms))


def write(tmp_path, name, lines, *, gz=False):
    data = "".join(line + "\n" for line in lines).encode("latin-1")
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def load_quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return load_log(path, progress=False, **kw)


CLF = [
    '199.72.81.55 - - [01/Jul/1995:00:00:01 -0400] "GET /history/apollo/ HTTP/1.0" 200 6245',
    'unicomp6.unicomp.net - - [01/Jul/1995:00:00:06 -0400] "GET /shuttle/ HTTP/1.0" 200 3985',
    '199.72.81.55 - - [01/Jul/1995:00:00:09 -0400] "GET /images/NASA-logosmall.gif" 304 -',
]


@pytest.mark.parametrize("gz", [False, True])
def test_clf_times_hosts_and_gzip_by_content(tmp_path, gz):
    path = write(tmp_path, "access.log", CLF, gz=gz)  # same name: gzip is seen, not guessed
    t = load_log(path, progress=False)
    np.testing.assert_array_equal(t.time, [utc(1995, 7, 1, 4, 0, 1), utc(1995, 7, 1, 4, 0, 6),
                                           utc(1995, 7, 1, 4, 0, 9)])
    np.testing.assert_array_equal(t.key, [0, 1, 0])
    assert list(t.key_names) == ["199.72.81.55", "unicomp6.unicomp.net"]
    r = t.meta["report"]
    assert (r.format, r.lines, r.requests, r.clients, r.malformed, r.out_of_order) == \
        ("clf", 3, 3, 2, 0, 0)
    assert r.clean


def test_combined_format_and_time_zones(tmp_path):
    lines = ['10.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326 '
             '"http://example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"',
             '10.0.0.2 - - [10/Oct/2000:21:00:00 +0000] "GET /b HTTP/1.1" 404 0 "-" "curl"',
             '10.0.0.3 - - [10/Oct/2000:23:30:00 +0130] "GET /c HTTP/1.1" 200 5 "-" "x\\"y"']
    t = load_log(write(tmp_path, "combined.log", lines), progress=False)
    np.testing.assert_array_equal(t.time, [utc(2000, 10, 10, 20, 55, 36),
                                           utc(2000, 10, 10, 21, 0, 0),
                                           utc(2000, 10, 10, 22, 0, 0)])


def test_epa_day_of_month_is_august_1995_edt(tmp_path):
    lines = ['141.243.1.172 [29:23:53:25] "GET /Software.html HTTP/1.0" 200 1497',
             'bastion.fdic.gov [30:09:36:04] "GET /enviro/gif/tris.gifalt= HTTP/1.0" 404',
             'a.b.c [30:09:36:05] "GET / HTTP/1.0" 200 -']
    t = load_log(write(tmp_path, "epa.txt", lines), progress=False)
    assert t.meta["report"].format == "epa"
    np.testing.assert_array_equal(t.time, [utc(1995, 8, 30, 3, 53, 25),
                                           utc(1995, 8, 30, 13, 36, 4),
                                           utc(1995, 8, 30, 13, 36, 5)])
    other = load_quiet(write(tmp_path, "epa2.txt", lines[:1] + ['a [01:00:00:00] "GET /" 200 1']),
                       format="epa",
                       epa_year=2001, epa_month=2, epa_utc_offset_h=0)
    assert other.meta["report"].malformed == 1  # 29 February 2001 does not exist


def test_nasa_tsv_header_and_epoch_seconds(tmp_path):
    lines = ["host\tlogname\ttime\tmethod\turl\tresponse\tbytes",
             "in24.inetnebr.com\t-\t807249601\tGET\t/shuttle/a.txt\t200\t1839\t\t",
             "uplherc.upl.com\t-\t807249607\tGET\t/\t304\t0\t\t",
             "uplherc.upl.com\t-\t8072496xx\tGET\t/\t304\t0\t\t"]
    t = load_quiet(write(tmp_path, "n.tsv", lines, gz=True))
    r = t.meta["report"]
    assert r.header and (r.lines, r.requests, r.clients, r.malformed) == (4, 2, 2, 1)
    assert r.malformed_examples == [(4, lines[3])]
    np.testing.assert_array_equal(t.time, [807249601.0, 807249607.0])


def test_nasa_tsv_bytes_unknown_is_a_request_as_in_clf(tmp_path):
    """CLF writes "-" for no bytes and the loader takes the line; the TSV must not drop it."""
    lines = ["host\tlogname\ttime\tmethod\turl\tresponse\tbytes",
             "a\t-\t807249601\tGET\t/\t304\t-",
             "b\t-\t807249602\tGET\t/\t200\tx"]
    r = load_quiet(write(tmp_path, "n.tsv", lines)).meta["report"]
    assert (r.requests, r.malformed) == (1, 1)
    assert r.malformed_examples == [(3, lines[2])]


def test_detect_format():
    assert detect_format(CLF[0]) == "clf"
    assert detect_format('h [29:23:53:25] "GET / HTTP/1.0" 200 1') == "epa"
    assert detect_format("host\tlogname\ttime\tmethod\turl\tresponse\tbytes\n") == "nasa-tsv"


def test_malformed_lines_are_counted_reported_and_warned(tmp_path):
    bad = ["",  # blank
           "garbage",
           'h - - [32/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # no 32 July
           'h - - [01/Jux/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # no such month
           'h - - [01/Jul/1995:24:00:01 -0400] "GET / HTTP/1.0" 200 1',  # hour 24
           'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 2000 1',  # status
           'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0 200 1',  # unclosed request
           'h - - [01/Jul/1995:00:00:01] "GET / HTTP/1.0" 200 1']  # no zone
    path = write(tmp_path, "mixed.log", [CLF[0], *bad, CLF[1]])
    with pytest.warns(LoadWarning, match="8 malformed lines") as w:
        t = load_log(path, progress=False, max_examples=3)
    r = t.meta["report"]
    assert (r.lines, r.requests, r.malformed) == (10, 2, 8)
    assert r.malformed_examples == [(2, ""), (3, "garbage"), (4, bad[2])]
    assert "\n" not in str(w[0].message)  # one line; the detail is in the report
    assert "line 3: 'garbage'" in str(r)
    assert len(t) == 2


def test_out_of_order_lines_are_counted_and_sorted_stably(tmp_path):
    lines = ['a [30:00:00:05] "GET / HTTP/1.0" 200 1',
             'b [30:00:00:04] "GET / HTTP/1.0" 200 1',   # back 1 s
             'c [30:00:00:04] "GET / HTTP/1.0" 200 1',   # a tie with b: keeps file order
             'd [30:00:00:06] "GET / HTTP/1.0" 200 1',
             'e [30:00:00:01] "GET / HTTP/1.0" 200 1']   # back 5 s
    with pytest.warns(LoadWarning, match="2 requests out of order"):
        t = load_log(write(tmp_path, "e.txt", lines), progress=False)
    r = t.meta["report"]
    assert r.out_of_order == 2 and t.meta["out_of_order"] == 2
    assert [n for n, _, _ in r.out_of_order_examples] == [2, 5]
    assert [t.name_of(k) for k in t.key] == ["e", "b", "c", "a", "d"]
    assert np.all(np.diff(t.time) >= 0)


def test_no_warning_for_a_clean_log(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_log(write(tmp_path, "ok.log", CLF), progress=False)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_file_that_yields_nothing_is_an_error_naming_it(tmp_path, engine):
    """Empty, binary, or every line malformed: one line saying what was read and what to try."""
    cases = {
        "empty.log": (b"", "it is empty \\(0 lines\\)"),
        "binary.dat": (bytes(range(256)) * 4, ".*NUL bytes: a binary file"),
        "other.log": (b"2026-01-01 GET /a\n2026-01-01 GET /b\n",
                      "2 lines, 2 malformed, first malformed line 1: '2026-01-01 GET /a'"),
    }
    for name, (data, what) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(NoRequestsError, match=f"{name}: no requests read as clf: {what}"
                           ".*Try another format \\(--format.*clf, epa, nasa-tsv, csv, tsv, "
                           "jsonl, parquet") as e:
            load_log(path, "clf", engine=engine, progress=False)
        assert "\n" not in str(e.value)
        assert isinstance(e.value, ValueError) and e.value.report.requests == 0


def test_auto_says_the_format_was_judged(tmp_path):
    with pytest.raises(ValueError, match="no requests read as clf \\(judged from its first"):
        load_log(write(tmp_path, "x.log", ["nothing like a log"]), progress=False)


@pytest.mark.parametrize("zone, ok", [("+0000", True), ("-1200", True), ("+1400", True),
                                      ("+0545", True), ("-0330", True), ("+0099", False),
                                      ("+9900", False), ("+1401", False), ("-1500", False),
                                      ("+0060", False)])
def test_time_zones_that_cannot_exist_are_malformed(tmp_path, zone, ok):
    line = f'h - - [01/Jul/1995:00:00:01 {zone}] "GET / HTTP/1.0" 200 1'
    path = write(tmp_path, "z.log", [CLF[0], line])
    for engine in ("fast", "reference"):
        r = load_quiet(path, engine=engine).meta["report"]
        assert r.malformed == (0 if ok else 1), (zone, engine)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="format"):
        load_log(write(tmp_path, "x.log", CLF), "json")
    with pytest.raises(ValueError, match="engine"):
        load_log(write(tmp_path, "x.log", CLF), "clf", engine="turbo")
    with pytest.raises(FileNotFoundError, match="nothere"):
        load_log(tmp_path / "nothere.log")


def test_auto_format_is_judged_by_most_of_the_first_lines(tmp_path):
    lines = ["", "### junk", 'a [30:00:00:05] "GET / HTTP/1.0" 200 1',
             'b [30:00:00:06] "GET / HTTP/1.0" 200 1']
    t = load_quiet(write(tmp_path, "epa-ish.txt", lines))
    r = t.meta["report"]
    assert (r.format, r.requests, r.malformed) == ("epa", 2, 2)
