"""What a script sees inside SimStore: the `redis` table and the libraries Redis 7.0 loads
(``cjson``, ``bit``), in the sandbox Redis 7.0 gives scripts.

The script runs in real Lua 5.1 (lupa), the version Redis embeds, so tables iterate in the
same order as on a server and ``cjson.encode`` of a table lists its keys as Redis does. The
parts that are arithmetic or parsing are done by Python, as faithfully as the server does them:
``bit`` with BitOp's number conversion (a double added to 2^52 + 2^51 and its low 32 bits
kept), and ``cjson.decode`` with the standard library's JSON reader.

The sandbox is meant to hold a script that is not trusted (a grader runs students' scripts in
its own process). A script sees the globals the reference server (Debian's redis-server
7.0.15, which the differential tests run against) leaves it: ``string``, ``table``, ``math``,
``coroutine``, ``cjson``, ``bit``, ``redis`` and the base functions but ``getfenv``,
``setfenv``, ``newproxy``, ``print``, ``dofile``, ``loadfile``, ``require`` and ``module``
(upstream 7.0.15 still has the first three; Debian's build does not). After the prelude has
taken what it needs as locals, the runtime's real global table is emptied — lupa's
``python``, ``os``, ``io``, ``debug``, ``package`` and the raw ``load`` go — and given only
those names. ``load`` and ``loadstring`` give what they compile the script's own globals, and
read a chunk that starts as bytecode does as text, as the server does (bytecode can break out
of Lua 5.1's VM). No Python object reaches a script: Python's errors come back as text, lupa's
metatable for Python objects is hidden, and lupa's attribute filter refuses every attribute.

A script is stopped after :data:`SCRIPT_STEP_LIMIT` steps (a step: a line run, a loop's turn
or a call, as Lua's line hook counts them, in coroutines too), and gets an error once the Lua
state holds more than :data:`SCRIPT_MEMORY_LIMIT_BYTES`; the store goes on working after either.

Known limits (what SimStore does not reproduce):

* ``cjson.decode`` of text that is not JSON: the server's error names what it expected and the
  token it found ("Expected comma or array end but found T_END at character 5"); SimStore's
  has the same form and, mostly, the same character, but says "Expected value" and names the
  token only as "invalid token" / "invalid number" / T_END. (The numbers cjson reads where JSON
  does not — ``0x10``, ``inf``, ``nan``, ``01``, ``+1``, ``1.`` — SimStore reads too.)
* ``cmsgpack`` and ``struct`` are not there (a script that uses them gets Redis's error for a
  missing global); ``redis.acl_check_cmd`` neither; ``math.random`` is Lua's, not Redis's.
* A script that runs past the step limit is stopped with an error reply
  (:data:`STEP_LIMIT_ERROR`). Redis has no such limit: it keeps running the script, answers
  BUSY to other clients after ``lua-time-limit`` (5 s) and stops it only on SCRIPT KILL.
  SimStore cannot make other clients wait in virtual time, so it stops the script instead.
  The limit counts Lua's steps, not time: a library function written in C runs to its end
  within one step, so a step that calls ``string.rep`` on megabytes, ``table.sort`` on a large
  table or ``collectgarbage()`` can take long, and a backtracking pattern
  (``string.find(s, ("a*"):rep(30) .. "b")``) longer than any grader waits (as on the server,
  where SCRIPT KILL cannot stop it either). So can making many long strings that differ only
  where Lua 5.1's string hash does not look (it reads at most 32 of a string's characters):
  each new one is compared with all those that hash alike. A grader that must bound time
  should run SimStore in a process of its own, with a timeout.
* Redis sets no memory limit of its own on scripts; SimStore's (:data:`MEMORY_LIMIT_ERROR`)
  stands for the server's memory running out. The libraries' tables (``string``, ``math``,
  ...) can be written to by a script, where Redis makes them read-only, and what a script
  keeps there stays for the next one (memory included).
* ``getmetatable(cjson.null)`` is false (the server's null is a light userdata: nil).
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any, Callable

from .cnum import strtod

REDIS_VERSION = "7.0.15"
"""The Redis release SimStore follows (what ``redis.REDIS_VERSION`` reports to a script)."""
REDIS_VERSION_NUM = 0x0007000F
"""The same as one number, 0x00MMmmpp (``redis.REDIS_VERSION_NUM``)."""

SCRIPT_STEP_LIMIT = 5_000_000
"""How many steps a script may take before SimStore stops it. A step is what Lua's line hook
sees: a new line run, a loop's turn, a function entered. A lesson's script takes tens to a few
thousand; a loop that never ends reaches the limit in one to two seconds."""
SCRIPT_MEMORY_LIMIT_BYTES = 64 * 2**20
"""How much memory the Lua state may take, beyond an empty runtime's, while a script runs
(the prelude and the scripts compiled so far count in it)."""
STEP_LIMIT_ERROR = ("ERR Script killed after {steps} steps (SimStore's step limit: Redis would "
                    "keep running it and answer BUSY to other clients)")
"""The error reply of a script stopped by the step limit of {steps} (its position follows)."""
MEMORY_LIMIT_ERROR = ("ERR Script killed: not enough memory (SimStore's Lua memory limit is "
                      "{mib:g} MiB)")
"""The error reply of a script that asked for more Lua memory than {mib} MiB."""

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


# The Lua side of a script run (prelude.lua, beside this file): called once per runtime with the
# Python functions it needs, cjson's null (a userdata) and the limits; returns compile(source) and
# run(f, keys, argv). Read as text: it is compiled into each runtime (sim._prelude_bytecode).
PRELUDE = (Path(__file__).resolve().parent / "prelude.lua").read_text()

