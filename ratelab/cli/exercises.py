"""``ratelab exercises ...``: parsing here, the work in the library (``ratelab grade`` is
:mod:`ratelab.cli.grade`).

The rules it follows are in :mod:`ratelab.cli.support`.
"""

from __future__ import annotations

from pathlib import Path

from .. import checkout
from ..exercises import NAMES, module
from ..exercises.build import SUFFIX, build
from ..exercises.quiz import lesson_number, lessons
from ..exercises.quizcells import insert
from .support import EnvironmentFailure, HelpFormatter, UsageError, add_debug, command, table



# ---------------------------------------------------------------- ratelab exercises


def add_exercises(sub) -> None:
    p = sub.add_parser(
        "exercises", help="list the exercises; build the student notebooks; add the lessons' "
                          "quizzes",
        description="The graded exercises: list them, or build the student notebooks (stubs, "
                    "no solutions, no outputs) from the solution notebooks; and put each "
                    "teaching notebook's quiz cells in it.",
        epilog="example:\n  ratelab exercises build --out /tmp/student\n"
               "  ratelab exercises list --json\n  ratelab exercises quizzes",
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
    b.add_argument("--source", type=Path, default=None,
                   help="folder of NN-topic-solution.ipynb notebooks (default: "
                        "notebooks/exercises)")
    b.add_argument("--out", type=Path, default=None,
                   help="folder the student notebooks go to (default: SOURCE/student)")
    q = command(verbs, "quizzes", run=run_quizzes, render=render_quizzes,
                help="put each lesson's quiz cells in its notebook (again: no change)",
                description="Put the two cells that end a teaching notebook with its quiz "
                            "(a '## Check your understanding' heading linking the glossary, "
                            "and quiz.lesson(\"NN\")) just before its '## Exercises for this "
                            "lesson' cell, or at its end. Cells already there are replaced "
                            "in place; an unchanged notebook is not written. Execute the "
                            "notebooks afterwards: ratelab notebooks NOTEBOOK.",
                example="ratelab exercises quizzes 03-windows.ipynb")
    q.add_argument("paths", nargs="*", metavar="NOTEBOOK",
                   help="teaching notebooks, as paths or names in notebooks/ (default: every "
                        "notebook that has a quiz)")
    command(verbs, "list", run=run_list, render=render_list,
            help="the exercises, their answer names and notebooks",
            description="Every exercise: its name, the name its answer is defined under, "
                        "the teaching notebook it practises, and its title.",
            example="ratelab exercises list --json")


def run_build(args) -> dict:
    """Build the student notebooks; the record lists each one."""
    source = args.source if args.source is not None else checkout.notebooks() / "exercises"
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
    return [{"exercise": n, "answer": module(n).EXERCISE.answer,
             "title": module(n).EXERCISE.title, "notebook": module(n).EXERCISE.notebook}
            for n in NAMES]


def run_list(args) -> dict:
    return {"exercises": exercise_records()}


def render_list(record: dict) -> str:
    return table(record["exercises"], columns=("exercise", "answer", "notebook", "title"))


def quiz_notebooks(names: list[str]) -> list[Path]:
    """The teaching notebooks `names` point at (a path as given, else a name in notebooks/),
    or every notebook in notebooks/ that has a quiz; a UsageError names one that is neither
    a notebook nor one with a quiz."""
    folder = checkout.notebooks()
    if not names:
        return [p for p in sorted(folder.glob("[0-9][0-9]-*.ipynb")) if p.name[:2] in lessons()]
    found = []
    for name in names:
        path = next((c for c in (Path(name), folder / name, folder / f"{name}.ipynb")
                     if c.is_file()), None)
        if path is None:
            raise UsageError("NOTEBOOK", f"no notebook {name!r} here or in {folder}")
        try:
            lesson_number(path.name)
        except ValueError as e:
            raise UsageError("NOTEBOOK", str(e)) from None
        found.append(path)
    return found


def run_quizzes(args) -> dict:
    """Put the quiz cells in each notebook; the record says what changed in each."""
    records = []
    for path in quiz_notebooks(args.paths):
        try:
            records.append(insert(path))
        except ValueError as e:
            raise UsageError("NOTEBOOK", str(e)) from None
    return {"notebooks": records}


def render_quizzes(record: dict) -> str:
    rows = [{"notebook": Path(r["notebook"]).name, "quiz": r["lesson"], "state": r["state"],
             "where": r["where"], "cell": r["cell"]} for r in record["notebooks"]]
    todo = [r["notebook"] for r in record["notebooks"] if r["state"] != "unchanged"]
    then = (f"\nexecute the changed ones: ratelab notebooks {' '.join(map(_short, todo))}"
            if todo else "")
    return table(rows) + then


def _short(path: str) -> str:
    """`path` relative to the working folder when it lies under it, else as it is."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path
