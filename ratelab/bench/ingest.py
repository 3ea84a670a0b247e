"""``ratelab bench ingest``: lines per second reading a gzip CLF log, against decompression.

The floor is decompression alone: the log's blocks inflated by zlib and thrown away, as the
fast reader inflates them (Python's ``gzip.decompress`` of the whole file is also timed: it
is slower here, since it builds one large string, so the floor is the faster of the two). Then:

* **fast**: ``load_log(engine="fast")`` — the compiled reader (:mod:`ratelab.traces.fastclf`);
* **reference**: ``load_log(engine="reference")`` — a regular expression per line.

Each is run ``repeat`` times, interleaved (floor, fast, reference, floor, fast, …), so that a
machine shared with other work slows all of them alike; a figure is the best of its runs, and
the ratio to the floor is computed from the same round as well as from the bests. Both wall
and CPU seconds (``time.process_time``, this process, every thread) are reported. The two
readers' traces and reports are compared (``same``).

Without a log, a seeded one is generated (:func:`write_clf_log`): the requests of a
:class:`~ratelab.traces.population.Population` (sessions of page views, apps, bots, abusive
sources) written as Common Log Format lines, a few of them broken on purpose.
"""

from __future__ import annotations

import gzip
import os
import time
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..traces.fastclf import _blocks
from ..traces.loaders import load_log
from ..traces.population import Population

ZONE = "-0400"
"""Time zone of the generated log's stamps (the NASA logs' EDT)."""

START_S = 1_780_000_000.0
"""Unix time of the generated log's first second (2026-05-28)."""

BROKEN_EVERY = 100_000
"""About one generated line in this many is broken (cut short, as a crash mid-write does)."""


def write_clf_log(path, lines: int = 2_000_000, seed: int = 0, *, level: int = 6) -> dict:
    """Write a seeded gzip CLF log of `lines` lines at `path`; a record of what was written.

    Requests come from ``Population(sources=lines // 100, requests=lines, seed=seed)`` over a
    day; hosts are IPv4 addresses (70%) or host names; paths, methods, statuses and sizes are
    drawn from seeded, skewed tables. About one line in BROKEN_EVERY is cut short.
    """
    if lines < 1:
        raise ValueError(f"lines must be at least 1, got {lines!r}")
    rng = np.random.default_rng(seed)
    sources = max(1, lines // 100)
    want = lines
    trace = None
    while trace is None or len(trace) < lines:  # volumes are Poisson: ask a little more
        want = int(want * 1.05) + 10
        trace = Population(sources=sources, requests=want, seed=seed,
                           chunk_requests=max(want, 1)).trace()
    time_s, key = trace.time[:lines], trace.key[:lines]

    ip = rng.integers(1, 255, size=(sources, 4))
    names = np.array([f"{a}.{b}.{c}.{d}" for a, b, c, d in ip.tolist()], dtype=object)
    named = rng.random(sources) < 0.3
    names[named] = [f"host{i}.isp{i % 311}.example.net" for i in np.flatnonzero(named)]
    host = pa.array(names[key], pa.string())

    stamp = pc.strftime(pa.array(((START_S - 4 * 3600 + time_s) * 1e6).astype("int64"),
                                 pa.timestamp("us")), format="%d/%b/%Y:%H:%M:%S")
    stamp = pc.utf8_slice_codeunits(stamp, 0, 20)  # drop the fraction strftime adds
    paths = np.array(["/"] + [f"/{d}/{p}.{x}" for d in ("images", "shuttle", "history", "api")
                              for p in range(400) for x in ("html", "gif")][:1999], dtype=object)
    rank = np.minimum(rng.zipf(1.3, size=lines) - 1, len(paths) - 1)
    method = np.where(rng.random(lines) < 0.97, "GET", "POST").astype(object)
    status = rng.choice(np.array(["200", "304", "404", "302", "500"], dtype=object), size=lines,
                        p=[0.86, 0.08, 0.04, 0.015, 0.005])
    size = rng.integers(0, 60_000, size=lines).astype(str).astype(object)
    size[status == "304"] = "-"
    line = pc.binary_join_element_wise(
        host, " - - [", stamp, f" {ZONE}] \"", pa.array(method), " ", pa.array(paths[rank]),
        " HTTP/1.0\" ", pa.array(status), " ", pa.array(size), "\n", "")
    broken = np.flatnonzero(rng.random(lines) < 1.0 / BROKEN_EVERY)
    if len(broken):
        cut = pc.utf8_slice_codeunits(pc.take(line, pa.array(broken)), 0, 30)
        cut = pc.binary_join_element_wise(cut, "\n", "")
        mask = np.zeros(lines, bool)
        mask[broken] = True
        line = pc.replace_with_mask(line, pa.array(mask), cut)
    data = pa.concat_arrays([line]).buffers()
    offsets = np.frombuffer(data[1], np.int32, count=lines + 1, offset=line.offset * 4)
    content = data[2].to_pybytes()[offsets[0]:offsets[-1]]
    Path(path).write_bytes(gzip.compress(content, compresslevel=level, mtime=0))
    return {"path": str(path), "lines": lines, "broken_lines": int(len(broken)),
            "sources": sources, "seed": seed, "bytes": len(content),
            "gzip_bytes": os.path.getsize(path)}


def _inflate(path) -> tuple[int, float, float]:
    """(bytes, wall s, CPU s) to decompress `path` block by block as the fast reader does."""
    w, c = time.perf_counter(), time.process_time()
    n = sum(len(b) for b in _blocks(Path(path), False))
    return n, time.perf_counter() - w, time.process_time() - c


def _gunzip(path) -> tuple[int, float, float]:
    """(bytes, wall s, CPU s) of ``gzip.decompress`` on the whole file."""
    raw = Path(path).read_bytes()
    w, c = time.perf_counter(), time.process_time()
    n = len(gzip.decompress(raw)) if raw[:2] == b"\x1f\x8b" else len(raw)
    return n, time.perf_counter() - w, time.process_time() - c


def _load(path, engine: str):
    w, c = time.perf_counter(), time.process_time()
    trace = load_log(path, "clf", engine=engine, progress=False, warn=False)
    return trace, time.perf_counter() - w, time.process_time() - c


def same_result(a, b) -> bool:
    """Whether two loads gave the same requests, names and report."""
    return (np.array_equal(a.time, b.time) and np.array_equal(a.key, b.key)
            and list(a.key_names) == list(b.key_names) and a.meta["report"] == b.meta["report"])


def run(log, repeat: int = 2, with_reference: bool = True, log_fn=None) -> dict:
    """Time the floor, the fast reader and the reference on the gzip CLF log at `log`."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat!r}")
    say = log_fn or (lambda *a: None)
    load_log(log, "clf", engine="fast", progress=False, warn=False)  # compile / load the cache
    rounds = []
    fast = ref = None
    for r in range(repeat):
        n, iw, ic = _inflate(log)
        _, gw, gc = _gunzip(log)
        fast, fw, fc = _load(log, "fast")
        row = {"inflate_wall_s": iw, "inflate_cpu_s": ic, "gunzip_wall_s": gw,
               "gunzip_cpu_s": gc, "fast_wall_s": fw, "fast_cpu_s": fc}
        if with_reference:
            ref, rw, rc = _load(log, "reference")
            row.update(reference_wall_s=rw, reference_cpu_s=rc)
        floor_w, floor_c = min(iw, gw), min(ic, gc)
        row.update(floor_wall_s=floor_w, floor_cpu_s=floor_c,
                   fast_to_floor_wall=fw / floor_w, fast_to_floor_cpu=fc / floor_c)
        rounds.append({k: round(v, 4) for k, v in row.items()})
        say(f"round {r + 1}: floor {floor_w:.2f} s, fast {fw:.2f} s "
            f"({fw / floor_w:.2f}x wall, {fc / floor_c:.2f}x CPU)"
            + (f", reference {row['reference_wall_s']:.2f} s" if with_reference else ""))
    lines = fast.meta["report"].lines
    best = {k: min(r[k] for r in rounds) for k in rounds[0]}

    def per_s(key: str) -> float:
        return round(lines / best[key]) if best[key] > 0 else float("inf")

    out = {"log": str(log), "lines": lines, "bytes": n, "gzip_bytes": os.path.getsize(log),
           "requests": len(fast), "malformed_lines": fast.meta["report"].malformed,
           "repeat": repeat, "cpus": os.cpu_count(), "load_average": list(os.getloadavg()),
           "lines_per_s": {"floor": per_s("floor_wall_s"), "fast": per_s("fast_wall_s")},
           "lines_per_cpu_s": {"floor": per_s("floor_cpu_s"), "fast": per_s("fast_cpu_s")},
           "fast_to_floor": {"wall": round(best["fast_wall_s"] / best["floor_wall_s"], 3),
                             "cpu": round(best["fast_cpu_s"] / best["floor_cpu_s"], 3)},
           "rounds": rounds, "same": None}
    if with_reference:
        out["lines_per_s"]["reference"] = per_s("reference_wall_s")
        out["lines_per_cpu_s"]["reference"] = per_s("reference_cpu_s")
        out["reference_to_floor"] = {
            "wall": round(best["reference_wall_s"] / best["floor_wall_s"], 3),
            "cpu": round(best["reference_cpu_s"] / best["floor_cpu_s"], 3)}
        out["same"] = same_result(fast, ref)
    return out


def table(figures: dict) -> str:
    """The figures as a small text table."""
    rows = [("decompression (floor)", "floor"), ("fast reader", "fast"),
            ("reference reader", "reference")]
    out = [f"{figures['log']}: {figures['lines']:,} lines, {figures['bytes'] / 1e6:,.0f} MB "
           f"({figures['gzip_bytes'] / 1e6:,.1f} MB gzip), best of {figures['repeat']}",
           f"{'':24}{'M lines/s':>11}{'M lines/CPU s':>15}{'x floor (wall)':>16}"
           f"{'x floor (CPU)':>15}"]
    for label, key in rows:
        if key not in figures["lines_per_s"]:
            continue
        ratio = ({"wall": 1.0, "cpu": 1.0} if key == "floor"
                 else figures[f"{key}_to_floor"])
        out.append(f"{label:24}{figures['lines_per_s'][key] / 1e6:>11.2f}"
                   f"{figures['lines_per_cpu_s'][key] / 1e6:>15.2f}{ratio['wall']:>16.2f}"
                   f"{ratio['cpu']:>15.2f}")
    if figures["same"] is not None:
        out.append(f"same trace and report from both readers: {figures['same']}")
    return "\n".join(out)
