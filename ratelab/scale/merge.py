"""Tallies that add: a dataclass added into another of its class, field by field.

A part's result is a tally (a dataclass of counts); tallies of disjoint parts add. Each field
says how in its metadata, ``field(..., metadata={"add": HOW})``, and :func:`add_fields` walks
:func:`dataclasses.fields`, so a field added later is added too — or, when its value has no
obvious sum and no rule (a list, a Series), the addition fails naming it, never skipping it.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from numbers import Number
from typing import Any, Callable

import numpy as np

RULES = ("sum", "max", "min", "same", "extend", "pairwise")
"""How a field adds (``metadata["add"]``; "sum" when it says nothing), or a function
``(mine, theirs) -> sum``."""


def add_fields(total, part):
    """Add the dataclass `part` into `total` (the same class), field by field; `total`.

    Rules (``metadata["add"]`` of each field):

    ``"sum"`` (the default)
        numbers add; numpy arrays add in place; a tally (a dataclass with ``add``) adds
        `part`'s into it; a dict adds key by key (a key new to `total` is taken as it is);
    ``"max"``, ``"min"``
        the larger, the smaller;
    ``"same"``
        must be equal in both (limit, window, policies ...): a ValueError before anything
        is added otherwise;
    ``"extend"``
        lists: `part`'s items after `total`'s;
    ``"pairwise"``
        lists of tallies of the same length: added item by item;
    a function
        ``(mine, theirs) -> the sum``.

    A value with no sum under its rule (a list or a Series left to "sum") is a TypeError
    naming the field.
    """
    if type(part) is not type(total):
        raise TypeError(f"a {type(part).__name__} does not add into a {type(total).__name__}")
    every = fields(total)
    same = [f.name for f in every if f.metadata.get("add") == "same"]
    if any(getattr(total, n) != getattr(part, n) for n in same):
        raise ValueError(f"tallies of different {_either(same)} do not add")
    for f in every:
        how = f.metadata.get("add", "sum")
        if how != "same":
            mine, theirs = getattr(total, f.name), getattr(part, f.name)
            setattr(total, f.name, _add(how, mine, theirs, f"{type(total).__name__}.{f.name}"))
    return total


def _either(names: list[str]) -> str:
    """"a", "a or b", "a, b or c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _add(how: str | Callable, mine: Any, theirs: Any, name: str) -> Any:
    """`mine` and `theirs` added by rule `how` (see :func:`add_fields`)."""
    if callable(how):
        return how(mine, theirs)
    if how == "sum":
        return _sum(mine, theirs, name)
    if how == "max":
        return max(mine, theirs)
    if how == "min":
        return min(mine, theirs)
    if how == "extend" and isinstance(mine, list):
        mine.extend(theirs)
        return mine
    if how == "pairwise" and isinstance(mine, list):
        if len(mine) != len(theirs):
            raise ValueError(f"{name}: {len(mine)} and {len(theirs)} items do not add in pairs")
        return [_sum(a, b, name) for a, b in zip(mine, theirs)]
    raise TypeError(f"{name}: rule {how!r} does not add a {type(mine).__name__} (rules: "
                    f"{', '.join(RULES)}, or a function)")


def _sum(mine: Any, theirs: Any, name: str) -> Any:
    """The sum of two values of a field left to "sum"."""
    if isinstance(mine, np.ndarray):
        mine += theirs
        return mine
    if isinstance(mine, Number) and not isinstance(mine, bool):
        return mine + theirs
    if is_dataclass(mine) and hasattr(mine, "add"):
        mine.add(theirs)
        return mine
    if isinstance(mine, dict):
        for k, v in theirs.items():
            mine[k] = _sum(mine[k], v, f"{name}[{k!r}]") if k in mine else v
        return mine
    raise TypeError(f"{name}: a {type(mine).__name__} has no sum; say how it adds "
                    f"(field(metadata={{'add': ...}}): {', '.join(RULES)}, or a function)")
