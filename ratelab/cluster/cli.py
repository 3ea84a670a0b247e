"""``ratelab race``: run a strategy against a burst and print admitted against the limit."""

from __future__ import annotations

import json

from .strategies import STRATEGIES


def add_race(sub) -> None:
    p = sub.add_parser("race", help="race gateways on a shared store: admitted vs the limit")
    p.add_argument("--strategy", default="naive", choices=sorted(STRATEGIES))
    p.add_argument("--gateways", type=int, default=4)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--store", default="sim", help="sim (default) or redis://HOST:PORT")
    p.add_argument("--latency", default="uniform:0.0005,0.002",
                   help="one-way latency on sim: fixed:S, uniform:A,B or lognormal:MEDIAN,SIGMA")
    p.add_argument("--think", type=float, default=0.0,
                   help="seconds a real-thread gateway pauses between commands (redis store)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--exhaustive", action="store_true",
                   help="instead: every interleaving of --gateways requests with one place left")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_race)


def run_race(args) -> int:
    from .experiments import exhaustive, race, show_schedule
    from .sim import Latency

    if args.exhaustive:
        r = exhaustive(args.strategy, args.gateways, args.limit)
        example = r.pop("example")
        if args.json:
            r["example"] = None if example is None else [list(s) for s in example.steps]
            print(json.dumps(r))
        else:
            print(f"{r['strategy']}: {r['over_admitting']} of {r['schedules']} interleavings of "
                  f"{r['clients']} requests over-admit when one place is left")
            if example is not None:
                print(f"for example (counter ends at {example.counter}):")
                print(show_schedule(example))
        return 0
    result = race(args.strategy, args.gateways, args.requests, args.limit, store=args.store,
                  latency=Latency.parse(args.latency), think_s=args.think, seed=args.seed)
    print(json.dumps(result.as_dict()) if args.json else result.line())
    return 0
