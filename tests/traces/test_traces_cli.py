"""``ratelab traces convert``, ``ratelab bench ingest``, and one-line errors for bad files."""

from __future__ import annotations

import gzip
import json

import pytest

from ratelab import datasets
from ratelab.cli import main
from ratelab.bench import ingest as ingest_bench
from ratelab.traces.loaders import load_log


def run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_convert_then_analyse_the_parquet_as_the_log(data_dir, tmp_path, capsys):
    log = data_dir / "elastic_apache_logs.gz"
    out = tmp_path / "apache.parquet"
    rc, text, _ = run(["traces", "convert", str(log), str(out), "--json", "--no-progress"],
                      capsys)
    record = json.loads(text)
    assert rc == 0 and (record["requests"], record["clients"], record["out_of_order"]) == \
        (10_000, 1_753, 4_915)
    figures = []
    for trace in (log, out):
        rc, text, _ = run(["error-analysis", "--trace", str(trace), "--limit", "5",
                           "--window", "10", "--no-progress", "--json"], capsys)
        assert rc == 0
        figures.append(json.loads(text))
    assert figures[0]["results"] == figures[1]["results"]
    assert figures[0]["load_report"] == figures[1]["load_report"]  # the log's own report


def test_convert_a_csv_with_a_combined_key(tmp_path, capsys):
    src = tmp_path / "events.csv"
    src.write_text("ts,ip,path\n1000,1.1.1.1,/a\n2000,1.1.1.1,/b\n3000,1.1.1.1,/a\n")
    out = tmp_path / "events.parquet"
    rc, text, _ = run(["traces", "convert", str(src), str(out), "--time-col", "ts",
                       "--time-format", "ms", "--key-col", "ip,path", "--json"], capsys)
    assert rc == 0 and json.loads(text)["clients"] == 2
    trace = load_log(out, progress=False)
    assert list(trace.key_names) == ["1.1.1.1 /a", "1.1.1.1 /b"]
    assert trace.time.tolist() == [1.0, 2.0, 3.0]


def test_convert_errors(tmp_path, capsys):
    rc, _, err = run(["traces", "convert", str(tmp_path / "none.log"), "x.parquet"], capsys)
    assert rc == 1 and err.startswith("ratelab traces convert: error: LOG:") and "none.log" in err
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    rc, _, err = run(["traces", "convert", str(empty), str(tmp_path / "x.parquet")], capsys)
    assert rc == 2 and "empty.log" in err and err.count("\n") == 1
    rc, _, err = run(["traces", "convert", str(tmp_path / "none.log"), "x.csv"], capsys)
    assert rc == 2 and err.startswith("ratelab traces convert: error: OUT:")  # before reading


BAD_FILES = {
    "empty.log": (b"", "it is empty"),
    "binary.bin": (bytes(range(256)) * 8, "NUL bytes"),
    "malformed.log": (b"one\ntwo\nthree\n", "3 lines, 3 malformed, first malformed line 1: 'one'"),
}


@pytest.mark.parametrize("name", [*BAD_FILES, "truncated.log.gz", "parquet.parquet"])
def test_error_analysis_on_a_bad_file_is_one_line(tmp_path, capsys, name):
    path = tmp_path / name
    if name == "truncated.log.gz":
        line = b'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1\n'
        whole = gzip.compress(line * 20_000)
        path.write_bytes(whole[: len(whole) // 2])
        what = "truncated gzip file"
    elif name == "parquet.parquet":
        path.write_bytes(b"PAR1 but not really")
        what = "not a readable Parquet file"
    else:
        path.write_bytes(BAD_FILES[name][0])
        what = BAD_FILES[name][1]
    rc, out, err = run(["error-analysis", "--trace", str(path), "--limit", "5",
                        "--no-progress"], capsys)
    assert rc == 2 and out == ""
    assert err.startswith(f"ratelab error-analysis: error: --trace: {path}") and what in err
    assert err.count("\n") == 1 and "Traceback" not in err
    if name in BAD_FILES:
        assert "--format" in err and "clf, epa, nasa-tsv, csv, tsv, jsonl, parquet" in err


def test_datasets_verify_and_load_name_a_damaged_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RATELAB_DATA", str(tmp_path))
    whole = gzip.compress(b"x" * 100_000)
    (tmp_path / "epa-http.txt.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=r"epa-http\.txt\.gz: truncated gzip file"):
        datasets.verify("epa-http")
    with pytest.raises(ValueError, match=r"epa-http\.txt\.gz: truncated gzip file"):
        datasets.load("epa-http", progress=False)
    with pytest.raises(ValueError, match=r"dataset epa-http: .*no requests read as epa"):
        (tmp_path / "epa-http.txt.gz").write_bytes(b"")
        datasets.load("epa-http", progress=False, check=False)
    (tmp_path / "epa-http.txt.gz").write_bytes(whole[: len(whole) // 2])
    rc, _, err = run(["datasets", "verify", "epa-http"], capsys)
    assert rc == 2 and "truncated gzip file" in err and err.count("\n") == 1


def test_generated_log_is_seeded_and_mostly_well_formed(tmp_path):
    a, b, c = (tmp_path / f"{n}.log.gz" for n in "abc")
    ra = ingest_bench.write_clf_log(a, 3_000, seed=4)
    ingest_bench.write_clf_log(b, 3_000, seed=4)
    ingest_bench.write_clf_log(c, 3_000, seed=5)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    trace = load_log(a, progress=False, warn=False)
    r = trace.meta["report"]
    assert r.lines == 3_000 and r.malformed == ra["broken_lines"]
    assert r.requests == 3_000 - ra["broken_lines"] and trace.n_keys > 10


def test_bench_ingest_json(tmp_path, capsys):
    rc, text, err = run(["bench", "ingest", "--lines", "4000", "--seed", "1", "--repeat", "1",
                         "--json"], capsys)
    figures = json.loads(text)
    assert rc == 0 and figures["same"] is True
    assert figures["lines"] == 4000 and figures["generated"]["lines"] == 4000
    assert set(figures["lines_per_s"]) == {"floor", "fast", "reference"}
    assert figures["fast_to_floor"]["wall"] > 0 and len(figures["rounds"]) == 1
    assert figures["command"] == "ratelab bench ingest --lines 4000 --seed 1 --repeat 1"


def test_bench_ingest_errors(capsys, tmp_path):
    assert run(["bench", "ingest", "--lines", "0"], capsys)[0] == 2
    rc, _, err = run(["bench", "ingest", "--log", str(tmp_path / "no.gz")], capsys)
    assert rc == 1 and "--log" in err
