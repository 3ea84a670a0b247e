"""Notebook 09's questions: choosing a limiter, and what each one costs."""

from __future__ import annotations

from ...limiters import make
from ..quiz import Choice, MultipleChoice, Number

NOTEBOOK = "09-choosing-a-limiter"


def tat_step_s(rate: float) -> float:
    """How far one admitted request moves GCRA's TAT, asked of the package's limiter."""
    gcra = make("gcra", rate=rate, burst=5)
    before = gcra.inspect("client", 0.0)["tat"]
    gcra.allow("client", 0.0)
    return float(gcra.inspect("client", 0.0)["tat"] - before)


def questions() -> list:
    step = tat_step_s(4.0)
    return [
        MultipleChoice(
            "GCRA made the same decision as a token bucket of the same rate and burst on "
            "every request. What does it keep per key instead of a token count and a time?",
            terms=("GCRA", "TAT"),
            choices=(
                Choice("One timestamp: the theoretical arrival time (TAT).", right=True,
                       why="when the key would be caught up had it sent exactly at the rate. A "
                           "request moves the TAT one emission interval later and passes if "
                           "the new TAT is no further ahead of now than the burst allows: the "
                           "token bucket's decision written as one number."),
                Choice("A token count and the time it was counted.",
                       why="that is the token bucket's pair; GCRA folds both into a single "
                           "timestamp."),
                Choice("A log of the times of its recent requests.",
                       why="that is the sliding log, whose memory grows with the limit; GCRA "
                           "keeps one number whatever the burst."),
                Choice("A count per calendar window, as a fixed window does.",
                       why="that is the fixed window; GCRA has no windows and no boundary to "
                           "exploit."),
            )),
        Number(
            "GCRA at a rate of 4 requests per second: by how many seconds does one admitted "
            "request of cost 1 move the key's TAT later?",
            terms=("GCRA", "TAT", "emission interval"),
            value=step, tolerance=1e-6, unit="s",
            why="one emission interval, 1/rate: the time the key is allowed per request. A "
                "client sending exactly at the rate keeps its TAT at now.",
            mistakes={4: "that is the rate, in requests per second; the TAT moves by its "
                         "inverse, the time one request is worth."},
            otherwise="the TAT is a time, and one request is worth a fixed slice of time at "
                      "this rate: which?",
        ),
        MultipleChoice(
            "Fifty well-behaved users behind one NAT'd address were refused nearly half "
            "their requests, though none came near their own limit. Why?",
            terms=("multi-key limit", "NAT"),
            choices=(
                Choice("The per-IP limit counts them all as one client.", right=True,
                       why="it was sized for one household, and past its rate it refuses "
                           "everyone behind the address: a request passes only if every key's "
                           "limit admits it, and the neighbours together spent the address's "
                           "limit. An office, a campus or a carrier's NAT looks like one "
                           "abusive client."),
                Choice("Their own per-user limits refused them.",
                       why="no request was refused by a user's limit; every refusal came from "
                           "the address."),
                Choice("A refused request still spent the other keys' allowance.",
                       why="the limiter here charges only when every key passes; the refusals "
                           "come from the shared address's limit running out."),
            )),
        MultipleChoice(
            "An attacker spreads requests over a thousand addresses, each well under the "
            "per-IP limit. What does the limit do about it?",
            terms=("key",),
            choices=(
                Choice("Nothing: each address gets its own allowance.", right=True,
                       why="a limit is per key, so every request passes. Rate limiting protects "
                           "capacity from one client or one bug; it is not a defence against an "
                           "attacker who can be many clients. Authentication, abuse detection and "
                           "load shedding do that part."),
                Choice("It refuses them once their total passes the limit.",
                       why="the per-IP limit never sees a total: it counts each address on "
                           "its own, and each stayed within its limit."),
                Choice("It slows them a little, as it slows guessing on a login.",
                       why="an attacker within every key's limit is never refused, so it is "
                           "not slowed at all; the limit slows only a client that goes over "
                           "its own."),
            )),
        MultipleChoice(
            "A token bucket in front of a service lets a full bucket's burst through at "
            "once. Why must its capacity be sized from the service rate and the callers' "
            "timeout?",
            terms=("capacity", "utilisation"),
            choices=(
                Choice("The burst must drain before the callers give up.", right=True,
                       why="the service is a queue: a burst admitted at once that is not drained "
                           "in time times out after being admitted, work done for nobody. The "
                           "capacity is a promise the service must keep: the last of the burst "
                           "waits for all the others ahead of it, and near full utilisation the "
                           "queue drains slowly."),
                Choice("It need not be: only the refill rate reaches the service.",
                       why="the refill rate is what arrives after the stored tokens are "
                           "spent; a full bucket sends its whole capacity at once first."),
                Choice("A larger capacity makes the service itself faster.",
                       why="the service works at its own rate whatever the limiter admits; a "
                           "larger burst only makes a longer queue."),
            )),
    ]
