"""The instructor's cases: drawn from a seed, kept in a file only its owner can read.

:func:`make_cases` asks each exercise for its instructor cases
(:meth:`ratelab.exercises.core.Exercise.instructor_cases`: kinds of input the public checks
lack, not only more of the same), :func:`write_cases` saves them 0600, and :func:`read_cases`
reads them back with the file's sha256, which every grades file records. The same seed gives a
byte-identical file.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path

import numpy as np

from ..exercises import NAMES, module

CASES_FORMAT = "ratelab-grading-cases"
CASES_VERSION = 2
INSTRUCTOR_PREFIX = "instructor "


def make_cases(seed: int, exercises: list[str] | None = None) -> dict:
    """Instructor-only cases for `exercises` (default: all), drawn from `seed`."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    out = {"format": CASES_FORMAT, "version": CASES_VERSION, "seed": int(seed), "exercises": {}}
    for name in list(exercises or NAMES):
        ex = module(name).EXERCISE
        rng = np.random.default_rng([int(seed), zlib.crc32(name.encode())])
        cases = ex.instructor_cases(rng)
        for case in cases:
            case["name"] = INSTRUCTOR_PREFIX + case["name"]
        out["exercises"][name] = cases
    return out


def write_cases(cases: dict, path: Path) -> None:
    """Save `cases` as JSON, readable and writable by the owner only (0600)."""
    fd = os.open(Path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


def write_instructor_cases(path: Path, seed: int, exercises: list[str] | None = None) -> dict:
    """Draw the instructor cases (:func:`make_cases`) and save them at `path` (0600).

    Returns a record: the file, the seed, its sha256, and the cases per exercise."""
    cases = make_cases(seed, exercises)
    write_cases(cases, path)
    per = [{"exercise": n, "cases": len(c)} for n, c in cases["exercises"].items()]
    return {"cases_file": str(path), "seed": int(seed), "sha256": sha256(path),
            "exercises": per, "total_cases": sum(r["cases"] for r in per)}


def sha256(path: Path) -> str:
    """The hex sha256 of the file at `path`."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_cases(path: Path) -> dict:
    """The cases file at `path` (ValueError when it is not one), with its "sha256" added."""
    raw = Path(path).read_bytes()
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"cases file {path} is not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != CASES_FORMAT:
        raise ValueError(f"{path} is not a cases file (make one with ratelab grade make-cases)")
    if data.get("version") != CASES_VERSION:
        raise ValueError(f"cases file {path} is of version {data.get('version')!r}; this "
                         f"ratelab reads version {CASES_VERSION} (make it again with "
                         "ratelab grade make-cases)")
    exercises = data.get("exercises")
    if not isinstance(exercises, dict):
        raise ValueError(f"cases file {path} has no exercises table")
    unknown = [n for n in exercises if n not in NAMES]
    if unknown:
        raise ValueError(f"cases file {path} names unknown exercises: {', '.join(unknown)}")
    bad = [n for n, c in exercises.items()
           if not isinstance(c, list) or not all(isinstance(x, dict) and "name" in x for x in c)]
    if bad:
        raise ValueError(f"cases file {path}: the cases of {', '.join(bad)} are not a list of "
                         "named cases")
    data["sha256"] = hashlib.sha256(raw).hexdigest()
    return data
