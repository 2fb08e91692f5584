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
touching processors.  This module holds :class:`PubSub` (the client, its
connections and the watch on them); the halves it opens are in
:mod:`.producer` and :mod:`.consumer`, and its retries while the broker is
away in :mod:`.broker_retry`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pulsar

from ...topics import SERVING, parse, to_pulsar
from .broker_retry import retry_open, wait_for_broker
from .broker_url import BrokerUrl, Hint, parse_broker_url, probe
from .connection_watch import WATCH_EVERY, WATCH_EVERY_DOWN, Back, ConnectionWatch, Lost
from .consumer import Consumer, DirectHandler, Handler, MalformedHandler
from .errors import MessageTooLarge, PubSubError
from .message import Message
from .producer import MAX_MESSAGE_BYTES, Producer
from .pulsar_backend import get_pubsub  # upstream's name for its sync backend (tg-dump-queues imports it)

logger = logging.getLogger(__name__)

# Producer, the errors and MAX_MESSAGE_BYTES live in .producer and .errors; they are
# imported from here too, where the transport's names always were.
__all__ = ["get_pubsub", "Consumer", "DirectHandler", "Handler", "MalformedHandler", "Message", "MessageTooLarge",
           "MAX_MESSAGE_BYTES", "Producer", "PubSub", "PubSubError"]

T = TypeVar("T")


def _client_logger() -> Any:
    """pulsar-client's own C++ log: on the console at INFO when we run at DEBUG, else discarded.

    The C++ client logs every failed connection attempt at ERROR, several a
    second while a broker is down, so even its ERROR level buried the one
    line that matters.  We report broker trouble ourselves instead (an
    unreachable broker, a failed open, a lost connection: see PubSub).
    Passing a Python logger would make the client's threads call into Python
    while the interpreter shuts down, which aborts the process (measured: about
    one exit in eight ended in SIGABRT), so its logging stays in C++.
    """
    if logger.isEnabledFor(logging.DEBUG):
        return pulsar.ConsoleLogger(pulsar.LoggerLevel.Info)
    return pulsar.FileLogger(pulsar.LoggerLevel.Error, os.devnull)


# pulsar-lite 0.2 may drop a non-persistent message published from another
# connection just after subscribe() returns (measured 18 in 300 under CPU load;
# none after 50 ms): clients and processors let new subscriptions settle this
# long before the first request or before reporting ready.
SUBSCRIBE_SETTLE = 0.05

# pulsar-client's receive queue per consumer.  A persistent topic keeps what a
# consumer has no room for (flow control), so a modest queue costs nothing.  A
# non-persistent topic drops it (see consumer.Consumer): a response topic
# carries every caller's replies to every caller's subscription (each caller
# subscribes its own), so a client receives the replies of all clients' calls in
# flight.  Measured: 5,000 calls from 20 clients (256 in flight each) lost 754
# replies with a queue of 1,000 and none with 20,000.
PERSISTENT_RECEIVE_QUEUE = 1000
NON_PERSISTENT_RECEIVE_QUEUE = 20_000


def receive_queue_size(topic_url: str) -> int:
    """The receive queue for a consumer of ``topic_url`` (a Pulsar URL)."""
    return PERSISTENT_RECEIVE_QUEUE if parse(topic_url).persistent else NON_PERSISTENT_RECEIVE_QUEUE


# Connections of a PubSub (see PubSub.lane_client): the default one, and the
# two that carry config, whose messages can be megabytes.
DEFAULT_LANE = "default"
CONFIG_PUSH_LANE = "config-push"
CONFIG_LANE = "config"


class PubSub:
    """One Pulsar client per process, and the factory for producers and consumers."""

    def __init__(self, url: str, *, api_key: str | None = None, listener: str | None = None,
                 processor: str = "", connect_timeout: float | None = 300.0, client: Any = None,
                 subscribe_settle: float = SUBSCRIBE_SETTLE, hint: Hint | None = None) -> None:
        """``client``: an object with pulsar.Client's ``create_producer``, ``subscribe`` and
        ``close`` to use instead of connecting to ``url``; the in-memory broker of
        :mod:`trustgraph.base.testing` passes one, so a test runs the same producer and
        consumer code as production with no broker (and no settle time: ``subscribe_settle``).

        ``connect_timeout``: how long to keep trying to reach the broker and open a
        producer or consumer before :class:`PubSubError`; None: for ever (a service
        waits for its broker to come back).  A malformed ``url`` raises
        :class:`~trustgraph.base.messaging.broker_url.BrokerUrlError` here, before anything runs.

        ``hint``: where else to look when the broker cannot be reached, at the end of that
        line (a processor gives the running stack's broker: ``processors.broker_choice.stack_hint``).
        """
        # Checked first: pulsar-client would take an http:// gateway URL, or no scheme,
        # and fail much later with a bare Timeout.
        self._broker: BrokerUrl | None = parse_broker_url(url) if client is None else None
        self.url = url
        self.subscribe_settle = subscribe_settle
        self.processor = processor
        self._api_key = api_key
        self._listener = listener
        self._given_client: Any = client
        self._lanes: dict[str, pulsar.Client] = {}
        self._connect_timeout = connect_timeout
        self._hint = hint
        self._producers: list[Producer] = []
        self._consumers: list[Consumer] = []
        self._reach: asyncio.Future | None = None
        self._watch: asyncio.Task | None = None
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

    # operation_timeout_seconds is short on purpose: pulsar-lite 0.2 keys the
    # consumers of a shared subscription by the client-chosen consumer id, so a
    # second replica whose consumer id matches the first one's is refused and
    # retried until the operation timeout; our retry then subscribes with the
    # next id and succeeds.  A short timeout keeps that detour to seconds.
    # (Apache Pulsar keys consumers per connection and never hits this.)
    @property
    def client(self) -> pulsar.Client:
        """The pulsar-client of the default lane (see :meth:`lane_client`)."""
        return self.lane_client(DEFAULT_LANE)

    def lane_client(self, lane: str) -> pulsar.Client:
        """The pulsar-client, so the TCP connection, that carries ``lane``'s subscriptions.

        A broker drops a non-persistent message for a consumer whose
        connection is busy sending it something big (Apache Pulsar's
        non-persistent dispatcher skips a consumer whose channel is not
        writable, and pulsar-lite does the same).  Measured: with pushes of
        450 KB on the same connection, 27 of 100 config replies never arrived;
        with the push subscription on a connection of its own, none was lost
        (below ~22 KB pushes nothing was lost either).  So the traffic that
        carries big messages has a connection of its own: :data:`CONFIG_PUSH_LANE`
        for the config push and :data:`CONFIG_LANE` for config replies.
        A ``client`` given to the constructor (the in-memory one) serves every lane.
        """
        if self._given_client is not None:
            return self._given_client
        client = self._lanes.get(lane)
        if client is None:
            auth = pulsar.AuthenticationToken(self._api_key) if self._api_key else None
            client = self._lanes[lane] = pulsar.Client(
                self.url, authentication=auth, listener_name=self._listener,
                operation_timeout_seconds=3, connection_timeout_ms=3000,
                io_threads=1, message_listener_threads=1, logger=_client_logger(),
            )
        return client

    def _deadline(self) -> float | None:
        return None if self._connect_timeout is None else time.monotonic() + self._connect_timeout

    async def _reachable(self) -> None:
        """Wait until the broker accepts connections; one task shared by every opener.

        pulsar-client itself would retry in C++ threads that no Ctrl-C can
        stop, logging each attempt; probing first (an asyncio connection,
        cancelled at once) keeps a processor killable and lets us say
        what is wrong in one line.
        """
        if self._broker is None:
            return
        if self._reach is None or (self._reach.done() and not self._reach.cancelled()
                                   and self._reach.exception() is not None):
            self._reach = asyncio.ensure_future(wait_for_broker(self._broker, self.url, self._deadline(), self._hint))
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
        result = await retry_open(what, fn, url=self.url, broker=self._broker, deadline=deadline,
                                  quiet=patience is not None)
        self._start_watching()
        return result

    def _start_watching(self) -> None:
        if self._watch is None and self._broker is not None:
            self._watch = asyncio.get_running_loop().create_task(self._watch_connection())

    async def _watch_connection(self) -> None:
        """Say once that the broker went away and once that it is back (see :mod:`.connection_watch`).

        pulsar-client reconnects by itself; without this (its own log being
        discarded) a stopped stack would leave a service silent, and with its
        log it printed a line per attempt.
        """
        watch = ConnectionWatch()
        while True:
            await asyncio.sleep(WATCH_EVERY_DOWN if watch.lost else WATCH_EVERY)
            # Any part reconnecting counts: after a broker restart some reconnect within a
            # poll, and waiting for all to be down at once missed it (a call then waited out its
            # deadline in the kill -9 scenario). On a cluster, a topic moving to another broker
            # counts too: calls in flight end with an error, never a hang.
            event = watch.observe(self.connection_states(), time.time(), time.monotonic())
            if isinstance(event, Lost):
                if self._calls is not None:  # first: what was in flight is gone, say so to its callers now
                    self._calls.connection_lost(event.at)
                problem = await probe(self._broker) if self._broker is not None else None
                logger.warning("Lost the connection to the broker at %s%s; reconnecting in the "
                               "background (messages sent meanwhile may be lost)", self.url,
                               f": {problem}" if problem else "")
            elif isinstance(event, Back):
                logger.info("Reconnected to the broker at %s after %.0fs", self.url, event.down_for)
                if self._calls is not None:  # tell the processes that did not see it (lost_calls)
                    self._calls.broker_back(event.lost_at, event.resubscribed)

    def connection_states(self) -> list[tuple[str | None, bool]]:
        """``(topic, connected)`` of each open consumer and ``(None, connected)`` of each open producer:
        a :class:`~.connection_watch.ConnectionWatch` reading."""
        return [*((None, p.is_connected()) for p in self._producers),
                *((c.topic, c.is_connected()) for c in self._consumers)]

    async def producer(self, topic: str, *, patience: float | None = None) -> Producer:
        """A producer on ``topic`` (generic name or Pulsar URL); ``patience``: see :meth:`_retrying`."""
        url = to_pulsar(topic)
        p = await self._retrying(f"producer {url}", lambda: self.client.create_producer(
            url, chunking_enabled=True, batching_enabled=False,
            block_if_queue_full=False, max_pending_messages=10000,
        ), patience)
        prod = Producer(p, url, asyncio.get_running_loop())
        self._producers.append(prod)
        return prod

    async def consumer(self, topic: str, subscription: str, schema: type | None, *,
                       handler: Handler | None = None, direct: DirectHandler | None = None,
                       concurrency: int = 1, initial_position: str = "latest",
                       name: str | None = None,
                       malformed: MalformedHandler | None = None,
                       overloaded: MalformedHandler | None = None,
                       lane: str = DEFAULT_LANE, patience: float | None = None,
                       counted: bool = True) -> Consumer:
        """Subscribe (Shared) and start handling.

        ``handler`` is an async function run per message with at most
        ``concurrency`` running at once.  ``direct`` is a plain function called
        on the event loop, for response dispatch that cannot fail or block.
        ``malformed(properties, reason)`` is told of each undecodable message
        (a request/response service answers it: see :mod:`.serving`), and
        ``overloaded(properties, reason)`` of each message a non-persistent
        consumer refuses because too many wait already (``consumer.SHED_AT``).
        ``lane`` chooses the connection (:meth:`lane_client`); ``patience``: see :meth:`_retrying`.
        ``schema`` None hands handlers the payload's bytes; ``counted``: see :class:`Consumer`.
        """
        if (handler is None) == (direct is None):
            raise ValueError("give exactly one of handler or direct")
        url = to_pulsar(topic)
        pos = (pulsar.InitialPosition.Earliest if initial_position == "earliest"
               else pulsar.InitialPosition.Latest)
        cons = Consumer(topic=url, schema=schema, handler=handler, direct=direct,
                        concurrency=concurrency, loop=asyncio.get_running_loop(),
                        name=name or subscription, processor=self.processor,
                        malformed=malformed, overloaded=overloaded, counted=counted)
        c = await self._retrying(f"subscription {subscription} on {url}", lambda: self.lane_client(lane).subscribe(
            url, subscription, consumer_type=pulsar.ConsumerType.Shared,
            initial_position=pos, receiver_queue_size=receive_queue_size(url),
            negative_ack_redelivery_delay_ms=1000, message_listener=cons.on_message,
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
        """Stop every consumer, close every producer, then the client."""
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
        clients = [self._given_client] if self._given_client is not None else list(self._lanes.values())
        self._lanes.clear()
        self._given_client = None
        for client in clients:
            try:
                await asyncio.to_thread(client.close)
            except Exception:
                pass
