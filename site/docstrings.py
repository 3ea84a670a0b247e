r"""A Sphinx extension: plain-prose docstrings, read as the reStructuredText they nearly are.

The package's docstrings are plain prose with Sphinx roles (``:func:`make```), doctests, and
one habit reStructuredText reads otherwise: a table of names, each followed by two or more
spaces and what it is, continued on lines aligned under the description::

    allowed      whether the request passes.
    retry_after  seconds until a request of this cost would pass; 0 when allowed. A request
                 sent at exactly now + retry_after passes (float rounding included).

reStructuredText sees a paragraph with an unexpected indentation (an error, and a page that
runs the entries together). :func:`plain_prose` turns such a table into a definition list (each
name in code), shows a paragraph of commands continued with ``\`` as written (a literal
block), and escapes the two characters that prose uses as themselves but
reStructuredText as markup: ``|`` (``|estimate - real|`` is not a substitution) and a ``*``
that opens no *emphasis* (``fn(*args, **kwargs)``, ``RateLimit*``). Literal text is left
alone: inline code, roles, doctests and blocks after ``::``. Nothing in the docstrings is
changed; only what autodoc hands to Sphinx (the ``autodoc-process-docstring`` event).
"""

from __future__ import annotations

import re

TERM = re.compile(r"^(?P<indent> *)(?P<term>\S+)(?P<gap> {2,})(?P<text>\S.*)$")
"""A table's entry: a name with no space in it, two or more spaces, its description."""

CODE = re.compile(r"(:[\w:.-]+:)?`+[^`]*`+")
"""Inline code, a role or a default-role span: literal, never escaped."""

EMPHASIS = re.compile(r"(?<![\w*\\])\*{1,2}(?=[^\s*])[^*]*?(?<=[^\s*\\])\*{1,2}(?![\w*])")
"""*emphasis* or **strong**, opened and closed on one line."""


def escape_prose(text: str) -> str:
    """`text` with ``|`` and each ``*`` that opens no emphasis escaped, code left as it is.

    >>> escape_prose("the mean |estimate - real| / real, *reported*")
    'the mean \\\\|estimate - real\\\\| / real, *reported*'
    >>> escape_prose("fn(*args, **kwargs); ``a|b*``")
    'fn(\\\\*args, \\\\*\\\\*kwargs); ``a|b*``'
    """
    out, last = [], 0
    for code in CODE.finditer(text):
        out += [_escape(text[last:code.start()]), code.group()]
        last = code.end()
    return "".join(out + [_escape(text[last:])])


def _escape(prose: str) -> str:
    out, last = [], 0
    for em in EMPHASIS.finditer(prose):
        out += [_escape_all(prose[last:em.start()]), em.group()]
        last = em.end()
    return "".join(out + [_escape_all(prose[last:])])


def _escape_all(prose: str) -> str:
    return re.sub(r"(?<!\\)([|*])", r"\\\1", prose)


def table_at(lines: list[str], i: int) -> int:
    """The end of the name table starting at line `i` (`i` when none starts there).

    A table is two or more entries whose descriptions start in one column, each perhaps
    continued on lines indented at least to that column (or one entry continued on a line
    that starts exactly there); it ends at a blank line or at the first line that is neither.
    """
    first = TERM.match(lines[i])
    if not first:
        return i
    indent, column = first["indent"], first.start("text")
    entries, aligned, j = 0, 0, i
    while j < len(lines):
        m = TERM.match(lines[j])
        if m and m["indent"] == indent and m.start("text") == column:
            entries += 1
        elif lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) >= column:
            aligned += len(lines[j]) - len(lines[j].lstrip()) == column
        else:
            break
        j += 1
    return j if entries >= 2 or (entries == 1 and aligned) else i


def paragraph_end(lines: list[str], i: int) -> int:
    """The index of the blank line (or the end) after the paragraph at line `i`."""
    while i < len(lines) and lines[i].strip():
        i += 1
    return i


def continued_command(paragraph: list[str]) -> bool:
    """Whether `paragraph` holds a command continued with a backslash on a more indented line
    (examples of the command line, shown as written)."""
    def indent(line):
        return len(line) - len(line.lstrip())
    return any(a.rstrip().endswith(" \\") and indent(b) > indent(a)
               for a, b in zip(paragraph, paragraph[1:]))


def definition_list(lines: list[str]) -> list[str]:
    """A name table (its lines) as a reStructuredText definition list, names in code."""
    first = TERM.match(lines[0])
    indent, column = first["indent"], first.start("text")
    out = [""]
    for line in lines:
        m = TERM.match(line)
        if m and m["indent"] == indent and m.start("text") == column:
            out += [f"{indent}``{m['term']}``", f"{indent}   {escape_prose(m['text'])}"]
        else:
            out.append(f"{indent}   {escape_prose(line.strip())}")
    return out + [""]


def plain_prose(lines: list[str]) -> list[str]:
    """A docstring's lines (as autodoc gives them) as reStructuredText: see the module.

    >>> plain_prose(["The answer.", "", "allowed   whether it passes;", "          and more",
    ...              "limit     the most", "", "  >>> 2 * 3", "  6"])
    ['The answer.', '', '', '``allowed``', '   whether it passes;', '   and more', \
'``limit``', '   the most', '', '', '  >>> 2 * 3', '  6']
    """
    out: list[str] = []
    literal_indent = None  # inside a literal block: the indentation of the line that opened it
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(stripped) if stripped else None
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None  # the block ended: this line is prose again
            else:
                out.append(line)
                i += 1
                continue
        if stripped.startswith(">>>"):  # a doctest runs to the next blank line
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            continue
        if i == 0 or not lines[i - 1].strip():
            end = paragraph_end(lines, i)
            if continued_command(lines[i:end]):
                out += ["", " " * indent + "::", ""] + ["    " + l for l in lines[i:end]] + [""]
                i = end
                continue
        end = table_at(lines, i)
        if end > i:
            out += definition_list(lines[i:end])
            i = end
            continue
        if stripped.startswith(("| ", "+-", "+=", "..")) or stripped == "|":
            out.append(line)  # a table, a line block, a directive or comment: markup on purpose
        else:
            bullet = re.match(r"([*+-]|\d+\.) ", stripped)  # a list item keeps its marker
            head = bullet.group() if bullet else ""
            out.append(line[:indent] + head + escape_prose(stripped[len(head):]))
        if stripped.endswith("::"):
            literal_indent = indent
        i += 1
    return out


def process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    """autodoc's hook: rewrite `lines` in place."""
    lines[:] = plain_prose(lines)


def setup(app):
    app.connect("autodoc-process-docstring", process_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
