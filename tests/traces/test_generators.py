"""The synthetic sources: counts, rates, spacing, seeding, and the boundary attack."""

from __future__ import annotations

import numpy as np
import pytest

from ratelab.limiters import make
from ratelab.traces import generators as g
from ratelab.limiters.fixed_window import window_index


def rng(seed=7):
    return np.random.default_rng(seed)


def per_key(trace, n):
    return np.bincount(trace.key, minlength=n)


# ---------------------------------------------------------------- shared behaviour


ALL = {
    "poisson": lambda r, **kw: g.poisson(2.0, 100, r, **kw),
    "on_off": lambda r, **kw: g.on_off(5.0, 2.0, 8.0, 100, r, **kw),
    "periodic": lambda r, **kw: g.periodic(10.0, 100, r, jitter_s=1.0, **kw),
    "flood": lambda r, **kw: g.flood(20.0, 100, **kw),
    "gentle": lambda r, **kw: g.gentle(1.0, 100, r, **kw),
}


@pytest.mark.parametrize("name", ALL)
def test_sorted_inside_the_span_and_seeded(name):
    a = ALL[name](rng(1), n_sources=50, start_s=1000.0)
    b = ALL[name](rng(1), n_sources=50, start_s=1000.0)
    assert len(a) > 0
    assert np.all(np.diff(a.time) >= 0)
    assert a.time.min() >= 1000.0 and a.time.max() < 1100.0
    np.testing.assert_array_equal(a.time, b.time)
    np.testing.assert_array_equal(a.key, b.key)
    assert a.n_keys == 50 and a.name_of(49) == f"{a.meta['generator']} 49"


@pytest.mark.parametrize("name", ["poisson", "on_off", "periodic", "gentle"])
def test_another_seed_gives_another_trace(name):
    a, b = ALL[name](rng(1), n_sources=5), ALL[name](rng(2), n_sources=5)
    assert len(a) != len(b) or not np.array_equal(a.time, b.time)


@pytest.mark.parametrize("name", ALL)
def test_key_offset_numbers_sources_in_a_larger_population(name):
    t = ALL[name](rng(), n_sources=4, key_offset=100)
    assert set(np.unique(t.key)) <= {100, 101, 102, 103}
    assert t.n_keys == 104 and t.name_of(103).endswith(" 103")


def test_ties_break_by_key():
    t = g.flood([1.0, 1.0, 1.0], 5)  # all three sources fire at 0, 1, 2, 3, 4
    np.testing.assert_array_equal(t.time, np.repeat(np.arange(5.0), 3))
    np.testing.assert_array_equal(t.key, np.tile([0, 1, 2], 5))


# ---------------------------------------------------------------- each source


def test_poisson_counts_follow_each_sources_rate():
    rates = np.array([0.0, 1.0, 10.0, 100.0])
    t = g.poisson(rates, 1000, rng())
    counts = per_key(t, 4)
    assert counts[0] == 0  # rate 0 sends nothing
    # mean rate x duration, within 4 standard deviations (sqrt of the mean)
    expected = rates * 1000
    assert np.all(np.abs(counts - expected) <= 4 * np.sqrt(expected) + 1e-9)


def test_poisson_gaps_are_exponential():
    t = g.poisson(50.0, 200, rng())
    gaps = np.diff(t.time)
    assert abs(gaps.mean() - 1 / 50) < 0.05 / 50
    assert abs(gaps.std() / gaps.mean() - 1) < 0.05  # exponential: cv = 1


def test_on_off_long_run_rate_and_silences():
    t = g.on_off(rate_on_per_s=20.0, mean_on_s=1.0, mean_off_s=4.0, duration_s=4000,
                 rng=rng())
    rate = len(t) / 4000
    assert abs(rate - 20 * 1 / 5) < 0.4  # long-run rate: rate_on x on/(on+off) = 4 per s
    gaps = np.diff(t.time)
    # silences: ~800 off periods, about exp(-3/4) = 47 % of them longer than 3 s; a Poisson
    # stream at the same mean rate (gaps ~ Exp(0.25 s)) would have about 0.1 such gaps
    assert 300 < np.count_nonzero(gaps > 3.0) < 460


def test_on_off_many_sources_each_cover_the_span():
    t = g.on_off(10.0, mean_on_s=0.5, mean_off_s=0.5, duration_s=500, rng=rng(),
                 n_sources=200)
    counts = per_key(t, 200)
    assert np.all(np.abs(counts - 2500) < 600)
    last = np.array([t.time[t.key == k].max() for k in range(0, 200, 20)])
    assert np.all(last > 490)  # every source runs to the end of the span


def test_on_off_source_silent_for_the_whole_span():
    t = g.on_off(10.0, mean_on_s=1e-3, mean_off_s=1e6, duration_s=1.0, rng=rng(0))
    assert len(t) == 0 and t.n_keys == 1


def test_periodic_without_jitter_is_exact():
    t = g.periodic(60.0, 300, rng(), phase_s=5.0, per_tick=2)
    np.testing.assert_array_equal(t.time, np.repeat([5.0, 65.0, 125.0, 185.0, 245.0], 2))


def test_periodic_jitter_only_delays():
    t = g.periodic(10.0, 1000, rng(), phase_s=0.0, jitter_s=2.0)
    late = t.time - np.floor(t.time / 10.0) * 10.0
    assert len(t) == 100 and late.min() >= 0 and late.max() < 2.0 and late.std() > 0.4


def test_periodic_phase_is_random_per_source():
    t = g.periodic(60.0, 60, rng(), n_sources=100)
    assert len(t) == 100  # one tick each inside one period
    assert t.time.std() > 10  # spread over the minute, not all at 0


def test_flood_is_evenly_spaced():
    t = g.flood(4.0, 2.0, start_s=10.0)
    np.testing.assert_allclose(t.time, 10.0 + np.arange(8) / 4.0)


def test_gentle_gaps_stay_within_the_jitter():
    t = g.gentle(2.0, 1000, rng(), jitter=0.2)
    gaps = np.diff(t.time)
    assert gaps.min() >= 0.4 - 1e-9 and gaps.max() <= 0.6 + 1e-9
    assert abs(len(t) - 2000) <= 25  # sum of 2000 gaps: sd ~ 2.6 s, ~5 requests


def test_gentle_many_sources():
    t = g.gentle(np.array([1.0, 5.0]), 100, rng(), jitter=0.0)
    counts = per_key(t, 2)
    np.testing.assert_array_equal(counts, [100, 500])


def test_boundary_attack_passes_a_fixed_window_twice_over():
    t = g.boundary_attack(100, 60.0)
    assert len(t) == 200
    assert np.all(t.time[:100] < 60.0) and np.all(t.time[100:] >= 60.0)
    assert t.time[0] == 59.0 and t.time[100] == 60.0 and t.time[-1] < 61.0
    fw = make("fixed-window", limit=100, window=60)
    assert all(fw.allow("a", now).allowed for now in t.time)
    log = make("sliding-window-log", limit=100, window=60)
    assert sum(log.allow("a", now).allowed for now in t.time) == 100


@pytest.mark.parametrize("limit, window_s, k", [(5, 0.1, 96034), (3, 0.7, 495746),
                                                (4, 1 / 7, 977112), (2, 0.3, 7)])
def test_boundary_attack_straddles_the_boundary_the_fixed_window_computes(limit, window_s, k):
    """k x W in floating point can fall short of the boundary the limiter computes (96034 x 0.1
    / 0.1 < 96034): the attack must still put `limit` requests on each side of the boundary
    the limiter computes (its window_index, in whole microseconds), so that a fixed window
    admits all 2 x limit."""
    for spread_s in (window_s / 2, window_s):
        t = g.boundary_attack(limit, window_s, boundary_s=k * window_s, spread_s=spread_s)
        index = np.array([window_index(now, window_s) for now in t.time])
        assert index.tolist() == [k - 1] * limit + [k] * limit
        fw = make("fixed-window", limit=limit, window=window_s)
        assert all(fw.allow("a", now).allowed for now in t.time)


def test_boundary_attack_later_boundary():
    t = g.boundary_attack(3, 10.0, boundary_s=30.0, spread_s=1.5)
    np.testing.assert_allclose(t.time, [28.5, 29.0, 29.5, 30.0, 30.5, 31.0])


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, name", [
    (lambda: g.poisson(-1.0, 10, rng()), "rate_per_s"),
    (lambda: g.poisson([1.0, np.nan], 10, rng()), "rate_per_s"),
    (lambda: g.poisson(1.0, 0, rng()), "duration_s"),
    (lambda: g.poisson(1.0, 10, rng(), n_sources=-1), "n_sources"),
    (lambda: g.poisson([1.0, 2.0], 10, rng(), n_sources=3), "n_sources"),
    (lambda: g.on_off(1.0, 0.0, 1.0, 10, rng()), "mean_on_s"),
    (lambda: g.periodic(0.0, 10, rng()), "period_s"),
    (lambda: g.periodic(1.0, 10, rng(), per_tick=0), "per_tick"),
    (lambda: g.flood(np.inf, 10), "rate_per_s"),
    (lambda: g.gentle(1.0, 10, rng(), jitter=1.0), "jitter"),
    (lambda: g.boundary_attack(0, 60), "limit"),
    (lambda: g.boundary_attack(10, 60, boundary_s=90), "boundary_s"),
    (lambda: g.boundary_attack(10, 60, spread_s=61), "spread_s"),
    (lambda: g.poisson(1.0, 10, rng(), key_offset=-2), "key_offset"),
])
def test_bad_parameters_are_named(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------- properties


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from budget import examples  # noqa: E402

rates = st.lists(st.floats(0.05, 20.0), min_size=1, max_size=8)


@examples(60)
@given(rates, st.floats(0.5, 50.0), st.integers(0, 2**32 - 1))
def test_every_generator_keeps_to_its_span_and_keys(rate, duration, seed):
    n = len(rate)
    for t in [g.poisson(rate, duration, rng(seed), start_s=-3.0),
              g.on_off(rate, 0.5, 1.5, duration, rng(seed), start_s=-3.0),
              g.periodic(1 / np.array(rate), duration, rng(seed), jitter_s=0.3, start_s=-3.0),
              g.gentle(rate, duration, rng(seed), jitter=0.5, start_s=-3.0),
              g.flood(rate, duration, start_s=-3.0)]:
        assert np.all(np.diff(t.time) >= 0)
        assert np.all((t.time >= -3.0) & (t.time < -3.0 + duration))
        assert t.n_keys == n and np.all((t.key >= 0) & (t.key < n))


def test_flood_keeps_a_tick_that_rounds_onto_the_end_of_the_span_out():
    t = g.flood([3.0], 1.0, phase_s=1 / 3)  # ticks 1/3, 2/3, and 1/3 + 2·(1/3) == 1.0
    assert t.time.tolist() == [1 / 3, 1 / 3 + 1 / 3] and t.time.max() < 1.0


@examples(60)
@given(rates, st.floats(0.5, 50.0), st.floats(0.0, 1.0))
def test_flood_sends_exactly_what_fits(rate, duration, phase_frac):
    rate = np.array(rate)
    phase = phase_frac / rate
    t = g.flood(rate, duration, phase_s=phase)
    counts = np.bincount(t.key, minlength=len(rate))
    # requests at phase + k·(1 / rate) < duration, k = 0, 1, ... (the period rounded once)
    want = [sum(1 for k in range(int(duration * r) + 3) if p + k * (1 / r) < duration)
            for r, p in zip(rate, phase)]
    assert list(counts) == want


@examples(60)
@given(st.lists(st.integers(0, 5), max_size=8), st.integers(0, 2**32 - 1))
def test_segment_helpers_match_a_loop(counts, seed):
    counts = np.array(counts, dtype=np.int64)
    values = rng(seed).random(int(counts.sum()))
    seg, idx = g._segment_index(counts)
    sums = g._segment_cumsum(values, counts)
    pos = 0
    for s, c in enumerate(counts):
        assert list(seg[pos:pos + c]) == [s] * c and list(idx[pos:pos + c]) == list(range(c))
        np.testing.assert_allclose(sums[pos:pos + c], np.cumsum(values[pos:pos + c]))
        pos += c


@examples(60)
@given(st.lists(st.integers(0, 40), max_size=8), st.integers(0, 2**32 - 1))
def test_exact_segment_sums_are_a_loop_bit_for_bit(counts, seed):
    """exact=True sums each segment on its own, as the loop does (the population's periods
    depend on it); the default may differ in the last bits, never by more than rounding."""
    counts = np.array(counts, dtype=np.int64)
    values = rng(seed).exponential(100.0, int(counts.sum()))
    loop, pos = [], 0
    for c in counts:
        s = 0.0
        for v in values[pos:pos + c]:
            s += v
            loop.append(s)
        pos += c
    exact = g._segment_cumsum(values, counts, exact=True)
    assert exact.tolist() == loop
    np.testing.assert_allclose(g._segment_cumsum(values, counts), loop, rtol=1e-9)


# ---------------------------------------------------------------- one source: burst, stream


def test_burst_evenly_or_at_random_inside_its_spread():
    t = g.burst(4, start_s=1.0, spread_s=0.4)
    assert t.time.tolist() == pytest.approx([1.0, 1.1, 1.2, 1.3]) and t.n_keys == 1
    assert g.burst(3).time.tolist() == [0.0, 0.0, 0.0] and len(g.burst(0)) == 0
    a = g.burst(500, start_s=5.0, spread_s=2.0, rng=rng(3))
    assert len(a) == 500 and 5.0 <= a.time.min() and a.time.max() < 7.0
    assert a.time.tolist() == g.burst(500, start_s=5.0, spread_s=2.0, rng=rng(3)).time.tolist()
    assert a.time.tolist() != g.burst(500, start_s=5.0, spread_s=2.0, rng=rng(4)).time.tolist()


@pytest.mark.parametrize("rate, duration, want", [(4, 1.0, 4), (100, 60, 6000), (100, 0.29, 29),
                                                  (10, 0.3, 3), (3, 1.0, 3), (7, 0, 0)])
def test_stream_sends_exactly_what_fits(rate, duration, want):
    t = g.stream(rate, duration, start_s=2.0)
    assert len(t) == want
    assert np.all(np.diff(t.time) > 0) and (want == 0 or t.time[-1] < 2.0 + duration)
    np.testing.assert_allclose(np.diff(t.time), 1 / rate)


@pytest.mark.parametrize("call, name", [(lambda: g.burst(-1), "n"),
                                        (lambda: g.burst(3, spread_s=-1), "spread_s"),
                                        (lambda: g.burst(3, start_s=float("nan")), "start_s"),
                                        (lambda: g.stream(0, 1), "rate_per_s")])
def test_one_source_bad_parameters_are_named(call, name):
    with pytest.raises(ValueError, match=name):
        call()
