"""Whether an answer is the student's own work: what its code names, read from the notebook.

The check reads the submitted notebook's source in the grader's process (nothing the
submission runs can change it). It finds the answer's definition (the last ``def``, ``class`` or
assignment of its name), follows the notebook's own functions, classes and names that it uses,
and resolves every name they use through the notebook's imports. The answer is *flagged* when
that code reaches:

* a solution (any module of ``ratelab.exercises``; the grading sandbox has none, so such an
  import also fails there);
* the package's reference for the exercise (:attr:`ratelab.exercises.core.Exercise.references`:
  its limiter's module or class, or ``make("<its registry name>")``);
* code built or imported at run time (``exec``, ``eval``, ``compile``, ``__import__``,
  ``importlib``, ``sys.modules``, ``globals()``): the grader cannot tell what that reaches.

What it does not see: a reference's source pasted in by hand (that is plagiarism, a matter for
a similarity checker), and names the notebook never writes down in any form above.
"""

from __future__ import annotations

import ast
import importlib
import types
from dataclasses import dataclass
from typing import Any, Iterable

SOLUTIONS = "ratelab.exercises"
DYNAMIC = ("exec", "eval", "compile", "__import__", "importlib", "sys.modules", "globals",
           "__builtins__")


@dataclass(frozen=True)
class Use:
    """One thing the answer's code names, and where (cell index, line in the cell)."""

    name: str
    cell: int
    line: int


def python_source(source: str) -> str:
    """A cell's source as plain Python: IPython's magics and shell escapes transformed."""
    try:
        # IPython is optional here (the fallback below) and ~0.1 s on every `ratelab` command
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - without IPython, drop the lines Python cannot read
        return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                         for line in source.splitlines())


def _parse(cells: Iterable[str]) -> list[tuple[int, ast.Module]]:
    out = []
    for i, source in enumerate(cells):
        try:
            out.append((i, ast.parse(python_source(source))))
        except SyntaxError:
            continue  # the cell raised when it ran; it defined nothing
    return out


def _bound(node: ast.stmt) -> list[str]:
    """The top-level names a statement defines."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _imports(trees) -> dict[str, str]:
    """Every import alias of the notebook (at any depth): local name -> dotted name."""
    aliases: dict[str, str] = {}
    for _, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    local = a.asname or a.name.split(".")[0]
                    aliases[local] = a.name if a.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name == "*":
                        aliases.update(_star(node.module))
                    else:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _star(module: str) -> dict[str, str]:
    """What ``from module import *`` binds, for the package's own modules."""
    if not module.startswith("ratelab"):
        return {}
    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module that does not import binds nothing
        return {}
    names = getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")])
    return {n: f"{module}.{n}" for n in names}


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """`a.b.c` with `a` resolved through the imports, or None when it is not a name chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = aliases.get(node.id, node.id)
    return ".".join([root, *reversed(parts)])


def uses(cells: list[str], answer: str) -> list[Use] | None:
    """Everything the definition of `answer` names, following the notebook's own definitions
    it uses; None when the notebook does not define `answer`."""
    trees = _parse(cells)
    aliases = _imports(trees)
    defs: dict[str, list[tuple[int, ast.stmt]]] = {}
    for i, tree in trees:
        for node in tree.body:
            for name in _bound(node):
                defs.setdefault(name, []).append((i, node))
    if answer not in defs:
        return None
    todo, seen, found = [defs[answer][-1]], set(), []
    while todo:
        cell, node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for sub in ast.walk(node):
            line = getattr(sub, "lineno", 0)
            if isinstance(sub, ast.Name) and sub.id in defs and sub.id != answer:
                todo.extend(defs[sub.id])
            if isinstance(sub, (ast.Name, ast.Attribute)):
                dotted = _dotted(sub, aliases)
                if dotted:
                    found.append(Use(dotted, cell, line))
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                found.append(Use(repr(sub.value), cell, line))
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                module = sub.module if isinstance(sub, ast.ImportFrom) else None
                names = [module] if module else [a.name for a in sub.names]
                found += [Use(n, cell, line) for n in names if n]
    return found


def _resolve(dotted: str) -> Any:
    """The package's object at `dotted` (a module, class or function), or None."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 - not a module at this depth
            continue
        for part in parts[i:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


def _module_of(obj: Any) -> str:
    return obj.__name__ if isinstance(obj, types.ModuleType) else \
        str(getattr(obj, "__module__", "") or "")


def _inside(module: str, of: str) -> bool:
    return module == of or module.startswith(of + ".")


def borrowed(cells: list[str], answer: str, references: Iterable[str]) -> str | None:
    """Why the answer `answer` in a notebook of `cells` is not the student's own, or None.

    `references`: dotted names (modules, objects) and registry names the answer must not use
    (an exercise's ``references``); every solution module is one besides."""
    found = uses(cells, answer)
    if not found:
        return None
    dotted = [r for r in references if "." in r]
    registry = {repr(r) for r in references if "." not in r}
    banned = [o for o in (_resolve(r) for r in dotted) if o is not None]
    banned_modules = [SOLUTIONS] + [_module_of(o) for o in banned
                                    if isinstance(o, types.ModuleType)]
    package_used = False
    for use in found:
        where = f"cell {use.cell}, line {use.line}"
        if any(use.name == d or use.name.startswith(d + ".") for d in DYNAMIC):
            return (f"it runs code built or imported at run time ({use.name}, {where}): the "
                    "grader cannot tell whether it uses the reference")
        if not use.name.startswith("ratelab"):
            continue
        package_used = True
        if _inside(use.name, SOLUTIONS):
            return f"it uses a solution ({use.name}, {where})"
        obj = _resolve(use.name)
        if obj is None:
            continue
        if any(obj is b for b in banned) or any(_inside(_module_of(obj), m)
                                                for m in banned_modules):
            return f"it uses the package's reference for this exercise ({use.name}, {where})"
    if package_used:
        for use in found:
            if use.name in registry:
                return (f"it builds the package's reference limiter {use.name} (cell "
                        f"{use.cell}, line {use.line})")
    return None
