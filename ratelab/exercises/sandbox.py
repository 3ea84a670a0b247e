"""Running a submission as untrusted code: limits, a scratch folder, a scrubbed environment.

Three modes, the strongest available chosen by :func:`detect`:

``bwrap``  Debian's bubblewrap: the whole file system read-only, a private /tmp, only the
           scratch folder writable; the instructor's cases file, the grades file, the feedback
           folder and every submission hidden (bound over with an empty file or folder), and
           the grader's home folder hidden too (except the Python installation, if it lives
           there); new PID, network (loopback only), IPC and UTS namespaces; the sandbox dies
           with the grader. Run as root, bubblewrap sets this up and the worker then becomes
           the unprivileged user ``nobody`` before any submitted code runs (so the process
           limit holds: Linux never applies RLIMIT_NPROC to root); run as another user, it
           adds a user namespace and the submission runs as that user.
``user``   no bubblewrap, but the grader runs as root: the submission runs as ``nobody``.
           Files are protected only by their permissions: the cases and grades files are
           written 0600 and the feedback folder 0700, but anything readable by others
           (a submission left world-readable) can be read. The grader warns about those.
``plain``  neither: limits only. The submission runs as you and can read what you can.
           Use it only for trusted notebooks (your own tests).

In every mode: RLIMIT_AS (memory), RLIMIT_NPROC (processes and threads), RLIMIT_CPU,
RLIMIT_FSIZE and no core files; a new session (so the grader can kill the whole group); the
working folder is a fresh scratch folder; the environment is scrubbed to a short allow-list.

RLIMIT_NPROC counts every task of the user, so submissions running as ``nobody`` at the same
time share one allowance: a fork bomb in one can starve another's kernel. ``ratelab grade``
runs its submissions one after another; run one batch at a time.
"""

from __future__ import annotations

import os
import pwd
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MODES = ("bwrap", "user", "plain")
NOBODY = "nobody"


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    time_s: float = 120.0        # wall time to run the notebook's cells
    grade_s: float = 300.0       # wall time for the checks after it
    memory_mb: int = 4096        # address space of each process (RLIMIT_AS)
    processes: int = 128         # processes and threads of the sandbox's user (RLIMIT_NPROC)
    file_mb: int = 64            # the largest file it may write (RLIMIT_FSIZE)

    def __post_init__(self) -> None:
        for name in ("time_s", "grade_s", "memory_mb", "processes", "file_mb"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")


def _nobody() -> tuple[int, int]:
    entry = pwd.getpwnam(NOBODY)
    return entry.pw_uid, entry.pw_gid


def _namespaces() -> list[str]:
    """bwrap's namespace flags: as root no user namespace (the worker drops to nobody itself,
    a real unprivileged user); as anyone else a user namespace too."""
    if os.geteuid() == 0:
        return ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try"]
    return ["--unshare-all"]


def _bwrap_works() -> bool:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    try:
        return subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                               *_namespaces(), "--die-with-parent", "true"],
                              capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _open_to_others(path: Path) -> bool:
    """Whether a user other than the owner can reach `path` (x on every folder above it)."""
    path = Path(path).resolve()
    for folder in [*reversed(path.parents)]:
        if not folder.stat().st_mode & 0o001:
            return False
    return bool(path.stat().st_mode & 0o005)


def needed_paths() -> list[Path]:
    """What the worker must read: the interpreter's installation, the venv, the package."""
    return [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
            Path(__file__).resolve().parent.parent.parent]


def detect(prefer: str = "auto") -> str:
    """The isolation mode to use: `prefer` if it works here, else the strongest that does."""
    if prefer not in ("auto",) + MODES:
        raise ValueError(f"isolation must be auto or one of {MODES}, got {prefer!r}")
    root = os.geteuid() == 0
    if prefer in ("auto", "bwrap") and _bwrap_works():
        return "bwrap"
    if prefer == "bwrap":
        raise RuntimeError("bubblewrap (bwrap) is not installed or cannot create namespaces "
                           "here (apt-get install bubblewrap)")
    reachable = all(_open_to_others(p) for p in needed_paths())
    if prefer in ("auto", "user") and root and reachable:
        return "user"
    if prefer == "user":
        raise RuntimeError("isolation 'user' needs the grader to run as root (to become nobody) "
                           "and a Python installation that nobody can read")
    return "plain"


def _drop_to_nobody() -> None:
    uid, gid = _nobody()
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def _tasks_of(uid: int) -> int:
    """How many processes and threads `uid` runs now (what RLIMIT_NPROC counts)."""
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                st = os.stat(f"/proc/{pid}")
                if st.st_uid == uid:
                    n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return n


def drops_to_nobody(mode: str) -> bool:
    """Whether the submission runs as nobody (root grader, bwrap or user mode)."""
    return mode in ("bwrap", "user") and os.geteuid() == 0


def preexec(mode: str, limits: Limits):
    """The function the child runs before exec: limits, then (user mode) become nobody.

    In bwrap mode as root the worker drops to nobody itself, inside the sandbox."""
    drop = mode == "user" and os.geteuid() == 0
    # RLIMIT_NPROC counts every task of the user: leave room for what it already runs
    nproc = limits.processes + (0 if drops_to_nobody(mode) else _tasks_of(os.geteuid()))
    memory = limits.memory_mb * 2**20

    def run() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        cpu = int(limits.time_s + limits.grade_s) + 30
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        size = limits.file_mb * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if drop:
            _drop_to_nobody()

    return run


def environment(scratch: Path) -> dict[str, str]:
    """The whole environment a submission sees: nothing of the grader's own."""
    package_root = str(Path(__file__).resolve().parent.parent.parent)
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "PYTHONPATH": package_root,
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


def prepare_scratch(scratch: Path, mode: str) -> None:
    """Make the scratch folder the sandbox's own (owned by nobody when it runs as nobody)."""
    (scratch / "tmp").mkdir(exist_ok=True)
    if drops_to_nobody(mode):
        uid, gid = _nobody()
        for path in [scratch, *scratch.rglob("*")]:
            os.chown(path, uid, gid)
    scratch.chmod(0o700)


def command(mode: str, scratch: Path, hidden: list[Path], argv: list[str],
            keep_fds: tuple[int, ...] = ()) -> list[str]:
    """The command line that runs `argv` in the sandbox of `mode`."""
    if mode != "bwrap":
        return argv
    args = [shutil.which("bwrap"), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--tmpfs", "/tmp"]
    home = Path.home().resolve()
    masked = [Path("/tmp")]  # a private /tmp, and the grader's home hidden
    if home != Path("/"):
        args += ["--perms", "0755", "--tmpfs", str(home)]
        masked.append(home)
    made: set[Path] = set()
    for path in needed_paths():  # what the worker needs, bound back where it was masked
        top = next((m for m in masked if m in path.parents), None)
        if top is None:
            continue
        for folder in [a for a in reversed(path.parents) if top in a.parents]:
            if folder not in made:  # bwrap would make them 0700, closed to nobody
                args += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(scratch), str(scratch)]
    for path in hidden:
        path = Path(path).resolve()
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    args += [*_namespaces(), "--die-with-parent", "--new-session", "--chdir", str(scratch),
             "--clearenv"]
    for k, v in environment(scratch).items():
        args += ["--setenv", k, v]
    return args + ["--", *argv]


def readable_by_others(paths: list[Path]) -> list[Path]:
    """Those of `paths` (or their folders' contents) that users other than the owner can read."""
    return [p for p in paths if Path(p).exists() and Path(p).stat().st_mode & 0o004]
