"""ratelab grade on a hostile batch, under bubblewrap: every submission gets its true row.

The batch holds right, wrong and raising answers, a hang that ignores SIGINT, a file that is
not a notebook, and submissions that read the cases file, scan their own process for the
instructor's cases, tamper with classmates' files and leave a daemon, probe the network, home
and the checkout, forge their verdict, fork-bomb, eat memory in three children, and import the
reference. The honest ones must be unharmed and nothing may leave [0, 1].
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import pwd
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from ratelab.cli import main
from ratelab.exercises import module
from ratelab.grading.cases import make_cases, write_cases
from services import need

# Submissions run as nobody: the fork bomb of one test would starve a kernel another test
# starts beside it. make check runs tests on every core (--dist loadgroup): this group keeps
# the grading tests on one worker, in turn.
pytestmark = pytest.mark.xdist_group("grading-as-nobody")

ROOT = Path(__file__).resolve().parents[2]
CANARY = "canary-5f1c0e93"
"""A case name that only the cases file and the grader hold: found anywhere in a sandbox, it
would mean the instructor's cases reached the student's process."""

TAKE = str(module("token_bucket_take").solution())
WRONG_TAKE = TAKE.replace("tokens = min(capacity, tokens + (now - last) * rate)",
                          "tokens = tokens + (now - last) * rate")
LOG = str(module("sliding_log").solution())


def notebook(*cells: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# My answers")]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def public_calls() -> int:
    """How many times the public cases call take (the instructor's cases come after)."""
    n = 0
    ref = module("token_bucket_take").take

    def counting(*args):
        nonlocal n
        n += 1
        return ref(*args)

    module("token_bucket_take").EXERCISE.check(counting)
    return n


SCAN = '''
import gc, hashlib, os, re, sys
# the canary itself is not written here (this cell's source is in the kernel's memory): only
# its hash, and a pattern its text matches
CANARY_SHA = {canary_sha!r}
PATTERN = re.compile(rb"canary-[0-9a-f]{{8}}")
_calls = 0

def _has(data):
    return any(hashlib.sha256(m.group()).hexdigest() == CANARY_SHA for m in PATTERN.finditer(data))

def _scan():
    """Where the canary is, in this process and what it can read; and how much was searched."""
    found, searched = [], 0
    for obj in gc.get_objects():
        searched += 1
        try:
            if _has(repr(obj).encode(errors="replace")):
                found.append("object " + type(obj).__name__)
        except Exception:
            pass
    for frame in sys._current_frames().values():
        while frame is not None:
            if _has(repr(frame.f_locals).encode(errors="replace")):
                found.append("frame " + frame.f_code.co_name)
            frame = frame.f_back
    if any(_has((k + v).encode()) for k, v in os.environ.items()):
        found.append("environment")
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms or "[v" in line:
                continue
            lo, hi = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(lo)
                if _has(mem.read(hi - lo)):
                    found.append("memory " + line.strip()[:60])
                searched += hi - lo
            except (OSError, OverflowError, ValueError):
                pass
    for top in ("/tmp", os.getcwd(), "/etc", os.path.expanduser("~")):
        for folder, _, files in os.walk(top):
            for name in files:
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        if _has(f.read(1 << 20)):
                            found.append("file " + os.path.join(folder, name))
                except OSError:
                    pass
    return found, searched
'''

SCANNING_TAKE = TAKE.replace('    """', '''    global _calls
    _calls += 1
    if _calls == {first_instructor_call}:  # the instructor's cases are being asked now
        found, searched = _scan()
        raise RuntimeError(("FOUND " + ", ".join(found)) if found else
                           f"SCANNED {{searched}} objects and bytes, clean")
    """''', 1)

PROBE = '''
import os, socket
reached = []
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    reached.append("the host's 127.0.0.1:{port}")
except OSError:
    pass
for path in ({readme!r}, {tests!r}, {git!r}, "/etc/shadow", {home_file!r}):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(1)
        reached.append(path)
    except OSError:
        pass
'''

PROBING_TAKE = TAKE.replace('    """', '''    if reached:
        raise RuntimeError("REACHED " + ", ".join(reached))
    """''', 1)

TAMPER = '''
import os
for path in {victims!r}:
    try:
        with open(path, "w") as f:
            f.write("pwned")
    except OSError as e:
        print("refused:", e)
if os.fork() == 0:           # a daemon, detached twice, that would plant a file later
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(6)
        open({planted!r}, "w").write("a daemon outlived the sandbox")
    os._exit(0)
'''

FORGE = '''
import ratelab.exercises.token_bucket_take as ex
import ratelab.exercises.answers as answers
ex.check = lambda *a, **k: print("token_bucket_take: the public checks passed")
_handle = answers.AnswerServer.handle
def handle(self, request):
    reply = _handle(self, request)
    reply.update(verdict="passed", score=99.0, cases_passed=101)
    return reply
answers.AnswerServer.handle = handle
print('{"token_bucket_take": {"verdict": "passed", "score": 99.0}}')
'''

FORK_BOMB = '''
import os, time
for _ in range(400):
    if os.fork() == 0:
        time.sleep(3)
        os._exit(0)
'''

EAT = '''
import os
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = bytearray(1200 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        import time
        time.sleep(5)
        os._exit(0)
    children.append(pid)
codes = [os.waitpid(pid, 0)[1] for pid in children]
assert all(c == 0 for c in codes), f"children ended with {codes}"
'''

HANG = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"

WRAPPED_LOG = '''
from ratelab.limiters import make

class SlidingLog:
    def __init__(self, limit, window):
        self.limiter = make("sliding-window-log", limit=limit, window=window)

    def allow(self, now, cost=1):
        d = self.limiter.allow("k", now, cost)
        return d.allowed, d.remaining, d.retry_after
'''


def nobody_processes() -> list[int]:
    uid = pwd.getpwnam("nobody").pw_uid
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                out.append(int(pid))
        except OSError:
            pass
    return out


@pytest.fixture(scope="module")
def battery():
    """Grade the hostile batch once; its rows by (student, assignment, exercise)."""
    need("bwrap", "the grader's sandbox")
    base = Path(tempfile.mkdtemp(prefix="ratelab-grading-test-"))
    base.chmod(0o755)  # world-readable folders: only the sandbox may stand in the way
    subs, private, planted_dir = base / "submissions", base / "instructor", base / "open"
    for folder in (subs, private):
        folder.mkdir(mode=0o755)
    planted_dir.mkdir()
    planted_dir.chmod(0o777)
    cases_path, grades = private / "cases.json", private / "grades.csv"
    cases = make_cases(11, ["token_bucket_take", "sliding_log"])
    canary = dict(cases["exercises"]["token_bucket_take"][0], name=f"instructor {CANARY}")
    cases["exercises"]["token_bucket_take"].insert(0, canary)
    write_cases(cases, cases_path)
    cases_path.chmod(0o644)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    connections = []
    threading.Thread(target=lambda: connections.append(listener.accept()), daemon=True).start()

    buckets, windows = "01-buckets", "02-windows"
    alice_log = subs / f"alice.{windows}.ipynb"
    home_file = next((str(p) for p in Path.home().glob(".*") if p.is_file()), "/root/.profile")
    samples = {
        ("alice", buckets): notebook(TAKE),
        ("alice", windows): notebook(LOG),
        ("bob", buckets): notebook(WRONG_TAKE),
        ("carol", buckets): notebook("raise ValueError('before the answer')", TAKE.replace(
            '    """', '    raise RuntimeError("my bug")\n    """', 1)),
        ("dave", buckets): notebook(TAKE, HANG),
        ("frank", buckets): notebook("x = 1"),
        ("mallory-reads", buckets): notebook(
            f"stolen = open({str(cases_path)!r}).read()", TAKE),
        ("mallory-scans", buckets): notebook(SCAN.format(canary_sha=hashlib.sha256(CANARY.encode()).hexdigest()), SCANNING_TAKE.format(
            first_instructor_call=public_calls() + 1)),
        ("mallory-tampers", buckets): notebook(TAKE, TAMPER.format(
            victims=[str(alice_log), str(grades), str(subs / f"bob.{buckets}.ipynb")],
            planted=str(planted_dir / "planted"))),
        ("mallory-probes", buckets): notebook(PROBE.format(
            port=port, readme=str(ROOT / "README.md"), tests=str(ROOT / "tests"),
            git=str(ROOT / ".git" / "HEAD"),
            home_file=home_file), PROBING_TAKE),
        ("mallory-forges", buckets): notebook(FORGE, WRONG_TAKE),
        ("mallory-forks", buckets): notebook(TAKE, FORK_BOMB),
        ("mallory-eats", buckets): notebook(TAKE, EAT),
        ("mallory-imports", windows): notebook(
            "from ratelab.exercises.sliding_log import SlidingLog"),
        ("mallory-wraps", windows): notebook(WRAPPED_LOG),
    }
    for (student, assignment), nb in samples.items():
        nbformat.write(nb, subs / f"{student}.{assignment}.ipynb")
    (subs / f"erin.{buckets}.ipynb").write_text("this is not a notebook")
    before = {p.name: p.read_bytes() for p in subs.iterdir()}
    others = set(nobody_processes())  # whatever else runs as nobody on this machine
    started = time.monotonic()
    code = main(["grade", *map(str, sorted(subs.iterdir())), "--cases", str(cases_path),
                 "--out", str(grades), "--timeout", "20", "--grade-timeout", "120",
                 "--processes", "64", "--memory-mb", "3072", "--isolation", "auto", "--json"])
    wall_s = time.monotonic() - started
    with open(grades, newline="") as f:
        rows = {(r["student"], r["assignment"], r["exercise"]): r for r in csv.DictReader(f)}
    time.sleep(7)  # past the daemon's sleep: had it survived, its file would be there now
    yield {"code": code, "rows": rows, "grades": grades, "subs": subs, "before": before,
           "planted": planted_dir / "planted", "others": others, "connections": connections, "wall_s": wall_s,
           "feedback": grades.with_name("grades-feedback")}
    listener.close()
    shutil.rmtree(base, ignore_errors=True)


def row(battery, student, exercise="token_bucket_take"):
    assignment = "02-windows" if exercise == "sliding_log" else "01-buckets"
    return battery["rows"][(student, assignment, exercise)]


def notes(battery, student, assignment="01-buckets") -> str:
    return (battery["feedback"] / student / f"{assignment}.md").read_text()


@pytest.mark.service
def test_every_submission_gets_its_rows_and_no_score_leaves_0_1(battery):
    assert battery["code"] == 0
    students = {s for s, _, _ in battery["rows"]}
    assert "erin" in students and "mallory-eats" in students and len(students) == 15
    for r in battery["rows"].values():
        assert 0.0 <= float(r["score"]) <= 1.0, r
        assert r["verdict"] in ("passed", "wrong", "not attempted", "missing", "error",
                                "timed out", "flagged"), r
        assert r["ratelab_version"] and len(r["cases_sha256"]) == 64 and r["cases_seed"] == "11"


@pytest.mark.service
def test_right_wrong_and_raising_answers(battery):
    assert (row(battery, "alice")["verdict"], float(row(battery, "alice")["score"])) == \
        ("passed", 1.0)
    assert row(battery, "alice", "sliding_log")["verdict"] == "passed"
    bob = row(battery, "bob")
    assert bob["verdict"] == "wrong" and float(bob["score"]) < 1.0
    assert "tokens should be" in bob["first_failure"]
    carol = row(battery, "carol")
    assert carol["verdict"] == "wrong" and "RuntimeError: my bug" in carol["first_failure"]
    assert "line 2" in carol["first_failure"]  # the student's own line, found by what it is
    assert "cell 2 raised ValueError: before the answer" in notes(battery, "carol")


@pytest.mark.service
def test_a_hang_ignoring_sigint_costs_only_what_comes_after_it(battery):
    dave = row(battery, "dave")
    assert (dave["verdict"], float(dave["score"])) == ("passed", 1.0)
    assert "cell 3" in notes(battery, "dave")


@pytest.mark.service
def test_not_a_notebook_and_no_answer(battery):
    assert row(battery, "erin")["verdict"] == "error"
    assert row(battery, "erin")["first_failure"].startswith("not a notebook")
    assert row(battery, "frank")["verdict"] == "missing"
    assert "defines no `take`" in row(battery, "frank")["first_failure"]


@pytest.mark.service
def test_the_cases_file_cannot_be_read(battery):
    r = row(battery, "mallory-reads")
    assert (r["verdict"], float(r["score"])) == ("passed", 1.0)
    assert "cell 2 raised FileNotFoundError" in notes(battery, "mallory-reads")


@pytest.mark.service
def test_no_instructor_case_is_found_in_the_students_process(battery):
    r = row(battery, "mallory-scans")["first_failure"]
    assert "RuntimeError: FOUND" not in r and "RuntimeError: SCANNED" in r, r
    searched = int(r.split("SCANNED ")[1].split()[0])
    assert searched > 10_000_000  # the scan read the process's memory, not nothing


@pytest.mark.service
def test_tampering_and_a_daemon_harm_nobody(battery):
    assert row(battery, "mallory-tampers")["verdict"] == "passed"
    now = {p.name: p.read_bytes() for p in battery["subs"].iterdir()}
    assert now == battery["before"]
    assert "pwned" not in battery["grades"].read_text()
    assert not battery["planted"].exists()
    assert set(nobody_processes()) - battery["others"] == set()


@pytest.mark.service
def test_network_home_and_checkout_are_out_of_reach(battery):
    r = row(battery, "mallory-probes")
    assert (r["verdict"], float(r["score"])) == ("passed", 1.0), r["first_failure"]
    assert battery["connections"] == []


@pytest.mark.service
def test_a_forged_verdict_is_still_wrong(battery):
    r = row(battery, "mallory-forges")
    assert r["verdict"] == "wrong" and float(r["score"]) < 1.0
    assert "tokens should be" in r["first_failure"]


@pytest.mark.service
def test_fork_bomb_and_memory_in_three_children_are_bounded(battery):
    for student in ("mallory-forks", "mallory-eats"):
        r = row(battery, student)
        assert (r["verdict"], float(r["score"])) == ("passed", 1.0), \
            f"{student}: {r['verdict']}: {r['first_failure']!r}; notes: {notes(battery, student)!r}"
        assert "cell 3" in notes(battery, student), student


@pytest.mark.service
@pytest.mark.parametrize("accounting", ["cgroup", "watchdog"])
def test_a_cell_that_ended_at_the_process_limit_is_stopped_before_the_monitor_looks(
        accounting, tmp_path, monkeypatch):
    """The fork bomb's cell raises BlockingIOError at the limit and replies at once; were the
    grader to wait for the monitor's next look, the monitor would stop the sandbox in the middle
    of the checks, and the right answer of cell 2 would be graded wrong. The monitor here first
    looks once the checks have begun: only the grader's own look after the cell can save it."""
    need("bwrap", "the grader's sandbox")
    from ratelab.grading import grader, sandbox

    if accounting == "watchdog":
        monkeypatch.setenv("RATELAB_GRADE_NO_CGROUP", "1")
    from ratelab.grading.sandbox import Limits

    serving = threading.Event()
    serve, watch = grader.Run.serve, sandbox.Sandbox._watch

    def late_watch(self):  # from the first check on; or not at all, if the run ends before
        while not serving.wait(0.05):
            if self._done.is_set():
                return
        watch(self)

    monkeypatch.setattr(grader.Run, "serve", lambda self, t: (serving.set(), serve(self, t))[1])
    monkeypatch.setattr(sandbox.Sandbox, "_watch", late_watch)
    tmp_path.chmod(0o755)
    cases = tmp_path / "cases.json"
    write_cases(make_cases(1, ["token_bucket_take"]), cases)
    cases.chmod(0o644)
    nbformat.write(notebook(TAKE, FORK_BOMB), tmp_path / "zoe.01-buckets.ipynb")
    grader.grade([tmp_path / "zoe.01-buckets.ipynb"], cases, tmp_path / "grades.csv",
                 limits=Limits(time_s=20, grade_s=120, processes=64), isolation="auto")
    with open(tmp_path / "grades.csv", newline="") as f:
        (r,) = csv.DictReader(f)
    said = (tmp_path / "grades-feedback" / "zoe" / "01-buckets.md").read_text()
    assert (r["verdict"], float(r["score"])) == ("passed", 1.0), (r["first_failure"], said)
    assert "cell 3 was stopped (it " in said and "processes and threads (limit 64)" in said, said


@pytest.mark.service
def test_importing_the_reference_is_flagged(battery):
    for student, what in (("mallory-imports", "a solution"),
                          ("mallory-wraps", "reference limiter 'sliding-window-log'")):
        r = row(battery, student, "sliding_log")
        assert (r["verdict"], float(r["score"])) == ("flagged", 0.0), r
        assert what in r["first_failure"], r["first_failure"]


@pytest.mark.service
def test_two_notebooks_of_one_student_are_two_assignments(battery):
    pages = sorted(p.relative_to(battery["feedback"]).as_posix()
                   for p in battery["feedback"].glob("alice/*.md"))
    assert pages == ["alice/01-buckets.md", "alice/02-windows.md"]
    wide = battery["grades"].with_name("grades-wide.csv")
    with open(wide, newline="") as f:
        alice = next(r for r in csv.DictReader(f) if r["student"] == "alice")
    assert float(alice["token_bucket_take"]) == 1.0 and float(alice["sliding_log"]) == 1.0


def test_auto_refuses_when_no_isolation_works(tmp_path, monkeypatch, capsys):
    """Without bubblewrap and without a usable 'user' mode, auto grades nothing."""
    from ratelab.grading import sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    cases = tmp_path / "cases.json"
    write_cases(make_cases(1, ["token_bucket_take"]), cases)
    nbformat.write(notebook(TAKE), tmp_path / "zoe.01-buckets.ipynb")
    code = main(["grade", str(tmp_path / "zoe.01-buckets.ipynb"), "--cases", str(cases),
                 "--out", str(tmp_path / "grades.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "apt-get install bubblewrap" in err[0], err
    assert not (tmp_path / "grades.csv").exists()


def test_plain_isolation_warns_before_the_first_submission_runs(tmp_path):
    """Plain only when named, and said before anything of the student's runs."""
    from ratelab.grading.grader import grade
    from ratelab.grading.sandbox import Limits

    cases = tmp_path / "cases.json"
    write_cases(make_cases(1, ["token_bucket_take"]), cases)
    marker = tmp_path / "ran"
    nbformat.write(notebook(f"open({str(marker)!r}, 'w').write('x')", TAKE),
                   tmp_path / "zoe.01-buckets.ipynb")
    heard = []
    record = grade([tmp_path / "zoe.01-buckets.ipynb"], cases, tmp_path / "grades.csv",
                   limits=Limits(time_s=60, grade_s=120), isolation="plain",
                   warn=lambda w: heard.append((w, marker.exists())))
    assert heard and "unconfined" in heard[0][0] and heard[0][1] is False
    assert record["isolation"] == "plain" and record["mean_score"] == 1.0


def test_make_cases_is_private_seeded_and_instructor_only(tmp_path):
    import stat

    from ratelab.grading.cases import read_cases

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
