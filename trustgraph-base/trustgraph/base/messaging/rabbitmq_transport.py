"""RabbitMQ behind the seam (:mod:`.transport`): aio-pika on an event loop of the transport's own.

aio-pika is an asyncio client, and the core's threads are not its to use: the
processor's event loop runs handlers, and the opens come from worker threads
(:class:`~.pubsub.PubSub`).  So, as pulsar-client has I/O threads of its own,
:class:`RabbitMQTransport` starts one daemon thread running an event loop
where every aio-pika object lives.  The blocking opens and closes run a
coroutine there and wait for it from the caller's thread; sends, acks,
nacks, pauses and resumes from any thread are scheduled onto it
(:meth:`RabbitMQTransport.post`: one wake-up of the loop for all those made
before it runs); listeners and receipts are called from it.

What is declared (exchanges, queues and their arguments, delivery modes) is a
:class:`~.rabbitmq_topology.Topology`'s decision, the wire's
(``Wire.rabbitmq_topology``): a topic is a fanout exchange and a subscription a
queue bound to it.  Each lane (:data:`~.transport.CONFIG_LANE`: big messages
apart, as on Pulsar) is one robust connection, which reconnects by itself and
restores its channels, exchanges, queues and consumers; a producer and a
consumer each have a channel.  Given a cluster's nodes (``host`` as
``h1:5672,h2:5673``), a lane connects to the first that answers, and each
time its connection is lost, or an attempt to restore it fails, the next
attempt goes to the next node (:class:`NodeConnection`): the queues are
declared again there (a quorum queue keeps its messages on the surviving
nodes; a request or own queue of the lost node is made anew).  Every channel uses publisher confirms: aiormq
matches a returned message (basic.return) to its send only through its
confirm, and a request nobody consumes coming back is what lets a caller fail
at once (see :meth:`RabbitMQProducer.send`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

import aio_pika
import aiormq
from aio_pika.connection import make_url
from aiormq import spec

from ...topics import parse
from .broker_url import split_hosts
from .rabbitmq_topology import OURS, QueueSpec, Topology
from .transport import (
    DEFAULT_LANE,
    BrokerRefused,
    Capabilities,
    Delivery,
    Listener,
    Position,
    Receipt,
    TransportError,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The errors of an open that mean "the broker is away or not ready yet" (a wrong password is
#: turned into a :class:`TransportError` first: retrying cannot fix it).
RETRYABLE = (aiormq.exceptions.AMQPConnectionError, ConnectionError, TimeoutError,
             aiormq.exceptions.ChannelInvalidStateError)

#: Seconds an open or a close may take on the transport's loop before the caller gives up on it.
OPEN_TIMEOUT = 30.0
#: Seconds the probe waits for a TCP connection, then for the AMQP handshake.
PROBE_TIMEOUT = 5.0
#: Seconds between a robust connection's attempts to reconnect (aio-pika's default is 5).
RECONNECT_INTERVAL = 1.0
#: Seconds a lost connection reads lost at least, however soon it is restored: on a cluster it
#: may be back on another node within milliseconds, and the connection watch, reading every
#: :data:`~.connection_watch.WATCH_EVERY`, must see the loss to end the calls it swallowed and to
#: tell the others (:mod:`.lost_calls`: the requests that reached a consumer meanwhile are listed
#: as received, so reading "back" late ends none of them).  One second: what the cluster
#: scenarios were measured with, when the watch read every 0.25 s on the event loop.
LOSS_SHOWN_FOR = 1.0
#: Publisher confirms on a non-persistent topic's channel other than a request topic's (those
#: need them: aiormq matches a returned message to its send through its confirm).  On: measured
#: with request/response calls on this 2-core machine, turning them off on the reply topics made no
#: difference beyond the noise, and with them every receipt means the broker has the message.
CONFIRM_TRANSIENT = True
#: Unacknowledged messages the broker hands a consumer before it waits for acks (basic.qos):
#: RabbitMQ's own flow control, so pausing only holds back what is already here (at most this).
PREFETCH = 1000
#: A negative ack on a persistent topic is redelivered after this long (seconds), as on Pulsar,
#: so a failing handler does not spin.
NACK_REDELIVERY = 1.0


def _quiet_client_logs() -> None:
    """aio-pika's and aiormq's own log lines only when we run at DEBUG.

    While a broker is down a robust connection logs each reconnect attempt (a WARNING or ERROR
    every :data:`RECONNECT_INTERVAL`), burying the one line that matters; we report broker
    trouble ourselves (an unreachable broker, a failed open, a lost connection: see PubSub), as
    the Pulsar transport does with pulsar-client's log.
    """
    level = logging.NOTSET if logger.isEnabledFor(logging.DEBUG) else logging.CRITICAL
    for name in ("aio_pika", "aiormq"):
        logging.getLogger(name).setLevel(level)


class NodeConnection(aio_pika.RobustConnection):
    """aio-pika's robust connection over several nodes of one cluster.

    aio-pika reconnects to its one URL only.  Here each time the connection is lost, or an
    attempt to restore it fails (aio-pika calls :meth:`_on_connection_close` for both), the URL
    moves to the next node, so the reconnect loop walks the nodes until one answers, and aio-pika
    restores the channels, exchanges, queues and consumers on it.  One node: as aio-pika's.

    ``restored`` is set once everything is restored, and cleared when the connection is lost:
    aio-pika sets its ``connected`` before restoring the consumers, and a consumer is not back
    until its queue is declared again on the new node (the connection watch reads this).  After
    a loss it stays clear for :data:`LOSS_SHOWN_FOR` at least.
    """

    def __init__(self, url: Any, *, nodes: tuple[tuple[str, int], ...], at: int, lane: str, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        self.nodes, self.at, self.lane = nodes, at, lane
        self.restored = asyncio.Event()
        self._losses = 0
        self._lost_at: float | None = None

    @property
    def node(self) -> str:
        """``host:port`` of the node this connection is on (or trying next)."""
        host, port = self.nodes[self.at]
        return f"{host}:{port}"

    async def _on_connection_close(self, closing: asyncio.Future) -> None:
        self.restored.clear()
        if self.connected.is_set():   # a loss (not an attempt that failed)
            self._losses += 1
            self._lost_at = self.loop.time()
        if not self._close_called and len(self.nodes) > 1:
            self.at = (self.at + 1) % len(self.nodes)
            host, port = self.nodes[self.at]
            self.url = self.url.with_host(host).with_port(port)
        await super()._on_connection_close(closing)

    async def _on_connected(self) -> None:
        await super()._on_connected()   # the channels, queues and consumers restored (or it raises)
        shown = 0.0 if self._lost_at is None else self._lost_at + LOSS_SHOWN_FOR - self.loop.time()
        if shown > 0:
            self.loop.call_later(shown, self._show_restored, self._losses)
        else:
            self.restored.set()
        if self.connection_attempt > 1 and len(self.nodes) > 1:
            logger.info("RabbitMQ %s lane restored on node %s", self.lane, self.node)

    def _show_restored(self, losses: int) -> None:
        if losses == self._losses and self.connected.is_set():   # not lost again meanwhile
            self.restored.set()


def _connected(connection: Any) -> bool:
    """Whether ``connection`` is up with everything restored (a probe's plain one: up)."""
    restored = getattr(connection, "restored", None)
    return connection.connected.is_set() and (restored is None or restored.is_set())


def _nothing_consumes(topic: str) -> str:
    return f"nothing consumes {topic}"


class RabbitMQDelivery:
    """One message as a consumer received it (aio-pika's message with our accessors)."""

    __slots__ = ("message",)

    def __init__(self, message: aio_pika.abc.AbstractIncomingMessage) -> None:
        self.message = message

    def data(self) -> bytes:
        return self.message.body

    def properties(self) -> dict[str, str]:
        # A peer's header may be any AMQP field value; ours are all strings.
        headers = self.message.headers or {}
        return {k: v if v.__class__ is str else (v.decode() if isinstance(v, bytes) else str(v))
                for k, v in headers.items()}


class RabbitMQProducer:
    """A channel publishing to one topic's exchange, as a :class:`~.transport.TransportProducer`."""

    def __init__(self, transport: RabbitMQTransport, connection: aio_pika.abc.AbstractRobustConnection,
                 channel: aio_pika.abc.AbstractRobustChannel, topic: str, exchange: str,
                 delivery_mode: int, mandatory: bool) -> None:
        self._transport = transport
        self._loop = transport.loop
        self._connection = connection
        self._channel = channel
        self.topic = topic
        self._exchange = exchange
        self._properties_mode = delivery_mode
        self._mandatory = mandatory
        self._tasks: set[asyncio.Task] = set()
        self._closed = False

    def send(self, data: bytes, properties: Mapping[str, str], receipt: Receipt | None = None) -> None:
        """Queue the publish on the transport's loop.  On a topic whose exchange has no queue bound
        (a request topic nobody consumes, on our topology), the broker hands the message back and
        ``receipt`` says ``nothing consumes <topic>``.  While the connection is being restored the
        publish waits for it (the message goes out once connected)."""
        if self._closed:
            raise TransportError(f"the producer on {self.topic} is closed")
        try:
            self._transport.post(self._publish, data, dict(properties), receipt)
        except RuntimeError as e:  # the loop is closed: the transport was closed
            raise TransportError(f"the RabbitMQ transport is closed ({e})") from e

    def _publish(self, data: bytes, headers: dict[str, str], receipt: Receipt | None) -> None:
        task = self._loop.create_task(self._publish_async(data, headers, receipt))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish_async(self, data: bytes, headers: dict[str, str], receipt: Receipt | None) -> None:
        problem: str | None = None
        try:
            await self._channel.ready()
            channel = await self._channel.get_underlay_channel()
            result = await channel.basic_publish(
                data, exchange=self._exchange, routing_key="", mandatory=self._mandatory,
                properties=spec.Basic.Properties(headers=headers, delivery_mode=self._properties_mode))
            if isinstance(result, spec.Basic.Nack):
                problem = "the broker refused the message (basic.nack)"
        except aiormq.exceptions.PublishError:
            problem = _nothing_consumes(self.topic)
        except asyncio.CancelledError:
            problem = "the producer was closed before the broker had the message"
        except Exception as e:
            problem = f"{type(e).__name__}: {e}"
        if problem is not None and receipt is None:
            logger.debug("send to %s failed: %s", self.topic, problem)
        if receipt is not None:
            receipt(problem)

    def is_connected(self) -> bool:
        return self._closed or (_connected(self._connection) and not self._channel.is_closed)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._transport.run_quietly(self._close(), f"closing the producer on {self.topic}")

    async def _close(self) -> None:
        # What was handed over is published before the channel goes.
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=OPEN_TIMEOUT / 2)
        await self._channel.close()


class RabbitMQConsumer:
    """A channel consuming one subscription's queue, as a :class:`~.transport.TransportConsumer`.

    Pausing holds back, here, what the broker has already handed over: the broker stops by
    itself at :data:`PREFETCH` unacknowledged messages (basic.qos), and the core acknowledges
    only what it finished, so what is held is bounded without a round trip to the broker for
    each pause and resume (a basic.cancel and basic.consume).

    An own queue of a non-persistent topic (a caller's responses, a notice reader's) is consumed
    without acknowledgements (``no_ack``): it is exclusive to its connection and goes with it, so
    an unacknowledged message would never be delivered to anyone else, and the ack it saves per
    message is a socket write and a wake-up of this loop.  The core never pauses a non-persistent
    consumer (it sheds beyond a bound instead: :class:`~.consumer.Consumer`), so the broker's
    prefetch bound is not missed.  A shared queue keeps its acks: a request a dying replica held
    goes to another one (``Capabilities.redelivers_requests``).
    """

    def __init__(self, transport: RabbitMQTransport, topic: str, spec_: QueueSpec, listener: Listener,
                 persistent: bool) -> None:
        self._transport = transport
        self._loop = transport.loop
        self.topic = topic
        self.spec = spec_
        self._listener = listener
        self._persistent = persistent
        self._connection: aio_pika.abc.AbstractRobustConnection | None = None
        self._channel: aio_pika.abc.AbstractRobustChannel | None = None
        self._queue: aio_pika.abc.AbstractRobustQueue | None = None
        self._tag: str | None = None
        self._paused = False
        self._held: deque[RabbitMQDelivery] = deque()
        # Acks from the core's thread, settled on the loop in batches (one wake-up for many).
        self._settle: deque[tuple[RabbitMQDelivery, bool]] = deque()
        self._settling = False
        self._closed = False
        #: Consumed without acknowledgements (set when the queue is consumed): see the class.
        self.no_ack = False

    async def on_message(self, message: aio_pika.abc.AbstractIncomingMessage) -> None:
        """aio-pika's consumer callback (the transport's loop).  A coroutine though nothing here
        awaits: aio-pika wraps a plain function in one anyway, and warns at each call."""
        delivery = RabbitMQDelivery(message)
        if self._paused:
            self._held.append(delivery)
            return
        self._listener(self, delivery)

    def ack(self, delivery: Delivery) -> None:
        if not self.no_ack:
            self._queue_settle(delivery, True)

    def nack(self, delivery: Delivery) -> None:
        # Without acks the broker has forgotten it already: what a nack does on a non-persistent topic.
        if not self.no_ack:
            self._queue_settle(delivery, False)

    def _queue_settle(self, delivery: Any, ack: bool) -> None:
        self._settle.append((delivery, ack))
        if not self._settling:
            self._settling = True
            try:
                self._transport.post(self._start_settling)
            except RuntimeError:  # the transport is closed: the broker requeued what was unsettled
                pass

    def _start_settling(self) -> None:
        self._loop.create_task(self._settle_all())

    async def _settle_all(self) -> None:
        # Cleared before reading: one appended from here on is seen below or schedules another run.
        self._settling = False
        settle = self._settle
        while settle:
            delivery, ack = settle.popleft()
            message = delivery.message
            try:
                # To the message's own channel (closed: ChannelInvalidStateError), not waiting for
                # each frame to be written before the next (wait=False): an ack has no answer.
                if ack:
                    await message.channel.basic_ack(message.delivery_tag, wait=False)
                elif self._persistent:
                    self._loop.call_later(NACK_REDELIVERY, self._requeue, message)
                else:   # a non-persistent topic does not deliver a message again (as on Pulsar)
                    await message.channel.basic_reject(message.delivery_tag, requeue=False, wait=False)
            except Exception as e:  # its channel is gone: the broker has requeued it already
                logger.debug("settling a message of %s failed: %s", self.topic, e)

    def _requeue(self, message: aio_pika.abc.AbstractIncomingMessage) -> None:
        async def requeue() -> None:
            try:
                await message.nack(requeue=True)
            except Exception as e:
                logger.debug("nack of a message of %s failed: %s", self.topic, e)
        self._loop.create_task(requeue())

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        try:
            self._loop.call_soon_threadsafe(self._release)
        except RuntimeError:
            pass

    def _release(self) -> None:
        while self._held and not self._paused:
            self._listener(self, self._held.popleft())

    def is_connected(self) -> bool:
        if self._closed or self._channel is None:
            return True
        return _connected(self._connection) and not self._channel.is_closed

    def unsubscribe(self) -> None:
        try:
            self._transport.run(self._unsubscribe(), OPEN_TIMEOUT)
        except Exception as e:
            raise TransportError(f"removing queue {self.spec.name} from RabbitMQ failed: "
                                 f"{type(e).__name__}: {e}") from e

    async def _unsubscribe(self) -> None:
        await self._stop()
        connection = await self._transport.lane_connection(DEFAULT_LANE)
        ch = await connection.channel()
        try:
            await ch.queue_delete(self.spec.name)
        except aiormq.exceptions.ChannelNotFoundEntity:
            pass   # an own queue went with its consumer already
        finally:
            if not ch.is_closed:
                await ch.close()

    def close(self) -> None:
        self._transport.run_quietly(self._stop(), f"closing the consumer of {self.spec.name}")

    async def _stop(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Unacknowledged messages go back to the queue with the channel (another consumer gets them).
        if self._queue is not None and self._tag is not None and not self._channel.is_closed:
            try:
                await self._queue.cancel(self._tag)
            except Exception as e:
                logger.debug("cancelling the consumer of %s failed: %s", self.spec.name, e)
        if self._channel is not None and not self._channel.is_closed:
            await self._channel.close()


class RabbitMQTransport:
    """RabbitMQ at ``host:port``: one robust aio-pika connection per lane, on a loop of our own.

    ``host`` may name a cluster's nodes, ``h1:5672,h2:5673,h3`` (a node without a port is on
    ``port``; ours: upstream's ``--rabbitmq-host`` takes one): a lane moves to the next node when
    its connection is lost (:class:`NodeConnection`).  ``topology``: the exchanges and queues to
    declare (the wire's; :data:`~.rabbitmq_topology.OURS` for the 2.1 wire).  The password is used
    to connect and never logged or put in a line.
    """

    retryable = RETRYABLE
    open_advice: str | None = None

    def __init__(self, host: str, port: int, username: str, password: str, vhost: str = "/", *,
                 topology: Topology = OURS, name: str = "trustgraph") -> None:
        #: The nodes to connect to, in the order given (:func:`~.broker_url.split_hosts`; a
        #: malformed list raises its ValueError, :class:`~.broker_url.BrokerUrlError`).
        self.nodes = split_hosts(host, port)
        self.host, self.port = self.nodes[0]
        self.username, self.vhost = username, vhost
        self._password = password
        self.topology = topology
        self._name = name
        self.capabilities = Capabilities(
            name="rabbitmq", consumer_counts=False, redelivers_requests=True, returns_unconsumed=True,
            limitations=(
                "a new subscription starts with the messages published after it, whatever its "
                "position: RabbitMQ keeps messages per queue, so there is no replay from the earliest",
                "consumer counts are not asked of the broker; a request to a topic nobody consumes "
                "comes back to its sender at once instead",
                *topology.limitations,
            ))
        _quiet_client_logs()
        self._lanes: dict[str, aio_pika.abc.AbstractRobustConnection] = {}
        self._lane_locks: dict[str, asyncio.Lock] = {}
        self.loop = asyncio.new_event_loop()
        # Work other threads hand the loop (post), and whether a wake-up for it is pending.
        self._posted: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._posting = False
        self._thread = threading.Thread(target=self.loop.run_forever, name=f"rabbitmq-io-{port}", daemon=True)
        self._thread.start()
        self._closed = False

    def __repr__(self) -> str:
        return f"RabbitMQTransport({self.where}, user={self.username!r}, vhost={self.vhost!r})"

    @property
    def where(self) -> str:
        """``host:port``, or the nodes' ``h1:p1,h2:p2``."""
        return ",".join(f"{host}:{port}" for host, port in self.nodes)

    # -- running coroutines on the transport's loop -------------------------------------------
    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` on the transport's loop, from any thread, in the order posted.

        Each ``call_soon_threadsafe`` is a write to the loop's self-pipe and a wake-up of its
        thread, and a send, an ack and a settle each needed one: under load a post made while a
        wake-up is pending rides on it (measured: bench/notes.md, "RabbitMQ").  Raises
        RuntimeError when the loop is closed (the transport was closed)."""
        self._posted.append((fn, args))
        if not self._posting:
            self._posting = True
            try:
                self.loop.call_soon_threadsafe(self._run_posted)
            except RuntimeError:
                self._posting = False
                raise

    def _run_posted(self) -> None:
        # Cleared before reading: one posted from here on is run below or wakes the loop again.
        self._posting = False
        posted = self._posted
        while posted:
            fn, args = posted.popleft()
            try:
                fn(*args)
            except Exception as e:   # one failure must not strand the work posted after it
                logger.debug("%s on the RabbitMQ loop failed: %s", getattr(fn, "__qualname__", fn), e)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = OPEN_TIMEOUT) -> T:
        """Run ``coro`` on the transport's loop and wait for it (never from that loop's thread)."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a blocking RabbitMQ call from the transport's own I/O thread")
        if self._closed or self.loop.is_closed():
            coro.close()
            raise TransportError(f"the RabbitMQ transport to {self.where} is closed")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise TimeoutError(f"RabbitMQ at {self.where} did not answer within {timeout:g}s") from None

    def run_quietly(self, coro: Coroutine[Any, Any, Any], what: str) -> None:
        """:meth:`run`, logging a failure at DEBUG (closes never raise)."""
        try:
            self.run(coro)
        except Exception as e:
            logger.debug("%s failed: %s", what, e)

    # -- connections ---------------------------------------------------------------------------
    async def lane_connection(self, lane: str) -> aio_pika.abc.AbstractRobustConnection:
        """The robust connection carrying ``lane`` (made on first use; the loop's thread)."""
        connection = self._lanes.get(lane)
        if connection is not None:
            return connection
        lock = self._lane_locks.setdefault(lane, asyncio.Lock())
        async with lock:
            connection = self._lanes.get(lane)
            if connection is None:
                connection = await self._connect_lane(lane)
                self._lanes[lane] = connection
                logger.info("Connected to RabbitMQ at %s (%s lane)", connection.node, lane)
        return connection

    async def _connect_lane(self, lane: str) -> NodeConnection:
        """A robust connection to the first node that answers, from the first given; the error of
        the last node when none does (a refusal of our credentials at once: the nodes share them)."""
        # Each node gets a share of the open's time, so that one that swallows packets leaves
        # time for the others.
        timeout = OPEN_TIMEOUT / len(self.nodes)
        for at, (host, port) in enumerate(self.nodes):
            url = make_url(host=host, port=port, login=self.username, password=self._password,
                           virtualhost=self.vhost)
            connection = NodeConnection(url, nodes=self.nodes, at=at, lane=lane, reconnect_interval=RECONNECT_INTERVAL,
                                        client_properties={"connection_name": f"{self._name} {lane}"})
            try:
                await self._refusals(connection.connect(timeout=timeout))
                return connection
            except BrokerRefused:
                raise
            except RETRYABLE as e:
                await _close_quietly(connection)
                if at == len(self.nodes) - 1:
                    raise
                logger.debug("RabbitMQ node %s:%s did not connect (%s: %s); trying the next", host, port,
                             type(e).__name__, e)
        raise AssertionError("unreachable: the loop returns or raises")

    async def _connect(self, *, robust: bool, lane: str, node: tuple[str, int] | None = None) -> Any:
        if robust:
            return await self._connect_lane(lane)
        host, port = node or self.nodes[0]
        return await self._refusals(aio_pika.connect(
            host=host, port=port, login=self.username, password=self._password, virtualhost=self.vhost,
            timeout=PROBE_TIMEOUT, client_properties={"connection_name": f"{self._name} {lane}"}))

    async def _refusals(self, connecting: Coroutine[Any, Any, T]) -> T:
        """``connecting``, with a refusal of our user or vhost as :class:`BrokerRefused`'s one line."""
        try:
            return await connecting
        except aiormq.exceptions.ProbableAuthenticationError as e:
            raise BrokerRefused(self._refused()) from e
        except aiormq.exceptions.ConnectionNotAllowed as e:
            raise BrokerRefused(f"RabbitMQ at {self.where} refused virtual host {self.vhost!r} to user "
                                 f"{self.username!r}: check --rabbitmq-vhost and the user's permissions") from e

    def _refused(self) -> str:
        return (f"RabbitMQ at {self.where} refused user {self.username}: "
                f"check --rabbitmq-username/--rabbitmq-password")

    def _declaration_error(self, e: aiormq.exceptions.AMQPChannelError, what: str) -> TransportError:
        """A 406 (another declaration with other arguments) or 405 (another connection's exclusive
        queue) as one line: the peers declare the same names, so their wires differ."""
        said = str(e.args[0] if e.args else e)
        return TransportError(
            f"RabbitMQ refused to declare {what} as {self.topology.wire or 'our'} wire's topology does ({said}): "
            f"another process declared it otherwise (a processor on another --wire?); run every processor "
            f"on one wire, or delete it (rabbitmqctl delete_queue/delete_exchange) when nothing uses it")

    # -- the seam ------------------------------------------------------------------------------
    def open_producer(self, topic: str, *, lane: str = DEFAULT_LANE) -> RabbitMQProducer:
        return self.run(self._open_producer(topic, lane))

    async def _open_producer(self, topic: str, lane: str) -> RabbitMQProducer:
        connection = await self.lane_connection(lane)
        exchange = self.topology.exchange(topic)
        parsed = parse(topic)
        # A request nobody consumes comes back (basic.return): only where a sender waits for an
        # answer; a reply or a notice to nobody is dropped, as a non-persistent topic does.
        mandatory = parsed.namespace == "request" and not parsed.persistent
        confirms = mandatory or parsed.persistent or CONFIRM_TRANSIENT
        channel = await connection.channel(publisher_confirms=confirms, on_return_raises=confirms)
        try:
            await self._declare_exchange(channel, exchange)
        except BaseException:
            await _close_quietly(channel)
            raise
        logger.debug("RabbitMQ producer on %s (exchange %s)", topic, exchange.name)
        return RabbitMQProducer(self, connection, channel, topic, exchange.name,
                                self.topology.delivery_mode(topic), mandatory)

    async def _declare_exchange(self, channel: Any, exchange: Any) -> Any:
        try:
            return await channel.declare_exchange(exchange.name, aio_pika.ExchangeType(exchange.kind),
                                                  durable=exchange.durable, auto_delete=exchange.auto_delete)
        except (aiormq.exceptions.ChannelPreconditionFailed, aiormq.exceptions.ChannelLockedResource) as e:
            raise self._declaration_error(e, f"exchange {exchange.name}") from e

    def open_consumer(self, topic: str, subscription: str, *, listener: Listener, position: Position = "latest",
                      own: bool = False, lane: str = DEFAULT_LANE) -> RabbitMQConsumer:
        # ``position`` changes nothing: a new queue starts empty (Capabilities.limitations).
        queue = self.topology.queue(topic, subscription, own=own)
        consumer = RabbitMQConsumer(self, topic, queue, listener, parse(topic).persistent)
        return self.run(self._open_consumer(consumer, lane))

    async def _open_consumer(self, consumer: RabbitMQConsumer, lane: str) -> RabbitMQConsumer:
        connection = await self.lane_connection(lane)
        queue = consumer.spec
        exchange_spec = self.topology.exchange(consumer.topic)
        channel = await connection.channel(publisher_confirms=False)
        try:
            await channel.set_qos(prefetch_count=PREFETCH)
            exchange = await self._declare_exchange(channel, exchange_spec)
            try:
                declared = await channel.declare_queue(
                    queue.name, durable=queue.durable, exclusive=queue.exclusive, auto_delete=queue.auto_delete,
                    arguments=dict(queue.arguments) or None)
            except (aiormq.exceptions.ChannelPreconditionFailed, aiormq.exceptions.ChannelLockedResource) as e:
                raise self._declaration_error(e, f"queue {queue.name}") from e
            await declared.bind(exchange)
            consumer._connection, consumer._channel, consumer._queue = connection, channel, declared
            consumer.no_ack = queue.own and not consumer._persistent
            consumer._tag = await declared.consume(consumer.on_message, no_ack=consumer.no_ack)
        except BaseException:
            await _close_quietly(channel)
            raise
        logger.debug("RabbitMQ consumer of %s (queue %s)", consumer.topic, queue.name)
        return consumer

    async def problem(self) -> str | None:
        """For each node in turn, a TCP connection (cancelled at once with the caller), then an AMQP
        handshake with the credentials, on the transport's loop: None as soon as one node takes us,
        else why not in a few words per node; :class:`~.transport.BrokerRefused` for a wrong user,
        password or vhost."""
        problems = []
        for node in self.nodes:
            problem = await self._node_problem(node)
            if problem is None:
                return None
            problems.append(problem)
        return "; ".join(dict.fromkeys(problems))

    async def _node_problem(self, node: tuple[str, int]) -> str | None:
        where = f"{node[0]}:{node[1]}"
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(*node), PROBE_TIMEOUT)
        except TimeoutError:
            return f"no answer from {where} within {PROBE_TIMEOUT:g}s"
        except ConnectionRefusedError:
            return f"connection refused on {where} (nothing listens there)"
        except OSError as e:
            return f"cannot connect to {where}: {e.strerror or e}"
        writer.close()
        if self._closed:
            return None
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._handshake(node), self.loop))

    async def _handshake(self, node: tuple[str, int]) -> str | None:
        try:
            connection = await self._connect(robust=False, lane="probe", node=node)
        except BrokerRefused:
            raise  # a wrong password or vhost: the caller ends with the line (waiting cannot help)
        except TransportError as e:
            return str(e)
        except (aiormq.exceptions.AMQPError, OSError, TimeoutError) as e:
            return f"RabbitMQ at {node[0]}:{node[1]} did not accept an AMQP connection ({type(e).__name__}: {e})"
        await _close_quietly(connection)
        return None

    async def consumer_counts(self, timeout: float = 5.0) -> Mapping[str, int] | None:
        """None: the broker's counts are per queue, and a topic's queues are its consumers' names,
        which a caller does not know (a request nobody consumes comes back instead)."""
        return None

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.run(self._close_all())
        except Exception as e:
            logger.debug("closing the RabbitMQ connections failed: %s", e)
        self._closed = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(OPEN_TIMEOUT)
        if not self._thread.is_alive():
            self.loop.close()

    async def _close_all(self) -> None:
        connections = list(self._lanes.values())
        self._lanes.clear()
        for connection in connections:
            await _close_quietly(connection)


async def _close_quietly(closable: Any) -> None:
    try:
        await closable.close()
    except Exception as e:
        logger.debug("close failed: %s", e)

