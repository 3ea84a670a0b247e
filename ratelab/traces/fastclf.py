"""The fast Common Log Format reader: a compiled scan over decompressed bytes.

It gives the same trace and the same report as the reference reader in
:mod:`ratelab.traces.loaders` (line by line, a regular expression per line) — a test holds the
two together on every recorded trace and on hand-made bad lines — at a small multiple of
the time decompression alone takes (``ratelab bench ingest`` measures it):

1. the file is decompressed in blocks (zlib; gzip members one after another, so a
   concatenated log reads whole) on a thread of its own, so that on two cores inflating and
   parsing overlap;
2. a numba kernel splits each block into lines exactly as Python's text reader does (``\\n``,
   ``\\r`` or ``\\r\\n``; 32 bytes at a time, one vector compare each) and reads a line's host
   and time where the line is plainly well formed, its fields 32 or eight bytes at a time
   too (unaligned loads: the stamp is checked and read from four words; the day and zone of
   the line before are reused when their bytes repeat);
3. the same kernel numbers hosts in order of first appearance in an open-addressing hash
   table of 8-byte slots (the hash's high half and the id), each name's first 16 bytes kept
   beside it by id (an IPv4 host is compared in two words, a longer name word by word),
   looked up as soon as the host's end is found (the slot, then the entry: two loads that
   wait on each other, overlapping with reading the rest of the line); the requests go
   straight into the reader's arrays.

The same scan reads the ITA EPA-HTTP and NASA-HTTP TSV formats (``read_log``; a line parser
each in the kernel), under the same rule. The compiled kernel is :mod:`ratelab.traces.fastscan`;
this module is its Python driver: blocks, threads, arrays, and the lines the kernel doubts.

A line the kernel is not sure of — anything off the plain shape: a byte outside printable
ASCII before the request, a field it does not expect, an impossible date or zone, a blank line
— is handed to the reference parser, so the reference decides every doubtful case and
the fast path only ever takes lines the reference takes, with the same host and time.
"""

from __future__ import annotations

import os
import queue
import threading
import zlib
from pathlib import Path

import numpy as np

from ..progress import bar
from .fastscan import _MONTHS, _SPACE, ENT, FORMAT_NUMBERS, _grown, _intern_one, _scan
from .report import (GZIP_ERRORS, ZONE_MAX_MIN, LoadReport, _clf_parser, compression_of, damaged,
                     decompressing, read_line)

BLOCK = 1 << 20
"""Compressed bytes read at a time (a block decompresses to about 8 MB of log)."""


class _Names:
    """The name table of a read: numbers hosts in order of first appearance."""

    def __init__(self) -> None:
        self.slots = np.zeros(1 << 12, np.int64)
        self.ents = np.empty(ENT << 11, np.int64)
        self.names = np.empty(1 << 16, np.uint8)
        self.count = 0
        self.used = 0

    def add(self, name: str) -> int:
        """The id of `name`, added when new."""
        b = np.frombuffer(name.encode("latin-1"), np.uint8)
        self.make_room(len(b))
        k, self.count, self.used = _intern_one(b, self.slots, self.ents, self.names,
                                               self.count, self.used)
        return int(k)

    def make_room(self, size: int) -> None:
        """Grow the table until a name of `size` bytes fits."""
        while not (2 * (self.count + 1) <= len(self.slots)
                   and ENT * (self.count + 1) <= len(self.ents)
                   and self.used + size <= len(self.names)):
            self.slots, self.ents, self.names = _grown(size, self.slots, self.ents,
                                                       self.names, self.count, self.used)

    def to_list(self) -> list[str]:
        """Every name, by id."""
        x = self.ents[:ENT * self.count].reshape(-1, ENT)[:, 2]
        start, size = (x >> 32).tolist(), (x & 0xFFFFFFFF).tolist()
        raw = self.names[:self.used].tobytes()
        return [raw[a:a + z].decode("latin-1") for a, z in zip(start, size)]


def _blocks(path: Path, progress: bool):
    """The decompressed content of the file at `path`, block by block (gzip, bzip2, xz, zstd
    or plain).

    gzip as Python's gzip module reads it: members one after another, zero bytes between them
    skipped; EOFError when the stream stops inside a member, zlib.error when it is damaged.
    The other compressions through their own readers (:func:`~.report.decompressing`).
    """
    size = os.path.getsize(path)
    with open(path, "rb") as raw, bar(size, desc=path.name, unit="B", unit_scale=True,
                                      progress=progress) as b:
        kind = compression_of(raw.read(8))
        raw.seek(0)
        if kind != "gzip":
            stream = decompressing(raw, kind)
            done = 0
            for block in iter(lambda: stream.read(8 * BLOCK), b""):
                b.update(raw.tell() - done)
                done = raw.tell()
                yield block
            return
        z, fed, between = zlib.decompressobj(wbits=31), False, False
        for block in iter(lambda: raw.read(BLOCK), b""):
            b.update(len(block))
            while block:
                if between:
                    block = block.lstrip(b"\0")
                    if not block:
                        break
                    between = False
                fed = True
                out = z.decompress(block)
                if out:
                    yield out
                block = b""
                if z.eof:  # a member ended: another may follow (concatenated gzip)
                    block = z.unused_data
                    z, fed, between = zlib.decompressobj(wbits=31), False, True
        if fed:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def _ahead(blocks, depth: int = 4):
    """The items of `blocks`, produced by a thread of their own up to `depth` ahead.

    zlib lets go of the GIL while it inflates and the kernel does while it scans, so on two
    cores decompression and parsing overlap. An error in the thread is raised here.
    """
    q: queue.Queue = queue.Queue(depth)
    stop = threading.Event()
    end = object()

    def produce() -> None:
        try:
            for item in blocks:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        pass
                if stop.is_set():
                    return
            q.put(end)
        except BaseException as e:  # handed to the reader, raised there
            q.put(e)

    thread = threading.Thread(target=produce, name="ratelab-inflate", daemon=True)
    thread.start()
    try:
        while (item := q.get()) is not end:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


CAP = 1 << 18
"""Lines per call of the kernel."""

BYTES_PER_LINE = 64
"""What the requests' arrays are first sized for: one request per this many bytes of the
decompressed log (a CLF line is about 90); they grow (doubling) when a log holds more."""


class _Requests:
    """The requests read so far: times, key ids and line numbers, in arrays the kernel
    writes into directly (no copy per call, none joined at the end)."""

    def __init__(self, lines: int) -> None:
        self.n = 0
        self.time = np.empty(lines, np.float64)
        self.key = np.empty(lines, np.int32)
        self.line = np.empty(lines, np.int64)

    def room(self, more: int):
        """(time, key, line): the arrays' next `more` places, grown first where short."""
        if self.n + more > len(self.time):
            size = max(2 * len(self.time), self.n + more)
            for name in ("time", "key", "line"):
                bigger = np.empty(size, getattr(self, name).dtype)
                bigger[:self.n] = getattr(self, name)[:self.n]
                setattr(self, name, bigger)
        end = self.n + more
        return self.time[self.n:end], self.key[self.n:end], self.line[self.n:end]

    def arrays(self):
        """(times, key ids, line numbers) read."""
        return self.time[:self.n], self.key[:self.n], self.line[:self.n]


def _inflated_size(path: Path) -> int:
    """About how many bytes the file at `path` decompresses to: the size its gzip trailer
    gives (mod 2**32, of the last member only: a guess), eight times its size for the other
    compressions (a guess: the arrays grow as needed), or its size."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        kind = compression_of(f.read(8))
        if kind not in (None, "gzip"):
            return 8 * size
        if kind is None or size < 18:
            return size
        f.seek(-4, os.SEEK_END)
        return max(size, int.from_bytes(f.read(4), "little"))


def read_clf(path: Path, report: LoadReport, max_examples: int, progress: bool):
    """Times, key ids, line numbers and key names of the CLF log at `path`, in file order.

    Fills report.lines and the malformed tally, exactly as the reference reader does.
    """
    return read_log(path, "clf", _clf_parser(), report, max_examples, progress)


def read_log(path: Path, fmt: str, parse, report: LoadReport, max_examples: int,
             progress: bool, epa_base: float = 0.0, epa_days: int = 0):
    """Times, key ids, line numbers and key names of the log at `path` in the format `fmt`
    ("clf", "epa" or "nasa-tsv"), in file order; `parse` is the reference's parser of one
    line of it, which judges every line the kernel is not sure of.

    Fills report.lines, report.header and the malformed tally, exactly as the reference
    reader does. epa_base and epa_days: for EPA, the time of day 0 and the days of the month
    (see report._epa_month).
    """
    table = _Names()
    out = (np.empty(CAP, np.int8), np.empty(CAP, np.int64), np.empty(CAP, np.int64),
           np.full(3, -1, np.int64))  # the last day and zone read (see _parse)
    how = (fmt, float(epa_base), int(epa_days))
    got = _Requests(_inflated_size(path) // BYTES_PER_LINE + CAP)
    line_no = 0
    carry = b""
    blocks = _ahead(_blocks(path, progress))
    try:
        while True:
            block = next(blocks, None)
            final = block is None
            # (bytes, where to start): the unfinished line joined with the start of this
            # block, then the rest of the block where it is (not copied)
            if final:
                parts = [(carry, 0)]
            elif carry:
                cut = _first_end(block)
                parts = ([(carry + block[:cut], 0), (block, cut)] if cut >= 0
                         else [(carry + block, 0)])
            else:
                parts = [(block, 0)]
            carry = b""
            for i, (data, start) in enumerate(parts):
                if i and carry:  # the first part ended in a \r that a \n may follow
                    data, start = carry + data[start:], 0
                line_no, used = _scan_all(data, start, final and i == len(parts) - 1,
                                          line_no, how, out, table, parse, report,
                                          max_examples, got)
                carry = data[used:]
            if final:
                break
    except GZIP_ERRORS as e:
        raise damaged(path, e, line_no) from None
    report.lines = line_no
    return (*got.arrays(), table.to_list())


def _first_end(block: bytes) -> int:
    """Where a line that began in an earlier block ends in `block`: just past its first
    terminator (\n, \r\n or \r); -1 when there is none, or only a \r as the last byte.

    A \r is looked for only before the first \n: a log without any \r is not searched to
    its end in every block."""
    i = block.find(b"\n")
    r = block.find(b"\r", 0, i if i >= 0 else len(block))
    if r >= 0:
        i = r
    if i < 0:
        return -1
    if block[i] == 10:
        return i + 1
    if i + 1 == len(block):
        return -1
    return i + 2 if block[i + 1] == 10 else i + 1


def _scan_all(data: bytes, start: int, final: bool, line_no: int, how, out, table: _Names,
              parse, report: LoadReport, max_examples: int, got: _Requests):
    """Scan `data` from `start` with the kernel as far as whole lines go, the requests into
    `got`; returns (line number, where the bytes not used start)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    words = np.frombuffer(data, dtype="<u8", count=len(data) // 8)
    kind, s0, s1, memo = out
    name, epa_base, epa_days = how
    fmt = FORMAT_NUMBERS[name]
    pos = start
    while pos < len(buf):
        t, key, ln = got.room(CAP)
        pos, k, ns, line_no, table.count, table.used, full = _scan(
            buf, words, pos, final, line_no, fmt, _MONTHS, _SPACE, ZONE_MAX_MIN, memo, epa_base,
            epa_days, kind, t, key, ln, s0, s1, table.slots, table.ents, table.names,
            table.count, table.used)
        if full >= 0:
            table.make_room(full)
        if k == 0:
            if full >= 0:
                continue
            break
        if ns:  # the entries the kernel left to the reference (the last, as it stops there)
            keep = kind[:k].astype(bool)
            for j, a, z in zip(np.flatnonzero(~keep).tolist(), s0[:ns].tolist(),
                               s1[:ns].tolist()):
                read = read_line(report, int(ln[j]), data[a:z].decode("latin-1"), parse,
                                 name, max_examples)
                if read is None:
                    continue
                keep[j] = True
                t[j], key[j] = read[1], table.add(read[0])
            if not keep.all():  # the requests close up over the lines that were none
                m = int(np.count_nonzero(keep))
                for a in (t, key, ln):
                    a[:m] = a[:k][keep]
                k = m
        got.n += k
    return line_no, pos
