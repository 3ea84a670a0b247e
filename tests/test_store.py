"""SimStore's Redis semantics: one table of command/reply steps, run on SimStore and on a real
redis-server, so the two must agree (error texts included); then what only virtual time can
test (expiry), Lua atomicity and WATCH."""

from __future__ import annotations

import pytest

from ratelab.store import RedisStore, SimStore, StoreError, StoreUnavailable, open_store


class Err:
    """An expected error reply: the text must start with `prefix`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"Err({self.prefix!r})"


INT = "ERR value is not an integer or out of range"
WRONG = "WRONGTYPE Operation against a key holding the wrong kind of value"

# (name, [(command, expected reply), ...]); every case starts from an empty keyspace.
CASES = [
    ("set and get", [
        (("SET", "k", "v"), "OK"), (("GET", "k"), "v"), (("GET", "nope"), None),
        (("SET", "k", "w", "NX"), None), (("GET", "k"), "v"),
        (("SET", "k", "w", "XX"), "OK"), (("GET", "k"), "w"),
        (("SET", "other", "x", "XX"), None), (("EXISTS", "other"), 0),
        (("SET", "k", "v", "NX", "XX"), Err("ERR syntax error")),
        (("SET", "k", "v", "EX", "0"), Err("ERR invalid expire time in 'set' command")),
        (("SET", "k", "v", "EX", "x"), Err(INT)),
        (("SET", "k", "v", "FOO"), Err("ERR syntax error")),
        (("SET", "k", "old", "GET"), "w"),
        (("GET",), Err("ERR wrong number of arguments for 'get' command")),
    ]),
    ("counters", [
        (("INCR", "n"), 1), (("INCR", "n"), 2), (("INCRBY", "n", 10), 12), (("DECR", "n"), 11),
        (("DECRBY", "n", "20"), -9), (("GET", "n"), "-9"),
        (("SET", "s", "abc"), "OK"), (("INCR", "s"), Err(INT)),
        (("SET", "s", "01"), "OK"), (("INCR", "s"), Err(INT)),
        (("SET", "s", " 1"), "OK"), (("INCR", "s"), Err(INT)),
        (("INCRBY", "n", "1.5"), Err(INT)),
        (("SET", "big", str(2**63 - 1)), "OK"),
        (("INCR", "big"), Err("ERR increment or decrement would overflow")),
        (("GET", "big"), str(2**63 - 1)),
    ]),
    ("types", [
        (("HSET", "h", "a", "1"), 1), (("GET", "h"), Err(WRONG)), (("INCR", "h"), Err(WRONG)),
        (("SET", "s", "x"), "OK"), (("HGET", "s", "a"), Err(WRONG)),
        (("ZADD", "s", 1, "m"), Err(WRONG)), (("ZCARD", "s"), Err(WRONG)),
    ]),
    ("keys and ttl", [
        (("SET", "a", "1"), "OK"), (("SET", "b", "2"), "OK"),
        (("EXISTS", "a", "b", "c", "a"), 3), (("DEL", "a", "c"), 1), (("EXISTS", "a"), 0),
        (("TTL", "b"), -1), (("TTL", "missing"), -2), (("PTTL", "missing"), -2),
        (("EXPIRE", "b", 100), 1), (("TTL", "b"), 100), (("EXPIRE", "missing", 5), 0),
        (("EXPIRE", "b", "x"), Err(INT)),
        (("SET", "b", "3"), "OK"), (("TTL", "b"), -1),      # SET clears the TTL
        (("SET", "b", "4", "EX", 50), "OK"), (("TTL", "b"), 50),
        (("SET", "b", "5", "KEEPTTL"), "OK"), (("TTL", "b"), 50),
        (("INCR", "c"), 1), (("EXPIRE", "c", 20), 1), (("INCR", "c"), 2), (("TTL", "c"), 20),
        (("PEXPIRE", "c", 0), 1), (("EXISTS", "c"), 0),
    ]),
    ("hashes", [
        (("HSET", "h", "a", "1", "b", "2"), 2), (("HSET", "h", "a", "3", "c", "4"), 1),
        (("HGET", "h", "a"), "3"), (("HGET", "h", "zz"), None), (("HGET", "nope", "a"), None),
        (("HMGET", "h", "a", "x", "c"), ["3", None, "4"]),
        (("HINCRBY", "h", "a", 5), 8), (("HINCRBY", "h", "new", -2), -2),
        (("HINCRBY", "h", "a", "x"), Err(INT)),
        (("HSET", "h", "s", "abc"), 1),
        (("HINCRBY", "h", "s", 1), Err("ERR hash value is not an integer")),
        (("HSET", "h", "a"), Err("ERR wrong number of arguments for 'hset' command")),
    ]),
    ("sorted sets", [
        (("ZADD", "z", 1, "a", 2, "b", 0.1, "c"), 3), (("ZADD", "z", 5, "a"), 0),
        (("ZADD", "z", "CH", 6, "a", 7, "d"), 2), (("ZCARD", "z"), 4),
        (("ZRANGE", "z", 0, -1), ["c", "b", "a", "d"]),
        (("ZRANGE", "z", 0, 1, "WITHSCORES"), ["c", "0.10000000000000001", "b", "2"]),
        (("ZRANGE", "z", "(2", "+inf", "BYSCORE"), ["a", "d"]),
        (("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 0, 2), ["d", "a"]),
        (("ZRANGE", "z", -2, -1, "REV"), ["b", "c"]),
        (("ZRANGE", "z", 0, 1, "LIMIT", 0, 1), Err("ERR syntax error, LIMIT is only supported")),
        (("ZADD", "z", "NX", 100, "a"), 0), (("ZADD", "z", "XX", 100, "zz"), 0),
        (("ZADD", "z", "GT", 1, "a"), 0), (("ZRANGE", "z", -1, -1, "WITHSCORES"), ["d", "7"]),
        (("ZADD", "z", "NX", "XX", 1, "a"), Err("ERR XX and NX options at the same time")),
        (("ZADD", "z", "x", "a"), Err("ERR value is not a valid float")),
        (("ZREMRANGEBYSCORE", "z", "-inf", "(2"), 1), (("ZREM", "z", "b", "nope"), 1),
        (("ZREMRANGEBYSCORE", "z", "a", "b"), Err("ERR min or max is not a float")),
        (("ZCARD", "z"), 2), (("ZREMRANGEBYSCORE", "z", "-inf", "+inf"), 2),
        (("EXISTS", "z"), 0), (("ZCARD", "z"), 0), (("ZRANGE", "z", 0, -1), []),
    ]),
    ("transactions", [
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"), (("SET", "s", "x"), "QUEUED"),
        (("INCR", "s"), "QUEUED"), (("EXEC",), [1, "OK", Err(INT)]),
        (("EXEC",), Err("ERR EXEC without MULTI")),
        (("DISCARD",), Err("ERR DISCARD without MULTI")),
        (("MULTI",), "OK"), (("MULTI",), Err("ERR MULTI calls can not be nested")),
        (("GET",), Err("ERR wrong number of arguments for 'get' command")),
        (("INCR", "n"), "QUEUED"),
        (("EXEC",), Err("EXECABORT Transaction discarded because of previous errors.")),
        (("GET", "n"), "1"),
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"), (("DISCARD",), "OK"), (("GET", "n"), "1"),
    ]),
    ("a command refused while queued spoils the whole transaction", [
        (("SET", "n", "1"), "OK"),
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"),
        (("NOSUCH", "a\nb"), Err("ERR unknown command 'NOSUCH', with args beginning with: "
                                  "'a b' ")),
        (("INCR", "n"), "QUEUED"),
        (("EXEC",), Err("EXECABORT Transaction discarded because of previous errors.")),
        (("GET", "n"), "1"),                         # nothing ran, not even the first INCR
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"),
        (("SCRIPT", "LOAD"), Err("ERR wrong number of arguments for 'script|load' command")),
        (("EXEC",), Err("EXECABORT Transaction discarded because of previous errors.")),
        (("MULTI",), "OK"),
        (("SCRIPT", "NOPE"), Err("ERR unknown subcommand 'NOPE'. Try SCRIPT HELP.")),
        (("EXEC",), Err("EXECABORT Transaction discarded because of previous errors.")),
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"),
        (("EXEC", "now"), Err("EXECABORT Transaction discarded because of: wrong number of "
                              "arguments for 'exec' command")),
        (("GET", "n"), "1"),
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"),      # an error at EXEC time does not
        (("HSET", "n", "f", "v"), "QUEUED"), (("INCR", "n"), "QUEUED"),   # stop the rest
        (("EXEC",), [2, Err(WRONG), 3]),
    ]),
    ("score bounds in every syntax Redis reads", [
        (("ZADD", "z", 1, "a", 2, "b", 3, "c"), 3),
        (("ZCOUNT", "z", "0x1", " 2"), 2), (("ZCOUNT", "z", "(0x1", "+inf"), 2),
        (("ZCOUNT", "z", "( 1", "3"), 2), (("ZCOUNT", "z", "0x1p1", "+INF"), 2),
        (("ZCOUNT", "z", "", "1"), 1), (("ZCOUNT", "z", "(", "1"), 1),  # empty reads as 0
        (("ZCOUNT", "z", "-1e400", "1e400"), 3), (("ZCOUNT", "z", "(-inf", "(inf"), 3),
        (("ZCOUNT", "z", "1 ", "3"), Err("ERR min or max is not a float")),
        (("ZCOUNT", "z", "nan", "3"), Err("ERR min or max is not a float")),
        (("ZCOUNT", "z", "0x", "3"), Err("ERR min or max is not a float")),
        (("ZADD", "z", "0x10", "d"), 1), (("ZSCORE", "z", "d"), "16"),
        (("ZADD", "z", " 1", "e"), Err("ERR value is not a valid float")),
        (("ZADD", "z", "1e400", "e"), Err("ERR value is not a valid float")),
        (("ZADD", "z", "NX", "CH"), Err("ERR syntax error")),
        (("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", -1, 2), []),
        (("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", 1, -1), ["b", "c", "d"]),
        (("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", 1, -5), ["b", "c", "d"]),
        (("ZRANGE", "z", 0, -1, "LIMIT", 1, -1), ["a", "b", "c", "d"]),
        (("ZRANGE", "z", 0, -1, "REV", "REV"), Err("ERR syntax error")),
        (("ZREVRANGEBYSCORE", "z", "+inf", "(1", "WITHSCORES", "LIMIT", 0, 1), ["d", "16"]),
        (("ZRANGEBYSCORE", "z", 1, 3, "BYSCORE"), Err("ERR syntax error")),
        (("ZREVRANGE", "z", 0, 1), ["d", "c"]),
        (("ZRANGE", "z", "[a", "(c", "BYLEX"), ["a", "b"]),
        (("ZRANGE", "z", "a", "c", "BYLEX"), Err("ERR min or max not valid string range item")),
    ]),
    ("hset with a field twice, set options repeated and in conflict", [
        (("HSET", "h", "a", "1", "a", "2"), 1), (("HGETALL", "h"), ["a", "2"]),
        (("HSET", "h", "b", "1", "b", "2", "c", "3"), 2),
        (("SET", "k", "v", "EX", 100, "EX", 200), "OK"), (("TTL", "k"), 200),
        (("SET", "k", "v", "NX", "NX"), None), (("SET", "k", "w", "GET", "GET"), "v"),
        (("SET", "k", "v", "EX", 10, "PX", 100), Err("ERR syntax error")),
        (("SET", "k", "v", "KEEPTTL", "EX", 1), Err("ERR syntax error")),
        (("SET", "k", "v", "EX", 1, "KEEPTTL"), Err("ERR syntax error")),
        (("SET", "k", "v", "EXAT", 1, "PXAT", 1), Err("ERR syntax error")),
        (("SET", "k", "v", "EX", "x", "FOO"), Err("ERR syntax error")),   # options first
        (("SET", "k", "v", "PXAT", 0), Err("ERR invalid expire time in 'set' command")),
        (("SET", "k", "v", "PXAT", "99999999999000"), "OK"), (("EXISTS", "k"), 1),
        (("SET", "k", "new", "NX", "GET"), "v"), (("GET", "k"), "v"),  # NX: not written
    ]),
    ("eval checks numkeys before it compiles", [
        (("EVAL", "not lua at all", -1), Err("ERR Number of keys can't be negative")),
        (("EVAL", "not lua at all", 3, "a"),
         Err("ERR Number of keys can't be greater than number of args")),
        (("EVAL", "not lua at all", "x"), Err(INT)),
        (("EVAL", "not lua at all", "1.0", "a"), Err(INT)),
        (("EVALSHA", "a" * 40, "x"), Err(INT)),
        (("EVALSHA", "a" * 39, "x"), Err("NOSCRIPT")),
        (("EVAL", "not lua at all", 0), Err("ERR Error compiling script (new function): ")),
    ]),
    ("the lua libraries rate limiters use", [
        (("EVAL", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", 0),
         ["7.0.15", 0x0007000F]),
        (("EVAL", "return redis.replicate_commands()", 0), 1),
        (("EVAL", "return redis.setresp(4)", 0),
         Err("ERR RESP version must be 2 or 3. script: ")),
        (("EVAL", "return {cjson.encode({}), cjson.encode({[1] = 1, [3] = 3}), "
                  "cjson.encode('a/b\"' .. string.char(92, 10, 1, 127)), cjson.encode(0.1), "
                  "cjson.encode(1e15), "
                  "cjson.encode(123456789012345678), cjson.encode(3.0)}", 0),
         ["{}", "[1,null,3]", r'"a\/b\"\\\n\u0001\u007f"', "0.1", "1e+15",
          "1.2345678901235e+17", "3"]),
        (("EVAL", "local t = {z = 1, a = 2, [5] = 'x', m = {1, 2, {q = true}}}\n"
                  "return cjson.encode(t)", 0),
         '{"a":2,"m":[1,2,{"q":true}],"5":"x","z":1}'),  # in Lua's own order, as on a server
        (("EVAL", "local t = {}\nt[20] = 1\nreturn cjson.encode(t)", 0),
         Err("ERR user_script:3: Cannot serialise table: excessively sparse array script: ")),
        (("EVAL", "return cjson.encode(1/0)", 0),
         Err("ERR user_script:1: Cannot serialise number: must not be NaN or Inf script: ")),
        (("EVAL", "local v = cjson.decode(ARGV[1])\n"
                  "return {v.a, #v.b, v.b[3].c == cjson.null and 'null' or 'x', cjson.encode(v)}",
          0, '{"b": [1, 2.5, {"c": null}], "a": "x\\u00e9"}'),
         ["x\u00e9", 3, "null", '{"a":"x\u00e9","b":[1,2.5,{"c":null}]}']),
        (("EVAL", "return cjson.decode('')", 0),
         Err("ERR user_script:1: Expected value but found T_END at character 1 script: ")),
        (("EVAL", "return {bit.band(0xff, 0x0f), bit.bor(1, 2, 4), bit.bxor(5, 3), "
                  "bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.bnot(0), "
                  "bit.tohex(-1), bit.tohex(255, -4), bit.rol(1, 33), bit.ror(1, 1), "
                  "bit.bswap(0x12345678), bit.tobit(2.5), bit.tobit(3.5), bit.tobit(2^32 + 5)}", 0),
         [15, 7, 6, -2147483648, 15, -16, -1, "ffffffff", "00FF", 2, -2147483648, 2018915346,
          2, 4, 5]),
        (("EVAL", "return bit.band('x')", 0),
         Err("ERR user_script:1: bad argument #1 to 'band' (number expected, got string)")),
        (("HSET", "h", "a", "1", "b", "2"), 2), (("ZADD", "z", 1.5, "m"), 1),
        (("EVAL", "redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\n"
                  "local s = redis.call('ZSCORE', KEYS[2], 'm')\n"
                  "local r = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')\n"
                  "return {h.map.a, s.double * 2, r[1][2].double * 2, "
                  "tostring(redis.call('GET', 'missing')), h, {double = 0.25}, false}",
          2, "h", "z"), ["1", 3, 3, "nil", ["a", "1", "b", "2"], "0.25", 0]),
    ]),
    ("lua", [
        (("EVAL", "return redis.call('INCR', KEYS[1])", 1, "n"), 1),
        (("EVAL", "return {1, 2, 3.7, 'a', false, nil, 5}", 0), [1, 2, 3, "a", None]),
        (("EVAL", "return true", 0), 1), (("EVAL", "return false", 0), None),
        (("EVAL", "return ARGV[2] .. KEYS[1]", 1, "k", "a", "b"), "bk"),
        (("EVAL", "return redis.call('SET', KEYS[1], 3.5)", 1, "f"), "OK"), (("GET", "f"), "3.5"),
        (("EVAL", "redis.call('SET', KEYS[1], 2.01)", 1, "f"), None),
        (("GET", "f"), "2.0099999999999998"),          # numbers go to commands as %.17g
        (("EVAL", "return redis.status_reply('FINE')", 0), "FINE"),
        (("EVAL", "return redis.error_reply('MY oops')", 0), Err("MY oops")),
        (("EVAL", "return {1, redis.pcall('INCR', 'f')}", 0), [1, Err(INT)]),
        (("SET", "s", "abc"), "OK"),
        (("EVAL", "local x = 1\nreturn redis.call('INCR', KEYS[1])", 1, "s"),
         Err(INT + " script: ")),
        (("EVAL", "local x = 1\nreturn x + nil", 0),
         Err("ERR user_script:2: attempt to perform arithmetic on a nil value script: ")),
        (("EVAL", "return missing", 0),
         Err("ERR user_script:1: Script attempted to access nonexistent global variable "
             "'missing' script: ")),
        (("EVAL", "x = 5", 0), Err("ERR user_script:1: Attempt to modify a readonly table")),
        (("EVAL", "return 'x' ..", 0),
         Err("ERR Error compiling script (new function): user_script:1:")),
        (("EVAL", "return redis.call('MULTI')", 0),
         Err("ERR This Redis command is not allowed from script")),
        (("EVAL", "return redis.call('GET')", 0),
         Err("ERR Wrong number of args calling Redis command from script")),
        (("EVAL", "return redis.call('NOSUCH')", 0),
         Err("ERR Unknown Redis command called from script")),
        (("EVAL", "return 1", 2, "a"), Err("ERR Number of keys can't be greater")),
        (("EVAL", "return 1", -1), Err("ERR Number of keys can't be negative")),
        (("SCRIPT", "LOAD", "return 7"), "a0c38691e7a7f4d0f0d4c8c4b4a3e7e1b8a1a40a"),
        (("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0),
         Err("NOSCRIPT No matching script. Please use EVAL.")),
    ]),
    # What a differential run against redis-server 7.0 found SimStore getting wrong.
    ("integer parsing", [
        (("SET", "k", "-0"), "OK"), (("INCR", "k"), Err(INT)),      # Redis reads no "-0"
        (("INCRBY", "n", "-0"), Err(INT)), (("SET", "k", "v", "EX", "-0"), Err(INT)),
        (("DECRBY", "n", str(-2**63)), Err("ERR decrement would overflow")),
        (("EXISTS", "n"), 0),
    ]),
    ("expiry out of range", [
        (("SET", "k", "v", "EX", "9999999999999999"),
         Err("ERR invalid expire time in 'set' command")),
        (("SET", "k", "v"), "OK"),
        (("EXPIRE", "k", str(2**63 - 1)), Err("ERR invalid expire time in 'expire' command")),
        (("TTL", "k"), -1),
    ]),
    ("expire options", [
        (("SET", "k", "v"), "OK"),
        (("EXPIRE", "k", 10, "FOO"), Err("ERR Unsupported option FOO")),
        (("EXPIRE", "k", 10, "NX", "XX"),
         Err("ERR NX and XX, GT or LT options at the same time are not compatible")),
        (("EXPIRE", "k", 10, "GT", "LT"),
         Err("ERR GT and LT options at the same time are not compatible")),
        (("EXPIRE", "k", 10, "XX"), 0), (("EXPIRE", "k", 10, "GT"), 0),   # no TTL: infinite
        (("EXPIRE", "k", 10, "nx"), 1), (("EXPIRE", "k", 30, "NX"), 0),
        (("EXPIRE", "k", 20, "LT"), 0), (("PEXPIRE", "k", 5000, "LT"), 1), (("TTL", "k"), 5),
        (("EXPIRE", "k", 20, "GT"), 1), (("TTL", "k"), 20),
        (("EXPIRE", "k", -1, "GT"), 0), (("EXISTS", "k"), 1),
        (("EXPIRE", "k", -1, "XX"), 1), (("EXISTS", "k"), 0),
        (("EXPIRE", "k", 10, "NX"), 0),
    ]),
    ("scores as strtod reads them", [
        (("ZADD", "z", "+inf", "m"), 1),
        (("ZADD", "z", "INCR", "-inf", "m"), Err("ERR resulting score is not a number (NaN)")),
        (("ZSCORE", "z", "m"), "inf"),
        (("ZADD", "z", "1e400", "n"), Err("ERR value is not a valid float")),
        (("ZADD", "z", "1e-400", "n"), Err("ERR value is not a valid float")),
        (("ZADD", "z", "0x10", "n", "-0", "o", "0x1p-2", "p"), 3),
        (("ZRANGE", "z", 0, -1, "WITHSCORES"), ["o", "0", "p", "0.25", "n", "16", "m", "inf"]),
        (("ZADD", "y", "INCR", "-0", "m"), "-0"), (("ZSCORE", "y", "m"), "0"),
    ]),
    ("transactions, more", [
        (("MULTI",), "OK"),
        (("WATCH", "a"), Err("ERR WATCH inside MULTI is not allowed")),   # refused, not fatal
        (("INCR", "n"), "QUEUED"), (("EXEC",), [1]),
        (("MULTI", "x"), Err("ERR wrong number of arguments for 'multi' command")),
        (("EXEC",), Err("ERR EXEC without MULTI")),
        (("FLUSHALL", "NOW"), Err("ERR syntax error")),
        (("MULTI",), "OK"), (("INCR", "n"), "QUEUED"),
        (("EXEC", "x"), Err("EXECABORT Transaction discarded because of: wrong number")),
        (("GET", "n"), "1"),
        (("MULTI",), "OK"), (("WATCH",), Err("ERR wrong number of arguments for 'watch'")),
        (("INCR", "n"), "QUEUED"), (("EXEC",), Err("EXECABORT")), (("GET", "n"), "1"),
    ]),
    ("lua error values", [
        (("EVAL", "return redis.error_reply('oops')", 0), Err("ERR oops")),
        (("EVAL", "return redis.error_reply('-X')", 0), Err("ERR X")),
        (("EVAL", "return redis.error_reply('-MY oops').err", 0), "MY oops"),
        (("SET", "s", "abc"), "OK"),
        (("EVAL", "local ok, e = pcall(redis.call, 'INCR', 's')\nreturn {ok and 1 or 0, e}", 0),
         [0, INT]),                                  # pcall gets the error text as a string
        (("EVAL", "return redis.call('SET', KEYS[1], 2^62)", 1, "x"), "OK"),
        (("GET", "x"), "4.6116860184273879e+18"),    # %.17g, whatever the number
        (("EVAL", "return {ok = 5, err = 6}", 0), []),  # not a status or an error: an array
        (("SCRIPT", "FOO"), Err("ERR unknown subcommand 'FOO'. Try SCRIPT HELP.")),
        (("SCRIPT", "LOAD"), Err("ERR wrong number of arguments for 'script|load' command")),
        (("SCRIPT", "FLUSH", "NOW"), Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option")),
    ]),
    ("errors", [
        (("NOSUCH", "a", "b"),
         Err("ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b'")),
        (("PING",), "PONG"),
    ]),
]


def _fix_sha(steps):
    """The SCRIPT LOAD row: the expected reply is the sha1 of the script text."""
    import hashlib

    out = []
    for cmd, want in steps:
        if cmd[:2] == ("SCRIPT", "LOAD") and len(cmd) == 3:
            want = hashlib.sha1(cmd[2].encode()).hexdigest()
        out.append((cmd, want))
    return out


def _matches(got, want) -> bool:
    if isinstance(want, Err):
        return isinstance(got, StoreError) and str(got).startswith(want.prefix)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            _matches(g, w) for g, w in zip(got, want))
    return not isinstance(got, Exception) and got == want


def run_case(store, steps) -> None:
    """Run the steps on a fresh keyspace; fail naming the first step that differs."""
    store.execute("FLUSHALL")
    store.execute("SCRIPT", "FLUSH")
    conn = store.connect("test")
    for i, (cmd, want) in enumerate(_fix_sha(steps)):
        try:
            got = conn.execute(*cmd)
        except StoreError as e:
            got = e
        assert _matches(got, want), f"step {i}: {cmd!r} replied {got!r}, expected {want!r}"
    conn.close()



@pytest.mark.parametrize("name,steps", CASES, ids=[c[0] for c in CASES])
def test_semantics_table(store, name, steps):
    run_case(store, steps)


# ---------------------------------------------------------------- virtual time


def test_expiry_in_virtual_time():
    s = SimStore()
    s.set_time(10.0)
    rows = [  # (time, command, reply)
        (10.0, ("SET", "k", "v", "PX", 1500), "OK"),
        (10.0, ("PTTL", "k"), 1500),
        (11.0, ("PTTL", "k"), 500),
        (11.0, ("TTL", "k"), 1),          # 500 ms rounds to 1 s, as Redis does
        (11.499, ("TTL", "k"), 0),
        (11.5, ("GET", "k"), "v"),        # at the deadline the key still exists
        (11.501, ("GET", "k"), None),     # one millisecond later it is gone
        (11.501, ("EXISTS", "k"), 0),
        (12.0, ("INCR", "c"), 1),
        (12.0, ("EXPIRE", "c", 2), 1),
        (13.9, ("INCR", "c"), 2),         # INCR keeps the TTL
        (14.0, ("GET", "c"), "2"),
        (14.001, ("GET", "c"), None),
        (14.001, ("INCR", "c"), 1),       # a fresh counter, no TTL
        (99.0, ("TTL", "c"), -1),
    ]
    for i, (t, cmd, want) in enumerate(rows):
        s.set_time(t)
        assert s.execute(*cmd) == want, f"row {i} at t={t}: {cmd}"


def test_clock_function_drives_expiry():
    now = [0.0]
    s = SimStore(clock=lambda: now[0])
    s.execute("SET", "k", "v", "EX", 1)
    now[0] = 1.0
    assert s.execute("GET", "k") == "v"
    now[0] = 1.002
    assert s.execute("GET", "k") is None


# ---------------------------------------------------------------- Lua atomicity and WATCH


def test_a_script_runs_atomically_between_commands():
    """A script that reads, computes and writes sees nothing of other clients in between: the
    store runs it inside one command, so two scripts on one counter never lose an update."""
    s = SimStore()
    script = ("local v = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
              "for i = 1, 1000 do v = v + 0 end\n"
              "redis.call('SET', KEYS[1], v + 1)\nreturn v + 1")
    a, b = s.connect("a"), s.connect("b")
    replies = [c.execute("EVAL", script, 1, "n") for c in (a, b, a, b)]
    assert replies == [1, 2, 3, 4]


def test_script_error_undoes_nothing_but_stops_there():
    # Redis does not roll back a script's earlier writes when a later line fails.
    s = SimStore()
    s.execute("SET", "s", "abc")
    with pytest.raises(StoreError, match=r"on @user_script:3\.$"):
        s.execute("EVAL", "redis.call('INCR', 'n')\nredis.call('INCR', 'n')\n"
                          "redis.call('INCR', 's')\nredis.call('INCR', 'n')", 0)
    assert s.execute("GET", "n") == "2"


def test_evalsha_after_script_load_and_pcall_keeps_going():
    s = SimStore()
    sha = s.execute("SCRIPT", "LOAD", "return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert s.execute("SCRIPT", "EXISTS", sha, "0" * 40) == [1, 0]
    assert [s.execute("EVALSHA", sha, 1, "n", 5) for _ in range(2)] == [5, 10]


@pytest.mark.parametrize("kind", ["sim", "redis"])
def test_watch_aborts_exec_when_another_client_wrote(kind, request):
    s = SimStore() if kind == "sim" else RedisStore(request.getfixturevalue("redis_url"))
    s.execute("FLUSHALL")
    a, b = s.connect("a"), s.connect("b")
    a.execute("SET", "n", "5")
    assert a.execute("WATCH", "n") == "OK"
    assert b.execute("INCR", "n") == 6                # another client changes the key
    a.execute("MULTI")
    assert a.execute("INCR", "n") == "QUEUED"
    assert a.execute("EXEC") is None                  # aborted: nil, nothing ran
    assert a.execute("GET", "n") == "6"
    a.execute("WATCH", "n")                           # nobody interferes this time
    a.execute("MULTI")
    a.execute("INCR", "n")
    assert a.execute("EXEC") == [7]
    a.execute("WATCH", "n")
    a.execute("SET", "n", "1")                        # the watcher's own write counts too
    a.execute("MULTI")
    a.execute("INCR", "n")
    assert a.execute("EXEC") is None
    with pytest.raises(StoreError, match="ERR WATCH inside MULTI is not allowed"):
        a.execute("MULTI")
        a.execute("WATCH", "n")


def test_watch_sees_expiry_as_a_change():
    s = SimStore()
    a = s.connect("a")
    a.execute("SET", "n", "1", "PX", 100)
    a.execute("WATCH", "n")
    s.set_time(0.2)
    a.execute("MULTI")
    a.execute("SET", "n", "9")
    assert a.execute("EXEC") is None


def test_open_store_and_bad_urls():
    assert isinstance(open_store("sim"), SimStore)
    with pytest.raises(ValueError, match="store must be 'sim' or a redis:// URL"):
        open_store("memcached://x")
    with pytest.raises(ValueError, match="url must be a redis:// URL"):
        RedisStore("localhost:6379")


def test_unreachable_redis_is_store_unavailable():
    from services import free_port

    s = RedisStore.__new__(RedisStore)
    s.url, s.timeout_s = f"redis://127.0.0.1:{free_port()}/0", 0.5
    with pytest.raises(StoreUnavailable):
        s.connect("x").execute("PING")


LUA_ERRORS = [
    "return redis.call('INCR', KEYS[1])",                          # a tail call
    "local x = 1\nlocal y = redis.call('INCR', KEYS[1])\nreturn y",
    "local a = 1\n\nreturn redis.call('INCR',\n KEYS[1])",
    "local t = {}\nreturn t.x.y",
    "error('boom')",
    "return redis.call('HGET', KEYS[1])",
    "return redis.call('SET', KEYS[1], {})",
    "return nope",
    "error({err = 'MY table'})",
    "local ok, e = pcall(redis.call, 'INCR', KEYS[1])\nerror(e)",
]


@pytest.mark.parametrize("source", LUA_ERRORS)
def test_lua_errors_read_the_same_on_both_stores(redis_url, source):
    """The whole text, script sha and line included."""
    texts = []
    for store in (SimStore(), RedisStore(redis_url)):
        store.execute("SET", "s", "abc")
        with pytest.raises(StoreError) as e:
            store.execute("EVAL", source, 1, "s")
        texts.append(str(e.value))
        store.close()
    assert texts[0] == texts[1]
    assert "@user_script:" in texts[0]


@pytest.mark.parametrize("kind", ["sim", "redis"])
def test_a_write_that_changes_nothing_leaves_watch_alone(kind, request):
    """Redis signals a key modified only when a command changed it: a ZADD that sets a member
    to the score it has does not abort another client's EXEC; one that moves it does."""
    s = SimStore() if kind == "sim" else RedisStore(request.getfixturevalue("redis_url"))
    s.execute("FLUSHALL")
    a, b = s.connect("a"), s.connect("b")
    a.execute("ZADD", "z", 1, "m")
    got = []
    for change in (("ZADD", "z", "NX", 5, "m"), ("ZADD", "z", 1, "m"), ("ZADD", "z", 2, "m")):
        a.execute("WATCH", "z")
        b.execute(*change)
        a.execute("MULTI")
        a.execute("ZCARD", "z")
        got.append(a.execute("EXEC"))
    assert got == [[1], [1], None]
    s.close()
