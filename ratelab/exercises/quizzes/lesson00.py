"""Notebook 00's questions: why limit, measured on a small simulated server."""

from __future__ import annotations

from ...bursts import play, stream
from ...limiters import make
from ..quiz import Choice, MultipleChoice, Number

NOTEBOOK = "00-start-here"


def questions() -> list:
    flood = int(play(make("token-bucket", rate=10, capacity=20), stream(1000, 0, 10)).allowed.sum())
    return [
        MultipleChoice(
            "With no limiter in front, the server dropped most of the nine people's requests, "
            "although together they sent well under what it serves per second. Why?",
            terms=("fairness", "leaky bucket"),
            choices=(
                Choice("The scraper filled the server's queue, leaving the people no room.",
                       right=True,
                       why="the server serves in arrival order and its queue does not know "
                           "who sent what. The scraper sends a couple of hundred times what "
                           "each person sends, so it takes almost every free place in the "
                           "queue: one heavy client crowds out everybody else."),
                Choice("The nine people together sent more requests than the server can serve.",
                       why="nine people at about 5 requests per second each send under half "
                           "of the 100 per second the server serves. On their own every one of "
                           "their requests would be served."),
                Choice("The server dropped requests at random once it was busy.",
                       why="nothing in it is random: the shaping leaky bucket drops only what "
                           "overflows its queue, first come first served. The scraper simply "
                           "comes first far more often."),
                Choice("The per-client token bucket was too strict for the people.",
                       why="in that run there was no limiter in front at all. With the "
                           "per-client token bucket, every one of the people's requests was "
                           "served."),
            )),
        MultipleChoice(
            "Why does a token bucket per client help the people, when a bigger queue at the "
            "server would not?",
            terms=("token bucket", "fairness"),
            choices=(
                Choice("It turns the scraper's excess away before it reaches the queue.",
                       right=True,
                       why="a limit per client takes away only what one client sends beyond "
                           "its own allowance. The server's capacity did not change; what "
                           "changed is whose requests get it."),
                Choice("A bigger queue would work as well, with room for everyone.",
                       why="a bigger queue fills with the scraper's requests too: at many "
                           "times the server's rate it fills any queue, and the people would "
                           "wait longer behind it before being dropped."),
                Choice("It makes the server serve more requests per second.",
                       why="the server still works through the same number per second; the "
                           "bucket changes only which requests reach it, not how fast it "
                           "serves them."),
                Choice("It gives the people priority in the server's queue.",
                       why="the queue stays first come, first served; the bucket only keeps "
                           "the scraper's surplus out of it, so the people no longer wait "
                           "behind it."),
            )),
        Number(
            "A client floods a token bucket that refills 10 tokens per second and holds 20, "
            "full at the start, for 10 seconds, far faster than the refill rate. About how "
            "many of its requests pass?",
            terms=("token bucket", "capacity", "refill rate"),
            value=flood, tolerance=1, unit="requests",
            why="the bucket pays out its capacity once, then its refill rate for as long as "
                "the flood lasts: 20 + 10 x 10 at most (one fewer here, as the flood's last "
                "request comes a moment before the last token has grown back). That is why "
                "the scraper got just under this bound, whatever it sent.",
            mistakes={100: "that is the refill rate alone over 10 s; the 20 tokens the full "
                           "bucket held at the start pass too, at once.",
                      20: "that is the capacity, paid out once; the bucket keeps refilling "
                          "at its rate for the whole 10 seconds."},
            otherwise="think of the bucket's two knobs separately: what it holds at the "
                      "start, and what it gains each second after that.",
        ),
        MultipleChoice(
            "One of the nine people sends a steady 5 requests per second through the same "
            "per-client token bucket (10 per second, bursts of 20). What happens to their "
            "requests?",
            terms=("token bucket", "refill rate"),
            choices=(
                Choice("All of them pass: the bucket never runs empty.", right=True,
                       why="the bucket refills faster than this person spends it: at 5 per second "
                           "against a refill of 10 per second, each request finds a token; a limit "
                           "sized for a heavy client is one that a well-behaved client never "
                           "notices."),
                Choice("About half are refused: the scraper shares their bucket.",
                       why="the bucket is per client: the scraper empties its own bucket, "
                           "not this person's."),
                Choice("The first 20 pass, then only some of the rest.",
                       why="20 is the largest burst at once, not a total: the bucket keeps "
                           "refilling at 10 per second, twice what this person spends."),
            )),
    ]
