"""Notebook 08's questions: saying no, 429s, RateLimit headers and retry storms."""

from __future__ import annotations

from ..quiz import Choice, MultipleChoice

NOTEBOOK = "08-saying-no"


def questions() -> list:
    return [
        MultipleChoice(
            "A token bucket needs only a fifth of a second for the next token, yet its "
            "`Retry-After` says 1. Why round up?",
            terms=("Retry-After",),
            choices=(
                Choice("So that a client waiting what it is told is never early.", right=True,
                       why="the header carries whole seconds; rounding down would send the "
                           "client back before its token has grown, to be refused again."),
                Choice("To slow clients down, as a penalty for being refused.",
                       why="a second is the smallest whole wait that is not too early; the "
                           "rounding is about the header's unit, not about punishing."),
                Choice("Because the bucket refills only once a second.",
                       why="the bucket refills continuously; only the header is in whole "
                           "seconds."),
            )),
        MultipleChoice(
            "During the surge, clients with full jitter multiplied the load the server had to "
            "read more than clients that retried at once. Why?",
            terms=("full jitter", "retry storm"),
            choices=(
                Choice("It waits half as long on average, and nothing was in step.",
                       right=True,
                       why="full jitter waits a random time between 0 and the exponential wait, so "
                           "it tries more often; and these clients arrived at random, so there was "
                           "nothing for jitter to break up. Jitter is not meant to lower the "
                           "total; it breaks up clients that retry in step, and Poisson arrivals "
                           "never were."),
                Choice("Jitter always raises the load and should not be used.",
                       why="after an outage, when every client was in step, full jitter cut "
                           "the tallest burst of retries to a fraction and finished the same "
                           "jobs sooner with fewer attempts."),
                Choice("Its random waits were drawn from the wrong distribution of delays.",
                       why="the waits were sampled from the package's own `retry_delay`: on "
                           "average half the exponential wait, as full jitter is defined."),
            )),
        MultipleChoice(
            "When does adding jitter to retries help most?",
            terms=("jitter", "reset wave"),
            choices=(
                Choice("When clients retry in step, as after an outage.", right=True,
                       why="all reconnecting at the same instant, or all told the same reset "
                           "time: then their retries land together in waves the server refuses "
                           "almost whole; jitter spreads each wave over its interval."),
                Choice("When clients arrive at random and independently.",
                       why="they are already spread out; jitter has nothing to break up and, "
                           "by shortening the average wait, can even raise the load."),
                Choice("Always: it lowers the number of attempts.",
                       why="during the surge, with clients that arrived at random, full "
                           "jitter multiplied the load the most."),
            )),
        MultipleChoice(
            "Which lets a well-behaved client pace itself so that it is never refused?",
            terms=("RateLimit headers", "pacing"),
            choices=(
                Choice("The `RateLimit` field on every response.", right=True,
                       why="it says what remains and when it resets, so the client spreads what "
                           "remains over the time left. Published on every answer, the state lets "
                           "a client plan before it is refused; the pacing client was never "
                           "refused and offered exactly what was accepted."),
                Choice("`Retry-After`, sent with each refusal.",
                       why="it comes only with a refusal, after the client has already been "
                           "told no; it says when to come back, not how to avoid it."),
                Choice("The 429 status of the refused requests.",
                       why="a status says only that this request was refused, nothing about "
                           "how much remains."),
                Choice("`X-RateLimit-Limit`, the quota per window.",
                       why="the limit says how many per window, but not how many remain or "
                           "when the window resets."),
            )),
        MultipleChoice(
            "In the storm, the accepted load never exceeded what the bucket allows. What, "
            "then, do retries cost the server?",
            terms=("retry storm", "offered load"),
            choices=(
                Choice("The offered load: every attempt is read and refused.", right=True,
                       why="attempts were several times the demand, and the limiter caps what is "
                           "accepted, not what arrives; refused attempts are work too, and how "
                           "much depends on where the limiter sits (notebook 09)."),
                Choice("Nothing: a refused request costs the server nothing.",
                       why="a refusal still has to be received and answered; at several times "
                           "the demand, the refusals add up."),
                Choice("More accepted requests than the bucket allows.",
                       why="the bucket held the accepted load to its rate, plus the tokens it "
                           "held when the surge began."),
            )),
    ]
