"""``--report FILE``: the option of every command that can write its record as a page::

    add_report(p, "the table, the figures, the load report")
    ...
    if args.report is not None:
        from ..whatif.page import write_page  # here: matplotlib, for a page only
        write_report(args, write_page, record)

A FILE that is a folder, or in a folder that does not exist, is refused when the command line
is read (one line, exit 2), before any work; a page that cannot be written is one line, exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from .support import EnvironmentFailure

FLAG = "--report"


def page_path(text: str) -> Path:
    """A type: the path of a page to write, not a folder, in a folder that exists."""
    path = Path(text)
    try:
        folder, parent = path.is_dir(), path.parent.is_dir()
    except OSError as e:  # a name too long for the file system ...
        raise argparse.ArgumentTypeError(f"cannot write {text}: {e.strerror}") from None
    if folder:
        raise argparse.ArgumentTypeError(f"{text} is a folder; give the path of the page to "
                                         f"write, e.g. {path / 'report.html'}")
    if not parent:
        raise argparse.ArgumentTypeError(f"there is no folder {path.parent} to write "
                                         f"{path.name} in")
    return path


page_path.unit, page_path.metavar = "", "FILE"  # as support's types declare them


def add_report(p: argparse.ArgumentParser, what: str) -> None:
    """Add ``--report FILE`` to `p`: the page shows `what`."""
    p.add_argument(FLAG, type=page_path, default=None,
                   help=f"also write the record to this file as one HTML page: {what}; "
                        "self-contained, it fetches nothing (default: no page)")


def write_report(args: argparse.Namespace, write: Callable[[dict, Path], int],
                 record: dict) -> None:
    """Write `record` as a page to ``args.report`` with `write` (which returns the bytes
    written) and say so on stderr; a file that cannot be written is an EnvironmentFailure
    naming the flag."""
    try:
        size = write(record, args.report)
    except OSError as e:
        raise EnvironmentFailure(f"{FLAG}: cannot write {args.report}: {e.strerror or e}",
                                 "check the path and its permissions") from None
    print(f"{FLAG}: wrote {args.report} ({size / 1024:,.0f} KB)", file=sys.stderr)
