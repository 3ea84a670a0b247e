"""Tables of requests on hand-made files: CSV, TSV, JSON lines, Parquet, DataFrames, Arrow."""

from __future__ import annotations

import calendar
import gzip
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ratelab.traces import Trace
from ratelab.traces.loaders import LoadWarning, NoRequestsError, load_log
from ratelab.traces.tables import write_parquet

T0 = float(calendar.timegm((2026, 1, 1, 0, 0, 0)))


def quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return load_log(path, progress=False, **kw)


def same(a: Trace, b: Trace) -> bool:
    """Whether two traces hold the same requests, clients and names."""
    return (np.array_equal(a.time, b.time) and np.array_equal(a.key, b.key)
            and np.array_equal(a.costs, b.costs) and list(a.key_names) == list(b.key_names))


def write(tmp_path, name, text, *, gz=False):
    path = tmp_path / name
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_csv_epoch_seconds_key_and_cost(tmp_path, gz):
    path = write(tmp_path, "r.csv", "ts,ip,weight\n"
                 f"{T0 + 2},10.0.0.2,1\n{T0},10.0.0.1,2.5\n{T0 + 1},10.0.0.2,1\n", gz=gz)
    t = quiet(path, format="csv", time_col="ts", key_col="ip", cost_col="weight")
    np.testing.assert_array_equal(t.time, [T0, T0 + 1, T0 + 2])
    assert [t.name_of(k) for k in t.key] == ["10.0.0.1", "10.0.0.2", "10.0.0.2"]
    assert list(t.key_names) == ["10.0.0.2", "10.0.0.1"]  # numbered in file order
    np.testing.assert_array_equal(t.cost, [2.5, 1, 1])
    r = t.meta["report"]
    assert (r.format, r.lines, r.requests, r.clients, r.out_of_order, r.header) == \
        ("csv", 4, 3, 2, 1, True)
    assert r.out_of_order_examples == [(3, T0, T0 + 2)]


def test_format_judged_from_the_name_for_csv(tmp_path):
    path = write(tmp_path, "r.csv.gz", f"time,key\n{T0},a\n", gz=True)
    assert quiet(path).meta["report"].format == "csv"


def test_tsv_milliseconds_and_a_combined_key(tmp_path):
    ms = int(T0 * 1000)
    path = write(tmp_path, "r.tsv", "t\tip\tpath\n"
                 f"{ms}\t1.1.1.1\t/a\n{ms + 250}\t1.1.1.1\t/b\n{ms + 500}\t1.1.1.1\t/a\n"
                 f"{ms + 750}\t2.2.2.2\t/a\n")
    t = quiet(path, format="tsv", time_col="t", time_format="ms", key_col="ip,path")
    np.testing.assert_array_equal(t.time, T0 + np.array([0, 0.25, 0.5, 0.75]))
    np.testing.assert_array_equal(t.key, [0, 1, 0, 2])
    assert list(t.key_names) == ["1.1.1.1 /a", "1.1.1.1 /b", "2.2.2.2 /a"]
    per_ip = quiet(path, format="tsv", time_col="t", time_format="ms", key_col="ip")
    assert per_ip.n_keys == 2


def test_a_combined_key_is_told_apart_by_columns_not_by_its_name(tmp_path):
    df = pd.DataFrame({"time": [1.0, 2.0], "a": ["x y", "x"], "b": ["z", "y z"]})
    t = Trace.from_frame(df, key="a,b")
    assert t.n_keys == 2 and t.key_names[0] == t.key_names[1] == "x y z"


@pytest.mark.parametrize("fmt, text, want", [
    ("%d/%b/%Y:%H:%M:%S %z", ["01/Jan/2026:01:00:00 +0100", "01/Jan/2026:00:00:01 +0000"],
     [T0, T0 + 1]),
    ("%Y-%m-%d %H:%M:%S", ["2026-01-01 00:00:00", "2026-01-01 00:00:01"], [T0, T0 + 1]),
    ("iso", ["2026-01-01T00:00:00.5Z", "2026-01-01T02:00:01+02:00"], [T0 + 0.5, T0 + 1]),
    (None, ["2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"], [T0, T0 + 1]),
    ("us", [str(int(T0) * 10**6), str(int(T0) * 10**6 + 1)], [T0, T0 + 1e-6]),
])
def test_time_formats(tmp_path, fmt, text, want):
    path = write(tmp_path, "t.csv", "when,who\n" + "".join(f"{x},a\n" for x in text))
    t = quiet(path, time_col="when", key_col="who", time_format=fmt)
    np.testing.assert_array_equal(t.time, want)


def test_malformed_rows_are_counted_and_shown(tmp_path):
    path = write(tmp_path, "m.csv", "time,key,cost\n"
                 f"{T0},a,1\n"
                 "soon,b,1\n"          # time does not parse
                 f"{T0},,1\n"          # no key
                 f"{T0},c,0\n"         # cost must be positive
                 f"{T0},d\n"           # a row the reader cannot split
                 f"{T0 + 1},e,1\n")
    with pytest.warns(LoadWarning, match="4 malformed lines"):
        t = load_log(path, progress=False, cost_col="cost")
    r = t.meta["report"]
    assert (r.lines, r.requests, r.malformed) == (7, 2, 4)
    assert [n for n, _ in r.malformed_examples] == [3, 4, 5, 6]
    assert "time='soon'" in r.malformed_examples[0][1]
    assert r.malformed_examples[3][1] == f"{T0},d"
    assert list(t.key_names) == ["a", "e"]


def test_json_lines_with_a_bad_line(tmp_path):
    path = write(tmp_path, "r.jsonl", '{"t": 1767225600000, "user": "u1", "n": 2}\n'
                 '{"t": 1767225601000, "user": "u2"}\n'
                 "not json at all\n"
                 '{"t": 1767225599000, "user": 7}\n')
    t = quiet(path, time_col="t", time_format="ms", key_col="user")  # judged: jsonl
    r = t.meta["report"]
    assert (r.format, r.lines, r.requests, r.malformed) == ("jsonl", 4, 3, 1)
    assert r.malformed_examples == [(3, "not json at all")]
    assert list(t.key_names) == ["u1", "u2", "7"]
    np.testing.assert_array_equal(t.time, [T0 - 1, T0, T0 + 1])


def test_json_lines_all_good_read_by_arrow(tmp_path):
    path = write(tmp_path, "r.jsonl", "".join(
        f'{{"time": {T0 + i}, "key": "k{i % 3}"}}\n' for i in range(10)), gz=True)
    t = quiet(path)
    assert (len(t), t.n_keys, t.meta["report"].format) == (10, 3, "jsonl")


def test_parquet_any_columns_and_timestamps(tmp_path):
    at = np.array([T0 + 1, T0]).astype("int64").astype("datetime64[s]")
    table = pa.table({"at": pa.array(at),
                      "api_key": ["k2", "k1"], "units": [3, 1]})
    path = tmp_path / "r.parquet"
    pq.write_table(table, path)
    t = quiet(path, time_col="at", key_col="api_key", cost_col="units")
    np.testing.assert_array_equal(t.time, [T0, T0 + 1])
    np.testing.assert_array_equal(t.cost, [1, 3])
    assert t.meta["report"].format == "parquet"


def test_from_frame_pandas_and_arrow_agree():
    df = pd.DataFrame({"ts": pd.to_datetime([T0 + 2, T0, T0 + 1], unit="s", utc=True),
                       "user": [5, 7, 5], "path": ["/a", "/b", "/a"]})
    a = Trace.from_frame(df, "ts", ["user", "path"], warn=False)
    b = Trace.from_frame(pa.Table.from_pandas(df), "ts", "user,path", warn=False)
    np.testing.assert_array_equal(a.time, [T0, T0 + 1, T0 + 2])
    assert list(a.key_names) == ["5 /a", "7 /b"]
    assert same(a, b)


def test_from_frame_errors_name_the_column():
    df = pd.DataFrame({"ts": [1.0], "ip": ["a"]})
    with pytest.raises(ValueError, match="key_col: no column 'key'.*ts, ip"):
        Trace.from_frame(df, "ts")
    with pytest.raises(ValueError, match="time_format"):
        Trace.from_frame(df, "ts", "ip", time_format="fortnights")
    with pytest.raises(NoRequestsError, match="no requests"):
        Trace.from_frame(pd.DataFrame({"time": [np.nan], "key": ["a"]}))


def test_a_table_with_no_usable_row_is_an_error_naming_the_file(tmp_path):
    path = write(tmp_path, "none.csv", "time,key\nx,a\ny,b\n")
    # every time unreadable: the hint is the time column's form, not another format
    with pytest.raises(NoRequestsError, match=r"none\.csv: no requests read as csv.*2 "
                                              r"malformed.*Give the time column's form with "
                                              r"time_format"):
        load_log(path, progress=False)
    with pytest.raises(ValueError, match=r"time_col: .*none\.csv has no column 'when'"):
        load_log(path, progress=False, time_col="when")


def test_column_options_on_a_log_are_refused(tmp_path):
    path = write(tmp_path, "a.log", '1.2.3.4 - - [01/Jan/2026:00:00:00 +0000] "GET /" 200 1\n')
    with pytest.raises(ValueError, match="time_col: column options apply to tables"):
        load_log(path, progress=False, time_col="x")


def test_parquet_round_trip_of_a_converted_log(tmp_path, data_dir):
    src = data_dir / "elastic_apache_logs.gz"
    original = quiet(src)
    path = write_parquet(original, tmp_path / "apache.parquet")
    again = load_log(path, progress=False)
    assert same(again, original) and again.cost is None
    assert again.meta["report"] == original.meta["report"]
    assert again.meta["report"].out_of_order == 4_915
    # the same file read as a plain table: names by first appearance in sorted order
    plain = quiet(path, key_col="key")
    np.testing.assert_array_equal(plain.time, original.time)
    assert [plain.name_of(k) for k in plain.key] == [original.name_of(k) for k in original.key]
