"""The dataset registry against the recorded traces: exact counts, checksums, fetching."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import time
import warnings
import zipfile

import numpy as np
import pytest

from ratelab import cli, datasets, metrics
from ratelab.traces.loaders import LoadWarning

# name: (requests, clients, out-of-order requests), as PROVENANCE.md counts them
EXPECTED = {
    "epa-http": (47_748, 2_333, 15),
    "nasa-1995-08-01": (33_996, 2_582, 0),
    "nasa-1995-07-clf-sample": (1_000, 135, 0),
    "nasa-1995-08-clf-sample": (1_000, 102, 0),
    "apache-shuffled": (10_000, 1_753, None),  # about half: counted below
}


@pytest.fixture
def data(data_dir, monkeypatch):
    monkeypatch.setenv("RATELAB_DATA", str(data_dir))
    return data_dir


def test_registry_names_every_dataset():
    assert set(datasets.NAMES) == set(EXPECTED)
    for d in datasets.DATASETS.values():
        assert (d.requests, d.clients) == EXPECTED[d.name][:2]
        assert len(d.sha256) == 64 and d.url.startswith(("https://", "ftp://"))


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_recorded_trace_loads_with_exact_counts(data, name):
    requests, clients, back = EXPECTED[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = datasets.load(name, progress=False)  # verifies the sha256 first
    r = trace.meta["report"]
    assert (len(trace), trace.n_keys, len(np.unique(trace.key))) == (requests, clients, clients)
    assert (r.requests, r.clients, r.malformed) == (requests, clients, 0)
    assert np.all(np.diff(trace.time) >= 0)
    if back is not None:
        assert r.out_of_order == back
    assert bool(caught) == (not r.clean)  # warned exactly when something was out of order


@pytest.mark.parametrize("name", ["epa-http", "nasa-1995-08-01"])
def test_busiest_minute_agrees_with_the_rolling_count(data, name):
    trace = datasets.load(name, progress=False, warn=False)
    peak = metrics.max_in_window(trace, 60.0)
    rolling = metrics.rolling_count(trace, 60.0, at=trace.time)
    assert peak.count == rolling.max() and rolling[peak.end_s].max() == peak.count
    assert peak.count == {"epa-http": 178, "nasa-1995-08-01": 166}[name]


def test_epa_reports_its_15_late_lines(data):
    with pytest.warns(LoadWarning, match="15 requests out of order"):
        trace = datasets.load("epa-http", progress=False)
    r = trace.meta["report"]
    assert r.out_of_order_examples[0][0] == 5468
    assert all(before - t == 1.0 for _, t, before in r.out_of_order_examples)
    # 29 Aug 1995 23:53:25 EDT -> 30 Aug 1995 23:53:07 EDT
    assert trace.time[0] == 809_754_805.0 and trace.time[-1] == 809_841_187.0


def test_nasa_day_starts_at_midnight_edt(data):
    trace = datasets.load("nasa-1995-08-01", progress=False)
    assert trace.time[0] == 807_249_601.0  # 1 Aug 1995 00:00:01 EDT
    assert trace.time[-1] == 807_303_121.0  # 14:52:01 EDT


def test_shuffled_apache_disorder_is_reported_not_hidden(data):
    with pytest.warns(LoadWarning, match="out of order") as w:
        trace = datasets.load("apache-shuffled", progress=False)
    r = trace.meta["report"]
    assert 4_000 < r.out_of_order < 6_000 and r.out_of_order == 4_915
    assert f"{r.out_of_order:,} requests out of order" in str(w[0].message)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_sha256_of_the_decompressed_content(data, name):
    file = datasets.path(name)
    assert file.parent == data
    content = gzip.decompress(file.read_bytes())
    assert hashlib.sha256(content).hexdigest() == datasets.get(name).sha256
    assert datasets.sha256_of(file) == datasets.get(name).sha256


def test_a_wrong_file_fails_verification(tmp_path, monkeypatch):
    monkeypatch.setenv("RATELAB_DATA", str(tmp_path))
    (tmp_path / "epa-http.txt.gz").write_bytes(gzip.compress(b"not the epa log\n"))
    with pytest.raises(ValueError, match="sha256"):
        datasets.load("epa-http", progress=False)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_trace_ships_in_the_repository_and_is_found_with_no_setting(name, monkeypatch):
    monkeypatch.delenv("RATELAB_DATA", raising=False)
    file = datasets.path(name)
    assert file.parent == datasets.ROOT / "data"
    assert datasets.verify(name) == file  # the shipped file is the registered one


def test_lookup_order_env_then_data(tmp_path, monkeypatch):
    monkeypatch.setenv("RATELAB_DATA", str(tmp_path))
    monkeypatch.setattr(datasets, "DATA", tmp_path / "data")
    assert datasets.search_dirs() == [tmp_path, tmp_path / "data"]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "epa-http.txt.gz").write_bytes(b"")
    assert datasets.path("epa-http") == tmp_path / "data" / "epa-http.txt.gz"
    (tmp_path / "epa-http.txt.gz").write_bytes(b"")
    assert datasets.path("epa-http") == tmp_path / "epa-http.txt.gz"
    with pytest.raises(FileNotFoundError, match="ratelab datasets fetch apache-shuffled"):
        datasets.path("apache-shuffled")
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        datasets.get("nope")


# ---------------------------------------------------------------- fetch


LOG = b"".join(b'h%d - - [01/Jul/1995:00:00:%02d -0400] "GET / HTTP/1.0" 200 1\n' % (i, i)
               for i in range(5))


def fake(tmp_path, unpack, payload, content, **kw):
    src = tmp_path / "remote"
    src.write_bytes(payload)
    return dataclasses.replace(datasets.get("nasa-1995-07-clf-sample"), name="fake",
                               url=src.as_uri(), unpack=unpack,
                               sha256=hashlib.sha256(content).hexdigest(), **kw)


@pytest.mark.parametrize("unpack, payload, first_lines, content", [
    ("plain", LOG, None, LOG),
    ("gzip", gzip.compress(LOG, mtime=0), 3, b"".join(LOG.splitlines(keepends=True)[:3])),
], ids=["plain", "gzip"])  # ids the same in every process (pytest-xdist compares them)
def test_fetch_downloads_verifies_and_gzips(tmp_path, unpack, payload, first_lines, content):
    d = fake(tmp_path, unpack, payload, content, first_lines=first_lines)
    out = datasets.fetch(d, tmp_path / "dest")
    assert out == tmp_path / "dest" / d.file
    assert gzip.decompress(out.read_bytes()) == content
    assert datasets.fetch(d, tmp_path / "dest") == out  # already there and right: kept


def test_fetch_from_a_zip(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("__MACOSX/._log", b"junk")
        z.writestr("log.txt", LOG)
    d = fake(tmp_path, "zip", buf.getvalue(), LOG)
    assert gzip.decompress(datasets.fetch(d, tmp_path).read_bytes()) == LOG


def test_fetch_refuses_a_download_with_another_checksum(tmp_path):
    d = dataclasses.replace(fake(tmp_path, "plain", LOG, LOG), sha256="0" * 64)
    with pytest.raises(ValueError, match="not saved"):
        datasets.fetch(d, tmp_path / "dest")
    assert not (tmp_path / "dest" / d.file).exists()


def test_fetch_without_network_fails_at_once_naming_url_and_place(tmp_path):
    d = dataclasses.replace(datasets.get("epa-http"),
                            url="http://ratelab-no-such-host.invalid/epa-http.zip")
    start = time.monotonic()
    with pytest.raises(ConnectionError) as e:
        datasets.fetch(d, tmp_path, timeout_s=2)
    assert time.monotonic() - start < 30  # a name that cannot resolve, not a hang
    assert "http://ratelab-no-such-host.invalid/epa-http.zip" in str(e.value)
    assert str(tmp_path / "epa-http.txt.gz") in str(e.value)
    assert datasets.get("epa-http").sha256 in str(e.value)


def test_fetch_refuses_a_folder_it_cannot_write(tmp_path, monkeypatch):
    d = fake(tmp_path, "plain", LOG, LOG)
    monkeypatch.setattr(datasets.os, "access", lambda p, mode: False)  # root may write anywhere
    with pytest.raises(PermissionError, match=f"cannot write in {tmp_path}"):
        datasets.fetch(d, tmp_path / "new" / "folder")


def test_cli_list_and_path(data, capsys):
    assert cli.main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert "epa-http" in out and "47,748" in out and str(data / "epa-http.txt.gz") in out
    assert cli.main(["datasets", "path", "nasa-1995-08-01"]) == 0
    assert capsys.readouterr().out.strip() == str(data / "nasa_19950801.tsv.gz")
    assert cli.main(["datasets", "verify", "apache-shuffled"]) == 0


def test_cli_path_of_a_missing_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RATELAB_DATA", str(tmp_path))
    monkeypatch.setattr(datasets, "DATA", tmp_path)
    assert cli.main(["datasets", "path", "epa-http"]) == 1
    assert "ratelab datasets fetch epa-http" in capsys.readouterr().err
