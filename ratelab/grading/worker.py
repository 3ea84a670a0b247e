"""The grading worker: inside the sandbox, runs a submission's cells when told, then serves.

Started by :mod:`ratelab.grading.grader` inside the sandbox with a socket on file descriptor
``--fd`` (its only line to the grader; the kernel does not inherit it). It starts a fresh kernel
(nbclient) for the notebook, says ``{"event": "ready", "cells": [...]}`` (the code cells'
indices), and then does what the grader asks, one message at a time:

* ``{"op": "run", "index": i, "timeout_s": t}`` — run cell i; reply ``{"event": "cell",
  "status": "ok" | "raised" | "timeout" | "died", ...}``;
* ``{"op": "serve", "socket": path, "timeout_s": t}`` — run, in the same kernel, a last cell
  that answers the grader's calls on the unix socket `path`
  (:func:`ratelab.exercises.answers.serve`) until the grader says goodbye.

The grader keeps its own clock on every step: a cell that ignores the interrupt is ended by the
grader killing the sandbox, never by this process's good will. Nothing here compares answers.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import re
import socket
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from ..exercises.protocol import ProtocolError, receive, send

PR_SET_DUMPABLE = 4

SERVE_CELL = """\
import ratelab.exercises.answers as _ratelab_answers
_ratelab_answers.serve({path!r}, globals())
"""

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _not_dumpable() -> None:
    """Stop processes of the same user (the kernel) from ptrace-ing this one or opening its
    /proc files (its socket)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def plain_text(text: str) -> str:
    """`text` without terminal colour codes, on one line at most 300 characters long."""
    lines = ANSI.sub("", text).strip().splitlines() or [""]
    return lines[-1][:300]


def _describe(e: BaseException, status: str) -> dict:
    name = getattr(e, "ename", None) or type(e).__name__
    value = str(getattr(e, "evalue", "") or "") or str(e)
    return {"status": status, "ename": plain_text(str(name)), "evalue": plain_text(value)}


class Notebook:
    """The submission's notebook and its kernel, one cell at a time."""

    def __init__(self, path: Path) -> None:
        self.nb = nbformat.read(path, as_version=4)
        self.client = NotebookClient(self.nb, timeout=60, kernel_name="python3",
                                     allow_errors=False, interrupt_on_timeout=True,
                                     record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})

    def code_cells(self) -> list[int]:
        return [i for i, c in enumerate(self.nb.cells) if c.cell_type == "code"]

    def run(self, index: int, timeout_s: float) -> dict:
        """Run cell `index`; what became of it."""
        cell = self.nb.cells[index]
        self.client.timeout = max(1, int(timeout_s))
        started = time.monotonic()
        try:
            self.client.execute_cell(cell, index)
        except CellTimeoutError as e:
            return _describe(e, "timeout")
        except DeadKernelError as e:
            return _describe(e, "died")
        except CellExecutionError as e:
            out = _describe(e, "raised")
            if out["ename"] == "KeyboardInterrupt" and \
                    time.monotonic() - started >= self.client.timeout - 1:  # our interrupt
                out["status"] = "timeout"
            return out
        return {"status": "ok"}

    def serve(self, path: str, timeout_s: float) -> dict:
        """Run the cell that answers the grader's calls on `path`, until it is done."""
        cell = nbformat.v4.new_code_cell(SERVE_CELL.format(path=path))
        self.nb.cells.append(cell)
        return self.run(len(self.nb.cells) - 1, timeout_s)


def work(notebook: Path, sock: socket.socket) -> None:
    """Start the kernel, say which cells there are, then do what the grader asks."""
    book = Notebook(notebook)
    with book.client.setup_kernel():
        send(sock, {"event": "ready", "cells": book.code_cells()})
        while True:
            try:
                order = receive(sock)
            except ProtocolError:
                return  # the grader is done with us
            op = order.get("op")
            if op == "run":
                reply = book.run(int(order["index"]), float(order["timeout_s"]))
                send(sock, {"event": "cell", "index": order["index"], **reply})
            elif op == "serve":
                reply = book.serve(str(order["socket"]), float(order["timeout_s"]))
                send(sock, {"event": "served", **reply})
            else:
                return


def _become(user: str) -> None:
    entry = pwd.getpwnam(user)
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)


ORDERS = ("--notebook", "--fd", "--drop-to")
"""What the grader tells the worker on its command line (``Run.start`` builds it): the
notebook's path, the socket's file descriptor, and the user to become first (bwrap as root)."""


def orders(argv: list[str]) -> dict[str, str]:
    """The grader's orders from `argv` (``--notebook PATH --fd N [--drop-to USER]``); a
    ValueError naming what is wrong for anything else (no person types this line)."""
    given = dict(zip(argv[::2], argv[1::2]))
    if len(argv) % 2 or set(given) - set(ORDERS) or not {"--notebook", "--fd"} <= set(given):
        raise ValueError(f"the worker takes {' '.join(ORDERS)} (the last optional), got {argv}")
    return given


def main(argv: list[str] | None = None) -> int:
    given = orders(sys.argv[1:] if argv is None else list(argv))
    if "--drop-to" in given:
        _become(given["--drop-to"])
    _not_dumpable()
    fd = int(given["--fd"])
    os.set_inheritable(fd, False)  # closed on exec: the kernel never gets it
    sock = socket.socket(fileno=fd)
    try:
        work(Path(given["--notebook"]).resolve(), sock)
    except Exception as e:  # noqa: BLE001 - the grader writes it in the rows
        try:
            send(sock, {"event": "failed", "reason": f"{type(e).__name__}: {e}"[:500]})
        except (OSError, ProtocolError):
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
