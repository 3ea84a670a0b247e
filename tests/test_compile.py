"""A first command says that numba compiles, and ``ratelab compile`` does it ahead.

The notice is shown with a small kernel compiled in this process; the ahead-of-time run, on
a fresh numba cache in fresh processes, as a new install meets it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from numba import njit

from ratelab import kernel_cache
from ratelab.limiters import REGISTRY

RATELAB = Path(sys.executable).parent / "ratelab"
NASA = "data/NASA_access_log_Aug95_first1000.clf.gz"


class Terminal(io.StringIO):
    def isatty(self):
        return True


def fresh_kernel():
    @njit(cache=False)
    def kernel(x):
        return x + 1
    return kernel


def test_a_compile_is_announced_with_its_progress_and_a_cached_kernel_is_silent():
    kernel_cache.listen()
    stream = io.StringIO()
    with kernel_cache.announcing(stream, prog="tool") as notice:
        assert fresh_kernel()(1) == 2
        assert notice.done == 1
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("tool: compiling numba kernels, once (later runs load them")
    assert len(lines) == 2 and lines[1].startswith("tool: compiled 1 numba kernel in ")

    terminal = Terminal()
    with kernel_cache.announcing(terminal, prog="tool"):
        fresh_kernel()(1)
        fresh_kernel()(2)
    text = terminal.getvalue()
    assert "compiling numba kernels, once: 1 done (kernel)" in text
    assert "compiling numba kernels, once: 2 done (kernel)" in text
    last = text.rsplit(kernel_cache.CLEAR_LINE, 1)[-1]  # what the terminal shows at the end
    assert last.startswith("tool: compiled 2 numba kernels in ")
    assert last.endswith(" s; cached for later runs\n")

    quiet = io.StringIO()
    kernel = fresh_kernel()
    kernel(1)
    with kernel_cache.announcing(quiet):
        kernel(3)  # compiled already: nothing to say
    assert quiet.getvalue() == ""


def test_an_error_leaves_no_claim_that_compiling_finished():
    kernel_cache.listen()
    stream = io.StringIO()
    with pytest.raises(ZeroDivisionError):
        with kernel_cache.announcing(stream):
            fresh_kernel()(1)
            1 / 0
    assert "compiled" not in stream.getvalue()


def ratelab(*argv, env):
    return subprocess.run([str(RATELAB), *argv], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parent.parent)


@pytest.mark.slow
def test_after_ratelab_compile_the_first_commands_compile_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    first = ratelab("compile", "--json", env=env)
    assert first.returncode == 0, first.stderr
    record = json.loads(first.stdout)
    assert record["cache"] == str(tmp_path / "numba")
    assert all(step["kernels_compiled"] > 0 for step in record["steps"]), record
    assert "compiling numba kernels, once" in first.stderr
    assert f"compiled {record['kernels_compiled']} numba kernels in" in first.stderr

    policies = [a for name, cls in REGISTRY.items() for a in (
        "--policy", " ".join([name, *(f"{k}={v * 2}" for k, v in cls.example.items())]))]
    for argv in (["error-analysis", "--trace", NASA],
                 ["error-analysis", "--dataset", "epa-http", "--mode", "admission", "--limit", "50"],
                 ["error-analysis", "--synthetic", "--sources", "2000", "--requests", "300000"],
                 ["what-if", "--trace", NASA, *policies],
                 ["bench", "--requests", "100000", "--keys", "1000", "--no-reference",
                  "--no-limits"]):
        out = ratelab(*argv, env=env)
        assert out.returncode == 0, out.stderr
        assert "compiling numba kernels" not in out.stderr, (argv, out.stderr)

    again = ratelab("compile", "--json", env=env)
    assert json.loads(again.stdout)["kernels_compiled"] == 0
    assert again.stderr == ""
