"""ratelab.queueing: closed forms, Lindley's recursion, and the burst verdict."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ratelab.queueing import (burst_verdict, largest_burst, lindley_waits, md1_wait_s, mean_wait_s, mg1_wait_s,
                              mm1_wait_s, saturated_bucket_arrivals, simulate)


@pytest.mark.parametrize("rho, mm1, md1", [(0.0, 0.0, 0.0), (0.5, 1.0, 0.5), (0.8, 4.0, 2.0),
                                           (0.9, 9.0, 4.5), (0.99, 99.0, 49.5)])
def test_closed_forms_in_service_times(rho, mm1, md1):
    assert mm1_wait_s(rho, 1.0) == pytest.approx(mm1)
    assert md1_wait_s(rho, 2.0) == pytest.approx(2 * md1)
    assert mg1_wait_s(rho, 1.0, 0.5) == pytest.approx(0.75 * mm1)  # (1 + c2) / 2 of M/M/1


@pytest.mark.parametrize("rho", [1.0, 1.5, -0.1, math.nan])
def test_unstable_or_bad_rho(rho):
    with pytest.raises(ValueError, match="rho"):
        mm1_wait_s(rho, 1.0)


def test_lindley_on_a_made_up_timeline():
    # arrivals 0, 1, 1.5, 5 with 2 s of service each: starts 0, 2, 4, 6 -> waits 0, 1, 2.5, 1
    waits = lindley_waits([0.0, 1.0, 1.5, 5.0], [2.0, 2.0, 2.0, 2.0])
    assert waits.tolist() == pytest.approx([0.0, 1.0, 2.5, 1.0])
    with pytest.raises(ValueError, match="sorted"):
        lindley_waits([1.0, 0.0], [1.0, 1.0])


@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5)), min_size=1, max_size=50))
def test_vectorised_lindley_is_the_recursion(rows):
    gaps, services = zip(*rows)
    arrivals = np.cumsum(gaps)
    expected, w = [0.0], 0.0
    for n in range(1, len(rows)):
        w = max(0.0, w + services[n - 1] - (arrivals[n] - arrivals[n - 1]))
        expected.append(w)
    assert lindley_waits(arrivals, services) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("service, formula", [("exponential", mm1_wait_s),
                                              ("deterministic", md1_wait_s)])
@pytest.mark.parametrize("rho", [0.3, 0.7])
def test_simulation_agrees_with_the_closed_form(service, formula, rho):
    waits = simulate(rho, 0.01, 100_000, np.random.default_rng(11), service)
    assert mean_wait_s(waits) == pytest.approx(formula(rho, 0.01), rel=0.08)
    # M/M/1 waits twice M/D/1: a wrong formula for either is off by a factor of two
    assert mean_wait_s(waits) != pytest.approx(formula(rho, 0.01) * 2, rel=0.3)


def test_burst_verdict_against_a_simulated_bucket():
    v = burst_verdict(300, rate_per_s=50, service_per_s=100, max_wait_s=5, queue_limit=500)
    assert v.swallowed and v.reason == ""
    assert (v.peak_queue, v.worst_wait_s, v.drain_s, v.utilisation) == (299, 2.99, 6.0, 0.5)
    arrivals = saturated_bucket_arrivals(300, 50, 20)
    waits = lindley_waits(arrivals, np.full(len(arrivals), 1 / 100))
    assert waits.max() == pytest.approx(v.worst_wait_s)
    assert arrivals[waits > 1e-9].max() < v.drain_s  # nobody waits after the queue drains
    late = burst_verdict(300, 50, 100, max_wait_s=1)
    assert not late.swallowed and "waits 2.99 s" in late.reason
    full = burst_verdict(300, 50, 100, queue_limit=100)
    assert not full.swallowed and "queue peaks at 299" in full.reason
    never = burst_verdict(300, 100, 100)
    assert not never.swallowed and never.drain_s == math.inf and "never drains" in never.reason


@pytest.mark.parametrize("rate, mu, wait, queue", [(50, 100, 2.0, math.inf), (50, 100, math.inf, 120),
                                                    (10, 33, 0.5, 40), (90, 100, 1.0, 5)])
def test_largest_burst_is_the_brute_force_answer(rate, mu, wait, queue):
    brute = max(b for b in range(1, 2000)
                if burst_verdict(b, rate, mu, max_wait_s=wait, queue_limit=queue).swallowed)
    assert largest_burst(rate, mu, max_wait_s=wait, queue_limit=queue) == brute
    assert largest_burst(100, 100, max_wait_s=wait) == 0
    assert largest_burst(1, 2) == math.inf


def test_cli_burst_and_storm(capsys):
    from ratelab.cli import main

    assert main(["burst", "--burst", "300", "--rate", "50", "--service", "100", "--max-wait", "2"]) == 0
    out = capsys.readouterr().out
    assert "NOT swallowed" in out and "worst wait 2.990 s" in out and "fits: 201" in out
    assert main(["storm", "--behaviours", "retry-after", "--clients", "10", "--job-rate", "1",
                 "--duration", "10", "--surge", "none", "--param", "rate=5", "--param",
                 "capacity=5"]) == 0
    out = capsys.readouterr().out
    assert "retry-after" in out and "load x" in out and "succeeded %" in out
    assert main(["storm", "--behaviours", "sometimes"]) == 2
    assert "--behaviours: 'sometimes' is not one of" in capsys.readouterr().err
