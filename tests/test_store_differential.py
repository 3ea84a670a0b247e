"""Random command sequences on SimStore and on a real redis-server must get the same replies
(error texts included). Only commands whose reply does not depend on wall-clock time."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ratelab.store import RedisStore, SimStore, StoreError

pytestmark = pytest.mark.service

KEYS = st.sampled_from(["a", "b", "h", "z"])
VALUES = st.sampled_from(["0", "1", "-1", "7", "01", "-0", "abc", "1.5", "", str(2**63 - 1)])
NUMS = st.sampled_from(["1", "-3", "0", "x", "2.5", str(2**63 - 1)])
SCORES = st.sampled_from(["1", "2", "0.5", "-inf", "+inf", "nan", "x", "3", "0x10", "1e400",
                          "-0"])
MEMBERS = st.sampled_from(["m", "n", "o"])
BOUNDS = st.sampled_from(["-inf", "+inf", "1", "(1", "2", "(2.5", "x"])

COMMAND = st.one_of(
    st.tuples(st.just("GET"), KEYS),
    st.tuples(st.just("SET"), KEYS, VALUES),
    st.tuples(st.just("SET"), KEYS, VALUES, st.sampled_from(["NX", "XX", "GET", "KEEPTTL"])),
    st.tuples(st.just("SET"), KEYS, VALUES, st.sampled_from(["EX", "PX"]),
              st.sampled_from(["100000", "0", "-1", "x"])),
    st.tuples(st.sampled_from(["INCR", "DECR", "TTL", "EXISTS", "DEL", "ZCARD"]), KEYS),
    st.tuples(st.sampled_from(["INCRBY", "DECRBY"]), KEYS, NUMS),
    st.tuples(st.just("EXPIRE"), KEYS, st.sampled_from(["1000", "0", "-5", "x"])),
    st.tuples(st.sampled_from(["EXPIRE", "PEXPIRE"]), KEYS, st.sampled_from(["1000", "2000", "-5"]),
              st.sampled_from(["NX", "XX", "GT", "LT", "xx", "NO"])),
    st.tuples(st.just("EVAL"), st.just("local ok, e = pcall(redis.call, 'INCR', KEYS[1])\n"
                                       "return {ok and 1 or 0, e}"), st.just("1"), KEYS),
    st.tuples(st.just("HSET"), KEYS, MEMBERS, VALUES),
    st.tuples(st.just("HGET"), KEYS, MEMBERS),
    st.tuples(st.just("HMGET"), KEYS, MEMBERS, MEMBERS),
    st.tuples(st.just("HINCRBY"), KEYS, MEMBERS, NUMS),
    st.tuples(st.just("ZADD"), KEYS, SCORES, MEMBERS),
    st.tuples(st.just("ZADD"), KEYS, st.sampled_from(["NX", "XX", "GT", "LT", "CH"]), SCORES,
              MEMBERS),
    st.tuples(st.just("ZREM"), KEYS, MEMBERS),
    st.tuples(st.just("ZREMRANGEBYSCORE"), KEYS, BOUNDS, BOUNDS),
    st.tuples(st.just("ZRANGE"), KEYS, st.sampled_from(["0", "-1", "1", "-2"]),
              st.sampled_from(["0", "-1", "1", "5"]), st.just("WITHSCORES")),
    st.tuples(st.just("ZRANGE"), KEYS, BOUNDS, BOUNDS, st.just("BYSCORE")),
    st.tuples(st.just("EVAL"), st.just("return redis.call('INCRBY', KEYS[1], ARGV[1])"),
              st.just("1"), KEYS, NUMS),
    st.tuples(st.just("EVAL"), st.just("return redis.pcall('HINCRBY', KEYS[1], 'f', 1)"),
              st.just("1"), KEYS),
    st.tuples(st.just("EVAL"), st.just("return {redis.call('GET', KEYS[1]), 2.9, -2.9}"),
              st.just("1"), KEYS),
    st.tuples(st.sampled_from(["HGETALL"]), KEYS),
    st.tuples(st.just("ZSCORE"), KEYS, MEMBERS),
    st.tuples(st.just("ZCOUNT"), KEYS, BOUNDS, BOUNDS),
    st.tuples(st.just("ZRANGE"), KEYS, BOUNDS, BOUNDS, st.just("BYSCORE"), st.just("REV"),
              st.just("LIMIT"), st.sampled_from(["0", "1", "-1"]),
              st.sampled_from(["1", "-1", "2"])),
    st.tuples(st.just("ZADD"), KEYS, st.just("INCR"), SCORES, MEMBERS),
    st.sampled_from([("MULTI",), ("EXEC",), ("DISCARD",), ("WATCH", "a"), ("UNWATCH",),
                     ("GET",), ("NOSUCH", "x")]),
)


def _plain(reply):
    """A reply with every error (EXEC's elements too) as ("error", text): exceptions compare
    by identity, so two equal error replies would otherwise never compare equal."""
    if isinstance(reply, StoreError):
        return ("error", str(reply))
    if isinstance(reply, list):
        return [_plain(r) for r in reply]
    return reply


def test_errors_inside_exec_replies_compare_by_text():
    commands = [("SET", "a", "abc"), ("MULTI",), ("INCR", "a"), ("EXEC",)]
    assert _run(SimStore(), commands) == _run(SimStore(), commands)


def _run(store, commands):
    conn = store.connect("t")
    out = []
    for cmd in commands:
        try:
            reply = conn.execute(*cmd)
        except StoreError as e:
            reply = ("error", str(e))
        out.append(_plain(reply))
    conn.close()
    return out


@pytest.fixture(scope="module")
def real(redis_url):
    s = RedisStore(redis_url)
    yield s
    s.close()


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commands=st.lists(COMMAND, min_size=1, max_size=25))
def test_random_sequences_reply_the_same_on_both_stores(real, commands):
    real.execute("FLUSHALL")
    assert _run(SimStore(), commands) == _run(real, commands)
