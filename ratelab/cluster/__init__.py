"""Gateways sharing a limit through a store: strategies, simulated network, faults, races.

* :mod:`.strategies` — the strategies as store-agnostic programs, and ``make_strategy``.
* :mod:`.sim` — simpy gateways over a network with latency; faults; command records.
* :mod:`.interleave` — every interleaving of small programs.
* :mod:`.threads` — the same programs on real threads (against a real Redis).
* :mod:`.experiments` — the measured claims used by ``ratelab race`` and the notebooks.
* :mod:`.swimlane` — the swimlane diagram of a run's commands.
"""

from __future__ import annotations

from .sim import Faults, Latency, Request, Run, burst, simulate, steady
from .strategies import STRATEGIES, Strategy, make_strategy, script

__all__ = ["STRATEGIES", "Strategy", "make_strategy", "script", "Latency", "Faults", "Request",
           "Run", "simulate", "burst", "steady"]
