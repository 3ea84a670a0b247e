"""The gradebook: graded notebooks in, a long CSV, a wide CSV and feedback pages out.

Everything between "these notebooks were graded, here are per-exercise results" and files on
disk. The grader (:mod:`.grader`) decides scores and verdicts; this module only records them:

* who and what a submission is, and the course's points and due dates, come from
  :mod:`.course` (``identify``, ``read_roster``, ``read_course``);
* :func:`notebook_rows`, :func:`merge_rows`, :func:`wide_table` and :func:`feedback_page` are
  pure functions over plain data: rows are dicts of strings, exactly as the CSV holds them.
* :func:`write_gradebook` is the one writer. Every file it writes is created 0600 under a
  temporary name and moved into place, so a crash never leaves half a gradebook and no file is
  ever readable by others; folders are 0700.

Student-supplied text (first failures, feedback timelines, notes) is capped in length and
stripped of control characters; in CSV cells a leading ``= + - @`` is neutralised with ``'``;
on feedback pages it sits only inside fenced blocks longer than any backtick run it contains.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import secrets
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..exercises import NAMES
from .course import Course, Identity, safe_name

VERDICTS = ("passed", "wrong", "not attempted", "missing", "error", "timed out", "flagged")
"""The fixed set of verdict words; any other is a ValueError."""

COLUMNS = ("student", "assignment", "submission", "exercise", "score", "points",
           "points_possible", "verdict", "first_failure", "late", "graded_at",
           "ratelab_version", "cases_sha256", "cases_seed", "isolation")
"""The long gradebook's header: a file whose first line is not exactly this is not ours."""

RUN_COLUMNS = ("graded_at", "ratelab_version", "cases_sha256", "cases_seed")
WIDE_TAIL = ("total", "possible", *RUN_COLUMNS)
"""The wide gradebook's last columns (after student and one column per exercise)."""

LINE_MAX = 300
"""Longest one-line student text kept (a first failure, the submission's file name)."""
NOTE_MAX = 500
NOTES_MAX = 20
FEEDBACK_MAX = 20_000
"""Longest feedback text (a timeline) kept per exercise."""

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""How a CSV cell that a spreadsheet would run as a formula begins."""

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


# ---------------------------------------------------------------- the records


def check_verdict(verdict: str) -> str:
    """`verdict` unchanged when it is one of :data:`VERDICTS`; ValueError otherwise."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return verdict


def utc_instant(text: str) -> datetime:
    """The UTC datetime that an ISO 8601 stamp names (ValueError without a UTC offset)."""
    try:
        when = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not an ISO 8601 time") from None
    if when.utcoffset() is None or when.utcoffset().total_seconds() != 0:
        raise ValueError(f"{text!r} is not in UTC (end it with Z or +00:00)")
    return when


def utc_stamp(when: datetime) -> str:
    """`when` as ISO 8601 UTC to the second, e.g. 2027-01-15T23:59:00Z (naive means UTC)."""
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ExerciseResult:
    """One exercise of one notebook: its score (share of cases passed), verdict and texts."""

    exercise: str
    score: float
    verdict: str
    first_failure: str
    feedback: str = ""

    def __post_init__(self):
        safe_name(self.exercise, "exercise")
        check_verdict(self.verdict)


@dataclass
class Graded:
    """One graded notebook: who, which file, the per-exercise results and notes."""

    identity: Identity
    submission: Path
    results: list[ExerciseResult]
    notes: list[str] = field(default_factory=list)
    submitted_at: datetime | None = None


@dataclass(frozen=True)
class RunInfo:
    """What every gradebook file records about the run that wrote it."""

    ratelab_version: str
    cases_sha256: str
    cases_seed: int | None
    graded_at: str
    isolation: str

    def __post_init__(self):
        utc_instant(self.graded_at)
        if self.cases_seed is not None and (isinstance(self.cases_seed, bool)
                                            or not isinstance(self.cases_seed, int)):
            raise ValueError(f"cases_seed must be a whole number or None, got {self.cases_seed!r}")


# ---------------------------------------------------------------- cleaning text


def clamp_score(score) -> float:
    """`score` as a float in [0, 1]: NaN and anything not a number give 0, inf gives 1."""
    try:
        value = float(score)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))


def _strip_controls(text: str, keep_newlines: bool) -> str:
    """`text` without control, bidirectional-override or surrogate characters.

    Line breaks become newlines (`keep_newlines`) or spaces; a tab becomes four spaces."""
    out = []
    for ch in text.replace("\r\n", "\n").replace("\t", "    "):
        if ch in _LINE_BREAKS:
            out.append("\n" if keep_newlines else " ")
        elif ch not in _BIDI and unicodedata.category(ch) not in ("Cc", "Cs"):
            out.append(ch)
    return "".join(out)


CUT = " … (cut)"


def _clean(text, limit: int, keep_newlines: bool) -> str:
    """`text` cleaned of control characters and cut to `limit` characters, marked when cut.

    Only the head of a long text is cleaned: a flood of output costs no more than a line."""
    raw = "" if text is None else str(text)
    head = _strip_controls(raw[:2 * limit + 64], keep_newlines)
    head = head.strip("\n") if keep_newlines else " ".join(head.split())
    if len(head) <= limit and len(raw) <= 2 * limit + 64:
        return head
    return head[:limit - len(CUT)].rstrip() + CUT


def clean_line(text, limit: int = LINE_MAX) -> str:
    """Student text as one clean line: no control characters, at most `limit` characters."""
    return _clean(text, limit, keep_newlines=False)


def clean_text(text, limit: int = FEEDBACK_MAX) -> str:
    """Student text with its newlines but no other control characters, at most `limit` long."""
    return _clean(text, limit, keep_newlines=True)


def clean_notes(notes) -> list[str]:
    """The notes as clean lines, at most :data:`NOTES_MAX` of them (the cut counted)."""
    notes = [clean_line(n, NOTE_MAX) for n in notes or []]
    if len(notes) > NOTES_MAX:
        return notes[:NOTES_MAX - 1] + [f"… and {len(notes) - NOTES_MAX + 1} more notes"]
    return notes


def csv_cell(value) -> str:
    """`value` as a CSV cell a spreadsheet shows and never runs (a leading = + - @ gets ')."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def _longest_backtick_run(text: str) -> int:
    """The length of the longest run of backticks in `text` (0 when none)."""
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def fenced(text: str, info: str = "text") -> str:
    """`text` in a fenced code block whose fence is longer than any backtick run inside."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def code_span(text: str) -> str:
    """`text` as an inline code span that backticks inside cannot close."""
    ticks = "`" * (_longest_backtick_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def number(value: float) -> str:
    """`value` with at most 4 decimals and no trailing zeros (2 -> "2", 0.5 -> "0.5")."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


# ---------------------------------------------------------------- rows


def late(submitted_at: datetime | None, due: datetime | None) -> str:
    """The lateness cell: yes or no when both times are known, empty otherwise (naive is UTC)."""
    if due is None or submitted_at is None:
        return ""
    if submitted_at.tzinfo is None:
        submitted_at = submitted_at.replace(tzinfo=UTC)
    return "yes" if submitted_at > due else "no"


def _run_cells(info: RunInfo) -> dict[str, str]:
    """The run's columns of a gradebook row."""
    return {"graded_at": info.graded_at, "ratelab_version": info.ratelab_version,
            "cases_sha256": info.cases_sha256,
            "cases_seed": "" if info.cases_seed is None else str(info.cases_seed),
            "isolation": info.isolation}


def result_row(g: Graded, r: ExerciseResult, info: RunInfo, course: Course | None) -> dict:
    """The long gradebook's row for result `r` of notebook `g` (every value a string)."""
    score = float(f"{clamp_score(r.score):.4f}")
    possible = course.points(r.exercise) if course else 1.0
    due = course.due(g.identity.assignment) if course else None
    return {"student": g.identity.student, "assignment": g.identity.assignment,
            "submission": clean_line(Path(g.submission).name), "exercise": r.exercise,
            "score": f"{score:.4f}", "points": number(score * possible),
            "points_possible": number(possible), "verdict": check_verdict(r.verdict),
            "first_failure": clean_line(r.first_failure), "late": late(g.submitted_at, due),
            **_run_cells(info)}


def notebook_rows(g: Graded, info: RunInfo, course: Course | None = None) -> list[dict]:
    """The long gradebook's rows for notebook `g`, one per exercise result."""
    return [result_row(g, r, info, course) for r in g.results]


def row_key(row: dict) -> tuple[str, str, str]:
    """The (student, assignment, exercise) a row is about: its identity and sort key."""
    return row["student"], row["assignment"], row["exercise"]


def merge_rows(kept: list[dict], new: list[dict], regraded: set[tuple[str, str]]) -> list[dict]:
    """Every row: `kept` ones of pairs not `regraded`, then `new`, sorted by row_key."""
    rows = [r for r in kept if (r["student"], r["assignment"]) not in regraded] + new
    return sorted(rows, key=row_key)


def exercise_order(exercises) -> list[str]:
    """`exercises` in the suite's order (:data:`ratelab.exercises.NAMES`), unknown ones last."""
    rank = {n: i for i, n in enumerate(NAMES)}
    return sorted(set(exercises), key=lambda e: (rank.get(e, len(rank)), e))


def _wide_row(student: str, rows: list[dict], exercises: list[str],
              course: Course | None) -> dict:
    """One student's wide row: points per exercise, total, possible, the latest run."""
    earned: dict[str, float] = defaultdict(float)
    total = possible = 0.0
    for r in rows:
        earned[r["exercise"]] += float(r["points"])
        total += float(r["points"])
        possible += float(r["points_possible"])
    if course is not None:
        possible += sum(course.points(e) for e in course.exercises if e not in earned)
    latest = max(rows, key=lambda r: utc_instant(r["graded_at"]))
    return {"student": student, **{e: number(earned[e]) if e in earned else "" for e in exercises},
            "total": number(total), "possible": number(possible),
            **{c: latest[c] for c in RUN_COLUMNS}}


def wide_table(rows: list[dict], course: Course | None = None) -> tuple[list[str], list[dict]]:
    """The wide gradebook's columns and rows: one row per student, one column per exercise.

    An exercise's cell is the points earned over the student's assignments, empty when the
    student has no row for it. Possible counts the exercises the student was graded on and,
    with a course, every exercise the course lists; so a total never exceeds it."""
    exercises = exercise_order({r["exercise"] for r in rows} | set(course.exercises if course
                                                                    else ()))
    by_student: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_student[r["student"]].append(r)
    wide = [_wide_row(s, by_student[s], exercises, course) for s in sorted(by_student)]
    return ["student", *exercises, *WIDE_TAIL], wide


# ---------------------------------------------------------------- feedback pages


def _submission_line(g: Graded, course: Course | None) -> list[str]:
    """The page's line about when the notebook came in and whether that was late."""
    due = course.due(g.identity.assignment) if course else None
    if g.submitted_at is None and due is None:
        return []
    parts = [f"submitted {utc_stamp(g.submitted_at)}" if g.submitted_at else "submitted: unknown"]
    if due is not None:
        said = {"yes": "late", "no": "on time", "": "lateness unknown"}
        parts.append(f"due {utc_stamp(due)}: {said[late(g.submitted_at, due)]}")
    return [f"- {', '.join(parts)}"]


def _exercise_section(r: ExerciseResult, row: dict) -> list[str]:
    """The page's section on an exercise not passed: its first failure and timeline, fenced."""
    body = "first failure: " + (row["first_failure"] or "(none given)")
    text = clean_text(r.feedback)
    if text:
        body += "\n\n" + text
    return ["", f"## {r.exercise}: {row['verdict']}", "", fenced(body)]


def feedback_page(g: Graded, info: RunInfo, course: Course | None = None) -> str:
    """The markdown page a student reads about notebook `g`.

    Student-supplied text appears only inside fenced blocks it cannot break out of. The
    footer gives the run's time, version and isolation, but not the cases' seed or hash:
    from either, a student could regenerate the instructor's hidden cases."""
    rows = notebook_rows(g, info, course)
    total = sum(float(r["points"]) for r in rows)
    possible = sum(float(r["points_possible"]) for r in rows)
    who = g.identity
    lines = [f"# Feedback: {who.assignment}", "", f"- student: {code_span(who.student)}",
             f"- assignment: {code_span(who.assignment)}",
             f"- file: {code_span(clean_line(Path(g.submission).name))}",
             *_submission_line(g, course),
             f"- total: {number(total)} of {number(possible)} points", "",
             "| exercise | score | points | verdict |", "|---|---:|---:|---|"]
    lines += [f"| {r['exercise']} | {r['score']} | {r['points']} of {r['points_possible']} "
              f"| {r['verdict']} |" for r in rows]
    notes = clean_notes(g.notes)
    if notes:
        lines += ["", "## Notes", "", fenced("\n".join(notes))]
    for r, row in zip(g.results, rows):
        if row["verdict"] != "passed":
            lines += _exercise_section(r, row)
    lines += ["", "---", "", f"Graded {info.graded_at} by ratelab "
              f"{code_span(clean_line(info.ratelab_version))}, isolation "
              f"{code_span(clean_line(info.isolation))}."]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- files


def wide_path(out_csv: Path) -> Path:
    """Where the wide gradebook lies beside the long one: <stem>-wide.csv."""
    out_csv = Path(out_csv)
    return out_csv.with_name(out_csv.stem + "-wide.csv")


def _not_ours(path: Path, why: str) -> ValueError:
    """The error for an existing file that is not a gradebook of this format."""
    return ValueError(f"{path} exists and is not a ratelab gradebook ({why}); refusing to "
                      "overwrite it: choose another output file or move it away")


def _read_csv(path: Path) -> list[list[str]] | None:
    """The rows of CSV file `path` (None when there is no such file; [] when it is empty)."""
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        raise _not_ours(path, "it is not a regular file")
    try:
        text = path.read_bytes().decode("utf-8")
        return list(csv.reader(io.StringIO(text, newline="")))
    except (UnicodeDecodeError, csv.Error) as e:
        raise _not_ours(path, f"not a UTF-8 CSV: {e}") from None


def _check_kept(row: dict, path: Path, line: int) -> dict:
    """`row` of an existing gradebook unchanged; a ValueError naming the line when it is bad."""
    try:
        safe_name(row["student"], "student")
        safe_name(row["assignment"], "assignment")
        safe_name(row["exercise"], "exercise")
        check_verdict(row["verdict"])
        utc_instant(row["graded_at"])
        score, points, possible = (float(row[c]) for c in ("score", "points", "points_possible"))
        if not (0 <= score <= 1 and 0 <= points <= possible and math.isfinite(possible)):
            raise ValueError(f"score {row['score']}, points {row['points']} of "
                             f"{row['points_possible']} are out of range")
    except ValueError as e:
        raise ValueError(f"{path}, line {line}: {e}") from None
    return row


def read_gradebook(path: Path) -> list[dict]:
    """The rows of the long gradebook at `path`: [] when there is none (or it is empty).

    A file that exists but is not a gradebook of this format: ValueError naming it."""
    path = Path(path)
    table = _read_csv(path)
    if not table:
        return []
    if tuple(table[0]) != COLUMNS:
        raise _not_ours(path, f"its first line is not {','.join(COLUMNS)}")
    rows = []
    for line, cells in enumerate(table[1:], start=2):
        if len(cells) != len(COLUMNS):
            raise ValueError(f"{path}, line {line}: {len(cells)} cells, expected {len(COLUMNS)}")
        rows.append(_check_kept(dict(zip(COLUMNS, cells)), path, line))
    return rows


def _check_wide(path: Path) -> None:
    """Nothing; a ValueError when `path` exists and is not a wide gradebook."""
    table = _read_csv(path)
    if table and (not table[0] or table[0][0] != "student"
                  or tuple(table[0][-len(WIDE_TAIL):]) != WIDE_TAIL):
        raise _not_ours(path, f"its first line is not student,...,{','.join(WIDE_TAIL)}")


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` as a new 0600 file, moved into place whole."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            fd = None
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if fd is not None:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise


def csv_text(columns, rows: list[dict]) -> str:
    """The CSV text of `rows` under header `columns`, every cell formula-safe."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([csv_cell(r[c]) for c in columns] for r in rows)
    return buf.getvalue()


def _private_dir(path: Path) -> Path:
    """`path` as a real directory (created 0700 when missing); ValueError for a link."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise ValueError(f"{path} is not a directory (a link or a file is in the way)")
    if not path.exists():
        path.mkdir(mode=0o700, parents=True)
        path.chmod(0o700)
    return path


def student_folders(feedback_dir: Path, students) -> dict[str, Path]:
    """Each student's feedback folder, feedback_dir/<student>, made a real 0700 directory."""
    folders = {s: _private_dir(Path(feedback_dir) / s) for s in sorted(set(students))}
    for folder in folders.values():
        folder.chmod(0o700)
    return folders


def write_page(folder: Path, g: Graded, text: str) -> Path:
    """The path of `g`'s feedback page, written as <folder>/<assignment>.md (0600)."""
    page = folder / f"{g.identity.assignment}.md"
    _write_private(page, text)
    return page


def _check_batch(graded: list[Graded]) -> None:
    """Nothing; a ValueError when two notebooks share an identity or one repeats an exercise."""
    seen: dict[Identity, Path] = {}
    for g in graded:
        if not isinstance(g.identity, Identity):
            raise ValueError(f"{g.submission}: identity must be an Identity, got {g.identity!r}")
        if g.identity in seen:
            raise ValueError(f"{Path(g.submission).name} and {Path(seen[g.identity]).name} are "
                             f"both {g.identity.student}'s {g.identity.assignment}: grade one")
        seen[g.identity] = g.submission
        names = [r.exercise for r in g.results]
        if len(set(names)) != len(names):
            raise ValueError(f"{Path(g.submission).name}: an exercise appears twice in {names}")
        for r in g.results:
            check_verdict(r.verdict)


def write_gradebook(graded: list[Graded], out_csv: Path, feedback_dir: Path,
                    info: RunInfo, course: Course | None = None) -> dict:
    """The record of a gradebook written: counts, mean score, totals and the paths.

    Writes the long CSV `out_csv` (rows of other (student, assignment) pairs already there
    are kept as they were), the wide CSV beside it and one feedback page per notebook.
    Nothing is written when an output file exists and is not a gradebook."""
    out_csv, feedback_dir, wide_csv = Path(out_csv), Path(feedback_dir), wide_path(out_csv)
    _check_batch(graded)
    kept = read_gradebook(out_csv)
    _check_wide(wide_csv)
    new = [row for g in graded for row in notebook_rows(g, info, course)]
    rows = merge_rows(kept, new, {(g.identity.student, g.identity.assignment) for g in graded})
    columns, wide = wide_table(rows, course)
    if not feedback_dir.is_dir():     # the instructor's folder may be a link; students' not
        _private_dir(feedback_dir)
    students = {g.identity.student for g in graded}
    folders = student_folders(feedback_dir, students)
    pages = [write_page(folders[g.identity.student], g, feedback_page(g, info, course))
             for g in graded]
    _write_private(out_csv, csv_text(COLUMNS, rows))
    _write_private(wide_csv, csv_text(columns, wide))
    scores = [float(r["score"]) for r in new]
    return {"students": len(students), "notebooks": len(graded), "rows": len(new),
            "rows_in_gradebook": len(rows),
            "mean_score": round(sum(scores) / len(scores), 4) if scores else None,
            "totals": {w["student"]: float(w["total"]) for w in wide if w["student"] in students},
            "possible": {w["student"]: float(w["possible"]) for w in wide
                         if w["student"] in students},
            "gradebook": str(out_csv), "wide": str(wide_csv), "feedback_dir": str(feedback_dir),
            "pages": [str(p) for p in pages]}
