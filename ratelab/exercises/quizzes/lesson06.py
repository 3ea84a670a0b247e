"""Notebook 06's questions: distributed races, when gateways share a limit."""

from __future__ import annotations

from ..quiz import Choice, MultipleChoice

NOTEBOOK = "06-distributed-races"


def questions() -> list:
    return [
        MultipleChoice(
            "Ten gateways each keep their own counter with the full limit of 100 per window. "
            "Why do they admit ten times the limit?",
            terms=("gateway",),
            choices=(
                Choice("Each gateway admits its own full limit.", right=True,
                       why="a limit counted in N places is N times the limit: no gateway knows "
                           "what the others admitted, so each spends the whole limit; a limit has "
                           "to be counted in one place."),
                Choice("Their counters race with each other.",
                       why="they share nothing, so there is nothing to race on; each counter "
                           "is exact about its own gateway."),
                Choice("The network delays the counters' updates.",
                       why="the counters are local; no update crosses the network at all."),
            )),
        MultipleChoice(
            "With the naive GET, compare, INCR, two gateways both read 99 and the counter "
            "ends at 101. Every Redis command ran atomically. What was not atomic?",
            terms=("check-then-act race", "INCR"),
            choices=(
                Choice("The decision: another GET can fall between GET and INCR.",
                       right=True,
                       why="GET and INCR are two commands. Each command is atomic, but the read, "
                           "the comparison and the write are not one step; that gap is the "
                           "check-then-act race, and it is a round trip wide."),
                Choice("INCR itself: two INCRs arriving together can overwrite each other.",
                       why="INCR is atomic and the counter did count both (101); the mistake "
                           "was deciding on a value that was already out of date."),
                Choice("The network: the store lost one of the INCRs.",
                       why="both INCRs arrived and ran; no command was lost, the decision was "
                           "made on a stale read."),
            )),
        MultipleChoice(
            "Which fixes admit exactly the limit, in about one round trip per request?",
            terms=("INCR", "Lua script", "WATCH/MULTI"),
            choices=(
                Choice("INCR first, then compare the count the store returns.", right=True,
                       why="the store's reply is the count including this request, so no "
                           "other gateway can fall between the read and the write: there is "
                           "no separate read."),
                Choice("A Lua script that reads, compares and writes.", right=True,
                       why="Redis runs a script whole, with no other command between its "
                           "lines, so the decision happens inside one atomic step."),
                Choice("WATCH/MULTI, retrying when the key changed.",
                       why="it never over-admits, but under contention it pays in retries, "
                           "many round trips per request, and gives up on requests when they "
                           "run out."),
                Choice("Counting locally and syncing every few milliseconds.",
                       why="between syncs every gateway spends the same remaining allowance, "
                           "so it overshoots the limit; it saves round trips, it does not "
                           "hold the limit."),
            )),
        MultipleChoice(
            "Why is giving each of N gateways limit/N unfair, although it never over-admits?",
            terms=("limit/N split", "gateway"),
            choices=(
                Choice("The busy gateway refuses while others' shares go unused.",
                       right=True,
                       why="load is rarely spread evenly, so clients behind the busy gateway are "
                           "throttled for other clients' unused share; even an even split loses "
                           "some, because the sends are never exactly equal."),
                Choice("It over-admits whenever one of the gateways fails or restarts.",
                       why="a failed gateway admits nothing; the others still hold only "
                           "their own shares, so the split admits less, not more."),
                Choice("It needs a round trip to the store per request.",
                       why="a split needs no store at all: each gateway counts its own share "
                           "locally, which is its one advantage."),
            )),
        MultipleChoice(
            "A token bucket script takes `now` from the calling gateway, and one gateway's "
            "clock runs ahead of the other's. What goes wrong?",
            terms=("clock skew", "Lua script"),
            choices=(
                Choice("Each hop to the gateway ahead refills the bucket again.",
                       right=True,
                       why="far more than the bucket's promise gets through: the bucket trusts the "
                           "`now` it is given, so every hop to the gateway that is ahead adds "
                           "refill that never happened. Such scripts need synchronised clocks, or "
                           "the store's own time."),
                Choice("Nothing: a bucket has no windows for skew to shift.",
                       why="it has no windows to put requests in the wrong one, but its "
                           "refill is computed from time, and skew makes time jump."),
                Choice("The gateway that is behind is refused everything.",
                       why="a clock behind only sees less time pass; it does not shut its "
                           "gateway out. The overshoot comes from every hop to the gateway "
                           "that is ahead."),
            )),
    ]
