"""The question banks: one module ``lessonNN`` per teaching notebook NN.

A bank module defines ``NOTEBOOK`` (the notebook's file name without ``.ipynb``) and
``questions()``, which returns its three to five questions
(:class:`~ratelab.exercises.quiz.MultipleChoice`, :class:`~ratelab.exercises.quiz.Number`,
:class:`~ratelab.exercises.quiz.Words`). A number a question needs is computed there, with the
package, when the bank is loaded — never typed in. Every question names the glossary terms it
tests (``docs/glossary.md``), and the test suite holds each of them to the glossary and to the
text of the bank's own notebook.

Load one with :func:`ratelab.exercises.quiz.lesson`, which checks the bank's rules.
"""

import pkgutil
import re


def found() -> tuple[str, ...]:
    """The numbers of the bank modules in this package ("00", "01", ...), found, not listed."""
    return tuple(sorted(m.name[len("lesson"):] for m in pkgutil.iter_modules(__path__)
                        if re.fullmatch(r"lesson\d\d", m.name)))


LESSONS = found()
"""The notebooks that have a quiz, by number: the module of each is ``lesson`` + number."""
