"""``ratelab burst``: can a service swallow a token-bucket burst?"""

from __future__ import annotations

import math

from ..queueing import burst_report
from .support import command, count, flags, non_negative_number, per_second, seconds_or_inf


def add_burst(sub) -> None:
    p = command(
        sub, "burst", run=run_burst, render=render_burst,
        help="can a service swallow a token-bucket burst?",
        description="A saturated token bucket lets --burst requests through at once, then "
                    "--rate per second for good. A server serving --service requests per "
                    "second queues the burst: does the queue stay within --queue-limit, does "
                    "the last request wait at most --max-wait, and does the queue drain? Also "
                    "prints the largest burst that fits the same limits.",
        example="ratelab burst --burst 300 --rate 50 --service 100 --max-wait 2")
    p.add_argument("--burst", type=count, default=300,
                   help="the bucket's capacity: requests let through at once (requests)")
    p.add_argument("--rate", type=per_second, default=50.0, help="the bucket's refill")
    p.add_argument("--service", type=per_second, default=100.0,
                   help="the server's service rate")
    p.add_argument("--max-wait", type=seconds_or_inf, default=math.inf,
                   help="the callers' timeout: the longest a request may wait")
    p.add_argument("--queue-limit", type=non_negative_number("requests", infinite=True),
                   default=math.inf, help="the longest the queue may grow")


def run_burst(args) -> dict:
    """The verdict and the largest burst that fits, as a record."""
    with flags(burst="--burst", rate_per_s="--rate", service_per_s="--service",
               max_wait_s="--max-wait", queue_limit="--queue-limit"):
        return burst_report(args.burst, args.rate, args.service, max_wait_s=args.max_wait,
                            queue_limit=args.queue_limit)


def render_burst(r: dict) -> str:
    drain = "never" if r["drain_s"] is None else f"after {r['drain_s']:.3f} s"
    lines = [f"burst {r['burst']} then {r['rate_per_s']:g}/s into {r['service_per_s']:g}/s: "
             f"{'swallowed' if r['swallowed'] else 'NOT swallowed'}",
             f"  peak queue {r['peak_queue']}, worst wait {r['worst_wait_s']:.3f} s, "
             f"drained {drain}, utilisation {r['utilisation']:.3f}"]
    if r["reason"]:
        lines.append(f"  why: {r['reason']}")
    fits = "any" if r["largest_burst"] is None else r["largest_burst"]
    lines.append(f"  largest burst that fits: {fits}")
    return "\n".join(lines)
