"""The narrow protocol between a checker and the process that holds a student's answers.

A checker never reads the student's objects; it asks "call your `take` with these inputs" and
gets *plain data* back: None, booleans, numbers, strings, and lists and string-keyed dicts of
them. Anything else is a "bad return". Messages are JSON, each framed by its length, so what a
submission sends can only ever be such data, never an object of the grader's process.

Inputs travel the other way and may carry a few value types of the package (a Decision, a
View, a seeded numpy Generator, bytes): :func:`encode` tags them and :func:`decode`, in the
answers' process, builds them again. Nothing here imports a checker, a reference or a case.

This module runs on both sides: in the grader and in the sandbox's kernel.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import json
import numbers
import socket
import struct
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

MAX_MESSAGE_BYTES = 16 * 2**20
"""The largest message either side accepts (a reply past it is a bad return)."""

MAX_DEPTH = 32
"""How deeply lists and dicts may nest in a reply."""

MAX_TEXT = 1 << 20
"""The longest string a reply may carry (a Lua script fits; a flood of output does not)."""

TAG = "$"
"""The key that marks an encoded input value (a plain dict from a checker never has it)."""

VALUE_TYPES = {
    "Decision": "ratelab.limiters.base:Decision",
    "View": "ratelab.http:View",
    "PolicyItem": "ratelab.http:PolicyItem",
    "LimitItem": "ratelab.http:LimitItem",
}
"""The package's value types an input may carry, by tag: dataclasses rebuilt field by field."""


class NotPlain(ValueError):
    """A reply value is not plain data; the message says what it was."""


class ProtocolError(ConnectionError):
    """The other side sent something that is not a message, or went away."""


# ---------------------------------------------------------------- replies: plain data


def plain(value: Any, fields: tuple[str, ...] | None = None, depth: int = 0) -> Any:
    """`value` as plain data (NotPlain naming what it is, when it cannot be).

    numpy scalars and arrays become numbers and lists; a tuple is tagged (:func:`unplain`
    makes it a tuple again); an object that
    has every attribute in `fields` becomes a dict of them (a Decision-like return)."""
    if depth > MAX_DEPTH:
        raise NotPlain(f"values nested more than {MAX_DEPTH} deep")
    if value is None or isinstance(value, bool):
        return value
    kind = type(value).__module__
    if kind == "numpy":
        if hasattr(value, "tolist"):
            return plain(value.tolist(), fields, depth + 1)
    if isinstance(value, numbers.Integral):
        try:
            return int(value)
        except (TypeError, ValueError) as e:
            raise NotPlain(f"an integer that cannot be written ({e})") from None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise NotPlain(f"a string of {len(value)} characters (at most {MAX_TEXT})")
        return str(value)
    if isinstance(value, list):
        return [plain(v, None, depth + 1) for v in value]
    if isinstance(value, tuple):  # kept apart: a tuple of words is a command, a list a pipeline
        return {TAG: "tuple", "items": [plain(v, None, depth + 1) for v in value]}
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise NotPlain("a dict whose keys are not all strings")
        return {str(k): plain(v, None, depth + 1) for k, v in value.items()}
    if fields and all(hasattr(value, f) for f in fields):
        return {f: plain(getattr(value, f), None, depth + 1) for f in fields}
    raise NotPlain(f"a {type(value).__name__}")


def unplain(value: Any) -> Any:
    """A reply's plain data as the checker reads it: tagged tuples made tuples again."""
    if isinstance(value, list):
        return [unplain(v) for v in value]
    if isinstance(value, dict):
        if value.get(TAG) == "tuple" and isinstance(value.get("items"), list):
            return tuple(unplain(v) for v in value["items"])
        return {k: unplain(v) for k, v in value.items()}
    return value


def describe(value: Any, width: int = 60) -> str:
    """`value` in a few words for a message: its type and the start of its repr."""
    try:
        text = repr(value)
    except Exception as e:  # noqa: BLE001 - a student's __repr__ may raise anything
        text = f"<repr raised {type(e).__name__}>"
    text = "".join(c if c.isprintable() else "?" for c in text)
    return f"{type(value).__name__} {text[:width]}{'…' if len(text) > width else ''}"


# ---------------------------------------------------------------- inputs: tagged values


def encode(value: Any) -> Any:
    """An input as JSON-able data: the package's value types, Generators and bytes tagged."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return {TAG: "bytes", "base64": base64.b64encode(value).decode()}
    if isinstance(value, BaseException) and error_name(value) == "StoreError":
        return {TAG: "StoreError", "message": str(value)}  # an error reply, as a value
    name = type(value).__name__
    if name in VALUE_TYPES and dataclasses.is_dataclass(value):
        return {TAG: name, "fields": {f.name: encode(getattr(value, f.name))
                                      for f in dataclasses.fields(value)}}
    if type(value).__module__.startswith("numpy") and hasattr(value, "bit_generator"):
        return {TAG: "Generator", "state": value.bit_generator.state}
    if type(value).__module__.startswith("numpy") and hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot send a {name} to an answer")


def decode(value: Any) -> Any:
    """An input as the answer receives it: tagged values built again (the inverse of encode)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(TAG)
    if tag is None:
        return {k: decode(v) for k, v in value.items()}
    if tag == "bytes":
        return base64.b64decode(value["base64"])
    if tag == "StoreError":
        # ratelab.store brings redis-py (~0.15 s): only for a store's error reply
        from ..store.errors import StoreError

        return StoreError(value["message"])
    if tag == "Generator":
        rng = np.random.default_rng()
        rng.bit_generator.state = value["state"]
        return rng
    if tag in VALUE_TYPES:
        module, name = VALUE_TYPES[tag].split(":")
        cls = getattr(importlib.import_module(module), name)
        fields = {k: decode(v) for k, v in value["fields"].items()}
        for f in dataclasses.fields(cls):  # tuples of items travel as lists
            if isinstance(fields.get(f.name), list):
                fields[f.name] = tuple(fields[f.name])
        return cls(**fields)
    raise ValueError(f"unknown input tag {tag!r}")


def error_name(e: BaseException) -> str:
    """The name an exception travels under: "StoreError" for a store's error replies (of
    whatever subclass), else its class's name."""
    if any(c.__name__ == "StoreError" for c in type(e).__mro__):
        return "StoreError"
    return type(e).__name__


def generators_in(args: list) -> list[int]:
    """Positions of the seeded Generators among `args` (their state comes back after a call)."""
    return [i for i, a in enumerate(args) if isinstance(a, dict) and a.get(TAG) == "Generator"]


# ---------------------------------------------------------------- framing


def send(sock: socket.socket, message: dict) -> None:
    """Write one message: its length (4 bytes, big-endian), then its JSON."""
    data = json.dumps(message, allow_nan=True, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE_BYTES:
        raise NotPlain(f"a reply of {len(data) / 2**20:.0f} MB "
                       f"(at most {MAX_MESSAGE_BYTES // 2**20} MB)")
    sock.sendall(struct.pack(">I", len(data)) + data)


def receive(sock: socket.socket, timeout_s: float | None = None) -> dict:
    """Read one message (ProtocolError when the peer went away, sent too much or not JSON;
    TimeoutError when nothing whole came within `timeout_s`)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    head = _exactly(sock, 4, deadline)
    (size,) = struct.unpack(">I", head)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"a message of {size / 2**20:.0f} MB "
                            f"(at most {MAX_MESSAGE_BYTES // 2**20} MB)")
    try:
        message = json.loads(_exactly(sock, size, deadline))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ProtocolError("a message that is not JSON") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message that is not a JSON object")
    return message


def _exactly(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no whole message in time")
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        try:
            chunk = sock.recv(min(n - got, 1 << 20))
        except socket.timeout:
            raise TimeoutError("no whole message in time") from None
        except OSError as e:
            raise ProtocolError(f"the connection failed: {e.strerror or e}") from None
        if not chunk:
            raise ProtocolError("the other side closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)

