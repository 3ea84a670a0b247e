"""The same strategy programs on real threads, against a real store (a RedisStore).

Each gateway is a thread with its own connection; requests are dealt to the gateways round
robin, and each gateway runs the strategy's program for each of its requests, sending each
command (or pipeline) as it is yielded, through the same :func:`~ratelab.cluster.sim.execute`
the simulator uses. `think_s` is a pause between a reply and the next command — the gap a busy
gateway has between GET and INCR — which widens the window for races without changing what is
sent.

This is the one place that reads real time, and it takes the clock it is given
(``clock()`` returns seconds; default ``time.time``) and the sleep it is given.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from ..limiters.base import non_negative, whole
from ..store.errors import StoreError, StoreUnavailable
from ..store.protocol import Connection, Store
from .sim import execute
from .strategies import Strategy


@dataclass
class ThreadRun:
    """What a threaded run produced."""

    requests: int
    admitted: int
    per_gateway: list[int]
    round_trips: int
    errors: list[str]

    def round_trips_per_request(self) -> float:
        """Store round trips per request."""
        return self.round_trips / max(1, self.requests)


def run_threads(strategy: Strategy, store: Store, requests: int, *, key: str = "rl",
                think_s: float = 0.0, clock: Callable[[], float] = time.time,
                sleep: Callable[[float], None] = time.sleep,
                fail_open: bool = False, setup: bool = True,
                sync_clock: Callable[[], float] = time.monotonic) -> ThreadRun:
    """Decide `requests` requests on `strategy.gateways` threads at once; count admissions.

    A store that fails mid-run decides by `fail_open`. Every request gets one decision; any
    other error in a gateway's thread (an error reply its program does not handle) is raised
    here once every thread has ended.
    `setup=False` skips ``strategy.setup`` (scripts already loaded). A strategy that syncs
    in the background (``sync_interval_s``) syncs from its gateway's thread, between requests,
    whenever `sync_clock` says the interval has passed.
    """
    requests = whole("requests", requests)
    think_s = non_negative("think_s", think_s)
    if setup:
        strategy.setup(store.connect("setup"))
    # A round-robin load balancer: gateway g serves requests g, g + N, g + 2N, ...
    share = [len(range(g, requests, strategy.gateways)) for g in range(strategy.gateways)]
    admitted = [0] * strategy.gateways
    trips = [0] * strategy.gateways
    errors: list[str] = []
    crashed: list[BaseException] = []
    start = threading.Barrier(strategy.gateways)

    def gateway(g: int) -> None:
        conn = None
        start.wait()
        last_sync = sync_clock()
        try:
            for _ in range(share[g]):
                try:
                    if conn is None:
                        conn = store.connect(f"g{g}")
                    interval = strategy.sync_interval_s
                    if interval and sync_clock() - last_sync >= interval:
                        last_sync = sync_clock()
                        _drive(strategy.sync(g, clock()), conn, g, trips, think_s, sleep)
                    allowed = _drive(strategy.decide(g, key, clock()), conn, g, trips,
                                     think_s, sleep)
                except StoreUnavailable as e:
                    errors.append(str(e))
                    allowed = fail_open
                admitted[g] += bool(allowed)
        except BaseException as e:  # noqa: BLE001 - handed to the caller below
            crashed.append(e)
        finally:
            if conn is not None:
                conn.close()

    threads = [threading.Thread(target=gateway, args=(g,), name=f"gateway-{g}")
               for g in range(strategy.gateways)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if crashed:
        raise crashed[0]
    return ThreadRun(requests, sum(admitted), admitted, sum(trips), errors)


def _drive(program, conn: Connection, g: int, trips: list[int], think_s: float, sleep) -> bool:
    """Run one program over a real connection; its value. Each command (or pipeline) goes
    through the simulator's :func:`~ratelab.cluster.sim.execute`, so a pipeline means the same
    on both; an error reply, or the store being unreachable, is raised inside the program (as
    the simulator does), which may handle it."""
    try:
        cmd = next(program)
        while True:
            trips[g] += 1
            try:
                reply = execute(conn, cmd)
            except StoreUnavailable as e:
                reply = e
            if think_s:
                sleep(think_s)
            if isinstance(reply, (StoreError, StoreUnavailable)):
                cmd = program.throw(reply)
            else:
                cmd = program.send(reply)
    except StopIteration as stop:
        return bool(stop.value)
