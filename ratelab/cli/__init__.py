"""The ``ratelab`` command: ``ratelab --help`` lists what it does.

Each subcommand lives in a CLI module of its own area and registers itself here in
``COMMANDS``: a module path and the name of a function ``add_...(subparsers)`` that adds its
parser. The rules every subcommand follows (help with units and defaults and an example,
``--json`` from a record, one-line errors naming the flag: exit 2 for a user mistake, 1 for an
environment failure) and the machinery for them are in :mod:`ratelab.cli_support`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path

from . import __version__
from .cli_support import (HelpFormatter, Parser, UsageError, command, emit, options_of, report,
                          seconds, show, suggest, table, unrecognized)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# (module, function) pairs; each function adds one or more subparsers.
COMMANDS: list[tuple[str, str]] = [
    ("ratelab.cli", "add_lab"),
    ("ratelab.cli", "add_notebooks"),
    ("ratelab.cli", "add_limiters"),
    ("ratelab.cluster.cli", "add_race"),
    ("ratelab.commands.datasets", "add_datasets"),
    ("ratelab.commands.storm", "add_storm"),
    ("ratelab.commands.burst", "add_burst"),
    ("ratelab.commands.index", "add_index"),
    ("ratelab.commands.fps", "add_fps"),
    ("ratelab.traces.cli", "add_traces"),
    ("ratelab.analysis.cli", "add"),
    ("ratelab.analysis.cli", "add_calibrate"),
    ("ratelab.commands.bench", "add_bench"),
    ("ratelab.exercises.cli", "add_exercises"),
    ("ratelab.grading.cli", "add_grade"),
    ("ratelab.whatif.cli", "add_what_if"),
    ("ratelab.scale.bench", "add_bench_dask"),
]


def add_lab(sub) -> None:
    p = sub.add_parser(
        "lab", help="open the notebooks in JupyterLab",
        description="Start JupyterLab on notebooks/. Any further options are passed on to "
                    "jupyter lab (the simulated store is the default: no server needed).",
        epilog="example:\n  ratelab lab --no-browser --port 8888",
        formatter_class=HelpFormatter)
    p.set_defaults(func=run_lab, passes_extra_args=True, _parser=p)


def run_lab(args) -> int:
    """Start JupyterLab on notebooks/ (the simulated store is the default: no server needed)."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={NOTEBOOKS}", *args.extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in cmd:
        cmd.append("--allow-root")  # containers and CI machines often run as root
    return subprocess.call(cmd)


def add_notebooks(sub) -> None:
    p = command(sub, "notebooks", run=run_notebooks, render=render_notebooks,
                help="re-execute notebooks in place (seeded), all of them by default",
                description="Execute notebooks top to bottom and save them with their "
                            "outputs. A path is taken as given, else relative to notebooks/.",
                example="ratelab notebooks 01-token-bucket.ipynb --timeout 300")
    p.add_argument("paths", nargs="*", metavar="NOTEBOOK",
                   help="notebooks to run, as paths or names in notebooks/ (default: all)")
    p.add_argument("--timeout", type=seconds, default=600.0, help="limit per cell")


def notebook_paths(names: list[str]) -> list[Path]:
    """The notebooks `names` point at: a path as given, else a name in notebooks/ (a
    UsageError naming the one that is neither)."""
    if not names:
        return sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    out = []
    for name in names:
        for candidate in (Path(name), NOTEBOOKS / name, NOTEBOOKS / f"{name}.ipynb"):
            if candidate.is_file():
                out.append(candidate)
                break
        else:
            known = [p.name for p in NOTEBOOKS.glob("*.ipynb")]
            raise UsageError("NOTEBOOK", f"no notebook {name!r} here or in {NOTEBOOKS}"
                             + (suggest(Path(name).name, known) or
                                f"; choose from {', '.join(sorted(known))}"))
    return out


def run_notebooks(args) -> dict:
    """Execute notebooks top to bottom and save them with their outputs."""
    import time

    import nbformat
    from nbclient import NotebookClient

    paths = notebook_paths(args.paths)
    rows = []
    for path in paths:
        print(f"executing {path.name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        client = type("Client", (NotebookClient,), {"handle_comm_msg": _forget_closed_widgets})
        client(nb, timeout=int(args.timeout), kernel_name="python3", record_timing=False,
               resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, path)
        rows.append({"notebook": str(path), "cells": len(nb.cells),
                     "wall_s": round(time.perf_counter() - start, 2)})
    return {"notebooks": rows}


def render_notebooks(record: dict) -> str:
    return table(record["notebooks"], headers={"wall_s": "wall s"})


def _forget_closed_widgets(client, outs, msg, cell_index) -> None:
    """nbclient's comm handling, except that a widget closed in the kernel is not saved.

    Widgets a notebook makes and closes again (panels used only from code) would otherwise
    all be stored in the notebook's widget state.
    """
    from nbclient import NotebookClient

    NotebookClient.handle_comm_msg(client, outs, msg, cell_index)
    if msg["msg_type"] == "comm_close":
        client.widget_state.pop(msg["content"]["comm_id"], None)
        client.widget_buffers.pop(msg["content"]["comm_id"], None)


def add_limiters(sub) -> None:
    command(sub, "limiters", run=run_limiters, render=render_limiters,
            help="list the registry algorithms and their parameters (types, units, defaults)",
            description="Every name make() accepts, with its constructor parameters: plain "
                        "types, units, defaults, and the settings the command line uses when "
                        "no --param is given.",
            example="ratelab limiters --json")


def run_limiters(args) -> dict:
    """The registry as a record: per algorithm, its class and parameters."""
    from .limiters import REGISTRY
    from .limiters.params import EXAMPLES, parameters

    return {"limiters": [
        {"name": name, "class": cls.__name__,
         "parameters": [{"name": p.name, "type": p.type.__name__, "unit": p.unit,
                         "required": p.required,
                         "default": None if p.required else p.default}
                        for p in parameters(name)],
         "cli_defaults": EXAMPLES.get(name, {})}
        for name, cls in REGISTRY.items()]}


def render_limiters(record: dict) -> str:
    def param(p):
        text = f"{p['name']}: {p['type']} ({p['unit']})"
        return text if p["required"] else f"{text} = {show(p['default'])}"

    return "\n".join(f"{r['name']:24} {r['class']}({', '.join(param(p) for p in r['parameters'])})"
                     for r in record["limiters"])


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
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


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
        sub = next((a for a in p._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is not None and word in sub.choices:
            p = sub.choices[word]
    return p.prog


if __name__ == "__main__":
    sys.exit(main())
