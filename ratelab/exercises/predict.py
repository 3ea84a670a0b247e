"""Predict, then run: the reader commits to a number, the next cell measures it and says how close.

A question in a notebook is three cells: a sentence stating exactly what will be measured, a
cell where the reader writes a number into a variable that starts as ``None``, and a cell
that measures the answer with the suite's own code and reveals it:

    >>> guess_first_second = None   # your number: requests passed in the first second
    >>> measured = 14               # the next cell computes this with the suite's code
    >>> reveal(guess_first_second, measured, unit="requests")
    no prediction written (put a number in the cell above and run both again): measured 14 requests

:func:`compare` returns the comparison as a record; :func:`reveal` prints it in one line.
A guess left at ``None`` says so and shows only the measurement, so a notebook run headless
prints the same line every time.

In a notebook the line is the plain-text form of what :func:`reveal` displays; the form a
notebook or the website shows (HTML) never puts a measurement in sight before a prediction:
with no guess it asks for one and keeps the measured value in a collapsed "show the measured
value". A stored notebook, run with every guess at None, gives nothing away.
"""

from __future__ import annotations

import html
import math
import numbers
import re

BANDS = ((0.10, "within 10%"), (0.25, "within 25%"))
"""Verdict bands: (largest |guess - measured| / |measured|, words), tightest first. Past them a
guess is "within a factor of 2" (half to double the measurement) or off by more."""

FAR_OFF = "off by more than a factor of 2"


def _number(value, name: str) -> float:
    """`value` as a finite float; ValueError naming `name` when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s,.].*)?$")
"""A number as a learner writes it, perhaps with its unit after it ("2.5 s", "75%")."""


def read_number(answer) -> float | None:
    """A learner's number: a real number, or text that reads as one ("12", "1,500", "11.8 %",
    "2.5 s"); None when it is neither, or not finite (the learner is asked again, never shown
    a traceback). Predictions and the quizzes' number questions read by this one rule."""
    if isinstance(answer, str):
        found = NUMBER.match(_ungrouped(answer))
        answer = float(found.group(1)) if found else None
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        return None
    answer = float(answer)
    return answer if math.isfinite(answer) else None


def _ungrouped(text: str) -> str:
    """`text` without thousands separators ("47,748" -> "47748")."""
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)


def _show(value: float) -> str:
    """A number as a reader writes it: whole numbers without a point, others to 4 figures."""
    if value.is_integer():
        return str(int(value))
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"


def verdict(guess: float, measured: float) -> str:
    """The band a guess falls in: "spot on", "within 10%", … or off by more than a factor of 2."""
    if guess == measured:
        return "spot on"
    if measured == 0:
        return "off (the measurement is 0)"
    relative = abs(guess - measured) / abs(measured)
    for bound, words in BANDS:
        if relative <= bound:
            return words
    return "within a factor of 2" if 0.5 <= guess / measured <= 2 else FAR_OFF


def compare(guess, measured, *, unit: str = "") -> dict:
    """The record of one prediction: guess, measured, difference, relative_pct and verdict.

    `guess` may be None (no prediction written): then only `measured` is filled in and the
    verdict is "no prediction". A guess that is not a number (``"twelve"``; text that reads as
    one, ``"12"``, is taken) is kept as written in `unread`, with the verdict "not a number".
    `relative_pct` is None when the measurement is 0.
    """
    measured = _number(measured, "measured")
    record = {"guess": None, "measured": measured, "unit": unit, "difference": None,
              "relative_pct": None, "verdict": "no prediction"}
    if guess is None:
        return record
    number = read_number(guess)
    if number is None:
        record.update(verdict="not a number", unread=repr(guess))
        return record
    guess = number
    record.update(guess=guess, difference=guess - measured, verdict=verdict(guess, measured))
    if measured != 0:
        record["relative_pct"] = 100 * (guess - measured) / abs(measured)
    return record


def message(record: dict) -> str:
    """One line saying what was predicted, what was measured, how far off and the verdict."""
    unit = f" {record['unit']}" if record["unit"] else ""
    measured = f"measured {_show(record['measured'])}{unit}"
    if record.get("unread") is not None:
        return (f"your prediction {record['unread']} is not a number (write one, like 12, in "
                "the cell above and run both again): " + measured)
    if record["guess"] is None:
        return ("no prediction written (put a number in the cell above and run both again): "
                + measured)
    you = f"you predicted {_show(record['guess'])}, {measured}"
    if record["difference"] == 0:
        return f"{you}: spot on"
    side = "too high" if record["difference"] > 0 else "too low"
    off = f"{_show(abs(record['difference']))} {side}"
    if record["relative_pct"] is not None:
        off += f" ({record['relative_pct']:+.0f}%)"
    return f"{you}: {off}, {record['verdict']}"


class Revealed:
    """A compared prediction as a notebook displays it: :func:`message` as plain text, and as
    HTML the verdict, or, with no prediction yet, a prompt and the measurement folded away."""

    def __init__(self, record: dict):
        self.record = record

    def __repr__(self) -> str:
        return message(self.record)

    def _repr_html_(self) -> str:
        if self.record["guess"] is not None:
            return f'<p class="ratelab-reveal">{html.escape(message(self.record))}</p>'
        unit = f" {self.record['unit']}" if self.record["unit"] else ""
        unread = self.record.get("unread")
        ask = ("<b>Your prediction?</b> Write a number in the cell above, then run both cells."
               if unread is None else
               f"<b>{html.escape(unread)} is not a number.</b> Write one (like 12) in the cell "
               "above, then run both cells.")
        return (f'<div class="ratelab-reveal"><p>{ask}</p><details><summary>show the measured '
                f'value</summary><p>measured {html.escape(_show(self.record["measured"]))}'
                f'{html.escape(unit)}</p></details></div>')


def reveal(guess, measured, *, unit: str = "") -> None:
    """Show how a prediction compares with the measurement (see :func:`compare`): displayed
    as :class:`Revealed` in a notebook, printed as one line elsewhere."""
    record = compare(guess, measured, unit=unit)
    try:
        from IPython import get_ipython  # only in a notebook or an IPython shell
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython else None
    if shell is not None and type(shell).__name__ != "TerminalInteractiveShell":
        from IPython.display import display  # IPython: only where a notebook shows it
        display(Revealed(record))
    else:
        print(message(record))


__all__ = ["BANDS", "Revealed", "compare", "message", "reveal", "verdict"]
