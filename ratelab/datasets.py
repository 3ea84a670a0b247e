"""The recorded traces by name: where each came from, how to check it, and how to load it.

    >>> import ratelab.datasets as ds
    >>> trace = ds.load("epa-http")           # doctest: +SKIP
    >>> trace.meta["report"].clients          # doctest: +SKIP
    2333

The traces ship in the project's ``data/`` folder (third-party logs, freely redistributable:
``data/README.md`` gives their provenance and licence terms), so nothing needs setting up. A
dataset's file is looked up first in the directory named by ``$RATELAB_DATA``, when it is set
(a folder of your own), then in ``data/``. ``ratelab datasets fetch NAME`` downloads one again
from its public source (when the machine has internet) and checks it against the sha256 of its
decompressed content recorded here.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .progress import bar
from .traces.loaders import load_log
from .traces.report import GZIP_ERRORS, damaged
from .traces.trace import Trace

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
ENV = "RATELAB_DATA"

ITA = "ftp://ita.ee.lbl.gov/traces"


@dataclass(frozen=True)
class Dataset:
    """One recorded trace: its file, format, checksum, expected counts and public source.

    file       name of the gzip file in the data directory
    format     loader format (see ratelab.traces.report.FORMATS)
    sha256     of the decompressed content
    requests   lines that are requests (the header of a TSV excluded)
    clients    distinct hosts / IPs
    url        where `fetch` downloads it from
    unpack     what `url` delivers: "gzip", "zip" (one member) or "plain"
    first_lines  keep only the first lines of the download (a sample), or None for all
    source     the original and the public copy, in words
    """

    name: str
    file: str
    format: str
    sha256: str
    requests: int
    clients: int
    url: str
    unpack: str
    description: str
    source: str
    first_lines: int | None = None


DATASETS: dict[str, Dataset] = {d.name: d for d in [
    Dataset(
        "epa-http", "epa-http.txt.gz", "epa",
        "885fe554c5f15198c7be73d7cee50cc218003763a5fe8ad04ea5d37183c9b704", 47_748, 2_333,
        "https://github.com/elkinlrc/DataDriven3/raw/"
        "8b30378185ef76322f742ec5189d130751f0b7c6/epa-http.zip", "zip",
        "ITA EPA-HTTP: a day of the EPA WWW server, 29-30 Aug 1995 (EDT)",
        f"ITA {ITA}/epa-http.txt.Z (L. Bottomley, Duke University; freely redistributable), "
        "copy in github.com/elkinlrc/DataDriven3 epa-http.zip"),
    Dataset(
        "nasa-1995-08-01", "nasa_19950801.tsv.gz", "nasa-tsv",
        "a9c4563c35aad2b0ad4893f97ea5928911a873af626d07f6d76ce03179857238", 33_996, 2_582,
        "https://raw.githubusercontent.com/indeedeng/imhotep/"
        "a424577a836b71d26daefe28474a68326b103199/files/nasa_19950801.tsv", "plain",
        "ITA NASA-HTTP (Kennedy Space Center): every request of 1 Aug 1995, as TSV",
        f"ITA {ITA}/NASA_access_log_Aug95.gz (freely redistributable), TSV conversion in "
        "github.com/indeedeng/imhotep files/nasa_19950801.tsv (Apache-2.0)"),
    Dataset(
        "nasa-1995-07-clf-sample", "NASA_access_log_Jul95_first1000.clf.gz", "clf",
        "dfdd51c1a9981ea4329aa448cbb8eb86dcaccc16ae0e2fb2e96aed5c262efba7", 1_000, 135,
        f"{ITA}/NASA_access_log_Jul95.gz", "gzip",
        "first 1,000 lines of ITA NASA_access_log_Jul95, Common Log Format",
        f"ITA {ITA}/NASA_access_log_Jul95.gz (freely redistributable); the sample as in "
        "github.com/cleydsonborges/pyspark_nasa_logs_lab", first_lines=1000),
    Dataset(
        "nasa-1995-08-clf-sample", "NASA_access_log_Aug95_first1000.clf.gz", "clf",
        "63fbbb4f1dc9b1a9461bf09771f86013814da73278d36947370f22de4d7dcdc7", 1_000, 102,
        f"{ITA}/NASA_access_log_Aug95.gz", "gzip",
        "first 1,000 lines of ITA NASA_access_log_Aug95, Common Log Format",
        f"ITA {ITA}/NASA_access_log_Aug95.gz (freely redistributable); the sample as in "
        "github.com/cleydsonborges/pyspark_nasa_logs_lab", first_lines=1000),
    Dataset(
        "apache-shuffled", "elastic_apache_logs.gz", "clf",
        "f15c31e905f86c7b4b6ab44aee74d0a2086dce89f010187d983edea7ef0364ef", 10_000, 1_753,
        "https://raw.githubusercontent.com/elastic/examples/"
        "8174879f5df5a366327d253bd5294e098d341b34/Common%20Data%20Formats/apache_logs/"
        "apache_logs", "plain",
        "10,000 Apache combined-format lines, 17-20 May 2015; timestamps shuffled "
        "(a bad-input case, not a timing trace)",
        "semicomplete.com access log, copy in github.com/elastic/examples "
        "Common Data Formats/apache_logs (Apache-2.0)"),
]}
NAMES: tuple[str, ...] = tuple(DATASETS)


def get(name: str | Dataset) -> Dataset:
    """The registry entry called `name` (a Dataset passes through)."""
    if isinstance(name, Dataset):
        return name
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(NAMES)}") \
            from None


def search_dirs() -> list[Path]:
    """Where datasets are looked for, in order: $RATELAB_DATA (when set), then data/."""
    env = os.environ.get(ENV)
    return ([Path(env)] if env else []) + [DATA]


def find(name: str | Dataset) -> Path | None:
    """The dataset's file in the first search directory that has it, or None."""
    d = get(name)
    for folder in search_dirs():
        if (folder / d.file).is_file():
            return folder / d.file
    return None


def path(name: str | Dataset) -> Path:
    """The dataset's file; FileNotFoundError saying where it was looked for and how to get it."""
    d = get(name)
    found = find(d)
    if found is None:
        looked = ", ".join(str(p) for p in search_dirs())
        raise FileNotFoundError(
            f"dataset {d.name}: no {d.file} in {looked}. Set {ENV} to the folder that has it, "
            f"or run `ratelab datasets fetch {d.name}`")
    return found


def sha256_of(file: Path) -> str:
    """The sha256 (hex) of a file's content, decompressed first when it is gzip.

    A gzip file that is truncated or damaged is a ValueError naming it.
    """
    h = hashlib.sha256()
    with open(file, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
        try:
            for block in iter(lambda: stream.read(1 << 20), b""):
                h.update(block)
        except GZIP_ERRORS as e:
            raise damaged(file, e) from None
    return h.hexdigest()


def verify(name: str | Dataset, file: Path | None = None) -> Path:
    """The dataset's file after checking its sha256; ValueError when the content differs."""
    d = get(name)
    file = path(d) if file is None else Path(file)
    got = sha256_of(file)
    if got != d.sha256:
        raise ValueError(f"dataset {d.name}: {file} has sha256 {got}, expected {d.sha256} "
                         "(a different or damaged file)")
    return file


def load(name: str | Dataset, *, progress: bool = True, check: bool = True,
         warn: bool = True) -> Trace:
    """The dataset as a Trace keyed by client (report in ``meta["report"]``).

    check     verify the sha256 first (a few ms for these files)
    warn      warn about malformed or out-of-order lines (they are in the report either way)
    """
    d = get(name)
    file = verify(d) if check else path(d)
    try:
        trace = load_log(file, d.format, progress=progress, warn=warn)
    except ValueError as e:  # damaged or empty: say which dataset, and how to get it again
        raise ValueError(f"dataset {d.name}: {e}; `ratelab datasets fetch {d.name} --force` "
                         "downloads it again") from None
    trace.meta["dataset"] = d.name
    return trace


# ---------------------------------------------------------------- fetching


def _destination(dest: Path | str | None) -> Path:
    if dest is not None:
        return Path(dest)
    env = os.environ.get(ENV)
    return Path(env) if env else DATA


def _by_hand(d: Dataset, dest: Path) -> str:
    steps = {"zip": "unzip it, gzip the one file inside",
             "gzip": "gunzip it, keep its first {n:,} lines, gzip them",
             "plain": "gzip it"}[d.unpack]
    if d.unpack == "gzip" and not d.first_lines:
        steps = "keep it as it is"
    return (f"To install it by hand: download {d.url}, {steps.format(n=d.first_lines or 0)} "
            f"and save it as {dest / d.file} (sha256 of the decompressed content: "
            f"{d.sha256}); or set {ENV} to a folder that already has it. Source: {d.source}.")


def _download(response, name: str, progress: bool) -> bytes:
    """All of a response's bytes, with a bar when the download takes over a second."""
    size = response.headers.get("Content-Length") if hasattr(response, "headers") else None
    parts = []
    with bar(int(size) if size else None, desc=name, unit="B", unit_scale=True,
             progress=progress) as b:
        for block in iter(lambda: response.read(1 << 16), b""):
            parts.append(block)
            b.update(len(block))
    return b"".join(parts)


def _content(d: Dataset, response, progress: bool = True) -> bytes:
    """The dataset's decompressed bytes from the downloaded stream."""
    if d.unpack == "zip":
        with zipfile.ZipFile(io.BytesIO(_download(response, d.name, progress))) as z:
            members = [m for m in z.namelist()
                       if not m.startswith("__MACOSX/") and not m.endswith("/")]
            if len(members) != 1:
                raise ValueError(f"dataset {d.name}: expected one file in the zip, found "
                                 f"{members}")
            return z.read(members[0])
    if d.unpack == "plain" and d.first_lines is None:
        return _download(response, d.name, progress)
    stream = gzip.GzipFile(fileobj=response) if d.unpack == "gzip" else response
    if d.first_lines is None:
        return stream.read()
    lines = []
    for line in stream:  # stop early: a sample needs only the start of a large log
        lines.append(line)
        if len(lines) == d.first_lines:
            break
    return b"".join(lines)


def fetch(name: str | Dataset, dest: Path | str | None = None, *, timeout_s: float = 10.0,
          force: bool = False, progress: bool = True) -> Path:
    """Download the dataset from its public source, verify it, and save it gzipped in `dest`.

    `dest` defaults to $RATELAB_DATA, else data/. A file already there with the right sha256 is
    kept (unless `force`). Without a network this fails at once (ConnectionError) with the URL
    and where to put the file by hand; a download whose sha256 differs is not saved
    (ValueError); a folder that cannot be written is refused before downloading
    (PermissionError). A slow download shows a progress bar unless `progress` is False.
    """
    d = get(name)
    dest = _destination(dest)
    target = dest / d.file
    if target.is_file() and not force:
        try:
            return verify(d, target)
        except ValueError:
            pass  # a wrong file: download it again
    writable = dest if dest.exists() else next(p for p in dest.parents if p.exists())
    if not os.access(writable, os.W_OK):
        raise PermissionError(f"dataset {d.name}: cannot write in {writable}; "
                              "give another folder (--dest, or set RATELAB_DATA)")
    try:
        with urllib.request.urlopen(d.url, timeout=timeout_s) as response:
            content = _content(d, response, progress)
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        reason = getattr(e, "reason", e)
        raise ConnectionError(f"dataset {d.name}: could not download {d.url} ({reason}). "
                              + _by_hand(d, dest)) from None
    got = hashlib.sha256(content).hexdigest()
    if got != d.sha256:
        raise ValueError(f"dataset {d.name}: the download from {d.url} has sha256 {got}, "
                         f"expected {d.sha256}; not saved. " + _by_hand(d, dest))
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest, suffix=".part", delete=False) as tmp:
        with gzip.GzipFile(fileobj=tmp, mode="wb", mtime=0) as gz:
            gz.write(content)
    shutil.move(tmp.name, target)
    return target


# ---------------------------------------------------------------- the catalogue, as a record


def catalogue() -> dict:
    """Every dataset as a record (``ratelab datasets list``): name, counts, format, source,
    and where its file is (``path`` None and ``present`` false when it is not here)."""
    rows = []
    for d in DATASETS.values():
        found = find(d)
        rows.append({"name": d.name, "requests": d.requests, "clients": d.clients,
                     "format": d.format, "file": d.file, "present": found is not None,
                     "path": None if found is None else str(found),
                     "description": d.description, "source": d.source})
    return {"search_dirs": [str(p) for p in search_dirs()], "datasets": rows}
