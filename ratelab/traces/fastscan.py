"""The compiled scan under the fast log reader (:mod:`ratelab.traces.fastclf`): numba kernels
over decompressed bytes.

* the word-at-a-time primitives: unaligned 8-byte and 32-byte loads (LLVM intrinsics), line
  breaks and printable runs found 32 or eight bytes at a time;
* one line parser per format — :func:`_parse` (Common Log Format), :func:`_parse_epa`,
  :func:`_parse_tsv` — each ACCEPTing only a line that is plainly well formed and leaving every
  doubtful one (SLOW) to the reference parser of :mod:`ratelab.traces.report`;
* the host table: open addressing over 8-byte slots, names numbered in order of first
  appearance (:func:`_find`, :func:`_add`, :func:`_grown`);
* :func:`_scan`, the loop over a block's lines that calls them.

Why one module of about 700 lines: these functions are compiled into one another
(``inline="always"``) and share the masks and constants below; numba compiles a module's
kernels together with their cache, and the Python driver beside it (fastclf) is the natural
seam. Splitting the primitives from the parsers would scatter one compiled unit over files
that always change together.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.cpu import CPUTargetOptions
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from ..kernel_cache import listen

listen()  # a first run compiles the reader (tens of seconds): the command says so

NO_REFCOUNTS = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}
"""numba's option to compile a function without reference counting, for the scan and the line
parser: they allocate nothing, and counting references to the arrays handed to every small
helper they call cost about a fifth of their time (two atomic operations per call). The
option is numba's own but not public: where a numba version lacks it, the same functions
compile with reference counting, only slower."""

# Python's \\s on a latin-1 character, byte by byte: a tail after the bytes field must start
# with one of these (the reference's ``(?:\\s.*)?$``).
_SPACE = np.zeros(256, dtype=np.bool_)
_SPACE[[c for c in range(256) if chr(c).isspace()]] = True
_MONTHS = np.frombuffer(b"JanFebMarAprMayJunJulAugSepOctNovDec", dtype=np.uint8)


LITTLE = sys.byteorder == "little"
"""Whether this machine stores a word's low byte first (the words below are read as such;
elsewhere every word is byte-swapped after it is loaded)."""


@intrinsic
def _load8(typingctx, arr, i):
    """The 8 bytes of the uint8 array `arr` at i..i+8 as one little-endian uint64, read in one
    unaligned load (no bounds check: the caller makes sure i + 8 <= len(arr))."""
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(64).as_pointer())
        v = builder.load(ptr, align=1)
        if not LITTLE:
            v = builder.call(builder.module.declare_intrinsic("llvm.bswap", [v.type]), [v])
        return v
    return types.uint64(arr, types.intp), codegen


def _mask32(test):
    """An intrinsic (arr, i) -> uint64: bit k set where test(the 32 bytes of the uint8 array
    arr at i..i+32, as one vector) holds for byte i + k, in one unaligned vector load and a
    few vector compares (no bounds check: the caller makes sure i + 32 <= len(arr))."""
    @intrinsic
    def mask(typingctx, arr, i):
        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            vt = ir.VectorType(ir.IntType(8), 32)
            ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), vt.as_pointer())
            v = builder.load(ptr, align=1)
            bits = builder.bitcast(test(builder, v, lambda c: ir.Constant(vt, [c] * 32)),
                                   ir.IntType(32))
            if not LITTLE:  # there the first byte's bit is the highest
                bits = builder.call(builder.module.declare_intrinsic(
                    "llvm.bitreverse", [bits.type]), [bits])
            return builder.zext(bits, ir.IntType(64))
        return types.uint64(arr, types.intp), codegen
    return mask


_breaks32 = _mask32(lambda bd, v, c: bd.or_(bd.icmp_unsigned("==", v, c(10)),
                                            bd.icmp_unsigned("==", v, c(13))))
"""Bit k: byte i + k is a \n or a \r."""
_unprintable32 = _mask32(lambda bd, v, c: bd.icmp_unsigned(">", bd.sub(v, c(33)), c(93)))
"""Bit k: byte i + k is outside printable ASCII without space (33..126)."""


@njit(cache=True, inline="always")
def _digit(c) -> bool:
    return 48 <= c <= 57


@njit(cache=True, inline="always")
def _status_ends_at(b, t, r) -> bool:
    """Whether ``" ddd`` (a quote, a space, a three-digit status) ends just before b[t], its
    quote at or after b[r]: the tail of a CLF or EPA line, the bytes field after it or not."""
    return t - 5 >= r and b[t - 4] == 32 and b[t - 5] == 34 and _digit(b[t - 1]) \
        and _digit(b[t - 2]) and _digit(b[t - 3])


@njit(cache=True, inline="always")
def _num(b, i, n):
    """The n-digit decimal number at b[i:i+n], or -1 if any byte is not a digit."""
    v = 0
    for k in range(i, i + n):
        c = b[k]
        if c < 48 or c > 57:
            return -1
        v = v * 10 + (c - 48)
    return v


@njit(cache=True, inline="always")
def _days_from_civil(y, m, d):
    """Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


@njit(cache=True, inline="always")
def _month_days(y, m):
    if m == 2:
        return 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    return 30 if m in (4, 6, 9, 11) else 31




@njit(cache=True, inline="always")
def _pack(b, i, n):
    """The n bytes at b[i:i+n] (n <= 8) as one little-endian number."""
    v = np.uint64(0)
    for k in range(n):
        v |= np.uint64(b[i + k]) << np.uint64(8 * k)
    return v


@njit(cache=True, inline="always")
def _word(b, i, n):
    """The bytes at b[i:i+8] as one little-endian uint64, 0 for those at or past n."""
    if i + 8 <= n:
        return _load8(b, i)
    return _pack(b, i, max(0, n - i))


_H = np.uint64(0x8080808080808080)
_B33 = np.uint64(0x5F5F5F5F5F5F5F5F)  # 128 - 33 in each byte
_B1 = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _unprintable(x):
    """0x80 in each byte of x outside printable ASCII without space (33..126), 0 in every
    other (exact: no carry crosses a byte)."""
    low = x & _LOW7
    return (x & _H) | (~(low + _B33) & _H) | ((low + _B1) & _H)


@njit(cache=True, inline="always")
def _token(b, p, e):
    """The end of a run of printable ASCII (no space) from p; p itself when there is none
    (32 bytes at a time, then eight)."""
    while p + 32 <= e:
        m = _unprintable32(b, p)
        if m != 0:
            return p + np.int64(trailing_zeros(m))
        p += 32
    while p + 8 <= e:
        m = _unprintable(_load8(b, p))
        if m != 0:
            return p + (np.int64(trailing_zeros(m)) >> 3)
        p += 8
    while p < e and 33 <= b[p] <= 126:
        p += 1
    return p


ACCEPT, SLOW, MORE = 0, 1, 2
"""What the kernel made of a line: read it; leave it to the reference; needs the next block."""

CLF, EPA, TSV = 0, 1, 2
"""The formats the kernel reads (by number): "clf", "epa", "nasa-tsv"."""
FORMAT_NUMBERS = {"clf": CLF, "epa": EPA, "nasa-tsv": TSV}


@njit(cache=True, inline="always")
def _line_end(b, i, n, final):
    """(end of content, start of the next line) for a line whose content runs on from i;
    (-1, -1) when the block ends first and more may come."""
    while i < n and b[i] != 10 and b[i] != 13:
        i += 1
    if i == n:
        return (n, n) if final else (-1, -1)
    if b[i] == 10:
        return i, i + 1
    if i + 1 == n:
        return (i, n) if final else (-1, -1)  # a \r at the end: a \n may follow
    return i, i + 2 if b[i + 1] == 10 else i + 1


_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_LF = np.uint64(0x0A0A0A0A0A0A0A0A)
_CR = np.uint64(0x0D0D0D0D0D0D0D0D)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def _zeros(v):
    """0x80 in each byte of v that is zero, 0 in every other (exact: no carry between bytes)."""
    return ~(((v & _LOW7) + _LOW7) | v | _LOW7)


_BELOW14 = np.uint64(0x0E0E0E0E0E0E0E0E)


@njit(cache=True, inline="always")
def _eol(b, w, i, n):
    """The first i' >= i with b[i'] a \n or \r, or n: 32 bytes at a time (one vector each),
    then the last bytes eight at a time (w is b seen as little-endian uint64 words; the
    bytes of the first word before i are masked off).

    A word is first tested for any byte below 14 (three operations, exact as a yes/no: a
    byte below 14 always sets its flag, whatever borrows from below); only then are its
    \n and \r found exactly."""
    while i + 32 <= n:
        m = _breaks32(b, i)
        if m != 0:
            return i + np.int64(trailing_zeros(m))
        i += 32
    k = i >> 3
    nw = len(w)
    if k < nw:
        x = w[k]
        keep = _ALL << np.uint64(8 * (i & 7))
        while True:
            if (x - _BELOW14) & ~x & _H & keep:
                m = (_zeros(x ^ _LF) | _zeros(x ^ _CR)) & keep
                if m != 0:
                    return (k << 3) + (np.int64(trailing_zeros(m)) >> 3)
            keep = _ALL
            k += 1
            if k == nw:
                break
            x = w[k]
        i = k << 3
    while i < n:
        c = b[i]
        if c == 10 or c == 13:
            return i
        i += 1
    return n


# The month of a stamp from its second and third letters (each pair is one month's only):
# index ((c1 & 31) << 5) | (c2 & 31), value month + 1 (0: none). The three letters are then
# checked against _MONTHS.
_MONTH_OF = np.zeros(1024, dtype=np.int8)
for _k in range(12):
    _c1, _c2 = _MONTHS[3 * _k + 1], _MONTHS[3 * _k + 2]
    _MONTH_OF[((int(_c1) & 31) << 5) | (int(_c2) & 31)] = _k + 1


def _bytes(*pairs) -> tuple[np.uint64, np.uint64]:
    """(mask, pattern) of a word whose byte i must be c, for each (i, c) in pairs."""
    mask = pattern = 0
    for i, c in pairs:
        mask |= 0xFF << (8 * i)
        pattern |= ord(c) << (8 * i)
    return np.uint64(mask), np.uint64(pattern)


def _nibbles(*at) -> tuple[np.uint64, np.uint64]:
    """(0xF0 and 0x06 in each byte listed): what :func:`_digits` tests a word's bytes with."""
    return (np.uint64(sum(0xF0 << (8 * i) for i in at)),
            np.uint64(sum(0x06 << (8 * i) for i in at)))


# The stamp "[dd/Mon/yyyy:hh:mm:ss +zzzz] \"" read as four words from its "[": the
# punctuation each must hold, and which of their bytes are digits.
_W0_MASK, _W0_PUNCT = _bytes((0, "["), (3, "/"), (7, "/"))
_W1_MASK, _W1_PUNCT = _bytes((4, ":"), (7, ":"))
_W2_MASK, _W2_PUNCT = _bytes((2, ":"), (5, " "))
_W3_MASK, _W3_PUNCT = _bytes((3, "]"), (4, " "), (5, '"'))
_W0_HI, _W0_SIX = _nibbles(1, 2)
_W1_HI, _W1_SIX = _nibbles(0, 1, 2, 3, 5, 6)
_W2_HI, _W2_SIX = _nibbles(0, 1, 3, 4, 7)
_W3_HI, _W3_SIX = _nibbles(0, 1, 2)
_DASHES_MASK, _DASHES = _bytes((0, " "), (1, "-"), (2, " "), (3, "-"), (4, " "), (5, "["))
_LOW24 = np.uint64(0xFFFFFF)
_LOW40 = np.uint64(0xFFFFFFFFFF)


@njit(cache=True, inline="always")
def _digits(x, hi, six) -> bool:
    """Whether the bytes of x that hi (0xF0 each) and six (0x06 each) pick are all ASCII
    digits: their high nibble is 3, and still 3 once 6 is added (exact: 0x30..0x3F + 6 does
    not carry)."""
    return (x & hi) == (hi & np.uint64(0x3333333333333333)) \
        and ((x + six) & hi) == (hi & np.uint64(0x3333333333333333))


_F0 = np.uint64(0xF0F0F0F0F0F0F0F0)
_30 = np.uint64(0x3030303030303030)
_06 = np.uint64(0x0606060606060606)


@njit(cache=True, inline="always")
def _nondigits(x):
    """0x80 in each byte of x that is not an ASCII digit, 0 in every other (exact: the high
    bit is tested apart, and adding 6 to a byte below 0x80 carries into no other)."""
    low = x & _LOW7
    digit = _zeros((low & _F0) ^ _30) & _zeros(((low + _06) & _F0) ^ _30) & ~x & _H
    return digit ^ _H


@njit(cache=True, inline="always")
def _at(x, i):
    """Byte i of the word x, as an int."""
    return np.int64((x >> np.uint64(8 * i)) & np.uint64(0xFF))


@njit(cache=True, inline="always", **NO_REFCOUNTS)
def _parse(b, w, s, n, final, months, space, zone_max, memo, slots, ents, names):
    """(what, time, host end, content end, host id, slot) for the CLF line starting at b[s].

    what is ACCEPT when the line is plainly well formed (then the rest is set), SLOW when
    the reference parser must judge it, MORE when the block ends inside it. memo holds the
    last day and zone read (their bytes packed in two words, and the day's first second in
    that zone), since a log's lines repeat them. Fields are read eight bytes at a time. The
    host is looked up in the name table (:func:`_find`: its id, or -1 and the free slot for
    it) as soon as its end is known.
    """
    he = _token(b, s, n)  # host, ident, authuser: printable ASCII, one space after each
    if he == s or he >= n or b[he] != 32:
        return SLOW, 0.0, -1, -1, -1, -1
    found, j = _find(b, s, he, slots, ents, names)
    if (_word(b, he, n) & _DASHES_MASK) == _DASHES:  # " - - [": no ident, no user
        p = he + 5
    else:
        p = _token(b, he + 1, n)
        if p == he + 1 or p >= n or b[p] != 32:
            return SLOW, 0.0, -1, -1, -1, -1
        q = _token(b, p + 1, n)
        if q == p + 1 or q >= n or b[q] != 32:
            return SLOW, 0.0, -1, -1, -1, -1
        p = q + 1
    # [dd/Mon/yyyy:hh:mm:ss +zzzz] "  (30 bytes, in four words)
    if p + 30 > n:
        return (SLOW if final else MORE), 0.0, -1, -1, -1, -1
    w0, w1, w2, w3 = _word(b, p, n), _word(b, p + 8, n), _word(b, p + 16, n), \
        _word(b, p + 24, n)
    sign = _at(w2, 6)
    if (w0 & _W0_MASK) != _W0_PUNCT or (w1 & _W1_MASK) != _W1_PUNCT \
            or (w2 & _W2_MASK) != _W2_PUNCT or (w3 & _W3_MASK) != _W3_PUNCT \
            or (sign != 43 and sign != 45) or not _digits(w0, _W0_HI, _W0_SIX) \
            or not _digits(w1, _W1_HI, _W1_SIX) or not _digits(w2, _W2_HI, _W2_SIX) \
            or not _digits(w3, _W3_HI, _W3_SIX):
        return SLOW, 0.0, -1, -1, -1, -1
    hh = (_at(w1, 5) - 48) * 10 + _at(w1, 6) - 48
    mi = (_at(w2, 0) - 48) * 10 + _at(w2, 1) - 48
    ss = (_at(w2, 3) - 48) * 10 + _at(w2, 4) - 48
    if hh > 23 or mi > 59 or ss > 60:
        return SLOW, 0.0, -1, -1, -1, -1
    day = (w0 >> np.uint64(8)) | (w1 << np.uint64(56))  # dd/Mon/y
    rest = ((w1 >> np.uint64(8)) & _LOW24) \
        | ((((w2 >> np.uint64(48)) | (w3 << np.uint64(16))) & _LOW40) << np.uint64(24))
    if day == np.uint64(memo[0]) and rest == np.uint64(memo[1]):  # yyy, the zone
        base = memo[2]
    else:
        d, y = _num(b, p + 1, 2), _num(b, p + 8, 4)
        zh, zm = _num(b, p + 23, 2), _num(b, p + 25, 2)
        mon = np.int64(_MONTH_OF[((b[p + 5] & 31) << 5) | (b[p + 6] & 31)])
        if mon == 0 or b[p + 4] != months[3 * mon - 3] or b[p + 5] != months[3 * mon - 2] \
                or b[p + 6] != months[3 * mon - 1] or d < 1 or y < 1 \
                or zm > 59 or zh * 60 + zm > zone_max or d > _month_days(y, mon):
            return SLOW, 0.0, -1, -1, -1, -1
        off = (zh * 3600 + zm * 60) * (-1 if sign == 45 else 1)
        base = _days_from_civil(y, mon, d) * 86400 - off
        memo[0], memo[1], memo[2] = np.int64(day), np.int64(rest), base
    # The prefix holds no line break (every byte of it was checked), so the line's content
    # ends at the first \n or \r after it.
    r = p + 30
    e = _eol(b, w, r, n)
    if e == n and not final:
        return MORE, 0.0, -1, -1, -1, -1
    # "request" status bytes [anything]: the line matches when some quote after the opening
    # one starts a ``" ddd bytes`` tail that the line's end or a space follows (the request
    # is then the shortest such run). Common format: the tail ends the line.
    ok = False
    t = e - 1
    if t >= r and b[t] == 45:
        t -= 1
    else:  # the digits that end the line: up to 7 found in one word (b[r - 1] is a quote)
        run = np.int64(leading_zeros(_nondigits(_load8(b, e - 8)))) >> 3
        t -= run
        if run == 8:
            while t >= r and _digit(b[t]):
                t -= 1
    if t < e - 1 and _status_ends_at(b, t, r) and b[t] == 32 \
            and (b[e - 1] != 45 or t == e - 2):
        ok = True
    q = r
    while not ok and q + 7 <= e:
        if b[q] == 34 and b[q + 1] == 32 and b[q + 5] == 32 and _digit(b[q + 2]) \
                and _digit(b[q + 3]) and _digit(b[q + 4]):
            t = q + 6
            if b[t] == 45:
                t += 1
            else:
                while t < e and _digit(b[t]):
                    t += 1
            ok = t > q + 6 and (t == e or space[b[t]])
        q += 1
    if not ok:
        return SLOW, 0.0, -1, -1, -1, -1
    return ACCEPT, float(base + hh * 3600 + mi * 60 + ss), he, e, found, j


_TAB = np.uint64(0x0909090909090909)


@njit(cache=True, inline="always")
def _tab(b, i, e):
    """The first i' >= i with b[i'] a tab, or e (eight bytes at a time)."""
    while i + 8 <= e:
        m = _zeros(_load8(b, i) ^ _TAB)
        if m != 0:
            return i + (np.int64(trailing_zeros(m)) >> 3)
        i += 8
    while i < e and b[i] != 9:
        i += 1
    return i


DIGITS_MAX = 18
"""The most digits a number read by the kernel may have (it then fits an int64); a longer
one goes to the reference parser."""


@njit(cache=True, inline="always")
def _number(b, i, e):
    """The number written in ASCII digits over all of b[i:e] (1 to DIGITS_MAX of them), or
    -1 when it is not one."""
    if e <= i or e - i > DIGITS_MAX:
        return -1
    v = 0
    for k in range(i, e):
        c = b[k]
        if c < 48 or c > 57:
            return -1
        v = v * 10 + (c - 48)
    return v


@njit(cache=True, inline="always", **NO_REFCOUNTS)
def _parse_epa(b, w, s, n, final, base, days):
    """(what, time, host end, content end) for the EPA-HTTP line starting at b[s], as
    :func:`_parse`: ``host [dd:hh:mm:ss] "request" status [bytes]``, ACCEPT only when the
    line is plainly so (a printable-ASCII host, no space after the status or bytes)."""
    e = _eol(b, w, s, n)
    if e == n and not final:
        return MORE, 0.0, -1, -1
    he = _token(b, s, e)
    p = he + 2  # dd:hh:mm:ss] "   (14 bytes)
    if he == s or p + 14 > e or b[he] != 32 or b[he + 1] != 91 or b[p + 2] != 58 \
            or b[p + 5] != 58 or b[p + 8] != 58 or b[p + 11] != 93 or b[p + 12] != 32 \
            or b[p + 13] != 34:
        return SLOW, 0.0, -1, -1
    d, hh, mi, ss = _num(b, p, 2), _num(b, p + 3, 2), _num(b, p + 6, 2), _num(b, p + 9, 2)
    if d < 1 or d > days or hh < 0 or hh > 23 or mi < 0 or mi > 59 or ss < 0 or ss > 60:
        return SLOW, 0.0, -1, -1
    # '" ddd' or '" ddd bytes' ends the line, its quote after the request's opening one
    r = p + 14
    t = e - 1
    if t >= r and b[t] == 45:
        t -= 1
    else:
        while t >= r and _digit(b[t]):
            t -= 1
    ok = t < e - 1 and _status_ends_at(b, t, r) and b[t] == 32 \
        and (b[e - 1] != 45 or t == e - 2)
    if not ok:  # no bytes field
        ok = _status_ends_at(b, e, r)
    if not ok:
        return SLOW, 0.0, -1, -1
    return ACCEPT, base + d * 86400 + hh * 3600 + mi * 60 + ss, he, e


@njit(cache=True, inline="always", **NO_REFCOUNTS)
def _parse_tsv(b, w, s, n, final):
    """(what, time, host end, content end) for the NASA-HTTP TSV line starting at b[s], as
    :func:`_parse`: host, logname, time (epoch seconds), method, url, response, bytes (or
    "-"), then nothing but tabs. ACCEPT only when the line is plainly so (a printable-ASCII
    host, numbers of plain digits); anything else, the header among it, goes to the
    reference."""
    e = _eol(b, w, s, n)
    if e == n and not final:
        return MORE, 0.0, -1, -1
    he = _token(b, s, e)
    if he == s or he >= e or b[he] != 9:
        return SLOW, 0.0, -1, -1
    a = _tab(b, he + 1, e)  # logname
    z = _tab(b, a + 1, e) if a < e else e
    t = _number(b, a + 1, z)  # time
    if t < 0 or z >= e:
        return SLOW, 0.0, -1, -1
    a = _tab(b, z + 1, e)  # method
    a = _tab(b, a + 1, e) if a < e else e  # url
    z = _tab(b, a + 1, e) if a < e else e
    if a >= e or _number(b, a + 1, z) < 0 or z >= e:  # response
        return SLOW, 0.0, -1, -1
    a = _tab(b, z + 1, e)  # bytes
    if not ((a == z + 2 and b[z + 1] == 45) or _number(b, z + 1, a) >= 0):
        return SLOW, 0.0, -1, -1
    while a < e:  # nothing but empty fields after
        if b[a] != 9:
            return SLOW, 0.0, -1, -1
        a += 1
    return ACCEPT, float(t), he, e


_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)


@njit(cache=True, inline="always")
def _first(k):
    """A mask of a word's first k bytes (all eight when k >= 8)."""
    if k >= 8:
        return _ALL
    return (np.uint64(1) << np.uint64(8 * k)) - np.uint64(1)


@njit(cache=True, inline="always")
def _key(b, s, e, n):
    """(first 8 bytes, next 8 bytes, hash) of the name b[s:e] (b holds n bytes): the bytes
    as little-endian numbers, 0-padded; the hash mixes them, the size and any bytes past 16,
    eight at a time."""
    size = e - s
    lo = _word(b, s, n) & _first(size)
    hi = _word(b, s + 8, n) & _first(size - 8) if size > 8 else np.uint64(0)
    h = np.uint64(size)
    for i in range(s + 16, e, 8):
        h = (h ^ (_word(b, i, n) & _first(e - i))) * _K2
        h ^= h >> np.uint64(31)
    h ^= (lo * _K1) ^ ((hi ^ (hi >> np.uint64(29))) * _K2)
    h ^= h >> np.uint64(32)
    h *= _K1
    return lo, hi, h ^ (h >> np.uint64(29))


ENT = 3
"""int64 words per name in the table's entries (by id): its first 8 bytes and its next 8
(0-padded, so that a host of up to 16 bytes, an IPv4 address, is compared in two words),
and where it starts in the name bytes << 32 | its size."""

_LOW32 = np.int64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _find(b, s, e, slots, ents, names):
    """(id, slot): the id of the name b[s:e] in the name table and its slot, or -1 and the
    free slot where it would go.

    The table: slots (a power of two of them, open addressing, kept at most half full: the
    hash's high 32 bits << 32 | id + 1, 0 when free), ents (ENT words per id), names (every
    name's bytes one after another). Slots are 8 bytes so that the table of a log's hosts
    stays in cache. Only reads: the CLF scan looks a line's host up as soon as it has found
    it, so that the two loads that depend on each other (slot, then entry) overlap with the
    reading of the rest of the line.
    """
    size = e - s
    n = len(b)
    lo, hi, h = _key(b, s, e, n)
    wrap = len(slots) - 1
    tag = np.int64(h >> np.uint64(32)) << 32
    j = np.int64(h & np.uint64(wrap))
    while True:
        v = slots[j]
        if v == 0:
            return np.int64(-1), j
        if (v & ~_LOW32) == tag:
            k = (v & _LOW32) - 1
            x = ents[ENT * k + 2]
            if (x & _LOW32) == size and np.uint64(ents[ENT * k]) == lo \
                    and np.uint64(ents[ENT * k + 1]) == hi:
                same = True
                a = x >> 32
                for i in range(16, size, 8):  # past 16 bytes: eight at a time
                    if (_word(names, a + i, len(names)) ^ _word(b, s + i, n)) & _first(size - i):
                        same = False
                        break
                if same:
                    return k, j
        j = (j + 1) & wrap


@njit(cache=True, inline="always")
def _add(b, s, e, j, slots, ents, names, count, used):
    """(id, count, used): the name b[s:e], not in the table, added at its free slot j (from
    :func:`_find`, the table unchanged since). The caller makes sure there is room
    (:func:`_room`)."""
    size = e - s
    lo, hi, h = _key(b, s, e, len(b))
    slots[j] = (np.int64(h >> np.uint64(32)) << 32) | (count + 1)
    ents[ENT * count] = np.int64(lo)
    ents[ENT * count + 1] = np.int64(hi)
    ents[ENT * count + 2] = (np.int64(used) << 32) | size
    for i in range(size):  # a loop: a slice copy would need numba's reference counting
        names[used + i] = b[s + i]
    return count, count + 1, used + size


@njit(cache=True, inline="always")
def _intern(b, s, e, slots, ents, names, count, used):
    """(id, count, used): the id of the name b[s:e] in the name table, added when new (the
    caller makes sure there is room: :func:`_room`)."""
    k, j = _find(b, s, e, slots, ents, names)
    if k >= 0:
        return k, count, used
    return _add(b, s, e, j, slots, ents, names, count, used)


@njit(cache=True, inline="always")
def _room(size, slots, ents, names, count, used) -> bool:
    """Whether the name table has room for one more name of `size` bytes."""
    return 2 * (count + 1) <= len(slots) and ENT * (count + 1) <= len(ents) \
        and used + size <= len(names)


@njit(cache=True)
def _grown(size, slots, ents, names, count, used):
    """(slots, ents, names) with room for a name of `size` bytes: twice the slots, rehashed,
    and twice the entries and name bytes (or more) where they are short."""
    if 2 * (count + 1) > len(slots):
        slots = np.zeros(2 * len(slots), np.int64)
        wrap = len(slots) - 1
        for k in range(count):
            x = ents[ENT * k + 2]
            a = x >> 32
            h = _key(names, a, a + (x & _LOW32), len(names))[2]
            j = np.int64(h & np.uint64(wrap))
            while slots[j] != 0:
                j = (j + 1) & wrap
            slots[j] = (np.int64(h >> np.uint64(32)) << 32) | (k + 1)
    if ENT * (count + 1) > len(ents):
        bigger = np.empty(2 * len(ents), np.int64)
        bigger[:ENT * count] = ents[:ENT * count]
        ents = bigger
    if used + size > len(names):
        bigger8 = np.empty(max(2 * len(names), used + size), np.uint8)
        bigger8[:used] = names[:used]
        names = bigger8
    return slots, ents, names


@njit(cache=True, nogil=True, **NO_REFCOUNTS)
def _scan(b, w, pos, final, line_no, fmt, months, space, zone_max, memo, epa_base, epa_days,
          kind, times, keys, lines, slow_start, slow_end, slots, ents, names, count, used):
    """Read the lines of b (in the format numbered fmt: CLF, EPA or TSV) from pos until b
    ends, only an unfinished line is left (unless `final`), the output arrays are full, or
    the name table needs to grow.

    w is b seen as uint64 words (for :func:`_eol`). Every line is one entry: kind 1 (read
    here: its time, its host's id in the name table) or kind 0 (for the reference parser:
    b[slow_start:slow_end], terminator included; the scan stops after such a line, so that
    hosts keep their order of first appearance).
    Returns (next pos, entries, slow entries, last line number, names counted, name bytes
    used, the size of a name that did not fit or -1).
    """
    n = len(b)
    cap = len(kind)
    k = 0
    ns = 0
    while k < cap and pos < n:
        if fmt == CLF:
            what, t, he, te, found, j = _parse(b, w, pos, n, final, months, space, zone_max,
                                               memo, slots, ents, names)
        else:
            if fmt == EPA:
                what, t, he, te = _parse_epa(b, w, pos, n, final, epa_base, epa_days)
            else:
                what, t, he, te = _parse_tsv(b, w, pos, n, final)
            found, j = -1, -1
            if what == ACCEPT:
                found, j = _find(b, pos, he, slots, ents, names)
        if what == MORE:
            break
        if what == ACCEPT and found < 0 \
                and not _room(he - pos, slots, ents, names, count, used):
            return pos, k, ns, line_no, count, used, he - pos
        e, nxt = _line_end(b, te if what == ACCEPT else pos, n, final)
        if e < 0:
            break
        line_no += 1
        lines[k] = line_no
        if what == ACCEPT:
            kind[k] = 1
            times[k] = t
            if found >= 0:
                keys[k] = found
            else:
                keys[k], count, used = _add(b, pos, he, j, slots, ents, names, count, used)
        else:
            kind[k] = 0
            slow_start[ns] = pos
            slow_end[ns] = nxt
            ns += 1
        k += 1
        pos = nxt
        if ns:  # the reference judges it before any later host is numbered
            break
    return pos, k, ns, line_no, count, used, -1


@njit(cache=True)
def _intern_one(b, slots, ents, names, count, used):
    """_intern for a whole name (a host the reference parser read); room must be made."""
    return _intern(b, 0, len(b), slots, ents, names, count, used)
