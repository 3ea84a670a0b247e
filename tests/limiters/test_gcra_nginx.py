"""GCRA (redis-cell's form) and the model of nginx's limit_req, on made-up timelines."""

import pytest

from ratelab.limiters import GCRA, NginxLimitReq, TokenBucket
from timeline import Step, run


def test_gcra_takes_burst_plus_one_then_one_per_period():
    run(GCRA(rate=2, burst=2), [
        Step(0.0, True, remaining=2, reset_after=0.5),
        Step(0.0, True, remaining=1),
        Step(0.0, True, remaining=0, reset_after=1.5),
        Step(0.0, False, retry_after=0.5, remaining=0),
        Step(0.4, False, retry_after=0.1),
        Step(0.5, True, remaining=0),
        Step(5.0, True, remaining=2),
    ])


def test_gcra_rejections_do_not_move_the_tat():
    g = GCRA(rate=1, burst=0)
    assert g.allow("k", 0.0).allowed
    for t in (0.1, 0.5, 0.9):
        assert not g.allow("k", t).allowed
    assert g.inspect("k", 0.9)["tat"] == pytest.approx(1.0)
    assert g.allow("k", 1.0).allowed


def test_nginx_delays_a_burst_by_excess_over_rate():
    run(NginxLimitReq(rate=2, burst=2), [
        Step(0.0, True, delay=0.0),            # a new node: excess 0
        Step(0.0, True, delay=0.5),            # excess 1000 -> 1000 * 1000 / 2000 ms
        Step(0.0, True, delay=1.0, remaining=0),
        Step(0.0, False, retry_after=0.5),     # excess would be 3000 > burst 2000
        Step(0.5, True, delay=1.0),            # 2000 - 1000 + 1000
    ])


def test_nginx_nodelay_and_delay_n():
    run(NginxLimitReq(rate=2, burst=2, nodelay=True), [
        Step(0.0, True, delay=0.0), Step(0.0, True, delay=0.0), Step(0.0, True, delay=0.0),
        Step(0.0, False),
    ])
    run(NginxLimitReq(rate=2, burst=2, delay=1), [
        Step(0.0, True, delay=0.0), Step(0.0, True, delay=0.0),  # excess 1000 <= delay 1000
        Step(0.0, True, delay=0.5),                               # (2000 - 1000) / 2 per ms
        Step(0.0, False),
    ])


def test_nginx_truncates_the_drain_below_one_request_per_second():
    """30 r/m is 500 thousandths per second: a 1-ms step drains 500 * 1 // 1000 = 0.

    So nginx with nodelay is a token bucket of capacity burst + 1 only approximately at
    rates below 1 r/s: eleven requests 1 ms apart lose the 5 ms of drain a bucket keeps.
    """
    nginx = NginxLimitReq(rate=0.5, burst=10, nodelay=True)
    bucket = TokenBucket(rate=0.5, capacity=11)
    assert nginx.rate_milli == 500
    for ms in range(11):
        assert nginx.allow("k", ms / 1000).allowed and bucket.allow("k", ms / 1000).allowed
    assert nginx.inspect("k", 0.010)["excess"] == 10.0       # nothing drained
    assert bucket.inspect("k", 0.010)["tokens"] == pytest.approx(0.005)
    assert bucket.allow("k", 2.005).allowed                  # the bucket has its token back
    assert not nginx.allow("k", 2.005).allowed               # nginx needs 2000 ms after the last
    assert nginx.allow("k", 2.010).allowed


def test_nginx_burst_zero_admits_one_per_period():
    run(NginxLimitReq(rate=1), [
        Step(0.0, True), Step(0.5, False, retry_after=0.5), Step(1.0, True), Step(1.2, False),
        Step(2.0, True),
    ])


def test_nginx_expires_idle_nodes_when_a_new_key_arrives():
    n = NginxLimitReq(rate=1, burst=0)
    n.allow("a", 0.0)
    n.allow("c", 30.0)
    n.allow("b", 61.0)  # new key: the LRU tail "a" has idled 61 s with nothing left -> deleted
    assert not n.inspect("a", 61.0)["known"]
    assert n.inspect("c", 61.0)["known"]  # idle only 31 s: kept (and the scan stops there)


def test_nginx_rejected_requests_leave_the_state_alone():
    n = NginxLimitReq(rate=1, burst=1)
    n.allow("k", 0.0)
    n.allow("k", 0.0)
    before = n.inspect("k", 0.2)
    assert not n.allow("k", 0.2).allowed
    assert n.inspect("k", 0.2) == before


@pytest.mark.parametrize("kwargs, word", [
    ({"rate": 1, "burst": 2, "nodelay": True, "delay": 1}, "exclusive"),
    ({"rate": 1, "burst": 1, "delay": 2}, "delay"),
    ({"rate": 0.0001}, "rate"),
    ({"rate": 1, "burst": 1.5}, "burst"),
])
def test_nginx_bad_parameters(kwargs, word):
    with pytest.raises(ValueError, match=word):
        NginxLimitReq(**kwargs)


@pytest.mark.parametrize("cost", [2, 0.5, 0.999])
def test_nginx_counts_requests_not_costs(cost):
    """nginx has no cost: a cost below 1 is not silently counted as one request."""
    n = NginxLimitReq(rate=1, burst=5)
    with pytest.raises(ValueError, match=rf"cost={float(cost)!r}"):
        n.allow("k", 0.0, cost=cost)
    with pytest.raises(ValueError, match="cost"):
        n.peek("k", 0.0, cost=cost)
    assert n.allow("k", 0.0, cost=1.0).allowed


@pytest.mark.parametrize("rate, burst", [(10, 19), (3, 5), (100, 99), (0.3, 7), (7, 0)])
def test_gcra_takes_exactly_burst_plus_one_at_any_rate(rate, burst):
    """Whole ticks keep a TAT exact: in float seconds 0.1 added 20 times is not 2.0."""
    g = GCRA(rate=rate, burst=burst)
    assert sum(g.allow("k", 100.0).allowed for _ in range(burst + 5)) == burst + 1


def test_gcra_counts_in_whole_microseconds_as_redis_cell_counts_nanoseconds():
    g = GCRA(rate=3, burst=0)
    assert g.period_ticks == 333_333  # 1e6 / 3, truncated
    assert g.allow("k", 0.0).allowed
    assert not g.allow("k", 0.333332).allowed
    assert not g.allow("k", 0.3333325).allowed  # half-way: to the even tick, 333,332
    assert g.allow("k", 0.333333).allowed


def test_nginx_reset_after_is_when_burst_plus_one_pass_again():
    """A node must drain its excess and 1000 more before burst + 1 pass at once again: a
    node drained only to 0 adds 1000 for the next request and so takes burst, not burst + 1."""
    run(NginxLimitReq(rate=2, burst=2), [
        Step(0.0, True, remaining=2, reset_after=0.5),   # a new node: excess 0, not full
        Step(0.0, True, remaining=1, reset_after=1.0),   # excess 1000
        Step(0.0, True, remaining=0, reset_after=1.5),   # excess 2000
        Step(1.0, True, remaining=1, reset_after=1.0),   # 2000 - 2000 + 1000
    ])
    n = NginxLimitReq(rate=2, burst=2)
    n.allow("k", 0.0)
    assert sum(n.allow("k", 0.499).allowed for _ in range(5)) == 2  # before reset_after
    n = NginxLimitReq(rate=2, burst=2)
    n.allow("k", 0.0)
    assert sum(n.allow("k", 0.5).allowed for _ in range(5)) == 3    # at reset_after


def test_nginx_retry_after_and_reset_after_hold_at_half_milliseconds():
    """1.7025 s reads as 1703 ms, and 1.7025 + 0.142 as 1844.4999... ms -> 1844, one short of
    the 1845 the node needs: the waits must hold for a client that adds them to its now."""
    n = NginxLimitReq(rate=7, burst=0)
    assert n.allow("k", 1.702).allowed
    d = n.allow("k", 1.7025)
    assert not d.allowed and d.retry_after == pytest.approx(0.142, abs=1e-6)
    assert n.peek("k", 1.7025 + d.retry_after).allowed
    for t0 in (1.0, 1.002, 1000.356):
        n = NginxLimitReq(rate=7, burst=1)
        n.allow("k", t0)
        later = t0 + 0.0005 + n.allow("k", t0 + 0.0005).reset_after
        assert [n.allow("k", later).allowed for _ in range(3)] == [True, True, False], t0


# ---------------------------------------------------------------- the lines that deploy it


def test_the_config_lines_are_the_limit_req_replayed():
    assert NginxLimitReq(rate=10, burst=20, nodelay=True).config() == (
        "# ratelab policy: nginx rate=10 burst=20 nodelay=true\n"
        "# in the http block:\n"
        "    limit_req_zone $binary_remote_addr zone=ratelab:10m rate=10r/s;\n"
        "    limit_req_status 429;\n"
        "# in the server or location block:\n"
        "    limit_req zone=ratelab burst=20 nodelay;")
    text = NginxLimitReq(rate=0.5, burst=4, delay=2).config("$http_x_api_key", zone="api")
    assert "limit_req_zone $http_x_api_key zone=api:10m rate=30r/m;" in text
    assert "limit_req zone=api burst=4 delay=2;" in text
    assert "limit_req zone=ratelab;" in NginxLimitReq(rate=3).config()


@pytest.mark.parametrize("rate, written", [(10, "10r/s"), (0.5, "30r/m"), (2.5, "150r/m"),
                                           (0.3333, "20r/m"), (100 / 60, "100r/m"),
                                           (1 / 60, "1r/m")])
def test_a_rate_is_written_as_nginx_reads_it_back(rate, written):
    """nginx keeps N r/m as N x 1000 // 60 thousandths per second: the written rate must come
    back as the model's own thousandths (0.3333/s is 333, as 20r/m is)."""
    lim = NginxLimitReq(rate=rate)
    assert f"rate={written};" in lim.config()
    n, unit = int(written[:-3]), written[-1]
    assert n * 1000 // (60 if unit == "m" else 1) == lim.rate_milli


@pytest.mark.parametrize("params, key, zone, name", [
    ({"rate": 0.123}, None, "ratelab", "rate=0.123"),   # 7r/m is 0.116/s, 8r/m 0.133/s
    ({"rate": 0.001}, None, "ratelab", "rate=0.001"),   # below 1r/m
    ({"rate": 1}, "binary_remote_addr", "ratelab", "key"),
    ({"rate": 1}, "$a b", "ratelab", "key"),
    ({"rate": 1}, None, "my zone", "zone"),
])
def test_what_nginx_cannot_write_is_an_error_naming_it(params, key, zone, name):
    with pytest.raises(ValueError, match=name):
        NginxLimitReq(**params).config(key, zone=zone)
