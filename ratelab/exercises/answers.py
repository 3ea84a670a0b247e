"""The answers' side of the protocol: the student's objects, called on request.

This runs where the student's code lives — the sandbox's kernel when a notebook is graded
(:func:`serve`), or the learner's own kernel when ``check()`` runs there (:class:`LocalPort`).
It knows nothing of the checks: it looks an answer up by name, calls it (or a method of an
object it made, or resumes a generator) with the inputs it is sent, and replies with plain data
(:func:`ratelab.exercises.protocol.plain`) or with what went wrong in the student's words:

* ``{"value": ...}`` — the return value; ``"states"`` gives back the Generators it was handed;
* ``{"handle": n, "kind": "object" | "generator", "methods": [...]}`` — an object kept here;
* ``{"yield": ...}`` / ``{"return": ...}`` — a generator's next command or its result;
* ``{"raised": {"type", "message", "where"}}`` — the student's code raised;
* ``{"timeout": seconds}`` — it ran past the time it was given;
* ``{"bad": "a set"}`` — it returned something that is not plain data.

Whatever this process replies is only ever the student's answer: the grader compares it in its
own process with values that never come here.
"""

from __future__ import annotations

import inspect
import json
import signal
import socket
import sys
import sysconfig
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Mapping

from .protocol import (NotPlain, ProtocolError, decode, describe, generators_in, plain, receive,
                       send)

MAX_METHODS = 64
"""How many method names of an object the grader is told (enough for any answer class)."""

MAX_MESSAGE_CHARS = 500
"""How much of an exception's text a reply carries."""


class _Timeout(BaseException):
    """Raised into the student's code when its time is up (a BaseException, so that an
    ``except Exception`` in the answer does not swallow it)."""


@contextmanager
def time_limit(seconds: float | None):
    """Interrupt the body with _Timeout after `seconds` (main thread only, where SIGALRM can;
    elsewhere the grader's own deadline holds)."""
    usable = seconds is not None and hasattr(signal, "SIGALRM") and \
        threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def fire(signum, frame):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------- where the student's code is


def _library_roots() -> tuple[Path, ...]:
    """Folders whose code is not the student's: this package's and the Python installation's."""
    roots = {Path(__file__).resolve().parent.parent}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(Path(path).resolve())
    return tuple(roots)


_LIBRARY = _library_roots()


def is_library(filename: str) -> bool:
    """Whether code from `filename` is the package's or a library's (not the student's)."""
    if filename.startswith("<frozen"):
        return True
    if filename.startswith("<"):
        return False  # a notebook cell, exec'd text
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return any(path.is_relative_to(root) for root in _LIBRARY)


def student_frame(e: BaseException) -> str:
    """' (line N: 'source')' for the innermost frame of the student's own code, or ''."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not is_library(f.filename)]
    if not frames:
        return ""
    f = frames[-1]
    return f" (line {f.lineno}: {f.line.strip()!r})" if f.line else f" (line {f.lineno})"


def _text(e: BaseException) -> str:
    try:
        text = str(e)
    except Exception:  # noqa: BLE001 - a student's __str__ may raise anything
        text = "<its message could not be read>"
    return "".join(c if c.isprintable() else " " for c in text)[:MAX_MESSAGE_CHARS]


def _raised(e: BaseException) -> dict:
    return {"raised": {"type": type(e).__name__, "message": _text(e), "where": student_frame(e)}}


# ---------------------------------------------------------------- the server


class AnswerServer:
    """The student's namespace, answered request by request (see the module's docstring)."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = namespace
        self.objects: dict[int, Any] = {}
        self._next = 0

    def handle(self, request: dict) -> dict:
        """The reply to one request (never raises for the student's sake)."""
        op = request.get("op")
        try:
            if op == "describe":
                return self._describe(str(request["name"]))
            if op == "call":
                return self._call(request)
            if op in ("send", "throw"):
                return self._resume(request)
            return {"error": f"unknown request {op!r}"}
        except (KeyError, TypeError, ValueError, LookupError) as e:
            return {"error": f"bad request: {type(e).__name__}: {e}"}

    def _keep(self, obj: Any) -> int:
        self._next += 1
        self.objects[self._next] = obj
        return self._next

    def _describe(self, name: str) -> dict:
        if name not in self.namespace:
            return {"kind": "missing"}
        obj = self.namespace[name]
        kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "value"
        return {"kind": kind, "repr": describe(obj)}

    def _target(self, request: dict) -> Any:
        target = request["target"]
        obj = self.namespace[target] if isinstance(target, str) else self.objects[int(target)]
        method = request.get("method")
        return obj if method is None else getattr(obj, str(method))

    def _call(self, request: dict) -> dict:
        args, kwargs = request.get("args", []), request.get("kwargs", {})
        rngs = generators_in(args)
        args, kwargs = decode(args), decode(kwargs)
        try:
            with time_limit(request.get("limit_s")):
                fn = self._target(request)
                result = fn(*args, **kwargs)
        except _Timeout:
            return {"timeout": request.get("limit_s")}
        except (KeyboardInterrupt, SystemExit, Exception) as e:  # the student's code
            return _raised(e)
        if request.get("new"):
            return {"handle": self._keep(result), "kind": "object", "methods": _methods(result),
                    "repr": describe(result)}
        if inspect.isgenerator(result):
            return {"handle": self._keep(result), "kind": "generator"}
        reply = self._value("value", result, request.get("fields"))
        if rngs and "value" in reply:
            reply["states"] = {str(i): args[i].bit_generator.state for i in rngs}
        return reply

    def _resume(self, request: dict) -> dict:
        handle = int(request["handle"])
        gen = self.objects[handle]
        try:
            with time_limit(request.get("limit_s")):
                if request["op"] == "throw":
                    out = gen.throw(_exception(request.get("error") or {}))
                else:
                    out = gen.send(decode(request.get("value")))
        except StopIteration as stop:
            del self.objects[handle]
            return self._value("return", stop.value, None)
        except _Timeout:
            return {"timeout": request.get("limit_s")}
        except (KeyboardInterrupt, SystemExit, Exception) as e:
            self.objects.pop(handle, None)
            return _raised(e)
        return self._value("yield", out, None)

    @staticmethod
    def _value(key: str, value: Any, fields) -> dict:
        try:
            return {key: plain(value, tuple(fields) if fields else None)}
        except NotPlain as e:
            return {"bad": str(e)}
        except (KeyboardInterrupt, SystemExit, Exception) as e:  # a student's __int__ ...
            return _raised(e)


def _methods(obj: Any) -> list[str]:
    """The public methods of `obj` (those a checker may call)."""
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            if callable(getattr(obj, name)):
                names.append(name)
        except Exception:  # noqa: BLE001 - a property of the student's may raise
            continue
    return names[:MAX_METHODS]


def _exception(error: dict) -> BaseException:
    """The exception a checker throws into a generator (a store's error reply, mostly)."""
    message = str(error.get("message", ""))
    if error.get("type") == "StoreError":
        # ratelab.store brings redis-py (~0.15 s): only for a store's error reply
        from ..store.errors import StoreError

        return StoreError(message)
    return RuntimeError(f"{error.get('type', 'error')}: {message}")


# ---------------------------------------------------------------- the two ways in


class LocalPort:
    """The protocol in one process: the learner's own (trusted) kernel, with the same requests
    and replies as the grader's socket — so ``check()`` and the grader give one verdict."""

    closed: str | None = None

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.server = AnswerServer(namespace)

    def request(self, message: dict) -> dict:
        """The reply to `message`, as plain data (it goes through JSON, as on the socket)."""
        reply = self.server.handle(json.loads(json.dumps(message)))
        try:
            return json.loads(json.dumps(reply))
        except (TypeError, ValueError) as e:
            return {"bad": f"a reply that cannot be written ({e})"}


def serve(path: str, namespace: Mapping[str, Any] | None = None) -> None:
    """Answer requests on the unix socket at `path` until the grader says goodbye or goes.

    Called by the grading worker in the sandbox's kernel, after the student's cells, with the
    notebook's globals as `namespace`."""
    server = AnswerServer(sys.modules["__main__"].__dict__ if namespace is None else namespace)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    with sock:
        while True:
            try:
                request = receive(sock)
            except (ProtocolError, TimeoutError):
                return
            if request.get("op") == "bye":
                return
            reply = server.handle(request)
            try:
                send(sock, reply)
            except NotPlain as e:
                send(sock, {"bad": str(e)})
            except (TypeError, ValueError) as e:
                send(sock, {"bad": f"a reply that cannot be written ({e})"})
