"""``ratelab storm``: many retrying clients against one limited server, one row per behaviour."""

from __future__ import annotations

import argparse

from .support import (UsageError, choices_help, command, count, flags, interval_s,
                           limiter_params, non_negative_seconds, per_second, seconds, seed,
                           table, words)
from ..clients import BEHAVIOUR_HELP, BEHAVIOURS, DEFAULT_SURGE, Server, retry_storm
from ..limiters import NAMES, REGISTRY

DEFAULT_BEHAVIOURS = ("immediate", "exponential", "jitter", "retry-after-jitter")


def surge(text: str):
    """A type: ``START,END,FACTOR`` (0 <= START < END, FACTOR > 0), or ``none``."""
    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    bad = argparse.ArgumentTypeError(
        f"must be START,END,FACTOR (seconds, seconds, a multiplier > 0) with 0 <= START < END, "
        f"or none; got {text!r}")
    if len(parts) != 3:
        raise bad
    try:
        start, end, factor = (float(x) for x in parts)
    except ValueError:
        raise bad from None
    if not (0 <= start < end < float("inf")) or not 0 < factor < float("inf"):
        raise bad
    return start, end, factor


surge.unit = ""


def refuse_window(text: str):
    raise argparse.ArgumentTypeError(
        "is a limiter's window everywhere in ratelab: give it as --param window=SECONDS "
        "(for a window limiter); the span the table summarises is --summary-interval START,END")


def add_storm(sub) -> None:
    defaults = "; ".join(f"{name}: " + ", ".join(f"{k}={v:g}" for k, v in REGISTRY[name].example.items())
                         for name in NAMES)
    p = command(
        sub, "storm", run=run_storm, render=render_storm,
        help="simulate many retrying clients against a limited server",
        description="Jobs arrive from --clients clients (Poisson, --job-rate each, times the "
                    "--surge factor during the surge); every refused attempt is retried as "
                    "the behaviour says, against a server limited by --limiter with its own "
                    "--param values. Each behaviour meets the same jobs and a fresh limiter; "
                    "the table gives one row per behaviour, counted over --summary-interval. "
                    f"Without --param each limiter starts from: {defaults}.",
        example="ratelab storm --limiter gcra --param rate=50 --param burst=20\n"
                "ratelab storm --behaviours immediate,jitter --surge none --json")
    p.add_argument("--behaviours", type=words(tuple(BEHAVIOURS)), default=DEFAULT_BEHAVIOURS,
                   help=choices_help("comma-separated retry behaviours", BEHAVIOUR_HELP))
    p.add_argument("--limiter", default="token-bucket", choices=NAMES, metavar="NAME",
                   help="the server's limiter: " + ", ".join(NAMES) + " (ratelab limiters "
                        "lists their parameters)")
    p.add_argument("--param", action="append", default=None, metavar="NAME=VALUE",
                   help="one of the limiter's own parameters, repeatable (default: the "
                        "limiter's settings listed above)")
    p.add_argument("--scope", default="global", choices=Server.SCOPES,
                   help=choices_help("what the limit counts", {
                       "global": "one key for all clients (the server's capacity)",
                       "client": "one key per client (a per-API-key limit)"}))
    p.add_argument("--clients", type=count, default=100, help="clients sending jobs")
    p.add_argument("--job-rate", type=per_second, default=0.6,
                   help="jobs per second per client, outside the surge")
    p.add_argument("--duration", type=seconds, default=40.0, help="seconds of demand")
    p.add_argument("--surge", type=surge, default=DEFAULT_SURGE, metavar="START,END,FACTOR",
                   help="the job rate is multiplied by FACTOR from START to END seconds; "
                        "none for no surge; END must lie within --duration")
    p.add_argument("--max-attempts", type=count, default=10,
                   help="attempts per job before the client gives up")
    p.add_argument("--rtt", type=non_negative_seconds, default=0.05,
                   help="network round trip")
    p.add_argument("--seed", type=seed, default=1, help="seed of the demand and the jitter")
    p.add_argument("--summary-interval", type=interval_s, default=None, metavar="START,END",
                   help="count the table over this span of seconds (default: the whole run)")
    p.add_argument("--window", type=refuse_window, help=argparse.SUPPRESS)


def run_storm(args) -> dict:
    """The storm's record: the scenario and one row per behaviour."""
    params = limiter_params(args.limiter, args.param)
    if args.surge is not None and args.surge[1] > args.duration:
        raise UsageError("--surge", f"{','.join(f'{x:g}' for x in args.surge)} ends after "
                                    f"--duration {args.duration:g} s; give a surge within it "
                                    "or --surge none")
    if args.summary_interval is not None and args.summary_interval[1] > args.duration:
        raise UsageError("--summary-interval", f"ends after --duration {args.duration:g} s")
    with flags(clients="--clients", job_rate_per_s="--job-rate", duration_s="--duration",
               summary_interval_s="--summary-interval", surge="--surge"):
        return retry_storm(args.behaviours, args.limiter, params, scope=args.scope,
                           clients=args.clients, job_rate_per_s=args.job_rate,
                           duration_s=args.duration, surge=args.surge,
                           max_attempts=args.max_attempts, rtt_s=args.rtt, seed=args.seed,
                           summary_interval_s=args.summary_interval)


HEADERS = {"behaviour": "behaviour", "demand_per_s": "demand/s", "offered_per_s": "offered/s",
           "accepted_per_s": "accepted/s", "retries_per_success": "retries/success",
           "load_multiplier": "load x", "succeeded_pct": "succeeded %",
           "gave_up_pct": "gave up %", "p50_latency_s": "p50 latency s"}


def render_storm(r: dict) -> str:
    s = r["scenario"]
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in s["limiter_params"].items())
    surge = ("no surge" if s["surge"] is None else
             f"x{s['surge']['factor']:g} from {s['surge']['start_s']:g} to "
             f"{s['surge']['end_s']:g} s")
    start, end = s["summary_interval_s"]
    head = [f"limiter {s['limiter']}({params}), scope {s['scope']}",
            f"{s['clients']} clients at {s['job_rate_per_client_per_s']:g} jobs/s each for "
            f"{s['duration_s']:g} s, {surge}: {s['jobs']:,} jobs; up to {s['max_attempts']} "
            f"attempts, round trip {s['rtt_s']:g} s, seed {s['seed']}",
            f"counted over {start:g} to {end:g} s", ""]
    return "\n".join(head) + table(r["behaviours"], list(HEADERS), HEADERS)
