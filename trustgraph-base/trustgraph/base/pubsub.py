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
from collections.abc import Callable
from typing import Any, TypeVar

import pulsar
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential,
)

from ..schema.codec import encode
from .consumer import Consumer, DirectHandler, Handler, MalformedHandler
from .message import Message
from .topics import to_pulsar

logger = logging.getLogger(__name__)

__all__ = ["Consumer", "DirectHandler", "Handler", "MalformedHandler", "Message", "MessageTooLarge",
           "Producer", "PubSub", "PubSubError"]

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


class MessageTooLarge(PubSubError):
    """A message bigger than the broker takes on a topic that cannot chunk it."""


# Pulsar's default maxMessageSize is 5 MiB, less room for the metadata
# (pulsar-client refuses more than 5,232,640 bytes).  Persistent topics chunk
# bigger messages; non-persistent ones cannot, and the client would drop the
# message with only a log line, so we refuse it up front with a clear error.
MAX_MESSAGE_BYTES = 5 * 1024 * 1024 - 10 * 1024

# pulsar-lite 0.2 may drop a non-persistent message published from another
# connection just after subscribe() returns (measured 18 in 300 under CPU load;
# none after 50 ms): clients and processors let new subscriptions settle this
# long before the first request or before reporting ready.
SUBSCRIBE_SETTLE = 0.05


class Producer:
    """Sends records on one topic; batching off, chunking on (as upstream)."""

    def __init__(self, producer: pulsar.Producer, topic: str, loop: asyncio.AbstractEventLoop) -> None:
        self._producer = producer
        self._loop = loop
        self.topic = topic
        self._sent = 0
        self._limit = None if topic.startswith("persistent://") else MAX_MESSAGE_BYTES

    def _encode(self, value: Any) -> bytes:
        data = encode(value)
        if self._limit is not None and len(data) > self._limit:
            raise MessageTooLarge(
                f"message of {len(data):,} bytes is over the {self._limit:,}-byte limit of "
                f"non-persistent topic {self.topic}")
        return data

    async def send(self, value: Any, properties: dict[str, str] | None = None) -> None:
        """Encode ``value`` and send it; returns when the broker has it."""
        await self.send_bytes(self._encode(value), properties)

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
            producer.send_async(self._encode(value), done, properties=properties or {})
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


_RETRYABLE = (pulsar.ConnectError, pulsar.Timeout, pulsar.LookupError,
              pulsar.ServiceUnitNotReady, pulsar.TopicNotFound)


class PubSub:
    """One Pulsar client per process, and the factory for producers and consumers."""

    def __init__(self, url: str, *, api_key: str | None = None, listener: str | None = None,
                 processor: str = "", connect_timeout: float = 300.0, client: Any = None,
                 subscribe_settle: float = SUBSCRIBE_SETTLE) -> None:
        """``client``: an object with pulsar.Client's ``create_producer``, ``subscribe`` and
        ``close`` to use instead of connecting to ``url``; the in-memory broker of
        :mod:`trustgraph.base.testing` passes one, so a test runs the same producer and
        consumer code as production with no broker (and no settle time: ``subscribe_settle``).
        """
        self.url = url
        self.subscribe_settle = subscribe_settle
        self.processor = processor
        self._api_key = api_key
        self._listener = listener
        self._client: pulsar.Client | None = client
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
        last: BaseException | None = None
        async for attempt_ctx in AsyncRetrying(
            retry=retry_if_exception_type(_RETRYABLE),
            wait=wait_exponential(multiplier=0.2, max=5),
            stop=stop_after_delay(self._connect_timeout),
            reraise=True,
        ):
            with attempt_ctx:
                attempt += 1
                if attempt > 1:
                    logger.warning("%s on %s failed (%s: %s); retrying, attempt %d", what, self.url,
                                   type(last).__name__, last, attempt)
                try:
                    return await asyncio.to_thread(fn)
                except _RETRYABLE as e:
                    last = e
                    raise
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
        ``malformed(properties, reason)`` is told of each undecodable message
        (a request/response service answers it: see :mod:`.serving`).
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
