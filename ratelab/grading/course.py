"""Who and what a submission is, and what the instructor hands the grader: the roster and the
course file.

* :func:`identify` says who and what a submission is: a student id and an assignment, from the
  file name (``STUDENT.NN-name.ipynb``) or from a roster read by :func:`read_roster`;
* :func:`read_course` reads points and due dates from the course's TOML file.

Both names become folder and file names of the gradebook (:mod:`.gradebook`), so they are
checked to be safe as such (:func:`safe_name`). Every error names the file and what is wrong.
"""

from __future__ import annotations

import csv
import io
import math
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Mapping

from ..exercises import NAMES

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]*")
SAFE_NAME_MAX = 128
"""Longest student id or assignment accepted: it becomes a folder or file name."""

ASSIGNMENT = r"\d\d-[a-z0-9]+(?:-[a-z0-9]+)*"
DEFAULT_PATTERN = re.compile(rf"(?P<student>.+)\.(?P<assignment>{ASSIGNMENT})\.ipynb", re.DOTALL)
PATTERN_TEXT = "STUDENT.NN-name.ipynb (e.g. alice.01-buckets.ipynb)"


def safe_name(value: str, what: str) -> str:
    """`value` unchanged when it is safe as a file name; ValueError naming `what` otherwise."""
    if (not isinstance(value, str) or not SAFE_NAME.fullmatch(value) or ".." in value
            or len(value) > SAFE_NAME_MAX):
        raise ValueError(
            f"{what} {value!r} is not safe as a file name: use letters, digits and _ . @ + -, "
            f"starting with a letter or digit, no '..', at most {SAFE_NAME_MAX} characters")
    return value


@dataclass(frozen=True)
class Identity:
    """Who and what a submission is: a student id and an assignment, both safe as file names."""

    student: str
    assignment: str

    def __post_init__(self):
        safe_name(self.student, "student")
        safe_name(self.assignment, "assignment")


# ---------------------------------------------------------------- roster and identity


@dataclass(frozen=True)
class RosterEntry:
    """A roster line: the student id, the assignment (None: take it from the file name)."""

    student: str
    assignment: str | None
    line: int


@dataclass(frozen=True, eq=False)
class Roster:
    """Submission file names mapped to student ids (and assignments), read from a CSV."""

    entries: Mapping[str, RosterEntry]
    source: Path | None = None

    def lookup(self, filename: str) -> RosterEntry | None:
        """The entry for `filename` (only its last component counts), or None."""
        return self.entries.get(Path(filename).name)


def _roster_columns(header: list[str] | None, path: Path) -> dict[str, int]:
    """The index of each roster column: file, student and (when present) assignment."""
    names = [h.strip().lower() for h in header or []]
    missing = [c for c in ("file", "student") if c not in names]
    if missing:
        raise ValueError(f"{path}, line 1: the header must name the columns file,student"
                         f"[,assignment]; missing {', '.join(missing)}")
    return {c: names.index(c) for c in ("file", "student", "assignment") if c in names}


def _roster_entry(row: list[str], cols: dict[str, int], path: Path, line: int) -> tuple:
    """The (file name, entry) of one roster row; ValueError naming the line when it is bad."""
    cell = {c: (row[i].strip() if i < len(row) else "") for c, i in cols.items()}
    where = f"{path}, line {line}"
    for c in ("file", "student"):
        if not cell[c]:
            raise ValueError(f"{where}: the {c} column is empty")
    if "/" in cell["file"] or "\\" in cell["file"]:
        raise ValueError(f"{where}: file {cell['file']!r} must be a file name, not a path")
    try:
        entry = RosterEntry(safe_name(cell["student"], "student"),
                            safe_name(cell["assignment"], "assignment")
                            if cell.get("assignment") else None, line)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return cell["file"], entry


def read_roster(path: Path) -> Roster:
    """The roster in CSV file `path` (header file,student[,assignment]; other columns ignored).

    Errors name the line: a missing column or value, a duplicate file, an unsafe id, two files
    for one student's same assignment."""
    path = Path(path)
    entries: dict[str, RosterEntry] = {}
    owners: dict[tuple, int] = {}
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a UTF-8 CSV: {e}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    cols = _roster_columns(next(reader, None), path)
    for row in reader:
        if not any(c.strip() for c in row):
            continue
        name, entry = _roster_entry(row, cols, path, reader.line_num)
        if name in entries:
            raise ValueError(f"{path}, line {entry.line}: file {name!r} is already on "
                             f"line {entries[name].line}")
        key = (entry.student, entry.assignment)
        if entry.assignment and key in owners:
            raise ValueError(f"{path}, line {entry.line}: student {entry.student!r} already "
                             f"has assignment {entry.assignment!r} on line {owners[key]}")
        entries[name], owners[key] = entry, entry.line
    return Roster(entries, path)


def _identity(filename: str, student: str, assignment: str) -> Identity:
    """Identity(student, assignment); a ValueError names `filename`."""
    try:
        return Identity(student, assignment)
    except ValueError as e:
        raise ValueError(f"submission {filename!r}: {e}") from None


def identify(path: Path, roster: Roster | None = None) -> Identity:
    """Who and what the notebook at `path` is, from the roster or else its file name.

    The default name is STUDENT.NN-name.ipynb. A roster entry gives the student id and,
    when it has one, the assignment (else the name's). A name that fits neither, or an id
    that is unsafe as a file name: ValueError naming the file."""
    name = Path(path).name
    entry = roster.lookup(name) if roster is not None else None
    parsed = DEFAULT_PATTERN.fullmatch(name)
    if entry is not None:
        assignment = entry.assignment or (parsed["assignment"] if parsed else None)
        if assignment is None:
            raise ValueError(f"submission {name!r}: line {entry.line} of the roster "
                             f"{roster.source} gives no assignment, and the file name does not "
                             f"fit {PATTERN_TEXT}")
        return _identity(name, entry.student, assignment)
    if parsed is None:
        where = f", and it is not in the roster {roster.source}" if roster is not None else ""
        raise ValueError(f"submission {name!r} does not fit {PATTERN_TEXT}{where}")
    return _identity(name, parsed["student"], parsed["assignment"])


# ---------------------------------------------------------------- the course file


@dataclass(frozen=True, eq=False)
class Course:
    """Points per exercise (1 when not listed) and due dates per assignment."""

    exercise_points: Mapping[str, float] = field(default_factory=dict)
    due_dates: Mapping[str, datetime] = field(default_factory=dict)
    source: Path | None = None

    def points(self, exercise: str) -> float:
        """The points `exercise` is worth: the course file's number, else 1."""
        return float(self.exercise_points.get(exercise, 1.0))

    def due(self, assignment: str) -> datetime | None:
        """When `assignment` is due (UTC), or None when the course file gives no date."""
        return self.due_dates.get(assignment)

    @property
    def exercises(self) -> tuple[str, ...]:
        """The exercises the course file lists, in the suite's order."""
        return tuple(n for n in NAMES if n in self.exercise_points)


def _unknown_keys(table: dict, allowed: tuple, path: Path, where: str) -> None:
    """Nothing; a ValueError names the first key of `table` not in `allowed`."""
    for key in table:
        if key not in allowed:
            raise ValueError(f"{path}: unknown key {where}{key!r}; "
                             f"expected {', '.join(allowed)}")


def _course_points(table, path: Path) -> dict[str, float]:
    """The [points] table: exercise name -> points, each a finite number >= 0."""
    if not isinstance(table, dict):
        raise ValueError(f"{path}: 'points' must be a table ([points])")
    _unknown_keys(table, NAMES, path, "in [points]: ")
    out = {}
    for key, value in table.items():
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or value < 0):
            raise ValueError(f"{path}: points.{key} must be a number >= 0, got {value!r}")
        out[key] = float(value)
    return out


def _due_date(value, path: Path, key: str) -> datetime:
    """The due date `value` in UTC; a ValueError when it is not a datetime with an offset."""
    if isinstance(value, datetime) and value.utcoffset() is not None:
        return value.astimezone(UTC)
    got = ("a time without an offset" if isinstance(value, datetime)
           else "a date without a time" if isinstance(value, date) else repr(value))
    raise ValueError(f"{path}: {key} must be a date and time with its offset, e.g. "
                     f"2027-01-15T23:59:00Z; got {got}")


def _course_dues(table, path: Path) -> dict[str, datetime]:
    """The [assignments.NAME] tables: assignment -> due date (only those that give one)."""
    if not isinstance(table, dict):
        raise ValueError(f"{path}: 'assignments' must be a table ([assignments.NAME])")
    out = {}
    for name, spec in table.items():
        try:
            safe_name(name, "assignment")
        except ValueError as e:
            raise ValueError(f"{path}: assignments.{name}: {e}") from None
        if not isinstance(spec, dict):
            raise ValueError(f"{path}: assignments.{name} must be a table")
        _unknown_keys(spec, ("due",), path, f"in [assignments.{name}]: ")
        if "due" in spec:
            out[name] = _due_date(spec["due"], path, f"assignments.{name}.due")
    return out


def read_course(path: Path) -> Course:
    """The course in TOML file `path`: [points] per exercise, [assignments.NAME] due dates.

    An unknown exercise or key, or points that are negative or not a number: ValueError
    naming the key and the file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    _unknown_keys(data, ("points", "assignments"), path, "")
    return Course(_course_points(data.get("points", {}), path),
                  _course_dues(data.get("assignments", {}), path), path)


