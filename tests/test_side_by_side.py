"""The side-by-side scripts (scripts/*_side_by_side.py) still run against a commit: a tiny
trace, this tree against HEAD, the same decisions (figures never asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # compiles every kernel twice: left out of make check

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def run(*args: str) -> str:
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600,
                         cwd=SCRIPTS.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_the_replay_side_by_side_runs(engine):
    out = run(str(SCRIPTS / "compiled_side_by_side.py"), "HEAD", "--engine", engine,
              "--requests", "20000", "--keys", "50", "--repeat", "1", "--slice", "5000",
              "--algorithms", "gcra", "sliding-window-counter")
    rows = [line.split() for line in out.splitlines() if re.match(r"(gcra|sliding)", line)]
    assert [r[0] for r in rows] == ["gcra", "sliding-window-counter"]
    assert all(r[-1] == "0" for r in rows), out  # differ: none, the same arithmetic


def test_the_analysis_side_by_side_runs():
    out = run(str(SCRIPTS / "analysis_side_by_side.py"), "HEAD", "--requests", "20000",
              "--keys", "50", "--repeat", "1")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["estimate"],
                                                                               ["admission"])]
    assert [r[0] for r in rows] == ["estimate", "admission"], out
    assert all(r[-1] == "True" for r in rows), out
