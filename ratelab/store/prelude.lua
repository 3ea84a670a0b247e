-- SimStore's prelude (ratelab/store/lualib.py reads it as PRELUDE).
-- The Lua side of a script run. Called once per runtime with the Python functions it needs,
-- cjson's null (a userdata) and the limits; returns compile(source) and run(f, keys, argv),
-- which gives (ok, value, the protocol the script ended in). Everything it uses is a local taken
-- at the start: at the end it empties the runtime's globals and leaves only what a script sees.
local dispatch, sha1hex, bitop, json_decode, null, new_table, memory_limit,
      REDIS_VERSION, REDIS_VERSION_NUM, STEP_LIMIT, STEP_LIMIT_ERROR,
      MEMORY_LIMIT_BYTES, MEMORY_LIMIT_ERROR = ...
local G = _G  -- the runtime's real globals (lupa's `python`, os, io, debug ... until the end)
local getinfo, sethook = debug.getinfo, debug.sethook
local next, type, tostring, tonumber, select, error, pcall, xpcall, unpack, assert =
  next, type, tostring, tonumber, select, error, pcall, xpcall, unpack, assert
local pairs, ipairs, rawget, rawset, rawequal, setmetatable, getmetatable =
  pairs, ipairs, rawget, rawset, rawequal, setmetatable, getmetatable
local getfenv, setfenv, loadstring, load, collectgarbage, gcinfo =
  getfenv, setfenv, loadstring, load, collectgarbage, gcinfo
local string, table, math, coroutine, VERSION = string, table, math, coroutine, _VERSION
local format, sub, find, gsub, byte =
  string.format, string.sub, string.find, string.gsub, string.byte
local floor, max, huge, concat = math.floor, math.max, math.huge, table.concat
local MEMORY_ERROR = "not enough memory"  -- the text Lua gives an allocation it was refused

-- Python code runs with the memory limit lifted: lupa cannot recover from an allocation Lua
-- refuses while Python is using the runtime (its lock stays taken, and the next call hangs).
-- A Python error comes back as its text, so that no Python object reaches a script.
getmetatable(dispatch).__metatable = false  -- lupa's metatable for every Python object
local function back_in_limit(limited, ok, ...)  -- (no table: the memory may be full)
  if not ok then
    local e = tostring((...))
    memory_limit(limited)
    error(e, 0)
  end
  memory_limit(limited)
  return ...
end
local function outside_memory_limit(py)
  return function(...)
    local limited = memory_limit(false)
    return back_in_limit(limited, pcall(py, ...))
  end
end
dispatch, sha1hex = outside_memory_limit(dispatch), outside_memory_limit(sha1hex)
bitop, json_decode = outside_memory_limit(bitop), outside_memory_limit(json_decode)

local env  -- the running script's globals

-- The script's current line: from the caller's frame, or (after a tail call such as
-- `return redis.call(...)`, which replaces that frame) from a line hook. The hook also counts
-- the script's steps (a line run, a loop's turn, a call: every turn of a loop is one, so a loop
-- cannot run without being counted) and stops the script after STEP_LIMIT of them. Lua 5.1's
-- count hook is no use here: a count that falls due while the line hook's own code runs is
-- dropped, and in a tight loop nearly all of them are.
local last_line = 0
local steps, stopped_at = 0, nil
local loaded_code = false  -- whether the script compiled code of its own (loadstring, load)
local run  -- (below) with new_table, what Python calls: the limit never stops their own lines
local function stop()  -- called by a hook: the running function (level 3) is stopped
  local running = getinfo(3, "Sf")
  if running.func == run or running.func == new_table then return end
  if stopped_at == nil then
    stopped_at = running.source == "@user_script" and running.currentline or last_line
  end
  error({err = STEP_LIMIT_ERROR, line = stopped_at})
end
local function main_hook(_, line)
  steps = steps + 1
  if steps > STEP_LIMIT then stop() end
  -- a function of the script's has its globals; the prelude's and lupa's have the runtime's
  if getfenv(2) == env and (not loaded_code or getinfo(2, "S").source == "@user_script") then
    last_line = line
  end
end
local function coroutine_hook()  -- a coroutine's lines are not the script's line: count only
  steps = steps + 1
  if steps > STEP_LIMIT then stop() end
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
  if sub(text, 1, 1) == "-" then
    local space = find(text, " ", 1, true)
    if space then code, msg = sub(text, 2, space - 1), sub(text, space + 1)
    else msg = sub(text, 2) end
  end
  msg = gsub(gsub(msg, "^[\r\n]+", ""), "[\r\n]+$", "")
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
  if sub(s, 1, 1) ~= "-" then s = "-" .. s end
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
    return bitop(name, unpack(args, 1, max(1, #args)))
  end
end
for _, name in ipairs({"tobit", "bnot", "bswap"}) do bitfn(name, 1) end
for _, name in ipairs({"band", "bor", "bxor"}) do bitfn(name, -1) end
for _, name in ipairs({"lshift", "rshift", "arshift", "rol", "ror"}) do bitfn(name, 2) end
bitfn("tohex", -2)

-- cjson: encoding walks the table in Lua (so keys come in Lua's order, as on the server).
-- null's metatable is hidden: a script could give it a __gc, which Lua 5.1 runs with hooks off.
getmetatable(null).__tostring = function() return "userdata: (nil)" end
getmetatable(null).__metatable = false
local cjson = {null = null}
local escapes = {['"'] = '\\"', ['\\'] = '\\\\', ['/'] = '\\/', ['\b'] = '\\b',
                 ['\t'] = '\\t', ['\n'] = '\\n', ['\f'] = '\\f', ['\r'] = '\\r'}
local function escape(c) return escapes[c] or format("\\u%04x", byte(c)) end
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
      out[#out + 1] = '"' .. gsub(k, '[%c"\\/]', escape) .. '":'
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
    out[#out + 1] = '"' .. gsub(v, '[%c"\\/]', escape) .. '"'
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
-- (No table of its own: a script may call it with its memory full.)
local function error_text(ok, ...)
  if ok then return ok, ... end
  local e = ...
  if type(e) == "table" and type(e.err) == "string" then e = e.err end
  return false, e
end
local function protected(f, ...) return error_text(pcall(f, ...)) end

-- xpcall, whose handler is left out once the step limit has stopped the script: that error is
-- raised by the hook, where hooks are off, so a handler called then could run for ever.
local function script_xpcall(...)
  local f, handler = ...
  if select("#", ...) < 2 then argerror(1, 2, "xpcall", "value expected") end
  return xpcall(f, function(e)
    if stopped_at ~= nil then return e end
    return handler(e)
  end)
end

-- Redis's Lua reads every chunk as text, never as bytecode (which can break out of Lua 5.1's
-- VM): a chunk that starts as bytecode does ("\27Lua") is read as text here too, after a
-- space, and fails there as it fails on the server ("unexpected symbol near 'char(27)'").
local function as_text(chunk)
  if type(chunk) == "string" and byte(chunk, 1) == 27 then return " " .. chunk end
  return chunk
end
local function with_script_globals(f, e)  -- what loadstring / load give back
  if f then
    setfenv(f, env)
    loaded_code = true
  end
  return f, e
end
local function is_text(v) return type(v) == "string" or type(v) == "number" end
local function expect(ok, i, own, wanted, ...)  -- luaL's check of argument i (of ...), in its words
  if not ok then
    local kind = select("#", ...) < i and "no value" or type((select(i, ...)))
    argerror(2, i, own, wanted .. " expected, got " .. kind)
  end
end
local function sandboxed_loadstring(...)
  local source, name = ...
  expect(is_text(source), 1, "loadstring", "string", ...)
  expect(name == nil or is_text(name), 2, "loadstring", "string", ...)
  if name == nil then name = source end  -- the chunk's name is its text, as it was given
  return with_script_globals(loadstring(as_text(source), name))
end
local function sandboxed_load(...)
  local reader, name = ...
  expect(type(reader) == "function", 1, "load", "function", ...)
  expect(name == nil or is_text(name), 2, "load", "string", ...)
  local first = true
  return with_script_globals(load(function()
    local piece = reader()
    if piece ~= nil and not is_text(piece) then
      -- luaL_error's text, with the script's position (4 frames up from here); the server's
      -- error handler makes it an error table, which load hands back
      error({err = "ERR " .. position(4) .. "reader function must return a string"})
    end
    if first then first, piece = false, as_text(piece) end
    return piece
  end, name))
end

-- A coroutine counts its steps too. Lua 5.1 gives a new coroutine the running one's C hook but
-- not the Lua function behind it (debug.sethook keeps one per coroutine), so the body sets it.
local function counted(f, name)  -- f, as the body of a coroutine that counts its steps
  if type(f) ~= "function" or getinfo(f, "S").what == "C" then
    argerror(2, 1, name, "Lua function expected")
  end
  return function(...)
    sethook(coroutine_hook, "l")
    return f(...)
  end
end
local cocreate, cowrap = coroutine.create, coroutine.wrap
local script_coroutine = {resume = coroutine.resume, yield = coroutine.yield,
  status = coroutine.status, running = coroutine.running,
  create = function(f) return cocreate(counted(f, "create")) end,
  wrap = function(f) return cowrap(counted(f, "wrap")) end}

-- What a script's globals hold: what the server's hold (no getfenv, setfenv, newproxy, print).
local base = {redis = redis, cjson = cjson, bit = bit,
  tonumber = tonumber, tostring = tostring, type = type, pairs = pairs, ipairs = ipairs,
  next = next, select = select, unpack = unpack, error = error, pcall = protected,
  xpcall = script_xpcall, assert = assert, math = math, string = string, table = table,
  coroutine = script_coroutine, setmetatable = setmetatable, getmetatable = getmetatable,
  rawget = rawget, rawset = rawset, rawequal = rawequal,
  loadstring = sandboxed_loadstring, load = sandboxed_load, gcinfo = gcinfo,
  collectgarbage = collectgarbage, _VERSION = VERSION}

-- A script's globals: its own table (KEYS, ARGV), then base through a table __index (no call,
-- so no hook, on each read), then an error for any other name. getmetatable(_G) gives a
-- stand-in: the real metatable is shared by every run and leads to base, which no script may
-- change.
local function readonly() error("Attempt to modify a readonly table", 2) end
local function missing_global(_, name)
  if name == "_G" then return env end
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end
setmetatable(base, {__index = missing_global})
local env_meta = {__index = base, __newindex = readonly,
                  __metatable = {__index = missing_global, __newindex = readonly}}

local function compile(source)  -- (f, nil) or (nil, the compiler's error)
  local f, err = loadstring(as_text(source), "@user_script")
  return f, err
end

-- The value a script failed with, made plain (text, a number ...; Redis's error table as a new
-- {err = , line = }), so that Python reads it without running any of the script's code.
local function plain(x)
  local kind = type(x)
  if kind == "string" or kind == "number" or kind == "boolean" or kind == "nil" then return x end
  return tostring(x)
end
local function settle(e)  -- run under the step and memory limits: e's metamethods are the script's
  if type(e) ~= "table" then return plain(e) end
  local err = e.err
  if err == nil then return tostring(e) end
  local line = e.line
  if line == nil then line = last_line end  -- error({err = ...}) raised by the script itself
  return {err = plain(err), line = plain(line)}
end
-- The collector's settings before any script: one may change them (setpause 1e9, or "stop",
-- would leave every later script's garbage in place), so each run starts from these, and from
-- a full collection when the memory left over from earlier runs is half the limit.
local GC_PAUSE = collectgarbage("setpause", 200)
local GC_STEPMUL = collectgarbage("setstepmul", 200)
collectgarbage("setpause", GC_PAUSE)
collectgarbage("setstepmul", GC_STEPMUL)

run = function(f, keys, argv)
  if collectgarbage("count") * 1024 > MEMORY_LIMIT_BYTES / 2 then collectgarbage("collect") end
  collectgarbage("setpause", GC_PAUSE)
  collectgarbage("setstepmul", GC_STEPMUL)
  env = setmetatable({KEYS = keys, ARGV = argv}, env_meta)
  setfenv(f, env)
  resp, last_line, steps, stopped_at, loaded_code = 2, 0, 0, nil, false
  sethook(main_hook, "l")
  memory_limit(true)
  local ok, value = pcall(f)
  if not ok and stopped_at == nil then
    local settled, e = pcall(settle, value)
    if settled then value = e
    else value = type(e) == "string" and e or "the script's error could not be read" end
  end
  memory_limit(false)
  sethook()
  if stopped_at ~= nil then
    return false, {err = STEP_LIMIT_ERROR, line = stopped_at}, resp
  end
  if not ok and type(value) == "string" and sub(value, -#MEMORY_ERROR) == MEMORY_ERROR then
    return false, {err = MEMORY_LIMIT_ERROR, line = last_line}, resp
  end
  return ok, value, resp
end

-- The runtime's real globals: emptied of what only the prelude may use and left with what a
-- script may see. (No metatable: lupa reads the global `debug` before each call into Lua,
-- outside any protected call, where an error would abort the process.)
for name in next, G do G[name] = nil end
for name, value in next, base do G[name] = value end

return compile, run
