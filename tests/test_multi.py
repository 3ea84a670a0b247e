"""MultiKeyLimiter: refuse when any dimension is exhausted; charge only when all pass."""

import math

import pytest
from hypothesis import given, strategies as st

from ratelab.limiters import FixedWindow, MultiKeyLimiter, TokenBucket, make
from ratelab.limiters.multi import refused_share


def two_limits(charge="if-all-pass", count_rejected=False):
    return MultiKeyLimiter({"ip": FixedWindow(limit=3, window=10, count_rejected=count_rejected),
                            "user": FixedWindow(limit=2, window=10)}, charge=charge)


# A made-up timeline: alice and bob share one IP. Rows: (t, user, allowed, blocked_by, ip count)
TIMELINE = [
    (0.0, "alice", True, (), 1),
    (1.0, "alice", True, (), 2),
    (2.0, "alice", False, ("user",), 2),  # alice's own limit; the IP is not charged
    (3.0, "bob", True, (), 3),
    (4.0, "bob", False, ("ip",), 3),       # bob is refused for the IP he shares
    (10.0, "bob", True, (), 1),            # a new window
]


def test_if_all_pass_charges_nothing_on_refusal():
    m = two_limits()
    for step, (t, user, ok, blocked, ip_count) in enumerate(TIMELINE):
        d = m.allow({"ip": "10.0.0.1", "user": user}, now=t)
        assert (d.allowed, d.blocked_by) == (ok, blocked), f"step {step} at t={t}"
        assert m.limits["ip"].inspect("10.0.0.1", t)["count"] == ip_count, f"step {step}"


def test_each_charges_the_limits_that_passed():
    m = two_limits(charge="each")
    outcomes = [m.allow({"ip": "10.0.0.1", "user": u}, now=t) for t, u, *_ in TIMELINE[:4]]
    # alice's third request was refused by "user" but spent the IP's third slot: bob is out
    assert [o.allowed for o in outcomes] == [True, True, False, False]
    assert outcomes[3].blocked_by == ("ip",)


def test_count_rejected_dimensions_still_count_refusals():
    m = two_limits(count_rejected=True)
    for t in (0.0, 1.0, 2.0):
        m.allow({"ip": "n", "user": "alice"}, now=t)
    # the third request was refused by "user"; the INCR-first IP counter counted it anyway
    assert m.limits["ip"].inspect("n", 2.0)["count"] == 3
    assert m.limits["user"].inspect("alice", 2.0)["count"] == 2


def test_peek_changes_nothing_and_combined_decision():
    m = MultiKeyLimiter({"ip": TokenBucket(rate=1, capacity=5), "key": TokenBucket(rate=1, capacity=1)})
    keys = {"ip": "a", "key": "k"}
    assert m.peek(keys, 0.0).allowed and m.peek(keys, 0.0).allowed
    assert m.allow(keys, 0.0).allowed
    d = m.allow(keys, 0.25)
    assert not d.allowed and d.blocked_by == ("key",)
    combined = d.decision
    assert combined.remaining == 0 and combined.retry_after == pytest.approx(0.75)
    # each dimension answers as if it alone decided: "ip" counts this request (4.25 - 1
    # tokens), although if-all-pass did not charge it
    assert combined.reset_after == pytest.approx(1.75)
    assert m.limits["ip"].inspect("a", 0.25)["tokens"] == pytest.approx(4.25)


def test_bad_arguments():
    with pytest.raises(ValueError, match="charge"):
        two_limits(charge="first")
    with pytest.raises(ValueError, match="limits"):
        MultiKeyLimiter({})
    shared = TokenBucket(rate=1, capacity=1)
    with pytest.raises(ValueError, match="same limiter object"):
        MultiKeyLimiter({"a": shared, "b": shared})
    with pytest.raises(ValueError, match="keys must name"):
        two_limits().allow({"ip": "x"}, now=0.0)


def test_time_going_backwards_commits_nothing():
    m = two_limits()
    m.allow({"ip": "n", "user": "bob"}, now=5.0)
    with pytest.raises(ValueError, match="backwards"):
        m.allow({"ip": "other", "user": "bob"}, now=4.0)  # "ip" is fine, "user" is not
    assert m.limits["ip"].inspect("other", 5.0)["count"] == 0


@given(st.lists(st.tuples(st.floats(0, 3), st.integers(0, 3), st.integers(0, 1)), max_size=40),
       st.sampled_from(["token-bucket", "fixed-window", "sliding-window-log", "gcra"]))
def test_if_all_pass_admits_exactly_when_every_alone_would(steps, name):
    params = {"token-bucket": dict(rate=1, capacity=3), "gcra": dict(rate=1, burst=2)}.get(
        name, dict(limit=3, window=1))
    m = MultiKeyLimiter({"user": make(name, **params), "ip": make(name, **params)})
    t = 0.0
    for dt, user, ip in steps:
        t += dt
        keys = {"user": user, "ip": ip}
        expected = all(m.limits[d].peek(k, t).allowed for d, k in keys.items())
        assert m.allow(keys, t).allowed == expected


def test_refused_share_by_dimension():
    m = two_limits()
    outcomes = [m.allow({"ip": "n", "user": u}, now=t) for t, u, *_ in TIMELINE]
    assert refused_share(outcomes) == pytest.approx(2 / 6)
    assert refused_share(outcomes, "ip") == pytest.approx(1 / 6)
    assert math.isnan(refused_share([]))
