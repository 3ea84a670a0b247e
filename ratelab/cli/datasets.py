"""``ratelab datasets list | path NAME | verify NAME | fetch NAME``: the recorded traces."""

from __future__ import annotations

from pathlib import Path

from ..datasets import ENV, NAMES, catalogue, fetch, get, path, verify
from .support import HelpFormatter, add_debug, command, seconds, table


def add_datasets(sub) -> None:
    p = sub.add_parser(
        "datasets", help="the recorded traces: list, locate, verify, fetch",
        description=f"The recorded traces by name. Files are looked for in ${ENV}, then in "
                    "the project's data/ folder.",
        epilog="example:\n  ratelab datasets list --json\n  ratelab datasets path epa-http",
        formatter_class=HelpFormatter)
    add_debug(p)
    p.set_defaults(_parser=p)
    actions = p.add_subparsers(dest="datasets_command", metavar="ACTION", required=True)
    command(actions, "list", run=run_list, render=render_list,
            help="every dataset, its counts, and whether it is here",
            description="Every dataset of the registry: requests, clients, format, and the "
                        "file's path (or that it is missing).",
            example="ratelab datasets list --json")
    for action, text, run, render in [
            ("path", "print the file's path", run_path, lambda r: r["path"]),
            ("verify", "check the file's sha256", run_verify,
             lambda r: f"{r['path']}: sha256 {r['sha256']} ok"),
            ("fetch", "download from the public source and verify", run_fetch,
             lambda r: r["path"])]:
        c = command(actions, action, run=run, render=render, help=text,
                    description=f"{text[0].upper()}{text[1:]} (datasets: {', '.join(NAMES)}).",
                    example=f"ratelab datasets {action} epa-http")
        c.add_argument("name", choices=NAMES, metavar="DATASET",
                       help="one of " + ", ".join(NAMES))
        if action == "fetch":
            c.add_argument("--dest", type=Path, default=None,
                           help=f"folder to save in (default: ${ENV}, else data/)")
            c.add_argument("--timeout", type=seconds, default=10.0,
                           help="network timeout per read")
            c.add_argument("--force", action="store_true", help="download even if present")


def run_list(args) -> dict:
    return catalogue()


def render_list(r: dict) -> str:
    rows = [{"name": d["name"], "requests": d["requests"], "clients": d["clients"],
             "file": d["path"] or f"missing ({d['file']})"} for d in r["datasets"]]
    return table(rows) + "\n\n" + "\n".join(f"{d['name']}: {d['description']}"
                                             for d in r["datasets"])


def run_path(args) -> dict:
    return {"name": args.name, "path": str(path(args.name))}


def run_verify(args) -> dict:
    return {"name": args.name, "path": str(verify(args.name)), "sha256": get(args.name).sha256,
            "ok": True}


def run_fetch(args) -> dict:
    return {"name": args.name,
            "path": str(fetch(args.name, args.dest, timeout_s=args.timeout, force=args.force))}
