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
        epilog="example:\n  ratelab exercises build            # rewrites notebooks/exercises/student/\n"
               "  ratelab exercises list --json")
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
            print(f"{Path(r['student']).name:28} {r['stubs']} stubs  "
                  f"{'written' if r['changed'] else 'unchanged'}  (from {Path(r['solution']).name})")
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
    """Registered now so the command list is complete; grading itself is added below."""
