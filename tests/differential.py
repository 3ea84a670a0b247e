"""Seeded random command streams, run on two stores side by side, every reply compared.

SimStore's claim is that it answers as redis-server 7.0 does. :func:`command_stream` makes a
seeded stream over every command SimStore implements — good input and bad (wrong arity,
unknown commands, malformed numbers and score bounds in every syntax, options repeated and in
conflict, transactions spoiled while queued, scripts that use cjson, bit and RESP3) — from two
clients, in short episodes that each start with FLUSHALL. :func:`compare` runs it on two
stores, command by command, and returns every reply that differs (error texts included).

Replies that depend on the wall clock are kept out, or made exact: the stream never reads
TIME or PTTL bare (scripts read them and return what does not depend on the moment), every
relative expiry in an episode gets its own value a thousand seconds from the others (so
EXPIRE ... GT decides the same on a server whose clock moves between commands), and an
episode that sets an absolute future deadline (EXAT / PXAT) asks EXISTS instead of TTL and
runs no script that reads PTTL. For absolute deadlines to mean the same on both, the
SimStore's clock is set to the server's. A script whose reply is a raw PTTL (the project's
fixed_window.lua) cannot be compared exactly, and is left to the tests that hold each Lua
script to its reference.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

import numpy as np

from ratelab.store.errors import StoreError
from ratelab.store.protocol import Store

KEYS = ["a", "b", "h", "z"]
MEMBERS = ["m", "n", "o", "p", "mm"]
VALUES = ["0", "1", "-1", "7", "01", "-0", "abc", "1.5", "", " 1", "+1", str(2**63 - 1),
          str(-(2**63)), "9223372036854775808", "a/b\"c"]
INTS = ["1", "-3", "0", "x", "2.5", "10", str(2**63 - 1), str(-(2**63)), "", " 1", "01"]
SCORES = ["1", "2", "0.5", "-inf", "+inf", "inf", "nan", "x", "3", "0x10", "0x1p-2", "1e400",
          "1e-400", "4.9e-324", "-0", " 1", "1 ", "", "1e3", ".5", "5.", "-2.5", "INFINITY",
          "0x", "1e", "(1"]
BOUNDS = ["-inf", "+inf", "inf", "1", "(1", "2", "(2.5", "x", "0x1", "(0x2", " 2", "( 1", "",
          "(", "nan", "1e400", "(-inf", "(+inf", "0x1p1", "2 ", "3", "(3", "-1e400", "0.5"]
LEX = ["-", "+", "[m", "(m", "[n", "(o", "[p", "[", "(", "m", "[mm", "(z"]
RANKS = ["0", "-1", "1", "-2", "5", "-10", "x", "2"]
OFFSETS = ["0", "1", "-1", "2", "5", "x"]
COUNTS = ["1", "-1", "2", "0", "-5", "x"]
NUMKEYS = ["0", "1", "2", "-1", "5", "x", "1.0", "01"]

# Scripts a rate limiter might run, and scripts that go wrong: each ARGV / KEYS drawn at random.
SCRIPTS = [
    # fixed window: INCR, first hit sets the expiry
    "local n = redis.call('INCR', KEYS[1])\n"
    "if n == 1 then redis.call('EXPIRE', KEYS[1], 1500) end\n"
    "return {n, n <= tonumber(ARGV[1] or '3') and 1 or 0}",
    # token bucket in a hash, floats through tostring
    "local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\n"
    "local cap, rate, now = tonumber(ARGV[1]) or 5, 0.5, tonumber(ARGV[2]) or 1\n"
    "local tokens = tonumber(b[1]) or cap\n"
    "local ts = tonumber(b[2]) or now\n"
    "tokens = math.min(cap, tokens + math.max(0, now - ts) * rate)\n"
    "local ok = tokens >= 1\n"
    "if ok then tokens = tokens - 1 end\n"
    "redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)\n"
    "return {ok and 1 or 0, tostring(tokens), redis.call('HGETALL', KEYS[1])}",
    # sliding log on a sorted set
    "local now = tonumber(ARGV[2]) or 10\n"
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - 5))\n"
    "local n = redis.call('ZCARD', KEYS[1])\n"
    "if n < (tonumber(ARGV[1]) or 3) then redis.call('ZADD', KEYS[1], now, ARGV[3] or 'm') end\n"
    "return {n, redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')}",
    # state kept as JSON
    "local raw = redis.call('GET', KEYS[1])\n"
    "local state = raw and cjson.decode(raw) or {count = 0, hits = {}}\n"
    "state.count = state.count + 1\n"
    "table.insert(state.hits, tonumber(ARGV[1]) or ARGV[1] or false)\n"
    "local text = cjson.encode(state)\n"
    "redis.call('SET', KEYS[1], text)\n"
    "return text",
    "return cjson.encode({ARGV[1], tonumber(ARGV[2]), {nested = {true, false}, [3] = 'x'}})",
    "return cjson.encode(cjson.decode(ARGV[1]))",
    "local ok, v = pcall(cjson.decode, ARGV[1])\nif ok then return type(v) end\nreturn v",
    "local t = {}\nt[tonumber(ARGV[1]) or 20] = 1\nreturn cjson.encode(t)",
    "return cjson.encode({[ARGV[1]] = ARGV[2], n = tonumber(ARGV[2]), list = {1, 2.5, -0, 1e20}})",
    "return cjson.encode(tonumber(ARGV[1]))",
    "return {type(cjson.null), cjson.encode({cjson.null, 1}), tostring(cjson.decode('null') == "
    "cjson.null)}",
    # bit operations on argument numbers
    "local a, b = tonumber(ARGV[1]) or 0, tonumber(ARGV[2]) or 0\n"
    "return {bit.band(a, b), bit.bor(a, b), bit.bxor(a, b), bit.lshift(a, b), "
    "bit.rshift(a, b), bit.arshift(a, b), bit.rol(a, b), bit.ror(a, b), bit.bnot(a), "
    "bit.tobit(a), bit.bswap(a), bit.tohex(a), bit.tohex(a, b)}",
    "return bit.band(ARGV[1], ARGV[2])",
    "return bit.tohex(tonumber(ARGV[1]) or ARGV[1], -4)",
    # RESP3 replies inside the script, RESP2 back to the client
    "redis.setresp(3)\n"
    "redis.call('HSET', KEYS[1], 'f', ARGV[1] or 'v', 'g', 'w')\n"
    "local h = redis.call('HGETALL', KEYS[1])\n"
    "return {h.map.f, h.map.g, h}",
    "redis.setresp(3)\n"
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[1] or 'm')\n"
    "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
    "local g = redis.call('GET', 'nokey')\n"
    "return {type(s), s == nil and 'nil' or s.double, #r, r, tostring(g)}",
    "redis.setresp(tonumber(ARGV[1]) or ARGV[1])\nreturn {redis.call('HMGET', KEYS[1], 'f', 'x')}",
    "redis.setresp(3)\nreturn {false, true, nil, 1}",
    "return {false, true, 2.9, -2.9, 'x', {double = 1.5}, {map = {a = 1}}, {set = {b = true}}}",
    "return {big_number = ARGV[1] or '123'}",
    "return {ok = ARGV[1] or 'fine'}",
    "return {err = ARGV[1] or 'MY error'}",
    # the redis table
    "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM, redis.replicate_commands(), "
    "redis.breakpoint()}",
    "redis.set_repl(tonumber(ARGV[1]) or 3)\nreturn redis.REPL_ALL",
    "return redis.sha1hex(ARGV[1] or '')",
    "return redis.status_reply(ARGV[1] or 'OK')",
    "return redis.error_reply(ARGV[1] or 'oops')",
    "redis.log(redis.LOG_WARNING, 'rate limited', ARGV[1])\nreturn 1",
    # errors: from commands, handled and not, and from the script itself
    "local ok, e = pcall(redis.call, 'INCR', KEYS[1])\nreturn {ok and 1 or 0, e}",
    "return redis.pcall('HINCRBY', KEYS[1], 'f', ARGV[1] or 1)",
    "return redis.call('INCRBY', KEYS[1], ARGV[1])",
    "return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])",
    "return redis.call('SET', KEYS[1], ARGV[1], ARGV[2], ARGV[3])",
    "return redis.call(ARGV[1])",
    "return redis.call()",
    "return redis.call('EXEC')",
    "return redis.call('GET')",
    "local x = {}\nreturn x.y.z",
    "error('boom')",
    "error({err = 'CUSTOM failure'})",
    "return nope",
    "x = 1",
    "return {redis.call('GET', KEYS[1]), 2.9, -2.9}",
    # what only the clock would change: read, but return what the moment does not decide
    "local t = redis.call('TIME')\nreturn {#t, type(t[1]), tonumber(t[2]) < 1000000 and 1 or 0}",
    "local p = redis.call('PTTL', KEYS[1])\n"
    "if p < 0 then return p end\nreturn math.floor((p + 500) / 1000)",
    "local x = redis.call('PING')\nreturn {x, redis.call('PING', ARGV[1] or 'hi')}",
    "return {redis.call('EXISTS', KEYS[1]), redis.call('DEL', KEYS[1])}",
    "return redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', '-inf', 'LIMIT', 0, 2)",
    "return redis.call('ZRANGE', KEYS[1], '[m', '+', 'BYLEX')",
    "return redis.call('SCRIPT', 'LOAD', 'return 1')",
    "return 'not closed",
    "return _G.KEYS[1]",
    "return loadstring('return ARGV[1]')()",
    "return xpcall(function() error('x') end, function(e) return 'handled: ' .. e end)",
]
JSON_TEXTS = ['{"a":1,"b":[1,2,{"c":null}]}', "[1,2,3]", '"text"', "true", "false", "null",
              "{}", "[]", '{"k": 1.5e300, "s": "a\\/b"}', "1e400", "-0", "12345678901234567890",
              '{"a":1,"a":2}', '"\\u00e9\\ud83d\\ude00"', "  [ 1 ] ", "[[[[1]]]]",
              '{"1": 2, "x": {"y": [true, false]}}', "3.5", '"line\\nbreak"', "", "   ",
              '{"z": 0, "y": 1, "x": 2, "w": 3, "v": 4, "u": 5, "t": 6, "s": 7, "r": 8}',
              "[1, null, 3]", "-1.5e-300", '{"nested": {"deeper": {"deepest": []}}}',
              "01", "+1", "0x10", "1.", "inf", "-nan", '[01, 0x1p3, "01", -Infinity]']
"""Text for scripts that decode JSON: JSON, numbers cjson reads and JSON does not, and the
empty text (cjson.decode's refusals of other text are worded differently; see lualib)."""
SCRIPT_ARGS = ["1", "2", "3", "-1", "0", "2.5", "31", "32", "-8", "x", "m", "", "12", "0x10",
               "4294967296", "1e20", '{"a":1,"b":[1,2,{"c":null}]}', "[1,2,3]", '"text"',
               "true", "null", "{}", "[]", '{"k": 1.5e300, "s": "a\\/b"}', "-MY code",
               "line\nbreak", "3.5", "2147483648"]

COMMANDS_COVERED = [
    "GET", "SET", "INCR", "DECR", "INCRBY", "DECRBY", "DEL", "EXISTS", "EXPIRE", "PEXPIRE",
    "TTL", "PTTL", "PING", "TIME", "FLUSHALL", "HGET", "HMGET", "HGETALL", "HSET", "HINCRBY",
    "ZADD", "ZREM", "ZREMRANGEBYSCORE", "ZCARD", "ZCOUNT", "ZSCORE", "ZRANGE", "ZREVRANGE",
    "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "WATCH", "UNWATCH", "MULTI", "EXEC", "DISCARD",
    "EVAL", "EVALSHA", "SCRIPT",
]
"""Every command the stream sends (TIME and PTTL from inside scripts); a test holds this list
to SimStore's table of commands."""


class _Episode:
    """What the generator keeps about the episode it is writing (to keep clocks out)."""

    def __init__(self) -> None:
        self.expiry = 0             # relative expiries given so far: each gets its own value
        self.absolute = False       # an absolute future deadline was set: no TTL from now on

    def seconds(self) -> str:
        self.expiry += 1
        return str(1000 * self.expiry)

    def milliseconds(self) -> str:
        self.expiry += 1
        return str(1_000_000 * self.expiry)


def command_stream(seed: int, n: int, *, scripts: list[str] | None = None,
                   episode_max: int = 30) -> Iterator[tuple[int, tuple]]:
    """`n` commands as (client, command) pairs, client 0 or 1, from `seed`.

    Episodes of 1 to `episode_max` commands, each opened by DISCARD from both clients (a
    MULTI left open ends, or each hears "DISCARD without MULTI") and FLUSHALL, all compared
    and counted in `n`: no key, and no clock, carries over from one episode to the next.
    `scripts` are the Lua sources EVAL draws from (default :data:`SCRIPTS`)."""
    rng = np.random.default_rng(seed)
    scripts = SCRIPTS if scripts is None else scripts
    sent = 0
    shas = [_sha(s) for s in scripts[:8]]
    while sent < n:
        for opening in ((0, ("DISCARD",)), (1, ("DISCARD",)), (0, ("FLUSHALL",))):
            if sent >= n:
                return
            yield opening
            sent += 1
        ep = _Episode()
        for _ in range(int(rng.integers(1, episode_max + 1))):
            if sent >= n:
                return
            yield int(rng.integers(0, 2)), _command(rng, ep, scripts, shas)
            sent += 1


def _pick(rng: np.random.Generator, items: list) -> Any:
    return items[int(rng.integers(0, len(items)))]


def _sha(source: str) -> str:
    import hashlib

    return hashlib.sha1(source.encode()).hexdigest()


def _expiry_value(rng, ep: _Episode, unit: str) -> str:
    """A relative expiry: mostly one no other command in the episode uses; sometimes one that
    deletes at once, or that is refused (not a number, out of range)."""
    r = rng.random()
    if r < 0.7:
        return ep.seconds() if unit == "s" else ep.milliseconds()
    return _pick(rng, ["0", "-5", "x", "1.5", "", str(2**63 - 1), "9223372036854775",
                       str(-(2**63))])


def _set_command(rng, ep: _Episode) -> tuple:
    opts: list[str] = []
    for _ in range(int(rng.integers(0, 4))):
        o = _pick(rng, ["NX", "XX", "GET", "KEEPTTL", "EX", "PX", "EXAT", "PXAT", "nx", "px",
                        "PERSIST", "FOO", "EX"])
        opts.append(o)
        u = o.upper()
        if u in ("EX", "PX") and rng.random() < 0.9:
            opts.append(_expiry_value(rng, ep, "s" if u == "EX" else "ms"))
        elif u in ("EXAT", "PXAT") and rng.random() < 0.9:
            value = _pick(rng, ["1", "99999999999", "0", "-1", "x", "9223372036854776"])
            if u == "PXAT" and value == "99999999999":
                value = "99999999999000"
            if value.startswith("9"):  # a deadline in the future (or refused): no TTL
                ep.absolute = True
            opts.append(value)
    return ("SET", _pick(rng, KEYS), _pick(rng, VALUES), *opts)


def _zrange_command(rng) -> tuple:
    name = _pick(rng, ["ZRANGE", "ZRANGE", "ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE",
                       "ZREVRANGEBYSCORE"])
    by = None
    if name == "ZRANGE":
        by = _pick(rng, [None, "BYSCORE", "BYSCORE", "BYLEX"])
    elif name.endswith("BYSCORE"):
        by = "BYSCORE"
    pool = BOUNDS if by == "BYSCORE" else LEX if by == "BYLEX" else RANKS
    cmd = [name, _pick(rng, KEYS), _pick(rng, pool), _pick(rng, pool)]
    for _ in range(int(rng.integers(0, 4))):
        o = _pick(rng, ["WITHSCORES", "LIMIT", "LIMIT", "REV", "BYSCORE", "BYLEX", "rev",
                        "FOO", "withscores"])
        cmd.append(o)
        if o == "LIMIT" and rng.random() < 0.9:
            cmd += [_pick(rng, OFFSETS), _pick(rng, COUNTS)]
    if name == "ZRANGE" and by is not None and by not in [c.upper() for c in cmd[4:]]:
        cmd.insert(4, by)
    return tuple(cmd)


def _eval_command(rng, ep: _Episode, scripts: list[str], shas: list[str]) -> tuple:
    evalsha = rng.random() < 0.25
    source = scripts[shas.index(_pick(rng, shas))] if evalsha and rng.random() < 0.7 else \
        _pick(rng, scripts)
    if ep.absolute and "PTTL" in source:  # the time left to a far deadline: the clock's say
        source = _pick(rng, [s for s in scripts if "PTTL" not in s])
    numkeys = _pick(rng, ["1", "1", "1", "2", "0"]) if rng.random() < 0.85 else \
        _pick(rng, NUMKEYS)
    keys = [_pick(rng, KEYS) for _ in range(int(rng.integers(0, 3)))]
    if numkeys.lstrip("-").isdigit() and numkeys != "01":
        keys = [_pick(rng, KEYS) for _ in range(max(0, min(int(numkeys), 2)))]
    args = [_pick(rng, SCRIPT_ARGS) for _ in range(int(rng.integers(0, 4)))]
    if "cjson.decode" in source and "ARGV[1]" in source:
        args = [_pick(rng, JSON_TEXTS)] + args[1:]
    if evalsha:
        sha = _pick(rng, [_sha(source)] * 3 + ["0" * 40, "abc", "F" * 40])
        return ("EVALSHA", sha, numkeys, *keys, *args)
    return ("EVAL", source, numkeys, *keys, *args)


def _command(rng, ep: _Episode, scripts: list[str], shas: list[str]) -> tuple:
    """One command, drawn with weights that favour what rate limiters send."""
    key, member = _pick(rng, KEYS), _pick(rng, MEMBERS)
    kind = _pick(rng, [
        "get", "set", "set", "set", "incr", "incrby", "del", "exists", "expire", "ttl",
        "hset", "hget", "hmget", "hgetall", "hincrby", "zadd", "zadd", "zrem", "zremrange",
        "zcard", "zcount", "zscore", "zrange", "zrange", "zrange", "multi", "exec", "discard",
        "watch", "unwatch", "eval", "eval", "eval", "eval", "script", "ping", "flushall",
        "unknown", "arity"])
    if kind == "get":
        return ("GET", key)
    if kind == "set":
        return _set_command(rng, ep)
    if kind == "incr":
        return (_pick(rng, ["INCR", "DECR"]), key)
    if kind == "incrby":
        return (_pick(rng, ["INCRBY", "DECRBY"]), key, _pick(rng, INTS))
    if kind == "del":
        return ("DEL", *[_pick(rng, KEYS) for _ in range(int(rng.integers(1, 4)))])
    if kind == "exists":
        return ("EXISTS", *[_pick(rng, KEYS) for _ in range(int(rng.integers(1, 4)))])
    if kind == "expire":
        name = _pick(rng, ["EXPIRE", "PEXPIRE"])
        flags = [_pick(rng, ["NX", "XX", "GT", "LT", "xx", "NO"])
                 for _ in range(int(rng.integers(0, 3)))]
        return (name, key, _expiry_value(rng, ep, "s" if name == "EXPIRE" else "ms"), *flags)
    if kind == "ttl":
        return ("EXISTS", key) if ep.absolute else ("TTL", key)
    if kind == "hset":
        fields = []
        for _ in range(int(rng.integers(1, 4))):
            fields += [_pick(rng, MEMBERS), _pick(rng, VALUES)]
        if rng.random() < 0.1:
            fields.pop()
        return ("HSET", key, *fields)
    if kind == "hget":
        return ("HGET", key, member)
    if kind == "hmget":
        return ("HMGET", key, *[_pick(rng, MEMBERS) for _ in range(int(rng.integers(1, 4)))])
    if kind == "hgetall":
        return ("HGETALL", key)
    if kind == "hincrby":
        return ("HINCRBY", key, member, _pick(rng, INTS))
    if kind == "zadd":
        flags = [_pick(rng, ["NX", "XX", "GT", "LT", "CH", "INCR"])
                 for _ in range(int(rng.integers(0, 3)) if rng.random() < 0.4 else 0)]
        pairs = []
        for _ in range(int(rng.integers(1, 4))):
            pairs += [_pick(rng, SCORES), _pick(rng, MEMBERS)]
        if rng.random() < 0.08:
            pairs.pop()
        return ("ZADD", key, *flags, *pairs)
    if kind == "zrem":
        return ("ZREM", key, *[_pick(rng, MEMBERS) for _ in range(int(rng.integers(1, 3)))])
    if kind == "zremrange":
        return ("ZREMRANGEBYSCORE", key, _pick(rng, BOUNDS), _pick(rng, BOUNDS))
    if kind == "zcard":
        return ("ZCARD", key)
    if kind == "zcount":
        return ("ZCOUNT", key, _pick(rng, BOUNDS), _pick(rng, BOUNDS))
    if kind == "zscore":
        return ("ZSCORE", key, member)
    if kind == "zrange":
        return _zrange_command(rng)
    if kind in ("multi", "exec", "discard", "unwatch"):
        return (kind.upper(),) if rng.random() < 0.9 else (kind.upper(), "x")
    if kind == "watch":
        return ("WATCH", *[_pick(rng, KEYS) for _ in range(int(rng.integers(1, 3)))])
    if kind == "eval":
        return _eval_command(rng, ep, scripts, shas)
    if kind == "script":
        return _pick(rng, [
            ("SCRIPT", "LOAD", _pick(rng, scripts)), ("SCRIPT", "EXISTS", *shas[:3], "0" * 40),
            ("SCRIPT", "FLUSH"), ("SCRIPT", "FLUSH", "ASYNC"), ("SCRIPT", "FLUSH", "NOW"),
            ("SCRIPT", "KILL"), ("SCRIPT", "LOAD"), ("SCRIPT", "NOPE", "x"), ("SCRIPT",),
            ("script", "load", "return 'not closed"), ("SCRIPT", "EXISTS")])
    if kind == "ping":
        return _pick(rng, [("PING",), ("PING", "hello"), ("PING", "a", "b")])
    if kind == "flushall":
        return _pick(rng, [("FLUSHALL", "SYNC"), ("FLUSHALL", "ASYNC"), ("FLUSHALL", "NOW"),
                           ("FLUSHALL", "SYNC", "ASYNC")])
    if kind == "unknown":
        return _pick(rng, [("NOSUCH", "x"), ("nosuch",), ("GETT", key, "a\r\nb"),
                           ("X" * 140, "y" * 140, "z"), ("NOSUCH", "a" * 100, "b" * 100)])
    return _pick(rng, [("GET",), ("SET", key), ("INCR",), ("HSET", key, "f"), ("ZADD", key, "1"),
                       ("EXPIRE", key), ("ZRANGE", key, "0"), ("EVAL", "return 1"),
                       ("ZCOUNT", key, "1"), ("HGETALL",), ("TTL",), ("DEL",), ("WATCH",),
                       ("GET", key, key), ("ZSCORE", key)])


def plain(reply: Any) -> Any:
    """A reply with every error (EXEC's elements too) as ("error", text), comparable by
    value."""
    if isinstance(reply, StoreError):
        return ("error", str(reply))
    if isinstance(reply, list):
        return [plain(r) for r in reply]
    return reply


def _send(conn, command: tuple) -> Any:
    try:
        return plain(conn.execute(*command))
    except StoreError as e:
        return ("error", str(e))


def compare(stream, a: Store, b: Store, *, keep: int = 20) -> dict:
    """Run `stream` ((client, command) pairs) on stores `a` and `b`, each client on its own
    connection, and compare every reply.

    Returns a record: ``commands`` sent, ``differences`` (how many replies differed), the
    first `keep` of them (``examples``: index, client, command, both replies) and
    ``commands_by_name`` (how often each command was sent)."""
    conns = [(a.connect("c0"), b.connect("c0")), (a.connect("c1"), b.connect("c1"))]
    sent, differences, examples = 0, 0, []
    names: Counter = Counter()
    for client, command in stream:
        ra, rb = (_send(conn, command) for conn in conns[client])
        sent += 1
        names[command[0].upper()] += 1
        if ra != rb:
            differences += 1
            if len(examples) < keep:
                examples.append({"index": sent - 1, "client": client, "command": command,
                                 "a": ra, "b": rb})
    for pair in conns:
        for conn in pair:
            conn.close()
    return {"commands": sent, "differences": differences, "examples": examples,
            "commands_by_name": dict(sorted(names.items()))}
