"""What the limiter-shaped exercises share: field kinds, checks and the module-level verbs."""

from __future__ import annotations

import inspect as _inspect

from .core import as_bool, as_number, as_whole, show

KINDS = {
    "allowed": as_bool,
    "remaining": as_whole,
    "retry_after": as_number,
    "estimate": as_number,
    "delay": as_number,
}


def verbs(exercise, reference_answer, hint_text: str, imports: str = ""):
    """check(), hint() and solution() for a module whose reference answer is `reference_answer`."""

    def check(answer, *, rng=None, cases=None, quiet=False, **options):
        """Check your answer; prints the verdict and returns the Result."""
        return show(exercise.check(answer, rng=rng, cases=cases, **options), quiet)

    def hint() -> str:
        return hint_text

    def solution() -> str:
        """The reference answer's source, with the imports it needs."""
        text = reference_answer if isinstance(reference_answer, str) \
            else _inspect.getsource(reference_answer)
        return (imports.strip() + "\n\n\n" if imports else "") + text

    return check, hint, solution
