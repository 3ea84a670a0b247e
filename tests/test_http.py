"""ratelab.http: responses from Decisions, and parsers that read back what was sent."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ratelab.http import (LimitItem, Policy, PolicyItem, Response, Token, parse_list,
                          parse_ratelimit, parse_ratelimit_policy, parse_retry_after,
                          parse_x_ratelimit, read, respond, serialize_list, whole_seconds)
from ratelab.limiters import Decision, make

EPOCH = 1_700_000_000


def test_rejected_token_bucket_response_on_a_timeline():
    bucket = make("token-bucket", rate=2, capacity=4)
    policy = Policy.of(bucket, "burst")
    assert (policy.quota, policy.window_s) == (4, 2)
    for _ in range(4):
        assert bucket.allow("k", now=100.0).allowed
    d = bucket.allow("k", now=100.0)  # empty: one token in 0.5 s, full in 2 s
    r = respond(d, policy, now=100.0, epoch_s=EPOCH)
    assert r.status == 429
    assert dict(r.headers) == {
        "Retry-After": "1",  # 0.5 s rounded up: a client is never early
        "RateLimit-Policy": '"burst";q=4;w=2',
        "RateLimit": '"burst";r=0;t=1',  # a token in 0.5 s: t no later than Retry-After
        "X-RateLimit-Limit": "4",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(EPOCH + 102),
    }


def test_allowed_response_has_no_retry_after_and_503_policy():
    d = Decision(True, 10, 7, 0.0, 2.5)
    r = respond(d, Policy("api", 10, 1, status=503), now=3.0)
    assert r.status == 200 and r.header("retry-after") is None
    assert r.header("ratelimit") == '"api";r=7;t=3'
    r = respond(Decision(False, 10, 0, 0.2, 1.0), Policy("api", 10, 1, status=503))
    assert r.status == 503 and r.header("Retry-After") == "1"


def test_several_policies_list_every_item_and_take_the_longest_wait():
    pairs = [(Policy("ip", 100, 60), Decision(True, 100, 40, 0.0, 30.0)),
             (Policy("user", 10, 1, partition=b"u1"), Decision(False, 10, 0, 2.2, 3.0)),
             (Policy("key", 5, 1), Decision(False, 5, 0, 0.7, 1.0))]
    r = respond(pairs, now=0.0, epoch_s=EPOCH)
    assert r.status == 429 and r.header("Retry-After") == "3"
    assert r.header("RateLimit-Policy") == '"ip";q=100;w=60, "user";q=10;w=1;pk=:dTE=:, "key";q=5;w=1'
    view = read(r, epoch_s=EPOCH)
    assert [i.name for i in view.limits] == ["ip", "user", "key"]
    assert view.remaining == 0 and view.reset_s == 3.0  # the first tightest item: user
    assert view.policies[1] == PolicyItem("user", 10, 1, None, b"u1")


def test_infinite_waits_are_left_out():
    from ratelab.limiters import ConcurrencyLimiter

    policy = Policy.of(ConcurrencyLimiter(3), "slots")
    r = respond(Decision(False, 3, 0, math.inf, math.inf), policy)
    assert r.header("RateLimit-Policy") == '"slots";q=3;qu="concurrent-requests"'
    assert r.header("Retry-After") is None and r.header("X-RateLimit-Reset") is None
    assert r.header("RateLimit") == '"slots";r=0'


@pytest.mark.parametrize("value, seconds", [
    ("0", 0.0), ("120", 120.0), (" 7 ", 7.0),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 30.0),  # 1445412480 is that date
    # RFC 9110 5.6.7: "A recipient that parses a timestamp value in an HTTP field MUST accept
    # all three HTTP-date formats": IMF-fixdate above, obsolete RFC 850 and asctime (in GMT)
    ("Wednesday, 21-Oct-15 07:28:00 GMT", 30.0), ("Wed Oct 21 07:28:00 2015", 30.0),
    ("Thu Oct  1 07:28:00 2015", 0.0),
])
def test_parse_retry_after(value, seconds):
    assert parse_retry_after(value, now_epoch_s=1445412450) == seconds


@pytest.mark.parametrize("value", ["-1", "1.5", "soon", "", "Wed, 21 Oct 2015 07:28:00"])
def test_parse_retry_after_rejects(value):
    with pytest.raises(ValueError, match="Retry-After"):
        parse_retry_after(value, now_epoch_s=0)


def test_http_date_needs_a_clock():
    with pytest.raises(ValueError, match="now_epoch_s"):
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")


def test_parsers_read_the_draft_examples():
    assert parse_ratelimit_policy('"default";q=100;w=10') == [PolicyItem("default", 100, 10)]
    assert parse_ratelimit_policy('"permin";q=50;w=60,"perhr";q=1000;w=3600;qu="request"') == [
        PolicyItem("permin", 50, 60), PolicyItem("perhr", 1000, 3600, "request")]
    assert parse_ratelimit('"default";r=50;t=30') == [LimitItem("default", 50, 30)]
    assert parse_ratelimit('"x";r=1;pk=:AQID:') == [LimitItem("x", 1, None, b"\x01\x02\x03")]
    # RFC 9651 4.2.7: parsers "SHOULD NOT fail when '=' padding is not present"
    assert parse_ratelimit('"x";r=1;pk=:AQI:') == [LimitItem("x", 1, None, b"\x01\x02")]
    assert parse_list(":AQ:, :AQI=:") == [(b"\x01", {}), (b"\x01\x02", {})]


@pytest.mark.parametrize("parse, value, match", [
    (parse_ratelimit_policy, '"default";w=10', "'q' is required"),
    (parse_ratelimit_policy, "default;q=100", "must be a String"),
    (parse_ratelimit_policy, '"d";q=1.5', "must be int"),
    (parse_ratelimit_policy, '"d";q=10,', "trailing comma"),
    (parse_ratelimit_policy, '"d;q=10', "unterminated string"),
    (parse_ratelimit, '"d";t=3', "'r' is required"),
    (parse_ratelimit, '"d";r=-1', ">= 0"),
    (parse_ratelimit, '"d";r=1 "e";r=2', "expected ','"),
    (parse_ratelimit, '("a" "b");r=1', "inner lists"),
])
def test_malformed_fields_name_the_header(parse, value, match):
    with pytest.raises(ValueError, match=match):
        parse(value)


def test_x_ratelimit_parser():
    x = parse_x_ratelimit({"x-ratelimit-limit": "60", "X-RateLimit-Remaining": "0",
                           "X-RateLimit-Reset": "1700000060"})
    assert (x.limit, x.remaining, x.reset_epoch_s) == (60, 0, 1700000060)
    with pytest.raises(ValueError, match="X-RateLimit-Remaining"):
        parse_x_ratelimit({"X-RateLimit-Remaining": "-3"})
    view = read(Response(429, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(EPOCH + 50)}),
                now=20.0, epoch_s=EPOCH)
    assert view.remaining == 0 and view.reset_s == 30.0 and view.retry_after_s is None


@pytest.mark.parametrize("kw, match", [
    ({"quota": -1}, "quota"), ({"window_s": 0}, "window_s"), ({"status": 500}, "status"),
    ({"name": ""}, "name"), ({"name": "é"}, "name"), ({"partition": "x"}, "partition"),
])
def test_policy_checks(kw, match):
    with pytest.raises(ValueError, match=match):
        Policy(**kw)


def test_whole_seconds_rounds_up_but_forgives_float_noise():
    assert [whole_seconds(s) for s in (0.0, 0.2, 1.0, 1.0 + 1e-12, 1.001)] == [0, 1, 1, 1, 2]
    # less than half a microsecond past a second is that second's tick, more is the next one
    assert [whole_seconds(s) for s in (1.0000002, 1.0000006, 1.758e9 + 1 + 2.4e-7)] == \
        [1, 2, 1_758_000_001]


@pytest.mark.parametrize("origin", [0, 1_758_000_000])
def test_a_refusal_in_a_window_names_its_end_whenever_it_came(origin):
    """A fixed window refusing anywhere in second 0 sends its clients back at second 1, not 2:
    the wait ends on the boundary's tick, whatever the float noise of now + wait (rounding up
    the float sent 91 of the 200 refused clients of notebook 03's retry wave a second late)."""
    lim = make("fixed-window", limit=1, window=1.0)
    policy = Policy.of(lim)
    for i, t in enumerate(origin + np.random.default_rng(0).uniform(0, 1, 500)):
        lim.allow(i, t)
        refused = lim.allow(i, t)
        headers = respond(refused, policy, now=t).headers
        assert (headers["X-RateLimit-Reset"], headers["Retry-After"]) == (str(origin + 1), "1"), t


# ---------------------------------------------------------------- round trips

names = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=12)
bare = st.one_of(st.booleans(), st.integers(-10**15 + 1, 10**15 - 1), names, st.binary(max_size=8),
                 st.from_regex(r"[A-Za-z*][A-Za-z0-9:/.*_-]{0,6}", fullmatch=True).map(Token),
                 st.integers(-10**12 + 1, 10**12 - 1).map(lambda n: n / 1000))
keys = st.from_regex(r"[a-z*][a-z0-9_.*-]{0,4}", fullmatch=True)


@given(st.lists(st.tuples(bare, st.dictionaries(keys, bare, max_size=4)), min_size=1, max_size=4))
def test_structured_list_round_trip(items):
    assert parse_list(serialize_list(items)) == items


decisions = st.builds(
    Decision, allowed=st.booleans(), limit=st.integers(1, 10**6).map(float),
    remaining=st.integers(0, 10**6), retry_after=st.floats(0, 1e6), reset_after=st.floats(0, 1e6))
policies = st.builds(Policy, name=names, quota=st.integers(0, 10**6),
                     window_s=st.one_of(st.none(), st.integers(1, 10**6)),
                     status=st.sampled_from([429, 503]),
                     unit=st.one_of(st.none(), st.sampled_from(["request", "content-bytes"])),
                     partition=st.one_of(st.none(), st.binary(min_size=1, max_size=16)))


def on_the_grid(wait: float) -> int:
    """A wait in whole seconds, exactly: to the nearest microsecond (half to even), then up."""
    ticks = round(Fraction(wait) * 10**6)
    return max(0, -(-ticks // 10**6))


@given(st.lists(st.tuples(policies, decisions), min_size=1, max_size=3),
       st.floats(0, 1e6), st.integers(0, 2 * 10**9))
def test_a_client_reads_back_what_the_server_sent(pairs, now, epoch_s):
    r = respond(pairs, now=now, epoch_s=epoch_s)
    view = read(r, now=now, epoch_s=epoch_s)
    assert view.ok == all(d.allowed for _, d in pairs)
    assert view.status in (200, 429, 503)
    assert view.policies == tuple(PolicyItem(p.name, p.quota, p.window_s, p.unit, p.partition)
                                  for p, _ in pairs)
    waits = [d.reset_after if d.allowed else d.retry_after for _, d in pairs]  # see below
    assert view.limits == tuple(LimitItem(p.name, d.remaining, on_the_grid(w), p.partition)
                                for (p, d), w in zip(pairs, waits))
    refusals = [d.retry_after for _, d in pairs if not d.allowed]
    if refusals:  # never early, on the limiters' grid of whole microseconds
        assert view.retry_after_s >= max(refusals) - 0.5e-6
        assert view.retry_after_s < max(refusals) + 1
    else:
        assert view.retry_after_s is None
    x = parse_x_ratelimit(r.headers)
    tight = min(pairs, key=lambda pd: pd[1].remaining)
    assert x.remaining == tight[1].remaining and x.limit == tight[0].quota
    assert x.reset_epoch_s >= epoch_s + now + tight[1].reset_after - 1e-6


@pytest.mark.parametrize("name, params", [
    ("token-bucket", {"rate": 2, "capacity": 4}), ("gcra", {"rate": 2, "burst": 4}),
    ("sliding-window-log", {"limit": 4, "window": 2}),
    ("fixed-window", {"limit": 4, "window": 2}),
])
def test_a_refusal_never_tells_the_client_to_retry_before_t(name, params):
    """draft-ietf-httpapi-ratelimit-headers-10, section 6: "If a response contains both the
    Retry-After and the RateLimit header fields, the Retry-After field value SHOULD NOT
    reference a point in time earlier than the reset parameter" (-11: "than the end of the
    effective window"); -10 4.1.2: t is "the number of seconds until additional quota ... is
    made available" — for a refusal, the wait Retry-After states."""
    limiter = make(name, **params)
    times = [100.0, 100.5, 101.0, 101.5] + [101.9] * 6
    now, d = next((t, d) for t in times if not (d := limiter.allow("k", now=t)).allowed)
    r = respond(d, Policy.of(limiter, "p"), now=now)
    (item,) = parse_ratelimit(r.header("RateLimit"))
    retry_after = parse_retry_after(r.header("Retry-After"))
    assert item.reset_s == retry_after == whole_seconds(d.retry_after)


def test_a_client_ignores_malformed_ratelimit_fields():
    """-10 and -11, section 7: "Malformed RateLimit header fields MUST be ignored." The client
    then reads what else the server said (the parsers themselves still refuse them)."""
    r = Response(429, {"RateLimit-Policy": '"p";w=10', "RateLimit": '"p";t=3',
                       "Retry-After": "2", "X-RateLimit-Remaining": "5"})
    view = read(r)
    assert (view.policies, view.limits) == ((), ())
    assert (view.remaining, view.retry_after_s) == (5, 2.0)
    with pytest.raises(ValueError, match="'r' is required"):
        parse_ratelimit('"p";t=3')
