"""The errors a store raises: Redis's own reply texts, and the store being unreachable."""

from __future__ import annotations

import redis.exceptions


class StoreError(redis.exceptions.ResponseError):
    """An error reply, carrying Redis's full text ("ERR value is not an integer or out of range").

    Both stores raise it with the same text for the same mistake, so code (and tests) can match
    on ``str(error)`` whichever store is underneath.
    """

    @property
    def code(self) -> str:
        """The error's first word: ERR, WRONGTYPE, NOSCRIPT, EXECABORT ..."""
        return str(self).split(" ", 1)[0]


class StoreUnavailable(Exception):
    """The store did not answer: it is down, or the reply did not come before the timeout."""


# The texts Redis 7 replies with, shared by SimStore and the tests.
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
SYNTAX = "ERR syntax error"
NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
EXECABORT = "EXECABORT Transaction discarded because of previous errors."


def arity(command: str) -> str:
    """The wrong-number-of-arguments text for `command`."""
    return f"ERR wrong number of arguments for '{command.lower()}' command"
