"""Notebook 01's questions: the token bucket, a value, one function and two knobs."""

from __future__ import annotations

from ...bursts import play, stream
from ...limiters import make
from ..quiz import Choice, MultipleChoice, Number

NOTEBOOK = "01-token-bucket"


def questions() -> list:
    passed = int(play(make("token-bucket", rate=2, capacity=6), stream(1000, 0, 10)).allowed.sum())
    return [
        MultipleChoice(
            "Which knob moves the long-run average a token bucket lets through a client that "
            "always sends more than it may?",
            terms=("refill rate", "capacity"),
            choices=(
                Choice("The refill rate.", right=True,
                       why="over a long run the bucket passes capacity + rate x time. The "
                           "capacity is paid out once, so over a minute or an hour the "
                           "average is the rate; raising the rate moved the minute's "
                           "average with it."),
                Choice("The capacity.",
                       why="the capacity is paid out once, at the start: raising it added its "
                           "extra tokens to the first second, one for one, and hardly moved "
                           "the average over the minute."),
                Choice("Both, equally.",
                       why="they do different jobs. The capacity term of capacity + rate x "
                           "time does not grow with time, so its share of the average shrinks "
                           "the longer the run."),
                Choice("Neither: how fast the client sends decides the average.",
                       why="a client that sends more than the rate gets the rate on average "
                           "however much more it sends; the surplus is refused."),
            )),
        Number(
            "A token bucket refilling 2 tokens per second with room for 6, full at the start, "
            "receives a flood far faster than its rate for 10 seconds. About how many "
            "requests pass in those 10 seconds?",
            terms=("token bucket", "capacity", "refill rate"),
            value=passed, tolerance=1, unit="requests",
            why="capacity + rate x time: the 6 stored tokens pass at once, then 2 per second "
                "refill for the 10 seconds (the flood's last request comes a moment before "
                "the last of them has grown back).",
            mistakes={20: "that is the refill alone; the 6 tokens the full bucket held pass "
                          "too, at the start.",
                      6: "that is the capacity, spent in the first instant; the bucket keeps "
                         "refilling at 2 per second after that.",
                      60: "the capacity is paid out once, not once per second; after the "
                          "first instant only the refill rate gets through."},
            otherwise="split it into the two knobs' jobs: what passes at once, and what "
                      "refills over the 10 seconds.",
        ),
        MultipleChoice(
            "What does the token bucket need to remember about a client between two of its "
            "requests?",
            terms=("token bucket",),
            choices=(
                Choice("The tokens it held, and the time they were counted.", right=True,
                       why="that value and one function are the whole algorithm: at the next "
                           "request the refill is the time elapsed times the rate, capped at "
                           "the capacity, so nothing has to run in between."),
                Choice("The time of every request it admitted in the last second.",
                       why="that is the sliding log of notebook 03; the bucket forgets a "
                           "request once its token is spent."),
                Choice("Nothing: a background timer adds tokens every tick.",
                       why="no timer runs between requests. `take` computes the refill from "
                           "the time elapsed when the next request arrives."),
                Choice("How many requests it sent in the current calendar second.",
                       why="that is a fixed window's count; the bucket has no windows, only "
                           "tokens refilling continuously."),
            )),
        MultipleChoice(
            "A client that was idle fires a burst at a token bucket with a large capacity. "
            "What decides how much the service behind the bucket must absorb at once?",
            terms=("capacity", "burst"),
            choices=(
                Choice("The bucket's capacity.", right=True,
                       why="after an idle spell the bucket is full, and every stored token "
                           "can be spent at once. Whatever the capacity lets through, the "
                           "next hop must queue or drop: size it to what the downstream can "
                           "queue."),
                Choice("The refill rate.",
                       why="the rate decides what passes once the stored tokens are gone; "
                           "the first instant of a burst is all capacity."),
                Choice("How fast the client sends.",
                       why="the client can send as fast as it likes; the bucket lets through "
                           "at most its capacity at once, so the capacity is the bound the "
                           "downstream sees."),
            )),
        MultipleChoice(
            "After a burst has emptied a token bucket and the client stops, how does the "
            "bucket recover?",
            terms=("token bucket", "refill rate"),
            choices=(
                Choice("Its tokens climb back at the refill rate until it is full again.",
                       right=True,
                       why="the refill is continuous: rate tokens per second of idle time, "
                           "never past the capacity, as the tokens counted after the burst "
                           "showed."),
                Choice("It is full again at the start of the next second.",
                       why="that is how a fixed window behaves at its boundary; a bucket has "
                           "no boundaries, only a rate."),
                Choice("It stays empty until the client has been quiet for a whole window.",
                       why="a bucket has no window to wait out: every moment of quiet adds "
                           "its share of tokens."),
            )),
    ]
