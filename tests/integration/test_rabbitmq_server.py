"""The RabbitMQ fixtures (tests/rabbitmq_nodes.py) give real nodes that aio-pika can use.

Tests of the fixtures and of the facts the RabbitMQ transport rests on, not of our code: a
robust connection fans a message out to every bound queue, a quorum queue keeps a persistent
message when the node it lives on is killed and restarted, and a wrong password is aio-pika's
authentication error, at once (what the transport will turn into one clear line).
"""

from __future__ import annotations

import json
import time
import uuid

import aio_pika
import pytest
from aio_pika.exceptions import ProbableAuthenticationError

#: Bound on a hang (one call to a running node), not a performance figure.
CALL_TIMEOUT = 30.0


def unique(what: str) -> str:
    return f"tg.test.{what}-{uuid.uuid4().hex[:12]}"


async def test_fanout_exchange_reaches_every_bound_queue(rabbitmq) -> None:
    connection = await aio_pika.connect_robust(rabbitmq.url, timeout=CALL_TIMEOUT)
    async with connection:
        channel = await connection.channel()   # publisher confirms: publish returns once routed
        exchange = await channel.declare_exchange(unique("fanout"), aio_pika.ExchangeType.FANOUT,
                                                  auto_delete=True)
        queues = [await channel.declare_queue(exclusive=True) for _ in range(2)]
        for queue in queues:
            await queue.bind(exchange)
        await exchange.publish(aio_pika.Message(b"to both", headers={"deadline": "1.5"}), routing_key="")
        for queue in queues:
            message = await queue.get(no_ack=True, timeout=CALL_TIMEOUT)
            assert message.body == b"to both"
            assert message.headers == {"deadline": "1.5"}   # a str header comes back a str


async def test_wrong_password_is_an_authentication_error_at_once(rabbitmq) -> None:
    wrong = f"amqp://{rabbitmq.username}:not-{rabbitmq.password}@{rabbitmq.host}:{rabbitmq.port}/"
    began = time.monotonic()
    with pytest.raises(ProbableAuthenticationError):
        await aio_pika.connect_robust(wrong, timeout=CALL_TIMEOUT)
    # Refused on the first attempt, not retried until some timeout.
    assert time.monotonic() - began < CALL_TIMEOUT / 2


@pytest.mark.slow
async def test_quorum_queue_keeps_a_persistent_message_across_a_restart_of_its_node(rabbitmq_cluster) -> None:
    home = rabbitmq_cluster.nodes[0]
    assert rabbitmq_cluster.running_nodes() == rabbitmq_cluster.names
    name = unique("quorum")
    connection = await aio_pika.connect(home.url, timeout=CALL_TIMEOUT)
    async with connection:
        channel = await connection.channel()
        await channel.declare_queue(name, durable=True, arguments={"x-queue-type": "quorum"})
        await channel.default_exchange.publish(
            aio_pika.Message(b"kept", delivery_mode=aio_pika.DeliveryMode.PERSISTENT), routing_key=name)
    # The queue's leader is the node the client declared it on, with a replica on each node.
    # (Its message count there is a statistic sampled every few seconds: the get below counts.)
    queues = json.loads(home.ctl("list_queues", "name", "leader", "members", "--formatter", "json"))
    queue = next(q for q in queues if q["name"] == name)
    assert queue["leader"] == home.name
    assert set(queue["members"]) == rabbitmq_cluster.names

    rabbitmq_cluster.kill(0)
    assert home.name not in rabbitmq_cluster.running_nodes()
    rabbitmq_cluster.restart(0)

    connection = await aio_pika.connect(home.url, timeout=CALL_TIMEOUT)
    async with connection:
        channel = await connection.channel()
        queue = await channel.declare_queue(name, passive=True)
        message = await queue.get(timeout=CALL_TIMEOUT)
        assert message.body == b"kept"
        assert message.delivery_mode == aio_pika.DeliveryMode.PERSISTENT
        await message.ack()
