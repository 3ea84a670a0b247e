"""The Dask engine gives the in-process engine's figures, on a 2-worker LocalCluster.

The tests that start a cluster (or wait on one that never answers) are marked ``slow``: they
run in ``make test``, not in the ``make check`` fast lane.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ratelab.analysis.stream import (analyse_population, parts_tally, parts_tally_inprocess,
                                     population_tally, trace_tally)
from ratelab.scale import cluster
from ratelab.scale import parts as P
from ratelab.traces import Trace
from ratelab.traces.population import Population, source_bounds
from ratelab.whatif import parse_policy, tally, what_if_dask

POLICIES = ["token-bucket rate=1 capacity=10", "sliding-window-counter limit=60 window=60",
            "leaky-bucket rate=1 capacity=10 mode=shape"]


@pytest.fixture(scope="module")
def client():
    with cluster(workers=2) as c:
        yield c


def test_parts_hold_whole_sources_and_cover_the_trace():
    rng = np.random.default_rng(1)
    t = Trace.from_arrays(np.sort(rng.uniform(0, 100, 5000)),
                          rng.integers(0, 300, 5000).astype(np.int32))
    parts = list(P.split(t, 700))
    assert len(parts) > 5
    keys = np.concatenate([p.keys for p in parts])
    assert np.array_equal(keys, np.unique(t.key))  # every source once, in id order
    for p in parts:
        for j, k in enumerate(p.keys):
            assert np.array_equal(p.time[p.starts[j]:p.starts[j + 1]], t.time[t.key == k])


def test_source_bounds_never_split_a_source():
    # running totals 5, 6, 7, 17, 18, 19: a part ends with the source that reaches each
    # multiple of 4 (4 -> source 0; 8, 12, 16 -> source 3), the rest is the last part
    b = source_bounds([5, 1, 1, 10, 1, 1], 4)
    assert b.tolist() == [0, 1, 4, 6]


def test_tallies_add_every_field_and_refuse_a_field_with_no_sum():
    from dataclasses import dataclass, field

    from ratelab.scale import add_fields

    @dataclass
    class Counts:
        window_s: float = field(default=60.0, metadata={"add": "same"})
        requests: int = 0
        peak: int = field(default=0, metadata={"add": "max"})
        hist: np.ndarray = field(default_factory=lambda: np.zeros(2, np.int64))

    total = add_fields(Counts(requests=3, peak=5, hist=np.array([1, 2])),
                       Counts(requests=4, peak=2, hist=np.array([10, 20])))
    assert (total.requests, total.peak, total.hist.tolist()) == (7, 5, [11, 22])
    with pytest.raises(ValueError, match="tallies of different window_s do not add"):
        add_fields(Counts(), Counts(window_s=1.0))

    @dataclass
    class Forgot:
        requests: int = 0
        seen: list = field(default_factory=list)  # a new field that says nothing

    with pytest.raises(TypeError, match="Forgot.seen: a list has no sum"):
        add_fields(Forgot(1, [1]), Forgot(2, [2]))


def test_the_in_process_executor_keeps_part_order():
    from ratelab.scale import map_parts

    assert map_parts(lambda x, k: (1, x * k), [3, 1, 2], shared=(10,), progress=False) == \
        [30, 10, 20]


def test_the_in_process_executor_keeps_part_order_on_threads():
    """Parts that finish out of order are yielded in order, and no more than `threads` are
    in hand at once — taken from the parts but not yet yielded back (memory grows with the
    threads, not with the parts; it once took the next part before waiting: threads + 1)."""
    import time

    from ratelab.scale import imap_parts, map_parts

    def part(x, k):
        time.sleep(0.002 * (3 - x % 3))  # later parts often finish first
        return 1, x * k

    for threads in (1, 2, 3):
        taken, most = [0], 0

        def parts():
            for x in range(12):
                taken[0] += 1
                yield x

        got = []
        for i, result in enumerate(imap_parts(part, parts(), shared=(10,), progress=False,
                                              threads=threads)):
            most = max(most, taken[0] - i)  # in hand when result i came back
            got.append(result)
        assert got == [x * 10 for x in range(12)]
        assert most == threads, (threads, most)
    with pytest.raises(ValueError, match="threads must be >= 1"):
        map_parts(part, [1], progress=False, threads=0)


def test_a_population_on_threads_has_the_figures_of_one_thread(monkeypatch):
    from ratelab.scale import executor

    pop = Population(sources=400, requests=200_000, chunk_requests=30_000, seed=4)
    monkeypatch.setattr(executor, "default_workers", lambda: 1)
    one = analyse_population(pop, 50, 60, "both", progress=False)
    monkeypatch.setattr(executor, "default_workers", lambda: 3)
    three = analyse_population(pop, 50, 60, "both", progress=False)
    assert pop.n_chunks > 3 and one.to_dict() == three.to_dict()
    assert one.summary("estimate")["false allows"] > 0  # the comparison has something in it


@pytest.mark.slow
@pytest.mark.parametrize("counter", ["sliding-window-counter", "haproxy"])
def test_synthetic_population_same_figures(client, counter):
    pop = Population(sources=600, requests=300_000, chunk_requests=40_000, seed=3)
    here = analyse_population(pop, 50, 60, "both", progress=False, counter=counter)
    there = population_tally(client, pop, 50, 60, "both", progress=False, counter=counter)
    assert pop.n_chunks > 2 and here.to_dict() == there.to_dict()
    assert here.to_dict()["counter"] == counter
    assert here.summary("estimate")["false allows"] > 0  # the comparison has something in it


@pytest.mark.slow
@pytest.mark.parametrize("counter", ["sliding-window-counter", "haproxy"])
def test_recorded_trace_same_figures(client, data_dir, counter):
    from ratelab import datasets

    trace = datasets.load("epa-http", progress=False, warn=False)
    here = trace_tally(trace, 20, 60, part_requests=8000, progress=False, counter=counter)
    there = trace_tally(trace, 20, 60, engine="dask", client=client, part_requests=8000,
                          progress=False, counter=counter)
    assert here.to_dict() == there.to_dict() and here.counter == counter
    assert here.requests == 47_748 and here.over > 0


@pytest.mark.slow
def test_what_if_same_record(client, data_dir):
    from ratelab import datasets

    trace = datasets.load("epa-http", progress=False, warn=False)
    policies = [parse_policy(p) for p in POLICIES]
    here = tally(trace, policies).record(trace.name_of, "epa-http")
    there = what_if_dask(trace, policies, source="epa-http", client=client,
                           part_requests=8000)
    assert here == there and here["policies"][0]["requests_limited"] > 0


@pytest.mark.slow
def test_a_parquet_trace_is_shuffled_by_source_once(client, tmp_path):
    """A time-sorted Parquet trace, shuffled by Dask into parts: the in-memory figures."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pop = Population(sources=300, requests=120_000, chunk_requests=30_000, seed=5)
    trace = pop.trace()
    pq.write_table(pa.table({"time": trace.time, "key": trace.key}), tmp_path / "t.parquet",
                   row_group_size=20_000)
    meta = P.shuffle_parquet(tmp_path / "t.parquet", tmp_path / "parts", client, 25_000)
    assert meta["requests"] == len(trace) and meta["parts"] > 2
    there = parts_tally(client, tmp_path / "parts", 40, 60, "both", progress=False)
    here = trace_tally(trace, 40, 60, part_requests=25_000, progress=False)
    assert here.to_dict() == there.to_dict()
    again = parts_tally_inprocess(tmp_path / "parts", 40, 60, "both", progress=False)
    assert again.to_dict() == here.to_dict()


@pytest.mark.slow
def test_cli_error_analysis_on_dask_matches_in_process(capsys):
    small = ["error-analysis", "--synthetic", "--sources", "200", "--requests", "60000",
             "--chunk-requests", "20000", "--limit", "30", "--no-progress", "--json"]
    from ratelab.cli import main

    assert main(small) == 0
    here = json.loads(capsys.readouterr().out)
    assert main(small + ["--engine", "dask", "--workers", "2"]) == 0
    there = json.loads(capsys.readouterr().out)
    assert here["modes"] == there["modes"] and there["run"]["engine"] == "dask"
    assert "--engine dask --workers 2" in there["command"]


@pytest.mark.slow
def test_an_unreachable_scheduler_exits_1(capsys):
    from ratelab.cli import main

    assert main(["error-analysis", "--synthetic", "--sources", "10", "--requests", "1000",
                 "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", "--no-progress"]) == 1
    assert "no Dask scheduler answers at tcp://127.0.0.1:9" in capsys.readouterr().err
