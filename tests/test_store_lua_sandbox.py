"""SimStore's script sandbox, for scripts nobody trusts (a grader runs students' scripts in its
own process): what a script can reach — nothing of Python's, no os or io, not the runtime's own
globals — and the step and memory limits that stop a script that would hang the process or
fill its memory, after which the store goes on working. Where Redis defines what a script
sees, the rows also run on a real redis-server."""

from __future__ import annotations

import threading

import lupa.lua51 as lupa
import pytest

from ratelab.cluster.scripts import SCRIPTED
from ratelab.store import RedisStore, SimStore, StoreError
from ratelab.store.lualib import (MEMORY_LIMIT_ERROR, SCRIPT_MEMORY_LIMIT_BYTES,
                                  SCRIPT_STEP_LIMIT, STEP_LIMIT_ERROR)

WATCHDOG_S = 60
"""How long a script may run before the test calls it a hang (not a speed bound: the limits
stop every script here within a few seconds)."""

SMALL_STEP_LIMIT = 20_000
"""The step limit of the stores that check where the limit reaches (quicker than the default)."""

STEP_ERROR = STEP_LIMIT_ERROR.format(steps=SCRIPT_STEP_LIMIT)
SMALL_STEP_ERROR = STEP_LIMIT_ERROR.format(steps=SMALL_STEP_LIMIT)
MEMORY_ERROR = MEMORY_LIMIT_ERROR.format(mib=SCRIPT_MEMORY_LIMIT_BYTES / 2**20)


class Err:
    """An expected error reply: its text contains `part`."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __repr__(self) -> str:
        return f"Err({self.part!r})"


def reply(store, source: str, *args) -> object:
    """The reply to EVAL `source` with no keys and `args`, or the StoreError it raised; the
    test fails if the script is still running after WATCHDOG_S (lupa runs Lua without the
    GIL, so a script that never ends cannot stall the test with it)."""
    out = []

    def run():
        try:
            out.append(store.execute("EVAL", source, 0, *args))
        except StoreError as e:
            out.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(WATCHDOG_S)
    assert out, f"{source!r} was still running after {WATCHDOG_S} s"
    return out[0]


def matches(got, want) -> bool:
    if isinstance(want, Err):
        return isinstance(got, StoreError) and want.part in str(got)
    return not isinstance(got, Exception) and got == want


def small_limit_store() -> SimStore:
    store = SimStore()
    store.script_step_limit = SMALL_STEP_LIMIT
    return store


# ---------------------------------------------------------------- what a script can reach

# (the route tried, a script that would create {marker} if it got through, expected reply)
ESCAPES = [
    ("os", "os.execute('touch {marker}')", Err("nonexistent global variable 'os'")),
    ("io", "io.open('{marker}', 'w'):close()", Err("nonexistent global variable 'io'")),
    ("the runtime's globals, by getfenv(0)", "getfenv(0).os.execute('touch {marker}')",
     Err("nonexistent global variable 'getfenv'")),
    ("lupa's python module", "getfenv(0).python.eval(\"open('{marker}', 'w')\")",
     Err("nonexistent global variable 'getfenv'")),
    ("a library function's globals", "getfenv(redis.call).os.execute('touch {marker}')",
     Err("nonexistent global variable 'getfenv'")),
    ("a caller's globals", "local function f() return getfenv(2) end f().os.execute('x')",
     Err("nonexistent global variable 'getfenv'")),
    ("setfenv", "setfenv(1, {})", Err("nonexistent global variable 'setfenv'")),
    ("_G", "_G.os.execute('touch {marker}')", Err("nonexistent global variable 'os'")),
    ("load of text", "load('return os')().execute('touch {marker}')",
     Err("bad argument #1 to 'load' (function expected, got string)")),
    ("what load compiles", "local s = \"os.execute('touch {marker}')\"\n"
                           "load(function() local p = s s = nil return p end)()",
     Err("(load):1: Script attempted to access nonexistent global variable 'os'")),
    ("what loadstring compiles", "loadstring(\"os.execute('touch {marker}')\")()",
     Err("nonexistent global variable 'os'")),
    ("a coroutine's globals", "coroutine.wrap(function() return getfenv(0) end)().os.execute('x')",
     Err("nonexistent global variable 'getfenv'")),
    ("require", "require('os').execute('touch {marker}')",
     Err("nonexistent global variable 'require'")),
    ("package", "package.loaded.os.execute('touch {marker}')",
     Err("nonexistent global variable 'package'")),
    ("debug", "debug.sethook()", Err("nonexistent global variable 'debug'")),
    ("dofile", "dofile('{marker}')", Err("nonexistent global variable 'dofile'")),
    ("loadfile", "loadfile('{marker}')", Err("nonexistent global variable 'loadfile'")),
    ("module", "module('x')", Err("nonexistent global variable 'module'")),
    # bytecode can break out of Lua 5.1's VM: the server, and SimStore, read every chunk as text
    ("bytecode through loadstring",
     "local f, e = loadstring(string.dump(function() return 'ran' end)) return f and f() or e",
     "\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'"),
    ("bytecode through the string metatable",
     "local dump = getmetatable('').__index.dump\n"
     "local f = loadstring(dump(function() return 'ran' end)) return f and f() or 'refused'",
     "refused"),
    ("bytecode through load",
     "local n = 0\nlocal f, e = load(function() n = n + 1\n"
     "  if n == 1 then return string.dump(function() return 'ran' end) end end)\n"
     "return f and f() or e", "(load):1: unexpected symbol near 'char(27)'"),
    # a finalizer runs with hooks off, past every limit: no script may give a userdata one
    ("a finalizer on newproxy", "getmetatable(newproxy(true)).__gc = function() end",
     Err("nonexistent global variable 'newproxy'")),
    ("a finalizer on cjson.null", "getmetatable(cjson.null).__gc = function() end return 'set'",
     Err("attempt to index a boolean value")),
]


@pytest.mark.parametrize("route,source,want", ESCAPES, ids=[e[0] for e in ESCAPES])
def test_an_escape_route_ends_in_an_error_and_runs_nothing(tmp_path, route, source, want):
    marker = tmp_path / "escaped"
    got = reply(SimStore(), source.replace("{marker}", str(marker)))
    if isinstance(want, str) and not isinstance(got, Exception):
        assert want in str(got), f"{route}: {got!r}"
    else:
        assert matches(got, want), f"{route}: replied {got!r}, expected {want!r}"
    assert not marker.exists(), f"{route}: the script created {marker}"


def test_the_runtimes_own_globals_hold_only_what_a_script_may_see():
    """After the prelude, the real global table (what getfenv(0) and every library function's
    environment lead to) holds none of lupa's python, os, io, debug, require, package ..."""
    store = SimStore()
    store.execute("EVAL", "return 1", 0)
    names = set(store._lua_runtime().globals().keys())
    assert names == {
        "_VERSION", "assert", "bit", "cjson", "collectgarbage", "coroutine", "error", "gcinfo",
        "getmetatable", "ipairs", "load", "loadstring", "math", "next", "pairs", "pcall",
        "rawequal", "rawget", "rawset", "redis", "select", "setmetatable", "string", "table",
        "tonumber", "tostring", "type", "unpack", "xpcall"}


# What a script's globals hold on the server and not in SimStore's runtime: KEYS and ARGV (a
# run's own), _G (the script's table), the server's error handler, and the two libraries
# SimStore lacks (lualib's "Known limits").
NOT_IN_SIMSTORES_RUNTIME = {"KEYS", "ARGV", "_G", "__redis__err__handler", "cmsgpack", "struct"}


def test_a_script_sees_the_globals_the_server_leaves(redis_url):
    server = RedisStore(redis_url)
    names = set(server.execute(
        "EVAL", "local t = {} for k in pairs(_G) do t[#t + 1] = k end return t", 0))
    server.close()
    simstore = set(SimStore()._lua_runtime().globals().keys())
    assert simstore == names - NOT_IN_SIMSTORES_RUNTIME


def test_a_python_object_in_lua_is_inert():
    """Were a Python object to reach Lua, no attribute of it could be read (lupa's attribute
    filter) and its metatable (lupa's, shared by all of them) would be hidden."""
    store = SimStore()
    probe = store._lua_runtime().eval(
        "function(o) return getmetatable(o), pcall(function() return o.__class__ end) end")
    metatable, read, _ = probe(object())
    assert metatable is False
    assert read is False


def test_a_script_text_that_is_bytecode_compiles_as_text():
    """EVAL's compiler reads bytecode as the server does: as text, which it is not."""
    dump = lupa.LuaRuntime(encoding=None).eval("string.dump(function() return 'ran' end)")
    store = SimStore()
    store._lua_runtime()
    f, err = store._compile(dump)
    assert f is None
    assert err == "user_script:1: unexpected symbol near 'char(27)'"


# ---------------------------------------------------------------- the same as on the server

# (script, ARGV, reply): ordinary scripts, and the sandbox's edges as the server words them
SAME_ON_BOTH = [
    ("return loadstring('return ARGV[1]')()", ["x"], "x"),
    ("return loadstring('return _G')() == _G", [], 1),
    ("local parts = {'return ', '1 + 1'}\nlocal i = 0\n"
     "return load(function() i = i + 1 return parts[i] end)()", [], 2),
    ("local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)\n"
     "return {co(1), co(5)}", [], [2, 10]),
    ("local co = coroutine.create(function() error('inside') end)\n"
     "return {coroutine.resume(co)}", [], [None, "user_script:1: inside"]),
    ("local n = 0 for i = 1, 100000 do n = n + 1 end return n", [], 100000),
    ("return type(getmetatable(_G))", [], "table"),
    ("return tostring(cjson.null)", [], "userdata: (nil)"),
    ("local ok, e = pcall(function() return _G.os end) return e", [],
     "user_script:1: Script attempted to access nonexistent global variable 'os'"),
    ("return getfenv(0)", [],
     Err("ERR user_script:1: Script attempted to access nonexistent global variable 'getfenv'")),
    ("return setfenv", [], Err("nonexistent global variable 'setfenv'")),
    ("return newproxy()", [], Err("nonexistent global variable 'newproxy'")),
    ("return print", [], Err("nonexistent global variable 'print'")),
    ("return coroutine.wrap(function() return getfenv(0) end)()", [],
     Err("ERR user_script:1: user_script:1: Script attempted to access nonexistent global "
         "variable 'getfenv'")),
    ("return load('return 1')", [],
     Err("ERR user_script:1: bad argument #1 to 'load' (function expected, got string)")),
    ("return load()", [],
     Err("ERR user_script:1: bad argument #1 to 'load' (function expected, got no value)")),
    ("return load(function() end, {})", [],
     Err("ERR user_script:1: bad argument #2 to 'load' (string expected, got table)")),
    ("local f, e = load(function() return {} end) return e", [],
     Err("ERR user_script:1: reader function must return a string")),
    ("return loadstring(nil)", [],
     Err("ERR user_script:1: bad argument #1 to 'loadstring' (string expected, got nil)")),
    ("return loadstring('return 1', {})", [],
     Err("ERR user_script:1: bad argument #2 to 'loadstring' (string expected, got table)")),
    ("local f, e = loadstring(string.dump(function() return 'ran' end), 'dumped')\n"
     "return f and f() or e", [], "[string \"dumped\"]:1: unexpected symbol near 'char(27)'"),
    ("return {xpcall(function() error('x') end, function(e) return 'handled: ' .. e end)}", [],
     [None, "handled: user_script:1: x"]),
    ("return {xpcall(function() error('x') end, 5)}", [], [None, "error in error handling"]),
    ("return xpcall(function() end)", [],
     Err("ERR user_script:1: bad argument #2 to 'xpcall' (value expected)")),
    ("return {pcall(error, {err = 'MY e'})}", [], [None, "MY e"]),
    ("return coroutine.create(tostring)", [],
     Err("ERR user_script:1: bad argument #1 to 'create' (Lua function expected)")),
    ("return coroutine.wrap()", [],
     Err("ERR user_script:1: bad argument #1 to 'wrap' (Lua function expected)")),
]



@pytest.mark.parametrize("source,args,want", SAME_ON_BOTH)
def test_the_sandbox_reads_as_on_the_server(store, source, args, want):
    got = reply(store, source, *args)
    assert matches(got, want), f"{source!r} replied {got!r}, expected {want!r}"


# ---------------------------------------------------------------- the step limit

# Scripts that would never end; the first three run to the default limit.
RUNAWAYS = [
    ("a loop", "while true do end"),
    ("a loop in a coroutine", "coroutine.wrap(function() while true do end end)()"),
    ("a loop that pcall restarts", "while true do pcall(function() while true do end end) end"),
    ("a loop in a resumed coroutine",
     "local co = coroutine.create(function() while true do end end)\n"
     "return coroutine.resume(co)"),
    ("loops of pcalls in loops of pcalls",
     "local function f() while true do end end\n"
     "local function g() while true do pcall(f) end end\n"
     "while true do pcall(g) end"),
    ("tail calls without end", "local function f() return f() end return f()"),
    ("recursion caught by pcall",
     "local function f() pcall(f) pcall(f) end f()"),
    ("a loop in xpcall's handler",
     "return xpcall(function() error('x') end, function() while true do end end)"),
    ("a loop in the failed script's error", "error(setmetatable({}, {__index = "
                                            "function() while true do end end}))"),
    ("load's reader, never done", "return load(function() return ' ' end)"),
    ("a loop in gsub's function", "return (string.gsub('abc', '.', function() "
                                  "while true do end end))"),
    ("a loop in sort's comparison", "table.sort({3, 2, 1}, function() while true do end end)"),
]


@pytest.mark.parametrize("what,source", RUNAWAYS[:3], ids=[r[0] for r in RUNAWAYS[:3]])
def test_a_script_that_never_ends_is_stopped_at_the_step_limit(what, source):
    store = SimStore()
    got = reply(store, source)
    assert matches(got, Err(STEP_ERROR)), got
    assert str(got).endswith("on @user_script:1.")
    assert reply(store, "return redis.call('INCR', 'n')") == 1   # and the store goes on


@pytest.mark.parametrize("what,source", RUNAWAYS, ids=[r[0] for r in RUNAWAYS])
def test_no_way_round_the_step_limit(what, source):
    store = small_limit_store()
    assert matches(reply(store, source), Err(SMALL_STEP_ERROR)), what
    assert reply(store, "return 'still here'") == "still here"


def test_the_step_limit_counts_each_turn_of_a_loop():
    store = small_limit_store()
    assert reply(store, f"for i = 1, {SMALL_STEP_LIMIT - 100} do end return 1") == 1
    assert matches(reply(store, f"for i = 1, {SMALL_STEP_LIMIT} do end return 1"),
                   Err(SMALL_STEP_ERROR))


LESSON_STEPS = 1_000
"""Steps the lessons' scripts stay under, for one request (a small part of the limit)."""


@pytest.mark.parametrize("name", sorted(SCRIPTED))
def test_the_projects_scripts_take_a_small_part_of_the_limit(name):
    assert LESSON_STEPS * 1000 <= SCRIPT_STEP_LIMIT
    store = SimStore()
    store.script_step_limit = LESSON_STEPS
    params = {"rate": 2, "capacity": 5} if name == "token-bucket" else {"limit": 5, "window": 1}
    scripted, conn = SCRIPTED[name](**params), store.connect()
    decisions = [scripted.allow(conn, "k", t / 8, 1) for t in range(40)]
    assert any(d.allowed for d in decisions) and not all(d.allowed for d in decisions)


# ---------------------------------------------------------------- the memory limit

# Scripts that take more memory than the limit (and would finish, slowly, without one).
HOGS = [
    ("a table that keeps growing", "local t = {} for i = 1, 4e6 do t[i] = {i} end return #t"),
    ("one huge string", "return #string.rep('x', 2^28)"),
    ("a string doubled", "local s = 'x' for i = 1, 28 do s = s .. s end return #s"),
    ("a table.concat", "local t = {} for i = 1, 1e5 do t[i] = ('x'):rep(1000) end "
                       "return #table.concat(t)"),
]


@pytest.mark.parametrize("what,source", HOGS, ids=[h[0] for h in HOGS])
def test_a_script_past_the_memory_limit_gets_an_error_and_the_store_goes_on(what, source):
    store = SimStore()
    got = reply(store, source)
    assert matches(got, Err(MEMORY_ERROR)), got
    assert "not enough memory" in str(got)
    assert reply(store, "return redis.call('INCR', 'n')") == 1
    assert reply(store, "local t = {} for i = 1, 1e5 do t[i] = i end return #t") == 100000


def test_python_runs_when_a_script_has_used_all_its_memory():
    """A command called with the Lua memory full still answers (Python works on the runtime
    with the limit lifted: lupa cannot survive an allocation refused then)."""
    store = SimStore()
    got = reply(store, "local t = {}\n"
                       "pcall(function() for i = 1, 4e6 do t[i] = {} end end)\n"
                       "redis.call('SET', 'filled', #t)\n"
                       "return redis.call('INCR', 'n')")
    assert got == 1
    assert 0 < int(store.execute("GET", "filled")) < 4e6   # the limit stopped the filling


def test_garbage_left_by_a_stopped_collector_does_not_fill_the_next_scripts_memory():
    store = SimStore()
    assert reply(store, "collectgarbage('stop') collectgarbage('setpause', 1e9) return 1") == 1
    garbage = "local t = {} for i = 1, 1e5 do t[i] = {} end return 1"   # about 6 MB each
    assert [reply(store, garbage) for _ in range(40)] == [1] * 40
