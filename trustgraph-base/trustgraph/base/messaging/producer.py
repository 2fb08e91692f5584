"""The sending half of the messaging core: records sent on one topic, bridged into asyncio.

See :mod:`trustgraph.base.messaging.pubsub` for the design; this module holds the
:class:`Producer` that :meth:`PubSub.producer` returns, and the largest message
a topic that cannot chunk takes (:data:`MAX_MESSAGE_BYTES`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pulsar

from ...schema.codec import encode
from ...topics import parse
from ..safety.limits import MAX_MESSAGE_BYTES
from .errors import MessageTooLarge, PubSubError

logger = logging.getLogger(__name__)

_OK = pulsar.Result.Ok
_ALREADY_CLOSED = pulsar.Result.AlreadyClosed
# One fire-and-forget send in this many still asks for a receipt (see send_nowait).
_RECEIPT_EVERY = 64



class Producer:
    """Sends records on one topic; batching off, chunking on (as upstream)."""

    def __init__(self, producer: pulsar.Producer, topic: str, loop: asyncio.AbstractEventLoop) -> None:
        self._producer = producer
        self._loop = loop
        self.topic = topic
        self._sent = 0
        self._limit = None if parse(topic).persistent else MAX_MESSAGE_BYTES

    def _encode(self, value: Any) -> bytes:
        # A record, or its encoding already made (a reply measured before it was sent).
        data = value if value.__class__ is bytes else encode(value)
        if self._limit is not None and len(data) > self._limit:
            raise MessageTooLarge(
                f"message of {len(data):,} bytes is over the {self._limit:,}-byte limit of "
                f"non-persistent topic {self.topic}")
        return data

    async def send(self, value: Any, properties: dict[str, str] | None = None) -> None:
        """Encode ``value`` (a record, or bytes already encoded) and send it; returns when the broker has it."""
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
                    on_error: Callable[[str], None] | None = None,
                    on_queued_sent: Callable[[], None] | None = None) -> bool:
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

        Returns False when the producer was reconnecting: pulsar-client keeps
        the message and sends it once connected, and ``on_queued_sent`` is
        called (on the client's I/O thread) when the broker has it, so a caller
        can date the message by when it really went out (:mod:`.lost_calls`).
        """
        self._sent += 1
        producer = self._producer
        connected = producer.is_connected()
        if self._sent % _RECEIPT_EVERY and connected:
            done = None
        elif on_error is None and (connected or on_queued_sent is None):
            done = self._log_failure  # no closure per message
        else:
            queued_sent = None if connected else on_queued_sent

            def done(result: pulsar.Result, _msg_id: Any) -> None:
                if result != _OK:
                    self._log_failure(result, _msg_id)
                    if on_error is not None:
                        on_error(f"send to {self.topic} failed: {result}")
                elif queued_sent is not None:
                    queued_sent()

        try:
            producer.send_async(self._encode(value), done, properties=properties or {})
        except pulsar.PulsarException as e:
            raise PubSubError(f"send to {self.topic} failed: {e}") from e
        return bool(connected)

    def is_connected(self) -> bool:
        """False while pulsar-client is reconnecting this producer to the broker."""
        try:
            return bool(self._producer.is_connected())
        except Exception:  # closed under us
            return True

    def _log_failure(self, result: pulsar.Result, _msg_id: Any) -> None:
        if result == _OK:
            return
        # While the broker is away the connection watcher has said once that messages sent
        # meanwhile may be lost, and after close nothing is sent: a line per message (a
        # heartbeat every few seconds) would only bury that line.
        if result == _ALREADY_CLOSED or not self.is_connected():
            logger.debug("send to %s failed: %s", self.topic, result)
        else:
            logger.error("send to %s failed: %s", self.topic, result)

    def close(self) -> None:
        try:
            self._producer.close()
        except pulsar.PulsarException:
            pass


def _settle(fut: asyncio.Future, result: Any) -> None:
    if not fut.done():
        fut.set_result(result)

