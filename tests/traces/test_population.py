"""The population generator: sized by requests, chunked, each chunk reproducible alone."""

from __future__ import annotations

import numpy as np
import pytest

from ratelab.traces.population import BEHAVIOURS, Population

SMALL = dict(sources=3000, requests=600_000, chunk_requests=100_000, seed=7)


def test_chunks_partition_the_sources_and_hold_about_the_requests():
    pop = Population(**SMALL)
    chunks = list(pop.chunks())
    assert len(chunks) == pop.n_chunks > 3
    keys = np.concatenate([c.keys for c in chunks])
    assert len(np.unique(keys)) == len(keys)            # a source is in one chunk only
    assert keys.min() >= 0 and keys.max() < pop.sources
    total = sum(len(c) for c in chunks)
    assert abs(total - pop.requests) < 0.10 * pop.requests  # 15 abusers hold a third: noisy
    for c in chunks:
        assert c.starts[-1] == len(c.time)
        assert np.all((c.time >= 0) & (c.time < pop.duration_s))
        inside = np.diff(c.time)[np.isin(np.arange(1, len(c.time)), c.starts, invert=True)]
        assert np.all(inside >= 0)                     # sorted within each source


def test_each_chunk_is_reproducible_on_its_own():
    pop = Population(**SMALL)
    later = list(pop.chunks())[3]
    alone = Population(**SMALL).chunk(3)               # fresh object, no other chunk made
    assert np.array_equal(later.time, alone.time) and np.array_equal(later.keys, alone.keys)
    other = Population(**{**SMALL, "seed": 8}).chunk(3)
    assert not np.array_equal(other.time[:100], alone.time[:100])


def test_volumes_are_heavy_tailed_and_the_mix_is_as_asked():
    pop = Population(**SMALL)
    behaviour, expected = pop.plan()
    shares = np.bincount(behaviour, minlength=4) / pop.sources
    assert shares == pytest.approx(pop.mix, abs=0.02)
    assert expected.sum() == pytest.approx(pop.requests)
    humans = expected[behaviour == BEHAVIOURS.index("human")]
    assert humans.max() / np.median(humans) > 20         # lognormal sigma 1.2: a long tail
    abusers = expected[behaviour == BEHAVIOURS.index("abuser")]
    assert np.median(abusers) > 30 * np.median(humans)


def test_bots_tick_on_round_periods():
    pop = Population(**{**SMALL, "human": 0, "app": 0, "abuser": 0, "bot_aligned": 1.0,
                        "bot_jitter_s": 0.0})
    c = pop.chunk(0)
    for j in range(min(20, len(c.keys))):
        t = c.time[c.starts[j]:c.starts[j + 1]]
        if len(t) > 2:
            gaps = np.unique(np.round(np.diff(t), 6))
            assert len(gaps) == 1 and gaps[0] in {1, 2, 5, 10, 15, 30, 60, 120, 300, 600,
                                                  900, 1800, 3600, 7200, 14400, 21600, 43200}
            assert t[0] % gaps[0] == pytest.approx(0.0)   # cron: on the calendar grid


def test_small_population_as_one_trace():
    trace = Population(sources=50, requests=20_000, seed=1).trace()
    assert abs(len(trace) - 20_000) < 2_000
    assert np.all(np.diff(trace.time) >= 0)


@pytest.mark.parametrize("param, value", [("sources", 0), ("requests", 1.5),
                                          ("duration_s", -1), ("human_duty", 0),
                                          ("volume_sigma", float("nan")), ("page_requests", 0.5),
                                          ("bot_aligned", 2), ("bot_volume", 0),
                                          ("app_volume", -1), ("app_shape", 0)])
def test_bad_parameters_are_named(param, value):
    with pytest.raises(ValueError, match=param):
        Population(**{param: value})


@pytest.mark.parametrize("name, sigma", [("epa-http", 1.18), ("nasa-1995-08-01", 1.06)])
def test_the_volume_spread_quoted_in_the_docs_is_the_recorded_traces(data_dir, name, sigma):
    from ratelab import datasets

    trace = datasets.load(name, progress=False, warn=False)
    per_host = np.bincount(trace.key)
    assert np.log(per_host[per_host > 0]).std() == pytest.approx(sigma, abs=0.005)


def test_abusive_sources_send_about_a_third_of_the_requests():
    behaviour, expected = Population().plan()
    share = expected[behaviour == BEHAVIOURS.index("abuser")].sum() / expected.sum()
    assert 0.25 < share < 0.40


def _busy_windows(keys, times, n, duration, width=60.0):
    """Share of (source, window) pairs with at least one request."""
    pairs = np.unique(keys.astype(np.int64) * 10**6 + np.floor(times / width).astype(np.int64))
    return len(pairs) / (n * duration / width)


def test_population_on_off_is_the_process_of_the_generators():
    """The population makes sources in time order itself (no sort), but the on/off process is
    the one of ratelab.traces.generators.on_off: same counts, same spread, same burstiness."""
    from ratelab.traces import generators
    from ratelab.traces.population import _on_off_points

    n, on, off, duration = 400, 30.0, 300.0, 7200.0
    counts, times = _on_off_points(np.full(n, 0.5), on, off, duration, np.random.default_rng(1))
    g = generators.on_off(0.5, on, off, duration, np.random.default_rng(2), n_sources=n)
    gcounts = np.bincount(g.key, minlength=n)
    assert counts.mean() == pytest.approx(0.5 * duration * on / (on + off), rel=0.05)
    assert counts.mean() == pytest.approx(gcounts.mean(), rel=0.05)
    assert counts.std() == pytest.approx(gcounts.std(), rel=0.15)
    keys = np.repeat(np.arange(n), counts)
    assert _busy_windows(keys, times, n, duration) == pytest.approx(
        _busy_windows(g.key, g.time, n, duration), rel=0.05)


def test_defaults_make_the_same_population_as_before_the_volume_and_shape_options():
    """A fingerprint of a small seeded population, taken before bot_volume, app_volume and
    app_shape existed: at their defaults (1) they change no byte."""
    import hashlib

    pop = Population(sources=300, requests=60_000, chunk_requests=20_000, seed=11)
    h = hashlib.sha256()
    for c in pop.chunks():
        for a in (c.time, c.starts, c.keys, c.behaviour):
            h.update(np.ascontiguousarray(a).tobytes())
    assert pop.n_chunks == 3
    assert h.hexdigest() == "025c7025694cc7b2feac53574a8836c99c794261fe6df1a768bdd2e082344d94"


@pytest.mark.parametrize("name, behaviour", [("bot_volume", "bot"), ("app_volume", "app")])
def test_a_volume_factor_multiplies_that_behaviours_share_of_requests(name, behaviour):
    def share(pop):
        b, expected = pop.plan()
        part = expected[b == BEHAVIOURS.index(behaviour)].sum()
        return part / (expected.sum() - part)    # against everyone else's

    base = share(Population(**SMALL))
    assert share(Population(**{**SMALL, name: 4.0})) == pytest.approx(4 * base)


@pytest.mark.parametrize("shape", [0.3, 3.0])
def test_app_shape_moves_requests_inside_a_burst_but_keeps_their_count(shape):
    from ratelab.traces.population import _on_off_points

    n, rate = 200, np.full(200, 0.5)
    even_c, even_t = _on_off_points(rate, 30.0, 300.0, 7200.0, np.random.default_rng(3))
    c, t = _on_off_points(rate, 30.0, 300.0, 7200.0, np.random.default_rng(3), shape=shape)
    assert np.array_equal(c, even_c)                   # the same draws, the same counts
    starts = np.concatenate([[0], np.cumsum(c)])
    inside = np.isin(np.arange(1, len(t)), starts, invert=True)
    assert np.all(np.diff(t)[inside] >= 0) and np.all((t >= 0) & (t < 7200.0))
    # front-loaded (shape > 1): every request at or before its even place; after, for < 1
    assert np.all(t <= even_t) if shape > 1 else np.all(t >= even_t)
    assert not np.array_equal(t, even_t)
