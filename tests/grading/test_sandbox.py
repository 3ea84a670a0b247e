"""The grader's sandbox: what a submission sees, the limits of the whole submission, the kill.

Each run starts a small Python program (or a shell script) in a Sandbox and measures from
outside what it could do; the programs print a JSON report on stderr or leave files in their
scratch folder. Limits are small so that every run takes a second or two.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from ratelab.exercises import NAMES, module
from ratelab.grading import accounting as acct
from ratelab.grading import sandbox as sb
from ratelab.grading.student_build import SANDBOX_MODULES, student_package
from services import need, required

# Submissions run as nobody, whose processes and threads share one RLIMIT_NPROC: keep these
# tests on the same xdist worker as the grader's, one after another.
pytestmark = pytest.mark.xdist_group("grading-as-nobody")

CHECKOUT = sb.installed_package().parent
SMALL = sb.Limits(time_s=30, grade_s=30, memory_mb=1024, processes=30, file_mb=16)
ACCOUNTING = ["cgroup", "watchdog"]

PRELUDE = r'''
import json, os, pwd, sys, time
MARK = sys.argv[1]
if sys.argv[-2:] == ["--drop-to", "nobody"]:  # what the worker does with Sandbox.extra_argv()
    _e = pwd.getpwnam("nobody"); os.setgroups([]); os.setgid(_e.pw_gid); os.setuid(_e.pw_uid)
def report(**values):
    print(json.dumps(values), file=sys.stderr, flush=True)
'''


# ---------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def build():
    """A student build in a folder others can read (the submission may run as nobody)."""
    base = Path(tempfile.mkdtemp(prefix="ratelab-sandbox-test-build-"))
    yield student_package(base)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def scratch():
    folder = Path(tempfile.mkdtemp(prefix="ratelab-sandbox-test-scratch-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def sandbox(build, scratch):
    """Make Sandboxes for `scratch` and the build; every one is killed when the test ends."""
    made = []

    def make(mode: str, accounting: str) -> sb.Sandbox:
        if mode == "bwrap":
            bwrap_usable()
        made.append(sb.Sandbox(mode, scratch, SMALL, build, cgroups=cgroups_flag(accounting)))
        return made[-1]

    yield make
    for box in made:
        box.kill()


def bwrap_usable() -> None:
    """Skip (fail under RATELAB_REQUIRE_SERVICES=1) unless bubblewrap works here."""
    need("bwrap", "the grader's sandbox")
    try:
        sb.detect("bwrap")
    except sb.IsolationUnavailable as e:
        if required():
            pytest.fail(str(e))
        pytest.skip(str(e))


def cgroups_flag(accounting: str) -> bool:
    """Sandbox(cgroups=...) for `accounting`; skip the cgroup runs where there is none."""
    if accounting == "cgroup" and acct.cgroup_kind() is None:
        pytest.skip("no writable cgroup with the memory and pids controllers here")
    return accounting == "cgroup"


def python(box: sb.Sandbox, code: str, mark: str, *args: str) -> subprocess.Popen:
    """Start `code` (after PRELUDE) in `box` with the marker `mark` in its command line."""
    return box.start([sys.executable, "-c", PRELUDE + code, mark, *args, *box.extra_argv()])


def finish(box: sb.Sandbox, proc: subprocess.Popen, timeout_s: float = 30) -> str:
    """Its stderr once every holder of the pipe is gone; the box is killed after."""
    try:
        _, err = proc.communicate(timeout=timeout_s)
    finally:
        box.kill()
    return err.decode(errors="replace")


def last_report(err: str) -> dict:
    lines = [line for line in err.splitlines() if line.startswith("{")]
    assert lines, f"the program printed no report:\n{err[-2000:]}"
    return json.loads(lines[-1])


def marked(mark: str) -> list[int]:
    """Live processes on this machine whose command line holds `mark`."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if mark.encode() in f.read():
                    out.append(int(pid))
        except OSError:
            pass
    return out


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def leaked_zombies(since_ticks: int) -> list[int]:
    """Zombies left to pid 1 (which may never reap them) that started after `since_ticks`."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat(int(pid))
        if fields and fields[0] == "Z" and fields[1] == "1" and int(fields[19]) >= since_ticks:
            out.append(int(pid))
    return out


def now_ticks() -> int:
    """Now, in the clock ticks since boot that /proc/PID/stat gives start times in."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK"))


def wait_for(path: Path, proc: subprocess.Popen, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, f"ended early: {proc.stderr.read().decode()[-2000:]}"
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


# ---------------------------------------------------------------- the student build


BUILD_PROBE = r'''
import contextlib, io, json, sys
import ratelab, ratelab.limiters
out = {"file": ratelab.__file__, "gcra": repr(ratelab.limiters.make("gcra", rate=1, burst=1))}
try:
    from ratelab.exercises.sliding_log import SlidingLog
    out["reference"] = "imported"
except ImportError as e:
    out["reference"] = type(e).__name__
import ratelab.exercises as ex
from ratelab.exercises import sliding_log, reveal
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    out["check_returned"] = repr(sliding_log.check(lambda: 0))
    sliding_log.hint(); sliding_log.solution()
out["printed"] = printed.getvalue().splitlines()
out["names"] = list(ex.NAMES)
out["module"] = ex.module("gcra_tat").__name__
out["reveal"] = reveal.__module__
print(json.dumps(out))
'''


def test_student_build_imports_the_library_but_not_the_answers(build, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(build), "HOME": str(tmp_path),
           "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", BUILD_PROBE], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert Path(out["file"]) == build / "ratelab" / "__init__.py"
    assert out["gcra"].startswith("GCRA(")
    assert out["reference"] == "ImportError"
    assert out["check_returned"] == "None"
    assert out["printed"] == [
        "sliding_log: your answer is checked by the grader, not in this notebook",
        "sliding_log: hints are not available while grading",
        "sliding_log: the solution is not available while grading"]
    assert out["names"] == list(NAMES)
    assert out["module"] == "ratelab.exercises.gcra_tat"
    assert out["reveal"] == "ratelab.exercises.predict"


def _answer_texts(name: str) -> list[str]:
    """The reference answer's source and the text solution() gives, for exercise `name`."""
    ex = module(name)
    texts = [inspect.getsource(getattr(ex, ex.EXERCISE.answer))]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        given = ex.solution()
    return texts + [t for t in (printed.getvalue().strip(), given) if isinstance(t, str) and t]


def test_student_build_holds_no_reference_answers_and_no_grader(build):
    files = {p: p.read_text(errors="replace") for p in build.rglob("*") if p.is_file()}
    assert len(files) > 50  # the library is there
    for name in NAMES:
        for text in _answer_texts(name):
            holders = [str(p) for p, content in files.items() if text in content]
            assert not holders, f"{name}: the reference answer is in {holders}"
    grading = sorted(p.name for p in (build / "ratelab" / "grading").iterdir())
    assert set(grading) <= set(SANDBOX_MODULES) and "__init__.py" in grading
    assert not [p for p in build.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]
    real = sb.installed_package() / "exercises" / "predict.py"
    assert (build / "ratelab" / "exercises" / "predict.py").read_text() == real.read_text()
    closed = [p for p in build.rglob("*") if not p.stat().st_mode & 0o004]
    assert not closed, f"not readable by others: {closed[:3]}"


def test_environment_is_the_scrubbed_list_with_the_build_on_the_path(tmp_path):
    env = sb.environment(tmp_path, tmp_path / "build")
    assert env["PYTHONPATH"] == str(tmp_path / "build")
    assert env["HOME"] == str(tmp_path) and env["TMPDIR"] == str(tmp_path / "tmp")
    assert not set(env) & {"USER", "LOGNAME", "SSH_AUTH_SOCK", "VIRTUAL_ENV", "PWD"}


# ---------------------------------------------------------------- which mode


def test_auto_refuses_to_run_unconfined_when_nothing_isolates(monkeypatch):
    monkeypatch.setattr(sb.shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(sb, "_user_works", lambda: False)
    with pytest.raises(sb.IsolationUnavailable) as raised:
        sb.detect("auto")
    message = str(raised.value)
    assert "\n" not in message and "apt-get install bubblewrap" in message
    assert "--isolation plain" in message
    for named in ("bwrap", "user"):
        with pytest.raises(sb.IsolationUnavailable):
            sb.detect(named)
    assert sb.detect("plain") == "plain"
    with pytest.raises(ValueError):
        sb.detect("docker")


def test_auto_takes_bwrap_first_then_user(monkeypatch):
    monkeypatch.setattr(sb, "_bwrap_works", lambda: True)
    monkeypatch.setattr(sb, "_user_works", lambda: True)
    assert sb.detect("auto") == "bwrap"
    assert sb.detect("user") == "user"
    monkeypatch.setattr(sb, "_bwrap_works", lambda: False)
    assert sb.detect("auto") == "user"


def test_user_mode_needs_root_and_a_python_others_can_reach(monkeypatch, scratch):
    scratch.chmod(0o755)  # under /tmp, which others can reach
    inner = scratch / "closed" / "python"
    inner.mkdir(parents=True)
    (scratch / "closed").chmod(0o700)
    assert not sb._open_to_others(inner)
    (scratch / "closed").chmod(0o711)
    assert sb._open_to_others(inner)
    monkeypatch.setattr(sb, "_python_paths", lambda: [inner])
    monkeypatch.setattr(sb.os, "geteuid", lambda: 1000)
    assert not sb._user_works()


# ---------------------------------------------------------------- inside bubblewrap


FS_PROBE = r'''
checks = json.loads(sys.argv[2])
def can_read(path):
    try:
        if os.path.isdir(path):
            return sorted(os.listdir(path))
        with open(path, "rb") as f:
            return f.read(200).decode(errors="replace")
    except OSError as e:
        return None
def can_write(folder):
    try:
        with open(os.path.join(folder, "written-" + MARK), "w") as f:
            f.write("x")
        return True
    except OSError:
        return False
procs = [p for p in os.listdir("/proc") if p.isdigit()]
cmdlines = [open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace") for p in procs]
report(uid=os.getuid(), read={p: can_read(p) for p in checks["read"]},
       write={p: can_write(p) for p in checks["write"]}, procs=procs, cmdlines=cmdlines,
       host_pid_seen=os.path.exists(f"/proc/{checks['host_pid']}/status"))
'''


@pytest.fixture(scope="module")
def inside(build):
    """What a program in the bwrap sandbox could read, write and see; the paths it was given."""
    bwrap_usable()
    other = Path(tempfile.mkdtemp(prefix="ratelab-other-submission-"))
    other.chmod(0o755)
    (other / "notebook.ipynb").write_text("another student's work")
    (other / "notebook.ipynb").chmod(0o644)
    scratch = Path(tempfile.mkdtemp(prefix="ratelab-sandbox-test-scratch-"))
    real = sb.installed_package()
    paths = {
        "work": "/work", "root": "/root", "home": "/home", "checkout": str(CHECKOUT),
        "git": str(CHECKOUT / ".git"), "pyproject": str(CHECKOUT / "pyproject.toml"),
        "shared": str(CHECKOUT.parent / "shared"), "bashrc": "/root/.bashrc",
        "shadow": "/etc/shadow", "other": str(other), "other_file": str(other / "notebook.ipynb"),
        "sys": "/sys", "tmp": "/tmp", "passwd": "/etc/passwd", "etc": "/etc",
        "reference": str(real / "exercises" / "sliding_log.py"),
        "python_lib": str(Path(sys.base_prefix) / "lib"),
    }
    writes = ["/", "/etc", "/usr", "/dev/shm", sys.prefix, str(build), str(real), "/tmp",
              str(scratch)]
    checks = {"read": list(paths.values()), "write": writes, "host_pid": os.getpid()}
    mark = uuid.uuid4().hex
    try:
        with sb.Sandbox("bwrap", scratch, SMALL, build) as box:
            err = finish(box, python(box, FS_PROBE, mark, json.dumps(checks)))
        yield {"report": last_report(err), "paths": paths, "scratch": scratch, "mark": mark,
               "build": build}
    finally:
        shutil.rmtree(other, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _read(inside, name):
    return inside["report"]["read"][inside["paths"][name]]


@pytest.mark.service
def test_bwrap_hides_the_host_file_system(inside):
    for name in ("shadow", "git", "pyproject", "other", "other_file", "sys", "home", "shared",
                 "bashrc"):
        assert _read(inside, name) is None, f"{inside['paths'][name]} is visible inside"
    # the folders above the venv and the Python installation can be passed, not listed
    for name in ("work", "checkout", "root"):
        assert _read(inside, name) is None, f"{inside['paths'][name]} can be listed inside"
    assert _read(inside, "python_lib")  # the interpreter's own library is there
    assert "class SlidingLog" not in _read(inside, "reference")
    assert "the grader checks the answer" in _read(inside, "reference")  # the stub
    assert set(_read(inside, "etc")) <= {"passwd", "group", "hosts", *sb.ETC_FROM_HOST}
    users = {line.split(":")[0] for line in _read(inside, "passwd").splitlines()}
    assert users == {"root", "nobody"} or os.geteuid() != 0  # the generated passwd
    # a private /tmp: nothing of the host's but what is bound there (scratch, the build)
    bound = [inside["scratch"], inside["build"], Path(sys.prefix), Path(sys.base_prefix),
             sb.installed_package()]  # a checkout (and its venv) may itself lie under /tmp
    tops = {p.resolve().relative_to("/tmp").parts[0] for p in bound
            if p.resolve().is_relative_to("/tmp")}
    assert set(_read(inside, "tmp")) <= tops


@pytest.mark.service
def test_bwrap_writes_only_to_scratch_and_its_own_tmp(inside):
    written = {p for p, ok in inside["report"]["write"].items() if ok}
    assert written == {"/tmp", str(inside["scratch"])}
    assert (inside["scratch"] / f"written-{inside['mark']}").exists()
    assert not Path(f"/tmp/written-{inside['mark']}").exists()  # its /tmp was its own


@pytest.mark.service
def test_bwrap_sees_only_its_own_processes(inside):
    report = inside["report"]
    assert not report["host_pid_seen"]
    assert len(report["procs"]) <= 3, report["cmdlines"]  # bwrap's init, the program
    assert not [c for c in report["cmdlines"] if "pytest" in c]
    if os.geteuid() == 0:
        assert report["uid"] == 65534


NET_PROBE = r'''
import socket
port = int(sys.argv[2])
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    host = "connected"
except OSError as e:
    host = type(e).__name__
own = socket.socket(); own.bind(("127.0.0.1", 0)); own.listen()
socket.create_connection(own.getsockname(), timeout=2).close()
report(host=host, own_loopback="works")
'''


@pytest.mark.service
def test_bwrap_cannot_reach_the_hosts_loopback(build, scratch):
    bwrap_usable()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    try:
        # the control: the same connection from here succeeds
        socket.create_connection(server.getsockname(), timeout=2).close()
        time.sleep(0.1)
        assert len(accepted) == 1
        threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
        with sb.Sandbox("bwrap", scratch, SMALL, build) as box:
            port = str(server.getsockname()[1])
            out = last_report(finish(box, python(box, NET_PROBE, uuid.uuid4().hex, port)))
    finally:
        server.close()
    assert out["host"] != "connected" and len(accepted) == 1
    assert out["own_loopback"] == "works"


KERNEL_PROBE = r'''
import nbformat
from nbclient import NotebookClient
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    "import os, ratelab\n"
    "from ratelab.exercises import sliding_log as ex\n"
    "ex.check(None)\n"
    "print(ratelab.limiters.make('gcra', rate=1, burst=1), os.getuid())")]
NotebookClient(nb, timeout=60, kernel_name="python3").execute()
report(outputs=[o.get("text", "") for o in nb.cells[0].outputs])
'''


@pytest.mark.service
def test_a_jupyter_kernel_runs_in_the_bwrap_root(build, scratch):
    bwrap_usable()
    with sb.Sandbox("bwrap", scratch, sb.Limits(memory_mb=2048, processes=64), build) as box:
        out = last_report(finish(box, python(box, KERNEL_PROBE, uuid.uuid4().hex), 90))
    uid = 65534 if os.geteuid() == 0 else os.geteuid()
    # the text printed, in however many stream messages the kernel sent it (a pause between
    # the prints, such as importing the limiters on first use, splits it in two)
    assert "".join(out["outputs"]) == (
        f"sliding_log: your answer is checked by the grader, not in this notebook\n"
        f"GCRA(rate=1.0, burst=1) {uid}\n")


# ---------------------------------------------------------------- limits of the whole submission


MEMORY = r'''
mib, wait = int(sys.argv[2]), float(sys.argv[3])
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = b"\1" * (mib * 2**20)  # every page touched
        time.sleep(wait)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
report(finished=True)
'''


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
@pytest.mark.parametrize("mode", ["bwrap", "plain"])
def test_memory_is_limited_for_all_processes_together(sandbox, mode, accounting):
    box = sandbox(mode, accounting)
    started = time.monotonic()
    proc = python(box, MEMORY, mark := uuid.uuid4().hex, "512", "30")  # 3 x 512 MiB > 1 GiB
    err = finish(box, proc)
    assert box.accounting.startswith(accounting)
    assert proc.returncode == -9 and '"finished"' not in err
    assert time.monotonic() - started < 20
    reason = box.exceeded()
    assert reason and "of memory in all (limit 1024 MiB)" in reason
    assert not marked(mark)


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
def test_memory_within_the_limit_runs_to_the_end(sandbox, accounting):
    box = sandbox("bwrap", accounting)
    proc = python(box, MEMORY, uuid.uuid4().hex, "128", "0.5")  # 3 x 128 MiB < 1 GiB
    assert last_report(finish(box, proc)) == {"finished": True}
    assert proc.returncode == 0 and box.exceeded() is None


BIG = r'''
try:
    block = bytearray(2 * 1024 * 2**20)
    report(got="the block")
except MemoryError:
    report(got="MemoryError")
'''


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
def test_one_allocation_past_the_limit_is_a_memory_error_not_a_kill(sandbox, accounting):
    box = sandbox("bwrap", accounting)
    proc = python(box, BIG, uuid.uuid4().hex)
    assert last_report(finish(box, proc)) == {"got": "MemoryError"}
    assert proc.returncode == 0 and box.exceeded() is None


FORKS = r'''
n, forked = int(sys.argv[2]), 0
for _ in range(n):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        forked += 1
    except OSError:
        time.sleep(30)  # refused: wait to be stopped
if n < 20:
    for _ in range(forked):
        os.wait()
    report(forked=forked)
else:
    time.sleep(30)
'''


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
@pytest.mark.parametrize("mode", ["bwrap", "plain"])
def test_a_fork_bomb_is_stopped_at_the_process_limit(sandbox, mode, accounting):
    since = now_ticks()
    box = sandbox(mode, accounting)
    proc = python(box, FORKS, mark := uuid.uuid4().hex, "400")
    finish(box, proc, timeout_s=20)
    reason = box.exceeded()
    assert reason and "processes and threads (limit 30)" in reason
    assert proc.returncode == -9
    assert not marked(mark), "a process of the fork bomb survived kill()"
    assert not leaked_zombies(since), "killed processes were left unreaped to pid 1"


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
def test_a_few_processes_within_the_limit_run_to_the_end(sandbox, accounting):
    box = sandbox("bwrap", accounting)
    code = FORKS.replace("time.sleep(30)\n            os._exit",
                         "time.sleep(0.3)\n            os._exit")
    proc = python(box, code, uuid.uuid4().hex, "10")
    assert last_report(finish(box, proc)) == {"forked": 10}
    assert box.exceeded() is None


DAEMON = r'''
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # the daemon: its parent exits, it is nobody's child any more
        time.sleep(60)
        os._exit(0)
    os._exit(0)
os.wait()
open("daemon-started", "w").close()
time.sleep(float(sys.argv[2]))
'''


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
@pytest.mark.parametrize("mode", ["bwrap", "plain"])
def test_kill_kills_a_double_forked_daemon(sandbox, scratch, mode, accounting):
    since = now_ticks()
    box = sandbox(mode, accounting)
    proc = python(box, DAEMON, mark := uuid.uuid4().hex, "60")
    wait_for(scratch / "daemon-started", proc)
    time.sleep(0.2)
    alive = marked(mark)
    assert len(alive) >= 2  # the program and its daemon (and bwrap's two)
    box.kill()
    box.kill()  # idempotent
    assert proc.returncode is not None
    assert not marked(mark), "the daemon survived kill()"
    assert not leaked_zombies(since)
    assert box.exceeded() is None


@pytest.mark.service
def test_a_daemon_dies_when_the_command_ends(sandbox):
    box = sandbox("plain", "watchdog")
    proc = python(box, DAEMON, mark := uuid.uuid4().hex, "0")
    proc.wait(timeout=20)  # before any kill(): the supervisor ends what its command left
    assert proc.returncode == 0
    assert not marked(mark)


def test_the_cgroups_are_removed_and_the_context_manager_kills(build, scratch):
    if acct.cgroup_kind() is None:
        pytest.skip("no writable cgroup with the memory and pids controllers here")
    with sb.Sandbox("plain", scratch, SMALL, build, cgroups=True) as box:
        started = "open('started', 'w').close(); time.sleep(60)"
        proc = python(box, started, mark := uuid.uuid4().hex)
        wait_for(scratch / "started", proc)
        groups = [p for folder in acct._own_cgroups().values() if folder.is_dir()
                  for p in folder.glob(f"ratelab-sandbox-{os.getpid()}-*")]
        assert groups and box.accounting == acct.cgroup_kind()
        assert proc.pid not in acct._pids_in(groups[0])  # the supervisor stays outside
        inside = set(marked(mark)) - {proc.pid}  # the supervisor's command line holds it too
        assert inside and inside <= {p for g in groups for p in acct._pids_in(g)}
    assert proc.returncode == -9 and not marked(mark)
    assert not [g for g in groups if g.exists()]


def test_the_environment_variable_forces_the_watchdog(build, scratch, monkeypatch):
    monkeypatch.setenv(acct.NO_CGROUP_ENV, "1")
    with sb.Sandbox("plain", scratch, SMALL, build) as box:
        box.start([sys.executable, "-c", "pass"]).wait(timeout=20)
    assert box.accounting == "watchdog"
    monkeypatch.delenv(acct.NO_CGROUP_ENV)
    with sb.Sandbox("plain", scratch, SMALL, build) as box:
        box.start([sys.executable, "-c", "pass"]).wait(timeout=20)
    assert box.accounting == (acct.cgroup_kind() or "watchdog")


# ---------------------------------------------------------------- user mode (root, no bwrap)


# paced (dash gives up at the first refused fork): the watchdog's 0.1 s looks see it grow
SHELL_BOMB = ("id -u > uid; "
              "for i in $(seq 400); do (while :; do sleep 5; done) & sleep 0.02; done; wait")


@pytest.mark.service
@pytest.mark.parametrize("accounting", ACCOUNTING)
def test_user_mode_runs_as_nobody_under_the_whole_submission_limits(sandbox, scratch,
                                                                    accounting):
    if os.geteuid() != 0:
        pytest.skip("user mode needs the grader to run as root")
    # /bin/sh, not Python: it works even where the Python installation is closed to nobody
    box = sandbox("user", accounting)
    assert box.extra_argv() == []  # dropped before exec, not by the worker
    mark = uuid.uuid4().hex
    proc = box.start(["/bin/sh", "-c", SHELL_BOMB, mark])
    finish(box, proc, timeout_s=20)
    assert (scratch / "uid").read_text().strip() == "65534"
    assert "processes and threads (limit 30)" in (box.exceeded() or "")
    assert not marked(mark)


def test_user_mode_refuses_a_build_nobody_can_read(scratch, tmp_path):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(sb.IsolationUnavailable):
        sb.Sandbox("user", scratch, SMALL, closed).start(["/bin/true"])
