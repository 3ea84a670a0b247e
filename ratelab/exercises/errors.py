"""What a check raises about an answer that failed in a way it names."""

from __future__ import annotations


class AnswerFailed(Exception):
    """The answer raised, ran too long or returned something of the wrong shape."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
