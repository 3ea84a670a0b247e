"""Notebook 11's questions: the appendix that calibrates the population against Cloudflare's
figures."""

from __future__ import annotations

from ..quiz import Choice, MultipleChoice

NOTEBOOK = "11-appendix-calibrating-the-population"


def questions() -> list:
    return [
        MultipleChoice(
            "The run at a hundredth of Cloudflare's size found no false positive; the "
            "full-scale run of the same population found some. What does the small run's "
            "0 tell you?",
            terms=("false negative", "threshold"),
            choices=(
                Choice("That they are rare, not that they never happen.", right=True,
                       why="at the full run's rate per source, the expected count among a "
                           "hundred times fewer sources is so small that seeing none is a "
                           "common outcome. A count of a few rare sources needs many sources "
                           "before it measures a rate."),
                Choice("That a smaller population makes the counter more accurate.",
                       why="each source sends as much in both runs; what differs is how "
                           "many sources there are to be unlucky. The per-request figures "
                           "(the share of wrong decisions, the mean difference) agree across "
                           "the two sizes within a factor of two."),
                Choice("That the small run has a bug the full-scale run does not.",
                       why="both run the same code on the same kind of traffic; the "
                           "difference is chance, and the appendix works out how likely "
                           "seeing none was."),
            )),
        MultipleChoice(
            "Why does the search run its best few mixes again at ten times the size before "
            "choosing a winner?",
            terms=("false negative",),
            choices=(
                Choice("A small run's count of false negatives is noisy, and a search keeps "
                       "the luckiest.", right=True,
                       why="a round that keeps the lowest score it meets keeps the mix whose "
                           "few rare sources happened to come out well. Run bigger, such a "
                           "count means more: the winner's single false negative at a tenth "
                           "of the scale became many more at full scale."),
                Choice("Bigger runs of the same mix make fewer wrong decisions.",
                       why="the share of wrong decisions is a property of the traffic, not "
                           "of the run's size; a bigger run measures it more precisely, it "
                           "does not lower it."),
                Choice("To try mixes that the small rounds could not reach.",
                       why="round (c) changes no knob: it re-runs the same finalists; only "
                           "the steps of rounds (b) and (d) move a mix."),
            )),
        MultipleChoice(
            "In the mix that lands near all four of Cloudflare's figures, whose requests are "
            "the wrong decisions?",
            terms=("threshold", "estimate mode"),
            choices=(
                Choice("The abusive sources': floods far over the threshold.", right=True,
                       why="every source over the threshold is a flood, far enough over that "
                           "the counter misses none of them, and the close calls at the limit "
                           "are theirs; humans, apps and bots all stay clear of it."),
                Choice("The apps': bursts a little over the threshold.",
                       why="that was the search's winner, and it is why its false negatives "
                           "missed: sources a little over are the ones a counter fails to "
                           "limit at all. In the found mix no app goes over."),
                Choice("The bots': they send most of the requests.",
                       why="they send most of the requests, but steadily and under the "
                           "limit; a source that never nears the threshold gets no close "
                           "decision, however much it sends."),
            )),
        MultipleChoice(
            "Besides the four figures, the search scores each mix on its volume: its requests, "
            "scaled to Cloudflare's number of sources, against their 400 million. Why?",
            terms=("sliding window counter",),
            choices=(
                Choice("Or it could hit the figures by changing how much traffic there is.",
                       right=True,
                       why="with less traffic fewer sources reach the threshold, and with "
                           "more, every source is busier and the counter's relative error "
                           "smaller: the figures would move for a reason that is not the mix. "
                           "Holding the volume to Cloudflare's keeps the comparison about the "
                           "kind of traffic."),
                Choice("Because the counter's memory grows with the number of requests.",
                       why="the sliding window counter keeps two numbers per source whatever "
                           "it sends; its memory grows with sources, not requests."),
                Choice("To keep every run of the search under a minute.",
                       why="the volume term says nothing about time; the search's sizes are "
                           "set by its options, and its full-scale runs take far longer."),
            )),
    ]
