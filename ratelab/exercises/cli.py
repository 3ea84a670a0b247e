"""``ratelab exercises ...`` and ``ratelab grade ...``: parsing here, the work in the library."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
EXERCISE_NOTEBOOKS = ROOT / "notebooks" / "exercises"


def add_exercises(sub) -> None:
    p = sub.add_parser(
        "exercises", help="list the exercises; build the student notebooks from the solutions",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  ratelab exercises build        # rewrites notebooks/exercises/student/"
               "\n  ratelab exercises list --json")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    b = verbs.add_parser(
        "build", help="write the student notebooks (stubs, no solutions, no outputs)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  ratelab exercises build --out /tmp/student")
    b.add_argument("--source", type=Path, default=EXERCISE_NOTEBOOKS,
                   help="folder of NN-topic-solution.ipynb notebooks (default: %(default)s)")
    b.add_argument("--out", type=Path, default=None,
                   help="where the student notebooks go (default: SOURCE/student)")
    b.add_argument("--json", action="store_true", help="print the records as JSON")
    b.set_defaults(func=run_build)
    ls = verbs.add_parser("list", help="the exercises, their answer names and notebooks",
                          epilog="example: ratelab exercises list")
    ls.add_argument("--json", action="store_true", help="print the records as JSON")
    ls.set_defaults(func=run_list)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def run_build(args) -> int:
    from .build import build

    try:
        records = build(args.source, args.out)
    except FileNotFoundError as e:
        print(f"ratelab exercises build: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(records, indent=1))
    else:
        for r in records:
            state = "written" if r["changed"] else "unchanged"
            print(f"{Path(r['student']).name:28} {r['stubs']} stubs  {state}  "
                  f"(from {Path(r['solution']).name})")
    return 0


def exercise_records() -> list[dict]:
    """One record per exercise: name, answer name, title, the teaching notebook it practises."""
    from . import NAMES, module

    return [{"exercise": n, "answer": module(n).EXERCISE.answer,
             "title": module(n).EXERCISE.title, "notebook": module(n).EXERCISE.notebook}
            for n in NAMES]


def run_list(args) -> int:
    records = exercise_records()
    if args.json:
        print(json.dumps(records, indent=1))
    else:
        for r in records:
            print(f"{r['exercise']:20} {r['answer']:14} {r['notebook']:26} {r['title']}")
    return 0


def add_grade(sub) -> None:
    p = sub.add_parser(
        "grade", help="grade submitted notebooks in a sandbox; or make instructor-only cases",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs each submitted notebook headless in its own sandboxed process "
                    "(bubblewrap where present), then the public checks plus the instructor "
                    "cases, and writes one CSV row per student and exercise and a feedback "
                    "markdown per student. 'ratelab grade make-cases' writes the cases file "
                    "(readable by you only).",
        epilog="examples:\n"
               "  ratelab grade make-cases --seed 2027 --exercises fixed_window,sliding_log "
               "--out cases.json\n"
               "  ratelab grade submissions/*.ipynb --cases cases.json --out grades.csv")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help="notebooks to grade (the student is the file name), or make-cases")
    p.add_argument("--cases", type=Path, help="the cases file from make-cases (grading: required)")
    p.add_argument("--out", type=Path, required=True,
                   help="grading: the grades CSV to write; make-cases: the cases file")
    p.add_argument("--feedback", type=Path, default=None,
                   help="folder for one feedback markdown per student (default: OUT's name "
                        "+ -feedback, beside it)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds a notebook's cells may run in all (default: %(default)s)")
    p.add_argument("--grade-timeout", type=float, default=300.0,
                   help="seconds the checks may run after them (default: %(default)s)")
    p.add_argument("--memory-mb", type=int, default=4096,
                   help="address space per process, MiB (default: %(default)s)")
    p.add_argument("--processes", type=int, default=128,
                   help="processes and threads a submission may run (default: %(default)s)")
    p.add_argument("--isolation", choices=("auto", "bwrap", "user", "plain"), default="auto",
                   help="sandbox: auto picks the strongest available (default: %(default)s)")
    p.add_argument("--seed", type=int, default=None,
                   help="make-cases: the seed of the instructor cases (required there)")
    p.add_argument("--exercises", default=None,
                   help="make-cases: comma-separated exercises (default: all)")
    p.add_argument("--json", action="store_true", help="print the summary record as JSON")
    p.set_defaults(func=run_grade)


def run_grade(args) -> int:
    from . import NAMES
    from .grading import grade, make_cases, write_cases
    from .sandbox import Limits

    if args.submissions == ["make-cases"]:
        if args.seed is None:
            print("ratelab grade make-cases: error: --seed is required", file=sys.stderr)
            return 2
        names = [n.strip() for n in args.exercises.split(",")] if args.exercises else None
        for n in names or []:
            if n not in NAMES:
                print(f"ratelab grade make-cases: error: --exercises: unknown exercise {n!r}; "
                      f"choose from {', '.join(NAMES)}", file=sys.stderr)
                return 2
        cases = make_cases(args.seed, names)
        write_cases(cases, args.out)
        record = {"cases_file": str(args.out), "seed": args.seed,
                  "cases": {n: len(c) for n, c in cases["exercises"].items()}}
        print(json.dumps(record, indent=1) if args.json else
              f"wrote {sum(record['cases'].values())} cases for {len(record['cases'])} "
              f"exercises to {args.out} (mode 0600)")
        return 0
    if args.cases is None:
        print("ratelab grade: error: --cases is required (make it with ratelab grade make-cases)",
              file=sys.stderr)
        return 2
    if not args.cases.is_file():
        print(f"ratelab grade: error: --cases: no such file {args.cases}", file=sys.stderr)
        return 1
    try:
        limits = Limits(time_s=args.timeout, grade_s=args.grade_timeout,
                        memory_mb=args.memory_mb, processes=args.processes)
    except ValueError as e:
        print(f"ratelab grade: error: {e}", file=sys.stderr)
        return 2
    try:
        record = grade(args.submissions, args.cases, args.out, args.feedback, limits=limits,
                       isolation=args.isolation,
                       progress=None if args.json else lambda s: print(
                           f"{s.student:24} " + "  ".join(f"{r['exercise']}={r['score']:.2f}"
                                                          for r in s.rows), flush=True))
    except RuntimeError as e:  # the sandbox asked for is not available here
        print(f"ratelab grade: error: --isolation: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(record, indent=1))
    else:
        print(f"{record['students']} submissions, {record['rows']} rows, mean score "
              f"{record['mean_score']:.3f}, isolation {record['isolation']}: "
              f"{record['grades_csv']}, feedback in {record['feedback_dir']}")
        for w in record["warnings"]:
            print(f"warning: {w}", file=sys.stderr)
    return 0
