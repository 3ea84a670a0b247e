"""The ``ratelab`` command: ``ratelab --help`` lists what it does.

This package is the only place where arguments are parsed: each subcommand lives in a module
of it and registers itself here in ``COMMANDS``: a module path and the name of a function ``add_...(subparsers)`` that adds its
parser. The rules every subcommand follows (help with units and defaults and an example,
``--json`` from a record, one-line errors naming the flag: exit 2 for a user mistake, 1 for an
environment failure) and the machinery for them are in :mod:`ratelab.cli.support`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .. import __version__
from .support import Parser, UsageError, emit, options_of, report, unrecognized

# (module, function) pairs; each function adds one or more subparsers.
COMMANDS: list[tuple[str, str]] = [
    ("ratelab.cli.lab", "add_lab"),
    ("ratelab.cli.lab", "add_notebooks"),
    ("ratelab.cli.limiters", "add_limiters"),
    ("ratelab.cli.race", "add_race"),
    ("ratelab.cli.datasets", "add_datasets"),
    ("ratelab.cli.storm", "add_storm"),
    ("ratelab.cli.burst", "add_burst"),
    ("ratelab.cli.index", "add_index"),
    ("ratelab.cli.fps", "add_fps"),
    ("ratelab.cli.traces", "add_traces"),
    ("ratelab.cli.analysis", "add"),
    ("ratelab.cli.analysis", "add_calibrate"),
    ("ratelab.cli.bench", "add_bench"),
    ("ratelab.cli.exercises", "add_exercises"),
    ("ratelab.cli.grade", "add_grade"),
    ("ratelab.cli.whatif", "add_what_if"),
    ("ratelab.cli.bench_dask", "add_bench_dask"),
]


def parser() -> argparse.ArgumentParser:
    """The full argument parser, with every registered subcommand."""
    p = Parser(
        prog="ratelab",
        description="Reference rate limiters and the notebooks that teach and measure them.",
        epilog="example:\n  ratelab race --strategy lua --gateways 4 --json")
    p.add_argument("--version", action="version", version=f"ratelab {__version__}")
    p.add_argument("--debug", action="store_true", help="show a traceback on error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module, function in COMMANDS:
        getattr(importlib.import_module(module), function)(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ratelab`` console command: the exit code (0, 1 or 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    prog = "ratelab"
    args = None
    try:
        _check_options(p, argv)
        args, extra = p.parse_known_args(argv)
        sub = getattr(args, "_parser", p)
        prog = sub.prog
        if "--debug" in extra and not getattr(args, "passes_extra_args", False):
            extra.remove("--debug")
            args.debug = True
        if extra and not getattr(args, "passes_extra_args", False):
            raise UsageError(None, unrecognized(extra, sub))
        args.extra = extra
        if not getattr(args, "func", None):
            p.print_help()
            return 0
        return emit(args, args.func(args))
    except BrokenPipeError:  # the reader (head, less) went away: stop quietly
        sys.stdout = open(os.devnull, "w")
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # one line, never a traceback (unless --debug)
        if isinstance(e, UsageError) and args is None:
            prog = _prog_of(p, argv)
        return report(prog, e, debug=bool(getattr(args, "debug", False)) or "--debug" in argv)


def _subparsers(p: argparse.ArgumentParser) -> dict:
    """The parsers of `p`'s subcommands by name ({} when it has none)."""
    return p.commands if isinstance(p, Parser) else {}


def _check_options(p: argparse.ArgumentParser, argv: list[str]) -> None:
    """A UsageError, nearest option suggested, for a ``--option`` the command does not take.

    Checked before parsing so that a typo is named even where argparse would first complain
    about something else (a missing required option)."""
    commands = _subparsers(p)
    word = next((w for w in argv if not w.startswith("-")), None)
    sub = commands.get(word)
    if sub is None or sub.get_default("passes_extra_args"):
        return
    parsers = [sub, *_subparsers(sub).values()]
    known = {o for q in parsers for o in options_of(q)} | set(options_of(p))
    for w in argv[argv.index(word) + 1:]:
        if w == "--":
            break
        if w.startswith("--") and w.split("=", 1)[0] not in known:
            raise UsageError(None, unrecognized([w], sub))


def _prog_of(p: argparse.ArgumentParser, argv: list[str]) -> str:
    """"ratelab NAME" (or "ratelab NAME ACTION") when argv names a known command (and one of
    its actions), else "ratelab" (for error lines)."""
    for word in argv:
        p = _subparsers(p).get(word, p)
    return p.prog
