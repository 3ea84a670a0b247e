"""Both stores satisfy the store Protocols, method by method, and say what they are."""

from __future__ import annotations

import inspect

import pytest

from ratelab.store import Connection, RedisStore, SimStore, Store
from ratelab.store.protocol import Connection as ConnectionProtocol


def _same_parameters(impl, proto) -> bool:
    """The implementation takes the protocol's parameters, with the same kinds and defaults."""
    def shape(sig):
        return [(p.name, p.kind, p.default) for p in sig.parameters.values()]
    return shape(inspect.signature(impl)) == shape(inspect.signature(proto))



def test_both_stores_and_their_connections_satisfy_the_protocols(store):
    assert isinstance(store, Store)
    conn = store.connect("p")
    assert isinstance(conn, Connection)
    assert conn.name == "p"
    for name in ("connect", "execute", "close"):
        assert _same_parameters(getattr(type(store), name), getattr(Store, name)), name
    for name in ("execute", "close"):
        assert _same_parameters(getattr(type(conn), name), getattr(ConnectionProtocol, name))
    conn.close()


def test_stores_declare_what_they_are_as_class_attributes():
    assert (SimStore.kind, SimStore.virtual_time) == ("sim", True)
    assert (RedisStore.kind, RedisStore.virtual_time) == ("redis", False)


def test_an_object_missing_a_verb_or_a_declaration_is_not_a_store():
    class NoConnect:
        kind, virtual_time = "x", True

        def execute(self, *args):
            return None

        def close(self):
            pass

    class Undeclared:
        def connect(self, name="client"):
            return None

        def execute(self, *args):
            return None

        def close(self):
            pass

    assert not isinstance(NoConnect(), Store)
    assert not isinstance(Undeclared(), Store)


def test_a_simulation_refuses_a_store_whose_time_is_its_own(redis_url):
    from ratelab.cluster import make_strategy, simulate
    from ratelab.cluster.sim import Request

    real = RedisStore(redis_url)
    with pytest.raises(ValueError, match="store must keep virtual time"):
        simulate(make_strategy("incr", limit=5), [Request(0, 0.0, 0)], store=real)
    real.close()
