"""How long ``ratelab`` takes to start: the interpreter alone, then commands that need more and
more of the package, each run as a fresh process (wall seconds, best and median of rounds).

``ratelab --version`` and ``ratelab --help`` build only the top level (``ratelab.cli``'s
summary parser) and import none of the command modules; ``ratelab limiters`` loads the
limiters and numpy; the floor is ``python -c pass``, what no command can beat. The rounds
interleave the commands, so that a machine busy with other work slows all of them alike.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("python -c pass (floor)", ("-c", "pass")),
    ("ratelab --version", ("-m", "ratelab.cli", "--version")),
    ("ratelab --help", ("-m", "ratelab.cli", "--help")),
    ("ratelab limiters", ("-m", "ratelab.cli", "limiters")),
)


def _wall_s(args: tuple[str, ...]) -> float:
    """Seconds from starting ``python *args`` to its exit (its output thrown away)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def run(repeat: int = 10, log=None) -> dict:
    """`repeat` interleaved rounds of every command; the record ``ratelab bench startup``
    prints."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat!r}")
    say = log or (lambda *a: None)
    times: dict[str, list[float]] = {name: [] for name, _ in COMMANDS}
    for r in range(repeat):
        for name, args in COMMANDS if r % 2 == 0 else COMMANDS[::-1]:
            times[name].append(_wall_s(args))
        say(f"round {r + 1}/{repeat}")
    return {
        "command": f"ratelab bench startup --repeat {repeat}",
        "repeat": repeat,
        "python": sys.executable,
        "results": [{"command": name, "best_s": min(times[name]),
                     "median_s": statistics.median(times[name])} for name, _ in COMMANDS],
    }


def table(figures: dict) -> str:
    """The figures as a small text table."""
    out = [f"start-up, wall seconds, {figures['repeat']} rounds",
           f"{'':26}{'best':>8}{'median':>9}"]
    for row in figures["results"]:
        out.append(f"{row['command']:26}{row['best_s']:8.3f}{row['median_s']:9.3f}")
    return "\n".join(out)
