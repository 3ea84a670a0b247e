"""The grader's worker: runs one submission inside the sandbox, then its checks.

Started by :mod:`ratelab.exercises.grading` inside the sandbox with a socket on file
descriptor ``--fd`` (the only way in or out; the notebook's kernel does not inherit it). It

1. executes the notebook's code cells in order in a fresh kernel (nbclient), within
   ``--timeout`` seconds in all, stopping at the first cell that fails;
2. reports ``{"event": "loaded", "error": ...}`` and only then receives the instructor's cases
   (so the student's code has run in a process that could never open the cases file);
3. runs the checks in the same kernel, where the student's answers live, and sends back
   ``{"event": "done", "results": {...}}``.

Everything the student's code prints stays in the notebook's outputs; nothing of it is read.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import secrets
import socket
import sys
import time
from pathlib import Path

PR_SET_DUMPABLE = 4


def _not_dumpable() -> None:
    """Stop processes of the same user (the kernel) from ptrace-ing this one or opening its
    /proc files (its socket)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def receive(sock: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise EOFError("the grader closed the connection")
        data += chunk
    return json.loads(data)


GRADING_CELL = """\
import json as _ratelab_json
from ratelab.exercises.grading import grade_namespace as _ratelab_grade
_ratelab_grade(globals(), _ratelab_json.loads({cases!r}), {result!r}, {limit!r})
"""

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def plain(text: str) -> str:
    """`text` without terminal colour codes."""
    return ANSI.sub("", text)


def _describe(e: BaseException, index: int, kind: str) -> dict:
    name = getattr(e, "ename", type(e).__name__)
    value = plain(str(getattr(e, "evalue", "") or "")).strip().splitlines() \
        or plain(str(e)).strip().splitlines() or [""]
    return {"cell": index, "kind": kind, "ename": plain(str(name)), "evalue": value[-1][:300]}


def run(notebook: Path, sock: socket.socket, timeout_s: float, grade_s: float,
        case_limit_s: float) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=timeout_s, kernel_name="python3", allow_errors=False,
                            interrupt_on_timeout=True, record_timing=False,
                            resources={"metadata": {"path": str(notebook.parent)}})
    error = None
    dead = False
    with client.setup_kernel():
        deadline = time.monotonic() + timeout_s
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                error = {"cell": index, "kind": "timeout", "ename": "timeout",
                         "evalue": f"the notebook ran past {timeout_s:g} s"}
                break
            client.timeout = max(1, int(remaining))
            started = time.monotonic()
            try:
                client.execute_cell(cell, index)
            except CellTimeoutError as e:
                error = _describe(e, index, "timeout")
                error["evalue"] = f"cell {index} ran past the notebook's {timeout_s:g} s"
                break
            except DeadKernelError as e:
                error, dead = _describe(e, index, "died"), True
                error["evalue"] = "the kernel died (out of memory or processes?)"
                break
            except CellExecutionError as e:
                error = _describe(e, index, "raised")
                if error["ename"] == "KeyboardInterrupt" and \
                        time.monotonic() - started >= client.timeout - 1:  # interrupted by us
                    error.update(kind="timeout", ename="timeout",
                                 evalue=f"cell {index} ran past the notebook's {timeout_s:g} s")
                break
        send(sock, {"event": "loaded", "error": error})
        cases = receive(sock)
        results: dict = {}
        if not dead:
            path = notebook.parent / f".ratelab-result-{secrets.token_hex(16)}.json"
            cell = nbformat.v4.new_code_cell(GRADING_CELL.format(
                cases=json.dumps(cases), result=str(path), limit=case_limit_s))
            client.timeout = max(1, int(grade_s))
            nb.cells.append(cell)
            try:
                client.execute_cell(cell, len(nb.cells) - 1)
                results = json.loads(path.read_text())
            except Exception as e:  # noqa: BLE001 - said in the row, never raised
                last = (plain(str(e)).strip().splitlines() or [""])[-1]
                results = {"_error": f"the checks could not run: {type(e).__name__}: {last}"}
        send(sock, {"event": "done", "results": results})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--notebook", type=Path, required=True)
    p.add_argument("--fd", type=int, required=True)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--grade-timeout", type=float, default=300.0)
    p.add_argument("--case-limit", type=float, default=20.0)
    p.add_argument("--drop-to", default=None, help="become this user first (bwrap as root)")
    args = p.parse_args(argv)
    if args.drop_to:
        import os
        import pwd

        user = pwd.getpwnam(args.drop_to)
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    _not_dumpable()
    import os

    os.set_inheritable(args.fd, False)  # closed on exec: the kernel never gets it
    sock = socket.socket(fileno=args.fd)
    try:
        run(args.notebook.resolve(), sock, args.timeout, args.grade_timeout, args.case_limit)
    except Exception as e:  # noqa: BLE001 - the grader writes it in the rows
        send(sock, {"event": "failed", "reason": f"{type(e).__name__}: {e}"[:500]})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
