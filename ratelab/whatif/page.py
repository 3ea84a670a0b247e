"""The what-if record as one self-contained HTML page (``ratelab what-if --report out.html``).

The candidate policies side by side: what each limits, by hour, the clients hit hardest, the
worst minute, what the backend would have received, the 429s and their Retry-After, then the
load report (what was read from the log, and what was left out). Figures and tables are those
of :mod:`ratelab.whatif.figures`, the ones notebook 10 draws; the page is built by
:mod:`ratelab.page` (nothing fetched, readable on a phone and a desktop).

    >>> write_page(what_if(trace, policies, source="access.log"), "out.html")  # doctest: +SKIP
"""

from __future__ import annotations

from .. import __version__
from ..page import document, figure_html, paragraph, side_by_side, table_html, write
from ..traces.report import describe_html
from . import TOP_CLIENTS
from . import figures as F

SECTIONS = ("policies", "by-hour", "clients", "worst-minute", "backend", "retry-after",
            "load-report")
"""The page's sections, by anchor, in order (``out.html#by-hour``)."""


def page(record: dict) -> str:
    """The page of a what-if record (:func:`ratelab.whatif.what_if`'s), as HTML text."""
    pols = record["policies"]
    meta = [f"{record['source'] or 'a trace'}: {record['requests']:,} requests from "
            f"{record['clients']:,} clients, {F.when(record['first_s'])} to "
            f"{F.when(record['last_s'])}",
            f"{len(pols)} candidate {'policy' if len(pols) == 1 else 'policies'}, every "
            "client limited on its own: " + "; ".join(p["policy"] for p in pols),
            f"ratelab {__version__} what-if"]
    parts = [
        ("policies", "The policies side by side", table_html(F.summary(record)) + paragraph(
            "A request limited is one the policy would have refused (a 429) or delayed past "
            "its bound; a client limited had at least one.")),
        ("by-hour", "Limited requests by hour",
         figure_html(F.limited_by_hour(record), "requests each policy limited, by hour")),
        ("clients", "The clients hit hardest", _clients(record)),
        ("worst-minute", "The worst minute", table_html(F.worst_minute(record)) + paragraph(
            "The calendar minute in which the policy limited most requests (the earliest of "
            "equals).")),
        ("backend", "What the backend would have received",
         figure_html(F.backend_by_hour(record), "the busiest second of each hour, offered "
                                                "and admitted under each policy")
         + table_html(F.backend(record)) + paragraph(
             "Admitted requests are counted when they leave: a shaping policy delays some, "
             "which moves them to a later second.")),
        ("retry-after", "The 429s and their Retry-After",
         figure_html(F.retry_after(record), "how many 429s carried each Retry-After")
         + table_html(F.retry_after_stats(record)) + paragraph(
             "Retry-After in whole seconds, rounded up as the header is: a client that waits "
             "what it is told is never early.")),
        ("load-report", "The load report", _load_report(record)),
    ]
    return document(f"What if: {record['source'] or 'a trace'}", meta, parts)


def _clients(record: dict) -> str:
    top = F.top_clients(record, TOP_CLIENTS)
    cells = []
    for p in record["policies"]:
        if p["top_clients"]:
            body = table_html(top.xs(p["policy"], level="policy"))
        else:
            body = paragraph("no client limited")
        cells.append((p["policy"], body))
    return side_by_side(cells)


def _load_report(record: dict) -> str:
    report = record.get("load_report")
    if report is None:
        return paragraph("No load report: the trace was not read from a log here (a "
                         "generated trace, or a Parquet file written before it had one).")
    return describe_html(report)


def write_page(record: dict, path) -> int:
    """Write the page of `record` to `path`; its size in bytes."""
    return write(path, page(record))
