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

LESSONS = ("00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10")
"""The notebooks that have a quiz, by number: the module of each is ``lesson`` + number."""
