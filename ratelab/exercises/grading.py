"""Grading submitted notebooks: instructor-only cases, a sandboxed run per student, a CSV.

* :func:`make_cases` draws instructor-only cases for each exercise from a seed (the same
  random streams the public checks use, but more of them and from a seed students never see);
  :func:`write_cases` saves them readable by their owner only.
* :func:`grade` runs each submission in its own sandboxed worker
  (:mod:`ratelab.exercises.sandbox`, :mod:`ratelab.exercises.worker`): the notebook's cells
  first, then — once its code is loaded in a process that cannot open the cases file — the
  public checks plus the instructor's cases. It writes one CSV row per student and exercise
  (score, verdict, first failure) and a feedback markdown per student. A submission that
  raises, hangs, floods its output, deletes cells or is not a notebook still gets its rows,
  with the reason; one bad submission never stops the batch.

A score is the share of cases passed (public and instructor cases together), 0 when the
answer is missing, not attempted, or the notebook could not be run.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import NAMES, module
from .core import CASE_TIME_LIMIT_S
from .sandbox import NOBODY, Limits, command, detect, drops_to_nobody, environment, preexec, \
    prepare_scratch, readable_by_others

CASES_FORMAT = "ratelab-grading-cases"
CASES_VERSION = 1
COLUMNS = ("student", "submission", "exercise", "score", "verdict", "first_failure")
INSTRUCTOR_FACTOR = 2
"""Instructor cases per exercise, in multiples of the public random cases."""


# ---------------------------------------------------------------- cases


def make_cases(seed: int, exercises: list[str] | None = None) -> dict:
    """Instructor-only cases for `exercises` (default: all), drawn from `seed`."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    names = list(exercises or NAMES)
    out = {"format": CASES_FORMAT, "version": CASES_VERSION, "seed": int(seed), "exercises": {}}
    for name in names:
        ex = module(name).EXERCISE
        rng = np.random.default_rng([int(seed), zlib.crc32(name.encode())])
        cases = ex.random_cases(rng, INSTRUCTOR_FACTOR * ex.random_count)
        for case in cases:
            case["name"] = f"instructor {case['name']}"
        out["exercises"][name] = cases
    return out


def write_cases(cases: dict, path: Path) -> None:
    """Save `cases` as JSON, readable and writable by the owner only (0600)."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


def write_instructor_cases(path: Path, seed: int, exercises: list[str] | None = None) -> dict:
    """Draw the instructor cases (:func:`make_cases`) and save them at `path` (0600).

    Returns a record: the file, the seed, and the cases per exercise."""
    cases = make_cases(seed, exercises)
    write_cases(cases, path)
    per = [{"exercise": n, "cases": len(c)} for n, c in cases["exercises"].items()]
    return {"cases_file": str(path), "seed": int(seed), "exercises": per,
            "total_cases": sum(r["cases"] for r in per)}


def read_cases(path: Path) -> dict:
    """The cases file at `path` (ValueError when it is not one)."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"cases file {path} is not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != CASES_FORMAT:
        raise ValueError(f"{path} is not a cases file (make one with ratelab grade make-cases)")
    unknown = [n for n in data.get("exercises", {}) if n not in NAMES]
    if unknown:
        raise ValueError(f"cases file {path} names unknown exercises: {', '.join(unknown)}")
    return data


# ---------------------------------------------------------------- inside the kernel


def grade_namespace(namespace: dict, cases: dict, result_path: str,
                    case_limit_s: float = CASE_TIME_LIMIT_S) -> None:
    """Check the answers found in `namespace` (a notebook's globals) against the public
    cases plus `cases` ({exercise: [case, ...]}); write {exercise: record} to `result_path`.
    Runs in the student's kernel, after the student's cells."""
    out = {}
    for name, extra in cases.items():
        ex = module(name).EXERCISE
        answer = namespace.get(ex.answer)
        if answer is None:
            out[name] = {"verdict": "missing", "score": 0.0,
                         "reason": f"the notebook defines no `{ex.answer}`"}
            continue
        try:
            result = ex.check(answer, cases=ex.cases() + list(extra), time_limit_s=case_limit_s)
            record = result.as_dict()
            record["text"] = result.text()
        except BaseException as e:  # noqa: BLE001 - a check never stops the others
            record = {"verdict": "wrong", "score": 0.0,
                      "reason": f"the check failed: {type(e).__name__}: {e}"[:300]}
        out[name] = record
    Path(result_path).write_text(json.dumps(out, default=str))


# ---------------------------------------------------------------- the grader


@dataclass
class Submission:
    """One student's graded work: the rows, and what the feedback says."""

    student: str
    path: Path
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    texts: dict = field(default_factory=dict)


def student_of(path: Path) -> str:
    """The student's name: the submission's file name without its extension."""
    return Path(path).name.split(".")[0] or Path(path).name


def _rows_all(sub: Submission, names: list[str], verdict: str, reason: str) -> None:
    for name in names:
        sub.rows.append({"student": sub.student, "submission": str(sub.path), "exercise": name,
                         "score": 0.0, "verdict": verdict, "first_failure": reason})


def _read_notebook(path: Path) -> str | None:
    """Why `path` is not a readable notebook, or None when it is one."""
    import nbformat

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return f"cannot read it: {e.strerror}"
    if len(data) > 50 * 2**20:
        return f"it is {len(data) / 2**20:.0f} MB; a notebook here is at most 50 MB"
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # noqa: BLE001 - every way of not being a notebook
        return f"not a notebook: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return None


def grade_one(path: Path, cases: dict, *, mode: str, limits: Limits,
              hidden: list[Path], case_limit_s: float = CASE_TIME_LIMIT_S) -> Submission:
    """Grade one submission in its own sandboxed worker; never raises for the submission's
    sake (a grader failure, such as no python3 kernel, does raise)."""
    sub = Submission(student_of(path), Path(path))
    names = list(cases)
    problem = _read_notebook(path)
    if problem:
        _rows_all(sub, names, "error", problem)
        return sub
    scratch = Path(tempfile.mkdtemp(prefix="ratelab-grade-"))
    parent, child = socket.socketpair()
    proc = None
    try:
        shutil.copyfile(path, scratch / "submission.ipynb")
        prepare_scratch(scratch, mode)
        argv = [sys.executable, "-m", "ratelab.exercises.worker",
                "--notebook", str(scratch / "submission.ipynb"), "--fd", str(child.fileno()),
                "--timeout", str(limits.time_s), "--grade-timeout", str(limits.grade_s),
                "--case-limit", str(case_limit_s)]
        if mode == "bwrap" and drops_to_nobody(mode):
            argv += ["--drop-to", NOBODY]
        env = environment(scratch)
        proc = subprocess.Popen(command(mode, scratch, hidden, argv), cwd=scratch, env=env,
                                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=preexec(mode, limits), start_new_session=True)
        child.close()
        loaded = _receive(parent, limits.time_s + 60, proc)
        if loaded.get("event") != "loaded":
            _rows_all(sub, names, "error", _failure(loaded, proc))
            return sub
        error = loaded.get("error")
        if error:
            sub.notes.append(f"cell {error['cell']} stopped the notebook: {error['ename']}: "
                             f"{error['evalue']}")
        _send(parent, cases)
        done = _receive(parent, limits.grade_s + 60, proc)
        if done.get("event") != "done":
            _rows_all(sub, names, "error", _failure(done, proc))
            return sub
        results = done.get("results", {})
        for name in names:
            r = results.get(name) if isinstance(results, dict) else None
            if not isinstance(r, dict):
                reason = results.get("_error") if isinstance(results, dict) else None
                _rows_all(sub, [name], "error", reason or "the checks gave no result")
                continue
            failure = r.get("failure") or {}
            reason = r.get("reason") or failure.get("message") or ""
            if r.get("verdict") == "not attempted" and not reason:
                reason = "not attempted: the stub still raises NotImplementedError"
            if r.get("verdict") in ("missing", "not attempted") and error:
                reason = (f"{reason}; " if reason else "") + sub.notes[0]
            sub.rows.append({"student": sub.student, "submission": str(path), "exercise": name,
                             "score": round(float(r.get("score", 0.0)), 4),
                             "verdict": r.get("verdict", "error"), "first_failure": reason})
            sub.texts[name] = r.get("text") or reason
        return sub
    finally:
        parent.close()
        if proc is not None:
            _stop(proc)
        shutil.rmtree(scratch, ignore_errors=True)


def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _receive(sock: socket.socket, timeout_s: float, proc) -> dict:
    """The worker's next message, or {"event": "timeout"} / {"event": "gone"}."""
    deadline = time.monotonic() + timeout_s
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            return {"event": "timeout", "reason": f"no answer within {timeout_s:g} s"}
        sock.settimeout(min(left, 1.0))
        try:
            chunk = sock.recv(1 << 20)
        except socket.timeout:
            if proc.poll() is not None and not data:
                return {"event": "gone"}
            continue
        if not chunk:
            return {"event": "gone"}
        data += chunk
        if len(data) > 64 * 2**20:
            return {"event": "failed", "reason": "the worker sent more than 64 MB"}
    try:
        message = json.loads(data)
    except json.JSONDecodeError:
        return {"event": "failed", "reason": "the worker's answer could not be read"}
    return message if isinstance(message, dict) else {"event": "failed", "reason": "bad answer"}


def _failure(message: dict, proc) -> str:
    event = message.get("event")
    if event == "timeout":
        return f"timed out: {message.get('reason')}"
    if event == "gone":
        _stop(proc)
        code = proc.returncode
        tail = (proc.stderr.read() or b"")[-400:].decode(errors="replace").strip() \
            if proc.stderr else ""
        how = f"killed by signal {-code}" if code and code < 0 else f"exit status {code}"
        last = f": {tail.splitlines()[-1]}" if tail else ""
        return f"the sandboxed run ended early ({how}){last}"
    return f"the run failed: {message.get('reason', event)}"


def _stop(proc) -> None:
    """Kill the worker's whole session (the sandbox, its kernel, anything they started)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def feedback_markdown(sub: Submission) -> str:
    """The feedback page a student reads: per exercise the score, verdict and first failure."""
    lines = [f"# Feedback for {sub.student}", "", f"Submission: `{sub.path.name}`", ""]
    if sub.notes:
        lines += [f"**Note:** {n}" for n in sub.notes] + [""]
    total = sum(r["score"] for r in sub.rows)
    lines += [f"Total: {total:.2f} of {len(sub.rows)}", "",
              "| exercise | score | verdict |", "|---|---|---|"]
    lines += [f"| {r['exercise']} | {r['score']:.2f} | {r['verdict']} |" for r in sub.rows]
    for r in sub.rows:
        if r["verdict"] != "passed":
            text = sub.texts.get(r["exercise"]) or r["first_failure"]
            lines += ["", f"## {r['exercise']}", "", "```", str(text), "```"]
    return "\n".join(lines) + "\n"


def grade(submissions: list[Path], cases_path: Path, out_csv: Path,
          feedback_dir: Path | None = None, *, limits: Limits = Limits(),
          isolation: str = "auto", case_limit_s: float = CASE_TIME_LIMIT_S,
          progress=None) -> dict:
    """Grade every submission; write `out_csv` and one feedback markdown per student.

    Returns a record: the isolation mode used, counts, the mean score, and warnings."""
    cases_path, out_csv = Path(cases_path).resolve(), Path(out_csv).resolve()
    cases = read_cases(cases_path)["exercises"]
    if not cases:
        raise ValueError(f"cases file {cases_path} has no exercises")
    mode = detect(isolation)
    feedback_dir = Path(feedback_dir or out_csv.with_name(out_csv.stem + "-feedback")).resolve()
    feedback_dir.mkdir(parents=True, exist_ok=True)
    feedback_dir.chmod(0o700)
    fd = os.open(out_csv, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    submissions = [Path(s).resolve() for s in submissions]
    hidden = [cases_path, out_csv, feedback_dir, *submissions]
    warnings = []
    if mode == "user":
        exposed = readable_by_others([cases_path, *submissions])
        if exposed:
            warnings.append("without bubblewrap, files readable by others can be read by a "
                            f"submission: {', '.join(p.name for p in exposed[:5])}")
    if mode == "plain":
        warnings.append("isolation 'plain': submissions run as you and can read your files")
    students = rows = 0
    scores = []
    with os.fdopen(fd, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for path in submissions:
            try:
                sub = grade_one(path, cases, mode=mode, limits=limits, hidden=hidden,
                                case_limit_s=case_limit_s)
            except (OSError, subprocess.SubprocessError) as e:  # this submission only
                sub = Submission(student_of(path), path)
                _rows_all(sub, list(cases), "error", f"the grader could not run it: {e}")
            for row in sub.rows:
                writer.writerow(row)
                scores.append(row["score"])
            f.flush()
            (feedback_dir / f"{sub.student}.md").write_text(feedback_markdown(sub))
            students, rows = students + 1, rows + len(sub.rows)
            if progress:
                progress(sub)
    return {"isolation": mode, "students": students, "rows": rows,
            "mean_score": float(np.mean(scores)) if scores else 0.0,
            "grades_csv": str(out_csv), "feedback_dir": str(feedback_dir),
            "warnings": warnings}
