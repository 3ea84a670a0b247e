"""Every interleaving of a few small programs, each command atomic at the store.

Two or three clients, a few commands each: we try every order in which their commands can
reach the store (a schedule), replaying the programs from a fresh store for each, and count
the schedules that end badly. A schedule is the sequence of clients whose next command runs.
The number of schedules grows fast (3 clients x 3 commands: 1,680), so this is for small
programs only; ``max_schedules`` guards against a large one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..store.errors import StoreError
from ..store.sim import SimStore
from .sim import _short, describe, execute
from .strategies import Strategy


@dataclass(frozen=True)
class Outcome:
    """One schedule and what came of it."""

    schedule: tuple[int, ...]
    steps: tuple[tuple[int, str, str], ...]   # (client, command, reply) in store order
    admitted: tuple[bool, ...]                # per client
    counter: str | None                       # the counter's value at the end

    @property
    def total_admitted(self) -> int:
        """How many clients were admitted."""
        return sum(self.admitted)


def _replay(strategy_factory, n_clients, schedule, setup, key, now):
    store = SimStore()
    store.set_time(now)
    strategy = strategy_factory()
    strategy.setup(store.connect("setup"))
    setup(store)
    conns = [store.connect(f"c{i}") for i in range(n_clients)]
    programs = [strategy.decide(i, key, now) for i in range(n_clients)]
    pending: list[Any] = [None] * n_clients
    results: list[bool | None] = [None] * n_clients
    for i, p in enumerate(programs):
        try:
            pending[i] = next(p)
        except StopIteration as stop:
            results[i] = bool(stop.value)
    steps = []
    for i in schedule:
        cmd = pending[i]
        reply = execute(conns[i], cmd)
        steps.append((i, describe(cmd), _short(reply)))
        try:
            if isinstance(reply, StoreError):
                pending[i] = programs[i].throw(reply)
            else:
                pending[i] = programs[i].send(reply)
        except StopIteration as stop:
            results[i] = bool(stop.value)
            pending[i] = None
    return store, results, steps


def interleavings(strategy_factory: Callable[[], Strategy], clients: int = 2, *,
                  setup: Callable[[SimStore], None] = lambda store: None, key: str = "rl",
                  now: float = 0.5, counter_key: str | None = None,
                  max_schedules: int = 20_000) -> list[Outcome]:
    """Every schedule of `clients` programs from `strategy_factory()` deciding one request each
    at time `now`, after `setup(store)`; with the counter's final value read at `counter_key`.
    """
    if not 1 <= clients <= 4:
        raise ValueError(f"clients must be between 1 and 4 for exhaustive search, got {clients!r}")
    outcomes: list[Outcome] = []

    def explore(schedule: tuple[int, ...]) -> None:
        store, results, steps = _replay(strategy_factory, clients, schedule, setup, key, now)
        runnable = [i for i in range(clients) if results[i] is None]
        if not runnable:
            counter = store.execute("GET", counter_key) if counter_key else None
            outcomes.append(Outcome(schedule, tuple(steps), tuple(results), counter))
            return
        for i in runnable:
            if len(outcomes) >= max_schedules:
                raise ValueError(f"more than max_schedules={max_schedules} schedules")
            explore(schedule + (i,))

    explore(())
    return outcomes

