"""Clients that are told no: retry behaviours, and many of them against one limited server.

A bare 429 makes every client retry at once: the limiter turns excess load into a
synchronized retry hammer. This module lets you watch that happen, in virtual time:

* behaviours (what a client does after a refusal): :class:`Immediate`, :class:`FixedDelay`,
  :class:`ExponentialBackoff`, :class:`FullJitter` (exponential backoff with full jitter:
  a uniform wait in [0, min(cap, base x 2^(n-1)))), :class:`HonourRetryAfter` (wait what the
  server said, optionally plus jitter) and :class:`PaceByRemaining` (read RateLimit on every
  response and spread the remaining quota over the time to reset, so as never to be refused);
  :class:`WaitForReset` (sleep until X-RateLimit-Reset: the wave at fixed-window resets);
* :class:`Server`: a reference limiter behind :func:`ratelab.http.respond` — clients only ever
  see the status and headers, parsed back with :func:`ratelab.http.read`;
* :func:`simulate`: demand (job arrival times and the client of each) against the server,
  with a simpy environment (virtual ``env.now``; ties in arrival order) and one seeded `rng`;
* :class:`StormResult`: every attempt, and from them offered load, accepted load, retries
  per success and the load multiplier (attempts per unit of demand) over time.

The network is a fixed round trip `rtt_s`: the server decides at the send time; the client
reads the answer `rtt_s` later. "Immediate" retry is therefore one retry per round trip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Hashable, Sequence

import numpy as np
import simpy

from .http import Policy, Response, View, read, respond
from .limiters import make
from .limiters.base import non_negative, positive, whole

# ---------------------------------------------------------------- behaviours


@dataclass(frozen=True, kw_only=True)
class Behaviour:
    """What a client does after a refusal. `max_attempts` counts the first try."""

    max_attempts: int = 10
    paces = False  # whether the client holds its requests to a pace it reads from headers

    def __post_init__(self) -> None:
        whole("max_attempts", self.max_attempts)

    @property
    def label(self) -> str:
        """A short name for tables and legends."""
        return type(self).__name__

    def retry_delay(self, attempt: int, view: View, rng: np.random.Generator) -> float:
        """Seconds to wait after refused attempt number `attempt` (1 = the first try)."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Immediate(Behaviour):
    """Retry at once: the next try leaves as soon as the refusal arrives."""

    @property
    def label(self) -> str:
        return "immediate"

    def retry_delay(self, attempt, view, rng) -> float:
        return 0.0


@dataclass(frozen=True, kw_only=True)
class FixedDelay(Behaviour):
    """Wait `delay_s` after every refusal."""

    delay_s: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("delay_s", self.delay_s)

    @property
    def label(self) -> str:
        return f"fixed {self.delay_s:g} s"

    def retry_delay(self, attempt, view, rng) -> float:
        return self.delay_s


@dataclass(frozen=True, kw_only=True)
class ExponentialBackoff(Behaviour):
    """Wait min(cap_s, base_s x factor^(n-1)) after the n-th refusal — the same for everyone."""

    base_s: float = 0.1
    cap_s: float = 10.0
    factor: float = 2.0

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("base_s", self.base_s)
        positive("cap_s", self.cap_s)
        if positive("factor", self.factor) < 1:
            raise ValueError(f"factor must be >= 1, got {self.factor!r}")

    @property
    def label(self) -> str:
        return "exponential"

    def ceiling(self, attempt: int) -> float:
        """The backoff after refused attempt `attempt`, before any jitter."""
        return min(self.cap_s, self.base_s * self.factor ** (attempt - 1))

    def retry_delay(self, attempt, view, rng) -> float:
        return self.ceiling(attempt)


@dataclass(frozen=True, kw_only=True)
class FullJitter(ExponentialBackoff):
    """Exponential backoff with full jitter: uniform in [0, min(cap_s, base_s x factor^(n-1)))."""

    @property
    def label(self) -> str:
        return "exponential + full jitter"

    def retry_delay(self, attempt, view, rng) -> float:
        return float(rng.uniform(0.0, self.ceiling(attempt)))


@dataclass(frozen=True, kw_only=True)
class _WaitForHeader(Behaviour):
    """Wait the seconds one response header says (``header``: a ResponseView field), plus
    uniform jitter in [0, jitter_s); without that header, fall back to `fallback`."""

    header = ""
    header_label = ""
    jitter_s: float = 0.0
    fallback: Behaviour = field(default_factory=lambda: FullJitter())

    def __post_init__(self) -> None:
        super().__post_init__()
        non_negative("jitter_s", self.jitter_s)

    @property
    def label(self) -> str:
        return self.header_label + (f" + jitter {self.jitter_s:g} s" if self.jitter_s else "")

    def retry_delay(self, attempt, view, rng) -> float:
        wait = getattr(view, self.header)
        if wait is None:
            return self.fallback.retry_delay(attempt, view, rng)
        jitter = float(rng.uniform(0.0, self.jitter_s)) if self.jitter_s else 0.0
        return wait + jitter


@dataclass(frozen=True, kw_only=True)
class HonourRetryAfter(_WaitForHeader):
    """Wait the Retry-After the server sent, plus uniform jitter in [0, jitter_s).

    Without a Retry-After (a server that cannot say), fall back to `fallback`.
    """

    header = "retry_after_s"
    header_label = "Retry-After"


@dataclass(frozen=True, kw_only=True)
class WaitForReset(_WaitForHeader):
    """Sleep until X-RateLimit-Reset (an absolute Unix time), plus uniform jitter in [0, jitter_s).

    Every client refused in a window wakes at the same instant: the window's reset.
    """

    header = "x_reset_s"
    header_label = "X-RateLimit-Reset"


@dataclass(frozen=True, kw_only=True)
class PaceByRemaining(Behaviour):
    """Read RateLimit on every response and hold the next request until the pace allows it.

    After a response saying `r` remaining and `t` seconds to reset, the client's next request
    waits until t / (r + 1) seconds after that response: the remaining quota spread evenly
    over the time left (a whole reset when nothing remains). Sends from one client go one at
    a time. A refusal still happens if others share the key; then honour Retry-After.
    """

    paces = True

    @property
    def label(self) -> str:
        return "pace by RateLimit"

    def pause(self, view: View) -> float:
        """Seconds to hold the next request after reading `view`."""
        if view.remaining is None or view.reset_s is None:
            return 0.0
        return view.reset_s / (view.remaining + 1)

    def retry_delay(self, attempt, view, rng) -> float:
        return view.retry_after_s if view.retry_after_s is not None else self.pause(view)


# ---------------------------------------------------------------- the server


class Server:
    """A reference limiter answering over HTTP: ``handle(client, now)`` -> Response.

    scope "global": one key for everyone (the server's capacity); "client": one key per client
    (a per-API-key limit). `policy` defaults to ``Policy.of(limiter)``.
    """

    SCOPES = ("global", "client")

    def __init__(self, limiter, policy: Policy | None = None, scope: str = "global",
                 epoch_s: int = 0) -> None:
        if scope not in self.SCOPES:
            raise ValueError(f"scope must be one of {self.SCOPES}, got {scope!r}")
        self.limiter = limiter
        self.policy = policy if policy is not None else Policy.of(limiter)
        self.scope = scope
        self.epoch_s = int(epoch_s)

    def handle(self, client: Hashable, now: float) -> Response:
        """Decide one request from `client` at `now` and answer it."""
        key = "all" if self.scope == "global" else client
        decision = self.limiter.allow(key, now)
        return respond(decision, self.policy, now=now, epoch_s=self.epoch_s)


# ---------------------------------------------------------------- demand


def poisson_demand(clients: int, rate_per_s: float, duration_s: float, rng: np.random.Generator,
                   surge: tuple[float, float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Job arrival times and clients: Poisson at `rate_per_s` per client over `duration_s`.

    `surge` = (start_s, end_s, factor) multiplies the rate in [start_s, end_s). Each job goes
    to a client drawn uniformly (a merged Poisson stream is the sum of the clients' streams).
    """
    clients = whole("clients", clients)
    rate = positive("rate_per_s", rate_per_s) * clients
    duration_s = positive("duration_s", duration_s)
    edges = [(0.0, duration_s, 1.0)]
    if surge is not None:
        start, end, factor = (non_negative("surge start", surge[0]),
                              positive("surge end", surge[1]), positive("surge factor", surge[2]))
        if not start < end <= duration_s:
            raise ValueError(f"surge must satisfy 0 <= start < end <= duration_s, got {surge!r}")
        edges = [(0.0, start, 1.0), (start, end, factor), (end, duration_s, 1.0)]
    times = []
    for a, b, f in edges:
        n = rng.poisson(rate * f * (b - a))
        times.append(np.sort(rng.uniform(a, b, n)))
    t = np.concatenate(times)
    return t, rng.integers(0, clients, len(t))


def batch_demand(clients: int, batch: int, every_s: float, duration_s: float,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Job times and clients for clients that send `batch` jobs at once every `every_s`.

    Each client starts at its own uniformly drawn phase in [0, every_s): a cron-like fleet.
    """
    clients, batch = whole("clients", clients), whole("batch", batch)
    every_s, duration_s = positive("every_s", every_s), positive("duration_s", duration_s)
    phases = rng.uniform(0.0, every_s, clients)
    times, owners = [], []
    for c, phase in enumerate(phases):
        starts = np.arange(phase, duration_s, every_s)
        times.append(np.repeat(starts, batch))
        owners.append(np.full(len(starts) * batch, c))
    t, o = np.concatenate(times), np.concatenate(owners)
    order = np.argsort(t, kind="stable")
    return t[order], o[order]


# ---------------------------------------------------------------- the simulation


@dataclass(frozen=True, kw_only=True)
class StormResult:
    """Every job and every attempt of a simulation.

    jobs: arrival time, client, and outcome (time of success, or nan), attempts per job.
    attempts: time, client, job, attempt number (1 = first try), whether it was admitted.
    """

    label: str
    horizon_s: float
    job_time: np.ndarray
    job_done: np.ndarray
    job_gave_up: np.ndarray
    attempt_time: np.ndarray
    attempt_job: np.ndarray
    attempt_number: np.ndarray
    attempt_ok: np.ndarray

    def summary(self, start_s: float = 0.0, end_s: float | None = None) -> dict:
        """Offered / accepted load (per s), retries per success, multiplier, outcomes.

        Counted over attempts and jobs in [start_s, end_s) (default: the whole run).
        ``succeeded_pct`` and ``gave_up_pct`` are percentages of the jobs (``succeeded`` and
        ``gave_up`` are the same as fractions, kept for notebook 08).
        """
        end_s = self.horizon_s if end_s is None else end_s
        span = end_s - start_s
        a = (self.attempt_time >= start_s) & (self.attempt_time < end_s)
        j = (self.job_time >= start_s) & (self.job_time < end_s)
        attempts, ok = int(a.sum()), int((a & self.attempt_ok).sum())
        retries = int((a & (self.attempt_number > 1)).sum())
        jobs = int(j.sum())
        done = ~np.isnan(self.job_done[j])
        return {
            "behaviour": self.label,
            "demand_per_s": jobs / span,
            "offered_per_s": attempts / span,
            "accepted_per_s": ok / span,
            "retries_per_success": retries / ok if ok else math.nan,
            "load_multiplier": attempts / jobs if jobs else math.nan,
            "succeeded": float(done.mean()) if jobs else math.nan,
            "gave_up": float(self.job_gave_up[j].mean()) if jobs else math.nan,
            "succeeded_pct": 100 * float(done.mean()) if jobs else math.nan,
            "gave_up_pct": 100 * float(self.job_gave_up[j].mean()) if jobs else math.nan,
            "p50_latency_s": float(np.median((self.job_done[j] - self.job_time[j])[done]))
            if done.any() else math.nan,
        }

    def over_time(self, bin_s: float = 1.0):
        """A DataFrame per bin of `bin_s`: demand, offered, accepted (per second), multiplier."""
        import pandas as pd  # ~0.3 s to import, only to hand back this frame

        bin_s = positive("bin_s", bin_s)
        edges = np.arange(0.0, self.horizon_s + bin_s / 2, bin_s)
        count = lambda t: np.histogram(t, edges)[0] / bin_s  # noqa: E731
        demand = count(self.job_time)
        offered = count(self.attempt_time)
        accepted = count(self.attempt_time[self.attempt_ok])
        with np.errstate(divide="ignore", invalid="ignore"):
            multiplier = np.where(demand > 0, offered / demand, np.nan)
        return pd.DataFrame({"demand": demand, "offered": offered, "accepted": accepted,
                             "multiplier": multiplier}, index=pd.Index(edges[:-1], name="t_s"))


def simulate(behaviour: Behaviour, server: Server, job_times: Sequence[float],
             job_clients: Sequence[Hashable], rng: np.random.Generator, *, rtt_s: float = 0.05,
             horizon_s: float | None = None) -> StormResult:
    """Run the jobs (arrival times, clients) against `server`, each client acting `behaviour`.

    Each job tries until admitted or `behaviour.max_attempts` tries are spent; the run stops at
    `horizon_s` (default: the last job + 60 s) and jobs not done by then count as neither
    succeeded nor given up.
    """
    times = np.asarray(job_times, dtype=float)
    clients = list(job_clients)
    if len(times) != len(clients):
        raise ValueError(f"job_times and job_clients must have the same length, "
                         f"got {len(times)} and {len(clients)}")
    if np.any(np.diff(times) < 0):
        raise ValueError("job_times must be sorted (out-of-order timestamps found)")
    rtt_s = positive("rtt_s", rtt_s)
    horizon = (float(times[-1]) + 60.0 if len(times) else 60.0) if horizon_s is None \
        else positive("horizon_s", horizon_s)

    env = simpy.Environment()
    done = np.full(len(times), np.nan)
    gave_up = np.zeros(len(times), dtype=bool)
    log: list[tuple[float, int, int, bool]] = []
    locks: dict[Hashable, simpy.Resource] = {}
    gate: dict[Hashable, float] = {}

    def job(jid: int, client: Hashable):
        attempt = 0
        while True:
            attempt += 1
            lock = None
            if behaviour.paces:
                lock = locks.setdefault(client, simpy.Resource(env, capacity=1))
                request = lock.request()
                yield request
                wait = gate.get(client, 0.0) - env.now
                if wait > 0:
                    yield env.timeout(wait)
            response = server.handle(client, env.now)
            log.append((env.now, jid, attempt, response.status < 300))
            yield env.timeout(rtt_s)
            view = read(response, now=env.now, epoch_s=server.epoch_s)
            if lock is not None:
                gate[client] = env.now + behaviour.pause(view)
                lock.release(request)
            if view.ok:
                done[jid] = env.now
                return
            if attempt >= behaviour.max_attempts:
                gave_up[jid] = True
                return
            delay = behaviour.retry_delay(attempt, view, rng)
            if delay > 0:
                yield env.timeout(delay)

    def arrivals():
        for jid, (t, client) in enumerate(zip(times, clients)):
            if t > env.now:
                yield env.timeout(t - env.now)
            env.process(job(jid, client))

    env.process(arrivals())
    env.run(until=horizon)
    rows = np.array(log, dtype=float).reshape(-1, 4)
    return StormResult(
        label=behaviour.label, horizon_s=horizon, job_time=times, job_done=done,
        job_gave_up=gave_up, attempt_time=rows[:, 0], attempt_job=rows[:, 1].astype(int),
        attempt_number=rows[:, 2].astype(int), attempt_ok=rows[:, 3].astype(bool))


def wave_height(times: np.ndarray, bin_s: float, start_s: float, end_s: float) -> float:
    """Peak over mean of attempts per bin of `bin_s` in [start_s, end_s): 1 is perfectly flat."""
    edges = np.arange(start_s, end_s + bin_s / 2, positive("bin_s", bin_s))
    counts = np.histogram(times, edges)[0]
    return float(counts.max() / counts.mean()) if counts.sum() else math.nan


# ---------------------------------------------------------------- a whole storm, as a record

BEHAVIOURS: dict[str, Callable[[int], Behaviour]] = {
    "immediate": lambda n: Immediate(max_attempts=n),
    "fixed": lambda n: FixedDelay(delay_s=1.0, max_attempts=n),
    "exponential": lambda n: ExponentialBackoff(max_attempts=n),
    "jitter": lambda n: FullJitter(max_attempts=n),
    "retry-after": lambda n: HonourRetryAfter(max_attempts=n),
    "retry-after-jitter": lambda n: HonourRetryAfter(jitter_s=1.0, max_attempts=n),
    "reset": lambda n: WaitForReset(max_attempts=n),
    "pace": lambda n: PaceByRemaining(max_attempts=n),
}
"""Retry behaviours by name, each built with its `max_attempts` (``ratelab storm``)."""

BEHAVIOUR_HELP = {
    "immediate": "retry at once",
    "fixed": "wait 1 s between attempts",
    "exponential": "exponential backoff, no jitter",
    "jitter": "exponential backoff with full jitter",
    "retry-after": "wait what Retry-After says",
    "retry-after-jitter": "Retry-After plus up to 1 s of jitter",
    "reset": "wait for the window's reset (X-RateLimit-Reset)",
    "pace": "pace requests by RateLimit-Remaining",
}

DEFAULT_SURGE = (10.0, 20.0, 3.0)


def retry_storm(behaviours: Sequence[str], limiter: str = "token-bucket",
                params: dict | None = None, *, scope: str = "global", clients: int = 100,
                job_rate_per_s: float = 0.6, duration_s: float = 40.0,
                surge: tuple[float, float, float] | None = DEFAULT_SURGE,
                max_attempts: int = 10, rtt_s: float = 0.05, seed: int = 1,
                summary_interval_s: tuple[float, float] | None = None) -> dict:
    """Many retrying clients against one limited server, once per behaviour: a record.

    Jobs arrive Poisson at `job_rate_per_s` per client over `duration_s` (times `surge`'s
    factor in [start, end)); each behaviour meets the same jobs and a fresh limiter
    ``make(limiter, **params)``. The record has the ``scenario`` that ran and one row per
    behaviour: demand / offered / accepted load per second, retries per success, the load
    multiplier, ``succeeded_pct`` and ``gave_up_pct`` of the jobs, the median latency, all
    counted over `summary_interval_s` (default: the whole run).
    """
    params = dict(params or {})
    unknown = [b for b in behaviours if b not in BEHAVIOURS]
    if unknown or not behaviours:
        raise ValueError(f"behaviours must be among {', '.join(BEHAVIOURS)}, got {unknown!r}")
    make(limiter, **params)  # check the limiter once, before any work
    duration_s = positive("duration_s", duration_s)
    start, end = (0.0, duration_s) if summary_interval_s is None else summary_interval_s
    if not 0 <= start < end <= duration_s:
        raise ValueError(f"summary_interval_s must satisfy 0 <= start < end <= duration_s "
                         f"({duration_s:g}), got {(start, end)!r}")
    times, who = poisson_demand(clients, job_rate_per_s, duration_s,
                                np.random.default_rng(seed), surge=surge)
    rows = []
    for name in behaviours:
        server = Server(make(limiter, **params), scope=scope)
        result = simulate(BEHAVIOURS[name](max_attempts), server, times, who,
                          np.random.default_rng(seed + 1), rtt_s=rtt_s, horizon_s=duration_s)
        row = result.summary(start, end)
        rows.append({"behaviour": name, **{k: v for k, v in row.items()
                                           if k not in ("behaviour", "succeeded", "gave_up")}})
    return {
        "scenario": {
            "limiter": limiter, "limiter_params": params, "scope": scope, "clients": clients,
            "job_rate_per_client_per_s": job_rate_per_s, "duration_s": duration_s,
            "surge": None if surge is None else
            {"start_s": surge[0], "end_s": surge[1], "factor": surge[2]},
            "max_attempts": max_attempts, "rtt_s": rtt_s, "seed": seed,
            "summary_interval_s": [start, end], "jobs": int(len(times)),
        },
        "behaviours": rows,
    }
