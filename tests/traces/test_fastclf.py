"""The fast CLF reader against the reference: the same trace and report, line for line."""

from __future__ import annotations

import gzip
from datetime import datetime

import numpy as np
import pytest
from hypothesis import given, strategies as st
from budget import examples
import readers
from readers import assert_same

from ratelab.traces import fastclf, fastscan
from ratelab.traces.loaders import load_log


def both(path, **kw):
    return readers.both(path, "clf", **kw)


@pytest.mark.parametrize("file", ["NASA_access_log_Jul95_first1000.clf.gz",
                                  "NASA_access_log_Aug95_first1000.clf.gz",
                                  "elastic_apache_logs.gz"])
def test_every_recorded_clf_trace(data_dir, file):
    fast, ref = both(data_dir / file, max_examples=20)
    assert_same(fast, ref)
    assert len(fast) == {"elastic_apache_logs.gz": 10_000}.get(file, 1_000)


@pytest.mark.parametrize("file", ["epa-http.txt.gz", "nasa_19950801.tsv.gz"])
def test_other_formats_read_as_clf_are_all_malformed_alike(data_dir, file):
    """Not CLF at all: every line goes to the reference, and nothing is read."""
    with pytest.raises(ValueError, match="no requests read as clf") as a:
        load_log(data_dir / file, "clf", engine="fast", progress=False)
    with pytest.raises(ValueError, match="no requests read as clf") as b:
        load_log(data_dir / file, "clf", engine="reference", progress=False)
    assert str(a.value) == str(b.value)


GOOD = '199.72.81.55 - - [01/Jul/1995:00:00:01 -0400] "GET /history/apollo/ HTTP/1.0" 200 6245'
BAD = [
    "", " ", "garbage",
    'h - - [32/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # no 32 July
    'h - - [29/Feb/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # not a leap year
    'h - - [29/Feb/1996:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # a leap year: fine
    'h - - [01/Jux/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',
    'h - - [01/jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/0000:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # no year 0
    'h - - [01/Jul/1995:24:00:01 -0400] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:23:60:01 -0400] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:23:59:60 -0400] "GET / HTTP/1.0" 200 1',  # a leap second: taken
    'h - - [01/Jul/1995:23:59:61 -0400] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:00:00:01 +0099] "GET / HTTP/1.0" 200 1',  # no such zone
    'h - - [01/Jul/1995:00:00:01 +9900] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:00:00:01 +1400] "GET / HTTP/1.0" 200 1',  # Kiribati: fine
    'h - - [01/Jul/1995:00:00:01 -1401] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:00:00:01 +0545] "GET / HTTP/1.0" 200 1',  # Nepal: fine
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 2000 1',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0 200 1',
    'h - - [01/Jul/1995:00:00:01] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 -',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 -5',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 12x',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 12 x',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 12\t"ref"',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 12\x85x',  # \s in latin-1
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 12\xa0',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET /a" 200 1" 404 2',  # quotes in the request
    'h - - [01/Jul/1995:00:00:01 -0400] "GET /a\\" 200 1" 304 -',
    'h - - [01/Jul/1995:00:00:01 -0400] "" 200 1',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1 "-" "Mozilla/4.0 (x)"',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1 "-" "a \\"b\\""',
    'h\xe9 - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # latin-1 host
    'h\x1c - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',  # \x1c is \s
    'h  - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',
    'h\t- - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',
    'h - [x [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:00:00:01 -0400] "GET /\x00 HTTP/1.0" 200 1',
    'h - - [01/Jul/1995:00:00:01 -0400]  "GET / HTTP/1.0" 200 1',
    '\x00\x01\x02 binary',
]


WELL_FORMED = {b for b in BAD if any(k in b for k in [
    "29/Feb/1996", "23:59:60", "+1400", "+0545", "200 12 x", "12\t", "12\x85",
    "12\xa0", "404 2", "304 -", '"" 200', "Mozilla", '\\"b', "h\xe9", "[x [", "/\x00"])
    or b.endswith("200 -")}
"""The lines of BAD that the reference reads (the rest it counts as malformed)."""


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("gz", [False, True])
def test_hand_made_bad_lines(tmp_path, ending, gz):
    lines = [GOOD] + [x for i, bad in enumerate(BAD)
                      for x in (bad, GOOD.replace("199.72.81.55", f"10.0.0.{i}"))]
    data = ending.join(lines).encode("latin-1")  # the last line has no terminator
    path = tmp_path / "bad.log"
    path.write_bytes(gzip.compress(data) if gz else data)
    fast, ref = both(path, max_examples=100)
    assert_same(fast, ref)
    r = fast.meta["report"]
    assert r.lines == len(lines)
    malformed = {n for n, _ in r.malformed_examples}
    assert malformed == {2 * i + 2 for i, bad in enumerate(BAD) if bad not in WELL_FORMED}
    assert r.malformed == len(BAD) - len(WELL_FORMED) == 24


def test_lines_split_across_blocks(tmp_path, monkeypatch):
    """Blocks of a few bytes: every line, \\r\\n and gzip member crosses a block boundary."""
    lines = [GOOD, BAD[27], GOOD.replace("199.72.81.55", "7"), "", GOOD] * 20
    data = "\r\n".join(lines[:50]).encode() + b"\r" + "\n".join(lines[50:]).encode()
    path = tmp_path / "two-members.log.gz"
    path.write_bytes(gzip.compress(data[:3001]) + gzip.compress(data[3001:]))
    monkeypatch.setattr(fastclf, "BLOCK", 7)
    fast, ref = both(path, max_examples=50)
    assert_same(fast, ref)
    assert fast.meta["report"].lines == len(lines)


line_parts = st.lists(st.sampled_from([
    "h", "10.0.0.1", " ", "-", "[", "]", '"', "01/Jul/1995:00:00:01", "31/Dec/1999:23:59:59",
    "-0400", "+0000", "+0099", "GET / HTTP/1.0", "200", "404", "12", "\t", "\xa0", "\x85",
    "é", "\r", "\n", "\r\n", "x", "0",
]), max_size=25)


@examples(60)
@given(st.lists(line_parts, max_size=30))
def test_random_lines_read_alike(tmp_path_factory, parts):
    """Lines built from CLF's pieces, well formed or not: the two readers agree."""
    path = tmp_path_factory.mktemp("fuzz") / "f.log"
    text = "\n".join("".join(p) for p in parts) + "\n" + GOOD
    path.write_bytes(text.encode("latin-1"))
    fast, ref = both(path, max_examples=1000)
    assert_same(fast, ref)


def test_names_in_order_of_first_appearance_across_doubtful_lines(tmp_path):
    """A host only the reference reads (latin-1) keeps its place among the fast path's."""
    lines = [GOOD.replace("199.72.81.55", h) for h in ["b", "h\xe9", "a", "b", "h\xe9", "c"]]
    path = tmp_path / "order.log"
    path.write_bytes("\n".join(lines).encode("latin-1"))
    fast, ref = both(path)
    assert_same(fast, ref)
    assert list(fast.key_names) == ["b", "h\xe9", "a", "c"]


def test_many_hosts_grow_the_name_table(tmp_path):
    hosts = [f"10.{i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(20_000)]
    hosts += [f"a-long-host-name-{i}.example.org" for i in range(3_000)]
    lines = [GOOD.replace("199.72.81.55", h) for h in hosts + hosts[::-7]]
    path = tmp_path / "many.log.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    fast, ref = both(path)
    assert_same(fast, ref)
    assert fast.n_keys == len(hosts)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_truncated_and_damaged_gzip_name_the_file(tmp_path, engine):
    whole = gzip.compress(("\n".join([GOOD] * 5000)).encode())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=r"cut\.log\.gz: truncated gzip file"):
        load_log(cut, "clf", engine=engine, progress=False)
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(whole[:20] + bytes(200) + whole[220:])
    with pytest.raises(ValueError, match=r"bad\.log\.gz: damaged gzip file"):
        load_log(bad, "clf", engine=engine, progress=False)


def test_a_stamp_read_again_only_when_its_day_and_zone_bytes_repeat(tmp_path):
    """The reader reuses the day and zone of the line before only when their bytes are the
    same: lines that differ from the one before in the year's last digits, the day, the
    month or the zone alone are each read afresh, and a bad hour on a repeated day is bad."""
    stamps = ["01/Jul/1995:00:00:01 -0400", "01/Jul/1995:00:00:02 -0400",
              "01/Jul/1996:00:00:02 -0400", "01/Jul/1996:00:00:02 +0130",
              "02/Jul/1996:00:00:02 +0130", "02/Aug/1996:23:59:59 +0130",
              "02/Aug/1996:24:00:00 +0130", "02/Aug/1996:23:59:60 +0130",
              "02/Aug/1996:23:59:59 +0099", "02/Aug/2096:23:59:59 +0130"]
    lines = [GOOD.replace("01/Jul/1995:00:00:01 -0400", s) for s in stamps]
    path = tmp_path / "days.log"
    path.write_bytes("\n".join(lines).encode())
    fast, ref = both(path, max_examples=10)
    assert_same(fast, ref)
    good = [s for s in stamps if "24:00" not in s and "+0099" not in s]
    # a leap second (:60) is the second after :59
    expect = [datetime.strptime(s.replace(":60 ", ":59 "), "%d/%b/%Y:%H:%M:%S %z").timestamp()
              + (":60 " in s) for s in good]
    np.testing.assert_array_equal(fast.time, sorted(expect))
    assert fast.meta["report"].malformed == 2


@pytest.mark.parametrize("block, start", [
    (b"abc\ndef", 4), (b"abc\r\ndef", 5), (b"abc\rdef", 4), (b"\n", 1), (b"\r\n", 2),
    (b"abc\r", -1), (b"abc", -1), (b"", -1), (b"a\nb\rc", 2), (b"a\rb\nc", 2),
])
def test_first_end_of_a_line_begun_in_an_earlier_block(block, start):
    assert fastclf._first_end(block) == start


class _Searched(bytes):
    """bytes that record how far each find() may look."""

    spans: list

    def find(self, sub, start=0, end=None):
        self.spans.append((sub, start, len(self) if end is None else end))
        return bytes.find(self, sub, start, len(self) if end is None else end)


def test_first_end_looks_for_a_carriage_return_only_before_the_first_line_feed():
    """A log without \\r: each block is searched only up to its first \\n, not to its end
    (once per block, that search was as long as the block)."""
    block = _Searched(b"x" * 10 + b"\n" + b"y" * 1_000_000)
    block.spans = []
    assert fastclf._first_end(block) == 11
    assert [end for sub, _, end in block.spans if sub == b"\r"] == [10]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_lines_cut_short_anywhere_and_split_across_blocks(tmp_path, monkeypatch, ending):
    """Every prefix of a good line (as a crash mid-write leaves), each followed by a good
    line, read through blocks of a few bytes: the two readers agree, and only the
    prefixes short of a whole line are malformed."""
    lines = [x for k in range(len(GOOD) + 1) for x in (GOOD[:k], GOOD.replace("55", f"{k}"))]
    path = tmp_path / "cut.log.gz"
    path.write_bytes(gzip.compress((ending.join(lines) + ending).encode()))
    monkeypatch.setattr(fastclf, "BLOCK", 5)
    fast, ref = both(path, max_examples=1000)
    assert_same(fast, ref)
    r = fast.meta["report"]
    assert r.lines == len(lines)
    # a prefix is a request once it holds the status and at least one digit of the bytes
    assert len(fast) == len(GOOD) + 1 + 4


@examples(200)
@given(st.binary(max_size=64).map(lambda b: bytes(c % 16 if c < 128 else c for c in b)),
       st.integers(0, 70))
def test_line_end_search_eight_bytes_at_a_time(data, start):
    """_eol finds the first \\n or \\r at or after `start`, bytes below 14 (false alarms
    for the word test) and all, as a plain byte loop does."""
    b = np.frombuffer(data, np.uint8)
    w = np.frombuffer(data, "<u8", count=len(data) // 8)
    start = min(start, len(data))
    expect = next((i for i in range(start, len(data)) if data[i] in b"\r\n"), len(data))
    assert fastscan._eol(b, w, start, len(data)) == expect


def test_request_arrays_grow_when_the_log_holds_more_than_guessed(tmp_path, monkeypatch):
    """The reader's arrays are sized from a guess (bytes per line); a log with more lines
    than guessed grows them, every request kept, as the reference reads them (small calls
    of the kernel: every call grows them)."""
    monkeypatch.setattr(fastclf, "CAP", 8)
    monkeypatch.setattr(fastclf, "BYTES_PER_LINE", 10**9)
    lines = [GOOD.replace("199.72.81.55", f"10.0.{i % 7}.{i}") for i in range(300)]
    lines[150] = BAD[2]
    path = tmp_path / "grow.log.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    fast, ref = both(path)
    assert_same(fast, ref)
    assert len(fast) == 299
