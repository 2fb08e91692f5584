"""An in-memory broker behind the transport seam, so a unit test needs no broker.

Only the transport is replaced: :func:`memory_pubsub` gives a real
:class:`~trustgraph.base.messaging.pubsub.PubSub` whose transport is a
:class:`MemoryTransport` (a :class:`~trustgraph.base.messaging.transport.Transport`),
so encoding, decoding through the codec, malformed handling, concurrency,
pausing and acks are the same code a processor runs in production.  What is
modelled is what that code relies on, as Pulsar does it (and one rule
stricter than Pulsar's, on own subscriptions):

* shared subscriptions: each message goes to one consumer of every
  subscription of its topic, round-robin; a subscription opened as a
  process's own (``own``) is refused to another process, and so is one
  opened as shared and as own (a caller that would share a subscription it
  says is its own, on a broker whose own queues are exclusive);
* a non-persistent topic drops a message nobody is subscribed to, and a
  non-persistent subscription ends with its last consumer;
* a persistent topic keeps every message, a new subscription at Earliest
  starts with all of them, and a subscription without consumers keeps what
  arrives for the next one; a negative ack redelivers (after
  :data:`NACK_REDELIVERY`, Pulsar's 1 s), as does closing a consumer that
  has unacknowledged messages; ``unsubscribe`` (of its last consumer)
  removes the subscription and what it kept;
* a consumer's ``pause`` holds its messages back until ``resume``.

Messages are handed to the listener on the thread that publishes them (the
event loop's, for our producers) instead of a listener thread of its own:
our consumer only queues them and wakes the loop, which is thread-safe from
either, and a test stays deterministic.  :meth:`MemoryBroker.refuse_sends`
makes a topic's sends fail (``TransportError``), to test what a service does
when it cannot reply; :meth:`MemoryBroker.hold_sends` makes its producers
reconnect, as pulsar-client's do after a broker restart: they say they are
not connected and keep what is sent until released, then send it and call
its receipt.  A consumer says it is not connected once it is being closed,
as pulsar-client's does.  :meth:`MemoryBroker.refuse_namespace` makes
producers and subscriptions of a namespace fail to open (:class:`TopicNotFound`),
as an Apache Pulsar cluster's do for a namespace it does not have.  Its
parts are never cut off from the broker otherwise, so its transport says it
does not reconnect (``Capabilities.reconnects``): a test tells a lost
connection itself (``CallWatch.connection_lost``), or makes the transport with
``reconnects=True`` and cuts it off (:meth:`MemoryBroker.cut_off`), as a broker
restart does until pulsar-client has reconnected: its producers keep what is
sent, its consumers say they are not connected and a non-persistent message
meanwhile never reaches them, and the process's connection watch reads it.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...topics import parse
from ..messaging.transport import DEFAULT_LANE, Capabilities, Listener, Position, Receipt, TransportError

__all__ = ["MemoryBroker", "MemoryMessage", "MemoryTransport", "TopicNotFound", "memory_pubsub"]

#: Seconds before a negatively acknowledged message of a persistent topic is delivered again
#: (Pulsar's, as our Pulsar transport sets it).
NACK_REDELIVERY = 1.0


class TopicNotFound(TransportError):
    """An open in a namespace the broker refuses (:meth:`MemoryBroker.refuse_namespace`): retried,
    as Pulsar's error of that name is."""


@dataclass(frozen=True, eq=False)
class MemoryMessage:
    """A published message: a :class:`~trustgraph.base.messaging.transport.Delivery`, with the
    accessors of pulsar.Message besides."""

    payload: bytes
    props: dict[str, str]
    topic: str
    seq: int

    def data(self) -> bytes:
        return self.payload

    def properties(self) -> dict[str, str]:
        return dict(self.props)  # a copy, as pulsar returns a new dict per call

    def topic_name(self) -> str:
        return self.topic

    def message_id(self) -> int:
        return self.seq


@dataclass(eq=False)
class _Subscription:
    name: str
    topic: _Topic
    consumers: list[MemoryConsumer] = field(default_factory=list)
    backlog: deque[MemoryMessage] = field(default_factory=deque)  # persistent, nobody attached
    turn: int = 0
    own: bool = False  # as opened by its consumers

    def refusal(self, transport: MemoryTransport, own: bool) -> str | None:
        """Why ``transport`` cannot open a consumer of this subscription (``own`` as it says), or None
        (call with the broker's lock held)."""
        if not self.consumers:
            return None
        if own != self.own:
            return (f"subscription {self.name} on {self.topic.name} is opened as "
                    f"{'own' if self.own else 'shared'} and now as {'own' if own else 'shared'}")
        if own and any(c.transport is not transport for c in self.consumers):
            return f"subscription {self.name} on {self.topic.name} is another process's own"
        return None

    def pick(self) -> MemoryConsumer | None:
        """The next consumer that is not cut off, round-robin (call with the broker's lock held)."""
        for _ in range(len(self.consumers)):
            self.turn = (self.turn + 1) % len(self.consumers)
            consumer = self.consumers[self.turn]
            if not consumer.cut:
                return consumer
        return None


@dataclass(eq=False)
class _Topic:
    name: str
    persistent: bool
    log: list[MemoryMessage] = field(default_factory=list)         # every message, for Earliest
    subscriptions: dict[str, _Subscription] = field(default_factory=dict)


class MemoryBroker:
    """Topics and subscriptions of one test; thread-safe (subscribe runs in a worker thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._topics: dict[str, _Topic] = {}
        self._seq = itertools.count(1)
        self._refused: set[str] = set()
        self._missing: set[str] = set()  # namespaces ("tenant/ns") that cannot be opened
        self._held: dict[str, list[tuple[bytes, dict[str, str], Receipt | None]]] = {}
        self.sent: dict[str, list[MemoryMessage]] = {}  # every message per topic, for assertions

    def transport(self, reconnects: bool = False) -> MemoryTransport:
        """A new transport, as each process makes its own connection (``reconnects``: see
        :class:`MemoryTransport`)."""
        return MemoryTransport(self, reconnects)

    def refuse_sends(self, topic: str, refused: bool = True) -> None:
        """Make sends on ``topic`` fail (the producer's ``send`` raises ``TransportError``)."""
        with self._lock:
            (self._refused.add if refused else self._refused.discard)(topic)

    def refuse_namespace(self, namespace: str, refused: bool = True) -> None:
        """Make opening a producer or subscription in ``namespace`` (``tenant/ns``) fail with
        :class:`TopicNotFound`, as on a cluster without that namespace (``refused=False``:
        it exists now)."""
        with self._lock:
            (self._missing.add if refused else self._missing.discard)(namespace)

    def check_open(self, topic: str) -> None:
        """Raise as the cluster would when ``topic``'s namespace is one it does not have."""
        namespace = parse(topic).namespace_path
        with self._lock:
            missing = namespace in self._missing
        if missing:
            raise TopicNotFound(f"Namespace not found: {namespace} (in-memory broker)")

    def hold_sends(self, topic: str, held: bool = True) -> None:
        """Make the producers of ``topic`` reconnect: not connected, sends kept until released
        (``held=False``), then published in order with their receipts."""
        with self._lock:
            if held:
                self._held.setdefault(topic, [])
                return
            kept = self._held.pop(topic, [])
        for data, properties, receipt in kept:
            self.publish(topic, data, properties)
            if receipt is not None:
                receipt(None)

    def holding(self, topic: str) -> bool:
        return topic in self._held

    def keep(self, topic: str, data: bytes, properties: Mapping[str, str], receipt: Receipt | None) -> bool:
        """Keep a send while ``topic`` is held; False when it is not (send it now)."""
        with self._lock:
            kept = self._held.get(topic)
            if kept is None:
                return False
            kept.append((data, dict(properties), receipt))
            return True

    def cut_off(self, transport: MemoryTransport, cut: bool = True) -> None:
        """Take ``transport``'s connection away (``cut=False``: give it back), as a broker restart
        does until pulsar-client has reconnected each part: its producers say they are not
        connected and keep what is sent (sent, with its receipt, once back), and its consumers
        say they are not connected and get nothing meanwhile (a non-persistent message is
        dropped, as by a broker with no consumer for it; a persistent one waits for them)."""
        for part in transport.parts():
            part.cut_off(cut)

    def _topic(self, name: str) -> _Topic:
        t = self._topics.get(name)
        if t is None:
            t = self._topics[name] = _Topic(name, persistent=parse(name).persistent)
        return t

    def publish(self, topic: str, data: bytes, properties: Mapping[str, str]) -> MemoryMessage:
        with self._lock:
            if topic in self._refused:
                raise TransportError(f"in-memory broker refuses sends on {topic}")
            msg = MemoryMessage(data, dict(properties), topic, next(self._seq))
            t = self._topic(topic)
            self.sent.setdefault(topic, []).append(msg)
            if t.persistent:
                t.log.append(msg)
            targets = []
            for sub in t.subscriptions.values():
                consumer = sub.pick()
                if consumer is not None:
                    targets.append(consumer)
                elif t.persistent:
                    sub.backlog.append(msg)   # a non-persistent one nobody can take is dropped
        for consumer in targets:  # outside the lock: a listener may pause its consumer
            consumer.offer([msg])
        return msg

    def subscribe(self, transport: MemoryTransport, topic: str, subscription: str,
                  position: Position, listener: Listener, own: bool) -> MemoryConsumer:
        with self._lock:
            t = self._topic(topic)
            sub = t.subscriptions.get(subscription)
            if sub is None:
                sub = t.subscriptions[subscription] = _Subscription(subscription, t)
                if t.persistent and position == "earliest":
                    sub.backlog.extend(t.log)
            refusal = sub.refusal(transport, own)
            if refusal is not None:
                raise TransportError(f"{refusal} (in-memory broker)")
            sub.own = own
            consumer = MemoryConsumer(self, transport, sub, listener, NACK_REDELIVERY)
            sub.consumers.append(consumer)
            backlog = list(sub.backlog)
            sub.backlog.clear()
        consumer.offer(backlog)
        return consumer

    def redeliver(self, sub: _Subscription, messages: list[MemoryMessage]) -> None:
        """Hand messages of a persistent subscription to one of its consumers, or keep them."""
        if not messages:
            return
        with self._lock:
            consumer = sub.pick()
            if consumer is None:
                sub.backlog.extend(messages)
        if consumer is not None:
            consumer.offer(messages)

    def detach(self, consumer: MemoryConsumer, left: list[MemoryMessage]) -> None:
        """A consumer closed: its unacknowledged messages go back (persistent topics only)."""
        sub = consumer.subscription
        with self._lock:
            if consumer in sub.consumers:
                sub.consumers.remove(consumer)
            if not sub.topic.persistent:
                if not sub.consumers:
                    sub.topic.subscriptions.pop(sub.name, None)
                return
        self.redeliver(sub, left)

    def drop(self, sub: _Subscription) -> None:
        """Remove a subscription that has no consumer left (an unsubscribe)."""
        with self._lock:
            if not sub.consumers and sub.topic.subscriptions.get(sub.name) is sub:
                del sub.topic.subscriptions[sub.name]


class MemoryConsumer:
    """A :class:`~trustgraph.base.messaging.transport.TransportConsumer`: pause/resume, ack, nack,
    close, unsubscribe."""

    def __init__(self, broker: MemoryBroker, transport: MemoryTransport, subscription: _Subscription,
                 listener: Listener, redelivery_delay: float) -> None:
        self.broker = broker
        self.transport = transport
        self.subscription = subscription
        self._listener = listener
        self._delay = redelivery_delay
        self._lock = threading.Lock()
        self._pending: deque[MemoryMessage] = deque()
        self._unacked: dict[int, MemoryMessage] = {}
        self._timers: set[threading.Timer] = set()
        self._paused = False
        self._pumping = False
        self._closed = False
        self.cut = False   # cut off from the broker (MemoryBroker.cut_off): not connected, gets nothing

    def cut_off(self, cut: bool) -> None:
        kept: list[MemoryMessage] = []
        with self.broker._lock:
            self.cut = cut
            if not cut:   # back: what its (persistent) subscription kept meanwhile
                kept = list(self.subscription.backlog)
                self.subscription.backlog.clear()
        if kept:
            self.offer(kept)

    def offer(self, messages: list[MemoryMessage]) -> None:
        with self._lock:
            if self._closed:
                return
            self._pending.extend(messages)
        self._pump()

    def _pump(self) -> None:
        """Call the listener for pending messages, one caller at a time, in order."""
        with self._lock:
            if self._pumping:
                return  # the pumping thread takes what was just added
            self._pumping = True
        while True:
            with self._lock:
                # Stopping is decided under the lock that offer() appends under,
                # so no message is left behind by a pump that is just ending.
                if self._paused or self._closed or not self._pending:
                    self._pumping = False
                    return
                msg = self._pending.popleft()
                self._unacked[msg.seq] = msg
            try:
                self._listener(self, msg)
            except BaseException:
                with self._lock:
                    self._pumping = False
                raise

    def pause(self) -> None:
        with self._lock:
            self._paused = True

    def resume(self) -> None:
        with self._lock:
            self._paused = False
        self._pump()

    def ack(self, msg: MemoryMessage) -> None:
        with self._lock:
            self._unacked.pop(msg.seq, None)

    def nack(self, msg: MemoryMessage) -> None:
        with self._lock:
            if self._unacked.pop(msg.seq, None) is None or self._closed:
                return
        if not self.subscription.topic.persistent:
            return  # nothing is stored on a non-persistent topic: the message is gone

        def again() -> None:
            self._timers.discard(timer)
            self.broker.redeliver(self.subscription, [msg])

        timer = threading.Timer(self._delay, again)
        timer.daemon = True
        self._timers.add(timer)
        timer.start()

    def is_connected(self) -> bool:
        """False from the moment it is being closed (pulsar-client's ``Closing`` state), and while
        it is cut off."""
        return not self._closed and not self.cut

    def unsubscribe(self) -> None:
        """Close, and remove the subscription with its backlog once no other consumer is on it."""
        self.close()
        self.broker.drop(self.subscription)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            left = [*self._unacked.values(), *self._pending]
            self._unacked.clear()
            self._pending.clear()
            timers, self._timers = self._timers, set()
        for timer in timers:
            timer.cancel()
        self.broker.detach(self, left)


class MemoryProducer:
    """A :class:`~trustgraph.base.messaging.transport.TransportProducer`: ``send`` with a receipt."""

    def __init__(self, broker: MemoryBroker, topic: str) -> None:
        self.broker = broker
        self.topic = topic
        self._closed = False
        self._lock = threading.Lock()
        self._kept: list[tuple[bytes, dict[str, str], Receipt | None]] | None = None  # while cut off

    def cut_off(self, cut: bool) -> None:
        with self._lock:
            kept, self._kept = self._kept, ([] if cut else None)
            if cut:
                return
        for data, properties, receipt in kept or []:   # back: what was kept goes, in order
            self.broker.publish(self.topic, data, properties)
            if receipt is not None:
                receipt(None)

    def send(self, data: bytes, properties: Mapping[str, str], receipt: Receipt | None = None) -> None:
        if self._closed:
            raise TransportError(f"producer on {self.topic} is closed")
        if not isinstance(data, bytes):
            raise TypeError(f"payload must be bytes, got {type(data).__name__}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in properties.items()):
            raise TypeError(f"message properties must map str to str, got {dict(properties)!r}")
        with self._lock:
            if self._kept is not None:
                self._kept.append((data, dict(properties), receipt))
                return
        if self.broker.keep(self.topic, data, properties, receipt):
            return
        self.broker.publish(self.topic, data, properties)
        if receipt is not None:
            receipt(None)

    def is_connected(self) -> bool:
        return not self._closed and self._kept is None and not self.broker.holding(self.topic)

    def close(self) -> None:
        self._closed = True


class MemoryTransport:
    """One process's connection to a :class:`MemoryBroker`: a
    :class:`~trustgraph.base.messaging.transport.Transport`, every lane the same."""

    capabilities = Capabilities(name="memory", reconnects=False)
    retryable: tuple[type[BaseException], ...] = (TopicNotFound,)
    open_advice: str | None = None

    def __init__(self, broker: MemoryBroker, reconnects: bool = False) -> None:
        """``reconnects``: a test cuts it off (:meth:`MemoryBroker.cut_off`), so its process
        watches its connection, as on a transport that reconnects by itself."""
        self.broker = broker
        self._lock = threading.Lock()
        self._parts: list[MemoryProducer | MemoryConsumer] = []
        if reconnects:
            self.capabilities = Capabilities(name="memory", reconnects=True)

    def parts(self) -> list[MemoryProducer | MemoryConsumer]:
        """Its producers and consumers opened and not closed with it."""
        with self._lock:
            return list(self._parts)

    def _keep(self, part: MemoryProducer | MemoryConsumer) -> None:
        with self._lock:
            self._parts.append(part)

    def open_producer(self, topic: str, *, lane: str = DEFAULT_LANE) -> MemoryProducer:
        self.broker.check_open(topic)
        producer = MemoryProducer(self.broker, topic)
        self._keep(producer)
        return producer

    def open_consumer(self, topic: str, subscription: str, *, listener: Listener, position: Position = "latest",
                      own: bool = False, lane: str = DEFAULT_LANE) -> MemoryConsumer:
        self.broker.check_open(topic)
        consumer = self.broker.subscribe(self, topic, subscription, position, listener, own)
        self._keep(consumer)
        return consumer

    async def problem(self) -> str | None:
        return None

    async def consumer_counts(self, timeout: float = 5.0) -> Mapping[str, int] | None:
        return None

    def close(self) -> None:
        with self._lock:
            parts, self._parts = self._parts, []
        for part in parts:
            part.close()


def memory_pubsub(broker: MemoryBroker, processor: str = "test", reconnects: bool = False) -> Any:
    """A real :class:`~trustgraph.base.messaging.pubsub.PubSub` on ``broker`` (one per "process";
    ``reconnects``: see :class:`MemoryTransport`)."""
    from ..messaging.pubsub import PubSub
    return PubSub(f"memory://{processor}", processor=processor, transport=broker.transport(reconnects))
