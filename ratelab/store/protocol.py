"""The store interface, as :class:`typing.Protocol`\\ s: what the distributed strategies (and
anything else written against "a store") may rely on.

:class:`~ratelab.store.SimStore` and :class:`~ratelab.store.RedisStore` both satisfy
:class:`Store`, and their connections satisfy :class:`Connection`; a test holds them to it.
A store says what it is through class attributes (``kind``, ``virtual_time``), so callers read
them instead of probing for methods.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable


@runtime_checkable
class Connection(Protocol):
    """One client's connection: its own MULTI queue and WATCHed keys (on a real Redis, its
    own socket)."""

    name: str

    def execute(self, *args: Any) -> Any:
        """Run one command as this client; the raw reply (``str``, ``int``, ``None``, ``list``,
        a status ``str``), or raise :class:`~ratelab.store.StoreError` for an error reply and
        :class:`~ratelab.store.StoreUnavailable` when the store does not answer."""
        ...

    def close(self) -> None:
        """Forget (or close) this client's connection."""
        ...


@runtime_checkable
class Store(Protocol):
    """A store with Redis semantics.

    kind          "sim" (in-process, :class:`~ratelab.store.SimStore`) or "redis" (a real
                  server, :class:`~ratelab.store.RedisStore`): what results report as the store.
    virtual_time  True when the store's time is a clock it is given (it never reads the wall
                  clock), so expiry can be driven by a simulation.
    """

    kind: ClassVar[str]
    virtual_time: ClassVar[bool]

    def connect(self, name: str = "client") -> Connection:
        """A new connection, with its own transaction state."""
        ...

    def execute(self, *args: Any) -> Any:
        """Run one command on the store's default connection; its reply."""
        ...

    def close(self) -> None:
        """Release the default connection."""
        ...
