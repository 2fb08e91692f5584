"""The serving side of request/response: one reply path for every service.

Every service that answers requests (tool services, the LLM services,
prompt-template, the agent, config-svc) must do the same things, and they
are done here once:

* take the request's ``id`` property, which every reply carries; a request
  without one is dropped before any work, logged at DEBUG: nobody could match
  a reply (upstream answers ``id="unknown"``, which nobody waits for), and a
  request nobody can see the outcome of must not change anything either;
* answer a message that cannot be decoded but has an id with the service's
  error record, so its sender hears at once instead of at its deadline, and
  one whose id is over ``limits.MAX_ID`` with an error reply, unworked;
* turn an exception from the work into the service's error reply:
  :class:`ServiceError` carries its own error type, anything else gets the
  service's default type;
* tell "the work failed" (an error reply) from "the reply could not be
  sent" (:class:`ReplyNotSent`: logged, and nothing is run again, because the
  work may have had side effects; the caller's deadline reports the loss);
* skip a request whose caller's deadline (``deadlines.py``) has passed
  before any work, and give the work that deadline (:attr:`Reply.deadline`,
  :meth:`Reply.left`) to bound itself and to pass on to what it calls.

A service describes its replies once (:class:`Replies`), and its handler gets
a :class:`Reply` per request to send records with.  FlowProcessor wires this
for a ``ConsumerSpec(..., replies=...)`` and AsyncProcessor for
:meth:`~trustgraph.base.processors.async_processor.AsyncProcessor.serve`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterable, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ...exceptions import ServiceError
from ...schema import Error
from ...topics import parse, to_pulsar
from ..safety import limits
from . import deadlines, metrics, tracing
from .consumer import Consumer
from .lost_calls import restarted
from .message import Message
from .pubsub import MessageTooLarge, Producer, PubSub, PubSubError

logger = logging.getLogger(__name__)

__all__ = ["Replies", "Reply", "ReplyNotSent", "RequestServer", "ServiceError", "serve"]


#: Error type of the reply to a request refused because too many already wait (consumer.SHED_AT).
OVERLOADED = "overloaded"


class ReplyNotSent(PubSubError):
    """A reply record could not be handed to the broker (not a failure of the work)."""


def type_and_message(e: BaseException) -> str:
    """The error text of an unexpected exception: ``ValueError: bad input``."""
    return f"{type(e).__name__}: {e}"


def message_or_type(e: BaseException) -> str:
    """The error text of an unexpected exception: its message, or its type when it has none."""
    return str(e) or type(e).__name__


@dataclass(frozen=True)
class Replies:
    """How one service answers, declared once.

    ``error_record(Error)`` builds the response record that carries an error
    (every field the wire expects set, e.g. ``end_of_stream=True``);
    ``error_type`` is the service's type for errors (``llm-error``...).
    ``malformed_record`` builds the answer to an undecodable request when it
    differs from ``error_record``; its message is ``malformed_prefix`` plus
    the decoder's reason.  ``describe`` makes the message of an unexpected
    exception.  ``confirm``: each reply waits for the broker's receipt (for
    services whose callers need the reply to be durable before the next
    request); otherwise replies go without waiting, since the caller's
    deadline covers a lost one.  ``on_error(type)`` is called for each error
    reply (a service's metrics).
    """

    error_record: Callable[[Error], Any]
    error_type: str
    malformed_record: Callable[[Error], Any] | None = None
    malformed_prefix: str = "malformed request: "
    describe: Callable[[BaseException], str] = type_and_message
    confirm: bool = False
    on_error: Callable[[str], None] | None = None

    def error(self, message: str, type: str | None = None) -> Any:
        """The error record for ``message``."""
        return self.error_record(Error(type=type or self.error_type, message=message))

    def malformed(self, reason: str) -> Any:
        """The answer to a request that could not be decoded."""
        build = self.malformed_record or self.error_record
        return build(Error(type=self.error_type, message=self.malformed_prefix + reason))


class Reply:
    """The reply path of one request: every record goes out with the request's id.

    ``deadline`` is when the caller stops waiting (absolute UNIX time), or
    None when the request did not say.
    """

    __slots__ = ("id", "sent", "deadline", "_producer", "_props", "_replies")

    def __init__(self, producer: Producer, rid: str, replies: Replies, deadline: float | None = None) -> None:
        self.id = rid
        self.sent = 0
        self.deadline = deadline
        self._producer = producer
        # The trace context current where the reply path is made: the request's span (tracing.py).
        self._props = tracing.outgoing({"id": rid})
        self._replies = replies

    def left(self, cap: float) -> float:
        """Seconds the work may take: what is left of the caller's deadline, at most ``cap``."""
        return deadlines.left(self.deadline, cap)

    def for_work(self, cap: float) -> float:
        """Seconds the work may take so that its reply, even an error saying it ran out of time,
        arrives while the caller still waits (``deadlines.for_work``)."""
        return deadlines.for_work(self.deadline, cap)

    async def send(self, record: Any, properties: dict[str, str] | None = None) -> None:
        """Send one response record (or its encoding, as bytes), with ``properties`` beside the id.

        Raises :class:`ReplyNotSent` when the broker does not take it.  A
        record too big for its topic raises ``MessageTooLarge`` instead: that
        is the outcome of the work, and the caller gets an error reply
        saying so.
        """
        props = self._props if not properties else {**properties, **self._props}
        try:
            if self._replies.confirm:
                await self._producer.send(record, props)
            else:
                self._producer.send_nowait(record, props)
        except MessageTooLarge:
            raise
        except PubSubError as e:
            raise ReplyNotSent(str(e)) from e
        self.sent += 1

    async def error(self, message: str, type: str | None = None) -> None:
        """Send the service's error record."""
        await self.send(self._replies.error(message, type))
        if self._replies.on_error is not None:
            self._replies.on_error(type or self._replies.error_type)

    async def stream(self, records: AsyncIterable[Any], end: Any) -> None:
        """Send each record as it comes, then the end marker ``end``.

        A record may be ``(record, properties)`` to send properties with it.
        ``end`` is a record, or a function called after the last record that
        returns it (so it can carry totals), or returns ``(record, properties)``
        to send properties with it.  If ``records`` raises, no end
        marker is sent: the exception becomes the error reply, which ends the
        stream for the caller.  If a send fails, ``records`` is closed at
        once, so the work behind it stops.
        """
        closing = (contextlib.aclosing(records) if hasattr(records, "aclose")
                   else contextlib.nullcontext(records))
        async with closing as items:
            async for record in items:
                if isinstance(record, tuple):
                    await self.send(*record)
                else:
                    await self.send(record)
        last = end() if callable(end) else end
        if isinstance(last, tuple):
            await self.send(*last)
        else:
            await self.send(last)


Work = Callable[[Message, Reply], Awaitable[None]]


class RequestServer:
    """Runs ``work(msg, reply)`` per request of one consumer and owns every outcome."""

    def __init__(self, producer: Producer, replies: Replies, work: Work, *, name: str,
                 processor: str = "", arrived: Callable[[str], None] | None = None) -> None:
        """``arrived(request_id)`` is told of every request with an id (``lost_calls``)."""
        self.producer = producer
        self.replies = replies
        self.work = work
        self.name = name
        self.arrived = arrived
        self._m_expired = metrics.requests_expired.labels(processor, name)

    async def handle(self, msg: Message) -> None:
        """The consumer's handler: never raises for a request's content or the work's failure."""
        rid = msg.id
        if rid is None:
            logger.debug("Request on %s without an id property dropped: nobody could match a reply",
                         msg.topic)
            return
        if self.arrived is not None:
            self.arrived(rid)
        deadline = deadlines.read(msg.properties)
        if deadline is not None and deadlines.passed(deadline):
            # The caller has given up: working for it would only delay the callers still waiting.
            self._m_expired.inc()
            logger.debug("Request %s on %s skipped: its caller's deadline passed %.1fs ago",
                         rid, self.name, time.time() - deadline)
            return
        with tracing.served(_span_name(msg.topic), msg.properties, messaging_destination_name=msg.topic,
                            trustgraph_request_id=rid) as span:
            reply = Reply(self.producer, rid, self.replies, deadline)
            problem = limits.id_problem(rid)
            if problem is not None:  # answered (with the id, so it can be matched), not worked on
                tracing.failed(span, problem)
                await self._error(reply, problem, None)
                return
            try:
                await self.work(msg, reply)
            except ReplyNotSent as e:
                tracing.failed(span, f"reply not sent: {e}")
                logger.error("Reply %s on %s not sent (%s); the request is not run again",
                             rid, self.name, e)
            except ServiceError as e:
                tracing.failed(span, e.message, e.type)
                logger.debug("Request %s on %s answered with an error: %s", rid, self.name, e.message)
                await self._error(reply, e.message, e.type)
            except Exception as e:
                tracing.failed(span, self.replies.describe(e))
                logger.exception("Request %s on %s failed", rid, self.name)
                await self._error(reply, self.replies.describe(e), None)

    async def _error(self, reply: Reply, message: str, type: str | None) -> None:
        try:
            await reply.error(message, type)
        except PubSubError as e:
            logger.error("Error reply %s on %s not sent: %s", reply.id, self.name, e)

    async def malformed(self, props: dict[str, str], reason: str) -> None:
        """The consumer's ``malformed`` callback: an error reply, if the sender can match one."""
        rid = props.get("id")
        if rid is None:
            logger.debug("Undecodable request on %s without an id dropped", self.name)
            return
        try:
            await Reply(self.producer, rid, self.replies).send(self.replies.malformed(reason))
        except PubSubError as e:
            logger.error("Error reply %s on %s not sent: %s", rid, self.name, e)
            return
        if self.replies.on_error is not None:
            self.replies.on_error(self.replies.error_type)


    async def overloaded(self, props: dict[str, str], reason: str) -> None:
        """The consumer's ``overloaded`` callback: an error reply at once, instead of a silent drop."""
        rid = props.get("id")
        if rid is None:
            return
        try:
            await Reply(self.producer, rid, self.replies).error(reason, OVERLOADED)
        except PubSubError as e:
            logger.error("Error reply %s on %s not sent: %s", rid, self.name, e)


@functools.lru_cache(maxsize=1024)
def _span_name(topic: str) -> str:
    """A served request's span name: ``serve`` and the topic's short name (``serve agent:default``)."""
    try:
        return f"serve {parse(topic).name}"
    except ValueError:
        return f"serve {topic}"


async def serve(pubsub: PubSub, request_topic: str, subscription: str, schema: type, *,
                producer: Producer, replies: Replies, work: Work, concurrency: int = 1,
                name: str | None = None) -> Consumer:
    """Subscribe ``work`` to ``request_topic``, replying on ``producer``; returns the consumer."""
    # After a broker outage this process tells its callers which requests reached it (lost_calls).
    arrived = functools.partial(pubsub.calls.arrived, to_pulsar(request_topic))
    server = RequestServer(producer, replies, work, name=name or subscription, processor=pubsub.processor,
                           arrived=arrived)
    consumer = await pubsub.consumer(request_topic, subscription, schema, handler=server.handle,
                                     concurrency=concurrency, name=name, malformed=server.malformed,
                                     overloaded=server.overloaded)
    # In place of a process that died, the calls still waiting on this topic had their requests
    # taken by it: they end at once (lost_calls), not at their deadlines. A first start ends
    # nothing (it may be one more replica beside live ones), but says that the topic is served,
    # which the broker's consumer gauge shows only at its next refresh (unserved.py).
    await pubsub.calls.serving(request_topic, time.time(), first=not restarted())
    return consumer
