"""The messaging core: producers and consumers on a broker's transport, bridged into asyncio.

Everything above this module sees only :class:`PubSub`, :class:`Producer`,
:class:`Consumer` and :class:`Message`; below it, a transport (:mod:`.transport`,
the seam: Pulsar's is :mod:`.pulsar_transport`, the unit tests' the in-memory
broker of :mod:`trustgraph.base.testing`) opens producers and consumers with
blocking calls, which PubSub runs in worker threads and retries while the
broker is away.  The bridge is small:

* a send hands the payload to the transport's producer, with a receipt
  callback that resolves an asyncio future (``send_nowait`` mostly goes
  without one: see there);
* a consumer's messages arrive on the transport's listener (pulsar-client's
  listener thread), which appends them to an inbox and wakes the event loop
  once per batch (not once per message); ``--concurrency`` bounds the
  handlers running, and the listener is paused when too many messages are
  waiting, so the broker's flow control does the rest.

This module holds :class:`PubSub` (the transport, the opens and the watch on
its connections); the halves it opens are in :mod:`.producer` and
:mod:`.consumer`, and its retries while the broker is away in :mod:`.broker_retry`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ...topics import SERVING, to_pulsar
from .broker_retry import retry_open, wait_for_broker
from .broker_url import Hint
from .connection_watch import WATCH_EVERY, Back, ConnectionWatch, Lost
from .consumer import Consumer, DirectHandler, Handler, MalformedHandler
from .errors import MessageTooLarge, PubSubError
from .message import Message
from .producer import MAX_MESSAGE_BYTES, Producer
from .transport import CONFIG_LANE, CONFIG_PUSH_LANE, DEFAULT_LANE, Position, Transport, TransportError

logger = logging.getLogger(__name__)

# Producer, the errors, MAX_MESSAGE_BYTES and the lanes live in .producer, .errors and .transport;
# they are imported from here too, where the transport's names always were.
__all__ = ["CONFIG_LANE", "CONFIG_PUSH_LANE", "DEFAULT_LANE", "Consumer", "DirectHandler", "Handler",
           "MalformedHandler", "Message", "MessageTooLarge", "MAX_MESSAGE_BYTES", "Producer", "PubSub",
           "PubSubError"]

T = TypeVar("T")


class PubSub:
    """One transport per process (Pulsar's: a pulsar-client per lane), and the factory for producers and consumers."""

    def __init__(self, url: str, *, api_key: str | None = None, listener: str | None = None,
                 processor: str = "", connect_timeout: float | None = 300.0,
                 transport: Transport | None = None, subscribe_settle: float | None = None,
                 hint: Hint | None = None, admin_url: str | None = None) -> None:
        """Without ``transport``, a :class:`~.pulsar_transport.PulsarTransport` on ``url`` (with
        ``api_key``, ``listener`` and ``admin_url``, the broker's HTTP service whose metrics count
        each topic's consumers); a malformed ``url`` raises
        :class:`~trustgraph.base.messaging.broker_url.BrokerUrlError` here, before anything runs.
        ``transport``: any :class:`~.transport.Transport` instead (``url`` then only names it in
        log lines); the in-memory broker of :mod:`trustgraph.base.testing` passes one, so a test
        runs the same producer and consumer code as production with no broker.

        ``subscribe_settle``: seconds a new subscription is given before the first request or
        before reporting ready; None: what the transport needs (``Capabilities.subscribe_settle``).

        ``connect_timeout``: how long to keep trying to reach the broker and open a
        producer or consumer before :class:`PubSubError`; None: for ever (a service
        waits for its broker to come back).

        ``hint``: where else to look when the broker cannot be reached, at the end of that
        line (a processor gives the running stack's broker: ``processors.broker_choice.stack_hint``).
        """
        if transport is None:
            from .pulsar_transport import PulsarTransport  # the one client library, imported only when used
            transport = PulsarTransport(url, api_key=api_key, listener=listener, admin_url=admin_url)
        self.transport: Transport = transport
        self.url = url
        self.subscribe_settle = (transport.capabilities.subscribe_settle if subscribe_settle is None
                                 else subscribe_settle)
        self.processor = processor
        self._connect_timeout = connect_timeout
        self._hint = hint
        self._producers: list[Producer] = []
        self._consumers: list[Consumer] = []
        self._reach: asyncio.Future | None = None
        self._watch: asyncio.Task | None = None
        self._reader: threading.Thread | None = None      # the connection readings (a thread)
        self._unwatched: threading.Event | None = None    # set: they stop
        self._calls: Any = None
        #: Where this process's serving notices go (lost_calls); its processor sets the
        #: default of its wire (``Wire.announce_topics``, :mod:`trustgraph.base.wire`).
        self.serving_topic: str = SERVING

    @property
    def calls(self) -> Any:
        """This PubSub's :class:`~trustgraph.base.messaging.lost_calls.CallWatch` (made on first use)."""
        if self._calls is None:
            from .lost_calls import CallWatch  # it imports the schema, which imports nothing of ours
            self._calls = CallWatch(self)
        return self._calls

    def _deadline(self) -> float | None:
        return None if self._connect_timeout is None else time.monotonic() + self._connect_timeout

    async def _reachable(self) -> None:
        """Wait until the broker can be reached; one task shared by every opener.

        A broker client would retry in threads of its own (pulsar-client's C++
        threads, which no Ctrl-C can stop, logging each attempt); asking the
        transport first (Pulsar's: an asyncio connection, cancelled at once)
        keeps a processor killable and lets us say what is wrong in one line.
        """
        if self._reach is None or (self._reach.done() and not self._reach.cancelled()
                                   and self._reach.exception() is not None):
            self._reach = asyncio.ensure_future(
                wait_for_broker(self.transport.problem, self.url, self._deadline(), self._hint))
        await asyncio.shield(self._reach)

    async def _retrying(self, what: str, fn: Callable[[], T], patience: float | None = None) -> T:
        """Run a blocking broker call in a thread, retrying while the broker is unreachable
        (:func:`~.broker_retry.retry_open`), then watch the connection.

        ``patience``: give up opening after that many seconds (:class:`PubSubError`), with
        the attempts logged at DEBUG only: for a topic the process can do without, whose
        caller says in its own words what is off (``tool_services.optional_topics``)."""
        await self._reachable()
        deadline = self._deadline()
        if patience is not None:
            own = time.monotonic() + patience
            deadline = own if deadline is None else min(deadline, own)
        transport = self.transport
        result = await retry_open(what, fn, url=self.url, retryable=transport.retryable, deadline=deadline,
                                  advice=transport.open_advice, quiet=patience is not None)
        self._start_watching()
        return result

    def _start_watching(self) -> None:
        if self._watch is None and self.transport.capabilities.reconnects:
            loop = asyncio.get_running_loop()
            events: asyncio.Queue[Lost | Back] = asyncio.Queue()
            self._watch = loop.create_task(self._watch_connection(events))
            self._unwatched = threading.Event()
            self._reader = threading.Thread(target=self._read_connection, args=(loop, events, self._unwatched),
                                            name=f"connection-watch-{self.processor or 'client'}", daemon=True)
            self._reader.start()

    def _read_connection(self, loop: asyncio.AbstractEventLoop, events: asyncio.Queue,
                         unwatched: threading.Event) -> None:
        """The watch's readings, every :data:`~.connection_watch.WATCH_EVERY` s until :meth:`close`:
        a thread of its own, so that a busy event loop hides no loss (see :mod:`.connection_watch`).

        Any part reconnecting counts: after a broker restart some reconnect within a reading's
        interval, and waiting for all to be down at once missed it (a call then waited out its
        deadline in the kill -9 scenario). On a cluster, a topic moving to another broker counts
        too: calls in flight end with an error, never a hang.
        """
        watch = ConnectionWatch()
        while not unwatched.wait(WATCH_EVERY):
            try:
                event = watch.observe(self.connection_states(), time.time(), time.monotonic())
            except Exception:   # a bug here must not end the watch for good
                logger.exception("Reading the broker connection failed")
                continue
            if event is not None:
                try:
                    loop.call_soon_threadsafe(events.put_nowait, event)
                except RuntimeError:   # the loop is closed: the process is ending
                    return

    async def _watch_connection(self, events: asyncio.Queue) -> None:
        """Say once that the broker went away and once that it is back (see :mod:`.connection_watch`),
        as the readings find it (:meth:`_read_connection`).

        The transport reconnects by itself (``Capabilities.reconnects``); without
        this (pulsar-client's own log being discarded) a stopped stack would
        leave a service silent, and with its log it printed a line per attempt.
        """
        while True:
            event = await events.get()
            if isinstance(event, Lost):
                if self._calls is not None:  # first: what was in flight is gone, say so to its callers now
                    self._calls.connection_lost(event.at)
                try:
                    problem = await self.transport.problem()
                except TransportError as e:  # refused now (a password changed meanwhile): say so
                    problem = str(e)
                logger.warning("Lost the connection to the broker at %s%s; reconnecting in the "
                               "background (messages sent meanwhile may be lost)", self.url,
                               f": {problem}" if problem else "")
            elif isinstance(event, Back):
                logger.info("Reconnected to the broker at %s after %.0fs", self.url, event.down_for)
                if self._calls is not None:  # tell the processes that did not see it (lost_calls)
                    self._calls.broker_back(event.lost_at, event.resubscribed)

    def connection_states(self) -> list[tuple[str | None, bool]]:
        """``(topic, connected)`` of each open consumer and ``(None, connected)`` of each open producer:
        a :class:`~.connection_watch.ConnectionWatch` reading, from any thread.

        A part that :meth:`remove` takes away meanwhile may be closing, and a closing part reads
        disconnected: a disconnected part counts only if it is still open once read (its close,
        if any, then began after the reading)."""
        producers, consumers = list(self._producers), list(self._consumers)
        states = [*((None, p.is_connected()) for p in producers), *((c.topic, c.is_connected()) for c in consumers)]
        if all(connected for _topic, connected in states):
            return states
        return [state for state, part in zip(states, [*producers, *consumers], strict=True)
                if state[1] or part in (self._producers if state[0] is None else self._consumers)]

    async def producer(self, topic: str, *, patience: float | None = None) -> Producer:
        """A producer on ``topic`` (generic name or Pulsar URL); ``patience``: see :meth:`_retrying`."""
        url = to_pulsar(topic)
        open_producer = self.transport.open_producer
        p = await self._retrying(f"producer {url}", lambda: open_producer(url, lane=DEFAULT_LANE), patience)
        prod = Producer(p, url, asyncio.get_running_loop(),
                        returns_unconsumed=self.transport.capabilities.returns_unconsumed)
        self._producers.append(prod)
        return prod

    async def consumer(self, topic: str, subscription: str, schema: type | None, *,
                       handler: Handler | None = None, direct: DirectHandler | None = None,
                       concurrency: int = 1, initial_position: str = "latest",
                       name: str | None = None,
                       malformed: MalformedHandler | None = None,
                       overloaded: MalformedHandler | None = None,
                       lane: str = DEFAULT_LANE, patience: float | None = None,
                       counted: bool = True, own: bool = False) -> Consumer:
        """Subscribe and start handling.

        Every consumer of one ``subscription`` shares its messages (each goes to one of them: a
        Shared subscription on Pulsar), and each subscription gets every message.  ``own``: the
        subscription is this process's alone (a uuid-named one: a caller's responses, a config
        push, an announcement reader), never one that replicas share; a transport whose queues
        outlive their consumers removes it when the consumer goes.

        ``handler`` is an async function run per message with at most
        ``concurrency`` running at once.  ``direct`` is a plain function called
        on the event loop, for response dispatch that cannot fail or block.
        ``malformed(properties, reason)`` is told of each undecodable message
        (a request/response service answers it: see :mod:`.serving`), and
        ``overloaded(properties, reason)`` of each message a non-persistent
        consumer refuses because too many wait already (``consumer.SHED_AT``).
        ``lane`` chooses the connection (:data:`~.transport.CONFIG_LANE`: big messages apart);
        ``patience``: see :meth:`_retrying`.
        ``schema`` None hands handlers the payload's bytes; ``counted``: see :class:`Consumer`.
        """
        if (handler is None) == (direct is None):
            raise ValueError("give exactly one of handler or direct")
        url = to_pulsar(topic)
        position: Position = "earliest" if initial_position == "earliest" else "latest"
        cons = Consumer(topic=url, schema=schema, handler=handler, direct=direct,
                        concurrency=concurrency, loop=asyncio.get_running_loop(),
                        name=name or subscription, processor=self.processor,
                        malformed=malformed, overloaded=overloaded, counted=counted)
        open_consumer = self.transport.open_consumer
        c = await self._retrying(f"subscription {subscription} on {url}", lambda: open_consumer(
            url, subscription, listener=cons.on_message, position=position, own=own, lane=lane,
        ), patience)
        cons.attach(c)
        self._consumers.append(cons)
        return cons

    async def remove(self, *parts: Producer | Consumer, unsubscribe: bool = False) -> None:
        """Close some producers and consumers (a flow stopping, a client closed).

        ``unsubscribe``: remove the consumers' subscriptions from the broker too
        (see :meth:`Consumer.stop`).  The parts are forgotten before they are
        closed: a part reports itself disconnected while it closes, and the
        connection watcher must not take that for a lost broker (it did, at
        every fetch of a config too big for one message, ending every call in
        flight in the process).
        """
        for part in parts:
            if isinstance(part, Consumer):
                if part in self._consumers:
                    self._consumers.remove(part)
            elif part in self._producers:
                self._producers.remove(part)
        for part in parts:
            if isinstance(part, Consumer):
                await part.stop(unsubscribe=unsubscribe)
            else:
                await asyncio.to_thread(part.close)

    async def close(self) -> None:
        """Stop every consumer, close every producer, then the transport."""
        if self._unwatched is not None:   # the readings stop (within one interval)
            self._unwatched.set()
        self._reader = self._unwatched = None
        # Before the parts close: a closing part reads disconnected, and a loss a last reading
        # would report is then heard by nobody.
        for task in (self._watch, self._reach):
            if task is not None and not task.done():
                task.cancel()
        self._watch = self._reach = None
        if self._calls is not None:
            self._calls.close()
        await asyncio.gather(*(c.stop() for c in self._consumers), return_exceptions=True)
        for p in self._producers:
            await asyncio.to_thread(p.close)
        self._consumers.clear()
        self._producers.clear()
        try:
            await asyncio.to_thread(self.transport.close)
        except Exception:
            pass
