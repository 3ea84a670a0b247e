"""The predict-then-run helper: what it says for a guess, for no guess, and for bad input."""

import pytest

from ratelab.exercises import reveal
from ratelab.exercises.predict import compare, message, verdict


@pytest.mark.parametrize("guess, measured, words", [
    (14, 14, "spot on"),
    (15, 14, "within 10%"),          # 7% high
    (12.7, 14, "within 10%"),        # 9.3% low
    (17, 14, "within 25%"),          # 21% high
    (11, 14, "within 25%"),          # 21% low
    (10, 14, "within a factor of 2"),
    (28, 14, "within a factor of 2"),
    (7, 14, "within a factor of 2"),
    (100, 14, "off by more than a factor of 2"),
    (6, 14, "off by more than a factor of 2"),
    (-14, 14, "off by more than a factor of 2"),
    (0, 0, "spot on"),
    (3, 0, "off (the measurement is 0)"),
])
def test_verdict_bands(guess, measured, words):
    assert verdict(guess, measured) == words


def test_compare_record_is_signed_and_relative():
    record = compare(100, 14, unit="requests")
    assert record["difference"] == 86
    assert record["relative_pct"] == pytest.approx(614.2857, abs=1e-3)
    assert record["verdict"] == "off by more than a factor of 2"
    low = compare(7, 14)
    assert low["difference"] == -7 and low["relative_pct"] == pytest.approx(-50)


def test_reveal_prints_guess_measurement_distance_and_band(capsys):
    reveal(100, 14, unit="requests")
    assert capsys.readouterr().out == (
        "you predicted 100, measured 14 requests: 86 too high (+614%), off by more than a factor of 2\n")
    reveal(1.25, 1.0, unit="s")
    assert capsys.readouterr().out == "you predicted 1.25, measured 1 s: 0.25 too high (+25%), within 25%\n"
    reveal(9, 10)
    assert capsys.readouterr().out == "you predicted 9, measured 10: 1 too low (-10%), within 10%\n"


def test_exact_guess_and_zero_measurement():
    assert message(compare(86, 86.0, unit="requests")) == "you predicted 86, measured 86 requests: spot on"
    record = compare(2, 0)
    assert record["relative_pct"] is None
    assert message(record) == "you predicted 2, measured 0: 2 too high, off (the measurement is 0)"


def test_no_guess_says_so_and_shows_the_measurement(capsys):
    import numpy as np

    reveal(None, np.int64(14), unit="requests")
    out = capsys.readouterr().out
    assert out.startswith("no prediction written")
    assert out.rstrip().endswith("measured 14 requests")
    assert compare(None, 14)["verdict"] == "no prediction"


def test_numbers_are_shown_as_a_reader_writes_them():
    assert message(compare(None, 0.0033333)).endswith("measured 0.003333")
    assert message(compare(None, 2.0)).endswith("measured 2")
    assert message(compare(None, 123456.7)).endswith("measured 123457")


@pytest.mark.parametrize("guess", ["twelve", True, float("nan"), float("inf"), [14], "",
                                   "1,5"])
def test_a_guess_that_is_not_a_number_asks_again_without_a_traceback(guess):
    """A learner's slip gets a sentence, not a ValueError's traceback (which it once was), and
    the measurement stays folded away as if nothing were written."""
    from ratelab.exercises.predict import Revealed

    record = compare(guess, 14, unit="requests")
    assert (record["guess"], record["verdict"], record["unread"]) == (None, "not a number",
                                                                      repr(guess))
    assert message(record).startswith(f"your prediction {guess!r} is not a number")
    before, folded = Revealed(record)._repr_html_().split("<details>")
    assert "is not a number" in before and "14" not in before.replace(repr(guess), "")
    assert "measured 14 requests" in folded


@pytest.mark.parametrize("guess, read", [("14", 14.0), (" 1,500 ", 1500.0), ("11.8 %", 11.8),
                                         ("2.5 s", 2.5), (7, 7.0)])
def test_a_guess_written_as_text_that_reads_as_a_number_is_taken(guess, read):
    """By the rule a quiz's number question reads an answer with (and "1,5" is no number)."""
    from ratelab.exercises.quiz import Number

    assert compare(guess, 14)["guess"] == read
    assert Number("Q?", value=read, terms=("x",), why="w", otherwise="o").read(guess) == (read, "")


@pytest.mark.parametrize("measured", [None, "14", float("nan")])
def test_a_measurement_that_is_not_a_number_is_named(measured):
    with pytest.raises(ValueError, match="measured"):
        compare(1, measured)


def test_in_a_notebook_the_measurement_is_folded_away_until_a_prediction_is_written():
    from ratelab.exercises.predict import Revealed

    none = Revealed(compare(None, 14, unit="requests"))
    assert repr(none) == message(compare(None, 14, unit="requests"))  # what nbval compares
    shown = none._repr_html_()
    before, folded = shown.split("<details>")
    assert "14" not in before and "Write a number in the cell above" in before
    assert "show the measured value" in folded and "measured 14 requests" in folded
    guessed = Revealed(compare(100, 14, unit="<b>"))._repr_html_()
    assert "<details>" not in guessed and "measured 14 &lt;b&gt;" in guessed
