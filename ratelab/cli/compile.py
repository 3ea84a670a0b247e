"""``ratelab compile``: the numba kernels of a first command, compiled into the cache ahead.

A fresh install compiles its kernels the first time a command needs them: tens of seconds on
a small machine, before the first line of output. ``make lab`` and ``make test`` run this
command once instead, and every later command loads the kernels from numba's cache. It runs
the commands a newcomer runs first — ``error-analysis`` on a small generated log in the
common log format (its passes, compiled once, serve HAProxy's counter too) and on a small
synthetic population, ``what-if`` on the log with one policy
per registry algorithm, and ``bench`` on a small trace — so that what gets compiled is exactly
what they need, and says per step how many kernels it compiled: a second run compiles none.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import tempfile
import time
from pathlib import Path

from .. import kernel_cache
from ..limiters import REGISTRY
from .support import EnvironmentFailure, command

LINES = 5_000
HOSTS = 2_500
"""Lines and hosts of the generated log: more hosts than the log reader's first name table
holds (2,048), so that its growing is compiled too; read in no time."""


def add_compile(sub) -> None:
    command(sub, "compile", run=run_compile, render=render_compile,
            help="compile the numba kernels a first command needs, into the cache, once",
            description="Run error-analysis (on a small generated log and a small synthetic "
                        "population), what-if (every registry algorithm) and bench on small "
                        "inputs, so that numba compiles "
                        "their kernels now and caches them: later commands start in seconds "
                        "instead of compiling first. make lab and make test run it. Exits 1 "
                        "where numba cannot cache the kernels.",
            example="ratelab compile")


def clf_log(path: Path, lines: int = LINES, seed: int = 0) -> Path:
    """A small log in the common log format: `HOSTS` hosts over ten minutes of 1995, each
    seen first in turn, then at random."""
    rng = random.Random(seed)
    with open(path, "w", encoding="ascii") as f:
        for i in range(lines):
            second = i * 600 // lines
            host = i if i < HOSTS else rng.randrange(HOSTS)
            f.write(f"host{host}.example - - [01/Aug/1995:00:{second // 60:02d}:"
                    f"{second % 60:02d} -0400] \"GET /page{rng.randrange(9)}.html HTTP/1.0\" "
                    f"200 {rng.randrange(1, 9000)}\n")
    return path


def steps(log: Path) -> list[tuple[str, list[str]]]:
    """(what it compiles, the command line that compiles it), in order."""
    policies = [arg for name, cls in REGISTRY.items()
                for arg in ("--policy", " ".join([name, *(f"{k}={v}" for k, v in
                                                          cls.example.items())]))]
    return [
        ("the log reader and the error analysis",
         ["error-analysis", "--trace", str(log), "--no-progress"]),
        ("the synthetic population",
         ["error-analysis", "--synthetic", "--sources", "200", "--requests", "20000",
          "--no-progress"]),
        ("the replay of every algorithm (what-if)",
         ["what-if", "--trace", str(log), "--no-progress", *policies]),
        ("the benchmark's replay",
         ["bench", "--requests", "20000", "--keys", "100", "--repeat", "1", "--no-reference",
          "--no-limits"]),
    ]


def run_compile(args) -> dict:
    """Each step's kernels compiled and seconds; an EnvironmentFailure where numba cannot
    cache them."""
    from . import main  # the commands themselves, run one by one

    if not kernel_cache.watch_limiters():
        raise EnvironmentFailure("this numba cannot cache ratelab's kernels: they compile "
                                 "in every process", "use the numba pinned in pyproject.toml")
    done = []
    with tempfile.TemporaryDirectory(prefix="ratelab-compile-") as tmp, \
            kernel_cache.announcing() as notice:
        for what, argv in steps(clf_log(Path(tmp) / "access.log")):
            before, start = notice.done, time.perf_counter()
            said = io.StringIO()  # the command's output: only its failure is shown
            with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                code = main(argv)
            if code != 0:
                last = (said.getvalue().strip().splitlines() or ["no message"])[-1]
                raise EnvironmentFailure(f"compiling {what}: `ratelab {' '.join(argv[:1])}` "
                                         f"exited {code}: {last}")
            done.append({"step": what, "kernels_compiled": notice.done - before,
                         "seconds": round(time.perf_counter() - start, 2)})
    return {"cache": os.environ.get("NUMBA_CACHE_DIR") or "beside the package's sources",
            "steps": done, "kernels_compiled": sum(d["kernels_compiled"] for d in done)}


def render_compile(record: dict) -> str:
    rows = [f"{d['step']:42} {d['kernels_compiled']:3} compiled {d['seconds']:7.1f} s"
            for d in record["steps"]]
    return "\n".join([*rows, f"numba's cache: {record['cache']}"])
