"""One load report, the same in error-analysis, what-if and traces convert: every row left out
is counted with its reason, and what a reader must know before trusting the figures is said.

Each hostile input of a new user's trial is here with the outcome it must get.
"""

from __future__ import annotations

import json

import IPython.lib.pretty
import pytest

from ratelab.cli import main
from ratelab.traces.loaders import load_log

POLICY = ["--policy", "gcra rate=1 burst=3"]


def records(capsys, path, *options) -> list[dict]:
    """The load_report of error-analysis, what-if and traces convert on `path` (--json)."""
    out = []
    for argv in (["error-analysis", "--trace", str(path), "--limit", "5"],
                 ["what-if", "--trace", str(path), *POLICY],
                 ["traces", "convert", str(path), str(path.with_suffix(".parquet"))]):
        assert main([*argv, *options, "--no-progress", "--json"]) == 0, capsys.readouterr().err
        out.append(json.loads(capsys.readouterr().out)["load_report"])
    return out


def one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


def test_bad_times_are_malformed_rows_with_their_line_numbers_not_a_failed_file(
        tmp_path, capsys):
    path = tmp_path / "bad.csv"
    # before: "Out of bounds nanosecond timestamp", the whole file refused ("1000" reads
    # as the year 1000 in ISO, abc as nothing); now each such row is counted, by line
    path.write_text("time,key\n1000,a\nabc,b\n1001,a\n,c\ninf,b\n1002,a\n1003,\n")
    reports = records(capsys, path)
    assert reports[0] == reports[1] == reports[2]
    r = reports[0]
    assert (r["lines"], r["requests"], r["malformed"]) == (8, 3, 4)
    assert r["dropped"] == {"unreadable time": 3, "missing key": 1}
    assert [x["line"] for x in r["malformed_examples"]] == [3, 5, 6, 8]
    assert r["time_zone"] == "UTC (epoch numbers)" and r["warnings"] == []


def test_what_if_says_what_it_left_out_in_text_too(tmp_path, capsys):
    path = tmp_path / "cost.csv"
    path.write_text("time,key,cost\n1000,a,1\n1001,b,0\n1002,a,x\n1003,,2\n1004,a,3\n")
    # error-analysis counts requests of cost 1 only: what-if and convert read the costs
    assert main(["what-if", "--trace", str(path), "--cost-col", "cost", *POLICY, "--json",
                 "--no-progress"]) == 0
    r = json.loads(capsys.readouterr().out)["load_report"]
    assert r["dropped"] == {"zero or negative cost": 1, "unreadable cost": 1, "missing key": 1}
    assert main(["what-if", "--trace", str(path), "--cost-col", "cost", *POLICY,
                 "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert ("3 malformed lines left out (1 missing key, 1 unreadable cost, 1 zero or negative "
            "cost), first:") in text
    assert "line 3: \"time=1001 key='b' cost='0'\"" in text


def test_millisecond_epochs_read_as_seconds_are_refused_naming_time_format(tmp_path, capsys):
    path = tmp_path / "ms.csv"
    path.write_text("ts,key\n1700000000000,a\n1700000001000,b\n")
    for command in (["error-analysis", "--limit", "5"], ["what-if", *POLICY],
                    ["traces", "convert"]):
        argv = [command[0], *(["convert", str(path), str(tmp_path / "o.parquet")]
                              if command[0] == "traces" else ["--trace", str(path)]),
                *command[1:][command[0] == "traces":], "--time-col", "ts"]
        line = one_line_error(capsys, argv)
        assert "past the year 2200" in line and "--time-format ms" in line, line
        assert "time_format" not in line.replace("--time-format", ""), line
    assert main(["what-if", "--trace", str(path), "--time-col", "ts", "--time-format", "ms",
                 *POLICY, "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["first_s"] == 1_700_000_000


def test_a_few_impossible_times_are_malformed(tmp_path, capsys):
    path = tmp_path / "late.csv"
    path.write_text("time,key\n1000,a\n1e30,b\n1001,a\n1e15,a\n1002,b\n")
    r = records(capsys, path)[0]
    assert r["dropped"] == {"time past the year 2200": 2} and r["requests"] == 3


def test_a_shuffled_log_is_analysed_with_a_warning(tmp_path, capsys):
    path = tmp_path / "shuffled.csv"
    times = [1000 + (i * 37) % 100 for i in range(100)]  # a permutation of 100 seconds
    path.write_text("time,key\n" + "".join(f"{t},k{t % 7}\n" for t in times))
    for r in records(capsys, path):
        assert r["out_of_order"] > 1 and len(r["warnings"]) == 1
        assert "may not be a timeline" in r["warnings"][0]
    assert main(["what-if", "--trace", str(path), *POLICY, "--no-progress"]) == 0
    assert "warning: " in capsys.readouterr().out


def test_a_notebook_shows_the_report_the_commands_print(tmp_path):
    """IPython's plain text is the text every command prints; its HTML says the same, with
    the log's own text escaped."""
    path = tmp_path / "odd.log"
    path.write_text('a - - [01/Jul/1995:00:00:02 +0000] "GET / HTTP/1.0" 200 1\n'
                    '<script>alert(1)</script>\n'
                    'b - - [01/Jul/1995:00:00:01 +0000] "GET / HTTP/1.0" 200 1\n')
    report = load_log(path, progress=False, warn=False).meta["report"]
    plain = IPython.lib.pretty.pretty(report)
    assert plain == str(report) and "1 malformed lines left out" in plain
    html = report._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "line 2: <code>" in html and "line 3: 1995-07-01 00:00:01 UTC, 1 s before" in html
    assert "<th>requests</th><td>2</td>" in html and "<th>lines</th><td>3</td>" in html


def test_a_few_requests_out_of_order_are_no_warning(data_dir):
    report = load_log(data_dir / "epa-http.txt.gz", progress=False, warn=False).meta["report"]
    assert report.out_of_order == 15 and report.warnings == []


@pytest.mark.parametrize("times, zone", [
    (["2026-01-01T00:00:00", "2026-01-01T00:00:01"], "UTC assumed: the times name no zone"),
    (["2026-01-01T00:00:00Z", "2026-01-01T00:00:01+02:00"],  # typed by the CSV reader
     "each time's own zone (a timestamp column in UTC)"),
    (["2026-01-01T00:00:00Z", "2026-01-01 00:00:01 +02:00"],  # left as text
     "each time's own offset"),
    (["2026-01-01T00:00:00Z", "2026-01-01T00:00:01"],
     "each time's own offset; UTC assumed for the 1 that name none"),
])
def test_the_time_zone_assumed_is_said(tmp_path, capsys, times, zone):
    path = tmp_path / "iso.csv"
    path.write_text("time,key\n" + "".join(f"{t},a\n" for t in times))
    assert records(capsys, path)[1]["time_zone"] == zone


def test_a_log_format_says_how_its_times_are_placed(data_dir):
    clf = load_log(data_dir / "NASA_access_log_Aug95_first1000.clf.gz", progress=False)
    epa = load_log(data_dir / "epa-http.txt.gz", progress=False, warn=False)
    assert clf.meta["report"].time_zone.startswith("each line's own zone offset")
    assert epa.meta["report"].time_zone.startswith("UTC-4 h assumed")


def test_a_column_read_twice_is_an_error_naming_it(tmp_path, capsys):
    path = tmp_path / "dup.csv"
    path.write_text("time,time,key\n1,2,a\n")
    line = one_line_error(capsys, ["what-if", "--trace", str(path), *POLICY])
    assert line.startswith("ratelab what-if: error: --time-col: ")
    assert "'time' is columns 1 and 2" in line and "internal error" not in line


def compressed(data: bytes, kind: str) -> bytes:
    import bz2
    import lzma

    import pyarrow as pa

    return {"bzip2": bz2.compress, "xz": lzma.compress,
            "zstd": lambda d: pa.compress(d, "zstd", asbytes=True)}[kind](data)


@pytest.mark.parametrize("kind", ["bzip2", "xz", "zstd"])
def test_bzip2_xz_and_zstd_read_as_the_plain_file(tmp_path, capsys, kind, data_dir):
    """The same records as the plain file, for a table (all three commands) and for a log
    (both readers)."""
    import gzip

    table = b"time,key\n1000,a\n1001,b\nabc,c\n1002,a\n"
    plain, packed = tmp_path / "t.csv", tmp_path / f"t.{kind}.csv"
    plain.write_bytes(table)
    packed.write_bytes(compressed(table, kind))
    got, want = records(capsys, packed), records(capsys, plain)
    for g, w in zip(got, want):
        assert {**g, "source": ""} == {**w, "source": ""}
    log = gzip.decompress((data_dir / "NASA_access_log_Aug95_first1000.clf.gz").read_bytes())
    path = tmp_path / "nasa.log.x"
    path.write_bytes(compressed(log, kind))
    base = load_log(data_dir / "NASA_access_log_Aug95_first1000.clf.gz", progress=False)
    for engine in ("fast", "reference"):
        t = load_log(path, engine=engine, progress=False)
        assert t.time.tolist() == base.time.tolist() and t.key_names == base.key_names


def test_a_truncated_bzip2_log_is_named_so(tmp_path, capsys, data_dir):
    import gzip

    log = gzip.decompress((data_dir / "NASA_access_log_Aug95_first1000.clf.gz").read_bytes())
    path = tmp_path / "cut.log.bz2"
    path.write_bytes(compressed(log, "bzip2")[:-200])
    line = one_line_error(capsys, ["error-analysis", "--trace", str(path)])
    assert "truncated bzip2 file" in line, line


def test_a_zip_archive_says_unzip(tmp_path, capsys):
    import zipfile

    path = tmp_path / "log.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("log.csv", "time,key\n1000,a\n")
    assert "is a zip archive" in one_line_error(capsys, ["error-analysis", "--trace",
                                                        str(path), "--format", "csv"])


def test_binary_input_read_as_csv_is_one_line_with_no_traceback(tmp_path, capsys):
    import gzip

    noise = bytes((i * 7919 + 13) % 256 for i in range(4096))  # NUL bytes among them
    for path in (tmp_path / "noise.csv", tmp_path / "noise.csv.gz"):
        path.write_bytes(gzip.compress(noise) if path.suffix == ".gz" else noise)
        line = one_line_error(capsys, ["what-if", "--trace", str(path), "--format", "csv",
                                       *POLICY])
        assert "NUL bytes" in line and "(a binary file?)" in line


def test_hints_name_the_flag_to_change_once(tmp_path, capsys):
    path = tmp_path / "dates.csv"
    path.write_text("time,ip\n2026-01-01,a\n")
    line = one_line_error(capsys, ["what-if", "--trace", str(path), "--time-format", "%H:%M",
                                   "--key-col", "ip", *POLICY])
    assert line.startswith("ratelab what-if: error: --time-format: ") and "--format" not in \
        line.replace("--time-format", ""), line
    line = one_line_error(capsys, ["error-analysis", "--trace", str(path), "--key-col", "ip2"])
    assert line == (f"ratelab error-analysis: error: --key-col: {path} has no column 'ip2' "
                    "(its columns: time, ip)")


def test_a_headerless_csv_with_the_date_and_time_in_two_columns(tmp_path, capsys):
    """The WorldCup98 CSV's shape: no header, client first, date and time apart."""
    path = tmp_path / "wc.csv"
    path.write_text("1044,30/Apr/1998,21:30:17,/a\n1045,30/Apr/1998,21:30:17,/b\n"
                    "1044,30/Apr/1998,21:30:18,/a\nxx\n1046,30/Apr/1998,21:30:20,/c\n")
    options = ["--columns", "client,date,time,path", "--time-col", "date,time",
               "--time-format", "%d/%b/%Y %H:%M:%S", "--key-col", "client"]
    reports = records(capsys, path, *options)
    assert reports[0] == reports[1] == reports[2]
    r = reports[0]
    assert (r["lines"], r["requests"], r["clients"], r["header"]) == (5, 4, 3, False)
    assert r["malformed_examples"] == [{"line": 4, "text": "xx"}]
    assert r["first_s"] == 893971817.0  # 1998-04-30 21:30:17 UTC
    assert r["time_zone"].startswith("UTC assumed")
    line = one_line_error(capsys, ["what-if", "--trace", str(path), "--key-col", "client",
                                   *POLICY])
    assert line.endswith("a file without a header line: name its columns with --columns)")
    assert "--columns gives a name twice" in one_line_error(
        capsys, ["what-if", "--trace", str(path), "--columns", "a,a", *POLICY])
    assert one_line_error(capsys, ["what-if", "--trace", "data/epa-http.txt.gz", "--columns",
                                   "a", *POLICY]).startswith(
        "ratelab what-if: error: --columns: column options apply to tables")


APP_LOG = ("2026-12-01T10:00:00.120Z GET /api client=10.0.0.1 took=12ms\n"
           "2026-12-01T10:00:00.480Z GET /api client=10.0.0.2 took=3ms\n"
           "noise line\n"
           "2026-12-01T10:00:01.010Z POST /login client=10.0.0.1 took=40ms\n")
APP_PATTERN = r"(?P<time>\S+) (?P<method>\S+) (?P<path>\S+) client=(?P<host>\S+) took=\S+"


def test_any_line_format_reads_with_a_regular_expression(tmp_path, capsys):
    """The worked example of docs/traces.md: the same requests as the table of its fields."""
    log = tmp_path / "app.log"
    log.write_text(APP_LOG)
    table = tmp_path / "app.csv"
    table.write_text("time,host\n2026-12-01T10:00:00.120Z,10.0.0.1\n"
                     "2026-12-01T10:00:00.480Z,10.0.0.2\n2026-12-01T10:00:01.010Z,10.0.0.1\n")
    by_regex = load_log(log, "regex", pattern=APP_PATTERN, progress=False, warn=False)
    by_table = load_log(table, key_col="host", progress=False)
    ten = 1796119200  # 2026-12-01 10:00:00 UTC
    assert by_regex.time.tolist() == by_table.time.tolist() == [ten + 0.12, ten + 0.48,
                                                              ten + 1.01]
    assert by_regex.key_names == by_table.key_names == ["10.0.0.1", "10.0.0.2"]
    r = records(capsys, log, "--format", "regex", "--pattern", APP_PATTERN)[1]
    assert r["dropped"] == {"lines that do not match the pattern": 1}
    assert r["malformed_examples"] == [{"line": 3, "text": "noise line"}]
    assert r["time_zone"] == "each time's own offset"


@pytest.mark.parametrize("options, words", [
    (["--format", "regex"], "--pattern: --format regex reads each line"),
    (["--format", "regex", "--pattern", "(?P<time>"], "--pattern: not a regular expression"),
    (["--format", "regex", "--pattern", r"(?P<when>\S+)"], "needs a named group (?P<time>"),
    (["--format", "csv", "--pattern", r"(?P<time>\S+) (?P<host>\S+)"],
     "--pattern: applies to format regex"),
    (["--format", "regex", "--pattern", r"(?P<time>\d+)(?P<host>x)"], "Check the --pattern"),
])
def test_a_pattern_that_cannot_read_the_log_is_named(tmp_path, capsys, options, words):
    log = tmp_path / "app.log"
    log.write_text(APP_LOG)
    assert words in one_line_error(capsys, ["what-if", "--trace", str(log), *options, *POLICY])


def test_a_date_column_reads_as_midnight_utc_said_so(tmp_path, capsys):
    """A column the CSV reader types as dates (no time of day, no zone)."""
    path = tmp_path / "dates.csv"
    path.write_text("time,key\n2026-01-01,a\n2026-01-02,b\n")
    r = records(capsys, path)[1]
    assert r["first_s"] == 1767225600.0 and r["time_zone"] == "UTC assumed: the times name no zone"
