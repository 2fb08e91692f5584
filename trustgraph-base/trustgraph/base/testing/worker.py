"""A started processor on the in-memory transport, in the spirit of nameko's ``worker_factory``.

::

    async with worker(Processor, topic="joke") as w:
        replies = await w.call(request_topic, response_topic, ToolServiceRequest(...),
                               ToolServiceResponse)

The processor is the real class, started with ``start()`` and stopped with
``stop()``; only its transport is swapped (a :class:`~.memory.MemoryBroker`
shared by everything in the test) and its config comes from the test
(:meth:`Worker.configure`) instead of config-svc: ``follow_config=False``,
then ``apply_config``, the same method a push ends in.  That keeps a unit
test deterministic (no push to wait for, no fetch loop); the push and fetch
path itself is covered by the integration tests on the real broker.

Every wait has a generous bound (``timeout``, 10 s) so a broken test fails
instead of hanging; tests wait for events (a reply, a request seen), never
for time.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from ..messaging.message import Message
from ..messaging.pubsub import Producer, PubSub
from .memory import MemoryBroker, memory_pubsub
from .stand_ins import Answer, Responder

__all__ = ["Inbox", "Worker", "worker"]

P = TypeVar("P")

_FRESH = object()


class Inbox:
    """Every message on one topic, decoded, for a test to wait on and inspect."""

    def __init__(self, topic: str, timeout: float) -> None:
        self.topic = topic
        self.messages: list[Message] = []
        self._timeout = timeout
        self._arrived = asyncio.Event()

    async def _on(self, msg: Message) -> None:
        self.messages.append(msg)
        self._arrived.set()

    def by_id(self, rid: str | None) -> list[Any]:
        """The records that carried ``rid`` (None: those without an id), in arrival order."""
        return [m.value for m in self.messages if m.id == rid]

    async def wait_for(self, rid: str, until: Callable[[Any], bool] | None = None) -> list[Any]:
        """The records for ``rid`` once one satisfies ``until`` (default: the first one)."""
        async with asyncio.timeout(self._timeout):
            while True:
                got = self.by_id(rid)
                for i, value in enumerate(got):
                    if until is None or until(value):
                        return got[:i + 1]
                self._arrived.clear()
                await self._arrived.wait()


class Worker(Generic[P]):
    """One started processor and the test's side of the transport."""

    def __init__(self, processor: P, broker: MemoryBroker, pubsub: PubSub, timeout: float) -> None:
        self.processor = processor
        self.broker = broker
        self.pubsub = pubsub  # the test's own "process"
        self.timeout = timeout
        self.config: dict[str, dict[str, str]] = {}
        self.version = 0
        self._producers: dict[str, Producer] = {}
        self._inboxes: dict[str, Inbox] = {}

    # -- config and flows ------------------------------------------------------
    async def configure(self, types: dict[str, dict[str, Any]]) -> int:
        """Replace the given config types (values that are not strings are JSON-encoded)
        and hand the whole config to the processor as a new version; returns it."""
        for name, items in types.items():
            self.config[name] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in items.items()}
        self.version += 1
        await self.processor.apply_config(
            {name: dict(items) for name, items in self.config.items()}, self.version)
        return self.version

    def flow_definition(self, name: str) -> dict[str, str]:
        """A definition with a topic of its own for every spec key of the processor: a client
        spec's ``request_name`` and ``response_name``, a consumer's or producer's ``name`` (any
        spec with a ``schema``; a parameter has none)."""
        keys: list[str] = []
        for spec in self.processor.specs:
            if hasattr(spec, "request_name") and hasattr(spec, "response_name"):
                keys += [spec.request_name, spec.response_name]
            elif hasattr(spec, "name") and hasattr(spec, "schema"):
                keys.append(spec.name)
        return {key: f"non-persistent://tg/test/{self.processor.id}--{key}:{name}" for key in keys}

    async def open_flow(self, name: str, definition: dict[str, Any] | None = None) -> Any:
        """Start flow ``name`` as config-svc's start-flow would, where the processor's wire
        assigns flows (its ``flow_assignment``: ``active-flow`` on ours)."""
        definition = definition if definition is not None else self.flow_definition(name)
        await self.configure(self.processor.flow_assignment.assignment(
            self.config, self.processor.id, name, definition))
        if name not in self.processor.flows:
            raise AssertionError(f"flow {name} did not start: {self.processor.flow_errors.get(name)}")
        return self.processor.flows[name]

    # -- traffic -----------------------------------------------------------------
    async def send(self, topic: str, record: Any, *, id: Any = _FRESH,
                   properties: dict[str, str] | None = None) -> str | None:
        """Publish ``record`` (or raw ``bytes``) on ``topic``; returns the id it carried.

        ``id`` defaults to a fresh one; ``id=None`` sends a message without one.
        """
        rid = str(uuid.uuid4()) if id is _FRESH else id
        props = dict(properties or {})
        if rid is not None:
            props["id"] = rid
        if isinstance(record, bytes):
            self.broker.publish(topic, record, props)
        else:
            producer = self._producers.get(topic)
            if producer is None:
                producer = self._producers[topic] = await self.pubsub.producer(topic)
            await producer.send(record, props)
        return rid

    async def listen(self, topic: str, schema: type) -> Inbox:
        """The :class:`Inbox` of ``topic`` (subscribed on first use, so before a request goes)."""
        inbox = self._inboxes.get(topic)
        if inbox is None:
            inbox = self._inboxes[topic] = Inbox(topic, self.timeout)
            await self.pubsub.consumer(topic, f"test-listen-{uuid.uuid4()}", schema, handler=inbox._on,
                                       concurrency=1, own=True)
        return inbox

    async def call(self, request_topic: str, response_topic: str, record: Any, schema: type, *,
                   until: Callable[[Any], bool] | None = None,
                   properties: dict[str, str] | None = None) -> list[Any]:
        """Send a request with a fresh id and return its replies, up to the one ``until`` accepts."""
        inbox = await self.listen(response_topic, schema)
        rid = await self.send(request_topic, record, properties=properties)
        return await inbox.wait_for(rid, until)

    async def respond(self, request_topic: str, response_topic: str, schema: type,
                      answer: Answer) -> Responder:
        """A stand-in for a service the processor calls (see :class:`~.stand_ins.Responder`)."""
        return await Responder(self.pubsub, request_topic, response_topic, schema, answer).start()


@asynccontextmanager
async def worker(cls: type[P], *, broker: MemoryBroker | None = None, timeout: float = 10.0,
                 **params: Any) -> AsyncIterator[Worker[P]]:
    """Make ``cls(**params)`` on the in-memory transport, start it, and stop it at the end.

    ``broker``: share one with other workers of the test (an agent and the tool
    service it calls); a new one by default.
    """
    broker = broker or MemoryBroker()
    ident = params.pop("id", None) or f"{cls.__name__.lower()}-{uuid.uuid4().hex[:6]}"
    processor = cls(id=ident, metrics=False, follow_config=False,
                    pubsub=memory_pubsub(broker, ident), **params)
    test_side = memory_pubsub(broker, "test")
    await processor.start()
    try:
        yield Worker(processor, broker, test_side, timeout)
    finally:
        await test_side.close()
        await processor.stop()
