"""Command-line options shared by every subcommand that can run on Dask."""

from __future__ import annotations

from .support import choices_help, count


def add_engine_options(p, *, runs: str, inprocess: str, dask: str, parts_dir: str) -> None:
    """Add --engine, --scheduler, --workers and --parts-dir to `p`; the texts say what runs."""
    p.add_argument("--engine", choices=("inprocess", "dask"), default="inprocess",
                   help=choices_help(runs, {"inprocess": inprocess, "dask": dask}))
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --engine dask: an existing Dask scheduler, tcp://host:8786 "
                        "(default: a LocalCluster on this machine)")
    p.add_argument("--workers", type=count, default=None,
                   help="with --engine dask and no --scheduler: LocalCluster worker "
                        "processes (default: every core)")
    p.add_argument("--parts-dir", metavar="DIR", default=None, help=parts_dir)
