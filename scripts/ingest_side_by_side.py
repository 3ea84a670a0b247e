#!/usr/bin/env python
"""The CLF reader of this tree against another commit's, side by side in one process.

As scripts/compiled_side_by_side.py does for the replay: both package trees are imported under
different names, and on the same gzip CLF log each round times, interleaved (floor, this, that,
this, that), in wall and CPU seconds (``time.process_time``: this process, every thread):

* **floor**: the log's blocks inflated and thrown away (this tree's ``fastclf._blocks``);
* **parse**: each tree's ``read_clf`` on blocks inflated beforehand (no inflating: the
  kernel and its Python around it alone);
* **read**: each tree's ``load_log(engine="fast")``, the whole reader (inflating on a thread
  of its own, parsing, the Trace built).

The load average is printed before and after each round (other work on the machine slows
the rounds it overlaps). ``same`` says whether the two trees read the same requests, names
and report.

    python scripts/ingest_side_by_side.py 7abe820 /tmp/bench.log.gz --repeat 5

(make the log with ``ratelab bench ingest --lines 2000000 --seed 0 --repeat 1
--no-reference --keep /tmp/bench.log.gz``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiled_side_by_side import package_copy  # noqa: E402

TREES = ("ratelab_this", "ratelab_that")


def timed(fn):
    """(result, wall s, CPU s) of fn()."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def parse_only(fastclf, loaders, log: Path, blocks: list):
    """`fastclf.read_clf` on `blocks`, inflated beforehand, instead of the file's."""
    saved = fastclf._blocks, fastclf._ahead
    fastclf._blocks = lambda path, progress: iter(blocks)
    fastclf._ahead = lambda items, depth=4: items
    try:
        report = loaders.LoadReport(log.name, "clf")
        return fastclf.read_clf(log, report, 5, False), report
    finally:
        fastclf._blocks, fastclf._ahead = saved


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rev", help="the commit to compare against (e.g. 7abe820)")
    p.add_argument("log", type=Path, help="a gzip CLF log")
    p.add_argument("--repeat", type=int, default=5, help="rounds")
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        package_copy(None, Path(tmp), TREES[0])
        package_copy(args.rev, Path(tmp), TREES[1])
        sys.path.insert(0, tmp)
        mods = {name: (importlib.import_module(f"{name}.traces.fastclf"),
                       importlib.import_module(f"{name}.traces.loaders")) for name in TREES}
        fast0 = mods[TREES[0]][0]
        blocks = list(fast0._blocks(args.log, False))
        print(f"{args.log}: {sum(map(len, blocks)) / 1e6:,.0f} MB inflated; compiling ...",
              flush=True)
        traces = {n: ld.load_log(args.log, "clf", engine="fast", progress=False, warn=False)
                  for n, (_, ld) in mods.items()}  # compile (or load the cache)
        a, b = traces.values()
        same = (np.array_equal(a.time, b.time) and np.array_equal(a.key, b.key)
                and list(a.key_names) == list(b.key_names)
                and vars(a.meta["report"]) == vars(b.meta["report"]))
        print(f"same requests, names and report: {same}")
        print("round  load before  | floor wall/CPU | parse this, that: wall/CPU (x floor CPU) "
              "| read this, that: wall/CPU (x floor wall, CPU) | load after")
        for r in range(args.repeat):
            before = load_average()
            _, fw, fc = timed(lambda: sum(len(x) for x in fast0._blocks(args.log, False)))
            cells = {}
            for step in ("parse", "read"):
                for name, (fastclf, loaders) in mods.items():
                    if step == "parse":
                        _, w, c = timed(lambda: parse_only(fastclf, loaders, args.log, blocks))
                        cells[step, name] = f"{w:.3f}/{c:.3f} ({c / fc:.2f}x)"
                    else:
                        _, w, c = timed(lambda: loaders.load_log(
                            args.log, "clf", engine="fast", progress=False, warn=False))
                        cells[step, name] = f"{w:.3f}/{c:.3f} ({w / fw:.2f}x, {c / fc:.2f}x)"
            print(f"{r + 1:5}  {before:12} | {fw:.3f}/{fc:.3f} | "
                  f"{cells['parse', TREES[0]]}, {cells['parse', TREES[1]]} | "
                  f"{cells['read', TREES[0]]}, {cells['read', TREES[1]]} | {load_average()}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
