"""The gradebook on made-up graded notebooks: identities, the course file, the files written."""

from __future__ import annotations

import csv
import io
import math
import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from budget import examples
from ratelab.grading.course import (PATTERN_TEXT, Course, Identity, identify, read_course,
                                    read_roster)
from ratelab.grading.gradebook import (FEEDBACK_MAX, LINE_MAX, NOTE_MAX, NOTES_MAX, VERDICTS,
                                       ExerciseResult, Graded, RunInfo, clamp_score,
                                       feedback_page, notebook_rows, wide_path, wide_table,
                                       write_gradebook)

RUN1 = RunInfo("0.1.0", "a" * 64, 2027, "2027-01-16T10:00:00Z", "bubblewrap")
RUN2 = RunInfo("0.1.1", "b" * 64, 2028, "2027-01-17T09:30:00Z", "user")


def result(exercise="token_bucket_take", score=1.0, verdict="passed", first_failure="",
           feedback="") -> ExerciseResult:
    return ExerciseResult(exercise, score, verdict, first_failure, feedback)


def graded(student="alice", assignment="01-buckets", *results, notes=(), submitted_at=None):
    results = list(results) or [result()]
    return Graded(Identity(student, assignment), Path(f"/subs/{student}.{assignment}.ipynb"),
                  results, list(notes), submitted_at)


def read_rows(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write(tmp_path, batch, info=RUN1, course=None, name="grades.csv") -> dict:
    return write_gradebook(batch, tmp_path / name, tmp_path / "feedback", info, course)


# ---------------------------------------------------------------- identify


@pytest.mark.parametrize("path, student, assignment", [
    ("alice.01-buckets.ipynb", "alice", "01-buckets"),
    ("subs/week1/alice.01-buckets.ipynb", "alice", "01-buckets"),
    ("a.smith.02-sliding-windows.ipynb", "a.smith", "02-sliding-windows"),
    ("bob+x@uni.edu.13-choose-limiter2.ipynb", "bob+x@uni.edu", "13-choose-limiter2"),
    ("S_42.07-gcra.ipynb", "S_42", "07-gcra"),
])
def test_identify_reads_student_and_assignment_from_the_default_name(path, student, assignment):
    assert identify(Path(path)) == Identity(student, assignment)


@pytest.mark.parametrize("name, says", [
    ("alice.ipynb", PATTERN_TEXT),                # no assignment
    ("alice.1-buckets.ipynb", PATTERN_TEXT),      # one digit
    ("alice.01-Buckets.ipynb", PATTERN_TEXT),     # not kebab words
    ("alice.01_buckets.ipynb", PATTERN_TEXT),
    ("alice.01-buckets.py", PATTERN_TEXT),
    ("alice.01-buckets-.ipynb", PATTERN_TEXT),
    ("..01-buckets.ipynb", "not safe as a file name"),    # student "."
    ("a..b.01-buckets.ipynb", "not safe as a file name"),
    ("-rf.01-buckets.ipynb", "not safe as a file name"),
    ("al ice.01-buckets.ipynb", "not safe as a file name"),
    ("=cmd.01-buckets.ipynb", "not safe as a file name"),
    ("a\nb.01-buckets.ipynb", "not safe as a file name"),
    ("x" * 200 + ".01-buckets.ipynb", "not safe as a file name"),
])
def test_identify_refuses_a_bad_name_and_names_the_file(name, says):
    with pytest.raises(ValueError) as e:
        identify(Path("/subs") / name)
    assert repr(name)[:60].strip("'") in str(e.value) and says in str(e.value)


@pytest.mark.parametrize("student, assignment", [
    ("../bob", "01-buckets"), ("alice", "../../etc"), ("", "01-buckets"), ("alice", ".")])
def test_an_identity_refuses_ids_unsafe_as_paths(student, assignment):
    with pytest.raises(ValueError, match="not safe as a file name"):
        Identity(student, assignment)


ROSTER = """\ufefffile,Student,assignment,email
submission_1.ipynb,s1001,01-buckets,ann@example.org
lms-export-77.ipynb,s1002,,bob@example.org
ann.02-windows.ipynb,s1001,,
"""


@pytest.mark.parametrize("name, student, assignment", [
    ("submission_1.ipynb", "s1001", "01-buckets"),        # the roster gives both
    ("ann.02-windows.ipynb", "s1001", "02-windows"),      # the roster the id, the name the rest
    ("carol.03-counter.ipynb", "carol", "03-counter"),    # not listed: the default pattern
])
def test_identify_looks_the_file_up_in_the_roster(tmp_path, name, student, assignment):
    (tmp_path / "roster.csv").write_text(ROSTER)
    roster = read_roster(tmp_path / "roster.csv")
    assert identify(tmp_path / "subs" / name, roster) == Identity(student, assignment)


@pytest.mark.parametrize("name, says", [
    ("lms-export-77.ipynb", "line 3"),      # listed without an assignment, name gives none
    ("stray.ipynb", "not in the roster"),   # neither listed nor fitting the pattern
])
def test_identify_with_a_roster_refuses_a_name_that_fits_neither(tmp_path, name, says):
    (tmp_path / "roster.csv").write_text(ROSTER)
    with pytest.raises(ValueError) as e:
        identify(tmp_path / name, read_roster(tmp_path / "roster.csv"))
    assert name in str(e.value) and says in str(e.value)


@pytest.mark.parametrize("text, line, says", [
    ("name,student\na.ipynb,s1\n", 1, "missing file"),
    ("file,id\na.ipynb,s1\n", 1, "missing student"),
    ("file,student\na.ipynb,s1\n,s2\n", 3, "file column is empty"),
    ("file,student\na.ipynb,\n", 2, "student column is empty"),
    ("file,student\na.ipynb,s1\nb.ipynb,s2\na.ipynb,s3\n", 4, "already on line 2"),
    ("file,student\na.ipynb,../s1\n", 2, "not safe"),
    ("file,student,assignment\na.ipynb,s1,01 buckets\n", 2, "not safe"),
    ("file,student\nsubs/a.ipynb,s1\n", 2, "not a path"),
    ("file,student,assignment\na.ipynb,s1,01-x\n\nb.ipynb,s1,01-x\n", 4, "on line 2"),
])
def test_a_bad_roster_is_refused_naming_the_line(tmp_path, text, line, says):
    (tmp_path / "roster.csv").write_text(text)
    with pytest.raises(ValueError) as e:
        read_roster(tmp_path / "roster.csv")
    assert f"roster.csv, line {line}:" in str(e.value) and says in str(e.value)


# ---------------------------------------------------------------- the course file

COURSE = """
[points]
token_bucket_take = 2
fixed_window = 0.5

[assignments.01-buckets]
due = 2027-01-15T23:59:00Z

[assignments.02-windows]
due = 2027-01-22T23:59:00+01:00

[assignments.03-counter]
"""


def test_a_course_gives_points_and_due_dates(tmp_path):
    (tmp_path / "course.toml").write_text(COURSE)
    course = read_course(tmp_path / "course.toml")
    assert [course.points(e) for e in ("token_bucket_take", "fixed_window", "gcra_tat")] == \
        [2.0, 0.5, 1.0]
    assert course.due("01-buckets") == datetime(2027, 1, 15, 23, 59, tzinfo=UTC)
    assert course.due("02-windows") == datetime(2027, 1, 22, 22, 59, tzinfo=UTC)
    assert course.due("03-counter") is None and course.due("99-none") is None
    assert course.exercises == ("token_bucket_take", "fixed_window")


@pytest.mark.parametrize("text, key", [
    ("[points]\ntoken_bucket = 2\n", "token_bucket"),
    ("[points]\nfixed_window = -1\n", "fixed_window"),
    ("[points]\nfixed_window = 'two'\n", "fixed_window"),
    ("[points]\nfixed_window = true\n", "fixed_window"),
    ("[points]\nfixed_window = nan\n", "fixed_window"),
    ("[points]\nfixed_window = inf\n", "fixed_window"),
    ("points = 3\n", "points"),
    ("[pionts]\nfixed_window = 1\n", "pionts"),
    ("[assignments.01-buckets]\ndue = 2027-01-15T23:59:00Z\nweight = 2\n", "weight"),
    ("[assignments.01-buckets]\ndue = 2027-01-15T23:59:00\n", "01-buckets.due"),
    ("[assignments.01-buckets]\ndue = 2027-01-15\n", "01-buckets.due"),
    ("[assignments.01-buckets]\ndue = 'tomorrow'\n", "01-buckets.due"),
    ("[assignments.'../x']\ndue = 2027-01-15T23:59:00Z\n", "../x"),
    ("[points\n", "not valid TOML"),
])
def test_a_bad_course_is_refused_naming_the_key_and_the_file(tmp_path, text, key):
    (tmp_path / "course.toml").write_text(text)
    with pytest.raises(ValueError) as e:
        read_course(tmp_path / "course.toml")
    assert key in str(e.value) and "course.toml" in str(e.value)


# ---------------------------------------------------------------- records


@pytest.mark.parametrize("verdict", ["pass", "Passed", "ok", "", None])
def test_a_verdict_outside_the_fixed_set_is_refused(verdict):
    with pytest.raises(ValueError, match="verdict"):
        result(verdict=verdict)


def test_every_verdict_word_is_accepted():
    assert [result(verdict=v).verdict for v in VERDICTS] == list(VERDICTS)


@pytest.mark.parametrize("kwargs", [{"graded_at": "2027-01-16 10:00"},
                                    {"graded_at": "2027-01-16T10:00:00+02:00"},
                                    {"cases_seed": "2027"}, {"cases_seed": True}])
def test_run_info_refuses_a_time_not_in_utc_or_a_seed_not_whole(kwargs):
    fields = {"ratelab_version": "0.1.0", "cases_sha256": "a" * 64, "cases_seed": 1,
              "graded_at": "2027-01-16T10:00:00Z", "isolation": "user", **kwargs}
    with pytest.raises(ValueError):
        RunInfo(**fields)


# ---------------------------------------------------------------- the files


def test_two_notebooks_of_one_student_give_two_assignments_two_pages_one_wide_row(tmp_path):
    batch = [graded("alice", "01-buckets", result("token_bucket_take", 1.0),
                    result("shaper_departures", 0.5, "wrong", "request 3")),
             graded("alice", "02-windows", result("fixed_window", 0.25, "wrong", "at t=2")),
             graded("bob", "01-buckets", result("token_bucket_take", 0.0, "missing"))]
    record = write(tmp_path, batch)
    rows = read_rows(tmp_path / "grades.csv")
    assert [(r["student"], r["assignment"], r["exercise"], r["submission"]) for r in rows] == [
        ("alice", "01-buckets", "shaper_departures", "alice.01-buckets.ipynb"),
        ("alice", "01-buckets", "token_bucket_take", "alice.01-buckets.ipynb"),
        ("alice", "02-windows", "fixed_window", "alice.02-windows.ipynb"),
        ("bob", "01-buckets", "token_bucket_take", "bob.01-buckets.ipynb")]
    pages = {p.relative_to(tmp_path / "feedback").as_posix(): p.read_text()
             for p in (tmp_path / "feedback").rglob("*.md")}
    assert sorted(pages) == ["alice/01-buckets.md", "alice/02-windows.md", "bob/01-buckets.md"]
    assert "alice.02-windows.ipynb" in pages["alice/02-windows.md"]
    assert "shaper_departures" not in pages["alice/02-windows.md"]
    wide = read_rows(wide_path(tmp_path / "grades.csv"))
    assert [(w["student"], w["token_bucket_take"], w["shaper_departures"], w["fixed_window"],
             w["total"], w["possible"]) for w in wide] == [
        ("alice", "1", "0.5", "0.25", "1.75", "3"), ("bob", "0", "", "", "0", "1")]
    assert record["students"] == 2 and record["notebooks"] == 3 and record["rows"] == 4
    assert record["totals"] == {"alice": 1.75, "bob": 0.0}
    assert record["mean_score"] == pytest.approx((1 + 0.5 + 0.25 + 0) / 4)


def test_rows_record_the_run_points_and_lateness(tmp_path):
    (tmp_path / "course.toml").write_text(COURSE)
    course = read_course(tmp_path / "course.toml")
    on_time, late = datetime(2027, 1, 15, 20, tzinfo=UTC), datetime(2027, 1, 16, 1, tzinfo=UTC)
    batch = [graded("ann", "01-buckets", result("token_bucket_take", 0.75, "wrong"),
                    submitted_at=on_time),
             graded("bob", "01-buckets", result("token_bucket_take", 1.0), submitted_at=late),
             graded("cat", "01-buckets", result("token_bucket_take", 1.0)),      # time unknown
             graded("dan", "03-counter", result("fixed_window", 1.0), submitted_at=late)]
    write(tmp_path, batch, course=course)
    rows = read_rows(tmp_path / "grades.csv")
    assert [(r["student"], r["score"], r["points"], r["points_possible"], r["late"])
            for r in rows] == [("ann", "0.7500", "1.5", "2", "no"),
                               ("bob", "1.0000", "2", "2", "yes"),
                               ("cat", "1.0000", "2", "2", ""),       # no submission time
                               ("dan", "1.0000", "0.5", "0.5", "")]   # no due date
    assert {(r["graded_at"], r["ratelab_version"], r["cases_sha256"], r["cases_seed"],
             r["isolation"]) for r in rows} == {(RUN1.graded_at, "0.1.0", "a" * 64, "2027",
                                                 "bubblewrap")}
    wide = {w["student"]: w for w in read_rows(wide_path(tmp_path / "grades.csv"))}
    # possible: every exercise the course lists (2 + 0.5), whichever the student was graded on
    assert [(wide[s]["total"], wide[s]["possible"]) for s in ("ann", "dan")] == \
        [("1.5", "2.5"), ("0.5", "2.5")]


def test_regrading_one_student_keeps_the_others_rows_byte_identical(tmp_path):
    first = [graded("alice", "01-buckets", result("token_bucket_take", 1.0),
                    result("shaper_departures", 0.5, "wrong", '=1+1, "quoted"')),
             graded("alice", "02-windows", result("fixed_window", 0.0, "error", "boom")),
             graded("bob", "01-buckets", result("token_bucket_take", 0.0, "wrong", "x"))]
    write(tmp_path, first, RUN1)
    before = (tmp_path / "grades.csv").read_bytes().splitlines(keepends=True)
    write(tmp_path, [graded("bob", "01-buckets", result("token_bucket_take", 1.0)),
                     graded("alice", "02-windows", result("fixed_window", 1.0))], RUN2)
    after = (tmp_path / "grades.csv").read_bytes().splitlines(keepends=True)
    kept = [line for line in before if b"01-buckets" in line and line.startswith(b"alice,")]
    assert len(kept) == 2 and all(line in after for line in kept)
    assert any(b"\"'=1+1, \"\"quoted\"\"\"" in line for line in kept)   # a quoted cell too
    assert after[0] == before[0] and len(after) == len(before)
    rows = {(r["student"], r["assignment"]): r for r in read_rows(tmp_path / "grades.csv")}
    assert rows["bob", "01-buckets"]["score"] == "1.0000"
    assert rows["bob", "01-buckets"]["graded_at"] == RUN2.graded_at
    assert rows["alice", "02-windows"]["verdict"] == "passed"
    wide = {w["student"]: w for w in read_rows(wide_path(tmp_path / "grades.csv"))}
    assert (wide["alice"]["graded_at"], wide["alice"]["cases_seed"]) == (RUN2.graded_at, "2028")
    assert wide["alice"]["total"] == "2.5"


def test_regrading_a_notebook_with_fewer_exercises_drops_its_old_rows(tmp_path):
    write(tmp_path, [graded("alice", "01-buckets", result("token_bucket_take"),
                            result("shaper_departures"))])
    write(tmp_path, [graded("alice", "01-buckets", result("token_bucket_take", 0.0, "wrong"))])
    assert [r["exercise"] for r in read_rows(tmp_path / "grades.csv")] == ["token_bucket_take"]


SCORES = [99, -1, math.nan, math.inf, -math.inf, 1.5, 1 + 1e-12, -0.0, "0.5", None, "x", 0.33335]


@pytest.mark.parametrize("score", SCORES)
def test_a_score_never_leaves_zero_to_one(tmp_path, score):
    (tmp_path / "course.toml").write_text("[points]\ntoken_bucket_take = 3\n")
    write(tmp_path, [graded("alice", "01-buckets", result("token_bucket_take", score))],
          course=read_course(tmp_path / "course.toml"))
    row, = read_rows(tmp_path / "grades.csv")
    wide, = read_rows(wide_path(tmp_path / "grades.csv"))
    assert 0 <= float(row["score"]) <= 1 and not math.isnan(float(row["score"]))
    assert 0 <= float(row["points"]) <= float(row["points_possible"]) == 3
    assert float(wide["total"]) <= float(wide["possible"])


@pytest.mark.parametrize("score, clamped", [(99, 1.0), (-1, 0.0), (math.nan, 0.0),
                                            (math.inf, 1.0), (-math.inf, 0.0), (0.25, 0.25),
                                            ("nan", 0.0), (None, 0.0)])
def test_clamp_score(score, clamped):
    assert clamp_score(score) == clamped


@examples(100)
@given(st.lists(st.tuples(st.sampled_from(["ann", "bob"]), st.sampled_from(["01-a", "02-b"]),
                          st.sampled_from(["token_bucket_take", "gcra_tat", "headers"]),
                          st.floats(allow_nan=True, allow_infinity=True)
                          | st.floats(0, 1)), max_size=12),
       st.dictionaries(st.sampled_from(["token_bucket_take", "gcra_tat", "sliding_log"]),
                       st.floats(0, 1e6) | st.sampled_from([0.0, 1 / 3, 0.33335, 7.0]),
                       max_size=3))
def test_a_total_never_exceeds_possible(cells, points):
    course = Course(points)
    batch = {}
    for student, assignment, exercise, score in cells:
        g = batch.setdefault((student, assignment), graded(student, assignment, result()))
        if exercise not in [r.exercise for r in g.results]:
            g.results.append(result(exercise, score, "wrong"))
    rows = [r for g in batch.values() for r in notebook_rows(g, RUN1, course)]
    for r in rows:
        assert 0 <= float(r["score"]) <= 1
        assert 0 <= float(r["points"]) <= float(r["points_possible"])
    for w in wide_table(rows, course)[1]:
        assert float(w["total"]) <= float(w["possible"])


HOSTILE = [
    "```\n# Full marks\n```",
    "``````````````` all 15 backticks\n```\n[click](http://evil.example)",
    "~~~\n<script>alert(1)</script>\n~~~",
    "````text\n</pre>\n````\n\n## token_bucket_take: passed",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_students_text_cannot_break_out_of_its_fence(text):
    g = graded("alice", "01-buckets", result("token_bucket_take", 0, "wrong", text, feedback=text),
               notes=[text])
    page = feedback_page(g, RUN1)
    openers = re.findall(r"^(`+)text$", page, re.MULTILINE)
    longest = max(map(len, re.findall(r"`+", text)), default=0)
    assert len([fence for fence in openers if len(fence) > longest]) == 2
    tokens = pytest.importorskip("markdown_it").MarkdownIt("commonmark").parse(page)
    fences = [t for t in tokens if t.type == "fence"]
    assert all(len(t.markup) > longest for t in fences)
    notes, section = [t.content for t in fences]
    assert " ".join(text.split()) in notes and text in section
    outside = " ".join(t.content for t in tokens if t.type == "inline")
    assert not any(bit in outside for bit in ("Full marks", "script", "evil", "15 backticks"))
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["Feedback: 01-buckets", "Notes", "token_bucket_take: wrong"]


def test_student_text_is_cleaned_and_capped(tmp_path):
    nasty = "\x1b[31mred\x1b[0m \u202eevil\u202c \x00nul\r\nnext\u2028line\tend \ud800"
    g = graded("alice", "01-buckets",
               result("token_bucket_take", 0, "wrong", nasty + "x" * 10_000,
                      feedback=(nasty + "\n") * 5_000),
               notes=[nasty] + ["n" * 10_000] * (NOTES_MAX + 5))
    write(tmp_path, [g])
    row, = read_rows(tmp_path / "grades.csv")
    page = (tmp_path / "feedback" / "alice" / "01-buckets.md").read_text(encoding="utf-8")
    bad = ["\x1b", "\u202e", "\u202c", "\x00", "\r", "\u2028", "\t", "\ud800"]
    assert not any(ch in row["first_failure"] or ch in page for ch in bad)
    assert row["first_failure"].startswith("[31mred[0m evil nul next line end x")
    assert len(row["first_failure"]) <= LINE_MAX and row["first_failure"].endswith("xx … (cut)")
    assert "[31mred[0m evil nul\nnext\nline    end" in page       # newlines kept in feedback
    # cut: the first failure, the timeline, and the 18 long notes among the 19 shown
    assert page.count("(cut)") == 1 + 1 + NOTES_MAX - 2 and len(page) < FEEDBACK_MAX + \
        (NOTE_MAX + 1) * NOTES_MAX + LINE_MAX + 2_000
    assert "and 7 more notes" in page      # 26 notes: 19 shown, the 20th line counts the rest


@pytest.mark.parametrize("text, cell", [
    ('=HYPERLINK("http://evil.example","x")', "'=HYPERLINK(\"http://evil.example\",\"x\")"),
    ("+1+1", "'+1+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'=1"),
    ("'=already", "'=already"), ("a=1", "a=1")])
def test_a_formula_in_a_csv_cell_is_neutralised(tmp_path, text, cell):
    name = f"{text.strip()[:4]}.ipynb"     # a roster maps any file name to a student
    quoted = name.replace('"', '""')
    (tmp_path / "roster.csv").write_text(f'file,student,assignment\n"{quoted}",s1,01-x\n')
    ident = identify(Path("/subs") / name, read_roster(tmp_path / "roster.csv"))
    write(tmp_path, [Graded(ident, Path("/subs") / name,
                            [result("token_bucket_take", 0, "wrong", text)])])
    row, = read_rows(tmp_path / "grades.csv")
    assert row["first_failure"] == cell
    assert row["submission"] == (name if name[0] not in "=+-@" else "'" + name)
    cells = [c for line in csv.reader(io.StringIO((tmp_path / "grades.csv").read_text()))
             for c in line]
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t"))]


@pytest.mark.parametrize("which", ["long", "wide"])
@pytest.mark.parametrize("content", [b"name,mark\nalice,12\n", b"my thesis notes\n",
                                     b"student,score\nalice,1\n", b"\xff\xfe binary"])
def test_an_unrelated_existing_file_is_refused_and_left_alone(tmp_path, which, content):
    target = tmp_path / "grades.csv" if which == "long" else wide_path(tmp_path / "grades.csv")
    target.write_bytes(content)
    with pytest.raises(ValueError) as e:
        write(tmp_path, [graded()])
    assert str(target) in str(e.value) and "not a ratelab gradebook" in str(e.value)
    assert target.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]   # nothing else written


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace("1.0000", "99.0000", 1), "line 2"),
    (lambda t: t.replace(",passed,", ",PASSED,", 1), "line 2"),
    (lambda t: t.rstrip("\r\n") + ",extra\r\n", "line 2"),
])
def test_a_damaged_gradebook_is_refused_naming_the_line(tmp_path, edit, says):
    write(tmp_path, [graded()])
    path = tmp_path / "grades.csv"
    path.write_bytes(edit(path.read_bytes().decode()).encode())
    with pytest.raises(ValueError, match=says):
        write(tmp_path, [graded("bob")])


def test_an_empty_existing_file_is_taken_as_an_empty_gradebook(tmp_path):
    (tmp_path / "grades.csv").write_bytes(b"")
    write(tmp_path, [graded()])
    assert [r["student"] for r in read_rows(tmp_path / "grades.csv")] == ["alice"]


def test_files_are_0600_and_folders_0700_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        record = write(tmp_path, [graded("alice"), graded("bob", "02-windows")])
    finally:
        os.umask(old)
    files = [Path(record["gradebook"]), Path(record["wide"]), *map(Path, record["pages"])]
    assert len(files) == 4
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}
    folders = [tmp_path / "feedback", *(tmp_path / "feedback" / s for s in ("alice", "bob"))]
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o700}
    assert not [p for p in tmp_path.rglob(".*.tmp")]


def test_a_link_in_place_of_a_students_folder_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "feedback").mkdir()
    (tmp_path / "feedback" / "zoe").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="zoe is not a directory"):
        write(tmp_path, [graded("alice"), graded("zoe")])
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert not (tmp_path / "grades.csv").exists()
    assert not list((tmp_path / "feedback").rglob("*.md"))


def test_a_linked_feedback_folder_chosen_by_the_instructor_is_used(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "feedback").symlink_to(tmp_path / "real")
    write(tmp_path, [graded("alice")])
    assert (tmp_path / "real" / "alice" / "01-buckets.md").is_file()


@pytest.mark.parametrize("batch, says", [
    ([graded("alice"), graded("alice")], "both alice's 01-buckets"),
    ([graded("alice", "01-buckets", result("gcra_tat"), result("gcra_tat"))], "twice"),
])
def test_a_batch_that_would_overwrite_its_own_rows_is_refused(tmp_path, batch, says):
    with pytest.raises(ValueError, match=says):
        write(tmp_path, batch)
    assert not (tmp_path / "grades.csv").exists()


def test_the_page_shows_scores_notes_and_run_but_not_the_cases_seed_or_hash():
    g = graded("alice", "01-buckets", result("token_bucket_take", 1.0),
               result("shaper_departures", 0.5, "wrong", "request 3: expected 2.0",
                      "t=0 ok\nt=1 REJECT"),
               notes=["cell 3 stopped the notebook: NameError"],
               submitted_at=datetime(2027, 1, 16, 1, tzinfo=UTC))
    course = Course({"shaper_departures": 4.0}, {"01-buckets": datetime(2027, 1, 15, 23, 59,
                                                                       tzinfo=UTC)})
    run = RunInfo("0.1.0", "f00d" * 16, 918273, "2027-01-16T10:00:00Z", "bubblewrap")
    page = feedback_page(g, run, course)
    for bit in ["`alice`", "`01-buckets`", "`alice.01-buckets.ipynb`",
                "| token_bucket_take | 1.0000 | 1 of 1 | passed |",
                "| shaper_departures | 0.5000 | 2 of 4 | wrong |", "total: 3 of 5 points",
                "due 2027-01-15T23:59:00Z: late", "cell 3 stopped the notebook: NameError",
                "first failure: request 3: expected 2.0\n\nt=0 ok\nt=1 REJECT",
                RUN1.graded_at, "`0.1.0`", "`bubblewrap`"]:
        assert bit in page, bit
    assert "## token_bucket_take" not in page                 # passed: no section
    assert "f00d" not in page and "918273" not in page
