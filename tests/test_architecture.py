"""The floors of the package hold (docs/architecture.md): imports run one way, no cycles, and no
import hides inside a function without saying why.

The layers are the import-linter contract in pyproject.toml; ``lint-imports`` checks it from the
command line too (``make check`` runs it).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ratelab"


def test_the_import_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "lint-imports (the import-linter package, in the test extra) is not installed"
    run = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each import inside a function of `path` with no comment saying why: on
    one of the lines of its run of consecutive imports, or on the line above the run."""
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines))
    imports = [node for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
               for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))]
    starts = {node.lineno for node in imports}
    spans = {node.lineno: node.end_lineno for node in imports}
    found = []
    for node in imports:
        first = node.lineno
        while first - 1 in {spans[s] for s in starts}:
            first = next(s for s in starts if spans[s] == first - 1)
        last = node.end_lineno
        while last + 1 in starts:
            last = spans[last + 1]
        run = lines[first - 1:last]
        if not any("#" in line for line in run) and not lines[first - 2].strip().startswith("#"):
            found.append((node.lineno, lines[node.lineno - 1].strip()))
    return sorted(set(found))


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_hides_in_a_function_without_a_reason(path):
    hidden = function_level_imports(path)
    assert not hidden, (f"{path.relative_to(ROOT)}: imports inside functions without a comment "
                        f"saying why (numba, a heavy optional dependency): {hidden}")


def test_the_check_catches_a_hidden_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    import json\n\n    # pyarrow is heavy: only here\n"
                      "    import csv\n    import io\n\n    import os  # the reason\n"
                      "    import re\n\n\ndef g():\n    import sys\n")
    assert function_level_imports(source) == [(2, "import json"), (13, "import sys")]
