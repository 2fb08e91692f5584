"""``Subscriber``: one subscription fanned out to asyncio queues (upstream's ``tg-dump-queues`` imports it here).

``subscribe(id)`` gets the messages whose ``id`` property matches (a
request's responses); ``subscribe_all(id)`` gets every message (a queue
dump).  Messages are acknowledged once handed over.  It runs on the
synchronous :mod:`.messaging.pulsar_backend`, receiving in a worker thread; our own
processors use :class:`~trustgraph.base.messaging.pubsub.PubSub` instead.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pulsar

logger = logging.getLogger(__name__)

RECEIVE_WAIT_MS = 250


class SubscriberTimeout(TimeoutError):
    """A subscriber that waited too long for a message (a ``TimeoutError``, as the builtin)."""


def __getattr__(name: str) -> Any:
    # Upstream 2.1.4 names it TimeoutError here; served lazily so the builtin is not shadowed.
    if name == "TimeoutError":
        return SubscriberTimeout
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Subscriber:
    """Fans one consumer's messages out to per-id and catch-all queues."""

    def __init__(self, backend: Any, topic: str, subscription: str, consumer_name: str,
                 schema: type | None = None, max_size: int = 100, metrics: Any = None,
                 backpressure_strategy: str = "block", drain_timeout: float = 5.0) -> None:
        self.backend = backend
        self.topic = topic
        self.subscription = subscription
        self.consumer_name = consumer_name
        self.schema = schema
        self.max_size = max_size
        self.backpressure_strategy = backpressure_strategy
        self.q: dict[str, asyncio.Queue] = {}
        self.full: dict[str, asyncio.Queue] = {}
        self.consumer: Any = None
        self.running = False
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        """Subscribe, then start handing messages over."""
        self.consumer = await asyncio.to_thread(
            self.backend.create_consumer, topic=self.topic, subscription=self.subscription,
            schema=self.schema, consumer_type="shared")
        self.running = True
        self.task = asyncio.create_task(self.run())

    async def stop(self) -> None:
        """Stop receiving and close the consumer."""
        self.running = False
        if self.task is not None:
            await self.task
            self.task = None

    join = stop

    async def run(self) -> None:
        """Hand messages over until stopped, then close the consumer."""
        try:
            while self.running:
                try:
                    msg = await asyncio.to_thread(self.consumer.receive, RECEIVE_WAIT_MS)
                except pulsar.Timeout:
                    continue
                await self._deliver(msg)
        finally:
            await asyncio.to_thread(self.consumer.close)

    async def _deliver(self, msg: Any) -> None:
        value = msg.value()
        rid = msg.properties().get("id")
        queues = list(self.full.values())
        if rid in self.q:
            queues.append(self.q[rid])
        for queue in queues:
            if self.backpressure_strategy == "block":
                await queue.put(value)
            elif queue.full() and self.backpressure_strategy == "drop_oldest":
                queue.get_nowait()
                queue.put_nowait(value)
            elif not queue.full():
                queue.put_nowait(value)
        self.consumer.acknowledge(msg)

    async def subscribe(self, id: str) -> asyncio.Queue:  # noqa: A002 - upstream's name
        """A queue of the messages with this ``id`` property."""
        self.q[id] = asyncio.Queue(maxsize=self.max_size)
        return self.q[id]

    async def unsubscribe(self, id: str) -> None:  # noqa: A002
        self.q.pop(id, None)

    async def subscribe_all(self, id: str) -> asyncio.Queue:  # noqa: A002
        """A queue of every message."""
        self.full[id] = asyncio.Queue(maxsize=self.max_size)
        return self.full[id]

    async def unsubscribe_all(self, id: str) -> None:  # noqa: A002
        self.full.pop(id, None)
