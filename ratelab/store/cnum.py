"""Numbers as C reads them (glibc, C locale): what Redis's parsers accept comes from strtod."""

from __future__ import annotations

import math
import re

# What C's strtod reads at the start of a string (glibc, C locale): white space, then a sign,
# then an infinity, a NaN, a hex float or a decimal; the rest of the string is left unread.
_STRTOD = re.compile(r"""[ \t\n\v\f\r]*(?P<sign>[+-]?)(?:
      (?P<inf>inf(?:inity)?)
    | (?P<nan>nan(?:\([0-9a-z_]*\))?)
    | 0x(?P<hex>(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+))(?:p(?P<hexp>[+-]?[0-9]+))?
    | (?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:e(?P<decp>[+-]?[0-9]+))?
    )""", re.IGNORECASE | re.VERBOSE)


def strtod(text: str) -> tuple[float, int, bool] | None:
    """C's strtod on `text`: (value, characters read, whether it set ERANGE), or None when it
    reads no number. Overflow gives ±inf and underflow 0 (both ERANGE), as glibc does."""
    m = _STRTOD.match(text)
    if m is None:
        return None
    sign = -1.0 if m["sign"] == "-" else 1.0
    if m["inf"]:
        return sign * math.inf, m.end(), False
    if m["nan"]:
        return math.nan, m.end(), False
    if m["hex"] is not None:
        digits = m["hex"]
        try:
            x = float.fromhex(f"0x{digits}p{m['hexp'] or 0}")
        except OverflowError:
            x = math.inf
    else:
        digits = m["dec"]
        x = float(f"{digits}e{m['decp'] or 0}")
    erange = math.isinf(x) or (x == 0 and re.search(r"[1-9a-fA-F]", digits) is not None)
    return sign * x, m.end(), erange
