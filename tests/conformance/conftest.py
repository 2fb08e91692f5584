"""The backend conformance suite's fixtures: every test here runs once per transport (issue 37).

A processor sees only ``PubSub``; what it relies on of the broker below (shared
subscriptions, what a topic keeps, properties, order, sizes, liveness) must hold
on each backend alike, or the backend's ``Capabilities`` must say what it does
instead.  So the tests here ask for ``pubsubs`` and never name a backend: they
run on each kind in :data:`KINDS`, with the same assertions.

A new backend is one entry in :data:`KINDS` and one branch in :func:`connect`,
against a server a fixture of ``tests/conftest.py`` starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from trustgraph.base.messaging.pubsub import PubSub
from trustgraph.base.testing import MemoryBroker, memory_pubsub

#: The backends every conformance test runs on.
KINDS = ["memory", "pulsar", "rabbitmq"]

#: Builds one "process's" PubSub (its own connections) on the test's broker, named for its logs.
Connect = Callable[[str], PubSub]


@pytest.fixture(params=KINDS)
def transport_kind(request: pytest.FixtureRequest) -> str:
    """The backend under test."""
    return request.param


@pytest.fixture
def connect(transport_kind: str, request: pytest.FixtureRequest) -> Connect:
    """How this test's processes reach its broker: each call is a new process's PubSub.

    ``memory``: one in-memory broker for the test.  ``pulsar``: the session's
    pulsar-lite (``broker``), with its metrics as the admin URL so the broker's
    consumer counts are read as a processor reads them.
    """
    if transport_kind == "memory":
        memory = MemoryBroker()
        return lambda name: memory_pubsub(memory, name)
    if transport_kind == "pulsar":
        broker = request.getfixturevalue("broker")
        return lambda name: PubSub(broker.url, processor=name, admin_url=broker.admin_url, connect_timeout=60)
    if transport_kind == "rabbitmq":
        from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport
        node = request.getfixturevalue("rabbitmq")
        return lambda name: PubSub(f"amqp://{node.host}:{node.port}", processor=name, connect_timeout=60,
                                   transport=RabbitMQTransport(node.host, node.port, node.username,
                                                               node.password, node.vhost))
    raise AssertionError(f"no broker for transport kind {transport_kind!r}")


@pytest.fixture
async def pubsubs(connect: Connect) -> AsyncIterator[Connect]:
    """``pubsubs(name)``: a connected PubSub per call (two calls: two processes on one broker);
    all closed when the test ends."""
    made: list[PubSub] = []

    def make(name: str = "process") -> PubSub:
        ps = connect(name)
        made.append(ps)
        return ps

    yield make
    for ps in made:
        await ps.close()
