"""``ratelab exercises ...`` and ``ratelab grade ...``: parsing here, the work in the library.

The rules they follow are in :mod:`ratelab.cli_support`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..cli_support import (EnvironmentFailure, HelpFormatter, UsageError, add_debug,
                           choices_help, command, count, flags, seconds, seed, table, whole,
                           words)
from . import NAMES
from .sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent.parent
EXERCISE_NOTEBOOKS = ROOT / "notebooks" / "exercises"
MAKE_CASES = "make-cases"
ISOLATION = {"auto": "the strongest that works here",
             "bwrap": "bubblewrap namespaces (fails if unavailable)",
             "user": "as the user nobody, with limits (needs root)",
             "plain": "as you, with limits only"}


# ---------------------------------------------------------------- ratelab exercises


def add_exercises(sub) -> None:
    p = sub.add_parser(
        "exercises", help="list the exercises; build the student notebooks from the solutions",
        description="The graded exercises: list them, or build the student notebooks (stubs, "
                    "no solutions, no outputs) from the solution notebooks.",
        epilog="example:\n  ratelab exercises build --out /tmp/student\n"
               "  ratelab exercises list --json",
        formatter_class=HelpFormatter)
    add_debug(p)
    p.set_defaults(_parser=p)
    verbs = p.add_subparsers(dest="exercises_command", metavar="ACTION", required=True)
    b = command(verbs, "build", run=run_build, render=render_build,
                help="write the student notebooks (stubs, no solutions, no outputs)",
                description="Write the student notebook of every NN-topic-solution.ipynb in "
                            "--source into --out; a notebook whose text is unchanged is "
                            "reported as such.",
                example="ratelab exercises build --out /tmp/student")
    b.add_argument("--source", type=Path, default=EXERCISE_NOTEBOOKS,
                   help="folder of NN-topic-solution.ipynb notebooks (default: "
                        "notebooks/exercises)")
    b.add_argument("--out", type=Path, default=None,
                   help="folder the student notebooks go to (default: SOURCE/student)")
    command(verbs, "list", run=run_list, render=render_list,
            help="the exercises, their answer names and notebooks",
            description="Every exercise: its name, the name its answer is defined under, "
                        "the teaching notebook it practises, and its title.",
            example="ratelab exercises list --json")


def run_build(args) -> dict:
    """Build the student notebooks; the record lists each one."""
    from .build import SUFFIX, build

    source = args.source
    if not source.is_dir() or not any(source.glob(f"*{SUFFIX}")):
        where = source if source.is_dir() else f"{source} (no such folder)"
        raise EnvironmentFailure(f"no *{SUFFIX} notebooks in {where}", "check --source")
    out = args.out if args.out is not None else source / "student"
    if out.exists() and not out.is_dir():
        raise UsageError("--out", f"{out} is a file; give a folder for the student notebooks")
    return {"source_dir": str(source), "out_dir": str(out), "notebooks": build(source, out)}


def render_build(record: dict) -> str:
    rows = [{"student": Path(r["student"]).name, "stubs": r["stubs"],
             "state": "written" if r["changed"] else "unchanged",
             "solution": Path(r["solution"]).name} for r in record["notebooks"]]
    return f"{table(rows)}\nin {record['out_dir']}"


def exercise_records() -> list[dict]:
    """One record per exercise: name, answer name, title, the teaching notebook it practises."""
    from . import module

    return [{"exercise": n, "answer": module(n).EXERCISE.answer,
             "title": module(n).EXERCISE.title, "notebook": module(n).EXERCISE.notebook}
            for n in NAMES]


def run_list(args) -> dict:
    return {"exercises": exercise_records()}


def render_list(record: dict) -> str:
    return table(record["exercises"], columns=("exercise", "answer", "notebook", "title"))


# ---------------------------------------------------------------- ratelab grade


def add_grade(sub) -> None:
    p = command(
        sub, "grade", run=run_grade, render=render_grade,
        help="grade submitted notebooks in a sandbox; or make instructor-only cases",
        description="Runs each submitted notebook headless in its own sandboxed process "
                    "(bubblewrap where present), then the public checks plus the instructor "
                    "cases, and writes one CSV row per student and exercise and a feedback "
                    "markdown per student. 'ratelab grade make-cases' writes the cases file "
                    "(readable by you only). Progress lines go to stderr.",
        example="ratelab grade make-cases --seed 2027 --exercises fixed_window,sliding_log "
                "--out cases.json\n"
                "ratelab grade submissions/*.ipynb --cases cases.json --out grades.csv")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help="notebooks to grade (the student is the file name), or make-cases")
    p.add_argument("--cases", type=Path, default=None,
                   help="grading: the cases file from make-cases (default: none; required)")
    p.add_argument("--out", type=Path, required=True,
                   help="grading: the grades CSV to write; make-cases: the cases file "
                        "(default: none; required)")
    p.add_argument("--feedback", type=Path, default=None,
                   help="grading: folder for one feedback markdown per student (default: "
                        "OUT's name + -feedback, beside it)")
    p.add_argument("--timeout", type=seconds, default=None,
                   help=f"grading: time a notebook's cells may run in all (default: "
                        f"{Limits.time_s:g} s)")
    p.add_argument("--grade-timeout", type=seconds, default=None,
                   help=f"grading: time the checks may run after them (default: "
                        f"{Limits.grade_s:g} s)")
    p.add_argument("--memory-mb", type=whole(1, unit="MiB"), default=None,
                   help=f"grading: address space per process (default: {Limits.memory_mb} MiB)")
    p.add_argument("--processes", type=count, default=None,
                   help=f"grading: processes and threads a submission may run (default: "
                        f"{Limits.processes})")
    p.add_argument("--isolation", choices=tuple(ISOLATION), default=None,
                   help=choices_help("grading: the sandbox", ISOLATION) + " (default: auto)")
    p.add_argument("--seed", type=seed, default=None,
                   help="make-cases: the seed of the instructor cases (default: none; required)")
    p.add_argument("--exercises", type=words(NAMES), default=None,
                   help="make-cases: comma-separated exercises (default: all)")


GRADING_ONLY = {"cases": "--cases", "feedback": "--feedback", "timeout": "--timeout",
                "grade_timeout": "--grade-timeout", "memory_mb": "--memory-mb",
                "processes": "--processes", "isolation": "--isolation"}
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
    from .grading import write_instructor_cases

    if args.submissions != [MAKE_CASES]:
        extra = " ".join(s for s in args.submissions if s != MAKE_CASES)
        raise UsageError("SUBMISSION", f"{MAKE_CASES} takes no submissions, got {extra}")
    _refuse(args, GRADING_ONLY, MAKE_CASES)
    if args.seed is None:
        raise UsageError("--seed", f"is required for {MAKE_CASES}")
    _writable_file(args.out)
    return write_instructor_cases(args.out, args.seed, list(args.exercises or NAMES))


def run_grading(args) -> dict:
    from .grading import grade, read_cases
    from .sandbox import detect

    if args.cases is None:
        raise UsageError("--cases", "is required to grade (make the file with ratelab grade "
                                    f"{MAKE_CASES} --seed N --out cases.json)")
    if not args.cases.is_file():
        raise EnvironmentFailure(f"no such cases file: {args.cases}",
                                 f"check --cases, or make one with ratelab grade {MAKE_CASES}")
    try:
        cases = read_cases(args.cases)
    except (ValueError, UnicodeDecodeError) as e:
        raise EnvironmentFailure(f"cannot read --cases: {e}",
                                 f"make a new one with ratelab grade {MAKE_CASES}") from None
    if not cases.get("exercises"):
        raise EnvironmentFailure(f"cases file {args.cases} has no exercises",
                                 f"make a new one with ratelab grade {MAKE_CASES}")
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
        isolation = detect(args.isolation or "auto")
    except RuntimeError as e:  # the sandbox asked for is not available here
        raise EnvironmentFailure(f"--isolation {args.isolation}: {e}",
                                 "choose another --isolation, or install it") from None

    def progress(s) -> None:
        print(f"{s.student:24} " + "  ".join(f"{r['exercise']}={r['score']:.2f}"
                                             for r in s.rows), file=sys.stderr, flush=True)

    record = grade([Path(s) for s in args.submissions], args.cases, args.out, args.feedback,
                   limits=limits, isolation=isolation, progress=progress)
    if not args.json:
        for w in record["warnings"]:
            print(f"warning: {w}", file=sys.stderr)
    return record


def render_grade(record: dict) -> str:
    if "cases_file" in record:
        return (f"{table(record['exercises'])}\n{record['total_cases']} cases written to "
                f"{record['cases_file']} (mode 0600)")
    return (f"{record['students']} submissions, {record['rows']} rows, mean score "
            f"{record['mean_score']:.3f}, isolation {record['isolation']}\n"
            f"grades: {record['grades_csv']}\nfeedback: {record['feedback_dir']}")
