"""What one submission uses, in all: its limits, the process table, and the two ways of
accounting for it (a cgroup where the machine offers one, else a watchdog over /proc).

The :class:`~ratelab.grading.sandbox.Sandbox` starts the submission; the accounting chosen by
:func:`accounting` watches every process of it together — memory (proportional set size) and
processes — and kills the whole submission when it goes over. Split from the sandbox, which
builds what the submission sees and runs it.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .supervisor import KILL_WAIT_S, Task, descendants, write_value

NO_CGROUP_ENV = "RATELAB_GRADE_NO_CGROUP"
"""Set to 1: account with the watchdog even where a cgroup would work (the tests' switch)."""


MIB = 2**20


@dataclass(frozen=True)
class Limits:
    """What one submission may use, in all (every process of it together)."""

    time_s: float = 120.0        # wall time to run the notebook's cells
    grade_s: float = 300.0       # wall time for the checks after it
    memory_mb: int = 4096        # memory of all its processes together (and each one's RLIMIT_AS)
    processes: int = 128         # its processes and threads together
    file_mb: int = 64            # the largest file it may write (RLIMIT_FSIZE)

    def __post_init__(self) -> None:
        for name in ("time_s", "grade_s", "memory_mb", "processes", "file_mb"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")


# ---------------------------------------------------------------- memory and processes


def _pss(pid: int) -> int | None:
    """The proportional set size of `pid` in bytes (shared pages split among their users)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def tasks_of(uid: int) -> int:
    """How many processes and threads `uid` runs now (what RLIMIT_NPROC counts)."""
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return n


def _memory_words(used: int) -> str:
    return f"{used / 2**30:.1f} GiB" if used >= 2**30 else f"{used / MIB:.0f} MiB"


def _memory_reason(used: int | None, limits: Limits) -> str:
    amount = _memory_words(used) if used else f"more than {limits.memory_mb} MiB"
    return f"it used {amount} of memory in all (limit {limits.memory_mb} MiB)"


# ---------------------------------------------------------------- accounting: watchdog


class _Watchdog:
    """Limits without a cgroup: every look sums the memory of the supervisor's descendants and
    counts their processes and threads."""

    name = "watchdog"
    procs_files: tuple[str, ...] = ()

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.proc: subprocess.Popen | None = None

    def attach(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def _tasks(self) -> list[Task]:
        # once the supervisor is reaped its pid may be another process's: look no further
        if self.proc is None or self.proc.poll() is not None:
            return []
        return descendants(self.proc.pid)

    def members(self) -> list[int]:
        return []  # the sandbox finds them below the supervisor

    def kill(self) -> None:
        pass

    def over(self) -> str | None:
        tasks = self._tasks()
        count = sum(t.threads for t in tasks)
        if count > self.limits.processes:
            return f"it ran {count} processes and threads (limit {self.limits.processes})"
        limit = self.limits.memory_mb * MIB
        if sum(t.rss for t in tasks) > limit:  # resident pages shared by forks count once here:
            used = sum(_pss(t.pid) or t.rss for t in tasks)
            if used > limit:
                return _memory_reason(used, self.limits)
        return None

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- accounting: cgroups


_GROUP_SEQ = itertools.count()


def _own_cgroups() -> dict[str, Path]:
    """This process's own cgroup folders: by v1 controller name, and "v2" for the unified one."""
    own = _own_cgroup_paths()
    out: dict[str, Path] = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            fields, (fstype, _, options) = left.split(), right.split()[:3]
            root, mountpoint = fields[3].rstrip("/"), Path(fields[4])
            names = ["v2"] if fstype == "cgroup2" else \
                options.split(",") if fstype == "cgroup" else []
            for name in names:
                path = own.get(name)
                if path is not None and (path + "/").startswith(root + "/"):
                    out.setdefault(name, mountpoint / path[len(root):].lstrip("/"))
    return out


def _own_cgroup_paths() -> dict[str, str]:
    """/proc/self/cgroup: the path of this process's group in each hierarchy."""
    own: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else ["v2"]:
                own[name] = path
    return own


def _counter(path: Path, key: str) -> int:
    """The number after `key` in a flat-keyed cgroup file (memory.events, pids.events, ...)."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _pids_in(folder: Path) -> list[int]:
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _make_group(parent: Path) -> Path:
    """A new child group of `parent`, named after this process; stale ones are removed first."""
    _remove_stale_groups(parent)
    folder = parent / f"ratelab-sandbox-{os.getpid()}-{next(_GROUP_SEQ)}"
    folder.mkdir()
    return folder


def _remove_stale_groups(parent: Path) -> None:
    """Remove the empty groups left by graders that are no longer running (one killed, or whose
    kill gave up waiting)."""
    for folder in parent.glob("ratelab-sandbox-*-*"):
        creator = folder.name.split("-")[2]
        if creator.isdigit() and not os.path.exists(f"/proc/{creator}"):
            try:
                folder.rmdir()
            except OSError:
                pass


def _remove_group(folder: Path) -> None:
    """Remove `folder` once its processes are gone (they leave it as they exit)."""
    deadline = time.monotonic() + KILL_WAIT_S
    while folder.exists():
        try:
            folder.rmdir()
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


def _processes_reason(limits: Limits) -> str:
    return (f"it tried to run more than {limits.processes} processes and threads "
            f"(limit {limits.processes})")


class _CgroupV2:
    """One child group of the unified hierarchy, with memory.max and pids.max."""

    name = "cgroup v2"

    def __init__(self, parent: Path, limits: Limits) -> None:
        self.limits, self.folder = limits, _make_group(parent)
        try:
            write_value(self.folder / "memory.max", str(limits.memory_mb * MIB))
            write_value(self.folder / "pids.max", str(limits.processes))
            for knob, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (self.folder / knob).exists():
                    write_value(self.folder / knob, value)
        except OSError:
            self.close()
            raise
        self.procs_files = (str(self.folder / "cgroup.procs"),)

    def attach(self, proc) -> None:
        pass

    def members(self) -> list[int]:
        return _pids_in(self.folder)

    def kill(self) -> None:
        """SIGKILL the whole group at once, where the kernel offers it (Linux 5.14)."""
        try:
            write_value(self.folder / "cgroup.kill", "1")
        except OSError:
            pass

    def over(self) -> str | None:
        if _counter(self.folder / "pids.events", "max"):
            return _processes_reason(self.limits)
        if _counter(self.folder / "memory.events", "oom_kill"):
            return _memory_reason(_read_int(self.folder / "memory.peak"), self.limits)
        return None

    def close(self) -> None:
        _remove_group(self.folder)


class _CgroupV1:
    """A child group in the v1 memory hierarchy and one in the pids hierarchy."""

    name = "cgroup v1"

    def __init__(self, memory_parent: Path, pids_parent: Path, limits: Limits) -> None:
        self.limits, self.folders = limits, []
        try:
            self.memory = _make_group(memory_parent)
            self.folders.append(self.memory)
            self.pids = _make_group(pids_parent)
            self.folders.append(self.pids)
            write_value(self.memory / "memory.limit_in_bytes", str(limits.memory_mb * MIB))
            try:  # memory plus swap, where swap accounting is on
                write_value(self.memory / "memory.memsw.limit_in_bytes", str(limits.memory_mb * MIB))
            except OSError:
                pass
            write_value(self.pids / "pids.max", str(limits.processes))
        except OSError:
            self.close()
            raise
        self.procs_files = tuple(str(f / "cgroup.procs") for f in self.folders)

    def attach(self, proc) -> None:
        pass

    def members(self) -> list[int]:
        return sorted(set(_pids_in(self.memory)) | set(_pids_in(self.pids)))

    def kill(self) -> None:
        pass  # v1 has no cgroup.kill: the sandbox kills the members one by one

    def over(self) -> str | None:
        if _counter(self.pids / "pids.events", "max"):
            return _processes_reason(self.limits)
        if self._oom_killed():
            peak = _read_int(self.memory / "memory.max_usage_in_bytes")
            return _memory_reason(peak, self.limits)
        return None

    def _oom_killed(self) -> bool:
        """Whether the OOM killer struck in the group (memory.failcnt on kernels before 4.13,
        whose oom_control has no oom_kill count)."""
        control = self.memory / "memory.oom_control"
        try:
            counted = "oom_kill " in control.read_text()
        except OSError:
            counted = False
        if counted:
            return _counter(control, "oom_kill") > 0
        return bool(_read_int(self.memory / "memory.failcnt"))

    def close(self) -> None:
        for folder in self.folders:
            _remove_group(folder)


def _cgroup_accounting(limits: Limits):
    """A cgroup accounting for one submission, or None where no cgroup is usable here."""
    try:
        own = _own_cgroups()
    except OSError:
        return None
    if "v2" in own:
        try:
            return _CgroupV2(own["v2"], limits)
        except OSError:
            pass
    if "memory" in own and "pids" in own:
        try:
            return _CgroupV1(own["memory"], own["pids"], limits)
        except OSError:
            pass
    return None


def cgroup_kind() -> str | None:
    """Which cgroup ``Sandbox(..., cgroups=True)`` uses here ("cgroup v2", "cgroup v1"), or
    None where there is none to use."""
    group = _cgroup_accounting(Limits())
    if group is None:
        return None
    group.close()
    return group.name


def accounting(limits: Limits, cgroups: bool | None):
    """The accounting a sandbox uses: a cgroup where wanted and usable, else the watchdog."""
    if cgroups is None:
        cgroups = os.environ.get(NO_CGROUP_ENV) != "1"
        group = _cgroup_accounting(limits) if cgroups else None
        return group or _Watchdog(limits)
    if not cgroups:
        return _Watchdog(limits)
    group = _cgroup_accounting(limits)
    if group is None:
        raise RuntimeError("no writable cgroup with the memory and pids controllers here")
    return group
