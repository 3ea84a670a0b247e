"""ratelab bench: the trace it builds, and its JSON on a small run (figures never asserted)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ratelab
from ratelab.bench import replay as bench
from ratelab.cli import main

pytestmark = pytest.mark.slow  # runs the benchmark itself: left out of make check


def test_bench_trace_is_seeded_sorted_and_heavy_tailed():
    a = bench.bench_trace(50_000, 200, np.random.default_rng(7))
    b = bench.bench_trace(50_000, 200, np.random.default_rng(7))
    c = bench.bench_trace(50_000, 200, np.random.default_rng(8))
    assert np.array_equal(a.time, b.time) and np.array_equal(a.key, b.key)
    assert not np.array_equal(a.key, c.key)
    assert len(a) == 50_000 and a.n_keys == 200
    assert np.all(np.diff(a.time) >= 0)
    assert 0 <= a.time[0] and a.time[-1] <= 3600 * 50_000 / 10_000_000
    # popularity 1/k: the busiest key sends 1/H(200) = 17 % of the requests, the 10th 1.7 %
    counts = np.sort(np.bincount(a.key, minlength=200))[::-1]
    harmonic = (1.0 / np.arange(1, 201)).sum()
    assert counts[0] / len(a) == pytest.approx(1 / harmonic, rel=0.05)
    assert counts[9] / len(a) == pytest.approx(0.1 / harmonic, rel=0.15)


def test_bench_json_has_every_algorithm_and_compiled_equals_reference(capsys):
    rc = main(["bench", "--requests", "20000", "--keys", "100", "--repeat", "1", "--json"])
    out = capsys.readouterr().out
    figures = json.loads(out)
    assert rc == 0
    assert (figures["requests"], figures["keys"], figures["slice"]) == (20000, 100, 20000)
    rows = {r["algorithm"]: r for r in figures["results"]}
    assert list(rows) == [a[0] for a in bench.ALGORITHMS]
    assert {"token-bucket", "leaky-bucket/police", "leaky-bucket/shape", "fixed-window",
            "sliding-window-log", "sliding-window-counter", "gcra", "nginx", "haproxy"} == set(rows)
    assert {a[1] for a in bench.ALGORITHMS} == set(ratelab.NAMES)  # none left out of the bench
    for name, r in rows.items():
        assert r["same"] is True, name  # compiled decisions == reference decisions
        assert r["compiled_per_s"] > 0 and r["reference_per_s"] > 0
        assert r["vs_reference"] == pytest.approx(r["compiled_per_s"] / r["reference_per_s"])
        assert 0 < r["rejected_share"] < 1, name  # the limits bite on this trace
    strategies = {r["limits_strategy"]: r for r in rows.values() if r["limits_strategy"]}
    assert set(strategies) == {"fixed-window", "moving-window", "sliding-window-counter"}
    for r in strategies.values():
        assert r["limits_per_s"] > 0 and 0 < r["limits_allowed_share"] <= 1
    assert rows["sliding-window-log"]["limits_strategy"] == "moving-window"
    assert figures["peak_rss_mb"] >= figures["peak_rss_mb_after_compiled"] > 0


def test_bench_table_and_bad_options(capsys):
    rc = main(["bench", "--requests", "3000", "--keys", "30", "--repeat", "1", "--no-limits",
               "--no-reference"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "compiled M/s" in out and "peak RSS" in out
    assert out.count("\n") > len(bench.ALGORITHMS)
    assert main(["bench", "--requests", "0"]) == 2
    assert "--requests: must be a whole number >= 1" in capsys.readouterr().err
