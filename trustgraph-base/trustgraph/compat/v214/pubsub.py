"""Upstream 2.1.4's ``Producer``, ``Publisher``, ``Subscriber`` and ``SubscriberSpec`` (and its ``Consumer``,
from :mod:`.consumer`).

Upstream's processors (its config-svc, librarian, knowledge cores, gateway
dispatchers, document-rag, pdf-decoder) build these themselves with
upstream's constructors, start and stop them, and get upstream's shapes back:
a publisher's ``send(id, item)``, a subscriber's queues per request id.
Their messages travel on our messaging core (:func:`.backends.link_for`), so
a lost broker is waited for and reconnected, a busy subscription paused and
a malformed message refused as ours are.

Where ours behaves otherwise, deliberately (docs/compatibility.md):

* a ``Producer`` or ``Publisher`` retries a send the broker failed, as
  upstream does, but not a record that cannot be encoded or is too big for
  its topic: that raises at once instead of being retried for ever;
* a ``Publisher`` keeps the item whose send failed and sends it again once
  reconnected (upstream drops it);
* a ``Subscriber`` does not hold its lock while waiting for room in a full
  queue, so a reader can still unsubscribe meanwhile;
* ``reconnect_time`` is honoured (upstream always waits 5 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from .backends import SendFailed, link_for
from .consumer import unless_stopped, wait_or_stop
from .metrics import SubscriberMetrics
from .processor import Spec

logger = logging.getLogger(__name__)

#: Seconds between attempts to open a producer upstream's way (upstream: 2).
PRODUCER_RETRY = 2.0
#: Seconds before sending again after a failed send (upstream: at once).
SEND_RETRY = 1.0
#: Seconds between looks at a stopping subscriber's queues (upstream: 0.1).
DRAIN_POLL = 0.1


class SubscriberTimeout(TimeoutError):
    """Upstream's ``TimeoutError`` of ``trustgraph.base.consumer`` and ``.subscriber`` (a builtin one too)."""


class Producer:
    """Sends records on ``topic``; ``send`` returns once the broker has the message."""

    def __init__(self, backend: Any, topic: str, schema: Any, metrics: Any = None,
                 chunking_enabled: bool = True) -> None:
        self.backend = backend
        self.topic = topic
        self.schema = schema
        self.metrics = metrics
        self.chunking_enabled = chunking_enabled
        self.running = True
        #: The open producer, from the first send on.
        self.producer: Any = None
        self._link: Any = None
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        self.running = True
        self._stopping.clear()

    async def stop(self) -> None:
        """Stop sending (a send waiting for the broker returns) and close the producer."""
        self.running = False
        self._stopping.set()
        producer, self.producer = self.producer, None
        if producer is not None:
            await producer.close()

    async def _open(self) -> bool:
        """Open the producer, trying again until it opens or the producer is stopped."""
        if self._link is None:
            self._link = link_for(self.backend)
        while self.running and self.producer is None:
            try:
                logger.info("Connecting publisher to %s", self.topic)
                opened, producer = await unless_stopped(self._stopping, self._link.producer(
                    self.topic, self.schema, self.chunking_enabled))
                if opened:
                    self.producer = producer
                    logger.info("Connected publisher to %s", self.topic)
            except Exception as e:
                logger.error("Could not open a producer on %s: %s", self.topic, e, exc_info=True)
                await wait_or_stop(self._stopping, PRODUCER_RETRY)
        return self.producer is not None

    async def send(self, msg: Any, properties: dict[str, str] = {}) -> None:  # noqa: B006 - upstream's
        """Send ``msg`` with ``properties``, trying again until it is sent or the producer is stopped.

        A record that cannot be sent as it is (not encodable, too big for its topic) raises at once.
        """
        while self.running and await self._open():
            producer = self.producer
            try:
                await producer.send(msg, dict(properties))
            except SendFailed as e:
                logger.error("Send to %s failed, reconnecting: %s", self.topic, e)
                if self.producer is producer:
                    self.producer = None
                await producer.close()
                await wait_or_stop(self._stopping, SEND_RETRY)
                continue
            if self.metrics:
                self.metrics.inc()
            return


class Publisher:
    """Sends what is queued with ``send(id, item)`` in the background, in order.

    ``stop`` sends what is still queued, for up to ``drain_timeout`` seconds,
    and refuses new items meanwhile.
    """

    def __init__(self, backend: Any, topic: str, schema: Any = None, max_size: int = 10,
                 chunking_enabled: bool = True, drain_timeout: float = 5.0) -> None:
        self.backend = backend
        self.topic = topic
        self.schema = schema
        self.q: asyncio.Queue = asyncio.Queue(maxsize=max_size)
        self.chunking_enabled = chunking_enabled
        self.running = True
        self.draining = False
        self.task: asyncio.Task | None = None
        self.drain_timeout = drain_timeout
        self._stopping = asyncio.Event()
        self._drain_until: float | None = None

    async def start(self) -> None:
        self.task = asyncio.create_task(self.run())

    async def stop(self) -> None:
        """Send what is queued (up to ``drain_timeout`` seconds), then close."""
        if self.running:
            self.running = False
            self.draining = True
            self._drain_until = time.monotonic() + self.drain_timeout
            logger.info("Publisher on %s draining, timeout %ss", self.topic, self.drain_timeout)
            self._stopping.set()
        if self.task is not None:
            await self.task

    async def join(self) -> None:
        await self.stop()

    async def send(self, id: str | None, item: Any) -> None:  # noqa: A002 - upstream's name
        """Queue ``item``, sent with the ``id`` property when ``id`` is given."""
        if self.draining:
            raise RuntimeError("Publisher is shutting down, not accepting new messages")
        await self.q.put((id, item))

    async def _next(self) -> tuple[Any, Any] | None:
        """The next queued item, or None once stopping and none is left."""
        if not self.q.empty():
            return self.q.get_nowait()
        if self._stopping.is_set():
            return None
        getting = asyncio.ensure_future(self.q.get())
        stopping = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not getting.done():
            getting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await getting
        if getting.done() and not getting.cancelled():
            return getting.result()
        return await self._next()

    async def _in_time(self, work: Any) -> tuple[bool, Any]:
        """Run ``work`` (a coroutine): without limit while running, within the drain's time once stopping.

        ``(True, result)`` when it finished (its exception raised here); ``(False, None)``
        when the drain's time ran out first (it is cancelled).
        """
        task = asyncio.ensure_future(work)
        if self._drain_until is None:
            await unless_stopped(self._stopping, asyncio.shield(task))
        if not task.done():
            await asyncio.wait({task}, timeout=max(0.0, self._drain_until - time.monotonic()))
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return False, None
        return True, task.result()

    async def _pause(self, seconds: float) -> None:
        """Wait before trying again: ``seconds``, cut short by a stop, and never past the drain's time."""
        if self._drain_until is None:
            await wait_or_stop(self._stopping, seconds)
        else:
            await asyncio.sleep(min(seconds, max(0.0, self._drain_until - time.monotonic())))

    async def run(self) -> None:
        """Send queued items until stopped and drained (or the drain's time is up)."""
        link = link_for(self.backend)
        producer = None
        item = None
        try:
            while True:
                if item is None:
                    item = await self._next()
                    if item is None:
                        logger.info("Publisher on %s drained", self.topic)
                        return
                id_, value = item
                try:
                    if producer is None:
                        in_time, producer = await self._in_time(
                            link.producer(self.topic, self.schema, self.chunking_enabled))
                    else:
                        in_time, _ = await self._in_time(producer.send(value, {"id": id_} if id_ else {}))
                        item = None if in_time else item
                    if not in_time:
                        logger.warning("Drain timeout reached with %d messages left on %s",
                                       self.q.qsize() + 1, self.topic)
                        return
                except SendFailed as e:
                    logger.error("Publisher on %s: %s; reconnecting", self.topic, e)
                    await producer.close()
                    producer = None
                    await self._pause(SEND_RETRY)
                except Exception as e:
                    if producer is None:  # could not open one: the broker, or the backend, is away
                        logger.error("Publisher on %s cannot open a producer: %s", self.topic, e, exc_info=True)
                        await self._pause(PRODUCER_RETRY)
                        continue
                    # A record that cannot be sent as it is (not encodable, too big): dropped, said.
                    logger.error("Publisher on %s dropped a message (id=%s): %s", self.topic, id_, e,
                                 exc_info=True)
                    item = None
        finally:
            self.draining = False
            if producer is not None:
                await producer.close()


class Subscriber:
    """One subscription fanned out to asyncio queues: per request id, and every message.

    ``subscribe(id)`` gives a queue of the messages whose ``id`` property is
    ``id`` (a request's responses); ``subscribe_all(id)`` a queue of every
    message (a dump).  Each message is acknowledged once handed over, or
    dropped when nobody waits for it.  A full queue makes the subscription
    wait (``backpressure_strategy="block"``), loses its oldest item
    (``"drop_oldest"``) or refuses the new one (``"drop_new"``).  ``schema``
    None hands over each payload's JSON, parsed (its bytes when it is no JSON).
    """

    def __init__(self, backend: Any, topic: str, subscription: str, consumer_name: str, schema: Any = None,
                 max_size: int = 100, metrics: Any = None, backpressure_strategy: str = "block",
                 drain_timeout: float = 5.0) -> None:
        self.backend = backend
        self.topic = topic
        self.subscription = subscription
        self.consumer_name = consumer_name
        self.schema = schema
        self.q: dict[str, asyncio.Queue] = {}
        self.full: dict[str, asyncio.Queue] = {}
        self.max_size = max_size
        self.lock = asyncio.Lock()
        self.running = True
        self.draining = False
        self.metrics = metrics
        self.task: asyncio.Task | None = None
        self.backpressure_strategy = backpressure_strategy
        self.drain_timeout = drain_timeout
        #: The subscription while subscribed.
        self.consumer: Any = None
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        """Subscribe (returns once subscribed), then hand messages over in the background."""
        self.running = True
        self._stopping.clear()
        self.consumer = await link_for(self.backend).subscribe(
            self.topic, self.subscription, self.schema, self._process_message, name=self.consumer_name,
            counted=not self.metrics)
        self.task = asyncio.create_task(self.run())

    async def stop(self) -> None:
        """Stop taking messages, wait up to ``drain_timeout`` for the queues to be read, then close."""
        if self.running:
            self.running = False
            self.draining = True
            self._stopping.set()
        if self.task is not None:
            await self.task

    async def join(self) -> None:
        await self.stop()

    async def run(self) -> None:
        """Runs while subscribed: on stopping, drains and removes the subscription."""
        if self.metrics:
            self.metrics.state("running")
        logger.info("Subscriber on %s running", self.topic)
        try:
            await self._stopping.wait()
            deadline = time.monotonic() + self.drain_timeout
            logger.info("Subscriber on %s draining, timeout %ss", self.topic, self.drain_timeout)
            if self.consumer is not None:
                # As upstream: a stopped subscriber removes its subscription.
                await self.consumer.close(unsubscribe=True)
                self.consumer = None
            while any(not q.empty() for q in [*self.q.values(), *self.full.values()]):
                if time.monotonic() >= deadline:
                    left = sum(q.qsize() for q in [*self.q.values(), *self.full.values()])
                    logger.warning("Drain timeout reached with %d messages in queues on %s", left, self.topic)
                    break
                await asyncio.sleep(DRAIN_POLL)
        finally:
            self.draining = False
            if self.metrics:
                self.metrics.state("stopped")

    async def subscribe(self, id: str) -> asyncio.Queue:  # noqa: A002 - upstream's name
        """A queue of the messages whose ``id`` property is ``id``."""
        async with self.lock:
            q = self.q[id] = asyncio.Queue(maxsize=self.max_size)
        return q

    async def unsubscribe(self, id: str) -> None:  # noqa: A002
        async with self.lock:
            self.q.pop(id, None)

    async def subscribe_all(self, id: str) -> asyncio.Queue:  # noqa: A002
        """A queue of every message."""
        async with self.lock:
            q = self.full[id] = asyncio.Queue(maxsize=self.max_size)
        return q

    async def unsubscribe_all(self, id: str) -> None:  # noqa: A002
        async with self.lock:
            self.full.pop(id, None)

    async def _process_message(self, msg: Any) -> None:
        if self.metrics:
            self.metrics.received()
        try:
            rid = msg.properties().get("id")
        except Exception:
            rid = None
        value = msg.value()
        async with self.lock:
            queues = list(self.full.values())
            if rid in self.q:
                queues.append(self.q[rid])
        if not queues:
            logger.debug("Discarding a message on %s with id=%s: nobody waits for it", self.topic, rid)
            return
        for queue in queues:
            if not await self._deliver_to_queue(queue, value):
                logger.debug("Message with id=%s on %s dropped: its queue is full", rid, self.topic)

    async def _deliver_to_queue(self, queue: asyncio.Queue, value: Any) -> bool:
        """Put ``value`` on ``queue`` by the backpressure strategy; False when it was dropped."""
        if self.backpressure_strategy == "drop_new" and queue.full():
            self._dropped()
            return False
        if self.backpressure_strategy == "drop_oldest" and queue.full():
            with contextlib.suppress(asyncio.QueueEmpty):
                queue.get_nowait()
                self._dropped()
        await queue.put(value)
        return True

    def _dropped(self) -> None:
        if self.metrics:
            self.metrics.dropped()


class SubscriberSpec(Spec):
    """A flow's topic read by a :class:`Subscriber` (upstream's spec: ``flow.consumer[name]``)."""

    def __init__(self, name: str, schema: Any) -> None:
        self.name = name
        self.schema = schema

    def add(self, flow: Any, processor: Any, definition: dict[str, Any]) -> None:
        metrics = SubscriberMetrics(processor=flow.id, flow=flow.name, name=self.name)
        flow.consumer[self.name] = Subscriber(
            backend=processor.pubsub, topic=definition[self.name], subscription=flow.id,
            consumer_name=flow.id, schema=self.schema, metrics=metrics)
