"""What a checker holds instead of the student's answer: a stand-in that asks for each call.

A checker calls ``answer(1.0, 2)``, builds ``answer(limit=3)`` and calls its ``allow``, or
drives a generator, exactly as it would the student's own objects; each call becomes a request
on a *port* and comes back as plain data (:mod:`ratelab.exercises.protocol`). The port is either
the learner's own kernel (:class:`ratelab.exercises.answers.LocalPort`, what ``check()`` uses) or
a sandboxed process's socket (what the grader uses): one code path, one verdict.

What the student's code raised, how long it ran, or a return that is not plain data come back
as :class:`~ratelab.exercises.core.AnswerFailed` in words a student can act on (or
NotImplementedError, for an untouched stub).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from .answers import LocalPort
from .protocol import encode, error_name, unplain
from .errors import AnswerFailed


class Port(Protocol):
    """Where requests about the answers go; `closed` says why it no longer answers."""

    closed: str | None

    def request(self, message: dict) -> dict: ...


class Budget:
    """The seconds the student's code may still run in this case (None: no limit)."""

    def __init__(self) -> None:
        self.left_s: float | None = None
        self.limit_s: float | None = None

    def start(self, seconds: float | None) -> None:
        self.left_s = self.limit_s = seconds


class Answer:
    """A student's answer (or an object or generator it made), reached through a port."""

    def __init__(self, port: Port, budget: Budget, target: str | int, info: dict) -> None:
        self._port, self._budget, self._target, self._info = port, budget, target, info

    def __repr__(self) -> str:
        return self._info.get("repr") or f"answer {self._target}"

    @property
    def budget(self) -> Budget:
        return self._budget

    def _request(self, message: dict) -> dict:
        """The reply to `message`, with this case's time left given and counted."""
        budget = self._budget
        if budget.left_s is not None:
            if budget.left_s <= 0:
                raise _timeout(budget.limit_s)
            message["limit_s"] = budget.left_s
        started = time.monotonic()
        reply = self._port.request(message)
        if budget.left_s is not None:
            budget.left_s -= time.monotonic() - started
            if "timeout" in reply:
                reply["timeout"] = budget.limit_s  # the case's limit, not what was left of it
        return reply

    def _call(self, method: str | None, args: tuple, kwargs: dict, *, new: bool = False,
              fields: tuple[str, ...] | None = None) -> Any:
        message = {"op": "call", "target": self._target, "method": method,
                   "args": encode(list(args)), "kwargs": encode(kwargs)}
        if new:
            message["new"] = True
        if fields:
            message["fields"] = list(fields)
        reply = self._request(message)
        if "states" in reply and "value" in reply:  # the Generators it was handed, moved on
            for i, state in reply["states"].items():
                args[int(i)].bit_generator.state = state
        return self._result(reply)

    def _result(self, reply: dict) -> Any:
        if "value" in reply:
            return unplain(reply["value"])
        if reply.get("kind") == "object":
            return AnswerObject(self._port, self._budget, reply["handle"], reply)
        if reply.get("kind") == "generator":
            return _generator(self, reply["handle"])
        raise failure(reply)


class AnswerFunction(Answer):
    """A function (or any callable that is not a class) of the student's."""

    def __call__(self, *args, **kwargs):
        return self._call(None, args, kwargs)


class AnswerClass(Answer):
    """A class of the student's: calling it makes an object kept on the answers' side."""

    def __call__(self, *args, **kwargs):
        return self._call(None, args, kwargs, new=True)


class AnswerValue(Answer):
    """An answer that is not callable (a number, a string...): it can only be described."""


class AnswerObject(Answer):
    """An object the student's class made; its public methods can be called."""

    fields: tuple[str, ...] | None = None
    """Attributes to read off a method's return when it is an object (a Decision-like)."""

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._info.get("methods", ()):
            raise AttributeError(name)
        return AnswerMethod(self, name)


class AnswerMethod:
    """One method of an AnswerObject."""

    def __init__(self, owner: AnswerObject, name: str) -> None:
        self.owner, self.name = owner, name

    def __call__(self, *args, **kwargs):
        return self.owner._call(self.name, args, kwargs, fields=self.owner.fields)


def _generator(owner: Answer, handle: int):
    """A real generator that resumes the student's generator on the answers' side: what it
    yields comes out here, what is sent or thrown in goes there."""
    message = {"op": "send", "target": None, "handle": handle, "value": None}
    while True:
        reply = owner._request(dict(message))
        if "return" in reply:
            return unplain(reply["return"])
        if "yield" not in reply:
            raise failure(reply)
        try:
            sent = yield unplain(reply["yield"])
        except GeneratorExit:
            return  # abandoned: the answers' side keeps it until the port closes
        except Exception as e:  # noqa: BLE001 - thrown in by the checker (an error reply)
            message = {"op": "throw", "handle": handle,
                       "error": {"type": error_name(e), "message": str(e)}}
        else:
            message = {"op": "send", "handle": handle, "value": encode(sent)}


def _timeout(seconds: float | None) -> AnswerFailed:
    return AnswerFailed("timeout", f"your code ran for more than {seconds or 0:g} s on one "
                                   "case (a loop that never ends?)")


def failure(reply: dict) -> BaseException:
    """The exception a checker sees for a reply that carries no value."""
    if "raised" in reply:
        r = reply["raised"]
        kind, message = str(r.get("type", "Exception")), str(r.get("message", ""))
        if kind == "NotImplementedError":
            return NotImplementedError(message)
        if kind == "RecursionError":
            return AnswerFailed("raised", "your code recursed too deep (RecursionError)")
        if kind == "MemoryError":
            return AnswerFailed("raised", "your code ran out of memory (MemoryError)")
        return AnswerFailed("raised", f"your code raised {kind}: {message}{r.get('where', '')}")
    if "timeout" in reply:
        return _timeout(reply["timeout"])
    if "bad" in reply:
        return AnswerFailed("bad return", f"your code returned {reply['bad']}: an answer "
                                          "returns plain data (numbers, True/False, None, "
                                          "strings, and lists or dicts of them)")
    if "closed" in reply:
        return AnswerFailed(reply.get("closed_kind", "raised"), str(reply["closed"]))
    return RuntimeError(f"the answers' side could not take the request: "
                        f"{reply.get('error', reply)}")


KINDS = {"function": AnswerFunction, "class": AnswerClass, "value": AnswerValue}


def lookup(port: Port, name: str, budget: Budget | None = None) -> Answer | None:
    """The answer called `name` on `port`, or None when the namespace has none."""
    info = port.request({"op": "describe", "name": name})
    if info.get("kind") == "missing":
        return None
    if info.get("kind") not in KINDS:
        raise failure(info)
    return KINDS[info["kind"]](port, budget or Budget(), name, info)


def local(answer: Any, name: str) -> Answer:
    """`answer` (a learner's own object) behind a LocalPort: checked as the grader checks."""
    if isinstance(answer, Answer):
        return answer
    found = lookup(LocalPort({name: answer}), name)
    assert found is not None
    return found


def construct(cls: Any, *args, **kwargs) -> Any:
    """An object of the student's class (or what their factory function returns), kept on the
    answers' side."""
    if isinstance(cls, (AnswerClass, AnswerFunction)):
        return cls._call(None, args, kwargs, new=True)
    return cls(*args, **kwargs)
