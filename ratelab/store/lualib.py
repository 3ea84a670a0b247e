"""What a script sees inside SimStore: the `redis` table and the libraries Redis 7.0 loads
(``cjson``, ``bit``), in the sandbox Redis 7.0 gives scripts.

The script runs in real Lua 5.1 (lupa), the version Redis embeds, so tables iterate in the
same order as on a server and ``cjson.encode`` of a table lists its keys as Redis does. The
parts that are arithmetic or parsing are done by Python, as faithfully as the server does them:
``bit`` with BitOp's number conversion (a double added to 2^52 + 2^51 and its low 32 bits
kept), and ``cjson.decode`` with the standard library's JSON reader.

Known limits (what SimStore does not reproduce):

* ``cjson.decode`` of text that is not JSON: the server's error names what it expected and the
  token it found ("Expected comma or array end but found T_END at character 5"); SimStore's
  has the same form and, mostly, the same character, but says "Expected value" and names the
  token only as "invalid token" / "invalid number" / T_END. (The numbers cjson reads where JSON
  does not — ``0x10``, ``inf``, ``nan``, ``01``, ``+1``, ``1.`` — SimStore reads too.)
* ``cmsgpack`` and ``struct`` are not there (a script that uses them gets Redis's error for a
  missing global); ``redis.acl_check_cmd`` neither; ``math.random`` is Lua's, not Redis's.
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any, Callable

from .cnum import strtod

REDIS_VERSION = "7.0.15"
"""The Redis release SimStore follows (what ``redis.REDIS_VERSION`` reports to a script)."""
REDIS_VERSION_NUM = 0x0007000F
"""The same as one number, 0x00MMmmpp (``redis.REDIS_VERSION_NUM``)."""

_BIT_MAGIC = 6755399441055744.0  # 2^52 + 2^51: adding it leaves the integer in the low bits


def _bits(x: float) -> int:
    """A Lua number as BitOp reads it: rounded to an integer, its low 32 bits (unsigned)."""
    d = float(x) + _BIT_MAGIC
    return struct.unpack("<Q", struct.pack("<d", d))[0] & 0xFFFFFFFF


def _signed(b: int) -> int:
    """32 bits as the signed number BitOp returns."""
    b &= 0xFFFFFFFF
    return b - (1 << 32) if b & 0x80000000 else b


def bit_op(name: str, *args: float) -> int | str:
    """One ``bit`` library function on numbers already checked by the Lua side."""
    b = [_bits(a) for a in args]
    if name == "tobit":
        return _signed(b[0])
    if name == "bnot":
        return _signed(~b[0])
    if name in ("band", "bor", "bxor"):
        out = b[0]
        for x in b[1:]:
            out = out & x if name == "band" else out | x if name == "bor" else out ^ x
        return _signed(out)
    if name == "bswap":
        x = b[0]
        return _signed((x >> 24) | ((x >> 8) & 0xFF00) | ((x & 0xFF00) << 8) | (x << 24))
    if name == "tohex":
        n = 8 if len(b) < 2 else _signed(b[1])
        digits = "0123456789abcdef"
        if n < 0:
            n, digits = -n, digits.upper()
        n = min(n, 8)
        x, out = b[0], []
        for _ in range(max(n, 0)):
            out.append(digits[x & 15])
            x >>= 4
        return "".join(reversed(out))
    x, n = b[0], b[1] & 31
    if name == "lshift":
        return _signed(x << n)
    if name == "rshift":
        return _signed(x >> n)
    if name == "arshift":
        return _signed(_signed(x) >> n)
    if name == "rol":
        return _signed((x << n) | (x >> ((32 - n) & 31)))
    if name == "ror":
        return _signed((x << ((32 - n) & 31)) | (x >> n))
    raise ValueError(f"unknown bit function {name!r}")


# JSON string literals, and (outside them) a number the way cjson's reader meets one: a token
# that begins with a digit or "-", or one JSON refuses but cjson takes as a number (a leading
# "+", "0x", a leading zero, inf, nan), standing alone between JSON's separators.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LOOSE_NUMBER = re.compile(r"(?<![^\s\[,:])[+-]?(?:0x[0-9a-f.p+-]*|inf(?:inity)?|nan|[0-9][0-9a-f.ex+-]*)"
                           r"(?=[\s,\]}]|\Z)", re.IGNORECASE)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def _strict_numbers(text: str) -> str:
    """`text` with every number cjson reads but JSON refuses ("01", "+1", "0x10", "1.", inf,
    nan) written as JSON (or as Python's NaN / Infinity), so the standard reader takes it;
    strings and JSON's own numbers untouched. A token strtod does not read whole stays as it
    is, for the reader to refuse."""
    def fix(m: re.Match) -> str:
        token = m.group(0)
        if _JSON_NUMBER.match(token):
            return token
        read = strtod(token)
        if read is None or read[1] != len(token):
            return token
        x = read[0]
        if x != x:
            return "NaN"
        if x in (float("inf"), float("-inf")):
            return "Infinity" if x > 0 else "-Infinity"
        return repr(x)

    out, last = [], 0
    for s in _JSON_STRING.finditer(text):
        out.append(_LOOSE_NUMBER.sub(fix, text[last:s.start()]))
        out.append(s.group(0))
        last = s.end()
    out.append(_LOOSE_NUMBER.sub(fix, text[last:]))
    return "".join(out)


class _Object(list):
    """A JSON object's (key, value) pairs in the order the text gives them."""


def json_decoder(new_table: Callable[[], Any], null: Any) -> Callable[[str], tuple]:
    """``cjson.decode``'s Python half: text -> (True, value as Lua) or (False, error text).

    Objects and arrays become Lua tables filled in text order (a repeated key keeps its first
    place and its last value, as cjson's successive writes leave it); numbers are doubles;
    null is `null` (cjson.null)."""

    def to_lua(x: Any) -> Any:
        if isinstance(x, _Object):
            t = new_table()
            for k, v in x:
                t[k] = to_lua(v)
            return t
        if isinstance(x, list):
            t = new_table()
            for i, v in enumerate(x, 1):
                t[i] = to_lua(v)
            return t
        return null if x is None else x

    def decode(text: Any) -> tuple:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogateescape")
        try:
            value = json.loads(_strict_numbers(text), object_pairs_hook=_Object,
                               parse_int=float, parse_float=float, parse_constant=float)
        except json.JSONDecodeError as e:
            where = e.pos + 1
            if not text[e.pos:].strip():
                return False, f"Expected value but found T_END at character {where}"
            found = "invalid number" if text[e.pos] in "-0123456789" else "invalid token"
            return False, f"Expected value but found {found} at character {where}"
        except RecursionError:
            return False, "Found too many nested data structures"
        return True, to_lua(value)

    return decode


# The Lua side of a script run. Called once per runtime with the Python functions it needs
# and cjson's null (a userdata); returns compile(source) and run(f, keys, argv), which gives
# (ok, value, the protocol the script ended in).
PRELUDE = r"""
local dispatch, sha1hex, bitop, json_decode, null, REDIS_VERSION, REDIS_VERSION_NUM = ...
local getinfo, sethook = debug.getinfo, debug.sethook
local next, type, tostring, tonumber, select, error, pcall, unpack =
  next, type, tostring, tonumber, select, error, pcall, unpack
local format, floor, huge, concat = string.format, math.floor, math.huge, table.concat

-- The script's current line: from the caller's frame, or (after a tail call such as
-- `return redis.call(...)`, which replaces that frame) from a line hook.
local last_line = 0
local function track(_, line)
  if getinfo(2, "S").source == "@user_script" then last_line = line end
end
local function line_of_caller(level)
  local info = getinfo(level or 3, "Sl")
  if info and info.source == "@user_script" and info.currentline > 0 then
    return info.currentline
  end
  return last_line
end

-- What luaL_error and luaL_argerror put before a library function's error: the position of
-- the code that called it ("user_script:3: ") and the name it was called by. The libraries
-- here are Lua functions, where the server's are C functions: a C function called in tail
-- position (`return bit.band(x)`) keeps its caller's frame, a Lua one does not, so a lost
-- frame is read as the script's line (from the line hook) and the function's own name.
local function position(level)  -- level as error() counts it: 2 is the caller's caller
  local info = getinfo(level + 1, "Sl")
  if info == nil then return "" end
  if info.source == "@user_script" and info.currentline > 0 then
    return "user_script:" .. info.currentline .. ": "
  end
  if info.what == "tail" then return "user_script:" .. last_line .. ": " end
  return ""
end
local function called_as(level, own)  -- the name the function at `level` was called by
  -- (level as error() counts it from the caller of called_as)
  local name = getinfo(level + 1, "n").name
  if name then return name end
  local caller = getinfo(level + 2, "S")
  if caller and caller.what == "tail" then return own end
  return "?"
end
local function argerror(level, i, own, text)  -- luaL_argerror for the function at `level`
  error(position(level + 2) .. format("bad argument #%d to '%s' (%s)", i,
        called_as(level + 1, own), text), 0)
end

local function trunc(x)  -- C's cast of a double to int
  x = tonumber(x) or 0
  if x >= 0 then return floor(x) end
  return -floor(-x)
end

-- luaPushError: "-CODE message" keeps its code, other text gets ERR; CR / LF trimmed.
local function err_table(text)
  local code, msg = "ERR", text
  if text:sub(1, 1) == "-" then
    local space = text:find(" ", 1, true)
    if space then code, msg = text:sub(2, space - 1), text:sub(space + 1)
    else msg = text:sub(2) end
  end
  msg = msg:gsub("^[\r\n]+", ""):gsub("[\r\n]+$", "")
  return {err = code .. " " .. msg}
end
-- An error raised the way Redis's C functions raise them: a table, with the script's line.
local function raise(text)
  local e = err_table(text)
  e.line = line_of_caller(4)
  error(e)
end

local resp = 2  -- the protocol redis.call's replies come in (redis.setresp), per run

local redis = {}
redis.call = function(...)
  local ok, value = dispatch(resp, ...)
  if ok then return value end
  error({err = value, line = line_of_caller()})
end
redis.pcall = function(...)
  local ok, value = dispatch(resp, ...)
  if ok then return value end
  return {err = value}
end
redis.setresp = function(...)
  if select("#", ...) ~= 1 then raise("redis.setresp() requires one argument.") end
  local v = trunc((...))
  if v ~= 2 and v ~= 3 then raise("RESP version must be 2 or 3.") end
  resp = v
end
redis.set_repl = function(...)
  if select("#", ...) ~= 1 then raise("redis.set_repl() requires two arguments.") end
  local v = trunc((...))
  if v < 0 or v > 3 then
    raise("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
  end
end
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL =
  0, 1, 2, 2, 3
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = REDIS_VERSION, REDIS_VERSION_NUM
redis.status_reply = function(...)
  local s = ...
  if select("#", ...) ~= 1 or type(s) ~= "string" then
    return err_table("wrong number or type of arguments")
  end
  return {ok = s}
end
redis.error_reply = function(...)
  local s = ...
  if select("#", ...) ~= 1 or type(s) ~= "string" then
    return err_table("wrong number or type of arguments")
  end
  if s:sub(1, 1) ~= "-" then s = "-" .. s end
  return err_table(s)
end
redis.sha1hex = function(...)
  if select("#", ...) ~= 1 then raise("wrong number of arguments") end
  local s = ...
  if type(s) == "number" then s = tostring(s) elseif type(s) ~= "string" then s = "" end
  return sha1hex(s)
end
redis.log = function(...)
  local n = select("#", ...)
  if n < 2 then raise("redis.log() requires two arguments or more.") end
  local level = ...
  if tonumber(level) == nil then raise("First argument must be a number (log level).") end
  level = trunc(level)
  if level < 0 or level > 3 then raise("Invalid debug level.") end
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3

-- bit (BitOp): arguments checked here as luaL's checks word it, arithmetic in Python.
local bit = {}
local function bitarg(name, i, n, ...)
  local v = select(i, ...)
  local x = tonumber(v)
  if x == nil then
    argerror(2, i, name, "number expected, got " .. (i > n and "no value" or type(v)))
  end
  return x
end
local function bitfn(name, count)
  bit[name] = function(...)
    local n = select("#", ...)
    local args = {bitarg(name, 1, n, ...)}
    if count == -1 then  -- band / bor / bxor: the rest, read from the last one down
      for i = n, 2, -1 do args[i] = bitarg(name, i, n, ...) end
    elseif count == 2 then
      args[2] = bitarg(name, 2, n, ...)
    elseif count == -2 and n >= 2 then  -- tohex's optional width
      args[2] = bitarg(name, 2, n, ...)
    end
    return bitop(name, unpack(args, 1, math.max(1, #args)))
  end
end
for _, name in ipairs({"tobit", "bnot", "bswap"}) do bitfn(name, 1) end
for _, name in ipairs({"band", "bor", "bxor"}) do bitfn(name, -1) end
for _, name in ipairs({"lshift", "rshift", "arshift", "rol", "ror"}) do bitfn(name, 2) end
bitfn("tohex", -2)

-- cjson: encoding walks the table in Lua (so keys come in Lua's order, as on the server).
getmetatable(null).__tostring = function() return "userdata: (nil)" end
local cjson = {null = null}
local escapes = {['"'] = '\\"', ['\\'] = '\\\\', ['/'] = '\\/', ['\b'] = '\\b',
                 ['\t'] = '\\t', ['\n'] = '\\n', ['\f'] = '\\f', ['\r'] = '\\r'}
local function escape(c) return escapes[c] or format("\\u%04x", c:byte()) end
local function cannot(value, reason)
  error("Cannot serialise " .. type(value) .. ": " .. reason, 0)
end
local function number(x)
  if x ~= x or x == huge or x == -huge then cannot(x, "must not be NaN or Inf") end
  return format("%.14g", x)
end
local function array_length(t)
  local max, items = 0, 0
  for k in next, t do
    if type(k) == "number" and k ~= 0 and floor(k) == k and k >= 1 then
      -- cjson keeps the largest key in a C int: a key of 2^31 or more comes out of that
      -- cast as INT_MIN (x86-64), and the table is then written as an object
      if k > max then max = k < 2147483648 and k or -2147483648 end
      items = items + 1
    else
      return -1
    end
  end
  if max > items * 2 and max > 10 then cannot(t, "excessively sparse array") end
  return max
end
local encode_value
local function encode_table(t, depth, out)
  depth = depth + 1
  if depth > 1000 then error(format("Cannot serialise, excessive nesting (%d)", depth), 0) end
  local n = array_length(t)
  if n > 0 then
    out[#out + 1] = "["
    for i = 1, n do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], depth, out)
    end
    out[#out + 1] = "]"
    return
  end
  out[#out + 1] = "{"
  local first = true
  for k, v in next, t do
    if not first then out[#out + 1] = "," end
    first = false
    if type(k) == "number" then
      out[#out + 1] = '"' .. number(k) .. '":'
    elseif type(k) == "string" then
      out[#out + 1] = '"' .. k:gsub('[%c"\\/]', escape) .. '":'
    else
      cannot(k, "table key must be a number or string")
    end
    encode_value(v, depth, out)
  end
  out[#out + 1] = "}"
end
encode_value = function(v, depth, out)
  local kind = type(v)
  if kind == "string" then
    out[#out + 1] = '"' .. v:gsub('[%c"\\/]', escape) .. '"'
  elseif kind == "number" then
    out[#out + 1] = number(v)
  elseif kind == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif kind == "table" then
    encode_table(v, depth, out)
  elseif v == nil or v == null then
    out[#out + 1] = "null"
  else
    cannot(v, "type not supported")
  end
end
cjson.encode = function(...)
  if select("#", ...) ~= 1 then argerror(1, 1, "encode", "expected 1 argument") end
  local out = {}
  local ok, e = pcall(encode_value, (...), 0, out)
  if not ok then error(position(2) .. e, 0) end
  return concat(out)
end
cjson.decode = function(...)
  if select("#", ...) ~= 1 then argerror(1, 1, "decode", "expected 1 argument") end
  local text = ...
  if type(text) == "number" then text = tostring(text) end
  if type(text) ~= "string" then
    argerror(1, 1, "decode", "string expected, got " .. (text == nil and "nil" or type(text)))
  end
  local ok, value = json_decode(text)
  if not ok then error(position(2) .. value, 0) end
  return value
end

-- Redis 7's pcall hands a script the text of an error table ({err = ...}), not the table.
local function pack(...) return {n = select("#", ...), ...} end
local function protected(f, ...)
  local res = pack(pcall(f, ...))
  if res[1] then return unpack(res, 1, res.n) end
  local e = res[2]
  if type(e) == "table" and type(e.err) == "string" then e = e.err end
  return false, e
end

local env  -- the running script's globals
local function sandboxed_loadstring(source, name)
  local f, e = loadstring(source, name)
  if f then setfenv(f, env) end
  return f, e
end
local base = {redis = redis, cjson = cjson, bit = bit,
  tonumber = tonumber, tostring = tostring, type = type, pairs = pairs, ipairs = ipairs,
  next = next, select = select, unpack = unpack, error = error, pcall = protected,
  xpcall = xpcall, assert = assert, math = math, string = string, table = table,
  coroutine = coroutine, setmetatable = setmetatable, getmetatable = getmetatable,
  rawget = rawget, rawset = rawset, rawequal = rawequal, getfenv = getfenv,
  setfenv = setfenv, loadstring = sandboxed_loadstring, load = load, gcinfo = gcinfo,
  collectgarbage = collectgarbage, newproxy = newproxy, _VERSION = _VERSION}

local function compile(source)
  local f, err = loadstring(source, "@user_script")
  return f, err
end

local function run(f, keys, argv)
  env = {KEYS = keys, ARGV = argv}
  setmetatable(env, {
    __index = function(_, name)
      if name == "_G" then return env end
      local v = base[name]
      if v == nil then
        error("Script attempted to access nonexistent global variable '"
              .. tostring(name) .. "'", 2)
      end
      return v
    end,
    __newindex = function() error("Attempt to modify a readonly table", 2) end,
  })
  setfenv(f, env)
  resp = 2
  last_line = 0
  sethook(track, "l")
  local ok, value = pcall(f)
  sethook()
  if not ok and type(value) == "table" and value.line == nil then
    value.line = last_line  -- error({err = ...}) raised by the script itself
  end
  return ok, value, resp
end

return compile, run
"""
