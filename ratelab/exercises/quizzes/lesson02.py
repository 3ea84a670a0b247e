"""Notebook 02's questions: the leaky bucket, policing or shaping, and nginx's limit_req."""

from __future__ import annotations

from ...bursts import burst, play
from ...limiters import make
from ..quiz import Choice, MultipleChoice, Number, Words

NOTEBOOK = "02-leaky-bucket"


def questions() -> list:
    last_wait = float(play(make("leaky-bucket", rate=4, capacity=9, mode="shape"),
                           burst(9)).delay.max())
    return [
        MultipleChoice(
            "A policing and a shaping leaky bucket with the same rate and capacity receive "
            "the same traffic. What is different about what comes out?",
            terms=("policing", "shaping"),
            choices=(
                Choice("When the admitted requests leave.", right=True,
                       why="the policer passes them at once, keeping the input's shape; the "
                           "shaper makes them wait and sends them 1/rate apart. Both decide "
                           "with the same step, so they admit and drop the very same "
                           "requests."),
                Choice("Which requests are admitted.",
                       why="the same step decides for both readings, so the very same "
                           "requests fit and pass; only their delay differs."),
                Choice("How many requests are dropped.",
                       why="the decision is the same for both readings: the same requests "
                           "fit in the bucket, so both passed and dropped the same ones."),
                Choice("The shaper drops nothing at all.",
                       why="a shaper drops too: whatever overflows its queue. Only the "
                           "requests that fit are queued."),
            )),
        Words(
            "Which reading of the leaky bucket turns any input, however bursty, into a "
            "metronome of one request every 1/rate seconds? (one word)",
            terms=("shaping",),
            accepted=("shaping", "shaper", "shape", "a shaper", "queue", "the queue"),
            why="a shaper queues what it admits and lets it leave at the rate, so the closest "
                "departures are exactly 1/rate apart whatever came in; its queue size only "
                "decides how many get to wait.",
            mistakes={"policing": "a policer lets what fits pass at once, so what it passes "
                                  "keeps the arrivals' own spacing, bursts and all.",
                      "policer": "a policer lets what fits pass at once, so what it passes "
                                 "keeps the arrivals' own spacing, bursts and all."},
            otherwise="the two readings are the meter and the queue: which one makes "
                      "requests wait in line?",
        ),
        Number(
            "Nine requests arrive at the same instant at a shaper that leaks 4 per second "
            "and has room for all nine. How long, in seconds, does the last one wait before "
            "it is served?",
            terms=("shaping",),
            value=last_wait, tolerance=0.01, unit="s",
            why="the first leaves at once and each of the others one spacing of 1/rate after "
                "the one before, so the last waits (n - 1)/rate: 8/4. A shaper turns a burst "
                "into a delay that grows with the burst.",
            mistakes={2.25: "that is n/rate, as if the first had to wait a spacing too; it "
                            "leaves at once.",
                      0.25: "that is one spacing, the wait of the second request; the last "
                            "waits behind all the others."},
            otherwise="count the spacings: how many requests leave before the last one, "
                      "each 1/rate after the one before?",
        ),
        MultipleChoice(
            "nginx's `limit_req zone=z rate=5r/s burst=8` meets 12 requests at one instant, "
            "written three ways: `burst=8`, `burst=8 nodelay` and `burst=8 delay=4`. Which is "
            "true?",
            terms=("nginx limit_req", "nodelay", "excess"),
            choices=(
                Choice("`burst` sets how many get in; the others set when they are served.",
                       right=True,
                       why="all three admit the same requests and refuse the same last ones. "
                           "Plain `burst` queues them 1/rate apart, `nodelay` serves them at "
                           "once, and `delay=4` serves a small burst at once and shapes only "
                           "its tail."),
                Choice("`nodelay` admits more requests than plain `burst` does.",
                       why="it admits exactly as many: the excess it keeps is the same. It "
                           "only stops making the admitted ones wait."),
                Choice("`delay=4` refuses every admitted request that comes after the fourth.",
                       why="it admits as many as plain `burst`: the first request and four "
                           "more are served at once, and the rest of the admitted ones are "
                           "delayed, not refused."),
                Choice("Plain `burst=8` serves all the admitted requests at once.",
                       why="without `nodelay` nginx shapes: it holds each admitted request "
                           "until its excess has drained, so they leave 1/rate apart."),
            )),
        MultipleChoice(
            "Why set `limit_req_status 429` when nginx limits clients?",
            terms=("nginx limit_req", "429 Too Many Requests", "503 Service Unavailable"),
            choices=(
                Choice("nginx's default, 503, says the server is in trouble.", right=True,
                       why="a 429 says that this client sent too many, while many clients and "
                           "proxies retry a 503 or mark the server down, which is the wrong "
                           "reaction to a client being limited. The decision is the same either "
                           "way: only what it says changes."),
                Choice("A 429 makes nginx refuse fewer requests.",
                       why="the status is chosen after the decision: the same requests are "
                           "refused, only the status they carry differs."),
                Choice("429 is nginx's default; the line only documents it.",
                       why="nginx's `limit_req` refuses with 503 Service Unavailable unless "
                           "the configuration says otherwise."),
                Choice("Only a 429 can carry a `Retry-After` header.",
                       why="a 503 may carry `Retry-After` too; the difference is what the "
                           "status tells the client: trouble at the server, or too many from "
                           "this client."),
            )),
    ]
