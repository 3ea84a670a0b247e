"""A policy as written: a registry algorithm and its parameters, "token-bucket rate=10 ...".

:func:`parse_policy` reads what ``what-if --policy`` and ``haproxy-config --policy`` take; a
:class:`Policy` makes its limiter, and the configuration lines of the server that runs it.
Here, on the limiters' floor, so that a command that only prints a policy's lines imports no
replay, pandas or numba.
"""

from __future__ import annotations

import inspect
import shlex
from dataclasses import dataclass

from . import make
from .base import Limiter
from .registry import NAMES, REGISTRY



@dataclass(frozen=True)
class Policy:
    """A registry algorithm with its parameters, as written ("token-bucket rate=10 ...")."""

    text: str
    name: str
    params: dict

    def limiter(self) -> Limiter:
        """A fresh limiter of this policy."""
        return make(self.name, **self.params)

    @property
    def server(self) -> str | None:
        """The server that runs this policy's rule as replayed ("haproxy", "nginx"), or None."""
        return REGISTRY[self.name].server

    def config(self, key: str | None = None) -> str | None:
        """The server's configuration lines for this policy, limiting by `key` (default: the
        client's address), or None for an algorithm no server runs as modelled. ValueError
        when the server cannot write the policy (an nginx rate neither per second nor per
        minute) or `key` is not one of its expressions."""
        return None if self.server is None else self.limiter().config(key)


def parameters(name: str) -> dict[str, inspect.Parameter]:
    """The parameters the registry algorithm `name` takes, by name."""
    if name not in REGISTRY:
        raise ValueError(f"unknown limiter {name!r}; choose one of {', '.join(NAMES)}")
    return dict(list(inspect.signature(REGISTRY[name].__init__).parameters.items())[1:])


def _value(text: str, default):
    """A parameter value as written: a bool for true/false, else a number, else the text."""
    if isinstance(default, bool) or text.lower() in ("true", "false"):
        if text.lower() not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text!r}")
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_policy(text: str) -> Policy:
    """The :class:`Policy` that `text` writes: an algorithm name, then ``param=value`` words.

    "token-bucket rate=10 capacity=50"; "leaky-bucket rate=5 capacity=20 mode=shape";
    "sliding-window-log limit=600 window=60 count_rejected=true". ValueError naming the
    policy and the parameter when a name is unknown, a parameter is missing, unknown, given
    twice, or its value is refused by the limiter.
    """
    words = shlex.split(text)
    if not words:
        raise ValueError("policy is empty; write e.g. 'token-bucket rate=10 capacity=50'")
    name, *pairs = words
    try:
        known = parameters(name)
    except ValueError as e:
        raise ValueError(f"policy {text!r}: {e}") from None
    takes = ", ".join(f"{p}" + ("" if q.default is inspect.Parameter.empty else f"={q.default}")
                      for p, q in known.items())
    params: dict = {}
    for pair in pairs:
        key, eq, raw = pair.partition("=")
        key = key.replace("-", "_")
        if not eq or not key or not raw:
            raise ValueError(f"policy {text!r}: {pair!r} is not param=value ({name} takes "
                             f"{takes})")
        if key not in known:
            raise ValueError(f"policy {text!r}: unknown parameter {key!r} ({name} takes "
                             f"{takes})")
        if key in params:
            raise ValueError(f"policy {text!r}: parameter {key!r} is given twice")
        try:
            params[key] = _value(raw, known[key].default)
        except ValueError as e:
            raise ValueError(f"policy {text!r}: {key}: {e}") from None
    missing = [p for p, q in known.items() if q.default is inspect.Parameter.empty
               and p not in params]
    if missing:
        raise ValueError(f"policy {text!r}: missing {', '.join(missing)} ({name} takes "
                         f"{takes})")
    policy = Policy(" ".join(words), name, params)
    try:
        policy.limiter()
    except ValueError as e:
        raise ValueError(f"policy {text!r}: {e}") from None
    return policy
