"""SimStore: an in-process store with Redis semantics, in virtual time, running real Lua.

Replies have the shapes redis-py gives for raw RESP2 with ``decode_responses=True``:
a bulk string is ``str``, an integer ``int``, nil ``None``, an array ``list``, a status reply a
:class:`Status` (a ``str``: ``Status("OK") == "OK"``), and an error a :class:`StoreError` —
raised, or an element of EXEC's array. Command names are case-insensitive; arguments may be
``str``, ``bytes``, ``int`` or ``float`` (a float is sent as ``repr(x)``, as redis-py does).

Time is virtual: the store reads ``clock()`` (seconds) whenever a command needs the time, and
keys expire when the clock passes their deadline (kept in whole milliseconds, like Redis).
Every command runs to completion before the next starts — there is one caller at a time, as
in Redis — and a Lua script runs inside one command, so it is atomic.

Connections (``store.connect(name)``) hold what Redis keeps per client: MULTI's queue and the
WATCHed keys. As in Redis 7.0, a command's name, subcommand and number of arguments are
checked before it runs or is queued: one refused inside MULTI spoils the transaction, and EXEC
then answers EXECABORT and runs none of it.

What SimStore follows is redis-server 7.0 (:data:`~ratelab.store.lualib.REDIS_VERSION`), held
to it by a seeded differential run over every command here
(``tests/differential.py``, ``scripts/store_differential.py``). Scripts see what
:mod:`ratelab.store.lualib` describes (cjson, bit, redis.setresp ...). BYLEX ranges walk a
sorted set as Redis walks a small one (up to 128 members). SCRIPT HELP and SCRIPT DEBUG are
not here (answered as unknown subcommands).

A script may be untrusted (a grader runs students' scripts in its own process): it reaches
nothing of Python's and none of Lua's os, io or debug, and the store stops it, with an error
reply, after ``SimStore.script_step_limit`` steps or when its Lua memory passes
``SimStore.script_memory_limit_bytes``; the next command runs as usual. Redis has no step limit:
it would keep running the script and answer BUSY to other clients until SCRIPT KILL, which
cannot happen in virtual time, so SimStore stops it (see lualib's "Known limits").

Why one module of about 1,100 lines: :class:`SimStore` is the keyspace and its command table —
one method per Redis command, grouped by data type as Redis's documentation groups them — and
every command reads and writes the same keyspace, expiry and WATCH bookkeeping; split by data
type, each part would reach into the others' private state. What a script sees lives apart, in
:mod:`ratelab.store.lualib` and ``prelude.lua``.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
from typing import Any, Callable

import lupa.lua51 as lupa

from . import errors as E
from .errors import StoreError
from .cnum import strtod
from .lualib import (MEMORY_LIMIT_ERROR, PRELUDE, REDIS_VERSION, REDIS_VERSION_NUM,
                     SCRIPT_MEMORY_LIMIT_BYTES, SCRIPT_STEP_LIMIT, STEP_LIMIT_ERROR, bit_op,
                     json_decoder)


class Status(str):
    """A status reply ("OK", "QUEUED"), as opposed to a bulk string with the same text."""


OK = Status("OK")
QUEUED = Status("QUEUED")

_INT = re.compile(r"(0|-?[1-9][0-9]*)\Z")         # string2ll: no "+1", "01" or "-0"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _c_string(text: str) -> str:
    """`text` as C's string functions see it: up to its first NUL."""
    return text.split("\0", 1)[0]


def _arg(x: Any) -> str:
    """A command argument as the text Redis would receive."""
    if isinstance(x, str):
        return x
    if isinstance(x, bytes):
        return x.decode("utf-8", "surrogateescape")
    if isinstance(x, bool):
        raise TypeError(f"a bool is not a valid command argument: {x!r}")
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return repr(x)
    raise TypeError(f"not a valid command argument: {x!r}")


def parse_int(text: str, error: str = E.NOT_INTEGER) -> int:
    """`text` as a 64-bit integer, strictly as Redis parses it ("01", " 1", "+1" are errors)."""
    if not _INT.match(text):
        raise StoreError(error)
    n = int(text)
    if not INT64_MIN <= n <= INT64_MAX:
        raise StoreError(error)
    return n


def parse_float(text: str, error: str = E.NOT_FLOAT) -> float:
    """`text` as a double, as Redis reads a score (string2d): the whole text is one number
    strtod reads, "inf" and hex ("0x10") included; no leading space, no "nan", and nothing out
    of a double's range ("1e400", "1e-400")."""
    read = strtod(text)
    if (not text or text[0] in " \t\n\v\f\r" or read is None or read[1] != len(text)
            or read[2] or math.isnan(read[0])):
        raise StoreError(error)
    return read[0]


def format_score(x: float) -> str:
    """A score as Redis 7.0 writes it (%.17g; 'inf' / '-inf')."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return "%.17g" % x


def _bound(text: str) -> tuple[float, bool]:
    """A score-range bound as Redis 7.0 reads it (zslParseRange): (value, exclusive).

    "(" makes it exclusive; the rest goes to strtod, which must read up to the end of the
    (C) string: leading white space, hex ("0x10", "0x1p3"), "inf" / "-inf" / "+inf" and
    out-of-range numbers ("1e400" is inf) are accepted, NaN and trailing characters refused —
    and an empty bound ("" or "(") reads as 0, as strtod leaves it."""
    exclusive = text.startswith("(")
    body = _c_string(text[1:] if exclusive else text)
    read = strtod(body)
    if read is None:
        if body:
            raise StoreError("ERR min or max is not a float")
        return 0.0, exclusive
    value, used, _ = read
    if used != len(body) or math.isnan(value):
        raise StoreError("ERR min or max is not a float")
    return value, exclusive


_LEX_MIN, _LEX_MAX = object(), object()  # "-" and "+": below and above every member


def _lex_bound(text: str) -> tuple[Any, bool]:
    """A BYLEX bound: "[m" inclusive, "(m" exclusive, "-" / "+" the ends (exclusive)."""
    if text in ("-", "+"):
        return (_LEX_MIN if text == "-" else _LEX_MAX), True
    if text[:1] in ("[", "("):
        return text[1:], text[0] == "("
    raise StoreError("ERR min or max not valid string range item")


def _lex_cmp(a: Any, b: Any) -> int:
    """Compare two lex bounds or members as Redis does (bytes, with "-" and "+" at the ends)."""
    if a is b:
        return 0
    if a is _LEX_MIN or b is _LEX_MAX:
        return -1
    if a is _LEX_MAX or b is _LEX_MIN:
        return 1
    x, y = (v.encode("utf-8", "surrogateescape") for v in (a, b))
    return (x > y) - (x < y)


def _c_format(text: str, limit: int) -> str:
    """`text` as C's printf("%.*s") writes it: up to its first NUL, at most `limit` bytes."""
    raw = _c_string(text).encode("utf-8", "surrogateescape")[:max(0, limit)]
    return raw.decode("utf-8", "surrogateescape")


def _one_line(text: str) -> str:
    """An error text with CR and LF made spaces, as Redis does with text the user sent."""
    return text.replace("\r", " ").replace("\n", " ")


class _Unknown(StoreError):
    """An unknown command or subcommand (a script is told so in other words)."""


def _unknown_command(words: list[str]) -> StoreError:
    """Redis 7.0's reply to a command it does not know: the name and the first arguments,
    quoted, cut to 128 bytes."""
    shown = ""
    for w in words[1:]:
        if len(shown.encode("utf-8", "surrogateescape")) >= 128:
            break
        shown += f"'{_c_format(w, 128 - len(shown.encode('utf-8', 'surrogateescape')))}' "
    return _Unknown(_one_line(f"ERR unknown command '{_c_format(words[0], 128)}', "
                                f"with args beginning with: {shown}"))


def _lookup(words: list[str]) -> Callable:
    """The method for a command, after Redis's checks of its name, subcommand and arity (the
    checks made before a command runs, or is queued in MULTI); StoreError otherwise."""
    name = words[0].upper()
    spec = COMMANDS.get(name)
    if spec is None:
        raise _unknown_command(words)
    method, arity = spec
    fullname = name.lower()
    subs = SUBCOMMANDS.get(name)
    if subs is not None and len(words) > 1:
        sub = words[1].upper()
        if sub not in subs:
            raise _Unknown(_one_line(f"ERR unknown subcommand '{_c_format(words[1], 128)}'. "
                                       f"Try {name} HELP."))
        arity, fullname = subs[sub], f"{fullname}|{sub.lower()}"
    n = len(words)
    if (arity >= 0 and n != arity) or (arity < 0 and n < -arity):
        raise StoreError(E.arity(fullname))
    return method


class ZSet:
    """A sorted set: member -> score, and the (score, member) order Redis keeps."""

    __slots__ = ("scores", "order")

    def __init__(self) -> None:
        self.scores: dict[str, float] = {}
        self.order: list[tuple[float, str]] = []

    def add(self, member: str, score: float) -> None:
        """Set `member`'s score (insert or move). A score of -0 is kept as 0, as Redis's
        compact encoding of a small sorted set keeps it (ZSCORE then says "0")."""
        score += 0.0
        self.remove(member)
        self.scores[member] = score
        bisect.insort(self.order, (score, member))

    def remove(self, member: str) -> bool:
        """Remove `member`; whether it was there."""
        if member not in self.scores:
            return False
        score = self.scores.pop(member)
        del self.order[bisect.bisect_left(self.order, (score, member))]
        return True

    def in_lex_range(self, lo: tuple[Any, bool], hi: tuple[Any, bool],
                     rev: bool) -> list[tuple[float, str]]:
        """The (score, member) pairs a BYLEX range gives, walked as Redis walks a small sorted
        set (a listpack: up to 128 members): from the first member at or above `lo` (the last
        at or below `hi` when `rev`) for as long as members stay in range. Meant for members
        that share one score; with mixed scores it answers as Redis does for small sets."""
        (a, ax), (b, bx) = lo, hi
        c = _lex_cmp(a, b)
        if c > 0 or (c == 0 and (ax or bx)) or not self.order:
            return []

        def above_lo(m):
            return _lex_cmp(m, a) > 0 if ax else _lex_cmp(m, a) >= 0

        def below_hi(m):
            return _lex_cmp(m, b) < 0 if bx else _lex_cmp(m, b) <= 0

        if not above_lo(self.order[-1][1]) or not below_hi(self.order[0][1]):
            return []
        order = self.order[::-1] if rev else self.order
        first, still = (below_hi, above_lo) if rev else (above_lo, below_hi)
        out = []
        for i, (score, member) in enumerate(order):
            if first(member):
                for pair in order[i:]:
                    if not still(pair[1]):
                        break
                    out.append(pair)
                break
        return out

    def in_range(self, lo: tuple[float, bool], hi: tuple[float, bool]) -> list[tuple[float, str]]:
        """The (score, member) pairs with lo <= score <= hi (ends exclusive when flagged)."""
        (a, ax), (b, bx) = lo, hi
        return [(s, m) for s, m in self.order
                if (s > a if ax else s >= a) and (s < b if bx else s <= b)]


# Which commands a script may not call (Redis: "This Redis command is not allowed from script").
_NOT_IN_SCRIPTS = {"MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "EVAL", "EVALSHA", "SCRIPT"}

class SimStore:
    """An in-process Redis in virtual time: strings, counters, hashes, sorted sets, expiry,
    MULTI/EXEC with WATCH, and Lua scripts (EVAL, EVALSHA, SCRIPT LOAD) run atomically, in a
    sandbox that holds a script nobody trusts (no Python, os or io; a step and a memory limit).

    clock   a function returning the current time in seconds; without one the store keeps its
            own time, moved with :meth:`set_time` (starts at 0).

    A script that runs past :attr:`script_step_limit` steps is stopped with an error reply
    (Redis would run on, answering BUSY until SCRIPT KILL: virtual time cannot wait for that);
    one whose Lua memory passes :attr:`script_memory_limit_bytes` gets "not enough memory".
    """

    kind = "sim"
    virtual_time = True
    script_step_limit = SCRIPT_STEP_LIMIT
    """Steps a script may take before it is stopped (read when the store runs its first
    script; an instance may set its own before that)."""
    script_memory_limit_bytes = SCRIPT_MEMORY_LIMIT_BYTES
    """Memory a script's Lua state may take (read, like the step limit, at the first script)."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._own_time = 0.0
        self.clock = clock if clock is not None else (lambda: self._own_time)
        self._data: dict[str, Any] = {}
        self._deadline_ms: dict[str, int] = {}
        self._version: dict[str, int] = {}
        self._writes = 0
        self._scripts: dict[str, Any] = {}
        self._lua = None
        self._memory_limited = False
        self.commands_executed = 0
        self._default = SimConnection(self, "default")

    # -- time and connections -----------------------------------------------------------

    def set_time(self, now: float) -> None:
        """Move the store's own clock to `now` seconds (only without a `clock`)."""
        self._own_time = float(now)

    def now_ms(self) -> int:
        """The current virtual time in whole milliseconds."""
        return math.floor(self.clock() * 1000 + 1e-6)

    def connect(self, name: str = "client") -> "SimConnection":
        """A new connection (its own MULTI queue and WATCHed keys)."""
        return SimConnection(self, name)

    def execute(self, *args: Any) -> Any:
        """Run one command on the store's default connection; return its reply."""
        return self._default.execute(*args)

    def close(self) -> None:
        """Nothing to release (same verb as RedisStore)."""

    def keys(self) -> list[str]:
        """Every live key, sorted (for inspection and tests)."""
        return sorted(k for k in list(self._data) if self._live(k))

    # -- keyspace -----------------------------------------------------------------------

    def _live(self, key: str) -> bool:
        """Whether `key` exists now (an expired key is deleted on the way, as Redis does)."""
        if key not in self._data:
            return False
        deadline = self._deadline_ms.get(key)
        if deadline is not None and self.now_ms() > deadline:
            self._delete(key)
            return False
        return True

    def _delete(self, key: str) -> bool:
        existed = self._data.pop(key, None) is not None
        self._deadline_ms.pop(key, None)
        if existed:
            self._touch(key)
        return existed

    def _touch(self, key: str) -> None:
        self._writes += 1
        self._version[key] = self._writes

    def version(self, key: str) -> int:
        """A number that changes whenever `key` is written, deleted or expires (for WATCH)."""
        self._live(key)
        return self._version.get(key, 0)

    def _get(self, key: str, kind: type) -> Any:
        """The value at `key` if it is of `kind`, None if absent; WRONGTYPE otherwise."""
        if not self._live(key):
            return None
        value = self._data[key]
        if not isinstance(value, kind):
            raise StoreError(E.WRONGTYPE)
        return value

    def _put(self, key: str, value: Any, keep_ttl: bool = True) -> None:
        if not keep_ttl:
            self._deadline_ms.pop(key, None)
        self._data[key] = value
        self._touch(key)

    # -- dispatch -----------------------------------------------------------------------

    def _run(self, conn: "SimConnection", args: tuple, from_script: bool = False) -> Any:
        """Execute one command (already outside MULTI handling); return the reply or raise."""
        if not args:
            raise StoreError("ERR empty command")
        words = [_arg(a) for a in args]
        name = words[0].upper()
        if from_script:
            try:
                method = _lookup(words)
            except _Unknown:
                raise StoreError("ERR Unknown Redis command called from script") from None
            except StoreError:
                raise StoreError("ERR Wrong number of args calling Redis command from script") \
                    from None
            if name in _NOT_IN_SCRIPTS:
                raise StoreError("ERR This Redis command is not allowed from script")
        else:
            method = _lookup(words)
        self.commands_executed += 1
        return method(self, conn, *words[1:])

    # -- strings and counters -----------------------------------------------------------

    def cmd_get(self, conn, key):
        return self._get(key, str)

    # SET's options, each refused (syntax error) after any in its `excludes`.
    _SET_OPTIONS = {
        "NX": ("XX",), "XX": ("NX",), "GET": (),
        "KEEPTTL": ("EX", "PX", "EXAT", "PXAT"),
        "EX": ("KEEPTTL", "PX", "EXAT", "PXAT"), "PX": ("KEEPTTL", "EX", "EXAT", "PXAT"),
        "EXAT": ("KEEPTTL", "EX", "PX", "PXAT"), "PXAT": ("KEEPTTL", "EX", "EXAT", "PX"),
    }

    def cmd_set(self, conn, key, value, *opts):
        """SET as Redis 7.0 parses it: an option may repeat (the last expiry wins), but not
        meet one it conflicts with (NX with XX, two kinds of expiry, KEEPTTL with an expiry);
        then the expiry's value is checked, then GET's type, then NX / XX."""
        flags: set[str] = set()
        expire = None
        i = 0
        while i < len(opts):
            o = opts[i].upper()
            takes_value = o in ("EX", "PX", "EXAT", "PXAT")
            if (o not in self._SET_OPTIONS or flags.intersection(self._SET_OPTIONS[o])
                    or (takes_value and i + 1 >= len(opts))):
                raise StoreError(E.SYNTAX)
            flags.add(o)
            if takes_value:
                expire = (o, opts[i + 1])
                i += 1
            i += 1
        deadline_ms = None
        if expire is not None:
            unit, text = expire
            n = parse_int(text)
            if n <= 0 or (unit in ("EX", "EXAT") and n > INT64_MAX // 1000):
                raise StoreError("ERR invalid expire time in 'set' command")
            ms = n * 1000 if unit in ("EX", "EXAT") else n
            if unit in ("EX", "PX"):
                if ms > INT64_MAX - self.now_ms():
                    raise StoreError("ERR invalid expire time in 'set' command")
                ms += self.now_ms()
            deadline_ms = ms
        old = self._get(key, str) if "GET" in flags else None
        exists = self._live(key)
        if ("NX" in flags and exists) or ("XX" in flags and not exists):
            return old if "GET" in flags else None
        self._put(key, value, keep_ttl="KEEPTTL" in flags)
        if deadline_ms is not None:
            self._deadline_ms[key] = deadline_ms
        return old if "GET" in flags else OK

    def _incr(self, key: str, by: int) -> int:
        current = self._get(key, str)
        n = 0 if current is None else parse_int(current)
        if not INT64_MIN <= n + by <= INT64_MAX:
            raise StoreError(E.OVERFLOW)
        self._put(key, str(n + by))
        return n + by

    def cmd_incr(self, conn, key):
        return self._incr(key, 1)

    def cmd_decr(self, conn, key):
        return self._incr(key, -1)

    def cmd_incrby(self, conn, key, by):
        return self._incr(key, parse_int(by))

    def cmd_decrby(self, conn, key, by):
        n = parse_int(by)
        if n == INT64_MIN:
            raise StoreError("ERR decrement would overflow")
        return self._incr(key, -n)

    # -- keys and expiry ----------------------------------------------------------------

    def cmd_del(self, conn, *keys):
        return sum(self._live(k) and self._delete(k) for k in keys)

    def cmd_exists(self, conn, *keys):
        return sum(1 for k in keys if self._live(k))

    def _expire(self, key: str, ms: int, flags: set[str] = frozenset()) -> int:
        if not self._live(key):
            return 0
        current = self._deadline_ms.get(key)          # None: no TTL, an infinite one
        deadline = self.now_ms() + ms
        if (("NX" in flags and current is not None) or ("XX" in flags and current is None)
                or ("GT" in flags and (current is None or deadline <= current))
                or ("LT" in flags and current is not None and deadline >= current)):
            return 0
        if ms <= 0:
            self._delete(key)
        else:
            self._deadline_ms[key] = self.now_ms() + ms
            self._touch(key)
        return 1

    def _expire_ms(self, command: str, n: int, unit_ms: int) -> int:
        """EXPIRE's argument in milliseconds, refused (as Redis does) when the deadline it
        gives would not fit in 64 bits."""
        if unit_ms > 1 and not -(INT64_MAX // unit_ms) <= n <= INT64_MAX // unit_ms:
            raise StoreError(f"ERR invalid expire time in '{command}' command")
        if n * unit_ms > INT64_MAX - self.now_ms():
            raise StoreError(f"ERR invalid expire time in '{command}' command")
        return n * unit_ms

    @staticmethod
    def _expire_flags(opts: tuple) -> set[str]:
        """EXPIRE's NX / XX / GT / LT (Redis 7), checked as Redis checks them."""
        flags = set()
        for o in opts:
            if o.upper() not in ("NX", "XX", "GT", "LT"):
                raise StoreError(f"ERR Unsupported option {o}")
            flags.add(o.upper())
        if "NX" in flags and len(flags) > 1:
            raise StoreError("ERR NX and XX, GT or LT options at the same time are not compatible")
        if {"GT", "LT"} <= flags:
            raise StoreError("ERR GT and LT options at the same time are not compatible")
        return flags

    def cmd_expire(self, conn, key, seconds, *opts):
        flags = self._expire_flags(opts)
        return self._expire(key, self._expire_ms("expire", parse_int(seconds), 1000), flags)

    def cmd_pexpire(self, conn, key, ms, *opts):
        flags = self._expire_flags(opts)
        return self._expire(key, self._expire_ms("pexpire", parse_int(ms), 1), flags)

    def cmd_pttl(self, conn, key):
        if not self._live(key):
            return -2
        deadline = self._deadline_ms.get(key)
        return -1 if deadline is None else max(0, deadline - self.now_ms())

    def cmd_ttl(self, conn, key):
        ms = self.cmd_pttl(conn, key)
        return ms if ms < 0 else (ms + 500) // 1000

    def cmd_ping(self, conn, *msg):
        if len(msg) > 1:
            raise StoreError(E.arity("ping"))
        return msg[0] if msg else Status("PONG")

    def cmd_time(self, conn):
        us = math.floor(self.clock() * 1_000_000 + 1e-3)
        return [str(us // 1_000_000), str(us % 1_000_000)]

    def cmd_flushall(self, conn, *opts):
        if len(opts) > 1 or (opts and opts[0].upper() not in ("SYNC", "ASYNC")):
            raise StoreError(E.SYNTAX)
        for key in list(self._data):
            self._delete(key)
        return OK

    # -- hashes -------------------------------------------------------------------------

    def cmd_hget(self, conn, key, field):
        h = self._get(key, dict)
        return None if h is None else h.get(field)

    def cmd_hmget(self, conn, key, *fields):
        h = self._get(key, dict) or {}
        return [h.get(f) for f in fields]

    def cmd_hgetall(self, conn, key):
        h = self._get(key, dict) or {}
        return [x for pair in h.items() for x in pair]

    def cmd_hset(self, conn, key, *pairs):
        if len(pairs) % 2:
            raise StoreError(E.arity("hset"))
        h = self._get(key, dict)
        h = {} if h is None else h
        added = 0
        for field, value in zip(pairs[::2], pairs[1::2]):  # in order: a repeated field
            added += field not in h                          # counts once, its last value stays
            h[field] = value
        self._put(key, h)
        return added

    def cmd_hincrby(self, conn, key, field, by):
        inc = parse_int(by)            # Redis reads the increment before the key
        h = self._get(key, dict)
        h = {} if h is None else h
        n = parse_int(h[field], "ERR hash value is not an integer") if field in h else 0
        if not INT64_MIN <= n + inc <= INT64_MAX:
            raise StoreError(E.OVERFLOW)
        h[field] = str(n + inc)
        self._put(key, h)
        return n + inc

    # -- sorted sets --------------------------------------------------------------------

    def cmd_zadd(self, conn, key, *args):
        flags = set()
        i = 0
        while i < len(args) and args[i].upper() in ("NX", "XX", "GT", "LT", "CH", "INCR"):
            flags.add(args[i].upper())
            i += 1
        rest = args[i:]
        if not rest or len(rest) % 2:
            raise StoreError(E.SYNTAX)
        if {"NX", "XX"} <= flags:
            raise StoreError("ERR XX and NX options at the same time are not compatible")
        if len(flags & {"GT", "LT", "NX"}) > 1:
            raise StoreError("ERR GT, LT, and/or NX options at the same time are not compatible")
        if "INCR" in flags and len(rest) != 2:
            raise StoreError("ERR INCR option supports a single increment-element pair")
        pairs = [(parse_float(s), m) for s, m in zip(rest[::2], rest[1::2])]
        z = self._get(key, ZSet)
        if z is None and "XX" in flags:
            return None if "INCR" in flags else 0
        z = ZSet() if z is None else z
        added = changed = 0
        result = None
        try:
            for score, member in pairs:
                old = z.scores.get(member)
                if ("NX" in flags and old is not None) or ("XX" in flags and old is None):
                    continue
                new = score + old if ("INCR" in flags and old is not None) else score
                if math.isnan(new):
                    raise StoreError("ERR resulting score is not a number (NaN)")
                if old is not None and (("GT" in flags and new <= old)
                                        or ("LT" in flags and new >= old)):
                    continue
                result = new
                if old is None or old != new:
                    z.add(member, new)
                    added += old is None
                    changed += 1
        finally:  # Redis signals the key modified when a member was added or moved, even
            if changed:  # when a later pair fails
                self._put(key, z)
        if "INCR" in flags:
            return None if result is None else format_score(result)
        return changed if "CH" in flags else added

    def cmd_zrem(self, conn, key, *members):
        z = self._get(key, ZSet)
        if z is None:
            return 0
        removed = sum(z.remove(m) for m in members)
        if removed:
            self._delete(key) if not z.scores else self._put(key, z)
        return removed

    def cmd_zremrangebyscore(self, conn, key, lo, hi):
        lo, hi = _bound(lo), _bound(hi)
        z = self._get(key, ZSet)
        if z is None:
            return 0
        doomed = z.in_range(lo, hi)
        for _, m in doomed:
            z.remove(m)
        if doomed:
            self._delete(key) if not z.scores else self._put(key, z)
        return len(doomed)

    def cmd_zcard(self, conn, key):
        z = self._get(key, ZSet)
        return 0 if z is None else len(z.scores)

    def cmd_zcount(self, conn, key, lo, hi):
        lo, hi = _bound(lo), _bound(hi)
        z = self._get(key, ZSet)
        return 0 if z is None else len(z.in_range(lo, hi))

    def cmd_zscore(self, conn, key, member):
        z = self._get(key, ZSet)
        score = None if z is None else z.scores.get(member)
        return None if score is None else format_score(score)

    def cmd_zrange(self, conn, key, start, stop, *opts):
        return self._zrange(key, start, stop, opts, by=None, rev=None)

    def cmd_zrangebyscore(self, conn, key, lo, hi, *opts):
        return self._zrange(key, lo, hi, opts, by="BYSCORE", rev=False)

    def cmd_zrevrangebyscore(self, conn, key, hi, lo, *opts):
        return self._zrange(key, hi, lo, opts, by="BYSCORE", rev=True)

    def cmd_zrevrange(self, conn, key, start, stop, *opts):
        return self._zrange(key, start, stop, opts, by="RANK", rev=True)

    def _zrange(self, key: str, first: str, second: str, opts: tuple, by: str | None,
                rev: bool | None) -> list:
        """ZRANGE and its older forms, as Redis 7.0's zrangeGenericCommand: options first (a
        form's own kind and direction cannot be given again), then LIMIT / WITHSCORES
        conflicts, then the range, then the key. LIMIT's offset below 0 gives nothing, and a
        count below 0 means no limit."""
        withscores = False
        offset, count = 0, -1
        i = 0
        while i < len(opts):
            o = opts[i].upper()
            if o == "WITHSCORES":
                withscores = True
            elif o == "LIMIT" and i + 2 < len(opts):
                offset, count = parse_int(opts[i + 1]), parse_int(opts[i + 2])
                i += 2
            elif o == "REV" and rev is None:
                rev = True
            elif o in ("BYSCORE", "BYLEX") and by is None:
                by = o
            else:
                raise StoreError(E.SYNTAX)
            i += 1
        rev, by = bool(rev), by or "RANK"
        if count != -1 and by == "RANK":
            raise StoreError("ERR syntax error, LIMIT is only supported in combination with "
                             "either BYSCORE or BYLEX")
        if withscores and by == "BYLEX":
            raise StoreError("ERR syntax error, WITHSCORES not supported in combination with "
                             "BYLEX")
        lo, hi = (second, first) if rev and by != "RANK" else (first, second)
        if by == "RANK":
            a, b = parse_int(lo), parse_int(hi)
        elif by == "BYSCORE":
            lo, hi = _bound(lo), _bound(hi)
        else:
            lo, hi = _lex_bound(lo), _lex_bound(hi)
        z = self._get(key, ZSet)
        if z is None:
            return []
        if by == "RANK":
            n = len(z.order)
            a, b = (a + n if a < 0 else a), (b + n if b < 0 else b)
            a, b = max(a, 0), min(b, n - 1)
            if a > b:
                items = []
            elif rev:
                items = z.order[n - 1 - b:n - a][::-1]
            else:
                items = z.order[a:b + 1]
        else:
            items = z.in_range(lo, hi) if by == "BYSCORE" else z.in_lex_range(lo, hi, rev)
            if by == "BYSCORE" and rev:
                items = items[::-1]
            if offset > 0 and offset >= len(z.order):
                items = []
            items = [] if offset < 0 else items[offset:]
            if count >= 0:
                items = items[:count]
        out = []
        for score, member in items:
            out += [member, format_score(score)] if withscores else [member]
        return out

    # -- transactions (the per-connection part lives in SimConnection) ------------------

    def cmd_watch(self, conn, *keys):
        if conn.queue is not None:  # refused, but it does not spoil the transaction
            raise StoreError("ERR WATCH inside MULTI is not allowed")
        for k in keys:
            conn.watched.setdefault(k, self.version(k))
        return OK

    def cmd_unwatch(self, conn):
        conn.watched.clear()
        return OK

    # -- scripts ------------------------------------------------------------------------

    def _lua_runtime(self):
        """The Lua runtime scripts run in (made on first use): lupa's, with nothing of
        Python's reachable from Lua, and a memory allocator that the prelude turns the
        memory limit on in while a script runs (:meth:`_memory_limit`)."""
        if self._lua is None:
            self._memory_limit_bytes = self.script_memory_limit_bytes
            lua = self._lua = lupa.LuaRuntime(
                unpack_returned_tuples=True, register_eval=False, register_builtins=False,
                attribute_filter=_no_python_attributes, max_memory=0)  # 0: no limit yet
            self._new_table = lua.eval("function() return {} end")
            self._rawget = lua.eval("rawget")
            self._lua_next = lua.eval("next")
            null = lua.eval("newproxy(true)")  # cjson.null: a userdata of its own
            prelude = lua.eval("loadstring")(_prelude_bytecode(), "=prelude")
            self._compile, self._call = prelude(
                self._dispatch_from_lua, _sha1, bit_op, json_decoder(self._new_table, null),
                null, self._new_table, self._memory_limit, REDIS_VERSION, REDIS_VERSION_NUM,
                self.script_step_limit, STEP_LIMIT_ERROR.format(steps=self.script_step_limit),
                self._memory_limit_bytes,
                MEMORY_LIMIT_ERROR.format(mib=self._memory_limit_bytes / 2**20))
        return self._lua

    def _memory_limit(self, on: bool) -> bool:
        """Turn the Lua memory limit on (while a script's own code runs) or off (while
        Python uses the runtime: lupa cannot recover from an allocation refused then); return
        whether it was on."""
        was_on, self._memory_limited = self._memory_limited, on
        self._lua.set_max_memory(self._memory_limit_bytes if on else 0)
        return was_on

    def _load(self, source: str) -> str:
        self._lua_runtime()
        sha = _sha1(source)
        if sha not in self._scripts:
            f, err = self._compile(source)
            if f is None:
                raise StoreError(f"ERR Error compiling script (new function): {err}")
            self._scripts[sha] = f
        return sha

    def cmd_script(self, conn, sub, *args):
        """SCRIPT LOAD / EXISTS / FLUSH / KILL (names and arities checked by the dispatcher)."""
        sub_u = sub.upper()
        if sub_u == "LOAD":
            return self._load(args[0])
        if sub_u == "EXISTS":
            return [int(a.lower() in self._scripts) for a in args]
        if sub_u == "KILL":  # a script here always runs to its end before the next command
            raise StoreError("NOTBUSY No scripts in execution right now.")
        if len(args) > 1 or (args and args[0].upper() not in ("SYNC", "ASYNC")):
            raise StoreError("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
        self._scripts.clear()
        return OK

    @staticmethod
    def _numkeys(numkeys: str, rest: tuple) -> int:
        """EVAL's key count, checked as Redis checks it: before the script is looked up or
        compiled."""
        n = parse_int(numkeys)
        if n > len(rest):
            raise StoreError("ERR Number of keys can't be greater than number of args")
        if n < 0:
            raise StoreError("ERR Number of keys can't be negative")
        return n

    def cmd_eval(self, conn, source, numkeys, *rest):
        n = self._numkeys(numkeys, rest)
        return self._eval(conn, self._load(source), n, rest)

    def cmd_evalsha(self, conn, sha, numkeys, *rest):
        if len(sha) != 40:  # no script can have it: Redis answers before reading numkeys
            raise StoreError(E.NOSCRIPT)
        n = self._numkeys(numkeys, rest)
        if sha.lower() not in self._scripts:
            raise StoreError(E.NOSCRIPT)
        return self._eval(conn, sha.lower(), n, rest)

    def _eval(self, conn, sha: str, n: int, rest: tuple) -> Any:
        lua = self._lua_runtime()
        self._script_conn = conn
        ok, value, resp = self._call(self._scripts[sha], lua.table_from(list(rest[:n])),
                                     lua.table_from(list(rest[n:])))
        suffix = f" script: {sha}, on @user_script:"
        if not ok:  # the prelude has made the value plain: text, or {err = text, line = n}
            if _is_table(value):
                text, line = str(self._rawget(value, "err")), self._rawget(value, "line")
                raise StoreError(f"{text}{suffix}{line or 0}.")
            text = str(value)
            m = re.match(r"user_script:(\d+):", text)
            raise StoreError(f"ERR {text}{suffix}{m.group(1) if m else 0}.")
        reply = self._reply(value, resp)
        if isinstance(reply, StoreError):
            raise reply
        return reply

    def _dispatch_from_lua(self, resp: int, *args):
        """redis.call's Python half: (True, reply as Lua) or (False, error text), the reply in
        the protocol the script chose (redis.setresp)."""
        if not args:
            return False, "ERR Please specify at least one argument for this redis lib call"
        try:
            words = [_lua_arg(a) for a in args]
        except TypeError:
            return False, "ERR Lua redis lib command arguments must be strings or integers"
        try:
            reply = self._run(self._script_conn, tuple(words), from_script=True)
        except StoreError as e:
            return False, str(e)
        if resp == 3:
            reply = _resp3(words, reply)
        return True, self._to_lua(reply)

    def _to_lua(self, reply: Any) -> Any:
        """A reply as redis.call hands it to a script: nil as false (RESP2; under RESP3 the
        caller has made it a `_Null`), a status as {ok = ...}, arrays as tables, and RESP3's
        doubles and maps as {double = x} and {map = {...}}."""
        if reply is None:
            return False
        if isinstance(reply, _Null):
            return None
        if isinstance(reply, Status):
            return self._table([("ok", str(reply))])
        if isinstance(reply, _Double):
            return self._table([("double", reply.value)])
        if isinstance(reply, _Map):
            inner = self._table([(k, self._to_lua(v)) for k, v in reply.pairs])
            return self._table([("map", inner)])
        if isinstance(reply, list):
            return self._table([(i, self._to_lua(x)) for i, x in enumerate(reply, 1)])
        return reply

    def _table(self, pairs) -> Any:
        """A Lua table filled in order, as the server fills it (so it iterates the same)."""
        t = self._new_table()
        for k, v in pairs:
            if v is not None:
                t[k] = v
        return t

    def _reply(self, value: Any, resp: int) -> Any:
        """A script's return value converted to a reply, by Redis 7.0's rules: numbers
        truncate to integers; true is 1; false is nil (0 once the script chose RESP3); a
        table is an error {err = }, a status {ok = }, a double {double = }, a map {map = }, a
        set {set = }, a big number, or else an array up to its first nil. Nested errors are
        elements (StoreError values)."""
        if value is None:
            return None
        if value is True:
            return 1
        if value is False:
            return 0 if resp == 3 else None
        if isinstance(value, (int, float)):
            # Redis casts the double to a 64-bit integer; on x86-64 a value out of range (or
            # NaN) comes out as the smallest integer.
            if not math.isfinite(value) or not INT64_MIN <= int(value) <= INT64_MAX:
                return INT64_MIN
            return int(value)
        if isinstance(value, (str, bytes)):
            return _arg(value)
        if not _is_table(value):
            return None  # a function, a userdata (cjson.null): nil
        field = self._rawget
        err = field(value, "err")
        if isinstance(err, (str, bytes)):
            return StoreError(_one_line(_arg(err)))
        ok = field(value, "ok")
        if isinstance(ok, (str, bytes)):
            return Status(_one_line(_arg(ok)))
        double = field(value, "double")
        if isinstance(double, (int, float)) and not isinstance(double, bool):
            return format_score(float(double))
        big = field(value, "big_number")
        if isinstance(big, (str, bytes)):
            return _one_line(_arg(big))
        verbatim = field(value, "verbatim_string")
        if _is_table(verbatim):
            fmt, text = field(verbatim, "format"), field(verbatim, "string")
            if isinstance(fmt, (str, bytes)) and isinstance(text, (str, bytes)):
                return _arg(text)
        for kind in ("map", "set"):
            inner = field(value, kind)
            if _is_table(inner):
                out = []
                for k, v in self._pairs(inner):
                    out.append(self._reply(k, resp))
                    if kind == "map":
                        out.append(self._reply(v, resp))
                return out
        out = []
        i = 1
        while field(value, i) is not None:
            out.append(self._reply(field(value, i), resp))
            i += 1
        return out

    def _pairs(self, table: Any):
        """A Lua table's (key, value) pairs in Lua's own order (lua_next)."""
        key = None
        while True:
            nxt = self._lua_next(table, key)
            if nxt is None:
                return
            key, value = nxt
            yield key, value


class _Null:
    """RESP3's null, which a script sees as nil (RESP2's is false)."""


class _Double:
    """RESP3's double reply, which a script sees as {double = x}."""

    def __init__(self, value: float) -> None:
        self.value = value


class _Map:
    """RESP3's map reply, which a script sees as {map = {field = value, ...}}."""

    def __init__(self, pairs: list) -> None:
        self.pairs = pairs


_DOUBLE_REPLIES = {"ZSCORE", "ZADD", "ZINCRBY"}   # a score as a string is a double in RESP3
_RANGES = {"ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}


def _resp3(words: list[str], reply: Any) -> Any:
    """A reply as Redis 7.0 gives it to a client speaking RESP3 (what redis.setresp(3) makes
    of the commands SimStore has): nulls, doubles for scores, maps for HGETALL, and
    [member, score] pairs for ranges WITHSCORES."""
    name = words[0].upper()
    if reply is None:
        return _Null()
    if name in _DOUBLE_REPLIES and isinstance(reply, str):
        return _Double(float(reply))
    if name == "HGETALL":
        return _Map(list(zip(reply[::2], reply[1::2])))
    if name in _RANGES and any(w.upper() == "WITHSCORES" for w in words[4:]):
        return [[m, _Double(float(s))] for m, s in zip(reply[::2], reply[1::2])]
    if isinstance(reply, list):
        return [_Null() if x is None else x for x in reply]
    return reply


def _no_python_attributes(obj: Any, name: Any, is_setting: bool) -> None:
    """lupa's attribute filter: no attribute of a Python object can be read or set from Lua."""
    raise AttributeError("a script cannot reach Python objects' attributes")


def _is_table(x: Any) -> bool:
    return lupa.lua_type(x) == "table"


def _lua_arg(x: Any) -> str:
    """A redis.call argument from Lua: strings as they are, numbers as Redis 7 writes them
    (%.17g: 2.01 arrives as "2.0099999999999998")."""
    if isinstance(x, bool) or x is None:
        raise TypeError(x)
    if isinstance(x, (int, float)):  # a Lua number is a double, however lupa hands it over
        return "%.17g" % x
    if isinstance(x, (str, bytes)):
        return _arg(x)
    raise TypeError(x)


_PRELUDE_BYTECODE: list[bytes] = []


def _prelude_bytecode() -> bytes:
    """The script prelude compiled once per process (Lua bytecode loads several times faster
    than the source compiles, and every SimStore that runs a script needs it)."""
    if not _PRELUDE_BYTECODE:
        dump = lupa.LuaRuntime(encoding=None).eval(
            "function(s) return string.dump(assert(loadstring(s, '=prelude'))) end")
        _PRELUDE_BYTECODE.append(dump(PRELUDE.encode()))
    return _PRELUDE_BYTECODE[0]


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()


class SimConnection:
    """One client's connection to a SimStore: its MULTI queue and WATCHed keys."""

    def __init__(self, store: SimStore, name: str) -> None:
        self.store = store
        self.name = name
        self.queue: list[tuple] | None = None
        self.queue_failed = False
        self.watched: dict[str, int] = {}

    def execute(self, *args: Any) -> Any:
        """Run one command as this client; return the reply or raise StoreError.

        As in Redis 7.0, a command is checked (name, subcommand, number of arguments) before
        it runs or is queued: inside MULTI a command refused there marks the transaction, and
        EXEC then answers EXECABORT and runs none of it."""
        if not args:
            raise StoreError("ERR empty command")
        words = [_arg(a) for a in args]
        name = words[0].upper()
        try:
            _lookup(words)
        except StoreError as e:
            if name == "EXEC":  # a refused EXEC discards the transaction, as Redis does
                self.queue, self.watched = None, {}
                raise StoreError(f"EXECABORT Transaction discarded because of: "
                                 f"{str(e).removeprefix('ERR ')}") from None
            if self.queue is not None:
                self.queue_failed = True
            raise
        if name == "MULTI":
            if self.queue is not None:
                raise StoreError("ERR MULTI calls can not be nested")
            self.queue, self.queue_failed = [], False
            return OK
        if name == "EXEC":
            return self._exec()
        if name == "DISCARD":
            if self.queue is None:
                raise StoreError("ERR DISCARD without MULTI")
            self.queue = None
            self.watched.clear()
            return OK
        if self.queue is not None and name != "WATCH":  # WATCH runs, and refuses
            self.queue.append(tuple(words))
            return QUEUED
        return self.store._run(self, tuple(words))

    def _exec(self) -> list | None:
        if self.queue is None:
            raise StoreError("ERR EXEC without MULTI")
        queue, failed = self.queue, self.queue_failed
        self.queue = None
        watched, self.watched = self.watched, {}
        if failed:
            raise StoreError(E.EXECABORT)
        if any(self.store.version(k) != v for k, v in watched.items()):
            return None
        out = []
        for args in queue:
            try:
                out.append(self.store._run(self, args))
            except StoreError as e:
                out.append(e)
        return out

    def close(self) -> None:
        """Forget this client's transaction state."""
        self.queue, self.watched = None, {}


# name -> (method, arity as Redis states it: n exact, -n at least n, counting the name)
COMMANDS: dict[str, tuple[Callable, int]] = {
    "GET": (SimStore.cmd_get, 2), "SET": (SimStore.cmd_set, -3),
    "INCR": (SimStore.cmd_incr, 2), "DECR": (SimStore.cmd_decr, 2),
    "INCRBY": (SimStore.cmd_incrby, 3), "DECRBY": (SimStore.cmd_decrby, 3),
    "DEL": (SimStore.cmd_del, -2), "EXISTS": (SimStore.cmd_exists, -2),
    "EXPIRE": (SimStore.cmd_expire, -3), "PEXPIRE": (SimStore.cmd_pexpire, -3),
    "TTL": (SimStore.cmd_ttl, 2), "PTTL": (SimStore.cmd_pttl, 2),
    "PING": (SimStore.cmd_ping, -1), "TIME": (SimStore.cmd_time, 1),
    "FLUSHALL": (SimStore.cmd_flushall, -1),
    "HGET": (SimStore.cmd_hget, 3), "HMGET": (SimStore.cmd_hmget, -3),
    "HGETALL": (SimStore.cmd_hgetall, 2), "HSET": (SimStore.cmd_hset, -4),
    "HINCRBY": (SimStore.cmd_hincrby, 4),
    "ZADD": (SimStore.cmd_zadd, -4), "ZREM": (SimStore.cmd_zrem, -3),
    "ZREMRANGEBYSCORE": (SimStore.cmd_zremrangebyscore, 4), "ZCARD": (SimStore.cmd_zcard, 2),
    "ZCOUNT": (SimStore.cmd_zcount, 4), "ZSCORE": (SimStore.cmd_zscore, 3),
    "ZRANGE": (SimStore.cmd_zrange, -4), "ZREVRANGE": (SimStore.cmd_zrevrange, -4),
    "ZRANGEBYSCORE": (SimStore.cmd_zrangebyscore, -4),
    "ZREVRANGEBYSCORE": (SimStore.cmd_zrevrangebyscore, -4),
    "WATCH": (SimStore.cmd_watch, -2), "UNWATCH": (SimStore.cmd_unwatch, 1),
    "MULTI": (None, 1), "EXEC": (None, 1), "DISCARD": (None, 1),
    "EVAL": (SimStore.cmd_eval, -3), "EVALSHA": (SimStore.cmd_evalsha, -3),
    "SCRIPT": (SimStore.cmd_script, -2),
}

# A container command's subcommands -> their arity, counting the command and subcommand.
SUBCOMMANDS: dict[str, dict[str, int]] = {
    "SCRIPT": {"LOAD": 3, "EXISTS": -3, "FLUSH": -2, "KILL": 2},
}
