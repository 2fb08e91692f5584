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
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pulsar
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, retry_if_result, wait_exponential

from ...schema.codec import encode
from ...topics import to_pulsar
from .broker_url import BrokerUrl, parse_broker_url, probe, unreachable
from .connection_watch import WATCH_EVERY, WATCH_EVERY_DOWN, Back, ConnectionWatch, Lost
from .consumer import Consumer, DirectHandler, Handler, MalformedHandler
from .message import Message
from .pulsar_backend import get_pubsub  # upstream's name for its sync backend (tg-dump-queues imports it)

logger = logging.getLogger(__name__)

__all__ = ["get_pubsub", "Consumer", "DirectHandler", "Handler", "MalformedHandler", "Message", "MessageTooLarge",
           "Producer", "PubSub", "PubSubError"]

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


_OK = pulsar.Result.Ok
_ALREADY_CLOSED = pulsar.Result.AlreadyClosed
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
    if topic_url.startswith("non-persistent://"):
        return NON_PERSISTENT_RECEIVE_QUEUE
    return PERSISTENT_RECEIVE_QUEUE


# Connections of a PubSub (see PubSub.lane_client): the default one, and the
# two that carry config, whose messages can be megabytes.
DEFAULT_LANE = "default"
CONFIG_PUSH_LANE = "config-push"
CONFIG_LANE = "config"


class Producer:
    """Sends records on one topic; batching off, chunking on (as upstream)."""

    def __init__(self, producer: pulsar.Producer, topic: str, loop: asyncio.AbstractEventLoop) -> None:
        self._producer = producer
        self._loop = loop
        self.topic = topic
        self._sent = 0
        self._limit = None if topic.startswith("persistent://") else MAX_MESSAGE_BYTES

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


_RETRYABLE = (pulsar.ConnectError, pulsar.Timeout, pulsar.LookupError,
              pulsar.ServiceUnitNotReady, pulsar.TopicNotFound)
# Back-off between attempts to reach the broker, and between attempts to open a
# producer or consumer on a reachable one (short: pulsar-lite's consumer-id clash
# of shared subscriptions, see DEVELOPERS.md, is resolved by the next attempt).
_FIRST_DELAY = 1.0
_MAX_DELAY = 30.0
_OPEN_DELAYS = (0.2, 5.0)


def _doubling(first: float, most: float) -> wait_exponential:
    """``first``, then twice the last wait, up to ``most`` seconds."""
    return wait_exponential(multiplier=first, exp_base=2, max=most)


def _past(deadline: float | None) -> Callable[[RetryCallState], bool]:
    """Give up when the next wait would end after ``deadline`` (never when it is None)."""
    def stop(state: RetryCallState) -> bool:
        return deadline is not None and time.monotonic() + state.upcoming_sleep > deadline
    return stop


class PubSub:
    """One Pulsar client per process, and the factory for producers and consumers."""

    def __init__(self, url: str, *, api_key: str | None = None, listener: str | None = None,
                 processor: str = "", connect_timeout: float | None = 300.0, client: Any = None,
                 subscribe_settle: float = SUBSCRIBE_SETTLE) -> None:
        """``client``: an object with pulsar.Client's ``create_producer``, ``subscribe`` and
        ``close`` to use instead of connecting to ``url``; the in-memory broker of
        :mod:`trustgraph.base.testing` passes one, so a test runs the same producer and
        consumer code as production with no broker (and no settle time: ``subscribe_settle``).

        ``connect_timeout``: how long to keep trying to reach the broker and open a
        producer or consumer before :class:`PubSubError`; None: for ever (a service
        waits for its broker to come back).  A malformed ``url`` raises
        :class:`~trustgraph.base.messaging.broker_url.BrokerUrlError` here, before anything runs.
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
        self._producers: list[Producer] = []
        self._consumers: list[Consumer] = []
        self._reach: asyncio.Future | None = None
        self._watch: asyncio.Task | None = None
        self._calls: Any = None

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
            self._reach = asyncio.ensure_future(self._wait_for_broker(self._broker))
        await asyncio.shield(self._reach)

    async def _wait_for_broker(self, broker: BrokerUrl) -> None:
        failures = 0

        def failed(state: RetryCallState) -> None:
            nonlocal failures
            failures += 1
            problem = state.outcome.result()
            if failures == 1:
                logger.warning("%s; retrying every %g-%gs", unreachable(self.url, problem), _FIRST_DELAY, _MAX_DELAY)
            else:   # quiet: the warning said it retries; -l DEBUG shows each attempt
                logger.debug("Broker %s still unreachable: %s; retrying in %gs", self.url, problem,
                             state.upcoming_sleep)

        def gave_up(state: RetryCallState) -> None:
            raise PubSubError(unreachable(self.url, state.outcome.result()))

        await AsyncRetrying(wait=_doubling(_FIRST_DELAY, _MAX_DELAY), stop=_past(self._deadline()),
                            retry=retry_if_result(lambda problem: problem is not None),
                            before_sleep=failed, retry_error_callback=gave_up)(probe, broker)
        if failures:
            logger.info("Broker %s reachable after %d failed attempt%s", self.url, failures,
                        "" if failures == 1 else "s")

    async def _retrying(self, what: str, fn: Callable[[], T]) -> T:
        """Run a blocking broker call in a thread, retrying while the broker is unreachable.

        The first failure is one WARNING line; later ones are DEBUG, with a
        back-off, so a service left waiting for its broker stays quiet; an INFO
        line says when it succeeded after all (giving up raises, with the failure).
        """
        await self._reachable()

        def why(e: BaseException) -> str:
            line = f"{what} on {self.url} failed ({type(e).__name__}: {e})"
            if self._broker is not None and self._broker.http:
                line += ("; an http:// broker URL must be Pulsar's HTTP lookup service: "
                         "the broker URL usually looks like pulsar://host:6650")
            return line

        failures = 0

        def failed(state: RetryCallState) -> None:
            nonlocal failures
            failures += 1
            if failures == 1:
                logger.warning("%s; retrying", why(state.outcome.exception()))
            else:
                logger.debug("%s; retrying in %gs (attempt %d)", why(state.outcome.exception()),
                             state.upcoming_sleep, failures + 1)

        def gave_up(state: RetryCallState) -> T:
            e = state.outcome.exception()
            raise PubSubError(why(e)) from e

        first, most = _OPEN_DELAYS
        result = await AsyncRetrying(wait=_doubling(first, most), stop=_past(self._deadline()),
                                     retry=retry_if_exception_type(_RETRYABLE),
                                     before_sleep=failed, retry_error_callback=gave_up)(asyncio.to_thread, fn)
        if failures:
            logger.info("%s on %s succeeded after %d failed attempt%s", what, self.url, failures,
                        "" if failures == 1 else "s")
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
                       malformed: MalformedHandler | None = None,
                       overloaded: MalformedHandler | None = None,
                       lane: str = DEFAULT_LANE) -> Consumer:
        """Subscribe (Shared) and start handling.

        ``handler`` is an async function run per message with at most
        ``concurrency`` running at once.  ``direct`` is a plain function called
        on the event loop, for response dispatch that cannot fail or block.
        ``malformed(properties, reason)`` is told of each undecodable message
        (a request/response service answers it: see :mod:`.serving`), and
        ``overloaded(properties, reason)`` of each message a non-persistent
        consumer refuses because too many wait already (``consumer.SHED_AT``).
        ``lane`` chooses the connection (:meth:`lane_client`).
        """
        if (handler is None) == (direct is None):
            raise ValueError("give exactly one of handler or direct")
        url = to_pulsar(topic)
        pos = (pulsar.InitialPosition.Earliest if initial_position == "earliest"
               else pulsar.InitialPosition.Latest)
        cons = Consumer(topic=url, schema=schema, handler=handler, direct=direct,
                        concurrency=concurrency, loop=asyncio.get_running_loop(),
                        name=name or subscription, processor=self.processor,
                        malformed=malformed, overloaded=overloaded)
        c = await self._retrying(f"subscription {subscription} on {url}", lambda: self.lane_client(lane).subscribe(
            url, subscription, consumer_type=pulsar.ConsumerType.Shared,
            initial_position=pos, receiver_queue_size=receive_queue_size(url),
            negative_ack_redelivery_delay_ms=1000, message_listener=cons.on_message,
        ))
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
