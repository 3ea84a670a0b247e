"""A population of request sources at CDN scale, generated chunk by chunk.

Cloudflare's error figures (2017) came from 400 million requests of 270,000 sources; they did
not say what those sources did. :class:`Population` builds a stand-in whose every assumption
is a named option: ``N`` sources, a heavy-tailed spread of per-source volume, and a mix of
behaviours. It is *sized by total requests*: source volumes are drawn first, then scaled so
that they add up to ``requests`` (the count generated is that, up to Poisson noise).

Behaviours (each source has one):

``human``   browsing: sessions (on/off, exponential, mean ``session_s``; in session a share
            ``human_duty`` of the time) in which page views arrive as a Poisson process; each
            page view is a burst of ``page_requests`` requests on average (geometric: the page
            and its embedded objects) spaced ``object_gap_s`` apart on average (exponential).
            A page's requests never overtake the next page's: a click waits for the page.
``app``     bursty application clients (sync jobs, mobile apps, API scripts): on/off, exponential
            on and off periods of means ``app_on_s`` and ``app_off_s``; an on period's
            requests fall at ``begin + length * u ** app_shape`` for sorted uniform ``u``:
            ``app_shape = 1`` is a Poisson burst (even rate), above 1 a burst that starts hard
            and tails off (a sync job), below 1 one that builds up to its end.
``bot``     periodic bots (monitors, feed readers, cron jobs): one request per tick, at a
            period rounded to a round value (1 s ... 1 day) near the one their volume implies,
            each late by U[0, ``bot_jitter_s``) (capped at the period); a share
            ``bot_aligned`` fire on the calendar grid (phase 0: cron at :00), the rest at a
            random phase.
``abuser``  floods in attack periods (on/off, means ``abuser_on_s`` / ``abuser_off_s``),
            Poisson while on; their volume is multiplied by ``abuser_volume``.

Volumes: every source's volume is drawn from one lognormal; an abuser's is then multiplied by
``abuser_volume``, a bot's by ``bot_volume`` and an app's by ``app_volume`` (how many requests
such a source sends relative to a human's), before all are scaled to ``requests``.

Where the numbers come from — honestly:

* ``volume_sigma = 1.2``: the per-source request counts of a day are close to lognormal in the
  two whole-day recorded traces: the standard deviation of log(requests per host) is 1.18 on
  EPA-HTTP (30 Aug 1995, 2,333 hosts) and 1.06 on NASA-HTTP 1 Aug 1995 (2,582 hosts) —
  computed from the files in ``data/``. A CDN sees more extreme sources (NAT
  gateways, crawlers) than one 1995 server, so this is if anything a light tail.
* ``duration_s = 86400`` (one day): Cloudflare did not give the period; a day matches the
  recorded traces, and 400 M / 270 k is about 1,500 requests per source per day.
* The human model (sessions of page views, each page a burst of embedded objects, think times
  between pages) follows the structure of the SURGE workload model (Barford & Crovella, 1998)
  with exponential instead of heavy-tailed think times; ``page_requests = 8`` and
  ``object_gap_s = 0.25`` are assumptions of ours for a same-origin page, not measurements.
* The behaviour mix (80% human, 12% app, 7.5% bot, 0.5% abusive sources) and every on/off
  period are assumptions, not measurements: no public source gives a per-source mix at this
  scale. Bot and abusive traffic is usually reported as a share of *requests* (tens of per
  cent in industry bot reports); with ``abuser_volume = 100`` the 0.5% abusive sources send
  about a third of all requests — an assumption in that range, not a fit.
* ``bot_volume = app_volume = 1`` and ``app_shape = 1`` (even Poisson bursts) are the plainest
  choices, not measurements; the search of :mod:`ratelab.analysis.calibrate` varies them.

Every parameter is an option of :class:`Population` and of ``ratelab error-analysis``; change
them and see how much the error figures move (the sensitivity section of notebook 05 does).

Chunks: the sources are split, in id order, into chunks of about ``chunk_requests``
requests; a source never spans two chunks, so chunks can be generated and analysed in
parallel. Randomness: the plan (behaviours and volumes of all N sources, a few MB) comes from
``SeedSequence(seed, spawn_key=(0,))`` and chunk ``i`` from ``SeedSequence(seed,
spawn_key=(1, i))``: each chunk is reproducible on its own, in any process, in any order.

The on/off periods and the periodic ticks are :mod:`ratelab.traces.generators`' own (a test
holds the on/off counts and burstiness to ``generators.on_off``'s); the points inside them are
generated source by source in time order: a chunk comes out grouped by source with no sort at
all. The generators return time-sorted Traces, and sorting 400 million requests costs more
than analysing them.

Not modelled: rates are stationary over the day (no diurnal cycle), sources do not react to
being limited (no retries, no back-off), and every request costs 1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np
from numba import njit

from ..kernel_cache import listen
from .generators import _on_periods, _ticks
from .trace import Trace

listen()  # its kernels compile on a first run: the command says so

BEHAVIOURS = ("human", "app", "bot", "abuser")
HUMAN, APP, BOT, ABUSER = range(4)
ROUND_PERIODS_S = np.array([1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
                            14400, 21600, 43200, 86400], dtype=np.float64)


@dataclass(frozen=True)
class SourceChunk:
    """Sources ``keys`` with their times laid end to end: source j is
    ``time[starts[j]:starts[j+1]]`` (sorted); ``behaviour[j]`` indexes BEHAVIOURS."""

    index: int
    time: np.ndarray
    starts: np.ndarray
    keys: np.ndarray
    behaviour: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    def to_trace(self) -> Trace:
        """The chunk as a time-sorted Trace (keys are the population's source ids)."""
        counts = np.diff(self.starts)
        key = np.repeat(self.keys, counts)
        order = np.argsort(self.time, kind="stable")
        return Trace(self.time[order], key[order])


@dataclass(frozen=True)
class Population:
    """N sources with heavy-tailed volumes and a mix of behaviours (see the module docs)."""

    sources: int = 270_000
    requests: int = 400_000_000
    duration_s: float = 86_400.0
    seed: int = 0
    volume_sigma: float = 1.2
    human: float = 0.80
    app: float = 0.12
    bot: float = 0.075
    abuser: float = 0.005
    abuser_volume: float = 100.0
    bot_volume: float = 1.0
    app_volume: float = 1.0
    page_requests: float = 8.0
    object_gap_s: float = 0.25
    session_s: float = 600.0
    human_duty: float = 0.25
    app_on_s: float = 30.0
    app_off_s: float = 300.0
    app_shape: float = 1.0
    bot_jitter_s: float = 2.0
    bot_aligned: float = 0.5
    abuser_on_s: float = 300.0
    abuser_off_s: float = 900.0
    chunk_requests: int = 2_000_000

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not np.isfinite(float(v)):
                raise ValueError(f"{f.name} must be a finite number, got {v!r}")
        for name in ("sources", "requests", "chunk_requests"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
        for name in ("duration_s", "abuser_volume", "bot_volume", "app_volume", "app_shape",
                     "page_requests", "object_gap_s",
                     "session_s", "app_on_s", "app_off_s", "abuser_on_s", "abuser_off_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        if self.page_requests < 1:
            raise ValueError(f"page_requests must be >= 1, got {self.page_requests!r}")
        for name in ("volume_sigma", "bot_jitter_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        for name in BEHAVIOURS:  # shares of the sources (normalised if they do not add to 1)
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be a share in [0, 1], got {getattr(self, name)!r}")
        for name in ("human_duty", "bot_aligned"):
            v = getattr(self, name)
            if not 0 <= v <= 1 or (name == "human_duty" and v == 0):
                raise ValueError(f"{name} must be in {'(0, 1]' if name == 'human_duty' else '[0, 1]'}, got {v!r}")
        if sum(self.mix) <= 0:
            raise ValueError("the behaviour shares human, app, bot, abuser must not all be 0")

    @property
    def mix(self) -> tuple[float, float, float, float]:
        """Shares of sources per behaviour (human, app, bot, abuser), as given."""
        return (self.human, self.app, self.bot, self.abuser)

    def params(self) -> dict:
        """Every parameter, for JSON and for the record."""
        return asdict(self)

    # -- the plan: behaviours, volumes and chunks of all sources ------------------------

    def plan(self) -> tuple[np.ndarray, np.ndarray]:
        """(behaviour, expected requests) of every source; deterministic in the seed."""
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(0,)))
        p = np.asarray(self.mix, dtype=float)
        behaviour = rng.choice(len(BEHAVIOURS), size=self.sources, p=p / p.sum())
        weight = rng.lognormal(0.0, self.volume_sigma, self.sources)
        for b, factor in ((ABUSER, self.abuser_volume), (BOT, self.bot_volume),
                          (APP, self.app_volume)):
            if factor != 1.0:
                weight[behaviour == b] *= factor
        expected = self.requests * weight / weight.sum()
        return behaviour.astype(np.int8), expected

    def chunk_bounds(self) -> np.ndarray:
        """Source ids where chunks begin, and N at the end (chunks never split a source)."""
        return source_bounds(self.plan()[1], self.chunk_requests)

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_bounds()) - 1

    def chunk(self, i: int, *, plan=None, bounds=None) -> SourceChunk:
        """Chunk `i`: its sources' requests, grouped by source and sorted within each.

        `plan` and `bounds` (from :meth:`plan` and :meth:`chunk_bounds`) may be passed in to
        save recomputing them for every chunk.
        """
        bounds = self.chunk_bounds() if bounds is None else bounds
        if not 0 <= i < len(bounds) - 1:
            raise ValueError(f"chunk must be in [0, {len(bounds) - 1}), got {i!r}")
        behaviour, expected = self.plan() if plan is None else plan
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(1, int(i))))
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        ids = np.arange(lo, hi, dtype=np.int32)
        beh, n = behaviour[lo:hi], expected[lo:hi]
        parts = []  # (keys, counts, times) per behaviour
        for b, make in ((HUMAN, self._humans), (APP, self._apps), (BOT, self._bots),
                        (ABUSER, self._abusers)):
            sel = beh == b
            if sel.any():
                counts, times = make(n[sel], rng)
                parts.append((ids[sel], counts, times, np.full(sel.sum(), b, np.int8)))
        keys = np.concatenate([p[0] for p in parts])
        counts = np.concatenate([p[1] for p in parts])
        starts = np.zeros(len(keys) + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        return SourceChunk(i, np.concatenate([p[2] for p in parts]), starts, keys,
                           np.concatenate([p[3] for p in parts]))

    def chunks(self):
        """Every chunk in order (a generator: one chunk in memory at a time)."""
        plan, bounds = self.plan(), self.chunk_bounds()
        for i in range(len(bounds) - 1):
            yield self.chunk(i, plan=plan, bounds=bounds)

    def trace(self) -> Trace:
        """The whole population as one time-sorted Trace — for small populations only."""
        if self.requests > 50_000_000:
            raise ValueError(f"requests={self.requests:,} is too many for one Trace in "
                             "memory; stream it with chunks()")
        parts = [c.to_trace() for c in self.chunks()]
        time = np.concatenate([p.time for p in parts])
        key = np.concatenate([p.key for p in parts])
        order = np.argsort(time, kind="stable")
        return Trace(time[order], key[order], meta={"population": self.params()})

    # -- behaviours: (counts per source, times grouped by source) -----------------------

    def _humans(self, n, rng):
        d = self.duration_s
        off = self.session_s * (1.0 - self.human_duty) / self.human_duty
        page_rate = n / self.page_requests / (d * self.human_duty)
        pages, page_t = _on_off_points(page_rate, self.session_s, off, d, rng)
        size = rng.geometric(1.0 / self.page_requests, len(page_t))
        gaps = rng.exponential(self.object_gap_s, int(size.sum()))
        return _expand_pages(pages, page_t, size, gaps, d)

    def _apps(self, n, rng):
        d = self.duration_s
        rate_on = n / d * (self.app_on_s + self.app_off_s) / self.app_on_s
        return _on_off_points(rate_on, self.app_on_s, self.app_off_s, d, rng,
                              shape=self.app_shape)

    def _abusers(self, n, rng):
        d = self.duration_s
        rate_on = n / d * (self.abuser_on_s + self.abuser_off_s) / self.abuser_on_s
        return _on_off_points(rate_on, self.abuser_on_s, self.abuser_off_s, d, rng)

    def _bots(self, n, rng):
        d = self.duration_s
        want = d / np.maximum(n, 1e-9)
        nearest = np.abs(np.log(ROUND_PERIODS_S)[None, :] - np.log(want)[:, None]).argmin(1)
        period = ROUND_PERIODS_S[nearest]
        aligned = rng.random(len(n)) < self.bot_aligned
        phase = np.where(aligned, 0.0, rng.random(len(n)) * period)
        jitter = np.minimum(self.bot_jitter_s, period)
        src, tick = _ticks(period, phase, d)
        time = tick + rng.random(len(tick)) * jitter[src]
        inside = time < d
        return np.bincount(src[inside], minlength=len(n)).astype(np.int64), time[inside]


# ---------------------------------------------------------------- building blocks


def source_bounds(volume, per_part: float) -> np.ndarray:
    """Where parts of about `per_part` requests begin, over sources in id order, and N.

    `volume` holds each source's requests (or expected requests); a part never splits a
    source, so one larger than `per_part` is a part of its own. Chunks of a population and
    partitions of a recorded trace are cut by this one rule.
    """
    volume = np.asarray(volume, dtype=np.float64)
    n = len(volume)
    if n == 0:
        return np.zeros(1, np.int64)
    cum = np.cumsum(volume)
    marks = np.arange(1, int(np.ceil(cum[-1] / per_part))) * per_part
    cuts = np.searchsorted(cum, marks, side="left") + 1
    return np.unique(np.concatenate([[0], cuts[cuts < n], [n]])).astype(np.int64)



def _on_off_points(rate_on, mean_on, mean_off, duration, rng, shape=1.0):
    """Poisson points at `rate_on` (per source) inside on periods, grouped by source.

    The on periods are :func:`ratelab.traces.generators.on_off`'s (its ``_on_periods``, with
    each source's cycles summed on their own). With `shape` other than 1 a period's
    points are moved to ``begin + length * u ** shape`` (``u`` their sorted uniform places:
    the same count, still sorted, denser at the start for shape > 1). Returns (counts, times).
    """
    n = len(rate_on)
    src, begin, end = _on_periods(np.full(n, float(mean_on)), np.full(n, float(mean_off)),
                                  duration, rng, exact_sums=True)
    per_period = rng.poisson(rate_on[src] * (end - begin))
    expo = rng.exponential(1.0, int(per_period.sum()) + len(per_period))
    if shape == 1.0:
        times = _sorted_uniform(per_period, begin, end - begin, expo)
    else:
        u = _sorted_uniform(per_period, np.zeros(len(begin)), np.ones(len(begin)), expo)
        lo, hi = np.repeat(begin, per_period), np.repeat(end, per_period)
        times = np.minimum(lo + (hi - lo) * u ** shape, np.nextafter(hi, lo))  # inside [lo, hi)
    counts = np.bincount(src, weights=per_period, minlength=n).astype(np.int64)
    return counts, times


@njit(cache=True, nogil=True)
def _sorted_uniform(counts, lo, span, expo):
    """counts[j] sorted uniform points in [lo[j], lo[j] + span[j]) per segment.

    From exponentials: the partial sums S_1 < ... < S_c of c + 1 exponentials, divided by
    S_{c+1}, are distributed as c sorted uniforms — sorted by construction, no sort needed.
    `expo` holds sum(counts) + len(counts) standard exponentials.
    """
    out = np.empty(counts.sum(), np.float64)
    i = 0
    e = 0
    for j in range(len(counts)):
        c = counts[j]
        total = 0.0
        for m in range(c + 1):
            total += expo[e + m]
        s = 0.0
        for m in range(c):
            s += expo[e + m]
            out[i + m] = lo[j] + span[j] * (s / total)
        i += c
        e += c + 1
    return out


@njit(cache=True, nogil=True)
def _expand_pages(pages, page_t, size, gaps, duration):
    """Each page view becomes `size` requests, `gaps` apart, never overtaking the next page.

    Returns (counts per source, times grouped by source); requests pushed past `duration`
    are dropped (the day is over).
    """
    n_src = len(pages)
    out = np.empty(size.sum(), np.float64)
    counts = np.zeros(n_src, np.int64)
    i = 0
    p = 0
    g = 0
    for s in range(n_src):
        last = -1.0
        for _ in range(pages[s]):
            t = max(page_t[p], last)
            for m in range(size[p]):
                if m > 0:
                    t += gaps[g]
                    g += 1
                if t < duration:
                    out[i] = t
                    i += 1
                    counts[s] += 1
            last = t
            p += 1
    return counts, out[:i]
