"""Notebook 03's questions: windows, the boundary exploit, and the two ways to close it."""

from __future__ import annotations

import numpy as np

from ...limiters import make
from ..quiz import Choice, MultipleChoice, Number

NOTEBOOK = "03-windows"


def counter_estimate(prev: int, cur: int, into_s: float, window_s: float = 60.0) -> float:
    """The sliding counter's estimate `into_s` seconds into a window, after `prev` requests in
    the window before and `cur` so far in this one (asked of the package's limiter)."""
    counter = make("sliding-window-counter", limit=prev + cur + 1, window=window_s)
    for t in np.linspace(0, window_s, prev, endpoint=False):
        counter.allow("client", float(t))
    for t in window_s + np.linspace(0, into_s, cur, endpoint=False):
        counter.allow("client", float(t))
    return float(counter.inspect("client", window_s + into_s)["estimate"])


def questions() -> list:
    estimate = counter_estimate(prev=40, cur=10, into_s=45.0)
    return [
        MultipleChoice(
            "A fixed window of 100 per second let 200 requests through in one rolling "
            "second, yet its own counter never read more than 100. How?",
            terms=("fixed window", "calendar-aligned", "boundary exploit"),
            choices=(
                Choice("Its count restarts at each boundary and ignores the window before.",
                       right=True,
                       why="so the limit just before the boundary and the limit just after both "
                           "pass. Each calendar window saw only its own 100, so the counter was "
                           "right about its window; the rolling second that straddles the boundary "
                           "held both halves."),
                Choice("It counted rejected requests, so its count was off.",
                       why="no request was rejected, so whether rejected requests count "
                           "changed nothing; and counting more could only admit less."),
                Choice("Its counter lost count at the boundary, through rounding errors in time.",
                       why="the counter was read every millisecond and never passed 100: it "
                           "did exactly what it was built to do."),
                Choice("The client's clock ran ahead of the limiter's clock.",
                       why="one clock decides here: the limiter's own `now`. The exploit "
                           "needs no skew, only timing around the boundary."),
            )),
        MultipleChoice(
            "The sliding log holds every trailing window to the limit exactly. What does it "
            "pay for that?",
            terms=("sliding log",),
            choices=(
                Choice("Memory: a timestamp per admitted request, per client.", right=True,
                       why="its memory grows with the limit: kilobytes per client where a window "
                           "keeps two numbers; at a million clients that is gigabytes on this "
                           "Python, tens of times the counter's two numbers."),
                Choice("Accuracy: it lets a little more than the limit through.",
                       why="it admitted exactly the limit in every trailing window; that is "
                           "what it buys with its memory."),
                Choice("Fairness: it refuses well-behaved clients more often.",
                       why="it refuses only what would put a trailing window over the limit; "
                           "a client under its limit never notices it."),
                Choice("Latency: each decision waits for the window to end.",
                       why="it decides at once, from the timestamps it already holds; nothing "
                           "waits for a window to pass."),
            )),
        Number(
            "A sliding window counter has a window of 60 s. The previous minute counted 40 "
            "requests, the current one 10 so far, and now is 45 s into the current minute. "
            "What does the counter estimate for the trailing minute, before this request?",
            terms=("sliding window counter", "estimate"),
            value=estimate, tolerance=0.01, unit="requests",
            why="prev x (1 - elapsed/W) + cur: 40 x (1 - 45/60) + 10 = 40 x 0.25 + 10. The "
                "previous minute weighs the share of it still inside the trailing minute, as "
                "if its requests had been spread evenly over it.",
            mistakes={50: "that adds the whole previous minute; only the part of it still "
                          "inside the trailing minute (a quarter, 15 of its 60 s) counts.",
                      40: "that weighs the previous minute by the time elapsed (45/60); it "
                          "weighs the share still inside the window, 1 - 45/60.",
                      10: "that leaves the previous minute out, which is what a fixed window "
                          "does; the counter still weighs a quarter of it."},
            otherwise="write the estimate as prev x (1 - elapsed/W) + cur and put in the "
                      "numbers.",
        ),
        MultipleChoice(
            "With `count_rejected=True`, what happens on a sliding log to a client that "
            "keeps sending twice its limit and never stops?",
            terms=("count_rejected", "sliding log"),
            choices=(
                Choice("It is locked out for good: its refusals keep its window full.",
                       right=True,
                       why="every refused request still counts, so the trailing window never "
                           "empties while the client keeps knocking; counting rejected "
                           "requests punishes persistence."),
                Choice("Nothing changes: it still gets its limit in every window.",
                       why="that is true of the fixed window, whose count restarts at zero "
                           "at every boundary; a trailing window keeps the refused requests "
                           "in it."),
                Choice("It gets twice its limit, because every request counts.",
                       why="counting more requests can only make the limiter refuse more, "
                           "never admit more."),
                Choice("It gets in again at each calendar boundary.",
                       why="a trailing window has no calendar boundary at which it restarts; "
                           "that is the fixed window, for which the policy changes nothing."),
            )),
        MultipleChoice(
            "Three hundred clients refused by a fixed window all retry when the window "
            "resets, as its headers tell them. What happens, and what helps?",
            terms=("reset wave", "jitter", "fixed window"),
            choices=(
                Choice("They return together at the reset; jitter spreads them out.",
                       right=True,
                       why="a wave far above the average: the reset is the same instant for "
                           "everyone refused in the window, so everyone told to wait for it "
                           "arrives together, and those refused again meet at the next reset."),
                Choice("They spread out by themselves: each was refused at another time.",
                       why="they were refused at different moments but all told the same "
                           "time to come back: the end of the window."),
                Choice("They return together; only a larger limit prevents it.",
                       why="a larger limit admits more, but everyone refused is still told "
                           "the same instant; random jitter on each retry breaks the wave at "
                           "any limit."),
            )),
    ]
