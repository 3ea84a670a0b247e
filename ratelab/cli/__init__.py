"""The ``ratelab`` command: ``ratelab --help`` lists what it does.

This package is the only place where arguments are parsed: each subcommand lives in a module
of it and registers itself here in ``COMMANDS``: its name, a module path, the name of a
function ``add_...(subparsers)`` that adds its parser, and its one-line help. The rules every subcommand follows (help with units and defaults and an example,
``--json`` from a record, one-line errors naming the flag: exit 2 for a user mistake, 1 for an
environment failure) and the machinery for them are in :mod:`ratelab.cli.support`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from contextlib import nullcontext

from .. import __version__
from ..kernel_cache import announcing
from .support import Parser, UsageError, emit, options_of, report, unrecognized

# (command, module, function, one-line help): each function adds that command's parser. The
# help is written here too, so that ``ratelab --help`` and ``--version`` build the top level
# alone (:func:`summary_parser`) without importing a command module (numpy, pandas ...):
# tests/test_cli.py holds every line equal to what the command's own parser says.
COMMANDS: list[tuple[str, str, str, str]] = [
    ("lab", "ratelab.cli.lab", "add_lab", "open the notebooks in JupyterLab"),
    ("notebooks", "ratelab.cli.lab", "add_notebooks",
     "re-execute notebooks in place (seeded), all of them by default"),
    ("limiters", "ratelab.cli.limiters", "add_limiters",
     "list the registry algorithms and their parameters (types, units, defaults)"),
    ("race", "ratelab.cli.race", "add_race",
     "race gateways on a shared store: admitted vs the limit"),
    ("datasets", "ratelab.cli.datasets", "add_datasets",
     "the recorded traces: list, locate, verify, fetch"),
    ("storm", "ratelab.cli.storm", "add_storm",
     "simulate many retrying clients against a limited server"),
    ("burst", "ratelab.cli.burst", "add_burst", "can a service swallow a token-bucket burst?"),
    ("index", "ratelab.cli.index", "add_index",
     "write the notebook index into README.md (from titles)"),
    ("fps", "ratelab.cli.fps", "add_fps",
     "measure the live limiter's redraw rate (frames per second)"),
    ("traces", "ratelab.cli.traces", "add_traces", "convert a log or table to Parquet, read once"),
    ("error-analysis", "ratelab.cli.analysis", "add",
     "compare the sliding window counter with the exact log (Cloudflare-style table)"),
    ("cloudflare-mix", "ratelab.cli.analysis", "add_calibrate",
     "search the population for traffic on which the counter's error matches Cloudflare's "
     "four published figures"),
    ("bench", "ratelab.cli.bench", "add_bench",
     "decisions per second: compiled replay, reference, limits"),
    ("exercises", "ratelab.cli.exercises", "add_exercises",
     "list the exercises; build the student notebooks; add the lessons' quizzes"),
    ("grade", "ratelab.cli.grade", "add_grade",
     "grade submitted notebooks in a sandbox; or make instructor-only cases"),
    ("what-if", "ratelab.cli.whatif", "add_what_if",
     "replay a log through candidate policies and compare what each limits"),
    ("bench-dask", "ratelab.cli.bench_dask", "add_bench_dask",
     "measure the Dask engine: beyond memory, and against in-process"),
    ("compile", "ratelab.cli.compile", "add_compile",
     "compile the numba kernels a first command needs, into the cache, once"),
    ("haproxy-config", "ratelab.cli.config", "add_haproxy_config",
     "print the HAProxy lines (stick table, track, deny) of a haproxy policy"),
    ("nginx-config", "ratelab.cli.config", "add_nginx_config",
     "print the nginx lines (limit_req_zone, limit_req) of an nginx policy"),
]

NAMES = tuple(name for name, *_ in COMMANDS)
"""The subcommands' names."""

SUMMARY_ONLY = ([], ["-h"], ["--help"], ["--version"])
"""Command lines the top level answers alone (:func:`summary_parser`)."""


def _top_level() -> tuple[Parser, argparse.Action]:
    """The ``ratelab`` parser without its commands, and the action to add them to."""
    p = Parser(
        prog="ratelab",
        description="Reference rate limiters and the notebooks that teach and measure them.",
        epilog="example:\n  ratelab race --strategy lua --gateways 4 --json")
    p.add_argument("--version", action="version", version=f"ratelab {__version__}")
    p.add_argument("--debug", action="store_true", help="show a traceback on error")
    return p, p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full argument parser, with every registered subcommand; with `only`, that
    subcommand in full and the others by their one-line help, so that a command imports its
    own modules and no other's."""
    p, sub = _top_level()
    for name, module, function, text in COMMANDS:
        if only in (None, name):
            getattr(importlib.import_module(module), function)(sub)
        else:
            sub.add_parser(name, help=text)
    return p


def summary_parser() -> argparse.ArgumentParser:
    """The top level with each command's one-line help only: what ``ratelab --help`` prints,
    and ``--version``, without the command modules."""
    p, sub = _top_level()
    for name, _, _, text in COMMANDS:
        sub.add_parser(name, help=text)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ratelab`` console command: the exit code (0, 1 or 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv in SUMMARY_ONLY:
        p = summary_parser()
        if not argv:
            p.print_help()
            return 0
        p.parse_args(argv)  # prints the help or the version, and exits 0
    word = next((w for w in argv if not w.startswith("-")), None)
    p = parser(only=word if word in NAMES else None)
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
        # a first run's kernels compile for tens of seconds: said on stderr, with the progress
        with nullcontext() if getattr(args, "no_progress", False) else announcing():
            result = args.func(args)
        return emit(args, result)
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
