"""An in-memory stand-in for pulsar-client, so a unit test needs no broker.

Only the pulsar objects are replaced: :func:`memory_pubsub` gives a real
:class:`~trustgraph.base.messaging.pubsub.PubSub` whose client is a
:class:`MemoryClient`, so encoding, decoding through the codec, malformed
handling, concurrency, pausing and acks are the same code a processor runs
in production.  What is modelled is what that code relies on:

* Shared subscriptions: each message goes to one consumer of every
  subscription of its topic, round-robin;
* a non-persistent topic drops a message nobody is subscribed to, and a
  non-persistent subscription ends with its last consumer;
* a persistent topic keeps every message, a new subscription at Earliest
  starts with all of them, and a subscription without consumers keeps what
  arrives for the next one; a negative ack redelivers (after the consumer's
  ``negative_ack_redelivery_delay_ms``), as does closing a consumer that has
  unacknowledged messages; ``unsubscribe`` (of its last consumer) removes the
  subscription and what it kept;
* a consumer's ``pause_message_listener`` holds its messages back until
  ``resume_message_listener``.

Messages are handed to the listener on the thread that publishes them (the
event loop's, for our producers) instead of a listener thread of its own:
our consumer only queues them and wakes the loop, which is thread-safe from
either, and a test stays deterministic.  :meth:`MemoryBroker.refuse_sends`
makes a topic's sends fail, to test what a service does when it cannot
reply; :meth:`MemoryBroker.hold_sends` makes its producers reconnect, as
pulsar-client's do after a broker restart: they say they are not connected
and keep what is sent until released, then send it and call its receipt.
A consumer says it is not connected once it is being closed, as
pulsar-client's does.  :meth:`MemoryBroker.refuse_namespace` makes producers
and subscriptions of a namespace fail to open, as an Apache Pulsar cluster's
do for a namespace it does not have.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulsar

from ...topics import parse

__all__ = ["MemoryBroker", "MemoryClient", "MemoryMessage", "memory_pubsub"]

Listener = Callable[[Any, Any], None]


@dataclass(frozen=True, eq=False)
class MemoryMessage:
    """A published message, with pulsar.Message's accessors our code uses."""

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

    def pick(self) -> MemoryConsumer | None:
        """The next consumer, round-robin (call with the broker's lock held)."""
        if not self.consumers:
            return None
        self.turn = (self.turn + 1) % len(self.consumers)
        return self.consumers[self.turn]


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
        self._held: dict[str, list[tuple[bytes, dict[str, str], Callable[[Any, Any], None] | None]]] = {}
        self.sent: dict[str, list[MemoryMessage]] = {}  # every message per topic, for assertions

    def client(self) -> MemoryClient:
        """A new client, as each process makes its own pulsar.Client."""
        return MemoryClient(self)

    def refuse_sends(self, topic: str, refused: bool = True) -> None:
        """Make sends on ``topic`` fail (``send_async`` raises ``pulsar.ConnectError``)."""
        with self._lock:
            (self._refused.add if refused else self._refused.discard)(topic)

    def refuse_namespace(self, namespace: str, refused: bool = True) -> None:
        """Make opening a producer or subscription in ``namespace`` (``tenant/ns``) fail with
        ``pulsar.TopicNotFound``, as on a cluster without that namespace (``refused=False``:
        it exists now)."""
        with self._lock:
            (self._missing.add if refused else self._missing.discard)(namespace)

    def check_open(self, topic: str) -> None:
        """Raise as the cluster would when ``topic``'s namespace is one it does not have."""
        namespace = parse(topic).namespace_path
        with self._lock:
            missing = namespace in self._missing
        if missing:
            raise pulsar.TopicNotFound(f"Namespace not found: {namespace} (in-memory broker)")

    def hold_sends(self, topic: str, held: bool = True) -> None:
        """Make the producers of ``topic`` reconnect: not connected, sends kept until released
        (``held=False``), then published in order with their receipts."""
        with self._lock:
            if held:
                self._held.setdefault(topic, [])
                return
            kept = self._held.pop(topic, [])
        for data, properties, callback in kept:
            msg = self.publish(topic, data, properties)
            if callback is not None:
                callback(pulsar.Result.Ok, msg.seq)

    def holding(self, topic: str) -> bool:
        return topic in self._held

    def keep(self, topic: str, data: bytes, properties: dict[str, str],
             callback: Callable[[Any, Any], None] | None) -> bool:
        """Keep a send while ``topic`` is held; False when it is not (send it now)."""
        with self._lock:
            kept = self._held.get(topic)
            if kept is None:
                return False
            kept.append((data, dict(properties), callback))
            return True

    def _topic(self, name: str) -> _Topic:
        t = self._topics.get(name)
        if t is None:
            t = self._topics[name] = _Topic(name, persistent=parse(name).persistent)
        return t

    def publish(self, topic: str, data: bytes, properties: dict[str, str]) -> MemoryMessage:
        with self._lock:
            if topic in self._refused:
                raise pulsar.ConnectError(f"in-memory broker refuses sends on {topic}")
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
                else:
                    sub.backlog.append(msg)
        for consumer in targets:  # outside the lock: a listener may pause its consumer
            consumer.offer([msg])
        return msg

    def subscribe(self, client: MemoryClient, topic: str, subscription: str,
                  initial_position: Any, listener: Listener,
                  redelivery_delay: float) -> MemoryConsumer:
        with self._lock:
            t = self._topic(topic)
            sub = t.subscriptions.get(subscription)
            if sub is None:
                sub = t.subscriptions[subscription] = _Subscription(subscription, t)
                if t.persistent and initial_position == pulsar.InitialPosition.Earliest:
                    sub.backlog.extend(t.log)
            consumer = MemoryConsumer(self, client, sub, listener, redelivery_delay)
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
    """pulsar.Consumer's listener side: pause/resume, ack, negative ack, close, unsubscribe."""

    def __init__(self, broker: MemoryBroker, client: MemoryClient, subscription: _Subscription,
                 listener: Listener, redelivery_delay: float) -> None:
        self.broker = broker
        self.client = client
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

    def pause_message_listener(self) -> None:
        with self._lock:
            self._paused = True

    def resume_message_listener(self) -> None:
        with self._lock:
            self._paused = False
        self._pump()

    def acknowledge(self, msg: MemoryMessage) -> None:
        with self._lock:
            self._unacked.pop(msg.seq, None)

    def negative_acknowledge(self, msg: MemoryMessage) -> None:
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
        """False from the moment it is being closed (pulsar-client's ``Closing`` state)."""
        return not self._closed

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
    """pulsar.Producer's sending side: ``send_async`` with a receipt callback."""

    def __init__(self, broker: MemoryBroker, topic: str) -> None:
        self.broker = broker
        self.topic = topic
        self._closed = False

    def send_async(self, data: bytes, callback: Callable[[Any, Any], None] | None,
                   properties: dict[str, str] | None = None) -> None:
        if self._closed:
            raise pulsar.AlreadyClosed(f"producer on {self.topic} is closed")
        if not isinstance(data, bytes):
            raise TypeError(f"payload must be bytes, got {type(data).__name__}")
        props = properties or {}
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
            raise TypeError(f"message properties must map str to str, got {props!r}")
        if self.broker.keep(self.topic, data, props, callback):
            return
        msg = self.broker.publish(self.topic, data, props)
        if callback is not None:
            callback(pulsar.Result.Ok, msg.seq)

    def is_connected(self) -> bool:
        return not self._closed and not self.broker.holding(self.topic)

    def close(self) -> None:
        self._closed = True


class MemoryClient:
    """pulsar.Client's ``create_producer``, ``subscribe`` and ``close``."""

    def __init__(self, broker: MemoryBroker) -> None:
        self.broker = broker
        self._parts: list[MemoryProducer | MemoryConsumer] = []

    def create_producer(self, topic: str, **_: Any) -> MemoryProducer:
        self.broker.check_open(topic)
        producer = MemoryProducer(self.broker, topic)
        self._parts.append(producer)
        return producer

    def subscribe(self, topic: str, subscription_name: str, *, message_listener: Listener,
                  initial_position: Any = pulsar.InitialPosition.Latest,
                  negative_ack_redelivery_delay_ms: int = 60000, **_: Any) -> MemoryConsumer:
        self.broker.check_open(topic)
        consumer = self.broker.subscribe(self, topic, subscription_name, initial_position,
                                         message_listener, negative_ack_redelivery_delay_ms / 1000)
        self._parts.append(consumer)
        return consumer

    def close(self) -> None:
        parts, self._parts = self._parts, []
        for part in parts:
            part.close()


def memory_pubsub(broker: MemoryBroker, processor: str = "test") -> Any:
    """A real :class:`~trustgraph.base.messaging.pubsub.PubSub` on ``broker`` (one per "process")."""
    from ..messaging.pubsub import PubSub
    return PubSub(f"memory://{processor}", processor=processor, client=broker.client(),
                  subscribe_settle=0.0)
