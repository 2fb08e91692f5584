"""The consuming half of the messaging core: a subscription bridged into asyncio.

See :mod:`trustgraph.base.messaging.pubsub` for the design; this module holds the
:class:`Consumer` that :meth:`PubSub.consumer` returns.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable

from ...schema.codec import SchemaError, decode
from ...topics import parse
from . import metrics
from .message import Message
from .transport import Delivery, TransportConsumer

logger = logging.getLogger(__name__)


Handler = Callable[[Message], Awaitable[None]]
DirectHandler = Callable[[Message], None]
# Called with the properties of a message that could not be decoded and the reason,
# so that a service can send the sender an error reply instead of silence.
MalformedHandler = Callable[[dict[str, str], str], Awaitable[None]]
# A message handed over by the listener, with the consumer that delivered it.
_Item = tuple[TransportConsumer, Delivery]

#: Messages of a non-persistent subscription waiting for a handler before
#: further ones are refused (``overloaded``) rather than queued.
SHED_AT = 10_000
#: Seconds between two WARNING lines about refused messages (the others go at DEBUG): under an
#: overload every refusal is a message, and a line for each would flood the log.
SHED_LOG_EVERY = 10.0


#: On Python 3.12+ a handler's task starts eagerly: its first step runs at once, inside the drain
#: that took its message, not one event-loop iteration later (the largest single cost left on the
#: sequential tool-call path: bench/notes.md).  Safe here: asyncio.current_task() is the task
#: during that step, so asyncio.timeout() and the deadlines work inside it, and the drain's own
#: state is settled before each start.  3.11 has no eager tasks: its handlers start as before.
EAGER_HANDLERS = sys.version_info >= (3, 12)


class _Uncounted:
    """Stands in for a metric a consumer does not keep (``counted=False``)."""

    def inc(self) -> None:
        pass

    def observe(self, _value: float) -> None:
        pass


_UNCOUNTED = _Uncounted()


class Consumer:
    """Receives and decodes messages of one subscription and runs a handler.

    Ack after the handler returns, negative-ack when it raises (a persistent
    topic then redelivers).  A payload that is not valid JSON or does not fit
    the schema is logged and acknowledged: redelivering it could never succeed,
    and it must not stop the messages behind it.

    Messages arrive through the transport's listener (pulsar-client's listener
    thread), which only appends them to an inbox and, when no drain is pending, schedules one on the event
    loop: under load one loop wake-up (one self-pipe write) carries many
    messages.  At most ``concurrency`` handlers run at once; messages beyond
    that wait in a loop-side queue, and when the messages handed over and not
    finished reach twice the concurrency (at least concurrency + 8) the
    listener is paused, so further messages wait in the client's receive queue
    and then at the broker (its flow control), never in an unbounded list
    here.  It resumes once they are back down to the concurrency (hysteresis,
    so a busy consumer does not pause and resume on every message).

    Pausing is for persistent topics only.  On a non-persistent topic the
    broker does not keep what a consumer cannot take: it drops a message for
    a consumer without flow permits, silently (Apache Pulsar's non-persistent
    dispatcher does, and pulsar-lite too, without counting it as dropped).
    Measured: 5,000 config requests from 20 clients, 1,676 of them never
    answered, while the service itself was never short of work.  So a
    non-persistent consumer keeps taking messages, and they wait here, up to
    :data:`SHED_AT`; beyond that, each further one is acknowledged and handed
    to ``overloaded(properties, reason)``, so a service answers its sender
    with an error at once instead of leaving it to its deadline.  The callers'
    own bounds (calls in flight per client, deadlines) keep the queue short
    in practice.

    (Measured alternative, not kept: a ``receive_async`` pump from the loop.
    A receive on an empty queue blocks for ~70 us, and it was no faster.)
    """

    # Messages handled per drain before yielding to other callbacks.
    _BATCH = 256

    def __init__(self, *, topic: str, schema: type | None,
                 handler: Handler | None, direct: DirectHandler | None,
                 concurrency: int, loop: asyncio.AbstractEventLoop,
                 name: str, processor: str, malformed: MalformedHandler | None = None,
                 overloaded: MalformedHandler | None = None, counted: bool = True) -> None:
        """``schema`` None: handlers get the payload's bytes undecoded (a queue dump).
        ``counted`` False: the messages received, their outcomes and handling times are
        counted by whoever supplied the handler (a consumer of upstream's shape, with a
        metrics object of its own), so they are not counted twice; what this consumer
        drops itself (malformed, overloaded) it still counts."""
        self._consumer: TransportConsumer | None = None
        self._overloaded = overloaded
        # The broker keeps what we do not take only on a persistent topic (see above).
        self._may_pause = parse(topic).persistent
        self._schema = schema
        self._handler = handler
        self._direct = direct
        self._malformed = malformed
        self._loop = loop
        self._limit = max(1, concurrency)
        self._pause_at = max(2 * self._limit, self._limit + 8)
        self._queued = 0          # messages handed to the loop and not yet finished
        self._paused: TransportConsumer | None = None  # the consumer paused, while paused
        self._lock = threading.Lock()
        self._running = True
        self._inbox: deque[_Item] = deque()    # listener thread -> loop
        self._scheduled = False                # a drain is pending on the loop
        self._waiting: deque[_Item] = deque()  # loop side: waiting for a handling slot
        self._active = 0                       # handlers running (loop thread only)
        self._acks: list[_Item] = []           # direct: (consumer, message) received, ack queued
        self._tasks: set[asyncio.Task] = set()
        self.topic = topic
        self.name = name
        self._m_received = metrics.messages_received.labels(processor, name) if counted else _UNCOUNTED
        self._m_ok = metrics.messages_handled.labels(processor, name, "success") if counted else _UNCOUNTED
        self._m_err = metrics.messages_handled.labels(processor, name, "error") if counted else _UNCOUNTED
        self._m_dropped = metrics.messages_dropped.labels(processor, name, "malformed")
        self._m_shed = metrics.messages_dropped.labels(processor, name, "overloaded")
        self._shed_warned: float | None = None  # when the last WARNING about refusals went out
        self._shed_unsaid = 0                   # refusals since then
        self._m_latency = metrics.handling_latency.labels(processor, name) if counted else _UNCOUNTED

    def attach(self, consumer: TransportConsumer) -> None:
        self._consumer = consumer

    def is_connected(self) -> bool:
        """False while the transport is reconnecting this consumer to the broker."""
        try:
            return self._consumer is None or bool(self._consumer.is_connected())
        except Exception:  # closed, or a stand-in without the method
            return True

    # -- listener thread ---------------------------------------------------
    def on_message(self, consumer: TransportConsumer, msg: Delivery) -> None:
        """The transport's listener: called for every message, on any thread.

        Each message travels with the consumer object that delivered it, and
        is acknowledged (or paused and resumed) through that one: a message
        may arrive before the open has returned to :meth:`attach`
        (measured with pulsar-client: 5 of 120 client starts under load), and
        a retried open may deliver on the consumer of the attempt that timed out.
        """
        if not self._running:
            return
        if self._direct is None:
            with self._lock:
                self._queued += 1
                if self._queued >= self._pause_at and self._paused is None and self._may_pause:
                    self._paused = consumer
                    try:
                        consumer.pause()
                    except Exception as e:
                        logger.debug("pause on %s failed: %s", self.topic, e)
        self._inbox.append((consumer, msg))
        if not self._scheduled:
            self._scheduled = True
            try:
                self._loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # loop closed during shutdown
                self._running = False

    def _finished(self) -> None:
        with self._lock:
            self._queued -= 1
            paused = self._paused
            resume = paused is not None and self._queued <= self._limit and self._running
            if resume:
                self._paused = None
        if resume:
            try:
                paused.resume()
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
            item = inbox.popleft()
            if self._direct is not None:
                self._deliver_direct(item)
            elif self._active < self._limit and self._running:
                self._start(item)
            elif not self._may_pause and len(self._waiting) >= SHED_AT:
                self._shed(item)
            else:
                self._waiting.append(item)

    def _shed(self, item: _Item) -> None:
        """Refuse one message of a non-persistent backlog that is full: ack it, tell ``overloaded``."""
        consumer, msg = item
        self._m_shed.inc()
        self._ack(consumer, msg)
        self._finished()
        props = msg.properties()
        reason = (f"overloaded: {len(self._waiting):,} requests already wait on {self.topic}; "
                  f"try again later")
        self._shed_unsaid += 1
        now = time.monotonic()
        if self._shed_warned is None or now - self._shed_warned >= SHED_LOG_EVERY:
            logger.warning("Refused %d message(s) on %s since the last such line (latest id=%s): %s",
                           self._shed_unsaid, self.topic, props.get("id"), reason)
            self._shed_warned, self._shed_unsaid = now, 0
        else:
            logger.debug("Refused a message on %s (id=%s): %s", self.topic, props.get("id"), reason)
        if self._overloaded is not None:
            task = self._loop.create_task(self._report(self._overloaded, props, reason))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _decode(self, msg: Delivery) -> Message | None:
        self._m_received.inc()
        try:
            value = msg.data() if self._schema is None else decode(self._schema, msg.data())
        except SchemaError as e:
            self._m_dropped.inc()
            props = msg.properties()
            logger.warning("Dropped malformed message on %s (id=%s): %s",
                           self.topic, props.get("id"), e)
            if self._malformed is not None:
                task = self._loop.create_task(self._report(self._malformed, props, str(e)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return None
        return Message(value, msg.properties(), self.topic)

    async def _report(self, callback: MalformedHandler, props: dict[str, str], reason: str) -> None:
        try:
            await callback(props, reason)
        except Exception:
            logger.exception("Error reply for a refused message on %s failed", self.topic)

    def _deliver_direct(self, item: _Item) -> None:
        # Responses: nothing to retry, so acknowledged on receipt; the ack is
        # queued and sent after the callbacks just woken have run (it is off
        # the caller's path, and never skipped).
        self._acks.append(item)
        if len(self._acks) == 1:
            self._loop.call_soon(self._flush_acks)
        m = self._decode(item[1])
        if m is None:
            return
        try:
            self._direct(m)
        except Exception:
            logger.exception("Response dispatch failed on %s", self.topic)

    def _flush_acks(self) -> None:
        acks, self._acks = self._acks, []
        for consumer, msg in acks:
            try:
                consumer.ack(msg)
            except Exception as e:  # closed under us: a response topic does not redeliver
                logger.debug("Ack on %s failed: %s", self.topic, e)

    def _start(self, item: _Item) -> None:
        self._active += 1
        handle = self._handle(*item)
        task = (asyncio.Task(handle, loop=self._loop, eager_start=True) if EAGER_HANDLERS
                else self._loop.create_task(handle))
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        self._active -= 1
        self._finished()
        waiting = self._waiting
        while waiting and self._active < self._limit and self._running:
            self._start(waiting.popleft())

    async def _handle(self, consumer: TransportConsumer, msg: Delivery) -> None:
        start = time.perf_counter()
        m = self._decode(msg)
        if m is None:
            self._ack(consumer, msg)
            return
        try:
            await self._handler(m)
        except asyncio.CancelledError:
            self._nack(consumer, msg)
            raise
        except Exception as e:
            self._m_err.inc()
            logger.exception("Handler for %s failed (id=%s): %s", self.topic, m.id, e)
            self._nack(consumer, msg)
            return
        self._m_ok.inc()
        self._ack(consumer, msg)
        self._m_latency.observe(time.perf_counter() - start)

    def _ack(self, consumer: TransportConsumer, msg: Delivery) -> None:
        try:
            consumer.ack(msg)
        except Exception as e:
            logger.warning("Ack on %s failed: %s", self.topic, e)

    def _nack(self, consumer: TransportConsumer, msg: Delivery) -> None:
        try:
            consumer.nack(msg)
        except Exception as e:
            logger.warning("Negative ack on %s failed: %s", self.topic, e)

    async def stop(self, drain_timeout: float = 5.0, unsubscribe: bool = False) -> None:
        """Stop taking messages, let handlers in flight finish, then close.

        ``unsubscribe``: also remove the subscription from the broker.  Closing
        alone keeps a subscription on a persistent topic, and the broker then
        keeps every later message for it, for ever: right for a service that
        comes back under the same name, wrong for a subscription of one
        caller's (an export socket's), whose name nobody uses again.
        """
        self._running = False
        for consumer in (self._consumer, self._paused):
            try:
                if consumer is not None:
                    consumer.pause()
            except Exception:
                pass
        # Handed over but not started: left unacknowledged (redelivered on a
        # persistent topic, as if they had stayed in the client's queue).
        self._inbox.clear()
        self._waiting.clear()
        self._flush_acks()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=drain_timeout)
        if self._consumer is not None and unsubscribe:
            try:
                await asyncio.to_thread(self._consumer.unsubscribe)
            except Exception as e:  # e.g. the broker is gone: it will expire the subscription, if it can
                logger.warning("Could not remove the subscription of %s on %s: %s", self.name, self.topic, e)
        if self._consumer is not None:
            try:
                await asyncio.to_thread(self._consumer.close)
            except Exception:
                pass
