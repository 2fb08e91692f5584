"""The seam between the messaging core and a broker: what a transport gives :class:`~.pubsub.PubSub`.

Why a seam of our own: everything above :mod:`.pubsub` (processors, the
request/response calls, serving, lost-call notices, liveness) sees only
``PubSub``, ``Producer``, ``Consumer`` and ``Message``; below them, one broker
client does the work.  Apache Pulsar (and pulsar-lite), RabbitMQ and the
in-memory broker of the unit tests differ in how they are reached, what they
keep and what they can tell, so each is an implementation of the protocols
here, chosen once per process (``--pubsub-backend``, upstream 2.11's flag), and
nothing outside this package imports a broker client.

The shape follows what the core already needed of pulsar-client, so Pulsar's
transport stays a thin layer on the fastest path we measured (its sync client
with our own threads: :mod:`.pubsub`):

* opening a producer or a consumer is a *blocking* call, run by ``PubSub`` in a
  worker thread and retried while :attr:`Transport.retryable` errors say the
  broker is away (an asyncio client runs its coroutine on its own loop from
  there);
* a consumer hands each message to a *listener* called on any thread, with the
  consumer object that delivered it (a message may arrive before the open
  returns; it is acknowledged through the one that delivered it); the core
  moves it onto the event loop;
* a send takes an optional *receipt* callback, also called on any thread: most
  sends go without one (a receipt costs the I/O thread the GIL);
* what a broker cannot do is said once, at start, from its :class:`Capabilities`,
  rather than discovered by a caller waiting out a deadline.

Topics are named as everywhere else in our code (``trustgraph.topics``: 2.1's
``persistent://tenant/namespace/name`` and ``non-persistent://...``, 2.11's
``class:topicspace:topic``): a transport maps a name onto its broker's own
objects (a Pulsar topic; a RabbitMQ exchange and queues) and keeps the name's
meaning: a persistent topic keeps what no consumer has taken yet, a
non-persistent one does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

#: Where a new subscription starts: only new messages, or everything a persistent topic still keeps.
Position = Literal["latest", "earliest"]

#: A send's receipt: None when the broker has the message, else why not (one line); any thread.
Receipt = Callable[[str | None], None]

# The connections (lanes) of a transport: the default one, and the two that carry config, whose
# messages can be megabytes.  A broker skips a consumer whose connection is busy sending it
# something big (Apache Pulsar's non-persistent dispatcher, and pulsar-lite, skip a consumer whose
# channel is not writable; measured: with 450 KB pushes on the connection of a response
# subscription, 27 of 100 config replies never arrived, none with the pushes on a connection of
# their own), so what carries big messages has a connection of its own.
DEFAULT_LANE = "default"
#: The config push subscription's connection.
CONFIG_PUSH_LANE = "config-push"
#: Config replies' connection.
CONFIG_LANE = "config"


class Delivery(Protocol):
    """One message as a consumer receives it (Pulsar's message object is one as it is)."""

    def data(self) -> bytes:
        """The payload."""

    def properties(self) -> dict[str, str]:
        """The message properties (our request ids, deadlines, scores ...; upstream's ``id``)."""


class TransportProducer(Protocol):
    """Sends on one topic."""

    def send(self, data: bytes, properties: Mapping[str, str], receipt: Receipt | None = None) -> None:
        """Hand ``data`` to the broker client without waiting; ``receipt`` is called once the broker
        has it or it failed.  Raises :class:`TransportError` when the send cannot even be queued.
        A producer that is reconnecting keeps the message and sends it once connected (Pulsar does;
        a transport that cannot says so in its capabilities).  Most sends pass no receipt and the
        others mostly the same callable again: a transport adapts one to its client's callback
        without an object per message where it can (the hot path)."""

    def is_connected(self) -> bool:
        """False while the producer is reconnecting to the broker."""

    def close(self) -> None:
        """Blocking; never raises."""


class TransportConsumer(Protocol):
    """One subscription's consumer: acknowledges, pauses and closes what it delivered."""

    def ack(self, delivery: Delivery) -> None:
        """Done with ``delivery``: the broker forgets it."""

    def nack(self, delivery: Delivery) -> None:
        """Failed on ``delivery``: a persistent topic delivers it again, after a moment."""

    def pause(self) -> None:
        """Stop handing messages to the listener (flow control: the broker keeps the rest)."""

    def resume(self) -> None:
        """Hand messages to the listener again."""

    def is_connected(self) -> bool:
        """False while the consumer is reconnecting to the broker."""

    def unsubscribe(self) -> None:
        """Remove the subscription from the broker (blocking; a persistent topic keeps nothing more
        for it).  Raises :class:`TransportError` when the broker cannot be told."""

    def close(self) -> None:
        """Stop consuming; the subscription stays (blocking; never raises)."""


#: Called with each message, on any thread, with the consumer that delivered it.
Listener = Callable[[TransportConsumer, Delivery], None]


class TransportError(Exception):
    """A broker operation failed, in one line that says what to do."""


class BrokerRefused(TransportError):
    """The broker answered and refused this process (its credentials, its permissions): waiting
    cannot help, so a process ends with the line instead of retrying as for a broker that is away."""


@dataclass(frozen=True)
class Capabilities:
    """What a transport can and cannot do, for the core to rely on and for the operator to read."""

    #: The backend's name, as ``--pubsub-backend`` takes it.
    name: str
    #: The broker tells how many consumers each topic has (``Transport.consumer_counts``): a call
    #: to a request topic nobody consumes fails at once instead of at its deadline.
    consumer_counts: bool = False
    #: Messages over :data:`~trustgraph.base.safety.limits.MAX_MESSAGE_BYTES` travel on a
    #: persistent topic (in chunks, or whole); a non-persistent topic never takes them.
    large_persistent: bool = True
    #: A request a dying consumer held goes to another consumer of the topic (RabbitMQ requeues
    #: it), so a restart notice must not end calls that are still being served.
    redelivers_requests: bool = False
    #: A request sent to a topic nobody consumes comes back through its send's receipt
    #: (``nothing consumes <topic>``: RabbitMQ's basic.return), so a request send whose caller
    #: gave ``on_error`` always carries a receipt, and the call fails at once, not at its deadline.
    returns_unconsumed: bool = False
    #: Seconds a new subscription needs before a message published elsewhere reaches it
    #: (pulsar-lite may drop one sent just after subscribe returns).
    subscribe_settle: float = 0.0
    #: Producers and consumers reconnect by themselves after the broker went away, and say so only
    #: through ``is_connected()``: ``PubSub`` polls it to tell once that the connection was lost
    #: and once that it is back, and to end the calls the loss swallowed (:mod:`.lost_calls`).
    #: False: its parts are never cut off (the in-memory broker; a test tells a loss itself).
    reconnects: bool = True
    #: What this backend cannot do that the core would otherwise give: one line each, logged at
    #: INFO when a process starts on it.
    limitations: tuple[str, ...] = field(default=())


@runtime_checkable
class Transport(Protocol):
    """One connection (or, for Pulsar, one client per *lane*) to a broker, and its factory."""

    capabilities: Capabilities
    #: Errors of an open that mean "the broker is away or not ready yet": retried with back-off
    #: (the client's own errors, so the retry's lines name them as the client does).
    retryable: tuple[type[BaseException], ...]
    #: Added to the line of a failed open when the broker's address is likely the cause (Pulsar:
    #: an ``http://`` URL that must be its lookup service), else None.
    open_advice: str | None

    def open_producer(self, topic: str, *, lane: str) -> TransportProducer:
        """A producer on ``topic`` (blocking; run in a worker thread)."""

    def open_consumer(self, topic: str, subscription: str, *, listener: Listener, position: Position,
                      own: bool, lane: str) -> TransportConsumer:
        """Subscribe to ``topic`` and start calling ``listener`` (blocking; run in a worker thread).

        Every consumer of one ``subscription`` shares its messages (each goes to one of them);
        each subscription gets every message.  ``own``: the subscription is this process's alone
        (a caller's responses, a config push, an announcement reader): a transport whose queues
        outlive their consumers removes it when the consumer goes.  ``lane``: which connection
        carries it (:data:`DEFAULT_LANE` and the config lanes: big messages apart)."""

    async def problem(self) -> str | None:
        """Why the broker cannot be reached now, in a few words, or None when it can;
        :class:`BrokerRefused` when it answered and refused us (retrying cannot help)."""

    async def consumer_counts(self, timeout: float = 5.0) -> Mapping[str, int] | None:
        """How many consumers each topic has, keyed ``tenant/namespace/name`` (``trustgraph.topics``'
        ``Topic.path``: what every broker's count can say); None when the broker cannot tell (see
        :class:`Capabilities`).  Raises :class:`TransportError` (one line) when it can but did not
        answer within ``timeout`` seconds."""

    def close(self) -> None:
        """Close every connection (blocking; never raises)."""
