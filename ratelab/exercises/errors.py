"""What a check raises about an answer: it was not attempted, or it failed in a way it names."""

from __future__ import annotations


class NotAttempted(Exception):
    """The answer raised NotImplementedError before answering anything."""


class AnswerFailed(Exception):
    """The answer raised, ran too long or returned something of the wrong shape."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
