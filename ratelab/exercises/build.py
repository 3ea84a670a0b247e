"""Student notebooks, generated from the solution notebooks.

The solution notebook is the source: ``notebooks/exercises/NN-topic-solution.ipynb``. Its
answer cells carry the tag ``solution`` and, in their metadata, the exercise they answer
(``"exercise": "token_bucket_take"``). :func:`build` writes
``notebooks/exercises/student/NN-topic.ipynb`` from it:

* a solution cell becomes a stub: imports kept, every function and method reduced to its
  signature and docstring with ``raise NotImplementedError``, every other top-level assignment
  set to None — so the check reports "not attempted" until the student writes the body;
* every other cell is kept, with its outputs cleared, and ``# NBVAL_CHECK_OUTPUT`` removed
  (a student's outputs are theirs, not the solution's);
* a markdown cell's relative links (back to the lessons, ``../01-token-bucket.ipynb``) are
  re-based one folder down, since ``student/`` lies inside the solutions' folder.

The result depends only on the solution notebook, so a test can rebuild into a temporary folder
and compare it with the committed student notebooks.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

SOLUTION_TAG = "solution"
STUB_LINE = 'raise NotImplementedError("your answer here")'
SUFFIX = "-solution.ipynb"
CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
RELATIVE_LINK = re.compile(r"(\]\(\s*)(?![a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")
"""Where a Markdown link's target starts, when it is a path relative to the notebook."""


def student_name(solution: Path) -> str:
    """``NN-topic-solution.ipynb`` -> ``NN-topic.ipynb`` (ValueError for another name)."""
    if not re.fullmatch(r"\d\d-[a-z0-9]+(-[a-z0-9]+)*-solution\.ipynb", solution.name):
        raise ValueError(f"a solution notebook is named NN-topic-solution.ipynb, got "
                         f"{solution.name!r}")
    return solution.name[: -len(SUFFIX)] + ".ipynb"


def _function_stub(node: ast.FunctionDef, lines: list[str]) -> list[str]:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    body = node.body[0]
    has_doc = isinstance(body, ast.Expr) and isinstance(getattr(body, "value", None),
                                                        ast.Constant) \
        and isinstance(body.value.value, str)
    end = body.end_lineno if has_doc else body.lineno - 1
    head = lines[first - 1:end]
    while not has_doc and head and (not head[-1].strip() or head[-1].lstrip().startswith("#")):
        head.pop()  # comments between the signature and the body are part of the answer
    indent = " " * (body.col_offset)
    return head + [indent + STUB_LINE]


def stub_source(source: str) -> str:
    """The stub of an answer cell: signatures and docstrings, bodies raising
    NotImplementedError; imports kept; other top-level names set to None."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[str] = []
    previous = None
    for node in tree.body:
        is_import = isinstance(node, (ast.Import, ast.ImportFrom))
        if out and out[-1] != "" and not (is_import and previous):
            out.append("")
        previous = is_import
        if is_import:
            out += lines[node.lineno - 1:node.end_lineno]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += _function_stub(node, lines)
            out.append("")
        elif isinstance(node, ast.ClassDef):
            body = node.body[0]
            has_doc = isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant)
            out += lines[node.lineno - 1:(body.end_lineno if has_doc else body.lineno - 1)]
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append("")
                    out += _function_stub(item, lines)
            out.append("")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                out.append(f"{ast.unparse(t)} = None  # your answer here")
    while out and out[-1] == "":
        out.pop()
    text = "\n".join(out)
    ast.parse(text)  # a stub must be valid Python
    return text


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _lines(text: str) -> list[str]:
    """A cell source as nbformat stores it: lines keeping their newlines."""
    return text.splitlines(keepends=True)


def one_folder_down(markdown: str) -> str:
    """`markdown` with each relative link target prefixed ``../``: the same files, seen from a
    notebook one folder below (addresses, anchors and absolute paths unchanged)."""
    return RELATIVE_LINK.sub(lambda m: m.group(1) + "../", markdown)


def student_notebook(solution_nb: dict) -> dict:
    """The student version of a solution notebook (a new dict; the input is not changed)."""
    nb = copy.deepcopy(solution_nb)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = _lines(one_folder_down(_source(cell)))
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        text = _source(cell)
        if SOLUTION_TAG in tags:
            text = stub_source(text)
            cell["metadata"]["tags"] = [t for t in tags if t != SOLUTION_TAG] + ["exercise"]
        else:
            text = "\n".join(line for line in text.split("\n") if line.strip() != CHECK_MARK)
        cell["source"] = _lines(text)
        cell["outputs"] = []
        cell["execution_count"] = None
        cell["metadata"].pop("execution", None)
    nb.setdefault("metadata", {}).setdefault("ratelab", {})["generated_from"] = "solution"
    return nb


def dumps(nb: dict) -> str:
    """A notebook as JSON text, as nbformat writes it (1-space indent, sorted keys)."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def build(source_dir: Path, out_dir: Path | None = None) -> list[dict]:
    """Write the student notebook of every ``*-solution.ipynb`` in `source_dir` into
    `out_dir` (default: `source_dir`/student). Returns a record per notebook."""
    source_dir = Path(source_dir)
    out_dir = Path(out_dir) if out_dir is not None else source_dir / "student"
    solutions = sorted(source_dir.glob(f"*{SUFFIX}"))
    if not solutions:
        raise FileNotFoundError(f"no *{SUFFIX} notebooks in {source_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for path in solutions:
        nb = json.loads(path.read_text())
        student = student_notebook(nb)
        target = out_dir / student_name(path)
        text = dumps(student)
        changed = not target.exists() or target.read_text() != text
        target.write_text(text)
        stubs = sum(1 for c in nb["cells"]
                    if SOLUTION_TAG in c.get("metadata", {}).get("tags", []))
        records.append({"solution": str(path), "student": str(target), "stubs": stubs,
                        "changed": changed})
    return records


def exercises_in(nb: dict) -> list[str]:
    """The exercises a notebook's answer cells are for, in order."""
    return [c["metadata"]["exercise"] for c in nb.get("cells", [])
            if c.get("cell_type") == "code" and "exercise" in c.get("metadata", {})]
