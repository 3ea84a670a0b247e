"""The registry algorithms' parameters, read from their signatures: names, plain types, units.

One place answers "what does `make(name, ...)` take?" for every reader: ``help(make)``,
``ratelab limiters``, the command line's ``--param NAME=VALUE`` and its per-algorithm defaults.
Everything is read from each class's ``__init__`` signature, so it cannot drift from the code.

    >>> [str(p) for p in parameters("token-bucket")]
    ['rate: float (requests per second)', 'capacity: float (requests)']
    >>> parse("gcra", ["rate=5"])
    {'rate': 5.0, 'burst': 100}
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any

from .haproxy import COMPARES
from .leaky_bucket import MODES
from .registry import REGISTRY

TYPES = {"PerSecond": float, "Seconds": float, "float": float, "int": int, "bool": bool,
         "str": str}
"""Annotation (as written in the signature) -> the plain type a value is parsed to."""

UNITS = {
    "rate": "requests per second",
    "capacity": "requests",
    "limit": "requests per window",
    "window": "seconds",
    "burst": "requests",
    "delay": "requests",
    "mode": "police or shape",
    "count_rejected": "true or false",
    "nodelay": "true or false",
    "period": "seconds, whole milliseconds",
    "compare": "gt or ge",
    "expire": "seconds, whole milliseconds",
}
"""The unit of each parameter name the registry uses (a test holds it complete)."""

CHOICES = {"mode": MODES, "compare": COMPARES}
"""Parameters that take one of a few words."""

REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One constructor parameter: its name, plain type, unit, and default (REQUIRED if none)."""

    name: str
    type: type
    unit: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def __str__(self) -> str:
        text = f"{self.name}: {self.type.__name__} ({self.unit})"
        return text if self.required else f"{text} = {self.default!r}"


def parameters(name: str) -> list[Param]:
    """The constructor parameters of registry algorithm `name`, in signature order."""
    if name not in REGISTRY:
        raise ValueError(f"unknown limiter {name!r}; choose one of {', '.join(REGISTRY)}")
    out = []
    for p in list(inspect.signature(REGISTRY[name].__init__).parameters.values())[1:]:
        annotation = p.annotation if isinstance(p.annotation, str) else \
            getattr(p.annotation, "__name__", str(p.annotation))
        out.append(Param(p.name, TYPES.get(annotation, float), UNITS.get(p.name, ""),
                         p.default))
    return out


def signature(name: str) -> str:
    """``Class(rate: float (requests per second), ...)``: the call `make(name, ...)` builds."""
    cls = REGISTRY[name]
    return f"{cls.__name__}({', '.join(str(p) for p in parameters(name))})"


def registry_doc() -> str:
    """Every registry name with its class, parameters (type, unit, default) and an example."""
    lines = []
    for name, cls in REGISTRY.items():
        lines.append(f"    {name} ({cls.__name__})")
        lines += [f"        {p}" for p in parameters(name)]
        example = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v!r}"
                            for k, v in cls.example.items())
        lines.append(f"        e.g. make({name!r}, {example})")
    return "\n".join(lines)


def value(name: str, param: Param, text: str) -> Any:
    """`text` parsed as `param` of algorithm `name`, or ValueError naming the parameter."""
    kind = param.type
    if kind is bool:
        if text.lower() in ("true", "false", "1", "0", "yes", "no"):
            return text.lower() in ("true", "1", "yes")
        raise ValueError(f"{param.name} must be true or false, got {text!r}")
    if kind is str:
        choices = CHOICES.get(param.name)
        if choices and text not in choices:
            raise ValueError(f"{param.name} must be one of {', '.join(choices)}, got {text!r}")
        return text
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{param.name} must be a number ({param.unit}), got {text!r}") from None
    if kind is int:
        if not math.isfinite(x) or x != int(x):
            raise ValueError(f"{param.name} must be a whole number ({param.unit}), got {text!r}")
        return int(x)
    return x


def parse(name: str, items: list[str] | None) -> dict[str, Any]:
    """The parameters for `make(name, ...)`: the algorithm's ``example``, overridden by `items`.

    `items` are ``NAME=VALUE`` strings. A parameter the algorithm does not take, a value that
    does not parse, or a required parameter left unset is a ValueError naming it (and listing
    what the algorithm takes); the values' ranges are checked by the class itself.
    """
    known = {p.name: p for p in parameters(name)}
    takes = ", ".join(str(p) for p in known.values())
    out: dict[str, Any] = dict(REGISTRY[name].example)
    for item in items or []:
        key, eq, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key or not text.strip():
            raise ValueError(f"expected NAME=VALUE, got {item!r}; {name} takes {takes}")
        if key not in known:
            raise ValueError(f"{name} has no parameter {key!r}; it takes {takes}")
        out[key] = value(name, known[key], text.strip())
    missing = [p.name for p in known.values() if p.required and p.name not in out]
    if missing:
        raise ValueError(f"{name} needs {', '.join(missing)}; it takes {takes}")
    return out
