"""The student build: the ratelab package as a graded submission imports it, without the answers.

A submission runs with this build first on its path (and, under bubblewrap, bound over the real
package's folder too), so what it imports is the library and nothing that knows the answers:

* ``ratelab/exercises/`` is a stub package with the same public names — ``NAMES``,
  ``module(name)``, ``reveal`` (``predict.py``, kept as it is) and one module per exercise whose
  ``check(answer, **kw)`` prints that the grader checks the answer and returns None, and whose
  ``hint()`` and ``solution()`` say they are not available while grading. The reference answers,
  the checkers and their cases are not in the build.
* ``ratelab/grading/`` keeps only what runs inside the sandbox (:data:`SANDBOX_MODULES`): not the
  grader, the gradebook, the sandbox or any cases file.
* no ``__pycache__``; every file readable by others (the submission may run as nobody).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..exercises import NAMES
from .sandbox import installed_package

SANDBOX_MODULES = ("__init__.py", "worker.py")
"""The modules of ratelab/grading/ that run inside the sandbox (copied when they exist)."""

KEPT_EXERCISE_MODULES = ("predict.py", "answers.py", "protocol.py")
"""Modules of ratelab/exercises/ copied as they are (they know no answers)."""

CHECKED_BY_GRADER = "{name}: your answer is checked by the grader, not in this notebook"

STUB_INIT = '''\
"""The exercises as a graded notebook sees them: the grader checks the answers, elsewhere.

check() prints that the grader checks the answer; hint() and solution() are not available while
grading. reveal() works as usual.
"""

import importlib

from .predict import reveal

NAMES = {names!r}


def module(name: str):
    """The module of exercise `name` (ValueError naming the exercises when unknown)."""
    if name not in NAMES:
        raise ValueError(f"unknown exercise {{name!r}}; choose one of {{', '.join(NAMES)}}")
    return importlib.import_module(f"{{__name__}}.{{name}}")


__all__ = ["NAMES", "module", "reveal"]
'''

STUB_EXERCISE = '''\
"""Exercise {name}, as a graded notebook sees it: the grader checks the answer, not this module."""

NAME = {name!r}


def check(answer, **kw):
    """Say that the grader checks `answer`; returns None."""
    print({checked!r})


def hint():
    """Not available while grading."""
    print(f"{{NAME}}: hints are not available while grading")


def solution():
    """Not available while grading."""
    print(f"{{NAME}}: the solution is not available while grading")
'''


def student_package(dest: Path) -> Path:
    """Write the student build of ratelab into `dest`/ratelab; returns `dest` (the folder to put
    on PYTHONPATH). FileExistsError when `dest`/ratelab exists."""
    dest = Path(dest)
    source, target = installed_package(), dest / "ratelab"
    shutil.copytree(source, target, ignore=_ignore_below(source))
    _write_exercise_stubs(source / "exercises", target / "exercises")
    _copy_sandbox_modules(source / "grading", target / "grading")
    _open_to_others(dest)
    return dest


def _ignore_below(source: Path):
    """copytree's ignore: caches, and the exercises and grading folders (written apart)."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo"))}
        if Path(folder) == source:
            skip |= {"exercises", "grading"}
        return skip
    return ignore


def _write_exercise_stubs(source: Path, target: Path) -> None:
    target.mkdir()
    (target / "__init__.py").write_text(STUB_INIT.format(names=tuple(NAMES)))
    for name in KEPT_EXERCISE_MODULES:
        shutil.copyfile(source / name, target / name)
    for name in NAMES:
        checked = CHECKED_BY_GRADER.format(name=name)
        (target / f"{name}.py").write_text(STUB_EXERCISE.format(name=name, checked=checked))


def _copy_sandbox_modules(source: Path, target: Path) -> None:
    target.mkdir()
    for name in SANDBOX_MODULES:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)


def _open_to_others(top: Path) -> None:
    """Folders 0755 and files 0644 from `top` down: readable by the sandbox's nobody."""
    top.chmod(0o755)
    for folder, dirs, files in os.walk(top):
        for d in dirs:
            os.chmod(os.path.join(folder, d), 0o755)
        for f in files:
            os.chmod(os.path.join(folder, f), 0o644)
