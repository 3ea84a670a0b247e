"""ratelab grade on a batch of sample submissions: right, wrong, crashing, hanging, hostile."""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import nbformat
import pytest

from ratelab.cli import main
from ratelab.exercises import module
from ratelab.exercises.grading import make_cases, read_cases, write_cases
from services import need

# Submissions run as nobody, whose processes and threads share one RLIMIT_NPROC: the fork bomb
# of one test would starve a kernel another test starts beside it. make check runs tests on
# every core (--dist loadgroup): this group keeps the grading tests on one worker, in turn.
pytestmark = pytest.mark.xdist_group("grading-as-nobody")

ROOT = Path(__file__).resolve().parents[2]
STUDENT = ROOT / "notebooks" / "exercises" / "student" / "01-buckets.ipynb"
SOLUTION = module("token_bucket_take").solution()
WRONG = SOLUTION.replace("tokens = min(capacity, tokens + (now - last) * rate)",
                         "tokens = tokens + (now - last) * rate")


def notebook(*cells: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# My answers")]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def answered(answer: str) -> nbformat.NotebookNode:
    """The student notebook with `answer` in place of the take stub."""
    nb = nbformat.read(STUDENT, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("exercise") == "token_bucket_take":
            cell.source = answer
    return nb


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Grade one batch of sample submissions; the CSV rows by student, and the paths."""
    need("bwrap", "the grader's sandbox")
    # world-readable folders and cases file: only the sandbox may stand in the way
    base = Path(tempfile.mkdtemp(prefix="ratelab-grading-test-"))
    base.chmod(0o755)
    subs, private = base / "submissions", base / "instructor"
    subs.mkdir(mode=0o755)
    private.mkdir(mode=0o755)
    cases, grades = private / "cases.json", private / "grades.csv"
    write_cases(make_cases(11, ["token_bucket_take"]), cases)
    cases.chmod(0o644)
    steal = f"secret = open({str(cases)!r}).read()\nassert 'instructor' in secret, 'nothing read'"
    samples = {
        "alice": answered(SOLUTION),
        "bob": answered(WRONG),
        "carol": notebook("raise RuntimeError('my bug')", SOLUTION),
        "dave": notebook("while True:\n    pass", SOLUTION),
        "frank": notebook("x = 1"),  # deleted the answer cell
        "gina": notebook("import sys\nsys.stdout.write('\\x1b[2J\\x00\\xff' * 1000)\n"
                         "print('RATELAB-RESULT {\"token_bucket_take\": 1}')", SOLUTION),
        "mallory-reads": notebook(steal, SOLUTION),
        "mallory-writes": notebook(f"open({str(grades)!r}, 'w').write('pwned')", SOLUTION),
        "mallory-forks": notebook(
            "import os, time\nfor _ in range(400):\n    if os.fork() == 0:\n"
            "        time.sleep(3)\n        os._exit(0)", SOLUTION),
        "mallory-eats": notebook("blob = bytearray(10 * 2**30)", SOLUTION),
    }
    for name, nb in samples.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    (subs / "erin.ipynb").write_text("this is not a notebook")
    paths = sorted(subs.glob("*.ipynb"))
    code = main(["grade", *map(str, paths), "--cases", str(cases), "--out", str(grades),
                 "--timeout", "30", "--grade-timeout", "120", "--processes", "64",
                 "--memory-mb", "3072", "--json"])
    assert code == 0
    with open(grades, newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    yield {"rows": rows, "grades": grades, "cases": cases, "base": base}
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.service
def test_every_submission_gets_its_row(batch):
    assert sorted(batch["rows"]) == sorted(["alice", "bob", "carol", "dave", "erin", "frank",
                                            "gina", "mallory-reads", "mallory-writes",
                                            "mallory-forks", "mallory-eats"])
    assert all(r["exercise"] == "token_bucket_take" for r in batch["rows"].values())


@pytest.mark.service
def test_a_right_answer_scores_full_and_a_wrong_one_says_where(batch):
    rows = batch["rows"]
    assert (rows["alice"]["verdict"], float(rows["alice"]["score"])) == ("passed", 1.0)
    bob = rows["bob"]
    assert bob["verdict"] == "wrong" and float(bob["score"]) < 1.0
    assert "tokens should be" in bob["first_failure"] and "request" in bob["first_failure"]


@pytest.mark.service
def test_crashing_hanging_deleted_and_not_a_notebook_get_zero_with_the_reason(batch):
    rows = batch["rows"]
    assert float(rows["carol"]["score"]) == 0
    assert "RuntimeError: my bug" in rows["carol"]["first_failure"]
    assert float(rows["dave"]["score"]) == 0 and "ran past" in rows["dave"]["first_failure"]
    assert rows["frank"]["verdict"] == "missing"
    assert "defines no `take`" in rows["frank"]["first_failure"]
    assert rows["erin"]["verdict"] == "error"
    assert rows["erin"]["first_failure"].startswith("not a notebook")


@pytest.mark.service
def test_garbage_output_does_not_confuse_the_grader(batch):
    assert (batch["rows"]["gina"]["verdict"], float(batch["rows"]["gina"]["score"])) == \
        ("passed", 1.0)


@pytest.mark.service
def test_reading_the_cases_file_gets_nothing_and_a_zero(batch):
    row = batch["rows"]["mallory-reads"]
    # the file is world-readable here: only the sandbox's mount over it stands in the way
    assert oct(batch["cases"].stat().st_mode)[-3:] == "644"
    assert float(row["score"]) == 0
    assert "PermissionError" in row["first_failure"] or "nothing read" in row["first_failure"]


@pytest.mark.service
def test_writing_the_grades_file_fails_and_the_grades_are_intact(batch):
    row = batch["rows"]["mallory-writes"]
    assert float(row["score"]) == 0 and "Error" in row["first_failure"]
    text = batch["grades"].read_text()
    assert "pwned" not in text and text.startswith("student,submission,exercise,score")
    assert stat.S_IMODE(batch["grades"].stat().st_mode) == 0o600


@pytest.mark.service
def test_a_fork_bomb_hits_the_process_limit(batch):
    row = batch["rows"]["mallory-forks"]
    assert float(row["score"]) == 0
    assert "BlockingIOError" in row["first_failure"] or "Resource temporarily" in \
        row["first_failure"]


@pytest.mark.service
def test_ten_gigabytes_hit_the_memory_limit(batch):
    row = batch["rows"]["mallory-eats"]
    assert float(row["score"]) == 0 and "MemoryError" in row["first_failure"]


@pytest.mark.service
def test_feedback_per_student(batch):
    feedback = batch["grades"].with_name("grades-feedback")
    assert sorted(p.stem for p in feedback.glob("*.md")) == sorted(batch["rows"])
    bob = (feedback / "bob.md").read_text()
    assert bob.startswith("# Feedback for bob") and "<-- differs" in bob


def test_make_cases_is_private_seeded_and_instructor_only(tmp_path):
    path = tmp_path / "cases.json"
    assert main(["grade", "make-cases", "--seed", "4", "--exercises",
                 "fixed_window,sliding_log", "--out", str(path)]) == 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    data = read_cases(path)
    assert list(data["exercises"]) == ["fixed_window", "sliding_log"]
    assert data["exercises"] == make_cases(4, ["fixed_window", "sliding_log"])["exercises"]
    assert data["exercises"] != make_cases(5, ["fixed_window", "sliding_log"])["exercises"]
    public = json.dumps(module("fixed_window").EXERCISE.cases())
    assert all(c["name"].startswith("instructor ") and json.dumps(c["requests"]) not in public
               for c in data["exercises"]["fixed_window"])
    assert main(["grade", "make-cases", "--seed", "4", "--exercises", "nope",
                 "--out", str(path)]) == 2
    with pytest.raises(ValueError, match="not a cases file"):
        (tmp_path / "x.json").write_text("{}")
        read_cases(tmp_path / "x.json")


def test_plain_isolation_grades_and_warns(tmp_path):
    """Without a sandbox the pipeline is the same, with limits only, and says so."""
    from ratelab.exercises.grading import grade
    from ratelab.exercises.sandbox import Limits

    cases = tmp_path / "cases.json"
    write_cases(make_cases(1, ["token_bucket_take"]), cases)
    nbformat.write(answered(SOLUTION), tmp_path / "zoe.ipynb")
    record = grade([tmp_path / "zoe.ipynb"], cases, tmp_path / "grades.csv",
                   limits=Limits(time_s=60, grade_s=120), isolation="plain")
    assert record["isolation"] == "plain" and record["rows"] == 1
    assert record["mean_score"] == 1.0
    assert any("can read your files" in w for w in record["warnings"])
