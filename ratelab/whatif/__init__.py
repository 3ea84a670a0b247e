"""What if this traffic had met that limiter? A log replayed through candidate policies.

    >>> from ratelab.whatif import parse_policy, what_if
    >>> policies = [parse_policy("token-bucket rate=10 capacity=50"),
    ...             parse_policy("sliding-window-counter limit=600 window=60")]
    >>> record = what_if(trace, policies)                        # doctest: +SKIP
    >>> record["policies"][0]["requests_limited"]                # doctest: +SKIP

Every key of the trace (a client: an IP, a user ...) is limited on its own, as a keyed
limiter limits it; each policy is replayed with :func:`ratelab.replay.replay` and what it did
is counted:

* requests and clients it would have limited, in all and per calendar hour;
* the clients it hit hardest (most requests limited);
* the worst minute (the calendar minute with most requests limited);
* what the backend would have received: the admitted requests, each at its departure (arrival
  plus any shaping delay), counted per calendar second and minute by
  :func:`ratelab.metrics.window_counts` — the busiest second and minute, and the busiest
  second of each hour, beside the same figures for the traffic as offered;
* the 429 responses with the Retry-After each would have carried (whole seconds, rounded up
  as :func:`ratelab.http.whole_seconds` rounds the header): their distribution.

Every figure is a whole count, so a trace split by client into parts can be tallied part by
part, anywhere, and the tallies added field by field (:class:`WhatIfTally`,
:func:`ratelab.scale.add_fields`): the in-process engine and the Dask engine (a task per part
through the executor :func:`ratelab.scale.imap_parts`) give the same record. Windows are
calendar ones ([k, k+1) s, [60k, 60k+60) s, [3600k, ...)) so that parts add up; a trailing
window's peak would need every admitted request of every part in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from ..http import whole_seconds
from ..limiters.policy import Policy, parse_policy  # here for `from ratelab.whatif import ...`
from ..metrics import window_counts
from ..replay import replay
from ..scale import executor as X
from ..scale import parts as P
from ..scale.merge import add_fields

HOUR_S = 3600.0
MINUTE_S = 60.0
SECOND_S = 1.0
TOP_CLIENTS = 10
RETRY_AFTER_PERCENTILES = (50, 90, 99)


# ---------------------------------------------------------------- tallies that add


def _counts(values: np.ndarray) -> pd.Series:
    """How often each whole number occurs in `values` (int64 index, int64 counts)."""
    u, c = np.unique(np.asarray(values, dtype=np.int64), return_counts=True)
    return pd.Series(c.astype(np.int64), index=pd.Index(u, dtype=np.int64))


def _add(a: pd.Series, b: pd.Series) -> pd.Series:
    return a.add(b, fill_value=0).astype(np.int64)


def _bins(time: np.ndarray, width_s: float) -> np.ndarray:
    return np.floor(np.asarray(time) / width_s).astype(np.int64)


def _distinct_per_bin(bins: np.ndarray, key: np.ndarray) -> pd.Series:
    """How many distinct keys fall in each bin."""
    if len(bins) == 0:
        return _counts(bins)
    span = np.int64(int(key.max()) + 1)  # bins * span + key: one int64 per (bin, key) pair
    pairs = np.unique(bins.astype(np.int64) * span + key.astype(np.int64))
    return _counts(np.floor_divide(pairs, span))


def _window_counts(time: np.ndarray, width_s: float) -> pd.Series:
    """Requests per calendar window of `width_s`, indexed by window number."""
    counts = window_counts(np.sort(time), width_s)
    return pd.Series(counts.to_numpy(np.int64),
                     index=pd.Index(np.round(counts.index.to_numpy() / width_s)
                                    .astype(np.int64)))


def _top(rows: list, n: int = TOP_CLIENTS) -> list:
    """The `n` clients most limited: most requests limited, then most requests, then key."""
    return sorted(rows, key=lambda r: (-r[0], -r[1], r[2]))[:n]


def _merge_top(mine: list, theirs: list) -> list:
    """The top clients of two tallies of disjoint clients."""
    return _top(mine + theirs)


def _per_window():
    """A field of counts per window (an hour, minute or second; a Retry-After value): empty
    at first; two tallies' add window by window."""
    return field(default_factory=lambda: _counts(np.empty(0)), metadata={"add": _add})


@dataclass
class PolicyTally:
    """What one policy did to some clients; tallies of disjoint clients add, field by field
    (each field's ``add`` rule: :func:`ratelab.scale.add_fields`)."""

    requests_limited: int = 0
    clients_limited: int = 0
    hour_limited: pd.Series = _per_window()
    hour_clients_limited: pd.Series = _per_window()
    minute_limited: pd.Series = _per_window()
    minute_clients_limited: pd.Series = _per_window()
    second_admitted: pd.Series = _per_window()
    minute_admitted: pd.Series = _per_window()
    requests_delayed: int = 0
    retry_after: pd.Series = _per_window()  # s -> 429s
    # (limited, requests, key), best first
    top: list = field(default_factory=list, metadata={"add": _merge_top})

    def add(self, other: "PolicyTally") -> "PolicyTally":
        """Add the tally of other clients under the same policy."""
        return add_fields(self, other)


@dataclass
class WhatIfTally:
    """The traffic of some clients and what every policy did to it (see the module docs)."""

    policies: tuple[Policy, ...] = field(metadata={"add": "same"})
    requests: int = 0
    clients: int = 0
    hour_requests: pd.Series = _per_window()
    hour_clients: pd.Series = _per_window()
    minute_requests: pd.Series = _per_window()
    second_offered: pd.Series = _per_window()
    first_s: float = field(default=float("inf"), metadata={"add": "min"})
    last_s: float = field(default=float("-inf"), metadata={"add": "max"})
    # one PolicyTally per policy, in the order of `policies`
    per_policy: list = field(default_factory=list, metadata={"add": "pairwise"})

    def __post_init__(self) -> None:
        if not self.per_policy:
            self.per_policy = [PolicyTally() for _ in self.policies]

    def add(self, other: "WhatIfTally") -> "WhatIfTally":
        """Add the tally of other clients under the same policies."""
        return add_fields(self, other)

    def record(self, names=None, source: str = "") -> dict:
        """The report as a dict of plain numbers (snake_case keys, units in the names).

        `names` maps a key id to the client's name (a trace's ``name_of``); default: the id.
        """
        name_of = (lambda k: str(k)) if names is None else names
        minute_offered = self.second_offered.groupby(self.second_offered.index // 60).sum()
        offered = _peaks(self.second_offered, minute_offered)
        hour_peak = _hour_peaks(self.second_offered)
        out = {
            "source": source,
            "requests": self.requests,
            "clients": self.clients,
            "first_s": float(self.first_s) if self.requests else None,
            "last_s": float(self.last_s) if self.requests else None,
            "offered": offered,
            "policies": [],
        }
        for policy, t in zip(self.policies, self.per_policy):
            out["policies"].append(self._policy_record(policy, t, name_of, offered,
                                                       hour_peak))
        return out

    def _policy_record(self, policy: Policy, t: PolicyTally, name_of, offered,
                       hour_peak: pd.Series) -> dict:
        hours = self.hour_requests.index
        admitted_peak = _hour_peaks(t.second_admitted)
        by_hour = [{
            "hour_start_s": float(h * HOUR_S),
            "requests": int(self.hour_requests[h]),
            "requests_limited": int(t.hour_limited.get(h, 0)),
            "clients": int(self.hour_clients.get(h, 0)),
            "clients_limited": int(t.hour_clients_limited.get(h, 0)),
            "peak_per_second": int(hour_peak.get(h, 0)),
            "peak_per_second_admitted": int(admitted_peak.get(h, 0)),
        } for h in hours]
        worst = None
        if len(t.minute_limited):
            m = int(t.minute_limited.idxmax())  # the earliest among equals
            worst = {"minute_start_s": float(m * MINUTE_S),
                     "requests": int(self.minute_requests.get(m, 0)),
                     "requests_limited": int(t.minute_limited[m]),
                     "clients_limited": int(t.minute_clients_limited.get(m, 0))}
        backend = {"requests_admitted": self.requests - t.requests_limited,
                   "requests_delayed": t.requests_delayed,
                   **_peaks(t.second_admitted, t.minute_admitted)}
        return {
            "policy": policy.text,
            "algorithm": policy.name,
            "params": dict(policy.params),
            "server": policy.server,
            "config": _config(policy),
            "requests_limited": t.requests_limited,
            "requests_limited_pct": _pct(t.requests_limited, self.requests),
            "clients_limited": t.clients_limited,
            "clients_limited_pct": _pct(t.clients_limited, self.clients),
            "by_hour": by_hour,
            "top_clients": [{"client": name_of(k), "requests": int(n),
                             "requests_limited": int(lim),
                             "requests_limited_pct": _pct(lim, n)}
                            for lim, n, k in t.top],
            "worst_minute": worst,
            "backend": backend,
            "backend_peak_second_vs_offered_pct": _pct(backend["peak_per_second"],
                                                       offered["peak_per_second"]),
            "retry_after": _retry_summary(t.retry_after),
        }


def _config(policy: Policy) -> str | None:
    """The policy's server lines as replayed (limiting by the client's address), or None for
    an algorithm no server runs, or a policy its server cannot write (the reason, as a
    comment line)."""
    try:
        return policy.config()
    except ValueError as e:
        return f"# {policy.server} cannot run this policy as replayed: {e}"


def _pct(part, whole) -> float | None:
    return 100.0 * float(part) / float(whole) if whole else None


def _peaks(per_second: pd.Series, per_minute: pd.Series) -> dict:
    """The busiest calendar second and minute of counts indexed by window number."""
    def peak(s: pd.Series, width_s: float):
        if not len(s):
            return 0, None
        k = int(s.idxmax())
        return int(s[k]), float(k * width_s)

    n_s, at_s = peak(per_second, SECOND_S)
    n_m, at_m = peak(per_minute, MINUTE_S)
    return {"peak_per_second": n_s, "peak_second_start_s": at_s,
            "peak_per_minute": n_m, "peak_minute_start_s": at_m}


def _hour_peaks(per_second: pd.Series) -> pd.Series:
    """The busiest calendar second of each calendar hour, of counts indexed by second number
    (indexed by hour number)."""
    per_second = per_second[per_second > 0]
    return per_second.groupby(per_second.index // int(HOUR_S)).max()


def _retry_summary(hist: pd.Series) -> dict:
    """The 429s and their Retry-After (whole seconds): count, spread, and every value's count
    (``histogram``: one row per value, in increasing order)."""
    hist = hist.sort_index()
    n = int(hist.sum())
    out = {"responses_429": n}
    if n == 0:
        return {**out, "min_s": None, "mean_s": None, "max_s": None,
                **{f"p{q}_s": None for q in RETRY_AFTER_PERCENTILES}, "histogram": []}
    values = hist.index.to_numpy()
    cum = np.cumsum(hist.to_numpy())
    out.update(min_s=int(values[0]), mean_s=float((values * hist.to_numpy()).sum()) / n,
               max_s=int(values[-1]))
    for q in RETRY_AFTER_PERCENTILES:  # the smallest value with at least q% at or below it
        out[f"p{q}_s"] = int(values[np.searchsorted(cum, q / 100.0 * n, side="left")])
    out["histogram"] = [{"retry_after_s": int(v), "responses_429": int(c)}
                        for v, c in zip(values, hist.to_numpy())]
    return out


# ---------------------------------------------------------------- one part of the clients


def tally(trace, policies, *, progress: bool = False) -> WhatIfTally:
    """The :class:`WhatIfTally` of `trace` (time-sorted; every key a client) under `policies`.

    `policies` are :class:`Policy` objects or their text.
    """
    policies = _policies(policies)
    if not policies:
        raise ValueError("policies: give at least one policy to compare")
    time, key = trace.time, trace.key
    out = WhatIfTally(policies)
    if len(trace) == 0:
        return out
    hour, minute = _bins(time, HOUR_S), _bins(time, MINUTE_S)
    out.requests, out.clients = len(trace), int(len(np.unique(key)))
    out.hour_requests, out.minute_requests = _counts(hour), _counts(minute)
    out.hour_clients = _distinct_per_bin(hour, key)
    out.second_offered = _window_counts(time, SECOND_S)
    out.first_s, out.last_s = float(time[0]), float(time[-1])
    ceil = np.frompyfunc(whole_seconds, 1, 1)
    per_key = np.bincount(key)
    for policy, t in zip(policies, out.per_policy):
        r = replay(policy.limiter(), trace, details=True, progress=progress)
        no = ~r.allowed
        depart = time[r.allowed] + r.delay[r.allowed]
        t.requests_limited = int(np.count_nonzero(no))
        t.requests_delayed = int(np.count_nonzero(r.delay[r.allowed] > 0))
        t.second_admitted = _window_counts(depart, SECOND_S)
        t.minute_admitted = _window_counts(depart, MINUTE_S)
        if not t.requests_limited:
            continue
        k = key[no]
        limited = np.bincount(k, minlength=len(per_key))
        hit = np.flatnonzero(limited)
        t.clients_limited = len(hit)
        t.hour_limited, t.minute_limited = _counts(hour[no]), _counts(minute[no])
        t.hour_clients_limited = _distinct_per_bin(hour[no], k)
        t.minute_clients_limited = _distinct_per_bin(minute[no], k)
        t.retry_after = _counts(ceil(r.retry_after[no]).astype(np.int64))
        best = hit[np.lexsort((hit, -per_key[hit], -limited[hit]))[:TOP_CLIENTS]]
        t.top = [(int(limited[c]), int(per_key[c]), int(c)) for c in best]
    return out


def _policies(policies) -> tuple[Policy, ...]:
    """`policies` as :class:`Policy` objects (text parsed)."""
    return tuple(p if isinstance(p, Policy) else parse_policy(p) for p in policies)


# ---------------------------------------------------------------- the record, here or on Dask


def what_if(trace, policies, *, source: str = "", progress: bool = False,
            engine: str = "inprocess", client=None, scheduler: str | None = None,
            workers: int | None = None, parts_dir=None,
            part_requests: int = P.PART_REQUESTS) -> dict:
    """The what-if record of `trace` under each of `policies`.

    engine "inprocess" (default): the whole trace in this process; "dask": part by part on a
    Dask cluster (:func:`what_if_dask`, which takes the other arguments). See the module docs
    for the figures: the record is the same either way.
    """
    if X.check_engine(engine) == "dask":
        record = what_if_dask(trace, policies, source=source, client=client,
                              scheduler=scheduler, workers=workers, parts_dir=parts_dir,
                              part_requests=part_requests, progress=progress)
    else:
        record = tally(trace, policies, progress=progress).record(trace.name_of, source)
    report = trace.meta.get("report")  # what the log held and what was left out of it
    return {**record, "load_report": None if report is None else report.to_dict()}


def _part_what_if(path, *, grouped, policies):
    """(requests, WhatIfTally) of the part at `path`."""
    trace = P.read_part(path, grouped).to_trace()
    return len(trace), tally(trace, policies)


def parts_what_if(client, directory, policies, *, progress: bool = True) -> WhatIfTally:
    """The WhatIfTally of a trace partitioned by source in `directory`, a task per part."""
    policies = _policies(policies)
    meta = P.read_meta(directory)
    paths = [str(p) for p in P.part_paths(directory, meta)]
    fn = partial(_part_what_if, grouped=meta.get("grouped", False), policies=policies)
    total = WhatIfTally(policies)
    for t in X.imap_parts(fn, paths, "dask", client=client, total=meta["requests"],
                          desc="what-if", progress=progress):
        total.add(t)
    return total


def what_if_dask(trace, policies, *, source: str = "", client=None,
                 scheduler: str | None = None, workers: int | None = None, parts_dir=None,
                 part_requests: int = P.PART_REQUESTS, progress: bool = False) -> dict:
    """:func:`what_if`'s record, computed on a Dask cluster part by part.

    The cluster of `client`, else a new one (:func:`ratelab.scale.cluster` with `scheduler`,
    `workers`); the trace goes to the workers partitioned by client under `parts_dir`
    (default: a temporary directory, which only a LocalCluster's workers can read).
    """
    if scheduler is not None and parts_dir is None:
        raise ValueError("a trace sent to a Dask scheduler needs parts_dir: storage that "
                         "every worker can read (this machine's temporary directory is not)")
    with X.engine_client("dask", scheduler, workers, client) as c, \
            P.partitioned(trace, parts_dir, part_requests) as directory:
        total = parts_what_if(c, directory, policies, progress=progress)
    return total.record(trace.name_of, source)
