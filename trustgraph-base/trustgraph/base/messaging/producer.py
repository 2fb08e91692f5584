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

from ...schema.codec import encode
from ...topics import parse
from ..safety.limits import MAX_MESSAGE_BYTES
from .errors import MessageTooLarge, PubSubError
from .transport import TransportError, TransportProducer

logger = logging.getLogger(__name__)

#: How near the limit a payload must be before its properties are counted too (no cost below).
_NEAR_LIMIT = 64 * 1024
#: What a message costs the broker's limit besides its payload and properties (pulsar-client's own
#: metadata: 21 bytes measured on pulsar-lite; room kept for a producer name and sequence ids).
_FIXED_METADATA = 64


def metadata_bytes(properties: dict[str, str] | None) -> int:
    """What ``properties`` and the fixed metadata take of the limit: each key and value, and a
    few bytes of framing each (6 measured; 8 counted)."""
    return _FIXED_METADATA + sum(len(k.encode()) + len(v.encode()) + 8 for k, v in (properties or {}).items())


# One fire-and-forget send in this many still asks for a receipt (see send_nowait).
_RECEIPT_EVERY = 64



class Producer:
    """Sends records on one topic through a transport's producer (Pulsar's: batching off, chunking on, as upstream)."""

    def __init__(self, producer: TransportProducer, topic: str, loop: asyncio.AbstractEventLoop, *,
                 returns_unconsumed: bool = False) -> None:
        """``returns_unconsumed``: the transport hands back a request nobody consumes through the
        send's receipt (``Capabilities.returns_unconsumed``), so a send with ``on_error`` always
        carries one and the caller fails at once instead of at its deadline."""
        self._producer = producer
        self._returns = returns_unconsumed
        self._loop = loop
        self.topic = topic
        self._sent = 0
        self._closed = False
        self._limit = None if parse(topic).persistent else MAX_MESSAGE_BYTES
        # The receipt of the sends that only log a failure, made once: the transport adapts
        # one callable to its client's callback once, not once per message.
        self._logging_receipt = self._log_failure

    def _encode(self, value: Any, properties: dict[str, str] | None = None) -> bytes:
        # A record, or its encoding already made (a reply measured before it was sent).
        data = value if value.__class__ is bytes else encode(value)
        limit = self._limit
        # The broker's limit counts the message's metadata and properties too (measured on
        # pulsar-lite: the largest payload it took was 21 bytes under the limit with no property,
        # 157 with an id of 100 characters and a deadline): a message just under the limit would
        # pass a check of its payload alone and be refused by the client, and a reply sent without
        # a receipt would be lost to its caller's deadline.  Counted only near the limit.
        if limit is not None and len(data) > limit - _NEAR_LIMIT:
            size = len(data) + metadata_bytes(properties)
            if size > limit:
                raise MessageTooLarge(
                    f"message of {len(data):,} bytes ({size:,} with its properties and metadata) is over "
                    f"the {limit:,}-byte limit of non-persistent topic {self.topic}")
        return data

    async def send(self, value: Any, properties: dict[str, str] | None = None) -> None:
        """Encode ``value`` (a record, or bytes already encoded) and send it; returns when the broker has it."""
        await self.send_bytes(self._encode(value, properties), properties)

    async def send_bytes(self, data: bytes, properties: dict[str, str] | None = None) -> None:
        loop = self._loop
        fut = loop.create_future()

        def done(problem: str | None) -> None:
            loop.call_soon_threadsafe(_settle, fut, problem)

        try:
            self._producer.send(data, properties or {}, done)
        except TransportError as e:
            raise PubSubError(f"send to {self.topic} failed: {e}") from e
        problem = await fut
        if problem is not None:
            raise PubSubError(f"send to {self.topic} failed: {problem}")

    def send_nowait(self, value: Any, properties: dict[str, str] | None = None,
                    on_error: Callable[[str], None] | None = None,
                    on_queued_sent: Callable[[], None] | None = None) -> bool:
        """Send without waiting for the broker's receipt; failures are logged.

        For replies and requests, where the caller's deadline already covers a
        message that never arrives.  A receipt callback runs on the client's
        I/O thread and must take the GIL, which under load stalls that
        thread's network I/O (measured with pulsar-client: about a fifth fewer
        calls/s with 32 in flight), so most sends go without one: a send while
        the producer is disconnected, and one send in ``_RECEIPT_EVERY``
        otherwise, carry the receipt that logs a failure and reports it to
        ``on_error`` (every send with ``on_error`` does on a transport that hands
        back a request nobody consumes: ``returns_unconsumed``).  A broker that
        rejects or loses messages is therefore still logged, and a single lost
        message surfaces as the caller's timeout.

        Returns False when the producer was reconnecting: the transport keeps
        the message and sends it once connected, and ``on_queued_sent`` is
        called (on the client's I/O thread) when the broker has it, so a caller
        can date the message by when it really went out (:mod:`.lost_calls`).
        """
        self._sent += 1
        producer = self._producer
        connected = producer.is_connected()
        if self._sent % _RECEIPT_EVERY and connected and not (self._returns and on_error is not None):
            receipt = None
        elif on_error is None and (connected or on_queued_sent is None):
            receipt = self._logging_receipt  # no closure per message
        else:
            queued_sent = None if connected else on_queued_sent

            def receipt(problem: str | None) -> None:
                if problem is not None:
                    self._log_failure(problem)
                    if on_error is not None:
                        on_error(f"send to {self.topic} failed: {problem}")
                elif queued_sent is not None:
                    queued_sent()

        try:
            producer.send(self._encode(value, properties), properties or {}, receipt)
        except TransportError as e:
            raise PubSubError(f"send to {self.topic} failed: {e}") from e
        return bool(connected)

    def is_connected(self) -> bool:
        """False while the transport is reconnecting this producer to the broker."""
        try:
            return bool(self._producer.is_connected())
        except Exception:  # closed under us
            return True

    def _log_failure(self, problem: str | None) -> None:
        if problem is None:
            return
        # While the broker is away the connection watcher has said once that messages sent
        # meanwhile may be lost, and after close nothing is sent: a line per message (a
        # heartbeat every few seconds) would only bury that line.
        if self._closed or not self.is_connected():
            logger.debug("send to %s failed: %s", self.topic, problem)
        else:
            logger.error("send to %s failed: %s", self.topic, problem)

    def close(self) -> None:
        self._closed = True
        self._producer.close()


def _settle(fut: asyncio.Future, result: Any) -> None:
    if not fut.done():
        fut.set_result(result)
