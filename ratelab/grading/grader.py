"""Grading submitted notebooks: the verdict is computed here, the student's code runs confined.

For each submission the grader

1. reads the notebook itself and checks, from its source, that each answer is the student's
   own work (:mod:`.originality`);
2. starts a confined worker (:mod:`.sandbox`, :mod:`.worker`) on a copy of it, with a student
   build of the package (no solutions, no checkers), and has it run the code cells one by one,
   each on the grader's clock: a cell that raises is noted and the next one runs; a cell that
   runs past the notebook's time, hangs ignoring the interrupt, or is killed for memory or
   processes stops the notebook there — the grader starts it again, running only the cells
   before it, so that such a cell costs only what comes after it;
3. has the kernel answer calls (:mod:`.answers`): every check runs here, in the grader's
   process, on stand-ins for the student's objects (:mod:`ratelab.exercises.proxy`), with the
   public and the instructor's cases. The instructor's expected values, the references and the
   checkers never enter the sandbox; only a case's inputs do.

The rows go to the gradebook (:mod:`.gradebook`) as each submission is done; one submission
that breaks never stops the batch. Verdicts are a fixed set and scores lie in [0, 1].
"""

from __future__ import annotations

import os
import pickle
import pwd
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import ratelab

from ..exercises import module
from ..exercises.core import CASE_TIME_LIMIT_S
from ..exercises.errors import AnswerFailed
from ..exercises.proxy import Budget, lookup
from .cases import read_cases
from .course import Course, Identity, Roster, identify
from .gradebook import ExerciseResult, Graded, RunInfo, clamp_score, write_gradebook
from .originality import borrowed
from ..exercises.protocol import NotPlain, ProtocolError, receive, send
from .sandbox import Limits, Sandbox, detect
from .student_build import student_package

MAX_RUNS = 3
"""How many times one submission's sandbox may be started (the first run and two restarts)."""

GRACE_S = 10.0
"""Seconds past a step's own limit that the grader waits before it stops the sandbox (the
worker's own interrupt comes first; this is for code that ignores it)."""

START_S = 90.0
"""Seconds a sandbox has to start its kernel and say it is ready."""

NOTEBOOK_MAX_BYTES = 50 * 2**20

SCRIPT_CHECK_MEMORY_MB = 2048
"""Address space of the child process that checks an exercise whose student code runs on the
grader's side (a Lua script in the simulated store): a script that fills the store stops there."""


# ---------------------------------------------------------------- the answers' port


class SocketPort:
    """The answers of a sandboxed kernel over a unix socket; `closed` says why it stopped."""

    def __init__(self, conn: socket.socket, default_limit_s: float) -> None:
        self.conn, self.default_limit_s = conn, default_limit_s
        self.closed: str | None = None
        self.closed_kind = "raised"

    def request(self, message: dict) -> dict:
        """The reply to `message`, or a "closed" reply once the other side hung or went."""
        if self.closed is None:
            limit = message.get("limit_s") or self.default_limit_s
            try:
                send(self.conn, message)
                return receive(self.conn, limit + GRACE_S)
            except TimeoutError:
                self._close("timeout", f"your code ran past its {limit:g} s and did not stop "
                                       "when interrupted; the grader stopped it")
            except (ProtocolError, NotPlain, OSError) as e:
                self._close("raised", f"the process running your answers stopped ({e})")
        return {"closed": self.closed, "closed_kind": self.closed_kind}

    def _close(self, kind: str, why: str) -> None:
        self.closed, self.closed_kind = why, kind
        self.conn.close()

    def goodbye(self) -> None:
        if self.closed is None:
            try:
                send(self.conn, {"op": "bye"})
            except OSError:
                pass
            self.conn.close()


# ---------------------------------------------------------------- one start of a sandbox


@dataclass
class Step:
    """What became of one cell (or of the serving cell)."""

    status: str            # ok, raised, timeout (interrupted), died, hung, gone
    detail: str = ""


class Run:
    """One start of a submission's sandbox: its worker, its kernel, its answers' socket."""

    def __init__(self, notebook: Path, mode: str, limits: Limits, package: Path) -> None:
        self.notebook, self.mode, self.limits, self.package = notebook, mode, limits, package
        self.cells: list[int] = []
        self.port: SocketPort | None = None
        self.failed = ""

    def __enter__(self) -> "Run":
        self.scratch = Path(tempfile.mkdtemp(prefix="ratelab-grade-"))
        shutil.copyfile(self.notebook, self.scratch / "submission.ipynb")
        (self.scratch / "tmp").mkdir()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket_path = str(self.scratch / "answers.sock")
        self.listener.bind(self.socket_path)
        self.listener.listen(1)
        self._hand_over()
        self.control, child = socket.socketpair()
        self.sandbox = Sandbox(self.mode, self.scratch, self.limits, self.package)
        argv = [self._python(), "-m", "ratelab.grading.worker",
                "--notebook", str(self.scratch / "submission.ipynb"),
                "--fd", str(child.fileno()), *self.sandbox.extra_argv()]
        try:
            self.proc = self.sandbox.start(argv, pass_fds=(child.fileno(),))
        finally:
            child.close()
        ready = self._receive(START_S)
        if ready.get("event") != "ready":
            self.failed = self._why(ready, "the sandbox did not start the notebook's kernel")
        else:
            self.cells = [int(i) for i in ready.get("cells", [])]
        return self

    @staticmethod
    def _python() -> str:
        return sys.executable

    def _hand_over(self) -> None:
        """Give the scratch folder (and the socket in it) to the user the sandbox runs as."""
        if os.geteuid() == 0 and self.mode in ("bwrap", "user"):
            nobody = pwd.getpwnam("nobody")
            for path in [self.scratch, *self.scratch.rglob("*")]:
                os.chown(path, nobody.pw_uid, nobody.pw_gid, follow_symlinks=False)
        self.scratch.chmod(0o700)
        os.chmod(self.socket_path, 0o600)

    def _receive(self, timeout_s: float) -> dict:
        try:
            return receive(self.control, timeout_s)
        except TimeoutError:
            return {"event": "hung"}
        except ProtocolError:
            return {"event": "gone"}

    def _why(self, message: dict, what: str) -> str:
        event = message.get("event")
        limit = self.sandbox.exceeded() if hasattr(self, "sandbox") else None
        if limit:
            return f"{what}: {limit}"
        if event == "failed":
            return f"{what}: {message.get('reason')}"
        if event == "gone":
            self.sandbox.kill()
            tail = (self.proc.stderr.read() or b"")[-400:].decode(errors="replace").strip() \
                if self.proc.stderr else ""
            last = f": {tail.splitlines()[-1]}" if tail else ""
            return f"{what} (the sandboxed run ended, exit status {self.proc.returncode}){last}"
        return f"{what} (no answer within {START_S:g} s)"

    def run_cell(self, index: int, timeout_s: float) -> Step:
        """Run code cell `index` within `timeout_s`, on the grader's clock."""
        send(self.control, {"op": "run", "index": index, "timeout_s": timeout_s})
        reply = self._receive(timeout_s + GRACE_S)
        event = reply.get("event")
        if event == "cell":
            limit = self.sandbox.check()  # the cell may have ended at the limit, before a look
            if limit:
                return Step("died", limit)
            detail = f"{reply.get('ename', '')}: {reply.get('evalue', '')}".strip(": ")
            return Step(str(reply.get("status", "raised")), detail)
        limit = self.sandbox.exceeded()
        if limit:
            return Step("died", limit)
        if event == "hung":
            return Step("hung", f"it ran past {timeout_s:.0f} s and did not stop when "
                                "interrupted")
        return Step("gone", self._why(reply, "the sandbox stopped"))

    def serve(self, timeout_s: float) -> SocketPort | None:
        """The kernel's answers, once it has connected to the grader's socket."""
        send(self.control, {"op": "serve", "socket": self.socket_path, "timeout_s": timeout_s})
        self.listener.settimeout(START_S)
        try:
            conn, _ = self.listener.accept()
        except (socket.timeout, OSError):
            self.failed = self.sandbox.exceeded() or "the kernel did not start answering"
            return None
        self.port = SocketPort(conn, CASE_TIME_LIMIT_S)
        return self.port

    def __exit__(self, *exc) -> None:
        if self.port is not None:
            self.port.goodbye()
        if hasattr(self, "sandbox"):
            self.sandbox.kill()
        for s in (getattr(self, "control", None), self.listener):
            if s is not None:
                s.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


# ---------------------------------------------------------------- one submission


@dataclass
class Options:
    """How a batch is graded."""

    mode: str
    limits: Limits = field(default_factory=Limits)
    case_limit_s: float = CASE_TIME_LIMIT_S


def _notebook_problem(path: Path) -> tuple[str | None, list[str]]:
    """Why `path` is not a readable notebook (or None), and its code cells' sources."""
    # ~2.6 s to import (jsonschema); every `ratelab` command loads this module: only to grade
    import nbformat

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return f"cannot read it: {e.strerror}", []
    if len(data) > NOTEBOOK_MAX_BYTES:
        return (f"it is {len(data) / 2**20:.0f} MB; a notebook here is at most "
                f"{NOTEBOOK_MAX_BYTES // 2**20} MB"), []
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # noqa: BLE001 - every way of not being a notebook
        return f"not a notebook: {type(e).__name__}: {str(e).splitlines()[0][:200]}", []
    return None, [c.source for c in nb.cells if c.cell_type == "code"]


def _row(name: str, verdict: str, reason: str, score: float = 0.0, text: str = "") \
        -> ExerciseResult:
    return ExerciseResult(name, score, verdict, reason, text or reason)


def check_answer(name: str, port, extra_cases: list[dict], case_limit_s: float,
                 notes: list[str]) -> ExerciseResult:
    """The row of exercise `name`: the answer on `port` checked here, on the public cases and
    `extra_cases`."""
    ex = module(name).EXERCISE
    try:
        answer = lookup(port, ex.answer, Budget())
    except AnswerFailed as e:
        return _row(name, "timed out" if e.kind == "timeout" else "error", e.message)
    if answer is None:
        reason = f"the notebook defines no `{ex.answer}`"
        return _row(name, "missing", f"{reason}; {notes[0]}" if notes else reason)
    try:
        result = ex.check(answer, cases=ex.cases() + list(extra_cases), time_limit_s=case_limit_s)
    except Exception as e:  # noqa: BLE001 - a checker's failure is this row's, not the batch's
        return _row(name, "error", f"the check failed: {type(e).__name__}: {e}"[:300])
    failure = result.failure
    verdict = result.verdict
    if verdict == "wrong" and failure is not None and failure.kind == "timeout":
        verdict = "timed out"
    reason = failure.message if failure else ""
    if verdict == "not attempted":
        reason = "not attempted: the stub still raises NotImplementedError"
        if notes:
            reason += f"; {notes[0]}"
    return ExerciseResult(name, result.score, verdict, reason,
                          result.text() if verdict != "passed" else "")


def check_in_child(name: str, port, extra_cases: list[dict], case_limit_s: float,
                   notes: list[str], timeout_s: float) -> ExerciseResult:
    """check_answer in a forked child of the grader, killed after `timeout_s`: for exercises
    whose student code runs here (``Exercise.runs_here``, a Lua script in SimStore), where one
    long C call of the script could otherwise hang the grader, or a script fill its memory."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, send the row, leave without running the parent's exits
        os.close(read_end)
        try:
            memory = SCRIPT_CHECK_MEMORY_MB * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            row = check_answer(name, port, extra_cases, case_limit_s, notes)
        except BaseException as e:  # noqa: BLE001 - said in the row
            row = _row(name, "error", f"the check failed: {type(e).__name__}: {e}"[:300])
        closed = (port.closed, port.closed_kind) if isinstance(port, SocketPort) else None
        with os.fdopen(write_end, "wb") as out:
            out.write(pickle.dumps((row, closed)))
        os._exit(0)
    os.close(write_end)
    data, deadline = b"", time.monotonic() + timeout_s
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([pipe], [], [], left)
            chunk = pipe.read(1 << 16) if ready else b""
            if not chunk:
                break
            data += chunk
    if not data:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    if not data:  # the socket may stand mid-message: the answers must be started again
        _stopped(port, "timeout")
        return _row(name, "timed out", f"your answer's checks ran past {timeout_s:g} s (a "
                                       "script that never ends?); the grader stopped them")
    try:
        row, closed = pickle.loads(data)
        if closed and closed[0]:  # the child saw the answers' process hang or go
            port._close(closed[1], closed[0])
        return row
    except Exception:  # noqa: BLE001 - the child died mid-write (out of memory)
        _stopped(port, "raised")
        return _row(name, "error", f"the check of your answer ran out of its "
                                   f"{SCRIPT_CHECK_MEMORY_MB} MiB")


def _stopped(port, kind: str) -> None:
    """Close a sandbox's port whose conversation a stopped check left half-way."""
    if isinstance(port, SocketPort):
        port._close(kind, "the check of your answer was stopped")


def _run_cells(run: Run, stop: int | None, limits: Limits, notes: list[str]) \
        -> tuple[int | None, bool]:
    """Run the cells before `stop`; the new stop and whether the sandbox must start again."""
    deadline = time.monotonic() + limits.time_s
    for i in run.cells:
        if stop is not None and i >= stop:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            notes.append(f"the notebook ran past its {limits.time_s:g} s at cell {i + 1}: it and "
                         "the cells after it were not run")
            return i, False
        step = run.run_cell(i, left)
        n = i + 1  # as a student counts cells: from the top, from 1
        if step.status == "ok":
            continue
        if step.status == "raised":
            notes.append(f"cell {n} raised {step.detail}")
            continue
        if step.status == "timeout":
            notes.append(f"cell {n} ran past the notebook's {limits.time_s:g} s: it and the "
                         "cells after it were not counted")
            return i, False
        notes.append(f"cell {n} was stopped ({step.detail}): the notebook was run again up "
                     "to the cell before it")
        return i, True
    return stop, False


def grade_one(path: Path, identity: Identity, cases: dict[str, list[dict]], options: Options,
              package: Path) -> Graded:
    """Grade one submission; never raises for the submission's sake."""
    names = list(cases)
    graded = Graded(identity, Path(path), [], [], _mtime(path))
    problem, cells = _notebook_problem(path)
    if problem:
        graded.results = [_row(n, "error", problem) for n in names]
        return graded
    results: dict[str, ExerciseResult] = {}
    for name in names:
        ex = module(name).EXERCISE
        why = borrowed(cells, ex.answer, (*ex.references, f"ratelab.exercises.{name}"))
        if why:
            results[name] = _row(name, "flagged", f"not your own work: {why}")
    stop, failed, notes = None, "", graded.notes
    for _ in range(MAX_RUNS):
        if len(results) == len(names):
            break
        with Run(path, options.mode, options.limits, package) as run:
            if run.failed:
                failed = run.failed
                break
            stop, again = _run_cells(run, stop, options.limits, notes)
            if again:
                continue
            port = run.serve(options.limits.grade_s)
            if port is None:
                failed = run.failed
                continue
            deadline = time.monotonic() + options.limits.grade_s
            for name in [n for n in names if n not in results]:
                if time.monotonic() > deadline:
                    results[name] = _row(name, "timed out", f"the checks ran past "
                                         f"{options.limits.grade_s:g} s")
                    continue
                check = check_in_child if module(name).EXERCISE.runs_here else check_answer
                extra = {"timeout_s": max(1.0, deadline - time.monotonic())} \
                    if check is check_in_child else {}
                results[name] = check(name, port, cases[name], options.case_limit_s, notes,
                                      **extra)
                if port.closed:
                    break  # the answers' process hung or died: start it again for the rest
    reason = failed or "the notebook could not be run to its end"
    graded.results = [results.get(n) or _row(n, "error", reason) for n in names]
    return graded


def _mtime(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(Path(path).stat().st_mtime, timezone.utc)
    except OSError:
        return None


# ---------------------------------------------------------------- the batch


def _identities(submissions: list[Path], roster: Roster | None) -> dict[Path, Identity]:
    """Who and what each submission is (ValueError naming the file, or two files that are
    the same student's same assignment)."""
    out: dict[Path, Identity] = {}
    seen: dict[Identity, Path] = {}
    for path in submissions:
        identity = identify(path, roster)
        if identity in seen:
            raise ValueError(f"{seen[identity].name} and {path.name} are both "
                             f"{identity.student}'s {identity.assignment}")
        seen[identity] = path
        out[path] = identity
    return out


def _open_to_nobody(folder: Path) -> None:
    """Let every user read `folder`'s tree (the student build, read by the sandbox's nobody)."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def grade(submissions: list[Path], cases_path: Path, out_csv: Path,
          feedback_dir: Path | None = None, *, limits: Limits = Limits(),
          isolation: str = "auto", roster: Roster | None = None, course: Course | None = None,
          case_limit_s: float = CASE_TIME_LIMIT_S,
          progress: Callable[[Graded], None] | None = None,
          warn: Callable[[str], None] | None = None) -> dict:
    """Grade every submission into the gradebook at `out_csv` (and its feedback pages).

    `warn` hears, before the first submission runs, what the isolation chosen does not
    guarantee. Returns the gradebook's record, with the isolation and the warnings."""
    cases_path, out_csv = Path(cases_path).resolve(), Path(out_csv).resolve()
    data = read_cases(cases_path)
    cases = data["exercises"]
    if not cases:
        raise ValueError(f"cases file {cases_path} has no exercises")
    submissions = [Path(s).resolve() for s in submissions]
    identities = _identities(submissions, roster)
    mode = detect(isolation)
    warnings = _warnings(mode, [cases_path, *submissions])
    for w in warnings:
        if warn:
            warn(w)
    feedback_dir = Path(feedback_dir or out_csv.with_name(out_csv.stem + "-feedback")).resolve()
    info = RunInfo(ratelab_version=ratelab.__version__, cases_sha256=data["sha256"],
                   cases_seed=data.get("seed"), isolation=mode,
                   graded_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    options = Options(mode, limits, case_limit_s)
    done: list[Graded] = []
    record: dict = {}
    with tempfile.TemporaryDirectory(prefix="ratelab-student-build-") as build:
        package = student_package(Path(build))
        _open_to_nobody(Path(build))
        for path in submissions:
            try:
                graded = grade_one(path, identities[path], cases, options, package)
            except (OSError, subprocess.SubprocessError) as e:  # this submission only
                graded = Graded(identities[path], path,
                                [_row(n, "error", f"the grader could not run it: {e}")
                                 for n in cases])
            record = write_gradebook([graded], out_csv, feedback_dir, info, course)
            done.append(graded)
            if progress:
                progress(graded)
    scores = [clamp_score(r.score) for g in done for r in g.results]
    return {"isolation": mode, "students": len({g.identity.student for g in done}),
            "notebooks": len(done), "rows": len(scores),
            "mean_score": round(sum(scores) / len(scores), 4) if scores else 0.0,
            "gradebook": record.get("gradebook", str(out_csv)), "wide": record.get("wide", ""),
            "feedback_dir": str(feedback_dir), "warnings": warnings}


def _warnings(mode: str, private: list[Path]) -> list[str]:
    """What the isolation `mode` does not guarantee, in lines for the instructor."""
    if mode == "plain":
        return ["isolation 'plain': submissions run unconfined, as you — they can read and "
                "change your files, other submissions and the network"]
    if mode == "user":
        exposed = [p for p in private if p.exists() and p.stat().st_mode & 0o004]
        if exposed:
            return ["isolation 'user' (no bubblewrap): files readable by others can be read "
                    f"by a submission: {', '.join(p.name for p in exposed[:5])}"]
    return []
