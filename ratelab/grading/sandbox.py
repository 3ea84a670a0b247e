"""Running one submission confined: a minimal file system, limits for the whole submission, and
a kill that leaves nothing of it behind.

A :class:`Sandbox` runs one command (the grading worker, which starts the submission's kernel)
and everything that command starts. :func:`detect` picks the mode; ``auto`` never runs a
submission unconfined: it raises :class:`IsolationUnavailable` when neither confining mode works.

``bwrap`` — bubblewrap builds a new root holding only what Python and a Jupyter kernel need:
    /usr (with the /bin, /lib, /lib64, /sbin links or folders as the host has them), the Python
    installation and the virtualenv, read-only at their own paths (only the venv folder, not the
    project checkout around it), the student build of ratelab
    (:func:`ratelab.grading.student_build.student_package`), read-only, also bound over the real package's folder so that an editable install finds the
    build, a generated /etc (passwd and group with root and nobody, hosts with localhost, the
    loader's cache, nsswitch.conf, localtime, fonts), /dev, its own /proc, an empty private
    /tmp (a tmpfs of 4 x ``file_mb``), and the scratch folder, the only place besides /tmp it can
    write. Nothing else is there: no home folder, no /work, no checkout or .git, no cases,
    grades or other submissions, no /sys. The folders above what is bound (/work, /root, ...) are
    made for the purpose, 0711: nobody can pass through them but not list them.
    It has its own PID, network, IPC, UTS and cgroup namespaces: it sees only its own processes
    and has no network but a loopback of its own (the kernel's ZeroMQ sockets work; the host's
    127.0.0.1 is out of reach). It runs in a new session and dies with its supervisor.
    Run as root, bwrap needs no user namespace: it keeps only the capabilities to enter the
    scratch folder and to change user, and the worker becomes ``nobody`` before any submitted
    code runs (:meth:`Sandbox.extra_argv`). Run as another user, bwrap adds a user namespace
    (--unshare-all) and the submission runs as that user, mapped.
    Not guaranteed: a kernel exploit escapes any of this; everything under /usr is readable.
``user`` — no bubblewrap, the grader runs as root: the submission runs as ``nobody`` (dropped
    before exec), with PYTHONPATH on the student build. It shares the host's file system,
    network and process table: it can read every file that others may read (a world-readable
    checkout holds the reference answers; a world-readable cases file holds the cases), connect
    to the network and to services on localhost, and list the host's processes. Only file
    permissions protect the grader's files.
``plain`` — limits only: the submission runs as the grader's user and can read, write and
    connect to whatever the grader can. For trusted notebooks; used only when asked for.

Limits hold for the submission as a whole, in every mode: ``memory_mb`` for the memory of all its
processes together, ``processes`` for all its processes and threads together (the accounting
lives in :mod:`ratelab.grading.accounting`; this module builds what the submission sees and
runs it).

* Where the machine offers a writable cgroup — v2 whose controllers the grader's own group hands
  down (memory and pids in its cgroup.subtree_control), else the v1 memory and pids hierarchies —
  the submission runs in a child group of the grader's own, joined before exec: the kernel holds
  both limits (a fork past the limit fails, an allocation past it meets the OOM killer), and a
  monitor then stops the whole submission and says why (:meth:`Sandbox.exceeded`); the
  grader also looks after every cell (:meth:`Sandbox.check`).
* Elsewhere (or with RATELAB_GRADE_NO_CGROUP=1, or ``Sandbox(..., cgroups=False)``) a watchdog
  thread looks every 0.1 s: it sums the resident memory of every process of the submission
  (proportional set sizes once the sum looks too big, so pages shared by forks count once) and
  counts its processes and threads, and kills the whole submission past either limit. Between
  two looks a submission can overshoot (RLIMIT_NPROC and RLIMIT_AS bound how far), a burst that
  ends before the next look goes unseen, and files in bwrap's /tmp (a tmpfs) are not counted.
* In every mode each process also gets RLIMIT_AS = ``memory_mb`` (one huge allocation raises
  MemoryError instead of killing the kernel), RLIMIT_FSIZE = ``file_mb``, no core files, and
  RLIMIT_CPU as a backstop for the wall-clock limits the grader keeps; as nobody, RLIMIT_NPROC
  at twice ``processes`` above what nobody runs already.

Every process of a submission is found again: the command runs under a supervisor (supervisor.py run
as a script, outside bwrap, as the grader's user: nobody cannot signal it) that is a child
subreaper, so processes that double-fork stay its descendants, and that reaps them all; when the
command ends the supervisor kills what it left. :meth:`Sandbox.kill` kills the cgroup's members
and the supervisor's descendants, so daemons die with the run; use it, not a kill of the
returned process's group (that would take the supervisor first and orphan the rest). In
``plain`` mode a submission, running as the grader's user, could kill the supervisor first and
leave orphans that only a cgroup still holds.
"""

from __future__ import annotations

import functools
import json
import grp
import importlib.util
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .accounting import MIB, Limits, accounting, tasks_of
from . import supervisor
from .supervisor import KILL_WAIT_S, descendants, kill_all

MODES = ("bwrap", "user", "plain")
NOBODY = "nobody"

NO_ISOLATION = ("no isolation works here: install bubblewrap (apt-get install bubblewrap), or run "
                "as root with a Python installation that others can read; --isolation plain runs "
                "submissions unconfined")

POLL_S = 0.1
"""How often the monitor looks at the submission's use (cgroup counters or /proc)."""




class IsolationUnavailable(RuntimeError):
    """The isolation asked for cannot work here; the message says how to get it."""


# ---------------------------------------------------------------- which mode works here


def detect(prefer: str = "auto") -> str:
    """The isolation mode to use: `prefer` when it works here; for ``auto`` the strongest that
    works, never ``plain`` (IsolationUnavailable when none does)."""
    if prefer not in ("auto",) + MODES:
        raise ValueError(f"isolation must be auto or one of {', '.join(MODES)}, got {prefer!r}")
    if prefer == "plain":
        return "plain"
    if prefer in ("auto", "bwrap") and _bwrap_works():
        return "bwrap"
    if prefer == "bwrap":
        raise IsolationUnavailable("isolation 'bwrap': bubblewrap is not installed, cannot "
                                   "create namespaces here, or cannot start this Python "
                                   "(apt-get install bubblewrap)")
    if _user_works():
        return "user"
    if prefer == "user":
        raise IsolationUnavailable("isolation 'user' needs the grader to run as root and a Python "
                                   "installation, packages and temporary folder that others can "
                                   "read (or install bubblewrap: apt-get install bubblewrap)")
    raise IsolationUnavailable(NO_ISOLATION)


def _bwrap_works() -> bool:
    """Whether bubblewrap is installed and runs Python in the minimal root here."""
    bwrap = shutil.which("bwrap")
    return bool(bwrap) and _bwrap_runs_python(bwrap, os.geteuid())


@functools.lru_cache(maxsize=None)
def _bwrap_runs_python(bwrap: str, euid: int) -> bool:
    """Whether this Python starts in the minimal root, as nobody when the grader is root."""
    scratch = Path(tempfile.mkdtemp(prefix="ratelab-bwrap-probe-"))
    probe = "import json"
    if euid == 0 and _has_nobody():
        uid, gid = _nobody()
        probe = (f"import os, sys; os.setgroups([]); os.setgid({gid}); os.setuid({uid}); "
                 f"os.execv(sys.executable, [sys.executable, '-I', '-c', {probe!r}])")
    try:
        etc = _write_etc(scratch / "etc")
        argv = [*bwrap_argv(scratch, None, etc), "--", sys.executable, "-I", "-c", probe]
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _user_works() -> bool:
    """Whether ``user`` mode can run here: root, and Python reachable by nobody."""
    return os.geteuid() == 0 and _has_nobody() and all(
        _open_to_others(p) for p in _python_paths() + [Path(tempfile.gettempdir())])


def _has_nobody() -> bool:
    try:
        pwd.getpwnam(NOBODY)
    except KeyError:
        return False
    return True


def _python_paths() -> list[Path]:
    """What the worker's interpreter must read: the installation, the venv, its packages."""
    paths = [sys.base_prefix, sys.prefix, sys.executable, sysconfig.get_path("purelib"),
             sysconfig.get_path("platlib")]
    return sorted({Path(p) for p in paths if p})


def _open_to_others(path: Path) -> bool:
    """Whether a user other than the owner can reach `path`: x on every folder above it, and r
    (plus x for a folder) on the path itself."""
    path = Path(path).resolve()
    try:
        if not all(folder.stat().st_mode & 0o001 for folder in path.parents):
            return False
        mode = path.stat().st_mode
    except OSError:
        return False
    need = 0o005 if path.is_dir() else 0o004
    return mode & need == need


def _runs_as_nobody(mode: str) -> bool:
    """Whether the submission of `mode` runs as nobody (a root grader, bwrap or user mode)."""
    return mode in ("bwrap", "user") and os.geteuid() == 0


def _nobody() -> tuple[int, int]:
    entry = pwd.getpwnam(NOBODY)
    return entry.pw_uid, entry.pw_gid


# ---------------------------------------------------------------- what the submission sees


def environment(scratch: Path, package: Path) -> dict[str, str]:
    """The whole environment a submission sees: nothing of the grader's own; PYTHONPATH is the
    student build `package`."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(package),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": str(scratch / "tmp"),
        "JUPYTER_RUNTIME_DIR": str(scratch / ".jupyter"),
        "JUPYTER_DATA_DIR": str(scratch / ".jupyter-data"),
        "IPYTHONDIR": str(scratch / ".ipython"),
        "MPLCONFIGDIR": str(scratch / ".matplotlib"),
        "MPLBACKEND": "Agg",
        "NUMBA_CACHE_DIR": str(scratch / ".numba"),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1",
    }


@dataclass(frozen=True)
class _Mount:
    """One bwrap file-system operation: `kind` (its option) at `dest` inside."""

    kind: str                   # "--ro-bind", "--bind", "--symlink", "--tmpfs", "--dir", ...
    dest: Path
    src: str | None = None      # what is bound, or the symlink's target
    perms: str | None = None    # for --tmpfs and --dir
    size: int | None = None     # bytes, for --tmpfs


PARENT_PERMS = "0711"
"""The folders made above what is bound (/work, /work/main, /root, ...): passable, not listable."""

SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FROM_HOST = ("nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
                 "alternatives", "fonts")
"""What /etc inside holds from the host's /etc (besides the generated passwd, group, hosts)."""


def bwrap_argv(scratch: Path, package: Path | None, etc: Path, tmp_mb: int = 256) -> list[str]:
    """bwrap and its options (not the command) for the minimal root around `scratch`, with the
    student build `package`, the generated /etc files in `etc` and a /tmp of `tmp_mb` MiB."""
    mounts = [_Mount("--dev", Path("/dev")), _Mount("--proc", Path("/proc")),
              _Mount("--tmpfs", Path("/tmp"), perms="1777", size=tmp_mb * MIB),
              *_system_mounts(), *_python_mounts(), *_package_mounts(package),
              *_etc_mounts(etc), _Mount("--bind", Path(scratch), str(scratch))]
    return [shutil.which("bwrap") or "bwrap", *_mount_args(mounts), *_namespace_args(),
            "--die-with-parent", "--new-session", "--chdir", str(scratch)]


def _system_mounts() -> list[_Mount]:
    """/usr and the top-level system folders, as links where the host has links (merged /usr)."""
    return [m for m in (_as_on_host(Path("/") / name) for name in SYSTEM_DIRS) if m]


def _as_on_host(path: Path) -> "_Mount | None":
    """`path` as the host has it: the same link, a read-only bind, or nothing when absent."""
    if path.is_symlink():
        return _Mount("--symlink", path, os.readlink(path))
    if path.exists():
        return _Mount("--ro-bind", path, str(path))
    return None


def _python_mounts() -> list[_Mount]:
    """The Python installation and the virtualenv, read-only, at their own (and real) paths."""
    out = []
    for prefix in dict.fromkeys([sys.base_prefix, sys.prefix]):
        for path in dict.fromkeys([Path(prefix), Path(prefix).resolve()]):
            out.append(_Mount("--ro-bind", path, str(Path(prefix).resolve())))
    return out


def _package_mounts(package: Path | None) -> list[_Mount]:
    """The student build at its own path, and its ratelab/ over the real package's folder."""
    if package is None:
        return []
    package = Path(package).resolve()
    out = [_Mount("--ro-bind", package, str(package))]
    real = installed_package()
    if real != package / "ratelab":
        out.append(_Mount("--ro-bind", real, str(package / "ratelab")))
    return out


def installed_package() -> Path:
    """The folder of the ratelab package this process imports (the checkout's, when editable)."""
    spec = importlib.util.find_spec("ratelab")
    return Path(spec.origin).resolve().parent


def _etc_mounts(etc: Path) -> list[_Mount]:
    """A listable /etc of the generated files in `etc` and the few the host lends."""
    out = [_Mount("--dir", Path("/etc"), perms="0755")]
    out += [_Mount("--ro-bind", Path("/etc") / f.name, str(f)) for f in sorted(etc.iterdir())]
    out += [m for m in (_as_on_host(Path("/etc") / name) for name in ETC_FROM_HOST) if m]
    return out


def _write_etc(folder: Path) -> Path:
    """Write the generated /etc files into `folder`: passwd and group holding root, nobody (and
    the grader's user when it is not root), hosts with localhost."""
    folder.mkdir(mode=0o755)
    users = [pwd.getpwuid(0)] + ([pwd.getpwnam(NOBODY)] if _has_nobody() else [])
    if os.geteuid() != 0:
        users.append(pwd.getpwuid(os.geteuid()))
    lines = {f"{u.pw_name}:x:{u.pw_uid}:{u.pw_gid}:{u.pw_name}:/nonexistent:/usr/sbin/nologin"
             for u in users}
    groups = {f"{_group_name(u.pw_gid)}:x:{u.pw_gid}:" for u in users}
    files = {"passwd": sorted(lines), "group": sorted(groups),
             "hosts": ["127.0.0.1 localhost", "::1 localhost ip6-localhost"]}
    for name, content in files.items():
        (folder / name).write_text("\n".join(content) + "\n")
        (folder / name).chmod(0o644)
    return folder


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return f"g{gid}"


def _mount_args(mounts: list[_Mount]) -> list[str]:
    """bwrap options for `mounts`, outer paths first, with every missing parent folder made
    0711: nobody may pass through it but not list it (bwrap would make it 0700, closed)."""
    args: list[str] = []
    ready, readonly = {Path("/")}, []
    for m in sorted(mounts, key=lambda m: len(m.dest.parts)):
        if m.kind == "--ro-bind" and m.src == str(m.dest) and \
                any(r == m.dest or r in m.dest.parents for r in readonly):
            continue  # already there, inside a folder bound read-only (Python under /usr)
        for folder in reversed(m.dest.parents):
            if folder not in ready and not any(r in folder.parents for r in readonly):
                args += ["--perms", PARENT_PERMS, "--dir", str(folder)]
            ready.add(folder)
        args += _mount_option(m)
        ready.add(m.dest)
        if m.kind == "--ro-bind":
            readonly.append(m.dest)
    return args


def _mount_option(m: _Mount) -> list[str]:
    if m.kind == "--tmpfs":
        return ["--perms", m.perms or "0755", "--size", str(m.size), "--tmpfs", str(m.dest)]
    if m.kind == "--dir":
        return ["--perms", m.perms or PARENT_PERMS, "--dir", str(m.dest)]
    if m.kind in ("--dev", "--proc"):
        return [m.kind, str(m.dest)]
    return [m.kind, m.src, str(m.dest)]


def _namespace_args() -> list[str]:
    """As root: new PID, network, IPC, UTS and cgroup namespaces, and only the capabilities the
    worker needs to enter the scratch folder (owned by nobody, 0700) and become nobody. As
    another user: all namespaces, a user namespace too."""
    if os.geteuid() == 0:
        return ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try", "--cap-drop", "ALL", "--cap-add", "CAP_DAC_READ_SEARCH",
                "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return ["--unshare-all"]


# ---------------------------------------------------------------- the sandbox


def _rlimits(limits: Limits, as_nobody: bool) -> list[tuple[str, int, int]]:
    """(name, soft, hard) of every resource limit a process of the submission gets."""
    memory, size = limits.memory_mb * MIB, limits.file_mb * MIB
    cpu = int(limits.time_s + limits.grade_s) + 30
    out = [("RLIMIT_AS", memory, memory), ("RLIMIT_FSIZE", size, size), ("RLIMIT_CORE", 0, 0),
           ("RLIMIT_CPU", cpu, cpu + 5)]
    if as_nobody:  # counts every task of nobody: leave room for what it runs already
        nproc = 2 * limits.processes + tasks_of(_nobody()[0])
        out.append(("RLIMIT_NPROC", nproc, nproc))
    return out


def _prepare_scratch(scratch: Path, as_nobody: bool) -> None:
    """Make `scratch` the submission's own: a tmp/ inside, owned by nobody when it runs as
    nobody, closed to everyone else."""
    (scratch / "tmp").mkdir(exist_ok=True)
    if as_nobody:
        uid, gid = _nobody()
        for path in [scratch, *scratch.rglob("*")]:
            os.lchown(path, uid, gid)
    scratch.chmod(0o700)


class Sandbox:
    """One confined run of a submission: start it, watch its limits, kill it whole.

    ``cgroups``: None uses a cgroup where the machine offers one (unless
    RATELAB_GRADE_NO_CGROUP=1), False always the watchdog, True a cgroup or RuntimeError.
    ``accounting`` says which ("cgroup v2", "cgroup v1", "watchdog") once started."""

    def __init__(self, mode: str, scratch: Path, limits: Limits, package: Path, *,
                 cgroups: bool | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode, self.scratch = mode, Path(scratch).resolve()
        self.limits, self.package = limits, Path(package).resolve()
        self.accounting: str | None = None
        self._cgroups = cgroups
        self._as_nobody = _runs_as_nobody(mode)
        self._proc: subprocess.Popen | None = None
        self._acct = None
        self._etc: Path | None = None
        self._reason: str | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._monitor: threading.Thread | None = None
        self._killed = False

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.kill()

    def extra_argv(self) -> list[str]:
        """Arguments the worker must get: it becomes nobody itself inside bwrap run as root."""
        return ["--drop-to", NOBODY] if self.mode == "bwrap" and self._as_nobody else []

    def start(self, argv: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
        """Run `argv` (argv[0] is sys.executable) confined, under the supervisor: cwd the
        scratch folder, the environment of :func:`environment` only, stdin and stdout
        /dev/null, stderr a pipe, its own session. Returns the supervisor's Popen, whose exit
        status is the command's."""
        if self._proc is not None or self._killed:
            raise RuntimeError("a Sandbox runs one command once")
        if self.mode == "user" and not _open_to_others(self.package):
            raise IsolationUnavailable(f"isolation 'user': nobody cannot read the student build "
                                       f"{self.package}; put it where others can read it")
        _prepare_scratch(self.scratch, self._as_nobody)
        self._acct = accounting(self.limits, self._cgroups)
        self.accounting = self._acct.name
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(Path(supervisor.__file__).resolve()),
                 json.dumps(self._config(argv))],
                cwd=self.scratch, env=environment(self.scratch, self.package), pass_fds=pass_fds,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                start_new_session=True)
        except BaseException:
            self.kill()
            raise
        self._acct.attach(self._proc)
        self._monitor = threading.Thread(target=self._watch, name="ratelab-sandbox-monitor",
                                         daemon=True)
        self._monitor.start()
        return self._proc

    def _config(self, argv: list[str]) -> dict:
        """What the supervisor needs: the command line, the cgroups to join, limits, user."""
        command = list(argv)
        if self.mode == "bwrap":
            self._etc = _write_etc(Path(tempfile.mkdtemp(prefix="ratelab-etc-")) / "etc")
            self._etc.parent.chmod(0o755)
            tmp_mb = 4 * self.limits.file_mb
            command = [*bwrap_argv(self.scratch, self.package, self._etc, tmp_mb), "--", *argv]
        return {"argv": command, "cgroup_procs": list(self._acct.procs_files),
                "rlimits": _rlimits(self.limits, self._as_nobody),
                "user": list(_nobody()) if self.mode == "user" and self._as_nobody else None}

    def _watch(self) -> None:
        """The monitor: stop the whole submission as soon as it is over a limit."""
        while not self._done.wait(POLL_S):
            if self._proc.poll() is not None or self.check():
                return

    def check(self) -> str | None:
        """Look now, not at the monitor's next look: when the submission is over a limit, stop
        it whole and say why in one line; None when it is within its limits.

        The grader looks after every cell, so that a cell whose fork or allocation failed at the
        limit (and which then raised, or caught the error) is a stopped cell, whichever of the
        cell's reply and the monitor comes first."""
        if self._reason is None and self._proc is not None and self._proc.poll() is None:
            reason = self._acct.over()
            if reason:
                with self._lock:
                    self._reason = self._reason or reason
                self._stop_all()
        return self._reason

    def exceeded(self) -> str | None:
        """Why the run was stopped for a limit, in one line; None when it was not."""
        return self._reason

    def kill(self) -> None:
        """SIGKILL every process of the submission, wait for them, remove the cgroups.
        Idempotent."""
        with self._lock:
            if self._killed:
                return
            self._killed = True
        self._done.set()
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join()
        if self._proc is not None:
            self._stop_all()
        if self._acct is not None:
            self._reason = self._reason or self._acct.over()
            self._acct.close()
        if self._etc is not None:
            shutil.rmtree(self._etc.parent, ignore_errors=True)

    def _members(self) -> set[int]:
        """The submission's processes now: the cgroup's, and those below the supervisor."""
        pids = set(self._acct.members())
        if self._proc.poll() is None:  # reaped, its pid may be another process's
            pids |= {t.pid for t in descendants(self._proc.pid)}
        return pids

    def _stop_all(self) -> None:
        """Kill the submission's processes until the supervisor (its command dead, the rest
        reaped) has exited, then whatever the cgroup still holds."""
        deadline = time.monotonic() + KILL_WAIT_S
        while self._proc.poll() is None and time.monotonic() < deadline:
            self._acct.kill()
            kill_all(self._members())  # again and again: a child may fork or join late
            try:
                self._proc.wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                pass
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        while self._members() and time.monotonic() < deadline:
            kill_all(self._members())
            time.sleep(0.01)
