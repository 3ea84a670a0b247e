"""Notebook 07's questions: when the store fails, fail-open or fail-closed."""

from __future__ import annotations

from ..quiz import Choice, MultipleChoice, Words

NOTEBOOK = "07-when-the-store-fails"


def questions() -> list:
    return [
        Words(
            "When the store cannot be reached, a gateway that admits every request it cannot "
            "check is said to ... (two words, hyphenated)",
            terms=("fail-open",),
            accepted=("fail-open", "fail open", "fails open", "failing open", "fail-open policy"),
            why="failing open keeps everyone served while the store is down, at the price of "
                "everything above the limit slipping through for as long as it lasts.",
            mistakes={"fail-closed": "failing closed is the other choice: reject what cannot "
                                     "be checked, which locks out users within their limit.",
                      "fail closed": "failing closed is the other choice: reject what cannot "
                                     "be checked, which locks out users within their limit."},
            otherwise="the two choices are named for what the gate does when it cannot ask: "
                      "stay open, or shut.",
        ),
        MultipleChoice(
            "In the simulation, `login` fails closed and `search` fails open. Why that way "
            "round?",
            terms=("fail-closed", "fail-open"),
            choices=(
                Choice("Login must not give a guesser free tries; search must stay up.",
                       right=True,
                       why="a guessing attacker must not get unlimited login tries while the store "
                           "is down, while for search, staying up matters more than an exact "
                           "limit. The choice belongs to the endpoint: what slips through costs "
                           "most on login, what is locked out costs most on search. One system can "
                           "fail both ways."),
                Choice("Login gets far less traffic, so refusing it costs nothing at all.",
                       why="failing closed locked out nearly every user in the outage, "
                           "including users well within their limit; the cost is real, and "
                           "login accepts it for safety."),
                Choice("Failing open is safer, so the busier endpoint gets it.",
                       why="failing open is the risky choice for security: during an outage "
                           "it admits everything, over the limit or not."),
            )),
        MultipleChoice(
            "As outages grew longer, what slipped through under fail-open grew steadily, "
            "while the lock-out under fail-closed grew in steps. Why the steps?",
            terms=("fail-closed", "locked out"),
            choices=(
                Choice("A healthy window admits only its first requests anyway.", right=True,
                       why="an outage locks out only what it overlaps of a window's admitted "
                           "places: a request a healthy store would have refused anyway is not "
                           "locked out by failing closed. Once an outage covers those places, "
                           "more outage in that window costs nothing more."),
                Choice("The simulation's randomness favoured some outages.",
                       why="the runs are seeded and the traffic the same; the steps follow "
                           "from the window arithmetic, not from chance."),
                Choice("The store recovered in steps after long outages.",
                       why="counting resumed at the limit as soon as the store was back, in "
                           "the next fresh window."),
            )),
        MultipleChoice(
            "A store stalls; the gateways give up after their timeout and fail open. With "
            "INCR first, what becomes of the commands they gave up on?",
            terms=("stall", "INCR"),
            choices=(
                Choice("They still run later, and count against the window.", right=True,
                       why="a timeout at the gateway does not take back a command already "
                           "sent: the store executes it later, so the requests passed without "
                           "a verdict and were counted anyway."),
                Choice("They are cancelled by the store when the gateway times out.",
                       why="nothing tells the store to drop them; the gateway only stops "
                           "waiting for the reply."),
                Choice("They run twice: once late, once on a retry.",
                       why="every request got exactly one decision and each command ran "
                           "once; nothing was retried."),
            )),
    ]
