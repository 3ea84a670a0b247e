"""The ``ratelab`` command: ``ratelab --help`` lists what it does.

Each subcommand lives beside the code it drives and registers itself here in ``COMMANDS``:
a module path and the name of a function ``add(subparsers)`` that adds its parser and sets
``func``. Modules are imported only when the command line is parsed, so ``ratelab --help``
stays quick.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path

from . import __version__

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# (module, function) pairs; each function adds one or more subparsers.
COMMANDS: list[tuple[str, str]] = [
    ("ratelab.cli", "add_lab"),
    ("ratelab.cli", "add_notebooks"),
    ("ratelab.cli", "add_limiters"),
    ("ratelab.cluster.cli", "add_race"),
    ("ratelab.datasets", "add_cli"),
    ("ratelab.clients", "add_storm"),
    ("ratelab.queueing", "add_burst"),
    ("ratelab.index", "add_index"),
    ("ratelab.widgets", "add_fps"),
    ("ratelab.analysis.cli", "add"),
    ("ratelab.bench", "add_bench"),
    ("ratelab.whatif.cli", "add_what_if"),
    ("ratelab.scale.bench", "add_bench_dask"),
]


def add_lab(sub) -> None:
    p = sub.add_parser("lab", help="open the notebooks in JupyterLab",
                       description="Any further options are passed on to jupyter lab.")
    p.set_defaults(func=run_lab, passes_extra_args=True)


def run_lab(args) -> int:
    """Start JupyterLab on notebooks/ (the simulated store is the default: no server needed)."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={NOTEBOOKS}", *args.extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in cmd:
        cmd.append("--allow-root")  # containers and CI machines often run as root
    return subprocess.call(cmd)


def add_notebooks(sub) -> None:
    p = sub.add_parser("notebooks", help="re-execute every notebook in place (seeded)")
    p.add_argument("paths", nargs="*", type=Path, help="notebooks to run (default: all)")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    p.set_defaults(func=run_notebooks)


def run_notebooks(args) -> int:
    """Execute notebooks top to bottom and save them with their outputs."""
    import nbformat
    from nbclient import NotebookClient

    paths = args.paths or sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    for path in paths:
        print(f"executing {path.name} ...", flush=True)
        nb = nbformat.read(path, as_version=4)
        client = type("Client", (NotebookClient,), {"handle_comm_msg": _forget_closed_widgets})
        client(nb, timeout=args.timeout, kernel_name="python3", record_timing=False,
               resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, path)
    return 0


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
    p = sub.add_parser("limiters", help="list the registry algorithms and their parameters")
    p.set_defaults(func=run_limiters)


def run_limiters(args) -> int:
    import inspect

    from .limiters import REGISTRY

    for name, cls in REGISTRY.items():
        sig = inspect.signature(cls.__init__)
        params = ", ".join(str(p) for p in list(sig.parameters.values())[1:])
        print(f"{name:24} {cls.__name__}({params})")
    return 0


def parser() -> argparse.ArgumentParser:
    """The full argument parser, with every registered subcommand."""
    p = argparse.ArgumentParser(
        prog="ratelab",
        description="Reference rate limiters and the notebooks that teach and measure them.",
    )
    p.add_argument("--version", action="version", version=f"ratelab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for module, function in COMMANDS:
        getattr(importlib.import_module(module), function)(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ratelab`` console command."""
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra and not getattr(args, "passes_extra_args", False):
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    if not getattr(args, "func", None):
        parser().print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except ValueError as e:  # bad input: say what is wrong, no traceback
        print(f"ratelab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
