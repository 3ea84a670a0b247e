"""What the limiter-shaped exercises share: field kinds, checks and the module-level verbs."""

from __future__ import annotations

import inspect as _inspect
import re

from .core import as_bool, as_number, as_whole, show

KINDS = {
    "allowed": as_bool,
    "remaining": as_whole,
    "retry_after": as_number,
    "estimate": as_number,
    "delay": as_number,
}


class Prose(str):
    """A hint: the text as a string, shown as plain text (not a quoted repr) in a notebook."""

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


class Code(str):
    """Python source: the plain text as a string (print it, exec it, compare it), shown as a
    highlighted code block when it is a notebook cell's last expression."""

    def _repr_markdown_(self) -> str:
        """The source as a fenced Python block (the fence longer than any backticks inside)."""
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", self)), default=0))
        return f"{fence}python\n{self.rstrip()}\n{fence}\n"

    def _repr_pretty_(self, p, cycle) -> None:  # IPython's plain text: the code, not its repr
        p.text(str(self))


def source_of(answer, imports: str = "") -> Code:
    """The source of `answer` (a function, a class, or already source text), after `imports`."""
    text = answer if isinstance(answer, str) else _inspect.getsource(answer)
    return Code((imports.strip() + "\n\n\n" if imports else "") + text)


def verbs(exercise, reference_answer, hint_text: str, imports: str = ""):
    """check(), hint() and solution() for a module whose reference answer is `reference_answer`."""

    def check(answer, *, rng=None, cases=None, quiet=False, **options):
        """Check your answer; prints the verdict and returns the Result."""
        return show(exercise.check(answer, rng=rng, cases=cases, **options), quiet)

    def hint() -> Prose:
        """A nudge towards the answer."""
        return Prose(hint_text)

    def solution() -> Code:
        """The reference answer's source, with the imports it needs (a notebook shows it as
        highlighted code; ``print`` gives the plain text)."""
        return source_of(reference_answer, imports)

    return check, hint, solution
