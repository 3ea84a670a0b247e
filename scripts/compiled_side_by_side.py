#!/usr/bin/env python
"""The replay of this tree against other commits', side by side in one process.

Package trees imported under different names into the same process replay the same seeded
trace (``ratelab bench``'s: 10 M requests, 100 K keys, limit 100 per 60 s) through each
algorithm, runs interleaved (this, that, that, this, ...), so that a machine shared with
other work slows all alike; a figure is the best of ``--repeat`` runs, in decisions per CPU
second. Beside it, ``paired`` is the median of the per-round ratios (each round times this
tree and that commit back to back) with their lowest and highest: on a virtual machine whose
neighbours come and go, a best-of can land on one lucky run, and the median of pairs is the
steadier figure. ``differ`` counts the requests this tree and that commit decide
differently: none between two commits with the same arithmetic, a few where one of them
changed it (the microsecond clock admits requests sent exactly at the rate that float seconds
refused).

``--engine compiled`` (the default) times the numba kernels on the whole trace (compiled on a
small warm-up replay first); ``--engine reference`` times the reference limiter classes of each
tree (``replay(engine="reference")``) on the first ``--slice`` requests (default 1 M).

    python scripts/compiled_side_by_side.py 50cb99e            # this tree against commit 50cb99e
    python scripts/compiled_side_by_side.py 50cb99e --repeat 5 --algorithms token-bucket gcra
    python scripts/compiled_side_by_side.py 50cb99e 7abe820 --engine reference --slice 200000

The other commits' ``ratelab/`` are taken with ``git archive`` into a temporary folder. The
load average (``os.getloadavg``) is printed before and after.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def package_copy(rev: str | None, into: Path, name: str) -> None:
    """`rev`'s ratelab/ (the working tree's when None) as package `name` under `into`."""
    if rev is None:
        shutil.copytree(ROOT / "ratelab", into / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
        return
    archive = into / f"{name}.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "ratelab"],
                   check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / name / "x", filter="data")
    (into / name / "x" / "ratelab").rename(into / f"{name}_pkg")
    shutil.rmtree(into / name)
    (into / f"{name}_pkg").rename(into / name)


def bench_module(package: str):
    """`package`'s replay benchmark module: ``bench/replay.py`` since the benchmarks became a
    package (commit 944d758), ``bench.py`` before."""
    try:
        return importlib.import_module(f"{package}.bench.replay")
    except ModuleNotFoundError:
        return importlib.import_module(f"{package}.bench")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("revs", nargs="+", metavar="rev",
                   help="the commits to compare against (e.g. 50cb99e)")
    p.add_argument("--engine", choices=("compiled", "reference"), default="compiled")
    p.add_argument("--repeat", type=int, default=5, help="runs per algorithm and tree (best)")
    p.add_argument("--requests", type=int, default=10_000_000)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--slice", type=int, default=1_000_000,
                   help="requests replayed with --engine reference (the trace's first)")
    p.add_argument("--algorithms", nargs="*", default=None,
                   help="bench labels (default: every one)")
    args = p.parse_args(argv)
    reference = args.engine == "reference"

    print(f"load average before: {load_average()}  (engine {args.engine}, "
          f"best of {args.repeat})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        names = ["ratelab_this"] + [f"ratelab_that{i}" for i in range(len(args.revs))]
        package_copy(None, Path(tmp), names[0])
        for name, rev in zip(names[1:], args.revs):
            package_copy(rev, Path(tmp), name)
        sys.path.insert(0, tmp)
        trees = {}
        for name in names:
            bench = bench_module(name)
            trees[name] = (bench, importlib.import_module(f"{name}.limiters"),
                           importlib.import_module(f"{name}.replay"))
        traces = {n: b.bench_trace(args.requests, args.keys, np.random.default_rng(0))
                  for n, (b, _, _) in trees.items()}
        if reference:
            traces = {n: t.head(min(args.slice, len(t))) for n, t in traces.items()}
        n_requests = len(traces[names[0]])
        unit, scale = ("k/s", 1e3) if reference else ("M/s", 1e6)
        labels = [row[0] for row in trees["ratelab_this"][0].ALGORITHMS]
        header = f"{'algorithm':24} {'this (' + unit + ')':>11}"
        for rev in args.revs:
            header += (f" {rev + ' (' + unit + ')':>16} {'this/' + rev:>14}"
                       f" {'paired (low-high)':>19} {'differ':>8}")
        print(f"{n_requests:,} requests", flush=True)
        print(header, flush=True)
        for label in args.algorithms or labels:
            best, allowed, runs = {}, {}, {}
            limiters = {}
            for n, (bench, limiters_mod, replay_mod) in trees.items():
                _, algorithm, params, _ = next(r for r in bench.ALGORITHMS if r[0] == label)
                limiters[n] = limiters_mod.make(algorithm, **params)
                if not reference:
                    replay_mod.replay(limiters[n], traces[n].head(10_000), progress=False)
                best[n] = float("inf")
                runs[n] = []
            for r in range(args.repeat):  # the order flips each round: neither goes first always
                order = list(trees.items())
                for n, (_, _, replay_mod) in (order if r % 2 == 0 else order[::-1]):
                    t = time.process_time()
                    out = replay_mod.replay(limiters[n], traces[n], engine=args.engine,
                                            progress=False)
                    runs[n].append(time.process_time() - t)
                    best[n] = min(best[n], runs[n][-1])
                    allowed[n] = out.allowed
                    del out
            this = n_requests / best[names[0]] / scale
            line = f"{label:24} {this:11.1f}"
            for n in names[1:]:
                that = n_requests / best[n] / scale
                differ = int(np.count_nonzero(allowed[names[0]] != allowed[n]))
                pairs = np.array(runs[n]) / np.array(runs[names[0]])  # that's time / this's
                paired = f"{np.median(pairs):.2f} ({pairs.min():.2f}-{pairs.max():.2f})"
                line += f" {that:16.1f} {this / that:14.2f} {paired:>19} {differ:8,}"
            print(line, flush=True)
    print(f"load average after: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
