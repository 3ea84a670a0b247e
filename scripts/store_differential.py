#!/usr/bin/env python
"""SimStore against a real redis-server: a large seeded differential run.

Sends the same seeded stream of commands (every command SimStore implements, good input and
bad, from two clients; see tests/differential.py) to a SimStore and to redis-server,
compares every reply, error texts included, and prints how many commands were sent and how
many replies differed. Exits 1 on any difference (or when no server can be had), 0 otherwise.

    python scripts/store_differential.py                      # 20,000 commands, seed 20261201
    python scripts/store_differential.py --commands 50000 --seed 7
    python scripts/store_differential.py --url redis://127.0.0.1:6379/15   # ITS DATA IS DELETED

Without --url it starts its own redis-server (from PATH or /usr/bin, /usr/sbin) on a free
loopback port, with no persistence, and stops it at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # ratelab, and the stream the tests run too

from ratelab.cluster.strategies import script  # noqa: E402
from ratelab.store import RedisStore, SimStore, StoreUnavailable  # noqa: E402
from differential import SCRIPTS, command_stream, compare  # noqa: E402
from ratelab.store.lualib import REDIS_VERSION  # noqa: E402


@contextmanager
def redis_server():
    """A fresh redis-server on a free loopback port; yields its URL (None if not installed)."""
    binary = shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).exists()),
        None)
    if binary is None:
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run(url: str, seed: int, commands: int, keep: int) -> dict:
    """The differential run on the server at `url`: compare()'s record, plus the server's
    version."""
    real = RedisStore(url)
    try:
        real.execute("FLUSHALL")
        real.execute("SCRIPT", "FLUSH")
        version = real.execute("INFO", "server").split("redis_version:")[1].split()[0]
        seconds, micros = real.execute("TIME")
        sim = SimStore()
        sim.set_time(int(seconds) + int(micros) / 1e6)  # absolute deadlines mean the same
        # the project's scripts but fixed_window.lua, whose reply carries a raw PTTL
        scripts = SCRIPTS + [script(n) for n in ("sliding_window", "sliding_log",
                                                 "token_bucket")]
        started = time.perf_counter()
        record = compare(command_stream(seed, commands, scripts=scripts), sim, real, keep=keep)
        record["seconds"] = round(time.perf_counter() - started, 1)
    finally:
        real.close()
    record.update(seed=seed, server_version=version, simstore_follows=REDIS_VERSION)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Compare SimStore with a real redis-server on a seeded stream of commands.",
        epilog="example: python scripts/store_differential.py --commands 20000 --seed 20261201")
    parser.add_argument("--commands", type=int, default=20_000,
                        help="commands to send, each to both stores (count; default 20000)")
    parser.add_argument("--seed", type=int, default=20261201,
                        help="seed of the command stream (default 20261201)")
    parser.add_argument("--url", default=None,
                        help="redis:// URL of a server to use; its data is deleted "
                             "(default: start a redis-server of our own on loopback)")
    parser.add_argument("--show", type=int, default=20,
                        help="differences to print in full (count; default 20)")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")
    args = parser.parse_args(argv)
    if args.commands < 1:
        parser.error(f"--commands must be at least 1, got {args.commands}")
    if args.seed < 0:
        parser.error(f"--seed must be 0 or more, got {args.seed}")
    if args.show < 0:
        parser.error(f"--show must be 0 or more, got {args.show}")
    with (redis_server() if args.url is None else _given(args.url)) as url:
        if url is None:
            print("error: redis-server is not installed (apt-get install redis-server), "
                  "and no --url was given", file=sys.stderr)
            return 1
        try:
            record = run(url, args.seed, args.commands, args.show)
        except StoreUnavailable as e:
            print(f"error: the server at {url} did not answer: {e}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(record, indent=2, default=str))
    else:
        print(f"redis-server {record['server_version']} (SimStore follows "
              f"{record['simstore_follows']}), seed {record['seed']}, "
              f"{record['seconds']} s")
        print(f"commands sent: {record['commands']}")
        print(f"differences:   {record['differences']}")
        for e in record["examples"]:
            print(f"  #{e['index']} client {e['client']}: {e['command']!r}\n"
                  f"      simstore: {e['a']!r}\n      redis:    {e['b']!r}")
        print("commands by name: " + ", ".join(
            f"{name[:20]} {n}" for name, n in record["commands_by_name"].items()))
    return 1 if record["differences"] else 0


@contextmanager
def _given(url: str):
    yield url


if __name__ == "__main__":
    sys.exit(main())
