"""Upstream 2.11.1's RabbitMQ queues, argument for argument, for processors of ours on ``--wire 2.11``.

A peer's declaration of a queue must match ours exactly (RabbitMQ refuses a
second one with other arguments), so a processor of ours joining a 2.11
deployment on RabbitMQ declares what 2.11's processors declare (trustgraph-base
2.11.1, ``async_rabbitmq_backend``): the same exchanges as ours; a ``flow``
subscription a durable named queue ``{exchange}.{subscription}``; a ``request``
one a named queue that is neither durable nor removed with its last consumer
(it keeps requests while no replica runs, until the broker restarts); a
``response`` or ``notify`` subscriber a queue of its own, removed with it.
Messages of ``flow`` topics are persistent, the others not (as ours: ``flow`` is
2.11's persistent class).
"""

from __future__ import annotations

from trustgraph.base.messaging.rabbitmq_topology import QueueSpec, Topology
from trustgraph.topics import parse


class Upstream211(Topology):
    """Upstream 2.11.1's queues."""

    wire = "2.11"
    limitations = (
        "on 2.11.1's queues a request topic's queue outlives its consumers, so a request to a service "
        "that ran once and stopped waits there for a replica (its caller for its deadline) instead of "
        "coming back",
    )

    def queue(self, name: str, subscription: str, *, own: bool) -> QueueSpec:
        topic = parse(name)
        # 2.11 decides by the topic's class (its namespace); a subscription of ours that is one
        # consumer's own is exclusive on any class (2.11 has none such outside response and notify).
        if own or topic.namespace in ("response", "notify"):
            return self.own_queue(name, subscription)
        durable = topic.namespace == "flow"
        return QueueSpec(self.queue_name(name, subscription), durable=durable, exclusive=False, auto_delete=False)


UPSTREAM_211 = Upstream211()
