"""SimStore against a real redis-server: the same commands, the same replies (error texts
included).

A seeded stream over every command SimStore implements (tests/differential.py; the large
run is ``scripts/store_differential.py``), a check that the comparison catches a store that
answers wrong, and a hypothesis search over short sequences."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from budget import examples

from ratelab.cluster.strategies import script
from ratelab.store import RedisStore, SimStore, StoreError
from differential import COMMANDS_COVERED, SCRIPTS, command_stream, compare, plain
from ratelab.store.sim import COMMANDS

pytestmark = pytest.mark.service

# The project's own scripts join the stream's pool; fixed_window.lua returns a raw PTTL, which
# a server's moving clock decides, so it is held to its reference elsewhere instead.
PROJECT_SCRIPTS = [script(n) for n in ("sliding_window", "sliding_log", "token_bucket")]


@pytest.fixture(scope="module")
def real(redis_url):
    s = RedisStore(redis_url)
    yield s
    s.close()


def _sim_on_server_time(real) -> SimStore:
    """A SimStore whose clock reads the server's, so absolute deadlines mean the same."""
    seconds, micros = real.execute("TIME")
    sim = SimStore()
    sim.set_time(int(seconds) + int(micros) / 1e6)
    return sim


def test_the_stream_sends_every_command_simstore_implements():
    assert set(COMMANDS_COVERED) == set(COMMANDS)
    sent = {cmd[0].upper() for _, cmd in command_stream(3, 4000)}
    inside_scripts = {"TIME", "PTTL"}   # read by scripts only: their replies follow the clock
    assert set(COMMANDS) - inside_scripts <= sent
    assert all(f"'{name}'" in " ".join(SCRIPTS) for name in inside_scripts)


def test_the_stream_is_seeded():
    assert list(command_stream(5, 300)) == list(command_stream(5, 300))
    assert list(command_stream(5, 300)) != list(command_stream(6, 300))


def test_a_seeded_stream_of_4000_commands_replies_the_same_on_both_stores(real):
    real.execute("SCRIPT", "FLUSH")
    record = compare(command_stream(20261201, 4000, scripts=SCRIPTS + PROJECT_SCRIPTS),
                     _sim_on_server_time(real), real)
    assert record["commands"] == 4000
    assert record["differences"] == 0, record["examples"]


def _old_hset(store, conn, key, *pairs):
    """HSET counting a new field given twice in one command twice (SimStore's old mistake)."""
    h = store._get(key, dict) or {}
    added = sum(1 for f in pairs[::2] if f not in h)
    SimStore.cmd_hset(store, conn, key, *pairs)
    return added


def test_the_comparison_finds_a_store_that_answers_wrong(real, monkeypatch):
    monkeypatch.setitem(COMMANDS, "HSET", (_old_hset, -4))
    real.execute("SCRIPT", "FLUSH")
    record = compare(command_stream(20261201, 2000), _sim_on_server_time(real), real)
    assert record["differences"] > 0
    assert all(e["command"][0] in ("HSET", "EXEC", "EVAL", "EVALSHA")
               for e in record["examples"])


KEYS = st.sampled_from(["a", "b", "h", "z"])
VALUES = st.sampled_from(["0", "1", "-1", "7", "01", "-0", "abc", "1.5", "", str(2**63 - 1)])
NUMS = st.sampled_from(["1", "-3", "0", "x", "2.5", str(2**63 - 1)])
SCORES = st.sampled_from(["1", "2", "0.5", "-inf", "+inf", "nan", "x", "3", "0x10", "1e400",
                          "-0", " 1", ""])
MEMBERS = st.sampled_from(["m", "n", "o"])
BOUNDS = st.sampled_from(["-inf", "+inf", "1", "(1", "2", "(2.5", "x", "0x1", " 2", "(", ""])

COMMAND = st.one_of(
    st.tuples(st.just("GET"), KEYS),
    st.tuples(st.just("SET"), KEYS, VALUES),
    st.tuples(st.just("SET"), KEYS, VALUES, st.sampled_from(["NX", "XX", "GET", "KEEPTTL"]),
              st.sampled_from(["NX", "XX", "GET", "KEEPTTL", "EX"])),
    st.tuples(st.sampled_from(["INCR", "DECR", "EXISTS", "DEL", "ZCARD"]), KEYS),
    st.tuples(st.sampled_from(["INCRBY", "DECRBY"]), KEYS, NUMS),
    st.tuples(st.just("HSET"), KEYS, MEMBERS, VALUES, MEMBERS, VALUES),
    st.tuples(st.just("HGETALL"), KEYS),
    st.tuples(st.just("HINCRBY"), KEYS, MEMBERS, NUMS),
    st.tuples(st.just("ZADD"), KEYS, SCORES, MEMBERS),
    st.tuples(st.just("ZADD"), KEYS, st.sampled_from(["NX", "XX", "GT", "LT", "CH", "INCR"]),
              SCORES, MEMBERS),
    st.tuples(st.just("ZCOUNT"), KEYS, BOUNDS, BOUNDS),
    st.tuples(st.just("ZRANGE"), KEYS, BOUNDS, BOUNDS, st.just("BYSCORE"),
              st.just("LIMIT"), st.sampled_from(["0", "1", "-1"]),
              st.sampled_from(["1", "-1", "2"])),
    st.tuples(st.just("EVAL"), st.just("local ok, e = pcall(redis.call, 'INCR', KEYS[1])\n"
                                       "return {ok and 1 or 0, e}"),
              st.sampled_from(["1", "2", "-1", "x"]), KEYS),
    st.sampled_from([("MULTI",), ("EXEC",), ("DISCARD",), ("WATCH", "a"), ("UNWATCH",),
                     ("GET",), ("NOSUCH", "x"), ("SCRIPT", "LOAD")]),
)


def _run(store, commands):
    conn = store.connect("t")
    out = []
    for cmd in commands:
        try:
            out.append(plain(conn.execute(*cmd)))
        except StoreError as e:
            out.append(("error", str(e)))
    conn.close()
    return out


@examples(150,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commands=st.lists(COMMAND, min_size=1, max_size=25))
def test_random_sequences_reply_the_same_on_both_stores(real, commands):
    real.execute("FLUSHALL")
    assert _run(SimStore(), commands) == _run(real, commands)


def _script_main():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "store_differential.py"
    spec = importlib.util.spec_from_file_location("store_differential_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_the_script_exits_1_on_a_difference_and_0_without(redis_url, monkeypatch, capsys):
    main = _script_main()
    assert main(["--url", redis_url, "--commands", "1500", "--seed", "3"]) == 0
    assert "differences:   0" in capsys.readouterr().out
    monkeypatch.setitem(COMMANDS, "HSET", (_old_hset, -4))
    assert main(["--url", redis_url, "--commands", "1500", "--seed", "3", "--show", "1"]) == 1
    out = capsys.readouterr().out
    assert "commands sent: 1500" in out and "differences:   0" not in out
