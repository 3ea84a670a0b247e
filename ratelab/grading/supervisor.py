"""The supervisor of a confined submission: run as a script, it starts the command and kills
everything the command left behind when it ends.

``python -I -S supervisor.py CONFIG`` (:meth:`ratelab.grading.sandbox.Sandbox.start` runs it,
outside bwrap, as the grader's user): it becomes a child subreaper, so that every process of
the submission, daemons included, stays below it; forks the command (which joins the cgroups,
takes the limits and becomes nobody before exec); waits for it; then kills and reaps every
process still below it; and exits as the command did. Run without ``site`` and outside the package, it imports
only the standard library; the process table here serves the accounting too.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

KILL_WAIT_S = 10.0
"""How long a kill keeps killing and waiting before it gives up on a process."""

PR_SET_CHILD_SUBREAPER = 36
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- the process table


@dataclass(frozen=True)
class Task:
    """One process as /proc/PID/stat shows it."""

    pid: int
    ppid: int
    state: str
    threads: int
    rss: int           # bytes resident


def _read_task(pid: int) -> Task | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
    return Task(pid, int(fields[1]), fields[0], int(fields[17]), int(fields[21]) * PAGE_BYTES)


def _process_table() -> dict[int, Task]:
    """Every process now, by pid."""
    tasks = (_read_task(int(p)) for p in os.listdir("/proc") if p.isdigit())
    return {t.pid: t for t in tasks if t is not None}


def descendants(root: int) -> list[Task]:
    """The live (not zombie) processes below `root`, not `root` itself."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for t in table.values():
        children.setdefault(t.ppid, []).append(t.pid)
    out, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, ())
        if table[pid].state not in "ZX":
            out.append(table[pid])
    return out


def write_value(path: Path, value: str) -> None:
    """Write `value` to the file `path` (a cgroup control file): one write, no newline."""
    with open(path, "w") as f:
        f.write(value)


def kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# ---------------------------------------------------------------- the supervisor


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _supervise(config: dict) -> int:
    """Run the command as the submission, reap everything below, and when the command ends
    kill what it left; exit as the command did. Runs as the grader's user, outside bwrap."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    pid = os.fork()
    if pid == 0:
        _become_submission(config)
    status = _reap_until(pid)
    _kill_below(os.getpid())
    return status


def _become_submission(config: dict) -> None:
    """In the forked child: join the cgroups, take the limits, become nobody, exec the command.
    Never returns."""
    try:
        for procs in config["cgroup_procs"]:
            write_value(Path(procs), str(os.getpid()))
        for name, soft, hard in config["rlimits"]:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        if config["user"]:
            uid, gid = config["user"]
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; the command must not
            signal.signal(sig, signal.SIG_DFL)
        os.execv(config["argv"][0], config["argv"])
    except BaseException as e:  # noqa: BLE001 - say why on stderr, the grader shows its tail
        os.write(2, f"ratelab sandbox: cannot start the submission: {e}\n".encode())
    os._exit(127)


def _reap_until(pid: int) -> int:
    """Reap children (orphans come here) until `pid` ends; its wait status."""
    while True:
        try:
            child, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if child == pid:
            return status


def _kill_below(root: int) -> None:
    """SIGKILL every process below `root` and reap them, until none is left."""
    deadline = time.monotonic() + KILL_WAIT_S
    while time.monotonic() < deadline:
        below = descendants(root)
        kill_all(t.pid for t in below)
        _reap_ready()
        if not below:
            break
        time.sleep(0.01)
    _reap_ready()


def _reap_ready() -> None:
    while True:
        try:
            child, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if child == 0:
            return


def _exit_like(status: int) -> None:
    """Exit as a process with wait status `status` did: the same code, or the same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: always the default
            pass
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


if __name__ == "__main__":
    _exit_like(_supervise(json.loads(sys.argv[1])))
