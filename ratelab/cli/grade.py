"""``ratelab grade ...``: parsing here, the work in :mod:`ratelab.grading`.

The rules it follows are in :mod:`ratelab.cli.support`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .support import (EnvironmentFailure, UsageError, choices_help, command, count, flags,
                           seconds, seed, table, whole, words)
from ..exercises import NAMES
from ..grading.cases import read_cases, write_instructor_cases
from ..grading.course import read_course, read_roster
from ..grading.grader import grade
from ..grading.sandbox import IsolationUnavailable, Limits, detect

MAKE_CASES = "make-cases"
ISOLATION = {"auto": "bubblewrap, else user; refuses when neither works",
             "bwrap": "bubblewrap: a minimal file system, no network (fails if unavailable)",
             "user": "as the user nobody, with limits (needs root; files readable by others "
                     "stay readable)",
             "plain": "unconfined, as you, with limits only (only when named)"}


def add_grade(sub) -> None:
    p = command(
        sub, "grade", run=run_grade, render=render_grade,
        help="grade submitted notebooks in a sandbox; or make instructor-only cases",
        description="Runs each submitted notebook in its own sandbox (bubblewrap where "
                    "present), then checks its answers in the grader's own process on the "
                    "public and the instructor's cases. Writes a gradebook: one CSV row per "
                    "student, assignment and exercise, a wide CSV (one row per student), and "
                    "a feedback page per student and assignment. Submissions are named "
                    "STUDENT.NN-name.ipynb (or mapped by --roster). 'ratelab grade "
                    "make-cases' writes the cases file (readable by you only). Progress lines "
                    "go to stderr.",
        example="ratelab grade make-cases --seed 2027 --exercises fixed_window,sliding_log "
                "--out cases.json\n"
                "ratelab grade submissions/*.ipynb --cases cases.json --out grades.csv "
                "--course course.toml")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help="notebooks to grade (STUDENT.NN-name.ipynb), or make-cases")
    p.add_argument("--cases", type=Path, default=None,
                   help="grading: the cases file from make-cases (default: none; required)")
    p.add_argument("--out", type=Path, required=True,
                   help="grading: the gradebook CSV to write or update; make-cases: the "
                        "cases file (default: none; required)")
    p.add_argument("--feedback", type=Path, default=None,
                   help="grading: folder for the feedback pages (default: OUT's name + "
                        "-feedback, beside it)")
    p.add_argument("--roster", type=Path, default=None,
                   help="grading: CSV mapping file names to students (columns file,student"
                        "[,assignment]; default: the student from the file name)")
    p.add_argument("--course", type=Path, default=None,
                   help="grading: TOML file of points per exercise and due dates (default: "
                        "one point per exercise)")
    p.add_argument("--timeout", type=seconds, default=None,
                   help=f"grading: time a notebook's cells may run in all (default: "
                        f"{Limits.time_s:g} s)")
    p.add_argument("--grade-timeout", type=seconds, default=None,
                   help=f"grading: time the checks may run after them (default: "
                        f"{Limits.grade_s:g} s)")
    p.add_argument("--memory-mb", type=whole(1, unit="MiB"), default=None,
                   help=f"grading: memory of a submission, all its processes together "
                        f"(default: {Limits.memory_mb} MiB)")
    p.add_argument("--processes", type=count, default=None,
                   help=f"grading: processes and threads a submission may run together "
                        f"(default: {Limits.processes})")
    p.add_argument("--isolation", choices=tuple(ISOLATION), default=None,
                   help=choices_help("grading: the sandbox", ISOLATION) + " (default: auto)")
    p.add_argument("--seed", type=seed, default=None,
                   help="make-cases: the seed of the instructor cases (default: none; required)")
    p.add_argument("--exercises", type=words(NAMES), default=None,
                   help="make-cases: comma-separated exercises (default: all)")


GRADING_ONLY = {"cases": "--cases", "feedback": "--feedback", "timeout": "--timeout",
                "grade_timeout": "--grade-timeout", "memory_mb": "--memory-mb",
                "processes": "--processes", "isolation": "--isolation", "roster": "--roster",
                "course": "--course"}
MAKE_CASES_ONLY = {"seed": "--seed", "exercises": "--exercises"}


def _refuse(args, options: dict, mode: str) -> None:
    for dest, flag in options.items():
        if getattr(args, dest) is not None:
            raise UsageError(flag, f"does not apply to {mode}")


def _writable_file(path: Path) -> None:
    if path.is_dir():
        raise UsageError("--out", f"{path} is a folder; give the path of the file to write")


def run_grade(args) -> dict:
    if MAKE_CASES in args.submissions:
        return run_make_cases(args)
    _refuse(args, MAKE_CASES_ONLY, "grading (only to ratelab grade make-cases)")
    return run_grading(args)


def run_make_cases(args) -> dict:
    if args.submissions != [MAKE_CASES]:
        extra = " ".join(s for s in args.submissions if s != MAKE_CASES)
        raise UsageError("SUBMISSION", f"{MAKE_CASES} takes no submissions, got {extra}")
    _refuse(args, GRADING_ONLY, MAKE_CASES)
    if args.seed is None:
        raise UsageError("--seed", f"is required for {MAKE_CASES}")
    _writable_file(args.out)
    return write_instructor_cases(args.out, args.seed, list(args.exercises or NAMES))


def _read(flag: str, path: Path | None, reader):
    """`reader(path)` with its ValueError said as one line naming `flag` (None: no file)."""
    if path is None:
        return None
    if not path.is_file():
        raise EnvironmentFailure(f"{flag}: no such file: {path}", "check the path")
    try:
        return reader(path)
    except (ValueError, UnicodeDecodeError, OSError) as e:
        raise EnvironmentFailure(f"{flag}: {e}", "mend the file") from None


def run_grading(args) -> dict:
    if args.cases is None:
        raise UsageError("--cases", "is required to grade (make the file with ratelab grade "
                                    f"{MAKE_CASES} --seed N --out cases.json)")
    cases = _read("--cases", args.cases, read_cases)
    if not cases.get("exercises"):
        raise EnvironmentFailure(f"cases file {args.cases} has no exercises",
                                 f"make a new one with ratelab grade {MAKE_CASES}")
    roster = _read("--roster", args.roster, read_roster)
    course = _read("--course", args.course, read_course)
    missing = [s for s in args.submissions if not Path(s).is_file()]
    if missing:
        raise EnvironmentFailure(f"no such submission: {', '.join(missing)}", "check the paths")
    _writable_file(args.out)
    defaults = Limits()
    with flags(time_s="--timeout", grade_s="--grade-timeout", memory_mb="--memory-mb",
               processes="--processes"):
        limits = Limits(time_s=args.timeout or defaults.time_s,
                        grade_s=args.grade_timeout or defaults.grade_s,
                        memory_mb=args.memory_mb or defaults.memory_mb,
                        processes=args.processes or defaults.processes)
    try:
        detect(args.isolation or "auto")
    except IsolationUnavailable as e:
        raise EnvironmentFailure(f"--isolation {args.isolation or 'auto'}: {e}") from None

    def progress(g) -> None:
        print(f"{g.identity.student:16} {g.identity.assignment:16} "
              + "  ".join(f"{r.exercise}={r.score:.2f}" for r in g.results),
              file=sys.stderr, flush=True)

    def warn(line: str) -> None:
        print(f"warning: {line}", file=sys.stderr, flush=True)

    try:
        return grade([Path(s) for s in args.submissions], args.cases, args.out, args.feedback,
                     limits=limits, isolation=args.isolation or "auto", roster=roster,
                     course=course, progress=progress, warn=warn)
    except ValueError as e:  # a submission's name, two files of one assignment, the gradebook
        raise EnvironmentFailure(str(e), "rename the files or give --roster") from None


def render_grade(record: dict) -> str:
    if "cases_file" in record:
        return (f"{table(record['exercises'])}\n{record['total_cases']} cases written to "
                f"{record['cases_file']} (mode 0600, sha256 {record['sha256'][:12]}…)")
    lines = [f"{record.get('notebooks', 0)} notebooks of {record.get('students', 0)} students, "
             f"{record.get('rows', 0)} rows, mean score {record.get('mean_score', 0):.3f}, "
             f"isolation {record['isolation']}"]
    lines += [f"gradebook: {record['gradebook']}", f"wide: {record['wide']}",
              f"feedback: {record['feedback_dir']}"]
    return "\n".join(lines)
