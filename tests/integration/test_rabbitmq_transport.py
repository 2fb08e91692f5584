"""The messaging core over the RabbitMQ transport, on a real RabbitMQ node (fixture ``rabbitmq``).

The same shapes as test_messaging.py's on pulsar-lite: PubSub with a RabbitMQTransport runs the
request/response calls, shared and fanned-out subscriptions, redelivery and properties; and what
only RabbitMQ gives: a request nobody consumes fails at once (the broker hands it back), and a
wrong password is one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from rabbitmq_nodes import amqp_ready
from support import answers_again, wait_for_async
from trustgraph.base import PubSub, RequestResponseClient
from trustgraph.base.messaging.errors import PubSubError
from trustgraph.base.messaging.rabbitmq_transport import RabbitMQTransport
from trustgraph.base.messaging.transport import BrokerRefused
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse

#: Bound on a hang (a call to a running node), not a performance figure.
CALL_TIMEOUT = 30.0


def topics() -> tuple[str, str]:
    n = uuid.uuid4().hex[:8]
    return f"non-persistent://tg/request/t-{n}", f"non-persistent://tg/response/t-{n}"


def transport(node, **kw) -> RabbitMQTransport:
    return RabbitMQTransport(node.host, node.port, kw.pop("username", node.username),
                             kw.pop("password", node.password), node.vhost, **kw)


def pubsub(node, processor: str, **kw) -> PubSub:
    return PubSub(f"amqp://{node.host}:{node.port}", processor=processor, transport=transport(node), **kw)


async def echo_server(ps: PubSub, req: str, resp: str):
    out = await ps.producer(resp)

    async def handle(msg):
        await out.send(ToolServiceResponse(response=msg.value.user, end_of_stream=True), {"id": msg.id})

    return await ps.consumer(req, "echo", ToolServiceRequest, handler=handle, concurrency=16)


def client(ps: PubSub, req: str, resp: str) -> RequestResponseClient:
    return RequestResponseClient(ps, request_topic=req, response_topic=resp,
                                 request_schema=ToolServiceRequest, response_schema=ToolServiceResponse,
                                 subscription=f"c-{uuid.uuid4()}")


@asynccontextmanager
async def echo_pair(node) -> AsyncIterator[tuple[str, str, RequestResponseClient]]:
    """An echo server and a started client of it on ``node``, each on a PubSub of its own: the
    request and response topics and the client; both closed after (the client's first)."""
    req, resp = topics()
    server, caller = pubsub(node, "s"), pubsub(node, "c")
    try:
        await echo_server(server, req, resp)
        c = client(caller, req, resp)
        await c.start()
        yield req, resp, c
    finally:
        await caller.close()
        await server.close()


async def answered_in_order(c: RequestResponseClient, n: int) -> None:
    """``n`` calls at once, each answered with its own user."""
    users = [f"user-{i}" for i in range(n)]
    results = await asyncio.gather(*(c.request(ToolServiceRequest(user=u), timeout=CALL_TIMEOUT)
                                     for u in users))
    assert [r.response for r in results] == users


async def test_request_response_round_trips(rabbitmq) -> None:
    async with echo_pair(rabbitmq) as (_, _, c):
        await answered_in_order(c, 32)


async def test_a_request_nobody_consumes_fails_at_once(rabbitmq) -> None:
    req, resp = topics()
    caller = pubsub(rabbitmq, "c")
    try:
        c = client(caller, req, resp)
        await c.start()
        began = time.monotonic()
        with pytest.raises(PubSubError, match=f"nothing consumes {req}"):
            await c.request(ToolServiceRequest(user="x"), timeout=CALL_TIMEOUT)
        assert time.monotonic() - began < CALL_TIMEOUT / 2   # not at its deadline
    finally:
        await caller.close()


async def test_a_shared_subscription_gives_each_message_to_one_consumer(rabbitmq) -> None:
    topic = f"persistent://tg/flow/shared-{uuid.uuid4().hex[:8]}"
    a, b, sender = pubsub(rabbitmq, "a"), pubsub(rabbitmq, "b"), pubsub(rabbitmq, "p")
    got: dict[str, list[str]] = {"a": [], "b": []}
    try:
        for name, ps in (("a", a), ("b", b)):
            async def handle(msg, name=name):
                got[name].append(msg.value.user)
                await asyncio.sleep(0.01)   # each consumer busy for a moment, so both get some
            await ps.consumer(topic, "shared", ToolServiceRequest, handler=handle)
        out = await sender.producer(topic)
        sent = [str(i) for i in range(40)]
        for user in sent:
            await out.send(ToolServiceRequest(user=user), {"id": user})
        await wait_for_async("every message handled", lambda: len(got["a"]) + len(got["b"]) >= 40, CALL_TIMEOUT)
        assert sorted(got["a"] + got["b"], key=int) == sent   # each once
        assert got["a"] and got["b"]
    finally:
        for ps in (sender, a, b):
            await ps.close()


async def test_each_subscription_gets_every_message(rabbitmq) -> None:
    topic = f"non-persistent://tg/notify/fan-{uuid.uuid4().hex[:8]}"
    ps = pubsub(rabbitmq, "f")
    got: dict[str, list[str]] = {"one": [], "two": []}
    try:
        for sub in got:
            await ps.consumer(topic, sub, ToolServiceRequest,
                              direct=lambda msg, sub=sub: got[sub].append(msg.value.user))
        out = await ps.producer(topic)
        for user in ("x", "y", "z"):
            await out.send(ToolServiceRequest(user=user), {"id": user})
        await wait_for_async("both subscriptions served", lambda: all(len(v) == 3 for v in got.values()),
                             CALL_TIMEOUT)
        assert got == {"one": ["x", "y", "z"], "two": ["x", "y", "z"]}
    finally:
        await ps.close()


async def test_a_failed_message_of_a_persistent_topic_comes_again(rabbitmq) -> None:
    topic = f"persistent://tg/flow/redeliver-{uuid.uuid4().hex[:8]}"
    ps = pubsub(rabbitmq, "r")
    attempts: list[float] = []
    try:
        async def flaky(msg):
            attempts.append(time.monotonic())
            if len(attempts) == 1:
                raise RuntimeError("first attempt fails")

        await ps.consumer(topic, "r", ToolServiceRequest, handler=flaky)
        out = await ps.producer(topic)
        await out.send(ToolServiceRequest(user="x"), {"id": "1"})
        await wait_for_async("the redelivery", lambda: len(attempts) >= 2, CALL_TIMEOUT)
        assert attempts[1] - attempts[0] >= 0.9   # after a moment, not at once (no spinning)
        # Acknowledged the second time: nothing comes a third time (the next message is handled next).
        await out.send(ToolServiceRequest(user="y"), {"id": "2"})
        await wait_for_async("the next message", lambda: len(attempts) >= 3, CALL_TIMEOUT)
        assert len(attempts) == 3
    finally:
        await ps.close()


async def test_properties_arrive_as_sent(rabbitmq) -> None:
    topic = f"non-persistent://tg/notify/props-{uuid.uuid4().hex[:8]}"
    ps = pubsub(rabbitmq, "p")
    got: list[dict[str, str]] = []
    try:
        await ps.consumer(topic, "p", ToolServiceRequest, direct=lambda msg: got.append(msg.properties))
        out = await ps.producer(topic)
        sent = {"id": "r-1", "deadline": "1733364474.25", "name": "naïve ☃", "empty": ""}
        await out.send(ToolServiceRequest(user="x"), sent)
        await wait_for_async("the message", lambda: got, CALL_TIMEOUT)
        assert got == [sent]
    finally:
        await ps.close()


async def test_a_wrong_password_is_one_line(rabbitmq, caplog) -> None:
    wrong = transport(rabbitmq, password="not-" + rabbitmq.password)
    ps = PubSub(f"amqp://{rabbitmq.host}:{rabbitmq.port}", processor="w", transport=wrong, connect_timeout=2)
    line = (f"RabbitMQ at {rabbitmq.host}:{rabbitmq.port} refused user {rabbitmq.username}: "
            f"check --rabbitmq-username/--rabbitmq-password")
    try:
        with pytest.raises(BrokerRefused) as refused:
            await wrong.problem()
        assert str(refused.value) == line
        with caplog.at_level(logging.DEBUG), pytest.raises(PubSubError) as failed:
            await ps.producer(f"non-persistent://tg/request/w-{uuid.uuid4().hex[:8]}")
        assert line in str(failed.value) and "\n" not in str(failed.value)
        assert rabbitmq.password not in caplog.text + str(failed.value)
    finally:
        await ps.close()


async def test_a_killed_node_is_lost_then_back_and_the_next_call_succeeds(rabbitmq_site, caplog) -> None:
    """kill -9 of the node under a server and a caller: the connection watch says "lost" once and
    "back" once, the robust connections restore their exchanges, queues and consumers, and a call
    after the restart is answered (no restart of either side)."""
    node = rabbitmq_site.node().start()
    try:
        async with echo_pair(node) as (_, _, c):
            assert (await c.request(ToolServiceRequest(user="before"), timeout=CALL_TIMEOUT)).response == "before"
            with caplog.at_level(logging.INFO, logger="trustgraph.base.messaging.pubsub"):
                await asyncio.to_thread(node.kill)
                await wait_for_async("both processes see the connection lost",
                                     lambda: caplog.text.count("Lost the connection to the broker") >= 2,
                                     CALL_TIMEOUT)
                await asyncio.to_thread(node.start)
                await wait_for_async("both processes back",
                                     lambda: caplog.text.count("Reconnected to the broker") >= 2, 90)

                assert await answers_again(c, "an answer after the restart") == "after"
            assert caplog.text.count("Lost the connection to the broker") == 2   # once per process
    finally:
        node.stop()


def test_a_node_whose_port_was_taken_before_it_started_starts_on_another(rabbitmq_site) -> None:
    """A node's ports are picked free well before its VM binds them, and any process may take one
    meanwhile: under load a cluster's node exited with ``dist_port_already_used`` and its test
    errored.  The first start picks new ports and starts again; a restart keeps its ports."""
    node = rabbitmq_site.node()
    taken = node.dist_port
    holder = socket.create_server(("127.0.0.1", taken))
    try:
        node.start()
        assert node.running() and node.dist_port != taken and node.started_in is not None
        port = node.port
        node.restart()
        assert node.port == port and amqp_ready(node.host, node.port)
    finally:
        holder.close()
        node.stop()


async def test_a_request_a_lost_replica_held_goes_to_another(rabbitmq) -> None:
    """A request handed to a replica whose connection goes before it finished is given to another
    replica of the shared subscription: a shared request queue keeps its acknowledgements
    (``Capabilities.redelivers_requests``), whatever the transport saves elsewhere."""
    req, _ = topics()
    first, second, sender = pubsub(rabbitmq, "r1"), pubsub(rabbitmq, "r2"), pubsub(rabbitmq, "p")
    holding, release = asyncio.Event(), asyncio.Event()
    got: list[str] = []
    try:
        async def hold(msg):
            holding.set()
            await release.wait()

        await first.consumer(req, "svc", ToolServiceRequest, handler=hold)
        out = await sender.producer(req)
        await out.send(ToolServiceRequest(user="x"), {"id": "1"})
        await wait_for_async("the first replica holding the request", holding.is_set, CALL_TIMEOUT)
        await second.consumer(req, "svc", ToolServiceRequest, direct=lambda msg: got.append(msg.value.user))
        await asyncio.to_thread(first.transport.close)   # its connection gone, as when its process dies
        await wait_for_async("the second replica given the request", lambda: got, CALL_TIMEOUT)
        assert got == ["x"]
    finally:
        release.set()
        for ps in (sender, second, first):
            await ps.close()


async def test_own_non_persistent_queues_take_no_acks_and_shared_ones_do(rabbitmq) -> None:
    """A caller's own response queue is consumed without acknowledgements (exclusive to its
    connection, nothing else could get its messages, and each ack is a socket write); the shared
    request queue with them (the test above); and the calls are answered."""
    async with echo_pair(rabbitmq) as (req, resp, c):
        await answered_in_order(c, 8)
        listed = await asyncio.to_thread(rabbitmq.ctl, "list_consumers", "queue_name", "ack_required",
                                         "--formatter", "json")
        acks = {row["queue_name"]: row["ack_required"] for row in json.loads(listed)}
        request_queue = f"{req.split('://', 1)[1].replace('/', '.')}.echo"
        response_queues = [q for q in acks if q.startswith(resp.split("://", 1)[1].replace("/", ".") + ".")]
        assert acks[request_queue] is True
        assert len(response_queues) == 1 and acks[response_queues[0]] is False
