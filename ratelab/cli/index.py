"""``ratelab index``: write (or check) the README's notebook index, from the titles."""

from __future__ import annotations

import sys

from ..index import update_readme
from .support import command


def add_index(sub) -> None:
    p = command(sub, "index", run=run_index, render=render_index,
                help="write the notebook index into README.md (from titles)",
                description="Write the list of numbered notebooks, titled by their first "
                            "heading, into README.md between its index markers. With "
                            "--check, only say whether it is up to date (exit 1 if not).",
                example="ratelab index --check")
    p.add_argument("--check", action="store_true",
                   help="only say whether README.md is up to date (exit 1 if not)")


def run_index(args):
    r = update_readme(check=args.check)
    if args.check and not r["up_to_date"]:
        print("README.md's notebook index is stale: run `ratelab index`", file=sys.stderr)
        return r, 1
    return r


def render_index(r: dict) -> str:
    if r["written"] or not r["up_to_date"]:
        return f"README.md: {r['notebooks']} notebooks indexed"
    return f"README.md's notebook index is up to date ({r['notebooks']} notebooks)"
