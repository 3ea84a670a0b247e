"""Gateways, a network and a store in virtual time (simpy): races you can replay.

Each request arrives at a gateway at its time; the gateway runs the strategy's program, and
every command the program yields travels over the network (one-way latency drawn from a
seeded generator), executes atomically at the store in arrival order, and travels back. Every
command is recorded (who, what, sent, arrived, executed, replied, reply) and every request
gets exactly one decision.

Faults: during an *outage* the store refuses commands (the gateway hears so after the trip
back); during a *stall* the store holds each command for extra seconds before executing it,
and the commands that arrive behind them wait their turn (one queue, in arrival order) — a
gateway whose ``timeout_s`` passes first decides without the reply, while the command still
executes later (a late INCR still counts). A request whose program meets either decides by its
endpoint's policy: fail-open admits, fail-closed rejects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
import simpy

from ..limiters.base import non_negative, positive, whole
from ..store.errors import StoreError, StoreUnavailable
from ..store.protocol import Connection
from ..store.sim import SimStore
from ..traces import generators
from .strategies import Strategy


# ---------------------------------------------------------------- network latency


@dataclass(frozen=True)
class Latency:
    """One-way network latency in seconds.

    fixed      always `a`
    uniform    uniform on [a, b]
    lognormal  median `a`, log-space standard deviation `b` (a long right tail)
    """

    kind: str = "fixed"
    a: float = 0.001
    b: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "uniform", "lognormal"):
            raise ValueError(f"latency kind must be fixed, uniform or lognormal, got {self.kind!r}")
        non_negative("latency a", self.a)
        non_negative("latency b", self.b)
        if self.kind == "uniform" and self.b < self.a:
            raise ValueError(f"uniform latency needs b >= a, got a={self.a!r}, b={self.b!r}")

    def sample(self, rng: np.random.Generator) -> float:
        """One draw, in seconds."""
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return float(rng.uniform(self.a, self.b))
        return float(self.a * math.exp(self.b * rng.standard_normal()))

    @classmethod
    def parse(cls, text: str) -> "Latency":
        """From "fixed:0.001", "uniform:0.0005,0.002" or "lognormal:0.001,0.5"."""
        kind, _, params = text.partition(":")
        try:
            nums = [float(x) for x in params.split(",") if x]
        except ValueError:
            raise ValueError(f"latency must look like fixed:0.001, got {text!r}") from None
        if not 1 <= len(nums) <= 2:
            raise ValueError(f"latency must look like fixed:0.001, got {text!r}")
        return cls(kind, *nums)


# ---------------------------------------------------------------- requests and faults


@dataclass(frozen=True)
class Request:
    """One client request arriving at a gateway at `time` (true seconds)."""

    id: int
    time: float
    gateway: int
    client: str = "c0"
    endpoint: str = "api"
    key: str = "rl"


def burst(n: int, gateways: int, duration_s: float, rng: np.random.Generator, *,
          start: float = 0.0, weights: Sequence[float] | None = None, key: str = "rl",
          endpoint: str = "api") -> list[Request]:
    """`n` requests at the times of a random :func:`ratelab.traces.generators.burst` (uniform
    in [start, start + duration_s), sorted), each sent to a gateway drawn with `weights`
    (default: evenly)."""
    n, gateways = whole("n", n), whole("gateways", gateways)
    times = generators.burst(n, start_s=start, spread_s=positive("duration_s", duration_s),
                             rng=rng).time
    p = None if weights is None else np.asarray(weights, float) / np.sum(weights)
    gws = rng.choice(gateways, size=n, p=p)
    return [Request(i, float(t), int(g), f"c{i}", endpoint, key)
            for i, (t, g) in enumerate(zip(times, gws))]


def steady(rate_per_s: float, duration_s: float, gateways: int, rng: np.random.Generator, *,
           weights: Sequence[float] | None = None, key: str = "rl",
           endpoints: Sequence[str] = ("api",)) -> list[Request]:
    """Poisson arrivals at `rate_per_s` for `duration_s`, spread over gateways by `weights`;
    each request's endpoint drawn evenly from `endpoints`."""
    n = int(rng.poisson(positive("rate_per_s", rate_per_s) * positive("duration_s", duration_s)))
    times = np.sort(rng.uniform(0, duration_s, n))
    p = None if weights is None else np.asarray(weights, float) / np.sum(weights)
    gws = rng.choice(whole("gateways", gateways), size=n, p=p)
    eps = rng.choice(len(endpoints), size=n)
    return [Request(i, float(t), int(g), f"c{i}", endpoints[e], key)
            for i, (t, g, e) in enumerate(zip(times, gws, eps))]


@dataclass(frozen=True)
class Faults:
    """What goes wrong at the store, and what each endpoint does about it.

    outages    (start, end) true-time intervals when the store refuses every command.
    stalls     (start, end, extra_s): commands arriving then wait extra_s before executing.
    timeout_s  how long a gateway waits for a reply before it gives up.
    policy     endpoint -> "open" (admit when the store fails) or "closed" (reject).
    default    the policy of endpoints not named.
    """

    outages: tuple[tuple[float, float], ...] = ()
    stalls: tuple[tuple[float, float, float], ...] = ()
    timeout_s: float = 0.05
    policy: dict[str, str] = field(default_factory=dict)
    default: str = "open"

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {self.timeout_s!r}")
        for p in [*self.policy.values(), self.default]:
            if p not in ("open", "closed"):
                raise ValueError(f"policy must be 'open' or 'closed', got {p!r}")

    def down(self, t: float) -> bool:
        """Whether the store refuses commands at true time `t`."""
        return any(a <= t < b for a, b in self.outages)

    def stall(self, t: float) -> float:
        """Extra seconds a command arriving at `t` waits before it executes."""
        return sum(x for a, b, x in self.stalls if a <= t < b)

    def fail_open(self, endpoint: str) -> bool:
        """Whether `endpoint` admits requests it cannot check."""
        return self.policy.get(endpoint, self.default) == "open"


# ---------------------------------------------------------------- what a run records


def describe(cmd: Any) -> str:
    """A command (or pipeline) as short text: "INCR rl:0", "EVALSHA fixed_window ..."."""
    if isinstance(cmd, list):
        return " | ".join(describe(c) for c in cmd)
    words = [str(w) for w in cmd]
    if words[0].upper() in ("EVALSHA", "EVAL"):
        return f"{words[0].upper()} {' '.join(words[3:3 + int(words[2])])}"
    return " ".join(words)


@dataclass
class CommandRecord:
    """One round trip: who sent what when, when it ran at the store, when the reply came."""

    request: int          # the request id (-1 for a background sync)
    who: str              # the gateway, "g0", "g1", ...
    what: str
    sent: float
    arrived: float | None = None
    executed: float | None = None
    replied: float | None = None
    reply: str = ""
    late: bool = False    # the reply came after the gateway had given up


@dataclass
class DecisionRecord:
    """The one decision a request got."""

    request: int
    gateway: int
    client: str
    endpoint: str
    time: float           # true arrival time
    decided: float
    allowed: bool
    how: str              # "store", "local", "fail-open", "fail-closed"


@dataclass
class Run:
    """Everything a simulation recorded."""

    strategy: Strategy
    requests: list[Request]
    commands: list[CommandRecord]
    decisions: list[DecisionRecord]
    store: SimStore

    @property
    def admitted(self) -> int:
        """How many requests were admitted."""
        return sum(d.allowed for d in self.decisions)

    def round_trips_per_request(self) -> float:
        """Store round trips (decisions and background syncs) per request."""
        return len(self.commands) / max(1, len(self.requests))

    def admitted_per_window(self, window_s: float | None = None) -> dict[int, int]:
        """Admitted requests per true calendar window k (arrival time in [kW, (k+1)W))."""
        w = window_s or self.strategy.window_s
        out: dict[int, int] = {}
        for d in self.decisions:
            if d.allowed:
                k = math.floor(d.time / w)
                out[k] = out.get(k, 0) + 1
        return out

    def over_admitted(self, limit: int | None = None, window_s: float | None = None) -> int:
        """Admissions beyond the limit, summed over true calendar windows."""
        limit = self.strategy.limit if limit is None else limit
        return sum(max(0, n - limit) for n in self.admitted_per_window(window_s).values())

    def decisions_frame(self):
        """The decisions as a pandas DataFrame."""
        import pandas as pd  # ~0.3 s more to import, only for this frame: not for every run

        return pd.DataFrame([vars(d) for d in self.decisions])


def _short(reply: Any) -> str:
    if isinstance(reply, list):
        return "[" + ", ".join(_short(r) for r in reply) + "]"
    if isinstance(reply, Exception):
        return str(reply).split(" script:")[0]
    return "nil" if reply is None else str(reply)


# ---------------------------------------------------------------- the simulation


def simulate(strategy: Strategy, requests: Iterable[Request], *, store: SimStore | None = None,
             latency: Latency = Latency(), faults: Faults | None = None,
             skew_s: Sequence[float] | None = None, seed: int = 0) -> Run:
    """Run every request through `strategy` in virtual time; return what happened.

    store    the SimStore to run on (default: a fresh one); its clock becomes the simulation's.
    latency  one-way network latency, drawn per trip.
    faults   outages, stalls, the gateways' timeout and each endpoint's policy (default: none,
             and gateways wait for ever).
    skew_s   per-gateway clock offset in seconds (a gateway sees true time + its skew).
    seed     seeds the latency draws; the same arguments give the same run.
    """
    requests = sorted(requests, key=lambda r: (r.time, r.id))
    env = simpy.Environment()
    store = store if store is not None else SimStore()
    if not store.virtual_time:  # a real server keeps its own time: the run's clock is ours
        raise ValueError(f"store must keep virtual time (a SimStore) for a simulation, got a "
                         f"{store.kind} store; run real stores with cluster.threads")
    store.clock = lambda: env.now
    faults = faults if faults is not None else Faults(timeout_s=math.inf)
    rng = np.random.default_rng(seed)
    skews = list(skew_s) if skew_s is not None else []
    skews += [0.0] * (strategy.gateways - len(skews))
    strategy.setup(store.connect("setup"))
    commands: list[CommandRecord] = []
    decisions: list[DecisionRecord] = []
    state = {"open": len(requests)}
    backlog = {"held": 0, "until": -math.inf}  # commands a stall holds, and when the last runs

    def gateway_now(g: int) -> float:
        return env.now + skews[g]

    def deliver(cmd, conn, rec: CommandRecord, done: simpy.Event):
        yield env.timeout(latency.sample(rng))
        rec.arrived = env.now
        if faults.down(env.now):
            result: Any = StoreUnavailable("store unavailable (connection refused)")
        else:
            # One queue, as Redis is one thread: while a stall holds commands, later arrivals
            # wait behind them, so the store still runs commands in arrival order.
            extra = faults.stall(env.now)
            if extra or backlog["held"]:
                ready = max(env.now + extra, backlog["until"])
                backlog["held"] += 1
                backlog["until"] = ready
                yield env.timeout(ready - env.now)
                backlog["held"] -= 1
            rec.executed = env.now
            result = execute(conn, cmd)
        rec.reply = _short(result)
        yield env.timeout(latency.sample(rng))
        rec.replied = env.now
        if done.triggered:
            rec.late = True
        else:
            done.succeed(result)

    def round_trip(cmd, conn, who: str, rid: int):
        rec = CommandRecord(rid, who, describe(cmd), env.now)
        commands.append(rec)
        done = env.event()
        env.process(deliver(cmd, conn, rec, done))
        if math.isfinite(faults.timeout_s):
            yield done | env.timeout(faults.timeout_s)
            if not done.triggered:
                done.succeed(None)  # marks the reply, when it comes, as late
                raise StoreUnavailable(f"no reply within {faults.timeout_s} s")
        else:
            yield done
        result = done.value
        if isinstance(result, (StoreError, StoreUnavailable)):
            raise result
        return result

    def drive(program, conn, who: str, rid: int):
        """Run a program over the network; return (value, whether it used the store)."""
        used = False
        try:
            cmd = next(program)
            while True:
                used = True
                try:
                    reply = yield from round_trip(cmd, conn, who, rid)
                except (StoreError, StoreUnavailable) as e:
                    cmd = program.throw(e)
                    continue
                cmd = program.send(reply)
        except StopIteration as stop:
            return stop.value, used

    def handle(req: Request):
        yield env.timeout(max(0.0, req.time - env.now))
        who = f"g{req.gateway}"
        conn = store.connect(f"{who}/r{req.id}")
        program = strategy.decide(req.gateway, req.key, gateway_now(req.gateway))
        try:
            allowed, used = yield from drive(program, conn, who, req.id)
            how = "store" if used else "local"
        except StoreUnavailable:
            allowed = faults.fail_open(req.endpoint)
            how = "fail-open" if allowed else "fail-closed"
        decisions.append(DecisionRecord(req.id, req.gateway, req.client, req.endpoint,
                                        req.time, env.now, bool(allowed), how))
        state["open"] -= 1

    def syncer(g: int):
        conn = store.connect(f"g{g}/sync")
        while state["open"] > 0:
            yield env.timeout(strategy.sync_interval_s)
            try:
                yield from drive(strategy.sync(g, gateway_now(g)), conn, f"g{g}", -1)
            except StoreUnavailable:
                pass

    for req in requests:
        env.process(handle(req))
    if strategy.sync_interval_s and requests:
        for g in range(strategy.gateways):
            env.process(syncer(g))
    env.run()
    decisions.sort(key=lambda d: d.request)
    return Run(strategy, requests, commands, decisions, store)


def execute(conn: Connection, cmd) -> Any:
    """Run one command or a pipeline at the store; an error reply comes back as a value."""
    if isinstance(cmd, list):
        out = []
        for c in cmd:
            try:
                out.append(conn.execute(*c))
            except StoreError as e:
                out.append(e)
        return out
    try:
        return conn.execute(*cmd)
    except StoreError as e:
        return e
