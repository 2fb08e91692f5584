"""Apache Pulsar and pulsar-lite behind the seam (:mod:`.transport`): pulsar-client's sync API.

We use pulsar-client's synchronous API with our own threads rather than
``pulsar.asyncio``: measured on the target machine, the sync client did about
7,500 request/response round trips per second with 32 in flight against about
4,000 for ``pulsar.asyncio`` (see BENCHMARKS.md).  What :class:`PulsarTransport`
adds to the client is only what the core relies on: a client per lane
(:meth:`PulsarTransport.lane_client`), the producer and subscription settings
(chunking on and batching off, as upstream; Shared subscriptions; receive
queues sized by persistence; a negative ack redelivered after 1 s), receipts
as one line or None, the errors worth retrying, the probe that tells why the
broker cannot be reached, and the broker's consumer counts
(:mod:`.broker_consumers`, with the admin URL).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pulsar

from ...topics import parse, to_pulsar
from .broker_consumers import fetch_consumer_counts
from .broker_url import BrokerUrl, parse_broker_url, probe
from .transport import DEFAULT_LANE, Capabilities, Delivery, Listener, Position, Receipt, TransportError

logger = logging.getLogger(__name__)

#: The broker errors that a later attempt at an open may not get (anything else is a bug, raised at once).
RETRYABLE = (pulsar.ConnectError, pulsar.Timeout, pulsar.LookupError,
             pulsar.ServiceUnitNotReady, pulsar.TopicNotFound)

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

#: A negative ack is redelivered (persistent topics) after this long, so a failing handler does
#: not spin.
NACK_REDELIVERY_MS = 1000

#: How many consumer ids a new client on a loopback broker may skip (:func:`spread_consumer_ids`).
CONSUMER_ID_SPREAD = 64
#: The topic whose short-lived readers take those ids (tg/config exists wherever TrustGraph runs).
CONSUMER_ID_TOPIC = "non-persistent://tg/config/consumer-ids"

#: How long :meth:`PulsarTransport.close` waits for opens in flight on other threads (each is
#: bounded by the clients' 3 s operation and connection timeouts) before it closes the clients.
CLOSE_PATIENCE = 10.0


def _loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    return host == "localhost" or host == "::1" or host.startswith("127.")


def spread_consumer_ids(client: pulsar.Client, count: int, stopping: Callable[[], bool] = lambda: False,
                        topic: str = CONSUMER_ID_TOPIC) -> int:
    """Let a new ``client``'s consumer ids start ``count`` further on (each subscribe takes one id):
    how many it skipped, fewer when the broker refused a subscribe or ``stopping()`` said the client
    is about to close (never raises).

    pulsar-lite 0.2 keys the consumers of a non-persistent subscription by the id the client chose,
    which Pulsar's protocol makes unique per connection only: pulsar-client numbers each client's
    consumers from 0, so two replicas of one processor, started alike, give their shared request
    subscription the same id, and the broker refuses the second and drops that whole connection
    (every subscription on it, three times, then the operation timeout: a replica or a restarted
    process started 3 s late, with its calls in flight on that connection ended).  Started at a
    random place, two clients collide once in :data:`CONSUMER_ID_SPREAD`.  Apache Pulsar keys
    consumers per connection and needs none of this: only a loopback broker (the embedded one) is
    spread, at about a millisecond an id.

    The ids are taken by one subscription of this client's own, subscribed to and closed over and
    over, and unsubscribed at the end.  pulsar-lite never forgets a subscription (its ``/metrics``
    lists every one ever made, and the gateway, agent and prompt-template read those metrics every
    2 s for the consumer counts): a reader per id, as this did before, left 32 subscriptions a
    process start on average, 795 of the 875 of a fresh stack with eight tool services, and after
    some 300 starts of one service the broker spent half a core rendering 27 MB of metrics that timed out."""
    name = f"tg-id-spread-{secrets.token_hex(5)}"
    consumer: Any = None
    done = 0
    try:
        while done < count and not stopping():
            if consumer is not None:
                consumer.close()
            consumer = None
            consumer = client.subscribe(topic, name, consumer_type=pulsar.ConsumerType.Shared)
            done += 1
    except Exception as e:   # best effort: a broker refusing the subscription costs one refusal, no more
        logger.debug("Consumer ids spread by %d of %d: %s: %s", done, count, type(e).__name__, e)
    if consumer is not None:
        try:
            consumer.unsubscribe()
        except Exception as e:
            logger.debug("Consumer-id spread's subscription not removed: %s: %s", type(e).__name__, e)
    return done


#: Why a failed open on an ``http://`` broker URL may have failed.
HTTP_ADVICE = ("an http:// broker URL must be Pulsar's HTTP lookup service: "
               "the broker URL usually looks like pulsar://host:6650")

_OK = pulsar.Result.Ok
_POSITIONS = {"latest": pulsar.InitialPosition.Latest, "earliest": pulsar.InitialPosition.Earliest}


def receive_queue_size(topic_url: str) -> int:
    """The receive queue for a consumer of ``topic_url`` (a Pulsar URL)."""
    return PERSISTENT_RECEIVE_QUEUE if parse(topic_url).persistent else NON_PERSISTENT_RECEIVE_QUEUE


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


def problem_of(result: pulsar.Result) -> str | None:
    """A send's result as a receipt says it: None when the broker has the message, else the result."""
    return None if result == _OK else str(result)


def _receipt_callback(receipt: Receipt) -> Any:
    """pulsar-client's ``(result, message id)`` callback calling ``receipt(problem)``."""
    def done(result: pulsar.Result, _msg_id: Any) -> None:
        receipt(problem_of(result))
    return done


class PulsarProducer:
    """A pulsar-client producer as a :class:`~.transport.TransportProducer`."""

    def __init__(self, producer: pulsar.Producer) -> None:
        self._producer = producer
        # The receipt adapted last, and its callback: a producer's sends mostly pass the same one
        # (the core's failure logger), so it is adapted once, not once per message.
        self._receipt: Receipt | None = None
        self._callback: Any = None

    def send(self, data: bytes, properties: Mapping[str, str], receipt: Receipt | None = None) -> None:
        if receipt is None:
            callback = None
        elif receipt is self._receipt:
            callback = self._callback
        else:
            callback = _receipt_callback(receipt)
            self._receipt, self._callback = receipt, callback
        try:
            self._producer.send_async(data, callback, properties=properties)
        except pulsar.PulsarException as e:
            raise TransportError(str(e)) from e

    def is_connected(self) -> bool:
        return bool(self._producer.is_connected())

    def close(self) -> None:
        try:
            self._producer.close()
        except pulsar.PulsarException:
            pass


class PulsarConsumer:
    """A pulsar-client consumer as a :class:`~.transport.TransportConsumer`.

    One per subscribe attempt, made before it: pulsar-client may call the
    listener before ``subscribe()`` returns (measured: 5 of 120 client starts
    under load), and a retried subscribe may deliver on the consumer of the
    attempt that timed out, so each message is acknowledged through the
    consumer of the attempt that delivered it.
    """

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self._consumer: pulsar.Consumer | None = None

    def deliver(self, consumer: pulsar.Consumer, msg: Delivery) -> None:
        """pulsar-client's message listener (its listener thread)."""
        if self._consumer is None:
            self._consumer = consumer
        self._listener(self, msg)

    def attach(self, consumer: pulsar.Consumer) -> None:
        self._consumer = consumer

    def ack(self, delivery: Delivery) -> None:
        self._consumer.acknowledge(delivery)

    def nack(self, delivery: Delivery) -> None:
        self._consumer.negative_acknowledge(delivery)

    def pause(self) -> None:
        self._consumer.pause_message_listener()

    def resume(self) -> None:
        self._consumer.resume_message_listener()

    def is_connected(self) -> bool:
        return self._consumer is None or bool(self._consumer.is_connected())

    def unsubscribe(self) -> None:
        if self._consumer is not None:
            try:
                self._consumer.unsubscribe()
            except pulsar.PulsarException as e:
                raise TransportError(str(e)) from e

    def close(self) -> None:
        try:
            if self._consumer is not None:
                self._consumer.close()
        except Exception:
            pass


class PulsarTransport:
    """Apache Pulsar or pulsar-lite at ``url``: one pulsar-client per lane.

    A malformed ``url`` raises :class:`~.broker_url.BrokerUrlError` here: pulsar-client would
    take an http:// gateway URL, or no scheme, and fail much later with a bare Timeout.
    ``admin_url``: the broker's HTTP service, whose ``/metrics`` count each topic's consumers.
    """

    retryable = RETRYABLE

    def __init__(self, url: str, *, api_key: str | None = None, listener: str | None = None,
                 admin_url: str | None = None) -> None:
        self.url = url
        self._broker: BrokerUrl = parse_broker_url(url)
        self._api_key = api_key
        self._listener = listener
        self.admin_url = admin_url or None
        self._lanes: dict[str, pulsar.Client] = {}
        # Opens in flight, and whether close() has begun: pulsar-client closed while another thread
        # is inside subscribe/create_reader leaves that thread blocked for good (measured: 5 of 60
        # closes during a consumer-id spread), and an asyncio executor thread blocked so stops its
        # loop from closing.  So close() waits for the opens in flight, and none starts after it.
        self._state = threading.Condition()
        self._busy = 0
        self._closing = False
        self._making = threading.Lock()   # one client per lane, even when two threads ask at once
        self.open_advice: str | None = HTTP_ADVICE if self._broker.http else None
        self.capabilities = Capabilities(name="pulsar", consumer_counts=self.admin_url is not None,
                                         subscribe_settle=SUBSCRIBE_SETTLE)

    # operation_timeout_seconds is short on purpose: pulsar-lite 0.2 keys the
    # consumers of a shared subscription by the client-chosen consumer id, so a
    # second replica whose consumer id matches the first one's is refused and
    # retried until the operation timeout; our retry then subscribes with the
    # next id and succeeds.  A short timeout keeps that detour to seconds, and
    # spread_consumer_ids makes it rare on the embedded broker.
    # (Apache Pulsar keys consumers per connection and never hits this.)
    def lane_client(self, lane: str) -> pulsar.Client:
        """The pulsar-client, so the TCP connection, that carries ``lane`` (see
        :data:`~.transport.CONFIG_LANE`: a connection of its own for big messages).
        Raises :class:`~.transport.TransportError` once :meth:`close` has begun."""
        with self._in_use():
            return self._lane(lane)

    @contextmanager
    def _in_use(self) -> Iterator[None]:
        """Count an operation on the clients as in flight, so :meth:`close` waits for it."""
        with self._state:
            if self._closing:
                raise self._closed()
            self._busy += 1
        try:
            yield
        finally:
            with self._state:
                self._busy -= 1
                if not self._busy:
                    self._state.notify_all()

    def _lane(self, lane: str) -> pulsar.Client:
        client = self._lanes.get(lane)
        if client is not None:
            return client
        with self._making:
            client = self._lanes.get(lane)
            if client is None:
                auth = pulsar.AuthenticationToken(self._api_key) if self._api_key else None
                client = self._lanes[lane] = pulsar.Client(
                    self.url, authentication=auth, listener_name=self._listener,
                    operation_timeout_seconds=3, connection_timeout_ms=3000,
                    io_threads=1, message_listener_threads=1, logger=_client_logger(),
                )
                if all(_loopback(host) for host, _ in self._broker.hosts):
                    spread_consumer_ids(client, secrets.randbelow(CONSUMER_ID_SPREAD), lambda: self._closing)
        if self._closing:   # close() began during the spread: open nothing on a client about to close
            raise self._closed()
        return client

    def _closed(self) -> TransportError:
        return TransportError(f"the connection to {self.url} is closed: this process is stopping")

    @property
    def client(self) -> pulsar.Client:
        """The pulsar-client of the default lane (upstream's ``PulsarClient.client``)."""
        return self.lane_client(DEFAULT_LANE)

    def open_producer(self, topic: str, *, lane: str = DEFAULT_LANE) -> PulsarProducer:
        with self._in_use():
            return PulsarProducer(self._lane(lane).create_producer(
                to_pulsar(topic), chunking_enabled=True, batching_enabled=False,
                block_if_queue_full=False, max_pending_messages=10000,
            ))

    def open_consumer(self, topic: str, subscription: str, *, listener: Listener, position: Position = "latest",
                      own: bool = False, lane: str = DEFAULT_LANE) -> PulsarConsumer:
        # ``own`` changes nothing here: a Shared subscription of one consumer is the caller's alone.
        url = to_pulsar(topic)
        consumer = PulsarConsumer(listener)
        with self._in_use():
            consumer.attach(self._lane(lane).subscribe(
                url, subscription, consumer_type=pulsar.ConsumerType.Shared,
                initial_position=_POSITIONS[position], receiver_queue_size=receive_queue_size(url),
                negative_ack_redelivery_delay_ms=NACK_REDELIVERY_MS, message_listener=consumer.deliver,
            ))
        return consumer

    async def problem(self) -> str | None:
        """A TCP connection to one of the URL's hosts (and, for http, a Pulsar lookup): pulsar-client
        itself would retry in C++ threads that no Ctrl-C stops, logging each attempt."""
        return await probe(self._broker)

    async def consumer_counts(self, timeout: float = 5.0) -> Mapping[str, int] | None:
        """The ``pulsar_consumers_count`` gauge of the admin URL's ``/metrics`` (None without one)."""
        if self.admin_url is None:
            return None
        # Imported here: a process that never reads the counts does not carry aiohttp (about 8 MB).
        import aiohttp

        async with aiohttp.ClientSession() as session:
            return await fetch_consumer_counts(session, self.admin_url, timeout=timeout)

    def close(self) -> None:
        """Close every lane's client once the opens in flight have ended (at most
        :data:`CLOSE_PATIENCE` s); no open starts after this has begun."""
        with self._state:
            self._closing = True
            if not self._state.wait_for(lambda: not self._busy, CLOSE_PATIENCE):
                logger.warning("Closing the connection to %s with %d open%s still in flight after %gs",
                               self.url, self._busy, "" if self._busy == 1 else "s", CLOSE_PATIENCE)
            clients = list(self._lanes.values())
            self._lanes.clear()
        for client in clients:
            try:
                client.close()
            except Exception:
                pass
