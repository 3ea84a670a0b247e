"""Stores with Redis semantics behind one interface: ``connect(name).execute(*args)``.

* :class:`SimStore` — in-process, virtual time, real Lua (lupa): deterministic, no server.
* :class:`RedisStore` — a real Redis through redis-py.

Code written against the interface (:class:`Store` and :class:`Connection`, typing Protocols;
the strategies in :mod:`ratelab.cluster` speak to them) runs unchanged on both; the Lua scripts
are the same text on both (:func:`ratelab.cluster.strategies.script`).
"""

from __future__ import annotations

from .errors import StoreError, StoreUnavailable
from .protocol import Connection, Store
from .real import RedisStore
from .sim import OK, SimConnection, SimStore, Status


def open_store(spec: str = "sim", **kwargs) -> Store:
    """A store from a short spec: "sim" for a SimStore, or a redis:// URL for a RedisStore."""
    if spec == "sim":
        return SimStore(**kwargs)
    if isinstance(spec, str) and spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(spec, **kwargs)
    raise ValueError(f"store must be 'sim' or a redis:// URL, got {spec!r}")


__all__ = ["Store", "Connection", "SimStore", "SimConnection", "RedisStore", "StoreError",
           "StoreUnavailable", "Status", "OK", "open_store"]
