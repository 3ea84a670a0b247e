"""A trace partitioned by source in Parquet: each part holds whole sources, so it is analysed alone.

Layout of a partitioned trace (a directory)::

    ratelab-parts.json     {"format": "ratelab-parts/1", "parts": P, "requests": N, ...}
    part-00000.parquet     columns key (int32), time (float64 s)[, cost][, row (int64)]
    part-00001.parquet     ...

or, when a Parquet trace was shuffled by Dask, ``part=00000/`` directories of files
(:func:`shuffle_parquet`). A part's rows are its sources' requests; :func:`read_part` gives
them back grouped by source and sorted by time within each (``row``, the request's place in
the original trace, breaks ties so that requests at one instant keep their order).

Parts are contiguous ranges of source ids cut by
:func:`ratelab.traces.population.source_bounds` — the rule that cuts a synthetic population
into chunks — so the in-process engine can cut the same parts and add the same tallies in the
same order: figures are identical, to the last bit, on either engine.
"""

from __future__ import annotations

import json
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from ..traces.population import Population, source_bounds
from ..traces.trace import Trace

FORMAT = "ratelab-parts/1"
META = "ratelab-parts.json"
PART_REQUESTS = next(f.default for f in fields(Population) if f.name == "chunk_requests")
"""Requests per part by default: a population's chunk size (memory per task)."""


@dataclass(frozen=True)
class Part:
    """One part: sources ``keys`` with their times laid end to end, source j at
    ``time[starts[j]:starts[j+1]]`` (sorted); ``cost`` and ``row`` in the same order or None."""

    time: np.ndarray
    starts: np.ndarray
    keys: np.ndarray
    cost: np.ndarray | None = None
    row: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.time)

    def to_trace(self) -> Trace:
        """The part as a time-sorted Trace (keys keep their ids; ties in trace order)."""
        key = np.repeat(self.keys, np.diff(self.starts))
        order = (np.argsort(self.time, kind="stable") if self.row is None
                 else np.lexsort((self.row, self.time)))
        cost = None if self.cost is None else self.cost[order]
        return Trace(self.time[order], key[order], cost)


def key_bounds(trace: Trace, part_requests: int = PART_REQUESTS) -> np.ndarray:
    """Source ids where the parts of `trace` begin, and n_keys at the end."""
    return source_bounds(np.bincount(trace.key, minlength=trace.n_keys), part_requests)


def split(trace: Trace, part_requests: int = PART_REQUESTS):
    """The parts of `trace` in memory, in order (the in-process engine's view)."""
    order = np.argsort(trace.key, kind="stable")  # by source, in time (and trace) order
    key = trace.key[order]
    bounds = key_bounds(trace, part_requests)
    edges = np.searchsorted(key, bounds, side="left")
    for a, b in zip(edges[:-1], edges[1:]):
        yield _part(key[a:b], trace.time[order[a:b]],
                    None if trace.cost is None else trace.cost[order[a:b]], order[a:b])


def _part(key, time, cost, row) -> Part:
    """A Part from rows already grouped by source (each source's rows in time order)."""
    change = np.flatnonzero(key[1:] != key[:-1]) + 1
    starts = np.concatenate([[0], change, [len(key)]]).astype(np.int64)
    keys = key[starts[:-1]].astype(np.int32)
    return Part(np.ascontiguousarray(time, dtype=np.float64), starts, keys,
                None if cost is None else np.ascontiguousarray(cost, dtype=np.float64),
                None if row is None else np.asarray(row, dtype=np.int64))


# ---------------------------------------------------------------- writing


def write_meta(directory: Path, **meta) -> dict:
    meta = {"format": FORMAT, **meta}
    (Path(directory) / META).write_text(json.dumps(meta, indent=1))
    return meta


def is_partitioned(path) -> bool:
    """Whether `path` is a trace partitioned by source (a directory with its metadata)."""
    return (Path(path) / META).is_file()


def read_meta(directory) -> dict:
    """The metadata of a partitioned trace; ValueError when `directory` is not one."""
    path = Path(directory) / META
    if not path.is_file():
        raise ValueError(f"{directory} is not a trace partitioned by source (no {META}); "
                         "write one with ratelab.scale.partition_trace or shuffle_parquet")
    meta = json.loads(path.read_text())
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta


def write_part(directory, i: int, key, time, cost=None, row=None) -> int:
    """Write part `i` (rows grouped by source, time-sorted in each); returns its length."""
    # pyarrow: half a second of imports, only where Parquet is written or read
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {"key": pa.array(np.asarray(key, dtype=np.int32)),
            "time": pa.array(np.asarray(time, dtype=np.float64))}
    if cost is not None:
        cols["cost"] = pa.array(np.asarray(cost, dtype=np.float64))
    if row is not None:
        cols["row"] = pa.array(np.asarray(row, dtype=np.int64))
    pq.write_table(pa.table(cols), Path(directory) / f"part-{i:05d}.parquet",
                   compression="zstd")
    return len(time)


def partition_trace(trace: Trace, directory, part_requests: int = PART_REQUESTS) -> dict:
    """Write `trace` partitioned by source into `directory` (made if needed); its metadata."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    for i, p in enumerate(split(trace, part_requests)):
        write_part(directory, i, np.repeat(p.keys, np.diff(p.starts)), p.time, p.cost, p.row)
        n = i + 1
    return write_meta(directory, parts=n, requests=len(trace), keys=trace.n_keys,
                      part_requests=part_requests, grouped=True)


@contextmanager
def partitioned(trace: Trace, parts_dir=None, part_requests: int = PART_REQUESTS):
    """A directory holding `trace` partitioned by source: `parts_dir` (written there), else a
    temporary one, removed on exit."""
    if parts_dir is not None:
        partition_trace(trace, parts_dir, part_requests)
        yield Path(parts_dir)
        return
    with tempfile.TemporaryDirectory(prefix="ratelab-parts-") as tmp:
        partition_trace(trace, tmp, part_requests)
        yield Path(tmp)


def part_paths(directory, meta: dict) -> list[Path]:
    """The file or directory of every part, in order."""
    directory = Path(directory)
    if meta.get("layout") == "hive":
        return [directory / f"part={i}" for i in range(meta["parts"])]
    return [directory / f"part-{i:05d}.parquet" for i in range(meta["parts"])]


def read_part(path, grouped: bool = True) -> Part:
    """Part at `path` (a file, or a directory of files read in name order), grouped by source.

    `grouped`: the rows are already grouped by source and time-sorted within each (as
    :func:`partition_trace` and the population writer leave them); otherwise they are sorted
    here by (source, time, row).
    """
    # pyarrow: half a second of imports, only where Parquet is written or read
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    if path.is_dir() or not path.exists() and path.name.startswith("part="):
        files = sorted(path.glob("*.parquet"), key=_file_order)
        table = pa.concat_tables([pq.read_table(f) for f in files]) if files else None
    else:
        table = pq.read_table(path)
    if table is None or table.num_rows == 0:
        return Part(np.empty(0), np.zeros(1, np.int64), np.empty(0, np.int32))
    names = table.column_names
    key = table.column("key").to_numpy().astype(np.int32, copy=False)
    time = table.column("time").to_numpy().astype(np.float64, copy=False)
    cost = table.column("cost").to_numpy() if "cost" in names else None
    row = table.column("row").to_numpy() if "row" in names else None
    del table
    if not grouped:
        order = np.lexsort((np.arange(len(key)) if row is None else row, time, key))
        key, time = key[order], time[order]
        cost = None if cost is None else cost[order]
        row = np.arange(len(key))[order] if row is None else row[order]
    return _part(key, time, cost, row)


def _file_order(path: Path):
    """Dask's part.N.parquet files in N order (names alone would put 10 before 2)."""
    digits = "".join(c if c.isdigit() else " " for c in path.stem).split()
    return (int(digits[-1]) if digits else -1, path.name)


# ---------------------------------------------------------------- a Parquet trace


def shuffle_parquet(source, directory, client, part_requests: int = PART_REQUESTS) -> dict:
    """Partition the Parquet trace `source` (columns time, key[, cost]) by source, with Dask.

    One pass counts each source's requests (small: one number per source), the parts are cut
    by :func:`~ratelab.traces.population.source_bounds`, and a second pass writes every row
    into its part's directory (``part=i/``). Nothing holds the whole trace in memory; the
    cluster of `client` does the work. String keys are numbered in sorted order.
    """
    # dask.dataframe: imported only when a Parquet trace is shuffled on a cluster
    import dask.dataframe as dd

    directory = Path(directory)
    df = dd.read_parquet(str(source))
    missing = {"time", "key"} - set(df.columns)
    if missing:
        raise ValueError(f"{source}: a Parquet trace needs columns time and key; "
                         f"{', '.join(sorted(missing))} missing (has {', '.join(df.columns)})")
    counts = client.compute(df["key"].value_counts(sort=False)).result().sort_index()
    labels = counts.index.to_numpy()
    if np.issubdtype(labels.dtype, np.integer):
        if len(labels) and (labels.min() < 0 or labels.max() > np.iinfo(np.int32).max):
            raise ValueError(f"{source}: integer keys must lie in [0, 2**31), got "
                             f"{labels.min()} .. {labels.max()}")
        volume = np.zeros(int(labels.max()) + 1 if len(labels) else 0)
        volume[labels] = counts.to_numpy()
        names = None
    else:
        volume = counts.to_numpy().astype(np.float64)
        names = [str(x) for x in labels]
    bounds = source_bounds(volume, part_requests)
    part_of = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds)).astype(np.int32)
    cols = ["key", "time"] + (["cost"] if "cost" in df.columns else [])

    def tag(frame, part_of=part_of, labels=labels if names is not None else None):
        key = frame["key"].to_numpy()
        if labels is not None:
            key = np.searchsorted(labels, key)
        out = pd.DataFrame({"key": key.astype(np.int32),
                            "time": frame["time"].to_numpy(np.float64)})
        if "cost" in frame:
            out["cost"] = frame["cost"].to_numpy(np.float64)
        out["part"] = part_of[key]
        return out

    meta_frame = {"key": "int32", "time": "float64", **({"cost": "float64"} if "cost" in cols
                                                          else {}), "part": "int32"}
    tagged = df[cols].map_partitions(tag, meta=meta_frame)
    client.compute(tagged.to_parquet(str(directory), partition_on=["part"],
                                     write_index=False, compute=False)).result()
    if names is not None:
        (directory / "keys.json").write_text(json.dumps(names))
    return write_meta(directory, parts=len(bounds) - 1, requests=int(counts.sum()),
                      keys=len(volume), part_requests=part_requests, grouped=False,
                      layout="hive", names="keys.json" if names is not None else None)
