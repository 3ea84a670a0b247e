"""Notebook 04's questions: every algorithm on one stream, then one algorithm by hand."""

from __future__ import annotations

from ..quiz import Choice, MultipleChoice

NOTEBOOK = "04-live-limiter"


def questions() -> list:
    return [
        MultipleChoice(
            "On the boundary train (the limit just before a window boundary, the limit again "
            "just after), the fixed window admitted all of it, but the token bucket, GCRA and "
            "nginx admitted only a little more than half. Why?",
            terms=("boundary exploit", "token bucket"),
            choices=(
                Choice("They have no windows: to them the train is just one burst.",
                       right=True,
                       why="they admit their room plus what refills while it lasts. A bucket's "
                           "bound is its capacity at once and its rate after that; "
                           "a boundary means nothing to it, so timing the train around one "
                           "gains nothing."),
                Choice("They weigh the previous window, as the sliding counter does.",
                       why="that is the sliding counter's estimate; buckets, GCRA and nginx "
                           "keep tokens, a theoretical arrival time or an excess, never a "
                           "window's count."),
                Choice("They were given a smaller budget than the fixed window.",
                       why="every lane had the same budget, the same long-run rate; that is "
                           "what makes the lanes comparable."),
                Choice("They queue the train and serve it later, at the rate.",
                       why="only the shapers (the leaky bucket and nginx without `nodelay`) "
                           "queue; the token bucket and GCRA police, and they admitted the "
                           "same number as the shapers."),
            )),
        MultipleChoice(
            "Under Poisson or flood traffic, the token bucket, GCRA and nginx let nearly twice "
            "the budget through in one trailing second. Is that a fault?",
            terms=("token bucket", "burst"),
            choices=(
                Choice("No: a bucket bounds the burst and the average, not every window.",
                       right=True,
                       why="a full bucket's room plus one second of refill can pass within a "
                           "second. That is the bucket's own promise: capacity at once, then the "
                           "rate. If every trailing window must hold the limit, that calls "
                           "for the sliding log."),
                Choice("Yes: the buckets leak tokens that they should have kept for later.",
                       why="nothing leaks: the figure is exactly what a bucket promises, its "
                           "capacity at once and then its rate, and GCRA and nginx make the "
                           "same promise."),
                Choice("No: it happens only because they count rejected requests.",
                       why="they do not count rejected requests, and counting them could "
                           "only admit fewer."),
            )),
        MultipleChoice(
            "On the burst run the two shapers admitted as many requests as the token bucket. "
            "What did they pay instead of refusing?",
            terms=("shaping", "delay"),
            choices=(
                Choice("Delay: the burst's tail waited in line.", right=True,
                       why="they served what they admitted at the rate. A shaper keeps the output "
                           "at the rate by holding requests, not by refusing them; the delay at "
                           "the 95th percentile is the price."),
                Choice("Memory: a timestamp stored per request.",
                       why="that is the sliding log's price; a shaper keeps a level and a "
                           "time, or nginx's excess."),
                Choice("Nothing: they served the burst at once.",
                       why="serving at once is policing; the shapers' lanes show the admitted "
                           "requests served later, in amber."),
                Choice("Refusals: they dropped the burst's tail.",
                       why="they admitted as many as the token bucket; what they did not serve "
                           "at once, they served later."),
            )),
        MultipleChoice(
            "A response carries both `RateLimit: ...;t=1` and `X-RateLimit-Reset: 5`. How do "
            "the two reset values differ?",
            terms=("RateLimit headers", "X-RateLimit headers"),
            choices=(
                Choice("`t` is seconds from now; `X-RateLimit-Reset` is a Unix time.",
                       right=True,
                       why="`X-RateLimit-Reset` names the Unix time at which the allowance is "
                           "back, as GitHub sends it; the IETF field counts a delay from now, "
                           "so the same reset reads differently in each."),
                Choice("Both count seconds from now, so one of them is wrong.",
                       why="they count from different origins: one from now, one from the "
                           "epoch of the clock, here a clock whose t = 0 is the epoch."),
                Choice("`X-RateLimit-Reset` counts the requests left, not time.",
                       why="the requests left are `X-RateLimit-Remaining` (and `r` in "
                           "RateLimit); Reset is a time."),
                Choice("`t` is in milliseconds; `X-RateLimit-Reset` in seconds.",
                       why="both are in seconds: `t` counted from now, `X-RateLimit-Reset` "
                           "on the clock, at the moment the allowance is back."),
            )),
        MultipleChoice(
            "After the boundary train on a fixed window, the live limiter shows `own` (its "
            "window count) at the limit and `max rolling` at twice it. Which number says what "
            "the service behind the limiter received in one second?",
            terms=("fixed window", "trailing window"),
            choices=(
                Choice("`max rolling`: what got through in a trailing second.", right=True,
                       why="the rolling count looks at the last second whatever the calendar "
                           "says, which is what the service experiences."),
                Choice("`own`: the limiter's own count is the authority.",
                       why="the count is right about its own calendar window only; the "
                           "trailing second that straddles the boundary held both halves of "
                           "the train."),
                Choice("Neither: only the refused requests reach the service.",
                       why="a refused request never reaches the service; everything the "
                           "limiter admitted does, and that is what the rolling count "
                           "counts."),
            )),
    ]
