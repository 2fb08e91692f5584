"""The messaging core: producers and consumers on Pulsar, bridged into asyncio.

We use pulsar-client's synchronous API with our own threads rather than
``pulsar.asyncio``: measured on the target machine, the sync client did about
7,500 request/response round trips per second with 32 in flight against about
4,000 for ``pulsar.asyncio`` (see BENCHMARKS.md).  The bridge is small:

* a send is ``send_async`` whose callback resolves an asyncio future
  (``send_nowait`` mostly goes without a callback: see there);
* a consumer's messages arrive on the client's listener thread, which appends
  them to an inbox and wakes the event loop once per batch (not once per
  message); ``--concurrency`` bounds the handlers running, and the listener
  is paused when too many messages are waiting, so the broker's flow control
  does the rest.

Everything above this module sees only :class:`PubSub`, :class:`Producer`,
:class:`Consumer` and :class:`Message`, so the transport can change without
touching processors.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pulsar
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential,
)

from ..schema.codec import SchemaError, decode, encode
from . import metrics
from .topics import to_pulsar

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _client_logger() -> Any:
    """pulsar-client's own C++ console logger, at WARN unless we run at DEBUG.

    Passing a Python logger instead makes the client's threads call into Python
    while the interpreter shuts down, which aborts the process (measured: about
    one exit in eight ended in SIGABRT), so we keep its logging in C++.
    """
    level = pulsar.LoggerLevel.Info if logger.isEnabledFor(logging.DEBUG) else pulsar.LoggerLevel.Warn
    return pulsar.ConsoleLogger(level)


_OK = pulsar.Result.Ok
# One fire-and-forget send in this many still asks for a receipt (see send_nowait).
_RECEIPT_EVERY = 64


class PubSubError(RuntimeError):
    """A broker operation failed (send rejected, connection lost for too long)."""


@dataclass(slots=True)
class Message(Generic[T]):
    """A decoded message as handlers see it."""

    value: T
    properties: dict[str, str]
    topic: str

    @property
    def id(self) -> str | None:
        """The correlation id property, if the sender set one."""
        return self.properties.get("id")


class Producer:
    """Sends records on one topic; batching off, chunking on (as upstream)."""

    def __init__(self, producer: pulsar.Producer, topic: str, loop: asyncio.AbstractEventLoop) -> None:
        self._producer = producer
        self._loop = loop
        self.topic = topic
        self._sent = 0

    async def send(self, value: Any, properties: dict[str, str] | None = None) -> None:
        """Encode ``value`` and send it; returns when the broker has it."""
        await self.send_bytes(encode(value), properties)

    async def send_bytes(self, data: bytes, properties: dict[str, str] | None = None) -> None:
        loop = self._loop
        fut = loop.create_future()

        def done(result: pulsar.Result, _msg_id: Any) -> None:
            loop.call_soon_threadsafe(_settle, fut, result)

        try:
            self._producer.send_async(data, done, properties=properties or {})
        except pulsar.PulsarException as e:
            raise PubSubError(f"send to {self.topic} failed: {e}") from e
        result = await fut
        if result != pulsar.Result.Ok:
            raise PubSubError(f"send to {self.topic} failed: {result}")

    def send_nowait(self, value: Any, properties: dict[str, str] | None = None,
                    on_error: Callable[[str], None] | None = None) -> None:
        """Send without waiting for the broker's receipt; failures are logged.

        For replies and requests, where the caller's deadline already covers a
        message that never arrives.  A receipt callback runs on the client's
        I/O thread and must take the GIL, which under load stalls that
        thread's network I/O (measured: about a fifth fewer calls/s with 32 in
        flight), so most sends go without one: a send while the producer is
        disconnected, and one send in ``_RECEIPT_EVERY`` otherwise, carry the
        callback that logs a failure and reports it to ``on_error``.  A broker
        that rejects or loses messages is therefore still logged, and a single
        lost message surfaces as the caller's timeout.
        """
        self._sent += 1
        producer = self._producer
        if self._sent % _RECEIPT_EVERY and producer.is_connected():
            done = None
        elif on_error is None:
            done = self._log_failure  # no closure per message
        else:
            topic = self.topic

            def done(result: pulsar.Result, _msg_id: Any) -> None:
                if result != _OK:
                    logger.error("send to %s failed: %s", topic, result)
                    on_error(f"send to {topic} failed: {result}")

        try:
            producer.send_async(encode(value), done, properties=properties or {})
        except pulsar.PulsarException as e:
            raise PubSubError(f"send to {self.topic} failed: {e}") from e

    def _log_failure(self, result: pulsar.Result, _msg_id: Any) -> None:
        if result != _OK:
            logger.error("send to %s failed: %s", self.topic, result)

    def close(self) -> None:
        try:
            self._producer.close()
        except pulsar.PulsarException:
            pass


def _settle(fut: asyncio.Future, result: Any) -> None:
    if not fut.done():
        fut.set_result(result)


Handler = Callable[[Message], Awaitable[None]]
DirectHandler = Callable[[Message], None]
# Called with the properties of a message that could not be decoded and the reason,
# so that a service can send the sender an error reply instead of silence.
MalformedHandler = Callable[[dict[str, str], str], Awaitable[None]]


class Consumer:
    """Receives and decodes messages of one subscription and runs a handler.

    Ack after the handler returns, negative-ack when it raises (a persistent
    topic then redelivers).  A payload that is not valid JSON or does not fit
    the schema is logged and acknowledged: redelivering it could never succeed,
    and it must not stop the messages behind it.

    Messages arrive through the client's listener thread, which only appends
    them to an inbox and, when no drain is pending, schedules one on the event
    loop: under load one loop wake-up (one self-pipe write) carries many
    messages.  At most ``concurrency`` handlers run at once; messages beyond
    that wait in a loop-side queue, and when the messages handed over and not
    finished reach twice the concurrency (at least concurrency + 8) the
    listener is paused, so further messages wait in the client's receive queue
    and then at the broker (its flow control), never in an unbounded list
    here.  It resumes once they are back down to the concurrency (hysteresis,
    so a busy consumer does not pause and resume on every message).

    (Measured alternative, not kept: a ``receive_async`` pump from the loop.
    A receive on an empty queue blocks for ~70 us, and it was no faster.)
    """

    # Messages handled per drain before yielding to other callbacks.
    _BATCH = 256

    def __init__(self, *, topic: str, schema: type,
                 handler: Handler | None, direct: DirectHandler | None,
                 concurrency: int, loop: asyncio.AbstractEventLoop,
                 name: str, processor: str, malformed: MalformedHandler | None = None) -> None:
        self._consumer: pulsar.Consumer | None = None
        self._schema = schema
        self._handler = handler
        self._direct = direct
        self._malformed = malformed
        self._loop = loop
        self._limit = max(1, concurrency)
        self._pause_at = max(2 * self._limit, self._limit + 8)
        self._queued = 0          # messages handed to the loop and not yet finished
        self._paused = False
        self._lock = threading.Lock()
        self._running = True
        self._inbox: deque[Any] = deque()    # listener thread -> loop
        self._scheduled = False              # a drain is pending on the loop
        self._waiting: deque[Any] = deque()  # loop side: waiting for a handling slot
        self._active = 0                     # handlers running (loop thread only)
        self._acks: list[Any] = []           # direct: received, ack queued
        self._tasks: set[asyncio.Task] = set()
        self.topic = topic
        self.name = name
        self._m_received = metrics.messages_received.labels(processor, name)
        self._m_ok = metrics.messages_handled.labels(processor, name, "success")
        self._m_err = metrics.messages_handled.labels(processor, name, "error")
        self._m_dropped = metrics.messages_dropped.labels(processor, name, "malformed")
        self._m_latency = metrics.handling_latency.labels(processor, name)

    def attach(self, consumer: pulsar.Consumer) -> None:
        self._consumer = consumer

    # -- listener thread ---------------------------------------------------
    def on_message(self, consumer: Any, msg: Any) -> None:
        """Called by pulsar-client's listener thread for every message."""
        if not self._running:
            return
        if self._direct is None:
            with self._lock:
                self._queued += 1
                if self._queued >= self._pause_at and not self._paused:
                    self._paused = True
                    try:
                        consumer.pause_message_listener()
                    except Exception as e:
                        logger.debug("pause on %s failed: %s", self.topic, e)
        self._inbox.append(msg)
        if not self._scheduled:
            self._scheduled = True
            try:
                self._loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # loop closed during shutdown
                self._running = False

    def _finished(self) -> None:
        with self._lock:
            self._queued -= 1
            resume = self._paused and self._queued <= self._limit and self._running
            if resume:
                self._paused = False
        if resume:
            try:
                self._consumer.resume_message_listener()
            except Exception as e:
                logger.debug("resume on %s failed: %s", self.topic, e)

    # -- event loop --------------------------------------------------------
    def _drain(self) -> None:
        """Take what the listener handed over."""
        # Cleared before reading: a message appended from here on either is
        # seen by the loop below or schedules a new drain.
        self._scheduled = False
        inbox = self._inbox
        n = 0
        while inbox:
            if n == self._BATCH:
                # Let other callbacks run; the rest is taken on the next turn.
                if not self._scheduled:
                    self._scheduled = True
                    self._loop.call_soon(self._drain)
                return
            n += 1
            msg = inbox.popleft()
            if self._direct is not None:
                self._deliver_direct(msg)
            elif self._active < self._limit and self._running:
                self._start(msg)
            else:
                self._waiting.append(msg)

    def _decode(self, msg: Any) -> Message | None:
        self._m_received.inc()
        try:
            value = decode(self._schema, msg.data())
        except SchemaError as e:
            self._m_dropped.inc()
            props = msg.properties()
            logger.warning("Dropped malformed message on %s (id=%s): %s",
                           self.topic, props.get("id"), e)
            if self._malformed is not None:
                task = self._loop.create_task(self._report_malformed(props, str(e)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return None
        return Message(value, msg.properties(), self.topic)

    async def _report_malformed(self, props: dict[str, str], reason: str) -> None:
        try:
            await self._malformed(props, reason)
        except Exception:
            logger.exception("Error reply for a malformed message on %s failed", self.topic)

    def _deliver_direct(self, msg: Any) -> None:
        # Responses: nothing to retry, so acknowledged on receipt; the ack is
        # queued and sent after the callbacks just woken have run (it is off
        # the caller's path, and never skipped).
        self._acks.append(msg)
        if len(self._acks) == 1:
            self._loop.call_soon(self._flush_acks)
        m = self._decode(msg)
        if m is None:
            return
        try:
            self._direct(m)
        except Exception:
            logger.exception("Response dispatch failed on %s", self.topic)

    def _flush_acks(self) -> None:
        acks, self._acks = self._acks, []
        ack = self._consumer.acknowledge
        for msg in acks:
            try:
                ack(msg)
            except Exception:
                pass

    def _start(self, msg: Any) -> None:
        self._active += 1
        task = self._loop.create_task(self._handle(msg))
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        self._active -= 1
        self._finished()
        waiting = self._waiting
        while waiting and self._active < self._limit and self._running:
            self._start(waiting.popleft())

    async def _handle(self, msg: Any) -> None:
        start = time.perf_counter()
        m = self._decode(msg)
        if m is None:
            self._ack(msg)
            return
        try:
            await self._handler(m)
        except asyncio.CancelledError:
            self._nack(msg)
            raise
        except Exception as e:
            self._m_err.inc()
            logger.exception("Handler for %s failed (id=%s): %s", self.topic, m.id, e)
            self._nack(msg)
            return
        self._m_ok.inc()
        self._ack(msg)
        self._m_latency.observe(time.perf_counter() - start)

    def _ack(self, msg: Any) -> None:
        try:
            self._consumer.acknowledge(msg)
        except Exception as e:
            logger.warning("Ack on %s failed: %s", self.topic, e)

    def _nack(self, msg: Any) -> None:
        try:
            self._consumer.negative_acknowledge(msg)
        except Exception as e:
            logger.warning("Negative ack on %s failed: %s", self.topic, e)

    async def stop(self, drain_timeout: float = 5.0) -> None:
        """Stop taking messages, let handlers in flight finish, then close."""
        self._running = False
        if self._consumer is not None:
            try:
                self._consumer.pause_message_listener()
            except Exception:
                pass
        # Handed over but not started: left unacknowledged (redelivered on a
        # persistent topic, as if they had stayed in the client's queue).
        self._inbox.clear()
        self._waiting.clear()
        self._flush_acks()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=drain_timeout)
        if self._consumer is not None:
            try:
                await asyncio.to_thread(self._consumer.close)
            except Exception:
                pass


_RETRYABLE = (pulsar.ConnectError, pulsar.Timeout, pulsar.LookupError,
              pulsar.ServiceUnitNotReady, pulsar.TopicNotFound)


class PubSub:
    """One Pulsar client per process, and the factory for producers and consumers."""

    def __init__(self, url: str, *, api_key: str | None = None, listener: str | None = None,
                 processor: str = "", connect_timeout: float = 300.0) -> None:
        self.url = url
        self.processor = processor
        self._api_key = api_key
        self._listener = listener
        self._client: pulsar.Client | None = None
        self._connect_timeout = connect_timeout
        self._producers: list[Producer] = []
        self._consumers: list[Consumer] = []

    # operation_timeout_seconds is short on purpose: pulsar-lite 0.2 keys the
    # consumers of a shared subscription by the client-chosen consumer id, so a
    # second replica whose consumer id matches the first one's is refused and
    # retried until the operation timeout; our retry then subscribes with the
    # next id and succeeds.  A short timeout keeps that detour to seconds.
    # (Apache Pulsar keys consumers per connection and never hits this.)
    @property
    def client(self) -> pulsar.Client:
        if self._client is None:
            auth = pulsar.AuthenticationToken(self._api_key) if self._api_key else None
            self._client = pulsar.Client(
                self.url, authentication=auth, listener_name=self._listener,
                operation_timeout_seconds=3, connection_timeout_ms=3000,
                io_threads=1, message_listener_threads=1, logger=_client_logger(),
            )
        return self._client

    async def _retrying(self, what: str, fn: Callable[[], T]) -> T:
        """Run a blocking broker call in a thread, retrying while the broker is unreachable."""
        attempt = 0
        async for attempt_ctx in AsyncRetrying(
            retry=retry_if_exception_type(_RETRYABLE),
            wait=wait_exponential(multiplier=0.2, max=5),
            stop=stop_after_delay(self._connect_timeout),
            reraise=True,
        ):
            with attempt_ctx:
                attempt += 1
                if attempt > 1:
                    logger.warning("Broker %s not reachable for %s yet (attempt %d)", self.url, what, attempt)
                return await asyncio.to_thread(fn)
        raise AssertionError("unreachable")

    async def producer(self, topic: str) -> Producer:
        """A producer on ``topic`` (generic name or Pulsar URL)."""
        url = to_pulsar(topic)
        p = await self._retrying(f"producer {url}", lambda: self.client.create_producer(
            url, chunking_enabled=True, batching_enabled=False,
            block_if_queue_full=False, max_pending_messages=10000,
        ))
        prod = Producer(p, url, asyncio.get_running_loop())
        self._producers.append(prod)
        return prod

    async def consumer(self, topic: str, subscription: str, schema: type, *,
                       handler: Handler | None = None, direct: DirectHandler | None = None,
                       concurrency: int = 1, initial_position: str = "latest",
                       name: str | None = None,
                       malformed: MalformedHandler | None = None) -> Consumer:
        """Subscribe (Shared) and start handling.

        ``handler`` is an async function run per message with at most
        ``concurrency`` running at once.  ``direct`` is a plain function called
        on the event loop, for response dispatch that cannot fail or block.
        """
        if (handler is None) == (direct is None):
            raise ValueError("give exactly one of handler or direct")
        url = to_pulsar(topic)
        pos = (pulsar.InitialPosition.Earliest if initial_position == "earliest"
               else pulsar.InitialPosition.Latest)
        cons = Consumer(topic=url, schema=schema, handler=handler, direct=direct,
                        concurrency=concurrency, loop=asyncio.get_running_loop(),
                        name=name or subscription, processor=self.processor,
                        malformed=malformed)
        c = await self._retrying(f"subscription {subscription} on {url}", lambda: self.client.subscribe(
            url, subscription, consumer_type=pulsar.ConsumerType.Shared,
            initial_position=pos, receiver_queue_size=1000,
            negative_ack_redelivery_delay_ms=1000, message_listener=cons.on_message,
        ))
        cons.attach(c)
        self._consumers.append(cons)
        return cons

    async def remove(self, *parts: Producer | Consumer) -> None:
        """Close some producers and consumers (a flow stopping)."""
        for part in parts:
            if isinstance(part, Consumer):
                await part.stop()
                if part in self._consumers:
                    self._consumers.remove(part)
            else:
                await asyncio.to_thread(part.close)
                if part in self._producers:
                    self._producers.remove(part)

    async def close(self) -> None:
        """Stop every consumer, close every producer, then the client."""
        await asyncio.gather(*(c.stop() for c in self._consumers), return_exceptions=True)
        for p in self._producers:
            await asyncio.to_thread(p.close)
        self._consumers.clear()
        self._producers.clear()
        if self._client is not None:
            client, self._client = self._client, None
            try:
                await asyncio.to_thread(client.close)
            except Exception:
                pass
