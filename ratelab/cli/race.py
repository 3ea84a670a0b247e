"""``ratelab race``: run a strategy against a burst and print admitted against the limit."""

from __future__ import annotations

import argparse
import textwrap

from .support import UsageError, command, count, flags, non_negative_seconds, seed
from ..cluster.sim import Latency
from ..cluster.strategies import STRATEGIES

DEFAULT_REQUESTS = 200
DEFAULT_LATENCY = "uniform:0.0005,0.002"


def strategy_lines() -> dict[str, str]:
    """Each strategy's name and the first sentence of its docstring (so help cannot drift)."""
    out = {}
    for name, cls in sorted(STRATEGIES.items()):
        first = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        out[name] = first.split(". ")[0].rstrip(".")
    return out


def store_url(text: str) -> str:
    """A type: "sim" or a redis:// (rediss://, unix://) URL."""
    if text == "sim" or text.startswith(("redis://", "rediss://", "unix://")):
        return text
    raise argparse.ArgumentTypeError(f"must be sim or a redis://HOST:PORT URL, got {text!r}")


store_url.unit = ""


def add_race(sub) -> None:
    strategies = "\n".join(
        textwrap.fill(v, 78, initial_indent=f"  {k:18}", subsequent_indent=" " * 20)
        for k, v in strategy_lines().items())
    p = command(
        sub, "race", run=run_race, render=render_race,
        help="race gateways on a shared store: admitted vs the limit",
        description="Send a burst of --requests from --gateways gateways, all inside one 60 s "
                    "window, through a counting strategy on a shared store, and count how "
                    "many were admitted against --limit. On the simulated store (sim) the "
                    "gateways run in virtual time with --latency; on a redis:// URL each "
                    "gateway is a real thread with its own connection. With --exhaustive, "
                    "every interleaving of one request per gateway is tried instead, with one "
                    "place left under the limit.\n\nstrategies:\n" + strategies,
        example="ratelab race --strategy naive --gateways 4 --requests 200 --limit 100\n"
                "ratelab race --strategy lua --store redis://127.0.0.1:6379/0\n"
                "ratelab race --strategy naive --gateways 2 --exhaustive")
    p.add_argument("--strategy", default="naive", choices=sorted(STRATEGIES),
                   metavar="NAME", help="how the gateways count (see the list above)")
    p.add_argument("--gateways", type=count, default=4,
                   help="gateways sharing the store (1 to 4 with --exhaustive)")
    p.add_argument("--requests", type=count, default=None,
                   help=f"requests in the burst (default: {DEFAULT_REQUESTS}; not with "
                        "--exhaustive, which sends one per gateway)")
    p.add_argument("--limit", type=count, default=100, help="requests allowed in the window")
    p.add_argument("--store", type=store_url, default="sim",
                   help="sim (the simulated store, no server) or redis://HOST:PORT[/DB]")
    p.add_argument("--latency", default=None, metavar="KIND:SECONDS",
                   help="one-way latency on sim: fixed:S, uniform:A,B or lognormal:MEDIAN,SIGMA "
                        f"(default: {DEFAULT_LATENCY}; sim only)")
    p.add_argument("--think", type=non_negative_seconds, default=None,
                   help="pause of a real-thread gateway between commands (default: 0 s; "
                        "redis store only)")
    p.add_argument("--seed", type=seed, default=None,
                   help="seed of arrival times and latencies (default: 0; not with "
                        "--exhaustive, which tries every order)")
    p.add_argument("--exhaustive", action="store_true",
                   help="instead: every interleaving of one request per gateway with one "
                        "place left (simulated store)")


def run_race(args) -> dict:
    """The race's record (its keys: docs/cli.md)."""
    # the experiments bring redis-py and threads: 0.2 s off `ratelab --help`
    from ..cluster.experiments import exhaustive, race

    sim = args.store == "sim"
    if args.exhaustive:
        for flag, value in (("--requests", args.requests), ("--latency", args.latency),
                            ("--think", args.think), ("--seed", args.seed)):
            if value is not None:
                raise UsageError(flag, "does not apply with --exhaustive (one request per "
                                       "gateway, every interleaving)")
        if not sim:
            raise UsageError("--store", "--exhaustive runs on the simulated store only")
        with flags(clients="--gateways", limit="--limit"):
            r = exhaustive(args.strategy, args.gateways, args.limit)
        example = r.pop("example")
        return {"mode": "exhaustive", **r, "limit": args.limit,
                "example": None if example is None else
                [{"client": "ABCD"[i], "command": what, "reply": reply}
                 for i, what, reply in example.steps],
                "example_counter": None if example is None else _number(example.counter)}
    if sim and args.think is not None:
        raise UsageError("--think", "applies to a redis:// store only (sim runs in virtual "
                                    "time: use --latency)")
    if not sim and args.latency is not None:
        raise UsageError("--latency", "applies to the simulated store only (a redis:// "
                                      "store has the real network's latency)")
    try:
        latency = Latency.parse(args.latency or DEFAULT_LATENCY)
    except ValueError as e:
        raise UsageError("--latency", str(e)) from None
    with flags(gateways="--gateways", requests="--requests", limit="--limit"):
        result = race(args.strategy, args.gateways, args.requests or DEFAULT_REQUESTS,
                      args.limit, store=args.store, latency=latency,
                      think_s=args.think or 0.0, seed=args.seed or 0)
    return {"mode": "burst", **result.as_dict()}


def render_race(r: dict) -> str:
    if r["mode"] == "exhaustive":
        lines = [f"{r['strategy']}: {r['over_admitting']} of {r['schedules']} interleavings of "
                 f"{r['clients']} requests over-admit when one place is left"]
        if r["example"]:
            lines.append(f"for example (counter ends at {r['example_counter']}):")
            lines += [f"{s['client']}: {s['command']} -> {s['reply']}" for s in r["example"]]
        return "\n".join(lines)
    return (f"{r['strategy']}: admitted {r['admitted']} of {r['requests']} requests "
            f"against a limit of {r['limit']} ({r['gateways']} gateways, {r['store']}); "
            f"over-admitted {r['over_admitted']}; "
            f"{r['round_trips_per_request']:.2f} round trips per request")


def _number(value):
    """A store's reply as a number where it is one ("101" -> 101)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return value
