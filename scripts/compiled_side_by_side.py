#!/usr/bin/env python
"""The compiled replay of this tree against another commit's, side by side in one process.

Two package trees imported under different names into the same process replay the same
seeded trace (``ratelab bench``'s: 10 M requests, 100 K keys, limit 100 per 60 s) through each
algorithm, runs interleaved (this, that, this, that, ...), so that a machine shared with
other work slows both alike; a figure is the best of ``--repeat`` runs, in decisions per CPU
second. ``differ`` counts the requests the two decide differently: none between two commits
with the same arithmetic, a few where one of them changed it (the microsecond clock admits
requests sent exactly at the rate that float seconds refused).

    python scripts/compiled_side_by_side.py 50cb99e            # this tree against commit 50cb99e
    python scripts/compiled_side_by_side.py 50cb99e --repeat 5 --algorithms token-bucket gcra

The other commit's ``ratelab/`` is taken with ``git archive`` into a temporary folder.
"""

from __future__ import annotations

import argparse
import importlib
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
        tar.extractall(into / "x", filter="data")
    (into / "x" / "ratelab").rename(into / name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rev", help="the commit to compare against (e.g. 50cb99e)")
    p.add_argument("--repeat", type=int, default=5, help="runs per algorithm and tree (best)")
    p.add_argument("--requests", type=int, default=10_000_000)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--algorithms", nargs="*", default=None,
                   help="bench labels (default: every one)")
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        package_copy(None, Path(tmp), "ratelab_this")
        package_copy(args.rev, Path(tmp), "ratelab_that")
        sys.path.insert(0, tmp)
        trees = {}
        for name in ("ratelab_this", "ratelab_that"):
            bench = importlib.import_module(f"{name}.bench")
            trees[name] = (bench, importlib.import_module(f"{name}.limiters"),
                           importlib.import_module(f"{name}.replay"))
        traces = {n: b.bench_trace(args.requests, args.keys, np.random.default_rng(0))
                  for n, (b, _, _) in trees.items()}
        labels = [row[0] for row in trees["ratelab_this"][0].ALGORITHMS]
        print(f"{'algorithm':24} {'this (M/s)':>10} {args.rev + ' (M/s)':>16} {'this/that':>10}"
              f" {'differ':>8}")
        for label in args.algorithms or labels:
            best, allowed = {}, {}
            limiters = {}
            for n, (bench, limiters_mod, replay_mod) in trees.items():
                _, algorithm, params, _ = next(r for r in bench.ALGORITHMS if r[0] == label)
                limiters[n] = limiters_mod.make(algorithm, **params)
                replay_mod.replay(limiters[n], traces[n].head(10_000), progress=False)  # compile
                best[n] = float("inf")
            for _ in range(args.repeat):
                for n, (_, _, replay_mod) in trees.items():
                    t = time.process_time()
                    out = replay_mod.replay(limiters[n], traces[n], progress=False)
                    best[n] = min(best[n], time.process_time() - t)
                    allowed[n] = out.allowed
            differ = int(np.count_nonzero(allowed["ratelab_this"] != allowed["ratelab_that"]))
            this, that = (args.requests / best[n] / 1e6 for n in ("ratelab_this", "ratelab_that"))
            print(f"{label:24} {this:10.1f} {that:16.1f} {this / that:10.2f} {differ:8,}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
