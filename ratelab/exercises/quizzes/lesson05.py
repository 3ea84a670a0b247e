"""Notebook 05's questions: how wrong the sliding window counter is, and on what traffic."""

from __future__ import annotations

from ...analysis import worst_case
from ..quiz import Choice, MultipleChoice, Number

NOTEBOOK = "05-sliding-counter-error"


def questions() -> list:
    counter_worst = int(worst_case.sliding_counter(limit=5, window=60.0).admitted_max)
    return [
        MultipleChoice(
            "Where does every wrong decision of the sliding window counter come from?",
            terms=("sliding window counter", "estimate"),
            choices=(
                Choice("Its guess that the previous window was spread evenly.", right=True,
                       why="the estimate weighs the previous window's count by the share of it "
                           "still inside the trailing window; when those requests were bunched "
                           "(early or late in it), the estimate is off, and a decision near the "
                           "limit goes the wrong way."),
                Choice("Floating-point rounding in the previous window's weight.",
                       why="time is counted in whole ticks and the estimate is exact for what "
                           "it assumes; the errors are far larger than any rounding."),
                Choice("Counting rejected requests towards the estimate.",
                       why="the errors appear in admission mode too, where rejected requests "
                           "do not count; counting them is what separates the two modes, not "
                           "what causes the error."),
                Choice("Clocks that disagree between the servers.",
                       why="the analysis runs one limiter on one clock; clock skew is "
                           "notebook 06's problem."),
            )),
        MultipleChoice(
            "What separates the error analysis's estimate mode from its admission mode?",
            terms=("estimate mode", "admission mode"),
            choices=(
                Choice("Whether a rejected request goes on counting.", right=True,
                       why="in estimate mode every request counts, rejected ones too, and the "
                           "counter's estimate is compared with the exact trailing count request "
                           "by request; in admission mode rejected requests do not count, and the "
                           "exact log and the counter run side by side, their decisions compared. "
                           "Estimate mode is how a monitoring counter sees the traffic; admission "
                           "mode is two limiters each deciding for itself. A source sitting at its "
                           "limit is where they differ most."),
                Choice("Estimate mode runs the counter; admission mode, the exact log.",
                       why="both modes compare the two: the counter against the exact count "
                           "of the same requests."),
                Choice("Admission mode is what a monitoring system sees.",
                       why="that is estimate mode: a monitor counts every request it sees, "
                           "refused or not."),
                Choice("The threshold each mode measures against.",
                       why="the threshold is the same; what differs is whether a rejected "
                           "request goes on counting."),
            )),
        MultipleChoice(
            "In the sweep over kinds of traffic, which kind did the counter get wrong even at "
            "a mean rate well below the threshold?",
            terms=("sliding window counter", "threshold"),
            choices=(
                Choice("Bursty sources.", right=True,
                       why="their bursts cross the threshold even when their mean does not, "
                           "and a burst is exactly what the even-spread assumption gets "
                           "wrong."),
                Choice("Poisson sources.",
                       why="at a quarter of the threshold they gave no wrong decisions at all; "
                           "their errors appear only as the mean rate nears the threshold."),
                Choice("Periodic sources.",
                       why="evenly spaced requests are what the counter assumes: they were "
                           "safe everywhere but at exactly the threshold."),
                Choice("Boundary-timed sources.",
                       why="they are the counter's blind spot once each burst nears the "
                           "limit, but far below it they gave no wrong decisions."),
            )),
        Number(
            "A client free to time its requests as it likes attacks a sliding window counter "
            "with a limit of 5 per window. How many requests can it get admitted within one "
            "trailing window, at most?",
            terms=("sliding window counter", "worst case"),
            value=counter_worst, tolerance=0, unit="requests",
            why="2L - 1: the limit just before the end of one window, then a burst at the very "
                "end of the next, where the previous window's weight has fallen below 1/L. The "
                "counter comes within one request of the fixed window's 2L, never holding the "
                "log's L.",
            mistakes={10: "2L is the fixed window's worst case; the counter still weighs a "
                          "sliver of the previous window, which costs the attacker one "
                          "request.",
                      5: "L is the sliding log's bound; the counter's even-spread guess can be "
                         "timed against."},
            otherwise="build the attack: the limit at the end of one window, then as many as "
                      "the estimate allows at the very end of the next.",
        ),
        MultipleChoice(
            "Cloudflare reported that 0.003% of requests were wrongly allowed or limited. What "
            "does such a figure describe?",
            terms=("sliding window counter", "threshold"),
            choices=(
                Choice("The traffic as much as the counter.", right=True,
                       why="the share depends on how many requests come from sources at or near "
                           "the threshold: with few sources near the threshold the error falls by "
                           "orders of magnitude; with many it is orders of magnitude larger, most "
                           "of all in admission mode. One algorithm, very different figures."),
                Choice("The counter's error on any traffic.",
                       why="the notebook's default population, at Cloudflare's size, got more "
                           "than a hundred times as many decisions wrong, and periodic traffic "
                           "at the threshold got about half wrong."),
                Choice("A bound the counter never exceeds.",
                       why="it is one measurement on one mix of traffic; the worst case "
                           "admits nearly twice the limit in one window."),
                Choice("A mistake: no counter can be that exact.",
                       why="a mix of traffic landed on all four of Cloudflare's figures at "
                           "once, so the figure is possible; it just is not universal."),
            )),
    ]
