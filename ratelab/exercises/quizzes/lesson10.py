"""Notebook 10's questions: replaying your own logs, what would these limits have done?"""

from __future__ import annotations

from ..quiz import Choice, MultipleChoice

NOTEBOOK = "10-your-own-logs"


def questions() -> list:
    return [
        MultipleChoice(
            "None of the three per-client policies touched the log's busiest second. Why "
            "not?",
            terms=("per-client limit", "global limit"),
            choices=(
                Choice("Several clients made it, each within its own limit.", right=True,
                       why="a per-client limit does not cap the server's load: each client is "
                           "limited on its own, so many clients at once pass together. Capping the "
                           "backend's load is a global limit's or a concurrency limit's job."),
                Choice("The policies were too loose to reach it.",
                       why="tighter per-client limits would still pass a crowd of clients "
                           "each sending little; they would only stop more single clients."),
                Choice("The replay skipped the requests that had equal timestamps.",
                       why="every request was replayed, and the reference limiters, asked "
                           "request by request, stopped exactly the same ones."),
            )),
        MultipleChoice(
            "The five-minute quota (a sliding window counter) stopped fewer clients than the "
            "token bucket, but sent them away for longer. Why the long `Retry-After`?",
            terms=("sliding window counter", "Retry-After"),
            choices=(
                Choice("Its estimate drains only as the previous window slides out.",
                       right=True,
                       why="so a client over a long window's quota must wait seconds, where a "
                           "pacing policy needs only its next token. A quota over a long "
                           "window forgives slowly: what the client sent stays in the estimate "
                           "until enough of the window has passed."),
                Choice("It counts rejected requests, keeping its estimate high.",
                       why="`count_rejected` is off by default; a refused request adds "
                           "nothing to the estimate."),
                Choice("`Retry-After` is rounded up to whole minutes for quotas.",
                       why="it is rounded up to whole seconds for every policy, so that a "
                           "client waiting what it is told is never early."),
            )),
        MultipleChoice(
            "Why does the notebook replay every policy through the reference limiters as "
            "well as the compiled replay?",
            terms=("reference limiter", "replay"),
            choices=(
                Choice("The reference is the specification the replay must match.",
                       right=True,
                       why="the compiled replay must stop exactly the same requests, and the check "
                           "shows that it did. The figures come from the fast engine; asking the "
                           "readable reference request by request is what makes them trustworthy."),
                Choice("The reference limiters are the faster of the two replay engines.",
                       why="they are the slow, readable ones; the compiled replay is the fast "
                           "engine."),
                Choice("To average two slightly different answers.",
                       why="there is nothing to average: the two must agree on every request, "
                           "and a single difference would be a bug."),
            )),
        MultipleChoice(
            "A proxy that many readers share topped one policy's list of clients hit "
            "hardest. What should you weigh before limiting it per IP?",
            terms=("per-client limit",),
            choices=(
                Choice("Many people share its address, so it looks like one client.",
                       right=True,
                       why="a per-IP limit meets them together, like the users behind one NAT in "
                           "notebook 09: such a client looks busy because it is many clients; "
                           "limiting it as one refuses well-behaved readers for their neighbours."),
                Choice("Nothing: the client hit hardest is the abusive one.",
                       why="being limited most says only that its requests came close "
                           "together; a shared proxy does that with no abuse at all."),
                Choice("How often the replay and the reference disagreed on it.",
                       why="they never disagreed: the reference check found the same "
                           "decisions on every request. The question is who the client is, "
                           "not how it was counted."),
            )),
    ]
