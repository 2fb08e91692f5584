"""How our topics become RabbitMQ exchanges and queues.

RabbitMQ has no topics: a publisher sends to an *exchange*, and each queue
bound to it gets a copy.  A topic is therefore one fanout exchange, and a
subscription one queue bound to it: consumers of the same subscription share
that queue's messages (each goes to one of them), and each subscription gets
every message, as on Pulsar.  How long a queue lives and what it keeps is a
:class:`Topology`, chosen once by the processor's wire
(``trustgraph.base.wire.Wire.rabbitmq_topology``), because the queues must be the ones
our peers declare too: RabbitMQ refuses a second declaration of a queue or
exchange with other arguments (``PRECONDITION_FAILED``, 406).  Upstream 2.11's
topology, for ``--wire 2.11``, is in the compatibility quarantine
(``trustgraph.compat.v211``); ours, :data:`OURS`, is here:

* every topic is the durable fanout exchange ``tenant.namespace.name`` (a 2.11
  name's ``topicspace.class.topic``, as upstream 2.11 names it, so the two never
  clash; a 2.1 Pulsar URL ``non-persistent://tg/request/joke`` and 2.11's
  ``request:tg:joke`` name the same exchange, ``tg.request.joke``);
* a shared subscription of a persistent topic is a durable *quorum* queue
  ``{exchange}.{subscription}`` (replicated across a cluster's nodes: nothing
  acknowledged is lost when one of them dies), and its messages are persistent;
* a shared subscription of a non-persistent topic is removed with its last
  consumer, so a request nobody consumes is unroutable and the broker hands it
  back at once (what lets a caller fail fast instead of waiting out its
  deadline, as the broker's consumer counts do on Pulsar);
* a subscription that is one process's own (``own``: a caller's responses, a
  config push, an announcement reader) is exclusive to its connection and
  removed with it.

Names only: this module declares nothing (the transport does), so it is tested
without a broker.  Topic names are read by :func:`trustgraph.topics.parse`, in
any of their forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ...topics import Topic, parse

#: AMQP delivery modes.
TRANSIENT = 1
PERSISTENT = 2
#: A queue argument of ours: the queue is a quorum queue (RabbitMQ 3.8 and later).
QUORUM: Mapping[str, Any] = MappingProxyType({"x-queue-type": "quorum"})

#: The longest name RabbitMQ takes for an exchange or a queue (AMQP's short string).
MAX_NAME_BYTES = 255


class NameTooLong(ValueError):
    """A topic or subscription whose RabbitMQ name would exceed :data:`MAX_NAME_BYTES`."""


@dataclass(frozen=True)
class ExchangeSpec:
    """The exchange of one topic: always fanout, durable, no arguments (what upstream 2.11 declares)."""

    name: str
    durable: bool = True
    auto_delete: bool = False
    kind: str = "fanout"


@dataclass(frozen=True)
class QueueSpec:
    """The queue of one subscription, bound to its topic's exchange."""

    name: str
    durable: bool
    exclusive: bool
    auto_delete: bool
    arguments: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def own(self) -> bool:
        """The queue lives and dies with the one consumer that declared it."""
        return self.exclusive


def exchange_name(topic: Topic) -> str:
    """``tenant.namespace.name``: a 2.11 name's ``topicspace.class.topic``, as upstream 2.11 names it."""
    return _checked(f"{topic.tenant}.{topic.namespace}.{topic.name}")


def _checked(name: str) -> str:
    if len(name.encode()) > MAX_NAME_BYTES:
        raise NameTooLong(f"{name[:60]}... is {len(name.encode())} bytes: RabbitMQ takes at most "
                          f"{MAX_NAME_BYTES} for an exchange or queue name (shorten the topic or subscription)")
    return name


class Topology:
    """Exchanges and queues for topics and subscriptions; subclasses say how long a queue lives."""

    #: The wire this topology is for, as ``--wire`` takes it.
    wire: str = ""
    #: What this topology's queues cannot do that the transport's own limitations do not say, one
    #: line each (said once at start, with them).
    limitations: tuple[str, ...] = ()

    def exchange(self, name: str) -> ExchangeSpec:
        """The exchange of topic ``name`` (any form :func:`trustgraph.topics.parse` reads)."""
        return ExchangeSpec(exchange_name(parse(name)))

    def queue(self, name: str, subscription: str, *, own: bool) -> QueueSpec:
        """The queue of ``subscription`` on topic ``name``; ``own``: one consumer's alone."""
        raise NotImplementedError

    def delivery_mode(self, name: str) -> int:
        """Whether a message on topic ``name`` is written to disk (it outlives a broker restart)."""
        return PERSISTENT if parse(name).persistent else TRANSIENT

    def queue_name(self, name: str, subscription: str) -> str:
        """``{exchange}.{subscription}``."""
        return _checked(f"{exchange_name(parse(name))}.{subscription}")

    def own_queue(self, name: str, subscription: str) -> QueueSpec:
        """A queue exclusive to the connection that declares it, removed with it."""
        return QueueSpec(self.queue_name(name, subscription), durable=False, exclusive=True, auto_delete=True)


class Ours(Topology):
    """Our own queues, for the 2.1 wire: what the Pulsar topology guarantees, on RabbitMQ."""

    wire = "2.1"

    def queue(self, name: str, subscription: str, *, own: bool) -> QueueSpec:
        if own:
            return self.own_queue(name, subscription)
        if parse(name).persistent:
            return QueueSpec(self.queue_name(name, subscription), durable=True, exclusive=False, auto_delete=False,
                             arguments=QUORUM)
        return QueueSpec(self.queue_name(name, subscription), durable=False, exclusive=False, auto_delete=True)


OURS = Ours()

