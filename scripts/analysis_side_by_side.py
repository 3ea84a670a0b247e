#!/usr/bin/env python
"""The error analysis of this tree against another commit's, side by side in one process.

As scripts/compiled_side_by_side.py does for the replay: both package trees are imported under
different names and run :func:`ratelab.analysis.error.analyse_sources` on the same seeded trace
(``ratelab bench``'s, grouped by key: every key a source), one mode at a time, runs interleaved
(this, that, this, that, ...); a figure is the best of ``--repeat`` runs in CPU seconds.
``same`` says whether the two tallies count the same requests, false allows and false rejects.

    python scripts/analysis_side_by_side.py 50cb99e
    python scripts/analysis_side_by_side.py 50cb99e --repeat 5 --requests 1000000
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiled_side_by_side import package_copy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rev", help="the commit to compare against (e.g. 50cb99e)")
    p.add_argument("--repeat", type=int, default=5, help="runs per mode and tree (best)")
    p.add_argument("--requests", type=int, default=10_000_000)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--limit", type=float, default=100.0)
    p.add_argument("--window", type=float, default=60.0)
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        package_copy(None, Path(tmp), "ratelab_this")
        package_copy(args.rev, Path(tmp), "ratelab_that")
        sys.path.insert(0, tmp)
        trees = {name: importlib.import_module(f"{name}.analysis.error")
                 for name in ("ratelab_this", "ratelab_that")}
        bench = importlib.import_module("ratelab_this.bench.replay")
        trace = bench.bench_trace(args.requests, args.keys, np.random.default_rng(0))
        order = np.argsort(trace.key, kind="stable")
        times = np.ascontiguousarray(trace.time[order])  # each key's times, in order
        starts = np.concatenate([[0], np.cumsum(np.bincount(trace.key, minlength=trace.n_keys))])
        print(f"{'mode':10} {'this (s)':>9} {args.rev + ' (s)':>14} {'that/this':>10} same")
        for mode in ("estimate", "admission"):
            best, counts = {}, {}
            for name, error in trees.items():  # compile
                error.analyse_sources(times[:1000], starts[:2].clip(max=1000), args.limit,
                                      args.window, (mode,))
                best[name] = float("inf")
            for _ in range(args.repeat):
                for name, error in trees.items():
                    t = time.process_time()
                    tally = error.analyse_sources(times, starts, args.limit, args.window, (mode,))
                    best[name] = min(best[name], time.process_time() - t)
                    counts[name] = tally.per_mode[mode].counts.tolist()
            this, that = best["ratelab_this"], best["ratelab_that"]
            same = counts["ratelab_this"] == counts["ratelab_that"]
            print(f"{mode:10} {this:9.3f} {that:14.3f} {that / this:10.2f} {same}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
