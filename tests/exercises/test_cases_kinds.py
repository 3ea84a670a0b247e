"""The cases: counts arrive as ints, costs above 1 where the task has a cost, and instructor
cases that differ in kind from the public ones (window edges, Unix times, long idle gaps,
costs up to the limit, many keys) and each catch a planted mistake."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

import planted
from ratelab.exercises import NAMES, casekit, module

COUNTS = {"limit", "capacity", "burst", "delay", "quota", "clients", "k", "seed"}
"""Case fields that count requests (or name a whole number): ints."""

REALS = {"rate", "window", "window_s", "boundary", "service_per_s", "max_wait_s",
         "max_mean_wait_s", "demand_per_s", "rate_per_client", "duration_s", "horizon_s"}
"""Case fields that are times or rates: floats."""

WHOLE_SECONDS = {("headers", "window_s")}
"""Exceptions: the RateLimit-Policy header states its window in whole seconds."""

KINDS = {
    "token_bucket_take": {"boundary edges", "Unix time", "long idle", "costs"},
    "shaper_departures": {"boundary edges", "Unix time", "long idle"},
    "fixed_window": {"boundary edges", "Unix time", "long idle", "costs"},
    "boundary_attack": {"Unix time", "limit of one", "large limit"},
    "sliding_log": {"boundary edges", "Unix time", "long idle", "costs"},
    "counter_estimate": {"boundary edges", "Unix time", "long idle", "costs"},
    "lua_counter": {"boundary edges", "Unix time", "long idle", "many keys",
                    "limit of one, three gateways"},
    "fail_policy": {"one requirement for all", "outage from the start", "outage to the end",
                    "many endpoints"},
    "gcra_tat": {"boundary edges", "Unix time", "long idle", "costs"},
    "nginx_burst": {"boundary edges", "Unix time", "long idle"},
    "headers": {"boundary edges", "Unix time", "long idle", "costs"},
    "storm_client": {"long surge", "surge from the start", "little to spare", "many clients"},
    "choose_limiter": {"demand near the curve", "timeout of a few services", "fast service",
                       "slow service"},
}
"""The kinds of instructor case each exercise adds to its random ones."""

CATCHES = [
    ("token_bucket_take", planted.take_strict, "boundary edges"),
    ("token_bucket_take", planted.take_uncapped, "long idle"),
    ("fixed_window", planted.FixedStrict, "boundary edges"),
    ("fixed_window", planted.FixedCountsRejected, "costs"),
    ("sliding_log", planted.LogClosed, "boundary edges"),
    ("sliding_log", planted.LogIsClose, "Unix time"),
    ("sliding_log", planted.LogExpiresOne, "long idle"),
    ("counter_estimate", planted.CounterIgnoresCost, "costs"),
    ("counter_estimate", planted.CounterNeverForgets, "long idle"),
    ("gcra_tat", planted.GcraIgnoresCost, "costs"),
    ("gcra_tat", planted.GcraChecksOne, "costs"),
    ("gcra_tat", planted.GcraIsClose, "Unix time"),
    ("gcra_tat", planted.GcraNoMax, "long idle"),
    ("nginx_burst", planted.NginxNoFloor, "long idle"),
    ("nginx_burst", planted.NginxFirstCounts, "boundary edges"),
    ("shaper_departures", planted.departures_off_by_one, "boundary edges"),
    ("headers", planted.headers_round_down, "boundary edges"),
    ("lua_counter", planted.lua_incr_first, "boundary edges"),
    ("fail_policy", planted.fail_login_closed, "one requirement for all"),
    ("storm_client", planted.storm_exponential, "long surge"),
]
"""(exercise, planted wrong answer, kind): the kind's cases alone call the answer wrong."""


def kind(case: dict) -> str:
    """A case's kind: its name without the trailing number."""
    return re.sub(r" \d+$", "", case["name"])


def every_case(name: str, seed: int = 0) -> list[dict]:
    """The public, random and instructor cases of exercise `name`."""
    ex = module(name).EXERCISE
    return ex.cases(np.random.default_rng(seed)) + ex.instructor_cases(np.random.default_rng(seed))


def fields(value, path=()):
    """Every (key path, value) inside a case, nested dicts and lists included."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from fields(v, path + (k,))
    elif isinstance(value, list):
        for v in value:
            yield from fields(v, path)
    else:
        yield path, value


def times_and_costs(case: dict) -> tuple[list[float], list[int]]:
    """A case's request times and costs (no costs where its requests have none)."""
    if "requests" in case:
        return [t for t, _ in case["requests"]], [c for _, c in case["requests"]]
    return list(case.get("times", [])), []


def period_s(case: dict) -> float:
    """The window, or 1/rate, of a timeline case's limiter."""
    p = case["params"].get("limiter_params", case["params"])
    return p["window"] if "window" in p else 1 / p["rate"]


def top_cost(name: str, case: dict) -> int:
    """The most a request of `case` may cost: the limit, the capacity or burst + 1."""
    p = case["params"].get("limiter_params", case["params"])
    return p["burst"] + 1 if name == "gcra_tat" else p.get("limit", p.get("capacity"))


# ---------------------------------------------------------------- what the values are


@pytest.mark.parametrize("name", NAMES)
def test_counts_are_ints_and_times_and_rates_floats(name):
    for case in every_case(name):
        for path, value in fields({k: v for k, v in case.items() if k != "requests"}):
            key = path[-1] if path else None
            if key in COUNTS or (name, key) in WHOLE_SECONDS:
                assert type(value) is int, (case["name"], path, value)
            elif key in REALS and value is not None:
                assert type(value) is float, (case["name"], path, value)
        times, costs = times_and_costs(case)
        assert all(type(t) is float for t in times), case["name"]
        assert all(type(c) is int and c >= 1 for c in costs), case["name"]


@pytest.mark.parametrize("name", NAMES)
def test_cases_come_back_from_json_the_same_types_and_all(name):
    cases = every_case(name)
    back = json.loads(json.dumps(cases))
    assert back == cases
    assert [repr(v) for c in back for _, v in fields(c)] == \
        [repr(v) for c in cases for _, v in fields(c)]


COSTED = [n for n in NAMES if "cost" in module(n).__doc__]
"""The exercises whose task text has a cost."""


def test_the_tasks_with_a_cost_are_the_limiters_that_take_one():
    assert set(COSTED) == {"token_bucket_take", "fixed_window", "sliding_log",
                           "counter_estimate", "gcra_tat"}


@pytest.mark.parametrize("name", COSTED)
def test_costs_above_one_where_the_task_has_a_cost(name):
    ex = module(name).EXERCISE
    for cases in (ex.public_cases(), ex.random_cases(np.random.default_rng(0), ex.random_count)):
        assert any(c > 1 for case in cases for c in times_and_costs(case)[1]), name
    costly = [case for case in ex.instructor_cases(np.random.default_rng(0))
              if kind(case) == "costs"]
    assert costly and all(top_cost(name, c) in times_and_costs(c)[1] for c in costly)


@pytest.mark.parametrize("row", [r for r in planted.RIGHT_INT if r[2]],
                         ids=lambda r: f"{r[0]}-{r[1].__name__}")
def test_an_answer_written_for_whole_counts_needs_them(row):
    """The same answer, handed float counts (as the cases once did), raises TypeError."""
    name, answer, _ = row
    ex = module(name).EXERCISE
    floated = [{**c, "params": {k: float(v) if type(v) is int else v
                                for k, v in c["params"].items()},
                "requests": [[t, float(n)] for t, n in c["requests"]]}
               for c in ex.public_cases()]
    result = ex.check(answer, cases=floated)
    assert result.verdict == "wrong" and "TypeError" in result.text(), result.text()
    assert ex.check(answer, cases=ex.public_cases()).verdict == "passed"


# ---------------------------------------------------------------- the instructor's kinds


@pytest.mark.parametrize("name", NAMES)
def test_instructor_cases_differ_in_kind_and_are_seeded(name):
    ex = module(name).EXERCISE
    cases = ex.instructor_cases(np.random.default_rng(5))
    assert {kind(c) for c in cases} - {"random stream", "random decisions", "random",
                                       "random sequence", "random outage", "random surge",
                                       "random service"} == KINDS[name]
    assert len({c["name"] for c in cases}) == len(cases), "case names are unique"
    assert ex.instructor_cases(np.random.default_rng(5)) == cases
    assert ex.instructor_cases(np.random.default_rng(6)) != cases
    known = ex.public_cases() + ex.random_cases(np.random.default_rng(5), 2)
    assert not {c["name"] for c in ex.public_cases()} & {c["name"] for c in cases}
    for case in cases:  # the format of the exercise's other cases ("keys": lua's many keys)
        assert set(case) - {"keys"} <= set().union(*(set(c) for c in known)), case


def timeline_cases(name: str, wanted: str) -> list[dict]:
    """Exercise `name`'s instructor timeline cases of kind `wanted` (seed 0)."""
    cases = [c for c in module(name).EXERCISE.instructor_cases(np.random.default_rng(0))
             if kind(c) == wanted and "params" in c]
    if not cases:
        pytest.skip(f"{name} has no {wanted!r} timeline")
    return cases


TIMELINES = [n for n in NAMES if "boundary edges" in KINDS[n] and n != "lua_counter"]


@pytest.mark.parametrize("name", TIMELINES)
def test_boundary_edges_land_on_k_periods_and_a_grid_step_either_side(name):
    for case in timeline_cases(name, "boundary edges"):
        times, p = set(times_and_costs(case)[0]), period_s(case)
        step = casekit.GRID_S if name != "nginx_burst" else 1 / 8
        edges = sorted(t for t in times if (t / p).is_integer() and t / p >= 1)
        assert len(edges) >= 2, case
        assert all(t - step in times and t + step in times for t in edges[1:]), case


@pytest.mark.parametrize("name", TIMELINES)
def test_unix_time_cases_lie_on_the_grid_at_unix_magnitudes(name):
    for case in timeline_cases(name, "Unix time"):
        times = times_and_costs(case)[0]
        assert casekit.UNIX_S <= min(times) and max(times) < casekit.UNIX_S + 2 * casekit.DAY_S
        assert all((t * 64).is_integer() for t in times)


@pytest.mark.parametrize("name", TIMELINES)
def test_long_idle_gaps_span_one_two_a_refill_and_a_million_periods(name):
    for case in timeline_cases(name, "long idle"):
        times, p = sorted(set(times_and_costs(case)[0])), period_s(case)
        gaps = {round((b - a) / p, 9) for a, b in zip(times, times[1:])}
        assert {1, 2, casekit.FAR_PERIODS} <= gaps, gaps


def test_lua_many_keys_give_each_request_a_key_and_each_key_its_counter():
    cases = [c for c in module("lua_counter").EXERCISE.instructor_cases(np.random.default_rng(0))
             if kind(c) == "many keys"]
    assert cases and all(len(c["keys"]) == len(c["times"]) and len(set(c["keys"])) >= 3
                         for c in cases)
    ex = module("lua_counter")

    def per_tenant(key, now, limit, window_s):
        """Wrong: one counter per tenant, the part of the key before its first ':'."""
        return (yield from ex.decide(key.split(":")[0], now, limit, window_s))

    assert ex.check(per_tenant, quiet=True).verdict == "passed"  # one key: nothing to see
    result = ex.EXERCISE.check(per_tenant, cases=cases)
    assert result.verdict == "wrong" and "of key 'user" in result.failure.message, result.text()


@pytest.mark.parametrize("row", CATCHES, ids=lambda r: f"{r[0]}-{r[1].__name__}-{r[2]}")
def test_each_kind_catches_a_planted_mistake(row):
    name, answer, wanted = row
    ex = module(name).EXERCISE
    cases = [c for c in ex.instructor_cases(np.random.default_rng(0)) if kind(c) == wanted]
    result = ex.check(answer, cases=cases)
    assert result.verdict == "wrong", f"the {wanted!r} cases miss {answer.__name__}"
    assert result.failure.case.startswith(wanted) and result.failure.timeline


def test_casekit_helpers_keep_counts_whole_and_times_on_the_grid():
    rng = np.random.default_rng(1)
    assert casekit.with_costs([0, 0.5], [2, 3.0]) == [[0.0, 2], [0.5, 3]]
    with pytest.raises(ValueError, match="whole number"):
        casekit.with_costs([0.0], [1.5])
    times = casekit.grid_times(rng, 100, 0.1, start=casekit.unix_start(rng))
    assert times == sorted(times) and all((t * 64).is_integer() for t in times)
    assert casekit.costs_up_to(rng, 10, 4)[0] == 4 and max(casekit.costs_up_to(rng, 50, 4)) == 4
    shape = casekit.Shape({"limit": 2, "window": 1.0}, 1.0, 2, 2)
    edges = casekit.edge_times(shape, 3, 2)
    assert edges.count(3.0) == 3 and edges.count(3.0 - casekit.GRID_S) == 3
    assert math.isclose(casekit.on_grid(0.3), 19 / 64)
