"""``ratelab lab`` and ``ratelab notebooks``: JupyterLab on the checkout's notebooks, and
re-executing them in place.

nbformat and nbclient are imported by ``run_notebooks`` only: with jsonschema's format checkers
they take about 2 s to import here, and every ``ratelab`` command builds this parser.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .. import checkout
from .support import HelpFormatter, UsageError, command, seconds, suggest, table


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
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={checkout.notebooks()}",
           *args.extra]
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
    folder = checkout.notebooks()
    if not names:
        return sorted(folder.glob("[0-9][0-9]-*.ipynb"))
    out = []
    for name in names:
        for candidate in (Path(name), folder / name, folder / f"{name}.ipynb"):
            if candidate.is_file():
                out.append(candidate)
                break
        else:
            known = [p.name for p in folder.glob("*.ipynb")]
            raise UsageError("NOTEBOOK", f"no notebook {name!r} here or in {folder}"
                             + (suggest(Path(name).name, known) or
                                f"; choose from {', '.join(sorted(known))}"))
    return out


def run_notebooks(args) -> dict:
    """Execute notebooks top to bottom and save them with their outputs."""
    import nbformat  # 2 s to import: off the parser's path (see the module's docstring)

    from .execute import Executor  # nbclient: as above

    paths = notebook_paths(args.paths)
    rows = []
    for path in paths:
        print(f"executing {path.name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        Executor(nb, timeout=int(args.timeout), kernel_name="python3", record_timing=False,
                 resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, path)
        rows.append({"notebook": str(path), "cells": len(nb.cells),
                     "wall_s": round(time.perf_counter() - start, 2)})
    return {"notebooks": rows}


def render_notebooks(record: dict) -> str:
    return table(record["notebooks"], headers={"wall_s": "wall s"})
