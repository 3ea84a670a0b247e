"""The compiled EPA-HTTP and NASA TSV readers against the reference: the same trace and
report, on the recorded traces, hand-made good and bad lines, and random ones."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, strategies as st
from budget import examples
from readers import assert_same, both

from ratelab.traces import fastclf
from ratelab.traces.loaders import load_log


@pytest.mark.parametrize("file, fmt, requests", [("epa-http.txt.gz", "epa", 47_748),
                                                 ("nasa_19950801.tsv.gz", "nasa-tsv", None)])
def test_recorded_traces_read_alike(data_dir, file, fmt, requests):
    fast, ref = both(data_dir / file, fmt, max_examples=50)
    assert_same(fast, ref)
    if requests is not None:
        assert len(fast) == requests


def test_auto_engine_is_the_fast_one(data_dir, monkeypatch):
    """engine="auto" reads EPA and TSV with the kernel (a kernel that fails shows it)."""
    def broken(*a, **k):
        raise RuntimeError("the kernel was called")

    monkeypatch.setattr(fastclf, "read_log", broken)
    for file in ["epa-http.txt.gz", "nasa_19950801.tsv.gz"]:
        with pytest.raises(RuntimeError, match="kernel was called"):
            load_log(data_dir / file, progress=False, warn=False)
        load_log(data_dir / file, engine="reference", progress=False, warn=False)


EPA_GOOD = '141.243.1.172 [29:23:53:25] "GET /Software.html HTTP/1.0" 200 1497'
EPA_LINES = [
    EPA_GOOD,
    'bastion.fdic.gov [30:09:36:04] "GET /enviro/gif/tris.gifalt= HTTP/1.0" 404',  # no bytes
    'a [30:09:36:05] "GET / HTTP/1.0" 200 -',
    'a [31:00:00:00] "GET / HTTP/1.0" 200 1',
    'a [32:00:00:00] "GET / HTTP/1.0" 200 1',  # no 32 August
    'a [00:00:00:00] "GET / HTTP/1.0" 200 1',
    'a [01:24:00:00] "GET / HTTP/1.0" 200 1',
    'a [01:23:60:00] "GET / HTTP/1.0" 200 1',
    'a [01:23:59:60] "GET / HTTP/1.0" 200 1',  # a leap second: taken
    'a [01:23:59:61] "GET / HTTP/1.0" 200 1',
    'a [1:23:59:59] "GET / HTTP/1.0" 200 1',
    'a [01:23:59:59] "GET / HTTP/1.0" 2000 1',
    'a [01:23:59:59] "GET / HTTP/1.0" 200 1x',
    'a [01:23:59:59] "GET / HTTP/1.0" 200 1 ',  # trailing space: \s* takes it
    'a [01:23:59:59] "GET / HTTP/1.0" 200\t',
    'a [01:23:59:59] "GET / HTTP/1.0" 200 1\xa0',
    'a [01:23:59:59] "GET / HTTP/1.0 200 1',
    'a [01:23:59:59] "" 200 1',
    'a [01:23:59:59] " 200 1',  # one quote only
    'a [01:23:59:59] "GET /a" 200 1" 404 2',  # quotes in the request
    'a [01:23:59:59] "GET /\x00\x85" 200 1',
    'a [01:23:59:59] "GET /" 200 -5',
    'a [01:23:59:59] "GET /" 200 - ',
    'a [01:23:59:59]  "GET /" 200 1',
    'a  [01:23:59:59] "GET /" 200 1',
    'h\xe9 [01:23:59:59] "GET /" 200 1',  # latin-1 host
    'h\x1c [01:23:59:59] "GET /" 200 1',  # \x1c is \s
    '[01:23:59:59] "GET /" 200 1',
    "", " ", "garbage",
]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("month", [(1995, 8), (2001, 2)])
def test_epa_hand_made_lines(tmp_path, ending, month):
    lines = [x for i, line in enumerate(EPA_LINES)
             for x in (line, EPA_GOOD.replace("141.243.1.172", f"10.0.0.{i}"))]
    path = tmp_path / "epa.txt.gz"
    path.write_bytes(gzip.compress(ending.join(lines).encode("latin-1")))
    fast, ref = both(path, "epa", max_examples=100, epa_year=month[0], epa_month=month[1],
                     epa_utc_offset_h=5.75)
    assert_same(fast, ref)
    r = fast.meta["report"]
    assert r.lines == len(lines)
    # 18 of EPA_LINES are malformed in August 1995; in February 2001 the 29th to 31st are
    # too, and so is every copy of EPA_GOOD (the 29th) between them
    assert r.malformed == {(1995, 8): 18, (2001, 2): 18 + 4 + len(EPA_LINES)}[month]


TSV_GOOD = "in24.inetnebr.com\t-\t807249601\tGET\t/shuttle/a.txt\t200\t1839\t\t"
TSV_LINES = [
    TSV_GOOD,
    "a\t-\t807249601\tGET\t/\t304\t-",
    "a\t-\t807249601\tGET\t/\t304\t0",
    "a\tx y\t0807249601\t\t\t200\t0\t",  # empty method and url; a leading zero
    "a\t-\t8072496xx\tGET\t/\t304\t0\t\t",
    "a\t-\t 807249601\tGET\t/\t304\t0",  # int() takes spaces: the reference reads it
    "a\t-\t+807249601\tGET\t/\t304\t0",
    "a\t-\t807_249_601\tGET\t/\t304\t0",
    "a\t-\t-807249601\tGET\t/\t304\t0",
    "a\t-\t\tGET\t/\t304\t0",
    "a\t-\t807249601\tGET\t/\t304",
    "a\t-\t807249601\tGET\t/\t304\t",
    "a\t-\t807249601\tGET\t/\t30x\t0",
    "a\t-\t807249601\tGET\t/\t304\t--",
    "a\t-\t807249601\tGET\t/\t304\t0\tx",
    "a\t-\t807249601\tGET\t/\t304\t0\t\t\t\t",
    "a\t-\t1234567890123456789012\tGET\t/\t304\t0",  # past int64: the reference reads it
    "\t-\t807249601\tGET\t/\t304\t0",
    "h\xe9 x\t-\t807249601\tGET\t/\t304\t0",  # latin-1 and a space in the host
    "host\tlogname\ttime\tmethod\turl\tresponse\tbytes",  # a header not on line 1
    "", " ", "garbage",
]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("header", [True, False])
def test_tsv_hand_made_lines(tmp_path, ending, header):
    lines = [x for i, line in enumerate(TSV_LINES)
             for x in (line, TSV_GOOD.replace("in24", f"h{i}"))]
    if header:
        lines.insert(0, "host\tlogname\ttime\tmethod\turl\tresponse\tbytes")
    path = tmp_path / "n.tsv"
    path.write_bytes(ending.join(lines).encode("latin-1"))
    fast, ref = both(path, "nasa-tsv", max_examples=100)
    assert_same(fast, ref)
    r = fast.meta["report"]
    assert (r.lines, r.header) == (len(lines), header)
    assert r.malformed == 12  # the header as line 1 is not malformed, elsewhere it is


def test_lines_split_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(fastclf, "BLOCK", 7)
    for fmt, lines in [("epa", EPA_LINES), ("nasa-tsv", TSV_LINES)]:
        path = tmp_path / f"{fmt}.gz"
        text = "\r\n".join(lines * 3) + "\r" + "\n".join(lines)
        path.write_bytes(gzip.compress(text.encode("latin-1")))
        fast, ref = both(path, fmt, max_examples=500)
        assert_same(fast, ref)


epa_parts = st.lists(st.sampled_from([
    "a", "10.0.0.1", " ", "[", "]", ":", '"', "01", "31", "29", "23", "59", "60", "7",
    "GET / HTTP/1.0", "200", "404", "12", "-", "\t", "\xa0", "\x85", "é", "\r", "\n",
    "\r\n", "x", "0",
]), max_size=25)

tsv_parts = st.lists(st.sampled_from([
    "a", "10.0.0.1", "\t", "-", "807249601", "0", "GET", "/", "200", "304", " ", "+", "_",
    "\xa0", "é", "\r", "\n", "\r\n", "x", "1234567890123456789",
]), max_size=25)


@pytest.mark.parametrize("fmt, pieces, good", [("epa", epa_parts, EPA_GOOD),
                                               ("nasa-tsv", tsv_parts, TSV_GOOD)])
@examples(60)
@given(data=st.data())
def test_random_lines_read_alike(tmp_path_factory, fmt, pieces, good, data):
    """Lines built from the format's pieces, well formed or not: the two readers agree."""
    parts = data.draw(st.lists(pieces, max_size=30))
    path = tmp_path_factory.mktemp("fuzz") / "f.log"
    text = "\n".join("".join(p) for p in parts) + "\n" + good
    path.write_bytes(text.encode("latin-1"))
    assert_same(*both(path, fmt, max_examples=1000))


@pytest.mark.parametrize("file, fmt", [("epa-http.txt.gz", "epa"),
                                       ("nasa_19950801.tsv.gz", "nasa-tsv")])
def test_the_kernel_reads_plain_lines_itself(data_dir, file, fmt):
    """The reference parser is asked only about the lines the kernel doubts: in the
    recorded traces, the malformed ones and a handful of others (the TSV's header is
    recognised without it)."""
    from ratelab.traces.report import LoadReport, _epa_month, _epa_parser, _nasa_tsv_parser

    asked = []
    ref = _epa_parser(1995, 8, -4 * 3600) if fmt == "epa" else _nasa_tsv_parser()

    def parse(line):
        asked.append(line)
        return ref(line)

    report = LoadReport(file, fmt)
    time, key, line_no, names = fastclf.read_log(data_dir / file, fmt, parse, report, 5,
                                                 False, *_epa_month(1995, 8, -4 * 3600))
    assert len(time) > 1000
    assert len(asked) <= report.malformed + 0.001 * report.lines
