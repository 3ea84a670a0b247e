"""Saying no over HTTP: the response a limiter sends, and a parser for every header it sets.

From a :class:`~ratelab.limiters.Decision` and a :class:`Policy`, :func:`respond` builds the
status and the headers:

* the status: 200 when allowed, else the policy's refusal status — 429 Too Many Requests, or
  503 Service Unavailable where a load shedder would answer (nginx's limit_req default);
* ``Retry-After`` (RFC 9110 section 10.2.3) in delay-seconds, on refusals only: the
  Decision's ``retry_after`` rounded *up*, so that a client that waits exactly that long is
  never early;
* the IETF httpapi fields of draft-ietf-httpapi-ratelimit-headers-10 to -12, as Structured
  Fields (RFC 9651) — a List of Items, each a String naming a policy, with parameters::

      RateLimit-Policy: "burst";q=100;w=60
      RateLimit: "burst";r=50;t=30

  ``q`` the quota (Integer), ``w`` the window in seconds (Integer), ``r`` the remaining
  quota, ``t`` seconds until more quota is available: on a refusal the wait Retry-After
  states (-10 4.1.2: "the number of seconds until additional quota ... is made available";
  section 6: Retry-After "SHOULD NOT reference a point in time earlier than the reset
  parameter"), otherwise until the allowance is fully back (the end of a fixed window, a
  conservative bound for a bucket); ``qu`` (String, the quota unit) and
  ``pk`` (Byte Sequence, the partition key) are written when set and always read;
* the widespread ``X-RateLimit-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``,
  the reset as GitHub sends it: the Unix time (epoch seconds) at which the allowance is back.

Virtual time becomes wall time through ``epoch_s``: the Unix time of ``now == 0``.

Each header has a parser (:func:`parse_retry_after`, :func:`parse_ratelimit_policy`,
:func:`parse_ratelimit`, :func:`parse_x_ratelimit`), and :func:`read` turns a whole response
into what a client learns from it — so a simulated client reads exactly what a server sent.
A malformed header is a ValueError naming the header and quoting the value; :func:`read`, as
a client must, ignores a malformed RateLimit or RateLimit-Policy field.

The Structured Fields code here covers what these two fields use (Lists of Items with
parameters; Strings, Tokens, Integers, Decimals, Booleans and Byte Sequences as values); inner
lists, Dictionaries, Dates and Display Strings are refused with a clear error.
"""

from __future__ import annotations

import base64
import datetime
import email.utils
import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .limiters.base import Decision, whole
from .clock import TICKS_PER_S, to_ticks

STATUSES = (429, 503)


# ---------------------------------------------------------------- policy and response


@dataclass(frozen=True, slots=True)
class Policy:
    """What a server advertises about one limit: its name, quota per window, refusal status.

    name       the policy's name in RateLimit-Policy / RateLimit ("default", "per-ip" ...).
    quota      the requests (units) a client may spend per window: ``q``.
    window_s   the window in seconds: ``w`` (whole seconds on the wire); None sends no ``w``
               (a concurrency limit has no window).
    status     429, or 503 where a shedder answers.
    unit       optional quota unit ``qu`` ("request", "content-bytes", "concurrent-requests").
    partition  optional partition key ``pk`` (bytes), e.g. a hash of the client's key.
    """

    name: str = "default"
    quota: int = 100
    window_s: int | None = 60
    status: int = 429
    unit: str | None = None
    partition: bytes | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or not _printable(self.name):
            raise ValueError(f"name must be a non-empty printable ASCII string, got {self.name!r}")
        object.__setattr__(self, "quota", whole("quota", self.quota, minimum=0))
        if self.window_s is not None:
            object.__setattr__(self, "window_s", whole("window_s", self.window_s, minimum=1))
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.unit is not None and not _printable(self.unit):
            raise ValueError(f"unit must be printable ASCII, got {self.unit!r}")
        if self.partition is not None and not isinstance(self.partition, bytes):
            raise ValueError(f"partition must be bytes, got {self.partition!r}")

    @classmethod
    def of(cls, limiter, name: str = "default", **kw) -> "Policy":
        """The policy a reference limiter enforces: its limit per its window (or 1/rate).

        A ConcurrencyLimiter's policy is its slots, in unit "concurrent-requests", no window.
        """
        if hasattr(limiter, "max_in_flight"):
            return cls(name=name, quota=limiter.max_in_flight, window_s=None,
                       unit="concurrent-requests", **kw)
        window = limiter.window_s  # what the limiter declares, not a probed attribute
        if window is None:  # rate based: the limit refills in limit / rate seconds
            window = limiter.limit / limiter.rate_per_s
        return cls(name=name, quota=int(limiter.limit), window_s=max(1, math.ceil(window)), **kw)


@dataclass(frozen=True, slots=True)
class Response:
    """A status code and the header fields, in the order they were set."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        """The value of header `name` (case-insensitive), or None."""
        lower = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lower), None)


def whole_seconds(seconds: float) -> int:
    """`seconds` rounded up to a whole second (never early), at least 0.

    Counted on the limiters' grid of whole microseconds (:func:`~ratelab.clock.to_ticks`):
    a limiter's wait ends on a tick, and the float that carries it — or the instant
    ``now + wait`` at Unix times — can lie a fraction of a tick past it (1.0000002 for 1 s).
    Rounding up that float would tell the client a whole second too many; rounding up its tick
    does not, and is never early on the grid the limiter decides on.
    """
    if not math.isfinite(seconds):
        raise ValueError(f"seconds must be finite, got {seconds!r}")
    return max(0, -(-to_ticks(seconds) // TICKS_PER_S))


def respond(decision: Decision | Sequence[tuple[Policy, Decision]], policy: Policy | None = None,
            *, now: float = 0.0, epoch_s: int = 0, x_headers: bool = True) -> Response:
    """The response for `decision` under `policy`: status, Retry-After, RateLimit*, X-RateLimit-*.

    `decision` may instead be a sequence of (policy, decision) pairs, one per limit a request
    went through (a multi-key limiter): the request passes only if every decision allows it;
    RateLimit-Policy and RateLimit list every policy; Retry-After is the longest wait among the
    refusing limits; the X-RateLimit-* trio describes the tightest limit (fewest remaining).

    A Decision whose retry_after or reset_after is infinite (a concurrency limiter that cannot
    know when a slot frees) gets no Retry-After and no ``t``.
    """
    pairs = [(policy, decision)] if isinstance(decision, Decision) else list(decision)
    if not pairs or any(not isinstance(p, Policy) for p, _ in pairs):
        raise ValueError(f"policy must be a Policy for each decision, got {policy!r}")
    allowed = all(d.allowed for _, d in pairs)
    headers: dict[str, str] = {}
    if not allowed:
        waits = [d.retry_after for _, d in pairs if not d.allowed]
        if all(math.isfinite(w) for w in waits):
            headers["Retry-After"] = str(whole_seconds(max(waits)))
    headers["RateLimit-Policy"] = serialize_list(
        [(p.name, _policy_params(p)) for p, _ in pairs])
    headers["RateLimit"] = serialize_list([(p.name, _state_params(p, d)) for p, d in pairs])
    if x_headers:
        p, d = min(pairs, key=lambda pd: pd[1].remaining)
        headers["X-RateLimit-Limit"] = str(p.quota)
        headers["X-RateLimit-Remaining"] = str(max(0, d.remaining))
        if math.isfinite(d.reset_after):
            headers["X-RateLimit-Reset"] = str(whole_seconds(epoch_s + now + d.reset_after))
    status = 200 if allowed else next(p.status for p, d in pairs if not d.allowed)
    return Response(status, headers)


def _policy_params(p: Policy) -> dict:
    params: dict = {"q": p.quota}
    if p.unit is not None:
        params["qu"] = p.unit
    if p.window_s is not None:
        params["w"] = p.window_s
    if p.partition is not None:
        params["pk"] = p.partition
    return params


def _state_params(p: Policy, d: Decision) -> dict:
    params: dict = {"r": max(0, int(d.remaining))}
    wait = d.reset_after if d.allowed else d.retry_after  # refused: never beyond Retry-After
    if math.isfinite(wait):
        params["t"] = whole_seconds(wait)
    if p.partition is not None:
        params["pk"] = p.partition
    return params


# ---------------------------------------------------------------- what a client reads


@dataclass(frozen=True, slots=True)
class PolicyItem:
    """One item of RateLimit-Policy: name, quota ``q``, window ``w`` (s), unit, partition."""

    name: str
    quota: int
    window_s: int | None = None
    unit: str | None = None
    partition: bytes | None = None


@dataclass(frozen=True, slots=True)
class LimitItem:
    """One item of RateLimit: name, remaining ``r``, seconds to reset ``t``, partition."""

    name: str
    remaining: int
    reset_s: int | None = None
    partition: bytes | None = None


@dataclass(frozen=True, slots=True)
class XRateLimit:
    """The X-RateLimit-* trio: limit, remaining, and the reset as Unix epoch seconds."""

    limit: int | None
    remaining: int | None
    reset_epoch_s: int | None


@dataclass(frozen=True, slots=True)
class View:
    """What a client learns from one response (None where the server did not say).

    retry_after_s  seconds to wait before retrying (Retry-After).
    remaining      the fewest remaining among the RateLimit items (else X-RateLimit-Remaining).
    reset_s        seconds until that item's quota is back (t; else from X-RateLimit-Reset).
    x_reset_s      seconds until the absolute X-RateLimit-Reset time.
    """

    status: int
    retry_after_s: float | None
    remaining: int | None
    reset_s: float | None
    x_reset_s: float | None = None
    policies: tuple[PolicyItem, ...] = ()
    limits: tuple[LimitItem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the request was served (2xx)."""
        return 200 <= self.status < 300


def parse_retry_after(value: str, *, now_epoch_s: float | None = None) -> float:
    """Seconds to wait from a Retry-After value: delay-seconds, or an HTTP-date.

    An HTTP-date needs `now_epoch_s` (the receiver's clock, Unix seconds) to become a delay;
    a date in the past means 0.
    """
    text = value.strip()
    if re.fullmatch(r"[0-9]+", text):
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        when = None
    if when is not None and when.tzinfo is None and _ASCTIME.fullmatch(text):
        when = when.replace(tzinfo=datetime.timezone.utc)  # asctime-date names no zone: GMT
    if when is None or when.tzinfo is None:
        raise ValueError(f"Retry-After must be delay-seconds or an HTTP-date, got {value!r}")
    if now_epoch_s is None:
        raise ValueError(f"Retry-After {value!r} is an HTTP-date: pass now_epoch_s to read it")
    return max(0.0, when.timestamp() - now_epoch_s)


def parse_ratelimit_policy(value: str) -> list[PolicyItem]:
    """The items of a RateLimit-Policy field value (ValueError when malformed)."""
    items = []
    for name, params in _items("RateLimit-Policy", value):
        q = _param("RateLimit-Policy", value, params, "q", int, required=True)
        if q < 0:
            raise ValueError(f"RateLimit-Policy q must be >= 0, got {value!r}")
        w = _param("RateLimit-Policy", value, params, "w", int)
        if w is not None and w < 1:
            raise ValueError(f"RateLimit-Policy w must be >= 1, got {value!r}")
        items.append(PolicyItem(name, q, w, _param("RateLimit-Policy", value, params, "qu", str),
                                _param("RateLimit-Policy", value, params, "pk", bytes)))
    return items


def parse_ratelimit(value: str) -> list[LimitItem]:
    """The items of a RateLimit field value (ValueError when malformed)."""
    items = []
    for name, params in _items("RateLimit", value):
        r = _param("RateLimit", value, params, "r", int, required=True)
        t = _param("RateLimit", value, params, "t", int)
        if r < 0 or (t is not None and t < 0):
            raise ValueError(f"RateLimit r and t must be >= 0, got {value!r}")
        items.append(LimitItem(name, r, t, _param("RateLimit", value, params, "pk", bytes)))
    return items


def parse_x_ratelimit(headers: Mapping[str, str]) -> XRateLimit:
    """The X-RateLimit-Limit / -Remaining / -Reset values (None for each one absent)."""
    lower = {k.lower(): v for k, v in headers.items()}

    def number(name: str) -> int | None:
        raw = lower.get(name.lower())
        if raw is None:
            return None
        if not re.fullmatch(r"\s*[0-9]+\s*", raw):
            raise ValueError(f"{name} must be a non-negative integer, got {raw!r}")
        return int(raw)

    return XRateLimit(number("X-RateLimit-Limit"), number("X-RateLimit-Remaining"),
                      number("X-RateLimit-Reset"))


def read(response: Response, *, now: float = 0.0, epoch_s: int = 0) -> View:
    """What a client at virtual time `now` learns from `response` (epoch_s: Unix time of 0)."""
    h = response.header
    retry = h("Retry-After")
    retry_s = None if retry is None else parse_retry_after(retry, now_epoch_s=epoch_s + now)
    policies = _ignoring_malformed(parse_ratelimit_policy, h("RateLimit-Policy"))
    limits = _ignoring_malformed(parse_ratelimit, h("RateLimit"))
    x = parse_x_ratelimit(response.headers)
    x_reset = None if x.reset_epoch_s is None else max(0.0, x.reset_epoch_s - epoch_s - now)
    if limits:
        tight = min(limits, key=lambda item: item.remaining)
        remaining = tight.remaining
        reset = None if tight.reset_s is None else float(tight.reset_s)
    else:
        remaining = x.remaining
        reset = x_reset
    return View(response.status, retry_s, remaining, reset, x_reset, policies, limits)


def _ignoring_malformed(parse, value: str | None) -> tuple:
    """The items of a RateLimit field as a client reads them: none when absent or malformed
    (-10 and -11, section 7: "Malformed RateLimit header fields MUST be ignored")."""
    try:
        return tuple(parse(value)) if value else ()
    except ValueError:
        return ()


# ---------------------------------------------------------------- structured fields (RFC 9651)

_ASCTIME = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun) "
                      r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                      r"([0-9]{2}| [0-9]) [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}")
_TOKEN_START = re.compile(r"[A-Za-z*]")
_TOKEN = re.compile(r"[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*")
_KEY = re.compile(r"[a-z*][a-z0-9_\-.*]*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Token:
    """A Structured Fields Token (an unquoted identifier, e.g. ``request``)."""

    value: str


def _printable(s: str) -> bool:
    return all(0x20 <= ord(c) <= 0x7E for c in s)


def serialize_bare(value) -> str:
    """One bare item in Structured Fields syntax (bool, int, float, str, bytes, Token)."""
    if isinstance(value, bool):
        return "?1" if value else "?0"
    if isinstance(value, int):
        if abs(value) > 999_999_999_999_999:
            raise ValueError(f"integer out of Structured Fields range: {value!r}")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) >= 1e12:
            raise ValueError(f"decimal out of Structured Fields range: {value!r}")
        text = f"{round(value, 3):.3f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    if isinstance(value, str):
        if not _printable(value):
            raise ValueError(f"string must be printable ASCII, got {value!r}")
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bytes):
        return ":" + base64.b64encode(value).decode("ascii") + ":"
    if isinstance(value, Token):
        if not _TOKEN.fullmatch(value.value):
            raise ValueError(f"not a valid token: {value.value!r}")
        return value.value
    raise ValueError(f"cannot serialize {value!r} as a Structured Fields item")


def serialize_list(items: Iterable[tuple[object, Mapping[str, object]]]) -> str:
    """A Structured Fields List of Items: ``item;key=value;...`` joined by ", "."""
    out = []
    for bare, params in items:
        text = serialize_bare(bare)
        for key, val in params.items():
            if not _KEY.fullmatch(key):
                raise ValueError(f"not a valid parameter key: {key!r}")
            text += f";{key}" if val is True else f";{key}={serialize_bare(val)}"
        out.append(text)
    return ", ".join(out)


def parse_list(value: str) -> list[tuple[object, dict[str, object]]]:
    """Parse a Structured Fields List of Items into (bare item, parameters) pairs."""
    parser = _Parser(value)
    out = []
    parser.skip(" ")
    while not parser.done():
        out.append((parser.bare(), parser.params()))
        parser.skip(" \t")
        if parser.done():
            break
        parser.expect(",")
        parser.skip(" \t")
        if parser.done():
            raise ValueError(f"trailing comma in list {value!r}")
    return out


class _Parser:
    """A cursor over one field value; each method reads one construct or raises ValueError."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text.strip(" "), 0

    def done(self) -> bool:
        return self.i >= len(self.text)

    def peek(self) -> str:
        return self.text[self.i] if not self.done() else ""

    def skip(self, chars: str) -> None:
        while not self.done() and self.text[self.i] in chars:
            self.i += 1

    def expect(self, char: str) -> None:
        if self.peek() != char:
            self.fail(f"expected {char!r}")
        self.i += 1

    def fail(self, what: str):
        raise ValueError(f"{what} at position {self.i} of {self.text!r}")

    def bare(self):
        c = self.peek()
        if c == '"':
            return self.string()
        if c == ":":
            end = self.text.find(":", self.i + 1)
            if end < 0:
                self.fail("unterminated byte sequence")
            raw = self.text[self.i + 1:end]
            if not re.fullmatch(r"[A-Za-z0-9+/=]*", raw):
                self.fail("bad byte sequence")
            self.i = end + 1
            try:  # RFC 9651 4.2.7: missing "=" padding SHOULD NOT fail
                return base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
            except ValueError:
                self.fail("bad base64 in byte sequence")
        if c == "?":
            if self.text[self.i + 1:self.i + 2] not in ("0", "1"):
                self.fail("bad boolean")
            self.i += 2
            return self.text[self.i - 1] == "1"
        if c == "-" or c.isdigit():
            m = _NUMBER.match(self.text, self.i)
            if not m:
                self.fail("bad number")
            self.i = m.end()
            whole_part = m.group(0).lstrip("-").split(".")[0]
            if m.group(1):
                if len(whole_part) > 12 or len(m.group(1)) > 4:
                    self.fail("decimal out of range")
                return float(m.group(0))
            if len(whole_part) > 15:
                self.fail("integer out of range")
            return int(m.group(0))
        if _TOKEN_START.match(c or " "):
            m = _TOKEN.match(self.text, self.i)
            self.i = m.end()
            return Token(m.group(0))
        if c == "(":
            self.fail("inner lists are not supported")
        self.fail("expected an item")

    def string(self) -> str:
        self.i += 1
        out = []
        while not self.done():
            c = self.text[self.i]
            self.i += 1
            if c == "\\":
                nxt = self.peek()
                if nxt not in ('"', "\\"):
                    self.fail("bad escape in string")
                out.append(nxt)
                self.i += 1
            elif c == '"':
                return "".join(out)
            elif not (0x20 <= ord(c) <= 0x7E):
                self.fail("non-printable character in string")
            else:
                out.append(c)
        self.fail("unterminated string")

    def params(self) -> dict[str, object]:
        params: dict[str, object] = {}
        while self.peek() == ";":
            self.i += 1
            self.skip(" ")
            m = _KEY.match(self.text, self.i)
            if not m:
                self.fail("bad parameter key")
            self.i = m.end()
            if self.peek() == "=":
                self.i += 1
                params[m.group(0)] = self.bare()
            else:
                params[m.group(0)] = True
        return params


def _items(header: str, value: str) -> list[tuple[str, dict]]:
    try:
        items = parse_list(value)
    except ValueError as e:
        raise ValueError(f"{header}: {e}") from None
    for bare, _ in items:
        if not isinstance(bare, str):
            raise ValueError(f"{header}: each item must be a String naming a policy, got {value!r}")
    return items


def _param(header: str, value: str, params: dict, key: str, kind: type, *, required=False):
    if key not in params:
        if required:
            raise ValueError(f"{header}: parameter {key!r} is required, got {value!r}")
        return None
    got = params[key]
    if type(got) is not kind:
        raise ValueError(f"{header}: parameter {key!r} must be {kind.__name__}, got {value!r}")
    return got


__all__ = ["Policy", "Response", "respond", "read", "View", "PolicyItem", "LimitItem",
           "XRateLimit", "parse_retry_after", "parse_ratelimit_policy", "parse_ratelimit",
           "parse_x_ratelimit", "serialize_list", "parse_list", "Token", "whole_seconds"]
