#!/usr/bin/env python
"""Where a compiled replay's time goes, algorithm by algorithm, on ``ratelab bench``'s trace.

Every compiled function a replay calls (``ratelab.replay.kernels``: the algorithm's kernel, the
ticks conversion, and the passes some algorithms run before or after their kernel — the
sliding log's layout, nginx's milliseconds and delays) is timed on its own, in CPU seconds,
over ``--repeat`` replays of the whole trace; the rest of ``replay()`` (checks, allocating
the outputs, the Python between slices) is ``other``. The fastest replay of each algorithm
is shown, in milliseconds and in nanoseconds per request, with the load average before and
after.

    python scripts/replay_profile.py                     # 10 M requests, 100 K keys
    python scripts/replay_profile.py --algorithms nginx sliding-window-log --repeat 7
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from ratelab.bench.replay import ALGORITHMS, bench_trace
from ratelab.limiters import make
from ratelab.replay import replay
from ratelab.replay import kernels as K

TIMED = ("ticks_of", "log_layout", "ms_of_ticks", "nginx_delays", "token_bucket",
         "leaky_bucket", "fixed_window", "sliding_log", "sliding_counter", "gcra", "nginx",
         "haproxy")
"""The kernels module's compiled functions a replay calls (the builders look them up on the
module at every call, so a timing wrapper put there sees each call)."""


def timed(spent: dict) -> None:
    """Wrap each of TIMED on the kernels module so that its CPU seconds add up in `spent`."""
    for name in TIMED:
        fn = getattr(K, name)

        def wrapper(*args, _fn=fn, _name=name):
            start = time.process_time()
            out = _fn(*args)
            spent[_name] = spent.get(_name, 0.0) + time.process_time() - start
            return out

        setattr(K, name, wrapper)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=10_000_000)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5, help="replays per algorithm (fastest)")
    p.add_argument("--algorithms", nargs="*", default=None,
                   help="bench labels (default: every one)")
    args = p.parse_args(argv)

    trace = bench_trace(args.requests, args.keys, np.random.default_rng(0))
    n = len(trace)
    spent: dict[str, float] = {}
    timed(spent)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{n:,} requests, {trace.n_keys:,} keys; fastest of {args.repeat}, CPU ms "
          "(ns a request)", flush=True)
    for label, name, params, _ in ALGORITHMS:
        if args.algorithms and label not in args.algorithms:
            continue
        limiter = make(name, **params)
        replay(limiter, trace.head(10_000), progress=False)  # compile or load from the cache
        best = None
        for _ in range(args.repeat):
            spent.clear()
            start = time.process_time()
            replay(limiter, trace, progress=False)
            total = time.process_time() - start
            if best is None or total < best[0]:
                best = (total, dict(spent))
        total, parts = best
        cells = [f"total {1e3 * total:6.1f} ({1e9 * total / n:4.1f})"]
        for part, s in sorted(parts.items(), key=lambda kv: -kv[1]):
            cells.append(f"{part} {1e3 * s:6.1f} ({1e9 * s / n:4.1f})")
        other = total - sum(parts.values())
        cells.append(f"other {1e3 * other:5.1f} ({1e9 * other / n:4.1f})")
        print(f"{label:24} " + "  ".join(cells), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
