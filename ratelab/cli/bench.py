"""``ratelab bench``: decisions per second of the compiled replay, the reference, ``limits``;
``ratelab bench ingest``: lines per second reading a gzip log (:mod:`ratelab.cli.traces`);
``ratelab bench startup``: how long the command takes to start."""

from __future__ import annotations

import sys

from .support import EnvironmentFailure, UsageError, command, count, seed
from .traces import add_bench_ingest

DEFAULT_SLICE = 1_000_000


def add_bench(sub) -> None:
    p = command(
        sub, "bench", run=run_bench, render=render_bench,
        help="decisions per second: compiled replay, reference, limits",
        description="Build a seeded trace (key popularity 1/rank), replay it through every "
                    "registry algorithm with the compiled engine (best of --repeat), and the "
                    "first --slice requests with the reference engine and the limits library. "
                    "Figures are decisions per CPU second. Exits 1 if compiled and reference "
                    "decisions differ.",
        example="ratelab bench --requests 1000000 --keys 10000 --json\n"
                "ratelab bench ingest --lines 2000000 --repeat 2 --json\n"
                "ratelab bench startup --repeat 10")
    p.add_argument("--requests", type=count, default=10_000_000, help="requests in the trace")
    p.add_argument("--keys", type=count, default=100_000, help="keys (clients) in the trace")
    p.add_argument("--slice", type=count, default=None,
                   help=f"requests given to the reference engine and to limits (default: "
                        f"{DEFAULT_SLICE:,}; not with both --no-reference and --no-limits)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the trace")
    p.add_argument("--repeat", type=count, default=3, help="compiled runs per algorithm (best)")
    p.add_argument("--no-reference", action="store_true", help="skip the reference engine")
    p.add_argument("--no-limits", action="store_true", help="skip the limits library")
    # the other benchmarks are actions: `ratelab bench ACTION ...`; none is the replay above
    actions = p.add_subparsers(dest="bench_command", metavar="ACTION", required=False,
                               title="other benchmarks (ratelab bench ACTION --help)")
    add_bench_ingest(actions)
    add_bench_startup(actions)
    replay_only = {a.dest: (a.option_strings[0], a.default) for a in p.arguments
                   if a.dest in ("requests", "keys", "slice", "no_limits", "no_reference",
                                 "seed")}
    for name in ("ingest", "startup"):
        action = actions.choices[name]
        own = {a.dest for a in action.arguments}  # an action's own --seed is its own
        refused = {d: v for d, v in replay_only.items() if d not in own}
        action.set_defaults(func=_refusing(refused, action.get_default("func")))


def add_bench_startup(actions) -> None:
    """Add ``ratelab bench startup`` to the actions of ``ratelab bench``."""
    p = command(
        actions, "startup", run=run_bench_startup, render=render_bench_startup,
        help="seconds to start: the interpreter, --version, --help, limiters",
        description="Start python -c pass (the floor), ratelab --version, ratelab --help and "
                    "ratelab limiters as fresh processes, interleaved, --repeat rounds; report "
                    "each one's best and median wall seconds.",
        example="ratelab bench startup --repeat 10 --json")
    p.add_argument("--repeat", type=count, default=10, help="rounds of every command")


def _refusing(replay_only: dict, run):
    """`run`, after refusing the replay's options (dest -> (flag, default)) given before an
    action (``ratelab bench --keys 10 ingest``): they would do nothing."""
    def checked(args):
        for dest, (flag, default) in replay_only.items():
            if getattr(args, dest, default) != default:
                raise UsageError(flag, f"applies to the replay benchmark, not to "
                                       f"ratelab bench {args.bench_command}")
        return run(args)
    return checked


def run_bench(args):
    from ..bench.replay import run  # the compiled replay: numba off `ratelab --help`

    if args.slice is not None and args.no_reference and args.no_limits:
        raise UsageError("--slice", "does nothing with both --no-reference and --no-limits "
                                    "(the slice is what they run on)")

    if not args.no_limits:
        try:
            import limits  # noqa: F401
        except ImportError:
            raise EnvironmentFailure("the limits library is not installed",
                                     "pip install 'ratelab[bench]', or pass --no-limits"
                                     ) from None
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    figures = run(args.requests, args.keys, args.slice or DEFAULT_SLICE, args.seed, args.repeat,
                  with_reference=not args.no_reference, with_limits=not args.no_limits,
                  log=log)
    differ = [r["algorithm"] for r in figures["results"] if r["same"] is False]
    if differ:
        print(f"ratelab bench: compiled and reference decisions differ for "
              f"{', '.join(differ)}", file=sys.stderr)
    return figures, 1 if differ else 0


def render_bench(figures: dict) -> str:
    from ..bench.replay import table  # as above

    return "\n" + table(figures)


def run_bench_startup(args):
    from ..bench import startup  # the benchmark itself: off `ratelab --help`

    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else (lambda *a: None)
    return startup.run(args.repeat, log=say), 0


def render_bench_startup(figures: dict) -> str:
    from ..bench import startup  # as above

    return startup.table(figures)
