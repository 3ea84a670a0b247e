"""RedisStore: the same store interface over a real Redis, through redis-py.

Replies come back raw (no redis-py response callbacks) and decoded, so they have the shapes
SimStore gives: ``str``, ``int``, ``None``, ``list``; an error reply raises
:class:`~ratelab.store.errors.StoreError` with Redis's full text (redis-py would strip the
"ERR " prefix and pick a subclass; we keep the text whole so both stores compare equal). A
connection that fails or times out raises :class:`~ratelab.store.errors.StoreUnavailable`.
"""

from __future__ import annotations

from typing import Any

import redis
from redis._parsers import _RESP2Parser
from redis.backoff import NoBackoff
from redis.retry import Retry

from .errors import StoreError, StoreUnavailable


class _FullTextParser(_RESP2Parser):
    """RESP2 parsing with error replies kept whole, as StoreError."""

    @classmethod
    def parse_error(cls, response):
        return StoreError(response)


class RedisConnection:
    """One client connection to a real Redis (its own socket: MULTI and WATCH are per client)."""

    def __init__(self, url: str, name: str, timeout_s: float | None) -> None:
        self.name = name
        try:  # a single-connection client connects at once
            self.client = redis.Redis.from_url(
                url, single_connection_client=True, decode_responses=True, protocol=2,
                parser_class=_FullTextParser, socket_timeout=timeout_s,
                socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0))
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
            raise StoreUnavailable(str(e)) from e
        self.client.response_callbacks = {}

    def execute(self, *args: Any) -> Any:
        """Send one command; return the raw reply, or raise StoreError / StoreUnavailable."""
        try:
            return self.client.execute_command(*args)
        except StoreError:
            raise
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
            raise StoreUnavailable(str(e)) from e

    def close(self) -> None:
        """Close the socket."""
        self.client.close()


class RedisStore:
    """A real Redis behind the store interface: ``connect(name)``, ``execute(*args)``.

    url        redis://HOST:PORT/DB
    timeout_s  seconds to wait for a reply before StoreUnavailable (None: wait for ever).
    """

    kind = "redis"
    virtual_time = False

    def __init__(self, url: str, timeout_s: float | None = 5.0) -> None:
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"url must be a redis:// URL, got {url!r}")
        self.url = url
        self.timeout_s = timeout_s
        self._default = self.connect("default")

    def connect(self, name: str = "client") -> RedisConnection:
        """A new connection with its own socket."""
        return RedisConnection(self.url, name, self.timeout_s)

    def execute(self, *args: Any) -> Any:
        """Run one command on the default connection."""
        return self._default.execute(*args)

    def close(self) -> None:
        """Close the default connection."""
        self._default.close()
